"""Requirement inference: what one function of the project lowers for, and why.

For a function (or alias, or platform table) of the checked code, ``function_facts``,
``alias_facts`` and ``table_facts`` infer its ``FunctionFacts``:

* a **requirement**: the lowering platforms it can lower for, from the Pallas calls it
  makes unconditionally (params, body and argument evidence, as ``calls`` reads them)
  and from the functions it calls unconditionally (their own facts, asked of
  ``platform_facts.Facts``, which may read them from another module, from mypy's cache
  or from an installed library);
* whether it is a **guard helper** (``def on_gpu(): return jax.default_backend() == "gpu"``)
  or a **platform helper** (``def backend(): return jax.default_backend()``);
* whether it is a **wrapper**: it forwards its own parameters to the kernel and
  ``compiler_params=`` of a Pallas entry point, so that its calls can be checked as that
  entry point's;
* the **kernel evidence** of its body (backend-only primitives), for wrappers' callers.

Only what runs on every path counts (``unconditional``): a call under ``if use_pallas:``,
in a loop, a ``try`` with handlers, a conditional expression or after an early
``return`` gives no requirement. A function that branches on the platform itself, or
calls a parameter or an unknown callable, has none. Unknown means silent.

What it does not do: resolve names (``resolution``), keep or store facts
(``platform_facts``, ``facts_store``), or report anything (``decisions``).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from mypy.nodes import (
    ARG_STAR,
    ARG_STAR2,
    AssignmentStmt,
    Block,
    BreakStmt,
    CallExpr,
    ClassDef,
    ContinueStmt,
    Decorator,
    DictExpr,
    Expression,
    ExpressionStmt,
    FuncDef,
    IfStmt,
    MemberExpr,
    MypyFile,
    NameExpr,
    Node,
    OverloadedFuncDef,
    RaiseStmt,
    RefExpr,
    ReturnStmt,
    Statement,
    StrExpr,
    Var,
)
from mypy.server.subexpr import get_subexpressions

from typed_pallas import _platforms
from typed_pallas_mypy import evidence_tables, fullnames
from typed_pallas_mypy.entries import ENTRIES
from typed_pallas_mypy.transformers import calls, guards
from typed_pallas_mypy.transformers import evidence as evidence_mod
from typed_pallas_mypy.transformers import params as params_mod
from typed_pallas_mypy.transformers.facts_store import (
    NO_FACTS,
    FunctionFacts,
    Requirement,
    Wrapper,
    location,
)
from typed_pallas_mypy.transformers.guards import LOWERING, Sets
from typed_pallas_mypy.transformers.module_index import ModuleIndex, callable_target
from typed_pallas_mypy.transformers.nodes import end_of, start_of
from typed_pallas_mypy.transformers.resolution import is_keeping_decorator, ref_name
from typed_pallas_mypy.transformers.unconditional import (
    alternatives,
    may_return,
    unconditional_expressions,
    unconditional_roots,
)

if TYPE_CHECKING:
    from typed_pallas_mypy.transformers.platform_facts import Facts

#: How many calls deep a requirement chain is followed (and shown in notes).
MAX_DEPTH: Final = 8


def function_facts(
    facts: Facts, func: FuncDef, tree: MypyFile, index: ModuleIndex
) -> FunctionFacts:
    """The facts of one function of a module checked in this run."""
    where = location(tree, func.line)
    guard, source = facts.helper_of(func.fullname)
    wrapper = wrapper_of(func) if index.mentions_pallas else None
    requirement = None
    if guard is None and not source:
        requirement = _requirement(facts, func, tree, index, where)
    body_evidence = (
        tuple((e.backends, e.what, e.line) for e in evidence_mod.body(func, index))
        if index.mentions_pallas
        else ()
    )
    return FunctionFacts(
        func.fullname,
        requirement=requirement,
        guard=guard,
        platform_source=source,
        wrapper=wrapper,
        evidence=body_evidence,
        where=where,
    )


def holds_keeping_decorator(facts: Facts, fullname: str, index: ModuleIndex) -> bool:
    """Whether a module-level variable is assigned once a function-keeping decorator
    (``jaxtyped = jaxtyping.jaxtyped(typechecker=_typechecker)``)."""
    name = fullname.rsplit(".", 1)[1]
    assigned = index.assignments.get((0, name), [])
    return len(assigned) == 1 and is_keeping_decorator(assigned[0][1], facts.names)


def alias_facts(facts: Facts, fullname: str, tree: MypyFile, index: ModuleIndex) -> FunctionFacts:
    """``impl = f`` (the facts of ``f``) or a platform table ``{"tpu": f, ...}``."""
    name = fullname.rsplit(".", 1)[1]
    assigned = index.assignments.get((0, name), [])
    if len(assigned) != 1:
        return NO_FACTS
    value = assigned[0][1]
    if isinstance(value, DictExpr):
        return table_facts(facts, fullname, tree, value)
    target = facts.names.callee_function(value, None, 1)
    if target is None or target == fullname:
        return NO_FACTS
    found = facts.of(target)
    if found.is_empty():
        return NO_FACTS
    return FunctionFacts(
        fullname,
        requirement=found.requirement,
        guard=found.guard,
        platform_source=found.platform_source,
        wrapper=found.wrapper,
        evidence=found.evidence,
        where=found.where,
    )


def with_derivative_rules(
    facts: Facts, found: FunctionFacts, fullname: str, tree: MypyFile
) -> FunctionFacts:
    """A ``jax.custom_vjp`` / ``custom_jvp`` function also runs the rules its module
    registers (``f.defvjp(f_fwd, f_bwd)``) when differentiated: their requirements join
    the primal's (platforms in common; a contradiction gives none)."""
    rules = _derivative_rules(facts, fullname, tree)
    if not rules:
        return found
    requirement = found.requirement
    name = fullname.rsplit(".", 1)[1]
    where = found.where or location(tree, 1)
    for rule, line in rules:
        rule_req = facts.of(rule).requirement
        if rule_req is None:
            continue
        if requirement is None:
            link = (
                f"{name} ({where}) lowers only for {', '.join(sorted(rule_req.platforms))}: "
                f"its derivative rule {rule.rsplit('.', 1)[1]} at {location(tree, line)} does"
            )
            requirement = Requirement(
                rule_req.platforms, rule_req.cause, (link, *rule_req.chain)[:MAX_DEPTH]
            )
        elif requirement.platforms & rule_req.platforms:
            requirement = Requirement(
                requirement.platforms & rule_req.platforms, requirement.cause, requirement.chain
            )
        else:
            return FunctionFacts(found.name, where=found.where)  # a contradiction: none
    if requirement is found.requirement:
        return found
    return FunctionFacts(
        found.name or fullname,
        requirement=requirement,
        guard=found.guard,
        platform_source=found.platform_source,
        wrapper=found.wrapper,
        evidence=found.evidence,
        where=where,
    )


def _derivative_rules(facts: Facts, fullname: str, tree: MypyFile) -> list[tuple[str, int]]:
    """(rule fullname, line) of every ``f.defvjp(...)`` / ``f.defjvp(...)`` argument at
    the top level of ``f``'s module."""
    rules: list[tuple[str, int]] = []
    for stmt in tree.defs:
        if not isinstance(stmt, ExpressionStmt) or not isinstance(stmt.expr, CallExpr):
            continue
        callee = stmt.expr.callee
        if not isinstance(callee, MemberExpr) or callee.name not in fullnames.DERIVATIVE_RULES:
            continue
        if ref_name(callee.expr) != fullname:
            continue
        for arg in stmt.expr.args:
            rule = facts.names.callee_function(arg, None)
            if rule is not None and rule != fullname:
                rules.append((rule, stmt.line))
    return rules


def table_facts(facts: Facts, fullname: str, tree: MypyFile, value: DictExpr) -> FunctionFacts:
    """A module-level dict keyed by platform names: its entries' functions."""
    entries: list[tuple[str, str]] = []
    for key, item in value.items:
        if not isinstance(key, StrExpr):
            return NO_FACTS
        if key.value not in _platforms.LOWERINGS_OF_GUARD_NAME and key.value != "default":
            return NO_FACTS
        target = facts.names.callee_function(item, None, 1)
        if target is not None:
            entries.append((key.value, target))
    if not entries:
        return NO_FACTS
    return FunctionFacts(fullname, where=location(tree, value.line), table=tuple(entries))


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


def _branches_on_platform(func: FuncDef, index: ModuleIndex) -> bool:
    """Whether a guard inside ``func``'s body decides the platform of part of it (a
    region around the whole function, a dispatch branch's, does not count)."""
    if func.body.body and index.has_region_within(
        start_of(func.body.body[0]), end_of(func), tags=False
    ):
        return True
    for expr in get_subexpressions(func.body):
        if isinstance(expr, CallExpr) and guards.dispatch_title(expr) is not None:
            return True
    return False


def _nested_function(callee: Expression, func: FuncDef, index: ModuleIndex) -> FuncDef | None:
    """The function defined inside ``func`` that ``callee`` names, if any."""
    target = callable_target(callee, index)
    if not isinstance(target, FuncDef) or target is func:
        return None
    if not (start_of(func) < start_of(target) and end_of(target) <= end_of(func)):
        return None
    return target


def _requirement(
    facts: Facts,
    func: FuncDef,
    tree: MypyFile,
    index: ModuleIndex,
    where: str,
    depth: int = 0,
) -> Requirement | None:
    """What ``func`` lowers for: the platforms some successful path through its body
    allows (a path allows what every call on it lowers for; an ``if`` or ``match`` whose
    every alternative calls kernels of one platform restricts the function as a call on
    every path would). None when no path is restricted, on an unknown callee, or on a
    contradiction (which the local check reports)."""
    if _branches_on_platform(func, index):
        return None
    scan = _PathScan(facts, func, tree, index, where, depth)
    try:
        through, returned = scan.block(func.body.body, LOWERING)
    except _UnknownCallee:
        return None
    platforms = returned | (through if through is not None else frozenset())
    if not scan.found or not platforms or platforms >= LOWERING:
        return None  # no evidence, a contradiction, or a path with no restriction
    first = next((f for f in scan.found if f.platforms == platforms), scan.found[0])
    return Requirement(platforms, first.cause, first.chain)


class _UnknownCallee(Exception):
    """A call whose callee is unknown (a parameter, a local callable): no requirement."""


class _PathScan:
    """The paths through one function body and what each allows (``_requirement``)."""

    def __init__(
        self,
        facts: Facts,
        func: FuncDef,
        tree: MypyFile,
        index: ModuleIndex,
        where: str,
        depth: int,
    ) -> None:
        self.facts = facts
        self.func = func
        self.tree = tree
        self.index = index
        self.where = where
        self.depth = depth
        #: every requirement met on some path, in source order (for the notes)
        self.found: list[Requirement] = []

    def block(
        self, stmts: list[Statement], allowed: frozenset[str]
    ) -> tuple[frozenset[str] | None, frozenset[str]]:
        """(what the paths falling through the end of ``stmts`` allow, None if none does;
        what the paths returning inside them allow), starting from ``allowed``."""
        returned: frozenset[str] = frozenset()
        for stmt in stmts:
            split = alternatives(stmt)
            if split is not None:
                first_evaluated, bodies = split
                allowed = self.restrict(allowed, [first_evaluated])
                through: frozenset[str] | None = None
                for body in bodies:
                    if body is None:
                        body_through: frozenset[str] | None = allowed
                    else:
                        body_through, body_returned = self.block(body.body, allowed)
                        returned |= body_returned
                    if body_through is not None:
                        through = body_through | (through or frozenset())
                if through is None:
                    return None, returned  # every alternative returns or raises
                allowed = through
                continue
            roots = unconditional_roots(Block([stmt]))
            allowed = self.restrict(allowed, roots)
            if isinstance(stmt, ReturnStmt):
                return None, returned | allowed
            if isinstance(stmt, (RaiseStmt, BreakStmt, ContinueStmt)):
                return None, returned  # no successful path goes on from here
            if may_return(stmt):
                # returns inside a statement not followed path by path: those paths
                # allow at most what was known before it
                returned |= allowed
        return allowed, returned

    def restrict(self, allowed: frozenset[str], roots: Sequence[Node]) -> frozenset[str]:
        for expr in unconditional_expressions(roots):
            if isinstance(expr, CallExpr):
                found = self.call(expr)
                if found is not None:
                    self.found.append(found)
                    allowed = allowed & found.platforms
        return allowed

    def call(self, expr: CallExpr) -> Requirement | None:
        """The requirement of one call (raises ``_UnknownCallee``)."""
        func, tree, index, where = self.func, self.tree, self.index, self.where
        entry_name = ref_name(expr.callee)
        nested = _nested_function(expr.callee, func, index)
        if entry_name in ENTRIES:
            return _entry_requirement(expr, entry_name, func, tree, index, where)
        if isinstance(expr.callee, CallExpr) and ref_name(expr.callee.callee) in ENTRIES:
            return None  # pl.pallas_call(...)(x): the inner call is the entry call
        if nested is not None:
            if self.depth >= MAX_DEPTH:
                raise _UnknownCallee
            inner = _requirement(
                self.facts, nested, tree, index, location(tree, nested.line), self.depth + 1
            )
            if inner is None:
                return None
            link = (
                f"{func.name} ({where}) lowers only for {', '.join(sorted(inner.platforms))}: "
                f"it calls its nested {nested.name} at {location(tree, expr.line)}"
            )
            return Requirement(inner.platforms, inner.cause, (link, *inner.chain)[:MAX_DEPTH])
        target = self.facts.names.call_target(expr, func)
        if target.kind == "unknown":
            raise _UnknownCallee
        if target.fullname is None:
            return None
        callee_req = self.facts.of(target.fullname).requirement
        if callee_req is None:
            return None
        if callee_req.interpret is not None:
            if calls.interpret_argument(expr, callee_req.interpret) != "off":
                return None  # interpreted (or maybe): lowers anywhere
        link = (
            f"{func.name} ({where}) lowers only for {', '.join(sorted(callee_req.platforms))}: "
            f"it calls {target.fullname.rsplit('.', 1)[1]} at {location(tree, expr.line)}"
        )
        return Requirement(
            callee_req.platforms, callee_req.cause, (link, *callee_req.chain)[:MAX_DEPTH]
        )


def _entry_requirement(
    call: CallExpr,
    entry_name: str,
    func: FuncDef,
    tree: MypyFile,
    index: ModuleIndex,
    where: str,
) -> Requirement | None:
    entry = ENTRIES[entry_name]
    view = calls.view_of_syntax(entry, call)
    if calls.interpret_may_be_on(view):
        return None
    platforms: frozenset[str] = LOWERING
    cause: tuple[str, str, str] | None = None
    detail = ""
    if "compiler_params" in view.args:
        params = params_mod.from_syntax(
            view.args["compiler_params"], index, func, start_of(call), 0
        )
        if isinstance(params, params_mod.Params):
            platforms = platforms & params.lowers_on
            label = params.row.title if params.row is not None else params.platform.upper()
            cause = ("params", params.platform, params.backend or "")
            detail = f"takes {label} params"
    for ev in calls.evidence_of(view, index, func):
        ev_platforms = frozenset(
            p for b in ev.backends for p in evidence_tables.ROW_OF_BACKEND[b].lowers_on
        )
        if not (platforms & ev_platforms):
            return None  # params against evidence: the local check reports it
        platforms = platforms & ev_platforms
        if cause is None:
            backend = sorted(ev.backends)[0]
            cause = ("evidence", backend, backend)
            detail = (
                f"uses {ev.what} (line {ev.line}), {evidence_tables.BACKEND_LABEL[backend]}-only"
            )
    if cause is None or platforms == LOWERING:
        return None
    note = (
        f"{func.name} ({where}) lowers only for {', '.join(sorted(platforms))}: "
        f"its {entry.title} at {location(tree, call.line)} {detail}"
    )
    return Requirement(platforms, cause, (note,))


def wrapper_of(func: FuncDef) -> Wrapper | None:
    """The entry point ``func`` forwards its kernel and ``compiler_params`` to, if any:
    by name (``compiler_params=compiler_params``), or through its own ``**kwargs`` /
    ``*args`` passed on as they are (``pl.pallas_call(kernel, **kwargs)``)."""
    positions = {arg.variable.name: i for i, arg in enumerate(func.arguments)}
    star = {arg.variable.name: (arg.kind, i) for i, arg in enumerate(func.arguments)}
    for expr in unconditional_expressions(unconditional_roots(func.body)):
        if not isinstance(expr, CallExpr):
            continue
        name = ref_name(expr.callee)
        if name is None or name not in ENTRIES:
            continue
        entry = ENTRIES[name]
        kwargs: str | None = None
        args: tuple[str, int] | None = None
        for kind, actual in zip(expr.arg_kinds, expr.args):
            own = actual.name if isinstance(actual, NameExpr) else None
            if kind == ARG_STAR2 and own is not None and star.get(own, (None, 0))[0] == ARG_STAR2:
                kwargs = own
            elif kind == ARG_STAR and own is not None and star.get(own, (None, 0))[0] == ARG_STAR:
                args = (own, star[own][1])
            elif kind in (ARG_STAR, ARG_STAR2):
                return None  # a splat of something else: what reaches the entry is unknown
        view = calls.view_of_syntax(entry, expr)
        forwards: list[tuple[str, str, int]] = []
        for formal, actual in view.args.items():
            if isinstance(actual, NameExpr) and actual.name in positions:
                forwards.append((formal, actual.name, positions[actual.name]))
        forwarded = {f[0] for f in forwards}
        reaches = forwarded | ({"compiler_params"} if kwargs else set())
        if args is not None and entry.body is not None and entry.body not in view.args:
            reaches = reaches | {entry.body}  # the kernel comes in through *args
        if "compiler_params" not in reaches or entry.body is None or entry.body not in reaches:
            continue
        interpret = view.args.get("interpret")
        if interpret is not None and "interpret" not in forwarded and not calls.is_false(interpret):
            return None
        return Wrapper(name, tuple(sorted(forwards)), expr.line, kwargs=kwargs, args=args)
    return None


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
