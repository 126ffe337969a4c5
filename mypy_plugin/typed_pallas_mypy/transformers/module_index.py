"""One walk per module: guard regions, decorators, local assignments, branch functions.

Built the first time a hook fires in a module (from ``ctx.api.tree``, the module the
type checker is checking) and cached against that tree object, so a module is walked
once per build, and again only when mypy re-parses it (incremental runs, the daemon).

What it records:

* **guard regions** (``guards.Region``): source spans inside which the lowering
  platform is known to be a subset of ``guards.UNIVERSE``: ``if`` bodies and ``else``
  branches of platform conditions, the statements after early exits and ``assert``s,
  and the functions or lambdas passed as branches of ``jax.lax.platform_dependent`` /
  ``typed_pallas.dispatch`` (what counts as a platform condition is ``guards``' job);
* which function each decorator call decorates;
* every simple local assignment ``name = value`` per enclosing function;
* every assignment, ``return`` and ``from`` import with its position, in source order,
  outside ``@overload`` groups (what ``decisions`` checks where the platform is decided).

It hand-writes the statement walk: compiled mypy refuses subclasses of its
``TraverserVisitor``. Expressions come from ``mypy.server.subexpr.get_subexpressions``.
What it does not do: evaluate anything, read evidence (a kernel body, an entry call's
arguments: ``platform_facts.Facts`` answers, with the inference's reader), or read
other modules itself (a ``Facts``, when given, answers for names defined elsewhere).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING

from mypy.nodes import (
    GDEF,
    AssignmentStmt,
    Block,
    CallExpr,
    ClassDef,
    Decorator,
    Expression,
    ForStmt,
    FuncDef,
    FuncItem,
    IfStmt,
    ImportFrom,
    LambdaExpr,
    MatchStmt,
    MemberExpr,
    MypyFile,
    NameExpr,
    OverloadedFuncDef,
    RefExpr,
    ReturnStmt,
    Statement,
    StrExpr,
    TryStmt,
    WhileStmt,
    WithStmt,
)
from mypy.patterns import OrPattern, Pattern, ValuePattern
from mypy.server.subexpr import get_subexpressions

from typed_pallas_mypy import fullnames
from typed_pallas_mypy.inference.combine import Ask
from typed_pallas_mypy.transformers import guards, predicates, reporting
from typed_pallas_mypy.transformers.guards import (
    LOWERING,
    UNIVERSE,
    Guard,
    Region,
    Sets,
    configured_decision,
)
from typed_pallas_mypy.transformers.nodes import Pos, end_of, ref_fullname, start_of

if TYPE_CHECKING:
    from typed_pallas_mypy.transformers.platform_facts import Facts

#: What answers for other modules' functions were read from: per module read, its stamp
#: and the facts symbol it had (``platform_facts.Facts.snapshot``); opaque here.
Reads = tuple[tuple[str, object, object], ...]


@dataclass
class ModuleIndex:
    tree: MypyFile
    regions: list[Region] = field(default_factory=list)
    #: id(decorator CallExpr) -> the function it decorates
    decorated: dict[int, FuncItem] = field(default_factory=dict)
    #: (start, end, function), outermost first
    functions: list[tuple[Pos, Pos, FuncItem]] = field(default_factory=list)
    #: (id(enclosing function) or 0, name) -> [(position, value), ...]
    assignments: dict[tuple[int, str], list[tuple[Pos, Expression]]] = field(default_factory=dict)
    #: (assignment, return or ``from`` import, (line, column)) in source order, not
    #: inside an ``@overload`` group
    bindings: list[tuple[AssignmentStmt | ReturnStmt | ImportFrom, Pos]] = field(
        default_factory=list
    )
    #: id(function or lambda of this module passed as a dispatch branch) -> the union of
    #: the platforms of every branch it is passed as (its region's platforms)
    branch_platforms: dict[int, frozenset[str]] = field(default_factory=dict)
    #: the inference's answers (conditions, evidence) and other modules' facts (None:
    #: none known: no condition is read)
    cross: Facts | None = None
    #: what the guard regions read of other modules when this index was built
    cross_reads: Reads = ()

    #: line -> regions / functions spanning it, in list order (built on first lookup,
    #: so that a lookup costs the few spans over its line, not a scan of the module)
    _region_lines: dict[int, list[Region]] = field(default_factory=dict, repr=False)
    _function_lines: dict[int, list[tuple[Pos, Pos, FuncItem]]] = field(
        default_factory=dict, repr=False
    )
    _function_ids: set[int] = field(default_factory=set, repr=False)
    _lines_built_for: tuple[int, int] = field(default=(-1, -1), repr=False)
    #: what answers the platform predicates the inference asks about (built on first use)
    _ask: Ask | None = field(default=None, repr=False)

    def _lines(self) -> None:
        """Bring the line maps up to date. While the index is built, regions and
        functions are only appended (outer functions before the ones nested in them):
        only the new ones are added; ``_build`` starts the maps again once it has sorted
        the functions."""
        sizes = (len(self.regions), len(self.functions))
        built = self._lines_built_for
        if sizes == built:
            return
        if built[0] < 0 or sizes[0] < built[0] or sizes[1] < built[1]:
            self._region_lines, self._function_lines, self._function_ids = {}, {}, set()
            built = (0, 0)
        for region in self.regions[built[0] :]:
            for line in range(region.start[0], region.end[0] + 1):
                self._region_lines.setdefault(line, []).append(region)
        for item in self.functions[built[1] :]:
            self._function_ids.add(id(item[2]))
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

    def decision_at(
        self, pos: Pos, configured: frozenset[str] | None, subject: str = "this"
    ) -> tuple[frozenset[str], str] | None:
        """(lowering platforms, note) where the platform at ``pos`` is decided: by the
        guards around it, or, outside every guard, by the module's configured platforms.
        None when nothing decides it, and under a guard that lets no lowering platform
        through (``if jax.default_backend() == "cpu":``): that code lowers for no
        accelerator, so the configured platforms do not apply to it."""
        guard = self.guard_at(pos)
        if guard is None:
            return configured_decision(configured, self.tree.fullname)
        lowering = guard.platforms & LOWERING
        if not lowering:
            return None
        why = guard.regions[-1].why
        return lowering, f"{why} lets {subject} lower only for {', '.join(sorted(lowering))}"

    def function_at(self, pos: Pos) -> FuncItem | None:
        """The innermost function or lambda of this module spanning ``pos``."""
        self._lines()
        best: FuncItem | None = None
        for start, end, func in self._function_lines.get(pos[0], ()):
            if start <= pos <= end:
                best = func  # later entries are nested deeper
        return best

    def outermost_function_at(self, pos: Pos) -> FuncItem | None:
        """The outermost function spanning ``pos`` (mypy's target for that code)."""
        self._lines()
        for start, end, func in self._function_lines.get(pos[0], ()):
            if start <= pos <= end and isinstance(func, FuncDef):
                return func
        return None

    def owns(self, func: FuncItem) -> bool:
        self._lines()
        return id(func) in self._function_ids

    # Conditions, as the inference reads them

    def sets(self, expr: Expression) -> Sets:
        """(platforms when ``expr`` is true, when false; None where not known): the
        inference's reading, with the platform predicates it leaves to mypy's types."""
        if self.cross is None:
            return None, None
        if self._ask is None:
            cross = self.cross
            self._ask = predicates.answer_in(
                self.tree,
                lambda call: self.function_at(start_of(call)),
                lambda call, func, is_device: predicates.sets_at_call(
                    call, func, is_device, cross, self.value_of
                ),
            )
        return self.cross.condition_sets(self.tree.fullname, expr, self._ask)

    def is_platform_source(self, expr: Expression) -> bool:
        """Whether ``expr`` is the platform string itself (``jax.default_backend()``).
        Only the engine's forms are asked about (a call without arguments, a name, an
        attribute): the index of ``x_ref[...]`` or ``x[pl.ds(i, 8)]`` never is one."""
        if isinstance(expr, CallExpr):
            if expr.args:
                return False
        elif not isinstance(expr, (NameExpr, MemberExpr)):
            return False
        return self.cross is not None and self.cross.is_platform_source(self.tree.fullname, expr)

    def _keys(self, name: NameExpr, func: FuncItem | None) -> tuple[tuple[int, str], ...]:
        """Where a variable read inside ``func`` may be bound: in ``func``, or, for a
        global (not a parameter or local that shadows it), at module level."""
        own = (id(func) if func is not None else 0, name.name)
        if func is not None and name.kind != GDEF:
            return (own,)
        return (own, (0, name.name))

    def value_of(self, name: NameExpr, func: FuncItem | None) -> Expression | None:
        """The value a variable of ``func`` (or of the module) was assigned, if it was
        assigned once."""
        for key in self._keys(name, func):
            assigned = self.assignments.get(key)
            if assigned:
                return assigned[0][1] if len(assigned) == 1 else None
        return None


_CACHE: dict[str, tuple[object, ModuleIndex]] = {}

#: the build epoch (``reporting.current_epoch``) the stamps in ``_STAMPS`` were read in
_STAMPS_EPOCH: list[object] = []
#: module -> (its tree, its stamp), read in the epoch ``_STAMPS_EPOCH`` holds
_STAMPS: dict[str, tuple[MypyFile, object]] = {}


def stamp_of(tree: MypyFile) -> object:
    """What must not change for a cached index to stay valid.

    The tree object alone is not enough: the daemon (``dmypy``) merges a re-parsed
    module into the old tree object, so the file's size and mtime are part of it.

    The file is looked at once per build epoch (``reporting.current_epoch``): mypy
    re-parses a module only after it has started a new one, and an edit it has not
    re-parsed changes nothing it holds. Without an epoch, every call looks.
    """
    epoch = reporting.current_epoch()
    if epoch is None:
        return _file_stamp(tree)
    if not _STAMPS_EPOCH or _STAMPS_EPOCH[0] is not epoch:
        _STAMPS.clear()
        _STAMPS_EPOCH[:] = [epoch]
    cached = _STAMPS.get(tree.fullname)
    if cached is not None and cached[0] is tree:
        return cached[1]
    stamp = _file_stamp(tree)
    _STAMPS[tree.fullname] = (tree, stamp)
    return stamp


def _file_stamp(tree: MypyFile) -> object:
    try:
        stat = os.stat(tree.path)
    except (OSError, ValueError):
        return (id(tree), None)
    return (id(tree), stat.st_size, stat.st_mtime_ns)


def index_of(tree: MypyFile, cross: Facts | None = None) -> ModuleIndex:
    """The cached index of ``tree``: one walk per module and version of its source and,
    since guard regions hold answers about other modules' functions (guard helpers,
    predicates), built again when a module those answers read has changed (its source,
    or its stored facts: ``Facts.unchanged``).

    The module itself is left out of what is recorded as read: its own helpers are
    read from its source, which its stamp covers, and what they read of other modules
    is recorded with them. Its facts symbol, replaced when mypy stores its facts after
    the index was built, would otherwise make the index look stale and be built twice
    an edit."""
    stamp = stamp_of(tree)
    cached = _CACHE.get(tree.fullname)
    if cached is not None and cached[0] == stamp and cached[1].tree is tree:
        index = cached[1]
        if cross is None:
            return index
        if index.cross is cross and cross.unchanged(index.cross_reads):
            return index
    if cross is None:
        index = _build(tree, None)
    else:
        index, reads = cross.reading(lambda: _build(tree, cross))
        index.cross_reads = tuple(read for read in reads if read[0] != tree.fullname)
    _CACHE[tree.fullname] = (stamp, index)
    return index


# --------------------------------------------------------------------------- building


def _build(tree: MypyFile, cross: Facts | None) -> ModuleIndex:
    index = ModuleIndex(tree, cross=cross)
    walker = _Walker(index)
    walker.block(tree.defs, None)
    _scan_expressions(index, tree)
    index.functions.sort(key=lambda item: (item[0], (-item[1][0], -item[1][1])))
    index._lines_built_for = (-1, -1)  # the maps list functions in the order sorted
    return index


class _Walker:
    def __init__(self, index: ModuleIndex) -> None:
        self.index = index
        #: whether ``index.bindings`` records (not inside an ``@overload`` group)
        self.binds = True

    def block(self, stmts: Sequence[Statement], func: FuncItem | None) -> None:
        for i, stmt in enumerate(stmts):
            self.stmt(stmt, func)
            rest = stmts[i + 1 :]
            if not rest:
                continue
            narrowed = guards.narrowing_after(stmt, self.index.sets)
            if narrowed is not None:
                self._region(rest, narrowed[0], narrowed[1])

    def _region(self, stmts: Sequence[Statement], platforms: frozenset[str], why: str) -> None:
        if stmts:
            self.index.regions.append(Region(start_of(stmts[0]), end_of(stmts[-1]), platforms, why))

    def stmt(self, stmt: Statement, func: FuncItem | None) -> None:
        if isinstance(stmt, IfStmt):
            for expr, body in zip(stmt.expr, stmt.body):
                true_set, false_set = self.index.sets(expr)
                if true_set is not None:
                    self._region(body.body, true_set, f"the if at line {stmt.line}")
                self.block(body.body, func)
                if stmt.else_body is not None and false_set is not None and len(stmt.expr) == 1:
                    self._region(
                        stmt.else_body.body, false_set, f"the else of the if at line {stmt.line}"
                    )
            if stmt.else_body is not None:
                self.block(stmt.else_body.body, func)
        elif isinstance(stmt, MatchStmt):
            platform_subject = self.index.is_platform_source(stmt.subject)
            for pattern, body in zip(stmt.patterns, stmt.bodies):
                names = _literal_names(pattern) if platform_subject else None
                lowering = frozenset(p for n in names or () for p in guards.name_set(n))
                if lowering:
                    # ``case "tpu":`` on the platform string runs only where it is "tpu"
                    # (a guard after it only narrows further)
                    self._region(body.body, lowering, f"the case at line {pattern.line}")
                self.block(body.body, func)
        elif isinstance(stmt, Block):
            self.block(stmt.body, func)
        elif isinstance(stmt, FuncDef):
            self._function(stmt)
        elif isinstance(stmt, Decorator):
            for dec in stmt.decorators:
                if isinstance(dec, CallExpr):
                    self.index.decorated[id(dec)] = stmt.func
            tag = guards.platform_tag(stmt.decorators)
            if tag is not None and stmt.func.body.body:
                tagged = stmt.func.body.body
                self.index.regions.append(
                    Region(
                        start_of(tagged[0]),
                        end_of(tagged[-1]),
                        tag[0],
                        f"the @typed_pallas.platform tag at line {tag[1]}",
                    )
                )
            self._function(stmt.func)
        elif isinstance(stmt, OverloadedFuncDef):
            binds, self.binds = self.binds, False
            for item in stmt.items:
                self.stmt(item, func)
            if stmt.impl is not None:
                self.stmt(stmt.impl, func)
            self.binds = binds
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
            self._binding(stmt)
            self._assignment(stmt, func)
        elif isinstance(stmt, (ReturnStmt, ImportFrom)):
            self._binding(stmt)

    def _binding(self, stmt: AssignmentStmt | ReturnStmt | ImportFrom) -> None:
        if self.binds:
            self.index.bindings.append((stmt, (stmt.line, max(stmt.column, 0))))

    def _function(self, func: FuncItem) -> None:
        self.index.functions.append((start_of(func), end_of(func), func))
        self.block(func.body.body, func)

    def _assignment(self, stmt: AssignmentStmt, func: FuncItem | None) -> None:
        key_func = id(func) if func is not None else 0
        for lvalue in stmt.lvalues:
            if isinstance(lvalue, NameExpr):
                key = (key_func, lvalue.name)
                self.index.assignments.setdefault(key, []).append((start_of(stmt), stmt.rvalue))


def _literal_names(pattern: Pattern) -> tuple[str, ...] | None:
    """The strings a ``case`` pattern matches when it is only string literals
    (``case "tpu":``, ``case "cuda" | "rocm":``), else None."""
    if isinstance(pattern, ValuePattern) and isinstance(pattern.expr, StrExpr):
        return (pattern.expr.value,)
    if isinstance(pattern, OrPattern):
        names: list[str] = []
        for alternative in pattern.patterns:
            found = _literal_names(alternative)
            if found is None:
                return None
            names.extend(found)
        return tuple(names)
    return None


# --------------------------------------------------------------------------- expressions


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
    branch_targets: dict[int, tuple[FuncItem, frozenset[str], list[str]]] = {}
    for expr in get_subexpressions(tree):
        if not isinstance(expr, CallExpr):
            continue
        what = guards.dispatch_title(expr)
        if what is None:
            continue
        for arg, name, platforms in guards.branches(expr):
            target = callable_target(arg, index)
            if target is None:
                continue
            why = f"the {name}= branch of {what} at line {expr.line}"
            if id(target) in branch_targets:
                old_target, old_platforms, old_why = branch_targets[id(target)]
                branch_targets[id(target)] = (
                    old_target,
                    old_platforms | platforms,
                    [*old_why, why],
                )
            else:
                branch_targets[id(target)] = (target, platforms, [why])
    for target, platforms, whys in branch_targets.values():
        index.branch_platforms[id(target)] = platforms
        index.regions.append(
            Region(start_of(target), end_of(target), platforms, " and ".join(whys))
        )
