"""``match``: cases tried in order, the first that matches runs: literal patterns,
captures, sequence and mapping patterns (which bind their parts), class patterns and
guards (``case p if cond``). What no case matches runs nothing.
"""

from __future__ import annotations

import pytest
from evaluator_programs import fires

MODES = pytest.mark.parametrize(
    ("mode", "expected"), [("fast", True), ("safe", False)], ids=["fast-fires", "safe-silent"]
)


def _guarded(setup: str, call: str = "k(x)") -> str:
    return f"""
def main(x):
{setup}
    if jax.default_backend() == "gpu":
        return {call}  # here
    return x
"""


@MODES
def test_literal_pattern(mode: str, expected: bool) -> None:
    setup = f"""
    mode = "{mode}"
    match mode:
        case "fast":
            k = lib.tpu_kernel
        case _:
            k = lib.triton_kernel
"""
    assert fires(_guarded(setup)) is expected


@pytest.mark.parametrize(
    ("subject", "expected"),
    [("lib.tpu_kernel", True), ("lib.triton_kernel", False)],
    ids=["tpu-fires", "triton-silent"],
)
def test_capture_pattern(subject: str, expected: bool) -> None:
    setup = f"""
    match {subject}:
        case found:
            k = found
"""
    assert fires(_guarded(setup)) is expected


@pytest.mark.parametrize(
    ("subject", "expected"),
    [
        ('("fast", lib.tpu_kernel)', True),
        ('["fast", lib.tpu_kernel]', True),
        ('("safe", lib.tpu_kernel)', False),
        ('("fast", lib.tpu_kernel, 1)', False),
    ],
    ids=["tuple-fires", "list-fires", "other-literal-silent", "other-length-silent"],
)
def test_sequence_pattern(subject: str, expected: bool) -> None:
    setup = f"""
    k = lib.triton_kernel
    match {subject}:
        case ("fast", found):
            k = found
"""
    assert fires(_guarded(setup)) is expected


@MODES
def test_mapping_pattern(mode: str, expected: bool) -> None:
    setup = f"""
    k = lib.triton_kernel
    match {{"mode": "{mode}", "kernel": lib.tpu_kernel, "extra": 1}}:
        case {{"mode": "fast", "kernel": found}}:
            k = found
"""
    assert fires(_guarded(setup)) is expected


@MODES
def test_guard_on_a_case(mode: str, expected: bool) -> None:
    setup = f"""
    match "{mode}":
        case m if m == "fast":
            k = lib.tpu_kernel
        case _:
            k = lib.triton_kernel
"""
    assert fires(_guarded(setup)) is expected


@MODES
@pytest.mark.parametrize("pattern", ["Fast(found)", "Fast(kernel=found)"])
def test_class_pattern(pattern: str, mode: str, expected: bool) -> None:
    program = """
class Fast:
    __match_args__ = ("kernel",)
    def __init__(self, kernel):
        self.kernel = kernel

class Safe:
    pass
"""
    subject = "Fast(lib.tpu_kernel)" if mode == "fast" else "Safe()"
    setup = f"""
    k = lib.triton_kernel
    match {subject}:
        case {pattern}:
            k = found
"""
    assert fires(program + _guarded(setup)) is expected


@MODES
def test_no_case_matches(mode: str, expected: bool) -> None:
    setup = f"""
    match "{mode}":
        case "fast":
            pass
        case _:
            return x
"""
    assert fires(_guarded(setup, "lib.tpu_kernel(x)")) is expected
