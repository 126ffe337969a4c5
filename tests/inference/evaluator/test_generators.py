"""Generator functions: calling one runs none of its body; ``next`` runs it to the next
``yield``; ``list`` and ``for`` run it through; ``yield from`` delegates.

A finding where what the program calls under a guard for "gpu" is ``lib.tpu_kernel`` (or
a generator whose body runs it); silent for the Triton twin or a body that never runs.
"""

from __future__ import annotations

import pytest
from evaluator_programs import TPU_FIRES_TRITON_SILENT, fires

KERNELS = """
def kernels():
    yield lib.triton_kernel
    yield lib.tpu_kernel
"""


def _guarded(setup: str, call: str) -> str:
    return f"""
def main(x):
    {setup}
    if jax.default_backend() == "gpu":
        return {call}  # here
    return x
"""


@pytest.mark.parametrize(
    ("nexts", "expected"), [(2, True), (1, False)], ids=["second-fires", "first-silent"]
)
def test_next_runs_to_the_next_yield(nexts: int, expected: bool) -> None:
    setup = "gen = kernels()" + "\n    k = next(gen)" * nexts
    assert fires(KERNELS + _guarded(setup, "k(x)")) is expected


@pytest.mark.parametrize(
    ("index", "expected"), [("1", True), ("0", False)], ids=["second-fires", "first-silent"]
)
def test_list_of_a_generator(index: str, expected: bool) -> None:
    setup = "ks = list(kernels())"
    assert fires(KERNELS + _guarded(setup, f"ks[{index}](x)")) is expected


@pytest.mark.parametrize(
    ("index", "expected"), [("1", True), ("0", False)], ids=["second-fires", "first-silent"]
)
def test_yield_from_delegates(index: str, expected: bool) -> None:
    program = KERNELS + "def outer():\n    yield from kernels()\n"
    assert fires(program + _guarded("ks = list(outer())", f"ks[{index}](x)")) is expected


@pytest.mark.parametrize(
    ("index", "expected"), [("1", True), ("0", False)], ids=["second-fires", "first-silent"]
)
def test_generator_with_a_loop(index: str, expected: bool) -> None:
    program = """
def each(kernels):
    for k in kernels:
        yield k
"""
    setup = "ks = list(each((lib.triton_kernel, lib.tpu_kernel)))"
    assert fires(program + _guarded(setup, f"ks[{index}](x)")) is expected


RUNS_KERNEL = """
def outputs(x):
    yield lib.kernel(x)
"""


@TPU_FIRES_TRITON_SILENT
def test_next_runs_the_body(params: str, expected: bool) -> None:
    assert fires(RUNS_KERNEL + _guarded("pass", "next(outputs(x))"), params) is expected


def test_calling_a_generator_function_runs_none_of_its_body() -> None:
    assert not fires(RUNS_KERNEL + _guarded("pass", "outputs(x)"))
