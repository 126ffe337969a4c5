"""What typed-pallas reads and touches inside JAX, in one place, for jax 0.10 to 0.12.

Everything here names JAX internals (``jax._src...``) that moved or changed over the
supported range, so the rest of the runtime never does:

* the Pallas primitives that lower a kernel (``pallas_call_p`` for ``pl.pallas_call``;
  ``mpmd_map_p`` for ``pl.kernel`` and ``plgpu.kernel``) and their generic MLIR lowering
  rules, which :mod:`typed_pallas._backstop` wraps;
* the lowering platforms of an MLIR rule context;
* JAX's own params registry (``jax._src.pallas.core``) and the modules that fill it;
* the modules that define a primitive (``core``, ``mlir``, ``batching``, ``ad``), for
  :mod:`typed_pallas._dispatch`, and the staging tracer and GPU platform name that
  :mod:`typed_pallas._select` asks about;
* :func:`cross_lowering`, the context needed to lower Triton / Mosaic TPU kernels for
  another platform on a CPU host (jax 0.12 asks for an abstract mesh with a device kind);
  the one place that builds that mesh (``check_lowering``, ``dispatch`` and
  :func:`export_text` all use it).

It does not decide anything: no platform table (which module registers which backend,
which package a mesh comes from, which device kind stands for a platform: all of that
is read from :mod:`typed_pallas._platforms`), no error text (that is
:mod:`typed_pallas._errors`). Importing it imports jax.
"""

from __future__ import annotations

import contextlib
import importlib
from collections.abc import Callable, Mapping
from typing import Any, Final

import jax

from typed_pallas import _platforms
from typed_pallas._jax_range import warn_if_unsupported_jax
from typed_pallas._platforms import Backend

# A JAX outside the range declared in the package metadata gets one clear warning.
warn_if_unsupported_jax(stacklevel=2)

__all__ = [
    "cross_lowering",
    "export_text",
    "generic_lowering_rule",
    "gpu_platform",
    "interpret_forced",
    "is_staging_tracer",
    "jax_registry",
    "lowering_platforms",
    "mesh_backend",
    "primitive",
    "primitive_modules",
    "registration_module",
    "set_generic_lowering_rule",
]


#: primitive name -> (module, attribute) of the primitives our guard wraps
_PRIMITIVES: Final[Mapping[str, tuple[str, str]]] = {
    "pallas_call": ("jax._src.pallas.pallas_call", "pallas_call_p"),
    "mpmd_map": ("jax._src.pallas.mpmd", "mpmd_map_p"),
}


def primitive(name: str) -> Any:
    """``pallas_call_p`` or ``mpmd_map_p`` (imports the defining module)."""
    module, attr = _PRIMITIVES[name]
    return getattr(importlib.import_module(module), attr)


def _mlir() -> Any:
    from jax._src.interpreters import mlir

    return mlir


def primitive_modules() -> tuple[Any, Any, Any, Any]:
    """JAX's ``core``, ``mlir``, ``batching`` and ``ad`` modules, to define a primitive with."""
    from jax._src import core
    from jax._src.interpreters import ad, batching, mlir

    return core, mlir, batching, ad


def is_staging_tracer(value: object) -> bool:
    """True for a tracer of a staging trace (``jax.jit``, ``jax.make_jaxpr``)."""
    from jax._src.interpreters import partial_eval as pe

    return isinstance(value, pe.DynamicJaxprTracer)


def gpu_platform() -> str:
    """The GPU platform this process's JAX was built for ("cuda" or "rocm"); raises without one."""
    from jax._src import xla_bridge

    name: str = xla_bridge.canonicalize_platform("gpu")
    return name


def generic_lowering_rule(prim: Any) -> tuple[Callable[..., Any], bool]:
    """The platform-independent MLIR lowering rule of ``prim`` and its ``inline`` flag."""
    entry = _mlir()._lowerings[prim]
    return entry.rule, bool(getattr(entry, "inline", True))


def set_generic_lowering_rule(prim: Any, rule: Callable[..., Any], inline: bool) -> None:
    """Replace the generic lowering rule of ``prim`` (keeps its cacheability)."""
    _mlir().register_lowering(prim, rule, inline=inline)


def lowering_platforms(ctx: Any) -> tuple[str, ...]:
    """The platforms an MLIR lowering-rule context lowers for ("tpu", "cuda", "rocm", "cpu")."""
    mlir = _mlir()
    finder = getattr(mlir, "_platforms_for_eqn", None)
    if finder is not None:
        try:
            return tuple(finder(ctx))
        except Exception:  # pragma: no cover - internal drift
            pass
    platforms = getattr(ctx, "platforms", None) or ctx.module_context.platforms
    return tuple(platforms)


def interpret_forced() -> bool:
    """True inside ``pltpu.force_tpu_interpret_mode()`` (JAX then interprets every kernel)."""
    from jax._src import config

    flag = getattr(config, "pallas_tpu_interpret_mode_context_manager", None)
    return bool(flag is not None and flag.value)


def _pallas_core() -> Any:
    return importlib.import_module("jax._src.pallas.core")


#: JAX's own ``params class -> (rule, platform)`` dict (the live object: JAX never rebinds it)
_JAX_RULES: Final[dict[Any, tuple[Callable[..., Any], str]]] = (
    _pallas_core()._backend_lowering_rules
)


def jax_registry() -> dict[Any, tuple[Callable[..., Any], str]]:
    """JAX's own ``params class -> (rule, platform)`` dict (live, not a copy)."""
    return _JAX_RULES


def jax_register_lowering_rule(params_cls: type, rule: Callable[..., Any], platform: str) -> None:
    _pallas_core().register_lowering_rule(params_cls, rule, platform)


def jax_get_lowering_rule(params_cls: type, expected_platform: str) -> Callable[..., Any] | None:
    rule: Callable[..., Any] | None = _pallas_core().get_lowering_rule(
        params_cls, expected_platform
    )
    return rule


def registration_module(backend: Backend) -> Any | None:
    """Import the module that registers ``backend``'s params with JAX; ``None`` if it cannot."""
    row = _platforms.PARAMS_BY_BACKEND.get(backend)
    if row is None:
        return None
    try:
        return importlib.import_module(row.registration_module)
    except Exception:  # missing optional deps (absl, triton bits) or a moved module
        return None


def mesh_backend(mesh: object) -> Backend | None:
    """The backend whose private package defines the mesh's class (or a base); ``None`` if none.

    ``"mosaic_tpu"`` for JAX's TPU meshes, ``"mosaic_gpu"`` for ``plgpu.Mesh``.
    """
    for klass in type(mesh).__mro__:
        module = getattr(klass, "__module__", "") + "."
        for row in _platforms.PARAMS_CLASSES:
            if module.startswith(f"{row.private_package}."):
                return row.backend
    return None


def cross_lowering(
    target: str, device_kind: tuple[str, str] | None = None
) -> contextlib.AbstractContextManager[object]:
    """Context in which kernels lower for ``target`` ("tpu", "cuda", "rocm") on a CPU host.

    jax 0.12 looks up the device kind for Triton and Mosaic TPU lowering; without an
    abstract mesh that names one it fails on CPU. This is ``use_abstract_mesh`` with a
    one-device mesh of ``device_kind`` (a ``(device kind, device platform)`` pair; by
    default ``_platforms.ABSTRACT_DEVICE_KINDS[target]``). A null context when there is
    no device kind for ``target`` ("cpu"), when this JAX has no abstract devices, or when
    an abstract mesh is already active (the caller's own mesh, and device, win).
    """
    spec = device_kind if device_kind is not None else _platforms.ABSTRACT_DEVICE_KINDS.get(target)
    device_cls = getattr(jax.sharding, "AbstractDevice", None)
    use = getattr(jax.sharding, "use_abstract_mesh", None)
    if spec is None or device_cls is None or use is None:
        return contextlib.nullcontext()
    current = getattr(jax.sharding, "get_abstract_mesh", lambda: None)()
    if current is not None and not getattr(current, "empty", True):
        return contextlib.nullcontext()
    kind, device_platform = spec
    try:
        device = device_cls(device_kind=kind, num_cores=1, platform=device_platform)
    except TypeError:  # pragma: no cover - another signature
        return contextlib.nullcontext()
    mesh = jax.sharding.AbstractMesh((1,), ("_typed_pallas",), abstract_device=device)
    manager: contextlib.AbstractContextManager[object] = use(mesh)
    return manager


def export_text(fn: Callable[..., Any], target: str, *args: Any) -> str:
    """Lower ``jax.jit(fn)(*args)`` for ``target`` with ``jax.export`` and return the module text."""
    from jax import export

    checks = []
    if _platforms.PLATFORM_OF_LOWERING.get(target) == "gpu":
        checks = [
            export.DisabledSafetyCheck.custom_call(name) for name in _platforms.GPU_CUSTOM_CALLS
        ]
    with cross_lowering(target):
        exported = export.export(jax.jit(fn), platforms=[target], disabled_checks=checks)(*args)
    text: str = exported.mlir_module()
    return text
