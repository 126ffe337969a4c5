"""Static cases for the typed runtime API: pallas_call, kernel, mosaic_gpu_kernel, the registry.

Convention: tests/assert_type/README.md. Lines without comments must type-check; each
error line carries one targeted ignore per checker.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Literal, assert_type

import jax
import numpy as np
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton

import typed_pallas as tp
from typed_pallas import GPU, TPU, PlatformFn


def add_one(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + 1


def rule(ctx: Any, *args: Any, **kwargs: Any) -> Any:
    return None


out = jax.ShapeDtypeStruct((8, 128), np.float32)
tpu_params = pltpu.CompilerParams()
triton_params = pltriton.CompilerParams()
mgpu_params = plgpu.CompilerParams()


def tensorcore_mesh() -> pltpu.TensorCoreMesh:
    # pltpu.create_tensorcore_mesh is gone from jax 0.12.1 and TensorCoreMesh's constructor
    # differs between 0.10.2 and 0.12: the mesh is typed by its class.
    raise NotImplementedError


tpu_mesh = tensorcore_mesh()
gpu_mesh = plgpu.Mesh()

# case: pc-infer-tpu: without platform=, the platform is the params'
assert_type(tp.pallas_call(add_one, out, compiler_params=tpu_params), PlatformFn[TPU, ..., Any])

# case: pc-infer-gpu: Triton and Mosaic GPU params give a gpu kernel
assert_type(tp.pallas_call(add_one, out, compiler_params=triton_params), PlatformFn[GPU, ..., Any])
assert_type(
    tp.pallas_call(add_one, out, compiler_params=mgpu_params, grid=(1,)), PlatformFn[GPU, ..., Any]
)

# case: pc-platform-agrees: platform= matching the params
assert_type(
    tp.pallas_call(add_one, out, platform="gpu", compiler_params=triton_params),
    PlatformFn[GPU, ..., Any],
)
assert_type(
    tp.pallas_call(add_one, out, platform="tpu", compiler_params=tpu_params, interpret=True),
    PlatformFn[TPU, ..., Any],
)

# case: pc-platform-only: platform= without params tags the call
assert_type(tp.pallas_call(add_one, out, platform="tpu"), PlatformFn[TPU, ..., Any])

# case: pc-untagged: neither platform= nor params: an untagged callable
assert_type(tp.pallas_call(add_one, out), Callable[..., Any])

# case: pc-gpu-with-tpu-params: platform="gpu" with TPU params
tp.pallas_call(add_one, out, platform="gpu", compiler_params=tpu_params)  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]  # pyrefly: ignore[no-matching-overload]  # ty: ignore[no-matching-overload]

# case: pc-tpu-with-triton-params: platform="tpu" with Triton params
tp.pallas_call(add_one, out, platform="tpu", compiler_params=triton_params)  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]  # pyrefly: ignore[no-matching-overload]  # ty: ignore[no-matching-overload]

# case: pc-tpu-with-mgpu-params: platform="tpu" with Mosaic GPU params
tp.pallas_call(add_one, out, platform="tpu", compiler_params=mgpu_params)  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]  # pyrefly: ignore[no-matching-overload]  # ty: ignore[no-matching-overload]

# case: pc-legacy-dict: dict params are not compiler params
tp.pallas_call(add_one, out, compiler_params={"mosaic": {}})  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]  # pyrefly: ignore[no-matching-overload]  # ty: ignore[no-matching-overload]

# case: pc-bad-platform: platform= outside "tpu" | "gpu"
tp.pallas_call(add_one, out, platform="cuda", compiler_params=triton_params)  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]  # pyrefly: ignore[no-matching-overload]  # ty: ignore[no-matching-overload]


def needs_tpu(fn: PlatformFn[TPU, ..., Any]) -> None: ...


# case: pc-result-platform: the result carries its platform into annotations
needs_tpu(tp.pallas_call(add_one, out, compiler_params=tpu_params))
needs_tpu(tp.pallas_call(add_one, out, compiler_params=triton_params))  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

# case: kernel-tpu-mesh: pl.kernel on a TPU mesh with TPU params
assert_type(
    tp.kernel(add_one, out, mesh=tpu_mesh, compiler_params=tpu_params), PlatformFn[TPU, ..., Any]
)
assert_type(tp.kernel(add_one, out, mesh=tpu_mesh), PlatformFn[TPU, ..., Any])

# case: kernel-gpu-mesh: pl.kernel on a Mosaic GPU mesh with Mosaic GPU params
assert_type(
    tp.kernel(add_one, out_type=out, mesh=gpu_mesh, compiler_params=mgpu_params),
    PlatformFn[GPU, ..., Any],
)

# case: kernel-decorator: without a body, a decorator that gives a tagged kernel
assert_type(
    tp.kernel(out_type=out, mesh=tpu_mesh),
    Callable[[Callable[..., None]], PlatformFn[TPU, ..., Any]],
)

# case: kernel-tpu-mesh-gpu-params: a TPU mesh with Triton params
tp.kernel(add_one, out, mesh=tpu_mesh, compiler_params=triton_params)  # type: ignore[arg-type]  # pyright: ignore[reportCallIssue, reportArgumentType]  # pyrefly: ignore[no-matching-overload]  # ty: ignore[no-matching-overload]

# case: kernel-gpu-mesh-tpu-params: a Mosaic GPU mesh with TPU params
tp.kernel(add_one, out, mesh=gpu_mesh, compiler_params=tpu_params)  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]  # pyrefly: ignore[no-matching-overload]  # ty: ignore[no-matching-overload]

# case: kernel-gpu-mesh-triton-params: a Mosaic GPU mesh with Triton params
tp.kernel(add_one, out, mesh=gpu_mesh, compiler_params=triton_params)  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]  # pyrefly: ignore[no-matching-overload]  # ty: ignore[no-matching-overload]

# case: mgpu-kernel: plgpu.kernel with Mosaic GPU params
assert_type(
    tp.mosaic_gpu_kernel(add_one, out_type=out, compiler_params=mgpu_params),
    PlatformFn[GPU, ..., Any],
)

# case: mgpu-kernel-tpu-params: plgpu.kernel takes only Mosaic GPU params
tp.mosaic_gpu_kernel(add_one, out_type=out, compiler_params=tpu_params)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

# case: mgpu-kernel-triton-params: nor Triton params
tp.mosaic_gpu_kernel(add_one, out_type=out, compiler_params=triton_params)  # type: ignore[call-overload]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]

# case: platform-of: platform_of answers with a literal for typed params
assert_type(tp.platform_of(tpu_params), Literal["tpu"])
assert_type(tp.platform_of(pltriton.CompilerParams), Literal["gpu"])
assert_type(tp.platform_of(object()), tp.Platform)

# case: aliases-typed: typed_pallas's aliases carry their platform (even where a checker reads no jax-stubs) and are JAX's classes
alias_tpu: tp.CompilerParams[TPU] = tp.TPUCompilerParams(vmem_limit_bytes=1 << 20)
alias_triton: tp.CompilerParams[GPU] = tp.TritonCompilerParams(num_warps=4)
alias_mgpu: tp.CompilerParams[GPU] = tp.MosaicGPUCompilerParams(approx_math=True)
alias_jax: pltpu.CompilerParams = tp.TPUCompilerParams()
assert_type(
    tp.pallas_call(add_one, out, compiler_params=tp.TPUCompilerParams()), PlatformFn[TPU, ..., Any]
)
assert_type(
    tp.pallas_call(add_one, out, compiler_params=tp.TritonCompilerParams()),
    PlatformFn[GPU, ..., Any],
)

# case: alias-wrong-platform: an alias of the other platform is rejected
alias_bad: tp.CompilerParams[GPU] = tp.TPUCompilerParams()  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]  # pyrefly: ignore[bad-assignment]  # ty: ignore[invalid-assignment]


@dataclasses.dataclass(frozen=True)
class MyTPUParams:
    """A user params class: declares its platform the way the protocol asks."""

    @property
    def __pallas_platform__(self) -> Literal["tpu"]:
        return "tpu"


# case: register-ok: a user class registered for its own platform
tp.register_lowering_rule(MyTPUParams, rule, "tpu")
tp.register_lowering_rule(pltpu.CompilerParams, rule, "tpu", replace=True)

# case: register-wrong-platform: a CompilerParams[TPU] class registered for "gpu"
tp.register_lowering_rule(MyTPUParams, rule, "gpu")  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]  # pyrefly: ignore[no-matching-overload]  # ty: ignore[no-matching-overload]
tp.register_lowering_rule(pltriton.CompilerParams, rule, "tpu")  # type: ignore[call-overload]  # pyright: ignore[reportCallIssue, reportArgumentType]  # pyrefly: ignore[no-matching-overload]  # ty: ignore[no-matching-overload]

# case: get-rule: get_lowering_rule takes tpu/gpu/cuda/rocm only
assert_type(tp.get_lowering_rule(pltpu.CompilerParams, "rocm"), Callable[..., Any] | None)
tp.get_lowering_rule(pltpu.CompilerParams, "cpu")  # type: ignore[arg-type]  # pyright: ignore[reportArgumentType]  # pyrefly: ignore[bad-argument-type]  # ty: ignore[invalid-argument-type]
