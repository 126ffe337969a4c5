"""Choosing a kernel in Python: ``pick_lowering``, ``import_backend`` and ``redispatch``.

``typed_pallas.dispatch`` chooses at lowering time and is the right tool inside
``jax.jit``. The helpers here are for code that chooses earlier or later:

* ``pick_lowering(jax_backend=None)``: the lowering platform, typed as a literal
  (``"tpu"``, ``"cuda"``, ``"rocm"``, ``"cpu"``), for code that branches at import or
  call time. It accepts what ``jax.default_backend()`` says ("cpu", "gpu", "tpu") and
  lowering names ("cuda", "rocm"); "gpu" is resolved to cuda or rocm from the installed
  GPU backend. Unknown names raise ``UnknownPlatformError`` listing the valid ones.
* ``import_backend({"tpu": "pkg.kernels_tpu", "gpu": "pkg.kernels_triton", "default":
  "pkg.reference"})``: import only the module (or ``"module:attribute"``) for
  ``jax.default_backend()``; the others are never imported (a Mosaic GPU module may not even
  import on a TPU host). ``lazy=True`` defers even that, and the query, to first attribute use.
* ``redispatch(tpu_impl, gpu_impl, reference)``: call the candidates in order and fall
  back to the next one on a platform-mismatch error only: ``PlatformMismatchError`` or a
  ``ValueError`` whose text is JAX's ``Compiler params for platform ... lowering.``
  (``_platforms.MISMATCH_REGEX``, or its backend-level twin), anywhere in the
  exception's cause chain. Every other exception, other ``ValueError``s included,
  propagates. It works at call boundaries: inside ``jax.jit`` the lowering error comes
  later, when the outer function lowers, so calling it on staged tracers raises
  ``TypeError`` pointing to ``dispatch``. JAX's own empty ``AssertionError`` is not a
  mismatch it can prove: use ``typed_pallas.pallas_call`` or ``install_backstop()`` so
  mismatches raise the ``ValueError``.

Words: a *JAX backend* (``jax_backend`` here) is what ``jax.default_backend()`` answers
("cpu", "gpu", "tpu"); a *backend* elsewhere in typed-pallas (``_platforms.Backend``) is a
Pallas params backend ("mosaic_tpu", "triton", "mosaic_gpu").

Importing this module imports no jax; the helpers import it when they need
``jax.default_backend()``.
"""

from __future__ import annotations

import functools
import importlib
import threading
from collections.abc import Callable, Mapping
from types import ModuleType
from typing import Any, Final, Generic, Literal, ParamSpec, TypeAlias, TypeVar, overload

from typing_extensions import override

from typed_pallas import _platforms
from typed_pallas._errors import PlatformMismatchError, UnknownPlatformError

__all__ = [
    "Lowering",
    "Redispatch",
    "import_backend",
    "is_platform_mismatch",
    "pick_lowering",
    "redispatch",
]

#: What ``pick_lowering`` answers: the platforms a computation lowers for on a machine.
Lowering: TypeAlias = _platforms.TargetPlatform

_P = ParamSpec("_P")
_R = TypeVar("_R")

#: Names ``pick_lowering`` accepts: ``jax.default_backend()`` values and lowering platforms.
JAX_BACKEND_NAMES: Final[tuple[str, ...]] = _platforms.PLATFORM_NAMES

#: Keys ``import_backend`` accepts.
IMPORT_KEYS: Final[tuple[str, ...]] = (*JAX_BACKEND_NAMES, "default")


def _unknown(name: object) -> UnknownPlatformError:
    valid = ", ".join(repr(n) for n in JAX_BACKEND_NAMES)
    return UnknownPlatformError(
        f"unknown JAX backend {name!r}: expected one of {valid} (or None for jax.default_backend())"
    )


def _resolve_gpu() -> Lowering:
    """cuda or rocm: the GPU platform this process's JAX was built for."""
    from typed_pallas import _jaxcompat

    try:
        name = _jaxcompat.gpu_platform()
    except Exception as exc:  # no GPU backend in this process
        raise UnknownPlatformError(
            "pick_lowering('gpu'): no GPU backend in this process, so cuda vs rocm is unknown; "
            "pass 'cuda' or 'rocm'"
        ) from exc
    if name in _platforms.LOWERINGS_OF_NAME["gpu"]:
        return name
    raise UnknownPlatformError(
        f"pick_lowering('gpu'): JAX's GPU platform is {name!r}, not cuda or rocm"
    )


@overload
def pick_lowering(jax_backend: Literal["tpu"], /) -> Literal["tpu"]: ...
@overload
def pick_lowering(jax_backend: Literal["cuda"], /) -> Literal["cuda"]: ...
@overload
def pick_lowering(jax_backend: Literal["rocm"], /) -> Literal["rocm"]: ...
@overload
def pick_lowering(jax_backend: Literal["cpu"], /) -> Literal["cpu"]: ...
@overload
def pick_lowering(jax_backend: Literal["gpu"], /) -> Literal["cuda", "rocm"]: ...
@overload
def pick_lowering(jax_backend: str | None = None, /) -> Lowering: ...
def pick_lowering(jax_backend: str | None = None, /) -> Lowering:
    """The lowering platform for ``jax_backend`` (default: ``jax.default_backend()``), as a literal.

    !!! Example

        ```python
        match typed_pallas.pick_lowering():
            case "tpu": out = tpu_kernel(x)
            case "cuda" | "rocm": out = triton_kernel(x)
            case "cpu": out = reference(x)
        ```

    Raises:
        UnknownPlatformError: an unknown name (the message lists the valid ones), or
            "gpu" in a process without a GPU backend.
    """
    if jax_backend is None:
        import jax

        jax_backend = jax.default_backend()
    if not isinstance(jax_backend, str) or jax_backend not in JAX_BACKEND_NAMES:
        raise _unknown(jax_backend)
    if jax_backend == "gpu":
        return _resolve_gpu()
    return jax_backend  # type: ignore[return-value]


def _candidates(lowering: str) -> tuple[str, ...]:
    """Table keys that serve ``lowering``, most specific first ("cuda", then "gpu", then "default")."""
    return (*_platforms.BRANCH_KEYWORDS_OF_LOWERING.get(lowering, (lowering,)), "default")


def _load(target: object) -> Any:
    if not isinstance(target, str):
        return target  # an object given directly: nothing to import
    module_name, _, attribute = target.partition(":")
    module = importlib.import_module(module_name)
    if not attribute:
        return module
    value: Any = module
    for part in attribute.split("."):
        value = getattr(value, part)
    return value


class _LazyImport(ModuleType):
    """A stand-in that imports the module chosen for the JAX backend on first attribute access."""

    def __init__(self, table: Mapping[str, object], jax_backend: str | None) -> None:
        super().__init__("typed_pallas.import_backend(lazy)")
        self.__dict__["_typed_pallas_table"] = table
        self.__dict__["_typed_pallas_jax_backend"] = jax_backend
        self.__dict__["_typed_pallas_lock"] = threading.Lock()

    def _typed_pallas_target(self) -> Any:
        with self.__dict__["_typed_pallas_lock"]:
            if "_typed_pallas_value" not in self.__dict__:
                value = import_backend(
                    self.__dict__["_typed_pallas_table"], self.__dict__["_typed_pallas_jax_backend"]
                )
                self.__dict__["_typed_pallas_value"] = value
            return self.__dict__["_typed_pallas_value"]

    @override
    def __getattr__(self, name: str) -> Any:
        return getattr(self._typed_pallas_target(), name)

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        return self._typed_pallas_target()(*args, **kwargs)

    @override
    def __repr__(self) -> str:
        state = "loaded" if "_typed_pallas_value" in self.__dict__ else "not loaded yet"
        return f"<typed_pallas.import_backend({dict(self.__dict__['_typed_pallas_table'])!r}), {state}>"


def import_backend(
    table: Mapping[str, object],
    jax_backend: str | None = None,
    *,
    lazy: bool = False,
) -> Any:
    """Import the module (or ``"module:attribute"``) that ``table`` names for the JAX backend.

    !!! Example

        ```python
        kernels = typed_pallas.import_backend({
            "tpu": "mypkg.ops.tpu",                # imported only on TPU
            "gpu": "mypkg.ops.triton",             # cuda and rocm
            "cuda": "mypkg.ops.mosaic_gpu",        # wins over "gpu" on cuda
            "default": "mypkg.ops.reference",      # cpu and anything else
        })
        flash = typed_pallas.import_backend({"tpu": "mypkg.ops.tpu:flash", "default": "mypkg.ops.ref:flash"})
        ```

    Arguments:
        table: keys among "tpu", "gpu", "cuda", "rocm", "cpu", "default"; values are module
            names, ``"module:attribute"`` strings, or objects (returned as they are).
        jax_backend: as for ``pick_lowering``; ``None`` means ``jax.default_backend()``.
        lazy: return a stand-in that picks and imports on first attribute access or call.

    Raises:
        UnknownPlatformError: an unknown key or JAX backend (listing the valid ones), or no
            entry for the JAX backend and no "default".
    """
    unknown = [k for k in table if k not in IMPORT_KEYS]
    if unknown:
        valid = ", ".join(repr(k) for k in IMPORT_KEYS)
        raise UnknownPlatformError(
            f"import_backend: unknown key(s) {', '.join(map(repr, unknown))}: expected {valid}"
        )
    if jax_backend is not None and jax_backend not in JAX_BACKEND_NAMES:
        raise _unknown(jax_backend)
    if lazy:
        return _LazyImport(dict(table), jax_backend)
    gpu_lowerings = [
        p for p in _platforms.LOWERING_PLATFORMS if p in _platforms.LOWERINGS_OF_NAME["gpu"]
    ]
    if jax_backend in _platforms.TARGET_PLATFORMS:
        lowering: str = jax_backend
    elif jax_backend == "gpu" and not any(k in table for k in gpu_lowerings):
        lowering = gpu_lowerings[0]  # "gpu" and "default" serve cuda and rocm alike
    else:
        lowering = pick_lowering(jax_backend)
    for key in _candidates(lowering):
        if key in table:
            return _load(table[key])
    have = ", ".join(repr(k) for k in table) or "nothing"
    raise UnknownPlatformError(
        f"import_backend: no entry for {lowering!r} and no 'default' (table has {have})"
    )


# --------------------------------------------------------------------------- redispatch


def is_platform_mismatch(error: BaseException) -> bool:
    """True for ``PlatformMismatchError`` or a ``ValueError`` with JAX's mismatch text, in the cause chain."""
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        if isinstance(current, PlatformMismatchError):
            return True
        if isinstance(current, ValueError) and _platforms.is_mismatch_message(str(current)):
            return True
        current = current.__cause__ or current.__context__
    return False


def _staged(args: tuple[Any, ...], kwargs: Mapping[str, Any]) -> bool:
    try:
        import jax

        from typed_pallas import _jaxcompat
    except Exception:  # pragma: no cover
        return False
    leaves = jax.tree_util.tree_leaves((args, dict(kwargs)))
    return any(_jaxcompat.is_staging_tracer(leaf) for leaf in leaves)


def _name(fn: object) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


class Redispatch(Generic[_P, _R]):
    """The callable ``redispatch`` returns; remembers the candidate that worked (``chosen``)."""

    def __init__(self, candidates: tuple[Callable[_P, _R], ...], remember: bool) -> None:
        self.candidates = candidates
        self.remember = remember
        #: index of the candidate that last ran without a mismatch (``None`` before the first call)
        self.chosen: int | None = None
        # not updated=('__dict__',): a candidate's __pallas_platform__ tag must not stick
        functools.update_wrapper(self, candidates[0], updated=())

    def reset(self) -> None:
        """Forget the remembered candidate."""
        self.chosen = None

    def __call__(self, *args: _P.args, **kwargs: _P.kwargs) -> _R:
        if len(self.candidates) > 1 and _staged(args, kwargs):
            raise TypeError(
                "typed_pallas.redispatch was called inside jax.jit (or another staging trace): the "
                "platform error appears only when the outer function lowers, too late to fall back. "
                "Call it outside jax.jit, or use typed_pallas.dispatch(tpu=..., gpu=..., default=...)."
            )
        start = self.chosen if (self.remember and self.chosen is not None) else 0
        mismatches: list[tuple[str, BaseException]] = []
        for index in range(start, len(self.candidates)):
            candidate = self.candidates[index]
            try:
                result = candidate(*args, **kwargs)
            except (ValueError, PlatformMismatchError) as error:
                if not is_platform_mismatch(error):
                    raise
                mismatches.append((_name(candidate), error))
                continue
            self.chosen = index
            return result
        last = mismatches[-1][1]
        tried = "; ".join(
            f"{name}: {str(err).splitlines()[0] if str(err) else type(err).__name__}"
            for name, err in mismatches
        )
        last.add_note(
            f"typed_pallas.redispatch: every candidate failed with a platform mismatch ({tried})"
        )
        raise last

    @override
    def __repr__(self) -> str:
        return f"typed_pallas.redispatch({', '.join(_name(c) for c in self.candidates)})"


def redispatch(*candidates: Callable[_P, _R], remember: bool = True) -> Redispatch[_P, _R]:
    """Try ``candidates`` in order; on a platform-mismatch ``ValueError`` only, fall back to the next.

    !!! Example

        ```python
        attention = typed_pallas.redispatch(jax.jit(attention_tpu), jax.jit(attention_triton), attention_ref)
        out = attention(q, k, v)   # on a GPU: the TPU kernel's mismatch is caught, Triton runs
        ```

    Arguments:
        *candidates: callables sharing one signature, most preferred first.
        remember: after a success, start later calls at the candidate that worked.

    Raises:
        the last mismatch (with a note listing every attempt) when all candidates mismatch;
        any other exception unchanged; ``TypeError`` when called inside a staging trace.
    """
    if not candidates:
        raise TypeError("typed_pallas.redispatch needs at least one candidate")
    for c in candidates:
        if not callable(c):
            raise TypeError(f"typed_pallas.redispatch: {c!r} is not callable")
    return Redispatch(tuple(candidates), remember)
