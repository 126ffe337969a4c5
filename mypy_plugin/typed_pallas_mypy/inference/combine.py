"""Requirements across modules, computed lazily from local facts (the trace programs).

``Resolver`` finds a module's source (a project module through the ``ModuleSource`` the
plugin gives it, an installed one under the search paths), gets its local facts (from
``store`` when the file is unchanged, else from ``reader``), and combines them:

* a function lowers only for P when every path through its trace program that returns
  normally runs kernels that lower only for P (``_program``): on one path the
  platforms are those every kernel on it lowers for (intersection); over the paths,
  those some path allows (union); an arm of ``platform_dependent`` adds its own
  platform. A call of something unknown restricts nothing; a function that reads the
  platform itself has no requirement;
* an entry event lowers for what its params and evidence allow (``_entry_source``);
  a call event for what its callee's requirement allows, with interpret mode followed
  from the callee's parameter to the argument the caller passes (``Marker``);
* calling the result of a call (``make(x)(y)``, ``Op(...)(x)``, ``k = make(x); k(y)``)
  runs what the callee returns (``_result``): a kernel, a closure, a class instance's
  ``__call__``, or another call's result;
* aliases (``f = g``, ``functools.partial``, ``jax.jit``, ``jax.custom_vjp``), re-exports
  (``from .ops import gmm``, ``from .ops import *``), platform tables under a literal
  key, and a ``custom_vjp`` function's ``defvjp`` rules (they run when it is
  differentiated: their requirements join its own).

Two runs of each program give interpret mode: one with every kernel compiled, one
leaving out the kernels whose interpret mode a caller decides. The requirement is the
second's when it restricts, else the first's with that one parameter as its marker.

What it does not do: import what it reads, or raise (``Inference`` turns any failure
into silence).
"""

from __future__ import annotations

import dataclasses
import os
import sys
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final, Protocol

from typed_pallas import _platforms
from typed_pallas_mypy import evidence_tables
from typed_pallas_mypy.entries import ENTRIES
from typed_pallas_mypy.fullnames import JAX_READ_PREFIX, NO_KERNEL_PACKAGES
from typed_pallas_mypy.inference import install_finders, model, reader
from typed_pallas_mypy.inference.model import (
    CALLER,
    FALSE,
    TRUE,
    UNKNOWN,
    Alias,
    Alt,
    ArgSum,
    CallArgs,
    CallEvent,
    ClassSummary,
    EntryEvent,
    Evidence,
    FactsFormatError,
    FunctionSummary,
    ModuleFacts,
    Return,
    Step,
    Stop,
)
from typed_pallas_mypy.inference.store import Entry, FactsStore, Stamp

#: How many calls deep a requirement chain is followed (and shown in notes).
MAX_DEPTH: Final = 8
#: How many aliases, re-exports and base classes deep a name is followed.
_NAME_DEPTH: Final = 8

#: How many readings of modules read without their sites are kept for a later question
#: by position (``Resolver._unasked_sites``). Each holds its module's syntax tree; mypy
#: asks about a module's calls right after reading its facts (every one of the 26
#: second parses on jax's ops is saved with one kept), and keeping 4 made the reads of
#: a cold run about 40% slower (more live objects for the garbage collector to walk).
_KEPT_READINGS: Final = 1
#: How many installed modules read lazily keep their reading (``Resolver._keep_reading``):
#: more than a run over jax's ops reads (32 modules, whose readings hold 32 MiB, about 55
#: times their sources' size), a bound on what a build over large libraries holds.
_KEPT_LAZY_READINGS: Final = 64
LOWERING: Final = _platforms.LOWERING_SET
GUARD_UNIVERSE: Final = _platforms.GUARD_UNIVERSE

#: (platforms when a condition is true, platforms when it is false); None = not known
Sets = tuple[frozenset[str] | None, frozenset[str] | None]
#: Answers an ``["ask", ...]`` leaf of a condition: (the call's span, the positions and
#: keywords of its arguments that are devices) -> its sets, or None
Ask = Callable[[tuple[int, int, int, int], tuple[int, ...], tuple[str, ...]], Sets | None]

#: How interpret mode reaches a requirement's kernels:
#: None: never (the requirement always holds);
#: ("p", name, position or -1, default): the function's parameter ``name``;
#: ("o", name): a parameter ``name`` of an enclosing function (a closure);
#: ("a", attr): the instance attribute ``self.attr``;
#: ("k", attr, key, fallback): the key ``key`` of a ``**self.attr`` splat, with the
#: ``fallback`` argument summary when the key is absent;
#: ("c", name, position or -1, default, field, class): the field ``field`` of the config
#: object the parameter ``name`` (annotated ``class``) holds.
Marker = tuple[str, ...] | None


@dataclass(frozen=True)
class Req:
    """A requirement while it is being combined."""

    platforms: frozenset[str]
    #: ("params", registry platform, backend) or ("evidence", backend, backend)
    cause: tuple[str, str, str]
    chain: tuple[str, ...]
    marker: Marker


class _Drop:
    """A call that gives no requirement (interpret on, or not known)."""


DROP: Final = _Drop()


@dataclass(frozen=True)
class Located:
    """A module's source file."""

    module: str
    #: how notes name the file (``pkg/ops.py``: relative to site-packages, or to the
    #: project's working folder)
    display: str
    #: the module's path
    path: str
    is_package: bool
    #: where its source is read from (mypy's ``--shadow-file``), if not ``path``
    read_path: str = ""
    #: a module of the checked project (not an installed package)
    project: bool = False

    @property
    def relpath(self) -> str:
        return self.display

    @property
    def source_path(self) -> str:
        return self.read_path or self.path


class ModuleSource(Protocol):
    """Where the project's own modules are (the plugin's view of mypy's build)."""

    def locate(self, module: str) -> Located | None: ...


@dataclass(frozen=True)
class Target:
    """What a fullname names in a read module."""

    located: Located
    facts: ModuleFacts
    #: "function", "class", "alias"
    kind: str
    name: str
    function: FunctionSummary | None = None
    cls: ClassSummary | None = None
    alias: Alias | None = None
    #: for a method: the fullname of the class of the instance it runs on, when that is
    #: known exactly (an instance built by a call the engine read): ``self.NAME`` and
    #: ``super().NAME`` are looked up through that class's bases, as Python does; ""
    #: when the instance may be of any subclass of the method's own class
    receiver: str = ""

    @property
    def fullname(self) -> str:
        return f"{self.facts.module}.{self.name}"

    @property
    def key(self) -> str:
        """What answers about this target are memoized under (its receiver included)."""
        return f"{self.fullname}@{self.receiver}" if self.receiver else self.fullname


@dataclass
class _Memo:
    """A computed answer and the modules it was read from."""

    value: object
    modules: frozenset[str] = field(default_factory=frozenset)


class Resolver:
    """Local facts of modules (the project's and installed ones), and requirements."""

    def __init__(
        self,
        search_paths: Sequence[str],
        store: FactsStore,
        project: ModuleSource | None = None,
        lazy: bool = False,
        keep_keys: bool = False,
    ) -> None:
        roots = [os.path.abspath(p) for p in search_paths]
        #: the roots, each followed by its ``.pth`` files' path lines (as ``site`` adds them)
        self.search_paths: list[str] = []
        #: module -> package folder or module file, from editable installs' finders
        self._mapped: dict[str, str] = {}
        #: namespace package -> its folders, from editable installs' finders
        self._namespaces: dict[str, tuple[str, ...]] = {}
        for root in roots:
            if root not in self.search_paths:
                self.search_paths.append(root)
            found = install_finders.finders_of(root)
            self.search_paths.extend(p for p in found.paths if p not in self.search_paths)
            for module, where in found.modules.items():
                self._mapped.setdefault(module, where)
            for module, folders in found.namespaces.items():
                self._namespaces.setdefault(module, folders)
        #: a project module's first reading keeps reuse keys (``Inference``)
        self.keep_keys = keep_keys
        #: summarise a module's functions when asked for, and store them by ``save``
        #: (else every function when the module is read, stored then)
        self.lazy = lazy
        self.store = store
        self.project = project
        self._located: dict[str, Located | None] = {}
        self._facts: dict[str, ModuleFacts | None] = {}
        #: the file stamp each module's facts were read from (kept across ``forget``:
        #: a module whose file did not change is not read again)
        self._fact_stamps: dict[str, Stamp] = {}
        #: modules whose stamp was checked since the last ``forget``
        self._checked: set[str] = set()
        self._sources: dict[str, bytes | None] = {}
        #: module -> the path of every module whose facts were consulted
        self.read: dict[str, Located] = {}
        #: the paths of ``read``, in the order they were read
        self.read_order: list[str] = []
        #: the files outside the project that the answers so far depend on, in the order
        #: first looked at: each installed module's file read, and, for each search path
        #: a module was looked for in before it was found (or not), the first folder or
        #: file missing there (its appearance would change where the module is found)
        self.looked_at: list[str] = []
        self._looked_at: set[str] = set()
        self._memo: dict[tuple[str, str], _Memo] = {}
        #: module -> the slots of ``_memo`` read from it (``forget`` drops them without
        #: looking at the others; a slot computed again may stay listed: dropping it
        #: again only costs a recomputation)
        self._memo_slots: dict[str, set[tuple[str, str]]] = {}
        self._in_progress: set[tuple[str, str]] = set()
        #: the modules the computations on the stack have read so far
        self._reading: list[set[str]] = []
        self._helpers: dict[str, bool] = {}
        #: the calls of each module decision sites asked about
        self._sites: dict[str, reader.Sites | None] = {}
        #: the last modules read from source without their sites: how to get them from
        #: that reading, not a second parse (a module mypy checks is read for its facts
        #: first, then asked about by position); at most ``_KEPT_READINGS``, newest last
        self._unasked_sites: dict[str, Callable[[], reader.Sites | None]] = {}
        #: project module -> the summaries of its last reading, by reuse key, kept when
        #: it is forgotten: its next reading takes those still valid (``reuse``; the
        #: daemon reads an edited module again, and most of its functions are the same)
        self._reusable: dict[str, reader.Reusable] = {}
        #: computing what runs under ``jax.grad`` (custom functions run their rules)
        self._differentiated = False
        #: computing what ``jax.vjp`` runs now (custom functions run their forward rule)
        self._forward = False
        #: module -> (stamp, facts) of the modules whose functions are summarised when
        #: asked for: written to the store by ``save``
        self._unsaved: dict[str, tuple[Stamp, ModuleFacts]] = {}
        #: the installed modules whose lazy facts hold their reading, oldest first
        self._lazy_readings: dict[str, tuple[Located, Stamp, ModuleFacts]] = {}

    # ------------------------------------------------------------------ modules

    def locate(self, module: str) -> Located | None:
        if module in self._located:
            return self._located[module]
        found: Located | None = None
        if self.project is not None:
            found = self.project.locate(module)
        if found is None and module and all(part.isidentifier() for part in module.split(".")):
            parts = module.split(".")
            for root in self.search_paths:
                base = os.path.join(root, *parts)
                init = os.path.join(base, "__init__.py")
                for path, package in ((base + ".py", False), (init, True)):
                    if os.path.isfile(path):
                        display = os.path.relpath(path, root).replace(os.sep, "/")
                        found = Located(module, display, path, package)
                        break
                if found is not None:
                    break
                self._look_at_absent(root, parts)
            if found is None and (self._mapped or self._namespaces):
                found = self._locate_mapped(module, parts)
        self._located[module] = found
        return found

    def _locate_mapped(self, module: str, parts: list[str]) -> Located | None:
        """``module`` through the editable finders' mappings (the longest mapped prefix)."""
        for i in range(len(parts), 0, -1):
            prefix = ".".join(parts[:i])
            rest = parts[i:]
            where = self._mapped.get(prefix)
            folders: tuple[str, ...] = ()
            if where is not None:
                if os.path.basename(where) == "__init__.py":
                    folders = (os.path.dirname(where),)
                elif where.endswith(".py"):
                    if not rest and os.path.isfile(where):
                        return Located(module, "/".join(parts) + ".py", where, False)
                    if not rest:
                        self._look_at(where)
                    continue
                else:
                    folders = (where,)
            else:
                folders = self._namespaces.get(prefix, ())
            for folder in folders:
                base = os.path.join(folder, *rest)
                for path, package, display in (
                    (base + ".py", False, "/".join(parts) + ".py"),
                    (os.path.join(base, "__init__.py"), True, "/".join(parts) + "/__init__.py"),
                ):
                    if os.path.isfile(path):
                        return Located(module, display, path, package)
                    self._look_at(path)
        return None

    def _look_at(self, path: str) -> None:
        if path not in self._looked_at:
            self._looked_at.add(path)
            self.looked_at.append(path)

    def _look_at_absent(self, root: str, parts: list[str]) -> None:
        """Note where module ``parts`` is missing under ``root``: the first of its
        package folders that is missing there, else its two files. Not for a module of
        the standard library (Python finds it before any site folder)."""
        if parts[0] in sys.stdlib_module_names:
            return
        path = root
        for part in parts[:-1]:
            path = os.path.join(path, part)
            if not os.path.isdir(path):
                self._look_at(path)
                return
        base = os.path.join(path, parts[-1])
        self._look_at(base + ".py")
        self._look_at(os.path.join(base, "__init__.py"))

    def is_framework(self, module: str) -> bool:
        """jax's own modules and the packages that define no kernel, never read
        (``jax.experimental.pallas.ops`` is read)."""
        if module.split(".", 1)[0] in NO_KERNEL_PACKAGES:
            return True
        return (module == "jax" or module.startswith("jax.")) and not (module + ".").startswith(
            JAX_READ_PREFIX
        )

    def _stamp(self, located: Located) -> Stamp | None:
        try:
            stat = os.stat(located.source_path)
        except OSError:
            return None
        return Stamp(located.source_path, stat.st_size, stat.st_mtime_ns)

    def evaluator_source(self, module: str) -> tuple[str, bool, str] | None:
        """A module's source for the evaluator (``evaluator.machine.Loader``): the
        project's and the installed packages' modules; None for jax's and the framework
        packages' and the standard library's (read as tables and models, wherever a
        search path finds their files: the CLI searches ``sys.path``) and for a module not
        found."""
        if self.is_framework(module) or module.split(".", 1)[0] in sys.stdlib_module_names:
            return None
        located = self.locate(module)
        if located is None:
            return None
        source = self._source(located)
        if source is None:
            return None
        if module not in self.read:  # its answers depend on this file: noted as read
            self.read_order.append(located.path)
            if not located.project:
                self._look_at(located.path)
        self.read[module] = located
        return located.path, located.is_package, source.decode("utf-8", errors="replace")

    def _source(self, located: Located) -> bytes | None:
        if located.module not in self._sources:
            try:
                with open(located.source_path, "rb") as handle:
                    self._sources[located.module] = handle.read()
            except OSError:
                self._sources[located.module] = None
        return self._sources[located.module]

    def _note(self, module: str) -> None:
        for reading in self._reading:
            reading.add(module)

    def module_facts(self, module: str) -> ModuleFacts | None:
        """The local facts of ``module`` (None: not found, framework, or unparsable)."""
        if module in self._checked:
            self._note(module)
            return self._facts.get(module)
        if self.is_framework(module):
            return None
        located = self.locate(module)
        if located is None:
            return None
        stamp = self._stamp(located)
        if stamp is None:
            return None
        self._checked.add(module)
        self._note(module)
        if module in self._facts and self._fact_stamps.get(module) == stamp:
            known = self._facts[module]
            self._remember(located, known)
            return known
        self._fact_stamps[module] = stamp
        stored = self.store.get(module, stamp)
        if stored is not None and stored.facts is not None:
            try:
                facts = model.module_from(module, stored.facts)
            except (FactsFormatError, TypeError, ValueError):
                facts = None
            if facts is not None:
                self._summarize_from_source(located, stamp, facts)
                self._remember(located, facts)
                return facts
        source = self._source(located)
        if source is None:
            return None
        lazy = self.lazy
        if located.project and module not in self._sites:
            # a project module read afresh: its calls are asked by position next (the
            # plugin's decision sites, conditions and evidence), from the same reading
            parsed, self._sites[module] = reader.read_module_and_sites(
                source,
                module,
                is_package=located.is_package,
                lazy=lazy,
                reuse=self._reusable.pop(module, {} if self.keep_keys else None),
            )
        else:
            parsed, sites = reader.read_module_keeping_sites(
                source, module, is_package=located.is_package, lazy=lazy
            )
            self._unasked_sites.pop(module, None)
            self._unasked_sites[module] = sites
            while len(self._unasked_sites) > _KEPT_READINGS:
                del self._unasked_sites[next(iter(self._unasked_sites))]
        if parsed is not None and lazy:
            self._unsaved[module] = (stamp, parsed)
            if not located.project:
                self._keep_reading(located, stamp, parsed)
        else:
            self.store.put(
                module,
                stamp,
                Entry(model.module_json(parsed) if parsed is not None else {"unparsed": True}),
            )
        self._remember(located, parsed)
        return parsed

    def _keep_reading(self, located: Located, stamp: Stamp, facts: ModuleFacts) -> None:
        """Keep the reading behind an installed module's lazy facts (its syntax tree),
        for at most ``_KEPT_LAZY_READINGS`` modules: the oldest one's facts then
        summarise what is asked later from its source again (``_summarize_from_source``),
        so a build that reads hundreds of installed modules does not hold their trees."""
        self._lazy_readings.pop(located.module, None)
        self._lazy_readings[located.module] = (located, stamp, facts)
        while len(self._lazy_readings) > _KEPT_LAZY_READINGS:
            oldest = next(iter(self._lazy_readings))
            self._summarize_from_source(*self._lazy_readings.pop(oldest))

    def _summarize_from_source(self, located: Located, stamp: Stamp, facts: ModuleFacts) -> None:
        """Let a module's lazy facts summarise from its source what they cannot
        otherwise: a function a stored entry lacks (no question reached it when it was
        written), or any function once the reading behind them was let go
        (``_keep_reading``). The source is read on the first such question, once, if the
        file is still the one the facts were read or stored for."""
        functions = facts.functions
        if not isinstance(functions, model.Functions):
            return
        reading: list[ModuleFacts | None] = []

        def summarize(qualname: str) -> FunctionSummary | None:
            if not reading:
                # the file the entry was stored for (else: nothing said of the function)
                source = self._source(located) if self._stamp(located) == stamp else None
                read = None
                if source is not None:
                    read, _ = reader.read_module_keeping_sites(
                        source, located.module, is_package=located.is_package, lazy=True
                    )
                reading.append(read)
                self._unsaved[located.module] = (stamp, facts)
                if read is not None and not located.project:
                    self._keep_reading(located, stamp, facts)  # this reading counts too
            read = reading[0]
            return read.functions.get(qualname) if read is not None else None

        functions.summarize = summarize

    def save(self) -> None:
        """Store the facts of the modules read lazily (``module_facts``) as far as they
        were worked out: the plugin calls it when mypy writes a module's cache, after
        the questions about that module."""
        for module, (stamp, facts) in list(self._unsaved.items()):
            functions = facts.functions
            if isinstance(functions, model.Functions) and not functions.unsaved():
                continue
            self.store.put(module, stamp, Entry(model.module_json(facts)))

    def _remember(self, located: Located, facts: ModuleFacts | None) -> None:
        self._facts[located.module] = facts
        if located.module not in self.read:
            self.read_order.append(located.path)
            if not located.project:
                self._look_at(located.path)
        self.read[located.module] = located

    def forget(self, modules: frozenset[str] | None = None) -> None:
        """Drop what was computed from ``modules`` (everything when None): the plugin
        calls it when modules read changed. A module's local facts stay, to be used again
        while its file is unchanged (its stamp is checked again)."""
        if modules is None:
            for module, sites in self._sites.items():
                self._keep_summaries(module, sites)
            self._checked.clear()
            self._sources.clear()
            self._memo.clear()
            self._memo_slots.clear()
            self._sites.clear()
            self._unasked_sites.clear()
            self.read.clear()
            self.read_order.clear()
        else:
            self._checked -= modules
            for module in modules:
                self._sources.pop(module, None)
                self._keep_summaries(module, self._sites.pop(module, None))
                self._unasked_sites.pop(module, None)
                for slot in self._memo_slots.pop(module, ()):
                    self._memo.pop(slot, None)
        self._located.clear()
        self._helpers.clear()

    def _keep_summaries(self, module: str, sites: reader.Sites | None) -> None:
        """Keep a forgotten project module's summaries for its next reading, which then
        keeps reuse keys too (a first reading keeps them only with ``keep_keys``: a
        module read once in a build costs no keys)."""
        if sites is not None:
            self._reusable[module] = sites.summarised

    # ------------------------------------------------------------------ names

    def resolve(self, fullname: str, depth: int = 0) -> Target | None:
        """What ``fullname`` names, following re-exports; None: nothing readable."""
        if depth > _NAME_DEPTH:
            return None
        parts = fullname.split(".")
        for i in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:i])
            if self.is_framework(module):
                return None
            located = self.locate(module)
            if located is None:
                continue
            facts = self.module_facts(module)
            if facts is None:
                return None
            return self._in_module(located, facts, parts[i:], depth)
        return None

    def _in_module(
        self, located: Located, facts: ModuleFacts, rest: list[str], depth: int
    ) -> Target | None:
        joined = ".".join(rest)
        function = facts.functions.get(joined)
        if function is not None:
            owner = joined.rpartition(".")[0]
            if function.access == model.CLASSMETHOD and owner in facts.classes:
                # ``Cls.build(x)``: its ``cls`` is ``Cls`` itself
                receiver = f"{facts.module}.{owner}"
                return Target(located, facts, "function", joined, function, receiver=receiver)
            return Target(located, facts, "function", joined, function=function)
        kept = facts.aliases.get(joined) if len(rest) > 1 or "[" in joined else None
        if kept is not None:  # an element of a literal container, a class's attribute
            return Target(located, facts, "alias", joined, alias=kept)
        binding = facts.bindings.get(rest[0])
        if binding is None:
            for star in facts.stars:
                found = self.resolve(".".join([star, *rest]), depth + 1)
                if found is not None:
                    return found
            return None
        if binding.kind == model.IMPORT:
            return self.resolve(".".join([binding.target, *rest[1:]]), depth + 1)
        if binding.kind == model.CLASS:
            cls = facts.classes.get(rest[0])
            if cls is None:
                return None
            if len(rest) == 1:
                return Target(located, facts, "class", rest[0], cls=cls)
            if len(rest) == 2:
                found = self.method(located, facts, cls, rest[1], depth + 1)
                if found is not None and found.function is not None:
                    if found.function.access == model.CLASSMETHOD:
                        # an inherited class method: its ``cls`` is ``Cls``, not its base
                        return dataclasses.replace(found, receiver=f"{facts.module}.{rest[0]}")
                return found
            return None
        if binding.kind == model.ALIAS and len(rest) == 1:
            alias = facts.aliases.get(rest[0])
            if alias is not None:
                return Target(located, facts, "alias", rest[0], alias=alias)
        if binding.kind == model.ALIAS and len(rest) == 2:
            # ``OP.run`` where ``OP = Op(...)``: the method of that very instance
            alias = facts.aliases.get(rest[0])
            if alias is not None:
                held = Target(located, facts, "alias", rest[0], alias=alias)
                return self._kept_instance_member(held, rest[1])
        return None

    def method(
        self, located: Located, facts: ModuleFacts, cls: ClassSummary, name: str, depth: int
    ) -> Target | None:
        """The method ``name`` of ``cls`` or of its bases (depth first)."""
        for found in self._mro(located, facts, cls, depth):
            for method_name, qualname in found[2].methods:
                if method_name == name:
                    function = found[1].functions.get(qualname)
                    if function is None:
                        return None
                    return Target(found[0], found[1], "function", qualname, function=function)
        return None

    def _mro(
        self, located: Located, facts: ModuleFacts, cls: ClassSummary, depth: int
    ) -> Iterator[tuple[Located, ModuleFacts, ClassSummary]]:
        seen: set[str] = set()
        stack: list[tuple[Located, ModuleFacts, ClassSummary, int]] = [(located, facts, cls, depth)]
        while stack:
            here, here_facts, here_cls, here_depth = stack.pop(0)
            key = f"{here_facts.module}.{here_cls.qualname}"
            if key in seen or here_depth > _NAME_DEPTH:
                continue
            seen.add(key)
            yield here, here_facts, here_cls
            for base in here_cls.bases:
                if base == UNKNOWN:
                    continue
                target = self.resolve(base, here_depth + 1)
                if target is not None and target.kind == "class" and target.cls is not None:
                    stack.append((target.located, target.facts, target.cls, here_depth + 1))

    # ------------------------------------------------------------------ memo

    def memoized(
        self, kind: str, key: str, compute: Callable[[], object], module: str | None = None
    ) -> object:
        """``compute()`` once per (kind, key) and version of the modules it read
        (``module``: the module of a target ``compute`` was given already read, whose
        facts it uses without reading them); a cycle gives None."""
        if self._differentiated:
            slot = (f"{kind}-grad", key)
        else:
            slot = (f"{kind}-fwd" if self._forward else kind, key)
        found = self._memo.get(slot)
        if found is not None:
            for reading in self._reading:
                reading.update(found.modules)
            return found.value
        if slot in self._in_progress or len(self._in_progress) > MAX_DEPTH * 4:
            return None  # recursion: nothing from the cycle
        self._in_progress.add(slot)
        self._reading.append({module} if module is not None else set())
        try:
            value = compute()
        finally:
            self._in_progress.discard(slot)
            modules = self._reading.pop()
        for reading in self._reading:
            reading.update(modules)
        self._memo[slot] = _Memo(value, frozenset(modules))
        for module in modules:
            self._memo_slots.setdefault(module, set()).add(slot)
        return value

    def modules_of(self, kind: str, key: str) -> frozenset[str]:
        """The modules the memoized answer (kind, key) was read from."""
        found = self._memo.get((kind, key))
        return found.modules if found is not None else frozenset()

    # ------------------------------------------------------------------ requirements

    def requirement(self, fullname: str) -> Req | None:
        """The requirement of calling ``fullname`` (marker in the caller's terms)."""
        found = self.memoized("req", fullname, lambda: self._callable_req(fullname, 0))
        return found if isinstance(found, Req) else None

    def _callable_req(self, fullname: str, depth: int) -> Req | None:
        if depth > _NAME_DEPTH:
            return None
        if fullname.endswith("]") and "[" in fullname:
            return self._table_req(fullname, depth)
        target = self.resolve(fullname)
        if target is None:
            return None
        found: Req | None = None
        if target.kind == "function" and target.function is not None:
            found = self._function_req(target)
        elif target.kind == "class" and target.cls is not None:
            made = self._instance(target, None, None, None)
            found = made if isinstance(made, Req) else None
        elif target.kind == "alias" and target.alias is not None:
            found = self._alias_req(target, depth)
        return self._with_rules(target, found)

    def requirement_at(self, module: str, line: int) -> Req | None:
        """What the body of the function of ``module`` whose ``def`` is at ``line`` lowers
        for (whatever its decorators do: a registry's decorator returns it unchanged)."""
        facts = self.module_facts(module)
        located = self.locate(module)
        found = self.function_at(module, line)
        if facts is None or located is None or found is None:
            return None
        return self._body_at(Target(located, facts, "function", found.qualname, function=found))

    def function_at(
        self, module: str, line: int, column: int | None = None
    ) -> FunctionSummary | None:
        """The function of ``module`` whose ``def`` is at ``line`` (nested ones included),
        or with ``column``, the lambda at (``line``, ``column``) too."""
        facts = self.module_facts(module)
        if facts is None:
            return None
        lambda_name = f"<lambda:{line}:{column}>"
        for qualname, fn in facts.functions.items():
            last = qualname.rsplit(".", 1)[-1]
            if last.startswith("<lambda:"):
                if column is not None and last == lambda_name:
                    return fn
            elif fn.line == line:
                return fn
        return None

    def _body_at(self, target: Target) -> Req | None:
        found = self.memoized("body", target.key, lambda: self._body(target), target.located.module)
        return found if isinstance(found, Req) else None

    def _body(self, target: Target) -> Req | None:
        fn = target.function
        assert fn is not None
        if fn.blocked is not None or self._reads_platform(fn):
            return None
        return self._program(target, fn.steps)

    def call_requirement(self, module: str, where: tuple[int, int, int, int]) -> Req | None:
        """What the call at ``where`` (line, column, end line, end column) of ``module``
        lowers for, where its interpret mode is known off (no marker)."""
        key = f"{module}:{':'.join(map(str, where))}"
        found = self.memoized("call", key, lambda: self._call_requirement(module, where))
        return found if isinstance(found, Req) else None

    def _module_sites(self, module: str) -> reader.Sites | None:
        """The calls of ``module`` (``reader.Sites``), read once until ``forget``. A
        project module not read yet is read for its facts first: one parse and one
        reading give both (``module_facts``)."""
        if module not in self._sites and module not in self._checked:
            self.module_facts(module)
        kept = self._unasked_sites.pop(module, None)
        if module not in self._sites and kept is not None:
            self._sites[module] = kept()
        if module not in self._sites:
            located = self.locate(module)
            source = self._source(located) if located is not None else None
            if located is None or source is None:
                return None
            self._sites[module] = reader.sites(source, module, located.is_package)
        return self._sites[module]

    def _call_requirement(self, module: str, where: tuple[int, int, int, int]) -> Req | None:
        located = self.locate(module)
        facts = self.module_facts(module)
        if located is None or facts is None:
            return None
        module_sites = self._module_sites(module)
        site = module_sites.call_site(where) if module_sites is not None else None
        if site is None:
            return None
        qualname, all_steps = site
        # a kernel run right there is the entry point's own check (``calls``)
        steps = [step for step in all_steps if not isinstance(step, EntryEvent)]
        fn = facts.functions.get(qualname) if qualname else _MODULE_CALLER
        if fn is None:
            return None
        caller = Target(located, facts, "function", qualname or "<module>", function=fn)
        found = self._program(caller, steps)
        if found is None or found.marker is not None:
            return None
        # the chain of the call itself, without the caller's own "lowers only" link
        return Req(found.platforms, found.cause, found.chain[1:] or found.chain, None)

    def argument_evidence(
        self, module: str, where: tuple[int, int, int, int], arguments: Sequence[reader.Argument]
    ) -> tuple[tuple[str, Evidence], ...]:
        """What the arguments of the entry call at ``where`` of ``module`` prove
        (``reader.Sites.argument_evidence``); nothing when the module cannot be read."""
        if self.is_framework(module):
            return ()
        module_sites = self._module_sites(module)
        return module_sites.argument_evidence(where, arguments) if module_sites else ()

    def kernel_evidence(
        self,
        module: str,
        where: tuple[int, int, int, int],
        argument: reader.Argument | None,
        *,
        decorated: bool,
        applied: bool,
    ) -> tuple[tuple[Evidence, ...], str | None]:
        """The kernel body of the entry call at ``where`` of ``module``
        (``reader.Sites.kernel_evidence``); nothing when the module cannot be read."""
        if self.is_framework(module):
            return (), None
        module_sites = self._module_sites(module)
        if module_sites is None:
            return (), None
        return module_sites.kernel_evidence(where, argument, decorated=decorated, applied=applied)

    def result_requirement(self, fullname: str) -> Req | None:
        """What calling the value ``fullname(...)`` returns lowers for, when both calls
        pass no argument for a parameter deciding interpret mode (its default)."""

        def compute() -> Req | None:
            target = self.resolve(fullname)
            if target is None:
                return None
            caller = Target(target.located, target.facts, "function", "<api>", function=_API_CALLER)
            found = self._result(caller, target, model.NO_ARGS, model.NO_ARGS, 0)
            return found if isinstance(found, Req) else None

        found = self.memoized("result", fullname, compute)
        return found if isinstance(found, Req) else None

    def _table_req(self, fullname: str, depth: int) -> Req | None:
        """``TABLE[key]``: the requirement of the table's entry under ``key`` (a platform
        table's, or what a literal container holds under that index)."""
        entry = self._table_entry(fullname)
        if entry is not None:
            return self._callable_req(entry, depth + 1)
        target = self.resolve(fullname)
        if target is None or target.kind != "alias" or target.alias is None:
            return None
        return self._alias_req(target, depth + 1)

    def _table_entry(self, subscript: str) -> str | None:
        """The fullname ``TABLE[key]`` names: the table's entry under ``key``."""
        table, _, key = subscript[:-1].partition("[")
        target = self.resolve(table)
        alias = target.alias if target is not None else None
        if alias is None or alias.kind != model.TABLE:
            return None
        for entry_key, entry in zip(alias.keys, alias.targets):
            if entry_key == key:
                return entry
        return None

    def _with_rules(self, target: Target, found: Req | None) -> Req | None:
        """A ``custom_vjp`` / ``custom_jvp`` function, differentiated, runs its ``defvjp``
        / ``defjvp`` rules instead of its primal: their requirements (platforms in
        common; a contradiction gives none) replace the primal's, and when no rule
        restricts, nothing does. Not differentiated, the primal runs (``found``)."""
        if not self._differentiated and not self._forward:
            return found  # the rules run only when the function is differentiated
        if "." in target.name or target.name not in target.facts.rules:
            return found
        fn = target.function
        alias = target.alias
        derivative = (fn is not None and fn.derivative) or (
            alias is not None and alias.kind == model.KEEP
        )
        if not derivative:
            return found
        requirement: Req | None = None
        marked = False
        where = self._where(target, fn.line if fn is not None else (alias.line if alias else 1))
        rules = target.facts.rules[target.name]
        if not self._differentiated:
            # ``jax.vjp``'s forward pass: a ``custom_vjp`` runs its forward rule now; a
            # ``custom_jvp`` rule's primal and tangent parts cannot be told apart
            if any(kind == model.RULE_JVP for _, _, kind in rules):
                return None
            rules = tuple(r for r in rules if r[2] == model.RULE_FORWARD)
        for rule, line, _ in rules:
            rule_req = self.requirement(rule)
            if rule_req is None:
                continue
            if rule_req.marker is not None:
                marked = True  # its interpret mode is the primal call's (the same arguments)
                continue
            if requirement is None:
                link = (
                    f"{target.name} ({where}) lowers only for "
                    f"{', '.join(sorted(rule_req.platforms))}: its derivative rule "
                    f"{rule.rsplit('.', 1)[-1]} at {self._where(target, line)} does"
                )
                requirement = _linked(rule_req, link)
            elif requirement.platforms & rule_req.platforms:
                requirement = Req(
                    requirement.platforms & rule_req.platforms,
                    requirement.cause,
                    requirement.chain,
                    requirement.marker,
                )
            else:
                return None
        if requirement is None and marked:
            return found  # the rules run as compiled as the primal does: its requirement
        return requirement

    def _function_req(self, target: Target) -> Req | None:
        found = self.memoized(
            "fn", target.key, lambda: self._compute(target), target.located.module
        )
        return found if isinstance(found, Req) else None

    def is_opaque(self, target: Target) -> bool:
        """Whether a decorator of ``target`` may make a call run something else."""
        fn = target.function
        if fn is None:
            return False
        if fn.opaque:
            return True
        for name in fn.decorators:
            called = name.endswith("()")
            resolved = self.resolve(name[:-2] if called else name)
            if resolved is None:
                return True
            if resolved.kind == "alias" and resolved.alias is not None:
                if resolved.alias.kind == model.KEEPER and not called:
                    continue
                return True
            inner = resolved.function
            wanted = model.KEEPS_FACTORY if called else model.KEEPS
            if inner is None or inner.decorator not in (wanted, model.KEEPS_BOTH):
                return True
        return False

    def _compute(self, target: Target) -> Req | None:
        fn = target.function
        assert fn is not None
        if self.is_opaque(target) or fn.blocked is not None:
            return None
        if fn.decorated_entry is not None:
            found = self._entry_source(target, fn.decorated_entry)
            return found if isinstance(found, Req) else None
        if self._reads_platform(fn):
            return None
        return self._program(target, fn.steps)

    # ------------------------------------------------------------------ programs

    def _program(self, target: Target, steps: Sequence[Step]) -> Req | None:
        """What running ``steps`` (``target``'s body) lowers for (module docstring)."""
        cache: dict[int, list[Req]] = {}
        runs: dict[str, tuple[frozenset[str], list[Req]]] = {}
        for mode in ("compiled", "callers"):
            found: list[Req] = []
            through, returned = self._block(
                target, steps, LOWERING, mode == "callers", found, cache
            )
            runs[mode] = (returned | (through or frozenset()), found)
        compiled, found_compiled = runs["compiled"]
        always, found_always = runs["callers"]
        if _restricts(always) and found_always:
            return _pick(always, found_always, None)
        if _restricts(compiled) and found_compiled:
            markers = {r.marker for r in found_compiled if r.marker is not None}
            if len(markers) == 1:
                return _pick(compiled, found_compiled, next(iter(markers)))
        return None

    def _block(
        self,
        target: Target,
        steps: Sequence[Step],
        allowed: frozenset[str],
        skip_marked: bool,
        found: list[Req],
        cache: dict[int, list[Req]],
    ) -> tuple[frozenset[str] | None, frozenset[str]]:
        """(what the paths falling through ``steps`` allow, None if none does; what the
        paths returning inside them allow), starting from ``allowed``."""
        returned: frozenset[str] = frozenset()
        for step in steps:
            if isinstance(step, (EntryEvent, CallEvent)):
                if id(step) not in cache:
                    cache[id(step)] = self._event_reqs(target, step)
                for req in cache[id(step)]:
                    if skip_marked and req.marker is not None:
                        continue
                    found.append(req)
                    allowed = allowed & req.platforms
            elif isinstance(step, Alt):
                through: frozenset[str] | None = None
                for arm in step.arms:
                    arm_allowed = allowed
                    if arm.platforms is not None:
                        arm_allowed = allowed & frozenset(arm.platforms)
                    arm_through, arm_returned = self._block(
                        target, arm.steps, arm_allowed, skip_marked, found, cache
                    )
                    returned |= arm_returned
                    if arm_through is not None:
                        through = arm_through | (through or frozenset())
                if through is None:
                    return None, returned
                allowed = through
            elif isinstance(step, Return):
                return None, returned | allowed
            elif isinstance(step, Stop):
                return None, returned
        return allowed, returned

    def _event_reqs(self, target: Target, event: EntryEvent | CallEvent) -> list[Req]:
        if isinstance(event, EntryEvent):
            found = self._entry_source(target, event)
            return [found] if isinstance(found, Req) else []
        return self._call_source(target, event)

    def _reads_platform(self, fn: FunctionSummary) -> bool:
        """Whether ``fn`` references a platform helper or platform variable elsewhere."""
        return any(self._is_platform_ref(name) for name in fn.refs)

    def _is_platform_ref(self, name: str) -> bool:
        if name in self._helpers:
            return self._helpers[name]
        self._helpers[name] = False
        result = False
        parts = name.split(".")
        for i in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:i])
            if self.is_framework(module):
                break
            located = self.locate(module)
            if located is None:
                continue
            facts = self.module_facts(module)
            if facts is None:
                break
            rest = parts[i:]
            binding = facts.bindings.get(rest[0])
            function = facts.functions.get(".".join(rest))
            if function is not None:
                result = function.helper == "platform" or (
                    function.helper == "return"
                    and any(self._is_platform_ref(ref) for ref in function.refs)
                )
            elif binding is not None and binding.kind == model.PLATFORM_VALUE:
                result = True
            elif binding is not None and binding.kind == model.IMPORT:
                result = self._is_platform_ref(".".join([binding.target, *rest[1:]]))
            break
        self._helpers[name] = result
        return result

    # ------------------------------------------------------------------ guard helpers

    def memoized_helper(self, fullname: str) -> tuple[Sets | None, bool]:
        """``helper``, kept with the modules it read (``modules_of("helper", ...)``)."""
        found = self.memoized("helper", fullname, lambda: self.helper(fullname))
        if isinstance(found, tuple) and len(found) == 2:
            return found
        return None, False

    def helper(self, fullname: str, depth: int = 0) -> tuple[Sets | None, bool]:
        """(platforms when it returns true, when false) of a guard helper, and whether it
        returns the platform itself (a platform helper); (None, False) for anything else."""
        if depth > _NAME_DEPTH:
            return None, False
        target = self.resolve(fullname)
        if target is not None and target.alias is not None:
            alias = target.alias
            if alias.kind in (model.REF, model.KEEP) and len(alias.targets) == 1:
                return self.helper(alias.targets[0], depth + 1)
            return None, False
        if target is None or target.function is None or target.function.condition is None:
            return None, False
        fn = target.function
        if self.is_opaque(target):
            return None, False
        if fn.condition == ["source"]:
            return None, True
        sets = self._sets(fn.condition, depth)
        return (None, False) if sets == (None, None) else (sets, False)

    def _sets(self, condition: object, depth: int, ask: Ask | None = None) -> Sets:
        """What a ``model.Condition`` says: (platforms when true, when false), None
        where not known. ``ask`` answers its ``["ask", ...]`` leaves (the plugin's
        platform predicates); without it they are not known."""
        if not isinstance(condition, list) or not condition:
            return None, None
        kind = condition[0]
        if kind == "cmp" and len(condition) == 3 and isinstance(condition[2], list):
            return _compared(condition[1], condition[2])
        if kind == "helper cmp" and len(condition) == 4 and isinstance(condition[3], list):
            _, returns_platform = self.helper(str(condition[1]), depth + 1)
            return _compared(condition[2], condition[3]) if returns_platform else (None, None)
        if kind == "not" and len(condition) == 2:
            true_set, false_set = self._sets(condition[1], depth, ask)
            return false_set, true_set
        if kind in ("and", "or"):
            result: Sets | None = None
            for part in condition[1:]:
                sets = self._sets(part, depth, ask)
                result = sets if result is None else _join(kind, result, sets)
            return result if result is not None else (None, None)
        if kind == "call" and len(condition) == 2:
            found, _ = self.helper(str(condition[1]), depth + 1)
            return found if found is not None else (None, None)
        if kind == "sets" and len(condition) == 3:
            return _platform_set(condition[1]), _platform_set(condition[2])
        if kind in ("true only", "false only") and len(condition) == 2:
            true_set, false_set = self._sets(condition[1], depth, ask)
            return (true_set, None) if kind == "true only" else (None, false_set)
        if kind == "ask" and len(condition) == 4 and ask is not None:
            span, positions, keywords = condition[1], condition[2], condition[3]
            if (
                isinstance(span, list)
                and isinstance(positions, list)
                and isinstance(keywords, list)
            ):
                where = (int(span[0]), int(span[1]), int(span[2]), int(span[3]))
                answer = ask(
                    where, tuple(int(p) for p in positions), tuple(str(k) for k in keywords)
                )
                return answer if answer is not None else (None, None)
        return None, None

    def condition_sets(
        self, module: str, where: tuple[int, int, int, int], ask: Ask | None
    ) -> tuple[Sets, tuple[str, ...]]:
        """What the expression at ``where`` of ``module`` tests (``reader.Sites.
        condition_at``), and the helpers it calls (for the plugin's dependencies);
        ((None, None), ()) when not known."""
        if self.is_framework(module):
            return (None, None), ()
        module_sites = self._module_sites(module)
        condition = module_sites.condition_at(where) if module_sites is not None else None
        if condition is None:
            return (None, None), ()
        return self._sets(condition, 0, ask), tuple(_helpers_in(condition))

    def predicate_sets(
        self, module: str, line: int, name: str, parameter: str, ask: Ask | None
    ) -> tuple[Sets, tuple[str, ...]]:
        """What the platform predicate ``name`` of ``module`` defined at ``line``
        returns of its ``parameter`` as a device (``reader.Sites.predicate_condition``),
        and the helpers it calls; ((None, None), ()) when it is none."""
        if self.is_framework(module):
            return (None, None), ()
        module_sites = self._module_sites(module)
        if module_sites is None:
            return (None, None), ()
        condition = module_sites.predicate_condition(line, name, parameter)
        if condition is None:
            return (None, None), ()
        return self._sets(condition, 0, ask), tuple(_helpers_in(condition))

    def device_parameters(self, module: str, line: int, name: str) -> tuple[str, ...]:
        """The ``jax.Device`` parameters of the function ``name`` of ``module`` defined
        at ``line`` (``reader.Sites.device_parameters``)."""
        module_sites = None if self.is_framework(module) else self._module_sites(module)
        return module_sites.device_parameters(line, name) if module_sites is not None else ()

    def is_platform_source(
        self, module: str, where: tuple[int, int, int, int]
    ) -> tuple[bool, tuple[str, ...]]:
        """Whether the expression at ``where`` of ``module`` is the platform itself
        (``jax.default_backend()``, ``<device>.platform``, a variable holding one, a
        call of a platform helper), and the helpers that says so read."""
        if self.is_framework(module):
            return False, ()
        module_sites = self._module_sites(module)
        condition = module_sites.condition_at(where) if module_sites is not None else None
        if condition == ["source"]:
            return True, ()
        if isinstance(condition, list) and len(condition) == 2 and condition[0] == "call":
            return self.helper(str(condition[1]))[1], (str(condition[1]),)
        return False, ()

    def interpret_kept_off(
        self, module: str, where: tuple[int, int, int, int]
    ) -> tuple[str, str, str] | None:
        """Whether the name at ``where`` of ``module`` (an entry call's ``interpret=``)
        is a parameter the module keeps off (``reader.Sites.interpret_kept_off``)."""
        module_sites = self._module_sites(module)
        return module_sites.interpret_kept_off(where) if module_sites is not None else None

    # ------------------------------------------------------------------ sources

    def _where(self, target: Target, line: int) -> str:
        return f"{target.located.relpath}:{line}"

    def _short(self, target: Target) -> str:
        return target.name.rsplit(".", 1)[-1]

    def _entry_source(
        self,
        target: Target,
        event: EntryEvent,
        through: str | None = None,
        *,
        returned: bool = False,
    ) -> Req | _Drop:
        """The requirement one entry event gives (``through``: how notes name the call
        when it goes through a wrapper; ``returned``: the kernel is returned, not run)."""
        fn = target.function
        assert fn is not None
        marker = _lift(event.interpret, fn)
        if isinstance(marker, _Drop):
            return DROP
        platforms: frozenset[str] = LOWERING
        cause: tuple[str, str, str] | None = None
        detail = ""
        row = evidence_tables.ROW_OF_BACKEND.get(event.params)
        if row is not None:
            platforms = platforms & frozenset(row.lowers_on)
            cause = ("params", row.platform, row.backend)
            detail = f"takes {row.title} params"
        evidence: list[Evidence] = list(event.evidence)
        if event.kernel is not None:
            evidence.extend(self._kernel_evidence(event.kernel, event.line))
        for ev in evidence:
            ev_platforms = frozenset(
                p for b in ev.backends for p in evidence_tables.ROW_OF_BACKEND[b].lowers_on
            )
            if not (platforms & ev_platforms):
                return DROP  # params against evidence: a contradiction, not a requirement
            platforms = platforms & ev_platforms
            if cause is None:
                backend = sorted(ev.backends)[0]
                cause = ("evidence", backend, backend)
                label = evidence_tables.BACKEND_LABEL[backend]
                detail = f"uses {ev.what} (line {ev.line}), {label}-only"
        if cause is None or platforms == LOWERING:
            return DROP
        title = ENTRIES[event.entry].title
        what = through or f"its {title} at {self._where(target, event.line)}"
        plats = ", ".join(sorted(platforms))
        head = f"{self._short(target)} ({self._where(target, fn.line)})"
        if returned:
            note = f"{head} returns a kernel that lowers only for {plats}: {what} {detail}"
        else:
            note = f"{head} lowers only for {plats}: {what} {detail}"
        return Req(platforms, cause, (note,), marker)

    def _kernel_evidence(self, kernel: str, line: int) -> list[Evidence]:
        target = self.resolve(kernel)
        if target is None or target.function is None:
            return []
        fn = target.function
        short = kernel.rsplit(".", 1)[-1]
        return [
            Evidence(ev.backends, f"{ev.what} (in {short}, {self._where(target, ev.line)})", line)
            for ev in fn.body_evidence
        ]

    def body_evidence(self, fullname: str) -> tuple[Evidence, ...]:
        """The backend-only primitives a kernel body (and what it calls) uses."""
        target = self.resolve(fullname)
        if target is None or target.function is None:
            return ()
        return target.function.body_evidence

    def _call_source(self, caller: Target, event: CallEvent) -> list[Req]:
        """What one call event restricts: its callee's requirement, and when the result
        is called, what the callee returns (the program builder makes alternatives of
        a choice between callees: an event has one)."""
        if len(event.targets) != 1:
            return []
        return self._one_call(caller, event, event.targets[0])

    def _callee(self, caller: Target, name: str) -> Target | _Drop | None:
        """The target a call event names (``self:NAME`` resolved through the class)."""
        if name.startswith("self:"):
            callee = self._self_method(caller, name[len("self:") :])
            return DROP if callee is None else callee
        if name.startswith("super:"):
            callee = self._super_method(caller, name[len("super:") :])
            return DROP if callee is None else callee
        if name.endswith("]") and "[" in name:
            entry = self._table_entry(name)
            if entry is not None:
                return self.resolve(entry)
        return self.resolve(name)

    def _one_call(self, caller: Target, event: CallEvent, name: str) -> list[Req]:
        if event.differentiated and not self._differentiated:
            self._differentiated = True
            try:
                return self._one_call(caller, event, name)
            finally:
                self._differentiated = False
        if event.forward and not self._forward and not self._differentiated:
            self._forward = True
            try:
                return self._one_call(caller, event, name)
            finally:
                self._forward = False
        fn = caller.function
        assert fn is not None
        target = self._callee(caller, name)
        if target is None or isinstance(target, _Drop):
            return []  # not read: known library code, or nothing found
        short = self._short(target) if not name.startswith("self:") else name[5:]
        at = self._where(caller, event.line)
        if event.as_entry is not None:
            through = self._through_wrapper(target, event)
            if through is not None:
                where = self._where(caller, event.as_entry.line)
                found = self._entry_source(
                    caller, event.as_entry, f"its call of {short} at {where} ({through})"
                )
                return [found] if isinstance(found, Req) else []
        prefix = f"{self._short(caller)} ({self._where(caller, fn.line)}) lowers only for "
        if event.mode == model.METHOD:
            target = self._through_references(target)
            if target.kind != "class" or target.cls is None:
                return []  # a factory's result: not followed
            member = self._member(target, event.attr, exact=True)
            if _is_property(member) and member is not None and event.then is not None:
                return self._property_call(caller, member, event.then, prefix, at)
            made = self._instance_member(target, event.attr, event.args, event.then, fn)
            if not isinstance(made, Req):
                return []
            plats = ", ".join(sorted(made.platforms))
            link = (
                f"{prefix}{plats}: it calls {event.attr} of a {target.name} at {at}, "
                f"which lowers only for {plats}"
            )
            return [_linked(made, link)]
        if target.kind == "class" and target.cls is not None:
            if event.mode != model.RESULT:
                return []  # a constructor call runs no kernel
            made = self._instance(target, event.args, event.then, fn)
            if not isinstance(made, Req):
                return []
            plats = ", ".join(sorted(made.platforms))
            link = (
                f"{prefix}{plats}: it calls a {target.name} at {at}, "
                f"whose __call__ lowers only for {plats}"
            )
            return [_linked(made, link)]
        if _is_property(target) and event.mode == model.CALL:
            return self._property_call(caller, target, event.args, prefix, at)
        out: list[Req] = []
        own = self._callee_req(target)
        if own is not None:
            marker = self._call_marker(own, event, caller, target)
            if not isinstance(marker, _Drop):
                plats = ", ".join(sorted(own.platforms))
                nested = target.name.startswith(f"{caller.name}.<locals>.")
                what = f"its nested {short}" if nested and "<lambda" not in short else short
                link = f"{prefix}{plats}: it calls {what} at {at}"
                out.append(_linked(Req(own.platforms, own.cause, own.chain, marker), link))
        if event.mode == model.RESULT and event.then is not None:
            result = self._result(caller, target, event.args, event.then, 0, event.item)
            if isinstance(result, Req):
                plats = ", ".join(sorted(result.platforms))
                link = f"{prefix}{plats}: it calls what {short} returns at {at}"
                out.append(_linked(result, link))
        return out

    def _through_references(self, target: Target) -> Target:
        """What a name bound to another name (``cls = TpuOp``, a container's element)
        stands for."""
        for _ in range(_NAME_DEPTH):
            alias = target.alias
            if alias is None or alias.kind != model.REF or len(alias.targets) != 1:
                break
            inner = self.resolve(alias.targets[0])
            if inner is None:
                break
            target = inner
        return target

    def _property_call(
        self, caller: Target, getter: Target, then: CallArgs, prefix: str, at: str
    ) -> list[Req]:
        """``obj.prop(x)``: reading the property runs its getter; the call calls what it
        returns."""
        out: list[Req] = []
        own = self._callee_req(getter)
        if own is not None and own.marker is None:
            plats = ", ".join(sorted(own.platforms))
            out.append(_linked(own, f"{prefix}{plats}: it reads {getter.name} at {at}"))
        result = self._result(caller, getter, model.NO_ARGS, then, 0)
        if isinstance(result, Req):
            plats = ", ".join(sorted(result.platforms))
            link = f"{prefix}{plats}: it calls what {getter.name} returns at {at}"
            out.append(_linked(result, link))
        return out

    def _callee_req(self, target: Target) -> Req | None:
        if target.kind == "function" and target.function is not None:
            return self._with_rules(target, self._function_req(target))
        if target.kind == "alias":
            return self.requirement(target.fullname)
        return None

    def _call_marker(
        self, own: Req, event: CallEvent, caller: Target, target: Target
    ) -> Marker | _Drop:
        if target.kind == "function" and target.function is not None:
            if target.function.is_method and not event.bound and own.marker is not None:
                return DROP  # an unbound method call: positions shift
        return self._translate(own.marker, event.args, event.bound, caller, target)

    def _translate(
        self, marker: Marker, args: CallArgs, bound: bool, caller: Target, callee: Target
    ) -> Marker | _Drop:
        """A callee's marker seen from a call of it in ``caller`` (``_translate``), a
        config object's field followed through what the caller passes."""
        if marker is None or marker[0] != "c":
            return _translate(marker, args, bound, caller, callee)
        _, name, position, default, field_name, cls = marker
        passed = args.passed(("p", name, position, default))
        if not isinstance(passed, str):
            return DROP
        fn = caller.function
        assert fn is not None
        if passed.startswith("p:"):
            param = next((p for p in fn.params if p.name == passed[2:]), None)
            found = _param_marker(fn, passed[2:])
            if param is None or found is None or param.rebound:
                return DROP
            return ("c", found[0], str(found[1]), found[2], field_name, param.annotation or cls)
        if passed.startswith("n:") and passed.endswith(")"):
            made, _, fields = passed[2:-1].partition("(")
            given = dict(item.partition("=")[::2] for item in fields.split(",") if item)
            if field_name in given:
                return None if given[field_name] == FALSE else DROP
            return None if self.field_default(made, field_name) == FALSE else DROP
        return DROP

    def field_default(self, cls: str, field_name: str) -> str:
        """The literal default (an ``ArgSum``) of a class's field, or ``?``."""
        target = self.resolve(cls)
        if target is None or target.cls is None:
            return UNKNOWN
        for _, _, summary in self._mro(target.located, target.facts, target.cls, 0):
            for name, value in summary.defaults:
                if name == field_name:
                    return value
            for param in summary.fields or ():
                if param.name == field_name:
                    return param.default
        return UNKNOWN

    # ------------------------------------------------------------------ results

    def _result(
        self,
        caller: Target,
        factory: Target,
        args: CallArgs,
        then: CallArgs,
        depth: int,
        item: int = -1,
    ) -> Req | _Drop:
        """What calling the value ``factory(args)`` returns with ``then`` runs, in
        ``caller``'s terms (markers translated through ``args`` and ``then``); ``item``:
        the item of the returned tuple that is called (-1: the returned value)."""
        if depth > MAX_DEPTH:
            return DROP
        fn = caller.function
        assert fn is not None
        if item >= 0 and factory.kind != "function":
            return DROP  # only a function's ``return a, b`` is read item by item
        if factory.kind == "class" and factory.cls is not None:
            made = self._instance(factory, args, then, fn)
            return made if isinstance(made, Req) else DROP
        if factory.kind == "alias" and factory.alias is not None:
            alias = factory.alias
            if alias.kind in (model.REF, model.KEEP, model.PARTIAL) and len(alias.targets) == 1:
                inner = self.resolve(alias.targets[0])
                if inner is not None:
                    bound = (
                        model.partial_args(alias.args, args)
                        if alias.kind == model.PARTIAL
                        else args
                    )
                    return self._result(caller, inner, bound, then, depth + 1)
            return DROP
        made_fn = factory.function
        if made_fn is None or self.is_opaque(factory) or made_fn.blocked is not None:
            return DROP
        values = list(_returns(made_fn.steps, item))
        if not values or any(v is None for v in values):
            return DROP
        results: list[Req] = []
        for value in values:
            assert value is not None
            one = self._returned(caller, factory, value, args, then, depth)
            if not isinstance(one, Req):
                return DROP
            results.append(one)
        platforms = frozenset().union(*(r.platforms for r in results))
        if not _restricts(platforms) or any(r.marker != results[0].marker for r in results):
            return DROP
        first = results[0]
        return Req(platforms, first.cause, first.chain, first.marker)

    def _returned(
        self,
        caller: Target,
        factory: Target,
        value: EntryEvent | CallEvent,
        args: CallArgs,
        then: CallArgs,
        depth: int,
    ) -> Req | _Drop:
        """What calling one value ``factory`` returns runs, in ``caller``'s terms."""
        made_fn = factory.function
        assert made_fn is not None
        short = self._short(factory)
        head = f"{short} ({self._where(factory, made_fn.line)})"
        if isinstance(value, EntryEvent):
            found = self._entry_source(factory, value, returned=True)
            if not isinstance(found, Req):
                return DROP
            entry_marker = self._translate(found.marker, args, False, caller, factory)
            if isinstance(entry_marker, _Drop):
                return DROP
            return Req(found.platforms, found.cause, found.chain, entry_marker)
        # a function or a call's result: its arguments are the factory's (``p:``) or
        # those the caller passes to the returned value (``@``)
        inner_args = _substitute(value.args, made_fn, args, then)
        if inner_args is None:
            return DROP
        name = value.targets[0]
        inner = self._callee(factory, name)
        if inner is None or isinstance(inner, _Drop):
            return DROP
        if value.mode == model.RESULT:
            inner_then = _substitute(value.then, made_fn, args, then) if value.then else None
            if inner_then is None:
                return DROP
            found_result = self._result(caller, inner, inner_args, inner_then, depth + 1)
            if not isinstance(found_result, Req):
                return DROP
            plats = ", ".join(sorted(found_result.platforms))
            what = (
                f"a {inner.name}" if inner.kind == "class" else f"what {self._short(inner)} returns"
            )
            link = (
                f"{head} returns {what} at {self._where(factory, value.line)}, "
                f"which lowers only for {plats}"
            )
            return _linked(found_result, link)
        own = self._callee_req(inner)
        if own is None:
            return DROP
        marker: Marker | _Drop
        if own.marker is not None and own.marker[0] == "o" and ".<locals>." in inner.name:
            # a closure's free variable: the factory's own parameter
            passed = args.passed(_param_marker_of(made_fn, own.marker[1]))
            marker = _lift(passed, caller.function)
        else:
            marker = self._translate(own.marker, inner_args, value.bound, caller, inner)
        if isinstance(marker, _Drop):
            return DROP
        plats = ", ".join(sorted(own.platforms))
        link = (
            f"{head} returns {self._short(inner)} at {self._where(factory, value.line)}, "
            f"which lowers only for {plats}"
        )
        return _linked(Req(own.platforms, own.cause, own.chain, marker), link)

    # ------------------------------------------------------------------ wrappers

    def _through_wrapper(self, target: Target, event: CallEvent) -> str | None:
        """How notes name the wrapper ``target`` is, when ``event`` calls it the way
        its ``as_entry`` reading assumes: a wrapper of ``pl.pallas_call`` that passes its
        parameters on under the same names and positions (or its ``**kwargs``), called
        (or its result called) where the kernel runs."""
        found = self._wrapper_target(target, 0)
        if found is None or found.function is None:
            return None
        wrapper = found.function.wrapper or self._composed_wrapper(found, 0)
        if wrapper is None:
            return None
        spec = ENTRIES.get(wrapper.entry)
        if spec is None or spec.positional != ("kernel", "out_shape") or spec.body is None:
            return None
        if wrapper.deferred != (event.mode == model.RESULT):
            return None
        as_entry = event.as_entry
        if as_entry is None:
            return None
        kernel_from, params_from = as_entry.via
        sources = {formal: (param, str(position)) for formal, param, position in wrapper.forwards}
        if spec.body not in sources or kernel_from not in sources[spec.body]:
            return None
        if "compiler_params" in sources:
            if params_from not in sources["compiler_params"]:
                return None
        elif wrapper.kwargs is None or params_from != "compiler_params":
            return None
        where = f"{found.located.relpath}:{found.function.line}"
        return f"a wrapper of {spec.title}, {where}"

    def wrapper_of(self, fullname: str) -> tuple[Target, model.WrapperFact] | None:
        """The function ``fullname`` names and how it forwards to an entry point, if it
        is a wrapper (``_wrapper_target``); the modules read: ``modules_of("wrapper-of", ...)``."""
        found = self.memoized("wrapper-of", fullname, lambda: self._wrapper_of(fullname))
        return found if isinstance(found, tuple) else None

    def _wrapper_of(self, fullname: str) -> tuple[Target, model.WrapperFact] | None:
        target = self.resolve(fullname)
        found = self._wrapper_target(target, 0) if target is not None else None
        if found is None or found.function is None:
            return None
        fact = found.function.wrapper or self._composed_wrapper(found, 0)
        return (found, fact) if fact is not None else None

    def _wrapper_target(self, target: Target, depth: int) -> Target | None:
        if depth > _NAME_DEPTH:
            return None
        if target.kind == "function":
            fn = target.function
            if fn is None or self.is_opaque(target):
                return None
            if fn.wrapper is None and self._composed_wrapper(target, depth) is None:
                return None
            return target
        if target.kind == "alias" and target.alias is not None:
            alias = target.alias
            if alias.kind in (model.REF, model.KEEP) and len(alias.targets) == 1:
                inner = self.resolve(alias.targets[0])
                return self._wrapper_target(inner, depth + 1) if inner is not None else None
        return None

    def _composed_wrapper(self, target: Target, depth: int) -> model.WrapperFact | None:
        """A function passing its own parameters on to another wrapper on every path
        (tokamax's ``static_scheduling_persistent_kernel`` calls ``_persistent_kernel``
        with its ``body`` and ``**kwargs``): a wrapper of that wrapper's entry point."""
        found = self.memoized(
            "wrapper",
            target.fullname,
            lambda: self._compose_through_calls(target, depth),
            target.located.module,
        )
        return found if isinstance(found, model.WrapperFact) else None

    def _compose_through_calls(self, target: Target, depth: int) -> model.WrapperFact | None:
        fn = target.function
        if fn is None or depth > _NAME_DEPTH:
            return None
        for step in fn.steps:
            if not isinstance(step, CallEvent) or len(step.targets) != 1:
                continue
            inner = self._callee(target, step.targets[0])
            if inner is None or isinstance(inner, _Drop) or inner.function is None:
                continue
            if inner.fullname == target.fullname or self._wrapper_target(inner, depth + 1) is None:
                continue
            fact = inner.function.wrapper or self._composed_wrapper(inner, depth + 1)
            if fact is None:
                continue
            composed = self._compose(fact, step.args, fn)
            if composed is not None:
                return composed
        return None

    def _compose(
        self, inner: model.WrapperFact, args: CallArgs, fn: FunctionSummary
    ) -> model.WrapperFact | None:
        spec = ENTRIES.get(inner.entry)
        if spec is None or spec.body is None:
            return None
        forwards: list[tuple[str, str, int]] = []
        for formal, param, position in inner.forwards:
            passed = args.passed(("p", param, str(position), model.REQUIRED))
            if isinstance(passed, str) and passed.startswith("p:"):
                found = _param_marker(fn, passed[2:])
                if found is not None:
                    forwards.append((formal, found[0], found[1]))
        kwargs: str | None = None
        if inner.kwargs is not None:
            own = [s[2:] for s in args.star_kwargs if s.startswith("p:")]
            splat = next((p for p in fn.params if own and p.name == own[0]), None)
            if len(own) == 1 and len(args.star_kwargs) == 1 and splat is not None:
                if splat.kind == model.DSTAR:
                    kwargs = splat.name
        names = {f[0] for f in forwards}
        if spec.body not in names or ("compiler_params" not in names and kwargs is None):
            return None
        return model.WrapperFact(
            inner.entry, tuple(sorted(forwards)), kwargs, inner.deferred, inner.line, None
        )

    # ------------------------------------------------------------------ classes

    def _member(self, cls_target: Target, name: str, exact: bool, after: str = "") -> Target | None:
        """What ``name`` of an instance of ``cls_target``'s class is, looked up through the
        class and its bases in Python's order (``_linearized``): a method (``exact``: the
        instance is of this very class, so the method runs with it as its receiver) or a
        callable attribute the class sets (``reader._attribute_aliases``). ``after``: the
        fullname of the class ``super()`` is written in (only the classes after it
        count). None when nothing is found, when a base the engine does not read comes
        first (it may define the name), or when a method and an instance attribute share
        the name."""
        order = self._linearized(cls_target)
        if after:
            names = [f"{e[1].module}.{e[2].qualname}" if e is not None else "" for e in order]
            if after not in names:
                return None
            order = order[names.index(after) + 1 :]
        receiver = cls_target.fullname if exact else ""
        method: Target | None = None
        kept: Target | None = None
        for entry in order:
            if entry is None:
                if method is None and kept is None:
                    return None  # a base not read comes first: it may define the name
                continue
            located, facts, found = entry
            key = f"{found.qualname}.{name}"
            alias = facts.aliases.get(key)
            if alias is not None and kept is None and method is None:
                kept = Target(located, facts, "alias", key, alias=alias)
            qualname = dict(found.methods).get(name)
            if qualname is not None and method is None:
                function = facts.functions.get(qualname)
                if function is None:
                    return None
                method = Target(
                    located, facts, "function", qualname, function=function, receiver=receiver
                )
        if method is not None and kept is not None:
            return None
        return method or kept

    def _linearized(
        self, cls_target: Target
    ) -> list[tuple[Located, ModuleFacts, ClassSummary] | None]:
        """The class of ``cls_target`` and its bases in the order Python looks names up:
        depth first, left to right, each class at its last place (as C3 orders the
        hierarchies libraries write); None stands for a base the engine does not read."""
        cls = cls_target.cls
        if cls is None:
            return []
        out: list[tuple[Located, ModuleFacts, ClassSummary] | None] = []

        def visit(located: Located, facts: ModuleFacts, here: ClassSummary, depth: int) -> None:
            if depth > _NAME_DEPTH or len(out) > 64:
                out.append(None)
                return
            out.append((located, facts, here))
            for base in here.bases:
                if base in _BARE_BASES:
                    continue
                found = self.resolve(base) if base != UNKNOWN else None
                if found is None or found.kind != "class" or found.cls is None:
                    out.append(None)
                    continue
                visit(found.located, found.facts, found.cls, depth + 1)

        visit(cls_target.located, cls_target.facts, cls, 0)
        last: dict[str, int] = {}
        for i, entry in enumerate(out):
            if entry is not None:
                last[f"{entry[1].module}.{entry[2].qualname}"] = i
        return [
            entry
            for i, entry in enumerate(out)
            if entry is None or last[f"{entry[1].module}.{entry[2].qualname}"] == i
        ]

    def _self_class(self, caller: Target) -> tuple[Target, bool, str] | None:
        """(the class ``self`` is an instance of in the method ``caller``, whether exactly
        (the caller runs with a known receiver), the fullname of the class the method is
        written in)."""
        fn = caller.function
        assert fn is not None
        if not fn.is_method or "." not in fn.qualname:
            return None
        class_name = fn.qualname.rsplit(".", 1)[0]
        cls = caller.facts.classes.get(class_name)
        if cls is None:
            return None
        written_in = f"{caller.facts.module}.{class_name}"
        if caller.receiver:
            receiver = self.resolve(caller.receiver)
            if receiver is None or receiver.kind != "class" or receiver.cls is None:
                return None
            return receiver, True, written_in
        return Target(caller.located, caller.facts, "class", class_name, cls=cls), False, written_in

    def _self_method(self, caller: Target, name: str) -> Target | None:
        """``self.NAME`` (``self.ATTR.NAME``: a method of an instance ``self`` keeps) in the
        method ``caller``, through the class of the instance it runs on."""
        found = self._self_class(caller)
        if found is None:
            return None
        cls_target, exact, written_in = found
        attr, _, then = name.partition(".")
        member = self._member(cls_target, attr, exact)
        if member is None or (member.kind == "alias" and self._field_given(member, attr, None)):
            return None
        class_name = written_in[len(caller.facts.module) + 1 :]
        if not exact and self._overridden_below(caller, class_name, attr):
            return None  # an instance of a subclass runs another method
        if then:
            return self._kept_instance_member(member, then)
        return member

    def _super_method(self, caller: Target, name: str) -> Target | None:
        """``super().NAME`` in the method ``caller``: the classes after the one it is
        written in, in the order of the instance's class."""
        found = self._self_class(caller)
        if found is None:
            return None
        cls_target, exact, written_in = found
        return self._member(cls_target, name, exact, after=written_in)

    def _field_given(self, kept: Target, name: str, ctor: CallArgs | None) -> bool:
        """Whether ``kept`` is a dataclass field's default that the constructor call
        ``ctor`` (None: one not known) may replace."""
        owner = kept.facts.classes.get(kept.name.rpartition(".")[0])
        fields = owner.fields if owner is not None else None
        if fields is None:
            return False
        position = next((i for i, f in enumerate(fields) if f.name == name), None)
        if position is None:
            return False
        if ctor is None:
            return True
        return (
            ctor.keyword(name) is not None
            or position < len(ctor.positional)
            or ctor.star
            or bool(ctor.star_kwargs)
        )

    def _kept_instance_member(self, kept: Target, name: str) -> Target | None:
        """The method ``name`` of the instance an attribute holds (``self.op = Op()``)."""
        alias = kept.alias
        if alias is None or alias.kind != model.INSTANCE or len(alias.targets) != 1:
            return None
        made = self.resolve(alias.targets[0])
        if made is None or made.kind != "class" or made.cls is None or made.cls.opaque:
            return None
        member = self._member(made, name, exact=True)
        if member is None or member.kind != "function" or alias.args.star:
            return None
        return member

    def _kept_req(self, kept: Target) -> Req | None:
        """What calling a callable an instance or container keeps lowers for."""
        found = self.memoized(
            "kept", kept.key, lambda: self._alias_req(kept, 0), kept.located.module
        )
        return found if isinstance(found, Req) else None

    def _overridden_below(self, caller: Target, class_name: str, name: str) -> bool:
        """Whether a class of the caller's module that derives from ``class_name``
        defines ``name`` itself."""
        base = f"{caller.facts.module}.{class_name}"
        for cls in caller.facts.classes.values():
            if cls.qualname == class_name or name not in dict(cls.methods):
                continue
            for _, _, ancestor in self._mro(caller.located, caller.facts, cls, 0):
                if f"{caller.facts.module}.{ancestor.qualname}" == base:
                    return True
        return False

    def _instance(
        self,
        target: Target,
        ctor: CallArgs | None,
        then: CallArgs | None,
        caller: FunctionSummary | None,
    ) -> Req | _Drop:
        """The requirement of calling an instance of ``target``'s class, built with
        ``ctor`` arguments (None: as the class itself, for its API entry) and called
        with ``then`` (None: by someone else)."""
        return self._instance_member(target, "__call__", ctor, then, caller)

    def _instance_member(
        self,
        target: Target,
        name: str,
        ctor: CallArgs | None,
        then: CallArgs | None,
        caller: FunctionSummary | None,
    ) -> Req | _Drop:
        """The requirement of calling the member ``name`` (a method, or a callable the
        instance keeps) of an instance of ``target``'s class, built with ``ctor``
        arguments (None: by someone else, maybe as a subclass's instance) and called
        with ``then`` (None: by someone else)."""
        cls = target.cls
        assert cls is not None
        if cls.opaque:
            return DROP
        call = self._member(target, name, exact=ctor is not None)
        if call is None or (call.kind == "alias" and self._field_given(call, name, ctor)):
            return DROP
        if call.kind == "function" and call.function is not None:
            found: Req | None = self._function_req(call)
        elif call.kind == "alias" and call.alias is not None:
            found = self._kept_req(call)
            if found is not None and found.marker is not None and found.marker[0] == "p":
                if then is None or caller is None:
                    return DROP
                kept = _lift(then.passed(found.marker), caller)
                return DROP if isinstance(kept, _Drop) else _with_marker(found, kept)
        else:
            return DROP
        if not isinstance(found, Req):
            return DROP
        marker = found.marker
        result: Marker | _Drop
        if marker is None:
            result = None
        elif marker[0] == "p":
            if then is None or caller is None:
                return DROP
            result = _lift(then.passed(marker), caller)
        elif marker[0] == "a":
            result = self._from_constructor(target, cls, marker[1], ctor, caller)
        elif marker[0] == "k":
            result = self._from_constructor_kwargs(target, cls, marker, ctor, caller)
        else:
            result = DROP
        if isinstance(result, _Drop):
            return DROP
        return Req(found.platforms, found.cause, found.chain, result)

    def _init_of(self, target: Target, cls: ClassSummary) -> Target | None:
        return self.method(target.located, target.facts, cls, "__init__", 0)

    def _constructor_param(
        self, target: Target, cls: ClassSummary, attr: str
    ) -> tuple[str, int, str] | None:
        """(parameter, position, default) of the constructor that ``self.attr`` holds."""
        if cls.fields is not None and self._init_of(target, cls) is None:
            for i, param in enumerate(cls.fields):
                if param.name == attr:
                    return (param.name, i, param.default)
            return None
        init = self._init_of(target, cls)
        if init is None or init.function is None:
            return None
        source = dict(init.function.self_attrs).get(attr)
        if source is None or not source.startswith("p:"):
            return None
        return _param_marker(init.function, source[2:])

    def _from_constructor(
        self,
        target: Target,
        cls: ClassSummary,
        attr: str,
        ctor: CallArgs | None,
        caller: FunctionSummary | None,
    ) -> Marker | _Drop:
        param = self._constructor_param(target, cls, attr)
        if param is None:
            return DROP
        name, position, default = param
        if default not in (FALSE, model.REQUIRED):
            return DROP
        marker = ("p", name, str(position), default)
        if ctor is None:
            return marker  # the class itself: its constructor's parameter
        if caller is None:
            value = ctor.passed(marker)
            return None if value == FALSE else DROP
        return _lift(ctor.passed(marker), caller)

    def _from_constructor_kwargs(
        self,
        target: Target,
        cls: ClassSummary,
        marker: tuple[str, ...],
        ctor: CallArgs | None,
        caller: FunctionSummary | None,
    ) -> Marker | _Drop:
        _, attr, key, fallback = marker
        init = self._init_of(target, cls)
        if init is None or init.function is None or ctor is None:
            return DROP
        if dict(init.function.self_attrs).get(attr) != "kwargs":
            return DROP
        named = {p.name for p in init.function.params if p.kind != model.DSTAR}
        value: ArgSum | tuple[str, ...]
        given = ctor.keyword(key)
        if key in named:
            value = fallback
        elif given is not None:
            value = given
        elif ctor.star_kwargs:
            return DROP
        else:
            value = fallback
        if caller is None:
            return None if value == FALSE else DROP
        return _lift(value, caller)

    def _alias_req(self, target: Target, depth: int) -> Req | None:
        alias = target.alias
        assert alias is not None
        if alias.kind in (model.TABLE, model.KEEPER):
            return None
        found: list[Req] = []
        for name in alias.targets:
            if alias.kind == model.INSTANCE:
                made_target = self.resolve(name)
                if made_target is None or made_target.kind != "class" or made_target.cls is None:
                    return None
                made = self._instance(made_target, alias.args, None, None)
                if not isinstance(made, Req):
                    return None
                found.append(made)
                continue
            one = self._callable_req(name, depth + 1)
            if one is None:
                return None
            if alias.kind == model.PARTIAL:
                shifted = _bind_partial(one.marker, alias.args)
                if isinstance(shifted, _Drop):
                    return None
                one = Req(one.platforms, one.cause, one.chain, shifted)
            found.append(one)
        if not found:
            return None
        if alias.kind == model.CHOICE:
            platforms = frozenset().union(*(f.platforms for f in found))
        else:
            platforms = frozenset.intersection(*(f.platforms for f in found))
        if not _restricts(platforms) or any(f.marker != found[0].marker for f in found):
            return None
        return Req(platforms, found[0].cause, found[0].chain, found[0].marker)


# --------------------------------------------------------------------------- helpers

#: Code at a module's top level, calling something
_MODULE_CALLER: Final = model.bare_function("")

#: The caller the API stands for (no parameters: an interpret argument it would pass is
#: its default)
_API_CALLER: Final = model.bare_function("<api>")


def _compared(op: object, names: list[object]) -> Sets:
    """The platform compared with literals (``==``, ``!=``, ``in``, ``not in``)."""
    matched: frozenset[str] = frozenset()
    for name in names:
        matched |= _platforms.LOWERINGS_OF_GUARD_NAME.get(str(name), frozenset())
    if op in ("==", "in"):
        return matched, GUARD_UNIVERSE - matched
    return GUARD_UNIVERSE - matched, matched


def _helpers_in(condition: object) -> list[str]:
    """The fullnames of the helpers a ``model.Condition`` calls."""
    if not isinstance(condition, list) or not condition:
        return []
    if condition[0] in ("call", "helper cmp") and len(condition) >= 2:
        return [str(condition[1])]
    return [name for part in condition[1:] for name in _helpers_in(part)]


def _platform_set(raw: object) -> frozenset[str] | None:
    """A ``["sets", ...]`` side: a list of platforms of the guard universe, or None."""
    if not isinstance(raw, list):
        return None
    return frozenset(str(p) for p in raw) & GUARD_UNIVERSE


def _join(kind: object, left: Sets, right: Sets) -> Sets:
    """``left and right`` / ``left or right`` of two conditions' sets."""
    lt, lf = left
    rt, rf = right
    if kind == "and":
        true_set = (
            None if lt is None and rt is None else (lt or GUARD_UNIVERSE) & (rt or GUARD_UNIVERSE)
        )
        false_set = None if lf is None or rf is None else lf | rf
    else:
        true_set = None if lt is None or rt is None else lt | rt
        false_set = (
            None if lf is None and rf is None else (lf or GUARD_UNIVERSE) & (rf or GUARD_UNIVERSE)
        )
    return true_set, false_set


def _restricts(platforms: frozenset[str]) -> bool:
    """Some platforms, not every one: a requirement."""
    return bool(platforms) and not platforms >= LOWERING


def _pick(platforms: frozenset[str], found: list[Req], marker: Marker) -> Req:
    """The requirement ``platforms``, its notes from the first source that says so."""
    first = next((f for f in found if f.platforms == platforms), found[0])
    return Req(platforms, first.cause, first.chain, marker)


def _returns(steps: Sequence[Step], item: int = -1) -> Iterator[EntryEvent | CallEvent | None]:
    """The values of every ``return`` of a program (a program that never returns a
    value returns nothing); with ``item``, that item of every returned tuple (None
    where a ``return`` gives no literal tuple that long)."""
    for step in steps:
        if isinstance(step, Return):
            if item < 0:
                yield step.value
            elif step.items is not None and item < len(step.items):
                yield step.items[item]
            else:
                yield None
        elif isinstance(step, Alt):
            for arm in step.arms:
                yield from _returns(arm.steps, item)


#: Bases that add no method a subclass's instance could run instead of its own.
_BARE_BASES: Final = frozenset(
    {
        "builtins.object",
        "abc.ABC",
        "typing.Generic",
        "typing.Protocol",
        "typing_extensions.Protocol",
        "enum.Enum",
    }
)


def _is_property(target: Target | _Drop | None) -> bool:
    return (
        isinstance(target, Target)
        and target.function is not None
        and target.function.access == model.PROPERTY
    )


def _with_marker(req: Req, marker: Marker) -> Req:
    return Req(req.platforms, req.cause, req.chain, marker)


def _linked(req: Req, link: str) -> Req:
    return Req(req.platforms, req.cause, (link, *req.chain)[:MAX_DEPTH], req.marker)


def _param_marker(fn: FunctionSummary, name: str) -> tuple[str, int, str] | None:
    """(name, position as callers pass it or -1, default) of a parameter of ``fn``."""
    index = 0
    params = fn.params[1:] if fn.is_method else fn.params
    for param in params:
        if param.kind in (model.POSONLY, model.POS):
            if param.name == name:
                return (name, index, param.default)
            index += 1
        elif param.name == name:
            if param.kind in (model.STAR, model.DSTAR):
                return None
            return (name, -1, param.default)
    return None


def _param_marker_of(fn: FunctionSummary, name: str) -> tuple[str, ...]:
    found = _param_marker(fn, name)
    if found is None:
        return ("p", name, "-1", UNKNOWN)
    return ("p", found[0], str(found[1]), found[2])


def _lift(value: ArgSum | tuple[str, ...], caller: FunctionSummary | None) -> Marker | _Drop:
    """What an argument summary (in ``caller``) means for interpret mode."""
    if isinstance(value, tuple):
        return value  # ("k", ...): from a ``**self.attr`` splat
    if value == FALSE:
        return None
    if value in (TRUE, UNKNOWN) or caller is None:
        return DROP
    kind, _, name = value.partition(":")
    if kind == "p":
        found = _param_marker(caller, name)
        if found is None or found[2] not in (FALSE, model.REQUIRED):
            return DROP
        return ("p", found[0], str(found[1]), found[2])
    if kind == "c":
        param_name, _, field_name = name.partition(".")
        param = next((p for p in caller.params if p.name == param_name), None)
        found = _param_marker(caller, param_name)
        if param is None or found is None or not param.annotation:
            return DROP
        return ("c", found[0], str(found[1]), found[2], field_name, param.annotation)
    if kind == "o":
        return ("o", name)
    if kind == "a":
        return ("a", name) if caller.is_method else DROP
    return DROP


def _substitute(
    args: CallArgs | None, fn: FunctionSummary, outer: CallArgs, then: CallArgs
) -> CallArgs | None:
    """``args`` written inside ``fn`` (``p:`` its parameters, ``@`` what the caller of
    its returned value passes), seen from the caller of ``fn``: ``fn``'s parameters
    replaced by what ``outer`` passes for them, ``@`` by ``then``. None when a value
    cannot be expressed (a ``**self.attr`` splat)."""
    if args is None:
        return None

    def one(value: ArgSum) -> ArgSum | None:
        if value.startswith("p:"):
            found = outer.passed(_param_marker_of(fn, value[2:]))
            return found if isinstance(found, str) else None
        if value.startswith(("o:", "a:")):
            return UNKNOWN
        return value

    positional: list[ArgSum] = []
    for value in args.positional:
        converted = one(value)
        if converted is None:
            return None
        positional.append(converted)
    keywords: list[tuple[str, ArgSum]] = []
    for key, value in args.keywords:
        converted = one(value)
        if converted is None:
            return None
        keywords.append((key, converted))
    star = args.star
    star_kwargs: list[ArgSum] = []
    for value in args.star_kwargs:
        if value != CALLER:
            star_kwargs.append(UNKNOWN)
            continue
        if not star:
            positional.extend(then.positional)
        keywords.extend(then.keywords)
        star = star or then.star
        star_kwargs.extend(then.star_kwargs)
    return CallArgs(tuple(positional), tuple(keywords), star, tuple(star_kwargs))


def _translate(
    marker: Marker, args: CallArgs, bound: bool, caller: Target, callee: Target
) -> Marker | _Drop:
    """A callee's marker, seen from a call of it in ``caller``."""
    fn = caller.function
    assert fn is not None
    if marker is None:
        return None
    kind = marker[0]
    if kind == "p":
        return _lift(args.passed(marker), fn)
    if kind == "o":
        parent = callee.name.rsplit(".<locals>.", 1)[0] if ".<locals>." in callee.name else None
        if parent != caller.name or callee.facts.module != caller.facts.module:
            return DROP
        return _lift(f"p:{marker[1]}", fn) if _param_marker(fn, marker[1]) else ("o", marker[1])
    if kind in ("a", "k"):
        return marker if bound else DROP
    return DROP


def _bind_partial(marker: Marker, bound: CallArgs) -> Marker | _Drop:
    """The marker of ``functools.partial(f, *bound)`` from ``f``'s marker."""
    if marker is None:
        return None
    if marker[0] != "p":
        return DROP
    _, name, position_text, default = marker
    position = int(position_text)
    given = bound.keyword(name)
    if given is not None:
        return None if given == FALSE else DROP
    if bound.star or bound.star_kwargs:
        return DROP
    if position >= 0:
        if position < len(bound.positional):
            return None if bound.positional[position] == FALSE else DROP
        position -= len(bound.positional)
    return ("p", name, str(position), default)
