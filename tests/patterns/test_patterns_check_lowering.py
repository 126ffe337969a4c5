"""typed_pallas.check_lowering: the right cell for every params class x platform, in fresh processes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import jax
import jax.numpy as jnp
import pytest
from patterns_kernels import raw_kernel, reference, tpu_kernel, triton_kernel

import typed_pallas
from typed_pallas import PlatformMismatchError, UnknownPlatformError
from typed_pallas._check_lowering import LoweringError, classify

DRIVER = Path(__file__).with_name("lowering_driver.py")
BACKENDS = ("mosaic_tpu", "triton", "mosaic_gpu")
X = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def run_driver(*argv: str) -> dict:
    proc = subprocess.run(
        [sys.executable, str(DRIVER), *argv],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])


#: What each params class does on each platform, and JAX's exact text where it cannot lower:
#: written out here (not derived from _platforms, which the code under test reads).
TPU_ON_GPU = "Compiler params for platform tpu cannot be used for gpu lowering."
GPU_ON_TPU = "Compiler params for platform gpu cannot be used for tpu lowering."
EXPECTED: dict[str, dict[str, str]] = {
    "mosaic_tpu": {"tpu": "lowered", "cuda": TPU_ON_GPU, "rocm": TPU_ON_GPU},
    "triton": {"tpu": GPU_ON_TPU, "cuda": "lowered", "rocm": "lowered"},
    "mosaic_gpu": {
        "tpu": GPU_ON_TPU,
        "cuda": "lowered",
        # the same registry platform ("gpu"): JAX's backend-level text
        "rocm": "Compiler params for backend mosaic_gpu cannot be used for rocm lowering.",
    },
}


def check_row(backend: str, row: dict) -> None:
    if "na" in row:
        pytest.skip(f"{backend} kernels cannot be built with this JAX: {row['na']}")
    expected = EXPECTED[backend]
    assert {p: c["status"] for p, c in row.items()} == {
        p: "lowered" if e == "lowered" else "mismatch" for p, e in expected.items()
    }
    for platform, cell in row.items():
        if cell["status"] == "lowered":
            assert cell["kernels"] == [backend]
        else:
            assert cell["message"] == expected[platform], platform
            assert cell["source"] in ("jax", "typed_pallas", "inferred")


@pytest.mark.slow
@pytest.mark.parametrize("entry", ["raw", "typed"])
@pytest.mark.parametrize("backend", BACKENDS)
def test_each_params_class_in_a_fresh_process(entry: str, backend: str) -> None:
    # raw: JAX's entry points (its error may be an empty AssertionError: proven, "inferred");
    # typed: typed_pallas's entry points, whose guard always raises the ValueError.
    result = run_driver(entry, backend)
    row = result["rows"][backend]
    check_row(backend, row)
    if entry == "typed":
        assert all(
            c["source"] == "typed_pallas" for c in row.values() if c["status"] == "mismatch"
        ), row


@pytest.mark.slow
def test_the_answer_does_not_depend_on_what_the_process_lowered_before() -> None:
    # Fill JAX's lazy registry first, then check every class in the same process.
    result = run_driver("raw", "--warm", *reversed(BACKENDS))
    for backend in BACKENDS:
        row = result["rows"][backend]
        if "na" not in row:
            check_row(backend, row)


# ----------------------------------------------------------------------------- in this process


def test_dispatch_lowers_everywhere_and_never_blames_a_branch_that_is_not_lowered() -> None:
    d = typed_pallas.dispatch(tpu=tpu_kernel(), gpu=triton_kernel(), default=reference)
    report = typed_pallas.check_lowering(d, X, platforms=("tpu", "cuda", "rocm", "cpu"))
    assert report.ok, report
    assert report["tpu"].kernels == ("mosaic_tpu",)
    assert report["cuda"].kernels == report["rocm"].kernels == ("triton",)
    assert report["cpu"].kernels == ()
    report.assert_lowers()


def test_a_tpu_kernel_in_the_gpu_slot_is_a_mismatch_on_cuda_and_rocm() -> None:
    wrong = typed_pallas.dispatch(tpu=tpu_kernel(), gpu=raw_kernel("mosaic_tpu"), default=reference)
    report = typed_pallas.check_lowering(wrong, X)
    assert report.lowered == ("tpu",)
    assert report.mismatched == ("cuda", "rocm")
    assert (
        report["cuda"].message
        == "Compiler params for platform tpu cannot be used for gpu lowering."
    )
    with pytest.raises(LoweringError, match="does not lower for cuda:"):
        report.assert_lowers("tpu", "cuda")
    report.assert_lowers("tpu")


def test_an_interpreted_kernel_lowers_everywhere_whatever_its_params() -> None:
    """JAX ignores the params of an interpreted kernel: TPU params with interpret=True
    lower for cuda and rocm (the compiled twin is the firing case)."""
    interpreted = typed_pallas.check_lowering(raw_kernel("mosaic_tpu", interpret=True), X)
    assert {p: r.status for p, r in interpreted.items()} == {
        "tpu": "lowered",
        "cuda": "lowered",
        "rocm": "lowered",
    }
    compiled = typed_pallas.check_lowering(raw_kernel("mosaic_tpu"), X)
    assert compiled.mismatched == ("cuda", "rocm")


def test_gpu_expands_and_unknown_platforms_are_refused() -> None:
    report = typed_pallas.check_lowering(reference, X, platforms=("gpu",))
    assert tuple(report) == ("cuda", "rocm") and report.ok
    with pytest.raises(
        UnknownPlatformError, match=r"'metal'.*expected one of 'tpu', 'cuda', 'rocm', 'cpu', 'gpu'"
    ):
        typed_pallas.check_lowering(reference, X, platforms=("metal",))


def test_kwargs_are_passed_and_cpu_is_an_error_with_a_hint_for_compiled_kernels() -> None:
    report = typed_pallas.check_lowering(lambda x, *, k: x + k, X, platforms=("cpu",), k=2)
    assert report.ok
    cpu = typed_pallas.check_lowering(tpu_kernel(), X, platforms=("cpu",))["cpu"]
    assert cpu.status == "error" and cpu.error_type == "ValueError"
    assert "interpret" in (cpu.hint or "")


def test_the_callers_abstract_mesh_is_kept() -> None:
    device_cls = getattr(jax.sharding, "AbstractDevice", None)
    if device_cls is None:
        pytest.skip("no abstract devices in this JAX")
    device = device_cls(device_kind="TPU v5 lite", num_cores=1, platform="tpu")
    mesh = jax.sharding.AbstractMesh((2,), ("d",), abstract_device=device)
    with jax.sharding.use_abstract_mesh(mesh):  # a 2-device mesh: ours (size 1) would clash
        report = typed_pallas.check_lowering(reference, X, platforms=("tpu", "cuda"))
    assert report.ok, report


# ----------------------------------------------------------------------------- classification


MISMATCH = TPU_ON_GPU


def test_jax_value_error_with_the_anchor_text_is_a_mismatch() -> None:
    cell = classify("cuda", ValueError(MISMATCH))
    assert (cell.status, cell.source, cell.message) == ("mismatch", "jax", MISMATCH)


def test_our_error_is_a_mismatch_from_typed_pallas_even_when_wrapped() -> None:
    try:
        try:
            raise PlatformMismatchError("tpu", "gpu")
        except ValueError as inner:
            raise RuntimeError("lowering failed") from inner
    except RuntimeError as outer:
        cell = classify("cuda", outer)
    assert (cell.status, cell.source, cell.message) == ("mismatch", "typed_pallas", MISMATCH)


def test_other_value_errors_and_empty_assertions_stay_errors() -> None:
    other = classify("tpu", ValueError("Only interpret mode is supported on CPU backend."))
    assert (other.status, other.error_type, other.source) == ("error", "ValueError", None)
    empty = classify("tpu", AssertionError())
    assert (empty.status, empty.error_type, empty.message) == ("error", "AssertionError", "")
    assert "empty AssertionError" in (empty.hint or "")
    assert empty.cell() == "AssertionError: <empty>"


def test_an_empty_assertion_becomes_a_mismatch_only_with_a_proof() -> None:
    proof = PlatformMismatchError("gpu", "tpu")
    cell = classify("tpu", AssertionError(), proof=proof)
    assert (cell.status, cell.source, cell.error_type) == ("mismatch", "inferred", "AssertionError")
    assert cell.message == GPU_ON_TPU
    silent = classify(
        "rocm", None, module_text="stablehlo.custom_call @mosaic_gpu_v2(", proof=proof
    )
    assert silent.status == "mismatch" and silent.kernels == ("mosaic_gpu",)
    assert classify(
        "cuda", None, module_text='call_target_name = "__gpu$xla.gpu.triton"'
    ).kernels == ("triton",)
