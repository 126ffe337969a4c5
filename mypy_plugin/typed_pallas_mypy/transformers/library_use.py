"""Installed kernel libraries the checked code calls: their facts, and what depends on them.

mypy keeps no function bodies of installed packages, so what a library function lowers
for is read from its source outside mypy (``typed_pallas_mypy.library_facts``).
``LibraryUse`` is that reader as the plugin sees it:

* ``facts_of(fullname)``: a library function's requirement as ``FunctionFacts`` (the
  chain into the library, paths relative to site-packages), or no facts;
* the reader's search roots are the site-packages folders of the installed modules in
  the build and the folders mypy searches for installed packages (``sys.path`` of the
  checked Python: PYTHONPATH included), and its on-disk cache lives in mypy's cache folder
  (``<cache_dir>/typed-pallas/libraries``), so it is computed once per installed version.

Every library file read is noted in ``cache_keys`` (``note_library_files``), which makes
the project modules' cached results depend on them.

What it does not do: read library source itself (``library_facts``), or decide where a
requirement is violated (``decisions``).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

from mypy.modulefinder import get_search_dirs
from mypy.nodes import MypyFile

from typed_pallas_mypy import cache_keys
from typed_pallas_mypy.transformers.facts_store import NO_FACTS, FunctionFacts, Requirement
from typed_pallas_mypy.transformers.resolution import is_installed_path

if TYPE_CHECKING:
    from typed_pallas_mypy.library_facts import LibraryFacts, LibraryWrapper


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


class LibraryUse:
    """The library reader for one build, created on first use."""

    def __init__(
        self,
        modules: Mapping[str, MypyFile],
        cache_dir: str | None,
        python_executable: str | None = None,
    ) -> None:
        self.modules = modules
        self.cache_dir = cache_dir
        self.python_executable = python_executable
        self._reader: LibraryFacts | None = None
        self._roots: list[str] = []
        self._modules_seen = -1
        self._facts: dict[str, FunctionFacts] = {}

    def reader(self) -> LibraryFacts:
        """The reader over the site-packages folders seen so far (mypy adds modules as
        the build goes on: a new folder gives a new reader, and forgets what was not
        found)."""
        if self._reader is None or len(self.modules) != self._modules_seen:
            self._modules_seen = len(self.modules)
            roots = search_roots(self.modules)
            roots += [root for root in self._package_dirs() if root not in roots]
            if self._reader is None or roots != self._roots:
                from typed_pallas_mypy.library_facts import LibraryFacts

                self._roots = roots
                self._reader = LibraryFacts(
                    roots, cache_keys.plugin_folder(self.cache_dir, "libraries")
                )
                self._facts.clear()
        return self._reader

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

    def facts_of(self, fullname: str) -> FunctionFacts:
        """A library function's (or alias', or object's) requirement; empty when unknown."""
        reader = self.reader()
        cached = self._facts.get(fullname)
        if cached is not None:
            return cached
        found = NO_FACTS
        requirement = reader.requirement(fullname)
        if requirement is not None:
            found = FunctionFacts(
                fullname,
                requirement=Requirement(
                    requirement.platforms,
                    requirement.cause,
                    requirement.chain,
                    interpret=requirement.interpret,
                ),
                where=_where(requirement.chain),
            )
        cache_keys.note_library_files(reader.modules_read().values())
        self._facts[fullname] = found
        return found

    def wrapper_of(self, fullname: str) -> LibraryWrapper | None:
        return self.reader().wrapper(fullname)


def _where(chain: tuple[str, ...]) -> str:
    """``jax/.../flash_attention.py:140`` from the first note of a chain, if it has one."""
    if not chain:
        return ""
    head = chain[0]
    start, end = head.find(" ("), head.find(")")
    return head[start + 2 : end] if 0 <= start < end else ""
