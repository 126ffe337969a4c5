"""Node helpers shared by every transformer: positions, names, spellings.

Pure functions over mypy's AST. What it does not do: walk statements, decide anything
about platforms, or keep state.
"""

from __future__ import annotations

from typing import Final, NamedTuple

from mypy.nodes import (
    ARG_NAMED,
    ARG_POS,
    ARG_STAR,
    CallExpr,
    Expression,
    IndexExpr,
    MemberExpr,
    NameExpr,
    Node,
    RefExpr,
)

from typed_pallas import _platforms
from typed_pallas_mypy.fullnames import FUNCTOOLS_PARTIAL

#: A source position: (line, column).
Pos = tuple[int, int]

_END: Final = 10**9


def start_of(node: Node) -> Pos:
    return (node.line, max(node.column, 0))


def end_of(node: Node) -> Pos:
    end_line = node.end_line if node.end_line is not None else node.line
    end_col = node.end_column if node.end_column is not None else _END
    return (end_line, end_col)


def ref_fullname(expr: Expression) -> str | None:
    """The resolved fully qualified name of a reference, or None.

    ``pltpu.MemorySpace.SMEM`` (an attribute of a class) resolves through its base.
    """
    if isinstance(expr, RefExpr) and expr.fullname:
        return _platforms.canonical_fullname(expr.fullname)
    if isinstance(expr, MemberExpr):
        base = ref_fullname(expr.expr)
        if base is not None:
            return _platforms.canonical_fullname(f"{base}.{expr.name}")
    return None


def spelling(expr: Expression) -> str:
    """How the source spells a dotted reference (``pltpu.make_async_copy``)."""
    if isinstance(expr, NameExpr):
        return expr.name
    if isinstance(expr, MemberExpr):
        return f"{spelling(expr.expr)}.{expr.name}"
    if isinstance(expr, CallExpr):
        return f"{spelling(expr.callee)}(...)"
    if isinstance(expr, IndexExpr):
        return f"{spelling(expr.base)}[...]"
    return "<expression>"


class Passed(NamedTuple):
    """What a call passes for one parameter (``passed``)."""

    #: the argument written for it, or None
    expr: Expression | None
    #: whether a ``*args`` / ``**kwargs`` splat may pass it (when ``expr`` is None)
    splat: bool


def passed(call: CallExpr, name: str | None, position: int | None) -> Passed:
    """The argument ``call`` passes for the parameter called ``name`` at ``position``
    (either may be None: not passable that way). A ``functools.partial(f, ...)`` call
    passes what it binds for ``f``, and a call of one (``functools.partial(f, a)(b)``)
    what is bound and then given. A keyword is found wherever it is written; a position
    only before a ``*args`` splat (after it, which argument is where is not known)."""
    arguments = list(zip(call.arg_kinds, call.arg_names, call.args))
    if ref_fullname(call.callee) == FUNCTOOLS_PARTIAL:
        arguments = arguments[1:]  # partial(f, *bound, **bound_keywords)
    elif (
        isinstance(call.callee, CallExpr) and ref_fullname(call.callee.callee) == FUNCTOOLS_PARTIAL
    ):
        bound = call.callee
        arguments = list(zip(bound.arg_kinds, bound.arg_names, bound.args))[1:] + arguments
    positional = 0
    after_star = splat = False
    for kind, arg_name, arg in arguments:
        if kind == ARG_NAMED:
            if name is not None and arg_name == name:
                return Passed(arg, False)
        elif kind == ARG_POS:
            if not after_star and position is not None and positional == position:
                return Passed(arg, False)
            positional += 1
        else:  # ``*args`` or ``**kwargs``
            after_star = after_star or kind == ARG_STAR
            splat = True
    return Passed(None, splat)
