"""Comprehensions and generator expressions: the element evaluated for each item (with
the filters), their own scope (the target does not leak), a generator consumed by
``next``, ``tuple`` or ``list``.

A finding where the item the program calls under a guard for "gpu" is
``lib.tpu_kernel``; silent where it is ``lib.triton_kernel`` or never called.
"""

from __future__ import annotations

import pytest
from evaluator_programs import fires

PAIRS = 'PAIRS = (("fast", lib.tpu_kernel), ("safe", lib.triton_kernel))\n'
FAST_SAFE = pytest.mark.parametrize(
    ("key", "expected"), [("fast", True), ("safe", False)], ids=["fast-fires", "safe-silent"]
)


def _guarded(setup: str, call: str) -> str:
    return f"""
def main(x):
    {setup}
    if jax.default_backend() == "gpu":
        return {call}  # here
    return x
"""


@pytest.mark.parametrize(
    ("kernels", "expected"),
    [("(lib.tpu_kernel,)", True), ("(lib.triton_kernel,)", False)],
    ids=["tpu-fires", "triton-silent"],
)
def test_list_comprehension_calls_each_item(kernels: str, expected: bool) -> None:
    assert fires(_guarded("pass", f"[k(x) for k in {kernels}]")) is expected


@pytest.mark.parametrize(
    ("kernels", "expected"),
    [
        ("(lib.triton_kernel, lib.tpu_kernel)", True),
        ("(lib.triton_kernel, lib.triton_kernel)", False),
    ],
    ids=["one-tpu-item-fires", "triton-items-silent"],
)
def test_list_comprehension_with_different_items(kernels: str, expected: bool) -> None:
    # the call runs once per item: one of them refused is enough
    assert fires(_guarded("pass", f"[k(x) for k in {kernels}]")) is expected


@FAST_SAFE
def test_list_comprehension_with_a_filter(key: str, expected: bool) -> None:
    setup = f'picked = [k for name, k in PAIRS if name == "{key}"]'
    assert fires(PAIRS + _guarded(setup, "picked[0](x)")) is expected


@FAST_SAFE
def test_dict_comprehension(key: str, expected: bool) -> None:
    setup = "table = {name: k for name, k in PAIRS}"
    assert fires(PAIRS + _guarded(setup, f'table["{key}"](x)')) is expected


@pytest.mark.parametrize(
    ("kernels", "expected"),
    [("(lib.tpu_kernel, lib.triton_kernel)", True), ("(lib.triton_kernel, lib.tpu_kernel)", False)],
    ids=["first-tpu-fires", "first-triton-silent"],
)
def test_next_of_a_generator_expression(kernels: str, expected: bool) -> None:
    setup = f"k = next(k for k in {kernels})"
    assert fires(_guarded(setup, "k(x)")) is expected


@pytest.mark.parametrize(
    ("kernels", "expected"),
    [("(lib.tpu_kernel,)", True), ("(lib.triton_kernel,)", False), ("()", False)],
    ids=["tpu-fires", "triton-silent", "empty-silent"],
)
def test_generator_expression_consumed_by_tuple(kernels: str, expected: bool) -> None:
    assert fires(_guarded("pass", f"tuple(k(x) for k in {kernels})")) is expected


@pytest.mark.parametrize(
    ("loop", "expected"),
    [
        ("for k in (lib.tpu_kernel,):\n        pass", True),
        ("[k for k in (lib.tpu_kernel,)]", False),
    ],
    ids=["for-target-leaks-fires", "comprehension-target-local-silent"],
)
def test_comprehension_target_does_not_leak(loop: str, expected: bool) -> None:
    setup = f"k = lib.triton_kernel\n    {loop}"
    assert fires(_guarded(setup, "k(x)")) is expected


@pytest.mark.parametrize(
    ("kernels", "expected"),
    [("(lib.tpu_kernel,)", True), ("(lib.triton_kernel,)", False)],
    ids=["tpu-fires", "triton-silent"],
)
def test_nested_comprehension(kernels: str, expected: bool) -> None:
    setup = f"grid = [[k for _ in range(2)] for k in {kernels}]"
    assert fires(_guarded(setup, "grid[0][1](x)")) is expected
