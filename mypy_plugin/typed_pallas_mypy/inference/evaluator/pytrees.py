"""JAX's pytrees as JAX defines them: which values are leaves, in what order, and how a
tree is rebuilt from new leaves.

``None`` is a tree without leaves; a tuple, a list and a dict are nodes (a dict's
children in the order of its sorted keys); an instance of a class registered as a node
is one (``Registration``: by ``register_pytree_node`` / ``register_pytree_with_keys``
with its functions, by the class decorators of ``jax_api.CLASS_DECORATORS`` with its
methods, its dataclass fields, or as static); anything else known (an array, a number,
a function) is one leaf. JAX finds a node's registration by its exact class. The key
path of a leaf is the keys on the way to it (a dict's key, a sequence's index, a
dataclass field's name, a registered key). ``jax.tree.leaves``, ``flatten``,
``flatten_with_path``, ``leaves_with_path``, ``unflatten``, ``structure``, ``all`` and
``jax.tree_util.keystr`` give what JAX gives; ``jax.tree.map`` rebuilds its tree from what
its function returned for each leaf (``library``).

What it does not do: follow ``is_leaf`` (``library`` calls it on each node; a tree given
one is not known here), or know an instance of a class not registered in a way followed
here (flax's and chex's dataclasses): it is not a known tree.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from typed_pallas_mypy.inference import jax_api
from typed_pallas_mypy.inference.evaluator import journal
from typed_pallas_mypy.inference.evaluator.domain import (
    ANYTHING,
    NONE,
    NOTHING,
    UNKNOWN,
    ClassObj,
    Const,
    Container,
    External,
    Flow,
    InstanceObj,
    Outcome,
    Value,
    VSet,
    only,
    string_items,
    vset,
)

if TYPE_CHECKING:
    from typed_pallas_mypy.inference.evaluator.machine import Machine

#: a class registered by ``register_pytree_node`` / ``register_pytree_with_keys``: its
#: flatten and unflatten functions are given
NODE_FUNCTIONS: Final = "functions"
NODE_FUNCTIONS_WITH_KEYS: Final = "functions with keys"


@dataclass(frozen=True)
class Registration:
    """How JAX flattens a class's instances: ``kind`` is ``jax_api.NODE_*`` or
    ``NODE_FUNCTIONS*``; ``flatten`` / ``unflatten`` the functions given to
    ``register_pytree_node``; ``data`` / ``meta`` the field names given to
    ``register_dataclass`` (None: its dataclass fields, static ones excepted)."""

    kind: str
    flatten: VSet = NOTHING
    unflatten: VSet = NOTHING
    data: tuple[str, ...] | None = None
    meta: tuple[str, ...] | None = None


@dataclass(frozen=True, slots=True)
class TreeKey(Value):
    """One key of a key path: ``kind`` "dict" (``DictKey``), "index" (``SequenceKey``),
    "attr" (``GetAttrKey``), "flat" (``FlattenedIndexKey``); ``value`` its key."""

    kind: str
    value: object


#: the spellings of ``register_pytree_node`` and ``register_pytree_with_keys``
_REGISTER_FUNCTIONS: Final = {
    "jax.tree_util.register_pytree_node": NODE_FUNCTIONS,
    "jax._src.tree_util.register_pytree_node": NODE_FUNCTIONS,
    "jax.tree_util.register_pytree_with_keys": NODE_FUNCTIONS_WITH_KEYS,
    "jax._src.tree_util.register_pytree_with_keys": NODE_FUNCTIONS_WITH_KEYS,
}
#: how deep a tree is followed
_DEPTH: Final = 8


@dataclass(frozen=True, slots=True)
class TreeDef(Value):
    """A tree's structure (``jax.tree.flatten``'s second item): the tree it was read
    from, whose leaves ``unflatten`` replaces."""

    tree: VSet


def leaves(m: Machine, tree: VSet, depth: int = 0) -> list[VSet] | None:
    """The leaves of ``tree`` in JAX's order, when known."""
    found = keyed_leaves(m, tree, (), depth)
    return None if found is None else [leaf for _, leaf in found]


def keyed_leaves(
    m: Machine, tree: VSet, path: tuple[Value, ...], depth: int = 0
) -> list[tuple[tuple[Value, ...], VSet]] | None:
    """(key path, leaf) of each leaf of ``tree`` in JAX's order, when known."""
    one = only(tree)
    if one is None or one is UNKNOWN or depth > _DEPTH:
        return None
    if one == NONE:
        return []
    below = keyed_children(m, one)
    if below is None:
        return [(path, tree)] if _is_leaf(one) else None
    out: list[tuple[tuple[Value, ...], VSet]] = []
    for key, child in below:
        found = keyed_leaves(m, child, (*path, key), depth + 1)
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
    if isinstance(one, InstanceObj) and _registration(one) is not None:
        flattened = _flatten(m, one)
        if flattened is None:
            raise _NotATree
        pairs, aux = flattened
        rebuilt = [_rebuild(m, child, taken, depth + 1) for _, child in pairs]
        return _unflatten(m, one, aux, rebuilt)
    if _is_leaf(one):
        return next(taken)
    raise _NotATree


def children(m: Machine, one: Value) -> list[VSet] | None:
    """A node's children in JAX's order; None for a leaf or a value not known."""
    found = keyed_children(m, one)
    return None if found is None else [child for _, child in found]


def keyed_children(m: Machine, one: Value) -> list[tuple[Value, VSet]] | None:
    """A node's (key, child) pairs in JAX's order; None for a leaf or a value not known."""
    if isinstance(one, Container):
        if not one.exact or one.kind not in ("tuple", "list", "dict"):
            return None
        if one.kind == "dict":
            return [(TreeKey("dict", _key_of(k)), value) for k, value in _sorted(one)]
        return [(TreeKey("index", i), item) for i, item in enumerate(one.items)]
    if isinstance(one, InstanceObj) and _registration(one) is not None:
        flattened = _flatten(m, one)
        return None if flattened is None else flattened[0]
    return None


def _key_of(key: Value) -> object:
    return key.value if isinstance(key, Const) else key


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


# -- registrations -------------------------------------------------------------------------


def register_class(cls: ClassObj, kind: str, keywords: dict[str, VSet]) -> None:
    """A class decorator of ``jax_api`` registering ``cls`` (``registers_node``), called
    as a decorator or with the field names (``register_dataclass(C, data_fields=...,
    meta_fields=...)``)."""
    data = _names(keywords.get("data_fields"))
    meta = _names(keywords.get("meta_fields"))
    _register(cls, Registration(kind, data=data, meta=meta))


def register_functions(
    kind: str,
) -> Callable[[Machine, list[VSet], dict[str, VSet], object], Outcome]:
    """``register_pytree_node(C, flatten, unflatten)`` (``kind`` ``NODE_FUNCTIONS``) and
    ``register_pytree_with_keys(C, flatten_with_keys, unflatten)``: what JAX calls to
    flatten and rebuild a ``C``."""
    flatten = "flatten_func" if kind == NODE_FUNCTIONS else "flatten_with_keys"
    names = ("nodetype", flatten, "unflatten_func")

    def register(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: object) -> Outcome:
        given = [args[i] if i < len(args) else kw.get(key) for i, key in enumerate(names)]
        cls = only(given[0]) if given[0] is not None else None
        if isinstance(cls, ClassObj) and given[1] is not None and given[2] is not None:
            _register(cls, Registration(kind, given[1], given[2]))
        return Outcome(returns=vset(Const(None)))

    return register


def _register(cls: ClassObj, registration: Registration) -> None:
    journal.touch(cls)
    cls.pytree = registration


def _names(value: VSet | None) -> tuple[str, ...] | None:
    found = string_items(only(value)) if value is not None else None
    return None if found is None else tuple(found)


def _registration(instance: InstanceObj) -> Registration | None:
    """How JAX flattens ``instance``: its exact class's registration."""
    cls = instance.cls
    if isinstance(cls, ClassObj) and isinstance(cls.pytree, Registration):
        return cls.pytree
    return None


def _flatten(m: Machine, instance: InstanceObj) -> tuple[list[tuple[Value, VSet]], VSet] | None:
    """``instance``'s (key, child) pairs and its auxiliary data, as its registration
    flattens it."""
    registration = _registration(instance)
    cls = instance.cls
    if registration is None or not isinstance(cls, ClassObj):
        return None
    kind = registration.kind
    if kind == jax_api.NODE_STATIC:
        return [], vset(instance)
    if kind == jax_api.NODE_FIELDS:
        data, meta = _fields(cls, registration)
        if data is None or any(name not in instance.attrs for name in data):
            return None
        aux = Container("tuple")
        aux.items = [instance.attrs.get(name, ANYTHING) for name in meta]
        return [(TreeKey("attr", name), instance.attrs[name]) for name in data], vset(aux)
    if kind in (jax_api.NODE_METHODS, jax_api.NODE_METHODS_WITH_KEYS):
        method_name = "tree_flatten" if kind == jax_api.NODE_METHODS else "tree_flatten_with_keys"
        method = m.expressions.class_attribute(cls, cls, method_name, Flow(), instance=instance)
        result = m.calls.call(method, [], {}, Flow())
    else:
        result = m.calls.call(registration.flatten, [vset(instance)], {}, Flow())
    keyed = kind in (jax_api.NODE_METHODS_WITH_KEYS, NODE_FUNCTIONS_WITH_KEYS)
    pair = only(result)
    if not (isinstance(pair, Container) and pair.exact and len(pair.items) == 2):
        return None
    items = only(pair.items[0])
    if not (isinstance(items, Container) and items.exact and items.kind in ("tuple", "list")):
        return None
    out: list[tuple[Value, VSet]] = []
    for i, item in enumerate(items.items):
        if not keyed:
            out.append((TreeKey("flat", i), item))
            continue
        key_child = only(item)
        if not (isinstance(key_child, Container) and key_child.exact and len(key_child.items) == 2):
            return None
        key = only(key_child.items[0])
        out.append((key if key is not None else TreeKey("flat", i), key_child.items[1]))
    return out, pair.items[1]


def _fields(cls: ClassObj, registration: Registration) -> tuple[list[str] | None, list[str]]:
    """A dataclass registration's data and meta field names: as given, or its dataclass
    fields, those whose metadata says ``static=True`` being meta."""
    if registration.data is not None:
        return list(registration.data), list(registration.meta or ())
    if cls.fields is None:
        return None, []
    data: list[str] = []
    meta: list[str] = []
    for name, default in cls.fields:
        (meta if _static_field(default) else data).append(name)
    return data, meta


def _static_field(default: VSet | None) -> bool:
    marker = only(default) if default is not None else None
    if not (isinstance(marker, InstanceObj) and marker.cls == External("dataclasses.Field")):
        return False
    metadata = only(marker.attrs.get("metadata", NOTHING))
    if not (isinstance(metadata, Container) and metadata.kind == "dict"):
        return False
    return any(
        key == Const("static") and only(value) == Const(True) for key, value in metadata.entries
    )


def _unflatten(m: Machine, instance: InstanceObj, aux: VSet, new: list[VSet]) -> VSet:
    """A node like ``instance`` rebuilt from its auxiliary data and new children."""
    registration = _registration(instance)
    cls = instance.cls
    if registration is None or not isinstance(cls, ClassObj):
        return ANYTHING
    kind = registration.kind
    if kind == jax_api.NODE_STATIC:
        return aux
    if kind == jax_api.NODE_FIELDS:
        data, meta = _fields(cls, registration)
        made = InstanceObj(cls)
        made.attrs.update(zip(data or [], new, strict=False))
        kept = only(aux)
        if isinstance(kept, Container):
            made.attrs.update(zip(meta, kept.items, strict=False))
        return vset(made)
    rebuilt = Container("tuple")
    rebuilt.items = list(new)
    if kind in (jax_api.NODE_METHODS, jax_api.NODE_METHODS_WITH_KEYS):
        method = m.expressions.class_attribute(cls, cls, "tree_unflatten", Flow(), instance=None)
        return m.calls.call(method, [aux, vset(rebuilt)], {}, Flow())
    return m.calls.call(registration.unflatten, [aux, vset(rebuilt)], {}, Flow())


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
    return _with_structure(tree_leaves(m, args, keywords), args)


def _with_structure(listed: VSet | None, args: list[VSet]) -> VSet | None:
    """(``listed``, the structure of the tree ``args[0]``), when ``listed`` is known."""
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


def tree_leaves_with_path(m: Machine, args: list[VSet], keywords: dict[str, VSet]) -> VSet | None:
    """``jax.tree.leaves_with_path(tree)``: a list of (key path, leaf) pairs."""
    if not args or "is_leaf" in keywords or len(args) > 1:
        return None
    found = keyed_leaves(m, args[0], ())
    if found is None:
        return None
    made = Container("list")
    for path, leaf in found:
        keys = Container("tuple")
        keys.items = [vset(key) for key in path]
        pair = Container("tuple")
        pair.items = [vset(keys), leaf]
        made.items.append(vset(pair))
    return vset(made)


def tree_flatten_with_path(m: Machine, args: list[VSet], keywords: dict[str, VSet]) -> VSet | None:
    """``jax.tree.flatten_with_path(tree)``: (its (key path, leaf) pairs, its structure)."""
    return _with_structure(tree_leaves_with_path(m, args, keywords), args)


def tree_all(m: Machine, args: list[VSet], keywords: dict[str, VSet]) -> VSet | None:
    """``jax.tree.all(tree)``: whether every leaf is true, when each is known."""
    from typed_pallas_mypy.inference.evaluator.expressions import truth

    if len(args) != 1 or "is_leaf" in keywords:
        return None
    found = leaves(m, args[0])
    if found is None:
        return None
    answers = [truth(leaf) for leaf in found]
    if any(a is False for a in answers):
        return vset(Const(False))
    return vset(Const(True)) if all(a is True for a in answers) else None


def keystr(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: object) -> Outcome:
    """``jax.tree_util.keystr(path)``: the keys written one after another (``['w']``,
    ``[0]``, ``.name``), when each is known (a flattened index's text is not)."""
    path = only(args[0]) if len(args) == 1 and not kw else None
    if not (isinstance(path, Container) and path.exact and path.kind == "tuple"):
        return Outcome(returns=ANYTHING)
    text = ""
    for item in path.items:
        key = only(item)
        if not isinstance(key, TreeKey) or key.kind == "flat":
            return Outcome(returns=ANYTHING)
        if key.kind == "attr":
            text += f".{key.value}"
        else:
            text += f"[{key.value!r}]"
    return Outcome(returns=vset(Const(text)))


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
    "jax.tree.leaves_with_path": tree_leaves_with_path,
    "jax._src.tree.leaves_with_path": tree_leaves_with_path,
    "jax.tree_util.tree_leaves_with_path": tree_leaves_with_path,
    "jax._src.tree_util.tree_leaves_with_path": tree_leaves_with_path,
    "jax.tree.flatten_with_path": tree_flatten_with_path,
    "jax._src.tree.flatten_with_path": tree_flatten_with_path,
    "jax.tree_util.tree_flatten_with_path": tree_flatten_with_path,
    "jax._src.tree_util.tree_flatten_with_path": tree_flatten_with_path,
    "jax.tree.all": tree_all,
    "jax._src.tree.all": tree_all,
    "jax.tree_util.tree_all": tree_all,
    "jax._src.tree_util.tree_all": tree_all,
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
#: ``jax.tree_util.keystr``'s spellings
KEYSTR: Final = ("jax.tree_util.keystr", "jax._src.tree_util.keystr")
#: ``register_pytree_node`` and ``register_pytree_with_keys``' spellings, by kind
REGISTER_FUNCTIONS: Final = _REGISTER_FUNCTIONS
