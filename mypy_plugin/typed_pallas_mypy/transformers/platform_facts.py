"""Platform facts of functions, in any module: what each one can lower for, and why.

For every function of the checked code this infers:

* a **requirement**: the lowering platforms it can lower for, from the Pallas calls it
  makes unconditionally (params, body and argument evidence, as the local check reads
  them) and from the functions it calls unconditionally, transitively and across
  modules (direct calls, module attributes, ``functools.partial``, aliases
  ``impl = f``, decorators that keep the function such as ``jax.jit``, ``self.method``);
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

A module checked in this run is read from its AST; one loaded from mypy's cache (or
whose bodies mypy dropped) from the facts stored in its symbol table (``facts_store``).

What it does not do: import jax, evaluate anything, or report errors (``decisions``).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from mypy.nodes import (
    AssignmentStmt,
    CallExpr,
    ClassDef,
    Decorator,
    DictExpr,
    Expression,
    ExpressionStmt,
    FuncDef,
    FuncItem,
    IfStmt,
    MemberExpr,
    MypyFile,
    NameExpr,
    Node,
    OverloadedFuncDef,
    RefExpr,
    ReturnStmt,
    Statement,
    StrExpr,
    TypeInfo,
    Var,
)
from mypy.server.subexpr import get_subexpressions

from typed_pallas import _platforms
from typed_pallas_mypy import evidence_tables, fullnames
from typed_pallas_mypy.transformers import evidence as evidence_mod
from typed_pallas_mypy.transformers import guards
from typed_pallas_mypy.transformers import params as params_mod
from typed_pallas_mypy.transformers.facts_store import (
    FACTS_SYMBOL,
    NO_FACTS,
    FunctionFacts,
    Requirement,
    Wrapper,
    facts_from_json,
    in_daemon,
    location,
    store,
    stored_json,
    trigger_of,
)
from typed_pallas_mypy.transformers.guards import LOWERING, Sets
from typed_pallas_mypy.transformers.module_index import ModuleIndex, index_of, stamp_of
from typed_pallas_mypy.transformers.nodes import end_of, start_of
from typed_pallas_mypy.transformers.unconditional import (
    unconditional_expressions,
    unconditional_roots,
)

#: How many calls deep a requirement chain is followed (and shown in notes).
MAX_DEPTH: Final = 8
#: How many alias hops (``impl = f``) are followed.
_ALIAS_DEPTH: Final = 4

#: Callables that return their function argument's behaviour unchanged (as decorators
#: or as ``jax.jit(f)(x)``): the platform of ``jax.jit(f)`` is the platform of ``f``.
KEEPS_FUNCTION: Final = frozenset(
    {
        "jax.jit",
        "jax._src.api.jit",
        "jax._src.pjit.jit",
        "jax.vmap",
        "jax._src.api.vmap",
        "jax.pmap",
        "jax._src.api.pmap",
        "jax.grad",
        "jax._src.api.grad",
        "jax.value_and_grad",
        "jax._src.api.value_and_grad",
        "jax.checkpoint",
        "jax.remat",
        "jax._src.ad_checkpoint.checkpoint",
        "jax.named_call",
        "jax._src.api.named_call",
        "jax.named_scope",
        "functools.wraps",
        "functools.cache",
        "functools.lru_cache",
        "functools._lru_cache_wrapper",
        "typed_pallas.platform",
        "typed_pallas._tagged.platform",
    }
)


# --------------------------------------------------------------------------- the resolver


@dataclass
class _ModuleFacts:
    stamp: object
    facts: dict[str, FunctionFacts] = field(default_factory=dict)


class Facts:
    """Facts of functions across the modules of one mypy build.

    ``modules`` is mypy's own ``dict[str, MypyFile]`` (``TypeChecker.modules`` or
    ``Plugin.set_modules``), so modules added later in the build are seen.
    """

    def __init__(self, modules: Mapping[str, MypyFile]) -> None:
        self.modules = modules
        self._computed: dict[str, FunctionFacts] = {}
        self._in_progress: set[str] = set()
        self._stored: dict[str, _ModuleFacts] = {}
        self._module_of: dict[str, str | None] = {}
        #: modules whose facts were consulted since ``reset_consulted`` (for ``depend``)
        self.consulted: set[str] = set()
        self._stamps: dict[str, object] = {}
        #: bumped whenever everything is forgotten (results derived from facts go stale)
        self.generation = 0
        self._helpers: dict[str, tuple[Sets | None, bool]] = {}
        self._user_paths: dict[str, bool] = {}
        self._helpers_in_progress: set[str] = set()

    # ---------------------------------------------------------------- bookkeeping

    def refresh(self) -> None:
        """Forget everything if any module read so far changed (the daemon re-parses)."""
        for module, stamp in list(self._stamps.items()):
            tree = self.modules.get(module)
            if tree is None or stamp_of(tree) != stamp:
                self._computed.clear()
                self._helpers.clear()
                self._stored.clear()
                self._stamps.clear()
                self._module_of.clear()
                self.generation += 1
                return

    def module_of(self, fullname: str) -> str | None:
        """The module defining ``fullname`` (longest module prefix)."""
        if fullname in self._module_of:
            return self._module_of[fullname]
        found: str | None = None
        parts = fullname.split(".")
        for i in range(len(parts) - 1, 0, -1):
            candidate = ".".join(parts[:i])
            if candidate in self.modules:
                found = candidate
                break
        self._module_of[fullname] = found
        return found

    def is_user_module(self, module: str | None) -> bool:
        if module is None:
            return False
        tree = self.modules.get(module)
        if tree is None:
            return False
        cached = self._user_paths.get(tree.path)
        if cached is None:
            cached = self._user_paths[tree.path] = is_user_path(tree.path)
        return cached

    def _note_module(self, module: str) -> None:
        tree = self.modules.get(module)
        if tree is not None and module not in self._stamps:
            self._stamps[module] = stamp_of(tree)
        self.consulted.add(module)

    # ---------------------------------------------------------------- lookup

    def of(self, fullname: str) -> FunctionFacts:
        """Facts of the function (or alias) ``fullname``; empty when unknown."""
        module = self.module_of(fullname)
        if module is None or not self.is_user_module(module):
            return NO_FACTS
        self._note_module(module)
        tree = self.modules[module]
        if tree.is_cache_skeleton:
            return self._stored_facts(module, tree).get(fullname, NO_FACTS)
        cached = self._computed.get(fullname)
        if cached is not None:
            return cached
        if fullname in self._in_progress or len(self._in_progress) > MAX_DEPTH * 4:
            return NO_FACTS  # recursion: no requirement from the cycle
        self._in_progress.add(fullname)
        try:
            result = self._compute(fullname, module, tree)
        finally:
            self._in_progress.discard(fullname)
        self._computed[fullname] = result
        return result

    def _stored_facts(self, module: str, tree: MypyFile) -> dict[str, FunctionFacts]:
        stamp = stamp_of(tree)
        cached = self._stored.get(module)
        if cached is not None and cached.stamp == stamp:
            return cached.facts
        entry = _ModuleFacts(stamp)
        node = tree.names.get(FACTS_SYMBOL)
        raw = stored_json(node)
        if raw is not None:
            for name, data in raw.items():
                if isinstance(data, dict):
                    entry.facts[f"{module}.{name}"] = facts_from_json(f"{module}.{name}", data)
        self._stored[module] = entry
        return entry.facts

    def node_of(self, fullname: str) -> Node | None:
        """The definition of ``fullname`` in its module's symbol tables."""
        module = self.module_of(fullname)
        if module is None:
            return None
        tree = self.modules[module]
        rest = fullname[len(module) + 1 :].split(".")
        table = tree.names
        node: Node | None = None
        for i, part in enumerate(rest):
            sym = table.get(part)
            if sym is None or sym.node is None:
                return None
            node = sym.node
            if i < len(rest) - 1:
                if not isinstance(node, TypeInfo):
                    return None
                table = node.names
        return node

    # ---------------------------------------------------------------- GuardScope helpers

    def helper_sets(self, call: CallExpr) -> Sets | None:
        name = self.callee_function(call.callee, None, None)
        if name is None:
            return None
        return self.helper_of(name)[0]

    def is_platform_call(self, call: CallExpr) -> bool:
        name = self.callee_function(call.callee, None, None)
        return name is not None and self.helper_of(name)[1]

    def helper_of(self, fullname: str) -> tuple[Sets | None, bool]:
        """(guard sets, returns a platform) of a guard or platform helper.

        Read without the helper module's index (a helper is one ``return`` of a
        condition), so that building an index, which asks about the helpers its
        conditions call, never needs that same index: no cycle, same answer whatever
        order the hooks come in."""
        module = self.module_of(fullname)
        if module is None or not self.is_user_module(module):
            return None, False
        self._note_module(module)
        tree = self.modules[module]
        if tree.is_cache_skeleton:
            stored = self._stored_facts(module, tree).get(fullname, NO_FACTS)
            return stored.guard, stored.platform_source
        cached = self._helpers.get(fullname)
        if cached is not None:
            return cached
        if fullname in self._helpers_in_progress:
            return None, False
        self._helpers_in_progress.add(fullname)
        try:
            node = self.node_of(fullname)
            if isinstance(node, Decorator) and _keeps_function(node):
                node = node.func
            result: tuple[Sets | None, bool] = (None, False)
            if isinstance(node, FuncDef) and node.body.body:
                result = self._helper_kind(node, _HelperScope(self))
            elif isinstance(node, Var):
                index = index_of(tree, self)
                assigned = index.assignments.get((0, fullname.rsplit(".", 1)[1]), [])
                if len(assigned) == 1:
                    target = self.callee_function(assigned[0][1], index, None, 1)
                    if target is not None and target != fullname:
                        result = self.helper_of(target)
        finally:
            self._helpers_in_progress.discard(fullname)
        self._helpers[fullname] = result
        return result

    def kernel_evidence(self, expr: Expression) -> list[tuple[frozenset[str], str, str]]:
        """Body evidence of a kernel defined in another module (``tpu_ops.dma_kernel``):
        (backends, spelling, where)."""
        name = self.callee_function(expr, None, None)
        if name is None:
            return []
        found = self.of(name)
        path = found.where.rsplit(":", 1)[0]
        return [(backends, what, f"{path}:{line}") for backends, what, line in found.evidence]

    # ---------------------------------------------------------------- callees

    def callee_function(
        self, expr: Expression, index: ModuleIndex | None, func: FuncItem | None, depth: int = 0
    ) -> str | None:
        """The fullname of the user function ``expr`` names, through partial, jit,
        aliases and ``self.``; None when it is not a known function."""
        if depth > _ALIAS_DEPTH:
            return None
        if isinstance(expr, CallExpr):
            wrapped = ref_name(expr.callee)
            if (wrapped == fullnames.FUNCTOOLS_PARTIAL or wrapped in KEEPS_FUNCTION) and expr.args:
                return self.callee_function(expr.args[0], index, func, depth + 1)
            return None
        if isinstance(expr, MemberExpr) and isinstance(expr.expr, NameExpr) and func is not None:
            info = getattr(func, "info", None)
            if (
                isinstance(func, FuncDef)
                and isinstance(info, TypeInfo)
                and func.arguments
                and func.arguments[0].variable.name == expr.expr.name
                and not func.is_static
            ):
                try:
                    method = info.get(expr.name)
                except AttributeError:  # a class mypy has not finished (no MRO yet)
                    return None
                if method is not None and isinstance(
                    method.node, (FuncDef, Decorator, OverloadedFuncDef)
                ):
                    return method.node.fullname
                return None
        if isinstance(expr, RefExpr):
            node = expr.node
            if isinstance(node, (FuncDef, OverloadedFuncDef)):
                return node.fullname
            if isinstance(node, Decorator):
                return node.fullname if _keeps_function(node) else None
            if isinstance(node, Var) and expr.fullname:
                if node.is_inferred and self.is_user_module(self.module_of(expr.fullname)):
                    return expr.fullname  # an alias: its facts follow the assignment
            return None
        return None

    # ---------------------------------------------------------------- computing

    def _compute(self, fullname: str, module: str, tree: MypyFile) -> FunctionFacts:
        node = self.node_of(fullname)
        index = index_of(tree, self)
        if isinstance(node, Decorator):
            if not _keeps_function(node):
                return NO_FACTS
            node = node.func
        if isinstance(node, OverloadedFuncDef):
            return NO_FACTS
        if isinstance(node, Var):
            return self._alias(fullname, tree, index)
        if not isinstance(node, FuncDef) or not node.body.body:
            return NO_FACTS
        return self.function_facts(node, tree, index)

    def _alias(self, fullname: str, tree: MypyFile, index: ModuleIndex) -> FunctionFacts:
        name = fullname.rsplit(".", 1)[1]
        assigned = index.assignments.get((0, name), [])
        if len(assigned) != 1:
            return NO_FACTS
        value = assigned[0][1]
        if isinstance(value, DictExpr):
            return self._table(fullname, tree, index, value)
        target = self.callee_function(value, index, None, 1)
        if target is None or target == fullname:
            return NO_FACTS
        found = self.of(target)
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

    def _table(
        self, fullname: str, tree: MypyFile, index: ModuleIndex, value: DictExpr
    ) -> FunctionFacts:
        """A module-level dict keyed by platform names: its entries' functions."""
        entries: list[tuple[str, str]] = []
        for key, item in value.items:
            if not isinstance(key, StrExpr):
                return NO_FACTS
            if key.value not in _platforms.LOWERINGS_OF_GUARD_NAME and key.value != "default":
                return NO_FACTS
            target = self.callee_function(item, index, None, 1)
            if target is not None:
                entries.append((key.value, target))
        if not entries:
            return NO_FACTS
        return FunctionFacts(fullname, where=location(tree, value.line), table=tuple(entries))

    def function_facts(self, func: FuncDef, tree: MypyFile, index: ModuleIndex) -> FunctionFacts:
        where = location(tree, func.line)
        guard, source = self.helper_of(func.fullname)
        wrapper = self._wrapper(func, index) if index.mentions_pallas else None
        requirement = None
        if guard is None and not source:
            requirement = self._requirement(func, tree, index, where)
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

    def _helper_kind(self, func: FuncDef, scope: guards.GuardScope) -> tuple[Sets | None, bool]:
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

    def _branches_on_platform(self, func: FuncDef, index: ModuleIndex) -> bool:
        if index.has_region_within(start_of(func), end_of(func), tags=False):
            return True
        for expr in get_subexpressions(func.body):
            if isinstance(expr, CallExpr) and guards.dispatch_title(expr) is not None:
                return True
        return False

    def _requirement(
        self, func: FuncDef, tree: MypyFile, index: ModuleIndex, where: str
    ) -> Requirement | None:
        if self._branches_on_platform(func, index):
            return None
        params_names = {arg.variable.name for arg in func.arguments}
        platforms: frozenset[str] = LOWERING
        first: Requirement | None = None
        from typed_pallas_mypy.transformers import calls as calls_mod  # a cycle at import time

        for expr in unconditional_expressions(unconditional_roots(func.body)):
            if not isinstance(expr, CallExpr):
                continue
            entry_name = ref_name(expr.callee)
            if entry_name in calls_mod.ENTRIES:
                found = self._entry_requirement(
                    expr, entry_name, func, tree, index, where, calls_mod
                )
            elif (
                isinstance(expr.callee, CallExpr)
                and ref_name(expr.callee.callee) in calls_mod.ENTRIES
            ):
                continue  # pl.pallas_call(...)(x): the inner call is the entry call
            else:
                kind = self._call_kind(expr, func, index, params_names)
                if kind == "unknown":
                    return None
                if kind is None:
                    continue
                callee_facts = self.of(kind)
                if callee_facts.requirement is None:
                    continue
                callee_req = callee_facts.requirement
                short = func.name
                link = (
                    f"{short} ({where}) lowers only for {', '.join(sorted(callee_req.platforms))}: "
                    f"it calls {kind.rsplit('.', 1)[1]} at {location(tree, expr.line)}"
                )
                found = Requirement(
                    callee_req.platforms, callee_req.cause, (link, *callee_req.chain)[:MAX_DEPTH]
                )
            if found is None:
                continue
            platforms = platforms & found.platforms
            if first is None:
                first = found
        if first is None or not platforms:
            return None  # no evidence, or a contradiction the local check reports
        return Requirement(platforms, first.cause, first.chain)

    def _call_kind(
        self, call: CallExpr, func: FuncDef, index: ModuleIndex, params_names: set[str]
    ) -> str | None:
        """The user function a call runs (its fullname), None for a known library call
        or a class, or "unknown" for a parameter, a local callable, ``self.attr``..."""
        callee = call.callee
        target = self.callee_function(callee, index, func)
        if target is not None:
            return target if self.is_user_module(self.module_of(target)) else None
        if isinstance(callee, NameExpr):
            node = callee.node
            if isinstance(node, Var):
                if callee.name in params_names:
                    return "unknown"
                if node.fullname == callee.name or not self.is_user_module(
                    self.module_of(node.fullname)
                ):
                    return "unknown" if node.fullname == callee.name else None
                return "unknown"
            return None
        if isinstance(callee, MemberExpr):
            if (
                isinstance(callee.expr, NameExpr)
                and func.arguments
                and callee.expr.name == func.arguments[0].variable.name
                and isinstance(getattr(func, "info", None), TypeInfo)
                and not func.is_static
            ):
                return "unknown"  # self.attr(...) that is not a method
            if ref_name(callee) is not None:
                return None
            return None  # x.method(...): a method of a value, library code
        if isinstance(callee, CallExpr):
            inner = ref_name(callee.callee)
            if inner is not None and not self.is_user_module(self.module_of(inner)):
                return None if inner not in KEEPS_FUNCTION else "unknown"
            return "unknown"
        return "unknown"

    def _entry_requirement(
        self,
        call: CallExpr,
        entry_name: str,
        func: FuncDef,
        tree: MypyFile,
        index: ModuleIndex,
        where: str,
        calls_mod: object,
    ) -> Requirement | None:
        from typed_pallas_mypy.transformers import calls

        entry = calls.ENTRIES[entry_name]
        view = calls.view_of_syntax(entry, call)
        if calls.interpret_may_be_on(view):
            return None
        platforms: frozenset[str] = LOWERING
        cause: tuple[str, str, str] | None = None
        detail = ""
        params = None
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
                detail = f"uses {ev.what} (line {ev.line}), {evidence_tables.BACKEND_LABEL[backend]}-only"
        if cause is None or platforms == LOWERING:
            return None
        note = (
            f"{func.name} ({where}) lowers only for {', '.join(sorted(platforms))}: "
            f"its {entry.title} at {location(tree, call.line)} {detail}"
        )
        return Requirement(platforms, cause, (note,))

    def _wrapper(self, func: FuncDef, index: ModuleIndex) -> Wrapper | None:
        from typed_pallas_mypy.transformers import calls

        positions = {arg.variable.name: i for i, arg in enumerate(func.arguments)}
        for expr in unconditional_expressions(unconditional_roots(func.body)):
            if not isinstance(expr, CallExpr):
                continue
            name = ref_name(expr.callee)
            if name not in calls.ENTRIES:
                continue
            entry = calls.ENTRIES[name]
            view = calls.view_of_syntax(entry, expr)
            if view.has_splat:
                return None
            forwards: list[tuple[str, str, int]] = []
            for formal, actual in view.args.items():
                if isinstance(actual, NameExpr) and actual.name in positions:
                    forwards.append((formal, actual.name, positions[actual.name]))
            forwarded = {f[0] for f in forwards}
            if (
                "compiler_params" not in forwarded
                or entry.body is None
                or entry.body not in forwarded
            ):
                continue
            interpret = view.args.get("interpret")
            if (
                interpret is not None
                and "interpret" not in forwarded
                and not calls.is_false(interpret)
            ):
                return None
            return Wrapper(name, tuple(sorted(forwards)), expr.line)
        return None

    # ---------------------------------------------------------------- storing

    def module_facts(self, tree: MypyFile) -> dict[str, FunctionFacts]:
        """Facts of every top-level function, method and alias of a fresh module."""
        out: dict[str, FunctionFacts] = {}
        for name in _definitions(tree):
            found = self.of(name)
            if not found.is_empty():
                out[name] = found
        return out


class _HelperScope:
    """What a helper's ``return`` condition may use: other helpers, no variables."""

    def __init__(self, facts: Facts) -> None:
        self.facts = facts

    def is_platform_variable(self, name: NameExpr, func: FuncItem | None) -> bool:
        return False

    def helper_sets(self, call: CallExpr) -> Sets | None:
        return self.facts.helper_sets(call)

    def is_platform_call(self, call: CallExpr) -> bool:
        return self.facts.is_platform_call(call)

    def variable_condition(self, name: NameExpr, func: FuncItem | None) -> Expression | None:
        return None


def _definitions(tree: MypyFile) -> list[str]:
    names: list[str] = []
    for stmt in tree.defs:
        for node in _defined(stmt):
            names.append(node)
    return names


def _defined(stmt: Statement) -> list[str]:
    if isinstance(stmt, (FuncDef, Decorator)):
        return [stmt.fullname]
    if isinstance(stmt, ClassDef):
        out: list[str] = []
        for inner in stmt.defs.body:
            if isinstance(inner, (FuncDef, Decorator)):
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


#: backend name -> its row of the platform table


def ref_name(expr: Expression) -> str | None:
    if isinstance(expr, RefExpr) and expr.fullname:
        return expr.fullname
    return None


def _keeps_function(node: Decorator) -> bool:
    for dec in node.decorators:
        target = dec.callee if isinstance(dec, CallExpr) else dec
        name = ref_name(target)
        if name == fullnames.FUNCTOOLS_PARTIAL and isinstance(dec, CallExpr) and dec.args:
            name = ref_name(dec.args[0])
        if name not in KEEPS_FUNCTION:
            return False
    return True


def _is_docstring(stmt: Statement) -> bool:
    return isinstance(stmt, ExpressionStmt) and isinstance(stmt.expr, StrExpr)


#: Path parts of installed packages and of mypy's typeshed.
THIRD_PARTY_MARKERS: Final = ("site-packages", "dist-packages", "typeshed")


def is_installed_path(path: str) -> bool:
    """Whether a module path is an installed package's or typeshed's."""
    normal = path.replace("\\", "/")
    return any(f"/{marker}/" in normal for marker in THIRD_PARTY_MARKERS)


def is_user_path(path: str) -> bool:
    """Whether a module path is the user's code (not installed, not a stub)."""
    return bool(path) and not is_installed_path(path) and not path.endswith(".pyi")


__all__ = [
    "FACTS_SYMBOL",
    "Facts",
    "FunctionFacts",
    "Requirement",
    "Wrapper",
    "in_daemon",
    "is_user_path",
    "location",
    "store",
    "trigger_of",
    "unconditional_expressions",
    "unconditional_roots",
]
