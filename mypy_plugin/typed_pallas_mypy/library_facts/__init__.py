"""Platform requirements of installed kernel libraries, read from their source.

mypy keeps no function bodies of installed packages, and most kernel libraries ship no
``py.typed``, so the plugin cannot infer what a library function lowers for from mypy's
AST. This package reads the installed source with Python's ``ast`` instead (it never
imports it) and infers, per library function, the same kind of requirement the plugin
infers for the project's own functions (``transformers/platform_facts.py``): its
unconditional Pallas calls with their params and evidence, the functions it calls,
aliases and re-exports, ``functools.partial``, ``jax.jit``, ``jax.custom_vjp``,
methods through ``self``, classes' ``__call__`` and factories returning an instance,
and ``interpret=`` taken from a parameter.

* ``LibraryFacts(search_paths, cache_dir)``: the reader over site-packages-like roots;
  ``requirement(fullname)``, ``wrapper(fullname)``, ``modules_read()``,
  ``module_map(prefix)``;
* ``LibraryRequirement`` / ``LibraryWrapper``: what it answers.

Unknown means silent: a name it cannot find or read, a file that does not parse, a
function that reads the platform or calls something unknown all give ``None``. No
exception leaves the API (set ``TYPED_PALLAS_MYPY_DEBUG=1`` to let them through).

Local facts of each module are cached on disk per top-level package (``store``), keyed
by the file's path, size and mtime and by the reader's version and tables; requirements
across modules are computed lazily, in memory (``requirements``).

What it does not do: import mypy or jax, import the libraries it reads, or decide
anything about the user's code (the plugin does, with these answers).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TypeVar

from typed_pallas_mypy.library_facts import model
from typed_pallas_mypy.library_facts.requirements import Req, Resolver
from typed_pallas_mypy.library_facts.store import FactsStore

__all__ = ["LibraryFacts", "LibraryRequirement", "LibraryWrapper"]

_T = TypeVar("_T")


@dataclass(frozen=True)
class LibraryRequirement:
    """The lowering platforms a library function can lower for, and why."""

    #: lowering platforms it can lower for, a subset of {"tpu", "cuda", "rocm"}
    platforms: frozenset[str]
    #: ("params", registry platform, backend) or ("evidence", backend, backend)
    cause: tuple[str, str, str]
    #: notes, the function itself first, paths relative to the site-packages root
    chain: tuple[str, ...]
    #: (parameter name, position or -1 if keyword-only) through which a caller turns
    #: interpret mode on for every kernel on the chain; None if none. Positions count
    #: what a caller passes: a method's ``self`` is not counted; for a class, the
    #: parameter is its constructor's.
    interpret: tuple[str, int] | None


@dataclass(frozen=True)
class LibraryWrapper:
    """A function forwarding its params to a Pallas entry point (qwix's ``pallas_call``)."""

    #: entry point fullname (a key of ``ENTRIES``)
    entry: str
    #: (entry parameter, wrapper parameter, its position or -1)
    forwards: tuple[tuple[str, str, int], ...]
    #: name of the wrapper's ``**kwargs`` if it forwards it to the entry (else None)
    kwargs: str | None
    #: where the wrapper is defined, relative to its site-packages root ("qwix/_src/core/pallas.py:27")
    where: str


def _debug() -> bool:
    return os.environ.get("TYPED_PALLAS_MYPY_DEBUG", "") not in ("", "0")


class LibraryFacts:
    """Requirements of the functions of installed libraries under ``search_paths``.

    ``search_paths``: site-packages-like roots (module ``a.b.c`` is ``root/a/b/c.py`` or
    ``root/a/b/c/__init__.py``, the first root that has it); ``cache_dir``: where to
    keep the on-disk cache of local facts (None: memory only).
    """

    def __init__(self, search_paths: Sequence[str], cache_dir: str | None) -> None:
        self._store = FactsStore(cache_dir)
        self._resolver = Resolver(search_paths, self._store)

    def _guarded(self, default: _T, work: Callable[[], _T]) -> _T:
        try:
            return work()
        except Exception:
            if _debug():
                raise
            return default
        finally:
            self._store.flush()

    def requirement(self, fullname: str) -> LibraryRequirement | None:
        """The requirement of a function, method (``pkg.mod.Class.method``), alias,
        re-export, ``jax.jit`` / ``custom_vjp`` / ``partial`` object, or class (its
        instances' ``__call__``); None when unknown, unreadable, or without one."""
        return self._guarded(None, lambda: _public(self._resolver.requirement(fullname)))

    def wrapper(self, fullname: str) -> LibraryWrapper | None:
        """The wrapper facts of a function (through aliases and re-exports), if it
        forwards its kernel and params (or its ``**kwargs``) to a Pallas entry point."""
        return self._guarded(None, lambda: self._wrapper(fullname))

    def _wrapper(self, fullname: str, depth: int = 0) -> LibraryWrapper | None:
        target = self._resolver.resolve(fullname)
        if target is None or depth > 4:
            return None
        if target.kind == "alias" and target.alias is not None:
            alias = target.alias
            if alias.kind in (model.REF, model.KEEP) and len(alias.targets) == 1:
                return self._wrapper(alias.targets[0], depth + 1)
            return None
        fn = target.function
        if fn is None or fn.wrapper is None or fn.opaque:
            return None
        found = fn.wrapper
        where = f"{target.located.relpath}:{fn.line}"
        return LibraryWrapper(found.entry, found.forwards, found.kwargs, where)

    def modules_read(self) -> dict[str, str]:
        """Module name -> file path, of every module whose facts were consulted."""
        return dict(self._resolver.read)

    def module_map(self, prefix: str) -> list[tuple[str, LibraryRequirement | None]]:
        """Every public top-level function, class and alias of the modules under
        ``prefix`` (e.g. ``"jax.experimental.pallas.ops"``), with its requirement."""
        return self._guarded([], lambda: self._module_map(prefix))

    def _module_map(self, prefix: str) -> list[tuple[str, LibraryRequirement | None]]:
        out: list[tuple[str, LibraryRequirement | None]] = []
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
            for name in sorted(names):
                fullname = f"{module}.{name}"
                out.append((fullname, _public(self._resolver.requirement(fullname))))
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


def _public(req: Req | None) -> LibraryRequirement | None:
    if req is None:
        return None
    marker = req.marker
    interpret: tuple[str, int] | None = None
    if marker is not None:
        if marker[0] != "p":
            return None  # interpret comes from where a caller cannot say it
        interpret = (marker[1], int(marker[2]))
    return LibraryRequirement(req.platforms, req.cause, req.chain, interpret)
