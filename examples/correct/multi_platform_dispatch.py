"""One op, three implementations, chosen by platform: each call sits where it lowers.

Correct: TPU params only under TPU guards or in the ``tpu=`` branch; Triton params only
under GPU guards or in the ``cuda=``/``rocm=`` branches.
"""

from __future__ import annotations

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def scale_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0


def _tpu_scale(x: jax.Array) -> jax.Array:
    return pl.pallas_call(
        scale_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltpu.CompilerParams(dimension_semantics=()),
    )(x)


def _gpu_scale(x: jax.Array) -> jax.Array:
    return pl.pallas_call(
        scale_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltriton.CompilerParams(num_warps=4),
    )(x)


def scale(x: jax.Array) -> jax.Array:
    """Traced once, lowered per platform (also for jax.export to several platforms)."""
    return jax.lax.platform_dependent(
        x, tpu=_tpu_scale, cuda=_gpu_scale, rocm=_gpu_scale, default=lambda v: v * 2.0
    )


def scale_eager(x: jax.Array) -> jax.Array:
    """Chosen by the default backend of this process."""
    backend = jax.default_backend()
    if backend == "tpu":
        return pl.pallas_call(
            scale_kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            compiler_params=pltpu.CompilerParams(),
        )(x)
    if backend == "gpu":
        return pl.pallas_call(
            scale_kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            compiler_params=pltriton.CompilerParams(num_warps=4, num_stages=2),
        )(x)
    return x * 2.0
