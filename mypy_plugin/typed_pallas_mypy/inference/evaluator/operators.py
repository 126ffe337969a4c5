"""Binary operators as Python applies them: an instance whose class defines the
operator's special method (``__add__``, or the right operand's ``__radd__``: the data
model, 3.3.8) has it called; constants are folded, sequences concatenated, dicts merged
(``|``), arrays broadcast; anything else is unknown.

What it does not do: comparisons and boolean operators (``expressions``), or in-place
updates (``a += b`` on a list or a dict: ``statements``).
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
