"""Platform guards: which platforms a condition, an early exit or a dispatch branch allows.

A guard narrows the lowering platform to a subset of ``UNIVERSE`` (``{"tpu", "cuda",
"rocm", "cpu"}``). What a condition tests is the inference's reading
(``Inference.condition_sets``: the one reading of conditions, for the project's code
as for its libraries: platform sources compared with literals, devices by shape and
their kinds, variables, guard helpers, ``any``/``all`` over devices), with platform
predicates answered by mypy's types (``predicates``). Here:

* ``Region`` / ``Guard``: a span and the platforms it allows, and what said so;
* early exits: ``if <condition>: raise/return/continue/break/pytest.skip(...)``, and
  ``assert <condition>``, narrow the statements after them (``narrowing_after``);
* the ``tpu=`` / ``cuda=`` / ``rocm=`` / ``gpu=`` / ``default=`` branches of
  ``jax.lax.platform_dependent`` and ``typed_pallas.dispatch`` (``branches``);
* ``@typed_pallas.platform(...)`` tags, and a module's configured platforms
  (``configured_decision``), which hold where no guard decides.

What it does not do: walk a module (``module_index`` does), read a condition, or look
at params.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from mypy.nodes import (
    AssertStmt,
    Block,
    BreakStmt,
    CallExpr,
    ContinueStmt,
    Expression,
    ExpressionStmt,
    IfStmt,
    MemberExpr,
    RaiseStmt,
    ReturnStmt,
    Statement,
    StrExpr,
)

from typed_pallas import _platforms
from typed_pallas_mypy import fullnames
from typed_pallas_mypy.transformers.nodes import Pos, ref_fullname

#: Every platform a guard can speak of. "cpu" is there so that ``!= "tpu"`` is not "gpu".
UNIVERSE: Final = _platforms.GUARD_UNIVERSE
#: Platforms Pallas lowers for (cpu needs interpret mode).
LOWERING: Final = _platforms.LOWERING_SET

#: (platforms when a condition is true, platforms when it is false); None = not known.
Sets = tuple[frozenset[str] | None, frozenset[str] | None]


def name_set(name: str) -> frozenset[str]:
    """Lowering platforms a platform string stands for ("gpu" is cuda and rocm)."""
    return frozenset(_platforms.LOWERINGS_OF_GUARD_NAME.get(name, frozenset()))


@dataclass(frozen=True)
class Region:
    """A span of source in which the lowering platform is one of ``platforms``."""

    start: Pos
    end: Pos
    platforms: frozenset[str]
    #: what decided it, for notes ("the if at line 12")
    why: str

    def contains(self, pos: Pos) -> bool:
        return self.start <= pos <= self.end


@dataclass(frozen=True)
class Guard:
    """The platforms a position may lower for, and the regions that say so."""

    platforms: frozenset[str]
    regions: tuple[Region, ...]


def configured_decision(
    configured: frozenset[str] | None, module: str
) -> tuple[frozenset[str], str] | None:
    """(lowering platforms, note) of a module configured with ``[tool.typed-pallas]
    platforms``, or None when it is not configured (or names no lowering platform)."""
    if not configured:
        return None
    lowering = frozenset(p for name in configured for p in name_set(name)) & LOWERING
    if not lowering:
        return None
    return lowering, (
        f"module {module} is configured for platforms {', '.join(sorted(lowering))} "
        "([tool.typed-pallas] platforms)"
    )


# --------------------------------------------------------------------------- exits


def exits(block: Block) -> bool:
    """Whether the block always leaves (raise, return, continue, break, a skip call)."""
    if not block.body:
        return False
    last = block.body[-1]
    if isinstance(last, (RaiseStmt, ReturnStmt, ContinueStmt, BreakStmt)):
        return True
    if isinstance(last, ExpressionStmt) and isinstance(last.expr, CallExpr):
        callee = last.expr.callee
        name = ref_fullname(callee)
        if name in fullnames.SKIP_CALLS:
            return True
        if isinstance(callee, MemberExpr) and callee.name in fullnames.SKIP_METHODS:
            return True
    return False


def narrowing_after(
    stmt: Statement, sets: Callable[[Expression], Sets]
) -> tuple[frozenset[str], str] | None:
    """The platforms the statements after ``stmt`` are left with, if it narrows them
    (``sets``: what a condition tests)."""
    if isinstance(stmt, IfStmt) and len(stmt.expr) == 1:
        true_set, false_set = sets(stmt.expr[0])
        body_exits = exits(stmt.body[0])
        else_exits = stmt.else_body is not None and exits(stmt.else_body)
        if body_exits and not else_exits and false_set is not None:
            return (false_set, f"the early exit at line {stmt.line}")
        if else_exits and not body_exits and true_set is not None:
            return (true_set, f"the early exit in the else at line {stmt.line}")
    elif isinstance(stmt, AssertStmt):
        true_set, _ = sets(stmt.expr)
        if true_set is not None:
            return (true_set, f"the assert at line {stmt.line}")
    return None


def platform_tag(decorators: list[Expression]) -> tuple[frozenset[str], int] | None:
    """(platforms, line) of a ``@typed_pallas.platform("tpu")`` decorator, if any."""
    for dec in decorators:
        if (
            isinstance(dec, CallExpr)
            and ref_fullname(dec.callee) in fullnames.PLATFORM_TAG
            and dec.args
        ):
            arg = dec.args[0]
            if isinstance(arg, StrExpr) and arg.value in _platforms.LOWERINGS_OF_NAME:
                return name_set(arg.value), dec.line
    return None


# --------------------------------------------------------------------------- branches

#: keyword of a platform_dependent / dispatch branch -> the platforms it runs for
BRANCH_KEYWORDS: Final = _platforms.LOWERINGS_OF_GUARD_NAME


def dispatch_title(call: CallExpr) -> str | None:
    """How notes name a platform dispatch call, or None if ``call`` is not one."""
    callee = ref_fullname(call.callee)
    if callee in fullnames.PLATFORM_DEPENDENT:
        return "jax.lax.platform_dependent"
    if callee in fullnames.TP_DISPATCH:
        return "typed_pallas.dispatch"
    return None


def branches(call: CallExpr) -> list[tuple[Expression, str, frozenset[str]]]:
    """(argument, keyword, platforms it runs for) of each branch of a dispatch call."""
    named: frozenset[str] = frozenset()
    targets: list[tuple[Expression, str]] = []
    for name, arg in zip(call.arg_names, call.args):
        if name is None:
            continue
        if name in BRANCH_KEYWORDS:
            named = named | BRANCH_KEYWORDS[name]
            targets.append((arg, name))
        elif name == "default":
            targets.append((arg, name))
    return [
        (arg, name, UNIVERSE - named if name == "default" else BRANCH_KEYWORDS[name])
        for arg, name in targets
    ]
