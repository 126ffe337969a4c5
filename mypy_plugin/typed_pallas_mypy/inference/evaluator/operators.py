"""Binary operators as Python applies them: an instance whose class defines the
operator's special method (``__add__``, or the right operand's ``__radd__``: the data
model, 3.3.8) has it called; constants are folded, sequences concatenated, dicts merged
(``|``), arrays broadcast; anything else is unknown.

Comparisons of instances (``rich_compare``) follow the same protocol: ``a < b`` calls
``a.__lt__(b)``, else the reflection ``b.__gt__(a)``; ``==`` without ``__eq__`` is
identity; a class ``functools.total_ordering`` decorates gets the comparisons it lacks
from its ``__lt__`` and ``__eq__``, as that decorator writes them.

What it does not do: comparisons of constants and containers and boolean operators
(``expressions``), or in-place updates (``a += b`` on a list or a dict: ``statements``).
"""

from __future__ import annotations

import ast
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from typed_pallas_mypy.inference.evaluator.domain import (
    ANYTHING,
    Array,
    ClassObj,
    Const,
    Container,
    Flow,
    InstanceObj,
    VSet,
    has_array,
    join,
    only,
    plain_class,
    vset,
)
from typed_pallas_mypy.inference.evaluator.expressions import broadcast_shape, defines, set_entry

if TYPE_CHECKING:
    from typed_pallas_mypy.inference.evaluator.machine import Machine

_BINARY: Final[dict[type[ast.operator], Callable[[object, object], object]]] = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
}
#: a binary operator's special methods (the data model, 3.3.8): forward, reflected
_OPERATOR_METHODS: Final[dict[type[ast.operator], tuple[str, str]]] = {
    ast.Add: ("__add__", "__radd__"),
    ast.Sub: ("__sub__", "__rsub__"),
    ast.Mult: ("__mul__", "__rmul__"),
    ast.MatMult: ("__matmul__", "__rmatmul__"),
    ast.Div: ("__truediv__", "__rtruediv__"),
    ast.FloorDiv: ("__floordiv__", "__rfloordiv__"),
    ast.Mod: ("__mod__", "__rmod__"),
    ast.Pow: ("__pow__", "__rpow__"),
    ast.LShift: ("__lshift__", "__rlshift__"),
    ast.RShift: ("__rshift__", "__rrshift__"),
    ast.BitAnd: ("__and__", "__rand__"),
    ast.BitOr: ("__or__", "__ror__"),
    ast.BitXor: ("__xor__", "__rxor__"),
}


def binary(m: Machine, op_node: ast.operator, left: VSet, right: VSet, flow: Flow) -> VSet:
    """``left <op> right``: constants folded, sequences concatenated, arrays
    broadcast, and an instance whose class defines the operator's special method
    (``__add__``, or the right operand's ``__radd__``) has it called."""
    a, b = only(left), only(right)
    methods = _OPERATOR_METHODS.get(type(op_node))
    if methods is not None:
        # ``a.__add__(b)``, else ``b.__radd__(a)``
        for owner, name, other in ((a, methods[0], right), (b, methods[1], left)):
            if isinstance(owner, InstanceObj) and isinstance(owner.cls, ClassObj):
                if defines(owner.cls, name):
                    cls = owner.cls
                    method = m.expressions.class_attribute(cls, cls, name, flow, instance=owner)
                    return m.calls.call(method, [other], {}, flow)
    op = _BINARY.get(type(op_node))
    if isinstance(a, Const) and isinstance(b, Const) and op is not None:
        try:
            result = op(a.value, b.value)
        except Exception:
            return ANYTHING
        if isinstance(result, (str, int, float, bool, bytes, tuple)) and len(repr(result)) < 200:
            return vset(Const(result))
        return ANYTHING
    if (
        isinstance(a, Container)
        and isinstance(b, Container)
        and isinstance(op_node, ast.BitOr)
        and a.kind == b.kind == "dict"
    ):
        # ``a | b``: a new dict, ``b``'s keys over ``a``'s
        merged = Container("dict")
        merged.entries = list(a.entries)
        for k, v in b.entries:
            set_entry(merged, k, v)
        merged.exact = a.exact and b.exact
        merged.loose = join(a.loose, b.loose)
        return vset(merged)
    if isinstance(a, Container) and isinstance(b, Container) and isinstance(op_node, ast.Add):
        if a.kind == b.kind and a.kind in ("list", "tuple"):
            made = Container(a.kind)
            made.items = [*a.items, *b.items]
            made.exact = a.exact and b.exact
            made.loose = join(a.loose, b.loose)
            return vset(made)
    if has_array(left) or has_array(right):
        return vset(Array(broadcast_shape(left, right)))
    return ANYTHING


#: a comparison's special methods: forward, reflected
_COMPARISON_METHODS: Final[dict[type[ast.cmpop], tuple[str, str]]] = {
    ast.Lt: ("__lt__", "__gt__"),
    ast.Gt: ("__gt__", "__lt__"),
    ast.LtE: ("__le__", "__ge__"),
    ast.GtE: ("__ge__", "__le__"),
    ast.Eq: ("__eq__", "__eq__"),
    ast.NotEq: ("__ne__", "__ne__"),
}
#: the flag of a class ``functools.total_ordering`` decorated (``ClassDecoratorRow.orders``)
TOTAL_ORDERING: Final = "total_ordering"


def rich_compare(m: Machine, op: ast.cmpop, left: VSet, right: VSet, flow: Flow) -> bool | None:
    """``left <op> right`` where one side is an instance of a class of the program: its
    special method, else the other side's reflection; None where not known."""
    from typed_pallas_mypy.inference.evaluator.expressions import truth

    methods = _COMPARISON_METHODS.get(type(op))
    a, b = only(left), only(right)
    if methods is None or a is None or b is None:
        return None
    for owner, name, other in ((a, methods[0], b), (b, methods[1], a)):
        if not (isinstance(owner, InstanceObj) and isinstance(owner.cls, ClassObj)):
            continue
        if defines(owner.cls, name):
            cls = owner.cls
            method = m.expressions.class_attribute(cls, cls, name, flow, instance=owner)
            return truth(m.calls.call(method, [vset(other)], {}, flow))
        derived = _total_ordering(m, owner, name, other, flow)
        if derived is not None:
            return derived
    if isinstance(op, (ast.Eq, ast.NotEq)) and isinstance(a, InstanceObj):
        same = _equal(m, a, b, flow)
        return same if same is None or isinstance(op, ast.Eq) else not same
    return None


def _equal(m: Machine, a: InstanceObj, b: object, flow: Flow) -> bool | None:
    """``a == b`` for an instance: its ``__eq__``, or identity."""
    from typed_pallas_mypy.inference.evaluator.expressions import truth

    if isinstance(a.cls, ClassObj) and defines(a.cls, "__eq__"):
        cls = a.cls
        method = m.expressions.class_attribute(cls, cls, "__eq__", flow, instance=a)
        return truth(m.calls.call(method, [vset(b)], {}, flow))  # type: ignore[arg-type]
    if isinstance(a.cls, ClassObj) and plain_class(a.cls):
        return a is b
    return None


def _total_ordering(
    m: Machine, owner: InstanceObj, name: str, other: object, flow: Flow
) -> bool | None:
    """A comparison ``functools.total_ordering`` writes from ``__lt__`` (``a > b`` is
    ``not a < b and a != b``, ``a <= b`` is ``a < b or a == b``, ``a >= b`` is
    ``not a < b``)."""
    from typed_pallas_mypy.inference.evaluator.expressions import truth

    cls = owner.cls
    if not isinstance(cls, ClassObj) or name not in ("__gt__", "__le__", "__ge__"):
        return None
    if not any(isinstance(k, ClassObj) and TOTAL_ORDERING in k.flags for k in cls.mro):
        return None
    if not defines(cls, "__lt__"):
        return None
    method = m.expressions.class_attribute(cls, cls, "__lt__", flow, instance=owner)
    less = truth(m.calls.call(method, [vset(other)], {}, flow))  # type: ignore[arg-type]
    if less is None:
        return None
    if name == "__ge__":
        return not less
    equal = _equal(m, owner, other, flow)
    if name == "__le__":
        return True if less else equal
    if less:
        return False
    return None if equal is None else not equal
