"""What ``value[key]`` gives, by the data model: a container's item (a ``defaultdict``'s
factory called for a missing key), an array's slice, a device list's device, a
namespace's name, a class's ``__class_getitem__`` or its metaclass's ``__getitem__``, an
enum's member, a named tuple's field, an instance's ``__getitem__``, and the items of an
instance of a ``dict``, ``list`` or ``set`` subclass (``__missing__`` for a key a dict does
not hold).

What it does not do: store an item (``statements.Statements.set_item``), or evaluate the
expressions of the subscript (``expressions.Expressions.subscript``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from typed_pallas_mypy.inference.evaluator import library
from typed_pallas_mypy.inference.evaluator.domain import (
    ANYTHING,
    DEVICE,
    NOTHING,
    Array,
    BoundMethod,
    ClassObj,
    Const,
    Container,
    Devices,
    External,
    Flow,
    FunctionObj,
    InstanceObj,
    Namespace,
    Value,
    VSet,
    join,
    only,
    vset,
)
from typed_pallas_mypy.inference.evaluator.expressions import (
    container_item,
    defines,
    indexed_shape,
    set_entry,
)

if TYPE_CHECKING:
    from typed_pallas_mypy.inference.evaluator.machine import Machine


def subscript_of(m: Machine, value: Value, key: VSet, flow: Flow) -> VSet:
    """``value[key]`` for one value ``value`` may be."""
    if isinstance(value, Container):
        found = container_item(value, key)
        one = only(key)
        if found == NOTHING and value.factory is not None and one is not None:
            # a defaultdict's missing key: the factory's value is stored and given
            made = m.calls.call(value.factory, [], {}, flow)
            set_entry(value, one, made)
            return made
        return found
    if isinstance(value, Array):
        return vset(Array(indexed_shape(value.shape, key)))
    if isinstance(value, Devices):
        return vset(DEVICE)
    if isinstance(value, Namespace):
        name = only(key)
        if isinstance(name, Const) and isinstance(name.value, str):
            return value.owner.attrs.get(name.value, ANYTHING)
        return ANYTHING
    if isinstance(value, External):
        return library.external_subscript(m, value, key)
    one = only(key)
    if isinstance(value, ClassObj) and "enum" not in value.flags:
        if defines(value, "__class_getitem__"):
            # ``Cls[key]``: ``__class_getitem__`` is a class method without the decorator
            found = m.expressions.class_attribute(
                value, value, "__class_getitem__", flow, instance=None
            )
            method = frozenset(
                BoundMethod(f, value) if isinstance(f, FunctionObj) else f for f in found
            )
            return m.calls.call(method, [key], {}, flow)
        meta = value.meta
        if meta is not None and defines(meta, "__getitem__"):
            method = m.expressions.class_attribute(meta, meta, "__getitem__", flow, instance=value)
            return m.calls.call(method, [key], {}, flow)
    if isinstance(value, ClassObj) and "enum" in value.flags:
        if isinstance(one, Const) and isinstance(one.value, str):
            members = value.attrs.get(one.value, NOTHING)
            if any(isinstance(v, InstanceObj) and v.cls is value for v in members):
                return members
        return ANYTHING
    if (
        isinstance(value, InstanceObj)
        and isinstance(value.cls, ClassObj)
        and "namedtuple" in value.cls.flags
        and value.cls.fields is not None
        and isinstance(one, Const)
        and isinstance(one.value, int)
        and not isinstance(one.value, bool)
    ):
        try:
            field_name, _ = value.cls.fields[one.value]
        except IndexError:
            return NOTHING
        return value.attrs.get(field_name, ANYTHING)
    if (
        isinstance(value, InstanceObj)
        and value.store is not None
        and isinstance(value.cls, ClassObj)
        and not defines(value.cls, "__getitem__")
    ):
        return _stored_item(m, value, value.cls, value.store, key, flow)
    if isinstance(value, InstanceObj) and isinstance(value.cls, ClassObj):
        getter = m.expressions.class_attribute(
            value.cls, value.cls, "__getitem__", flow, instance=value
        )
        if getter != ANYTHING:
            return m.calls.call(getter, [key], {}, flow)
    return ANYTHING


def _stored_item(
    m: Machine, instance: InstanceObj, cls: ClassObj, store: Container, key: VSet, flow: Flow
) -> VSet:
    """``instance[key]`` of a ``dict``, ``list`` or ``set`` subclass: the built-in
    lookup, which for a dict calls the class's ``__missing__`` with a key it does
    not hold (the data model, 3.3.7)."""
    found = container_item(store, key)
    if store.kind != "dict" or not defines(cls, "__missing__"):
        return found
    one = only(key)
    held = one is not None and any(k == one for k, _ in store.entries)
    if held:
        return found
    missing = m.expressions.class_attribute(cls, cls, "__missing__", flow, instance=instance)
    made = m.calls.call(missing, [key], {}, flow)
    return made if found == NOTHING else join(found, made)
