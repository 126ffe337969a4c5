"""Check dispatch / redispatch / check_lowering on a real NVIDIA GPU (run by hand; not a test).

Usage, on a CUDA machine, from the repository root::

    PYTHONPATH=src python tests/patterns/gpu_dispatch_check.py [ARTIFACT.bin ...] --json out.json

The three branches add different constants (TPU kernel +1, Triton kernel +2, reference
+3) so the output says which branch ran. It checks:

1. ``jax.jit(dispatch)(x)`` runs the Triton branch on the GPU (x + 2);
2. an export made *here* for ["tpu", "cuda", "cpu"] runs here (x + 2), also after a
   serialize / deserialize round trip;
3. each ARTIFACT (the same dispatch exported on a CPU host with another JAX version,
   ``jax.export.Exported.serialize()``) deserializes and runs here (x + 2);
4. ``redispatch(jit(TPU kernel), jit(Triton kernel))``: with ``typed_pallas.pallas_call``
   kernels the TPU candidate's ``PlatformMismatchError`` is caught and Triton runs; with
   JAX's ``pl.pallas_call`` the error JAX raises (an empty ``AssertionError`` on jax 0.11/0.12)
   is not a mismatch it can prove, and propagates;
5. ``check_lowering`` of the dispatch and of a TPU kernel on this host.

``--make-artifact PATH`` (on any host) writes the export of step 3 instead.
"""

from __future__ import annotations

import argparse
import json
import sys
import traceback
import warnings
from typing import Any

warnings.simplefilter("ignore")


def build(typed: bool = True) -> dict[str, Any]:
    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu
    from jax.experimental.pallas import triton as pltriton

    import typed_pallas

    out = jax.ShapeDtypeStruct((256, 128), jnp.float32)

    def plus(c: float):  # type: ignore[no-untyped-def]
        def body(x_ref, o_ref):  # type: ignore[no-untyped-def]
            o_ref[...] = x_ref[...] + c

        return body

    if typed:
        tpu = typed_pallas.pallas_call(plus(1.0), out, compiler_params=pltpu.CompilerParams())
        gpu = typed_pallas.pallas_call(
            plus(2.0), out, compiler_params=pltriton.CompilerParams(num_warps=4)
        )
    else:
        tpu = typed_pallas.platform("tpu")(
            pl.pallas_call(plus(1.0), out_shape=out, compiler_params=pltpu.CompilerParams())
        )
        gpu = typed_pallas.platform("gpu")(
            pl.pallas_call(
                plus(2.0), out_shape=out, compiler_params=pltriton.CompilerParams(num_warps=4)
            )
        )

    def reference(x):  # type: ignore[no-untyped-def]
        return x + 3.0

    d = typed_pallas.dispatch(tpu=tpu, gpu=gpu, default=reference)
    return {
        "tpu": tpu,
        "gpu": gpu,
        "reference": reference,
        "dispatch": d,
        "x": jnp.ones((256, 128), jnp.float32),
    }


def export_all(d: Any, x: Any) -> Any:
    import jax
    from jax import export

    from typed_pallas._dispatch import cross_lowering_targets

    checks = [
        export.DisabledSafetyCheck.custom_call(n) for n in ("__gpu$xla.gpu.triton", "mosaic_gpu_v2")
    ]
    here = jax.default_backend()
    targets = (
        ("tpu", "cuda") if here == "cpu" else ("tpu",)
    )  # cross-lower only what this host lacks
    with cross_lowering_targets(targets):
        return export.export(
            jax.jit(lambda v: d(v)), platforms=["tpu", "cuda", "cpu"], disabled_checks=checks
        )(x)


def step(results: dict[str, Any], name: str, fn: Any) -> None:
    try:
        results[name] = fn()
    except Exception as exc:
        results[name] = {
            "error": f"{type(exc).__name__}: {exc}"[:500],
            "trace": traceback.format_exc()[-1500:],
        }
    print(
        f"{name}: {results[name] if not isinstance(results[name], dict) or 'trace' not in results[name] else results[name]['error']}"
    )


def added(y: Any, x: Any) -> float:
    import numpy as np

    diff = np.asarray(y) - np.asarray(x)
    return float(diff.mean()) if float(diff.max() - diff.min()) == 0.0 else float("nan")


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("artifacts", nargs="*")
    parser.add_argument("--json")
    parser.add_argument("--make-artifact")
    parser.add_argument(
        "--raw-redispatch-only",
        action="store_true",
        help="step 4b alone (run it in a fresh process)",
    )
    args = parser.parse_args()

    import jax

    k = build()
    if args.make_artifact:
        exported = export_all(k["dispatch"], k["x"])
        with open(args.make_artifact, "wb") as fh:
            fh.write(exported.serialize())
        print(f"wrote {args.make_artifact} (jax {jax.__version__}, platforms {exported.platforms})")
        return

    from jax import export

    import typed_pallas

    x = k["x"]
    r: dict[str, Any] = {
        "jax": jax.__version__,
        "backend": jax.default_backend(),
        "devices": [str(d) for d in jax.devices()],
    }
    print(r)
    if args.raw_redispatch_only:
        raw_only = build(typed=False)
        rd = typed_pallas.redispatch(
            jax.jit(raw_only["tpu"]), jax.jit(raw_only["gpu"]), raw_only["reference"]
        )
        step(
            r,
            "4b (fresh process) redispatch raw JAX kernels",
            lambda: {"adds": added(rd(x), x), "chosen": rd.chosen},
        )
        return
    step(r, "1 jit(dispatch) adds", lambda: added(jax.jit(k["dispatch"])(x), x))

    def local_export() -> dict[str, Any]:
        exported = export_all(k["dispatch"], x)
        again = export.deserialize(exported.serialize())
        return {
            "adds": added(exported.call(x), x),
            "adds_after_roundtrip": added(again.call(x), x),
            "platforms": list(exported.platforms),
        }

    step(r, "2 export here [tpu,cuda,cpu]", local_export)
    for path in args.artifacts:

        def run_artifact(path: str = path) -> dict[str, Any]:
            with open(path, "rb") as fh:
                exported = export.deserialize(bytearray(fh.read()))
            return {"adds": added(exported.call(x), x), "platforms": list(exported.platforms)}

        step(r, f"3 artifact {path}", run_artifact)

    def redispatch_typed() -> dict[str, Any]:
        rd = typed_pallas.redispatch(jax.jit(k["tpu"]), jax.jit(k["gpu"]), k["reference"])
        return {"adds": added(rd(x), x), "chosen": rd.chosen}

    step(r, "4a redispatch typed kernels", redispatch_typed)
    raw = build(typed=False)

    def redispatch_raw() -> dict[str, Any]:
        rd = typed_pallas.redispatch(jax.jit(raw["tpu"]), jax.jit(raw["gpu"]), raw["reference"])
        return {"adds": added(rd(x), x), "chosen": rd.chosen}

    step(r, "4b redispatch raw JAX kernels", redispatch_raw)
    step(
        r,
        "5a check_lowering(dispatch)",
        lambda: typed_pallas.check_lowering(k["dispatch"], x).to_dict(),
    )
    step(
        r,
        "5b check_lowering(raw tpu kernel)",
        lambda: typed_pallas.check_lowering(raw["tpu"], x).to_dict(),
    )
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(r, fh, indent=2, default=str)


if __name__ == "__main__":
    sys.exit(main())
