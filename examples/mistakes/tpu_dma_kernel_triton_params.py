"""A TPU DMA kernel (manual async copies, DMA semaphores) given Triton params.

The body uses ``pltpu.make_async_copy``, which only Mosaic TPU lowers, so the call can
only lower for TPU; the Triton params make it fail there.
"""

from __future__ import annotations

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def hbm_copy_kernel(x_hbm, o_hbm, sem):
    copy = pltpu.make_async_copy(x_hbm, o_hbm, sem)
    copy.start()
    copy.wait()


def hbm_copy(x: jax.Array) -> jax.Array:
    return pl.pallas_call(
        hbm_copy_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pl.ANY)],
        out_specs=pl.BlockSpec(memory_space=pl.ANY),
        scratch_shapes=[pltpu.SemaphoreType.DMA(())],
        compiler_params=pltriton.CompilerParams(num_warps=1),  # expect[pallas-platform]: Compiler params for platform gpu cannot be used for tpu lowering.
    )(x)
