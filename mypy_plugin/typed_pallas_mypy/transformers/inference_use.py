"""The inference as the plugin uses it: one engine for the project and its libraries.

What a function lowers for is inferred from source by ``typed_pallas_mypy.inference``,
for the project's own modules and for installed packages alike (mypy keeps no function
bodies of installed packages, and one engine keeps the rules written once).
``InferenceUse`` is that engine for one mypy build:

* the project's modules are found through mypy's modules of the build (their paths,
  and mypy's ``--shadow-file`` substitutes, so that an unsaved buffer or an eval
  mutant is what is read); installed packages through the site-packages folders of the
  build and the folders mypy searches (``sys.path`` of the checked Python: PYTHONPATH
  included);
* ``facts_of(fullname)``: what the engine knows of a function as ``FunctionFacts``
  (requirement, wrapper, kernel evidence, platform table, keeping decorator), with the
  modules it read (``modules_of``), so the daemon re-checks callers when they change;
* its on-disk cache lives in mypy's cache folder (``<cache_dir>/typed-pallas/libraries``),
  so a module is read once per version of its file.

Every file outside the project that the engine read, or whose absence decided where a
module was found (or that it was not), is noted in ``cache_keys``
(``note_library_files``), as are the ``.pth`` files of its search folders
(``note_site_folders``): the project modules' cached results depend on them, so an
edit, an install or an uninstall of a library makes them stale.

What it does not do: read source itself (``inference``), infer what needs mypy's types
(guard helpers, predicates: ``platform_facts``), or decide where a requirement is
violated (``decisions``).
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING

from mypy.modulefinder import get_search_dirs
from mypy.nodes import MypyFile
from mypy.options import Options

from typed_pallas_mypy import cache_keys
from typed_pallas_mypy.transformers.calls import installed_jax
from typed_pallas_mypy.transformers.facts_store import NO_FACTS, FunctionFacts, Requirement, Wrapper
from typed_pallas_mypy.transformers.resolution import is_installed_path, is_user_path

if TYPE_CHECKING:
    from typed_pallas_mypy.inference import Inference, Located


def search_roots(modules: Mapping[str, MypyFile]) -> list[str]:
    """The site-packages folders of the installed top-level packages in the build."""
    roots: list[str] = []
    for name, tree in modules.items():
        if "." in name or not tree.path or not is_installed_path(tree.path):
            continue
        path = tree.path.replace("\\", "/")
        if path.endswith(".pyi"):
            continue
        if path.endswith("/__init__.py"):
            path = path[: -len("/__init__.py")]
        elif path.endswith(".py"):
            path = path[: -len(".py")]
        if not path.endswith("/" + name):
            continue
        root = path[: -len(name) - 1]
        if root not in roots:
            roots.append(root)
    return roots


def _project_roots(modules: Mapping[str, MypyFile]) -> list[str]:
    """The folders the build's project modules are found under (a module ``a.b`` at
    ``R/a/b.py`` gives ``R``), the working folder last."""
    roots: list[str] = []
    for name, tree in modules.items():
        if not tree.path or not is_user_path(tree.path):
            continue
        path = os.path.abspath(tree.path)
        if os.path.basename(path) == "__init__.py":
            path = os.path.dirname(path)
        else:
            path = os.path.splitext(path)[0]
        parts = name.split(".")
        for part in reversed(parts):
            if os.path.basename(path) != part:
                break
            path = os.path.dirname(path)
        else:
            if path not in roots:
                roots.append(path)
    here = os.getcwd()
    if here not in roots:
        roots.append(here)
    return roots


def display_path(path: str) -> str:
    """How notes name a project file: relative to the working folder when inside it."""
    normal = path.replace("\\", "/")
    if os.path.isabs(normal):
        try:
            rel = os.path.relpath(normal)
            if not rel.startswith(".."):
                return rel.replace("\\", "/")
        except ValueError:
            pass
    return normal


class ProjectModules:
    """The project's own modules of a mypy build, for the engine (``ModuleSource``)."""

    def __init__(self, modules: Mapping[str, MypyFile], options: Options | None) -> None:
        self.modules = modules
        #: the folders the project's modules are found under (``_beside``), and for how
        #: many modules of the build they were worked out
        self._roots: list[str] = []
        self._roots_for = -1
        self._shadows: dict[str, str] = {}
        for source, shadow in (options.shadow_file or []) if options is not None else []:
            self._shadows[os.path.abspath(source)] = shadow

    def locate(self, module: str) -> Located | None:
        from typed_pallas_mypy.inference import Located

        tree = self.modules.get(module)
        if tree is None:
            return self._beside(module)
        if not is_user_path(tree.path):
            return None
        shadow = self._shadows.get(os.path.abspath(tree.path), "")
        return Located(
            module,
            display_path(tree.path),
            tree.path,
            tree.is_package_init_file(),
            read_path=shadow,
            project=True,
        )

    def _beside(self, module: str) -> Located | None:
        """A project module this process of the build has not loaded (a worker of mypy's
        parallel mode holds only its part): found under the roots of the project's
        modules it has, as Python would find it there."""
        from typed_pallas_mypy.inference import Located

        if len(self.modules) != self._roots_for:
            self._roots = _project_roots(self.modules)
            self._roots_for = len(self.modules)
        parts = module.split(".")
        if not all(part.isidentifier() for part in parts):
            return None
        for root in self._roots:
            base = os.path.join(root, *parts)
            for path, package in ((base + ".py", False), (os.path.join(base, "__init__.py"), True)):
                if os.path.isfile(path) and is_user_path(path):
                    shadow = self._shadows.get(os.path.abspath(path), "")
                    return Located(
                        module, display_path(path), path, package, read_path=shadow, project=True
                    )
        return None


class InferenceUse:
    """The engine for one build, created on first use."""

    def __init__(
        self,
        modules: Mapping[str, MypyFile],
        cache_dir: str | None,
        python_executable: str | None = None,
        options: Options | None = None,
    ) -> None:
        self.modules = modules
        self.cache_dir = cache_dir
        self.python_executable = python_executable
        self.options = options
        self._engine: Inference | None = None
        self._roots: list[str] = []
        self._modules_seen = -1
        self._facts: dict[str, FunctionFacts] = {}
        #: how many of the engine's modules read were noted in ``cache_keys``
        self._noted = 0

    def engine(self) -> Inference:
        """The engine over the site-packages folders seen so far (mypy adds modules as
        the build goes on: a new folder gives a new engine, and forgets what was not
        found)."""
        if self._engine is None or len(self.modules) != self._modules_seen:
            self._modules_seen = len(self.modules)
            roots = search_roots(self.modules)
            roots += [root for root in self._package_dirs() if root not in roots]
            if self._engine is None or roots != self._roots:
                from typed_pallas_mypy.inference import Inference

                self._roots = roots
                self._noted = 0
                self._engine = Inference(
                    roots,
                    cache_keys.plugin_folder(self.cache_dir, "libraries"),
                    ProjectModules(self.modules, self.options),
                    lazy=True,
                    keep_keys=cache_keys.in_daemon(),
                    release=installed_jax() or None,
                )
                self._facts.clear()
        return self._engine

    def save(self) -> None:
        """Store what the engine worked out of the modules it read
        (``Inference.save``), and note what it looked at (mypy is about to write a
        module's cache: its cache keys must hold every library its findings read, through
        whichever question they were read)."""
        if self._engine is not None:
            self._engine.save()
            self._note_installed(self._engine)

    def forget(self, modules: frozenset[str]) -> None:
        """Forget the answers read from ``modules`` (the daemon re-parsed them)."""
        self._facts.clear()
        if self._engine is not None:
            self._engine.forget(modules)

    def _package_dirs(self) -> list[str]:
        """The folders mypy searches for installed packages (``sys.path`` of the
        checked Python): mypy computed them for this build, and keeps the answer."""
        if self.python_executable is None:
            return []
        try:
            sys_path, site_packages = get_search_dirs(self.python_executable)
        except Exception:  # no answer: the build's own folders only
            return []
        return [*site_packages, *sys_path]

    def facts_of(self, fullname: str, *, requirements: bool = True) -> FunctionFacts:
        """What the engine knows of a function (or alias, or object); empty when unknown.
        Without ``requirements``: all but its requirement and its result's (what a
        module's stored facts hold where the summaries answer: those are worked out
        from the sources when asked, not for every function when a module is stored)."""
        engine = self.engine()
        cached = self._facts.get(fullname)
        if cached is not None:
            return cached
        if requirements:
            requirement = engine.requirement(fullname)
            result = engine.result_requirement(fullname)
        else:
            requirement = result = None
        wrapper = engine.wrapper(fullname)
        own = engine.definition(fullname)
        found = NO_FACTS
        if (
            requirement
            or result
            or wrapper
            or own.body_evidence
            or own.table
            or own.keeping_decorator
            or own.returned_params
        ):
            found = FunctionFacts(
                fullname,
                requirement=requirement,
                result=result,
                wrapper=Wrapper(
                    wrapper.entry,
                    wrapper.forwards,
                    wrapper.line,
                    kwargs=wrapper.kwargs,
                    args=wrapper.args,
                )
                if wrapper is not None
                else None,
                evidence=own.body_evidence,
                where=own.where,
                table=own.table,
                keeping_decorator=own.keeping_decorator,
                params=own.returned_params,
            )
        self._note_installed(engine)
        if requirements:
            self._facts[fullname] = found
        return found

    def requirement(self, fullname: str) -> Requirement | None:
        """``facts_of(fullname).requirement`` without the rest of the facts: whether a
        call of a library function gets a hook at all (most do not)."""
        cached = self._facts.get(fullname)
        if cached is not None:
            return cached.requirement
        engine = self.engine()
        found = engine.requirement(fullname)
        self._note_installed(engine)
        return found

    def modules_of(self, fullname: str) -> frozenset[str]:
        """The modules ``facts_of(fullname)``'s requirement was read from."""
        return self.engine().modules_of(fullname)

    def wrapper_where(self, fullname: str) -> str:
        found = self.engine().wrapper(fullname)
        return found.where if found is not None else ""

    def wrapper_of(self, fullname: str) -> tuple[Wrapper | None, str]:
        """``facts_of(fullname)``'s wrapper and where it is defined, without the rest of
        the facts: every call of a project function asks whether it is a wrapper, and
        few are (its requirement is asked only where a platform is decided)."""
        cached = self._facts.get(fullname)
        if cached is not None:
            return cached.wrapper, cached.where
        engine = self.engine()
        found = engine.wrapper(fullname)
        wrapper = (
            Wrapper(found.entry, found.forwards, found.line, kwargs=found.kwargs, args=found.args)
            if found is not None
            else None
        )
        where = engine.definition(fullname).where if wrapper is not None else ""
        self._note_installed(engine)
        return wrapper, where

    def _note_installed(self, engine: Inference) -> None:
        """Note the files outside the project looked at since the last call
        (``cache_keys``): the installed modules read and the paths whose absence decided
        where a module was found, or that it was not (``Inference.looked_at_since``)."""
        looked_at = engine.looked_at_since(self._noted)
        if looked_at:
            if not self._noted:  # the first lookup outside the project: the folders'
                cache_keys.note_site_folders(self._roots)  # .pth files decide it too
            self._noted += len(looked_at)
            cache_keys.note_library_files(looked_at)
