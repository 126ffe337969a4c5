"""What a function lowers for, for callers that do not say their arguments
(``summaries.function_summary``): each parameter without a default unknown, each with one
kept, a class standing for what calling its instances runs.
"""

from __future__ import annotations

import pytest
from evaluator_programs import lib

from typed_pallas_mypy.inference.evaluator.machine import files_loader
from typed_pallas_mypy.inference.evaluator.summaries import function_summary

OPS = """
import functools
import jax
import lib


def tpu_only(x):
    return lib.tpu_kernel(x)


def per_backend(x):
    if jax.default_backend() == "tpu":
        return lib.tpu_kernel(x)
    return lib.triton_kernel(x)


def either_tpu(x):
    if x.ndim > 1:
        return lib.tpu_kernel(x)
    return lib.run(lib.TPU, x)


def interpret_off(x, interpret=False):
    return lib.pl.pallas_call(
        lib._body, out_shape=x, compiler_params=lib.TPU, interpret=interpret
    )(x)


def interpret_on(x, interpret=True):
    return interpret_off(x, interpret=interpret)


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@logged
def wrapped_tpu(x):
    return lib.tpu_kernel(x)


class TritonOp:
    def __init__(self, scale=1.0):
        self.scale = scale

    def __call__(self, x):
        return lib.triton_kernel(x)


def raises_off_tpu(x):
    if jax.default_backend() != "tpu":
        raise NotImplementedError("TPU only")
    return x
"""


def _lowers_only_for(name: str) -> frozenset[str] | None:
    files = {"lib.py": lib(), "ops.py": OPS}
    summary = function_summary(files_loader(files), "ops", name, None)
    assert summary is not None
    return summary.lowers_only_for


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("tpu_only", frozenset({"tpu"})),
        ("either_tpu", frozenset({"tpu"})),
        ("interpret_off", frozenset({"tpu"})),
        ("wrapped_tpu", frozenset({"tpu"})),
        ("TritonOp", frozenset({"cuda", "rocm"})),
        ("raises_off_tpu", frozenset({"tpu"})),
    ],
)
def test_restricted(name: str, expected: frozenset[str]) -> None:
    assert _lowers_only_for(name) == expected


@pytest.mark.parametrize("name", ["per_backend", "interpret_on"])
def test_lowers_everywhere(name: str) -> None:
    assert _lowers_only_for(name) is None


def test_a_name_that_is_not_there_has_no_summary() -> None:
    files = {"lib.py": lib(), "ops.py": OPS}
    assert function_summary(files_loader(files), "ops", "missing", None) is None
