"""The question the plugin asks the evaluator: which calls of a module JAX refuses.

``module_findings`` runs the module (its body, then each of its functions and methods
called with unknown arguments) under each lowering platform, and gives the verdict of
every call site of the module that is a finding (``verdict.CallVerdict.finding``), with
the modules the runs read (the plugin's dependencies). A function whose run did not
finish under some platform (its budget, a recursion) gives no finding inside it: a site
one run did not reach would look guarded.

What it does not do: word the findings (the plugin does), or find sources (a ``Loader``).
"""

from __future__ import annotations

import ast
import contextlib
import re
from dataclasses import dataclass
from typing import Final

from typed_pallas_mypy.inference.collector import collector_paused
from typed_pallas_mypy.inference.evaluator import journal, stdlib_models
from typed_pallas_mypy.inference.evaluator.dispatch import Dispatcher
from typed_pallas_mypy.inference.evaluator.domain import (
    ANYTHING,
    ClassObj,
    Container,
    Descriptor,
    Flow,
    FunctionObj,
    ModuleObj,
    Transformed,
    VSet,
    next_serial,
)
from typed_pallas_mypy.inference.evaluator.machine import Loader, Machine, OutOfBudget
from typed_pallas_mypy.inference.evaluator.verdict import PLATFORMS, CallVerdict, call_verdict


@dataclass(frozen=True)
class SiteFinding:
    """A call of the module that JAX refuses wherever its guards let it run."""

    line: int
    column: int
    verdict: CallVerdict


#: What a module's source must mention for its calls to be asked about: a source of the
#: platform (``jax.default_backend()``, a device's ``platform`` or ``device_kind``,
#: ``jax.devices()``, ``pltpu.is_tpu_device()``, ``lax.platform_dependent``). A guard the
#: module reads only through a helper of another module is left to the plugin's rules;
#: asking about every module costs a cold run of a large package more than twice as much.
_RELEVANT: Final = re.compile(
    r"default_backend|\.platform\b|device_kind|devices\(|is_tpu_device|platform_dependent"
)


#: How many top-level packages keep their machines (the least recently asked go first):
#: a project of many scripts would keep one per script otherwise.
_KEPT_PACKAGES: Final = 8


def module_findings(
    loader: Loader,
    module: str,
    release: tuple[int, ...] | None,
    trees: dict[tuple[str, str], ast.Module | None] | None = None,
    importable: dict[str, bool] | None = None,
    kept: dict[tuple[str, str], Machine | None] | None = None,
) -> tuple[list[SiteFinding], frozenset[str]]:
    """The findings among ``module``'s calls, and the modules read to find them
    (``trees``: parsed sources, ``importable``: which modules not read exist,
    ``kept``: machines that ran a top-level package's imports, by (package, platform);
    each to share between questions, the same answers as without them)."""
    found_source = loader(module)
    if found_source is None or not _RELEVANT.search(found_source[2]):
        return [], frozenset()
    with collector_paused(freeze=False):  # a question's heap is garbage after it
        return _findings(loader, module, release, trees, importable, kept)


def _findings(
    loader: Loader,
    module: str,
    release: tuple[int, ...] | None,
    trees: dict[tuple[str, str], ast.Module | None] | None,
    importable: dict[str, bool] | None,
    kept: dict[tuple[str, str], Machine | None] | None,
) -> tuple[list[SiteFinding], frozenset[str]]:
    machines: dict[str, Machine | None] = {}
    unfinished: list[tuple[int, int]] = []  # line spans of functions whose run did not finish
    read: set[str] = set()
    with contextlib.ExitStack() as questions:
        modules: dict[str, ModuleObj] = {}
        memoised: dict[str, set[object]] = {}
        for platform in PLATFORMS:
            machine = machine_for(questions, kept, loader, module, platform, trees, importable)
            try:
                found = machine.module(module)
            except (OutOfBudget, RecursionError):
                return [], frozenset(read_by(machine))
            machines[platform] = machine
            read |= read_by(machine)
            if found is None:
                return [], frozenset(read)
            modules[platform] = found
            memoised[platform] = set(machine.memo)
        tree = next(iter(modules.values())).tree
        findings: list[SiteFinding] | None = None
        rounds = 2 if _writes_module_state(tree) else 1
        made_before = next_serial()  # what exists now is the modules' state
        done = 0
        while done < rounds:
            done += 1
            for name, running in machines.items():
                assert running is not None
                if findings is not None:
                    running.new_round(memoised[name])
                stopped, shared = run_functions(running, modules[name], made_before)
                if shared:
                    rounds = 2  # a caller may have filled it before the next call
                for node in stopped:
                    unfinished.append((node.lineno, node.end_lineno or node.lineno))
                read |= read_by(running)
            found_now = _verdicts(machines, module, release, tree, unfinished)
            if findings is None:
                findings = found_now
            else:
                # a caller may call the module's functions in any order: a finding in a
                # function must hold once every one of them has run too (another may set
                # what this one reads); the module's own body ran once, at import
                again = {(f.line, f.column) for f in found_now}
                findings = [
                    f
                    for f in findings
                    if (f.line, f.column) in again or not _in_function(tree, f.line)
                ]
        return findings or [], frozenset(read)


def run_functions(
    machine: Machine, module: ModuleObj, made_before: int
) -> tuple[list[ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda], bool]:
    """Call each function of ``module`` (and each method of its classes) once, in the
    order they are defined, as a caller that says nothing of its arguments would: what
    one writes into the module's state the next finds. Returns the definitions whose
    run did not finish, and whether one handed a container that existed before
    ``made_before`` (the modules' state) to its caller, who may fill it."""
    stopped: list[ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda] = []
    shared = False
    for function in _functions_of(module):
        machine.steps = 0
        try:
            returned = machine.calls.call(
                frozenset({function}), [], {}, Flow(), star_unknown=True, kw_unknown=True
            )
            shared = _handed_out(returned, made_before) or shared
        except (OutOfBudget, RecursionError):
            stopped.append(function.node)
    return stopped, shared


def machine_for(
    questions: contextlib.ExitStack,
    kept: dict[tuple[str, str], Machine | None] | None,
    loader: Loader,
    module: str,
    platform: str,
    trees: dict[tuple[str, str], ast.Module | None] | None,
    importable: dict[str, bool] | None,
) -> Machine:
    """The machine a question about ``module`` under ``platform`` runs on: the one kept
    for its package (``kept_machine``), its question's writes undone when ``questions``
    closes; else a fresh one."""
    machine = kept_machine(kept, loader, module, platform, trees, importable)
    if machine is not None:
        questions.enter_context(machine.question())
        return machine
    return Machine(loader, platform, trees, importable)


def kept_machine(
    kept: dict[tuple[str, str], Machine | None] | None,
    loader: Loader,
    module: str,
    platform: str,
    trees: dict[tuple[str, str], ast.Module | None] | None,
    importable: dict[str, bool] | None,
) -> Machine | None:
    """The machine kept for ``module``'s top-level package under ``platform``, as its
    import left it: a fresh run of ``module`` imports that package first (parents before
    their modules), then the rest of the way, as the question then does on the kept
    machine. None without kept machines, or when that import did not finish (a fresh
    machine runs the question, and stops where that import stops)."""
    if kept is None:
        return None
    top = module.split(".")[0]
    key = (top, platform)
    if key in kept:
        kept[key] = kept.pop(key)  # the most recently asked last
    else:
        tops = list(dict.fromkeys(name for name, _ in kept if name != top))
        for old in tops[: max(0, len(tops) - _KEPT_PACKAGES + 1)]:
            for other in PLATFORMS:
                kept.pop((old, other), None)
        made = Machine(loader, platform, trees, importable)
        try:
            made.module(top)
        except (OutOfBudget, RecursionError):
            kept[key] = None
        else:
            made.kept_steps = made.steps
            kept[key] = made
    return kept[key]


def _verdicts(
    machines: dict[str, Machine | None],
    module: str,
    release: tuple[int, ...] | None,
    tree: ast.Module,
    unfinished: list[tuple[int, int]],
) -> list[SiteFinding]:
    """The findings among the call sites of ``module`` the runs reached."""
    lines = sorted(
        {
            (line, column)
            for machine in machines.values()
            if machine is not None
            for (name, line, column, _, _) in machine.sites
            if name == module
        }
    )
    spans = [
        (node.lineno, node.end_lineno or node.lineno)
        for node in ast.walk(tree)
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    ]
    findings: list[SiteFinding] = []
    seen: set[int] = set()
    for line, column in lines:
        if line in seen or any(start <= line <= end for start, end in unfinished):
            continue
        verdict = call_verdict(machines, module, line, release)
        if (
            verdict is not None
            and verdict.finding
            and not _made_beside(verdict, module, line, spans)
        ):
            seen.add(line)
            findings.append(SiteFinding(line, column, verdict))
    return findings


def _made_beside(
    verdict: CallVerdict, module: str, line: int, spans: list[tuple[int, int]]
) -> bool:
    """Every refusing kernel is made by an entry call in the function of the site itself
    (``pl.pallas_call(..., compiler_params=...)(x)`` under a guard): the plugin's checks
    of that entry call report it, at its params."""
    around = [s for s in spans if s[0] <= line <= s[1]]
    if not around:
        return False
    start, end = min(around, key=lambda s: s[1] - s[0])
    return all(k.module == module and start <= k.line <= end for k in verdict.kernels)


def read_by(machine: Machine) -> set[str]:
    """The modules the machine ran from their sources (not the standard library's
    models, which are the evaluator's own)."""
    return {
        name
        for name, found in machine.modules.items()
        if found is not None and not stdlib_models.is_model(name)
    }


def _functions_of(module: ModuleObj) -> list[FunctionObj]:
    """The module's functions and the methods of its classes (nested classes included),
    in the order they are defined."""
    out: list[FunctionObj] = []
    seen: set[int] = set()

    def visit_class(cls: ClassObj) -> None:
        for values in list(cls.attrs.values()):
            for value in values:
                add(value)

    def add(value: object) -> None:
        if id(value) in seen:
            return
        if (
            isinstance(value, FunctionObj)
            and value.module is module
            and not isinstance(value.node, ast.Lambda)
        ):
            seen.add(id(value))
            out.append(value)
        elif isinstance(value, ClassObj) and value.module is module:
            seen.add(id(value))
            visit_class(value)
        elif isinstance(value, (Transformed, Descriptor)):
            for inner in value.func:  # ``@jax.jit``, ``@staticmethod``: the function itself
                add(inner)
        elif isinstance(value, Dispatcher):  # ``@functools.singledispatch``
            for inner in value.base:
                add(inner)
            for _, registered in value.registrations():
                for inner in registered:
                    add(inner)

    for values in list(module.attrs.values()):
        for value in values:
            add(value)
    out.sort(key=lambda f: f.node.lineno)
    return out


def _writes_module_state(tree: ast.Module) -> bool:
    """Whether a function of the module may change what a module holds: a ``global``
    statement, or a store into a subscript or an attribute (of which object is the
    evaluator's to know); the rounds of ``_findings`` are then two."""
    for node in ast.walk(tree):
        if isinstance(node, ast.Global):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
            for inner in ast.walk(node):
                if isinstance(inner, (ast.Subscript, ast.Attribute)) and isinstance(
                    inner.ctx, ast.Store
                ):
                    return True
    return False


def _in_function(tree: ast.Module, line: int) -> bool:
    """Whether ``line`` is in a function's body (run when called, not once at import)."""
    return any(
        isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
        and node.lineno <= line <= (node.end_lineno or node.lineno)
        for node in ast.walk(tree)
    )


def _handed_out(returned: VSet, made_before: int) -> bool:
    """The containers a function returns to a caller the question does not know: that
    caller may put anything in them (a module's cache handed out by a getter). Whether
    one of them was made before ``made_before`` (the modules' state, which the
    functions share)."""
    shared = False
    for value in returned:
        if isinstance(value, Container) and value.kind in ("dict", "list", "set"):
            journal.touch(value)
            value.exact = False
            value.values_known = False
            value.loose = ANYTHING
            shared = shared or value.serial < made_before
    return shared
