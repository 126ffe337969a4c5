"""The parity harness's shapes, run natively on a GPU: each ``fire_*`` must fail, each
``silent_*`` must run (the ground truth of ``tests/parity``, proven on CPU by
cross-lowering in ``tests/parity/test_ground_truth.py``).

Run on a machine with an NVIDIA GPU, from the repository root, with typed-pallas
importable (installed, or ``PYTHONPATH=src``)::

    python benchmarks/parity_on_gpu.py --json parity_on_gpu.json

Each function of ``tests/parity/kernlib/shapes.py`` listed by
``tests/parity/parity_cases.py`` is called once, compiled (``jax.jit``), on an array of
its case's shape, in this one process, and the output made ready. A ``fire_*`` function
must raise (JAX raises an empty ``AssertionError`` or its ``ValueError`` for TPU params
lowered for the GPU); a ``silent_*`` function must return. The application-level forms
(guard helpers, a TPU-only body in the caller's ``pl.pallas_call``, a config object) are
run as the application runs them. The exit status is 1 if any function does otherwise.

What it does not do: time anything, or prove anything on a host without a GPU (there
the cross-lowering test is the proof).
"""

from __future__ import annotations

import argparse
import json
import platform
import sys
import time
import traceback
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
PARITY = ROOT / "tests" / "parity"


def _outcome(fn: Callable[[], Any]) -> tuple[str, str]:
    import jax

    ready: Callable[[Any], Any] = jax.block_until_ready
    try:
        ready(fn())
    except Exception as error:  # any failure to lower or run is the answer
        text = f"{type(error).__name__}: {error}".strip()
        return "failed", text.splitlines()[0][:300] if text else type(error).__name__
    return "ran", ""


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="parity_on_gpu", description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", type=Path, default=Path("parity_on_gpu.json"))
    args = ap.parse_args(argv)
    sys.path.insert(0, str(PARITY))
    import importlib

    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl

    kernlib: Any = importlib.import_module("kernlib")
    importlib.import_module("kernlib.kernels")
    parity_cases: Any = importlib.import_module("parity_cases")

    shapes = kernlib.shapes
    rows: list[dict[str, Any]] = []
    for name in [*parity_cases.fire_functions(), *parity_cases.silent_functions()]:
        x = jnp.zeros(parity_cases.input_of(name), jnp.float32)
        fn = getattr(shapes, name)
        status, error = _outcome(lambda fn=fn, x=x: jax.jit(fn)(x))  # type: ignore[misc]
        expected = "failed" if name.startswith("fire_") else "ran"
        rows.append({"name": name, "status": status, "expected": expected, "error": error})
    x = jnp.zeros(parity_cases.DEFAULT_INPUT, jnp.float32)
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)  # type: ignore[no-untyped-call]
    application: dict[str, Callable[[], Any]] = {
        "fire: a guard helper of the library": lambda: (
            jax.jit(kernlib.fire_direct)(x) if kernlib.kernels.on_gpu() else x
        ),
        "silent: a guard helper of the library": lambda: (
            jax.jit(kernlib.silent_direct)(x) if kernlib.kernels.on_gpu() else x
        ),
        "fire: a device-kind guard helper of the library": lambda: (
            jax.jit(kernlib.fire_direct)(x) if not kernlib.kernels.on_tpu_kind() else x
        ),
        "silent: a device-kind guard helper of the library (its TPU side)": lambda: (
            jax.jit(kernlib.fire_direct)(x) if kernlib.kernels.on_tpu_kind() else x
        ),
        "fire: a guard helper of the library over every device": lambda: (
            jax.jit(kernlib.fire_direct)(x) if kernlib.kernels.any_gpu() else x
        ),
        "silent: a guard helper of the library over every device": lambda: (
            jax.jit(kernlib.silent_direct)(x) if kernlib.kernels.any_gpu() else x
        ),
        "fire: a guard helper of the library returning a variable": lambda: (
            jax.jit(kernlib.fire_direct)(x) if not kernlib.kernels.on_tpu_flag() else x
        ),
        "silent: a guard helper of the library returning a variable (its TPU side)": lambda: (
            jax.jit(kernlib.fire_direct)(x) if kernlib.kernels.on_tpu_flag() else x
        ),
        "fire: a guard helper of the library comparing its platform helper": lambda: (
            jax.jit(kernlib.fire_direct)(x) if kernlib.kernels.on_gpu_backend() else x
        ),
        "silent: a guard helper of the library comparing its platform helper": lambda: (
            jax.jit(kernlib.fire_direct)(x) if not kernlib.kernels.on_gpu_backend() else x
        ),
        "fire: a TPU-only kernel body in the caller's pl.pallas_call": lambda: jax.jit(
            pl.pallas_call(kernlib.kernels.copy_body, out_shape=out)
        )(x),
        "silent: a plain kernel body in the caller's pl.pallas_call": lambda: jax.jit(
            pl.pallas_call(kernlib.kernels.add_one, out_shape=out)
        )(x),
        "fire: the caller's config object": lambda: jax.jit(
            lambda y: shapes.kernel_with_config(y, shapes.Config(block=8))
        )(x),
        "silent: the caller's config object turning interpret on": lambda: jax.jit(
            lambda y: shapes.kernel_with_config(y, shapes.Config(interpret=True))
        )(x),
    }
    for name, fn in application.items():
        status, error = _outcome(fn)
        expected = "failed" if name.startswith("fire") else "ran"
        rows.append({"name": name, "status": status, "expected": expected, "error": error})
    wrong = [row for row in rows if row["status"] != row["expected"]]
    for row in rows:
        mark = "ok " if row["status"] == row["expected"] else "BAD"
        print(f"{mark} {row['name']:60} {row['status']:7} {row['error'][:90]}")
    print(f"{len(rows) - len(wrong)}/{len(rows)} as expected on {jax.devices()[0].device_kind}")
    args.json.write_text(
        json.dumps(
            {
                "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                "jax": jax.__version__,
                "device": jax.devices()[0].device_kind,
                "python": platform.python_version(),
                "rows": rows,
                "as_expected": len(rows) - len(wrong),
            },
            indent=2,
        )
        + "\n"
    )
    return 1 if wrong else 0


if __name__ == "__main__":
    try:
        raise SystemExit(main())
    except SystemExit:
        raise
    except BaseException:
        traceback.print_exc()
        raise SystemExit(2) from None
