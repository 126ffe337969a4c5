"""Pallas's entry points as JAX defines them: ``pl.pallas_call`` and ``pl.kernel`` called
with their body give a kernel; called without it (``@pl.kernel(...)`` as a decorator, or a
``functools.partial`` of one) they give what, applied to a body, is the kernel; the params
are the ``compiler_params`` keyword wherever the call passes it."""

from __future__ import annotations

import pytest
from evaluator_programs import fires

PARAMS = {
    "tpu-fires": ("pltpu.CompilerParams()", True),
    "triton-silent": ("pltriton.CompilerParams()", False),
}

_HEADER = """
import functools
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1
"""


def _app(kernel: str) -> str:
    return (
        _HEADER
        + kernel
        + """

def main(x):
    if jax.default_backend() == "gpu":
        return run(x)  # here
    return x
"""
    )


@pytest.mark.parametrize(("params", "expected"), PARAMS.values(), ids=PARAMS.keys())
def test_pl_kernel_as_a_decorator(params: str, expected: bool) -> None:
    kernel = f"""
@pl.kernel(out_shape=None, mesh=None, compiler_params={params})
def run(x_ref, o_ref):
    o_ref[...] = x_ref[...]
"""
    assert fires(_app(kernel)) is expected


@pytest.mark.parametrize(("params", "expected"), PARAMS.values(), ids=PARAMS.keys())
def test_partial_of_pallas_call_as_a_decorator(params: str, expected: bool) -> None:
    kernel = f"""
@functools.partial(pl.pallas_call, out_shape=None, compiler_params={params})
def run(x_ref, o_ref):
    o_ref[...] = x_ref[...]
"""
    assert fires(_app(kernel)) is expected


@pytest.mark.parametrize(("params", "expected"), PARAMS.values(), ids=PARAMS.keys())
def test_pallas_call_with_its_body(params: str, expected: bool) -> None:
    kernel = f"""
def run(x):
    return pl.pallas_call(_body, out_shape=x, compiler_params={params})(x)
"""
    assert fires(_app(kernel)) is expected
