"""Node helpers shared by every transformer: positions, names, spellings.

Pure functions over mypy's AST. What it does not do: walk statements, decide anything
about platforms, or keep state.
"""

from __future__ import annotations

from typing import Final

from mypy.nodes import CallExpr, Expression, IndexExpr, MemberExpr, NameExpr, Node, RefExpr

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
        return expr.fullname
    if isinstance(expr, MemberExpr):
        base = ref_fullname(expr.expr)
        if base is not None:
            return f"{base}.{expr.name}"
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
