"""``typed_pallas.dispatch``: one callable, a kernel per platform, a reference fallback.

``dispatch(tpu=..., gpu=..., cuda=..., rocm=..., default=...)`` returns a callable that
chooses its branch when JAX *lowers*, not when Python runs: it is built on
``jax.lax.platform_dependent``, so one ``jax.jit`` / ``jax.export`` artifact serves
several platforms, and a single-platform lowering contains only that platform's kernel.

What it adds to ``platform_dependent``:

* **Typed branches.** ``tpu=`` takes a ``PlatformFn[TPU, ...]``, ``gpu=`` / ``cuda=`` /
  ``rocm=`` a ``PlatformFn[GPU, ...]`` (what ``typed_pallas.pallas_call`` and
  ``@typed_pallas.platform(...)`` return), ``default=`` any callable; every branch
  shares one signature and result type. A kernel tagged for the other platform is a
  static error in every checker and a ``PlatformMismatchError`` (a ``ValueError``,
  JAX's exact text) here, when ``dispatch`` is called. Untagged callables are accepted:
  when the platform cannot be known, nothing is said.
* **Multi-platform export that works with Pallas.** ``platform_dependent`` lowers each
  kept branch for *every* platform of the export, so a TPU kernel in the ``tpu`` branch
  is also lowered for cuda and cpu, and ``jax.export(..., platforms=["tpu", "cuda",
  "cpu"])`` fails ("Only interpret mode is supported on CPU backend."). Each platform
  branch is therefore wrapped in a small primitive whose lowering narrows the platforms
  to the ones that select it; on the others it emits zeros that the platform switch
  never reaches (the same scheme JAX uses for its own per-platform rules).
* **Keyword and static arguments.** Array leaves of ``*args, **kwargs`` are the operands;
  every other leaf (ints, strings, block sizes) is closed over as a constant.

What it does not do: choose a branch at Python call time (see ``typed_pallas.pick_lowering``),
catch lowering errors (see ``typed_pallas.redispatch``), or check that a kernel lowers
(see ``typed_pallas.check_lowering``). Under ``jax.grad``/``jax.jvp`` the platform
narrowing is dropped (the branch is differentiated as plain JAX code): single-platform
lowering is unaffected, multi-platform export of a derivative behaves as in JAX.

Importing this module imports jax.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
from collections.abc import Callable, Iterator, Mapping
from types import MappingProxyType
from typing import Any, Final, Generic, ParamSpec, TypeVar

import jax
import numpy as np
from typing_extensions import override

from typed_pallas import _jaxcompat, _platforms
from typed_pallas._errors import PlatformMismatchError, UnknownPlatformError
from typed_pallas._platforms import GPU, TPU
from typed_pallas._tagged import PlatformFn, platform_of_callable

__all__ = ["Dispatch", "dispatch"]

_Args = ParamSpec("_Args")
_R = TypeVar("_R")

#: the attribute that names a kernel's backend ("mosaic_gpu"...), when it has one
_BACKEND_ATTRIBUTE: Final = "__pallas_backend__"


# --------------------------------------------------------------------------- cross-lowering targets

#: Abstract devices used while tracing a branch for a platform this host does not have
#: (jax >= 0.12 reads the device kind from the abstract mesh at trace time). Empty
#: unless ``cross_lowering_targets`` is active: on a real machine nothing is touched.
_CROSS_TARGETS: contextvars.ContextVar[Mapping[str, tuple[str, str]]] = contextvars.ContextVar(
    "typed_pallas_cross_targets", default=MappingProxyType({})
)


@contextlib.contextmanager
def cross_lowering_targets(
    platforms: tuple[str, ...] = _platforms.LOWERING_PLATFORMS,
    device_kinds: Mapping[str, tuple[str, str]] | None = None,
) -> Iterator[None]:
    """Let ``dispatch`` branches trace for ``platforms`` on a host that lacks them (jax 0.12)."""
    kinds = dict(_platforms.ABSTRACT_DEVICE_KINDS)
    kinds.update(device_kinds or {})
    token = _CROSS_TARGETS.set({p: kinds[p] for p in platforms if p in kinds})
    try:
        yield
    finally:
        _CROSS_TARGETS.reset(token)


def _traced_for(
    platform: str, device: tuple[str, str] | None
) -> contextlib.AbstractContextManager[object]:
    """The cross-lowering context for a branch of ``platform``: none unless a device is given."""
    return _jaxcompat.cross_lowering(platform, device) if device else contextlib.nullcontext()


# --------------------------------------------------------------------------- the narrowing primitive


def _jaxpr_of(closed: Any) -> Any:
    return getattr(closed, "jaxpr", closed)


@functools.cache
def _on_platforms_p() -> Any:
    """The primitive ``typed_pallas_on_platforms``: run a jaxpr, lower it only for some platforms."""
    core, mlir, batching, ad = _jaxcompat.primitive_modules()
    prim = core.Primitive("typed_pallas_on_platforms")
    prim.multiple_results = True

    def impl(*args: Any, jaxpr: Any, platforms: tuple[str, ...], device: Any) -> Any:
        return core.jaxpr_as_fun(jaxpr)(*args)

    def abstract_eval(*avals: Any, jaxpr: Any, platforms: tuple[str, ...], device: Any) -> Any:
        # Plain shapes/dtypes: a branch traced under a target's abstract mesh must not
        # carry that mesh into the outer computation (jax 0.12 compares branch types).
        outs = [core.ShapedArray(a.shape, a.dtype, weak_type=a.weak_type) for a in jaxpr.out_avals]
        return outs, jaxpr.effects

    def lower_for(ctx: Any, *args: Any, jaxpr: Any, platform: str, device: Any) -> Any:
        inner = ctx.module_context.replace(platforms=(platform,))
        body = _jaxpr_of(jaxpr)
        consts = mlir.ir_consts(jaxpr.consts, [v.aval for v in body.constvars])
        with _traced_for(platform, device):
            outs, tokens = mlir.jaxpr_subcomp(
                inner,
                body,
                ctx.name_stack.extend(f"typed_pallas_{platform}"),
                ctx.tokens_in,
                consts,
                *args,
                dim_var_values=ctx.dim_var_values,
                const_lowering=ctx.const_lowering,
                outer_traceback=ctx.traceback,
            )
        ctx.set_tokens_out(tokens)
        return outs

    def unreachable(ctx: Any, *args: Any, jaxpr: Any, device: Any) -> Any:
        # Platforms that never select this branch: the platform switch never gets here.
        return [mlir.full_like_aval(ctx, 0, aval) for aval in ctx.avals_out]

    def lowering(ctx: Any, *args: Any, jaxpr: Any, platforms: tuple[str, ...], device: Any) -> Any:
        here = _jaxcompat.lowering_platforms(ctx)
        rules = {p: functools.partial(lower_for, platform=p) for p in here if p in platforms}
        return mlir.lower_per_platform(
            ctx,
            "typed_pallas.dispatch",
            rules,
            unreachable,
            jaxpr.effects,
            *args,
            jaxpr=jaxpr,
            device=device,
        )

    def batch(args: Any, dims: Any, *, jaxpr: Any, platforms: tuple[str, ...], device: Any) -> Any:
        not_mapped = getattr(batching, "not_mapped", None)
        in_axes = [None if (d is None or d is not_mapped) else d for d in dims]
        fn = jax.vmap(core.jaxpr_as_fun(jaxpr), in_axes=in_axes)
        specs = [jax.ShapeDtypeStruct(np.shape(a), a.dtype) for a in args]  # type: ignore[no-untyped-call]
        with _traced_for(platforms[0], device):
            batched = jax.make_jaxpr(fn)(*specs)
        outs = prim.bind(*args, jaxpr=batched, platforms=platforms, device=device)
        return outs, [0] * len(outs)

    def jvp(
        primals: Any, tangents: Any, *, jaxpr: Any, platforms: tuple[str, ...], device: Any
    ) -> Any:
        tangents = [ad.instantiate_zeros(t) for t in tangents]
        return jax.jvp(core.jaxpr_as_fun(jaxpr), tuple(primals), tuple(tangents))

    prim.def_impl(impl)
    prim.def_effectful_abstract_eval(abstract_eval)
    mlir.register_lowering(prim, lowering)
    batching.primitive_batchers[prim] = batch
    ad.primitive_jvps[prim] = jvp
    return prim


def _narrowed(fn: Callable[..., Any], platform: str) -> Callable[..., Any]:
    """``fn`` as a branch that lowers only for ``platform`` (flat array operands in, flat out)."""

    def branch(*operands: Any) -> Any:
        out_trees: list[Any] = []

        def flat_fn(*flat: Any) -> list[Any]:
            leaves, tree = jax.tree_util.tree_flatten(fn(*flat))
            out_trees.append(tree)
            return leaves

        specs = [jax.ShapeDtypeStruct(np.shape(x), jax.numpy.result_type(x)) for x in operands]  # type: ignore[no-untyped-call]
        device = _CROSS_TARGETS.get().get(platform)
        with _traced_for(platform, device):
            closed = jax.make_jaxpr(flat_fn)(*specs)
        outs = _on_platforms_p().bind(*operands, jaxpr=closed, platforms=(platform,), device=device)
        return jax.tree_util.tree_unflatten(out_trees[0], outs)

    return branch


# --------------------------------------------------------------------------- dispatch


def _is_operand(leaf: object) -> bool:
    return isinstance(leaf, (jax.Array, np.ndarray, np.generic, jax.core.Tracer))


def _name(fn: object) -> str:
    return getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)


def _check_branch(keyword: str, fn: object) -> None:
    if not callable(fn):
        raise TypeError(
            f"typed_pallas.dispatch: {keyword}= must be callable, got {type(fn).__name__}"
        )
    expected = _platforms.PLATFORM_OF_LOWERING[keyword]
    tagged = platform_of_callable(fn)
    if tagged is not None and tagged != expected:
        error = PlatformMismatchError(tagged, keyword)
        error.add_note(
            f"typed_pallas.dispatch({keyword}=...) got {_name(fn)!r}, a kernel tagged for "
            f"platform {tagged!r}; pass it as {'tpu' if tagged == 'tpu' else 'gpu'}= instead."
        )
        raise error
    backend: Any = getattr(fn, _BACKEND_ATTRIBUTE, None)
    if backend in _platforms.BACKENDS:
        serves = _platforms.PARAMS_BY_BACKEND[backend].lowers_on
        if keyword not in _platforms.PLATFORMS and keyword not in serves:
            error = PlatformMismatchError(backend, keyword, backend_level=True)
            error.add_note(_platforms.fix_hint(backend, keyword))
            raise error


class Dispatch(Generic[_Args, _R]):
    """The callable ``dispatch`` returns. Not a ``PlatformFn``: it serves several platforms.

    Attributes:
        branches: keyword -> callable, as given (``"tpu"``, ``"gpu"``, ``"cuda"``, ``"rocm"``).
        default: the fallback for every other platform (``None``: lowering for an
            unlisted platform fails, as in ``jax.lax.platform_dependent``).
    """

    def __init__(
        self, branches: Mapping[str, Callable[..., Any]], default: Callable[..., Any] | None
    ) -> None:
        self.branches: Mapping[str, Callable[..., Any]] = dict(branches)
        self.default = default
        first = next(iter(self.branches.values()), default)
        # name, doc and signature of the branches, but not their attributes: copying
        # __dict__ would copy a branch's __pallas_platform__ tag onto the dispatch.
        functools.update_wrapper(self, first, updated=())  # type: ignore[arg-type]
        self.__name__ = f"dispatch({', '.join(self.branches)}{', default' if default else ''})"
        self.__qualname__ = self.__name__

    def branch_for(self, lowering_platform: str) -> Callable[..., Any] | None:
        """The callable that runs when lowering for ``lowering_platform`` ("tpu", "cuda", "rocm", "cpu")."""
        for keyword in _platforms.BRANCH_KEYWORDS_OF_LOWERING.get(lowering_platform, ()):
            fn = self.branches.get(keyword)
            if fn is not None:
                return fn
        return self.default

    def __call__(self, *args: _Args.args, **kwargs: _Args.kwargs) -> _R:
        leaves, tree = jax.tree_util.tree_flatten((args, kwargs))
        positions = [i for i, leaf in enumerate(leaves) if _is_operand(leaf)]
        operands = [leaves[i] for i in positions]

        def bind(fn: Callable[..., Any]) -> Callable[..., Any]:
            def call(*values: Any) -> Any:
                full = list(leaves)
                for i, value in zip(positions, values):
                    full[i] = value
                a, kw = jax.tree_util.tree_unflatten(tree, full)
                return fn(*a, **kw)

            return call

        per_platform: dict[str, Callable[..., Any]] = {}
        for lowering in _platforms.LOWERING_PLATFORMS:
            for keyword in _platforms.BRANCH_KEYWORDS_OF_LOWERING[lowering]:
                fn = self.branches.get(keyword)
                if fn is not None:
                    per_platform[lowering] = _narrowed(bind(fn), lowering)
                    break
        default = bind(self.default) if self.default is not None else None
        result: _R = jax.lax.platform_dependent(*operands, default=default, **per_platform)
        return result

    @override
    def __repr__(self) -> str:
        parts = [f"{k}={_name(v)}" for k, v in self.branches.items()]
        if self.default is not None:
            parts.append(f"default={_name(self.default)}")
        return f"typed_pallas.dispatch({', '.join(parts)})"


def dispatch(
    *,
    tpu: PlatformFn[TPU, _Args, _R] | None = None,
    gpu: PlatformFn[GPU, _Args, _R] | None = None,
    cuda: PlatformFn[GPU, _Args, _R] | None = None,
    rocm: PlatformFn[GPU, _Args, _R] | None = None,
    default: Callable[_Args, _R] | None = None,
) -> Dispatch[_Args, _R]:
    """One callable with a kernel per platform and a reference fallback, chosen at lowering time.

    !!! Example

        ```python
        attention = typed_pallas.dispatch(
            tpu=flash_attention_tpu,      # PlatformFn[TPU, ...]
            gpu=flash_attention_triton,   # PlatformFn[GPU, ...]: cuda and rocm
            default=attention_reference,  # plain jnp: cpu and anything else
        )
        jax.export.export(jax.jit(attention), platforms=["tpu", "cuda", "cpu"])(q, k, v)
        ```

    Arguments:
        tpu: the kernel for TPU lowering; must be tagged ``"tpu"`` (or untagged).
        gpu: the kernel for both cuda and rocm; must be tagged ``"gpu"`` (or untagged).
        cuda: the kernel for cuda only (wins over ``gpu=``); a Mosaic GPU kernel goes here.
        rocm: the kernel for rocm only (wins over ``gpu=``).
        default: the fallback for every other platform (cpu included), usually a jnp reference.

    Returns:
        A ``Dispatch``: call it (under ``jax.jit``, ``jax.export``, ``jax.vmap``...) like the branches.

    Raises:
        PlatformMismatchError: a branch tagged for the other platform (a ``ValueError``,
            JAX's text, e.g. "Compiler params for platform gpu cannot be used for tpu lowering.").
        UnknownPlatformError: no branch at all.
        TypeError: a branch that is not callable.
    """
    given = {
        k: v
        for k, v in (("tpu", tpu), ("gpu", gpu), ("cuda", cuda), ("rocm", rocm))
        if v is not None
    }
    if not given and default is None:
        valid = ", ".join(f"{k}=" for k in (*_platforms.LOWERING_NAMES, "default"))
        raise UnknownPlatformError(f"typed_pallas.dispatch needs at least one branch: {valid}")
    for keyword, fn in given.items():
        _check_branch(keyword, fn)
    if default is not None and not callable(default):
        raise TypeError(
            f"typed_pallas.dispatch: default= must be callable, got {type(default).__name__}"
        )
    return Dispatch(given, default)
