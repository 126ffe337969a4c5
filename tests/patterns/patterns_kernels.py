"""Kernels and helpers shared by the tests in this folder (imported, never collected).

Every kernel computes ``x + 1`` on an (8, 128) float32 block, so any branch that runs
gives the same answer as the reference, and a module's custom calls tell which
kernel was lowered.
"""

from __future__ import annotations

import contextlib
import importlib
import inspect
from collections.abc import Callable, Iterator
from typing import Any

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl

import typed_pallas
from typed_pallas._dispatch import cross_lowering_targets
from typed_pallas._jaxcompat import cross_lowering

SHAPE = (8, 128)
TPU_CALL = "tpu_custom_call"
TRITON_CALL = "__gpu$xla.gpu.triton"
GPU_CUSTOM_CALLS = ("__gpu$xla.gpu.triton", "mosaic_gpu_v2", "mosaic_gpu")


def add_one_body(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + 1


def x_input() -> jax.Array:
    return jnp.arange(SHAPE[0] * SHAPE[1], dtype=jnp.float32).reshape(SHAPE)


def params(backend: str) -> Any:
    module = {"mosaic_tpu": "tpu", "triton": "triton", "mosaic_gpu": "mosaic_gpu"}[backend]
    return importlib.import_module(f"jax.experimental.pallas.{module}").CompilerParams()


def raw_kernel(backend: str, *, interpret: bool = False) -> Callable[[jax.Array], jax.Array]:
    """JAX's own entry point with ``backend``'s params (``plgpu.kernel`` for Mosaic GPU)."""
    cp = params(backend)
    if backend == "mosaic_gpu":
        plgpu = importlib.import_module("jax.experimental.pallas.mosaic_gpu")
        keyword = (
            "out_type" if "out_type" in inspect.signature(plgpu.kernel).parameters else "out_shape"
        )

        def mgpu(x: jax.Array) -> jax.Array:
            out = jax.ShapeDtypeStruct(x.shape, x.dtype)
            result: jax.Array = plgpu.kernel(
                add_one_body, compiler_params=cp, interpret=interpret, **{keyword: out}
            )(x)
            return result

        return mgpu

    def kernel(x: jax.Array) -> jax.Array:
        out = jax.ShapeDtypeStruct(x.shape, x.dtype)
        result: jax.Array = pl.pallas_call(
            add_one_body, out_shape=out, compiler_params=cp, interpret=interpret
        )(x)
        return result

    kernel.__name__ = kernel.__qualname__ = f"{backend}_kernel"
    return kernel


def tpu_kernel(*, interpret: bool = False) -> Any:
    return typed_pallas.platform("tpu")(raw_kernel("mosaic_tpu", interpret=interpret))


def triton_kernel(*, interpret: bool = False) -> Any:
    return typed_pallas.platform("gpu")(raw_kernel("triton", interpret=interpret))


def reference(x: jax.Array) -> jax.Array:
    return x + 1


def mosaic_gpu_available() -> bool:
    try:
        importlib.import_module("jax.experimental.pallas.mosaic_gpu")
    except Exception:
        return False
    return True


@contextlib.contextmanager
def lowering_for(platforms: list[str]) -> Iterator[None]:
    """What a CPU host needs to lower for ``platforms`` (jax 0.12 abstract devices)."""
    with contextlib.ExitStack() as stack:
        stack.enter_context(cross_lowering_targets(tuple(p for p in platforms if p != "cpu")))
        if len(platforms) == 1:
            stack.enter_context(cross_lowering(platforms[0]))
        yield


def export_text(fn: Callable[..., Any], platforms: list[str], *args: Any) -> tuple[str, Any]:
    """``jax.export`` ``fn`` (through a fresh jit) for ``platforms``; (module text, Exported)."""
    from jax import export

    checks = [export.DisabledSafetyCheck.custom_call(name) for name in GPU_CUSTOM_CALLS]

    def fresh(*a: Any) -> Any:
        return fn(*a)

    with lowering_for(platforms):
        exported = export.export(jax.jit(fresh), platforms=platforms, disabled_checks=checks)(*args)
    return exported.mlir_module(), exported
