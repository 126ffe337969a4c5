"""Test a TPU kernel on a CPU-only machine (CI) with interpret mode.

Correct: off TPU the call runs with ``interpret=True``, where JAX ignores the params, so
TPU params under a not-TPU guard are fine. Runs as a script: ``python interpret_on_cpu.py``.
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def add_kernel(x_ref, y_ref, o_ref):
    o_ref[...] = x_ref[...] + y_ref[...]


def add(x: jax.Array, y: jax.Array) -> jax.Array:
    if jax.default_backend() != "tpu":
        # Off TPU: interpret the same kernel in Python; the TPU params are ignored.
        return pl.pallas_call(
            add_kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            compiler_params=pltpu.CompilerParams(dimension_semantics=()),
            interpret=True,
        )(x, y)
    return pl.pallas_call(
        add_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltpu.CompilerParams(dimension_semantics=()),
    )(x, y)


def test_add_interpreted() -> None:
    x = jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128)
    np.testing.assert_allclose(np.asarray(add(x, x)), np.asarray(x + x))


if __name__ == "__main__":
    test_add_interpreted()
    print("ok")
