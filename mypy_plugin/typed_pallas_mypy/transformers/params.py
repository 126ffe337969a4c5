"""Which compiler-params class a call's ``compiler_params`` argument is.

A call of a params factory (a function, in any module, whose every ``return``
constructs the same class: ``def params(): return pltpu.CompilerParams(...)``) is that
class, read by the inference, whatever the factory's annotation says. Otherwise from
the type mypy inferred for the argument (inline constructor, local variable, annotated
factory, ``functools.partial`` keyword): the class's fullname, or
that of a base, looked up in ``typed_pallas._platforms.PARAMS_BY_FULLNAME``; also
``typed_pallas.CompilerParams[Literal["tpu"]]`` annotations (platform known, class not).
Only when that type is ``Any`` (a variable in an untyped context) does it read the
source: a constructor call, or a local variable's assignments in the enclosing
function.

Unknown means silent: JAX's protocol, ``Any`` from a ``getattr`` shim, a parameter, a
``**kwargs`` splat, or a union of classes all give ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from mypy.nodes import (
    CallExpr,
    Expression,
    FuncItem,
    MemberExpr,
    NameExpr,
)
from mypy.types import (
    AnyType,
    Instance,
    LiteralType,
    NoneType,
    Type,
    UnionType,
    get_proper_type,
)

from typed_pallas import _platforms
from typed_pallas_mypy import evidence_tables, fullnames
from typed_pallas_mypy.transformers.module_index import ModuleIndex
from typed_pallas_mypy.transformers.nodes import Pos, ref_fullname

_MAX_DEPTH: Final = 3


@dataclass(frozen=True)
class Params:
    """What is known of one params value."""

    #: registry platform, "tpu" or "gpu"
    platform: str
    #: the exact class, when known (not for ``CompilerParams[Literal["gpu"]]``)
    row: _platforms.ParamsClass | None

    @property
    def backend(self) -> str | None:
        return self.row.backend if self.row is not None else None

    @property
    def lowers_on(self) -> frozenset[str]:
        if self.row is not None:
            return frozenset(self.row.lowers_on)
        return frozenset(_platforms.LOWERINGS_OF_NAME.get(self.platform, frozenset()))

    @property
    def title(self) -> str:
        if self.row is not None:
            return f"{self.row.public_fullname}"
        return f"CompilerParams[Literal[{self.platform!r}]]"


class _Absent:
    """``compiler_params`` not given, or ``None``: the backend's default."""


ABSENT: Final = _Absent()

Resolved = Params | _Absent | None


def _same(results: list[Resolved]) -> Resolved:
    known = [r for r in results if not isinstance(r, _Absent)]
    if not known:
        return ABSENT if results else None
    first = known[0]
    if first is None or any(r != first for r in known):
        return None
    return first


def from_type(typ: Type) -> Resolved:
    proper = get_proper_type(typ)
    if isinstance(proper, NoneType):
        return ABSENT
    if isinstance(proper, Instance):
        for base in proper.type.mro:
            row = _platforms.PARAMS_BY_FULLNAME.get(base.fullname)
            if row is not None:
                return Params(row.platform, row)
            if (
                base.fullname == fullnames.TYPED_PROTOCOL
                and proper.type.fullname == fullnames.TYPED_PROTOCOL
            ):
                if len(proper.args) == 1:
                    arg = get_proper_type(proper.args[0])
                    if isinstance(arg, LiteralType) and isinstance(arg.value, str):
                        return _from_platform(arg.value)
                return None
        return None
    if isinstance(proper, UnionType):
        return _same([from_type(item) for item in proper.items])
    return None


def _from_platform(platform: str) -> Params | None:
    rows = [r for r in _platforms.PARAMS_CLASSES if r.platform == platform]
    if not rows:
        return None
    return Params(platform, rows[0] if len(rows) == 1 else None)


def is_any(typ: Type | None) -> bool:
    return typ is None or isinstance(get_proper_type(typ), AnyType)


def resolve(
    expr: Expression | None,
    typ: Type | None,
    index: ModuleIndex,
    func: FuncItem | None,
    pos: Pos,
) -> Resolved:
    """The params ``expr`` (of type ``typ``) holds at ``pos`` inside ``func``."""
    if expr is None:
        return ABSENT
    returned = _factory(expr, index)
    if returned is not None:
        return returned
    if not is_any(typ):
        assert typ is not None
        return from_type(typ)
    return from_syntax(expr, index, func, pos, 0)


def from_syntax(
    expr: Expression, index: ModuleIndex, func: FuncItem | None, pos: Pos, depth: int
) -> Resolved:
    if depth > _MAX_DEPTH:
        return None
    if isinstance(expr, NameExpr):
        if expr.fullname == "builtins.None":
            return ABSENT
        return _from_variable(expr, index, func, pos, depth)
    if isinstance(expr, CallExpr):
        name = ref_fullname(expr.callee)
        if name is not None:
            row = _platforms.PARAMS_BY_FULLNAME.get(name)
            if row is not None:
                return Params(row.platform, row)
        return _factory(expr, index)
    return None


def _factory(expr: Expression, index: ModuleIndex) -> Params | None:
    """The params a factory call returns, read by the inference from the factory's
    ``return`` statements (in any module; its annotation, if any, is not trusted: what
    it constructs is what runs)."""
    if not isinstance(expr, CallExpr) or index.cross is None:
        return None
    backend = index.cross.returned_params(expr)
    row = evidence_tables.ROW_OF_BACKEND.get(backend)
    return Params(row.platform, row) if row is not None else None


def factory_note(expr: Expression, typ: Type | None, index: ModuleIndex) -> str | None:
    """A note for params a factory returns that its annotation names otherwise (the
    annotation is not what runs)."""
    returned = _factory(expr, index)
    if returned is None or typ is None or is_any(typ):
        return None
    declared = from_type(typ)
    if not isinstance(declared, Params) or declared == returned:
        return None
    assert isinstance(expr, CallExpr)
    name = expr.callee.name if isinstance(expr.callee, (NameExpr, MemberExpr)) else "the factory"
    return (
        f"{name}() returns {returned.title} although it is annotated {declared.title}: "
        "what it constructs is what JAX lowers"
    )


def _from_variable(
    expr: NameExpr, index: ModuleIndex, func: FuncItem | None, pos: Pos, depth: int
) -> Resolved:
    for owner in (func, None):
        key = (id(owner) if owner is not None else 0, expr.name)
        values = [value for at, value in index.assignments.get(key, []) if at < pos]
        if values:
            return _same([from_syntax(v, index, owner, pos, depth + 1) for v in values])
        if owner is not None and _is_argument(owner, expr.name):
            return None
    return None


def _is_argument(func: FuncItem, name: str) -> bool:
    return any(arg.variable.name == name for arg in func.arguments)
