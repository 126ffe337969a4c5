"""What ``typed-pallas check`` finds out about the project before mypy starts.

What it does, with no setting from the user:

* :func:`find_layout` works out where the project's own modules are, so that mypy
  resolves their imports: the ``mypy_path`` of the project's own mypy configuration
  (the first of mypy's four files, from the current folder up to the repository root,
  with a mypy section; ``$MYPY_CONFIG_FILE_DIR`` expanded), and a *src layout*: when a
  PATH is a ``src/`` folder, or lies under one, that holds packages, that folder is
  added to ``mypy_path`` and mypy's ``explicit_package_bases`` is set (so that
  ``src/pkg/mod.py`` is the module ``pkg.mod`` even without ``__init__.py`` files, and
  checking one file of a package resolves its imports of the package's other modules).
* it lists the project's own top-level module names (the modules and packages in the
  current folder, in each ``mypy_path`` folder, and the top package of each PATH):
  the preset reports mypy's ``import-not-found`` for exactly those
  (:func:`typed_pallas_mypy.cli.findings.preset_config`), and ``check`` turns those
  errors into one warning: what a module the project cannot import defines is ``Any``,
  so findings that depend on it are missed.
* :func:`python_files_in` says whether PATHS hold any Python file at all (the empty
  selection is handled by ``check``); :func:`python_files` lists them (``check`` looks
  for the files that opt out of mypy among them).

What it does not do: change any file, import the project, jax or mypy, or read any
other mypy setting than ``mypy_path`` (pass mypy options after ``--``).
"""

from __future__ import annotations

import configparser
import os
import re
import tomllib
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from typed_pallas_mypy import config

__all__ = [
    "Layout",
    "find_layout",
    "mypy_config_file",
    "own_module_names",
    "python_files",
    "python_files_in",
    "unresolved_module",
]

#: folders never taken for modules of the project (mypy skips the first three too)
SKIPPED_FOLDERS: Final = frozenset(
    {"__pycache__", "site-packages", "node_modules", "build", "dist"}
)
PY_SUFFIXES: Final = (".py", ".pyi")
#: mypy's error codes for an import it cannot resolve (``import`` before mypy 0.990)
IMPORT_NOT_FOUND_CODES: Final = frozenset({"import-not-found", "import"})
_MODULE_NAMED = re.compile(r'module named "([^"]+)"')


@dataclass(frozen=True)
class Layout:
    """Where the project's modules are, as mypy must be told."""

    #: absolute folders for mypy's ``mypy_path``, in order
    mypy_path: tuple[str, ...] = ()
    #: why each folder is there, e.g. ``src layout (src/)`` or ``mypy.ini: mypy_path``
    origins: tuple[str, ...] = ()
    #: whether mypy's ``explicit_package_bases`` is set (a src layout was found)
    explicit_package_bases: bool = False
    #: top-level names of the project's own modules and packages
    own_modules: tuple[str, ...] = ()


def _is_python_file(name: str) -> bool:
    return name.endswith(PY_SUFFIXES)


def _holds_python(folder: str) -> bool:
    try:
        return any(_is_python_file(name) for name in os.listdir(folder))
    except OSError:
        return False


def _is_package_folder(path: str) -> bool:
    name = os.path.basename(path)
    return (
        name.isidentifier()
        and name not in SKIPPED_FOLDERS
        and os.path.isdir(path)
        and not os.path.exists(os.path.join(path, "pyvenv.cfg"))
        and _holds_python(path)
    )


def own_module_names(folder: str) -> set[str]:
    """Top-level module and package names in ``folder`` (``x.py``, ``x/`` holding .py files)."""
    names: set[str] = set()
    try:
        entries = os.listdir(folder)
    except OSError:
        return names
    for entry in entries:
        if entry.startswith("."):
            continue
        path = os.path.join(folder, entry)
        if os.path.isfile(path) and _is_python_file(entry):
            stem = entry.rsplit(".", 1)[0]
            if stem.isidentifier() and stem != "__init__":
                names.add(stem)
        elif _is_package_folder(path):
            names.add(entry)
    return names


def _holds_packages(folder: str) -> bool:
    try:
        return any(_is_package_folder(os.path.join(folder, e)) for e in os.listdir(folder))
    except OSError:
        return False


def _src_folder(path: str, stop: str) -> str | None:
    """The ``src`` folder holding packages that ``path`` is, or lies under (up to ``stop``)."""
    current = path if os.path.isdir(path) else os.path.dirname(path)
    while True:
        if os.path.basename(current) == "src" and _holds_packages(current):
            return current
        if current == stop or any(
            os.path.exists(os.path.join(current, m)) for m in config.REPOSITORY_MARKERS
        ):
            return None
        parent = os.path.dirname(current)
        if parent == current:
            return None
        current = parent


def _top_package(path: str) -> str | None:
    """The top-level package (or module) name of a Python file, crawling up ``__init__.py``."""
    path = os.path.abspath(path)
    if os.path.isdir(path):
        folder, name = path, None
    else:
        folder, name = os.path.dirname(path), os.path.basename(path).rsplit(".", 1)[0]
    top = name
    while any(os.path.isfile(os.path.join(folder, f"__init__{s}")) for s in PY_SUFFIXES):
        top = os.path.basename(folder)
        folder = os.path.dirname(folder)
    return top if top and top.isidentifier() and top != "__init__" else None


def mypy_config_file(cwd: str) -> tuple[str, dict[str, object]] | None:
    """The project's mypy configuration as mypy finds it: (file, its global section), or None."""
    for folder in config._search_upwards(cwd):
        for name in config.CONFIG_FILE_NAMES:
            path = os.path.join(folder, name)
            if not os.path.isfile(path):
                continue
            try:
                if name.endswith(".toml"):
                    with open(path, "rb") as f:
                        tool = tomllib.load(f).get("tool")
                    section = tool.get("mypy") if isinstance(tool, dict) else None
                    if isinstance(section, dict):
                        return path, section
                else:
                    parser = configparser.RawConfigParser()
                    parser.read(path, encoding="utf-8")
                    if parser.has_section("mypy"):
                        return path, dict(parser.items("mypy"))
            except (OSError, ValueError, configparser.Error):
                continue  # mypy itself reports a broken file
    return None


def _configured_mypy_path(cwd: str) -> tuple[list[str], str | None]:
    found = mypy_config_file(cwd)
    if found is None:
        return [], None
    path, section = found
    value = section.get("mypy_path")
    if isinstance(value, str):
        items = [p for p in re.split(r"[,:]", value) if p.strip()]
    elif isinstance(value, list):
        items = [str(p) for p in value]
    else:
        return [], None
    here = os.path.dirname(os.path.abspath(path))
    folders = []
    for item in items:
        item = (
            item.strip()
            .replace("$MYPY_CONFIG_FILE_DIR", here)
            .replace("${MYPY_CONFIG_FILE_DIR}", here)
        )
        folders.append(os.path.normpath(os.path.join(cwd, os.path.expanduser(item))))
    return folders, f"{os.path.relpath(path, cwd)}: mypy_path"


def find_layout(paths: Sequence[str], cwd: str | None = None) -> Layout:
    """Where the project's modules are, for ``typed-pallas check PATHS`` run from ``cwd``."""
    cwd = os.path.abspath(cwd or os.getcwd())
    folders: list[str] = []
    origins: list[str] = []
    configured, origin = _configured_mypy_path(cwd)
    for folder in configured:
        if folder not in folders:
            folders.append(folder)
            origins.append(origin or "mypy_path")
    src_found = False
    for path in paths:
        src = _src_folder(os.path.abspath(path), cwd)
        if src is not None:
            src_found = True
            if src not in folders:
                folders.append(src)
                origins.append(f"src layout ({os.path.relpath(src, cwd)}{os.sep})")
    names = own_module_names(cwd)
    for folder in folders:
        names |= own_module_names(folder)
    for path in paths:
        top = _top_package(path)
        if top:
            names.add(top)
    return Layout(tuple(folders), tuple(origins), src_found, tuple(sorted(names)))


def python_files(paths: Iterable[str]) -> Iterator[str]:
    """The .py and .pyi files ``paths`` name or hold (skipping what mypy skips), in order.

    A file named on the command line is given whatever its name."""
    for path in paths:
        if os.path.isfile(path):
            yield path
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(
                d
                for d in dirs
                if not d.startswith(".")
                and d not in ("__pycache__", "site-packages", "node_modules")
            )
            yield from (
                os.path.normpath(os.path.join(root, f)) for f in sorted(files) if _is_python_file(f)
            )


def python_files_in(paths: Iterable[str]) -> bool:
    """Whether ``paths`` name a file or a folder holding a .py or .pyi file (skipping what mypy skips)."""
    return next(python_files(paths), None) is not None


def unresolved_module(code: str | None, message: str) -> str | None:
    """The module an ``import-not-found`` error names, or None for any other message."""
    if code not in IMPORT_NOT_FOUND_CODES:
        return None
    m = _MODULE_NAMED.search(message)
    return m.group(1) if m else None
