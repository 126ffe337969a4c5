"""Arguments bound to parameters as Python binds them: by position, by keyword, from
defaults (evaluated once, where the function is defined), keyword-only, ``*args`` as a
tuple, ``**kwargs`` as a dict, and ``*``/``**`` splats at the call.

Each program passes ``lib.tpu_kernel`` where the binding rule sends it to the parameter
that is called (a finding under a guard for "gpu"); its twin sends ``lib.triton_kernel``
there instead.
"""

from __future__ import annotations

import pytest
from evaluator_programs import fires

#: (the kernel the called parameter gets, the other one, finding)
CALLED = pytest.mark.parametrize(
    ("called", "other", "expected"),
    [("tpu_kernel", "triton_kernel", True), ("triton_kernel", "tpu_kernel", False)],
    ids=["tpu-called-fires", "triton-called-silent"],
)

PICK_SECOND = """
def pick(a, b, x):
    return b(x)
"""


def _guarded(call: str, definitions: str = PICK_SECOND) -> str:
    return (
        definitions
        + f"""
def main(x):
    if jax.default_backend() == "gpu":
        return {call}  # here
    return x
"""
    )


@CALLED
def test_positional(called: str, other: str, expected: bool) -> None:
    assert fires(_guarded(f"pick(lib.{other}, lib.{called}, x)")) is expected


@CALLED
def test_keyword_in_any_order(called: str, other: str, expected: bool) -> None:
    assert fires(_guarded(f"pick(x=x, b=lib.{called}, a=lib.{other})")) is expected


@CALLED
def test_positional_then_keyword(called: str, other: str, expected: bool) -> None:
    assert fires(_guarded(f"pick(lib.{other}, x=x, b=lib.{called})")) is expected


@pytest.mark.parametrize(
    ("call", "expected"),
    [("pick(x)", True), ("pick(x, lib.triton_kernel)", False)],
    ids=["default-fires", "argument-overrides-silent"],
)
def test_default(call: str, expected: bool) -> None:
    definitions = "def pick(x, f=lib.tpu_kernel):\n    return f(x)\n"
    assert fires(_guarded(call, definitions)) is expected


@CALLED
def test_default_is_evaluated_at_definition(called: str, other: str, expected: bool) -> None:
    definitions = f"""
k = lib.{called}
def pick(x, f=k):
    return f(x)
k = lib.{other}
"""
    assert fires(_guarded("pick(x)", definitions)) is expected


@pytest.mark.parametrize(
    ("call", "expected"),
    [("pick(x, f=lib.tpu_kernel)", True), ("pick(x)", False)],
    ids=["keyword-only-given-fires", "keyword-only-default-silent"],
)
def test_keyword_only(call: str, expected: bool) -> None:
    definitions = "def pick(x, *, f=lib.triton_kernel):\n    return f(x)\n"
    assert fires(_guarded(call, definitions)) is expected


@CALLED
def test_star_args_is_a_tuple(called: str, other: str, expected: bool) -> None:
    definitions = "def second(x, *fs):\n    return fs[1](x)\n"
    assert fires(_guarded(f"second(x, lib.{other}, lib.{called})", definitions)) is expected


@CALLED
def test_star_star_kwargs_is_a_dict(called: str, other: str, expected: bool) -> None:
    definitions = 'def named(x, **fs):\n    return fs["fast"](x)\n'
    call = f"named(x, slow=lib.{other}, fast=lib.{called})"
    assert fires(_guarded(call, definitions)) is expected


@CALLED
def test_star_splat_at_the_call(called: str, other: str, expected: bool) -> None:
    definitions = PICK_SECOND + f"ARGS = (lib.{other}, lib.{called})\n"
    assert fires(_guarded("pick(*ARGS, x)", definitions)) is expected


@CALLED
def test_star_star_splat_at_the_call(called: str, other: str, expected: bool) -> None:
    definitions = PICK_SECOND + f'KWARGS = {{"a": lib.{other}, "b": lib.{called}}}\n'
    assert fires(_guarded("pick(x=x, **KWARGS)", definitions)) is expected


@CALLED
def test_args_forwarded_through_a_wrapper(called: str, other: str, expected: bool) -> None:
    definitions = PICK_SECOND + "def forward(*args, **kwargs):\n    return pick(*args, **kwargs)\n"
    assert fires(_guarded(f"forward(lib.{other}, x=x, b=lib.{called})", definitions)) is expected
