"""``examples/``: every example imports, the CPU one runs, and the TPU ones lower (or fail
to lower) for TPU as their folder says. What ``typed-pallas check`` finds in them is in
tests/cli/test_check.py."""

from __future__ import annotations

import json
import os
import runpy
import subprocess
import sys
from pathlib import Path

import pytest

from typed_pallas_mypy.cli import expect

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"


def _mosaic_gpu_importable() -> bool:
    try:
        import jax.experimental.pallas.mosaic_gpu  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("path", expect.python_files([str(EXAMPLES)]), ids=os.path.basename)
def test_examples_import(path: str) -> None:
    if "mosaic_gpu" in Path(path).read_text() and not _mosaic_gpu_importable():
        pytest.skip("jax.experimental.pallas.mosaic_gpu does not import here (needs absl)")
    runpy.run_path(path)  # defines kernels; runs nothing


@pytest.mark.slow
def test_interpret_example_runs_on_cpu() -> None:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "correct" / "interpret_on_cpu.py")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


LOWER_SCRIPT = """
import json, runpy, sys
import jax, jax.numpy as jnp
out = {}
for path, fn, nargs in json.loads(sys.argv[1]):
    x = jnp.ones((256, 256), jnp.float32)
    try:
        jax.jit(runpy.run_path(path)[fn]).trace(*[x] * nargs).lower(lowering_platforms=("tpu",))
        out[fn] = "lowered"
    except Exception as e:  # JAX's own failure: an empty AssertionError or its ValueError
        out[fn] = type(e).__name__
print(json.dumps(out))
"""


@pytest.mark.slow
def test_examples_lower_for_tpu_as_labelled() -> None:
    """The examples are real: correct TPU code lowers for TPU, the TPU-side mistakes do not.

    Cross-lowering for TPU works on a CPU-only machine; GPU lowering needs a GPU.
    """
    cases = [
        (str(EXAMPLES / "correct" / "tpu_matmul.py"), "matmul", 2),
        (str(EXAMPLES / "correct" / "multi_platform_dispatch.py"), "scale", 1),
        (str(EXAMPLES / "mistakes" / "tpu_dma_kernel_triton_params.py"), "hbm_copy", 1),
        (str(EXAMPLES / "mistakes" / "swapped_platform_dependent.py"), "square", 1),
    ]
    proc = subprocess.run(
        [sys.executable, "-c", LOWER_SCRIPT, json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["matmul"] == result["scale"] == "lowered"
    assert result["hbm_copy"] in ("AssertionError", "ValueError", "PlatformMismatchError")
    assert result["square"] in ("AssertionError", "ValueError", "PlatformMismatchError")
