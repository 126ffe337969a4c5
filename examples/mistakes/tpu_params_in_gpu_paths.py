"""TPU params that reach GPU-only paths through a helper, a partial, and a variable.

Each function here picks the GPU path in a different way (a backend saved in a
variable, ``jax.devices()[0].platform``, an ``elif`` with ``in``), and each still
passes the TPU params that a shared helper builds.
"""

from __future__ import annotations

import functools

import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _params(parallel: bool = True) -> pltpu.CompilerParams:
    return pltpu.CompilerParams(dimension_semantics=("parallel",) if parallel else ("arbitrary",))


def rms_kernel(x_ref, o_ref):
    x = x_ref[...]
    o_ref[...] = x * jax.lax.rsqrt(jnp.mean(x * x, axis=-1, keepdims=True) + 1e-6)


def rms_norm(x: jax.Array) -> jax.Array:
    backend = jax.default_backend()
    if backend == "gpu":
        call = functools.partial(
            pl.pallas_call,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            compiler_params=_params(),  # expect[pallas-platform]: Compiler params for platform tpu cannot be used for gpu lowering.
        )
        return call(rms_kernel)(x)
    return x


def rms_norm_on_first_device(x: jax.Array) -> jax.Array:
    if jax.devices()[0].platform == "gpu":
        return pl.pallas_call(
            rms_kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            compiler_params=_params(),  # expect[pallas-platform]: Compiler params for platform tpu cannot be used for gpu lowering.
        )(x)
    return x


def rms_norm_any(x: jax.Array) -> jax.Array:
    if jax.default_backend() == "cpu":
        return x
    elif jax.default_backend() in ("gpu", "cuda"):
        params = _params(parallel=False)
        return pl.pallas_call(
            rms_kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            compiler_params=params,  # expect[pallas-platform]: Compiler params for platform tpu cannot be used for gpu lowering.
        )(x)
    return x
