"""``plgpu.kernel`` (Mosaic GPU) given Triton params: same platform, wrong backend."""

from __future__ import annotations

import jax
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import triton as pltriton


def double(x: jax.Array) -> jax.Array:
    def body(x_ref, o_ref):
        o_ref[...] = x_ref[...] * 2

    return plgpu.kernel(
        body,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltriton.CompilerParams(num_warps=4),  # expect[pallas-platform]
    )(x)
