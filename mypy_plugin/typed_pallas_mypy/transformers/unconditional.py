"""Which parts of a function run on every path: the code a requirement may come from.

A call counts toward a function's platform requirement only when it runs whenever the
function returns normally: not under ``if``/``while``/``try`` with handlers, not in a
branch of a conditional expression, a short-circuit operand, a lambda or a
comprehension, and not after an early ``return``. (A ``raise`` ends no successful path,
so code after an argument check still counts.) The body of a ``for`` loop over a
non-empty literal sequence (``for block in (128, 256):``) runs at least once: its first
iteration counts, up to a ``break`` or ``continue``.

``alternatives(stmt)`` gives the bodies of an ``if`` / ``elif`` / ``else`` or of a
``match``, one of which runs (``None`` standing for "none of them": no ``else``, or no
case that always matches): a requirement may then come from every alternative
(``requirements``).

What it does not do: decide what the calls mean (``platform_facts``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence

from mypy.nodes import (
    AssertStmt,
    AssignmentStmt,
    Block,
    BreakStmt,
    ClassDef,
    ConditionalExpr,
    ContinueStmt,
    Decorator,
    DictionaryComprehension,
    Expression,
    ExpressionStmt,
    ForStmt,
    FuncDef,
    GeneratorExpr,
    IfStmt,
    LambdaExpr,
    ListExpr,
    MatchStmt,
    Node,
    OperatorAssignmentStmt,
    OpExpr,
    OverloadedFuncDef,
    PassStmt,
    RaiseStmt,
    ReturnStmt,
    SetExpr,
    StarExpr,
    Statement,
    TryStmt,
    TupleExpr,
    WhileStmt,
    WithStmt,
)
from mypy.patterns import AsPattern, Pattern
from mypy.server.subexpr import get_subexpressions


def _contains_return(stmt: Statement) -> bool:
    """Whether a compound statement may return early (``return`` nested in it)."""
    if isinstance(stmt, ReturnStmt):
        return True
    if isinstance(stmt, IfStmt):
        return any(_block_returns(b) for b in stmt.body) or (
            stmt.else_body is not None and _block_returns(stmt.else_body)
        )
    if isinstance(stmt, (ForStmt, WhileStmt)):
        return _block_returns(stmt.body) or (
            stmt.else_body is not None and _block_returns(stmt.else_body)
        )
    if isinstance(stmt, WithStmt):
        return _block_returns(stmt.body)
    if isinstance(stmt, TryStmt):
        blocks = [stmt.body, *stmt.handlers]
        if stmt.else_body is not None:
            blocks.append(stmt.else_body)
        if stmt.finally_body is not None:
            blocks.append(stmt.finally_body)
        return any(_block_returns(b) for b in blocks)
    if isinstance(stmt, MatchStmt):
        return any(_block_returns(b) for b in stmt.bodies)
    if isinstance(stmt, Block):
        return _block_returns(stmt)
    return False


def may_return(stmt: Statement) -> bool:
    """Whether a compound statement may return from the function (a ``return`` in it)."""
    return not isinstance(stmt, ReturnStmt) and _contains_return(stmt)


def _block_returns(block: Block) -> bool:
    return any(_contains_return(s) for s in block.body)


def _conditional_parts(expr: Expression) -> Iterator[Node]:
    """Subexpressions of ``expr`` that may not be evaluated when ``expr`` is."""
    if isinstance(expr, ConditionalExpr):
        yield expr.if_expr
        yield expr.else_expr
    elif isinstance(expr, OpExpr) and expr.op in ("and", "or"):
        yield expr.right
    elif isinstance(expr, LambdaExpr):
        yield expr.body
    elif isinstance(expr, GeneratorExpr):
        yield expr.left_expr
        yield from expr.sequences[1:]
        for conds in expr.condlists:
            yield from conds
    elif isinstance(expr, DictionaryComprehension):
        if expr.key is not None:
            yield expr.key
        yield expr.value
        yield from expr.sequences[1:]
        for conds in expr.condlists:
            yield from conds


def _non_empty_literal(expr: Expression) -> bool:
    """``(128, 256)``, ``[a, b]``, ``{x}``: a sequence a loop runs over at least once."""
    return (
        isinstance(expr, (TupleExpr, ListExpr, SetExpr))
        and bool(expr.items)
        and not any(isinstance(item, StarExpr) for item in expr.items)
    )


def unconditional_expressions(roots: Sequence[Node]) -> list[Expression]:
    """Every subexpression of ``roots`` that is evaluated whenever they are."""
    found = [e for root in roots for e in get_subexpressions(root)]
    skipped: set[int] = set()
    for expr in found:
        if id(expr) in skipped:
            continue
        for part in _conditional_parts(expr):
            for sub in get_subexpressions(part):
                skipped.add(id(sub))
    return [e for e in found if id(e) not in skipped]


def unconditional_roots(body: Block) -> list[Node]:
    """The parts of a function body that run on every path that does not raise."""
    roots: list[Node] = []
    for stmt in body.body:
        if isinstance(stmt, (ExpressionStmt, AssignmentStmt, OperatorAssignmentStmt, AssertStmt)):
            roots.append(stmt)
        elif isinstance(stmt, ReturnStmt):
            if stmt.expr is not None:
                roots.append(stmt.expr)
            break
        elif isinstance(stmt, RaiseStmt):
            break
        elif isinstance(stmt, IfStmt):
            roots.append(stmt.expr[0])
            if _contains_return(stmt):
                break
        elif isinstance(stmt, (ForStmt, WhileStmt)):
            roots.append(stmt.expr)
            if isinstance(stmt, ForStmt) and _non_empty_literal(stmt.expr):
                roots.extend(unconditional_roots(stmt.body))
            if _contains_return(stmt):
                break
        elif isinstance(stmt, (BreakStmt, ContinueStmt)):
            break
        elif isinstance(stmt, WithStmt):
            roots.extend(stmt.expr)
            if _contains_return(stmt.body):
                break
            roots.extend(unconditional_roots(stmt.body))
        elif isinstance(stmt, TryStmt):
            if _contains_return(stmt):
                break
            if stmt.finally_body is not None:
                roots.extend(unconditional_roots(stmt.finally_body))
        elif isinstance(stmt, MatchStmt):
            roots.append(stmt.subject)
            if _contains_return(stmt):
                break
        elif isinstance(stmt, Block):
            roots.extend(unconditional_roots(stmt))
        elif isinstance(stmt, (PassStmt, FuncDef, Decorator, ClassDef, OverloadedFuncDef)):
            continue
    return roots


def alternatives(stmt: Statement) -> tuple[Expression, list[Block | None]] | None:
    """(what is evaluated first, the bodies one of which runs) of an ``if`` chain or a
    ``match``; ``None`` in the list: the path where no body runs. None for any other
    statement."""
    if isinstance(stmt, IfStmt) and len(stmt.expr) == 1 and len(stmt.body) == 1:
        return stmt.expr[0], [stmt.body[0], stmt.else_body]
    if isinstance(stmt, MatchStmt):
        bodies: list[Block | None] = list(stmt.bodies)
        last = len(stmt.patterns) - 1
        exhaustive = (
            last >= 0 and stmt.guards[last] is None and _always_matches(stmt.patterns[last])
        )
        if not exhaustive:
            bodies.append(None)
        return stmt.subject, bodies
    return None


def _always_matches(pattern: Pattern) -> bool:
    """``case _:`` or ``case name:`` (a capture without a pattern)."""
    return isinstance(pattern, AsPattern) and pattern.pattern is None
