"""The platform facts of every function the checked code reaches, in any module.

``Facts.of(fullname)`` answers what a function (or alias, or platform table) lowers
for, whatever module defines it. What it lowers for is inferred from source by one
engine, the same way for the project's modules and for installed packages
(``inference_use``: a name imported from a package mypy could not follow too). What
needs mypy's declared types is read from mypy's nodes for a module checked in this run,
and from the facts stored in its symbol table for one loaded from mypy's cache
(``facts_store``): platform predicates and the methods gating on them (and the guard
helpers the engine read, stored so that a change reaches callers in other modules).
Anything else: no facts (silence).

``helper_of`` answers whether a function is a guard helper or a platform helper (read
by the engine, for every module: an index's conditions ask it, and it never needs an
index), ``predicate_of`` whether it is a platform predicate (``predicates``, read the same way), and
``store_module`` writes a module's facts into its symbol table just before mypy
serializes it. ``kernel_evidence`` and ``argument_evidence`` pass on what the
engine reads of a call of the checked module (its kernel's body; its mesh, scratch and
grid spec arguments), found by position. Every module consulted is noted (``consulted``; a cached answer notes
again the modules its computation read), so that the daemon can re-check callers when
those facts change, and ``snapshot``/``unchanged`` tell whether an answer derived from
them (a module's findings, an index's guard regions) still holds.

What it does not do: resolve names (``resolution``), infer (``inference``), or report.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TypeVar

from mypy.nodes import (
    CallExpr,
    Decorator,
    Expression,
    FuncDef,
    MypyFile,
    OverloadedFuncDef,
    Var,
)
from mypy.options import Options
from mypy.types import Instance

from typed_pallas_mypy.cache_keys import in_daemon
from typed_pallas_mypy.inference import SiteFinding
from typed_pallas_mypy.inference.combine import Ask
from typed_pallas_mypy.inference.model import Evidence
from typed_pallas_mypy.transformers import predicates
from typed_pallas_mypy.transformers.facts_store import (
    FACTS_SYMBOL,
    NO_FACTS,
    FunctionFacts,
    Gate,
    Predicate,
    Requirement,
    Wrapper,
    definitions,
    facts_from_json,
    store,
    stored_json,
)
from typed_pallas_mypy.transformers.guards import Sets
from typed_pallas_mypy.transformers.inference_use import InferenceUse
from typed_pallas_mypy.transformers.module_index import ModuleIndex, Reads, index_of, stamp_of
from typed_pallas_mypy.transformers.resolution import Names, keeps_function

_T = TypeVar("_T")


@dataclass
class _ModuleFacts:
    stamp: object
    facts: dict[str, FunctionFacts] = field(default_factory=dict)


class Facts:
    """Facts of functions across the modules of one mypy build.

    ``modules`` is mypy's own ``dict[str, MypyFile]`` (``TypeChecker.modules`` or
    ``Plugin.set_modules``), so modules added later in the build are seen.
    """

    def __init__(
        self,
        modules: Mapping[str, MypyFile],
        cache_dir: str | None = None,
        python_executable: str | None = None,
        options: Options | None = None,
    ) -> None:
        self.modules = modules
        self.names = Names(modules)
        self.names.keeping_alias = lambda fullname: self.of(fullname).keeping_decorator
        self.inference = InferenceUse(modules, cache_dir, python_executable, options)
        self._computed: dict[str, FunctionFacts] = {}
        #: what was read from mypy's nodes of a function (``_typed``), with the tree and
        #: its stamp it was read from (the daemon merges a re-parsed module into the old
        #: tree): mypy frees a module's function bodies once it has written its cache
        self._typed_read: dict[str, tuple[MypyFile, object, _Typed]] = {}
        self._stored: dict[str, _ModuleFacts] = {}
        #: modules whose facts were consulted (the daemon's dependencies of a caller)
        self.consulted: set[str] = set()
        self._stamps: dict[str, object] = {}
        self._helpers: dict[str, tuple[Sets | None, bool]] = {}
        self._predicates: dict[str, Predicate | None] = {}
        #: (kind, fullname) of each answer above -> the modules its computation read, noted
        #: again whenever the cached answer is used (``consulted`` is then whole)
        self._reads: dict[tuple[str, str], frozenset[str]] = {}
        #: the ``epoch`` of the last ``refresh`` (held, so that its id is not reused)
        self._refreshed_in: object | None = None

    # ---------------------------------------------------------------- bookkeeping

    def refresh(self, epoch: object | None = None) -> None:
        """Forget the answers that read a module changed since (the daemon re-parses):
        an answer of a changed module, or one whose computation read one (``_reads``,
        and the modules the engine read for it); the others stay. What was derived from
        them is recomputed only where it read a changed module (``unchanged``).

        ``epoch`` (``reporting.build_epoch``) changes whenever mypy may have read a
        source again; while it is the one of the last refresh, nothing is looked at
        (about 450 hook calls an edit would each stat every module read). ``None``
        (not known) always looks."""
        if epoch is not None and epoch is self._refreshed_in:
            return
        self._refreshed_in = epoch
        changed = frozenset(
            module
            for module, stamp in self._stamps.items()
            if (tree := self.modules.get(module)) is None or stamp_of(tree) != stamp
        )
        if not changed:
            return

        def stale(kind: str, fullname: str) -> bool:
            return (
                self.names.module_of(fullname) in changed
                or bool(self._reads.get((kind, fullname), frozenset()) & changed)
                or bool(self.inference.modules_of(fullname) & changed)
            )

        for kind, answers in (
            ("facts", self._computed),
            ("helper", self._helpers),
            ("predicate", self._predicates),
        ):
            for fullname in [name for name in answers if stale(kind, name)]:
                del answers[fullname]
                self._reads.pop((kind, fullname), None)
        for module in changed:
            self._stored.pop(module, None)
            self._stamps.pop(module, None)
        self.names.forget()
        self.inference.forget(changed)

    def snapshot(self, modules: Iterable[str]) -> Reads:
        """Each module as it is now: its stamp (a re-parse or an edit changes it) and its
        facts symbol (replaced only when the facts it holds change: ``facts_store.store``).
        Outside mypy's daemon nothing is re-read during a build: an empty snapshot."""
        if not in_daemon():
            return ()
        out: list[tuple[str, object, object]] = []
        for module in sorted(modules):
            tree = self.modules.get(module)
            if tree is None:
                out.append((module, None, None))
                continue
            symbol = tree.names.get(FACTS_SYMBOL)
            out.append((module, stamp_of(tree), symbol.node if symbol is not None else None))
        return tuple(out)

    def unchanged(self, reads: Reads) -> bool:
        """Whether every module of a ``snapshot`` is as it was: then what was derived from
        reading them (a module's findings, an index's guard regions) still holds, as in
        an incremental run, where a module is checked again only when the interface of a
        module it depends on (its facts symbol included) changes."""
        for module, stamp, symbol in reads:
            tree = self.modules.get(module)
            if tree is None:
                if stamp is not None:
                    return False
                continue
            if stamp_of(tree) != stamp:
                return False
            current = tree.names.get(FACTS_SYMBOL)
            if (current.node if current is not None else None) is not symbol:
                return False
        return True

    def reading(self, build: Callable[[], ModuleIndex]) -> tuple[ModuleIndex, Reads]:
        """``build()`` and a ``snapshot`` of the modules it consulted (which are also
        noted in ``consulted``, as before)."""
        outer = self.consulted
        self.consulted = set()
        try:
            built = build()
            reads = self.snapshot(self.consulted)
        finally:
            self.consulted = outer | self.consulted
        return built, reads

    def _computing(self, kind: str, fullname: str, compute: Callable[[], _T]) -> _T:
        """``compute()``, remembering the modules it read (``_replay``)."""
        outer = self.consulted
        self.consulted = set()
        try:
            return compute()
        finally:
            inner = self.consulted
            self.consulted = outer | inner
            self._reads[(kind, fullname)] = frozenset(inner)

    def _replay(self, kind: str, fullname: str) -> None:
        """Note again the modules a cached answer's computation read: a caller that uses
        it depends on them as much as the first caller did."""
        self.consulted |= self._reads.get((kind, fullname), frozenset())

    def _note_module(self, module: str) -> None:
        tree = self.modules.get(module)
        if tree is not None and module not in self._stamps:
            self._stamps[module] = stamp_of(tree)
        self.consulted.add(module)

    # ---------------------------------------------------------------- lookup

    def of(self, fullname: str) -> FunctionFacts:
        """Facts of the function (or alias, or table) ``fullname``; empty when unknown."""
        module = self.names.module_of(fullname)
        if module is None or not self.names.is_user_module(module):
            if self.names.is_library_name(fullname):
                return self.inference.facts_of(fullname)
            return NO_FACTS
        self._note_module(module)
        cached = self._computed.get(fullname)
        if cached is None:
            cached = self._computing("facts", fullname, lambda: self._compute(fullname, module))
            self._computed[fullname] = cached
        else:
            self._replay("facts", fullname)
        for read in self.inference.modules_of(fullname):
            if self.names.is_user_module(read):
                self._note_module(read)
        return cached

    def wrapper_of(self, fullname: str) -> tuple[Wrapper | None, str]:
        """``of(fullname).wrapper`` and ``.where`` without the engine's other facts of
        the function (every call of a project function asks whether it forwards to an
        entry point, and few do): noted as ``of`` notes it, with the modules the wrapper
        was read from."""
        cached = self._computed.get(fullname)
        if cached is not None:
            found = self.of(fullname)  # noted as ``of`` notes it
            return found.wrapper, found.where
        module = self.names.module_of(fullname)
        if module is None or not self.names.is_user_module(module):
            if self.names.is_library_name(fullname):
                return self.inference.wrapper_of(fullname)
            return None, ""
        self._note_module(module)
        wrapper, where = self.inference.wrapper_of(fullname)
        for read in self.inference.engine().modules_of_wrapper(fullname):
            if self.names.is_user_module(read):
                self._note_module(read)
        return wrapper, where

    def gates_of(self, fullname: str) -> tuple[Gate, ...]:
        """``of(fullname).gates`` without the engine's facts of the function (a class's
        claims read every method's gates, and few methods have any)."""
        cached = self._computed.get(fullname)
        if cached is not None:
            return self.of(fullname).gates  # noted as ``of`` notes it
        module = self.names.module_of(fullname)
        if module is None or not self.names.is_user_module(module):
            return ()
        self._note_module(module)
        return self._typed_facts(fullname, module)[0][3]

    def _compute(self, fullname: str, module: str, *, requirements: bool = True) -> FunctionFacts:
        """The engine's facts of a project function, with what needs mypy's types
        (without its requirements: ``InferenceUse.facts_of``)."""
        inferred = self.inference.facts_of(fullname, requirements=requirements)
        typed, devices = self._typed_facts(fullname, module)
        guard, source, predicate, gates = typed
        if inferred.is_empty() and guard is None and not source and predicate is None:
            if not gates and not devices:
                return NO_FACTS
        return dataclasses.replace(
            inferred,
            name=fullname,
            where=inferred.where or self.inference.engine().definition(fullname).where,
            guard=guard,
            platform_source=source,
            predicate=predicate,
            gates=gates,
            device_params=devices,
        )

    def _typed_facts(self, fullname: str, module: str) -> _Typed:
        """``_typed`` of a function of a module checked in this run, read once per tree
        (a module's facts are stored, then its function bodies freed, before other
        modules ask); a module loaded from mypy's cache answers from its stored facts."""
        tree = self.modules[module]
        if tree.is_cache_skeleton:
            stored = self._stored_facts(module, tree).get(fullname, NO_FACTS)
            typed = (stored.guard, stored.platform_source, stored.predicate, stored.gates)
            return typed, stored.device_params
        stamp = stamp_of(tree)
        kept = self._typed_read.get(fullname)
        if kept is not None and kept[0] is tree and kept[1] == stamp:
            return kept[2]
        found = self._typed(fullname, tree)
        self._typed_read[fullname] = (tree, stamp, found)
        return found

    def _typed(self, fullname: str, tree: MypyFile) -> _Typed:
        """(guard sets, platform source, predicate, gates), device parameters: what is
        read from mypy's nodes of a module checked in this run."""
        node = self.names.node_of(fullname)
        if isinstance(node, Decorator):
            if not keeps_function(node, self.names):
                return (None, False, None, ()), ()
            node = node.func
        if isinstance(node, OverloadedFuncDef):
            # an overloaded method (tokamax's ``Op.__call__``) may still gate on a predicate
            impl = node.impl.func if isinstance(node.impl, Decorator) else node.impl
            if isinstance(impl, FuncDef) and impl.body.body:
                index = index_of(tree, self)
                return (None, False, None, predicates.gates_of(impl, index.guard_at)), ()
            return (None, False, None, ()), ()
        if isinstance(node, Var):
            guard, source = self.helper_of(fullname)
            return (guard, source, None, ()), ()
        if not isinstance(node, FuncDef) or not node.body.body:
            return (None, False, None, ()), ()
        index = index_of(tree, self)
        guard, source = self.helper_of(fullname)
        devices = tuple(i for i, _ in self.device_parameters(node)) if node.info else ()
        gates = predicates.gates_of(node, index.guard_at)
        return (guard, source, self.predicate_of(fullname), gates), devices

    def call_requirement(self, tree: MypyFile, call: CallExpr) -> Requirement | None:
        """What a call of a project module runs lowers for, read by the engine (a call
        whose callee mypy cannot name: ``make(x)(y)``, a local variable, ``Op()(x)``)."""
        where = _span(call)
        if where is None:
            return None
        self._note_module(tree.fullname)
        engine = self.inference.engine()
        found = engine.call_requirement(tree.fullname, where)
        for read in engine.modules_of_call(tree.fullname, where):
            if self.names.is_user_module(read):
                self._note_module(read)
        return found

    def evaluated_findings(
        self, tree: MypyFile, release: tuple[int, ...] | None
    ) -> list[SiteFinding]:
        """The calls of a project module the engine's evaluator finds JAX refuses
        wherever their guards let them run (the modules it read become dependencies)."""
        self._note_module(tree.fullname)
        found, read = self.inference.engine().evaluated_findings(tree.fullname, release)
        for module in read:
            if self.names.is_user_module(module):
                self._note_module(module)
        return found

    def local_requirement(self, func: FuncDef, tree: MypyFile) -> Requirement | None:
        """The requirement of a function of a project module, nested ones included
        (found by where it is defined; the modules it was read from are noted)."""
        self._note_module(tree.fullname)
        engine = self.inference.engine()
        found = engine.requirement_at(tree.fullname, func.line)
        for module in engine.modules_of_requirement_at(tree.fullname, func.line):
            if self.names.is_user_module(module):
                self._note_module(module)
        return found

    def _stored_facts(self, module: str, tree: MypyFile) -> dict[str, FunctionFacts]:
        stamp = stamp_of(tree)
        cached = self._stored.get(module)
        if cached is not None and cached.stamp == stamp:
            return cached.facts
        entry = _ModuleFacts(stamp)
        raw = stored_json(tree.names.get(FACTS_SYMBOL))
        if raw is not None:
            for name, data in raw.items():
                if isinstance(data, dict):
                    entry.facts[f"{module}.{name}"] = facts_from_json(f"{module}.{name}", data)
        self._stored[module] = entry
        return entry.facts

    # ---------------------------------------------------------------- guard helpers

    def helper_of(self, fullname: str) -> tuple[Sets | None, bool]:
        """(guard sets, returns a platform) of a guard or platform helper, in any module:
        read by the engine (``Inference.helper``), one rule for the project and its
        libraries. A project module loaded from mypy's cache answers from its stored
        facts (what the engine read when they were stored)."""
        module = self.names.module_of(fullname)
        if module is None or not self.names.is_user_module(module):
            if self.names.is_library_name(fullname):
                # a library's guard helper (``if lib.on_tpu():``)
                return self.inference.engine().helper(fullname)
            return None, False
        self._note_module(module)
        tree = self.modules[module]
        if tree.is_cache_skeleton:
            stored = self._stored_facts(module, tree).get(fullname, NO_FACTS)
            return stored.guard, stored.platform_source
        cached = self._helpers.get(fullname)
        if cached is not None:
            self._replay("helper", fullname)
            return cached
        result = self._computing("helper", fullname, lambda: self._helper(fullname))
        self._helpers[fullname] = result
        return result

    def _helper(self, fullname: str) -> tuple[Sets | None, bool]:
        engine = self.inference.engine()
        found = engine.helper(fullname)
        for read in engine.modules_of_helper(fullname):
            if self.names.is_user_module(read):
                self._note_module(read)
        return found

    # ---------------------------------------------------------------- platform predicates

    def predicate_of(self, fullname: str) -> Predicate | None:
        """The platform predicate ``fullname`` is, if any (read like ``helper_of``)."""
        module = self.names.module_of(fullname)
        if module is None or not self.names.is_user_module(module):
            return None
        self._note_module(module)
        tree = self.modules[module]
        if tree.is_cache_skeleton:
            return self._stored_facts(module, tree).get(fullname, NO_FACTS).predicate
        if fullname in self._predicates:
            self._replay("predicate", fullname)
            return self._predicates[fullname]
        self._predicates[fullname] = None  # a predicate calling itself: none
        found = self._computing("predicate", fullname, lambda: self._predicate(fullname, tree))
        self._predicates[fullname] = found
        return found

    def _predicate(self, fullname: str, tree: MypyFile) -> Predicate | None:
        node = self.names.node_of(fullname)
        if isinstance(node, Decorator) and keeps_function(node, self.names):
            node = node.func
        if isinstance(node, FuncDef) and node.body.body:
            return predicates.predicate_kind(node, self, self._predicate_sets)
        return None

    def device_parameters(self, func: FuncDef) -> list[tuple[int, Var]]:
        """(position, variable) of each parameter of ``func`` annotated ``jax.Device``,
        by the engine's rule (``Inference.device_parameters``: mypy types ``jax.Device``
        as ``Any``, so the annotation is read as written)."""
        module = self.names.module_of(func.fullname)
        if module is None:
            return []
        names = self.inference.engine().device_parameters(module, func.line, func.name)
        return [(i, a.variable) for i, a in enumerate(func.arguments) if a.variable.name in names]

    def _predicate_sets(self, func: FuncDef, parameter: str) -> Sets:
        """What ``func`` returns of its ``parameter`` as a device, read by the engine
        (``Inference.predicate_sets``), the predicates it calls answered here."""
        module = self.names.module_of(func.fullname)
        if module is None:
            return None, None
        ask = predicates.answer_in(
            func,
            lambda _: func,
            lambda call, at, is_device: predicates.sets_at_call(call, at, is_device, self, None),
        )
        sets, helpers = self.inference.engine().predicate_sets(
            module, func.line, func.name, parameter, ask
        )
        for name in helpers:
            self.helper_of(name)
        return sets

    # ---------------------------------------------------------------- conditions

    def condition_sets(self, module: str, expr: Expression, ask: Ask | None) -> Sets:
        """What ``expr`` of ``module`` tests, read by the engine as it reads every
        condition (``Inference.condition_sets``); the modules of the helpers it calls
        are noted (a guard region depends on them)."""
        where = _span(expr)
        if where is None:
            return None, None
        sets, helpers = self.inference.engine().condition_sets(module, where, ask)
        for name in helpers:
            self.helper_of(name)
        return sets

    def is_platform_source(self, module: str, expr: Expression) -> bool:
        """Whether ``expr`` of ``module`` is the platform string itself, read by the
        engine (``Inference.is_platform_source``)."""
        where = _span(expr)
        if where is None:
            return False
        found, helpers = self.inference.engine().is_platform_source(module, where)
        for name in helpers:
            self.helper_of(name)
        return found

    def interpret_kept_off(self, module: str, expr: Expression) -> tuple[str, str, str] | None:
        """Whether ``expr`` of ``module``, an entry call's ``interpret=``, is a parameter
        the module keeps off, read by the engine (``Inference.interpret_kept_off``)."""
        where = _span(expr)
        return self.inference.engine().interpret_kept_off(module, where) if where else None

    def argument_evidence(
        self, module: str, call: CallExpr, arguments: Sequence[tuple[str, int, str | None]]
    ) -> tuple[tuple[str, Evidence], ...]:
        """What the mesh, scratch and grid spec arguments of an entry call in ``module``
        prove, read by the engine as it reads a library's calls: (kind, evidence), kind
        "mesh" or "scratch" (``Inference.argument_evidence``)."""
        where = _span(call)
        if where is None:
            return ()
        return self.inference.engine().argument_evidence(module, where, arguments)

    def kernel_evidence(
        self,
        module: str,
        call: CallExpr,
        argument: tuple[str, int, str | None] | None,
        *,
        decorated: bool,
        applied: bool,
    ) -> tuple[tuple[Evidence, ...], tuple[Evidence, ...], str]:
        """The kernel body of an entry call in ``module``, found by the engine as it
        finds a library's (``Inference.kernel_evidence``): the evidence of a kernel of
        ``module``, and that of one defined in another module with the path its lines
        are in (its facts: a caller depends on that module)."""
        where = _span(call)
        if where is None:
            return (), (), ""
        local, other = self.inference.engine().kernel_evidence(
            module, where, argument, decorated=decorated, applied=applied
        )
        if other is None:
            return local, (), ""
        facts = self.of(other)
        return local, facts.evidence, facts.where.rsplit(":", 1)[0]

    def returned_params(self, call: CallExpr) -> str:
        """The backend of the params the function ``call`` calls always returns a
        construction of (a params factory, in any module: its annotation may say
        otherwise, what it returns is what runs); "" when not known."""
        name = self.names.callee_function(call.callee, None)
        return self.of(name).params if name is not None else ""

    # ---------------------------------------------------------------- storing

    def module_facts(self, tree: MypyFile, *, stored: bool = False) -> dict[str, FunctionFacts]:
        """Facts of every top-level function, method and alias of a fresh module; with
        ``stored``, as its symbol table keeps them: where the summaries answer, without
        requirements (a caller's check works them out from the sources when a platform
        is decided there, and the module's source is part of that caller's cache key,
        ``cache_keys.library_uses``, so an edit that changes them checks it again)."""
        out: dict[str, FunctionFacts] = {}
        names = definitions(tree)
        if stored and self.inference.engine().summaries_answer:
            for name in names:
                found = self._compute(name, tree.fullname, requirements=False)
                if not found.is_empty():
                    out[name] = found
            return out
        self.inference.engine().prefetch(names)  # a module's functions together
        for name in names:
            found = self.of(name)
            if not found.is_empty():
                out[name] = found
        return out

    def store_module(self, tree: MypyFile, str_type: Instance) -> None:
        """Put ``tree``'s facts into its symbol table (mypy then caches them, and they
        are part of its interface hash: callers in other modules re-check on change)."""
        if tree.is_cache_skeleton:
            return
        store(tree, self.module_facts(tree, stored=True), str_type)


#: (guard sets, platform source, predicate, gates), device parameters (``Facts._typed``)
_Typed = tuple[tuple[Sets | None, bool, Predicate | None, tuple[Gate, ...]], tuple[int, ...]]


def _span(expr: Expression) -> tuple[int, int, int, int] | None:
    """(line, column, end line, end column) of ``expr``, as the inference names places."""
    if expr.end_line is None or expr.end_column is None:
        return None
    return (expr.line, expr.column, expr.end_line, expr.end_column)
