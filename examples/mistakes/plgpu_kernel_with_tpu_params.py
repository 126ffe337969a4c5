"""``plgpu.kernel`` (Mosaic GPU) given TPU params.

typed-pallas' stubs type ``plgpu.kernel``'s ``compiler_params`` as GPU params, so every
checker rejects this call by type (pyright, pyrefly and ty as an argument-type error).
Under mypy the plugin reports it once, as ``pallas-platform`` in JAX's words, instead of
mypy's ``arg-type``.
"""

from __future__ import annotations

import jax
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


def negate(x: jax.Array) -> jax.Array:
    def body(x_ref, o_ref):
        o_ref[...] = -x_ref[...]

    return plgpu.kernel(  # expect[pallas-platform]
        body,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltpu.CompilerParams(vmem_limit_bytes=32 * 1024 * 1024),
    )(x)
