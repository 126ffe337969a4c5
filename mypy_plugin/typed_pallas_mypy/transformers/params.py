"""Which compiler-params class a call's ``compiler_params`` argument is.

First from the type mypy inferred for the argument (inline constructor, local
variable, annotated factory, ``functools.partial`` keyword): the class's fullname, or
that of a base, looked up in ``typed_pallas._platforms.PARAMS_BY_FULLNAME``; also
``typed_pallas.CompilerParams[Literal["tpu"]]`` annotations (platform known, class not).
Only when that type is ``Any`` (an unannotated factory or a variable in an untyped
context) does it read the source: a constructor call, a local variable's assignments
in the enclosing function, or the ``return`` statements of a factory of the same module.

Unknown means silent: JAX's protocol, ``Any`` from a ``getattr`` shim, a parameter, a
``**kwargs`` splat, or a union of classes all give ``None``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from mypy.nodes import (
    Block,
    CallExpr,
    Decorator,
    Expression,
    FuncDef,
    FuncItem,
    IfStmt,
    NameExpr,
    ReturnStmt,
    Statement,
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
from typed_pallas_mypy import fullnames
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
        factory = expr.callee.node if isinstance(expr.callee, NameExpr) else None
        if isinstance(factory, Decorator):
            return None  # a decorated factory may return anything
        if isinstance(factory, FuncDef) and index.owns(factory):
            returned = [
                from_syntax(value, index, factory, (10**9, 0), depth + 1)
                for value in _returns(factory.body)
            ]
            return _same(returned) if returned else None
    return None


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


def _returns(block: Block) -> list[Expression]:
    out: list[Expression] = []

    def walk(stmts: list[Statement]) -> None:
        for stmt in stmts:
            if isinstance(stmt, ReturnStmt) and stmt.expr is not None:
                out.append(stmt.expr)
            elif isinstance(stmt, IfStmt):
                for body in stmt.body:
                    walk(body.body)
                if stmt.else_body is not None:
                    walk(stmt.else_body.body)
            elif isinstance(stmt, Block):
                walk(stmt.body)

    walk(block.body)
    return out
