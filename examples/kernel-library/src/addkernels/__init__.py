"""addkernels: a tiny Pallas kernel library, annotated the way docs/library-authors.md says.

One kernel body, two Pallas calls (TPU and Triton) and a dispatcher that picks one by the
default backend. The platform tags come from typed-pallas for type checkers only: at run
time ``platform`` is a no-op, so typed-pallas is no run-time dependency of this package.
What each public name lowers for is locked in ``platforms.lock`` (see README.md).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton

if TYPE_CHECKING:
    from typed_pallas import platform
else:

    def platform(name):
        return lambda fn: fn


__all__ = ["add_one", "add_one_gpu", "add_one_tpu"]


def _add_one_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


@platform("tpu")
def add_one_tpu(x: jax.Array) -> jax.Array:
    """``x + 1`` as a Mosaic TPU kernel: lowers only for TPU."""
    return pl.pallas_call(
        _add_one_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltpu.CompilerParams(),
    )(x)


@platform("gpu")
def add_one_gpu(x: jax.Array) -> jax.Array:
    """``x + 1`` as a Triton kernel: lowers only for CUDA and ROCm GPUs."""
    return pl.pallas_call(
        _add_one_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltriton.CompilerParams(num_warps=4),
    )(x)


def add_one(x: jax.Array) -> jax.Array:
    """``x + 1`` on any platform: the kernel of this process's backend, plain JAX elsewhere."""
    backend = jax.default_backend()
    if backend == "tpu":
        return add_one_tpu(x)
    if backend == "gpu":
        return add_one_gpu(x)
    return x + 1
