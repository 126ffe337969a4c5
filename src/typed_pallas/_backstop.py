"""The lowering guard: JAX's exact ValueError for every mismatched (params x platform) cell.

JAX checks compiler params against the lowering platform only sometimes (its registry
fills lazily, ``pl.kernel`` bypasses it, bare ``assert``s fire first). This module
wraps the generic MLIR lowering rules of the two Pallas primitives (``pallas_call_p``,
behind ``pl.pallas_call``; ``mpmd_map_p``, behind ``pl.kernel`` and ``plgpu.kernel``).
The wrapper reads the params and the lowering platforms, raises
:class:`~typed_pallas.PlatformMismatchError` (``Compiler params for platform tpu cannot
be used for gpu lowering.``) on a mismatch, and otherwise calls JAX's rule unchanged,
so matched cells lower to the very same module text.

Which calls it checks:

* calls built by ``typed_pallas.pallas_call`` / ``kernel`` / ``mosaic_gpu_kernel``: their
  params object is marked (by identity, weakly) when the call is built;
* every call in the process once :func:`install_backstop` has run.

It never checks interpret-mode calls (JAX ignores the params there), calls without
params, params classes nobody registered, or the ``cpu`` platform (JAX's own
"Only interpret mode" error stays). Besides the platform, it refuses Mosaic GPU params
for rocm and Triton params on Mosaic GPU meshes (``plgpu.kernel``), with the
backend-level twin of the message. What it does not do: validate at build time (that
is :mod:`typed_pallas._entry`).
"""

from __future__ import annotations

import functools
import threading
import weakref
from collections.abc import Callable, Mapping
from typing import Any, Final

from typed_pallas import _jaxcompat, _platforms, _registry
from typed_pallas._errors import LegacyParamsError, PlatformMismatchError

__all__ = ["install_backstop", "uninstall_backstop"]

#: The primitives whose lowering we guard.
PRIMITIVES: Final = ("pallas_call", "mpmd_map")

_lock = threading.Lock()
#: primitive name -> (JAX's rule, inline) while our guard is in place
_originals: dict[str, tuple[Callable[..., Any], bool]] = {}
_backstop_on = False
#: id(params) -> weak reference, for params that went through a typed entry point
_marked: dict[int, Any] = {}
#: params objects that cannot be weakly referenced (kept alive; rare)
_marked_strong: dict[int, object] = {}


def mark(params: object) -> None:
    """Have the guard check every lowering that carries this very params object."""
    if params is None:
        return
    key = id(params)

    def forget(_ref: object, key: int = key) -> None:
        _marked.pop(key, None)

    try:
        _marked[key] = weakref.ref(params, forget)
    except TypeError:
        _marked_strong[key] = params


def is_marked(params: object) -> bool:
    ref = _marked.get(id(params))
    if ref is not None:
        return bool(ref() is params)
    return _marked_strong.get(id(params)) is params


def check(
    params: Mapping[str, Any], platforms: tuple[str, ...], primitive: str = "pallas_call"
) -> None:
    """Raise the mismatch error for these primitive params and lowering platforms, if any."""
    if params.get("interpret"):
        return
    compiler_params = params.get("compiler_params")
    if compiler_params is None:
        return
    if not (_backstop_on or is_marked(compiler_params)):
        return
    if isinstance(compiler_params, Mapping):
        raise LegacyParamsError()
    entry = _registry.resolve(type(compiler_params))
    if entry is None:
        return
    for platform in platforms:
        if platform not in _platforms.LOWERING_SET:
            continue  # the host: JAX's own "Only interpret mode" error stays
        err = _registry.mismatch_error(entry, platform)
        if err is None and entry.backend == "triton" and _on_mosaic_gpu_meshes(params):
            err = PlatformMismatchError("triton", "mosaic_gpu", backend_level=True)
            err.add_note(
                "plgpu.kernel and pl.kernel on a plgpu.Mesh lower with Mosaic GPU: "
                "use jax.experimental.pallas.mosaic_gpu.CompilerParams."
            )
        if err is not None:
            raise err
        if primitive == "pallas_call" and entry.backend == "mosaic_gpu" and platform == "cuda":
            if _registry.get_lowering_rule(type(compiler_params), "cuda") is None:
                # jax >= 0.12 registers no pl.pallas_call rule for Mosaic GPU params and
                # fails on a bare assert; say what happened instead.
                raise NotImplementedError(_platforms.MOSAIC_GPU_PALLAS_CALL_MESSAGE)


def _on_mosaic_gpu_meshes(params: Mapping[str, Any]) -> bool:
    meshes = params.get("meshes") or ()
    return bool(meshes) and all(_jaxcompat.mesh_backend(m) == "mosaic_gpu" for m in meshes)


def _guard(original: Callable[..., Any], primitive: str) -> Callable[..., Any]:
    @functools.wraps(original)
    def guarded_lowering(ctx: Any, *in_nodes: Any, **params: Any) -> Any:
        check(params, _jaxcompat.lowering_platforms(ctx), primitive)
        return original(ctx, *in_nodes, **params)

    guarded_lowering.__typed_pallas_guard__ = True  # type: ignore[attr-defined]
    return guarded_lowering


def ensure_guard() -> None:
    """Put the guard around both primitives' lowering rules (idempotent, thread-safe)."""
    if len(_originals) == len(PRIMITIVES):
        return
    with _lock:
        for name in PRIMITIVES:
            if name in _originals:
                continue
            prim = _jaxcompat.primitive(name)
            rule, inline = _jaxcompat.generic_lowering_rule(prim)
            if getattr(rule, "__typed_pallas_guard__", False):  # a reloaded module of ours
                rule = getattr(rule, "__wrapped__", rule)
            _originals[name] = (rule, inline)
            _jaxcompat.set_generic_lowering_rule(prim, _guard(rule, name), inline)


def remove_guard() -> None:
    """Give JAX its own lowering rules back (tests)."""
    with _lock:
        for name, (rule, inline) in list(_originals.items()):
            _jaxcompat.set_generic_lowering_rule(_jaxcompat.primitive(name), rule, inline)
            del _originals[name]


def install_backstop() -> None:
    """Make JAX's own ``pl.pallas_call``, ``pl.kernel`` and ``plgpu.kernel`` raise JAX's ValueError
    (``Compiler params for platform tpu cannot be used for gpu lowering.``, as a
    :class:`~typed_pallas.PlatformMismatchError`) in every mismatched cell, for the
    whole process; Mosaic GPU params lowered for rocm get a clear error too.
    Idempotent. Matched cells, interpret mode and params-less calls are untouched.
    """
    global _backstop_on
    ensure_guard()
    _backstop_on = True


def uninstall_backstop() -> None:
    """Undo :func:`install_backstop` (typed entry points stay guarded)."""
    global _backstop_on
    _backstop_on = False


def backstop_installed() -> bool:
    return _backstop_on
