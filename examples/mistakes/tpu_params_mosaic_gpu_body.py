"""A kernel ported to Mosaic GPU whose params were left as TPU params.

The body copies through shared memory with Mosaic GPU TMA copies and waits on a Mosaic
GPU barrier, so the call can only lower for a GPU; the TPU params make it fail there.
"""

from __future__ import annotations

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu


def copy_kernel(x_gmem, o_gmem, x_smem, barrier):
    plgpu.copy_gmem_to_smem(x_gmem, x_smem, barrier)
    plgpu.barrier_wait(barrier)
    plgpu.copy_smem_to_gmem(x_smem, o_gmem)
    plgpu.wait_smem_to_gmem(0)


def copy(x: jax.Array) -> jax.Array:
    return pl.pallas_call(
        copy_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=plgpu.GMEM)],
        out_specs=pl.BlockSpec(memory_space=plgpu.GMEM),
        scratch_shapes=[plgpu.SMEM(x.shape, x.dtype), plgpu.Barrier(num_arrivals=1)],
        compiler_params=pltpu.CompilerParams(),  # expect[pallas-platform]: Compiler params for platform tpu cannot be used for gpu lowering.
    )(x)
