"""What a function lowers for, asked of the evaluator: its summary for callers that do not
say their arguments (a library's public function, a lock file, a hover).

``function_summary`` runs the function under each lowering platform as a caller that
passes only what it must would call it: each parameter without a default is unknown,
each parameter with one keeps it (so ``interpret=False`` stays off). Under a platform the
function is **reached** when some path of it returns, and **refused** when a kernel it runs
on every such path cannot lower for that platform. It lowers only for the reached
platforms that do not refuse it, when that is not all of them.

This is the question the rules' ``Inference.requirement`` answers today; the two are
compared on real packages before one replaces the other (docs/inference-model.md).

What it does not do: bind a method's receiver to an instance (it is unknown), or say
which argument would change the answer (a caller's call site is asked by ``verdict``).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final

from typed_pallas_mypy.inference.evaluator import journal
from typed_pallas_mypy.inference.evaluator.domain import (
    ANYTHING,
    FALSE,
    NOTHING,
    TRUE,
    UNKNOWN,
    Array,
    BoundMethod,
    ClassObj,
    Const,
    Container,
    Derivative,
    Descriptor,
    Flow,
    FunctionObj,
    InstanceObj,
    Kernel,
    ModuleObj,
    Params,
    Partial,
    Transformed,
    Value,
    VSet,
    next_serial,
    only,
    vset,
)
from typed_pallas_mypy.inference.evaluator.machine import Loader, Machine, OutOfBudget, SiteKey
from typed_pallas_mypy.inference.evaluator.questions import machine_for, read_by, run_functions
from typed_pallas_mypy.inference.evaluator.verdict import (
    PLATFORMS,
    Link,
    by_place,
    chain_from,
    lowers_on,
    same_kernel,
)

#: the pseudo call site a summary's call is recorded at (no line of any module)
_SUMMARY_SITE: Final[SiteKey] = ("<summary>", 0, 0, 0, 0)


@dataclass(frozen=True)
class FunctionSummary:
    """A function's run under each platform: where some path returns (``reached``),
    where a kernel run on every such path refuses (``failing``), the refusing kernels,
    and the way to the first of them."""

    reached: tuple[str, ...]
    failing: tuple[str, ...]
    kernels: tuple[Kernel, ...]
    chain: tuple[Link, ...] = ()
    #: (parameter, the position a caller passes it at or -1 for keyword-only) through
    #: which a caller turns interpret mode on for every kernel that refuses; None if none
    interpret: tuple[str, int] | None = None
    #: the modules the runs read from their sources (a caller's dependencies)
    read: frozenset[str] = frozenset()
    #: the modules the runs looked for and did not find (installing one may change it)
    absent: frozenset[str] = frozenset()
    #: what the first call returned, under every platform, runs nothing when called and
    #: leaves the way live (an array, a number, a container, a value not known): calling
    #: the result is then this same summary (``result=True`` needs no run of its own)
    result_inert: bool = False

    @property
    def lowers_only_for(self) -> frozenset[str] | None:
        """The platforms it lowers for, when not every platform: None when it lowers
        everywhere it is reached, or is reached nowhere."""
        if not self.reached:
            return None
        allowed = frozenset(self.reached) - frozenset(self.failing)
        return allowed if allowed != frozenset(PLATFORMS) else None


def function_summary(
    loader: Loader,
    module: str,
    qualname: str,
    release: tuple[int, ...] | None,
    trees: dict[tuple[str, str], ast.Module | None] | None = None,
    importable: dict[str, bool] | None = None,
    kept: dict[tuple[str, str], Machine | None] | None = None,
    *,
    result: bool = False,
) -> FunctionSummary | None:
    """The summary of ``module.qualname`` (a function, or a method as ``Class.name``) at
    the JAX ``release``; None when it is not found or a run did not finish. With
    ``result``, the summary of calling what it returns as a caller must
    (``make_splash_mha(...)(q, k, v)``): both calls are the run. ``trees``,
    ``importable`` and ``kept`` are shared between questions as ``questions`` shares
    them: the same answers as without them."""
    runs = ModuleRuns(loader, module, trees, importable, kept)
    try:
        return runs.summary(qualname, release, result=result)
    finally:
        runs.close()


class ModuleRuns:
    """A module imported once under each platform, for the summaries of its functions:
    each summary runs in a question of its own, nested in the import's, so what one
    summary's runs change is undone before the next, and each finds the machines as a
    fresh run of the module would (``Machine.question``). ``close`` undoes the import.

    While it is open the import's question is the running one: no other question may run
    on any machine before ``close`` (its writes would be saved in this journal)."""

    def __init__(
        self,
        loader: Loader,
        module: str,
        trees: dict[tuple[str, str], ast.Module | None] | None,
        importable: dict[str, bool] | None,
        kept: dict[tuple[str, str], Machine | None] | None,
    ) -> None:
        self.module = module
        #: whether its functions write the module's state (``_functions_write_state``)
        self._writes: bool | None = None
        self._questions = contextlib.ExitStack()
        #: each platform's machine and the module it imported (None: not found); None
        #: when an import did not finish
        self._imported: dict[str, tuple[Machine, ModuleObj | None]] | None = {}
        try:
            for platform in PLATFORMS:
                machine = machine_for(
                    self._questions, kept, loader, module, platform, trees, importable
                )
                found = machine.module(module)
                if machine.unfinished:
                    self._imported = None
                    break
                self._imported[platform] = (machine, found)
        except (OutOfBudget, RecursionError):
            self._imported = None
        except BaseException:
            self._questions.close()
            raise

    def close(self) -> None:
        """Undo the import (the machines kept for the package are as before)."""
        self._imported = None
        self._questions.close()

    def summary(
        self, qualname: str, release: tuple[int, ...] | None, *, result: bool = False
    ) -> FunctionSummary | None:
        """``function_summary`` of ``qualname`` in this module."""

        def named(machine: Machine, found: ModuleObj) -> tuple[Value, ClassObj | None] | None:
            return _lookup(found, qualname)

        return self._summary(named, release, result=result)

    def summary_at(self, line: int, release: tuple[int, ...] | None) -> FunctionSummary | None:
        """The summary of the function whose ``def`` is at ``line`` of this module, as
        its body is, whatever its decorators make of it (a registry's decorator may
        return something else): a method on an instance its class makes; a function
        defined in another function as the enclosing one's run (called as required)
        makes it, called as its own parameters require."""

        def defined(machine: Machine, found: ModuleObj) -> tuple[Value, ClassObj | None] | None:
            path = _defs_to(found.tree, line)
            if not path:
                return None
            target: FunctionObj | None = machine.made.get(id(path[0]))
            owner = target.owner if target is not None else None
            for depth, node in enumerate(path[1:]):
                if target is None:
                    return None
                outer = _Run(machine, target, owner if depth == 0 else None)
                outer.call({}, site=("<enclosing>", depth, 0, 0, 0))
                target = machine.made.get(id(node))
            if target is None:
                return None
            return target, owner if len(path) == 1 and isinstance(owner, ClassObj) else None

        return self._summary(defined, release, result=False)

    def _summary(
        self,
        find: Callable[[Machine, ModuleObj], tuple[Value, ClassObj | None] | None],
        release: tuple[int, ...] | None,
        *,
        result: bool,
    ) -> FunctionSummary | None:
        if self._imported is None:
            return None
        with contextlib.ExitStack() as questions:
            runs = self._runs(questions, find, result=result, after_others=False)
            summary = _summarised(runs, release, {}) if runs is not None else None
            if runs is None or summary is None:
                return None
            answer = _with_interpret(runs, release, summary)
            read = {name for run in runs.values() for name in read_by(run.machine)}
            absent = {name for run in runs.values() for name in _not_found(run.machine)}
            inert = not result and all(_inert(run.returned) for run in runs.values())
        if self._functions_write_state():
            # a caller may have called the module's other functions first: the answer
            # must hold in the state they leave too (a cache another function fills)
            with contextlib.ExitStack() as questions:
                again = self._runs(questions, find, result=result, after_others=True)
                later = _summarised(again, release, {}, with_chain=False) if again else None
                if (
                    again is None
                    or later is None
                    or later.lowers_only_for != summary.lowers_only_for
                ):
                    return None
                read |= {name for run in again.values() for name in read_by(run.machine)}
                absent |= {name for run in again.values() for name in _not_found(run.machine)}
        return dataclasses.replace(
            answer, read=frozenset(read), absent=frozenset(absent), result_inert=inert
        )

    def _runs(
        self,
        questions: contextlib.ExitStack,
        find: Callable[[Machine, ModuleObj], tuple[Value, ClassObj | None] | None],
        *,
        result: bool,
        after_others: bool,
    ) -> dict[str, _Run] | None:
        """The function found under each platform, called as required, in a question of
        its own (closed with ``questions``); ``after_others``: once every function of
        the module has run (``questions.run_functions``). None when it is not found
        or a run did not finish."""
        assert self._imported is not None
        runs: dict[str, _Run] = {}
        for platform, (machine, found) in self._imported.items():
            questions.enter_context(machine.question())
            try:
                if after_others and found is not None:
                    memoised = set(machine.memo)
                    run_functions(machine, found, next_serial())
                    machine.new_round(memoised)  # outcomes depend on the state
                looked_up = find(machine, found) if found is not None else None
                if looked_up is None:
                    return None
                target, owner = looked_up
                if owner is not None and _overridden(machine, owner):
                    owner = None  # the receiver's class is not known: unknown receiver
                run = _Run(machine, target, owner, result=result)
                run.flow = run.call({})
            except (OutOfBudget, RecursionError):
                return None
            if machine.unfinished:
                return None
            runs[platform] = run
        return runs

    def _functions_write_state(self) -> bool:
        """Whether calling the module's functions (each once, as ``run_functions`` does)
        writes what its import made or handed it: then what one function does may
        depend on which others ran before (asked once per module)."""
        if self._writes is None:
            self._writes = False
            for machine, found in (self._imported or {}).values():
                if found is None:
                    continue
                with machine.question():
                    _, shared = run_functions(machine, found, next_serial())
                    self._writes = shared or journal.written()
                if self._writes:
                    break
        return self._writes


def _not_found(machine: Machine) -> set[str]:
    """The modules the machine looked for and did not run: not found, or not parsed."""
    return {name for name, found in machine.modules.items() if found is None}


def _inert(returned: VSet) -> bool:
    """Whether calling any value of ``returned`` runs nothing and leaves the way live (the
    evaluator's call of such a value gives a value not known, and nothing else)."""
    return all(
        value is UNKNOWN
        or isinstance(value, (Array, Container, Params))
        or (isinstance(value, Const) and value.value is not None)
        for value in returned
    )


class _Run:
    """One platform's machine with the function found in it, called as required."""

    def __init__(
        self, machine: Machine, target: Value, owner: ClassObj | None, *, result: bool = False
    ) -> None:
        self.machine = machine
        self.target = target
        #: the class whose body defines ``target`` (a method's receiver is its instance)
        self.owner = owner
        #: what the call returns is called too
        self.result = result
        self.flow = Flow()
        #: the flow of the last call (a probe's)
        self.last = self.flow
        self.last_site: SiteKey = _SUMMARY_SITE
        #: what the first call returned
        self.returned: VSet = NOTHING
        self._probes = 0

    def call(self, given: dict[str, VSet], site: SiteKey | None = None) -> Flow:
        """The function called with what its parameters require, ``given`` bound by
        name too; recorded at a pseudo call site of its own (the first call's is the
        summary's, whose way to a kernel the notes give; ``site``: another)."""
        if site is None:
            site = _SUMMARY_SITE if self._probes == 0 else ("<probe>", self._probes, 0, 0, 0)
        self._probes += 1
        self.last_site = site
        machine, target = self.machine, self.target
        flow = Flow()
        machine.steps = 0
        machine.calling.append(site)
        try:
            made = self._call_method(flow, given)
            if made is None:
                made = _call_as_required(machine, vset(target), target, flow, given, receiver=False)
            if self.result and flow.live:
                _call_results(machine, made, flow)
            elif isinstance(target, ClassObj) and flow.live:
                # a class stands for its instances: what calling one runs
                method = _method(target, "__call__")
                if method is not None:
                    _call_as_required(machine, made, method, flow, {}, receiver=True)
        finally:
            machine.calling.pop()
        if machine.unfinished:
            raise OutOfBudget()
        if site == _SUMMARY_SITE:
            self.returned = made
        self.last = flow
        return flow

    def _call_method(self, flow: Flow, given: dict[str, VSet]) -> VSet | None:
        """A method called as its class's callers call it: a plain one on an instance
        made as a caller must make one, a class method on its class, a static method as
        its function; None for a function of a module."""
        machine, target, owner = self.machine, self.target, self.owner
        if owner is None:
            return None
        if isinstance(target, Descriptor) and target.kind == "staticmethod":
            function = only(target.func)
            if function is None:
                return None
            return _call_as_required(machine, target.func, function, flow, given, receiver=False)
        if isinstance(target, Descriptor) and target.kind == "classmethod":
            function = only(target.func)
            if not isinstance(function, FunctionObj):
                return None
            bound = vset(BoundMethod(function, owner))
            return _call_as_required(machine, bound, function, flow, given, receiver=True)
        if not isinstance(target, FunctionObj):
            return None
        made = _call_as_required(machine, vset(owner), owner, flow, {}, receiver=False)
        instances = frozenset(
            BoundMethod(target, i) for i in made if isinstance(i, InstanceObj) and i.cls is owner
        )
        if not flow.live or not instances:
            return None if flow.live else NOTHING
        return _call_as_required(machine, instances, target, flow, given, receiver=True)


def _summarised(
    runs: dict[str, _Run],
    release: tuple[int, ...] | None,
    given: dict[str, VSet],
    *,
    with_chain: bool = True,
) -> FunctionSummary | None:
    """The summary of the runs (their first calls when ``given`` is empty; else calls
    with ``given`` bound, made now); ``with_chain``: with the way to the first kernel
    (else none: the caller does not say it)."""
    reached: list[str] = []
    failing: list[str] = []
    kernels: list[Kernel] = []
    chain: tuple[Link, ...] | None = None
    flows: dict[str, Flow] = {}
    for platform, run in runs.items():
        try:
            flow = run.flow if not given else run.call(given)
        except (OutOfBudget, RecursionError):
            return None
        if not flow.live:
            continue
        reached.append(platform)
        flows[platform] = flow
        refusing = [k for k in by_place(flow.ran) if not lowers_on(k, platform, release)]
        if refusing:
            failing.append(platform)
            kernels.extend(k for k in refusing if k not in kernels)
            if chain is None and with_chain:
                site = run.last_site if given else _SUMMARY_SITE
                chain = chain_from(run.machine, site, kernels[0])
    if not kernels and reached and len(reached) < len(runs):
        # it raises before any kernel elsewhere (``NotImplementedError`` off TPU): the
        # kernels it runs where it returns, which those platforms refuse, say why
        others = [p for p in runs if p not in reached]
        for platform in reached:
            bound = [
                k
                for k in by_place(flows[platform].ran)
                if not any(lowers_on(k, other, release) for other in others)
            ]
            if bound:
                kernels = bound
                run = runs[platform]
                site = run.last_site if given else _SUMMARY_SITE
                chain = chain_from(run.machine, site, kernels[0]) if with_chain else ()
                break
    return FunctionSummary(tuple(reached), tuple(failing), tuple(kernels), chain or ())


def _with_interpret(
    runs: dict[str, _Run], release: tuple[int, ...] | None, summary: FunctionSummary
) -> FunctionSummary:
    """``summary`` with the parameter that switches interpret mode for the kernels it
    runs, when one does: given ``False``, kernels refuse (those that refuse in
    ``summary``, or that ran with interpret mode not known); given ``True``, those same
    kernels run in interpret mode and none refuses. The summary is then the run with it
    ``False``, as a caller passing interpret mode off sees it (for a parameter with a
    default ``False`` that is ``summary`` itself)."""
    first = next(iter(runs.values()))
    parameters = _parameters(first.target)
    if parameters is None:
        return summary
    undecided = [k for run in runs.values() for k in run.flow.ran if k.interpret is None]
    candidates = [*summary.kernels, *undecided]
    if not candidates:
        return summary
    probe = summary.failing[0] if summary.failing else None
    for name, position, _ in parameters:
        # given ``True`` first: a parameter that turns no candidate's interpret mode on
        # cannot be the one (most parameters), and needs no run with ``False``; where
        # the kernels refuse, one that leaves them refusing on one platform is not it
        if probe is not None and _still_refused(runs[probe], probe, release, name):
            continue
        on = _summarised(runs, release, {name: vset(TRUE)}, with_chain=False)
        if on is None or not on.reached or on.failing or on.lowers_only_for is not None:
            continue  # interpret mode on, it still does not run everywhere
        switched = [k for run in runs.values() for k in run.last.ran if k.interpret is True]
        if not any(same_kernel(k, c) for k in switched for c in candidates):
            continue
        off = _summarised(runs, release, {name: vset(FALSE)}, with_chain=not summary.kernels)
        if (
            off is None
            or off.lowers_only_for is None
            or not all(any(same_kernel(k, c) for c in candidates) for k in off.kernels)
            or not all(any(same_kernel(k, s) for s in switched) for k in off.kernels)
        ):
            continue
        chain = summary.chain if summary.kernels else off.chain
        return dataclasses.replace(off, chain=chain, interpret=(name, position))
    return summary


def _still_refused(run: _Run, platform: str, release: tuple[int, ...] | None, name: str) -> bool:
    """Whether ``run``'s function, given ``True`` for the parameter ``name``, still runs a
    kernel ``platform`` refuses (or does not return there): then that parameter does not
    make it lower everywhere. False when the run does not finish (the full question
    decides)."""
    try:
        flow = run.call({name: vset(TRUE)})
    except (OutOfBudget, RecursionError):
        return False
    return not flow.live or any(not lowers_on(k, platform, release) for k in by_place(flow.ran))


def _call_as_required(
    machine: Machine,
    callee: VSet,
    signature: Value,
    flow: Flow,
    given: dict[str, VSet],
    *,
    receiver: bool,
) -> VSet:
    """``callee`` called with what ``signature``'s parameters require (for a class, its
    ``__init__``'s; ``receiver``: the first parameter is bound already), and ``given``
    by name (a required positional one in its place)."""
    fields = _generated_init(signature)
    node = _signature_node(signature)
    names = [p.arg for p in (*node.args.posonlyargs, *node.args.args)] if node else []
    args, keywords, star, double_star = _required_arguments(signature)
    if fields is not None:
        names = [name for name, _ in fields]
    elif isinstance(signature, ClassObj) or receiver:
        names = names[1:]  # ``self``: the instance being made, or bound already
        args = args[1:]
    keywords = dict(keywords)
    for name, value in given.items():
        if name in names and names.index(name) < len(args):
            args[names.index(name)] = value
        else:
            keywords[name] = value
    return machine.calls.call(
        callee, args, keywords, flow, star_unknown=star, kw_unknown=double_star
    )


def _call_results(machine: Machine, made: VSet, flow: Flow) -> None:
    """Each value of ``made`` called with what its parameters require: an instance
    through its class's ``__call__``, a bound method past its receiver. The calls are
    the branches of one call (which value it is is not known): a kernel runs on the
    flow's every path only when each branch runs it."""
    branches: list[Flow] = []
    for value in made:
        branch = Flow(flow.live, flow.ran, flow.may_ran)
        if isinstance(value, InstanceObj):
            method = _method(value.cls, "__call__") if isinstance(value.cls, ClassObj) else None
            if method is None:
                continue
            _call_as_required(machine, vset(value), method, branch, {}, receiver=True)
        elif isinstance(value, BoundMethod):
            _call_as_required(machine, vset(value), value.function, branch, {}, receiver=True)
        else:
            _call_as_required(machine, vset(value), value, branch, {}, receiver=False)
        branches.append(branch)
    if not branches:
        return
    live = [b for b in branches if b.live]
    flow.live = bool(live)
    if live:
        flow.ran = frozenset.intersection(*(b.ran for b in live))
    flow.may_ran = flow.may_ran.union(*(b.ran | b.may_ran for b in branches))


def _method(cls: ClassObj, name: str) -> Value | None:
    """The one value ``name`` is in the first class of ``cls``'s MRO that defines it."""
    for klass in cls.mro:
        if isinstance(klass, ClassObj) and name in klass.attrs:
            return only(klass.attrs[name])
    return None


def _defs_to(tree: ast.Module, line: int) -> list[ast.FunctionDef | ast.AsyncFunctionDef] | None:
    """The ``def`` statements from the module down to the one at ``line``: the outermost
    is the module's or a class body's (at the top), each next one in the one before;
    None when there is no such ``def``, or a class inside a function is on the way."""

    def search(
        body: list[ast.stmt], path: list[ast.FunctionDef | ast.AsyncFunctionDef]
    ) -> list[ast.FunctionDef | ast.AsyncFunctionDef] | None:
        for stmt in body:
            if not stmt.lineno <= line <= (stmt.end_lineno or stmt.lineno):
                continue
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if stmt.lineno == line:
                    return [*path, stmt]
                return search(_nested_statements(stmt), [*path, stmt])
            if isinstance(stmt, ast.ClassDef):
                # a class made by a function's run is not followed
                return None if path else search(stmt.body, path)
            return search(_nested_statements(stmt), path)
        return None

    return search(tree.body, [])


def _nested_statements(stmt: ast.stmt) -> list[ast.stmt]:
    """The statements directly inside ``stmt`` (a body, its branches, its handlers)."""
    out: list[ast.stmt] = []
    for field in ("body", "orelse", "finalbody", "handlers", "cases"):
        for item in getattr(stmt, field, None) or []:
            if isinstance(item, ast.stmt):
                out.append(item)
            else:  # an ``except`` handler, a ``match`` case: its body
                out.extend(getattr(item, "body", []))
    return out


def _lookup(module: ModuleObj, qualname: str) -> tuple[Value, ClassObj | None] | None:
    """The one value ``qualname`` names in ``module`` after its body ran, and the class
    whose namespace holds it (None for a module's)."""
    value: Value | None = module
    owner: ClassObj | None = None
    for part in qualname.split("."):
        if not isinstance(value, (ModuleObj, ClassObj)):
            return None
        owner = value if isinstance(value, ClassObj) else None
        value = only(value.attrs.get(part, ANYTHING))
        if value is None:
            return None
    return (value, owner) if value is not None else None


def _overridden(machine: Machine, cls: ClassObj) -> bool:
    """Whether a class of a module the machine ran derives from ``cls`` and overrides a
    name of it (its methods may then run on instances whose overrides the summary does
    not know)."""
    names = {name for klass in cls.mro if isinstance(klass, ClassObj) for name in klass.attrs}
    names -= {"__module__", "__qualname__", "__name__", "__doc__", "__annotations__"}
    return any(
        isinstance(value, ClassObj)
        and value is not cls
        and cls in value.mro
        and any(
            isinstance(klass, ClassObj) and names & klass.attrs.keys()
            for klass in value.mro[: value.mro.index(cls)]
        )
        for module in machine.modules.values()
        if module is not None
        for values in module.attrs.values()
        for value in values
    )


def _signature_node(
    target: Value,
) -> ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda | None:
    """The definition whose parameters a call of ``target`` binds: the function it is
    or wraps, a class's ``__init__``; None for another callable."""
    if isinstance(target, ClassObj):
        init = _method(target, "__init__")
        return _signature_node(init) if init is not None else None
    node = getattr(target, "node", None)
    if node is None and isinstance(target, (Partial, Transformed, Derivative)):
        # what it wraps binds the arguments (``custom_vjp(jit(f))`` is called as ``f``)
        one = only(target.func)
        return _signature_node(one) if one is not None else None
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return None
    return node


def _parameters(target: Value) -> list[tuple[str, int, bool]] | None:
    """(name, position a caller passes it at or -1, whether it is required) of each
    parameter of ``target`` a caller passes (not a method's or a constructor's first)."""
    fields = _generated_init(target)
    if fields is not None:
        return [(name, i, default is None) for i, (name, default) in enumerate(fields)]
    node = _signature_node(target)
    if node is None:
        return None
    spec = node.args
    positional = [*spec.posonlyargs, *spec.args]
    required = len(positional) - len(spec.defaults)
    skip = 1 if isinstance(target, ClassObj) or _is_method(target) else 0
    bound: set[str] = set()
    if isinstance(target, Partial):
        # the partial passes its leading arguments and its keywords: a caller passes the
        # rest, by position until the first parameter it binds by name
        skip = len(target.args)
        bound = {name for name, _ in target.keywords}
    out: list[tuple[str, int, bool]] = []
    by_name_only = False
    for i, parameter in enumerate(positional):
        if i < skip or (i < len(spec.posonlyargs) and i >= required):
            continue  # the receiver; a positional-only default cannot be given by name
        if parameter.arg in bound:
            by_name_only = True
            continue
        out.append((parameter.arg, -1 if by_name_only else i - skip, i < required))
    out += [
        (p.arg, -1, default is None)
        for p, default in zip(spec.kwonlyargs, spec.kw_defaults, strict=True)
        if p.arg not in bound
    ]
    return out


def _generated_init(target: Value) -> list[tuple[str, VSet | None]] | None:
    """The fields of a dataclass or ``NamedTuple`` whose ``__init__`` the class
    decorator or base writes (its parameters, in order); None for any other callable."""
    if (
        isinstance(target, ClassObj)
        and target.fields is not None
        and _method(target, "__init__") is None
    ):
        return target.fields
    return None


def _is_method(target: Value) -> bool:
    """Whether ``target`` is a function defined in a class body (its first parameter is
    the instance a caller calls it on)."""
    return isinstance(target, FunctionObj) and target.owner is not None


def _required_arguments(
    target: Value,
) -> tuple[list[VSet], dict[str, VSet], bool, bool]:
    """Unknown values for the parameters without a default of the function ``target``
    is or wraps (a class: its ``__init__``), and whether its ``*args`` and ``**kwargs``
    take unknown ones too (a wrapper's, passed on); nothing for another callable (called
    without arguments)."""
    fields = _generated_init(target)
    if fields is not None:
        return [ANYTHING for _, default in fields if default is None], {}, False, False
    node = _signature_node(target)
    if node is None:
        return [], {}, False, False
    spec = node.args
    positional = [*spec.posonlyargs, *spec.args]
    required = positional[: len(positional) - len(spec.defaults)]
    keywords = {
        p.arg: ANYTHING
        for p, default in zip(spec.kwonlyargs, spec.kw_defaults, strict=True)
        if default is None
    }
    if isinstance(target, Partial):
        # what the partial binds is not the caller's: its leading arguments, and its
        # keywords (a required parameter after one of them is passed by name)
        bound = {name for name, _ in target.keywords}
        required = required[len(target.args) :]
        cut = next((i for i, p in enumerate(required) if p.arg in bound), len(required))
        keywords.update((p.arg, ANYTHING) for p in required[cut:] if p.arg not in bound)
        keywords = {k: v for k, v in keywords.items() if k not in bound}
        required = required[:cut]
    args: list[VSet] = [ANYTHING] * len(required)
    return args, keywords, spec.vararg is not None, spec.kwarg is not None
