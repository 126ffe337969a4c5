"""``typed-pallas init``: set a project up so that every type checker sees the platform types.

What each checker needs, written into the project (``typed-pallas explain editors``):

* mypy: ``plugins`` gets ``typed_pallas_mypy`` and ``check_untyped_defs = true``, in the
  file mypy itself reads (``mypy.ini``, ``.mypy.ini``, ``pyproject.toml`` ``[tool.mypy]``,
  ``setup.cfg`` ``[mypy]``, in mypy's order; a new ``[tool.mypy]`` table otherwise).
* pyright, basedpyright, Pylance: they read typed-pallas's ``jax-stubs`` only from their
  ``stubPath`` (``docs/checkers.md``). ``init`` copies the installed stubs into
  ``.typings/jax-stubs/`` (a dot folder: pyright and mypy leave it out of ``pyright .`` /
  ``mypy .``; a ``.ignore`` file keeps ty out) and sets ``stubPath = ".typings"``, a path
  relative to the project, so it works in every venv and for every Python. A config file
  also turns Pylance's checking on (pyright's ``standard`` mode; Pylance is ``off`` without
  one). Rerun ``init`` after upgrading typed-pallas: it refreshes the copy.
* pyrefly: ``preset = "default"`` (its unconfigured ``basic`` preset reports almost nothing).
* ty: nothing (it reads the stubs from ``sys.path``).

It merges into the user's files and never overwrites a setting: a key already set to
another value is left as it is, with a warning. A second run changes nothing and says so;
``--dry-run`` prints the diff and writes nothing. TOML files are read with ``tomllib`` and
edited with ``tomlkit``, which keeps every comment and the layout (a key is added at the
end of its table, a plugin first in a ``plugins`` array); INI files are read with
``configparser`` and edited as text, for the same reason.

Bad input writes nothing and is one line on stderr (``typed-pallas: error: ...``, exit
status 2) that says which file and what to do: a PATH that is not a folder, a file that
is not UTF-8 text, cannot be read, or is not valid TOML or INI, and a typed-pallas
configuration the plugin would refuse (mypy would stop on it after ``init``).

Next to ``jax-pyrefly-stubs`` (detected through ``importlib.metadata``) pyright,
basedpyright and Pylance take its ``jax-stubs`` for the whole of ``jax`` (it has an
``__init__.pyi`` and no ``partial\\n`` marker), so ``jax._src`` resolves nowhere and JAX's params
classes derive from ``Unknown``, which passes for any platform; pyrefly and ty take the
first ``jax-stubs`` on the path (theirs) and never see typed-pallas's. ``init`` then also
writes, in the project (:func:`overlay_links`, ``docs/checkers.md``):

* mypy: the override that skips their ``jax.numpy`` stub (it stops mypy);
* pyright, basedpyright, Pylance: a ``jax/`` folder next to ``jax-stubs`` in the stub
  folder, of links to the environment's jax modules their stubs lack (``jax._src``,
  ``jax.experimental``, ``jax.sharding``...; a ``.gitignore`` in it keeps the links, which
  name this environment's paths, out of git): pyright takes a module from ``stubPath``
  whenever it is there, so it finds ``jax._src`` there and still takes ``jax``,
  ``jax.numpy``, ``jax.lax``... from their stubs;
* pyrefly: the stub folder in ``search-path``; ty: in ``[environment] extra-paths``:
  both then read typed-pallas's stubs first and the rest of ``jax`` from theirs.

Rerun it after changing the environment (the links follow it). Where the project cannot
be set up for a checker (a config ``init`` cannot edit), what is left is a link in the
environment (:func:`environment_links`): ``init`` makes it only with ``--yes`` and says how
to undo it; without ``--yes`` it says which link and how to allow it.
:func:`coinstall_warning` is the line ``typed-pallas check`` prints there.

What it does not do: install anything, change the environment without ``--yes``, touch a
``pyrightconfig.json`` it cannot parse (it prints the line to add instead), or edit VS
Code's settings.
"""

from __future__ import annotations

import argparse
import configparser
import difflib
import importlib.util
import json
import re
import sys
import tomllib
from collections.abc import Callable, Iterable, MutableMapping
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, Final

from typed_pallas._versions import installed_version

if TYPE_CHECKING:  # tomlkit is imported when a TOML file is edited, not when the CLI starts
    from tomlkit import TOMLDocument

__all__ = [
    "STUB_DIR",
    "EnvLink",
    "Environment",
    "InitError",
    "Plan",
    "coinstall_warning",
    "environment_links",
    "find_installed_stubs",
    "make_plan",
    "overlay_links",
    "read_text",
    "run_init",
]

PLUGIN: Final = "typed_pallas_mypy"
#: the project-relative folder pyright, basedpyright and Pylance read the stubs from
STUB_DIR: Final = ".typings"
STUB_PACKAGE: Final = "jax-stubs"
PYREFLY_PRESET: Final = "default"
JAX_PYREFLY_STUBS: Final = "jax-pyrefly-stubs"
#: the modules of jax-pyrefly-stubs that stop mypy (pyrefly's shape DSL in type arguments)
MYPY_SKIP_MODULES: Final = ("jax.numpy", "jax.numpy.*")
SKIP_COMMENT: Final = (
    "jax-pyrefly-stubs' jax.numpy stub stops mypy (typed-pallas init; see "
    "`typed-pallas explain checkers`)"
)
MYPY_INI_NAMES: Final = ("mypy.ini", ".mypy.ini")
#: who reads ``stubPath``, and who reads the stub folder through their own path settings
PYRIGHT_FAMILY: Final = "pyright, basedpyright, Pylance"
PYREFLY_TY: Final = "pyrefly, ty"
#: the project's overlay of the environment's jax, in the stub folder, next to jax-stubs
OVERLAY: Final = "jax"
OVERLAY_IGNORE: Final = (
    "# typed-pallas init: links to this environment's jax modules that jax-pyrefly-stubs lacks,\n"
    "# for pyright (they name this machine's paths: rerun typed-pallas init after changing it)\n*\n"
)
#: init's closing lines: commands an installed user has (no page of the checkout's docs/)
NEXT_STEPS: Final = (
    "next: `typed-pallas check` runs the plugin over the project (also in CI): it sees an "
    "unmodified pl.pallas_call under a platform guard, which pyright does not",
    "each editor's setup, and `typed-pallas lsp` for that check as you type: "
    "`typed-pallas explain editors`",
)
HEADER: Final = "# Copied by `typed-pallas init` from typed-pallas {version}; rerun it after upgrading typed-pallas.\n"


@dataclass
class Plan:
    """What ``init`` would write: new text per file, and what it found already set."""

    root: Path
    #: path -> (text before or None for a new file, text after)
    files: dict[Path, tuple[str | None, str]] = field(default_factory=dict)
    changed: list[str] = field(default_factory=list)
    unchanged: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    #: files that are copies of typed-pallas's stubs (the diff names them, without their text)
    copies: set[Path] = field(default_factory=set)
    #: links in the project: path -> (target before or None, target after or None to remove)
    links: dict[Path, tuple[str | None, str | None]] = field(default_factory=dict)
    #: links in the environment that only ``--yes`` makes
    env_links: list[EnvLink] = field(default_factory=list)

    @property
    def empty(self) -> bool:
        """Nothing to write in the project."""
        return not self.files and not self.links

    def text(self, path: Path) -> str | None:
        """The text ``path`` will have: planned, or on disk (None: no such file)."""
        if path in self.files:
            return self.files[path][1]
        return read_text(path)

    def diff(self) -> str:
        out: list[str] = []
        for path, (before, after) in sorted(self.files.items()):
            rel = path.relative_to(self.root).as_posix()
            if path in self.copies:
                verb = "new" if before is None else "updated"
                out.append(
                    f"{verb} file {rel}: typed-pallas's stub ({len(after.splitlines())} lines)\n"
                )
                continue
            out.extend(
                difflib.unified_diff(
                    (before or "").splitlines(keepends=True),
                    after.splitlines(keepends=True),
                    fromfile="/dev/null" if before is None else f"a/{rel}",
                    tofile=f"b/{rel}",
                )
            )
        for path, (was, then) in sorted(self.links.items()):
            rel = path.relative_to(self.root).as_posix()
            if then is None:
                out.append(f"removed link {rel} (to {was})\n")
            else:
                out.append(f"{'new' if was is None else 'updated'} link {rel} -> {then}\n")
        return "".join(line if line.endswith("\n") else line + "\n" for line in out)


# --------------------------------------------------------------------------- detection


def coinstall_warning() -> str | None:
    """The stderr line for an environment that also has jax-pyrefly-stubs, or None."""
    theirs = installed_version(JAX_PYREFLY_STUBS)
    if theirs is None:
        return None
    return (
        f"typed-pallas: {JAX_PYREFLY_STUBS} {theirs} is installed: its jax.numpy stub stops mypy unless that "
        "module is skipped (typed-pallas check's preset does not skip it): run `typed-pallas init` (it adds "
        "the override, and sets pyright, basedpyright, Pylance, pyrefly and ty up to see the platform types "
        "next to it), then run mypy itself"
    )


@dataclass(frozen=True)
class Environment:
    """Where this Python's jax, jax-pyrefly-stubs' ``jax-stubs`` and typed-pallas's are."""

    #: the jax package folder (None: jax is not installed here)
    jax: Path | None
    #: the first ``jax-stubs`` on ``sys.path`` with an ``__init__.pyi`` (jax-pyrefly-stubs')
    theirs: Path | None
    #: typed-pallas's ``jax-stubs`` (:func:`find_installed_stubs`)
    ours: Path | None

    @classmethod
    def discover(cls) -> Environment:
        spec = importlib.util.find_spec("jax")  # finds the package without importing it
        jax_dir = next(iter(spec.submodule_search_locations or ()), None) if spec else None
        theirs = next(
            (
                Path(entry or ".", STUB_PACKAGE)
                for entry in sys.path
                if Path(entry or ".", STUB_PACKAGE, "__init__.pyi").is_file()
            ),
            None,
        )
        return cls(Path(jax_dir) if jax_dir else None, theirs, find_installed_stubs())


def _module_name(path: Path) -> str | None:
    """The module name ``path`` provides in its package (None: not a module)."""
    if path.is_dir():
        return path.name if path.name != "__pycache__" else None
    if path.suffix in (".py", ".pyi"):
        return path.stem
    return None


def overlay_links(theirs: Path, jax_dir: Path) -> dict[PurePosixPath, Path]:
    """What the project's ``jax/`` overlay links (path under ``jax/`` -> the environment's
    module): every module of ``jax_dir`` that ``theirs`` (a complete stub package) does
    not provide, package by package. pyright looks a module up in ``stubPath`` before the
    environment, so these resolve there while ``jax`` and the modules ``theirs`` has still
    come from ``theirs``."""
    links: dict[PurePosixPath, Path] = {}

    def walk(theirs_dir: Path, real_dir: Path, at: PurePosixPath) -> None:
        provided = {name: c for c in theirs_dir.iterdir() if (name := _module_name(c))}
        for child in sorted(real_dir.iterdir()):
            name = _module_name(child)
            if name is None or name == "__init__":
                continue
            mine = provided.get(name)
            if mine is None:
                links[at / child.name] = child
            elif mine.is_dir() and child.is_dir():
                walk(mine, child, at / child.name)

    if theirs.is_dir() and jax_dir.is_dir():
        walk(theirs, jax_dir, PurePosixPath())
    return links


@dataclass(frozen=True)
class EnvLink:
    """A link in the environment, made only when the user allows it (``--yes``)."""

    #: the checkers it is for
    who: str
    path: Path
    target: str

    def command(self) -> str:
        return f"ln -s {self.target} {self.path}"

    def undo(self) -> str:
        return f"rm {self.path}"


def environment_links(env: Environment) -> dict[str, EnvLink | None]:
    """The links that make the other checkers see typed-pallas's stubs next to
    jax-pyrefly-stubs with no project setting, by who needs them (None: there already).

    ``"pyright, basedpyright, Pylance"``: jax linked into typed-pallas's own ``sys.path``
    root (the ``.pth`` one), where pyright finds ``jax._src`` and the pallas stubs after
    their ``jax-stubs`` (complete) does not have them. ``"pyrefly, ty"``: typed-pallas's
    ``experimental`` linked into their ``jax-stubs``, the first they read.
    """
    links: dict[str, EnvLink | None] = {}
    if env.ours is None or env.jax is None or env.theirs is None:
        return links
    ours = env.ours.resolve()
    pyright = ours.parent / "jax"
    links[PYRIGHT_FAMILY] = (
        None if pyright.exists() else EnvLink(PYRIGHT_FAMILY, pyright, str(env.jax))
    )
    experimental = env.theirs / "experimental"
    links[PYREFLY_TY] = (
        None
        if experimental.resolve() == ours / "experimental"
        else EnvLink(PYREFLY_TY, experimental, str(ours / "experimental"))
    )
    return links


def find_installed_stubs() -> Path | None:
    """typed-pallas's ``jax-stubs`` folder on ``sys.path`` (the wheel's or the checkout's)."""
    for entry in sys.path:
        candidate = Path(entry or ".", STUB_PACKAGE)
        marker = candidate / "experimental" / "pallas" / "tpu.pyi"
        if marker.is_file() and "typed_pallas" in marker.read_text(encoding="utf-8"):
            # the folder the file is really in: jax-pyrefly-stubs' jax-stubs (first on sys.path)
            # reaches it too once docs/editors.md's link for pyrefly and ty is there
            return marker.resolve().parents[2]
    return None


# --------------------------------------------------------------------------- TOML (tomlkit)


def _toml_load(text: str | None, path: Path) -> dict[str, Any] | None:
    """The values of a TOML text (tomllib, the reference parser); {} for no file."""
    if text is None:
        return {}
    try:
        return tomllib.loads(text)
    except tomllib.TOMLDecodeError as e:
        raise InitError(f"{path}: not valid TOML ({e}); fix it and rerun typed-pallas init") from e


def _table(data: dict[str, Any], dotted: str) -> dict[str, Any] | None:
    node: Any = data
    for part in dotted.split("."):
        if not isinstance(node, dict) or part not in node:
            return None
        node = node[part]
    return node if isinstance(node, dict) else None


def _toml_edit(text: str, edit: Callable[[TOMLDocument], bool]) -> str | None:
    """``text`` after ``edit`` made its change with tomlkit, which keeps every comment and
    the layout; None when ``edit`` returns False (it cannot make the change there)."""
    import tomlkit

    try:
        doc = tomlkit.parse(text)
        if not edit(doc):
            return None
        return tomlkit.dumps(doc)
    except Exception:  # tomlkit refuses an edit of an unusual layout: a warning, not a crash
        return None


def _toml_table(doc: TOMLDocument, dotted: str) -> MutableMapping[str, Any] | None:
    """The table ``dotted`` of ``doc`` (``""``: the document), made if absent (``[a.b]``, not
    ``[a]``); None when a part of the path is a value that is not a table."""
    import tomlkit

    node: MutableMapping[str, Any] = doc
    parts = dotted.split(".") if dotted else []
    for i, part in enumerate(parts):
        if part not in node:
            node[part] = tomlkit.table(is_super_table=i < len(parts) - 1)
        child = node[part]
        if not isinstance(child, MutableMapping):
            return None
        node = child
    return node


def _toml_add_key(text: str, dotted: str, key: str, value: object) -> str | None:
    """``key = value`` added to table ``dotted`` (the table made, at the end, if absent)."""

    def edit(doc: TOMLDocument) -> bool:
        table = _toml_table(doc, dotted)
        if table is None or key in table:
            return False
        table[key] = value
        return True

    return _toml_edit(text, edit)


def _toml_prepend_to_array(
    text: str, dotted: str, key: str, item: str, *, first: bool = True
) -> str | None:
    """``item`` put first (or last) in the array (or comma string) ``key`` of table ``dotted``."""
    import tomlkit

    def edit(doc: TOMLDocument) -> bool:
        table = _toml_table(doc, dotted)
        if table is None or key not in table:
            return False
        from tomlkit.items import Array

        old = table[key]
        if isinstance(old, Array) and "\n" in old.as_string():
            # a multi-line array: one line more, its comments kept
            old.insert(0 if first else len(old), item)
            return True
        if isinstance(old, Array):
            items = [item, *old] if first else [*old, item]
        elif isinstance(old, str):
            parts = [p.strip() for p in old.split(",") if p.strip()]
            items = [item, *parts] if first else [*parts, item]
        else:
            return False
        new = tomlkit.array()
        new.extend(items)
        new.trivia.comment_ws, new.trivia.comment = old.trivia.comment_ws, old.trivia.comment
        table[key] = new
        return True

    return _toml_edit(text, edit)


def _toml_add_mypy_skip(text: str) -> str | None:
    """A ``[[tool.mypy.overrides]]`` entry that skips jax-pyrefly-stubs' jax.numpy stub."""
    import tomlkit

    def edit(doc: TOMLDocument) -> bool:
        mypy = _toml_table(doc, "tool.mypy")
        if mypy is None:
            return False
        from tomlkit.items import AoT

        overrides = mypy.setdefault("overrides", tomlkit.aot())
        if not isinstance(overrides, AoT):
            return False
        if len(overrides) and not overrides[-1].as_string().endswith("\n\n"):
            overrides[-1].add(tomlkit.nl())
        entry = tomlkit.table()
        entry.add(tomlkit.comment(SKIP_COMMENT))
        entry["module"] = list(MYPY_SKIP_MODULES)
        entry["follow_imports"] = "skip"
        entry["follow_imports_for_stubs"] = True
        entry.add(tomlkit.nl())
        overrides.append(entry)
        return True

    return _toml_edit(text, edit)


# --------------------------------------------------------------------------- INI as text


def _ini_section_line(lines: list[str], section: str) -> int | None:
    for i, line in enumerate(lines):
        if line.strip() == f"[{section}]":
            return i
    return None


def _ini_add_key(text: str, section: str, key_line: str) -> str:
    lines = text.splitlines(keepends=True)
    if lines and not lines[-1].endswith("\n"):
        lines[-1] += "\n"
    at = _ini_section_line(lines, section)
    if at is None:
        sep = "\n" if lines and lines[-1].strip() else ""
        return "".join(lines) + f"{sep}[{section}]\n{key_line}\n"
    lines.insert(at + 1, key_line + "\n")
    return "".join(lines)


def _ini_prepend_plugin(text: str, section: str, item: str) -> str | None:
    lines = text.splitlines(keepends=True)
    at = _ini_section_line(lines, section)
    if at is None:
        return None
    key_re = re.compile(r"^(plugins\s*[=:]\s*)(.*)$", re.DOTALL)
    for j in range(at + 1, len(lines)):
        if lines[j].lstrip().startswith("["):
            break
        m = key_re.match(lines[j])
        if m:
            rest = m.group(2)
            lines[j] = m.group(1) + item + ("," if not rest.strip() else ", ") + rest
            return "".join(lines)
    return None


# --------------------------------------------------------------------------- the steps


class InitError(Exception):
    """A file that ``init`` cannot read or parse; ``str()`` says which and what to do; nothing
    is written."""


def read_text(path: Path) -> str | None:
    """The text of ``path``, None when it does not exist; InitError when it cannot be read."""
    if not path.is_file():
        return None
    try:
        return path.read_text(encoding="utf-8")
    except UnicodeDecodeError as e:
        raise InitError(
            f"{path}: not UTF-8 text ({e.reason} at byte {e.start}); save it as UTF-8 and "
            "rerun typed-pallas init"
        ) from None
    except OSError as e:
        raise InitError(f"{path}: cannot read it ({e.strerror or e})") from None


def _ini(text: str, path: Path) -> configparser.RawConfigParser:
    """``text`` parsed as an ini file; InitError, in one line, when it is not one."""
    parser = configparser.RawConfigParser()
    try:
        parser.read_string(text, source=str(path))
    except configparser.Error as e:
        said = "; ".join(line.strip() for line in str(e).splitlines() if line.strip())
        raise InitError(
            f"{path}: not a valid ini file ({said}); fix it and rerun typed-pallas init"
        ) from None
    return parser


def _truthy(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    if isinstance(value, str):
        low = value.strip().lower()
        if low in ("1", "true", "yes", "on"):
            return True
        if low in ("0", "false", "no", "off"):
            return False
    return None


def _plugins_of(value: object) -> list[str]:
    if isinstance(value, str):
        return [p.strip() for p in value.split(",") if p.strip()]
    if isinstance(value, list):
        return [str(p) for p in value]
    return []


def _mypy_target(root: Path, plan: Plan) -> tuple[Path, str]:
    """The file mypy reads in ``root`` and its kind ("ini" or "toml"), as mypy searches."""
    for name in MYPY_INI_NAMES:
        if (root / name).is_file():
            return root / name, "ini"
    pyproject = root / "pyproject.toml"
    data = _toml_load(plan.text(pyproject), pyproject) or {}
    if _table(data, "tool.mypy") is not None:
        return pyproject, "toml"
    setup_cfg = root / "setup.cfg"
    setup_text = read_text(setup_cfg)
    if setup_text is not None and _ini(setup_text, setup_cfg).has_section("mypy"):
        return setup_cfg, "ini"
    return pyproject, "toml"


def _plan_mypy(root: Path, plan: Plan, coinstalled: bool) -> None:
    path, kind = _mypy_target(root, plan)
    rel = path.name
    text = plan.text(path) or ""
    if kind == "toml":
        table = _table(_toml_load(text, path) or {}, "tool.mypy") or {}
        plugins, untyped = table.get("plugins"), table.get("check_untyped_defs")
    else:
        parser = _ini(text, path)
        has = parser.has_section("mypy")
        plugins = (
            parser.get("mypy", "plugins") if has and parser.has_option("mypy", "plugins") else None
        )
        untyped = (
            parser.get("mypy", "check_untyped_defs")
            if has and parser.has_option("mypy", "check_untyped_defs")
            else None
        )
    new = text
    if PLUGIN in _plugins_of(plugins):
        plan.unchanged.append(f"mypy: {rel} already loads the plugin")
    else:
        if plugins is None:
            edited = (
                _toml_add_key(new, "tool.mypy", "plugins", [PLUGIN])
                if kind == "toml"
                else _ini_add_key(new, "mypy", f"plugins = {PLUGIN}")
            )
        else:
            edited = (
                _toml_prepend_to_array(new, "tool.mypy", "plugins", PLUGIN)
                if kind == "toml"
                else _ini_prepend_plugin(new, "mypy", PLUGIN)
            )
        if edited is None:
            plan.warnings.append(f"mypy: could not edit `plugins` in {rel}; add {PLUGIN!r} to it")
        else:
            new = edited
            plan.changed.append(f"mypy: {rel}: plugins += {PLUGIN}")
    if untyped is None:
        edited = (
            _toml_add_key(new, "tool.mypy", "check_untyped_defs", True)
            if kind == "toml"
            else _ini_add_key(new, "mypy", "check_untyped_defs = True")
        )
        if edited is None:
            plan.warnings.append(f"mypy: could not edit {rel}; set check_untyped_defs = true")
        else:
            new = edited
            plan.changed.append(f"mypy: {rel}: check_untyped_defs = true")
    elif _truthy(untyped):
        plan.unchanged.append(f"mypy: {rel} already sets check_untyped_defs")
    else:
        plan.warnings.append(
            f"mypy: {rel} sets check_untyped_defs = {untyped}: left as it is; the plugin does not check "
            "the bodies of unannotated functions (most kernels) without it"
        )
    if coinstalled:
        new = _plan_mypy_coinstall(new, kind, path, plan)
    _write_quiet(plan, path, new)


def _write_quiet(plan: Plan, path: Path, after: str) -> None:
    """Record ``after`` for ``path`` (the messages were added by the caller)."""
    before = plan.files[path][0] if path in plan.files else read_text(path)
    if before == after or (before is None and not after):
        plan.files.pop(path, None)
    else:
        plan.files[path] = (before, after)


def _plan_mypy_coinstall(text: str, kind: str, path: Path, plan: Plan) -> str:
    rel = path.name
    if kind == "toml":
        data = _toml_load(text, path) or {}
        overrides = (_table(data, "tool.mypy") or {}).get("overrides", [])
        covered = isinstance(overrides, list) and any(
            set(MYPY_SKIP_MODULES)
            <= set([o.get("module")] if isinstance(o.get("module"), str) else o.get("module", []))
            for o in overrides
            if isinstance(o, dict)
        )
    else:
        covered = any(
            s.startswith("mypy-") and "jax.numpy" in s for s in _ini(text, path).sections()
        )
    if covered:
        plan.unchanged.append(f"mypy: {rel} already skips jax-pyrefly-stubs' jax.numpy")
        return text
    if kind == "toml":
        edited = _toml_add_mypy_skip(text)
        if edited is None:
            plan.warnings.append(
                f"mypy: could not edit {rel}; add a [[tool.mypy.overrides]] with module = "
                f'{json.dumps(list(MYPY_SKIP_MODULES))} and follow_imports = "skip"'
            )
            return text
    else:
        edited = (text if text.endswith("\n") or not text else text + "\n") + (
            f"\n# {SKIP_COMMENT}\n"
            f"[mypy-{','.join(MYPY_SKIP_MODULES)}]\n"
            "follow_imports = skip\n"
            "follow_imports_for_stubs = True\n"
        )
    plan.changed.append(f"mypy: {rel}: skip jax-pyrefly-stubs' jax.numpy stub (it stops mypy)")
    return edited


def _read_json(path: Path) -> dict[str, Any] | None:
    try:
        data = json.loads(read_text(path) or "")
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def _plan_pyright(root: Path, plan: Plan, source: Path | None) -> tuple[list[Path], bool]:
    """stubPath for pyright/basedpyright/Pylance, and the stub copy in each folder they read;
    returns those folders (none when the stubs were not found) and whether stubPath is set
    (or will be)."""
    folders: list[Path] = []
    configured = True
    config_json = root / "pyrightconfig.json"
    if config_json.is_file():
        data = _read_json(config_json)
        if data is None:
            plan.warnings.append(
                f'pyright: pyrightconfig.json could not be read as plain JSON (comments?): add "stubPath": '
                f'"{STUB_DIR}" to it yourself'
            )
            folders.append(root / STUB_DIR)
            configured = False
        elif "stubPath" in data:
            folders.append(root / str(data["stubPath"]))
            if str(data["stubPath"]) != STUB_DIR:
                plan.warnings.append(
                    f"pyright: pyrightconfig.json sets stubPath = {data['stubPath']!r}: left as it is; "
                    f"the stubs go into that folder"
                )
            else:
                plan.unchanged.append("pyright: pyrightconfig.json already sets stubPath")
        else:
            body = read_text(config_json) or ""
            data["stubPath"] = STUB_DIR
            new = (
                json.dumps(data, indent=2) + "\n"
                if body.strip()
                else json.dumps({"stubPath": STUB_DIR}) + "\n"
            )
            _write_quiet(plan, config_json, new)
            plan.changed.append(f'pyright: pyrightconfig.json: stubPath = "{STUB_DIR}"')
            folders.append(root / STUB_DIR)
    else:
        pyproject = root / "pyproject.toml"
        text = plan.text(pyproject) or ""
        data = _toml_load(text, pyproject) or {}
        for dotted, who in (("tool.pyright", "pyright"), ("tool.basedpyright", "basedpyright")):
            table = _table(data, dotted)
            if table is None and dotted == "tool.basedpyright":
                continue  # basedpyright reads [tool.pyright] then
            if table is not None and "stubPath" in table:
                folders.append(root / str(table["stubPath"]))
                if table["stubPath"] != STUB_DIR:
                    plan.warnings.append(
                        f"{who}: pyproject.toml [{dotted}] sets stubPath = {table['stubPath']!r}: left as it is; "
                        f"the stubs go into that folder"
                    )
                else:
                    plan.unchanged.append(f"{who}: pyproject.toml already sets stubPath")
                continue
            edited = _toml_add_key(text, dotted, "stubPath", STUB_DIR)
            if edited is None:
                plan.warnings.append(
                    f'{who}: could not edit [{dotted}] in pyproject.toml; set stubPath = "{STUB_DIR}"'
                )
                configured = False
                continue
            text = edited
            _write_quiet(plan, pyproject, text)
            plan.changed.append(f'{who}: pyproject.toml [{dotted}]: stubPath = "{STUB_DIR}"')
            folders.append(root / STUB_DIR)
    if source is None:
        plan.warnings.append(
            "pyright: typed-pallas's jax-stubs were not found on sys.path (is typed-pallas installed in this "
            "Python?): the stub folder was not filled"
        )
        return [], configured
    folders = list(dict.fromkeys(folders))
    for folder in folders:
        _plan_stub_copy(root, folder, source, plan)
    return folders, configured


def _plan_stub_copy(root: Path, folder: Path, source: Path, plan: Plan) -> None:
    version = installed_version("typed-pallas") or "?"
    target = folder / STUB_PACKAGE
    before = len(plan.files)
    for src in sorted(p for p in source.rglob("*") if p.is_file() and "__pycache__" not in p.parts):
        rel = src.relative_to(source)
        body = src.read_text(encoding="utf-8")
        if src.suffix == ".pyi":
            body = HEADER.format(version=version) + body
        _write_quiet(plan, target / rel, body)
        if target / rel in plan.files:
            plan.copies.add(target / rel)
    ignore = folder / ".ignore"
    if folder.name.startswith(".") and not ignore.exists():
        # ty checks hidden folders too, but honours .ignore files (git does not read them)
        _write_quiet(
            plan,
            ignore,
            "# typed-pallas init: keep ty from checking these stubs as project files\n*\n",
        )
    shown = target.relative_to(root).as_posix() if target.is_relative_to(root) else str(target)
    if len(plan.files) != before:
        plan.changed.append(
            f"pyright, basedpyright, Pylance: {shown}/: typed-pallas {version}'s stubs"
        )
    else:
        plan.unchanged.append(f"pyright, basedpyright, Pylance: {shown}/ is up to date")
    stale = (
        [p for p in target.rglob("*.pyi") if not (source / p.relative_to(target)).exists()]
        if target.is_dir()
        else []
    )
    for p in stale:
        plan.warnings.append(
            f"pyright: {p.relative_to(root).as_posix()} is not one of typed-pallas's stubs: left as it is"
        )


def _plan_pyrefly(root: Path, plan: Plan) -> None:
    pyrefly_toml = root / "pyrefly.toml"
    own_text = read_text(pyrefly_toml)
    if own_text is not None:
        value = (_toml_load(own_text, pyrefly_toml) or {}).get("preset")
        where = "pyrefly.toml"
        if value is None:
            edited = _toml_add_key(own_text, "", "preset", PYREFLY_PRESET)
            if edited is None:
                plan.warnings.append(
                    f'pyrefly: could not edit pyrefly.toml; set preset = "{PYREFLY_PRESET}"'
                )
                return
            _write_quiet(plan, pyrefly_toml, edited)
    else:
        pyproject = root / "pyproject.toml"
        text = plan.text(pyproject) or ""
        value = (_table(_toml_load(text, pyproject) or {}, "tool.pyrefly") or {}).get("preset")
        where = "pyproject.toml [tool.pyrefly]"
        if value is None:
            edited = _toml_add_key(text, "tool.pyrefly", "preset", PYREFLY_PRESET)
            if edited is None:
                plan.warnings.append(
                    f'pyrefly: could not edit [tool.pyrefly]; set preset = "{PYREFLY_PRESET}"'
                )
                return
            _write_quiet(plan, pyproject, edited)
    if value is None:
        plan.changed.append(f'pyrefly: {where}: preset = "{PYREFLY_PRESET}"')
    elif value == PYREFLY_PRESET:
        plan.unchanged.append(f"pyrefly: {where} already sets preset")
    else:
        plan.warnings.append(
            f"pyrefly: {where} sets preset = {value!r}: left as it is (typed-pallas's checks need the "
            f'"{PYREFLY_PRESET}" preset or stricter)'
        )


def _shown(root: Path, path: Path) -> str:
    return path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)


def _symlinks_under(folder: Path) -> dict[Path, str]:
    """Every link under ``folder`` (not followed) -> its target."""
    import os

    found: dict[Path, str] = {}
    for here, dirs, files in os.walk(folder, followlinks=False):
        for name in [*dirs, *files]:
            path = Path(here, name)
            if path.is_symlink():
                found[path] = os.readlink(path)
    return found


def _plan_overlay(root: Path, folder: Path, links: dict[PurePosixPath, Path], plan: Plan) -> None:
    """The ``jax/`` overlay of ``folder`` (a stub folder pyright reads): one link per module
    of the environment's jax that jax-pyrefly-stubs lacks; links of an earlier run that
    point elsewhere are updated, those no longer needed removed."""
    import os

    base = folder / OVERLAY
    existing = _symlinks_under(base) if base.is_dir() else {}
    count = len(plan.links)
    for rel, target in links.items():
        path = base.joinpath(*rel.parts)
        want = os.path.relpath(target, path.parent) if target.is_relative_to(root) else str(target)
        if path.exists() and not path.is_symlink():
            plan.warnings.append(
                f"{PYRIGHT_FAMILY}: {_shown(root, path)} is not a link typed-pallas init made: left as it is"
            )
            continue
        if existing.get(path) != want:
            plan.links[path] = (existing.get(path), want)
    wanted = {rel.as_posix() for rel in links}
    for path, old in existing.items():
        if path.relative_to(base).as_posix() not in wanted:
            plan.links[path] = (old, None)
    _write_quiet(plan, base / ".gitignore", OVERLAY_IGNORE)
    shown = _shown(root, base)
    if len(plan.links) != count or base / ".gitignore" in plan.files:
        plan.changed.append(
            f"{PYRIGHT_FAMILY}: {shown}/: links to the {len(links)} jax modules {JAX_PYREFLY_STUBS} "
            "lacks (jax._src, jax.experimental...), which pyright takes from stubPath"
        )
    else:
        plan.unchanged.append(f"{PYRIGHT_FAMILY}: {shown}/ is up to date")


def _plan_path_list(
    plan: Plan, path: Path, dotted: str, key: str, item: str, who: str, where: str
) -> bool:
    """``item`` added to the list setting ``key`` of table ``dotted`` (``""``: the top level)
    of the TOML file ``path``; False when it cannot be (a warning says what to set)."""
    text = plan.text(path) or ""
    data = _toml_load(text, path) or {}
    table = _table(data, dotted) if dotted else data
    value = (table or {}).get(key)
    if isinstance(value, list) and item in value:
        plan.unchanged.append(f"{who}: {where} already has {item!r} in {key}")
        return True
    if value is None:
        edited = _toml_add_key(text, dotted, key, [item])
    elif isinstance(value, list):
        edited = _toml_prepend_to_array(text, dotted, key, item, first=False)
    else:
        edited = None
    if edited is None:
        plan.warnings.append(f"{who}: could not edit {key} in {where}; add {item!r} to it")
        return False
    _write_quiet(plan, path, edited)
    plan.changed.append(f"{who}: {where}: {key} += {item!r}")
    return True


def _plan_coinstall(
    root: Path, plan: Plan, env: Environment, folders: list[Path], pyright_configured: bool
) -> None:
    """What pyright, basedpyright, Pylance, pyrefly and ty need next to jax-pyrefly-stubs:
    the overlay and the two path settings in the project; what the project cannot hold
    goes to ``plan.env_links`` (made only with ``--yes``)."""
    if not folders:
        return  # the stubs were not found: _plan_pyright said so
    if env.jax is None or env.theirs is None:
        missing = "jax" if env.jax is None else f"{JAX_PYREFLY_STUBS}' jax-stubs folder"
        plan.warnings.append(
            f"{JAX_PYREFLY_STUBS} is installed but {missing} was not found on this Python's sys.path: "
            "pyright, basedpyright, Pylance, pyrefly and ty were not set up for it (run typed-pallas init "
            "with the Python of the project's environment)"
        )
        return
    links = overlay_links(env.theirs, env.jax)
    for folder in folders:
        _plan_overlay(root, folder, links, plan)
    item = _shown(root, folders[0])
    unset: set[str] = set() if pyright_configured else {PYRIGHT_FAMILY}
    pyrefly_toml, ty_toml, pyproject = (
        root / "pyrefly.toml",
        root / "ty.toml",
        root / "pyproject.toml",
    )
    pyrefly_ok = (
        _plan_path_list(plan, pyrefly_toml, "", "search-path", item, "pyrefly", "pyrefly.toml")
        if pyrefly_toml.is_file()
        else _plan_path_list(
            plan,
            pyproject,
            "tool.pyrefly",
            "search-path",
            item,
            "pyrefly",
            "pyproject.toml [tool.pyrefly]",
        )
    )
    ty_ok = (
        _plan_path_list(
            plan, ty_toml, "environment", "extra-paths", item, "ty", "ty.toml [environment]"
        )
        if ty_toml.is_file()
        else _plan_path_list(
            plan,
            pyproject,
            "tool.ty.environment",
            "extra-paths",
            item,
            "ty",
            "pyproject.toml [tool.ty.environment]",
        )
    )
    if not (pyrefly_ok and ty_ok):
        unset.add(PYREFLY_TY)
    for who, link in environment_links(env).items():
        if who in unset and link is not None:
            plan.env_links.append(link)


def make_plan(
    root: Path,
    *,
    coinstalled: bool | None = None,
    stubs: Path | None = None,
    environment: Environment | None = None,
) -> Plan:
    """What ``init`` writes in ``root``; raises :class:`InitError` for an unreadable file.

    ``coinstalled``, ``stubs`` and ``environment`` default to what this Python has
    (jax-pyrefly-stubs installed, typed-pallas's stubs, :meth:`Environment.discover`)."""
    plan = Plan(root.resolve())
    root = plan.root
    if coinstalled is None:
        coinstalled = installed_version(JAX_PYREFLY_STUBS) is not None
    source = stubs if stubs is not None else find_installed_stubs()
    _plan_mypy(root, plan, coinstalled)
    folders, pyright_configured = _plan_pyright(root, plan, source)
    _plan_pyrefly(root, plan)
    if not coinstalled:
        plan.unchanged.append("ty: nothing to set (it reads the stubs from sys.path)")
    else:
        env = environment if environment is not None else Environment.discover()
        _plan_coinstall(root, plan, env, folders, pyright_configured)
    return plan


def _dedupe(items: Iterable[str]) -> list[str]:
    return list(dict.fromkeys(i for i in items if i))


def _error(message: str) -> int:
    print(f"typed-pallas: error: {message}", file=sys.stderr)
    return 2


def _check_project_config(root: Path) -> None:
    """InitError when the project's typed-pallas configuration (the file the plugin would read
    from ``root``) is broken: mypy would stop on it after ``init``."""
    from typed_pallas_mypy import config
    from typed_pallas_mypy.cli.explain import doc_link

    try:
        found = config.find_config_file(None, cwd=str(root))
        if found is not None:
            config.read_config(found)
    except config.ConfigError as e:
        raise InitError(f"{e} (see {doc_link('configuration')})") from None


def _apply_link(path: Path, target: str | None) -> None:
    """Make (or replace, or with ``target`` None remove) the link ``path``."""
    if path.is_symlink():
        path.unlink()
    if target is not None:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.symlink_to(target)


def _environment_step(plan: Plan, allowed: bool, out: Any) -> int:
    """The links in the environment: made with ``--yes`` (with how to undo each), else one
    warning each that says what it is for and how to allow it."""
    for link in plan.env_links:
        if not allowed:
            print(
                f"typed-pallas init: warning: {link.who} need a link in this environment, which init makes only "
                f"when asked: rerun `typed-pallas init --yes` to make it ({link.command()}; undo: {link.undo()})",
                file=sys.stderr,
            )
            continue
        try:
            _apply_link(link.path, link.target)
        except OSError as e:
            return _error(
                f"{link.path}: cannot make the link ({e.strerror or e}); make it by hand: {link.command()}"
            )
        out.write(
            f"  + {link.who}: made the link {link.path} -> {link.target} in this environment "
            f"(pip does not know it: undo with `{link.undo()}` before uninstalling either package)\n"
        )
    return 0


def run_init(args: argparse.Namespace) -> int:
    """``typed-pallas init [PATH] [--dry-run] [--yes]``: 0 done (or nothing to do), 2 a bad PATH
    or a file that cannot be read or parsed (one line on stderr; nothing is written)."""
    root = Path(args.path or ".")
    if not root.is_dir():
        what = "not a folder" if root.exists() else "no such folder"
        return _error(
            f"{root}: {what}; name the project's root folder (default: the current folder)"
        )
    try:
        _check_project_config(root)
        plan = make_plan(root)
    except InitError as e:
        return _error(f"{e}; nothing was written")
    out = sys.stdout
    allowed = bool(getattr(args, "yes", False))
    for warning in _dedupe(plan.warnings):
        print(f"typed-pallas init: warning: {warning}", file=sys.stderr)
    if plan.empty:
        out.write(f"typed-pallas init: {plan.root} is already set up; nothing changed\n")
        for line in _dedupe(plan.unchanged):
            out.write(f"  = {line}\n")
        return _environment_step(plan, allowed and not args.dry_run, out)
    if args.dry_run:
        out.write(plan.diff())
        out.write(
            f"typed-pallas init --dry-run: would change {len(plan.files) + len(plan.links)} file(s) and "
            "link(s); nothing written\n"
        )
        for line in _dedupe(plan.changed):
            out.write(f"  + {line}\n")
        return _environment_step(plan, False, out)
    written: list[Path] = []
    for path, (_, after) in sorted(plan.files.items()):
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(after, encoding="utf-8")
        except OSError as e:
            return _error(
                f"{path}: cannot write it ({e.strerror or e}); {len(written)} other file(s) were "
                "written before it; make it writable and rerun typed-pallas init (it completes them)"
            )
        written.append(path)
    for path, (_, target) in sorted(plan.links.items()):
        try:
            _apply_link(path, target)
        except OSError as e:
            return _error(
                f"{path}: cannot make the link ({e.strerror or e}); {len(written)} other file(s) and "
                "link(s) were written before it; fix that and rerun typed-pallas init (it completes them)"
            )
        written.append(path)
    out.write(
        f"typed-pallas init: set up {plan.root} ({len(plan.files)} file(s)"
        + (f", {len(plan.links)} link(s)" if plan.links else "")
        + " written)\n"
    )
    for line in _dedupe(plan.changed):
        out.write(f"  + {line}\n")
    for line in _dedupe(plan.unchanged):
        out.write(f"  = {line}\n")
    for line in NEXT_STEPS:
        out.write(f"  {line}\n")
    return _environment_step(plan, allowed, out)


def add_parser(sub: Any) -> None:
    """The ``init`` subcommand, for :func:`typed_pallas_mypy.cli.build_parser`."""
    p = sub.add_parser(
        "init",
        help="set the project up so that mypy, pyright, basedpyright, Pylance, pyrefly and ty see the platform types",
        description=(
            "Write what each type checker needs into the project at PATH (default: the current folder): "
            "the mypy plugin and check_untyped_defs, a copy of the stubs in .typings/ with pyright's stubPath, "
            "pyrefly's preset. Merges into existing files and never overwrites a setting."
        ),
    )
    p.add_argument("path", nargs="?", metavar="PATH", help="the project's root folder")
    p.add_argument("--dry-run", action="store_true", help="print the diff; write nothing")
    p.add_argument(
        "--yes",
        action="store_true",
        help="also make the links in the environment that a checker needs where the project cannot "
        "hold its setting (it says which, and how to undo each)",
    )
