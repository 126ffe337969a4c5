"""Unmodified JAX code through JAX's preferred import path, ``jax.pallas`` (jax >= 0.12.1).

typed-pallas ships no stub for ``jax.pallas``: a stub package for it would hold
``jax-stubs/pallas/__init__.pyi``, and pyright, which reads the stubs through ``stubPath``,
then takes that folder for the whole of ``import jax`` (``jax.Array``, ``jax.jit`` unknown;
docs/checkers.md). So every checker reads JAX's own ``jax.pallas``: its params classes are
JAX's (defined in ``jax._src.pallas.*.core``), which the typed API names next to the stubs'
classes. Checked by all five checkers (tests/test_checkers.py) at the releases that have
``jax.pallas`` (``MIN_JAX`` below); see README.md for the comment convention. Nothing here
is executed.
"""

from __future__ import annotations

from typing import Any, Literal, assert_type

import jax
import jax.pallas
import jax.pallas.tpu
from jax import pallas as pl
from jax.pallas import mosaic_gpu as plgpu
from jax.pallas import tpu as pltpu

import typed_pallas

#: the first JAX release with ``jax.pallas`` (tests/test_checkers.py reads it)
MIN_JAX = "0.12.1"


def body(*refs: Any) -> None: ...


tpu_params = pltpu.CompilerParams(vmem_limit_bytes=1 << 20)
mgpu_params = plgpu.CompilerParams(approx_math=True)

# case: new-path-typed-api-ok: the typed API takes params imported through jax.pallas
typed_pallas.pallas_call(body, out_shape=None, compiler_params=tpu_params)
typed_pallas.pallas_call(body, out_shape=None, compiler_params=jax.pallas.tpu.CompilerParams())
typed_pallas.pallas_call(body, out_shape=None, platform="tpu", compiler_params=tpu_params)
typed_pallas.mosaic_gpu_kernel(body, out_type=(), compiler_params=mgpu_params)
assert_type(typed_pallas.platform_of(tpu_params), Literal["tpu"])
assert_type(typed_pallas.platform_of(mgpu_params), Literal["gpu"])

# case: new-path-typed-api-rejects: params through jax.pallas on the other platform's entry point
typed_pallas.pallas_call(body, out_shape=None, platform="gpu", compiler_params=tpu_params)  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]  # pyrefly: ignore[no-matching-overload]  # ty: ignore[no-matching-overload]
typed_pallas.mosaic_gpu_kernel(body, out_type=(), compiler_params=tpu_params)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

# case: new-path-pallas-call-accepts-all: pl.pallas_call takes every params class
pl.pallas_call(body, out_shape=None, compiler_params=tpu_params)
pl.pallas_call(body, out_shape=None, compiler_params=mgpu_params)
jax.pallas.pallas_call(body, out_shape=None, compiler_params=None)
