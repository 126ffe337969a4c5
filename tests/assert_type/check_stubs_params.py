"""Unmodified JAX code, typed by typed-pallas's stubs: the params classes.

Checked by all five checkers (tests/test_checkers.py); see README.md for the
comment convention. Nothing here is executed.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Literal, assert_type

from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton

import typed_pallas

tpu_params = pltpu.CompilerParams(
    dimension_semantics=("parallel", "arbitrary"), vmem_limit_bytes=1 << 20
)
triton_params = pltriton.CompilerParams(num_warps=4, num_stages=2)
mgpu_params = plgpu.CompilerParams(approx_math=True, max_concurrent_steps=2)

# case: platform-attr: each params class carries its platform
assert_type(tpu_params.__pallas_platform__, Literal["tpu"])
assert_type(triton_params.__pallas_platform__, Literal["gpu"])
assert_type(mgpu_params.__pallas_platform__, Literal["gpu"])

# case: typed-tpu-ok: TPU params are a CompilerParams[Literal["tpu"]]
ok_tpu: typed_pallas.CompilerParams[Literal["tpu"]] = tpu_params
ok_gpu_triton: typed_pallas.CompilerParams[Literal["gpu"]] = triton_params
ok_gpu_mgpu: typed_pallas.CompilerParams[Literal["gpu"]] = mgpu_params
ok_any: typed_pallas.CompilerParams[typed_pallas.Platform] = tpu_params

# case: typed-tpu-rejects-gpu: GPU params are not CompilerParams[Literal["tpu"]]
bad_tpu_1: typed_pallas.CompilerParams[Literal["tpu"]] = triton_params  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]  # pyrefly: ignore[bad-assignment]  # ty: ignore[invalid-assignment]
bad_tpu_2: typed_pallas.CompilerParams[Literal["tpu"]] = mgpu_params  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]  # pyrefly: ignore[bad-assignment]  # ty: ignore[invalid-assignment]

# case: typed-gpu-rejects-tpu: TPU params are not CompilerParams[Literal["gpu"]]
bad_gpu: typed_pallas.CompilerParams[Literal["gpu"]] = tpu_params  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]  # pyrefly: ignore[bad-assignment]  # ty: ignore[invalid-assignment]

# case: jax-protocol-ok: every class still satisfies JAX's own protocol
jax_1: pl.CompilerParams = tpu_params
jax_2: pl.CompilerParams = triton_params
jax_3: pl.CompilerParams = mgpu_params


def kernel_body(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + 1


def unknown_params() -> pl.CompilerParams:
    return tpu_params


def any_params() -> Any:
    return None


# case: pallas-call-accepts-all: pl.pallas_call takes every params class (its platform is not known there)
pl.pallas_call(kernel_body, out_shape=None, compiler_params=tpu_params)
pl.pallas_call(kernel_body, out_shape=None, compiler_params=triton_params)
pl.pallas_call(kernel_body, out_shape=None, compiler_params=mgpu_params)
pl.pallas_call(kernel_body, out_shape=None, compiler_params=None)
pl.pallas_call(kernel_body, out_shape=None, compiler_params=unknown_params())
pl.pallas_call(kernel_body, out_shape=None, compiler_params=any_params())

# case: dataclass: the classes stay frozen dataclasses with JAX's fields
assert_type(dataclasses.replace(tpu_params, vmem_limit_bytes=2), pltpu.CompilerParams)
assert_type(tpu_params.replace(collective_id=1), pltpu.CompilerParams)
assert_type(mgpu_params.replace(approx_math=False), plgpu.CompilerParams)
assert_type(triton_params.num_warps, int | None)

# case: fields-typed: JAX's field types are kept
pltriton.CompilerParams(num_warps="4")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]
plgpu.CompilerParams(approx_math=1.5)  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]
