"""Params built by helpers and bound with ``functools.partial``, each under its own guard.

Correct: the TPU helper's params are used only where the code runs on TPU, the Triton
helper's only where it runs on a GPU; an unknown platform (a parameter) is left alone.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def _tpu_params() -> pltpu.CompilerParams:
    return pltpu.CompilerParams(dimension_semantics=("parallel",))


def _gpu_params() -> pltriton.CompilerParams:
    return pltriton.CompilerParams(num_warps=8, num_stages=3)


def layer_norm_kernel(x_ref, o_ref):
    x = x_ref[...]
    mean = jnp.mean(x, axis=-1, keepdims=True)
    var = jnp.mean((x - mean) ** 2, axis=-1, keepdims=True)
    o_ref[...] = (x - mean) * jax.lax.rsqrt(var + 1e-5)


def layer_norm(x: jax.Array) -> jax.Array:
    backend = jax.default_backend()
    out_shape = jax.ShapeDtypeStruct(x.shape, x.dtype)
    if backend == "tpu":
        call = functools.partial(pl.pallas_call, out_shape=out_shape, compiler_params=_tpu_params())
        return call(layer_norm_kernel)(x)
    if jax.devices()[0].platform == "gpu":
        params = _gpu_params()
        return pl.pallas_call(layer_norm_kernel, out_shape=out_shape, compiler_params=params)(x)
    return x


def layer_norm_with(
    x: jax.Array, params: pltpu.CompilerParams | pltriton.CompilerParams
) -> jax.Array:
    # The platform depends on the caller: nothing to prove here.
    return pl.pallas_call(
        layer_norm_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=params,
    )(x)
