"""What a line's call runs: the kernels run by the whole expression of its outermost
call, wherever they run in it: in the callee (a call of a call's result, which starts at
the same column), in the arguments (evaluated before the call), or at each reach of the
line (a kernel refused once is refused).
"""

from __future__ import annotations

import pytest
from evaluator_programs import TPU_FIRES_TRITON_SILENT, fires

HELPERS = """
import jax.numpy as jnp

class Runner:
    def __call__(self, x):
        return lib.kernel(x)

def make():
    def run(x):
        return lib.kernel(x)
    return run

def identity(v):
    return v
"""


def _guarded(call: str) -> str:
    return (
        HELPERS
        + f"""
def main(x):
    if jax.default_backend() == "gpu":
        return {call}  # here
    return x
"""
    )


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize(
    "call", ["make()(x)", "Runner()(x)", "jax.jit(lib.kernel)(x)", "(lambda: lib.kernel)()(x)"]
)
def test_call_of_a_call_result(call: str, params: str, expected: bool) -> None:
    assert fires(_guarded(call), params) is expected


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize(
    "call",
    ["identity(lib.kernel(x))", "jnp.sum(lib.kernel(x))", "lib.triton_kernel(lib.kernel(x))"],
)
def test_kernel_run_in_an_argument(call: str, params: str, expected: bool) -> None:
    assert fires(_guarded(call), params) is expected


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize("call", ["lib.kernel(x) + 1", "[lib.kernel(x)]", "(lib.kernel(x), x)"])
def test_kernel_call_inside_an_expression(call: str, params: str, expected: bool) -> None:
    assert fires(_guarded(call), params) is expected


@TPU_FIRES_TRITON_SILENT
def test_same_kernel_called_twice_on_a_path(params: str, expected: bool) -> None:
    program = """
def main(x):
    if jax.default_backend() == "gpu":
        y = lib.kernel(x)
        return lib.kernel(y)  # here
    return x
"""
    assert fires(program, params) is expected


@TPU_FIRES_TRITON_SILENT
def test_two_paths_each_running_a_kernel_that_lowers_alike(params: str, expected: bool) -> None:
    # two different kernels, one per branch: with TPU params each path runs a TPU kernel,
    # so the call lowers for no GPU; with Triton params on one branch it lowers on that path
    app = """
def pick(x):
    if x.ndim > 1:
        return lib.kernel(x)
    return lib.tpu_kernel(x)

def choose(x):
    return (lib.kernel if x.ndim > 1 else lib.tpu_kernel)(x)

def main(x):
    if jax.default_backend() == "gpu":
        return pick(x) + choose(x)  # here
    return x
"""
    assert fires(app, params) is expected
