"""Where a platform is decided, check the requirement of what runs there.

For one module, ``findings`` lists every place where code that lowers only for some
platforms (a function with a ``platform_facts.Requirement``) is used where the
platform is decided otherwise:

* calls, and bindings (assignments, ``return``, dict/list entries, ``from m import f``),
  inside a guarded region: every guard ``guards`` knows, guard helpers of any module
  and early exits through them, and ``@typed_pallas.platform(...)`` bodies;
* the branches of ``jax.lax.platform_dependent`` and ``typed_pallas.dispatch`` that name
  a function of another module, a ``functools.partial`` of one, or a lambda calling one
  (branches defined in this module are regions, so their own calls are checked there);
* tables keyed by platform and indexed by a platform source
  (``{"tpu": f, "gpu": g}[jax.default_backend()]``, also through a variable or ``.get``);
* unguarded calls in a module configured with ``platforms = [...]``;
* class claims (``predicates.class_claims``): a platform predicate of a class that admits
  a platform its kernel methods, called after a gate on that predicate, cannot lower for.

Each finding belongs to a mypy *target* (the outermost function around it, or the
module), so that hooks report it while mypy checks that target and the daemon can
re-check it. What it does not do: check Pallas calls themselves (``calls``), or
report (``hooks``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import NamedTuple

from mypy.nodes import (
    AssignmentStmt,
    CallExpr,
    ConditionalExpr,
    Context,
    DictExpr,
    Expression,
    FuncDef,
    FuncItem,
    ImportFrom,
    IndexExpr,
    ListExpr,
    MemberExpr,
    MypyFile,
    NameExpr,
    Node,
    RefExpr,
    ReturnStmt,
    StrExpr,
    TupleExpr,
    Var,
)
from mypy.server.subexpr import get_subexpressions
from mypy.types import Instance, get_proper_type
from mypy.util import correct_relative_import

from typed_pallas import _platforms
from typed_pallas_mypy import fullnames
from typed_pallas_mypy.entries import ENTRIES, EntrySpec
from typed_pallas_mypy.inference import call_words, jax_api
from typed_pallas_mypy.transformers import calls, guards, predicates
from typed_pallas_mypy.transformers.facts_store import Requirement, Wrapper
from typed_pallas_mypy.transformers.guards import LOWERING, name_set
from typed_pallas_mypy.transformers.module_index import ModuleIndex, callable_target
from typed_pallas_mypy.transformers.nodes import Pos, passed, ref_fullname, spelling, start_of
from typed_pallas_mypy.transformers.platform_facts import Facts


@dataclass(frozen=True)
class Finding:
    line: int
    column: int
    message: str
    notes: tuple[str, ...]

    def context(self) -> Context:
        ctx = Context(self.line, self.column)
        return ctx


@dataclass
class ModuleFindings:
    #: id(outermost function) or 0 (module level) -> findings there
    by_target: dict[int, list[Finding]] = field(default_factory=dict)
    #: targets' fullnames (for the daemon's dependencies)
    targets: set[str] = field(default_factory=set)
    #: targets in which no call surely fires a hook (``kernlib.on_gpu()`` of a package
    #: mypy cannot follow is ``Any``): any hook of the module reports their findings
    orphans: set[int] = field(default_factory=set)

    def add(self, target: int, finding: Finding) -> None:
        items = self.by_target.setdefault(target, [])
        if finding not in items:
            items.append(finding)


def message_for(requirement: Requirement, name: str, decided: frozenset[str]) -> str:
    """The error text when code needing ``requirement`` runs where ``decided`` holds."""
    kind, platform, backend = requirement.cause
    expected_registry = sorted({_platforms.PLATFORM_OF_LOWERING[p] for p in decided})
    if kind == "params":
        if platform in expected_registry:
            lowering = sorted(decided)[0]
            return _platforms.backend_mismatch_message(backend or platform, lowering)
        return _platforms.mismatch_message(platform, expected_registry[0])
    return _platforms.REQUIREMENT_TEMPLATE.format(
        name=name,
        required=", ".join(sorted(requirement.platforms)),
        platform=", ".join(expected_registry),
    )


def _short(fullname: str) -> str:
    return fullname.rsplit(".", 1)[-1]


class _Candidate(NamedTuple):
    """What a call's callee may be (``_Scan._candidates``)."""

    title: str
    entry: EntrySpec
    #: (where the wrapper is defined, the wrapper) to view the call through; None to
    #: view it as a call of ``entry`` itself
    through: tuple[str, Wrapper | None] | None
    #: "entry" (``pl.pallas_call`` or a variable holding it), "project" (a wrapper in a
    #: module mypy checks, whose calls the hooks check) or "library" (an installed
    #: package's wrapper, which mypy may see as ``Any``: no hook)
    kind: str


class _Scan:
    def __init__(
        self,
        tree: MypyFile,
        index: ModuleIndex,
        facts: Facts,
        configured: frozenset[str] | None,
        checks_untyped: bool = True,
        registries: Sequence[calls.Registration] = (),
    ) -> None:
        self.registries = {r.call: r for r in registries}
        self.tree = tree
        self.index = index
        self.facts = facts
        self.configured = configured
        #: whether mypy checks the bodies of unannotated functions in this module
        self.checks_untyped = checks_untyped
        self.out = ModuleFindings()
        #: the module's calls by line (the evaluator's sites are lines)
        self._calls_by_line: dict[int, list[CallExpr]] = {}
        #: (target, fullname) of functions imported where the platform is decided and
        #: reported there: their calls in the same target are not reported again
        self.imported: set[tuple[int, str]] = set()

    def target_of(self, pos: Pos) -> int:
        func = self.index.outermost_function_at(pos)
        return id(func) if func is not None else 0

    def check(
        self,
        fullname: str | None,
        node: Expression,
        decided: frozenset[str],
        why: str,
        anchor: Expression | None = None,
    ) -> None:
        """Add a finding at ``node`` if ``fullname``'s requirement excludes ``decided``;
        it belongs to the target of ``anchor`` (default: of ``node``)."""
        if fullname is None:
            return
        self.check_requirement(
            self.facts.of(fullname).requirement, _short(fullname), node, decided, why, anchor
        )

    def check_requirement(
        self,
        requirement: Requirement | None,
        name: str,
        node: Expression,
        decided: frozenset[str],
        why: str,
        anchor: Expression | None = None,
    ) -> None:
        if requirement is None or (requirement.platforms & decided):
            return
        if requirement.interpret is not None:
            mode = calls.interpret_argument(
                node, requirement.interpret, requirement.interpret_field
            )
            if mode != "off":
                return  # interpreted (or maybe): lowers anywhere
        message = message_for(requirement, name, decided)
        notes = (*requirement.chain, why)
        pos = start_of(anchor if anchor is not None else node)
        self.out.add(self.target_of(pos), Finding(node.line, max(node.column, 0), message, notes))

    # ------------------------------------------------------------- sites

    def call_with_known_callee(self, call: CallExpr, fullname: str) -> Finding | None:
        """The finding for a call whose callee only mypy's types name (``ops.run(x)`` on
        a typed receiver), or None; calls the syntax resolves are the scan's."""
        func = self._func_at(call)
        if self.facts.names.callee_function(call.callee, func) is not None:
            return None
        before = sum(len(items) for items in self.out.by_target.values())
        pos = start_of(call)
        self._check_where_decided(fullname, call)
        if sum(len(items) for items in self.out.by_target.values()) == before:
            return None
        return self.out.by_target[self.target_of(pos)][-1]

    def _hooks_check(self, call: CallExpr) -> bool:
        """The plugin's call hooks check ``call`` itself: it calls an entry point, or a
        function that forwards its kernel and params to one."""
        if self._candidates(call) is not None:
            return True
        name = self.facts.names.callee_function(call.callee, self._func_at(call))
        return name is not None and self.facts.wrapper_of(name)[0] is not None

    def run(self) -> ModuleFindings:
        self._bindings()
        for expr in get_subexpressions(self.tree):
            if isinstance(expr, CallExpr):
                self._calls_by_line.setdefault(expr.line, []).append(expr)
                self._call(expr)
            elif isinstance(expr, IndexExpr):
                self._table_index(expr)
        self._class_claims()
        self._evaluated()
        self._orphans()
        return self.out

    def _evaluated(self) -> None:
        """The calls the engine's evaluator finds JAX refuses wherever their guards let
        them run, in functions where the rules above found nothing (where the summaries
        answer what functions lower for: on lines where the checks above found nothing)."""
        reported = {target for target, items in self.out.by_target.items() if items}
        by_line = self.facts.inference.engine().summaries_answer
        lines = {f.line for items in self.out.by_target.values() for f in items}
        release = calls.installed_jax() or None
        for site in self.facts.evaluated_findings(self.tree, release):
            if by_line:
                found_there = site.line in lines
            else:
                found_there = self.target_of((site.line, site.column)) in reported
            if found_there:
                continue  # the rules found something there: theirs is the finding
            if any(self._hooks_check(call) for call in self._calls_by_line.get(site.line, ())):
                continue  # an entry point or a wrapper of one: its hook checks the call
            if any(self._imported_here(call) for call in self._calls_by_line.get(site.line, ())):
                continue  # a function imported under the guard: the import is the finding
            message, notes = call_words(site.verdict, release)
            decided = self.index.decision_at((site.line, site.column), self.configured)
            if decided is not None and decided[0] == frozenset(site.verdict.reached):
                notes = (*notes[:-1], decided[1])  # the guard that decides it, by name
            finding = Finding(site.line, site.column, message, notes)
            self.out.add(self.target_of((site.line, site.column)), finding)

    def _imported_here(self, call: CallExpr) -> bool:
        """``call`` calls a function whose import in the same target was reported where
        the platform is decided (``_bindings``)."""
        name = self.facts.names.callee_function(call.callee, self._func_at(call))
        return name is not None and (self.target_of(start_of(call)), name) in self.imported

    def _orphans(self) -> None:
        """The targets with findings where no hook surely fires (``ModuleFindings.orphans``)."""
        functions = {id(item[2]): item[2] for item in self.index.functions}
        for target in self.out.by_target:
            func = functions.get(target)
            scope: Node = func if func is not None else self.tree
            if not any(
                isinstance(expr, CallExpr) and self._hooked(expr)
                for expr in get_subexpressions(scope)
            ):
                self.out.orphans.add(target)

    def _hooked(self, call: CallExpr) -> bool:
        """Whether mypy surely calls one of the plugin's hooks for ``call``."""
        name = ref_fullname(call.callee)
        if name is None:
            return False
        if (
            name in ENTRIES
            or name in fullnames.DECISION_CALLS
            or name == fullnames.FUNCTOOLS_PARTIAL
        ):
            return True
        node = call.callee.node if isinstance(call.callee, RefExpr) else None
        return isinstance(node, FuncDef) and self.facts.names.is_user_module(
            self.facts.names.module_of(name)
        )

    def _class_claims(self) -> None:
        """A predicate admitting what a kernel method of its class cannot lower for:
        reported at the predicate, while mypy checks the kernel method (whose calls fire
        the hooks; a predicate's one ``return`` fires none)."""
        for claim in predicates.class_claims(self.tree, self.facts):
            message = message_for(claim.requirement, _short(claim.kernel), claim.failing)
            finding = Finding(claim.at.line, max(claim.at.column, 0), message, claim.notes)
            self.out.add(self.target_of(start_of(claim.target)), finding)

    def _func_at(self, node: Expression) -> FuncItem | None:
        return self.index.function_at(start_of(node))

    def _call(self, call: CallExpr) -> None:
        what = guards.dispatch_title(call)
        if what is not None:
            self._dispatch(call, what)
            return
        self._wrapped_entry_call(call)
        if self.registries:
            self._registration(call)
        if isinstance(call.callee, MemberExpr) and call.callee.name == "get" and call.args:
            if self.index.is_platform_source(call.args[0]):
                self._table(call.callee.expr, call)
        func = self._func_at(call)
        name = self.facts.names.callee_function(call.callee, func)
        if name is None or _differentiates(call):
            self._read_call(call)
            return
        pos = start_of(call)
        if (self.target_of(pos), name) in self.imported:
            return  # the import in this target is the finding
        self._check_where_decided(name, call)

    def _read_call(self, call: CallExpr) -> None:
        """A call whose callee mypy's names do not give (``make(x)(y)``, a variable
        holding a kernel object, ``Op()(x)``): what the engine reads it to run."""
        if isinstance(call.callee, RefExpr) and ref_fullname(call.callee) in ENTRIES:
            return
        if isinstance(call.callee, CallExpr) and self._candidates(call.callee) is not None:
            return  # ``pl.pallas_call(...)(x)``, ``my_wrapper(...)(x)``: checked as that call
        decided = self.index.decision_at(start_of(call), self.configured)
        if decided is None:
            return
        requirement = self.facts.call_requirement(self.tree, call)
        self.check_requirement(requirement, spelling(call.callee), call, decided[0], decided[1])

    def _registration(self, call: CallExpr) -> None:
        """A configured registry's registration (``[tool.typed-pallas] registries``):
        the registered function must lower for the platform the call names."""
        registry = self._registry_of(call.callee)
        if registry is None:
            return
        value = passed(call, registry.platform, registry.position).expr
        name = _value_name(value) if value is not None else None
        platforms = registry.platforms_of(name) if name is not None else None
        if not platforms:
            return
        lowering = frozenset(p for platform in platforms for p in name_set(platform)) & LOWERING
        lowering = lowering or (platforms & LOWERING)
        if not lowering:
            return
        why = (
            f"{spelling(call.callee)} at line {call.line} registers it for "
            f"{', '.join(sorted(lowering))} ({registry.origin or '[tool.typed-pallas] registries'})"
        )
        decorated = self.index.decorated.get(id(call))
        if isinstance(decorated, FuncDef):
            requirement = self.facts.local_requirement(decorated, self.tree)
            self.check_requirement(requirement, decorated.name, call, lowering, why)
            return
        registered = passed(call, registry.function, registry.function_position).expr
        if registered is None:
            return
        target = self.facts.names.callee_function(registered, self._func_at(call))
        local = callable_target(registered, self.index)
        if isinstance(local, FuncDef) and target is None:
            requirement = self.facts.local_requirement(local, self.tree)
            self.check_requirement(requirement, local.name, registered, lowering, why)
        else:
            self.check(target, registered, lowering, why)

    def _registry_of(self, callee: Expression) -> calls.Registration | None:
        """The configured registry ``callee`` names: by its fullname (a function, or a
        method of a module-level registry object), or as a method of its class."""
        name = ref_fullname(callee)
        if name is not None and name in self.registries:
            return self.registries[name]
        if isinstance(callee, MemberExpr) and isinstance(callee.expr, RefExpr):
            var = callee.expr.node
            typ = get_proper_type(var.type) if isinstance(var, Var) and var.type else None
            if isinstance(typ, Instance):
                return self.registries.get(f"{typ.type.fullname}.{callee.name}")
        return None

    def _wrapped_entry_call(self, call: CallExpr) -> None:
        """A call that runs an entry point through a library's wrapper (qwix's
        ``pallas_call``, which mypy sees as ``Any``), or through a wrapper or entry point
        chosen by a conditional (``call = my_pallas_call if flag else pl.pallas_call``):
        checked as each candidate's entry point; an error when every candidate fails."""
        candidates = self._candidates(call)
        if candidates is None:
            return
        held = isinstance(call.callee, RefExpr) and isinstance(call.callee.node, Var)
        if len(candidates) == 1 and candidates[0].kind != "library" and not held:
            return  # a direct call of the entry point or of a project wrapper: hooks check it
        # a variable holding one (``fn = pl.pallas_call``, ``fn = my_wrapper``): no hook fires
        problems: list[tuple[str, list[str]]] = []
        for title, entry, wrapper, _ in candidates:
            if wrapper is not None and wrapper[1] is not None:
                view = calls.view_through_wrapper(entry, call, wrapper[1])
                view.wrapper = f"{title} ({wrapper[0]}) forwards its kernel and compiler_params to {entry.title}"
            else:
                view = calls.view_of_syntax(entry, call)
            problem = calls.problem_of(view, self.index, self.configured)
            if problem is None:
                return
            problems.append(problem)
        message, notes = problems[0]
        if len(candidates) > 1:
            names = ", ".join(candidate.title for candidate in candidates)
            notes = [*notes, f"the call runs one of {names}; each fails, the first is shown"]
        self.out.add(
            self.target_of(start_of(call)),
            Finding(call.line, max(call.column, 0), message, tuple(notes)),
        )

    def _candidates(self, call: CallExpr) -> list[_Candidate] | None:
        """What ``call``'s callee may be, when every option is an entry point or a
        wrapper."""
        func = self._func_at(call)
        values: list[Expression] = [call.callee]
        callee = call.callee
        if isinstance(callee, NameExpr) and isinstance(callee.node, Var):
            owner = id(func) if func is not None else 0
            assigned = self.index.assignments.get((owner, callee.name), [])
            before = [value for at, value in assigned if at < start_of(call)]
            if before:
                values = before
            elif callee.fullname == f"{self.tree.fullname}.{callee.name}":
                # a module-level variable: every assignment of it (the module has run)
                values = [value for _, value in self.index.assignments.get((0, callee.name), [])]
                values = values or [callee]
        options: list[Expression] = []
        for value in values:
            if isinstance(value, ConditionalExpr):
                options += [value.if_expr, value.else_expr]
            else:
                options.append(value)
        out: list[_Candidate] = []
        for option in options:
            name = ref_fullname(option)
            if name is not None and name in ENTRIES:
                out.append(_Candidate(ENTRIES[name].title, ENTRIES[name], None, "entry"))
                continue
            target = self.facts.names.callee_function(option, func)
            if target is None:
                return None
            if target in ENTRIES:  # a module-level variable holding the entry point
                out.append(_Candidate(ENTRIES[target].title, ENTRIES[target], None, "entry"))
                continue
            short = target.rsplit(".", 1)[-1]
            if self.facts.names.is_library_name(target):
                library, _ = self.facts.wrapper_of(target)
                if library is None or library.entry not in ENTRIES:
                    return None
                where = self.facts.inference.wrapper_where(target)
                out.append(_Candidate(short, ENTRIES[library.entry], (where, library), "library"))
                continue
            wrapper, where = self.facts.wrapper_of(target)
            if wrapper is None or wrapper.entry not in ENTRIES:
                return None
            out.append(_Candidate(short, ENTRIES[wrapper.entry], (where, wrapper), "project"))
        return out or None

    def _check_where_decided(self, name: str, call: CallExpr) -> None:
        """The guard around ``call`` decides its platform, or else the configuration."""
        decided = self.index.decision_at(start_of(call), self.configured)
        if decided is not None:
            self.check(name, call, decided[0], decided[1])

    def _dispatch(self, call: CallExpr, what: str) -> None:
        for arg, keyword, platforms in guards.branches(call):
            lowering = platforms & LOWERING
            if not lowering:
                continue
            why = f"the {keyword}= branch of {what} at line {call.line} lowers for {', '.join(sorted(lowering))}"
            local = callable_target(arg, self.index)
            if isinstance(local, FuncDef) and local.is_dynamic() and not self.checks_untyped:
                # mypy skips the body of an unannotated function here, and with it the
                # checks of its region: its requirement is checked at the argument
                requirement = self.facts.local_requirement(local, self.tree)
                self.check_requirement(requirement, local.name, arg, lowering, why)
                continue
            if local is not None and self.index.branch_platforms.get(id(local)) == platforms:
                continue  # a function or lambda of this module: its body is a region
            if local is not None and not isinstance(local, FuncDef):
                continue  # a lambda passed for several platforms: its region says little

            self.check(
                self.facts.names.callee_function(arg, self._func_at(call)), arg, lowering, why
            )

    def _table_index(self, expr: IndexExpr) -> None:
        if self.index.is_platform_source(expr.index):
            self._table(expr.base, expr)

    def _table(self, base: Expression, use: Expression) -> None:
        table = self._dict_literal(base, use)
        if table is None:
            self._imported_table(base, use)
            return
        for key_expr, value_expr in table.items:
            if not isinstance(key_expr, StrExpr):
                continue
            lowering = name_set(key_expr.value) & LOWERING
            if not lowering:
                continue
            why = (
                f"the {key_expr.value!r} entry of the table indexed by the platform at line {use.line}"
                f" lowers for {', '.join(sorted(lowering))}"
            )
            name = self.facts.names.callee_function(value_expr, self._func_at(value_expr))
            self.check(name, value_expr, lowering, why, anchor=use)

    def _imported_table(self, base: Expression, use: Expression) -> None:
        """A platform table defined in another module (its facts hold the entries)."""
        if not isinstance(base, RefExpr) or not base.fullname:
            return
        module = self.facts.names.module_of(base.fullname)
        if module is None or module == self.tree.fullname:
            return
        for key, target in self.facts.of(base.fullname).table:
            lowering = name_set(key) & LOWERING
            if not lowering:
                continue
            why = (
                f"the {key!r} entry of {base.fullname} (indexed by the platform at line "
                f"{use.line}) lowers for {', '.join(sorted(lowering))}"
            )
            self.check(target, use, lowering, why)

    def _dict_literal(self, base: Expression, use: Expression) -> DictExpr | None:
        if isinstance(base, DictExpr):
            return base if _platform_keyed(base) else None
        if isinstance(base, NameExpr):
            func = self._func_at(use)
            for owner in (func, None):
                key = (id(owner) if owner is not None else 0, base.name)
                assigned = self.index.assignments.get(key)
                if assigned:
                    if len(assigned) == 1 and isinstance(assigned[0][1], DictExpr):
                        value = assigned[0][1]
                        return value if _platform_keyed(value) else None
                    return None
        return None

    def _bindings(self) -> None:
        """Assignments, returns and imports inside guarded regions."""
        for stmt, pos in self.index.bindings:
            decided = self.index.decision_at(pos, None)
            if decided is None:
                continue
            if isinstance(stmt, AssignmentStmt):
                values = [stmt.rvalue]
            elif isinstance(stmt, ReturnStmt) and stmt.expr is not None:
                values = [stmt.expr]
            elif isinstance(stmt, ImportFrom):
                module = _import_target(self.tree, stmt)
                for name, _alias in stmt.names:
                    before = len(self.out.by_target.get(self.target_of(pos), []))
                    self.check(f"{module}.{name}", _as_expr(stmt), decided[0], decided[1])
                    if len(self.out.by_target.get(self.target_of(pos), [])) > before:
                        self.imported.add((self.target_of(pos), f"{module}.{name}"))
                continue
            else:
                continue
            for value in values:
                for item in _bound_items(value):
                    if isinstance(item, CallExpr):
                        continue  # calls are checked as calls
                    bound = self.facts.names.callee_function(item, self.index.function_at(pos))
                    self.check(bound, item, decided[0], decided[1])


def _differentiates(call: CallExpr) -> bool:
    """``jax.grad(f)(x)``: ``f`` runs with its custom derivative rules (the engine reads
    such a call; mypy's name of its callee is ``f``'s)."""
    callee = call.callee
    return isinstance(callee, CallExpr) and ref_fullname(callee.callee) in jax_api.DIFFERENTIATING


def _value_name(value: Expression) -> str | None:
    """``"tpu"`` for a string literal, the dotted name of a reference
    (``Backend.TPU``'s fullname), or None."""
    if isinstance(value, StrExpr):
        return value.value
    return ref_fullname(value) or (spelling(value) if isinstance(value, MemberExpr) else None)


def _platform_keyed(table: DictExpr) -> bool:
    keys = [k for k, _ in table.items]
    return bool(keys) and all(
        isinstance(k, StrExpr)
        and (k.value in _platforms.LOWERINGS_OF_NAME or k.value in ("cpu", "default"))
        for k in keys
    )


def _bound_items(value: Expression) -> Iterator[Expression]:
    if isinstance(value, (TupleExpr, ListExpr)):
        for item in value.items:
            yield from _bound_items(item)
    elif isinstance(value, DictExpr):
        if _platform_keyed(value):
            return  # a platform table: checked where it is indexed
        for _, item in value.items:
            yield from _bound_items(item)
    else:
        yield value


def _import_target(tree: MypyFile, stmt: ImportFrom) -> str:
    target, _ok = correct_relative_import(
        tree.fullname, stmt.relative, stmt.id, tree.is_package_init_file()
    )
    return target


def _as_expr(stmt: ImportFrom) -> Expression:
    expr = NameExpr("import")
    expr.line = stmt.line
    expr.column = stmt.column
    return expr


def findings(
    tree: MypyFile,
    index: ModuleIndex,
    facts: Facts,
    configured: frozenset[str] | None,
    checks_untyped: bool = True,
    registries: Sequence[calls.Registration] = (),
) -> ModuleFindings:
    """Every decision-site finding of ``tree``, grouped by target."""
    return _Scan(tree, index, facts, configured, checks_untyped, registries).run()


def finding_for_call(
    tree: MypyFile,
    index: ModuleIndex,
    facts: Facts,
    configured: frozenset[str] | None,
    call: CallExpr,
    fullname: str,
) -> Finding | None:
    """``_Scan.call_with_known_callee`` for one call (from a method hook)."""
    return _Scan(tree, index, facts, configured).call_with_known_callee(call, fullname)
