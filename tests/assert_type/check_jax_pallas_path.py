"""Unmodified JAX code through JAX's preferred import path, ``jax.pallas`` (jax >= 0.12.1).

The same classes as ``jax.experimental.pallas*`` (defined once in that stub, re-exported
from ``jax-stubs/pallas/``), so the same platform types: correct code is accepted and the
wrong call rejected whichever path it imports. Checked by all five checkers
(tests/test_checkers.py); see README.md for the comment convention. Nothing here is
executed (at jax < 0.12.1 ``jax.pallas`` does not import).
"""

from __future__ import annotations

from typing import Any, Literal, assert_type

import jax
import jax.pallas
import jax.pallas.tpu
from jax import pallas as pl
from jax.experimental.pallas import tpu as experimental_pltpu
from jax.pallas import mosaic_gpu as plgpu
from jax.pallas import tpu as pltpu
from jax.pallas import tpu_sc as plsc

import typed_pallas


def body(*refs: Any) -> None: ...


tpu_params = pltpu.CompilerParams(vmem_limit_bytes=1 << 20)
mgpu_params = plgpu.CompilerParams(approx_math=True)
sc_mesh = plsc.VectorSubcoreMesh(core_axis_name="core", subcore_axis_name="subcore")
gpu_mesh = plgpu.Mesh(grid=(2,), grid_names=("x",))

# case: new-path-platform-attr: params through jax.pallas carry their platform
assert_type(tpu_params.__pallas_platform__, Literal["tpu"])
assert_type(mgpu_params.__pallas_platform__, Literal["gpu"])
assert_type(jax.pallas.tpu.CompilerParams().__pallas_platform__, Literal["tpu"])

# case: new-path-same-class: jax.pallas.tpu.CompilerParams is jax.experimental.pallas.tpu's
same: experimental_pltpu.CompilerParams = tpu_params
assert_type(same, experimental_pltpu.CompilerParams)

# case: new-path-typed-api-ok: the typed API takes params through jax.pallas
typed_pallas.pallas_call(body, out_shape=None, compiler_params=pltpu.CompilerParams())
typed_pallas.pallas_call(body, out_shape=None, compiler_params=jax.pallas.tpu.CompilerParams())
typed_pallas.pallas_call(body, out_shape=None, platform="gpu", compiler_params=mgpu_params)
ok_tpu: typed_pallas.CompilerParams[Literal["tpu"]] = tpu_params
ok_gpu: typed_pallas.CompilerParams[Literal["gpu"]] = mgpu_params

# case: new-path-typed-api-rejects: TPU params through jax.pallas on a GPU entry point
typed_pallas.pallas_call(
    body, out_shape=None, platform="gpu", compiler_params=pltpu.CompilerParams()
)  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]  # pyrefly: ignore[no-matching-overload]  # ty: ignore[no-matching-overload]
bad_gpu: typed_pallas.CompilerParams[Literal["gpu"]] = tpu_params  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]  # pyrefly: ignore[bad-assignment]  # ty: ignore[invalid-assignment]

# case: new-path-plgpu-kernel: jax.pallas.mosaic_gpu.kernel takes GPU params, not TPU ones
plgpu.kernel(body, out_type=(), compiler_params=mgpu_params)
plgpu.kernel(body, out_type=(), compiler_params=pltpu.CompilerParams())  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

# case: new-path-pl-kernel: jax.pallas.kernel's mesh decides the platform
pl.kernel(body, out_type=(), mesh=sc_mesh, compiler_params=pltpu.CompilerParams())
pl.kernel(body, out_type=(), mesh=gpu_mesh, compiler_params=mgpu_params)
pl.kernel(body, out_type=(), mesh=gpu_mesh, compiler_params=pltpu.CompilerParams())  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]  # pyrefly: ignore[no-matching-overload]  # ty: ignore[no-matching-overload]

# case: new-path-pallas-call-accepts-all: pl.pallas_call takes every params class
pl.pallas_call(body, out_shape=None, compiler_params=tpu_params)
pl.pallas_call(body, out_shape=None, compiler_params=mgpu_params)
jax.pallas.pallas_call(body, out_shape=None, compiler_params=None)
