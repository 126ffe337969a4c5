"""Measure the backstop matrix: JAX alone vs typed_pallas's entry points vs install_backstop().

Each cell (mode x entry x params x lowering platform) runs in a fresh interpreter through
tests/runtime/matrix_driver.py, cross-lowered on this CPU host with jax.export. Prints
the table and, per mode:

* mismatched cells right: of the 16 cells where the params' platform is not the lowering
  platform's (tpu params on cuda/rocm; Triton or Mosaic GPU params on tpu; 4 entry
  points), how many raise ValueError with exactly JAX's text for that cell;
* matched cells lowering: of the 20 other cells, how many lower (and, for typed and
  backstop, how many of those JAX itself lowers);
* Mosaic GPU on rocm: what happens (3 entry points).

Usage: python benchmarks/backstop_matrix.py [--python PATH] [--modes raw,typed,backstop]
       [--jobs N]. The interpreter must import jax and typed_pallas (PYTHONPATH=src works).
"""

from __future__ import annotations

import argparse
import concurrent.futures
import importlib.util
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parent.parent
DRIVER = ROOT / "tests" / "runtime" / "matrix_driver.py"
ENTRIES = ("pallas_call", "kernel_tpu_mesh", "kernel_gpu_mesh", "plgpu_kernel")
PARAMS = ("tpu", "triton", "mosaic_gpu")
TARGETS = ("tpu", "cuda", "rocm")
PLATFORM = {"tpu": "tpu", "triton": "gpu", "mosaic_gpu": "gpu", "cuda": "gpu", "rocm": "gpu"}


def _load_driver() -> ModuleType:
    spec = importlib.util.spec_from_file_location("matrix_driver", DRIVER)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def run(python: str, mode: str, entry: str, params: str, target: str) -> dict[str, object]:
    result: dict[str, object] = _load_driver().spawn(
        mode, entry, params, target, python=python, timeout=300
    )
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--python", default=sys.executable)
    parser.add_argument("--modes", default="raw,typed,backstop")
    parser.add_argument("--jobs", type=int, default=2)
    args = parser.parse_args()
    modes = args.modes.split(",")
    version = subprocess.run(
        [
            args.python,
            "-c",
            "import sys, jax; print(f'Python {sys.version.split()[0]}, jax {jax.__version__}')",
        ],
        capture_output=True,
        text=True,
    ).stdout.strip()
    cells = [(m, e, p, t) for m in modes for e in ENTRIES for p in PARAMS for t in TARGETS]
    start = time.perf_counter()
    with concurrent.futures.ThreadPoolExecutor(args.jobs) as pool:
        results = dict(zip(cells, pool.map(lambda c: run(args.python, *c), cells)))
    elapsed = time.perf_counter() - start
    print(f"# backstop matrix, {version}, {len(cells)} fresh processes in {elapsed:.0f}s")
    for mode in modes:
        print(f"\n## {mode}")
        print("| params | entry | " + " | ".join(TARGETS) + " |")
        print("|---|---|" + "---|" * len(TARGETS))
        for p in PARAMS:
            for e in ENTRIES:
                row = [str(results[(mode, e, p, t)]["outcome"]) for t in TARGETS]
                print(f"| {p} | {e} | " + " | ".join(row) + " |")
    print("\n## summary")
    print(
        "| mode | mismatched cells right (VE, exact text) | matched cells lowering | of which JAX lowers too, same text | Mosaic GPU on rocm | not available |"
    )
    print("|---|---|---|---|---|---|")
    for mode in modes:
        mismatched = [
            (e, p, t)
            for e in ENTRIES
            for p in PARAMS
            for t in TARGETS
            if PLATFORM[p] != PLATFORM[t]
        ]
        matched = [
            (e, p, t)
            for e in ENTRIES
            for p in PARAMS
            for t in TARGETS
            if PLATFORM[p] == PLATFORM[t]
        ]
        right = sum(results[(mode, *c)]["outcome"] == "VE" for c in mismatched)
        lowering = sum(results[(mode, *c)]["outcome"] == "OK" for c in matched)
        same = sum(
            results[(mode, *c)]["outcome"] == "OK"
            and ("raw", *c) in results
            and results[(mode, *c)].get("program_sha") == results[("raw", *c)].get("program_sha")
            for c in matched
        )
        raw_lowering = sum(results.get(("raw", *c), {}).get("outcome") == "OK" for c in matched)
        rocm = ",".join(str(results[(mode, e, "mosaic_gpu", "rocm")]["outcome"]) for e in ENTRIES)
        na = sum(results[(mode, *c)]["outcome"] == "NA" for c in mismatched + matched)
        print(
            f"| {mode} | {right}/{len(mismatched)} | {lowering}/{len(matched)} | {same}/{raw_lowering} | {rocm} | {na} |"
        )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
