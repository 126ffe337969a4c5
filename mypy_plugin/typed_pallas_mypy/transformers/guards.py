"""Platform guards: which platforms a condition, an early exit or a dispatch branch allows.

A guard narrows the lowering platform to a subset of ``UNIVERSE`` (``{"tpu", "cuda",
"rocm", "cpu"}``):

* conditions on a platform source: ``jax.default_backend() == "tpu"``,
  ``jax.devices()[i].platform in ("cuda", "rocm")``, ``pltpu.is_tpu_device()``, a
  variable holding one of those, a guard helper (a function, in any module, that
  returns such a comparison), and ``not`` / ``and`` / ``or`` of them;
* early exits: ``if <condition>: raise/return/continue/break/pytest.skip(...)``, and
  ``assert <condition>``, narrow the statements after them;
* the ``tpu=`` / ``cuda=`` / ``rocm=`` / ``gpu=`` / ``default=`` branches of
  ``jax.lax.platform_dependent`` and ``typed_pallas.dispatch``;
* ``@typed_pallas.platform(...)`` tags, and a module's configured platforms
  (``configured_decision``), which hold where no guard decides.

``GuardScope`` is what a condition needs to know beyond the expression itself (which
names hold a platform, which calls are guard helpers); ``module_index`` implements it.
What it does not do: walk a module (``module_index`` does), or look at params.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final, Protocol

from mypy.nodes import (
    AssertStmt,
    Block,
    BreakStmt,
    CallExpr,
    ComparisonExpr,
    ContinueStmt,
    Expression,
    ExpressionStmt,
    FuncItem,
    IfStmt,
    IndexExpr,
    ListExpr,
    MemberExpr,
    NameExpr,
    OpExpr,
    RaiseStmt,
    ReturnStmt,
    SetExpr,
    Statement,
    StrExpr,
    TupleExpr,
    UnaryExpr,
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
    #: a ``@typed_pallas.platform(...)`` tag (the function does not branch itself)
    from_tag: bool = False

    def contains(self, pos: Pos) -> bool:
        return self.start <= pos <= self.end


@dataclass(frozen=True)
class Guard:
    """The platforms a position may lower for, and the regions that say so."""

    platforms: frozenset[str]
    regions: tuple[Region, ...]


class GuardScope(Protocol):
    """What conditions need to know about names and calls (``ModuleIndex``)."""

    def is_platform_variable(self, name: NameExpr, func: FuncItem | None) -> bool:
        """Whether ``name`` (read inside ``func``) holds a platform string."""

    def helper_sets(self, call: CallExpr) -> Sets | None:
        """For a call of a guard helper: its (true, false) platform sets."""

    def is_platform_call(self, call: CallExpr) -> bool:
        """Whether ``call`` calls a helper that returns a platform string."""

    def variable_condition(self, name: NameExpr, func: FuncItem | None) -> Expression | None:
        """The platform condition a variable was assigned once
        (``use_pallas = jax.default_backend() == "tpu" and ...``), if any."""


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
    stmt: Statement, scope: GuardScope, func: FuncItem | None
) -> tuple[frozenset[str], str] | None:
    """The platforms the statements after ``stmt`` are left with, if it narrows them."""
    if isinstance(stmt, IfStmt) and len(stmt.expr) == 1:
        true_set, false_set = conditions(stmt.expr[0], scope, func)
        body_exits = exits(stmt.body[0])
        else_exits = stmt.else_body is not None and exits(stmt.else_body)
        if body_exits and not else_exits and false_set is not None:
            return (false_set, f"the early exit at line {stmt.line}")
        if else_exits and not body_exits and true_set is not None:
            return (true_set, f"the early exit in the else at line {stmt.line}")
    elif isinstance(stmt, AssertStmt):
        true_set, _ = conditions(stmt.expr, scope, func)
        if true_set is not None:
            return (true_set, f"the assert at line {stmt.line}")
    return None


# --------------------------------------------------------------------------- conditions


def is_platform_source(expr: Expression, scope: GuardScope, func: FuncItem | None) -> bool:
    """``jax.default_backend()``, ``jax.devices()[i].platform``, a variable holding one,
    or a call of a helper returning one."""
    if isinstance(expr, CallExpr):
        if ref_fullname(expr.callee) in fullnames.DEFAULT_BACKEND:
            return True
        return scope.is_platform_call(expr)
    if isinstance(expr, MemberExpr) and expr.name == "platform":
        base = expr.expr
        if isinstance(base, IndexExpr) and isinstance(base.base, CallExpr):
            return ref_fullname(base.base.callee) in fullnames.DEVICES
        return False
    if isinstance(expr, NameExpr):
        return scope.is_platform_variable(expr, func)
    return False


def strings(expr: Expression) -> list[str] | None:
    """The literal strings of ``"tpu"`` or ``("cuda", "rocm")``; None for anything else."""
    if isinstance(expr, StrExpr):
        return [expr.value]
    if isinstance(expr, (TupleExpr, ListExpr, SetExpr)):
        out: list[str] = []
        for item in expr.items:
            if not isinstance(item, StrExpr):
                return None
            out.append(item.value)
        return out
    return None


def conditions(expr: Expression, scope: GuardScope, func: FuncItem | None) -> Sets:
    """(platforms when ``expr`` is true, platforms when false); None = not known."""
    if isinstance(expr, UnaryExpr) and expr.op == "not":
        true_set, false_set = conditions(expr.expr, scope, func)
        return false_set, true_set
    if isinstance(expr, CallExpr):
        if ref_fullname(expr.callee) in fullnames.IS_TPU_DEVICE:
            return frozenset({"tpu"}), UNIVERSE - {"tpu"}
        helper = scope.helper_sets(expr)
        if helper is not None:
            return helper
        return None, None
    if isinstance(expr, OpExpr) and expr.op in ("and", "or"):
        lt, lf = conditions(expr.left, scope, func)
        rt, rf = conditions(expr.right, scope, func)
        if expr.op == "and":
            t = None if lt is None and rt is None else (lt or UNIVERSE) & (rt or UNIVERSE)
            f = None if lf is None or rf is None else lf | rf
        else:
            t = None if lt is None or rt is None else lt | rt
            f = None if lf is None and rf is None else (lf or UNIVERSE) & (rf or UNIVERSE)
        return t, f
    if isinstance(expr, NameExpr):
        held = scope.variable_condition(expr, func)
        if held is not None and held is not expr:
            return conditions(held, scope, func)
        return None, None
    if isinstance(expr, ComparisonExpr) and len(expr.operators) == 1:
        op = expr.operators[0]
        left, right = expr.operands
        if is_platform_source(right, scope, func) and op in ("==", "!="):
            left, right = right, left
        if not is_platform_source(left, scope, func):
            return None, None
        names = strings(right)
        if names is None:
            return None, None
        if op in ("==", "!=") and len(names) != 1:
            return None, None
        matched: frozenset[str] = frozenset()
        for name in names:
            matched = matched | name_set(name)
        if op in ("==", "in"):
            return matched, UNIVERSE - matched
        if op in ("!=", "not in"):
            return UNIVERSE - matched, matched
    return None, None


# --------------------------------------------------------------------------- tags


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
