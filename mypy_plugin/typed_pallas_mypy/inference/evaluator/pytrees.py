"""JAX's pytrees as JAX defines them: which values are leaves, in what order, and how a
tree is rebuilt from new leaves.

``None`` is a tree without leaves; a tuple, a list and a dict are nodes (a dict's
children in the order of its sorted keys); an instance of a class registered with
``jax.tree_util.register_pytree_node_class`` is a node whose children its
``tree_flatten`` gives and which its ``tree_unflatten`` rebuilds; anything else known (an
array, a number, a function) is one leaf. ``jax.tree.leaves``, ``flatten``, ``unflatten``
and ``structure`` give what JAX gives; ``jax.tree.map`` rebuilds its tree from what its
function returned for each leaf (``library``).

What it does not do: follow ``is_leaf`` (the rows of ``jax_api`` call it; a tree given
one is not known here), or the other registrations (``register_pytree_node``,
``register_dataclass``): their instances are not known trees.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from typed_pallas_mypy.inference.evaluator.domain import (
    ANYTHING,
    NONE,
    UNKNOWN,
    ClassObj,
    Container,
    Flow,
    InstanceObj,
    Outcome,
    Value,
    VSet,
    only,
    vset,
)

if TYPE_CHECKING:
    from typed_pallas_mypy.inference.evaluator.machine import Machine

#: the flag of a class registered as a pytree node (``register_pytree_node_class``)
NODE_CLASS: Final = "pytree"
#: how deep a tree is followed
_DEPTH: Final = 8


@dataclass(frozen=True, slots=True)
class TreeDef(Value):
    """A tree's structure (``jax.tree.flatten``'s second item): the tree it was read
    from, whose leaves ``unflatten`` replaces."""

    tree: VSet


def leaves(m: Machine, tree: VSet, depth: int = 0) -> list[VSet] | None:
    """The leaves of ``tree`` in JAX's order, when known."""
    one = only(tree)
    if one is None or one is UNKNOWN or depth > _DEPTH:
        return None
    if one == NONE:
        return []
    below = children(m, one)
    if below is None:
        return [tree] if _is_leaf(one) else None
    out: list[VSet] = []
    for child in below:
        found = leaves(m, child, depth + 1)
        if found is None:
            return None
        out.extend(found)
    return out


def rebuild(m: Machine, tree: VSet, new: list[VSet]) -> VSet:
    """``tree`` with its leaves replaced by ``new``, in order (unknown when they do not
    fit)."""
    taken = iter(new)
    try:
        made = _rebuild(m, tree, taken, 0)
    except (StopIteration, _NotATree):
        return ANYTHING
    if next(taken, None) is not None:
        return ANYTHING
    return made


class _NotATree(Exception):
    pass


def _rebuild(m: Machine, tree: VSet, taken: Iterator[VSet], depth: int) -> VSet:
    one = only(tree)
    if one is None or one is UNKNOWN or depth > _DEPTH:
        raise _NotATree
    if one == NONE:
        return tree
    if isinstance(one, Container) and one.exact and one.kind in ("tuple", "list", "dict"):
        made = Container(one.kind)
        if one.kind == "dict":
            made.entries = [
                (key, _rebuild(m, value, taken, depth + 1)) for key, value in _sorted(one)
            ]
        else:
            made.items = [_rebuild(m, item, taken, depth + 1) for item in one.items]
        return vset(made)
    if isinstance(one, InstanceObj) and _node_class(one) is not None:
        flattened = _flatten(m, one)
        if flattened is None:
            raise _NotATree
        children, aux = flattened
        rebuilt = Container("tuple")
        rebuilt.items = [_rebuild(m, child, taken, depth + 1) for child in children]
        cls = _node_class(one)
        assert cls is not None
        method = m.expressions.class_attribute(cls, cls, "tree_unflatten", Flow(), instance=None)
        return m.calls.call(method, [aux, vset(rebuilt)], {}, Flow())
    if _is_leaf(one):
        return next(taken)
    raise _NotATree


def children(m: Machine, one: Value) -> list[VSet] | None:
    """A node's children in JAX's order; None for a leaf or a value not known."""
    if isinstance(one, Container):
        if not one.exact or one.kind not in ("tuple", "list", "dict"):
            return None
        if one.kind == "dict":
            return [value for _, value in _sorted(one)]
        return list(one.items)
    if isinstance(one, InstanceObj) and _node_class(one) is not None:
        flattened = _flatten(m, one)
        return None if flattened is None else flattened[0]
    return None


def _is_leaf(one: Value) -> bool:
    """A known value JAX flattens to itself: anything but a container's items, an instance
    (its class may be registered in ways not followed here) or what is not known."""
    if isinstance(one, Container):
        return one.kind == "set"
    return not isinstance(one, InstanceObj) and one is not UNKNOWN


def _sorted(container: Container) -> list[tuple[Value, VSet]]:
    """A dict's entries by sorted key (JAX's order), as given when the keys do not sort."""
    try:
        return sorted(container.entries, key=lambda kv: kv[0].value)  # type: ignore[attr-defined]
    except (AttributeError, TypeError):
        return list(container.entries)


def _node_class(instance: InstanceObj) -> ClassObj | None:
    cls = instance.cls
    if isinstance(cls, ClassObj) and any(
        isinstance(base, ClassObj) and NODE_CLASS in base.flags for base in cls.mro
    ):
        return cls
    return None


def _flatten(m: Machine, instance: InstanceObj) -> tuple[list[VSet], VSet] | None:
    """``instance.tree_flatten()``: its children and its auxiliary data."""
    cls = _node_class(instance)
    if cls is None:
        return None
    method = m.expressions.class_attribute(cls, cls, "tree_flatten", Flow(), instance=instance)
    flow = Flow()
    result = m.calls.call(method, [], {}, flow)
    pair = only(result)
    if not (isinstance(pair, Container) and pair.exact and len(pair.items) == 2):
        return None
    children = only(pair.items[0])
    if isinstance(children, Container) and children.exact and children.kind in ("tuple", "list"):
        return list(children.items), pair.items[1]
    return None


# -- JAX's pytree functions ----------------------------------------------------------------


def tree_leaves(m: Machine, args: list[VSet], keywords: dict[str, VSet]) -> VSet | None:
    """``jax.tree.leaves(tree)``: a list of its leaves."""
    if not args or "is_leaf" in keywords or len(args) > 1:
        return None
    found = leaves(m, args[0])
    if found is None:
        return None
    made = Container("list")
    made.items = found
    return vset(made)


def tree_flatten(m: Machine, args: list[VSet], keywords: dict[str, VSet]) -> VSet | None:
    """``jax.tree.flatten(tree)``: (its leaves, its structure)."""
    listed = tree_leaves(m, args, keywords)
    if listed is None:
        return None
    made = Container("tuple")
    made.items = [listed, vset(TreeDef(args[0]))]
    return vset(made)


def tree_structure(m: Machine, args: list[VSet], keywords: dict[str, VSet]) -> VSet | None:
    """``jax.tree.structure(tree)``."""
    if len(args) != 1 or "is_leaf" in keywords:
        return None
    return vset(TreeDef(args[0]))


def tree_unflatten(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: object) -> Outcome:
    """``jax.tree.unflatten(treedef, leaves)``: the tree rebuilt from the leaves."""
    if len(args) != 2:
        return Outcome(returns=ANYTHING)
    structure = only(args[0])
    new = m.iteration.iterate(args[1], Flow())
    if not isinstance(structure, TreeDef) or new is None:
        return Outcome(returns=ANYTHING)
    return Outcome(returns=rebuild(m, structure.tree, new))


#: the rows of JAX's table whose result this module gives (their function arguments, such
#: as ``is_leaf``, are called by the table first), by spelling
RESULTS: Final = {
    "jax.tree.leaves": tree_leaves,
    "jax._src.tree.leaves": tree_leaves,
    "jax.tree_util.tree_leaves": tree_leaves,
    "jax._src.tree_util.tree_leaves": tree_leaves,
    "jax.tree.flatten": tree_flatten,
    "jax._src.tree.flatten": tree_flatten,
    "jax.tree_util.tree_flatten": tree_flatten,
    "jax._src.tree_util.tree_flatten": tree_flatten,
    "jax.tree.structure": tree_structure,
    "jax._src.tree.structure": tree_structure,
    "jax.tree_util.tree_structure": tree_structure,
    "jax._src.tree_util.tree_structure": tree_structure,
}
#: JAX's pytree functions that take no function (not rows of the table)
UNFLATTEN: Final = (
    "jax.tree.unflatten",
    "jax._src.tree.unflatten",
    "jax.tree_util.tree_unflatten",
    "jax._src.tree_util.tree_unflatten",
)
