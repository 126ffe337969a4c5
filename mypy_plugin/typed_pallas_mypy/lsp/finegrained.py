"""mypy's fine-grained incremental mode in the language server's worker: the one module of
typed-pallas that uses mypy's internals.

:class:`Incremental` keeps mypy's state between checks, as mypy's daemon does, so that an
edit re-checks the edited module and what depends on it, not the project and jax's
cache: the first check loads every module from the environment's cache (the one
``typed-pallas check`` writes), then checks the project's own modules; each later check
gives mypy the modules whose text changed (on disk, or in an unsaved buffer).

The mypy internals it uses, and why (mypy has no public API for any of this; mypy's
daemon, ``mypy/dmypy_server.py``, uses the same, and cannot be used itself: it refuses
``typed-pallas check``'s ``follow_imports = silent`` and reads only files on disk):

* ``mypy.main.process_options``: the sources and options of ``typed-pallas check``'s own
  mypy command line, read as ``python -m mypy`` reads them; every check reads them again,
  so that an edited configuration or an added file is noticed.
* ``Options``: ``fine_grained_incremental`` and ``use_fine_grained_cache`` (keep every
  module's tree and load the cache's modules lazily, as ``dmypy`` with
  ``--use-fine-grained-cache``), ``raise_exceptions`` (a crash of mypy is an exception
  here, and the check falls back to a fresh process). None of them is an option that
  makes mypy's cache differ, so the cache stays ``typed-pallas check``'s, and the preset
  is unchanged (``follow_imports = silent`` included: the findings are check's).
  ``snapshot``: the options of each check are compared with the state's, so that an
  edited configuration starts another state; without ``disabled_error_codes`` and
  ``enabled_error_codes``, which mypy's build fills in place from a global
  ``disable_error_code``/``enable_error_code`` (a command line read again has not).
* ``mypy.build.build`` with a ``FileSystemCache``: the first load. A fine-grained cache
  load requires mypy's file of fine-grained dependencies (``build.DEPS_META_FILE``,
  written through ``build.create_metastore``), which only ``mypy --cache-fine-grained``
  writes, and the dependencies it records are only needed for modules that change. So
  an empty one is written (no module's dependencies recorded: ``{"snapshot": {},
  "deps_meta": {}}``), and every module of the project is checked once after the load,
  which records theirs; jax, whose files do not change while the server runs, keeps
  none.
* ``mypy.server.update.FineGrainedBuildManager``: ``update(changed, removed)`` re-checks
  the changed modules and, through the recorded dependencies, the targets of other
  modules that depend on what changed; ``graph`` (each module's ``State``: ``path``,
  ``ignore_all``, ``dependencies``, ``suppressed``: the imports it could not find),
  ``blocking_error``, ``flush_cache``, ``previous_targets_with_errors`` (the targets
  checked again at every update: see :meth:`Incremental._after_update`);
  ``manager.errors`` (``error_info_map``: each error's target; ``simplify_path``);
  ``manager.find_module_cache`` (``clear``, ``find_module``: whether an import that
  mypy could not find can be found now).
* ``mypy.dmypy_server`` is imported once the cache is loaded: the plugin keeps facts
  and dependencies for a process that keeps one plugin across checks when that module
  is loaded (``cache_keys.in_daemon``); before the load it must not be, since the
  plugin's version then differs from the one ``typed-pallas check`` recorded in the
  cache, and mypy would discard the cache.

An unsaved buffer is given to mypy as the module's file at another path: its shadow
file (``runner.Shadows``). mypy's own ways (``--shadow-file``, a ``FileSystemCache``
that returns the buffer's text) keep the module's path, and the plugin keeps what it
found for a module while the file at that path keeps its size and modification time,
so it would not see the edit. The shadow's path is replaced by the file's in what
mypy reports.

The guard: :func:`unsupported` checks the names above before anything is loaded,
``_probe`` the state's attributes once mypy has loaded it, and an ``AttributeError``,
``TypeError`` or ``ImportError`` while loading is another mypy's internals too: each is
:class:`Unsupported`, and the server checks with a fresh mypy process each time
(``runner.Workers``), as before, and logs why. An exception in a later update (mypy's
fine-grained mode has its own bugs) ends the worker: that check runs in a fresh process,
and after a second one every check does.

``follow_imports = silent``, which ``dmypy`` refuses, needs nothing here: the daemon
refuses it because its own search for changed files follows imports only with
``normal``; this module finds the changed files itself (the project's modules by size,
modification time and content; every other file in mypy's graph by size and
modification time), and mypy's update follows a new import as the preset says. A
library file the plugin read or looked for (``cache_keys.changed_library_files``: an
untyped or finder-mapped library is in no state of mypy's) that changed, appeared or
went is a ``Restart``: the check then runs from the cache, whose keys hold those files.

What it does not do: talk to the server (``worker``), or choose mypy's arguments.
"""

from __future__ import annotations

import contextlib
import hashlib
import importlib
import importlib.util
import io
import json
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Final

from typed_pallas_mypy import cache_keys
from typed_pallas_mypy.cli.findings import (
    BLOCKING_CODES,
    MypyMessage,
    is_typed_pallas_finding,
    parse_mypy_json,
    plugin_error_codes,
)
from typed_pallas_mypy.cli.project import IMPORT_NOT_FOUND_CODES

if TYPE_CHECKING:
    from mypy.fscache import FileSystemCache
    from mypy.modulefinder import BuildSource
    from mypy.options import Options
    from mypy.server.update import FineGrainedBuildManager

__all__ = ["Incremental", "NotApplicable", "Reply", "Restart", "Unsupported", "unsupported"]

_PLUGIN_CODES: Final = plugin_error_codes()
#: mypy's file of fine-grained dependencies with no module's dependencies in it
EMPTY_DEPS_META: Final = b'{"snapshot": {}, "deps_meta": {}}'
#: what this module reads of mypy: (module, names)
REQUIRED: Final = (
    ("mypy.build", ("build", "create_metastore", "DEPS_META_FILE")),
    ("mypy.main", ("process_options",)),
    ("mypy.fscache", ("FileSystemCache",)),
    ("mypy.server.update", ("FineGrainedBuildManager",)),
    ("mypy.options", ("Options",)),
)
#: the methods of FineGrainedBuildManager it calls
MANAGER_METHODS: Final = ("update", "flush_cache")
#: the options it sets or reads (each one must exist)
OPTIONS: Final = (
    "snapshot",
    "incremental",
    "fine_grained_incremental",
    "use_fine_grained_cache",
    "cache_fine_grained",
    "raise_exceptions",
    "local_partial_types",
)
#: what it reads of the state: the manager's, its errors', each module's
MANAGER_READS: Final = ("graph", "blocking_error", "previous_targets_with_errors", "manager")
BUILD_READS: Final = ("errors", "find_module_cache")
ERRORS_READS: Final = ("error_info_map", "simplify_path")
FINDER_READS: Final = ("clear", "find_module")
STATE_READS: Final = ("path", "ignore_all", "dependencies", "suppressed")
#: the module whose presence switches the plugin to its long-lived mode
DAEMON_MODULE: Final = "mypy.dmypy_server"


class Unsupported(Exception):
    """This mypy lacks what the fine-grained route uses: fresh processes from now on."""


class NotApplicable(Exception):
    """This check cannot run here (mypy refused the command line): a fresh process runs
    it, and says why as ``typed-pallas check`` would."""


class Restart(Exception):
    """The state cannot follow this change (a file added or removed, other options, a
    library file changed): a new worker must start from the cache."""


@dataclass
class Reply:
    """What mypy reports, as ``python -m mypy -O json`` prints it, and its exit status."""

    stdout: str
    status: int


#: what mypy's build derives from the options (``Options.process_error_codes``: the
#: codes a global ``disable_error_code``/``enable_error_code`` names), in place: left out
#: of the comparison with a command line read again, which has not derived them yet
#: (mypy's ``Options.to_bytes`` leaves them out for the same reason)
DERIVED_OPTIONS: Final = ("disabled_error_codes", "enabled_error_codes")


def _settings(options: Options) -> dict[str, object]:
    """What a command line sets (``Options.snapshot`` without :data:`DERIVED_OPTIONS`):
    another value means another state."""
    found = options.snapshot()
    for name in DERIVED_OPTIONS:
        found.pop(name, None)
    return found


def unsupported() -> str | None:
    """Why this mypy cannot run the fine-grained route; None when it can. Imports mypy
    (not ``mypy.dmypy_server``: see the module's docstring)."""
    try:
        for name, attributes in REQUIRED:
            module = importlib.import_module(name)
            missing = [a for a in attributes if not hasattr(module, a)]
            if missing:
                return f"{name} has no {', '.join(missing)}"
        if importlib.util.find_spec(DAEMON_MODULE) is None:
            return f"no {DAEMON_MODULE}"
        from mypy.options import Options
        from mypy.server.update import FineGrainedBuildManager

        owners = (
            ("FineGrainedBuildManager", FineGrainedBuildManager, MANAGER_METHODS),
            ("Options", Options(), OPTIONS),
        )
        for owner_name, owner, names in owners:
            missing = [a for a in names if not hasattr(owner, a)]
            if missing:
                return f"{owner_name} has no {', '.join(missing)}"
    except Exception as e:  # an import that fails: another mypy
        return f"{type(e).__name__}: {e}"
    return None


def _probe(manager: FineGrainedBuildManager) -> None:
    """Unsupported when this mypy's state lacks an attribute this module reads."""
    build = manager.manager
    errors, finder = build.errors, build.find_module_cache
    state = next(iter(manager.graph.values()), None)
    missing = [
        f"{kind}.{name}"
        for kind, owner, names in (
            ("FineGrainedBuildManager", manager, MANAGER_READS),
            ("BuildManager", build, BUILD_READS),
            ("Errors", errors, ERRORS_READS),
            ("FindModuleCache", finder, FINDER_READS),
            ("State", state, STATE_READS if state is not None else ()),
        )
        for name in names
        if not hasattr(owner, name)
    ]
    if missing:
        raise Unsupported(f"mypy's state has no {', '.join(missing)}")


def _reported(found: MypyMessage) -> bool:
    """Whether a check reports ``found``, or warns about it (``session.outcome``)."""
    if found.code in BLOCKING_CODES or found.code in IMPORT_NOT_FOUND_CODES:
        return True
    return is_typed_pallas_finding(found, _PLUGIN_CODES)


def _stamp(path: str) -> tuple[int, int] | None:
    try:
        st = os.stat(path)
    except OSError:
        return None
    return (st.st_mtime_ns, st.st_size)


def _digest(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            return hashlib.sha256(f.read()).hexdigest()
    except OSError:
        return None


class Incremental:
    """mypy's state for one command line (``typed-pallas check``'s), between checks."""

    def __init__(self, arguments: Sequence[str]) -> None:
        from mypy.fscache import FileSystemCache

        self.arguments = list(arguments)
        self.fscache: FileSystemCache = FileSystemCache()
        self.manager: FineGrainedBuildManager | None = None
        self._snapshot: dict[str, object] | None = None
        #: the sources of the command line: module -> path (as mypy names it)
        self._sources: dict[str, str] = {}
        #: the project's modules (mypy reports their errors): module -> their own path
        self.home: dict[str, str] = {}
        #: path -> (mtime_ns, size) and content hash, when last given to mypy
        self._stamps: dict[str, tuple[int, int] | None] = {}
        self._hashes: dict[str, str | None] = {}
        self._messages: list[str] = []
        #: modules given to mypy in the last check (for the tests and the log)
        self.updated: list[str] = []

    # ------------------------------------------------------------------ reading the command

    def _options(self) -> tuple[list[BuildSource], Options]:
        from mypy.main import process_options

        out, err = io.StringIO(), io.StringIO()
        try:
            sources, options = process_options(
                self.arguments, stdout=out, stderr=err, fscache=self.fscache
            )
        except SystemExit as e:
            said = (err.getvalue() + out.getvalue()).strip()
            raise NotApplicable(said or f"mypy's command line ended with status {e.code}") from e
        if not options.local_partial_types:
            raise NotApplicable("mypy's fine-grained mode needs local_partial_types")
        options.incremental = True
        options.fine_grained_incremental = True
        options.use_fine_grained_cache = True
        options.cache_fine_grained = False
        options.raise_exceptions = True
        return sources, options

    # ------------------------------------------------------------------ checks

    def check(self, shadows: Mapping[str, str]) -> Reply:
        """Check with the unsaved buffers ``shadows`` (absolute file path -> shadow file)."""
        self.fscache.flush()
        sources, options = self._options()
        if self.manager is None:
            return self._start(sources, options, shadows)
        if _settings(options) != self._snapshot:
            raise Restart("mypy's options changed (the configuration or the project's modules)")
        if {s.module: s.path for s in sources if s.path} != self._sources:
            raise Restart("a file of the project was added or removed")
        self.manager.flush_cache()
        changed = self._changed(shadows)
        self.updated = [module for module, _ in changed]
        if changed:
            self._messages = self.manager.update(changed, [])
            self._after_update()
        return self._reply(shadows)

    def _start(
        self, sources: list[BuildSource], options: Options, shadows: Mapping[str, str]
    ) -> Reply:
        from mypy.build import DEPS_META_FILE, build, create_metastore
        from mypy.server.update import FineGrainedBuildManager

        try:
            store = create_metastore(options, False)
            try:
                store.write(DEPS_META_FILE, EMPTY_DEPS_META)
                store.commit()
            finally:
                store.close()
            result = build(sources=sources, options=options, fscache=self.fscache)
            importlib.import_module(DAEMON_MODULE)  # the plugin's long-lived mode (docstring)
            manager = FineGrainedBuildManager(result)
            _probe(manager)
        except (AttributeError, TypeError, ImportError) as e:  # another mypy's internals
            raise Unsupported(f"{type(e).__name__}: {e}") from e
        self.manager = manager
        self._snapshot = _settings(options)
        self._sources = {s.module: s.path for s in sources if s.path}
        self.home = dict(self._sources)
        self._track_new()
        for module, state in manager.graph.items():
            if module not in self.home and state.path:
                self._stamps[state.path] = _stamp(state.path)
        first = [(m, self._path_of(m, shadows)) for m in self._leaves_first(list(self.home))]
        for _, path in first:
            self._remember(path)  # before mypy reads it: a later change is seen
        self.updated = [module for module, _ in first]
        self._messages = manager.update(first, [])
        self._after_update()
        return self._reply(shadows)

    def _after_update(self) -> None:
        """Track the modules found since, and keep for the next update only the targets
        whose errors a check reports.

        mypy checks every target (a function, a module's top level) that had an error
        again at every update, to report its errors again: in a project with many of
        mypy's own errors (most JAX projects), that is most of the work of each edit.
        What a check reports is the findings, syntax errors and unresolved imports
        (``session.outcome``): the targets of other errors are left out, and are checked
        again when something they depend on changes, as a target without errors is.
        """
        assert self.manager is not None
        self._track_new()
        if self.manager.blocking_error is not None:
            return  # mypy stopped at a syntax error: the targets to check after it stay
        errors = self.manager.manager.errors
        simplify = errors.simplify_path
        found, _ = parse_mypy_json("\n".join(self._messages))
        reported = {(f.file, f.line, f.message) for f in found if _reported(f)}
        self.manager.previous_targets_with_errors = {
            info.target
            for file, infos in errors.error_info_map.items()
            for info in infos
            if info.target and (simplify(file), info.line, info.message) in reported
        }

    def _track_new(self) -> None:
        """Add the project's modules that mypy has found since (imports followed)."""
        assert self.manager is not None
        for module, state in self.manager.graph.items():
            if module not in self.home and state.path and not state.ignore_all:
                self.home[module] = state.path
                self._remember(state.path)

    def _leaves_first(self, modules: list[str]) -> list[str]:
        """``modules`` with each one after the modules of the list it imports (a cycle in
        any order), so that callees are checked before their callers."""
        assert self.manager is not None
        graph = self.manager.graph
        wanted = set(modules)
        done: set[str] = set()
        order: list[str] = []

        def visit(module: str) -> None:
            stack = [(module, iter(graph[module].dependencies if module in graph else ()))]
            done.add(module)
            while stack:
                current, deps = stack[-1]
                for dep in deps:
                    if dep in wanted and dep not in done:
                        done.add(dep)
                        stack.append((dep, iter(graph[dep].dependencies if dep in graph else ())))
                        break
                else:
                    stack.pop()
                    order.append(current)

        for module in sorted(modules):
            if module not in done:
                visit(module)
        return order

    def _path_of(self, module: str, shadows: Mapping[str, str]) -> str:
        home = self.home[module]
        return shadows.get(os.path.abspath(home), home)

    def _remember(self, path: str) -> None:
        self._stamps[path] = _stamp(path)
        self._hashes[path] = _digest(path)

    def _differs(self, path: str) -> bool:
        """Whether the file at ``path`` changed since it was last given to mypy (its
        content, when its size or modification time did); remembers it as it is now."""
        stamp = _stamp(path)
        if path in self._stamps and stamp == self._stamps[path]:
            return False
        self._stamps[path] = stamp
        digest = _digest(path)
        if path in self._hashes and digest == self._hashes[path]:
            return False
        self._hashes[path] = digest
        return True

    def _changed(self, shadows: Mapping[str, str]) -> list[tuple[str, str]]:
        assert self.manager is not None
        graph = self.manager.graph
        changed: list[tuple[str, str]] = []
        for module in self.home:
            path = self._path_of(module, shadows)
            state = graph.get(module)
            if state is None or state.path != path:
                self._remember(path)
                changed.append((module, path))
            elif self._differs(path):
                changed.append((module, path))
        for module, state in graph.items():
            if module in self.home or not state.path:
                continue
            now = _stamp(state.path)
            if self._stamps.setdefault(state.path, now) != now:
                raise Restart(f"{state.path} changed (a module the project imports)")
        if cache_keys.changed_library_files() != "same":
            # a library file the plugin read (mypy's state does not hold untyped or
            # finder-mapped libraries), or one it looked for, changed, appeared or went
            raise Restart("a library the plugin read was edited, installed or uninstalled")
        missing = sorted({m for h in self.home if h in graph for m in graph[h].suppressed})
        if missing:  # an import mypy could not find: a file for it may have appeared
            finder = self.manager.manager.find_module_cache
            finder.clear()
            for module in missing:
                if isinstance(finder.find_module(module), str):
                    raise Restart(f"{module}, which the project imports, was added")
        return changed

    # ------------------------------------------------------------------ what mypy reports

    def _reply(self, shadows: Mapping[str, str]) -> Reply:
        assert self.manager is not None
        back: dict[str, str] = {}
        for home in self.home.values():
            shadow = shadows.get(os.path.abspath(home))
            if shadow is not None:
                back[shadow] = home
        lines = [_unshadow(line, back, self.manager.manager.errors.simplify_path)
                 for line in self._messages]  # fmt: skip
        if self.manager.blocking_error is not None:
            status = 2
        else:
            status = 1 if any(_is_error(line) for line in lines) else 0
        return Reply("".join(line + "\n" for line in lines), status)


def _is_error(line: str) -> bool:
    with contextlib.suppress(ValueError):
        data = json.loads(line)
        return isinstance(data, dict) and data.get("severity") == "error"
    return ": error:" in line


def _unshadow(line: str, back: Mapping[str, str], simplify: Any) -> str:
    """``line`` (one of mypy's JSON lines) with each shadow's path replaced by its file's,
    as mypy names that file (``file``) and as the plugin names it (in the text)."""
    if not back:
        return line
    pairs = sorted(
        {(s, h) for s, h in back.items()}
        | {(os.path.relpath(s), os.path.relpath(h)) for s, h in back.items()},
        key=lambda pair: -len(pair[0]),
    )

    def replace(text: str) -> str:
        for shadow, home in pairs:
            text = text.replace(shadow, home)
        return text

    try:
        data = json.loads(line)
    except ValueError:
        return replace(line)
    if not isinstance(data, dict):
        return line
    file = data.get("file")
    if isinstance(file, str) and file in back:
        data["file"] = str(simplify(back[file]))
    for key in ("message", "hint"):
        if isinstance(data.get(key), str):
            data[key] = replace(data[key])
    return json.dumps(data)
