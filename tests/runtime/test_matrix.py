"""The backstop matrix, one FRESH interpreter per cell (matrix_driver.py), so that what an
earlier cell imported or registered cannot hide a failure.

* typed entry points: each of the 16 mismatched (params x lowering platform) cells raises
  ValueError with exactly JAX's text; Mosaic GPU params on rocm raise the backend-level twin;
* install_backstop(): JAX's own entry points do the same (one mismatched cell per
  entry point and direction);
* matched cells that JAX lowers: the typed entry point lowers them too, to byte-identical
  module text (raw and typed lowered in one process from one call site).

Cells that need Mosaic GPU skip where it cannot be imported (jax 0.10 without absl).
benchmarks/backstop_matrix.py prints the whole table.
"""

from __future__ import annotations

import concurrent.futures
import importlib.util
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from typed_pallas import _platforms

DRIVER = Path(__file__).with_name("matrix_driver.py")
ENTRIES = ("pallas_call", "kernel_tpu_mesh", "kernel_gpu_mesh", "plgpu_kernel")
MISMATCHED = [(p, t) for p in ("tpu",) for t in ("cuda", "rocm")] + [
    (p, "tpu") for p in ("triton", "mosaic_gpu")
]

#: the cells' params names -> backend (their custom calls come from the platform table)
BACKEND_OF_PARAMS: dict[str, _platforms.Backend] = {
    "tpu": "mosaic_tpu",
    "triton": "triton",
    "mosaic_gpu": "mosaic_gpu",
}

pytestmark = pytest.mark.slow


IDENTICAL = [
    ("pallas_call", "tpu", "tpu"),
    ("pallas_call", "triton", "cuda"),
    ("pallas_call", "triton", "rocm"),
    ("pallas_call", "mosaic_gpu", "cuda"),
    ("kernel_tpu_mesh", "tpu", "tpu"),
    ("kernel_gpu_mesh", "mosaic_gpu", "cuda"),
    ("plgpu_kernel", "mosaic_gpu", "cuda"),
]
BACKSTOP = [(e, p, t) for e in ENTRIES for p, t in (("tpu", "cuda"), ("triton", "tpu"))]
ROCM = [(e, "mosaic_gpu", "rocm") for e in ("pallas_call", "kernel_gpu_mesh", "plgpu_kernel")]
CELLS = (
    [("typed", e, p, t) for e in ENTRIES for p, t in MISMATCHED]
    + [("typed", *c) for c in ROCM]
    + [("backstop", *c) for c in BACKSTOP]
    + [("identical", *c) for c in IDENTICAL]
)


def _load_driver():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("matrix_driver", DRIVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _spawn(mode: str, entry: str, params: str, target: str) -> dict[str, object]:
    result: dict[str, object] = _load_driver().spawn(mode, entry, params, target)
    return result


@pytest.fixture(scope="module")
def matrix() -> dict[tuple[str, ...], dict[str, object]]:
    """Every cell of this module, each in its own fresh interpreter, a few at a time."""
    workers = max(1, min(4, (os.cpu_count() or 1)))
    with concurrent.futures.ThreadPoolExecutor(workers) as pool:
        results = list(pool.map(lambda cell: _spawn(*cell), CELLS))
    return dict(zip(CELLS, results))


@pytest.fixture
def run_cell(matrix: dict[tuple[str, ...], dict[str, object]]) -> Callable[..., dict[str, object]]:
    def get(mode: str, entry: str, params: str, target: str) -> dict[str, object]:
        result = matrix[(mode, entry, params, target)]
        assert result["outcome"] != "CRASH", f"driver crashed:\n{result['detail']}"
        if result["outcome"] == "NA":
            pytest.skip(str(result["detail"]))
        return result

    return get


@pytest.mark.parametrize("entry", ENTRIES)
@pytest.mark.parametrize(("params", "target"), MISMATCHED)
def test_typed_mismatched_cell_raises_jax_text(
    run_cell: Callable[..., dict[str, object]], entry: str, params: str, target: str
) -> None:
    result = run_cell("typed", entry, params, target)
    assert result["outcome"] == "VE", result
    assert str(result["detail"]).startswith("PlatformMismatchError: ")
    assert result["notes"], "a hint in a note"


@pytest.mark.parametrize("entry", [e for e, _, _ in ROCM])
def test_typed_mosaic_gpu_on_rocm_is_refused(
    run_cell: Callable[..., dict[str, object]], entry: str
) -> None:
    result = run_cell("typed", entry, "mosaic_gpu", "rocm")
    assert result["outcome"] == "VEb", result
    assert "Compiler params for backend mosaic_gpu cannot be used for rocm lowering." in str(
        result["detail"]
    )


@pytest.mark.parametrize(("entry", "params", "target"), BACKSTOP)
def test_backstop_mismatched_cell_raises_jax_text(
    run_cell: Callable[..., dict[str, object]], entry: str, params: str, target: str
) -> None:
    result = run_cell("backstop", entry, params, target)
    assert result["outcome"] == "VE", result


@pytest.mark.parametrize(("entry", "params", "target"), IDENTICAL)
def test_matched_cell_lowers_like_jax(
    run_cell: Callable[..., dict[str, object]], entry: str, params: str, target: str
) -> None:
    result = run_cell("identical", entry, params, target)
    if result["raw_outcome"] != "OK":
        # JAX itself does not lower this cell (jax 0.12: Mosaic GPU params through
        # pl.pallas_call); the typed entry point must not make it lower either.
        assert result["outcome"] != "OK", result
        return
    assert result["outcome"] == "OK", result
    assert result["same_text"] is True, result
    row = _platforms.PARAMS_BY_BACKEND[BACKEND_OF_PARAMS[params]]
    assert set(row.custom_calls) & set(result["calls"]), (row.custom_calls, result)  # type: ignore[call-overload]
