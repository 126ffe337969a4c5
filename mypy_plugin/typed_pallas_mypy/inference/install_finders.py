"""Where installed modules are that no ``sys.path`` entry holds: ``.pth`` files and the
import-hook finders of editable installs, read as text (never imported or run).

Python finds a module through its path entries, the path lines of the ``.pth`` files in
each site folder, and finders that ``.pth`` import lines install. Editable installs
(``pip install -e .``) use such finders; what they map is a literal in the file they
install, read here with :func:`ast.literal_eval`:

* setuptools (default, "lenient" mode): ``__editable__.NAME-VERSION.pth`` imports
  ``__editable___NAME_VERSION_finder.py``, which holds ``MAPPING = {"pkg": "/src/pkg"}``
  (a top-level name to its package folder or module file) and
  ``NAMESPACES = {"ns": ["/src/ns"]}``. Its "strict" and "compat" modes write a path line.
* hatchling with ``dev-mode-exact`` (the ``editables`` library): ``_editable_impl_NAME.pth``
  imports ``_editable_impl_NAME.py``, whose calls ``F.map_module("pkg",
  "/src/pkg/__init__.py")`` name a module and its file. Its default mode writes a path line.
* scikit-build-core (``wheel.cmake = false`` or not): ``_editable_skbc_NAME.pth`` imports
  ``_editable_skbc_NAME.py`` (and may add a path line), which ends in
  ``install({"pkg": "/src/pkg/__init__.py", "pkg.sub": "/src/pkg/sub.py"}, {...}, ...)``:
  its first dict maps dotted module names to their source files.
* flit_core and pdm-backend write a path line (pdm's ``editable-backend = "editables"``
  writes hatchling's ``editables`` format).

What this module does not do: import or execute anything, or follow a finder whose mapping
is not a literal (it is left out: its modules stay unknown, never a crash).
:func:`finders_of` is cached per site folder and read again when the folder changes.
"""

from __future__ import annotations

import ast
import os
from dataclasses import dataclass, field

__all__ = ["Finders", "finders_of"]

#: a finder file larger than this is not read (the formats above are a few kilobytes)
_MAX_BYTES = 1 << 20


@dataclass(frozen=True)
class Finders:
    """What one site folder's ``.pth`` files add to where modules are found."""

    #: path lines (absolute, existing folders), in file order
    paths: tuple[str, ...] = ()
    #: dotted module name -> its package folder or module file
    modules: dict[str, str] = field(default_factory=dict)
    #: namespace package -> its folders
    namespaces: dict[str, tuple[str, ...]] = field(default_factory=dict)


_CACHE: dict[str, tuple[int, Finders]] = {}


def finders_of(root: str) -> Finders:
    """The ``.pth`` path lines and editable finders' mappings of the site folder ``root``
    (empty when it has none or cannot be read)."""
    try:
        stamp = os.stat(root).st_mtime_ns
        names = sorted(os.listdir(root))
    except OSError:
        return Finders()
    cached = _CACHE.get(root)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    paths: list[str] = []
    modules: dict[str, str] = {}
    namespaces: dict[str, tuple[str, ...]] = {}
    for name in names:
        if not name.endswith(".pth"):
            continue
        for line in _lines(os.path.join(root, name)):
            if line.startswith(("import ", "import\t")):
                for imported in _imported(line):
                    _read_finder(os.path.join(root, imported + ".py"), modules, namespaces)
                continue
            folder = line if os.path.isabs(line) else os.path.join(root, line)
            folder = os.path.normpath(folder)
            if folder not in paths and os.path.isdir(folder):
                paths.append(folder)
    found = Finders(tuple(paths), modules, namespaces)
    _CACHE[root] = (stamp, found)
    return found


def _lines(path: str) -> list[str]:
    text = _text(path)
    if text is None:
        return []
    return [
        line.strip()
        for line in text.splitlines()
        if line.strip() and not line.lstrip().startswith("#")
    ]


def _text(path: str) -> str | None:
    try:
        if os.path.getsize(path) > _MAX_BYTES:
            return None
        with open(path, encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def _imported(line: str) -> list[str]:
    """The top-level modules an ``import`` line of a ``.pth`` file imports."""
    try:
        tree = ast.parse(line)
    except (SyntaxError, ValueError):
        return []
    found: list[str] = []
    for node in tree.body:
        if isinstance(node, ast.Import):
            found.extend(
                alias.name for alias in node.names if alias.name.isidentifier()
            )  # dotted names are packages, never a finder file
    return found


def _read_finder(
    path: str, modules: dict[str, str], namespaces: dict[str, tuple[str, ...]]
) -> None:
    """Add what the finder file at ``path`` maps (its literals only)."""
    text = _text(path)
    if text is None:
        return
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return
    for node in ast.walk(tree):
        if isinstance(node, (ast.Assign, ast.AnnAssign)):
            targets = node.targets if isinstance(node, ast.Assign) else [node.target]
            names = {t.id for t in targets if isinstance(t, ast.Name)}
            if node.value is None:
                continue
            if "MAPPING" in names:  # setuptools
                for module, where in _str_dict(node.value).items():
                    _add(modules, module, where)
            if "NAMESPACES" in names:
                for module, folders in _literal_dict(node.value).items():
                    if isinstance(folders, (list, tuple)) and all(
                        isinstance(f, str) and os.path.isabs(f) for f in folders
                    ):
                        namespaces.setdefault(module, tuple(folders))
        elif isinstance(node, ast.Call):
            callee = node.func
            name = (
                callee.attr
                if isinstance(callee, ast.Attribute)
                else callee.id
                if isinstance(callee, ast.Name)
                else ""
            )
            if name == "map_module" and len(node.args) == 2:  # editables (hatchling, pdm)
                named, file = (_literal(arg) for arg in node.args)
                if isinstance(named, str) and isinstance(file, str):
                    _add(modules, named, file)
            elif name == "install" and node.args:  # scikit-build-core
                for module, where in _str_dict(node.args[0]).items():
                    if where.endswith(".py"):
                        _add(modules, module, where)


def _add(modules: dict[str, str], module: str, where: str) -> None:
    if module and all(part.isidentifier() for part in module.split(".")) and os.path.isabs(where):
        modules.setdefault(module, os.path.normpath(where))


def _literal(node: ast.expr) -> object:
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _literal_dict(node: ast.expr) -> dict[str, object]:
    value = _literal(node)
    if not isinstance(value, dict):
        return {}
    return {k: v for k, v in value.items() if isinstance(k, str)}


def _str_dict(node: ast.expr) -> dict[str, str]:
    return {k: v for k, v in _literal_dict(node).items() if isinstance(v, str)}
