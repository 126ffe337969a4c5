"""The params-class registry: which platform and backend a compiler-params class serves.

``platform_of`` / ``backend_of`` answer for JAX's three classes (known eagerly from
:data:`typed_pallas._platforms.PARAMS_CLASSES`, whatever the process has imported),
for classes registered with :func:`register_lowering_rule`, for classes registered
directly with JAX, and for subclasses of any of these (resolved through the MRO).

``register_lowering_rule`` / ``get_lowering_rule`` keep JAX's semantics (a rule per
params class and platform; a miss returns ``None``; a platform mismatch raises
``ValueError`` with JAX's exact text) and add what JAX's registry lacks:

* conflicting re-registration raises unless ``replace=True``;
* writes take a lock and readers see an immutable snapshot (safe without the GIL);
* ``cuda`` and ``rocm`` are understood, and Mosaic GPU params are refused for ``rocm``;
* the platform is checked against the class's declared ``__pallas_platform__``;
* a registration is also handed to JAX's own registry, so JAX's lowering uses it.

What it does not do: lower anything, or wrap JAX's entry points (that is
:mod:`typed_pallas._entry` and :mod:`typed_pallas._backstop`). Importing it imports jax.
"""

from __future__ import annotations

import functools
import importlib
import threading
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Final, Literal, TypeAlias, overload

from typed_pallas import _jaxcompat, _platforms
from typed_pallas._errors import LegacyParamsError, PlatformMismatchError, UnknownPlatformError
from typed_pallas._platforms import GPU, TPU, Backend, ParamsClass, Platform

if TYPE_CHECKING:
    from jax._src.pallas.mosaic.core import CompilerParams as _JaxMosaicTPUParams
    from jax._src.pallas.mosaic_gpu.core import CompilerParams as _JaxMosaicGPUParams
    from jax._src.pallas.triton.core import CompilerParams as _JaxTritonParams
    from jax.experimental.pallas.mosaic_gpu import CompilerParams as _MosaicGPUParams
    from jax.experimental.pallas.tpu import CompilerParams as _MosaicTPUParams
    from jax.experimental.pallas.triton import CompilerParams as _TritonParams

    from typed_pallas._params import CompilerParams

    # JAX's classes by name as well as by protocol: a checker that does not read our
    # stubs (pyright treats a partial stub package differently) still tells them apart,
    # and so does every checker for params imported through jax.pallas (JAX's preferred
    # path from 0.12.1, which the stubs leave to JAX: docs/checkers.md): there the class
    # is JAX's own, defined in its private module (_platforms.PARAMS_CLASSES'
    # defining_modules), which the stubs' class derives from.
    TPUParams: TypeAlias = _MosaicTPUParams | _JaxMosaicTPUParams | CompilerParams[TPU]
    GPUParams: TypeAlias = (
        _TritonParams
        | _MosaicGPUParams
        | _JaxTritonParams
        | _JaxMosaicGPUParams
        | CompilerParams[GPU]
    )

__all__ = [
    "LoweringRule",
    "backend_of",
    "get_lowering_rule",
    "platform_of",
    "register_lowering_rule",
]

#: A Pallas lowering rule: ``rule(ctx, *in_nodes, **params) -> Sequence[ir.Value]``.
LoweringRule: TypeAlias = Callable[..., Any]

#: What ``get_lowering_rule`` accepts as the platform being lowered for.
ExpectedPlatform: TypeAlias = _platforms.LoweringName

#: backend -> every name of ``LOWERINGS_OF_NAME`` it can lower for ("gpu" when it serves
#: cuda or rocm); lowering a backend's params for any other name is a mismatch.
_NAMES_SERVED: Final[Mapping[str, frozenset[str]]] = {
    row.backend: frozenset(
        name
        for name, lowerings in _platforms.LOWERINGS_OF_NAME.items()
        if lowerings & row.lowers_on
    )
    for row in _platforms.PARAMS_CLASSES
}


@dataclass(frozen=True)
class Entry:
    """What the registry knows about one params class."""

    params_cls: type
    platform: Platform
    backend: Backend | None
    #: the rule registered through typed-pallas (``None``: ask JAX's registry)
    rule: LoweringRule | None = None
    #: the row of JAX's table when ``params_cls`` is one of JAX's three classes
    builtin: ParamsClass | None = None
    #: True when found only in JAX's own registry (never cached: JAX may overwrite it)
    from_jax: bool = False


@dataclass(frozen=True)
class _State:
    """One immutable generation of the registry; ``cache`` belongs to it alone."""

    entries: Mapping[type, Entry]
    cache: dict[type, Entry] = field(default_factory=dict)


_lock = threading.RLock()
_state: _State = _State(entries={})


def _load_builtins() -> dict[type, Entry]:
    entries: dict[type, Entry] = {}
    for row in _platforms.PARAMS_CLASSES:
        try:
            cls = getattr(importlib.import_module(row.module), row.name)
        except Exception:  # e.g. Mosaic GPU without absl: resolved by name instead
            continue
        entries[cls] = Entry(cls, row.platform, row.backend, builtin=row)
    return entries


def _builtin_by_name(klass: type) -> ParamsClass | None:
    name = f"{getattr(klass, '__module__', '')}.{getattr(klass, '__qualname__', '')}"
    return _platforms.PARAMS_BY_FULLNAME.get(name)


_state = _State(entries=_load_builtins())


# ----------------------------------------------------------------------------- lookup


def resolve(params_cls: type) -> Entry | None:
    """The entry for ``params_cls`` or its nearest registered base; ``None`` if none."""
    state = _state
    entry = state.cache.get(params_cls)
    if entry is not None:
        return entry
    mro = getattr(params_cls, "__mro__", None)
    if mro is None:
        return None
    jax_rules = None
    for klass in mro:
        if klass is object:
            break
        entry = state.entries.get(klass)
        if entry is None:
            row = _builtin_by_name(klass)
            if row is not None:
                entry = Entry(klass, row.platform, row.backend, builtin=row)
        if entry is not None:
            state.cache[params_cls] = entry
            return entry
        if jax_rules is None:
            jax_rules = _jaxcompat.jax_registry()
        info = jax_rules.get(klass)
        if info is not None and info[1] in _platforms.PLATFORMS:
            platform: Platform = info[1]
            backend = _platforms.SOLE_BACKEND_OF_PLATFORM.get(platform)
            return Entry(klass, platform, backend, rule=info[0], from_jax=True)
    return None


def _expected(expected_platform: object) -> str:
    if expected_platform in _platforms.LOWERINGS_OF_NAME:
        return expected_platform  # type: ignore[return-value]
    valid = ", ".join(repr(p) for p in _platforms.LOWERINGS_OF_NAME)
    raise UnknownPlatformError(
        f"unknown lowering platform {expected_platform!r}: expected one of {valid}"
    )


_hint = functools.lru_cache(maxsize=None)(_platforms.fix_hint)


def mismatch_error(entry: Entry, target: str) -> PlatformMismatchError | None:
    """The error for lowering ``entry``'s params for ``target``; ``None`` if they match.

    ``target`` is "tpu", "gpu", "cuda" or "rocm". The message is JAX's, with "gpu" for
    cuda and rocm as in JAX's registry; the hint goes into a note.
    """
    registry_platform = _platforms.PLATFORM_OF_LOWERING[target]
    if entry.platform != registry_platform:
        err = PlatformMismatchError(entry.platform, registry_platform)
        if entry.backend is not None:
            err.add_note(_hint(entry.backend, target))
        else:
            err.add_note(
                f"{_name(entry.params_cls)} is registered for platform {entry.platform!r}."
            )
        return err
    if entry.backend is not None and target not in _NAMES_SERVED[entry.backend]:
        err = PlatformMismatchError(entry.backend, target, backend_level=True)
        err.add_note(_platforms.backend_lowering_note(entry.backend, target))
        return err
    return None


def _builtin_rule(entry: Entry) -> LoweringRule | None:
    rules = _jaxcompat.jax_registry()
    info = rules.get(entry.params_cls)
    if info is None and entry.builtin is not None:
        _jaxcompat.registration_module(entry.builtin.backend)
        info = rules.get(entry.params_cls)
    return info[0] if info is not None else None


def get_lowering_rule(params_cls: type, expected_platform: ExpectedPlatform) -> LoweringRule | None:
    """The lowering rule for ``params_cls`` when lowering for ``expected_platform``.

    Like ``jax._src.pallas.core.get_lowering_rule``: ``None`` for a class nobody
    registered, and ``ValueError("Compiler params for platform {platform} cannot be
    used for {expected_platform} lowering.")`` (a :class:`PlatformMismatchError`) when
    the class serves another platform. Unlike it: subclasses resolve through the MRO,
    JAX's three classes are known before their backends are imported, and
    ``expected_platform`` may be "cuda" or "rocm" (Mosaic GPU params for "rocm" raise
    the backend-level twin of the message, with a note).

    For JAX's own classes the rule is JAX's (its registration module is imported on
    first use); it is ``None`` where JAX registers none (Mosaic GPU on jax 0.12).
    """
    registry_platform = _REGISTRY_PLATFORM.get(expected_platform)
    if registry_platform is None:
        _expected(expected_platform)
    entry = _state.cache.get(params_cls)
    if entry is None:
        entry = resolve(params_cls)
        if entry is None:
            return None
    if entry.platform != registry_platform or (
        entry.backend is not None and expected_platform not in _NAMES_SERVED[entry.backend]
    ):
        err = mismatch_error(entry, expected_platform)
        assert err is not None
        raise err
    rule = entry.rule
    if rule is None and entry.builtin is not None:
        info = _JAX_RULES.get(entry.params_cls)
        rule = info[0] if info is not None else _builtin_rule(entry)
    return rule


_JAX_RULES: Final = _jaxcompat.jax_registry()
_REGISTRY_PLATFORM: Final[dict[object, str]] = dict(_platforms.PLATFORM_OF_LOWERING.items())


# ----------------------------------------------------------------------------- platform_of


def _name(cls: type) -> str:
    return f"{getattr(cls, '__module__', '?')}.{getattr(cls, '__qualname__', repr(cls))}"


def _entry_of(params_or_class: object) -> Entry:
    if isinstance(params_or_class, Mapping) or params_or_class is dict:
        raise LegacyParamsError()
    if params_or_class is None:
        raise TypeError(
            "compiler_params is None: None carries no platform (it lowers with each platform's default)"
        )
    cls = params_or_class if isinstance(params_or_class, type) else type(params_or_class)
    entry = resolve(cls)
    if entry is None:
        raise UnknownPlatformError(
            f"{_name(cls)} is not a Pallas compiler-params class that typed-pallas knows: "
            f"use {_platforms.PUBLIC_PARAMS_CLASSES}, or register it with "
            "typed_pallas.register_lowering_rule(cls, rule, 'tpu' | 'gpu')"
        )
    return entry


@overload
def platform_of(params_or_class: TPUParams | type[TPUParams], /) -> TPU: ...
@overload
def platform_of(params_or_class: GPUParams | type[GPUParams], /) -> GPU: ...
@overload
def platform_of(params_or_class: object, /) -> Platform: ...
def platform_of(params_or_class: object, /) -> Platform:
    """``"tpu"`` or ``"gpu"``: the platform compiler params (or their class) lower for.

    Raises:
        LegacyParamsError: for dict params (``dict(mosaic=...)``).
        TypeError: for ``None``.
        UnknownPlatformError: for a class that is neither JAX's nor registered.
    """
    return _entry_of(params_or_class).platform


def backend_of(params_or_class: object, /) -> Backend:
    """``"mosaic_tpu"``, ``"triton"`` or ``"mosaic_gpu"``: the backend params (or their class) configure.

    Raises what :func:`platform_of` raises, and :class:`UnknownPlatformError` for a
    class registered for "gpu" without a ``backend=``.
    """
    entry = _entry_of(params_or_class)
    if entry.backend is None:
        raise UnknownPlatformError(
            f"{_name(entry.params_cls)} is registered for platform {entry.platform!r} without a backend: "
            "pass backend='triton' or 'mosaic_gpu' to typed_pallas.register_lowering_rule"
        )
    return entry.backend


# ----------------------------------------------------------------------------- register


def _declared_platform(params_cls: type) -> str | None:
    """The class's own ``__pallas_platform__`` (a constant or a property returning one)."""
    value = getattr(params_cls, _DECLARED, None)
    if isinstance(value, property) and value.fget is not None:
        try:
            value = value.fget(None)
        except Exception:
            return None
    return value if isinstance(value, str) else None


_DECLARED: Final = "__pallas_platform__"


@overload
def register_lowering_rule(
    params_cls: type[TPUParams],
    rule: LoweringRule,
    platform: Literal["tpu"],
    *,
    replace: bool = False,
    backend: Literal["mosaic_tpu"] | None = None,
) -> None: ...
@overload
def register_lowering_rule(
    params_cls: type[GPUParams],
    rule: LoweringRule,
    platform: Literal["gpu"],
    *,
    replace: bool = False,
    backend: Literal["triton", "mosaic_gpu"] | None = None,
) -> None: ...
def register_lowering_rule(
    params_cls: type[TPUParams | GPUParams],
    rule: LoweringRule,
    platform: Platform,
    *,
    replace: bool = False,
    backend: Backend | None = None,
) -> None:
    """Register ``rule`` to lower params of class ``params_cls`` for ``platform``.

    As ``jax._src.pallas.core.register_lowering_rule`` (and handed on to it, so JAX's
    lowering finds the rule), plus:

    * type checkers refuse a class whose ``CompilerParams[P]`` disagrees with
      ``platform``; at runtime a class attribute ``__pallas_platform__``, JAX's table
      and registered base classes are checked the same way
      (:class:`PlatformMismatchError`);
    * registering the same class again with another rule, platform or backend raises
      ``ValueError`` unless ``replace=True`` (the same registration twice is a no-op);
    * ``backend`` is what :func:`backend_of` answers ("mosaic_tpu" for "tpu" by default).
    """
    if not isinstance(params_cls, type):
        raise TypeError(f"params_cls must be a class, not {params_cls!r}")
    if issubclass(params_cls, Mapping):
        raise LegacyParamsError()
    if not callable(rule):
        raise TypeError(f"rule must be callable, not {rule!r}")
    if platform not in _platforms.PLATFORMS:
        hint = ""
        if platform in _platforms.PLATFORM_OF_LOWERING:  # a lowering platform, not a registry one
            registry = _platforms.PLATFORM_OF_LOWERING[platform]
            hint = f" (register GPU params under {registry!r}: JAX's registry does not split cuda and rocm)"
        valid = " or ".join(repr(p) for p in _platforms.PLATFORMS)
        raise UnknownPlatformError(f"unknown platform {platform!r}: expected {valid}{hint}")
    declared = _declared_platform(params_cls)
    if declared is not None and declared != platform:
        err = PlatformMismatchError(declared, platform)
        err.add_note(f"{_name(params_cls)} declares __pallas_platform__ = {declared!r}.")
        raise err
    if backend is not None:
        row = _platforms.PARAMS_BY_BACKEND.get(backend)
        if row is None:
            raise UnknownPlatformError(
                f"unknown backend {backend!r}: expected one of {', '.join(_platforms.BACKENDS)}"
            )
        if row.platform != platform:
            raise PlatformMismatchError(backend, platform, backend_level=True)
    global _state
    with _lock:
        state = _state
        inherited = resolve(params_cls)
        if inherited is not None and inherited.platform != platform:
            exact_user = inherited.params_cls is params_cls and inherited.builtin is None
            if not (exact_user and replace):
                err = PlatformMismatchError(inherited.platform, platform)
                err.add_note(
                    f"{_name(params_cls)} resolves to {_name(inherited.params_cls)}, "
                    f"which is registered for {inherited.platform!r}."
                )
                raise err
        builtin = _builtin_by_name(params_cls)
        if builtin is not None:
            if backend is not None and backend != builtin.backend:
                raise PlatformMismatchError(builtin.backend, backend, backend_level=True)
            backend = builtin.backend
            # JAX fills its registry lazily and would later overwrite us: load it first.
            _jaxcompat.registration_module(builtin.backend)
        elif backend is None:
            if (
                inherited is not None
                and inherited.platform == platform
                and inherited.backend is not None
            ):
                backend = inherited.backend
            else:
                backend = _platforms.SOLE_BACKEND_OF_PLATFORM.get(platform)
        current = state.entries.get(params_cls)
        if current is not None and current.rule is not None:
            old: tuple[Any, str, Backend | None] | None = (
                current.rule,
                current.platform,
                current.backend,
            )
        else:
            info = _jaxcompat.jax_registry().get(params_cls)
            old = (info[0], info[1], backend) if info is not None else None
        if old is not None:
            if old[0] is rule and old[1] == platform and old[2] == backend:
                return
            if not replace:
                raise ValueError(
                    f"{_name(params_cls)} is already registered for platform {old[1]!r} "
                    f"with rule {getattr(old[0], '__qualname__', old[0])!r}; pass replace=True to replace it"
                )
            if (
                builtin is not None
                and params_cls not in _jax_originals
                and (current is None or current.rule is None)
            ):
                _jax_originals[params_cls] = _jaxcompat.jax_registry().get(params_cls)
        entry = Entry(params_cls, platform, backend, rule=rule, builtin=builtin)
        _jaxcompat.jax_register_lowering_rule(params_cls, rule, platform)
        entries = dict(state.entries)
        entries[params_cls] = entry
        _state = _State(entries=entries)


#: JAX's own registrations that ``replace=True`` displaced (restored by ``_forget``)
_jax_originals: dict[type, tuple[LoweringRule, str] | None] = {}


def _forget(params_cls: type) -> None:
    """Drop a registration made through typed-pallas, restoring JAX's own. For tests."""
    global _state
    with _lock:
        entries = dict(_state.entries)
        entry = entries.pop(params_cls, None)
        rules = _jaxcompat.jax_registry()
        if entry is not None and entry.builtin is not None:
            entries[params_cls] = Entry(
                params_cls, entry.platform, entry.backend, builtin=entry.builtin
            )
            original = _jax_originals.pop(params_cls, None)
            if original is not None:
                rules[params_cls] = original
        elif entry is not None:
            rules.pop(params_cls, None)
        _state = _State(entries=entries)
