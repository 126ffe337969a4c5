"""The inference: what a function of the project or of an installed library lowers for.

One engine for every module. mypy keeps no function bodies of installed packages (most
kernel libraries ship no ``py.typed``), and the same rule written twice drifts, so the
plugin infers platforms from source, with Python's ``ast``, the same way for the
project's own modules and for installed ones: it never imports what it reads. A function
is read as the program JAX traces when it runs (``program``): the kernels it runs on each
path, the functions, methods, class instances and returned closures it calls, JAX's
control flow (every ``cond``/``switch`` branch, every loop body) and its transformations,
``platform_dependent`` per platform, ``interpret=`` followed to where it is decided.
docs/inference-model.md describes the model and its table of forms.

* ``Inference(search_paths, cache_dir, project)``: the engine over site-packages-like
  roots and the project's modules (``combine.ModuleSource``);
  ``requirement(fullname)``, ``wrapper(fullname)``, ``definition(fullname)`` (its body
  evidence, returned params, platform table, keeping decorator, place), ``modules_of(fullname)``,
  ``modules_read()``, ``looked_at_since(count)`` (the files outside the project its
  answers depend on, present or absent), ``module_map(prefix)``, ``forget()``; for a
  call of a project module, by its position: ``call_requirement`` (what it runs),
  ``argument_evidence`` (what its mesh, scratch and grid spec arguments prove) and
  ``kernel_evidence`` (its kernel body): the one reading of them, for the project's
  calls and the libraries' alike; ``interpret_kept_off`` (whether a parameter an entry
  call passes as ``interpret=`` is kept off by its module: ``interpret_uses``);
* ``Requirement`` / ``WrapperFacts`` / ``Definition``: what it answers.

Unknown means silent: a name it cannot find or read, a file that does not parse, a
function that reads the platform all give ``None``. No exception leaves the API (set
``TYPED_PALLAS_MYPY_DEBUG=1`` to let them through).

One module's source becomes its local facts in ``reader`` (on ``scopes``: names, scopes,
positions; ``callables``: what a callee names), which reads conditions, guard helpers,
predicates and devices with ``conditions``, and what a callee expression holds (containers,
instances, what a class keeps) with ``values``; what JAX's callables do with the functions
they are given is ``jax_api``'s table. Local facts of each module are cached on disk per top-level package
(``store``), keyed by the file's path, size and mtime and by the reader's version and
tables; requirements across modules are computed lazily, in memory (``combine``). A project
module read again in the same process (mypy's daemon, after an edit) takes from its
previous reading every function summary whose reuse key is unchanged (``reuse``): what
the function's top-level statement, the module's other statements and the definitions
it reaches say, at the same lines.

What it does not do: import mypy or jax, import the modules it reads, or decide
anything about where the platform is decided (the plugin does, with these answers).
"""

from __future__ import annotations

import ast
import contextlib
import dataclasses
import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TypeVar

from typed_pallas_mypy.cache_keys import SUMMARIES_ENV, summaries_answer
from typed_pallas_mypy.inference import model
from typed_pallas_mypy.inference.collector import collector_paused
from typed_pallas_mypy.inference.combine import Ask, Located, ModuleSource, Req, Resolver, Sets
from typed_pallas_mypy.inference.evaluator import notes
from typed_pallas_mypy.inference.evaluator.machine import Machine
from typed_pallas_mypy.inference.evaluator.notes import call_words
from typed_pallas_mypy.inference.evaluator.questions import SiteFinding, module_findings
from typed_pallas_mypy.inference.evaluator.summaries import FunctionSummary, ModuleRuns
from typed_pallas_mypy.inference.evaluator.verdict import CallVerdict
from typed_pallas_mypy.inference.reach import PallasReach
from typed_pallas_mypy.inference.store import FactsStore
from typed_pallas_mypy.inference.summary_store import SummaryStore

__all__ = [
    "SUMMARIES_ENV",
    "CallVerdict",
    "Definition",
    "Inference",
    "Located",
    "ModuleSource",
    "Requirement",
    "SiteFinding",
    "WrapperFacts",
    "call_words",
]

_T = TypeVar("_T")


#: (platforms when a guard helper returns true, when false) or None; returns a platform
HelperFacts = tuple[tuple[frozenset[str] | None, frozenset[str] | None] | None, bool]
#: the evidence of a local kernel body; the fullname of another module's kernel
KernelEvidence = tuple[tuple[model.Evidence, ...], str | None]


@dataclass(frozen=True)
class Requirement:
    """The lowering platforms a function can lower for, and why."""

    #: lowering platforms it can lower for, a subset of {"tpu", "cuda", "rocm"}
    platforms: frozenset[str]
    #: ("params", registry platform, backend) or ("evidence", backend, backend)
    cause: tuple[str, str, str]
    #: notes, the function itself first (paths relative to the project's folder or to
    #: the site-packages root)
    chain: tuple[str, ...]
    #: (parameter name, position or -1 if keyword-only) through which a caller turns
    #: interpret mode on for every kernel on the chain; None if none. Positions count
    #: what a caller passes: a method's ``self`` is not counted; for a class, the
    #: parameter is its constructor's.
    interpret: tuple[str, int] | None = None
    #: when interpret mode is a field of a config object that parameter holds
    #: (``interpret=config.interpret``): (the field, whether its class declares it off)
    interpret_field: tuple[str, bool] | None = None


def _requirement_json(found: Requirement | None) -> object:
    """A requirement as JSON (``summary_store``); None for none."""
    if found is None:
        return None
    return {
        "platforms": sorted(found.platforms),
        "cause": list(found.cause),
        "chain": list(found.chain),
        "interpret": list(found.interpret) if found.interpret is not None else None,
    }


def _requirement_from_json(data: object) -> tuple[bool, Requirement | None]:
    """(whether ``data`` is one, the requirement ``_requirement_json`` wrote)."""
    bad = (False, None)
    if data is None:
        return True, None
    if not isinstance(data, dict):
        return bad
    platforms, cause, chain = data.get("platforms"), data.get("cause"), data.get("chain")
    interpret = data.get("interpret")
    if (
        not isinstance(platforms, list)
        or not all(isinstance(p, str) for p in platforms)
        or not isinstance(cause, list)
        or len(cause) != 3
        or not all(isinstance(c, str) for c in cause)
        or not isinstance(chain, list)
        or not all(isinstance(c, str) for c in chain)
    ):
        return bad
    switch: tuple[str, int] | None = None
    if interpret is not None:
        if (
            not isinstance(interpret, list)
            or len(interpret) != 2
            or not isinstance(interpret[0], str)
            or not isinstance(interpret[1], int)
        ):
            return bad
        switch = (interpret[0], interpret[1])
    cause_of = (cause[0], cause[1], cause[2])
    return True, Requirement(frozenset(platforms), cause_of, tuple(chain), switch)


@dataclass(frozen=True)
class WrapperFacts:
    """A function forwarding its params to a Pallas entry point (qwix's ``pallas_call``)."""

    #: entry point fullname (a key of ``ENTRIES``)
    entry: str
    #: (entry parameter, wrapper parameter, its position or -1)
    forwards: tuple[tuple[str, str, int], ...]
    #: name of the wrapper's ``**kwargs`` if it forwards it to the entry (else None)
    kwargs: str | None
    #: where the wrapper is defined ("qwix/_src/core/pallas.py:27")
    where: str
    #: the line of its entry-point call
    line: int = 0
    #: (name, position) of its ``*args`` when passed on as the entry's leading arguments
    args: tuple[str, int] | None = None


@dataclass(frozen=True)
class Definition:
    """What a name's definition says of itself (all empty when it is not found)."""

    #: the backend-only primitives a kernel body defined as it uses (lines in the file
    #: of ``where``)
    body_evidence: tuple[model.Evidence, ...] = ()
    #: the backend of the params a function always returns a construction of
    #: (``def params(): return pltpu.CompilerParams(...)``), whatever its annotation
    #: says; "" when not known
    returned_params: str = ""
    #: (key, fullname of the entry's function) of a module-level platform table
    table: tuple[tuple[str, str], ...] = ()
    #: a variable holding a function-keeping decorator (``jaxtyped =
    #: jaxtyping.jaxtyped(typechecker=...)``) or a decorator whose wrapper calls the
    #: function (``functools.wraps``)
    keeping_decorator: bool = False
    #: ``path:line`` of the definition, or ""
    where: str = ""


_NO_DEFINITION = Definition()


def _debug() -> bool:
    return os.environ.get("TYPED_PALLAS_MYPY_DEBUG", "") not in ("", "0")


class Inference:
    """Requirements of the functions of the project (``project``) and of the installed
    packages under ``search_paths``.

    ``search_paths``: site-packages-like roots (module ``a.b.c`` is ``root/a/b/c.py`` or
    ``root/a/b/c/__init__.py``, the first root that has it); ``cache_dir``: where to
    keep the on-disk cache of local facts (None: memory only); ``project``: where the
    project's own modules are (tried first); ``lazy``: summarise a module's functions
    when a question reaches them, not when the module is read, and store them when
    ``save`` is called (the plugin: a run asks about a few of the functions it reads);
    ``keep_keys``: a project module's first reading keeps reuse keys too (mypy's daemon,
    which reads an edited module again: ``reuse``), not only its later ones; ``release``:
    the installed JAX's, which the evaluator's summaries answer for (None: what holds at
    every release).
    """

    def __init__(
        self,
        search_paths: Sequence[str],
        cache_dir: str | None,
        project: ModuleSource | None = None,
        *,
        lazy: bool = False,
        keep_keys: bool = False,
        release: tuple[int, ...] | None = None,
    ) -> None:
        self._store = FactsStore(cache_dir)
        #: the JAX release the evaluator's summaries answer for (what lowers where can
        #: depend on it: ``evaluator.verdict.lowers_on``); None: what holds at every one
        self._release = release
        self._resolver = Resolver(search_paths, self._store, project, lazy, keep_keys)
        #: the evaluator's summaries kept on disk between runs
        self._summary_store = SummaryStore(cache_dir, self._summary_source)
        #: the evaluator's parsed sources, shared between its questions
        self._trees: dict[tuple[str, str], ast.Module | None] = {}
        #: which modules the evaluator does not read exist (cleared with the sources)
        self._importable: dict[str, bool] = {}
        #: the evaluator's machines that ran a top-level package's imports, by (package,
        #: platform), kept for the next question about a module of that package
        self._kept: dict[tuple[str, str], Machine | None] = {}
        self._evaluated: dict[
            tuple[str, tuple[int, ...] | None], tuple[list[SiteFinding], frozenset[str]]
        ] = {}
        #: the evaluator's summaries, by (fullname, whether of calling its result), with
        #: the modules read to find them
        self._summaries: dict[tuple[str, bool], tuple[Requirement | None, frozenset[str]]] = {}
        #: which modules can reach Pallas at all (a function of one that cannot runs no
        #: kernel: its summary needs no run)
        self._reach = PallasReach(self._resolver.evaluator_source)
        #: the evaluator's summaries of the functions defined at (module, line)
        self._summaries_at: dict[tuple[str, int], tuple[Requirement | None, frozenset[str]]] = {}
        #: whether summaries answer what functions lower for (``requirement``,
        #: ``result_requirement``, ``requirement_at``, ``module_map``), not the rules; a
        #: call's own reading (``call_requirement``) is then left to the evaluator's
        #: module questions. The default; ``SUMMARIES_ENV=0`` asks the rules.
        self.summaries_answer = summaries_answer()

    def _public(self, req: Req | None) -> Requirement | None:
        if req is None:
            return None
        marker = req.marker
        if marker is None:
            return Requirement(req.platforms, req.cause, req.chain, None)
        if marker[0] == "p":
            return Requirement(req.platforms, req.cause, req.chain, (marker[1], int(marker[2])))
        if marker[0] == "c":
            _, name, position, _, field_name, cls = marker
            off = self._resolver.field_default(cls, field_name) == model.FALSE
            interpret = (name, int(position))
            return Requirement(req.platforms, req.cause, req.chain, interpret, (field_name, off))
        return None  # interpret comes from where a caller cannot say it

    def _rules(self, default: _T, work: Callable[[], _T]) -> _T:
        """``work`` guarded, or ``default`` when ``TYPED_PALLAS_RULES=0`` leaves out the
        rules' answers about what functions and calls run (to measure what the evaluator
        finds alone)."""
        if os.environ.get("TYPED_PALLAS_RULES", "") == "0":
            return default
        return self._guarded(default, work)

    def _guarded(self, default: _T, work: Callable[[], _T]) -> _T:
        try:
            return work()
        except Exception:
            if _debug():
                raise
            return default
        finally:
            self._store.flush()

    def requirement(self, fullname: str) -> Requirement | None:
        """The requirement of a function, method (``pkg.mod.Class.method``), alias,
        re-export, ``jax.jit`` / ``custom_vjp`` / ``partial`` object, or class (its
        instances' ``__call__``); None when unknown, unreadable, or without one."""
        if self.summaries_answer:
            return self.summary(fullname)
        return self._rules(None, lambda: self._public(self._resolver.requirement(fullname)))

    def prefetch(self, fullnames: Sequence[str]) -> None:
        """About to ask ``requirement`` and ``result_requirement`` of each of
        ``fullnames``: where summaries answer, work them out together
        (``ask_summaries``); else nothing."""
        if self.summaries_answer:
            self.ask_summaries(fullnames, result=True)

    def summary(self, fullname: str, *, result: bool = False) -> Requirement | None:
        """The evaluator's requirement of a function, method (``pkg.mod.Class.method``),
        alias, re-export or class (its instances' ``__call__``): what it lowers for
        called by a caller that passes only what it must (``summaries``); with
        ``result``, of calling what it returns too (``make_splash_mha(...)(q, k, v)``).
        None when it lowers everywhere it runs, or when that is not known."""
        return self._guarded(None, lambda: self._summary(fullname, result=result))

    def modules_of_summary(self, fullname: str) -> frozenset[str]:
        """The modules ``summary(fullname)`` (either kind) was read from, after asking."""
        empty: tuple[Requirement | None, frozenset[str]] = (None, frozenset())
        return frozenset().union(
            *(self._summaries.get((fullname, result), empty)[1] for result in (False, True))
        )

    def may_lower(self, fullname: str) -> bool:
        """Whether a call of ``fullname`` may run a Pallas kernel: False only when its
        module is not found, or reaches no module that touches Pallas (``reach``); a
        cheap answer, asked before a summary."""
        return self._guarded(True, lambda: self._may_lower(fullname))

    def _may_lower(self, fullname: str) -> bool:
        split = self._split(fullname)
        return split is not None and self._reach.may_reach(split[0])

    def ask_summaries(self, fullnames: Sequence[str], *, result: bool = False) -> None:
        """Work out ``summary(name)`` of each of ``fullnames`` (with ``result``, also
        ``summary(name, result=True)``) now, a module's functions together: its import
        runs once for all of them (``summaries.ModuleRuns``), with the same answers as
        asked one by one. Nothing is returned: ask ``summary`` for each."""
        self._guarded(None, lambda: self._ask_summaries(fullnames, result=result))

    def _ask_summaries(self, fullnames: Sequence[str], *, result: bool) -> None:
        by_module: dict[str, list[tuple[str, str]]] = {}
        for fullname in fullnames:
            for wanted in (False, True) if result else (False,):
                if (fullname, wanted) not in self._summaries:
                    split = self._split(fullname)
                    if split is not None:
                        by_module.setdefault(split[0], []).append((fullname, split[1]))
                    break
        for module, names in by_module.items():
            if not self._reach.may_reach(module):
                for fullname, _ in names:
                    for wanted in (False, True):
                        self._summaries[(fullname, wanted)] = (None, self._reach.read_for(module))
                continue
            asked = [
                (fullname, qualname, wanted)
                for fullname, qualname in names
                for wanted in ((False, True) if result else (False,))
                if (fullname, wanted) not in self._summaries
                and not self._stored_summary(module, fullname, qualname, wanted)
            ]
            if not asked:
                continue
            with self._module_runs(module) as runs:
                for fullname, qualname, wanted in asked:
                    key = (fullname, wanted)
                    if key not in self._summaries:
                        self._summaries[key] = (None, frozenset())  # if it fails
                        found = runs.summary(qualname, self._release, result=wanted)
                        self._summaries[key] = self._answer(fullname, module, found)
                        self._keep_summary(module, qualname, wanted, found)
            self._summary_store.flush()

    def _summary_source(self, module: str) -> tuple[str, bool, str] | None:
        """``module``'s source for the summaries kept on disk, where first: how the notes
        name its file and where it is read from (an answer's notes name files)."""
        found = self._resolver.evaluator_source(module)
        if found is None:
            return None
        located = self._resolver.locate(module)
        where = f"{located.display}\0{located.source_path}" if located is not None else found[0]
        return where, found[1], found[2]

    def _stored_summary(self, module: str, fullname: str, qualname: str, wanted: bool) -> bool:
        """Take ``fullname``'s summary (of calling its result when ``wanted``) from disk,
        when it is kept there and what it read is as it was."""
        stored = self._summary_store.get(module, SummaryStore.key(qualname, wanted, self._release))
        if stored is None:
            return False
        ok, answer = _requirement_from_json(stored.answer)
        if not ok:
            return False
        self._summaries[(fullname, wanted)] = (answer, frozenset(stored.read))
        return True

    def _keep_summary(
        self, module: str, qualname: str, wanted: bool, found: FunctionSummary | None
    ) -> None:
        """Keep a summary worked out now on disk (one whose run did not finish is not
        kept: a later run may have the budget), with the same answer for calling its
        result when that is the same question (``result_inert``)."""
        if found is None:
            return
        answer, _ = self._requirement_of(found)
        for result in (wanted, True) if found.result_inert else (wanted,):
            self._summary_store.put(
                module,
                SummaryStore.key(qualname, result, self._release),
                _requirement_json(answer),
                found.read,
                found.absent,
            )

    @contextlib.contextmanager
    def _module_runs(self, module: str) -> Iterator[ModuleRuns]:
        with collector_paused(freeze=False):  # a question's heap is garbage after it
            runs = ModuleRuns(
                self._resolver.evaluator_source, module, self._trees, self._importable, self._kept
            )
            try:
                yield runs
            finally:
                runs.close()

    def _summary(self, fullname: str, *, result: bool) -> Requirement | None:
        key = (fullname, result)
        if key not in self._summaries:
            # asked alone: a module's functions asked together are asked so
            # (``ask_summaries``: the plugin stores a module's facts)
            self._ask_summaries([fullname], result=result)
            self._summaries.setdefault(key, (None, frozenset()))  # a question that failed
        return self._summaries[key][0]

    def _answer(
        self, fullname: str, module: str, found: FunctionSummary | None
    ) -> tuple[Requirement | None, frozenset[str]]:
        """The requirement a summary gives (kept for calling the result too when that is
        the same answer)."""
        if found is None:
            return None, frozenset({module})
        answer = self._requirement_of(found)
        if found.result_inert:  # calling what it returns runs nothing: the same answer
            self._summaries[(fullname, True)] = answer
        return answer

    def _requirement_of(self, found: FunctionSummary) -> tuple[Requirement | None, frozenset[str]]:
        platforms = found.lowers_only_for
        if not platforms or not found.kernels:
            return None, found.read  # lowers everywhere it runs, or nowhere (contradicting)
        kernel = found.kernels[0]
        row = notes.params_row(kernel)
        proof = notes.deciding_proof(kernel)
        cause: tuple[str, str, str]
        if proof is not None:
            backend = sorted(proof.backends)[0]
            cause = ("evidence", backend, backend)
        elif row is not None and kernel.backend == row.backend:
            cause = ("params", row.platform, row.backend)
        elif row is not None:
            cause = ("evidence", row.backend, row.backend)
        else:
            cause = ("params", "", "")
        links = []
        for link in found.chain:
            located = self._resolver.locate(link.module)
            links.append(
                dataclasses.replace(
                    link, path=located.relpath if located is not None else link.module
                )
            )
        located = self._resolver.locate(kernel.module) if kernel.module else None
        kernel_path = located.relpath if located is not None else kernel.module
        lowers_for = tuple(sorted(platforms))
        chain = tuple(notes.chain_notes(links, kernel, kernel_path, lowers_for))
        return Requirement(platforms, cause, chain, found.interpret), found.read

    def _split(self, fullname: str) -> tuple[str, str] | None:
        """(module, qualified name in it) of ``fullname``: the longest prefix that is a
        module the engine finds."""
        parts = fullname.split(".")
        for cut in range(len(parts) - 1, 0, -1):
            if self._resolver.locate(".".join(parts[:cut])) is not None:
                return ".".join(parts[:cut]), ".".join(parts[cut:])
        return None

    def result_requirement(self, fullname: str) -> Requirement | None:
        """The requirement of calling what ``fullname(...)`` returns (a factory of
        kernels: ``make_splash_mha(...)``), both called without an interpret argument."""
        if self.summaries_answer:
            return self.summary(fullname, result=True)
        return self._rules(None, lambda: self._public(self._resolver.result_requirement(fullname)))

    def helper(self, fullname: str) -> HelperFacts:
        """(platforms when it returns true, when false) of a guard helper
        (``def on_tpu(): return jax.default_backend() == "tpu"``), and whether it returns
        the platform string itself; ``(None, False)`` for anything else."""
        unknown: HelperFacts = (None, False)
        return self._guarded(unknown, lambda: self._resolver.memoized_helper(fullname))

    def modules_of_helper(self, fullname: str) -> frozenset[str]:
        """The modules ``helper(fullname)`` was read from (after asking it)."""
        return self._resolver.modules_of("helper", fullname)

    def requirement_at(self, module: str, line: int) -> Requirement | None:
        """The requirement of the function of ``module`` defined at ``line`` (its
        ``def``), nested functions included."""
        if self.summaries_answer:
            return self.summary_at(module, line)
        return self._rules(None, lambda: self._public(self._resolver.requirement_at(module, line)))

    def summary_at(self, module: str, line: int) -> Requirement | None:
        """The evaluator's requirement of the function of ``module`` whose ``def`` is at
        ``line`` (nested ones included), as its body is, whatever its decorators make of
        it (``summaries.ModuleRuns.summary_at``)."""
        return self._guarded(None, lambda: self._summary_at(module, line))

    def _summary_at(self, module: str, line: int) -> Requirement | None:
        key = (module, line)
        if key not in self._summaries_at:
            self._summaries_at[key] = (None, frozenset({module}))  # if the question fails
            if not self._reach.may_reach(module):
                self._summaries_at[key] = (None, self._reach.read_for(module))
            else:
                with self._module_runs(module) as runs:
                    found = runs.summary_at(line, self._release)
                self._summaries_at[key] = (
                    self._requirement_of(found)
                    if found is not None
                    else (None, frozenset({module}))
                )
        return self._summaries_at[key][0]

    def modules_of_requirement_at(self, module: str, line: int) -> frozenset[str]:
        """The modules ``requirement_at(module, line)`` was read from (after asking it),
        as far as known: the summaries know; the rules keep none (the module's own
        source and stored facts are what their answer reads)."""
        if self.summaries_answer:
            return self._summaries_at.get((module, line), (None, frozenset()))[1]
        return frozenset()

    def call_requirement(self, module: str, where: tuple[int, int, int, int]) -> Requirement | None:
        """What the call at ``where`` (line, column, end line, end column) of ``module``
        runs lowers for, when its interpret mode is known off there: the same reading
        of a call as the inference's (``make(x)(y)``, ``k = make(x); k(y)``,
        ``Op(...)(x)``, ``(a if c else b)(x)``, ``TABLE["tpu"](x)``, ``lax.cond``...)."""
        if self.summaries_answer:
            return None  # the evaluator's module questions read the call as it runs
        return self._rules(
            None, lambda: self._public(self._resolver.call_requirement(module, where))
        )

    def evaluated_findings(
        self, module: str, release: tuple[int, ...] | None
    ) -> tuple[list[SiteFinding], frozenset[str]]:
        """The calls of ``module`` that JAX refuses wherever their guards let them run,
        found by the evaluator (``evaluator.questions``) at the JAX ``release``, and the
        modules read to find them; nothing when the question fails."""
        key = (module, release)
        if os.environ.get("TYPED_PALLAS_EVALUATOR", "") == "0":
            return [], frozenset()  # measuring what the evaluator costs (benchmarks/)
        if key not in self._evaluated and not self._guarded(
            True, lambda: self._reach.may_reach(module)
        ):
            self._evaluated[key] = ([], self._reach.read_for(module))  # no kernel can run
        if key not in self._evaluated:
            nothing: tuple[list[SiteFinding], frozenset[str]] = ([], frozenset())
            self._evaluated[key] = self._guarded(
                nothing,
                lambda: self._located(
                    module_findings(
                        self._resolver.evaluator_source,
                        module,
                        release,
                        self._trees,
                        self._importable,
                        self._kept,
                    )
                ),
            )
        return self._evaluated[key]

    def _located(
        self, found: tuple[list[SiteFinding], frozenset[str]]
    ) -> tuple[list[SiteFinding], frozenset[str]]:
        """``found`` with each step of its findings' chains given its file, as the
        rules' notes show it (relative to the project or to site-packages)."""
        sites, read = found
        out: list[SiteFinding] = []
        for site in sites:
            links = []
            for link in site.verdict.chain:
                located = self._resolver.locate(link.module)
                path = located.relpath if located is not None else link.module
                links.append(dataclasses.replace(link, path=path))
            kernel = site.verdict.kernels[0].module
            located = self._resolver.locate(kernel) if kernel else None
            verdict = dataclasses.replace(
                site.verdict,
                chain=tuple(links),
                kernel_path=located.relpath if located is not None else kernel,
            )
            out.append(dataclasses.replace(site, verdict=verdict))
        return out, read

    def modules_of(self, fullname: str) -> frozenset[str]:
        """The modules ``requirement(fullname)`` was read from (after asking it)."""
        if self.summaries_answer:
            return self.modules_of_summary(fullname)
        return self._resolver.modules_of("req", fullname)

    def modules_of_call(self, module: str, where: tuple[int, int, int, int]) -> frozenset[str]:
        """The modules ``call_requirement(module, where)`` was read from."""
        return self._resolver.modules_of("call", f"{module}:{':'.join(map(str, where))}")

    def wrapper(self, fullname: str) -> WrapperFacts | None:
        """The wrapper facts of a function (through aliases and re-exports), if it
        forwards its kernel and params (or its ``**kwargs``) to a Pallas entry point."""
        return self._rules(None, lambda: self._wrapper(fullname))

    def _wrapper(self, fullname: str) -> WrapperFacts | None:
        found = self._resolver.wrapper_of(fullname)
        if found is None:
            return None
        target, fact = found
        assert target.function is not None
        where = f"{target.located.relpath}:{target.function.line}"
        return WrapperFacts(fact.entry, fact.forwards, fact.kwargs, where, fact.line, fact.args)

    def modules_of_wrapper(self, fullname: str) -> frozenset[str]:
        """The modules ``wrapper(fullname)`` was read from (after asking it)."""
        return self._resolver.modules_of("wrapper-of", fullname)

    def definition(self, fullname: str) -> Definition:
        """What the definition ``fullname`` names (through aliases and re-exports) says
        of itself, read once: ``Definition``."""
        return self._guarded(_NO_DEFINITION, lambda: self._definition(fullname))

    def _definition(self, fullname: str) -> Definition:
        target = self._resolver.resolve(fullname)
        if target is None:
            return _NO_DEFINITION
        function, alias, path = target.function, target.alias, target.located.relpath
        line = (
            function.line
            if function is not None
            else target.cls.line
            if target.cls is not None
            else alias.line
            if alias is not None
            else 0
        )
        if alias is not None:
            keeping = alias.kind == model.KEEPER
        else:
            keeping = function is not None and function.decorator in (
                model.KEEPS,
                model.KEEPS_FACTORY,
                model.KEEPS_BOTH,
            )
        return Definition(
            body_evidence=function.body_evidence if function is not None else (),
            returned_params=function.returns_params if function is not None else "",
            table=tuple(zip(alias.keys, alias.targets))
            if alias is not None and alias.kind == model.TABLE
            else (),
            keeping_decorator=keeping,
            where=f"{path}:{line}",
        )

    def kernel_evidence(
        self,
        module: str,
        where: tuple[int, int, int, int],
        argument: tuple[str, int, str | None] | None,
        *,
        decorated: bool,
        applied: bool,
    ) -> KernelEvidence:
        """The kernel body of the entry call at ``where`` (line, column, end line, end
        column) of ``module``, read in the scope the call is in: (the evidence of the
        backend-only primitives a kernel defined in ``module`` uses, and
        the functions of that module it calls, two levels deep; the fullname of a
        kernel defined in another module, or None). The kernel is the call's
        ``argument`` when given (role "kernel", as ``reader.Argument``); else, with
        ``decorated``, the function the call decorates, and with ``applied``, the first
        argument of the call that applies the call's result."""

        def read() -> KernelEvidence:
            local, other = self._resolver.kernel_evidence(
                module, where, argument, decorated=decorated, applied=applied
            )
            return tuple(local), other

        nothing: KernelEvidence = ((), None)
        return self._guarded(nothing, read)

    def condition_sets(
        self, module: str, where: tuple[int, int, int, int], ask: Ask | None = None
    ) -> tuple[Sets, tuple[str, ...]]:
        """(platforms when the expression at ``where`` (line, column, end line, end
        column) of ``module`` is true, when false; None where not known), read as the
        inference reads every condition, in the scope the expression is in, and the
        guard and platform helpers it calls (the caller depends on their modules).
        ``ask`` answers the calls the reader leaves to the plugin (platform predicates,
        by their receiver's type): their span and which of their arguments are devices."""
        unknown: tuple[Sets, tuple[str, ...]] = ((None, None), ())
        return self._guarded(unknown, lambda: self._resolver.condition_sets(module, where, ask))

    def predicate_sets(
        self, module: str, line: int, name: str, parameter: str, ask: Ask | None = None
    ) -> tuple[Sets, tuple[str, ...]]:
        """(platforms when the function ``name`` of ``module`` defined at ``line``
        returns true for the device passed as its ``parameter``, when false; None where
        not known), and the helpers it calls: a platform predicate (``def
        supported_on(self, device): return device.platform == "tpu"``), read as every
        condition is. Which parameter is the device is the caller's to say (an
        annotation, or the method it overrides); ``ask`` as in ``condition_sets``."""
        unknown: tuple[Sets, tuple[str, ...]] = ((None, None), ())
        return self._guarded(
            unknown,
            lambda: self._resolver.predicate_sets(module, line, name, parameter, ask),
        )

    def device_parameters(self, module: str, line: int, name: str) -> tuple[str, ...]:
        """The parameters of the function ``name`` of ``module`` defined at ``line``
        annotated ``jax.Device`` (also ``jax.Device | None``, ``Optional[jax.Device]``),
        as every condition the inference reads sees them."""
        return self._guarded((), lambda: self._resolver.device_parameters(module, line, name))

    def is_platform_source(
        self, module: str, where: tuple[int, int, int, int]
    ) -> tuple[bool, tuple[str, ...]]:
        """Whether the expression at ``where`` of ``module`` is the platform string
        itself (``jax.default_backend()``, a device's ``.platform``, a variable holding
        one, a platform helper's call), and the helpers that says so read."""
        unknown: tuple[bool, tuple[str, ...]] = (False, ())
        return self._guarded(unknown, lambda: self._resolver.is_platform_source(module, where))

    def interpret_kept_off(
        self, module: str, where: tuple[int, int, int, int]
    ) -> tuple[str, str, str] | None:
        """For the name at ``where`` of ``module``, an entry call's ``interpret=``: when
        it is a parameter of the function around it that the module keeps off
        (``interpret_uses``), ("default" or "passed", the parameter, the function)."""
        return self._guarded(None, lambda: self._resolver.interpret_kept_off(module, where))

    def argument_evidence(
        self,
        module: str,
        where: tuple[int, int, int, int],
        arguments: Sequence[tuple[str, int, str | None]],
    ) -> tuple[tuple[str, model.Evidence], ...]:
        """(kind, evidence) of what the arguments of the entry call at
        ``where`` (line, column, end line, end column) of ``module`` prove, kind "mesh"
        (a mesh by its constructor) or "scratch" (scratch allocations, a grid spec's
        scratch and scalar prefetch), read in the scope the call is in: variables are
        followed to what they were assigned there or in a scope around it.
        ``arguments``: (role, index, keyword) of the call's mesh, scratch and grid spec
        arguments (``reader.Argument``); nothing when one is not found as said."""
        return self._guarded(
            (), lambda: tuple(self._resolver.argument_evidence(module, where, arguments))
        )

    def modules_read(self) -> dict[str, str]:
        """Module name -> file path, of every module whose facts were consulted."""
        return {name: located.path for name, located in self._resolver.read.items()}

    def looked_at_since(self, count: int) -> list[str]:
        """The files outside the project that the answers depend on, after the first
        ``count`` (in the order first looked at): the installed modules' files read, and
        the paths whose absence decided where a module was found, or that it was not."""
        return self._resolver.looked_at[count:]

    def forget(self, modules: frozenset[str] | None = None) -> None:
        """Forget the answers read from ``modules`` (every answer when None)."""
        self._resolver.forget(modules)
        self._summary_store.forget()
        self._trees.clear()  # sources may have changed: parsed again when asked
        self._importable.clear()  # and packages installed or removed
        self._kept.clear()  # and what their imports did
        self._reach.forget(modules)
        if modules is None:
            self._evaluated.clear()
            self._summaries.clear()
            self._summaries_at.clear()
        else:
            for key, (_, read) in list(self._evaluated.items()):
                if key[0] in modules or read & modules:
                    del self._evaluated[key]
            for summary, (_, read) in list(self._summaries.items()):
                if read & modules:
                    del self._summaries[summary]
            for at, (_, read) in list(self._summaries_at.items()):
                if at[0] in modules or read & modules:
                    del self._summaries_at[at]

    def save(self) -> None:
        """Write to the on-disk cache the facts of the modules read lazily, as far as
        they were worked out (a module whose summaries are all stored is not written
        again). Without ``lazy``, every module was written when it was read."""
        self._guarded(None, self._resolver.save)

    def module_map(self, prefix: str) -> list[tuple[str, Requirement | None]]:
        """Every public top-level function, class and alias of the modules under
        ``prefix`` (e.g. ``"jax.experimental.pallas.ops"``), with its requirement."""
        return self._guarded([], lambda: self._module_map(prefix))

    def _module_map(self, prefix: str) -> list[tuple[str, Requirement | None]]:
        out: list[tuple[str, Requirement | None]] = []
        for module in self._modules_under(prefix):
            facts = self._resolver.module_facts(module)
            if facts is None or not facts.pallas:
                continue
            names = [
                name
                for name, binding in facts.bindings.items()
                if not name.startswith("_")
                and (
                    binding.kind in (model.DEF, model.CLASS)
                    or (binding.kind == model.ALIAS and name in facts.aliases)
                )
            ]
            fullnames = [f"{module}.{name}" for name in sorted(names)]
            if self.summaries_answer:
                self.ask_summaries(fullnames)
                out.extend((fullname, self.summary(fullname)) for fullname in fullnames)
                continue
            for fullname in fullnames:
                out.append((fullname, self._public(self._resolver.requirement(fullname))))
        return out

    def reexports(self, prefix: str) -> list[tuple[str, str]]:
        """The public names the modules under ``prefix`` bind by importing a function of
        another module of the same top-level package (``from pkg._impl import op`` in
        ``pkg/__init__.py``): (the public fullname, the imported fullname)."""
        return self._guarded([], lambda: self._reexports(prefix))

    def _reexports(self, prefix: str) -> list[tuple[str, str]]:
        top = prefix.split(".", 1)[0]
        out: list[tuple[str, str]] = []
        for module in self._modules_under(prefix):
            facts = self._resolver.module_facts(module)
            if facts is None:
                continue
            for name, binding in sorted(facts.bindings.items()):
                if (
                    binding.kind == model.IMPORT
                    and not name.startswith("_")
                    and binding.target.split(".", 1)[0] == top
                    and binding.target != f"{module}.{name}"
                ):
                    out.append((f"{module}.{name}", binding.target))
        return out

    def _modules_under(self, prefix: str) -> list[str]:
        located = self._resolver.locate(prefix)
        if located is None:
            return []
        if not located.is_package:
            return [prefix]
        folder = os.path.dirname(located.path)
        found: list[str] = []
        for here, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if d.isidentifier())
            if "__init__.py" not in files and here != folder:
                dirs[:] = []
                continue
            rel = os.path.relpath(here, folder)
            parts = [] if rel == "." else rel.split(os.sep)
            for file in sorted(files):
                if not file.endswith(".py"):
                    continue
                stem = file[:-3]
                if stem == "__init__":
                    found.append(".".join([prefix, *parts]))
                elif stem.isidentifier():
                    found.append(".".join([prefix, *parts, stem]))
        return found
