"""The evaluator's state: the modules it has run, the platform it assumes, the calls it
has seen, and the budget that bounds one question.

``Machine`` runs a program abstractly for one **assumed lowering platform** (``tpu``,
``cuda`` or ``rocm``): every source of the platform (``jax.default_backend()``, a
device's ``platform``) is then a constant, so a guard is a plain condition, a guard
helper is a plain function, and a ``match`` on the backend is a plain ``match``. What a
path runs is recorded per call site (``sites``): whether the call was reached under this
platform, and the kernels calling it runs on every path.

The machine owns the three parts that evaluate (``expressions.Expressions``,
``calls.Calls``, ``statements.Statements``); each reaches the others through it, so no
module of the evaluator imports another's evaluation code.

What it does not do: decide whether a kernel may lower for a platform (``verdict``), or
find modules' sources (a ``Loader``).
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from typing import Final, Protocol

from typed_pallas_mypy.inference import jax_api
from typed_pallas_mypy.inference.evaluator import journal, stdlib_models
from typed_pallas_mypy.inference.evaluator.domain import (
    Frame,
    FunctionObj,
    InstanceObj,
    Kernel,
    ModuleObj,
    Outcome,
    Proof,
    Value,
    VSet,
    both_ran,
    next_serial,
)
from typed_pallas_mypy.inference.parsing import parse_module

#: Nested calls followed before a call's result is unknown.
MAX_CALL_DEPTH: Final = 24
#: Evaluation steps one question may take before the rest is unknown.
BUDGET: Final = 100_000


class Loader(Protocol):
    """Finds a module's source: (path, is_package, source), or None for a module the
    evaluator does not read (jax, the standard library, anything not found)."""

    def __call__(self, module: str) -> tuple[str, bool, str] | None: ...


def files_loader(files: Mapping[str, str]) -> Loader:
    """A ``Loader`` over sources in memory, by path (``pkg/mod.py``,
    ``pkg/__init__.py``); None for any other module (read as a table, or missing)."""

    def load(module: str) -> tuple[str, bool, str] | None:
        path = module.replace(".", "/")
        if f"{path}.py" in files:
            return f"{path}.py", False, files[f"{path}.py"]
        if f"{path}/__init__.py" in files:
            return f"{path}/__init__.py", True, files[f"{path}/__init__.py"]
        return None

    return load


def _tables_not_read(loader: Loader) -> Loader:
    """``loader``, finding nothing in the packages read as tables
    (``jax_api.TABLE_PACKAGES``: ``attrs``, ``jaxtyping``...), installed or not, and the
    standard library's models by their own names (``stdlib_models``)."""

    def load(module: str) -> tuple[str, bool, str] | None:
        if stdlib_models.is_model(module):
            return stdlib_models.model_source(module)
        if module.split(".", 1)[0] in jax_api.TABLE_PACKAGES:
            return None
        return loader(module)

    return load


#: a call site: (module, line, column, end line, end column)
SiteKey = tuple[str, int, int, int, int]


def site_key(module: str, node: ast.Call) -> SiteKey:
    return (
        module,
        node.lineno,
        node.col_offset,
        node.end_lineno or node.lineno,
        node.end_col_offset or 0,
    )


class OutOfBudget(Exception):
    """One question took more steps than ``BUDGET``."""


@dataclass
class SiteRecord:
    """What one call site did under the assumed platform: reached or not, and the
    kernels its call ran on every path, per frame it was reached in (``frames``: the
    reaches in one frame are one path's, joined; reaches in different frames are
    different calls of its function, each must hold)."""

    reached: bool = False
    frames: dict[int, frozenset[Kernel]] = field(default_factory=dict)
    may_ran: frozenset[Kernel] = frozenset()
    #: the functions its call entered, itself or through what it called for it (a
    #: class's ``__init__``, the function ``lax.cond`` runs): the way to its kernels
    entered: frozenset[FunctionObj] = frozenset()
    #: the instances its call called (their class's ``__call__`` ran): where they were
    #: made starts the way to their kernels
    called: frozenset[InstanceObj] = frozenset()
    #: the custom-derivative functions whose rules its call ran in their place (under
    #: differentiation): the way to a kernel of a rule starts at the function
    derived: frozenset[Value] = frozenset()

    @property
    def ran(self) -> frozenset[Kernel]:
        """The kernels every reach ran."""
        found: frozenset[Kernel] | None = None
        for kernels in self.frames.values():
            found = kernels if found is None else both_ran(found, kernels)
        return found or frozenset()


class Machine:
    """One abstract run of a program under one assumed lowering platform."""

    def __init__(
        self,
        loader: Loader,
        platform: str,
        trees: dict[tuple[str, str], ast.Module | None] | None = None,
        importable: dict[str, bool] | None = None,
    ) -> None:
        from typed_pallas_mypy.inference.evaluator import (
            calls,
            control,
            expressions,
            iteration,
            statements,
        )

        self.loader = _tables_not_read(loader)
        #: parsed sources by (path, source), shared by the machines of one question and
        #: across questions (parsing is the same whatever ran before)
        self.trees = trees if trees is not None else {}
        #: whether a module the evaluator does not read exists, by name (shared like
        #: ``trees``: asked for every import of jax and the standard library)
        self.importable = importable if importable is not None else {}
        #: the lowering platform assumed: "tpu", "cuda" or "rocm"
        self.platform = platform
        self.modules: dict[str, ModuleObj | None] = {}
        #: modules found whose source does not parse (importing them raises SyntaxError)
        self.broken: set[str] = set()
        self.sites: dict[SiteKey, SiteRecord] = {}
        #: the call sites being evaluated, innermost last (``enter``)
        self.calling: list[SiteKey] = []
        self._by_line: (
            dict[tuple[str, int], list[tuple[tuple[int, int, int], SiteRecord]]] | None
        ) = None
        #: the first function each ``def`` statement made, by the statement's ``id``
        #: (``summaries``: a question about the function defined at a line)
        self.made: dict[int, FunctionObj] = {}
        #: what each kernel body proves (``evidence.body_proofs``), by the body
        self.proofs: dict[FunctionObj, tuple[Proof, ...]] = {}
        self.steps = 0
        #: the steps its kept imports took (``question``)
        self.kept_steps = 0
        self.depth = 0
        #: calls being evaluated (a recursive call's result is unknown)
        self.active: list[FunctionObj] = []
        #: what calling a function with some arguments did (``calls.Calls.run_function``)
        self.memo: dict[object, Outcome] = {}
        #: set while a question runs out of budget: results are not kept
        self.unfinished = False
        #: how many differentiating transformations deep the run is (``jax.grad``...):
        #: there a ``custom_vjp``/``custom_jvp`` function runs its rules, not its body
        self.differentiating = 0
        #: how many reverse-mode differentiations deep (``jax.grad``): a ``custom_vjp``'s
        #: ``bwd`` rule runs there
        self.transposing = 0
        #: how many deferred differentiations deep (``jax.vjp``, ``jax.linearize``): a
        #: ``jvp`` rule's tangent work goes to the callable they return, run later
        self.deferring = 0
        #: the rules registered on custom-derivative functions: function -> method
        #: (``defvjp``...) -> (positional arguments, keyword arguments)
        self.rules: dict[Value, dict[str, tuple[list[VSet], dict[str, VSet]]]] = {}
        #: where each was registered: (function, method) -> (module, line) of the call
        self.rule_sites: dict[tuple[Value, str], tuple[str, int]] = {}
        #: how many contexts that interpret every kernel deep
        #: (``pltpu.force_tpu_interpret_mode()``): a kernel run there lowers anywhere
        self.interpreting = 0
        #: how many ``try`` bodies deep whose handlers may catch a lowering refusal: a
        #: call there runs its kernels only may (run eagerly, its refusal is raised
        #: there and caught: ``control.ControlFlow._Try``)
        self.catching = 0
        #: how many batching transformations deep (``jax.vmap``): there a
        #: ``custom_vmap`` function runs its batching rule, not its body
        self.batching = 0
        self.expressions = expressions.Expressions(self)
        self.calls = calls.Calls(self)
        self.iteration = iteration.Iteration(self)
        self.statements = statements.Statements(self)
        self.control = control.ControlFlow(self)
        #: called for each call site evaluated (the probe and the plugin's questions)
        self.on_call: Callable[[ModuleObj, ast.Call], bool] | None = None

    def mode(self) -> tuple[bool, ...]:
        """What changes what a call does besides its arguments: under differentiation,
        transposition, a deferred derivative, batching, a context that interprets, a
        ``try`` that catches a lowering refusal (a key of ``memo``)."""
        return (
            self.differentiating > 0,
            self.transposing > 0,
            self.deferring > 0,
            self.batching > 0,
            self.interpreting > 0,
            self.catching > 0,
        )

    @property
    def backend_name(self) -> str:
        """What ``jax.default_backend()`` returns on the assumed platform."""
        return "tpu" if self.platform == "tpu" else "gpu"

    @contextlib.contextmanager
    def question(self) -> Iterator[None]:
        """Run one question on this machine, kept between questions (``questions``): what
        the question changes is undone when the block ends (the heap through
        ``journal``; the modules it imported, the call sites it reached, what it
        memoised and its counters here), so that the next question finds the machine as
        its imports left it."""
        self.steps = self.kept_steps  # as a fresh run's count after the same imports
        modules, broken, made = dict(self.modules), set(self.broken), dict(self.made)
        memoised = set(self.memo)
        rules = {owner: dict(methods) for owner, methods in self.rules.items()}
        rule_sites = dict(self.rule_sites)
        sites = {
            k: (r.reached, dict(r.frames), r.may_ran, r.entered, r.called, r.derived)
            for k, r in self.sites.items()
        }
        try:
            with journal.recording(next_serial()) as undo:
                try:
                    yield
                finally:
                    undo.restore()
        finally:
            self.modules.clear()
            self.modules.update(modules)
            self.broken = broken
            self.made = made
            self.rules = rules
            self.rule_sites = rule_sites
            for key in set(self.memo) - memoised:
                del self.memo[key]
            self.sites = {k: SiteRecord(*v) for k, v in sites.items()}
            self._by_line = None
            self.steps = self.depth = self.differentiating = self.batching = 0
            self.transposing = self.deferring = self.interpreting = self.catching = 0
            self.active.clear()
            self.calling.clear()
            self.unfinished = False

    def exists(self, name: str) -> bool:
        """Whether the module ``name``, which the evaluator does not read, exists."""
        if name not in self.importable:
            from typed_pallas_mypy.inference.evaluator.library import importable

            self.importable[name] = importable(name)
        return self.importable[name]

    def tick(self, n: int = 1) -> None:
        self.steps += n
        if self.steps > BUDGET:
            raise OutOfBudget()

    def module(self, name: str) -> ModuleObj | None:
        """The module ``name`` run (its body run once, on first import), or None when the
        evaluator does not read it. As Python does, its parent package is imported first
        (whose body may import it), then the module itself."""
        if name in self.modules:
            return self.modules[name]
        parent: ModuleObj | None = None
        if "." in name:
            parent = self.module(name.rsplit(".", 1)[0])
            if name in self.modules:  # the parent's body imported it
                return self.modules[name]
        found = self.loader(name)
        if found is None:
            self.modules[name] = None
            return None
        path, is_package, source = found
        key = (path, source)
        if key not in self.trees:
            try:
                self.trees[key] = parse_module(source, path)
            except (SyntaxError, ValueError):
                self.trees[key] = None
        tree = self.trees[key]
        if tree is None:
            self.modules[name] = None
            self.broken.add(name)
            return None
        module = ModuleObj(name, path, is_package, tree)
        self.modules[name] = module
        from typed_pallas_mypy.inference.evaluator.domain import Const, Flow, vset

        module.attrs["__name__"] = vset(Const(name))
        if parent is not None:
            journal.touch(parent)
            parent.attrs[name.rsplit(".", 1)[1]] = vset(module)
        frame = Frame(module.attrs, module, None, qualname="")
        flow = Flow()
        try:
            self.statements.run_body(tree.body, frame, flow, returns=None)
        finally:
            module.done = True
        return module

    def enter(self, function: FunctionObj) -> None:
        """``function`` is called for the call site being evaluated (``calling``)."""
        if self.calling:
            site = self.sites.setdefault(self.calling[-1], SiteRecord())
            if function not in site.entered:
                site.entered = site.entered | {function}

    def called_instance(self, instance: InstanceObj) -> None:
        """``instance`` is called for the call site being evaluated (``calling``)."""
        if self.calling:
            site = self.sites.setdefault(self.calling[-1], SiteRecord())
            if instance not in site.called:
                site.called = site.called | {instance}

    def ran_rules_of(self, function: Value) -> None:
        """The call site being evaluated ran ``function``'s derivative rules in its place."""
        if self.calling:
            site = self.sites.setdefault(self.calling[-1], SiteRecord())
            if function not in site.derived:
                site.derived = site.derived | {function}

    def made_here(self) -> tuple[str, int, FunctionObj] | None:
        """Where an object made now is made: the call site being evaluated and the
        function running it, or None (at a module's top level)."""
        if not self.calling or not self.active:
            return None
        module, line = self.calling[-1][0], self.calling[-1][1]
        return module, line, self.active[-1]

    def new_round(self, memoised: set[object]) -> None:
        """Start a new round of calls from the heap as the last one left it: forget what
        the call sites recorded, and what was memoised since ``memoised`` (the calls'
        outcomes in the state before)."""
        self.sites = {}
        self._by_line = None
        for key in set(self.memo) - memoised:
            del self.memo[key]

    def sites_by_line(self) -> dict[tuple[str, int], list[tuple[tuple[int, int, int], SiteRecord]]]:
        """The call sites by (module, line): ((column, -end line, -end column), record)
        of each, so the smallest key is the outermost call (computed once: ask after
        the runs)."""
        if self._by_line is None:
            self._by_line = {}
            for (module, line, column, end_line, end_column), record in self.sites.items():
                self._by_line.setdefault((module, line), []).append(
                    ((column, -end_line, -end_column), record)
                )
        return self._by_line

    def record(
        self, frame: Frame, node: ast.Call, ran: frozenset[Kernel], may_ran: frozenset[Kernel]
    ) -> None:
        """One reach of the call ``node`` in ``frame``, which ran ``ran`` on every path."""
        if self.catching:
            ran, may_ran = frozenset(), may_ran | ran  # a refusal there is caught
        site = self.sites.setdefault(site_key(frame.module.name, node), SiteRecord())
        site.reached = True
        site.frames[frame.serial] = site.frames.get(frame.serial, frozenset()) | ran
        site.may_ran = site.may_ran | may_ran
