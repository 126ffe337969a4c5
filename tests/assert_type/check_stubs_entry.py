"""Unmodified JAX code, typed by typed-pallas's stubs: the entry points.

``plgpu.kernel`` lowers only with GPU params; ``pl.kernel``'s mesh decides the
platform; ``pl.pallas_call`` takes every params class (check_stubs_params.py).
Checked by all five checkers (tests/test_checkers.py); nothing here is executed.
"""

from __future__ import annotations

import functools
from typing import Any

from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc
from jax.experimental.pallas import triton as pltriton


def body(*refs: Any) -> None: ...


def tensorcore_mesh() -> pltpu.TensorCoreMesh:
    # No spelling builds one at every checked release: pltpu.create_tensorcore_mesh is
    # gone from 0.12.1, pltpu.TensorCoreMesh(axis_name=...) is public from 0.12 (0.10.2's
    # takes devices): the mesh is typed by its class.
    raise NotImplementedError


tc_mesh = tensorcore_mesh()
sc_mesh = plsc.VectorSubcoreMesh(core_axis_name="core", subcore_axis_name="subcore")
scalar_mesh = plsc.ScalarSubcoreMesh(axis_name="core")
gpu_mesh = plgpu.Mesh(grid=(2,), grid_names=("x",))


def any_value() -> Any:
    return None


# case: plgpu-kernel-gpu-ok: plgpu.kernel with Mosaic GPU params, none, or Any
plgpu.kernel(body, out_type=(), compiler_params=plgpu.CompilerParams(approx_math=True))
plgpu.kernel(body, out_type=())
plgpu.kernel(body, out_type=(), compiler_params=any_value())
functools.partial(plgpu.kernel, out_type=(), compiler_params=plgpu.CompilerParams())

# case: plgpu-kernel-tpu-params: plgpu.kernel with TPU params
plgpu.kernel(body, out_type=(), compiler_params=pltpu.CompilerParams())  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

# case: pl-kernel-tpu-mesh-ok: a TPU mesh with TPU params, none, or Any
pl.kernel(body, out_type=(), mesh=tc_mesh, compiler_params=pltpu.CompilerParams())
pl.kernel(
    body, out_type=(), mesh=sc_mesh, compiler_params=pltpu.CompilerParams(use_tc_tiling_on_sc=True)
)
pl.kernel(body, out_type=(), mesh=scalar_mesh)
pl.kernel(body, out_type=(), mesh=[sc_mesh, tc_mesh], compiler_params=pltpu.CompilerParams())
pl.kernel(body, out_type=(), mesh=tc_mesh, compiler_params=any_value())
pl.kernel(out_type=(), mesh=tc_mesh, compiler_params=pltpu.CompilerParams())(body)

# case: pl-kernel-gpu-mesh-ok: a Mosaic GPU mesh with GPU params
pl.kernel(body, out_type=(), mesh=gpu_mesh, compiler_params=plgpu.CompilerParams())
pl.kernel(body, out_type=(), mesh=gpu_mesh)

# case: pl-kernel-unknown-mesh-ok: a mesh typed Any takes any params
pl.kernel(body, out_type=(), mesh=any_value(), compiler_params=pltriton.CompilerParams())

# case: pl-kernel-tpu-mesh-gpu-params: a TPU mesh with GPU params
pl.kernel(body, out_type=(), mesh=tc_mesh, compiler_params=plgpu.CompilerParams())  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]  # pyrefly: ignore[no-matching-overload]  # ty: ignore[no-matching-overload]
pl.kernel(body, out_type=(), mesh=sc_mesh, compiler_params=pltriton.CompilerParams())  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]  # pyrefly: ignore[no-matching-overload]  # ty: ignore[no-matching-overload]

# case: pl-kernel-gpu-mesh-tpu-params: a Mosaic GPU mesh with TPU params
pl.kernel(body, out_type=(), mesh=gpu_mesh, compiler_params=pltpu.CompilerParams())  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]  # pyrefly: ignore[no-matching-overload]  # ty: ignore[no-matching-overload]
