"""Run ``typed_pallas.check_lowering`` for kernels of one or more params classes, in THIS interpreter.

Usage: ``python lowering_driver.py ENTRY [--warm] BACKEND [BACKEND ...]``

* ENTRY: ``raw`` (JAX's ``pl.pallas_call``; ``plgpu.kernel`` for Mosaic GPU) or ``typed``
  (``typed_pallas.pallas_call`` / ``typed_pallas.mosaic_gpu_kernel`` when the runtime has them);
* ``--warm``: first lower a Triton kernel for cuda and a TPU kernel for tpu, so JAX's lazy
  registry is full (the answer must not change);
* BACKEND: ``mosaic_tpu``, ``triton``, ``mosaic_gpu``.

Prints one JSON object: ``{"jax": version, "rows": {backend: report.to_dict() | {"na": why}}}``.
Imports nothing from the test suite, so the only state is what it loads itself.
"""

from __future__ import annotations

import importlib
import inspect
import json
import sys
import warnings

warnings.simplefilter("ignore")


def body(x_ref, o_ref):  # type: ignore[no-untyped-def]
    o_ref[...] = x_ref[...] + 1


def build(entry: str, backend: str):  # type: ignore[no-untyped-def]
    import jax
    from jax.experimental import pallas as pl

    module = {"mosaic_tpu": "tpu", "triton": "triton", "mosaic_gpu": "mosaic_gpu"}[backend]
    m = importlib.import_module(f"jax.experimental.pallas.{module}")
    cp = m.CompilerParams()
    if entry == "typed":
        import typed_pallas

        if backend == "mosaic_gpu":
            maker = typed_pallas.mosaic_gpu_kernel
        else:

            def maker(b, **kw):  # type: ignore[no-untyped-def]
                return typed_pallas.pallas_call(b, kw.pop("out_shape"), **kw)
    elif backend == "mosaic_gpu":
        maker = m.kernel
    else:
        maker = pl.pallas_call
    if backend == "mosaic_gpu":
        keyword = (
            "out_type" if "out_type" in inspect.signature(m.kernel).parameters else "out_shape"
        )
    else:
        keyword = "out_shape"

    def kernel(x):  # type: ignore[no-untyped-def]
        return maker(body, compiler_params=cp, **{keyword: jax.ShapeDtypeStruct(x.shape, x.dtype)})(
            x
        )

    kernel.__qualname__ = f"{entry}_{backend}"
    return kernel


def warm() -> None:
    import jax

    from typed_pallas import check_lowering

    x = jax.ShapeDtypeStruct((8, 128), jax.numpy.float32)
    check_lowering(build("raw", "triton"), x, platforms=("cuda",))
    check_lowering(build("raw", "mosaic_tpu"), x, platforms=("tpu",))


def main(argv: list[str]) -> dict[str, object]:
    import jax

    from typed_pallas import check_lowering

    entry, rest = argv[0], argv[1:]
    if rest and rest[0] == "--warm":
        rest = rest[1:]
        warm()
    x = jax.ShapeDtypeStruct((8, 128), jax.numpy.float32)
    rows: dict[str, object] = {}
    for backend in rest:
        try:
            fn = build(entry, backend)
        except Exception as exc:  # e.g. Mosaic GPU without absl, or no typed entry yet
            rows[backend] = {"na": f"{type(exc).__name__}: {exc}"}
            continue
        rows[backend] = check_lowering(fn, x).to_dict()
    return {"jax": jax.__version__, "rows": rows}


if __name__ == "__main__":
    print(json.dumps(main(sys.argv[1:])))
