"""Callables that carry their platform in their type: ``PlatformFn`` and ``@platform``.

``typed_pallas.pallas_call`` and ``typed_pallas.kernel`` return ``PlatformFn``s;
library authors tag their own kernels and wrappers with ``@typed_pallas.platform("tpu")``.
``typed_pallas.dispatch`` only accepts a branch whose platform matches its keyword.

At runtime the tag is an attribute, ``__pallas_platform__``, set on the function
itself (or on a thin wrapper for callables that refuse attributes). Imports no jax.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Generic, Literal, ParamSpec, Protocol, TypeVar, overload

from typing_extensions import override

from typed_pallas import _platforms
from typed_pallas._errors import UnknownPlatformError
from typed_pallas._platforms import GPU, TPU, Platform

__all__ = ["PlatformFn", "platform", "platform_of_callable", "tag"]

_P_co = TypeVar("_P_co", bound=Platform, covariant=True)
_P = TypeVar("_P", bound=Platform)
_Args = ParamSpec("_Args")
_R_co = TypeVar("_R_co", covariant=True)
_R = TypeVar("_R")

ATTRIBUTE = "__pallas_platform__"


class PlatformFn(Protocol[_P_co, _Args, _R_co]):
    """A callable that lowers only for platform ``P``."""

    @property
    def __pallas_platform__(self) -> _P_co: ...

    def __call__(self, *args: _Args.args, **kwargs: _Args.kwargs) -> _R_co: ...


class _Tagged:
    """Wrapper for callables that do not take attributes (builtins, some C objects)."""

    def __init__(self, fn: Callable[..., Any], name: Platform) -> None:
        functools.update_wrapper(self, fn)
        self.__wrapped__ = fn
        self.__pallas_platform__ = name

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self.__wrapped__(*args, **kwargs)

    @override
    def __repr__(self) -> str:
        return f"<{self.__pallas_platform__} kernel {self.__wrapped__!r}>"


def check_platform_name(name: object) -> Platform:
    """``name`` if it is a ``Platform``; otherwise a clear error listing the valid ones."""
    if name in _platforms.PLATFORMS:
        return name
    valid = ", ".join(repr(p) for p in _platforms.PLATFORMS)
    hint = ""
    if name in _platforms.PLATFORM_OF_LOWERING:  # a lowering platform of "gpu"
        hint = " (cuda and rocm are lowering platforms of the 'gpu' platform: tag with 'gpu')"
    raise UnknownPlatformError(f"unknown platform {name!r}: expected one of {valid}{hint}")


def tag(fn: Callable[_Args, _R], name: _P) -> PlatformFn[_P, _Args, _R]:
    """Mark ``fn`` as lowering only for ``name``; refuses to re-tag with another platform."""
    checked = check_platform_name(name)
    current = getattr(fn, ATTRIBUTE, None)
    if current is not None and current != checked:
        raise UnknownPlatformError(
            f"{getattr(fn, '__qualname__', fn)!r} is already tagged for platform {current!r}, "
            f"not {checked!r}: a callable lowers for one platform; use typed_pallas.dispatch to combine them"
        )
    try:
        setattr(fn, ATTRIBUTE, checked)
    except (AttributeError, TypeError):
        return _Tagged(fn, checked)  # type: ignore[return-value]
    return fn  # type: ignore[return-value]


def platform_of_callable(fn: object) -> Platform | None:
    """The platform a callable was tagged with, or ``None`` if untagged."""
    value = getattr(fn, ATTRIBUTE, None)
    return value if value in _platforms.PLATFORMS else None


class _Tagger(Generic[_P]):
    def __init__(self, name: _P) -> None:
        self._name = name

    def __call__(self, fn: Callable[_Args, _R], /) -> PlatformFn[_P, _Args, _R]:
        return tag(fn, self._name)

    @override
    def __repr__(self) -> str:
        return f"typed_pallas.platform({self._name!r})"


@overload
def platform(name: Literal["tpu"], /) -> _Tagger[TPU]: ...
@overload
def platform(name: Literal["gpu"], /) -> _Tagger[GPU]: ...
def platform(name: Platform, /) -> _Tagger[Any]:
    """Decorator: tag a kernel or wrapper with the platform it lowers for.

    !!! Example

        ```python
        @typed_pallas.platform("tpu")
        def flash_attention(q, k, v): ...
        ```

    Arguments:
        name: ``"tpu"`` or ``"gpu"``; anything else raises ``UnknownPlatformError``.

    Returns:
        A decorator whose result is typed ``PlatformFn[Literal[name], ...]`` and
        is the same function object at runtime, with ``__pallas_platform__`` set.
    """
    return _Tagger(check_platform_name(name))
