"""``jax.lax.platform_dependent`` with the branches' params swapped."""

from __future__ import annotations

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def square_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * x_ref[...]


def square(x: jax.Array) -> jax.Array:
    shape = jax.ShapeDtypeStruct(x.shape, x.dtype)
    return jax.lax.platform_dependent(
        x,
        tpu=lambda v: pl.pallas_call(
            square_kernel,
            out_shape=shape,
            compiler_params=pltriton.CompilerParams(num_warps=4),  # expect[pallas-platform]: Compiler params for platform gpu cannot be used for tpu lowering.
        )(v),
        cuda=lambda v: pl.pallas_call(
            square_kernel,
            out_shape=shape,
            compiler_params=pltpu.CompilerParams(),  # expect[pallas-platform]: Compiler params for platform tpu cannot be used for gpu lowering.
        )(v),
        default=lambda v: v * v,
    )
