"""Library kernels on each other's path: jax's Mosaic GPU matmul (it imports
``jax.experimental.pallas.mosaic_gpu``) under a TPU guard, and its TPU flash attention on
the GPU path. The plugin reads the installed jax to follow each call to its kernel (the
README's ``attend.py``; these modules ship with every supported JAX)."""

from __future__ import annotations

import jax
from jax.experimental.pallas.ops.gpu.hopper_matmul_mgpu import matmul
from jax.experimental.pallas.ops.tpu.flash_attention import flash_attention


def attend(q, k, v, config):
    if jax.default_backend() == "tpu":
        return matmul(q, k, None, config)  # expect[pallas-platform]: Compiler params for platform gpu cannot be used for tpu lowering.
    return flash_attention(q, k, v)  # expect[pallas-platform]: Compiler params for platform tpu cannot be used for gpu lowering.
