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


@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
@functools.partial(jax.jit, static_argnames=["config"])
def differentiable_tpu(x, config):
    return lib.tpu_kernel(x)


def make_tpu(block):
    def run(x, y):
        return lib.tpu_kernel(x)

    return run


def make_either(block):
    if block > 1:
        return lambda x: lib.tpu_kernel(x)
    return lambda x: lib.triton_kernel(x)


def make_instance(block):
    return TritonOp(block)


def make_bound(block):
    return TritonOp(block).__call__


def make_plain(block):
    return lambda x: x
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
        ("differentiable_tpu", frozenset({"tpu"})),
    ],
)
def test_restricted(name: str, expected: frozenset[str]) -> None:
    assert _lowers_only_for(name) == expected


@pytest.mark.parametrize("name", ["per_backend", "interpret_on", "make_tpu", "make_plain"])
def test_lowers_everywhere(name: str) -> None:
    assert _lowers_only_for(name) is None


def _result_lowers_only_for(name: str) -> frozenset[str] | None:
    files = {"lib.py": lib(), "ops.py": OPS}
    summary = function_summary(files_loader(files), "ops", name, None, result=True)
    assert summary is not None
    return summary.lowers_only_for


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("make_tpu", frozenset({"tpu"})),  # a closure, called with its own parameters
        ("make_instance", frozenset({"cuda", "rocm"})),  # an instance: its ``__call__``
        ("make_bound", frozenset({"cuda", "rocm"})),  # a bound method, past its receiver
        ("make_either", None),  # which one it returns is not known: each lowers elsewhere
        ("make_plain", None),  # runs no kernel
        ("tpu_only", frozenset({"tpu"})),  # ``f(x)(y)`` runs ``f(x)``'s kernel first
    ],
)
def test_what_calling_the_result_lowers_for(name: str, expected: frozenset[str] | None) -> None:
    assert _result_lowers_only_for(name) == expected


def returns_none_source() -> str:
    return "\n\ndef returns_none(x):\n    lib.tpu_kernel(x)\n"


@pytest.mark.parametrize(
    ("name", "inert"),
    [
        ("tpu_only", True),  # an array: calling it runs nothing
        ("per_backend", True),
        ("make_tpu", False),  # a closure
        ("make_instance", False),  # an instance with ``__call__``
        ("make_bound", False),
        ("make_plain", False),  # a lambda, even one that runs nothing
        ("returns_none", False),  # calling ``None`` raises: not the same answer
    ],
)
def test_a_result_that_runs_nothing_when_called(name: str, inert: bool) -> None:
    files = {"lib.py": lib(), "ops.py": OPS + returns_none_source()}
    summary = function_summary(files_loader(files), "ops", name, None)
    assert summary is not None
    assert summary.result_inert is inert


def test_a_name_that_is_not_there_has_no_summary() -> None:
    files = {"lib.py": lib(), "ops.py": OPS}
    assert function_summary(files_loader(files), "ops", "missing", None) is None


# -- the parameter that switches interpret mode -----------------------------------------

SWITCHES = """
import dataclasses
import functools
import lib


def _kernel(x, interpret):
    return lib.pl.pallas_call(
        lib._body, out_shape=x, compiler_params=lib.TPU, interpret=interpret
    )(x)


def default_off(x, interpret=False):
    return _kernel(x, interpret)


def keyword_only(x, *, debug=None, interpret=None):
    return _kernel(x, interpret)


def required(x, interpret):
    return _kernel(x, interpret)


def renamed(x, block=128, emulate=False):
    return _kernel(x, emulate)


class Op:
    def __init__(self, interpret=False):
        self.interpret = interpret

    def __call__(self, x):
        return _kernel(x, self.interpret)


def skips_the_kernel(x, fast=False):
    if fast:
        return x
    return _kernel(x, False)


def decided_here(x):
    flag = x is None
    return _kernel(x, flag)


def inverted(x, interpret=True):
    return _kernel(x, not interpret)


bound = functools.partial(_kernel, interpret=False)


def scaled_op(x, interpret=False, scale=1):
    return _kernel(x, interpret)


scaled = functools.partial(scaled_op, scale=2)
first_given = functools.partial(default_off, None)
by_name = functools.partial(renamed, block=64)


@dataclasses.dataclass(frozen=True)
class Fields:
    block: int
    interpret: bool = False

    def __call__(self, x):
        return _kernel(x, self.interpret)
"""


def _summary_of(name: str):  # type: ignore[no-untyped-def]
    files = {"lib.py": lib(), "ops.py": SWITCHES}
    summary = function_summary(files_loader(files), "ops", name, None)
    assert summary is not None
    return summary


@pytest.mark.parametrize(
    ("name", "parameter"),
    [
        ("default_off", ("interpret", 1)),
        ("keyword_only", ("interpret", -1)),
        ("required", ("interpret", 1)),
        ("renamed", ("emulate", 2)),
        ("Op", ("interpret", 0)),
        ("scaled", ("interpret", 1)),
        ("first_given", ("interpret", 0)),
        ("by_name", ("emulate", -1)),
        ("Fields", ("interpret", 1)),
    ],
    ids=[
        "default-off",
        "keyword-only",
        "required",
        "any-name",
        "constructor",
        "partial-keyword-after",
        "partial-positional",
        "partial-keyword-before",
        "dataclass-field",
    ],
)
def test_the_parameter_that_switches_interpret_mode(name: str, parameter: tuple[str, int]) -> None:
    summary = _summary_of(name)
    assert summary.lowers_only_for == frozenset({"tpu"})  # as a caller passing it off sees it
    assert summary.interpret == parameter


@pytest.mark.parametrize(
    ("name", "restricted"),
    [
        # true skips the kernel instead of interpreting it: not an interpret switch
        ("skips_the_kernel", frozenset({"tpu"})),
        # interpret mode follows the argument, but false does not turn it off
        ("decided_here", None),
        # true turns it off: the caller cannot turn it on with true
        ("inverted", frozenset({"tpu"})),
        # the partial's own parameters are not its function's
        ("bound", frozenset({"tpu"})),
    ],
)
def test_no_parameter_switches_interpret_mode(name: str, restricted: frozenset[str] | None) -> None:
    summary = _summary_of(name)
    assert summary.lowers_only_for == restricted
    assert summary.interpret is None


# -- methods, as their class's callers call them ----------------------------------------

METHODS = """
import lib


class Runner:
    def __init__(self, scale=1.0):
        self.scale = scale

    def run(self, x):
        return self._impl(x)

    def _impl(self, x):
        return lib.tpu_kernel(x)

    @staticmethod
    def static(x):
        return lib.tpu_kernel(x)

    @classmethod
    def from_class(cls, x):
        return cls.static(x)


class Hooked:
    def run(self, x):
        return self.impl(x)

    def impl(self, x):
        return lib.tpu_kernel(x)


class Portable(Hooked):
    def impl(self, x):
        return lib.triton_kernel(x)


class Extended(Runner):
    def describe(self):
        return "runner"
"""


@pytest.mark.parametrize("name", ["Runner.run", "Runner.static", "Runner.from_class"])
def test_a_method_runs_on_an_instance_of_its_class(name: str) -> None:
    # ``Extended`` derives from ``Runner`` and overrides nothing of it
    files = {"lib.py": lib(), "ops.py": METHODS}
    summary = function_summary(files_loader(files), "ops", name, None)
    assert summary is not None and summary.lowers_only_for == frozenset({"tpu"})


def test_a_method_of_a_class_a_subclass_overrides_has_an_unknown_receiver() -> None:
    # ``Hooked.run`` on a ``Portable`` runs the Triton kernel: the receiver is not known
    files = {"lib.py": lib(), "ops.py": METHODS}
    summary = function_summary(files_loader(files), "ops", "Hooked.run", None)
    assert summary is not None and summary.lowers_only_for is None


def test_a_parameter_that_turns_no_kernel_interpreted_is_given_only_true(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # ``tpu_only(x)`` refuses off TPU and ``x`` is not its interpret switch: given
    # ``True``, its kernel still refuses on the first platform that refuses it, so no
    # other run is needed: per platform the summary's call, and that one probe
    from typed_pallas_mypy.inference.evaluator import summaries

    given: list[dict[str, object]] = []
    real = summaries._Run.call

    def counting(self: summaries._Run, bound: dict[str, object]) -> object:
        given.append(dict(bound))
        return real(self, bound)  # type: ignore[arg-type]

    monkeypatch.setattr(summaries._Run, "call", counting)
    files = {"lib.py": lib(), "ops.py": OPS}
    summary = function_summary(files_loader(files), "ops", "tpu_only", None)
    assert summary is not None and summary.interpret is None
    assert len(given) == 4
    assert [list(g) for g in given].count(["x"]) == 1
