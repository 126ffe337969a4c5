"""Triton params in the TPU branch of a backend switch (a copy-paste slip)."""

from __future__ import annotations

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as pltriton


def gelu_kernel(x_ref, o_ref):
    x = x_ref[...]
    o_ref[...] = 0.5 * x * (1.0 + jnp.tanh(0.7978845608 * (x + 0.044715 * x**3)))


def gelu(x: jax.Array) -> jax.Array:
    if jax.default_backend() == "tpu":
        return pl.pallas_call(
            gelu_kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            compiler_params=pltriton.CompilerParams(num_warps=4, num_stages=2),  # expect[pallas-platform]: Compiler params for platform gpu cannot be used for tpu lowering.
        )(x)
    return jax.nn.gelu(x)
