"""The hook callbacks: turn a mypy context into a check and run it.

* ``check_entry_call``: a Pallas entry point (``pl.pallas_call``...): ``calls``;
* ``check_partial``: ``functools.partial(entry_point, ...)``, then mypy's own inference;
* ``check_user_call``: a call of a function of the checked code: a package wrapper is
  checked as the entry point it forwards to (``calls``);
* every one of them, and ``check_decision_call`` (platform sources, dispatch calls),
  also reports the decision-site findings (``decisions``) of the target being checked.

Each callback returns the type mypy would have inferred anyway
(``ctx.default_return_type``, or mypy's own ``functools.partial`` inference), and
never lets an exception escape: any failure inside the plugin falls back to that
type. Set ``TYPED_PALLAS_MYPY_DEBUG=1`` to let the exception through instead.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from typing import Final, Literal

from mypy.nodes import CallExpr, MypyFile, TypeInfo
from mypy.options import Options
from mypy.plugin import CheckerPluginInterface, FunctionContext, FunctionSigContext, MethodContext
from mypy.plugins.functools import partial_call_callback, partial_new_callback
from mypy.types import FunctionLike, Instance, Overloaded, Type, get_proper_type

from typed_pallas_mypy import cache_keys
from typed_pallas_mypy.entries import ENTRIES, EntrySpec
from typed_pallas_mypy.transformers import decisions, reporting, signatures
from typed_pallas_mypy.transformers.calls import (
    CallView,
    PlatformConfig,
    validate_compiler_params,
    view_of_call,
    view_through_wrapper,
)
from typed_pallas_mypy.transformers.facts_store import (
    definitions,
    mark_source,
    source_trigger_of,
    trigger_of,
)
from typed_pallas_mypy.transformers.module_index import ModuleIndex, Reads, index_of, stamp_of
from typed_pallas_mypy.transformers.nodes import ref_fullname, start_of
from typed_pallas_mypy.transformers.platform_facts import Facts
from typed_pallas_mypy.transformers.reporting import checked_tree, report
from typed_pallas_mypy.transformers.resolution import is_user_path

DEBUG_ENV: Final = "TYPED_PALLAS_MYPY_DEBUG"


@dataclass
class Session:
    """What one plugin instance keeps across hooks: facts and findings per module."""

    #: the plugin's view of mypy's modules (``Plugin.set_modules``), read when needed
    modules: Callable[[], Mapping[str, MypyFile] | None] = lambda: None
    #: mypy's cache folder (the library reader keeps its cache inside), or None
    cache_dir: str | None = None
    #: the Python whose installed packages mypy reads (the library reader's too)
    python_executable: str | None = None
    #: mypy's options (per-module ones matter: ``check_untyped_defs``)
    options: Options | None = None
    facts: Facts | None = None
    #: module -> (its stamp, what its findings read of other modules, the findings)
    findings: dict[str, tuple[object, Reads, decisions.ModuleFindings]] = field(
        default_factory=dict
    )
    #: modules whose facts were put in their symbol table, by stamp
    stored: dict[str, object] = field(default_factory=dict)
    #: module -> the other modules its findings read (``module_findings``)
    consulted: dict[str, frozenset[str]] = field(default_factory=dict)
    #: module -> the other modules its calls' own checks read (``_run_check``)
    hook_reads: dict[str, set[str]] = field(default_factory=dict)
    #: id(CallExpr) -> the view of a call whose params/mesh formals the signature
    #: hook widened (read against the declared signature, with the argument types)
    widened: dict[int, CallView] = field(default_factory=dict)

    def checks_untyped(self, module: str) -> bool:
        """Whether mypy checks the bodies of unannotated functions in ``module``."""
        if self.options is None:
            return True
        return self.options.clone_for_module(module).check_untyped_defs

    def facts_for(self, api: CheckerPluginInterface | None) -> Facts | None:
        """The build's facts. Under mypy's daemon, a hook's call (``api`` given) first
        forgets the answers a re-parsed module made stale (``Facts.refresh``: once per
        build epoch), so that no index or answer of the hook is built on them."""
        if self.facts is None:
            modules = reporting.build_modules(api) if api is not None else None
            if modules is None:
                modules = self.modules()
            if modules is None:
                return None
            self.facts = Facts(modules, self.cache_dir, self.python_executable, self.options)
        elif api is not None and cache_keys.in_daemon():
            self.facts.refresh(reporting.build_epoch(api))
        return self.facts


def function_kind(fullname: str, session: Session) -> Literal["project", "library kernel"] | None:
    """Whether ``fullname`` is a function of the project's own code, or a library
    function that lowers only for some platforms (calls of either get a hook); None for
    anything else (no hook, so no other plugin's hook is shadowed)."""
    try:
        facts = session.facts_for(None)
        if facts is None:
            return None
        names = facts.names
        if names.is_user_module(names.module_of(fullname)):
            return "project"
        if names.is_library_name(fullname) and _may_be_library_kernel(fullname, facts):
            return "library kernel"
    except Exception:  # never let a lookup crash mypy: no hook, mypy's default type
        if debug_enabled():
            raise
    return None


def _may_be_library_kernel(fullname: str, facts: Facts) -> bool:
    """Whether a call of the library function ``fullname`` gets a hook: the rules answer
    by its requirement; the summaries, by whether its module reaches Pallas at all
    (``Inference.may_lower``: a summary is asked only where a platform is decided)."""
    engine = facts.inference.engine()
    if engine.summaries_answer:
        return engine.may_lower(fullname)
    return facts.inference.requirement(fullname) is not None


def _str_type(facts: Facts) -> Instance | None:
    """``builtins.str`` once mypy has analysed builtins (None before)."""
    builtins = facts.modules.get("builtins")
    str_node = builtins.names.get("str") if builtins is not None else None
    if str_node is None or not isinstance(str_node.node, TypeInfo):
        return None
    return Instance(str_node.node, [])


def store_facts(module: str, session: Session, config: PlatformConfig) -> None:
    """Just before mypy serializes a project module: put its platform facts in its
    symbol table (cached, and part of its interface hash), and work out its findings,
    so that every library it uses has been read (mypy may write a module's cache
    before it checks the function bodies, whose hooks would read them later); then store
    the engine's facts of the modules it read, as far as they were worked out
    (``Inference.save``: summaries asked for later are stored by a later call)."""
    try:
        facts = session.facts_for(None)
        tree = facts.modules.get(module) if facts is not None else None
        if facts is None or tree is None or tree.is_cache_skeleton:
            return
        str_type = _str_type(facts)
        if str_type is None:
            return
        facts.store_module(tree, str_type)
        if is_user_path(tree.path):
            module_findings(tree, session, config, str_type)
        facts.inference.save()
    except Exception:
        if debug_enabled():
            raise


def save_inference(session: Session) -> None:
    """Just before mypy serializes an installed module: store what the engine worked
    out (``Inference.save``; the plugin keeps no facts in such a module's cache)."""
    try:
        facts = session.facts_for(None)
        if facts is not None:
            facts.inference.save()
    except Exception:
        if debug_enabled():
            raise


def _index(ctx: FunctionContext | MethodContext, session: Session) -> ModuleIndex | None:
    tree = checked_tree(ctx)
    if tree is None:
        return None
    return index_of(tree, session.facts_for(ctx.api))


def mark_parsed_source(tree: MypyFile, session: Session) -> None:
    """Inside mypy's daemon, when it has parsed a project module: mark its source
    (``facts_store.mark_source``), so that any edit of it re-checks the callers that
    consulted its facts. Nothing before mypy has analysed builtins (the first build,
    where every module is checked anyway)."""
    try:
        facts = session.facts_for(None)
        str_type = _str_type(facts) if facts is not None else None
        if str_type is not None:
            mark_source(tree, str_type)
    except Exception:
        if debug_enabled():
            raise


def debug_enabled() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def module_findings(
    tree: MypyFile,
    session: Session,
    config: PlatformConfig,
    str_type: Instance | None,
    epoch: object | None = None,
) -> decisions.ModuleFindings | None:
    """Every decision-site finding of a project module, computed again only when the
    module or a module they read has changed (its source, or its stored facts:
    ``Facts.unchanged``): mypy's daemon re-checks every target that had an error after
    each edit, and most of them read nothing that changed.

    Under the daemon, the modules whose facts they consulted become dependencies of
    the module's targets, and the module's own facts are stored (``str_type``).
    ``epoch``: ``reporting.build_epoch``, for ``Facts.refresh``."""
    facts = session.facts
    if facts is None:
        return None
    daemon = cache_keys.in_daemon()
    if daemon:
        facts.refresh(epoch)
    stamp = stamp_of(tree)
    cached = session.findings.get(tree.fullname)
    if cached is not None and cached[0] == stamp and facts.unchanged(cached[1]):
        return cached[2]
    facts.consulted = set()
    index = index_of(tree, facts)
    found = decisions.findings(
        tree,
        index,
        facts,
        config.platforms_for(tree.fullname),
        session.checks_untyped(tree.fullname),
        config.registries,
    )
    found.targets = {tree.fullname, *definitions(tree)}
    # what the findings read of other modules, the index's guard regions included
    consulted = (facts.consulted | {m for m, _, _ in index.cross_reads}) - {tree.fullname}
    if daemon:
        _depend(tree, consulted, found.targets)
        if str_type is not None:
            facts.store_module(tree, str_type)
    session.findings[tree.fullname] = (stamp, facts.snapshot(consulted), found)
    session.consulted[tree.fullname] = frozenset(consulted)
    return found


def project_files_read(module: str, session: Session) -> list[str]:
    """The files of the project's modules ``module``'s findings were worked out from,
    where the summaries answer (their answers are not in those modules' stored facts:
    an edit of one checks ``module`` again, ``cache_keys.library_uses``); none with the
    rules answering (their stored facts carry the answers, in the interface hash).
    Asked while mypy writes a module's cache: a failure gives none, never a crash."""
    try:
        facts = session.facts
        if facts is None or not facts.inference.engine().summaries_answer:
            return []
        out = []
        read_by = session.consulted.get(module, frozenset()) | session.hook_reads.get(module, set())
        for read in sorted(read_by):
            tree = facts.modules.get(read)
            if tree is not None and tree.path and facts.names.is_user_module(read):
                out.append(tree.path)
        return out
    except Exception:
        if debug_enabled():
            raise
        return []


def report_decisions(
    ctx: FunctionContext | MethodContext, session: Session, config: PlatformConfig
) -> None:
    """Report the decision-site findings of the target that holds ``ctx.context``."""
    tree = checked_tree(ctx)
    if tree is None or not is_user_path(tree.path) or session.facts_for(ctx.api) is None:
        return
    found = module_findings(
        tree, session, config, reporting.str_instance(ctx.api), reporting.build_epoch(ctx.api)
    )
    if found is None:
        return
    assert isinstance(ctx.context, CallExpr)
    func = index_of(tree, session.facts).outermost_function_at(start_of(ctx.context))
    pending = list(found.by_target.get(id(func) if func is not None else 0, []))
    for orphan in found.orphans:
        pending.extend(found.by_target.get(orphan, []))
    if not pending:
        return
    present = reporting.reported(ctx.api, tree.path)
    for finding in pending:
        if (finding.line, finding.column, finding.message) not in present:
            report(ctx.api, finding.context(), finding.message, list(finding.notes))
            present.add((finding.line, finding.column, finding.message))


def _depend(tree: MypyFile, modules: set[str], targets: set[str]) -> None:
    """Under mypy's daemon: ``targets`` of ``tree`` are checked again when the facts or
    the source of any of ``modules`` change (``facts_store.trigger_of`` and
    ``source_trigger_of``). mypy reads a module's ``plugin_deps`` when it processes the
    whole module (the first build, or an edit of it), and keeps them across the later
    re-checks of single targets."""
    for module in modules:
        for trigger in (trigger_of(module), source_trigger_of(module)):
            tree.plugin_deps.setdefault(trigger, set()).update(targets)


def _run_check(
    ctx: FunctionContext | MethodContext, session: Session, check: Callable[[], object]
) -> None:
    """``check()``; under mypy's daemon, the target holding the call then depends on the
    modules whose facts it consulted (an entry call reading another module's kernel
    body, a call of another module's wrapper), as the decision findings do in
    ``module_findings``; where the summaries answer, those modules' files are part of
    the module's cache key too (``project_files_read``)."""
    facts = session.facts
    daemon = cache_keys.in_daemon()
    if facts is None or not (daemon or facts.inference.engine().summaries_answer):
        check()
        return
    outer = facts.consulted
    facts.consulted = set()
    try:
        check()
    finally:
        consulted = facts.consulted
        facts.consulted = outer | consulted
    tree = checked_tree(ctx)
    if tree is None:
        return
    others = consulted - {tree.fullname}
    session.hook_reads.setdefault(tree.fullname, set()).update(others)
    if daemon:
        scope = getattr(ctx.api, "tscope", None)
        target = scope.current_target() if scope is not None and scope.module else tree.fullname
        _depend(tree, others, {target})


def _guarded(
    ctx: FunctionContext | MethodContext, session: Session, config: PlatformConfig, check: object
) -> None:
    try:
        if callable(check):
            _run_check(ctx, session, check)
        report_decisions(ctx, session, config)
    except Exception:
        if debug_enabled():
            raise


def check_entry_call(
    ctx: FunctionContext, *, entry: EntrySpec, config: PlatformConfig, session: Session
) -> Type:
    """Hook for a direct call of a Pallas entry point."""

    def check() -> None:
        index = _index(ctx, session)
        if index is not None:
            assert isinstance(ctx.context, CallExpr)
            view = session.widened.get(id(ctx.context))
            if view is None or view.context is not ctx.context:
                view = view_of_call(
                    entry, ctx.context, ctx.callee_arg_names, ctx.args, ctx.arg_kinds, ctx.arg_types
                )
            validate_compiler_params(view, ctx.api, index, config)

    _guarded(ctx, session, config, check)
    return ctx.default_return_type


def widen_proven_mismatch(
    ctx: FunctionSigContext, *, entry: EntrySpec, session: Session
) -> FunctionLike:
    """Signature hook of an entry point: ``signatures.widen`` for a call whose params or
    mesh the declared signature rejects and the plugin proves wrong itself."""
    signature = ctx.default_signature
    try:
        tree = checked_tree(ctx)
        if tree is None:
            return signature
        index = index_of(tree, session.facts_for(ctx.api))
        view = signatures.rejected_but_proven(ctx, entry, index, signature)
        if view is not None:
            session.widened.setdefault(id(ctx.context), view)
            return signatures.widen(signature)
    except Exception:
        if debug_enabled():
            raise
    return signature


def accept_untagged_branches(ctx: FunctionSigContext) -> FunctionLike:
    """Signature hook of ``typed_pallas.dispatch`` (``signatures``)."""
    try:
        return signatures.accept_untagged_branches(ctx)
    except Exception:
        if debug_enabled():
            raise
        return ctx.default_signature


def check_user_call(
    ctx: FunctionContext | MethodContext, *, fullname: str, config: PlatformConfig, session: Session
) -> Type:
    """Hook for a call of a function of the checked code (a wrapper, maybe)."""

    def check() -> None:
        facts = session.facts_for(ctx.api)
        if facts is None:
            return
        if isinstance(ctx, MethodContext):
            _check_typed_receiver(ctx, fullname, config, facts)
        wrapper, where = facts.wrapper_of(fullname)
        if wrapper is None or wrapper.entry not in ENTRIES:
            return
        index = _index(ctx, session)
        if index is None:
            return
        assert isinstance(ctx.context, CallExpr)
        entry = ENTRIES[wrapper.entry]
        view = view_through_wrapper(entry, ctx.context, wrapper)
        types = {
            id(expr): typ
            for exprs, typs in zip(ctx.args, ctx.arg_types)
            for expr, typ in zip(exprs, typs)
        }
        for name, expr in view.args.items():
            if id(expr) in types:
                view.types[name] = types[id(expr)]
        view.wrapper = (
            f"{fullname.rsplit('.', 1)[-1]} ({where}) forwards its kernel and compiler_params "
            f"to {entry.title}"
        )
        validate_compiler_params(view, ctx.api, index, config)

    _guarded(ctx, session, config, check)
    return ctx.default_return_type


def _check_typed_receiver(
    ctx: MethodContext, fullname: str, config: PlatformConfig, facts: Facts
) -> None:
    """A method called on a value mypy knows the class of (``ops.run(x)``): its
    requirement is asked only where the platform is decided around the call."""
    tree = checked_tree(ctx)
    if tree is None:
        return
    assert isinstance(ctx.context, CallExpr)
    index = index_of(tree, facts)
    finding = decisions.finding_for_call(
        tree, index, facts, config.platforms_for(tree.fullname), ctx.context, fullname
    )
    if finding is not None:
        report(ctx.api, finding.context(), finding.message, list(finding.notes))


def check_library_call(
    ctx: FunctionContext | MethodContext, *, config: PlatformConfig, session: Session
) -> Type:
    """Hook for a call of a library kernel (a function, or a ``jax.jit`` /
    ``custom_vjp`` object): the decision findings of the function it is in."""
    _guarded(ctx, session, config, None)
    return ctx.default_return_type


def check_partial_call(ctx: MethodContext, *, config: PlatformConfig, session: Session) -> Type:
    """Hook for calling a ``functools.partial`` object (``make_splash_mha(...)``): the
    decision findings, then mypy's own inference of the call."""
    _guarded(ctx, session, config, None)
    return partial_call_callback(ctx)


def check_decision_call(ctx: FunctionContext, *, config: PlatformConfig, session: Session) -> Type:
    """Hook for platform sources and dispatch calls: only the decision findings."""
    _guarded(ctx, session, config, None)
    return ctx.default_return_type


def check_partial(ctx: FunctionContext, *, config: PlatformConfig, session: Session) -> Type:
    """Hook for ``functools.partial(entry_point, ...)``; then mypy's own inference.

    A plugin hook for ``functools.partial`` shadows mypy's default one, so this always
    ends by delegating to ``mypy.plugins.functools.partial_new_callback``.
    """
    _guarded(ctx, session, config, lambda: _check_partial(ctx, config, session))
    return partial_new_callback(ctx)


def _check_partial(ctx: FunctionContext, config: PlatformConfig, session: Session) -> None:
    if len(ctx.args) < 3 or len(ctx.args[0]) != 1:
        return
    name = ref_fullname(ctx.args[0][0])
    entry = ENTRIES.get(name) if name is not None else None
    if entry is None:
        return
    index = _index(ctx, session)
    if index is None:
        return
    assert isinstance(ctx.context, CallExpr)
    positional_names: list[str | None] = []
    positional = list(ctx.args[1])
    for i in range(len(positional)):
        positional_names.append(entry.positional[i] if i < len(entry.positional) else None)
    keyword_names = list(ctx.arg_names[2])
    view = view_of_call(
        entry,
        ctx.context,
        [*positional_names, *keyword_names],
        [[expr] for expr in [*positional, *ctx.args[2]]],
        [[kind] for kind in [*ctx.arg_kinds[1], *ctx.arg_kinds[2]]],
        [[typ] for typ in [*ctx.arg_types[1], *ctx.arg_types[2]]],
    )
    # mypy's partial inference does not check arguments bound to an overloaded callee
    # (``pl.kernel``'s overloads on the mesh): the stubs reject nothing there, so the
    # plugin must not defer to them.
    callee_type = get_proper_type(ctx.arg_types[0][0]) if ctx.arg_types[0] else None
    view.callee = None if isinstance(callee_type, Overloaded) else ctx.args[0][0]
    validate_compiler_params(view, ctx.api, index, config)
