"""Guard and platform helpers, and the definitions of a module whose facts are stored.

* ``helper_kind(func, scope)``: whether a function is a **guard helper**
  (``def on_gpu(): return jax.default_backend() == "gpu"``: the platforms when it returns
  true and when false) or a **platform helper** (``def backend(): return
  jax.default_backend()``), read with ``guards`` (which needs mypy's names and declared
  types);
* ``definitions(tree)``: the fullnames of a module's top-level functions, methods and
  aliases (whose facts ``platform_facts`` stores in mypy's cache).

What a function lowers for is not inferred here but by the engine
(``typed_pallas_mypy.inference``), for the project and for installed packages alike.

What it does not do: keep or store facts (``platform_facts``, ``facts_store``), or
report anything (``decisions``).
"""

from __future__ import annotations

from mypy.nodes import (
    AssignmentStmt,
    CallExpr,
    ClassDef,
    Decorator,
    DictExpr,
    ExpressionStmt,
    FuncDef,
    IfStmt,
    MypyFile,
    NameExpr,
    OverloadedFuncDef,
    RefExpr,
    ReturnStmt,
    Statement,
    StrExpr,
    Var,
)

from typed_pallas_mypy.transformers import guards
from typed_pallas_mypy.transformers.guards import Sets


def helper_kind(func: FuncDef, scope: guards.GuardScope) -> tuple[Sets | None, bool]:
    """(guard sets, returns a platform) of a one-``return`` helper."""
    stmts = [s for s in func.body.body if not _is_docstring(s)]
    if len(stmts) != 1 or not isinstance(stmts[0], ReturnStmt) or stmts[0].expr is None:
        return None, False
    expr = stmts[0].expr
    if guards.is_platform_source(expr, scope, func):
        return None, True
    true_set, false_set = guards.conditions(expr, scope, func)
    if true_set is None and false_set is None:
        return None, False
    return (true_set, false_set), False


def definitions(tree: MypyFile) -> list[str]:
    """Fullnames of the top-level functions, methods and aliases of a module."""
    names: list[str] = []
    for stmt in tree.defs:
        names.extend(_defined(stmt))
    return names


def _defined(stmt: Statement) -> list[str]:
    if isinstance(stmt, (FuncDef, Decorator, OverloadedFuncDef)):
        return [stmt.fullname]
    if isinstance(stmt, ClassDef):
        out: list[str] = []
        for inner in stmt.defs.body:
            if isinstance(inner, (FuncDef, Decorator, OverloadedFuncDef)):
                out.append(inner.fullname)
        return out
    if isinstance(stmt, AssignmentStmt) and len(stmt.lvalues) == 1:
        lvalue = stmt.lvalues[0]
        if isinstance(lvalue, NameExpr) and isinstance(lvalue.node, Var) and lvalue.fullname:
            if isinstance(stmt.rvalue, (RefExpr, CallExpr, DictExpr)):
                return [lvalue.fullname]
    if isinstance(stmt, IfStmt):
        out = []
        for body in stmt.body:
            for inner in body.body:
                out.extend(_defined(inner))
        if stmt.else_body is not None:
            for inner in stmt.else_body.body:
                out.extend(_defined(inner))
        return out
    return []


def _is_docstring(stmt: Statement) -> bool:
    return isinstance(stmt, ExpressionStmt) and isinstance(stmt.expr, StrExpr)
