"""The pytest plugin: @pytest.mark.lowers_on and the lowering_check fixture, tested with pytester."""

from __future__ import annotations

import pytest

pytest_plugins = ["pytester"]
pytestmark = pytest.mark.slow  # each case runs pytest in a subprocess (imports jax)

KERNELS = """
import jax, jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def body(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1

def tpu_op(x):
    return pl.pallas_call(body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          compiler_params=pltpu.CompilerParams())(x)

X = jax.ShapeDtypeStruct((8, 128), jnp.float32)
"""


@pytest.fixture
def run(pytester: pytest.Pytester):  # type: ignore[no-untyped-def]
    def go(tests: str, *args: str) -> pytest.RunResult:
        pytester.makepyfile(test_user=KERNELS + tests)
        return pytester.runpytest_subprocess("-p", "no:cacheprovider", "--strict-markers", *args)

    return go


def test_a_kernel_for_the_marked_platform_passes(run) -> None:  # type: ignore[no-untyped-def]
    result = run(
        """
@pytest.mark.lowers_on("tpu")
def test_ok(lowering_check):
    report = lowering_check(tpu_op, X)
    assert report.lowered == ("tpu",)
"""
    )
    result.assert_outcomes(passed=1)


def test_a_wrong_platform_kernel_fails_with_the_table(run) -> None:  # type: ignore[no-untyped-def]
    result = run(
        """
@pytest.mark.lowers_on("tpu", "cuda")
def test_wrong(lowering_check):
    lowering_check(tpu_op, X)
"""
    )
    result.assert_outcomes(failed=1)
    result.stdout.fnmatch_lines(
        [
            "*tpu_op does not lower for cuda (required by @pytest.mark.lowers_on('tpu', 'cuda'))*",
            "*cuda*mismatch*Compiler params for platform tpu cannot be used for gpu lowering.*",
        ]
    )


def test_gpu_means_cuda_and_rocm_and_no_marker_means_all_three(run) -> None:  # type: ignore[no-untyped-def]
    result = run(
        """
@pytest.mark.lowers_on("gpu")
def test_gpu(lowering_check):
    lowering_check(tpu_op, X)

def test_unmarked(lowering_check):
    report = lowering_check.report(tpu_op, X)
    assert tuple(report) == ("tpu", "cuda", "rocm")
    assert report.mismatched == ("cuda", "rocm")
"""
    )
    result.assert_outcomes(passed=1, failed=1)
    result.stdout.fnmatch_lines(["*does not lower for cuda, rocm*"])


def test_a_marked_test_that_checks_nothing_fails(run) -> None:  # type: ignore[no-untyped-def]
    result = run(
        """
@pytest.mark.lowers_on("tpu")
def test_forgot():
    total = sum(range(3))  # work that never asks for a lowering
"""
    )
    result.assert_outcomes(passed=1, errors=1)
    result.stdout.fnmatch_lines(
        ["*marked @pytest.mark.lowers_on but never called the lowering_check fixture*"]
    )


def test_marker_is_registered_and_bad_arguments_are_usage_errors(run) -> None:  # type: ignore[no-untyped-def]
    result = run(
        """
@pytest.mark.lowers_on()
def test_empty(lowering_check):
    lowering_check(tpu_op, X)
""",
        "--markers",
    )
    result.stdout.fnmatch_lines(["@pytest.mark.lowers_on(*platforms)*"])
    result = run(
        """
@pytest.mark.lowers_on()
def test_empty(lowering_check):
    lowering_check(tpu_op, X)
"""
    )
    result.assert_outcomes(errors=1)
    result.stdout.fnmatch_lines(["*lowers_on needs platforms*"])
