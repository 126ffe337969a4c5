"""Add one with Mosaic GPU: ``plgpu.kernel``, TMA copies through shared memory.

Here ``plgpu`` is the *Mosaic GPU* module. Correct: Mosaic GPU params for a Mosaic GPU
kernel whose body uses Mosaic GPU copies and barriers.
"""

from __future__ import annotations

import jax
from jax.experimental.pallas import mosaic_gpu as plgpu


def add_one(x: jax.Array) -> jax.Array:
    def body(x_gmem, o_gmem, x_smem, barrier):
        plgpu.copy_gmem_to_smem(x_gmem, x_smem, barrier)
        plgpu.barrier_wait(barrier)
        x_smem[...] = x_smem[...] + 1
        plgpu.commit_smem()
        plgpu.copy_smem_to_gmem(x_smem, o_gmem)
        plgpu.wait_smem_to_gmem(0)

    return plgpu.kernel(
        body,
        out_type=jax.ShapeDtypeStruct(x.shape, x.dtype),
        scratch_types=[plgpu.SMEM(x.shape, x.dtype), plgpu.Barrier(num_arrivals=1)],
        compiler_params=plgpu.CompilerParams(approx_math=True),
    )(x)
