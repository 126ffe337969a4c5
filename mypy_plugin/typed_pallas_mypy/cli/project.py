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
  When several checked files would have the same module name under mypy's default
  naming (``a/kernel.py`` and ``b/kernel.py`` in folders without ``__init__.py``: mypy
  stops on "Duplicate module named"), ``explicit_package_bases`` is set too, so that each
  file is the module its path from the current folder names (``a.kernel``), and the
  layout says so in one line (:meth:`Layout.note`, :func:`shared_module_names`); a
  folder whose files import each other by bare name is then a ``mypy_path`` folder of
  its own (:func:`sibling_import_folders`), so those imports still resolve. Where
  that still leaves names shared (folders that are no package names:
  ``flash-attn/kernel.py``), the layout splits the files into groups for one mypy run
  each (:func:`module_groups`, :func:`group_aliases`).
* it lists the project's own top-level module names (the modules and packages in the
  current folder, in each ``mypy_path`` folder, and the top package of each PATH):
  the preset reports mypy's ``import-not-found`` for exactly those
  (:func:`typed_pallas_mypy.cli.findings.preset_config`), and ``check`` turns those
  errors into one warning: what a module the project cannot import defines is ``Any``,
  so findings that depend on it are missed.
* :func:`read_silencing` reads what the project's mypy configuration silences, with
  mypy's own parser (``mypy.config_parser``), so that ``check`` and ``typed-pallas lsp``
  report what mypy run with that configuration reports: ``disable_error_code`` and
  ``enable_error_code`` (globally and per module), ``ignore_errors`` (globally and per
  module), ``exclude`` and ``exclude_gitignore``. Error codes are checked against
  the codes mypy and the plugin define; a code of another plugin the configuration
  loads (``check`` loads only typed-pallas') is left out. A value mypy cannot read, an
  unknown code, or an ``exclude`` that is no regular expression is a
  :class:`MypyConfigError` (mypy itself stops on an unknown code with an internal
  error when it is in a per-module section).
* :func:`python_files_in` says whether PATHS hold any Python file at all (the empty
  selection is handled by ``check``); :func:`python_files` lists them (``check`` looks
  for the files that opt out of mypy among them); :func:`is_python_file` says whether a
  file named on the command line is Python (``.py``, ``.pyi``, or a ``python`` ``#!``
  line).

What it does not do: change any file, import the project or jax, import mypy except in
:func:`read_silencing` (and only when the project has a mypy configuration), or read
any other mypy setting than ``mypy_path`` and the silencing ones above (pass mypy
options after ``--``).
"""

from __future__ import annotations

import configparser
import difflib
import io
import os
import re
import tomllib
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from typing import Final

from typed_pallas_mypy import config

__all__ = [
    "PLUGIN_MODULE",
    "SILENCING_KEYS",
    "Layout",
    "MypyConfigError",
    "Silencing",
    "checked_files",
    "default_module_name",
    "find_layout",
    "group_aliases",
    "is_python_file",
    "module_groups",
    "mypy_config_file",
    "mypy_module",
    "own_module_names",
    "package_bases",
    "python_files",
    "python_files_in",
    "read_silencing",
    "shared_module_names",
    "sibling_import_folders",
    "unresolved_module",
]

#: folders never taken for modules of the project (mypy skips the first three too)
SKIPPED_FOLDERS: Final = frozenset(
    {"__pycache__", "site-packages", "node_modules", "build", "dist"}
)
PY_SUFFIXES: Final = (".py", ".pyi")
#: why a folder is in ``mypy_path`` when its files import each other by bare name
IMPORT_ROOT: Final = "its files import each other"
#: mypy's error codes for an import it cannot resolve (``import`` before mypy 0.990)
IMPORT_NOT_FOUND_CODES: Final = frozenset({"import-not-found", "import"})
_MODULE_NAMED = re.compile(r'module named "([^"]+)"')
#: the mypy settings that silence errors, read from the project's configuration globally
#: and per module (``exclude`` and ``exclude_gitignore`` are global only)
SILENCING_KEYS: Final = ("disable_error_code", "enable_error_code", "ignore_errors")
#: the settings whose values are error codes
CODE_KEYS: Final = ("disable_error_code", "enable_error_code")
#: The module mypy loads as the plugin (a ``plugins`` entry may name a submodule, and
#: an entry point after ``:``).
PLUGIN_MODULE: Final = "typed_pallas_mypy"


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
    #: module names that several checked files would have under mypy's default naming
    #: (name -> the files), which made ``explicit_package_bases`` the layout's setting
    duplicates: tuple[tuple[str, tuple[str, ...]], ...] = ()
    #: where files share a module name even with ``explicit_package_bases`` (folders
    #: that are no package names: ``flash-attn/kernel.py``): the files of each mypy run,
    #: in which no two share one (:func:`module_groups`); empty: one run over PATHS
    groups: tuple[tuple[str, ...], ...] = ()

    def note(self) -> str | None:
        """One line on what was done for files that share a module name, or None."""
        if not self.duplicates:
            return None
        name, files = self.duplicates[0]
        more = len(self.duplicates) - 1
        shared = (
            f"{len(self.duplicates)} module name{'s are' if more else ' is'} shared by several "
            f"files ({name}: {', '.join(files[:3])}{', ...' if len(files) > 3 else ''}"
            f"{f'; {more} more' if more else ''}): "
        )
        roots = [
            o.removeprefix(f"{IMPORT_ROOT} (")[:-1]
            for o in self.origins
            if o.startswith(IMPORT_ROOT)
        ]
        if roots:
            many = len(roots) > 1
            shared += (
                f"{len(roots)} folder{'s' if many else ''} whose files import each other by "
                f"name {'are import roots' if many else 'is an import root'} "
                f"({roots[0]}{', ...' if many else ''}); "
            )
        if self.groups:
            return shared + (
                f"checked in {len(self.groups)} mypy runs, each over files whose module names "
                "differ"
            )
        return shared + (
            "each file is checked as the module its path from the project's root names "
            "(mypy's explicit_package_bases)"
        )


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
                    if name != "setup.cfg":  # mypy takes a mypy.ini without [mypy] too
                        return path, {}
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


def find_layout(
    paths: Sequence[str], cwd: str | None = None, exclude: Sequence[str] = ()
) -> Layout:
    """Where the project's modules are, for ``typed-pallas check PATHS`` run from ``cwd``
    (``exclude``: mypy's exclude patterns, :attr:`Silencing.exclude`)."""
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
    files = checked_files(paths, cwd, exclude)
    duplicates: tuple[tuple[str, tuple[str, ...]], ...] = ()
    if not src_found:
        duplicates = shared_module_names(files)
        # a bare import of such a name (``import kernel`` beside one of them) that stays
        # unresolved is reported by mypy, and ``check`` warns that findings may be missed
        names |= {name.split(".", 1)[0] for name, _ in duplicates}
    if duplicates:
        # a folder whose files import each other by bare name (``from kernel import f``
        # beside kernel.py) is a root of its own: a mypy_path folder, so an explicit base
        for folder in sibling_import_folders(files):
            if folder not in folders:
                folders.append(folder)
                origins.append(f"{IMPORT_ROOT} ({os.path.relpath(folder, cwd)}{os.sep})")
                names |= own_module_names(folder)
    explicit = src_found or bool(duplicates)
    groups: tuple[tuple[str, ...], ...] = ()
    if explicit:
        bases = package_bases(folders, cwd)
        if still := shared_module_names(files, bases):  # folders that are no package names
            duplicates = duplicates or still
            groups = module_groups(files, bases)
    return Layout(
        tuple(folders),
        tuple(origins),
        explicit,
        tuple(sorted(names)),
        duplicates,
        groups,
    )


#: the first module an import statement names (``import a.b``, ``from a import b``)
_IMPORTED: Final = re.compile(
    r"^[ \t]*(?:from[ \t]+(\w+)[\w.]*[ \t]+import\b|import[ \t]+(\w+))", re.M
)


def sibling_import_folders(files: Iterable[str]) -> list[str]:
    """The folders (absolute, sorted) that are no package (no ``__init__.py``) where a
    file imports another file of the same folder by its bare name (``from kernel import
    f`` beside ``kernel.py``): a script collection run from its own folder. The imports
    are read with a regular expression, not executed or parsed."""
    by_folder: dict[str, list[str]] = {}
    for file in files:
        folder = os.path.dirname(os.path.abspath(file))
        by_folder.setdefault(folder, []).append(os.path.abspath(file))
    found = []
    for folder, members in sorted(by_folder.items()):
        if _has_init(folder):
            continue
        stems = {os.path.splitext(os.path.basename(f))[0] for f in members}
        for file in members:
            try:
                with open(file, encoding="utf-8", errors="replace") as f:
                    text = f.read()
            except OSError:
                continue
            own = os.path.splitext(os.path.basename(file))[0]
            imported = {a or b for a, b in _IMPORTED.findall(text)}
            if (imported & stems) - {own}:
                found.append(folder)
                break
    return found


def _module_join(prefix: str, name: str) -> str:
    return f"{prefix}.{name}" if prefix else name


def _has_init(folder: str) -> bool:
    return any(os.path.isfile(os.path.join(folder, f"__init__{s}")) for s in PY_SUFFIXES)


def mypy_module(file: str, bases: frozenset[str] | None = None) -> tuple[str, str]:
    """(module name, base folder) that mypy gives a file it is asked to check, by its own
    rules (``mypy.find_sources``; namespace packages on, as by default): crawling up the
    folders above the file through those with an ``__init__.py`` and, with
    ``explicit_package_bases`` (``bases``: those folders, absolute), through namespace
    folders up to a base. Without a base or a package above it, a file is a top-level
    module in its own folder (``a/kernel.py`` is ``kernel``)."""
    cache: dict[str, tuple[str, str] | None] = {}

    def crawl(folder: str) -> tuple[str, str] | None:
        if folder in cache:
            return cache[folder]
        found: tuple[str, str] | None
        parent, name = os.path.split(folder)
        name = name.removesuffix("-stubs")
        if bases is not None and folder in bases:
            found = ("", folder)
        elif _has_init(folder):
            if not name.isidentifier():
                found = None  # mypy stops on it with its own error
            else:
                prefix, base = crawl(parent) or ("", parent)
                found = (_module_join(prefix, name), base)
        elif not name or not parent or parent == folder or not name.isidentifier():
            found = None
        else:
            above = crawl(parent)
            found = None if above is None else (_module_join(above[0], name), above[1])
        cache[folder] = found
        return found

    folder, filename = os.path.split(os.path.abspath(file))
    stem = next((filename[: -len(s)] for s in PY_SUFFIXES if filename.endswith(s)), filename)
    prefix, base = crawl(folder) or ("", folder)
    return (prefix, base) if stem == "__init__" else (_module_join(prefix, stem), base)


def default_module_name(file: str) -> str:
    """The module name mypy gives a file it is asked to check, without
    ``explicit_package_bases`` (:func:`mypy_module`)."""
    return mypy_module(file)[0]


def package_bases(mypy_path: Sequence[str], cwd: str) -> frozenset[str]:
    """The folders mypy's ``explicit_package_bases`` names modules from: ``$MYPYPATH``,
    ``mypy_path`` and the current folder."""
    env = [p for p in os.environ.get("MYPYPATH", "").split(os.pathsep) if p]
    return frozenset(os.path.normpath(os.path.abspath(p)) for p in [*env, *mypy_path, cwd])


def _excluded(file: str, cwd: str, exclude: Sequence[str]) -> bool:
    """Whether mypy's ``exclude`` patterns leave ``file`` out of a folder it walks (a
    pattern is searched in the path from ``cwd``, with ``/`` after a folder's name)."""
    if not exclude:
        return False
    relative = os.path.relpath(os.path.abspath(file), cwd).replace(os.sep, "/")
    parts = relative.split("/")
    candidates = ["/".join(parts[: i + 1]) + "/" for i in range(len(parts) - 1)] + [relative]
    return any(re.search(pattern, c) for pattern in exclude for c in candidates)


def checked_files(
    paths: Iterable[str], cwd: str | None = None, exclude: Sequence[str] = ()
) -> list[str]:
    """The .py and .pyi files mypy checks for ``paths``: :func:`python_files` without
    those ``exclude`` (mypy's patterns) leaves out of a folder it walks (a file named in
    ``paths`` is checked whatever the patterns say, as mypy does)."""
    cwd = os.path.abspath(cwd or os.getcwd())
    named = {os.path.normpath(p) for p in paths if os.path.isfile(p)}
    return [
        f
        for f in python_files(paths)
        if f in named or (_is_python_file(f) and not _excluded(f, cwd, exclude))
    ]


def shared_module_names(
    files: Iterable[str], bases: frozenset[str] | None = None
) -> tuple[tuple[str, tuple[str, ...]], ...]:
    """The module names (:func:`mypy_module`, with ``explicit_package_bases`` from
    ``bases``) that more than one of ``files`` would have, with those files (paths as
    given), sorted: mypy stops on them with "Duplicate module named" (``a/kernel.py`` and
    ``b/kernel.py``, folders without ``__init__.py``). A ``.py`` and its ``.pyi`` are one
    module."""
    by_name: dict[str, dict[str, str]] = {}
    for file in files:
        stem = os.path.splitext(os.path.abspath(file))[0]
        by_name.setdefault(mypy_module(file, bases)[0], {}).setdefault(stem, file)
    return tuple(
        (name, tuple(sorted(found.values())))
        for name, found in sorted(by_name.items())
        if len(found) > 1
    )


def module_groups(files: Sequence[str], bases: frozenset[str]) -> tuple[tuple[str, ...], ...]:
    """``files`` split into the fewest groups found greedily, one mypy run each, in which
    no two files have the same module name (:func:`mypy_module` with ``bases``). The
    files of one base folder stay together (their imports of each other resolve), in the
    first group where none of their names is taken."""
    roots: dict[str, list[tuple[str, str]]] = {}
    for file in files:
        name, base = mypy_module(file, bases)
        roots.setdefault(base, []).append((name, file))
    groups: list[tuple[set[str], list[str]]] = []
    for _, members in sorted(roots.items()):
        names = {name for name, _ in members}
        for taken, group in groups:
            if not names & taken:
                taken |= names
                group.extend(file for _, file in members)
                break
        else:
            groups.append((names, [file for _, file in members]))
    return tuple(tuple(sorted(group)) for _, group in groups)


def group_aliases(
    groups: Sequence[Sequence[str]], bases: frozenset[str]
) -> tuple[dict[str, str], ...]:
    """Per group of :func:`module_groups`: each file of the other groups -> this group's
    file of the same module name. mypy's cache is one per environment: a module whose
    text is unchanged since it was cached under another group's file is fresh, and mypy
    repeats its errors under that file's path; in this group's run they are this file's."""
    names = [{mypy_module(f, bases)[0]: os.path.normpath(f) for f in group} for group in groups]
    aliases = []
    for mine in names:
        found = {
            path: mine[name]
            for other in names
            if other is not mine
            for name, path in other.items()
            if name in mine
        }
        aliases.append(found)
    return tuple(aliases)


class MypyConfigError(ValueError):
    """The project's mypy configuration holds a silencing setting mypy cannot use: the
    message says where, what is wrong and what to write."""


Settings = tuple[tuple[str, str], ...]


@dataclass(frozen=True)
class Silencing:
    """What the project's mypy configuration silences (:func:`read_silencing`), as ini
    settings for ``check``'s preset and options for mypy's command line."""

    #: the configuration file it was read from, or None (no mypy configuration)
    file: str | None = None
    #: ``[mypy]`` settings: (key, value), values written as mypy's ini parser reads them
    settings: Settings = ()
    #: per-module settings: (pattern, settings), in the file's order
    modules: tuple[tuple[str, Settings], ...] = ()
    #: mypy's ``exclude`` regular expressions
    exclude: tuple[str, ...] = ()
    #: the project's other mypy plugins (``plugins``), which ``check`` does not load
    other_plugins: tuple[str, ...] = ()
    #: error codes the configuration names that neither mypy nor typed-pallas defines,
    #: left out because one of ``other_plugins`` may define them
    left_out: tuple[str, ...] = ()
    #: what mypy's parser said that makes it skip a section (a module pattern it cannot
    #: use): ``check`` warns, since that section may be meant to silence
    warnings: tuple[str, ...] = ()

    def arguments(self) -> list[str]:
        """mypy's command-line options for what the preset file cannot say: one
        ``--exclude`` per pattern (an ini ``exclude`` holds one regular expression)."""
        return [f"--exclude={pattern}" for pattern in self.exclude]

    def describe(self) -> list[str]:
        """What was taken from the configuration, for ``check -v``."""
        if self.file is None:
            return []
        taken = [key for key, _ in self.settings] + [
            f"[mypy-{pattern}] {', '.join(key for key, _ in settings)}"
            for pattern, settings in self.modules
        ]
        if self.exclude:
            taken.append("exclude")
        lines = [f"silencing from {self.file}: {'; '.join(taken) if taken else 'none'}"]
        if self.other_plugins:
            lines.append(
                f"not loaded: the plugin{'s' if len(self.other_plugins) > 1 else ''} "
                f"{', '.join(self.other_plugins)} of {self.file} (check loads typed-pallas' only)"
                + (f"; error codes left out: {', '.join(self.left_out)}" if self.left_out else "")
            )
        return lines


def _ini_value(value: object) -> str:
    """A parsed setting written back as mypy's ini parser reads it (a list of codes, a bool)."""
    if isinstance(value, list | tuple):
        return ",".join(str(v) for v in value)
    return str(value)


def _is_typed_pallas(plugin: str) -> bool:
    module = plugin.split(":", 1)[0].strip()
    return module == PLUGIN_MODULE or module.startswith(PLUGIN_MODULE + ".")


def read_silencing(cwd: str | None = None) -> Silencing:
    """What the project's mypy configuration (:func:`mypy_config_file`, the file mypy
    uses when run from ``cwd``) silences, read by mypy's own parser; raises
    :class:`MypyConfigError` for a silencing setting mypy cannot use."""
    cwd = os.path.abspath(cwd or os.getcwd())
    found = mypy_config_file(cwd)
    if found is None:
        return Silencing()
    path = found[0]
    shown = os.path.relpath(path, cwd)
    from mypy import config_parser
    from mypy.errorcodes import error_codes
    from mypy.options import Options

    from typed_pallas_mypy import errorcodes  # noqa: F401  (registers pallas-platform)

    options = Options()
    said = io.StringIO()
    saved = os.environ.get("MYPY_CONFIG_FILE_DIR")  # the parser sets it, as mypy does
    try:
        config_parser.parse_config_file(options, lambda: None, path, io.StringIO(), said)
    except Exception as e:  # mypy's parser on the user's file: any failure is the file's
        raise MypyConfigError(f"{shown}: mypy cannot read it: {e}; fix the file") from None
    finally:
        if saved is None:
            os.environ.pop("MYPY_CONFIG_FILE_DIR", None)
        else:
            os.environ["MYPY_CONFIG_FILE_DIR"] = saved
    messages = [line.strip() for line in said.getvalue().splitlines() if line.strip()]
    if options.config_file is None:  # the file itself could not be read
        why = "; ".join(m.removeprefix(f"{path}: ") for m in messages) or "unreadable"
        raise MypyConfigError(f"{shown}: mypy cannot read it: {why}; fix the file")
    warnings = []
    for message in messages:
        message = _SECTION_PREFIX.sub("]: ", message.replace(path, shown, 1), count=1)
        _refuse_silencing_message(message)
        if _BAD_PATTERN in message:  # mypy skips that section: say so, it may silence
            warnings.append(f"{message.rstrip('.')}; mypy ignores that section")
    other_plugins = tuple(p for p in options.plugins if not _is_typed_pallas(p))
    left_out: list[str] = []

    def known(codes: object, where: str, key: str) -> list[str]:
        kept = []
        for code in codes if isinstance(codes, list) else []:
            if code in error_codes:
                kept.append(code)
            elif other_plugins:
                left_out.append(code)
            else:
                close = difflib.get_close_matches(code, list(error_codes), n=1)
                hint = f" (did you mean '{close[0]}'?)" if close else ""
                raise MypyConfigError(
                    f"{where} {key}: unknown error code '{code}'{hint}; name a code that mypy "
                    "or typed-pallas defines (mypy stops on an unknown one too)"
                )
        return kept

    def silencing(values: Mapping[str, object], where: str) -> Settings:
        out = []
        for key, value in values.items():
            if key in CODE_KEYS:
                value = known(value, where, key)
            if value or (key == "ignore_errors" and value is not None):
                out.append((key, _ini_value(value)))
        return tuple(out)

    # global: mypy's defaults (no code, ignore_errors off) are left out
    settings = list(
        silencing(
            {key: getattr(options, key) or None for key in SILENCING_KEYS},
            f"{shown}: [mypy]:",
        )
    )
    if options.exclude_gitignore:
        settings.append(("exclude_gitignore", "True"))
    modules = []
    for pattern, values in options.per_module_options.items():
        where = config_parser.get_prefix(shown, f"mypy-{pattern}")
        taken = silencing({k: v for k, v in values.items() if k in SILENCING_KEYS}, where)
        if taken:
            modules.append((pattern, taken))
    for pattern in options.exclude:
        try:
            re.compile(pattern)
        except re.error as e:
            raise MypyConfigError(
                f"{shown}: [mypy]: exclude: {pattern!r} is not a regular expression ({e}); "
                "write a Python regular expression"
            ) from None
    return Silencing(
        shown, tuple(settings), tuple(modules), tuple(options.exclude), other_plugins,
        tuple(dict.fromkeys(left_out)), tuple(warnings),
    )  # fmt: skip


#: mypy's parser's complaint about a value: ``FILE: [SECTION]: KEY: why`` (a per-module
#: section's prefix has no space before the key)
_VALUE_PROBLEM: Final = re.compile(r"\]: ?(?P<key>\w+): ")
_UNRECOGNIZED: Final = re.compile(r"\]: ?Unrecognized option: (?P<key>\w+) = ")
_SECTION_PREFIX: Final = re.compile(r"\]: ?")
#: what mypy's parser says of a section whose module pattern it cannot use
_BAD_PATTERN: Final = "Patterns must be fully-qualified module names"


def _refuse_silencing_message(message: str) -> None:
    """Raise for what mypy's parser said about a silencing setting: a value it could not
    read (it would drop the setting and go on), or a misspelt key."""
    if (m := _VALUE_PROBLEM.search(message)) and m["key"] in (*SILENCING_KEYS, "exclude"):
        raise MypyConfigError(f"{message}; write the value as mypy's documentation shows it")
    if (m := _UNRECOGNIZED.search(message)) and (
        close := difflib.get_close_matches(m["key"], SILENCING_KEYS, n=1)
    ):
        hint = "" if "did you mean" in message else f"; did you mean {close[0]}?"
        raise MypyConfigError(f"{message}: mypy ignores it{hint}")


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


def is_python_file(path: str) -> bool:
    """Whether a file named on the command line is Python: a ``.py`` or ``.pyi`` file, or a
    script whose first line is a ``#!`` line that runs Python (mypy checks any file it is
    given as Python; a ``notes.txt`` is not one)."""
    if _is_python_file(path):
        return True
    try:
        with open(path, "rb") as f:
            first = f.readline(200)
    except OSError:
        return False
    return first.startswith(b"#!") and b"python" in first


def python_files_in(paths: Iterable[str]) -> bool:
    """Whether ``paths`` name a file or a folder holding a .py or .pyi file (skipping what mypy skips)."""
    return next(python_files(paths), None) is not None


def unresolved_module(code: str | None, message: str) -> str | None:
    """The module an ``import-not-found`` error names, or None for any other message."""
    if code not in IMPORT_NOT_FOUND_CODES:
        return None
    m = _MODULE_NAMED.search(message)
    return m.group(1) if m else None
