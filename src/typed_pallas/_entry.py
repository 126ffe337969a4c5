"""Typed entry points: ``pallas_call``, ``kernel`` and ``mosaic_gpu_kernel``.

Each is JAX's own entry point (``pl.pallas_call``, ``pl.kernel``, ``plgpu.kernel``) with
the same arguments, plus:

* **static**: overloads tie ``platform=`` (or the mesh) to the params' ``CompilerParams[P]``,
  so ``platform="gpu"`` with TPU params, or a TPU mesh with GPU params, is a type error
  in every checker; without ``platform=`` the platform is inferred from the params; the
  result is a :class:`~typed_pallas.PlatformFn` carrying that platform;
* **at build time**: dict params raise :class:`~typed_pallas.LegacyParamsError`; a
  ``platform=`` or mesh contradicting the params raises
  :class:`~typed_pallas.PlatformMismatchError` (JAX's exact text);
* **at lowering time**: every mismatched (params class x tpu/cuda/rocm) cell raises that
  ``ValueError`` through the guard of :mod:`typed_pallas._backstop`; Mosaic GPU params
  lowered for rocm raise its backend-level twin.

The call is then JAX's, unchanged: the kernel, shapes and keywords are forwarded as
given (keywords left out stay JAX's defaults), so matched cells lower to byte-identical
module text. A truthy ``interpret=`` (or ``pltpu.force_tpu_interpret_mode()``) keeps
JAX's behaviour: params are ignored and nothing is checked. Keywords that only one JAX
version knows (``plgpu.kernel``'s ``out_shape=`` on 0.10, ``cost_estimate=`` on 0.12) are
forwarded as they come, so the installed JAX accepts or refuses them.

What it does not do: pick a platform for you (that is ``typed_pallas.dispatch``).
Importing it imports jax.
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Mapping, Sequence
from typing import TYPE_CHECKING, Any, Final, Literal, overload

from typed_pallas import _backstop, _jaxcompat, _platforms, _registry
from typed_pallas._errors import LegacyParamsError, PlatformMismatchError, UnknownPlatformError
from typed_pallas._platforms import GPU, TPU, Backend, Platform
from typed_pallas._tagged import PlatformFn, check_platform_name, tag

if TYPE_CHECKING:
    from jax._src.pallas.core import (
        BlockSpecTree,
        CostEstimate,
        GridSpec,
        Mesh,
        ScratchShapeTree,
        TupleGrid,
    )
    from jax._src.pallas.mosaic.core import TensorCoreMesh
    from jax._src.pallas.mosaic.sc_core import ScalarSubcoreMesh, VectorSubcoreMesh
    from jax._src.pallas.mosaic_gpu.core import CompilerParams as _JaxMosaicGPUParams
    from jax._src.pallas.mosaic_gpu.core import Mesh as MosaicGPUMesh
    from jax.experimental.pallas.mosaic_gpu import CompilerParams as _StubMosaicGPUParams

    from typed_pallas._registry import GPUParams, TPUParams

    TPUMesh = TensorCoreMesh | VectorSubcoreMesh | ScalarSubcoreMesh
    # the stubs' class, and JAX's own as jax.pallas.mosaic_gpu exports it (_registry.GPUParams)
    MosaicGPUCompilerParams = _StubMosaicGPUParams | _JaxMosaicGPUParams

__all__ = ["kernel", "mosaic_gpu_kernel", "pallas_call"]

#: the row of ``plgpu.kernel``'s backend: the only params that entry point lowers with
_MOSAIC_GPU: Final = _platforms.PARAMS_BY_BACKEND["mosaic_gpu"]

# ----------------------------------------------------------------------------- shared checks


def _interpreting(kwargs: Mapping[str, Any]) -> bool:
    return bool(kwargs.get("interpret")) or _jaxcompat.interpret_forced()


def _params_entry(compiler_params: object, interpret: bool) -> _registry.Entry | None:
    """The registry entry of the params (``None`` for no params); validates them."""
    if compiler_params is None:
        return None
    if isinstance(compiler_params, Mapping):
        raise LegacyParamsError()
    entry = _registry.resolve(type(compiler_params))
    if entry is None and not interpret:
        raise UnknownPlatformError(
            f"{type(compiler_params).__module__}.{type(compiler_params).__qualname__} is not a Pallas "
            "compiler-params class: JAX cannot lower it on any platform. Use "
            f"{_platforms.PUBLIC_PARAMS_CLASSES}, or register the class "
            "with typed_pallas.register_lowering_rule"
        )
    return entry


def _check_platform(
    entry: _registry.Entry | None, platform: object, interpret: bool
) -> Platform | None:
    """The platform to tag with: ``platform=`` if given (checked against the params), else the params'."""
    if platform is None:
        return entry.platform if entry is not None else None
    name = check_platform_name(platform)
    if entry is not None and entry.platform != name and not interpret:
        err = _registry.mismatch_error(entry, name)
        assert err is not None
        raise err
    return name


def _finish(fn: Callable[..., Any], compiler_params: object, platform: Platform | None) -> Any:
    _backstop.ensure_guard()
    _backstop.mark(compiler_params)
    return tag(fn, platform) if platform is not None else fn


def _with_signature(
    func: Any, jax_func: Callable[..., Any], extra: Sequence[inspect.Parameter]
) -> None:
    """Give ``func`` the installed JAX function's signature plus our keyword(s)."""
    try:
        sig = inspect.signature(jax_func)
    except (TypeError, ValueError):  # pragma: no cover
        return
    params = list(sig.parameters.values())
    var_kw = [p for p in params if p.kind is inspect.Parameter.VAR_KEYWORD]
    params = [p for p in params if p.kind is not inspect.Parameter.VAR_KEYWORD]
    params += [p for p in extra if p.name not in sig.parameters] + var_kw
    func.__signature__ = sig.replace(parameters=params)


_PLATFORM_PARAM = inspect.Parameter(
    "platform", inspect.Parameter.KEYWORD_ONLY, default=None, annotation="Platform | None"
)

# ----------------------------------------------------------------------------- pallas_call


@overload
def pallas_call(
    kernel: Callable[..., None],
    out_shape: Any,
    *,
    platform: Literal["tpu"],
    compiler_params: TPUParams | None = None,
    grid_spec: GridSpec | None = None,
    grid: TupleGrid = (),
    in_specs: BlockSpecTree = ...,
    out_specs: BlockSpecTree = ...,
    scratch_shapes: ScratchShapeTree = (),
    input_output_aliases: Mapping[int, int] = ...,
    debug: bool = False,
    interpret: Any = False,
    name: str | None = None,
    cost_estimate: CostEstimate | None = None,
    metadata: dict[str, str] | None = None,
) -> PlatformFn[TPU, ..., Any]: ...
@overload
def pallas_call(
    kernel: Callable[..., None],
    out_shape: Any,
    *,
    platform: Literal["gpu"],
    compiler_params: GPUParams | None = None,
    grid_spec: GridSpec | None = None,
    grid: TupleGrid = (),
    in_specs: BlockSpecTree = ...,
    out_specs: BlockSpecTree = ...,
    scratch_shapes: ScratchShapeTree = (),
    input_output_aliases: Mapping[int, int] = ...,
    debug: bool = False,
    interpret: Any = False,
    name: str | None = None,
    cost_estimate: CostEstimate | None = None,
    metadata: dict[str, str] | None = None,
) -> PlatformFn[GPU, ..., Any]: ...
@overload
def pallas_call(
    kernel: Callable[..., None],
    out_shape: Any,
    *,
    platform: None = None,
    compiler_params: TPUParams,
    grid_spec: GridSpec | None = None,
    grid: TupleGrid = (),
    in_specs: BlockSpecTree = ...,
    out_specs: BlockSpecTree = ...,
    scratch_shapes: ScratchShapeTree = (),
    input_output_aliases: Mapping[int, int] = ...,
    debug: bool = False,
    interpret: Any = False,
    name: str | None = None,
    cost_estimate: CostEstimate | None = None,
    metadata: dict[str, str] | None = None,
) -> PlatformFn[TPU, ..., Any]: ...
@overload
def pallas_call(
    kernel: Callable[..., None],
    out_shape: Any,
    *,
    platform: None = None,
    compiler_params: GPUParams,
    grid_spec: GridSpec | None = None,
    grid: TupleGrid = (),
    in_specs: BlockSpecTree = ...,
    out_specs: BlockSpecTree = ...,
    scratch_shapes: ScratchShapeTree = (),
    input_output_aliases: Mapping[int, int] = ...,
    debug: bool = False,
    interpret: Any = False,
    name: str | None = None,
    cost_estimate: CostEstimate | None = None,
    metadata: dict[str, str] | None = None,
) -> PlatformFn[GPU, ..., Any]: ...
@overload
def pallas_call(
    kernel: Callable[..., None],
    out_shape: Any,
    *,
    platform: None = None,
    compiler_params: None = None,
    grid_spec: GridSpec | None = None,
    grid: TupleGrid = (),
    in_specs: BlockSpecTree = ...,
    out_specs: BlockSpecTree = ...,
    scratch_shapes: ScratchShapeTree = (),
    input_output_aliases: Mapping[int, int] = ...,
    debug: bool = False,
    interpret: Any = False,
    name: str | None = None,
    cost_estimate: CostEstimate | None = None,
    metadata: dict[str, str] | None = None,
) -> Callable[..., Any]: ...
def pallas_call(
    kernel: Callable[..., None],
    out_shape: Any,
    *,
    platform: Platform | None = None,
    compiler_params: TPUParams | GPUParams | None = None,
    **kwargs: Any,
) -> Callable[..., Any]:
    """``pl.pallas_call`` with platform-typed params, checked at build and lowering time.

    Arguments:
        kernel, out_shape, **kwargs: as for ``jax.experimental.pallas.pallas_call``
            (forwarded unchanged).
        platform: ``"tpu"`` or ``"gpu"``; when given, the params must be of that
            platform. When left out it is the params' platform.
        compiler_params: JAX's params object (or a registered class's), or ``None``.

    Returns:
        JAX's callable, tagged with its platform (a ``PlatformFn[P, ..., Any]``) when
        the platform is known (``platform=`` or params given), untagged otherwise.

    Raises:
        LegacyParamsError: dict params.
        PlatformMismatchError: ``platform=`` contradicts the params (not in interpret mode);
            later, at lowering, params lowered for a platform they do not serve.
        UnknownPlatformError: a params class no one registered (not in interpret mode).
    """
    from jax.experimental import pallas as pl

    interpret = _interpreting(kwargs)
    entry = _params_entry(compiler_params, interpret)
    tagged = _check_platform(entry, platform, interpret)
    if compiler_params is not None:
        kwargs["compiler_params"] = compiler_params
    fn = pl.pallas_call(kernel, out_shape, **kwargs)
    result: Callable[..., Any] = _finish(fn, compiler_params, tagged)
    return result


# ----------------------------------------------------------------------------- kernel


def _mesh_platform(mesh: object) -> tuple[Platform, Backend] | None:
    """(platform, backend) of a mesh or of every mesh of an MPMD sequence, if known and agreed."""
    meshes = list(mesh) if isinstance(mesh, Sequence) and not isinstance(mesh, str) else [mesh]
    found: set[Backend] = set()
    for m in meshes:
        backend = _jaxcompat.mesh_backend(m)
        if backend is None:
            return None
        found.add(backend)
    if len(found) != 1:
        return None
    (backend,) = found
    return _platforms.PARAMS_BY_BACKEND[backend].platform, backend


def _check_mesh(
    entry: _registry.Entry | None, mesh: object, platform: Platform | None, interpret: bool
) -> Platform | None:
    known = _mesh_platform(mesh)
    if known is None:
        return platform
    mesh_platform, _mesh_backend = known
    if interpret:
        return platform or mesh_platform
    mesh_name = type(mesh).__name__ if not isinstance(mesh, Sequence) else "mesh sequence"
    if entry is not None:
        if entry.platform != mesh_platform:
            err = PlatformMismatchError(entry.platform, mesh_platform)
            err.add_note(f"The {mesh_name} lowers for {mesh_platform} only.")
            if entry.backend is not None:
                err.add_note(_platforms.fix_hint(entry.backend, mesh_platform))
            raise err
        # Same platform, other backend (Triton params on a Mosaic GPU mesh): the lowering
        # guard refuses it for cuda/rocm, and still gives JAX's text for a tpu lowering.
    if platform is not None and platform != mesh_platform:
        raise ValueError(
            f"platform={platform!r}, but the {mesh_name} lowers for {mesh_platform} only"
        )
    return platform or mesh_platform


# Overloads: (body given | decorator) x (TPU mesh | Mosaic GPU mesh | platform= for other
# meshes | no params). A known mesh with params of the other platform matches none.
@overload
def kernel(
    body: Callable[..., None] | Sequence[Callable[..., None]],
    out_type: object = (),
    *,
    mesh: TPUMesh,
    compiler_params: TPUParams | None = None,
    scratch_types: ScratchShapeTree = (),
    interpret: Any = False,
    cost_estimate: CostEstimate | None = None,
    debug: bool = False,
    name: str | None = None,
    metadata: dict[str, str] | None = None,
) -> PlatformFn[TPU, ..., Any]: ...
@overload
def kernel(
    *,
    out_type: object = (),
    mesh: TPUMesh,
    compiler_params: TPUParams | None = None,
    scratch_types: ScratchShapeTree = (),
    interpret: Any = False,
    cost_estimate: CostEstimate | None = None,
    debug: bool = False,
    name: str | None = None,
    metadata: dict[str, str] | None = None,
) -> Callable[[Callable[..., None]], PlatformFn[TPU, ..., Any]]: ...
@overload
def kernel(
    body: Callable[..., None] | Sequence[Callable[..., None]],
    out_type: object = (),
    *,
    mesh: MosaicGPUMesh,
    compiler_params: MosaicGPUCompilerParams | None = None,
    scratch_types: ScratchShapeTree = (),
    interpret: Any = False,
    cost_estimate: CostEstimate | None = None,
    debug: bool = False,
    name: str | None = None,
    metadata: dict[str, str] | None = None,
) -> PlatformFn[GPU, ..., Any]: ...
@overload
def kernel(
    *,
    out_type: object = (),
    mesh: MosaicGPUMesh,
    compiler_params: MosaicGPUCompilerParams | None = None,
    scratch_types: ScratchShapeTree = (),
    interpret: Any = False,
    cost_estimate: CostEstimate | None = None,
    debug: bool = False,
    name: str | None = None,
    metadata: dict[str, str] | None = None,
) -> Callable[[Callable[..., None]], PlatformFn[GPU, ..., Any]]: ...
@overload
def kernel(
    body: Callable[..., None] | Sequence[Callable[..., None]],
    out_type: object = (),
    *,
    mesh: Mesh | Sequence[Mesh],
    platform: Literal["tpu"],
    compiler_params: TPUParams | None = None,
    scratch_types: ScratchShapeTree = (),
    interpret: Any = False,
    cost_estimate: CostEstimate | None = None,
    debug: bool = False,
    name: str | None = None,
    metadata: dict[str, str] | None = None,
) -> PlatformFn[TPU, ..., Any]: ...
@overload
def kernel(
    body: Callable[..., None] | Sequence[Callable[..., None]],
    out_type: object = (),
    *,
    mesh: Mesh | Sequence[Mesh],
    platform: Literal["gpu"],
    compiler_params: GPUParams | None = None,
    scratch_types: ScratchShapeTree = (),
    interpret: Any = False,
    cost_estimate: CostEstimate | None = None,
    debug: bool = False,
    name: str | None = None,
    metadata: dict[str, str] | None = None,
) -> PlatformFn[GPU, ..., Any]: ...
@overload
def kernel(
    body: Callable[..., None] | Sequence[Callable[..., None]],
    out_type: object = (),
    *,
    mesh: Mesh | Sequence[Mesh],
    compiler_params: None = None,
    scratch_types: ScratchShapeTree = (),
    interpret: Any = False,
    cost_estimate: CostEstimate | None = None,
    debug: bool = False,
    name: str | None = None,
    metadata: dict[str, str] | None = None,
) -> Callable[..., Any]: ...
@overload
def kernel(
    *,
    out_type: object = (),
    mesh: Mesh,
    platform: Literal["tpu"],
    compiler_params: TPUParams | None = None,
    scratch_types: ScratchShapeTree = (),
    interpret: Any = False,
    cost_estimate: CostEstimate | None = None,
    debug: bool = False,
    name: str | None = None,
    metadata: dict[str, str] | None = None,
) -> Callable[[Callable[..., None]], PlatformFn[TPU, ..., Any]]: ...
@overload
def kernel(
    *,
    out_type: object = (),
    mesh: Mesh,
    platform: Literal["gpu"],
    compiler_params: GPUParams | None = None,
    scratch_types: ScratchShapeTree = (),
    interpret: Any = False,
    cost_estimate: CostEstimate | None = None,
    debug: bool = False,
    name: str | None = None,
    metadata: dict[str, str] | None = None,
) -> Callable[[Callable[..., None]], PlatformFn[GPU, ..., Any]]: ...
@overload
def kernel(
    *,
    out_type: object = (),
    mesh: Mesh,
    compiler_params: None = None,
    scratch_types: ScratchShapeTree = (),
    interpret: Any = False,
    cost_estimate: CostEstimate | None = None,
    debug: bool = False,
    name: str | None = None,
    metadata: dict[str, str] | None = None,
) -> Callable[[Callable[..., None]], Callable[..., Any]]: ...
def kernel(
    *args: Any,
    mesh: Any,
    platform: Platform | None = None,
    compiler_params: Any = None,
    **kwargs: Any,
) -> Any:
    """``pl.kernel`` with platform-typed params; the mesh and the params must agree.

    Arguments as for ``jax.experimental.pallas.kernel`` (forwarded unchanged), plus
    ``platform=`` (checked against the params and the mesh). The platform of JAX's
    meshes is known (``pltpu`` meshes: tpu; ``plgpu.Mesh``: gpu, Mosaic GPU); other
    meshes say nothing.

    Returns JAX's kernel callable (or, without a body, a decorator that makes one),
    tagged with its platform when known.

    Raises:
        LegacyParamsError: dict params.
        PlatformMismatchError: params of another platform than ``platform=`` or the
            mesh; later, at lowering, params lowered for a platform they do not serve,
            and Triton params on a Mosaic GPU mesh (the backend-level twin).
    """
    from jax.experimental import pallas as pl

    interpret = _interpreting(kwargs)
    entry = _params_entry(compiler_params, interpret)
    tagged = _check_platform(entry, platform, interpret)
    tagged = _check_mesh(entry, mesh, tagged, interpret)
    if compiler_params is not None:
        kwargs["compiler_params"] = compiler_params
    result = pl.kernel(*args, mesh=mesh, **kwargs)
    if args or "body" in kwargs:
        return _finish(result, compiler_params, tagged)
    decorator = result

    def decorate(fun: Callable[..., None]) -> Any:
        return _finish(decorator(fun), compiler_params, tagged)

    return decorate


# ----------------------------------------------------------------------------- plgpu.kernel


@overload
def mosaic_gpu_kernel(
    body: Callable[..., None],
    /,
    *,
    out_type: object = ...,
    scratch_types: ScratchShapeTree = ...,
    compiler_params: MosaicGPUCompilerParams | None = None,
    cost_estimate: CostEstimate | None = None,
    grid: tuple[int, ...] = (),
    grid_names: tuple[str, ...] = (),
    cluster: tuple[int, ...] = (),
    cluster_names: tuple[str, ...] = (),
    num_threads: int | None = None,
    thread_name: str | None = None,
    interpret: Any = None,
    debug: bool = False,
    **mesh_kwargs: Any,
) -> PlatformFn[GPU, ..., Any]: ...
@overload
def mosaic_gpu_kernel(
    *,
    out_type: object = ...,
    scratch_types: ScratchShapeTree = ...,
    compiler_params: MosaicGPUCompilerParams | None = None,
    cost_estimate: CostEstimate | None = None,
    grid: tuple[int, ...] = (),
    grid_names: tuple[str, ...] = (),
    cluster: tuple[int, ...] = (),
    cluster_names: tuple[str, ...] = (),
    num_threads: int | None = None,
    thread_name: str | None = None,
    interpret: Any = None,
    debug: bool = False,
    **mesh_kwargs: Any,
) -> Callable[[Callable[..., None]], PlatformFn[GPU, ..., Any]]: ...
def mosaic_gpu_kernel(*args: Any, compiler_params: Any = None, **kwargs: Any) -> Any:
    """``plgpu.kernel`` (Mosaic GPU) with its params checked: only Mosaic GPU params.

    Arguments are forwarded to ``jax.experimental.pallas.mosaic_gpu.kernel`` as given,
    so each JAX version takes its own spelling (``out_shape=`` on 0.10, ``out_type=``
    from 0.11). The result is tagged ``"gpu"``.

    Raises:
        LegacyParamsError: dict params.
        PlatformMismatchError: TPU params (``...platform tpu cannot be used for gpu
            lowering.``), unless interpreting; later, at lowering, Triton params (the
            backend-level twin) and Mosaic GPU params lowered for rocm.
    """
    from jax.experimental.pallas import mosaic_gpu as plgpu

    interpret = _interpreting(kwargs)
    entry = _params_entry(compiler_params, interpret)
    if entry is not None and not interpret:
        if entry.platform != _MOSAIC_GPU.platform:
            err = PlatformMismatchError(entry.platform, _MOSAIC_GPU.platform)
            if entry.backend is not None:
                err.add_note(_platforms.fix_hint(entry.backend, min(_MOSAIC_GPU.lowers_on)))
            raise err
        # Triton params: refused by the lowering guard (backend-level text on cuda/rocm,
        # JAX's text on tpu), like any Triton params on a Mosaic GPU mesh.
    if compiler_params is not None:
        kwargs["compiler_params"] = compiler_params
    result = plgpu.kernel(*args, **kwargs)
    if args or "body" in kwargs:
        return _finish(result, compiler_params, _MOSAIC_GPU.platform)
    decorator = result

    def decorate(fun: Callable[..., None]) -> Any:
        return _finish(decorator(fun), compiler_params, _MOSAIC_GPU.platform)

    return decorate


def _install_signatures() -> None:
    from jax.experimental import pallas as pl

    _with_signature(pallas_call, pl.pallas_call, [_PLATFORM_PARAM])
    _with_signature(kernel, pl.kernel, [_PLATFORM_PARAM])
    try:
        from jax.experimental.pallas import mosaic_gpu as plgpu
    except Exception:  # Mosaic GPU not importable (e.g. jax 0.10 without absl)
        return
    _with_signature(mosaic_gpu_kernel, plgpu.kernel, [])


_install_signatures()
