"""``plgpu.kernel`` (Mosaic GPU) given TPU params.

typed-pallas' stubs type ``plgpu.kernel``'s ``compiler_params`` as GPU params, so mypy
itself reports this one, as ``arg-type`` (pyright, pyrefly and ty do too); the plugin
does not repeat it, and ``typed-pallas check`` shows it as a typed-pallas finding.
"""

from __future__ import annotations

import jax
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


def negate(x: jax.Array) -> jax.Array:
    def body(x_ref, o_ref):
        o_ref[...] = -x_ref[...]

    return plgpu.kernel(
        body,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltpu.CompilerParams(vmem_limit_bytes=32 * 1024 * 1024),  # expect[arg-type]
    )(x)
