"""One walk per module: platform guards, decorators, local assignments, branch functions.

Built the first time a hook fires in a module (from ``ctx.api.tree``, the module the
type checker is checking) and cached against that tree object, so a module is walked
once per build, and again only when mypy re-parses it (incremental runs, the daemon).

What it records:

* **guard regions**: source spans inside which the lowering platform is known to be a
  subset of ``{"tpu", "cuda", "rocm", "cpu"}``: ``if jax.default_backend() == "tpu":``
  bodies and their ``else`` branches, ``jax.devices()[i].platform`` comparisons, a
  variable assigned from those and compared later, early exits
  (``if ... != "tpu": raise/return``), ``assert``s, and the functions or lambdas passed
  as the ``tpu=``/``cuda=``/``rocm=``/``gpu=``/``default=`` branches of
  ``jax.lax.platform_dependent`` and ``typed_pallas.dispatch``;
* which function each decorator call decorates, and which call applies a call's
  result (``pl.kernel(mesh=...)(body)``);
* every simple local assignment ``name = value`` per enclosing function.

It hand-writes the statement walk: compiled mypy refuses subclasses of its
``TraverserVisitor``. Expressions come from ``mypy.server.subexpr.get_subexpressions``.
What it does not do: follow other modules, or evaluate anything.
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final

from mypy.nodes import (
    AssertStmt,
    AssignmentStmt,
    Block,
    BreakStmt,
    CallExpr,
    ClassDef,
    ComparisonExpr,
    ContinueStmt,
    Decorator,
    Expression,
    ExpressionStmt,
    ForStmt,
    FuncDef,
    FuncItem,
    IfStmt,
    IndexExpr,
    LambdaExpr,
    ListExpr,
    MemberExpr,
    MypyFile,
    NameExpr,
    Node,
    OpExpr,
    OverloadedFuncDef,
    RaiseStmt,
    RefExpr,
    ReturnStmt,
    SetExpr,
    Statement,
    StrExpr,
    TryStmt,
    TupleExpr,
    UnaryExpr,
    WhileStmt,
    WithStmt,
)
from mypy.server.subexpr import get_subexpressions

from typed_pallas import _platforms
from typed_pallas_mypy import fullnames

#: Every platform a guard can speak of. "cpu" is there so that ``!= "tpu"`` is not "gpu".
UNIVERSE: Final = frozenset({"tpu", "cuda", "rocm", "cpu"})
#: Platforms Pallas lowers for (cpu needs interpret mode).
LOWERING: Final = frozenset({"tpu", "cuda", "rocm"})

_END: Final = 10**9

Pos = tuple[int, int]


def start_of(node: Node) -> Pos:
    return (node.line, max(node.column, 0))


def end_of(node: Node) -> Pos:
    end_line = node.end_line if node.end_line is not None else node.line
    end_col = node.end_column if node.end_column is not None else _END
    return (end_line, end_col)


def name_set(name: str) -> frozenset[str]:
    """Lowering platforms a platform string stands for ("gpu" is cuda and rocm)."""
    if name == "cpu":
        return frozenset({"cpu"})
    return frozenset(_platforms.LOWERINGS_OF_NAME.get(name, frozenset()))


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


@dataclass
class ModuleIndex:
    tree: MypyFile
    regions: list[Region] = field(default_factory=list)
    #: id(decorator CallExpr) -> the function it decorates
    decorated: dict[int, FuncItem] = field(default_factory=dict)
    #: id(CallExpr used as a callee) -> the call that applies it: ``f(...)(body)``
    applied: dict[int, CallExpr] = field(default_factory=dict)
    #: (start, end, function), outermost first
    functions: list[tuple[Pos, Pos, FuncItem]] = field(default_factory=list)
    #: (id(enclosing function) or 0, name) -> [(position, value), ...]
    assignments: dict[tuple[int, str], list[tuple[Pos, Expression]]] = field(
        default_factory=dict
    )
    #: (id(enclosing function) or 0, name) of variables holding a platform string
    platform_vars: set[tuple[int, str]] = field(default_factory=set)
    #: ... and of variables also assigned something else (then not a platform variable)
    other_vars: set[tuple[int, str]] = field(default_factory=set)
    #: id(kernel function) -> its body evidence (filled by ``evidence.body``)
    body_cache: dict[int, object] = field(default_factory=dict)

    #: line -> regions / functions spanning it, in list order (built on first lookup,
    #: so that a lookup costs the few spans over its line, not a scan of the module)
    _region_lines: dict[int, list[Region]] = field(default_factory=dict, repr=False)
    _function_lines: dict[int, list[tuple[Pos, Pos, FuncItem]]] = field(
        default_factory=dict, repr=False
    )
    _function_ids: set[int] = field(default_factory=set, repr=False)
    _lines_built_for: tuple[int, int] = field(default=(-1, -1), repr=False)

    def _lines(self) -> None:
        sizes = (len(self.regions), len(self.functions))
        if sizes == self._lines_built_for:
            return
        self._region_lines = {}
        for region in self.regions:
            for line in range(region.start[0], region.end[0] + 1):
                self._region_lines.setdefault(line, []).append(region)
        self._function_lines = {}
        self._function_ids = {id(item[2]) for item in self.functions}
        for item in self.functions:
            for line in range(item[0][0], item[1][0] + 1):
                self._function_lines.setdefault(line, []).append(item)
        self._lines_built_for = sizes

    def guard_at(self, pos: Pos) -> Guard | None:
        self._lines()
        found = [r for r in self._region_lines.get(pos[0], ()) if r.contains(pos)]
        if not found:
            return None
        platforms = UNIVERSE
        for region in found:
            platforms = platforms & region.platforms
        return Guard(platforms, tuple(found))

    def function_at(self, pos: Pos) -> FuncItem | None:
        self._lines()
        best: FuncItem | None = None
        for start, end, func in self._function_lines.get(pos[0], ()):
            if start <= pos <= end:
                best = func  # later entries are nested deeper
        return best

    def owns(self, func: FuncItem) -> bool:
        self._lines()
        return id(func) in self._function_ids


_CACHE: dict[str, tuple[object, ModuleIndex]] = {}


def _stamp(tree: MypyFile) -> object:
    """What must not change for a cached index to stay valid.

    The tree object alone is not enough: the daemon (``dmypy``) merges a re-parsed
    module into the old tree object, so the file's size and mtime are part of it.
    """
    try:
        stat = os.stat(tree.path)
    except (OSError, ValueError):
        return (id(tree), None)
    return (id(tree), stat.st_size, stat.st_mtime_ns)


def index_of(tree: MypyFile) -> ModuleIndex:
    """The cached index of ``tree``: one walk per module and version of its source."""
    stamp = _stamp(tree)
    cached = _CACHE.get(tree.fullname)
    if cached is not None and cached[0] == stamp and cached[1].tree is tree:
        return cached[1]
    index = _build(tree)
    _CACHE[tree.fullname] = (stamp, index)
    return index


# --------------------------------------------------------------------------- building


def _build(tree: MypyFile) -> ModuleIndex:
    index = ModuleIndex(tree)
    walker = _Walker(index)
    walker.block(tree.defs, None)
    _scan_expressions(index, tree)
    index.functions.sort(key=lambda item: (item[0], (-item[1][0], -item[1][1])))
    return index


class _Walker:
    def __init__(self, index: ModuleIndex) -> None:
        self.index = index

    def block(self, stmts: Sequence[Statement], func: FuncItem | None) -> None:
        for i, stmt in enumerate(stmts):
            self.stmt(stmt, func)
            rest = stmts[i + 1 :]
            if not rest:
                continue
            narrowed: tuple[frozenset[str], str] | None = None
            if isinstance(stmt, IfStmt) and len(stmt.expr) == 1:
                true_set, false_set = conditions(stmt.expr[0], self.index, func)
                body_exits = _exits(stmt.body[0])
                else_exits = stmt.else_body is not None and _exits(stmt.else_body)
                if body_exits and not else_exits and false_set is not None:
                    narrowed = (false_set, f"the early exit at line {stmt.line}")
                elif else_exits and not body_exits and true_set is not None:
                    narrowed = (true_set, f"the early exit in the else at line {stmt.line}")
            elif isinstance(stmt, AssertStmt):
                true_set, _ = conditions(stmt.expr, self.index, func)
                if true_set is not None:
                    narrowed = (true_set, f"the assert at line {stmt.line}")
            if narrowed is not None:
                self._region(rest, narrowed[0], narrowed[1])

    def _region(self, stmts: Sequence[Statement], platforms: frozenset[str], why: str) -> None:
        if stmts:
            self.index.regions.append(
                Region(start_of(stmts[0]), end_of(stmts[-1]), platforms, why)
            )

    def stmt(self, stmt: Statement, func: FuncItem | None) -> None:
        if isinstance(stmt, IfStmt):
            for expr, body in zip(stmt.expr, stmt.body):
                true_set, false_set = conditions(expr, self.index, func)
                if true_set is not None:
                    self._region(body.body, true_set, f"the if at line {stmt.line}")
                self.block(body.body, func)
                if stmt.else_body is not None and false_set is not None and len(stmt.expr) == 1:
                    self._region(
                        stmt.else_body.body, false_set, f"the else of the if at line {stmt.line}"
                    )
            if stmt.else_body is not None:
                self.block(stmt.else_body.body, func)
        elif isinstance(stmt, Block):
            self.block(stmt.body, func)
        elif isinstance(stmt, FuncDef):
            self._function(stmt)
        elif isinstance(stmt, Decorator):
            for dec in stmt.decorators:
                if isinstance(dec, CallExpr):
                    self.index.decorated[id(dec)] = stmt.func
            self._function(stmt.func)
        elif isinstance(stmt, OverloadedFuncDef):
            for item in stmt.items:
                self.stmt(item, func)
            if stmt.impl is not None:
                self.stmt(stmt.impl, func)
        elif isinstance(stmt, ClassDef):
            self.block(stmt.defs.body, func)
        elif isinstance(stmt, (ForStmt, WhileStmt)):
            self.block(stmt.body.body, func)
            if stmt.else_body is not None:
                self.block(stmt.else_body.body, func)
        elif isinstance(stmt, WithStmt):
            self.block(stmt.body.body, func)
        elif isinstance(stmt, TryStmt):
            self.block(stmt.body.body, func)
            for handler in stmt.handlers:
                self.block(handler.body, func)
            if stmt.else_body is not None:
                self.block(stmt.else_body.body, func)
            if stmt.finally_body is not None:
                self.block(stmt.finally_body.body, func)
        elif isinstance(stmt, AssignmentStmt):
            self._assignment(stmt, func)

    def _function(self, func: FuncItem) -> None:
        self.index.functions.append((start_of(func), end_of(func), func))
        self.block(func.body.body, func)

    def _assignment(self, stmt: AssignmentStmt, func: FuncItem | None) -> None:
        key_func = id(func) if func is not None else 0
        for lvalue in stmt.lvalues:
            if isinstance(lvalue, NameExpr):
                key = (key_func, lvalue.name)
                self.index.assignments.setdefault(key, []).append((start_of(stmt), stmt.rvalue))
                if is_platform_source(stmt.rvalue, self.index, func):
                    self.index.platform_vars.add(key)
                else:
                    self.index.other_vars.add(key)


def _exits(block: Block) -> bool:
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


# --------------------------------------------------------------------------- conditions


def is_platform_source(expr: Expression, index: ModuleIndex, func: FuncItem | None) -> bool:
    """``jax.default_backend()``, ``jax.devices()[i].platform``, or a variable holding one."""
    if isinstance(expr, CallExpr) and ref_fullname(expr.callee) in fullnames.DEFAULT_BACKEND:
        return True
    if isinstance(expr, MemberExpr) and expr.name == "platform":
        base = expr.expr
        if isinstance(base, IndexExpr) and isinstance(base.base, CallExpr):
            return ref_fullname(base.base.callee) in fullnames.DEVICES
        return False
    if isinstance(expr, NameExpr):
        for key in ((id(func) if func is not None else 0, expr.name), (0, expr.name)):
            if key in index.platform_vars:
                return key not in index.other_vars
            if key in index.other_vars:
                return False
    return False


def _strings(expr: Expression) -> list[str] | None:
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


Sets = tuple[frozenset[str] | None, frozenset[str] | None]


def conditions(expr: Expression, index: ModuleIndex, func: FuncItem | None) -> Sets:
    """(platforms when ``expr`` is true, platforms when false); None = not known."""
    if isinstance(expr, UnaryExpr) and expr.op == "not":
        true_set, false_set = conditions(expr.expr, index, func)
        return false_set, true_set
    if isinstance(expr, CallExpr) and ref_fullname(expr.callee) in fullnames.IS_TPU_DEVICE:
        return frozenset({"tpu"}), UNIVERSE - {"tpu"}
    if isinstance(expr, OpExpr) and expr.op in ("and", "or"):
        lt, lf = conditions(expr.left, index, func)
        rt, rf = conditions(expr.right, index, func)
        if expr.op == "and":
            t = None if lt is None and rt is None else (lt or UNIVERSE) & (rt or UNIVERSE)
            f = None if lf is None or rf is None else lf | rf
        else:
            t = None if lt is None or rt is None else lt | rt
            f = None if lf is None and rf is None else (lf or UNIVERSE) & (rf or UNIVERSE)
        return t, f
    if isinstance(expr, ComparisonExpr) and len(expr.operators) == 1:
        op = expr.operators[0]
        left, right = expr.operands
        if is_platform_source(right, index, func) and op in ("==", "!="):
            left, right = right, left
        if not is_platform_source(left, index, func):
            return None, None
        names = _strings(right)
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


# --------------------------------------------------------------------------- expressions


_BRANCH_KEYWORDS: Final = {
    "tpu": frozenset({"tpu"}),
    "gpu": frozenset({"cuda", "rocm"}),
    "cuda": frozenset({"cuda"}),
    "rocm": frozenset({"rocm"}),
    "cpu": frozenset({"cpu"}),
}


def callable_target(expr: Expression, index: ModuleIndex) -> FuncItem | None:
    """The function or lambda of this module that ``expr`` names (through ``partial``)."""
    if isinstance(expr, LambdaExpr):
        return expr
    if isinstance(expr, RefExpr):
        node = expr.node
        if isinstance(node, Decorator):
            node = node.func
        if isinstance(node, FuncDef) and index.owns(node):
            return node
        return None
    if isinstance(expr, CallExpr) and ref_fullname(expr.callee) == fullnames.FUNCTOOLS_PARTIAL:
        if expr.args:
            return callable_target(expr.args[0], index)
    return None


def _scan_expressions(index: ModuleIndex, tree: MypyFile) -> None:
    branches: dict[int, tuple[FuncItem, frozenset[str], list[str]]] = {}
    for expr in get_subexpressions(tree):
        if not isinstance(expr, CallExpr):
            continue
        if isinstance(expr.callee, CallExpr):
            index.applied[id(expr.callee)] = expr
        callee = ref_fullname(expr.callee)
        if callee in fullnames.PLATFORM_DEPENDENT:
            what = "jax.lax.platform_dependent"
        elif callee in fullnames.TP_DISPATCH:
            what = "typed_pallas.dispatch"
        else:
            continue
        named: frozenset[str] = frozenset()
        targets: list[tuple[Expression, str]] = []
        for name, arg in zip(expr.arg_names, expr.args):
            if name in _BRANCH_KEYWORDS:
                named = named | _BRANCH_KEYWORDS[name]
                targets.append((arg, name))
            elif name == "default":
                targets.append((arg, name))
        for arg, name in targets:
            platforms = UNIVERSE - named if name == "default" else _BRANCH_KEYWORDS[name]
            target = callable_target(arg, index)
            if target is None:
                continue
            why = f"the {name}= branch of {what} at line {expr.line}"
            if id(target) in branches:
                old_target, old_platforms, old_why = branches[id(target)]
                branches[id(target)] = (old_target, old_platforms | platforms, old_why + [why])
            else:
                branches[id(target)] = (target, platforms, [why])
    for target, platforms, whys in branches.values():
        index.regions.append(
            Region(start_of(target), end_of(target), platforms, " and ".join(whys))
        )


def subexpressions(nodes: Iterable[Node]) -> list[Expression]:
    out: list[Expression] = []
    for node in nodes:
        out.extend(get_subexpressions(node))
    return out
