"""Build and lower ONE cell of the backstop matrix, in this (fresh) interpreter.

Usage: ``python matrix_driver.py MODE ENTRY PARAMS TARGET`` where

* MODE: ``raw`` (JAX's entry point), ``typed`` (typed_pallas's), ``backstop`` (JAX's
  entry point after ``typed_pallas.install_backstop()``), or ``identical`` (raw, then
  typed, in this process: adds ``"same_text"``, whether the two module texts are
  byte-identical);
* ENTRY: ``pallas_call``, ``kernel_tpu_mesh`` (``pl.kernel`` on a TPU mesh),
  ``kernel_gpu_mesh`` (``pl.kernel`` on a ``plgpu.Mesh``), ``plgpu_kernel``;
* PARAMS: ``tpu``, ``triton``, ``mosaic_gpu``, ``none``, ``dict``;
* TARGET: ``tpu``, ``cuda``, ``rocm`` (cross-lowered with ``jax.export`` on this CPU
  host) or ``interpret`` (run on CPU in interpret mode and compare with x + 1).

Prints one JSON line: ``{"outcome": ..., "detail": ..., "sha": ..., "calls": [...]}`` where
outcome is ``VE`` (ValueError, exactly JAX's text for this cell), ``VEb`` (the
backend-level twin), ``AE`` (AssertionError), ``OK`` (lowered; sha of the module text),
``RUN`` (interpret mode gave x + 1), ``NA`` (the entry or params cannot be built with
this JAX, e.g. Mosaic GPU without absl) or ``ERR`` (anything else). Imports nothing
from the test suite, so the only state is what this cell itself loads.
"""

from __future__ import annotations

import hashlib
import json
import re
import sys
import warnings

warnings.simplefilter("ignore")


def main(mode: str, entry: str, params: str, target: str) -> dict[str, object]:
    if mode != "identical":
        return run_cell(mode, entry, params, target)[0]
    # one call site for both, so that source locations in the text agree too
    (raw, raw_text), (typed, typed_text) = [
        run_cell(m, entry, params, target) for m in ("raw", "typed")
    ]
    result = dict(
        typed, mode="identical", raw_outcome=raw["outcome"], raw_detail=raw.get("detail", "")
    )
    result["same_text"] = raw_text is not None and raw_text == typed_text
    return result


def run_cell(
    mode: str, entry: str, params: str, target: str
) -> tuple[dict[str, object], str | None]:
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental import pallas as pl

    from typed_pallas import _jaxcompat, _platforms

    result: dict[str, object] = {"mode": mode, "entry": entry, "params": params, "target": target}
    try:
        from jax.experimental.pallas import tpu as pltpu
        from jax.experimental.pallas import triton as pltriton

        plgpu = None
        try:
            from jax.experimental.pallas import mosaic_gpu as plgpu
        except Exception as exc:  # jax 0.10 without absl
            plgpu_error = exc
        if plgpu is None and (
            params == "mosaic_gpu" or entry in ("kernel_gpu_mesh", "plgpu_kernel")
        ):
            result.update(outcome="NA", detail=f"mosaic_gpu unavailable: {plgpu_error}")
            return result, None

        compiler_params = {
            "tpu": lambda: pltpu.CompilerParams(),
            "triton": lambda: pltriton.CompilerParams(),
            "mosaic_gpu": lambda: plgpu.CompilerParams(),  # type: ignore[union-attr]
            "none": lambda: None,
            "dict": lambda: {"mosaic": {}},
        }[params]()
        kw: dict[str, object] = {}
        if compiler_params is not None:
            kw["compiler_params"] = compiler_params
        if target == "interpret":
            kw["interpret"] = True

        if mode == "backstop":
            import typed_pallas

            typed_pallas.install_backstop()
        if mode == "typed":
            import typed_pallas

            pallas_call, kernel, gpu_kernel = (
                typed_pallas.pallas_call,
                typed_pallas.kernel,
                typed_pallas.mosaic_gpu_kernel,
            )
        else:
            pallas_call, kernel = pl.pallas_call, pl.kernel
            gpu_kernel = plgpu.kernel if plgpu is not None else None

        shape = jax.ShapeDtypeStruct((8, 128), jnp.float32)

        def add_one(x_ref, o_ref):
            o_ref[...] = x_ref[...] + 1

        def copy_add(x_ref, o_ref):
            pltpu.sync_copy(x_ref, o_ref)

        if entry == "pallas_call":
            fn = pallas_call(add_one, shape, **kw)
        elif entry == "kernel_tpu_mesh":
            if hasattr(pltpu, "TensorCoreMesh"):  # jax >= 0.12 (0.12.1 removed the factory)
                mesh = pltpu.TensorCoreMesh(axis_name="core", num_cores=1)
            else:
                mesh = pltpu.create_tensorcore_mesh("core", num_cores=1)
            fn = kernel(copy_add, out_type=shape, mesh=mesh, **kw)
        elif entry == "kernel_gpu_mesh":
            fn = kernel(add_one, out_type=shape, mesh=plgpu.Mesh(), **kw)  # type: ignore[union-attr]
        elif entry == "plgpu_kernel":
            fn = gpu_kernel(add_one, out_type=shape, **kw)
        else:
            raise SystemExit(f"unknown entry {entry}")

        x = jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128)
        if target == "interpret":
            got = np.asarray(jax.jit(fn)(x))
            want = np.asarray(x) + (1 if entry != "kernel_tpu_mesh" else 0)
            ok = got.shape == want.shape and bool(np.allclose(got, want))
            result.update(outcome="RUN" if ok else "ERR", detail="" if ok else "wrong result")
            return result, None
        text = _jaxcompat.export_text(fn, target, x)
        # strip locations so the hash compares the program, not where it was built
        program = re.sub(r"loc\(.*?\)\n?|#loc\d*\s*=.*\n", "", text)
        result.update(
            outcome="OK",
            sha=hashlib.sha256(text.encode()).hexdigest()[:16],
            program_sha=hashlib.sha256(program.encode()).hexdigest()[:16],
            calls=sorted(set(re.findall(r"custom_call @([\w$.]+)\(", text))),
        )
        return result, text
    except BaseException as exc:  # classify everything, including AssertionError
        message = str(exc)
        outcome = "ERR"
        if isinstance(exc, ValueError):
            want_platform = {"tpu": "tpu", "triton": "gpu", "mosaic_gpu": "gpu"}.get(params)
            want_target = _platforms.PLATFORM_OF_LOWERING.get(target)
            if (
                want_platform
                and want_target
                and message == _platforms.mismatch_message(want_platform, want_target)
            ):
                outcome = "VE"
            elif re.fullmatch(_platforms.MISMATCH_REGEX, message):
                outcome = "VEother"
            elif re.fullmatch(_platforms.BACKEND_MISMATCH_REGEX, message):
                outcome = "VEb"
        elif isinstance(exc, AssertionError):
            outcome = "AE"
        result.update(
            outcome=outcome,
            detail=f"{type(exc).__name__}: {message[:160]}",
            notes=list(getattr(exc, "__notes__", [])),
        )
    return result, None


def spawn(
    mode: str,
    entry: str,
    params: str,
    target: str,
    *,
    python: str = sys.executable,
    timeout: float = 600,
) -> dict[str, object]:
    """Run one cell of the matrix in a fresh ``python`` and return its JSON result.

    The test (tests/runtime/test_matrix.py) and the benchmark (benchmarks/backstop_matrix.py)
    both go through here; ``src/`` is put first on the child's path.
    """
    import os
    import subprocess
    from pathlib import Path

    env = dict(os.environ)
    src = str(Path(__file__).resolve().parents[2] / "src")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [src, env.get("PYTHONPATH", "")]))
    proc = subprocess.run(
        [python, str(Path(__file__).resolve()), mode, entry, params, target],
        capture_output=True,
        text=True,
        env=env,
        timeout=timeout,
    )
    lines = [line for line in proc.stdout.splitlines() if line.startswith("{")]
    if not lines:
        return {"outcome": "CRASH", "detail": proc.stderr[-3000:]}
    result: dict[str, object] = json.loads(lines[-1])
    return result


if __name__ == "__main__":
    print(json.dumps(main(*sys.argv[1:5])))
