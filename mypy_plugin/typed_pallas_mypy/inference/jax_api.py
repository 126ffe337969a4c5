"""JAX's API as data: what every public JAX callable does with the functions it is given.

JAX traces a function by running it; what is lowered is what Python executed plus what
JAX's transformations and control flow trace on their own. This module says, for every
public callable that takes a function (JAX's, and the ``functools``, ``itertools``,
``operator`` and builtins ones that call or keep one), what happens to each function
argument, in one table of ``ApiRow``; the context managers that change lowering are
``ContextRow``; the class decorators that return the class are ``ClassDecoratorRow``.

A row lists every **spelling** of its callable: the public names (``jax.jit``,
``jax.lax.cond``), the modules that re-export it on the way (``jax._src.lax.control_flow.cond``)
and the module that defines it (``jax._src.lax.control_flow.conditionals.cond``), which is
what mypy resolves a reference to, at both ends of the supported JAX range (``ENDS``: jax
0.10, checked at 0.10.2, and jax 0.12, checked at 0.12.0.1 and 0.12.1: ``CHECKED_AT``, from
``typed_pallas._versions.CHECKED_RELEASES``). A spelling only one end has is
in ``end_names``; a callable only one end has says so in ``ends``. The rows were found by
inspecting the installed jax at both ends (every public callable whose parameters look like
functions) and then written and checked by hand; ``tests/inference/test_jax_api.py`` proves
each row against the installed jax: every spelling resolves to the same object, and every
argument position and keyword is the real signature's.

The lookups (``row``, ``function_arguments``, ``context``, ``class_decorator``) answer
``None`` or nothing for a name the table does not have; the frozensets at the end are views
of the table for the inference engine (``KEEPS_FUNCTION``, ``TRACED_ARGUMENTS``...).

What it does not do: import jax or mypy (pure data; of typed-pallas only ``_versions``), decide what a call lowers for (the
engine does, in ``program`` and ``reader``), list the Pallas entry points' other arguments
(``entries.py``), or name the platforms (``typed_pallas._platforms``: ``platform_dependent``'s
branch keywords are whatever ``**per_platform`` receives).
"""

from __future__ import annotations

import enum
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Final, TypeVar

from typed_pallas._versions import CHECKED_RELEASES

__all__ = [
    "ENDS",
    "ApiRow",
    "Arg",
    "ClassDecoratorRow",
    "ContextRow",
    "Effect",
    "Kind",
    "Role",
    "When",
    "class_decorator",
    "context",
    "end_of",
    "function_arguments",
    "row",
]

#: The ends of the supported JAX range the table was checked at: (series, version checked).
OLD: Final = "0.10"
NEW: Final = "0.12"
ENDS: Final[tuple[str, ...]] = (OLD, NEW)
#: The releases each end was checked at: typed_pallas._versions.CHECKED_RELEASES, by series.
CHECKED_AT: Final[Mapping[str, tuple[str, ...]]] = {
    end: tuple(v for v in CHECKED_RELEASES if v == end or v.startswith(end + ".")) for end in ENDS
}
BOTH: Final[tuple[str, ...]] = ENDS


def end_of(release: tuple[int, ...]) -> str | None:
    """The end of the range a JAX release number belongs to (``(0, 12, 0, 1)`` -> "0.12"),
    or None for a release the table was not checked at."""
    series = ".".join(str(part) for part in release[:2])
    return series if series in ENDS else None


class Role(enum.Enum):
    """What a callable does with one function argument."""

    #: traced into the caller's program right away, at least once (``lax.cond``'s two
    #: branches, every ``lax.switch`` branch, loop and ``scan`` bodies, ``jax.vjp``'s fun)
    CALLS_NOW = "calls now"
    #: called right away zero or more times (once per item of an iterable or leaf of a
    #: pytree, or under a Python condition): maybe never (``jax.tree.map``'s f, ``map``)
    CALLS_EACH = "calls each"
    #: the call returns a callable that runs it when called (``jax.jit``, ``jax.vmap``,
    #: ``functools.partial``); ``result_index`` says when the callable is one item of a tuple
    KEEPS = "keeps"
    #: traced to shapes or a jaxpr, never lowered (``jax.eval_shape``, ``jax.make_jaxpr``)
    TRACES_ONLY = "traces only"
    #: lowered on its own, not as part of the caller's program, for the platforms the
    #: call's ``platforms_argument`` names (else the default backend): ``pl.lower_as_mlir``
    #: now, ``jax.export.export`` when its result is called
    LOWERS = "lowers"
    #: ``lax.platform_dependent``'s branches: the one for the lowering platform is traced
    PER_PLATFORM = "per platform"
    #: runs on the host at run time, not traced into the program (``jax.pure_callback``)
    HOST = "host"
    #: a rule run only when a transformation asks for it (``When`` says which):
    #: ``defvjp``'s fwd and bwd, ``custom_vmap.def_vmap``'s rule, ``custom_root``'s
    #: tangent solve
    RULE = "rule"
    #: a Pallas kernel's body or index map: how it lowers is ``entries.py``'s business
    KERNEL = "kernel"
    #: called by JAX itself while tracing, flattening or compiling, outside the traced
    #: program (pytree flatten functions, checkpoint policies, listeners). Not ``is_leaf``:
    #: flattening a tree calls it on the root first, then on each node, with what the
    #: traced function holds, so what it does is traced (``Role.CALLS_NOW``)
    HOOK = "hook"


class When(enum.Enum):
    """The transformation that runs a ``Role.RULE`` argument."""

    DIFFERENTIATION = "differentiation"
    BATCHING = "batching"
    TRANSPOSITION = "transposition"
    PARTITIONING = "partitioning"
    #: fused into a Pallas kernel by ``jax.experimental.pallas.fuser``
    FUSION = "fusion"


class Kind(enum.Enum):
    """What a row's callable is."""

    FUNCTION = "function"
    #: calling it builds an object; the object runs the kept function when called
    CLASS = "class"
    #: a method, called on an object (``f.defvjp(fwd, bwd)``): positions exclude ``self``
    METHOD = "method"
    #: a method decorator whose attribute calls the function (``staticmethod``)
    DESCRIPTOR = "descriptor"


@dataclass(frozen=True)
class Arg:
    """One function argument of a callable: where it is passed and what happens to it.

    ``position`` is its index among the call's positional arguments (``None``: keyword
    only); ``keyword`` is the keyword that passes it (``None``: positional only, or not
    the same at both ends). ``sequence``: a list or tuple of functions (``lax.switch``'s
    branches). ``variadic``: ``"*"`` for every positional argument from ``position`` on,
    ``"**"`` for every keyword argument the signature does not name (``keyword`` is then
    the parameter's own name, ``per_platform``). ``when``: for ``Role.RULE``, what runs it.
    For a ``configured`` row, the argument is the result's (``k(config)(f)``: ``f`` at 0).
    ``operands``: for a ``Role.CALLS_NOW`` argument, what JAX passes the function, in
    order, each ``"N"`` (the call's positional argument N as it is: a loop's initial
    carry), ``"N[]"`` (one slice of it along its leading axis: ``lax.map``'s ``xs``),
    ``"*N"`` (the call's positional arguments from N on: ``lax.cond``'s operands) or
    ``"?"`` (a value JAX makes: a loop index), or ``"=NAME"`` (the call's keyword argument
    ``NAME``, when given: ``lax.cond``'s ``operand=``); ``None`` when not said (any
    arguments).
    ``each_leaf_of``: for a ``Role.CALLS_EACH`` argument called once per leaf of a pytree,
    the position of that tree among the call's arguments (``jax.tree.map``'s ``tree``);
    its ``operands`` then may say ``"N."`` (the leaf of argument N at that place) and
    ``"*N."`` (those of the arguments from N on). ``bounds``: the positions of a loop's
    lower and upper bound (``lax.fori_loop``): when both are known and the upper is not
    above the lower, JAX lowers nothing the function does. ``reduces``: with
    ``each_leaf_of``, the function folds the tree's leaves pairwise as
    ``functools.reduce`` does (the initializer, when given, is the next positional
    argument): called once per leaf after the first, or per leaf with an initializer.
    ``each_item_of``: for a ``Role.CALLS_EACH`` argument, called once per item of the
    sequence at that position (``jnp.apply_over_axes``' ``axes``): never for an empty one.
    ``each_axis_of``: called once per axis of the array at that position (``jnp.pad``'s
    callable ``mode``): never for a 0-d array. ``combines_along``: the function combines
    slices of the array at that position along its leading axis (``lax.associative_scan``
    without ``axis``): called when that axis has two or more elements, never with fewer.
    ``placed_by``: for ``Role.KEEPS``, the keyword that says where the function runs
    (``compute_on``'s ``compute_type``): only ``"device"`` runs it with the rest of the
    program; anything else (the host's cores, a SparseCore's, or not known) lowers it
    elsewhere, as ``Role.HOST`` does.
    ``each_node_of``: called by flattening the pytree at that position, once per node from
    the root down, a node's children only when it answered false for the node
    (``is_leaf``): called at least once, on the root.
    ``read_by_python``: what the function returns is read by Python alone, never part of
    the traced program (``sorted``'s ``key`` orders items, ``is_leaf`` answers yes or no):
    what it traces is dead code, which JAX drops before lowering (Pallas kernels from
    ``typed_pallas._platforms.DEAD_KERNELS_DROPPED_FROM`` on).
    """

    position: int | None
    keyword: str | None
    role: Role
    sequence: bool = False
    variadic: str = ""
    when: When | None = None
    operands: tuple[str, ...] | None = None
    each_leaf_of: int | None = None
    bounds: tuple[int, int] | None = None
    reduces: bool = False
    each_item_of: int | None = None
    each_axis_of: int | None = None
    combines_along: int | None = None
    read_by_python: bool = False
    each_node_of: int | None = None
    placed_by: str | None = None


@dataclass(frozen=True)
class ApiRow:
    """One callable that takes a function.

    ``names``: every spelling at every end in ``ends`` (public ones first);
    ``end_names``: ``(end, spelling)`` for spellings only that end has.
    ``args``: its function arguments. ``differentiates``: the function is differentiated
    (so the ``custom_vjp`` / ``custom_jvp`` rules of what it reaches run too).
    ``transposes``: reverse mode, so the backward part of the derivative runs too (a
    ``custom_vjp``'s ``bwd`` rule). ``batches``: the function is batched (so a ``custom_vmap`` it reaches runs its
    batching rule, and its own body is only traced for its shapes, never lowered).
    ``rule_methods``: methods of the result that register rules (``defvjp``).
    ``configured``: its positional arguments configure it and its result takes the
    function (``jax.named_scope("n")(f)``, ``functools.wraps(g)(f)``, ``pl.when(c)(f)``).
    ``optional_function``: called without the function it returns a decorator that takes
    it (``jax.jit(static_argnames=...)``). ``binds``: later arguments are bound to the
    function (``functools.partial``). ``result_index``: the kept callable is this item of
    the returned tuple. ``derivative_index``: the item of the returned tuple that is a
    callable running the function's derivative later (``jax.vjp``'s pullback,
    ``jax.linearize``'s linear function): the call traces only the forward part now.
    ``derivative_transposes``: that callable runs the reverse-mode derivative (``jax.vjp``'s
    pullback, ``jax.fwd_and_bwd``'s ``bwd``: a ``custom_vjp``'s ``bwd`` rule runs).
    ``result_items``: the call returns a tuple of this many items (one more, at the end,
    when ``has_aux`` is passed true). ``returns_jaxpr``: the callable it returns gives a
    jaxpr of the function (``jax.make_jaxpr(f)(x)``); a jaxpr runs what the function
    traced when it is evaluated (``jaxpr_as_fun``, ``core.eval_jaxpr``: a row whose
    argument is a jaxpr, not a function).
    ``iterator``: the call returns an iterator that calls the function only as its
    items are taken, over the items of the argument at the function's ``each_item_of``:
    ``"map"`` yields ``f(item)``, ``"starmap"`` ``f(*item)``; ``"filter"`` keeps the items
    ``f`` finds true, ``"filterfalse"`` the false ones, ``"takewhile"`` those before the
    first false, ``"dropwhile"`` those from the first false on (``f`` not called after);
    ``"accumulate"`` yields the first item, then ``f(total, item)`` for each next one.
    ``platforms_argument``: the keyword naming the platforms a
    ``Role.LOWERS`` call lowers for. ``since_python``: the first Python that has it.
    ``replays``: the callable at ``result_index`` of the returned tuple evaluates what the
    ``Role.TRACES_ONLY`` function traced with the call's other arguments, given the values
    it closed over (``fuser.get_fusion_values(f, *args)``'s ``fn(values, *args)``).
    ``fusion_operands``: the kept function is called with each positional argument as a
    ``Fusion`` (a callable giving it) and the output fusions (``None``) last
    (``fuser.fusible``).
    ``result_binds``: what it returns for a ``Role.KEEPS`` argument binds like a function
    when it is a class attribute looked up on an instance (a function, or an object with
    ``__get__``: ``jax.jit``'s, ``functools.cache``'s); by default every row but a
    ``Kind.CLASS`` one, whose objects do not (``jax.custom_vjp``, ``jax.tree_util.Partial``),
    measured on each.
    """

    names: tuple[str, ...]
    args: tuple[Arg, ...]
    kind: Kind = Kind.FUNCTION
    differentiates: bool = False
    transposes: bool = False
    batches: bool = False
    rule_methods: tuple[str, ...] = ()
    configured: bool = False
    optional_function: bool = False
    binds: bool = False
    result_index: int | None = None
    derivative_index: int | None = None
    derivative_transposes: bool = False
    iterator: str | None = None
    result_items: int | None = None
    returns_jaxpr: bool = False
    platforms_argument: str | None = None
    ends: tuple[str, ...] = BOTH
    end_names: tuple[tuple[str, str], ...] = ()
    since_python: tuple[int, int] | None = None
    result_binds: bool | None = None
    replays: bool = False
    fusion_operands: bool = False
    note: str = ""

    def spellings(self) -> tuple[str, ...]:
        """Every spelling, at any end."""
        return self.names + tuple(name for _, name in self.end_names)

    @property
    def binds_as_method(self) -> bool:
        """``result_binds``, or its default."""
        if self.result_binds is not None:
            return self.result_binds
        return self.kind is not Kind.CLASS


class Effect(enum.Enum):
    """What a context manager changes about the lowering of the code under it."""

    #: every Pallas kernel traced under it runs in interpret mode (lowers anywhere)
    INTERPRETS = "interprets"
    #: the code under it is placed on another device or memory (its platform may change)
    PLACES = "places"
    #: nothing the platform depends on (names, eager evaluation)
    NONE = "none"


@dataclass(frozen=True)
class ContextRow:
    """A context manager (``with ctx(...):``). ``decorates``: ``@ctx(...)`` on a function
    runs the function under it (a ``contextlib.ContextDecorator``)."""

    names: tuple[str, ...]
    effect: Effect
    decorates: bool = False
    ends: tuple[str, ...] = BOTH
    end_names: tuple[tuple[str, str], ...] = ()
    note: str = ""

    def spellings(self) -> tuple[str, ...]:
        return self.names + tuple(name for _, name in self.end_names)


#: how a class decorator makes its class a pytree node (``ClassDecoratorRow.registers_node``)
NODE_METHODS: Final = "methods"
NODE_METHODS_WITH_KEYS: Final = "methods with keys"
NODE_FIELDS: Final = "fields"
NODE_STATIC: Final = "static"


@dataclass(frozen=True)
class ClassDecoratorRow:
    """A class decorator that returns the class itself (so ``C(...)`` still builds a
    ``C``). ``makes_dataclass``: the class becomes a dataclass (its fields are its
    constructor's parameters). ``registers_node``: the class becomes a pytree node, by
    ``NODE_METHODS`` (its ``tree_flatten`` gives its children and auxiliary data, its
    ``tree_unflatten`` rebuilds it), ``NODE_METHODS_WITH_KEYS`` (``tree_flatten_with_keys``
    gives (key, child) pairs), ``NODE_FIELDS`` (a dataclass: its fields are its children,
    but those marked static, ``metadata=dict(static=True)``, or given as ``meta_fields``)
    or ``NODE_STATIC`` (no children: the object itself is the auxiliary data). ``orders``:
    the comparisons the class lacks are written from the one it has and ``__eq__``
    (``functools.total_ordering``)."""

    names: tuple[str, ...]
    makes_dataclass: bool = False
    registers_node: str | None = None
    orders: bool = False
    ends: tuple[str, ...] = BOTH
    end_names: tuple[tuple[str, str], ...] = ()
    note: str = ""

    def spellings(self) -> tuple[str, ...]:
        return self.names + tuple(name for _, name in self.end_names)


#: Every callable that takes a function, by group.
ROWS: Final[tuple[ApiRow, ...]] = (
    # -------------------- transformations
    ApiRow(
        names=("jax.jit", "jax._src.api.jit"),
        args=(Arg(0, None, Role.KEEPS),),
        optional_function=True,
    ),
    ApiRow(
        names=("jax.experimental.pjit.pjit", "jax._src.pjit.pjit"),
        args=(Arg(0, "fun", Role.KEEPS),),
        note="deprecated alias of jax.jit",
    ),
    ApiRow(
        names=("jax.vmap", "jax._src.api.vmap"), args=(Arg(0, "fun", Role.KEEPS),), batches=True
    ),
    ApiRow(names=("jax.pmap", "jax._src.pmap.pmap"), args=(Arg(0, "fun", Role.KEEPS),)),
    ApiRow(
        names=("jax.grad", "jax._src.api.grad"),
        args=(Arg(0, "fun", Role.KEEPS),),
        differentiates=True,
        transposes=True,
    ),
    ApiRow(
        names=("jax.value_and_grad", "jax._src.api.value_and_grad"),
        args=(Arg(0, "fun", Role.KEEPS),),
        differentiates=True,
        transposes=True,
    ),
    ApiRow(
        names=("jax.jacfwd", "jax._src.api.jacfwd"),
        args=(Arg(0, "fun", Role.KEEPS),),
        differentiates=True,
    ),
    ApiRow(
        names=("jax.jacrev", "jax._src.api.jacrev"),
        args=(Arg(0, "fun", Role.KEEPS),),
        differentiates=True,
        transposes=True,
    ),
    ApiRow(
        names=("jax.jacobian", "jax._src.api.jacobian"),
        args=(Arg(0, "fun", Role.KEEPS),),
        differentiates=True,
        transposes=True,
    ),
    ApiRow(
        names=("jax.hessian", "jax._src.api.hessian"),
        args=(Arg(0, "fun", Role.KEEPS),),
        differentiates=True,
        transposes=True,
    ),
    ApiRow(
        names=("jax.vjp", "jax._src.api.vjp"),
        args=(Arg(0, "fun", Role.CALLS_NOW),),
        differentiates=True,
        derivative_index=1,
        derivative_transposes=True,
        result_items=2,
        note="also returns a callable that runs fun's derivative",
    ),
    ApiRow(
        names=("jax.jvp", "jax._src.api.jvp"),
        args=(Arg(0, "fun", Role.CALLS_NOW),),
        differentiates=True,
        note="also returns a callable that runs fun's derivative",
    ),
    ApiRow(
        names=("jax.linearize", "jax._src.api.linearize"),
        args=(Arg(0, "fun", Role.CALLS_NOW),),
        differentiates=True,
        derivative_index=1,
        result_items=2,
        note="also returns a callable that runs fun's derivative",
    ),
    ApiRow(
        names=("jax.fwd_and_bwd", "jax._src.api.fwd_and_bwd"),
        args=(Arg(0, "fun", Role.KEEPS),),
        differentiates=True,
        result_index=0,
        derivative_index=1,
        derivative_transposes=True,
        result_items=2,
        note="returns (fwd, bwd); bwd runs fun's derivative",
    ),
    ApiRow(
        names=("jax.linear_transpose", "jax._src.api.linear_transpose"),
        args=(Arg(0, "fun", Role.TRACES_ONLY),),
        note="traces fun now; the returned callable runs its transpose",
    ),
    ApiRow(
        names=("jax.checkpoint", "jax._src.ad_checkpoint.checkpoint"),
        args=(Arg(0, "fun", Role.KEEPS), Arg(None, "policy", Role.HOOK)),
    ),
    ApiRow(
        names=("jax.remat", "jax._src.ad_checkpoint.remat"),
        args=(Arg(0, "fun", Role.KEEPS), Arg(None, "policy", Role.HOOK)),
    ),
    ApiRow(names=("jax.named_call", "jax._src.api.named_call"), args=(Arg(0, "fun", Role.KEEPS),)),
    ApiRow(
        names=("jax.eval_shape", "jax._src.api.eval_shape"), args=(Arg(0, "fun", Role.TRACES_ONLY),)
    ),
    ApiRow(
        names=("jax.make_jaxpr", "jax._src.api.make_jaxpr"),
        args=(Arg(0, "fun", Role.TRACES_ONLY),),
        returns_jaxpr=True,
    ),
    ApiRow(
        names=("jax.extend.core.jaxpr_as_fun", "jax._src.core.jaxpr_as_fun"),
        args=(Arg(0, "closed_jaxpr", Role.KEEPS),),
        binds=True,
        note="closed_jaxpr is a jaxpr (make_jaxpr's); curried: later arguments are bound",
    ),
    ApiRow(
        names=("jax.core.eval_jaxpr", "jax._src.core.eval_jaxpr"),
        args=(Arg(0, "jaxpr", Role.CALLS_NOW),),
        note="jaxpr is a jaxpr (a closed jaxpr's .jaxpr): evaluated now",
    ),
    ApiRow(
        names=(
            "jax.ad_checkpoint.print_saved_residuals",
            "jax._src.ad_checkpoint.print_saved_residuals",
        ),
        args=(Arg(0, "f", Role.TRACES_ONLY),),
    ),
    ApiRow(
        names=("jax.shard_map", "jax._src.shard_map.shard_map"),
        args=(Arg(0, None, Role.KEEPS),),
        optional_function=True,
    ),
    ApiRow(
        names=("jax.smap", "jax._src.shard_map.smap"),
        args=(Arg(0, None, Role.KEEPS),),
        optional_function=True,
    ),
    ApiRow(
        names=("jax.experimental.shard_map.shard_map",),
        args=(Arg(0, "f", Role.KEEPS),),
        note="deprecated alias of jax.shard_map",
    ),
    ApiRow(
        names=("jax.sharding.auto_axes", "jax._src.pjit.auto_axes"),
        args=(Arg(0, None, Role.KEEPS),),
        optional_function=True,
    ),
    ApiRow(
        names=("jax.sharding.explicit_axes", "jax._src.pjit.explicit_axes"),
        args=(Arg(0, None, Role.KEEPS),),
        optional_function=True,
    ),
    ApiRow(
        names=("jax.experimental.layout.explicit_layout", "jax._src.pjit.explicit_layout"),
        args=(Arg(0, None, Role.KEEPS),),
        optional_function=True,
        ends=(NEW,),
    ),
    ApiRow(
        names=("jax.experimental.checkify.checkify", "jax._src.checkify.checkify"),
        args=(Arg(0, "f", Role.KEEPS),),
    ),
    ApiRow(
        names=("jax.experimental.compute_on.compute_on", "jax._src.compute_on.compute_on"),
        args=(Arg(0, "f", Role.KEEPS, placed_by="compute_type"),),
        optional_function=True,
        ends=(NEW,),
        note="runs f on the compute_type's cores (the host's, a SparseCore's), lowered for them; jax 0.10's compute_on is a context manager (CONTEXTS)",
    ),
    ApiRow(
        names=("jax.experimental.compute_on.compute_on2", "jax._src.compute_on.compute_on2"),
        args=(Arg(0, "f", Role.KEEPS, placed_by="compute_type"),),
        optional_function=True,
        ends=(OLD,),
        note="as jax 0.12's compute_on",
    ),
    ApiRow(
        names=("jax.experimental.scheduling_groups.xla_metadata_call",),
        args=(Arg(0, None, Role.KEEPS),),
        optional_function=True,
        end_names=(
            (NEW, "jax.experimental.xla_metadata.xla_metadata_call"),
            (NEW, "jax._src.xla_metadata.xla_metadata_call"),
        ),
    ),
    ApiRow(
        names=(
            "jax.experimental.xla_metadata.xla_metadata_call2",
            "jax._src.xla_metadata.xla_metadata_call2",
        ),
        args=(Arg(0, None, Role.KEEPS),),
        optional_function=True,
        ends=(NEW,),
    ),
    ApiRow(
        names=("jax.experimental.scheduling_groups.scheduling_group",),
        args=(Arg(0, None, Role.KEEPS),),
        configured=True,
    ),
    ApiRow(
        names=("jax.experimental.overlap.program_order", "jax._src.program_order.program_order"),
        args=(Arg(0, "f", Role.KEEPS),),
        optional_function=True,
        ends=(NEW,),
    ),
    ApiRow(
        names=("jax.experimental.jet.jet",),
        args=(Arg(0, "fun", Role.CALLS_NOW),),
        note="Taylor-mode: custom_jvp / custom_vjp rules do not run, their primal does",
    ),
    ApiRow(
        names=("jax.experimental.sparse.sparsify", "jax.experimental.sparse.transform.sparsify"),
        args=(Arg(0, "f", Role.KEEPS),),
    ),
    ApiRow(
        names=("jax.experimental.sparse.grad", "jax.experimental.sparse.ad.grad"),
        args=(Arg(0, "fun", Role.KEEPS),),
        differentiates=True,
    ),
    ApiRow(
        names=(
            "jax.experimental.sparse.value_and_grad",
            "jax.experimental.sparse.ad.value_and_grad",
        ),
        args=(Arg(0, "fun", Role.KEEPS),),
        differentiates=True,
    ),
    ApiRow(
        names=("jax.experimental.sparse.jacfwd", "jax.experimental.sparse.ad.jacfwd"),
        args=(Arg(0, "fun", Role.KEEPS),),
        differentiates=True,
    ),
    ApiRow(
        names=("jax.experimental.sparse.jacrev", "jax.experimental.sparse.ad.jacrev"),
        args=(Arg(0, "fun", Role.KEEPS),),
        differentiates=True,
    ),
    ApiRow(
        names=("jax.experimental.sparse.jacobian", "jax.experimental.sparse.ad.jacobian"),
        args=(Arg(0, "fun", Role.KEEPS),),
        differentiates=True,
    ),
    ApiRow(
        names=("jax.experimental.roofline.roofline", "jax.experimental.roofline.roofline.roofline"),
        args=(Arg(0, "f", Role.TRACES_ONLY),),
    ),
    ApiRow(
        names=(
            "jax.experimental.roofline.roofline_and_grad",
            "jax.experimental.roofline.roofline.roofline_and_grad",
        ),
        args=(Arg(0, "f", Role.TRACES_ONLY),),
    ),
    ApiRow(
        names=("jax.profiler.annotate_function", "jax._src.profiler.annotate_function"),
        args=(Arg(0, "func", Role.KEEPS),),
    ),
    ApiRow(
        names=("jax.export.export", "jax._src.export._export.export"),
        args=(Arg(0, "fun_jit", Role.LOWERS),),
        platforms_argument="platforms",
        note="lowers when its result is called, for platforms= (else the default backend)",
    ),
    ApiRow(
        names=("jax.test_util.check_grads", "jax._src.public_test_util.check_grads"),
        args=(Arg(0, "f", Role.CALLS_NOW),),
        differentiates=True,
    ),
    ApiRow(
        names=("jax.test_util.check_jvp", "jax._src.public_test_util.check_jvp"),
        args=(Arg(0, "f", Role.CALLS_NOW), Arg(1, "f_jvp", Role.CALLS_NOW)),
    ),
    ApiRow(
        names=("jax.test_util.check_vjp", "jax._src.public_test_util.check_vjp"),
        args=(Arg(0, "f", Role.CALLS_NOW), Arg(1, "f_vjp", Role.CALLS_NOW)),
    ),
    # -------------------- custom rules
    ApiRow(
        names=(
            "jax.custom_vjp",
            "jax._src.custom_derivatives.custom_vjp",
            "jax.custom_derivatives.custom_vjp",
        ),
        args=(Arg(0, "fun", Role.KEEPS),),
        kind=Kind.CLASS,
        rule_methods=("defvjp",),
        note="calling it runs fun (its primal)",
    ),
    ApiRow(
        names=(
            "jax.custom_vjp.defvjp",
            "jax._src.custom_derivatives.custom_vjp.defvjp",
            "jax.custom_derivatives.custom_vjp.defvjp",
        ),
        args=(
            Arg(0, "fwd", Role.RULE, when=When.DIFFERENTIATION),
            Arg(1, "bwd", Role.RULE, when=When.DIFFERENTIATION),
        ),
        kind=Kind.METHOD,
    ),
    ApiRow(
        names=(
            "jax.custom_jvp",
            "jax._src.custom_derivatives.custom_jvp",
            "jax.custom_derivatives.custom_jvp",
        ),
        args=(Arg(0, "fun", Role.KEEPS),),
        kind=Kind.CLASS,
        rule_methods=("defjvp", "defjvps"),
        note="calling it runs fun (its primal)",
    ),
    ApiRow(
        names=(
            "jax.custom_jvp.defjvp",
            "jax._src.custom_derivatives.custom_jvp.defjvp",
            "jax.custom_derivatives.custom_jvp.defjvp",
        ),
        args=(Arg(0, "jvp", Role.RULE, when=When.DIFFERENTIATION),),
        kind=Kind.METHOD,
        note="returns jvp, so it works as a decorator",
    ),
    ApiRow(
        names=(
            "jax.custom_jvp.defjvps",
            "jax._src.custom_derivatives.custom_jvp.defjvps",
            "jax.custom_derivatives.custom_jvp.defjvps",
        ),
        args=(Arg(0, "jvps", Role.RULE, variadic="*", when=When.DIFFERENTIATION),),
        kind=Kind.METHOD,
    ),
    ApiRow(
        names=(
            "jax.custom_gradient",
            "jax._src.custom_derivatives.custom_gradient",
            "jax.custom_derivatives.custom_gradient",
        ),
        args=(Arg(0, "fun", Role.KEEPS),),
        ends=(OLD,),
        note="fun returns (value, vjp function): the vjp function is its rule",
    ),
    ApiRow(
        names=(
            "jax.custom_gradient",
            "jax._src.custom_derivatives.custom_gradient",
            "jax.custom_derivatives.custom_gradient",
        ),
        args=(Arg(0, "fun", Role.KEEPS),),
        optional_function=True,
        ends=(NEW,),
        note="fun returns (value, vjp function): the vjp function is its rule; custom_gradient(remat=True)(fun)",
    ),
    ApiRow(
        names=(
            "jax.closure_convert",
            "jax._src.custom_derivatives.closure_convert",
            "jax.custom_derivatives.closure_convert",
        ),
        args=(Arg(0, "fun", Role.KEEPS),),
        result_index=0,
        result_items=2,
        note="traces fun now; returns (closed function, constants)",
    ),
    ApiRow(
        names=("jax.custom_derivatives.linear_call", "jax._src.custom_derivatives.linear_call"),
        args=(
            Arg(0, "fun", Role.CALLS_NOW),
            Arg(1, "fun_transpose", Role.RULE, when=When.TRANSPOSITION),
        ),
    ),
    ApiRow(
        names=("jax.custom_batching.custom_vmap", "jax._src.custom_batching.custom_vmap"),
        args=(Arg(0, "fun", Role.KEEPS),),
        kind=Kind.CLASS,
        rule_methods=("def_vmap",),
    ),
    ApiRow(
        names=(
            "jax.custom_batching.custom_vmap.def_vmap",
            "jax._src.custom_batching.custom_vmap.def_vmap",
        ),
        args=(Arg(0, "vmap_rule", Role.RULE, when=When.BATCHING),),
        kind=Kind.METHOD,
        note="returns vmap_rule, so it works as a decorator",
    ),
    ApiRow(
        names=("jax.custom_batching.sequential_vmap", "jax._src.custom_batching.sequential_vmap"),
        args=(Arg(0, "f", Role.KEEPS),),
    ),
    ApiRow(
        names=(
            "jax.experimental.custom_partitioning.custom_partitioning",
            "jax._src.custom_partitioning.custom_partitioning",
        ),
        args=(Arg(0, "fun", Role.KEEPS),),
        kind=Kind.CLASS,
        rule_methods=("def_partition",),
    ),
    ApiRow(
        names=(
            "jax.experimental.custom_partitioning.custom_partitioning.def_partition",
            "jax._src.custom_partitioning.custom_partitioning.def_partition",
        ),
        args=(
            Arg(0, "partition", Role.RULE, when=When.PARTITIONING),
            Arg(1, "infer_sharding_from_operands", Role.HOOK),
            Arg(2, "propagate_user_sharding", Role.HOOK),
        ),
        kind=Kind.METHOD,
        note="partition returns the function lowered per shard",
    ),
    # -------------------- callbacks
    ApiRow(
        names=("jax.pure_callback", "jax._src.callback.pure_callback"),
        args=(Arg(0, "callback", Role.HOST),),
    ),
    ApiRow(
        names=("jax.experimental.io_callback", "jax._src.callback.io_callback"),
        args=(Arg(0, "callback", Role.HOST),),
    ),
    ApiRow(
        names=("jax.debug.callback", "jax._src.debugging.debug_callback"),
        args=(Arg(0, "callback", Role.HOST),),
        optional_function=True,
    ),
    ApiRow(
        names=("jax.debug.inspect_array_sharding", "jax._src.debugging.inspect_array_sharding"),
        args=(Arg(None, "callback", Role.HOOK),),
        note="called at compile time with the sharding",
    ),
    ApiRow(
        names=(
            "jax.experimental.buffer_callback.buffer_callback",
            "jax._src.buffer_callback.buffer_callback",
        ),
        args=(Arg(0, "callback", Role.HOST),),
    ),
    ApiRow(
        names=("jax.make_array_from_callback", "jax._src.array.make_array_from_callback"),
        args=(Arg(2, "data_callback", Role.HOST),),
    ),
    ApiRow(
        names=(
            "jax.experimental.colocated_python.colocated_python",
            "jax.experimental.colocated_python.api.colocated_python",
        ),
        args=(Arg(0, "fun", Role.HOST),),
        note="returns a callable that runs fun on the colocated CPU hosts",
    ),
    ApiRow(
        names=(
            "jax.monitoring.register_event_listener",
            "jax._src.monitoring.register_event_listener",
        ),
        args=(Arg(0, "callback", Role.HOOK),),
    ),
    ApiRow(
        names=(
            "jax.monitoring.register_event_duration_secs_listener",
            "jax._src.monitoring.register_event_duration_secs_listener",
        ),
        args=(Arg(0, "callback", Role.HOOK),),
    ),
    ApiRow(
        names=(
            "jax.monitoring.register_event_time_span_listener",
            "jax._src.monitoring.register_event_time_span_listener",
        ),
        args=(Arg(0, "callback", Role.HOOK),),
    ),
    ApiRow(
        names=(
            "jax.monitoring.register_scalar_listener",
            "jax._src.monitoring.register_scalar_listener",
        ),
        args=(Arg(0, "callback", Role.HOOK),),
    ),
    ApiRow(
        names=(
            "jax.export.register_pytree_node_serialization",
            "jax._src.export._export.register_pytree_node_serialization",
        ),
        args=(
            Arg(None, "serialize_auxdata", Role.HOOK),
            Arg(None, "deserialize_auxdata", Role.HOOK),
        ),
    ),
    # -------------------- lax
    ApiRow(
        names=(
            "jax.lax.cond",
            "jax._src.lax.control_flow.cond",
            "jax._src.lax.control_flow.conditionals.cond",
        ),
        args=(
            Arg(1, "true_fun", Role.CALLS_NOW, operands=("*3", "=operand")),
            Arg(2, "false_fun", Role.CALLS_NOW, operands=("*3", "=operand")),
        ),
    ),
    ApiRow(
        names=(
            "jax.lax.switch",
            "jax._src.lax.control_flow.switch",
            "jax._src.lax.control_flow.conditionals.switch",
        ),
        args=(Arg(1, "branches", Role.CALLS_NOW, sequence=True, operands=("*2",)),),
    ),
    ApiRow(
        names=(
            "jax.lax.fori_loop",
            "jax._src.lax.control_flow.fori_loop",
            "jax._src.lax.control_flow.loops.fori_loop",
        ),
        args=(Arg(2, "body_fun", Role.CALLS_NOW, operands=("?", "3"), bounds=(0, 1)),),
    ),
    ApiRow(
        names=(
            "jax.lax.while_loop",
            "jax._src.lax.control_flow.while_loop",
            "jax._src.lax.control_flow.loops.while_loop",
        ),
        args=(
            Arg(0, "cond_fun", Role.CALLS_NOW, operands=("2",)),
            Arg(1, "body_fun", Role.CALLS_NOW, operands=("2",)),
        ),
    ),
    ApiRow(
        names=(
            "jax.lax.scan",
            "jax._src.lax.control_flow.scan",
            "jax._src.lax.control_flow.loops.scan",
        ),
        args=(Arg(0, "f", Role.CALLS_NOW, operands=("1", "2[]")),),
    ),
    ApiRow(
        names=(
            "jax.lax.map",
            "jax._src.lax.control_flow.map",
            "jax._src.lax.control_flow.loops.map",
        ),
        args=(Arg(0, "f", Role.CALLS_NOW, operands=("1[]",)),),
    ),
    ApiRow(
        names=(
            "jax.lax.associative_scan",
            "jax._src.lax.control_flow.associative_scan",
            "jax._src.lax.control_flow.loops.associative_scan",
        ),
        args=(Arg(0, "fn", Role.CALLS_EACH, combines_along=1),),
        note="fn is not called when the scanned axis has fewer than 2 elements",
    ),
    ApiRow(
        names=(
            "jax.lax.custom_root",
            "jax._src.lax.control_flow.custom_root",
            "jax._src.lax.control_flow.solves.custom_root",
        ),
        args=(
            Arg(0, "f", Role.RULE, when=When.DIFFERENTIATION),
            Arg(2, "solve", Role.CALLS_NOW, operands=("?", "1")),
            Arg(3, "tangent_solve", Role.RULE, when=When.DIFFERENTIATION),
        ),
        note="solve(f, initial_guess) runs now; f runs where solve calls it",
    ),
    ApiRow(
        names=(
            "jax.lax.custom_linear_solve",
            "jax._src.lax.control_flow.custom_linear_solve",
            "jax._src.lax.control_flow.solves.custom_linear_solve",
        ),
        args=(
            Arg(0, "matvec", Role.RULE, when=When.DIFFERENTIATION),
            Arg(2, "solve", Role.CALLS_NOW, operands=("?", "1")),
            Arg(3, "transpose_solve", Role.RULE, when=When.TRANSPOSITION),
        ),
        note="solve(matvec, b) runs now; matvec runs where solve calls it",
    ),
    ApiRow(
        names=(
            "jax.lax.platform_dependent",
            "jax._src.lax.control_flow.platform_dependent",
            "jax._src.lax.control_flow.conditionals.platform_dependent",
        ),
        args=(
            Arg(None, "default", Role.PER_PLATFORM),
            Arg(None, "per_platform", Role.PER_PLATFORM, variadic="**"),
        ),
    ),
    ApiRow(
        names=("jax.lax.reduce", "jax._src.lax.lax.reduce"),
        args=(Arg(2, "computation", Role.CALLS_NOW),),
    ),
    ApiRow(
        names=("jax.lax.reduce_window", "jax._src.lax.windowed_reductions.reduce_window"),
        args=(Arg(2, "computation", Role.CALLS_NOW),),
    ),
    ApiRow(
        names=("jax.lax.scatter_apply", "jax._src.lax.slicing.scatter_apply"),
        args=(Arg(2, "func", Role.CALLS_NOW),),
    ),
    ApiRow(
        names=("jax.lax.composite", "jax._src.lax.lax.composite"),
        args=(Arg(0, "decomposition", Role.KEEPS),),
    ),
    # -------------------- numpy
    ApiRow(
        names=("jax.numpy.vectorize", "jax._src.numpy.vectorize.vectorize"),
        args=(Arg(0, "pyfunc", Role.KEEPS),),
    ),
    ApiRow(
        names=("jax.numpy.frompyfunc", "jax._src.numpy.ufunc_api.frompyfunc"),
        args=(Arg(0, None, Role.KEEPS),),
    ),
    ApiRow(
        names=("jax.numpy.ufunc", "jax._src.numpy.ufunc_api.ufunc"),
        args=(Arg(0, None, Role.KEEPS),),
        kind=Kind.CLASS,
    ),
    ApiRow(
        names=("jax._src.numpy.array_methods._IndexUpdateRef.apply",),
        args=(Arg(0, "func", Role.CALLS_NOW),),
        kind=Kind.METHOD,
        note="x.at[index].apply(func): the evaluator reads an array's .at and .at[...] as this",
    ),
    ApiRow(
        names=("jax.numpy.piecewise", "jax._src.numpy.lax_numpy.piecewise"),
        args=(Arg(2, "funclist", Role.CALLS_NOW, sequence=True),),
        note="every callable of funclist is traced (lax.switch); others are constants",
    ),
    ApiRow(
        names=("jax.numpy.apply_along_axis", "jax._src.numpy.lax_numpy.apply_along_axis"),
        args=(Arg(0, "func1d", Role.CALLS_NOW),),
    ),
    ApiRow(
        names=("jax.numpy.apply_over_axes", "jax._src.numpy.lax_numpy.apply_over_axes"),
        args=(Arg(0, "func", Role.CALLS_EACH, each_item_of=2),),
        note="once per axis",
    ),
    ApiRow(
        names=("jax.numpy.fromfunction", "jax._src.numpy.lax_numpy.fromfunction"),
        args=(Arg(0, "function", Role.CALLS_NOW),),
    ),
    ApiRow(
        names=("jax.numpy.mask_indices", "jax._src.numpy.lax_numpy.mask_indices"),
        args=(Arg(1, "mask_func", Role.CALLS_NOW),),
    ),
    ApiRow(
        names=("jax.numpy.pad", "jax._src.numpy.lax_numpy.pad"),
        args=(Arg(2, "mode", Role.CALLS_EACH, each_axis_of=0),),
        note="when mode is callable: once per axis",
    ),
    ApiRow(
        names=("jax.scipy.optimize.minimize", "jax._src.scipy.optimize.minimize.minimize"),
        args=(Arg(0, "fun", Role.CALLS_NOW),),
        differentiates=True,
    ),
    ApiRow(
        names=("jax.scipy.linalg.funm", "jax._src.third_party.scipy.linalg.funm"),
        args=(Arg(1, "func", Role.CALLS_NOW),),
    ),
    ApiRow(names=("jax.experimental.ode.odeint",), args=(Arg(0, "func", Role.CALLS_NOW),)),
    # -------------------- pytrees
    ApiRow(
        names=("jax.tree.map", "jax._src.tree.map"),
        args=(
            Arg(0, "f", Role.CALLS_EACH, operands=("1.", "*2."), each_leaf_of=1),
            Arg(None, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=1),
        ),
        note="f: once per leaf",
    ),
    ApiRow(
        names=("jax.tree.map_with_path", "jax._src.tree.map_with_path"),
        args=(
            Arg(0, "f", Role.CALLS_EACH, operands=("?", "1.", "*2."), each_leaf_of=1),
            Arg(None, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=1),
        ),
        note="f: once per leaf",
    ),
    ApiRow(
        names=("jax.tree_util.tree_map", "jax._src.tree_util.tree_map"),
        args=(
            Arg(0, "f", Role.CALLS_EACH, operands=("1.", "*2."), each_leaf_of=1),
            Arg(None, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=1),
        ),
        note="f: once per leaf",
    ),
    ApiRow(
        names=("jax.tree_util.tree_map_with_path", "jax._src.tree_util.tree_map_with_path"),
        args=(
            Arg(0, "f", Role.CALLS_EACH, operands=("?", "1.", "*2."), each_leaf_of=1),
            Arg(None, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=1),
        ),
        note="f: once per leaf",
    ),
    ApiRow(
        names=("jax.tree.reduce", "jax._src.tree.reduce"),
        args=(
            Arg(0, "function", Role.CALLS_EACH, each_leaf_of=1, reduces=True),
            Arg(3, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=1),
        ),
    ),
    ApiRow(
        names=("jax.tree_util.tree_reduce", "jax._src.tree_util.tree_reduce"),
        args=(
            Arg(0, "function", Role.CALLS_EACH, each_leaf_of=1, reduces=True),
            Arg(3, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=1),
        ),
    ),
    ApiRow(
        names=("jax.tree.reduce_associative", "jax._src.tree.reduce_associative"),
        args=(
            Arg(0, "operation", Role.CALLS_EACH, each_leaf_of=1, reduces=True),
            Arg(None, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=1),
        ),
    ),
    ApiRow(
        names=(
            "jax.tree_util.tree_reduce_associative",
            "jax._src.tree_util.tree_reduce_associative",
        ),
        args=(
            Arg(0, "operation", Role.CALLS_EACH, each_leaf_of=1, reduces=True),
            Arg(None, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=1),
        ),
    ),
    ApiRow(
        names=("jax.tree.all", "jax._src.tree.all"),
        args=(Arg(None, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=0),),
    ),
    ApiRow(
        names=("jax.tree_util.tree_all", "jax._src.tree_util.tree_all"),
        args=(Arg(None, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=0),),
    ),
    ApiRow(
        names=("jax.tree.flatten", "jax._src.tree.flatten"),
        args=(Arg(1, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=0),),
    ),
    ApiRow(
        names=("jax.tree_util.tree_flatten", "jax._src.tree_util.tree_flatten"),
        args=(Arg(1, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=0),),
    ),
    ApiRow(
        names=("jax.tree.flatten_with_path", "jax._src.tree.flatten_with_path"),
        args=(Arg(1, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=0),),
    ),
    ApiRow(
        names=("jax.tree_util.tree_flatten_with_path", "jax._src.tree_util.tree_flatten_with_path"),
        args=(Arg(1, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=0),),
    ),
    ApiRow(
        names=("jax.tree.leaves", "jax._src.tree.leaves"),
        args=(Arg(1, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=0),),
    ),
    ApiRow(
        names=("jax.tree_util.tree_leaves", "jax._src.tree_util.tree_leaves"),
        args=(Arg(1, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=0),),
    ),
    ApiRow(
        names=("jax.tree.leaves_with_path", "jax._src.tree.leaves_with_path"),
        args=(Arg(1, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=0),),
    ),
    ApiRow(
        names=("jax.tree_util.tree_leaves_with_path", "jax._src.tree_util.tree_leaves_with_path"),
        args=(Arg(1, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=0),),
    ),
    ApiRow(
        names=("jax.tree.structure", "jax._src.tree.structure"),
        args=(Arg(1, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=0),),
    ),
    ApiRow(
        names=("jax.tree_util.tree_structure", "jax._src.tree_util.tree_structure"),
        args=(Arg(1, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=0),),
    ),
    ApiRow(
        names=("jax.tree.broadcast", "jax._src.tree.broadcast"),
        args=(Arg(2, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=0),),
    ),
    ApiRow(
        names=("jax.tree_util.tree_broadcast", "jax._src.tree_util.tree_broadcast"),
        args=(Arg(2, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=0),),
    ),
    ApiRow(
        names=("jax.tree_util.all_leaves", "jax._src.tree_util.all_leaves"),
        args=(Arg(1, "is_leaf", Role.CALLS_NOW, read_by_python=True, each_node_of=0),),
        note="is_leaf: flattening list(iterable), from that list down",
    ),
    ApiRow(
        names=("jax.tree_util.Partial", "jax._src.tree_util.Partial"),
        args=(Arg(0, "func", Role.KEEPS),),
        kind=Kind.CLASS,
        binds=True,
    ),
    ApiRow(
        names=("jax.tree_util.register_pytree_node", "jax._src.tree_util.register_pytree_node"),
        args=(
            Arg(1, "flatten_func", Role.HOOK),
            Arg(2, "unflatten_func", Role.HOOK),
            Arg(3, "flatten_with_keys_func", Role.HOOK),
        ),
    ),
    ApiRow(
        names=(
            "jax.tree_util.register_pytree_with_keys",
            "jax._src.tree_util.register_pytree_with_keys",
        ),
        args=(
            Arg(1, "flatten_with_keys", Role.HOOK),
            Arg(2, "unflatten_func", Role.HOOK),
            Arg(3, "flatten_func", Role.HOOK),
        ),
    ),
    # -------------------- pallas
    ApiRow(
        names=("jax.experimental.pallas.pallas_call", "jax._src.pallas.pallas_call.pallas_call"),
        args=(Arg(0, "kernel", Role.KERNEL),),
        note="the kernel runs when the result is called (entries.py)",
    ),
    ApiRow(
        names=("jax.experimental.pallas.kernel", "jax._src.pallas.helpers.kernel"),
        args=(Arg(0, "body", Role.KERNEL),),
        optional_function=True,
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.mosaic_gpu.kernel",
            "jax._src.pallas.mosaic_gpu.core.kernel",
        ),
        args=(Arg(0, "body", Role.KERNEL),),
        optional_function=True,
    ),
    ApiRow(
        names=("jax.experimental.pallas.core_map", "jax._src.pallas.core.core_map"),
        args=(Arg(0, None, Role.KERNEL),),
        configured=True,
        note="the decorated body runs now, as a kernel",
    ),
    ApiRow(
        names=("jax.experimental.pallas.BlockSpec", "jax._src.pallas.core.BlockSpec"),
        args=(Arg(1, "index_map", Role.KERNEL),),
        kind=Kind.CLASS,
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.mosaic_gpu.BlockSpec",
            "jax._src.pallas.mosaic_gpu.core.BlockSpec",
        ),
        args=(Arg(1, "index_map", Role.KERNEL),),
        kind=Kind.CLASS,
    ),
    ApiRow(
        names=("jax.experimental.pallas.when", "jax._src.pallas.helpers.when"),
        args=(Arg(0, None, Role.CALLS_EACH),),
        configured=True,
        note="a Python bool condition calls it only when true; an array condition traces it (lax.cond)",
    ),
    ApiRow(
        names=("jax.experimental.pallas.loop", "jax._src.pallas.helpers.loop"),
        args=(Arg(0, None, Role.CALLS_NOW),),
        configured=True,
    ),
    ApiRow(
        names=("jax.experimental.pallas.run_scoped", "jax._src.pallas.primitives.run_scoped"),
        args=(Arg(0, "f", Role.CALLS_NOW),),
    ),
    ApiRow(
        names=("jax.experimental.pallas.run_state", "jax._src.state.discharge.run_state"),
        args=(Arg(0, "f", Role.KEEPS),),
    ),
    ApiRow(
        names=("jax.experimental.pallas.with_scoped", "jax._src.pallas.helpers.with_scoped"),
        args=(Arg(0, None, Role.KEEPS),),
        configured=True,
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.estimate_cost",
            "jax._src.pallas.cost_estimate.estimate_cost",
        ),
        args=(Arg(0, "fun", Role.TRACES_ONLY),),
    ),
    ApiRow(
        names=("jax.experimental.pallas.lower_as_mlir", "jax._src.pallas.core.lower_as_mlir"),
        args=(Arg(0, "f", Role.LOWERS),),
        platforms_argument="platforms",
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.tpu.emit_pipeline",
            "jax._src.pallas.mosaic.pipeline.emit_pipeline",
        ),
        args=(Arg(0, "body", Role.KEEPS),),
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.tpu.emit_pipeline_with_allocations",
            "jax._src.pallas.mosaic.pipeline.emit_pipeline_with_allocations",
        ),
        args=(Arg(0, "body", Role.KEEPS),),
        result_index=0,
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.tpu.emit_pipeline_with_async_prefetch",
            "jax._src.pallas.mosaic.prefetch.emit_pipeline_with_async_prefetch",
        ),
        args=(Arg(0, "body", Role.KEEPS),),
        result_index=0,
        ends=(NEW,),
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.tpu.run_on_first_core",
            "jax._src.pallas.mosaic.helpers.run_on_first_core",
        ),
        args=(Arg(0, None, Role.CALLS_NOW),),
        configured=True,
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.tpu.sample_block",
            "jax._src.pallas.mosaic.random.sample_block",
        ),
        args=(Arg(0, "sampler_fn", Role.CALLS_EACH),),
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.tpu.InterpretParams",
            "jax._src.pallas.mosaic.interpret.params.InterpretParams",
        ),
        args=(Arg(None, "grid_point_recorder", Role.HOST),),
        kind=Kind.CLASS,
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.mosaic_gpu.emit_pipeline",
            "jax._src.pallas.mosaic_gpu.pipeline.emit_pipeline",
        ),
        args=(Arg(0, "body", Role.KEEPS),),
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.mosaic_gpu.emit_pipeline_warp_specialized",
            "jax._src.pallas.mosaic_gpu.pipeline.emit_pipeline_warp_specialized",
        ),
        args=(Arg(0, "body", Role.KEEPS),),
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.mosaic_gpu.nd_loop",
            "jax._src.pallas.mosaic_gpu.helpers.nd_loop",
        ),
        args=(Arg(0, None, Role.CALLS_NOW),),
        configured=True,
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.mosaic_gpu.dynamic_scheduling_loop",
            "jax._src.pallas.mosaic_gpu.helpers.dynamic_scheduling_loop",
        ),
        args=(Arg(0, None, Role.CALLS_NOW),),
        configured=True,
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.mosaic_gpu.warp_map",
            "jax._src.pallas.mosaic_gpu.helpers.warp_map",
        ),
        args=(Arg(0, None, Role.CALLS_NOW),),
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.mosaic_gpu.inline_mgpu",
            "jax._src.pallas.mosaic_gpu.primitives.inline_mgpu",
        ),
        args=(Arg(0, None, Role.KEEPS),),
        configured=True,
        note="the function runs while the kernel is lowered with Mosaic GPU",
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.mosaic_gpu.as_torch_kernel",
            "jax._src.pallas.mosaic_gpu.torch.as_torch_kernel",
        ),
        args=(Arg(0, "fn", Role.KEEPS),),
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.tpu_sc.parallel_loop",
            "jax._src.pallas.mosaic.sc_primitives.parallel_loop",
        ),
        args=(Arg(0, None, Role.CALLS_NOW),),
        configured=True,
    ),
    ApiRow(
        names=("jax.experimental.mosaic.gpu.profiler.measure",),
        args=(Arg(0, "f", Role.KEEPS),),
        note="returns a callable that runs f and times it",
    ),
    ApiRow(
        names=("jax.experimental.pallas.fuser.fuse", "jax._src.pallas.fuser.jaxpr_fusion.fuse"),
        args=(Arg(0, "f", Role.KEEPS),),
        optional_function=True,
    ),
    ApiRow(
        names=("jax.experimental.pallas.fuser.fusible", "jax._src.pallas.fuser.fusible.fusible"),
        args=(Arg(0, "f", Role.KEEPS),),
        optional_function=True,
        fusion_operands=True,
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.fuser.evaluate",
            "jax._src.pallas.fuser.custom_evaluate.evaluate",
        ),
        args=(Arg(0, "f", Role.KEEPS),),
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.fuser.custom_fusion",
            "jax._src.pallas.fuser.custom_fusion_lib.custom_fusion",
        ),
        args=(Arg(0, "fun", Role.KEEPS),),
        kind=Kind.CLASS,
        rule_methods=(
            "def_pallas_impl",
            "def_pull_block_spec",
            "def_push_block_spec",
            "def_eval_rule",
        ),
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.fuser.custom_fusion.def_pallas_impl",
            "jax._src.pallas.fuser.custom_fusion_lib.custom_fusion.def_pallas_impl",
        ),
        args=(Arg(0, "pallas_impl", Role.RULE, when=When.FUSION),),
        kind=Kind.METHOD,
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.fuser.custom_fusion.def_pull_block_spec",
            "jax._src.pallas.fuser.custom_fusion_lib.custom_fusion.def_pull_block_spec",
        ),
        args=(Arg(0, None, Role.HOOK),),
        kind=Kind.METHOD,
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.fuser.custom_fusion.def_push_block_spec",
            "jax._src.pallas.fuser.custom_fusion_lib.custom_fusion.def_push_block_spec",
        ),
        args=(Arg(0, None, Role.HOOK),),
        kind=Kind.METHOD,
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.fuser.custom_fusion.def_eval_rule",
            "jax._src.pallas.fuser.custom_fusion_lib.custom_fusion.def_eval_rule",
        ),
        args=(Arg(0, "eval_rule", Role.RULE, when=When.FUSION),),
        kind=Kind.METHOD,
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.fuser.pull_block_spec",
            "jax._src.pallas.fuser.block_spec.pull_block_spec",
        ),
        args=(Arg(0, "f", Role.TRACES_ONLY),),
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.fuser.push_block_spec",
            "jax._src.pallas.fuser.block_spec.push_block_spec",
        ),
        args=(Arg(0, "f", Role.TRACES_ONLY),),
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.fuser.push_pull_block_spec",
            "jax._src.pallas.fuser.block_spec.push_pull_block_spec",
        ),
        args=(Arg(0, "f", Role.TRACES_ONLY),),
        ends=(NEW,),
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.fuser.get_fusion_values",
            "jax._src.pallas.fuser.block_spec.get_fusion_values",
        ),
        args=(Arg(0, "fusion", Role.TRACES_ONLY),),
        result_index=0,
        result_items=3,
        replays=True,
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.fuser.get_stateful_input_fusion_values",
            "jax._src.pallas.fuser.block_spec.get_stateful_input_fusion_values",
        ),
        args=(Arg(0, "fusion", Role.TRACES_ONLY),),
        result_index=0,
        result_items=3,
        replays=True,
    ),
    ApiRow(
        names=(
            "jax.experimental.pallas.fuser.get_stateful_output_fusion_values",
            "jax._src.pallas.fuser.block_spec.get_stateful_output_fusion_values",
        ),
        args=(Arg(0, "fusion", Role.TRACES_ONLY),),
        result_index=0,
        result_items=4,
        replays=True,
    ),
    # -------------------- python
    ApiRow(
        names=("functools.partial",), args=(Arg(0, None, Role.KEEPS),), kind=Kind.CLASS, binds=True
    ),
    ApiRow(
        names=("functools.partialmethod",),
        args=(Arg(0, None, Role.KEEPS),),
        kind=Kind.DESCRIPTOR,
        binds=True,
    ),
    ApiRow(
        names=("functools.wraps",),
        args=(Arg(0, None, Role.KEEPS),),
        configured=True,
        note="wraps(g)(f) keeps f; g's metadata is copied, g is not called",
    ),
    ApiRow(names=("functools.update_wrapper",), args=(Arg(0, "wrapper", Role.KEEPS),)),
    ApiRow(names=("functools.cache",), args=(Arg(0, None, Role.KEEPS),)),
    ApiRow(
        names=("functools.lru_cache",),
        args=(Arg(0, None, Role.KEEPS),),
        configured=True,
        note="also lru_cache(f) when its first argument is the function",
    ),
    ApiRow(
        names=("functools._lru_cache_wrapper",),
        args=(Arg(0, None, Role.KEEPS),),
        kind=Kind.CLASS,
        result_binds=True,
        note="the type functools.cache and lru_cache return",
    ),
    ApiRow(names=("functools.singledispatch",), args=(Arg(0, None, Role.KEEPS),)),
    ApiRow(
        names=("functools.singledispatchmethod",),
        args=(Arg(0, None, Role.KEEPS),),
        kind=Kind.DESCRIPTOR,
    ),
    ApiRow(names=("functools.reduce",), args=(Arg(0, None, Role.CALLS_EACH),)),
    ApiRow(
        names=("itertools.accumulate",),
        args=(Arg(1, "func", Role.CALLS_EACH, each_item_of=0),),
        kind=Kind.CLASS,
        iterator="accumulate",
    ),
    ApiRow(
        names=("itertools.starmap",),
        args=(Arg(0, None, Role.CALLS_EACH, each_item_of=1),),
        kind=Kind.CLASS,
        iterator="starmap",
    ),
    ApiRow(
        names=("itertools.filterfalse",),
        args=(Arg(0, None, Role.CALLS_EACH, each_item_of=1, read_by_python=True),),
        kind=Kind.CLASS,
        iterator="filterfalse",
    ),
    ApiRow(
        names=("itertools.takewhile",),
        args=(Arg(0, None, Role.CALLS_EACH, each_item_of=1, read_by_python=True),),
        kind=Kind.CLASS,
        iterator="takewhile",
    ),
    ApiRow(
        names=("itertools.dropwhile",),
        args=(Arg(0, None, Role.CALLS_EACH, each_item_of=1, read_by_python=True),),
        kind=Kind.CLASS,
        iterator="dropwhile",
    ),
    ApiRow(names=("itertools.groupby",), args=(Arg(1, "key", Role.CALLS_EACH),), kind=Kind.CLASS),
    ApiRow(names=("operator.call",), args=(Arg(0, None, Role.CALLS_NOW),)),
    ApiRow(
        names=("builtins.map",),
        args=(Arg(0, None, Role.CALLS_EACH, each_item_of=1),),
        kind=Kind.CLASS,
        iterator="map",
    ),
    ApiRow(
        names=("builtins.filter",),
        args=(Arg(0, None, Role.CALLS_EACH, each_item_of=1, read_by_python=True),),
        kind=Kind.CLASS,
        iterator="filter",
    ),
    ApiRow(
        names=("builtins.sorted",), args=(Arg(None, "key", Role.CALLS_EACH, read_by_python=True),)
    ),
    ApiRow(names=("builtins.min",), args=(Arg(None, "key", Role.CALLS_EACH, read_by_python=True),)),
    ApiRow(names=("builtins.max",), args=(Arg(None, "key", Role.CALLS_EACH, read_by_python=True),)),
    ApiRow(
        names=("builtins.iter",),
        args=(Arg(0, None, Role.CALLS_EACH),),
        note="iter(callable, sentinel): once per item",
    ),
    ApiRow(
        names=("builtins.staticmethod",), args=(Arg(0, None, Role.KEEPS),), kind=Kind.DESCRIPTOR
    ),
    ApiRow(names=("builtins.classmethod",), args=(Arg(0, None, Role.KEEPS),), kind=Kind.DESCRIPTOR),
    ApiRow(names=("typing.override",), args=(Arg(0, None, Role.KEEPS),), since_python=(3, 12)),
    ApiRow(names=("typing_extensions.override",), args=(Arg(0, None, Role.KEEPS),)),
    ApiRow(
        names=("jaxtyping.jaxtyped", "jaxtyping._decorator.jaxtyped"),
        args=(Arg(0, "fn", Role.KEEPS),),
        optional_function=True,
        note="checks the arguments, then calls fn",
    ),
    ApiRow(
        names=(
            "beartype.beartype",
            "beartype._decor.decorcache.beartype",
            "beartype._decor.decormain.beartype",
        ),
        args=(Arg(0, "obj", Role.KEEPS),),
        optional_function=True,
        note="checks the arguments, then calls the function",
    ),
    ApiRow(
        names=("typed_pallas.platform", "typed_pallas._tagged.platform"),
        args=(Arg(0, None, Role.KEEPS),),
        configured=True,
        note="platform('tpu')(f): f lowers only for that platform",
    ),
)

#: Context managers that change how the code under them lowers (or that decorate).
CONTEXTS: Final[tuple[ContextRow, ...]] = (
    ContextRow(
        names=(
            "jax.experimental.pallas.tpu.force_tpu_interpret_mode",
            "jax._src.pallas.mosaic.interpret.interpret_pallas_call.force_tpu_interpret_mode",
        ),
        effect=Effect.INTERPRETS,
        decorates=True,
        note="every pallas_call and core_map traced under it runs with interpret=params",
    ),
    ContextRow(
        names=(
            "jax.experimental.pallas.mosaic_gpu.force_gpu_interpret_mode",
            "jax._src.pallas.mosaic_gpu.interpret.params.force_gpu_interpret_mode",
        ),
        effect=Effect.INTERPRETS,
        decorates=True,
        ends=(NEW,),
    ),
    ContextRow(
        names=("jax.named_scope", "jax._src.api.named_scope"), effect=Effect.NONE, decorates=True
    ),
    ContextRow(
        names=("jax.ensure_compile_time_eval", "jax._src.core.ensure_compile_time_eval"),
        effect=Effect.NONE,
        decorates=True,
    ),
    ContextRow(
        names=("jax.disable_jit", "jax._src.api.disable_jit"), effect=Effect.NONE, decorates=True
    ),
    ContextRow(
        names=("jax.default_device", "jax._src.config.default_device"),
        effect=Effect.PLACES,
        note="computations not committed to a device run on it",
    ),
    ContextRow(
        names=("jax.experimental.compute_on.compute_on", "jax._src.compute_on.compute_on"),
        effect=Effect.PLACES,
        ends=(OLD,),
        note="jax 0.10: compute_on('device_host')",
    ),
)

#: Class decorators that return the class.
CLASS_DECORATORS: Final[tuple[ClassDecoratorRow, ...]] = (
    ClassDecoratorRow(names=("dataclasses.dataclass",), makes_dataclass=True),
    ClassDecoratorRow(
        names=(
            "jax.tree_util.register_pytree_node_class",
            "jax._src.tree_util.register_pytree_node_class",
        ),
        registers_node=NODE_METHODS,
    ),
    ClassDecoratorRow(
        names=(
            "jax.tree_util.register_pytree_with_keys_class",
            "jax._src.tree_util.register_pytree_with_keys_class",
        ),
        registers_node=NODE_METHODS_WITH_KEYS,
    ),
    ClassDecoratorRow(
        names=("jax.tree_util.register_dataclass", "jax._src.tree_util.register_dataclass"),
        registers_node=NODE_FIELDS,
        note="registers a dataclass (or the given fields)",
    ),
    ClassDecoratorRow(
        names=("jax.tree_util.register_static", "jax._src.tree_util.register_static"),
        registers_node=NODE_STATIC,
    ),
    # attrs: its classes take their fields as constructor parameters, as dataclasses do
    # (annotated, or assigned ``attr.ib()`` / ``attrs.field()``)
    ClassDecoratorRow(names=("attrs.define", "attr.define"), makes_dataclass=True),
    ClassDecoratorRow(names=("attrs.frozen", "attr.frozen"), makes_dataclass=True),
    ClassDecoratorRow(names=("attrs.mutable", "attr.mutable"), makes_dataclass=True),
    ClassDecoratorRow(names=("attr.s", "attr.attrs"), makes_dataclass=True),
    ClassDecoratorRow(names=("functools.total_ordering",), orders=True),
    ClassDecoratorRow(names=("typing.final",)),
    ClassDecoratorRow(names=("typing_extensions.final",)),
    ClassDecoratorRow(names=("typing.runtime_checkable",)),
    ClassDecoratorRow(names=("typing_extensions.runtime_checkable",)),
    ClassDecoratorRow(names=("enum.unique",)),
    ClassDecoratorRow(names=("chex.dataclass",), makes_dataclass=True),
    ClassDecoratorRow(names=("flax.struct.dataclass",), makes_dataclass=True),
)


# --------------------------------------------------------------------------- lookups

_Row = TypeVar("_Row", ApiRow, ContextRow, ClassDecoratorRow)


def _index(rows: tuple[_Row, ...]) -> Mapping[str, tuple[_Row, ...]]:
    found: dict[str, list[_Row]] = {}
    for entry in rows:
        for name in entry.spellings():
            found.setdefault(name, []).append(entry)
    return {name: tuple(entries) for name, entries in found.items()}


_ROWS_BY_NAME: Final = _index(ROWS)
_CONTEXTS_BY_NAME: Final = _index(CONTEXTS)
_CLASS_DECORATORS_BY_NAME: Final = _index(CLASS_DECORATORS)


def _at(entries: tuple[_Row, ...], name: str, end: str | None) -> _Row | None:
    """The entry ``name`` spells at ``end`` (any end when None: the first)."""
    for entry in entries:
        if end is None:
            return entry
        if end in entry.ends and (name in entry.names or (end, name) in entry.end_names):
            return entry
    return None


def row(fullname: str, end: str | None = None) -> ApiRow | None:
    """The row of the callable ``fullname`` spells at JAX ``end``, or None. Without an
    end, the first row that has the spelling (the old end's, where the ends differ)."""
    return _at(_ROWS_BY_NAME.get(fullname, ()), fullname, end)


def function_arguments(
    fullname: str, role: Role | None = None, end: str | None = None
) -> tuple[Arg, ...]:
    """The function arguments of ``fullname`` (only those with ``role``, when given);
    nothing for a name the table does not have."""
    found = row(fullname, end)
    if found is None:
        return ()
    return tuple(arg for arg in found.args if role is None or arg.role is role)


def context(fullname: str, end: str | None = None) -> ContextRow | None:
    """The context manager ``fullname`` spells, or None."""
    return _at(_CONTEXTS_BY_NAME.get(fullname, ()), fullname, end)


def class_decorator(fullname: str, end: str | None = None) -> ClassDecoratorRow | None:
    """The class decorator ``fullname`` spells, or None."""
    return _at(_CLASS_DECORATORS_BY_NAME.get(fullname, ()), fullname, end)


def names_with(role: Role) -> frozenset[str]:
    """Every spelling of a callable with a function argument of ``role``."""
    return frozenset(
        name
        for entry in ROWS
        if any(a.role is role for a in entry.args)
        for name in entry.spellings()
    )


# --------------------------------------------------------------------------- views
# The engine's older lists, as views of the table (each equal to, or a superset of, the
# list it can replace in fullnames.py / program.py).


def _spellings_of(rows: Iterable[ApiRow | ContextRow | ClassDecoratorRow]) -> frozenset[str]:
    return frozenset(name for entry in rows for name in entry.spellings())


def _first(entry: ApiRow) -> Arg | None:
    """The argument at position 0 (of the call, or of its result when configured)."""
    return next((a for a in entry.args if a.position == 0 and not a.variadic), None)


def _keeps_first(entry: ApiRow) -> bool:
    first = _first(entry)
    return first is not None and first.role is Role.KEEPS and entry.result_index is None


#: Methods registering derivative rules on a custom-derivative function (``defvjp``).
DERIVATIVE_RULES: Final = frozenset(
    entry.names[0].rsplit(".", 1)[1]
    for entry in ROWS
    if entry.kind is Kind.METHOD
    and any(a.role is Role.RULE and a.when is When.DIFFERENTIATION for a in entry.args)
)
#: ``jax.custom_vjp`` / ``jax.custom_jvp``: calling the result runs the function (its
#: primal); under differentiation the rules its ``DERIVATIVE_RULES`` methods registered run.
CUSTOM_DERIVATIVES: Final = _spellings_of(
    entry for entry in ROWS if DERIVATIVE_RULES.intersection(entry.rule_methods)
)
#: Every callable whose result registers rules of its own (``custom_vmap``, ``custom_partitioning`` too).
CUSTOM_RULES: Final = _spellings_of(entry for entry in ROWS if entry.rule_methods)
#: Context managers that decorate and change nothing the platform depends on.
_KEEPING_CONTEXTS: Final = tuple(
    entry for entry in CONTEXTS if entry.decorates and entry.effect is Effect.NONE
)
#: Method decorators that keep the method callable as written.
METHOD_KEEPERS: Final = _spellings_of(
    entry for entry in ROWS if entry.kind is Kind.DESCRIPTOR and not entry.binds
)
#: Callables whose result (or decorated function) runs the function given to them, with
#: the same arguments: ``jax.jit(f)``, ``@jax.named_scope("n")``, ``functools.wraps(g)(f)``.
#: Not: ``functools.partial`` (it binds arguments), custom derivatives, method decorators.
KEEPS_FUNCTION: Final = _spellings_of(
    entry
    for entry in ROWS
    if _keeps_first(entry)
    and not entry.binds
    and not entry.rule_methods
    and entry.kind is not Kind.DESCRIPTOR
) | _spellings_of(_KEEPING_CONTEXTS)
#: Keepers whose positional arguments configure them: ``k(config)(f)`` keeps ``f``.
CONFIGURED_KEEPERS: Final = _spellings_of(
    entry for entry in ROWS if entry.configured and _keeps_first(entry)
) | _spellings_of(_KEEPING_CONTEXTS)
#: Keepers that differentiate the function they keep (``jax.grad``).
DIFFERENTIATING: Final = _spellings_of(
    entry for entry in ROWS if entry.differentiates and _keeps_first(entry)
)
#: Keepers that differentiate in reverse mode (``jax.grad``): a ``bwd`` rule runs too.
TRANSPOSING: Final = _spellings_of(
    entry for entry in ROWS if entry.transposes and _keeps_first(entry)
)
#: Keepers that batch the function they keep (``jax.vmap``).
BATCHING: Final = _spellings_of(entry for entry in ROWS if entry.batches and _keeps_first(entry))
#: A function with a batching rule of its own (``custom_vmap``): batched, the rule runs.
CUSTOM_BATCHING: Final = _spellings_of(entry for entry in ROWS if "def_vmap" in entry.rule_methods)
#: Calls that trace and differentiate their function right away (``jax.vjp``).
DIFFERENTIATING_CALLS: Final = _spellings_of(
    entry
    for entry in ROWS
    if entry.differentiates and any(a.role is Role.CALLS_NOW for a in entry.args)
)
#: Calls that trace their function's forward part now and return its derivative as a
#: callable (``out, pullback = jax.vjp(f, x)``): spelling -> the index of that callable in
#: the returned tuple. The custom derivative rules of what they reach run when it is called.
DEFERRED_DERIVATIVES: Final[Mapping[str, int]] = {
    name: entry.derivative_index
    for entry in ROWS
    if entry.derivative_index is not None
    for name in entry.spellings()
}
#: Top-level packages besides jax and the standard library whose callables the tables
#: describe (``attrs``, ``jaxtyping``...): read as tables, never from their source (jax's
#: own Pallas ops are read: its callers decide).
TABLE_PACKAGES: Final = (
    frozenset(
        name.split(".", 1)[0]
        for name in (
            *_spellings_of(ROWS),
            *_spellings_of(CONTEXTS),
            *_spellings_of(CLASS_DECORATORS),
        )
    )
    - {"jax"}
    - frozenset(getattr(sys, "stdlib_module_names", ()))
    - {"builtins"}
)
#: Calls whose result, called, gives a jaxpr of the function (``jax.make_jaxpr``).
JAXPR_MAKERS: Final = _spellings_of(entry for entry in ROWS if entry.returns_jaxpr)
#: Calls that trace functions right away: spelling -> (position, keyword) of each
#: ``Role.CALLS_NOW`` argument (``keyword`` None: positional only). Not an argument whose
#: result only Python reads (``is_leaf``): what it traces is dead code, which JAX drops
#: (the rules say nothing of it; the evaluator knows when JAX keeps it).
TRACED_ARGUMENTS: Final[Mapping[str, tuple[tuple[int, str | None], ...]]] = {
    name: traced
    for entry in ROWS
    if not entry.configured
    for traced in [
        tuple(
            (a.position, a.keyword)
            for a in entry.args
            if a.role is Role.CALLS_NOW
            and a.position is not None
            and not a.variadic
            and not a.read_by_python
        )
    ]
    if traced
    for name in entry.spellings()
}
#: Calls that call functions right away, zero or more times: spelling -> (position,
#: keyword) of each ``Role.CALLS_EACH`` argument (``jax.tree.map``, ``map``, ``sorted``'s
#: ``key`` is keyword only and so not here: ``function_arguments`` has every argument).
CALLS_EACH_ARGUMENTS: Final[Mapping[str, tuple[tuple[int, str | None], ...]]] = {
    name: called
    for entry in ROWS
    if not entry.configured
    for called in [
        tuple(
            (a.position, a.keyword)
            for a in entry.args
            if a.role is Role.CALLS_EACH and a.position is not None and not a.variadic
        )
    ]
    if called
    for name in entry.spellings()
}
#: ``with`` contexts under which every Pallas kernel is interpreted (lowers anywhere).
INTERPRET_CONTEXTS: Final = _spellings_of(
    entry for entry in CONTEXTS if entry.effect is Effect.INTERPRETS
)
#: Class decorators that return the class itself.
CLASS_KEEPERS: Final = _spellings_of(CLASS_DECORATORS)
#: Class decorators that make the class a dataclass.
DATACLASS_DECORATORS: Final = _spellings_of(
    entry for entry in CLASS_DECORATORS if entry.makes_dataclass
)
