"""``typed-pallas init``: set a project up so that every type checker sees the platform types.

What each checker needs, written into the project (``docs/editors.md``):

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

Next to ``jax-pyrefly-stubs`` (detected through ``importlib.metadata``) it also adds the
mypy override that lets mypy run there, and says what pyright, basedpyright, Pylance,
pyrefly and ty need: nothing ``init`` can write into the project makes them see the
platform types there, only a link in the environment does (:func:`coinstall_links`,
``docs/editors.md``); each warning stops once its link is there. :func:`coinstall_warning`
is the line ``typed-pallas check`` prints there.

What it does not do: install anything, touch a ``pyrightconfig.json`` it cannot parse
(it prints the line to add instead), or edit VS Code's settings.
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
from pathlib import Path
from typing import TYPE_CHECKING, Any, Final

from typed_pallas._versions import installed_version

if TYPE_CHECKING:  # tomlkit is imported when a TOML file is edited, not when the CLI starts
    from tomlkit import TOMLDocument

__all__ = [
    "STUB_DIR",
    "InitError",
    "Plan",
    "coinstall_links",
    "coinstall_warning",
    "find_installed_stubs",
    "make_plan",
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
    "jax-pyrefly-stubs' jax.numpy stub stops mypy (typed-pallas init; docs/support-matrix.md)"
)
MYPY_INI_NAMES: Final = ("mypy.ini", ".mypy.ini")
DOCS: Final = "docs/editors.md"
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
        return "".join(line if line.endswith("\n") else line + "\n" for line in out)


# --------------------------------------------------------------------------- detection


def coinstall_warning() -> str | None:
    """The stderr line for an environment that also has jax-pyrefly-stubs, or None."""
    theirs = installed_version(JAX_PYREFLY_STUBS)
    if theirs is None:
        return None
    line = (
        f"typed-pallas: {JAX_PYREFLY_STUBS} {theirs} is installed: its jax.numpy stub stops mypy unless that "
        "module is skipped (typed-pallas check's preset does not skip it): run `typed-pallas init` (it adds "
        "the override), then run mypy itself"
    )
    if any(command is not None for command in coinstall_links(find_installed_stubs()).values()):
        line += (
            "; pyright, basedpyright, pyrefly and ty see no platform types there without the links in "
            f"{DOCS}#next-to-jax-pyrefly-stubs"
        )
    return line


def coinstall_links(ours: Path | None) -> dict[str, str | None]:
    """The links that make the other checkers see typed-pallas's stubs (``ours``) next to
    jax-pyrefly-stubs (``docs/editors.md``), by who needs them: the shell command that makes
    one, ``""`` when it is needed but its paths are not known here, None once it is there.

    ``"pyright"``: pyright takes a ``jax-stubs`` folder that has an ``__init__.pyi`` (theirs;
    their ``py.typed`` is not ``partial\\n``, pyright's marker of a partial stub package) for
    all of ``jax`` in the ``sys.path`` root that holds it, so ``jax._src`` and
    ``jax.experimental`` resolve nowhere and JAX's params classes in typed-pallas's stubs
    derive from ``Unknown``, which passes for any type; with ``jax`` linked into
    typed-pallas's own root (the ``.pth`` one), pyright finds them there. ``"pyrefly, ty"``:
    they take the first ``jax-stubs`` on the path (theirs) for all of ``jax``; with
    typed-pallas's ``experimental`` linked into it, they find the pallas stubs there.
    """
    if ours is None:
        return {"pyright": "", "pyrefly, ty": ""}
    ours = ours.resolve()
    links: dict[str, str | None] = {}
    if (ours.parent / "jax").is_dir():
        links["pyright"] = None
    else:
        spec = importlib.util.find_spec("jax")
        jax_dir = next(iter(spec.submodule_search_locations or ()), None) if spec else None
        links["pyright"] = f"ln -s {jax_dir} {ours.parent / 'jax'}" if jax_dir else ""
    theirs = next(
        (
            Path(entry or ".", STUB_PACKAGE)
            for entry in sys.path
            if Path(entry or ".", STUB_PACKAGE, "__init__.pyi").is_file()
        ),
        None,
    )
    if theirs is None:
        links["pyrefly, ty"] = ""
    elif (theirs / "experimental").resolve() == ours / "experimental":
        links["pyrefly, ty"] = None
    else:
        links["pyrefly, ty"] = f"ln -s {ours / 'experimental'} {theirs / 'experimental'}"
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


def _toml_prepend_to_array(text: str, dotted: str, key: str, item: str) -> str | None:
    """``item`` put first in the array (or comma string) ``key`` of table ``dotted``."""
    import tomlkit

    def edit(doc: TOMLDocument) -> bool:
        table = _toml_table(doc, dotted)
        if table is None or key not in table:
            return False
        from tomlkit.items import Array

        old = table[key]
        if isinstance(old, Array) and "\n" in old.as_string():
            old.insert(0, item)  # a multi-line array: one line more, its comments kept
            return True
        if isinstance(old, Array):
            items = [item, *old]
        elif isinstance(old, str):
            items = [item, *(p.strip() for p in old.split(",") if p.strip())]
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


def _plan_pyright(root: Path, plan: Plan, source: Path | None) -> None:
    """stubPath for pyright/basedpyright/Pylance, and the stub copy in each folder they read."""
    folders: list[Path] = []
    config_json = root / "pyrightconfig.json"
    if config_json.is_file():
        data = _read_json(config_json)
        if data is None:
            plan.warnings.append(
                f'pyright: pyrightconfig.json could not be read as plain JSON (comments?): add "stubPath": '
                f'"{STUB_DIR}" to it yourself'
            )
            folders.append(root / STUB_DIR)
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
        return
    for folder in dict.fromkeys(folders):
        _plan_stub_copy(root, folder, source, plan)


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


def make_plan(root: Path, *, coinstalled: bool | None = None, stubs: Path | None = None) -> Plan:
    """What ``init`` writes in ``root``; raises :class:`InitError` for an unreadable file."""
    plan = Plan(root.resolve())
    root = plan.root
    if coinstalled is None:
        coinstalled = installed_version(JAX_PYREFLY_STUBS) is not None
    source = stubs if stubs is not None else find_installed_stubs()
    _plan_mypy(root, plan, coinstalled)
    _plan_pyright(root, plan, source)
    _plan_pyrefly(root, plan)
    plan.unchanged.append("ty: nothing to set (it reads the stubs from sys.path)")
    if coinstalled:
        links = coinstall_links(source)
        if links["pyright"] is not None:
            plan.warnings.append(
                f"{JAX_PYREFLY_STUBS} is installed: pyright, basedpyright and Pylance see none of jax's own "
                "modules (jax._src, jax.experimental: they take its jax-stubs for all of jax), so JAX's params "
                "classes pass for any platform and no wrong-platform call is reported, stubPath or not; "
                f"see {DOCS} (section jax-pyrefly-stubs) for the link that fixes it"
                + (f": {links['pyright']}" if links["pyright"] else "")
            )
        if links["pyrefly, ty"] is not None:
            plan.warnings.append(
                f"{JAX_PYREFLY_STUBS} is installed: pyrefly and ty see only its jax-stubs, not typed-pallas's; "
                f"see {DOCS} (section jax-pyrefly-stubs) for the link that fixes it"
                + (f": {links['pyrefly, ty']}" if links["pyrefly, ty"] else "")
            )
        plan.unchanged.extend(
            f"{who}: the link for jax-pyrefly-stubs is there"
            for who, command in links.items()
            if command is None
        )
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


def run_init(args: argparse.Namespace) -> int:
    """``typed-pallas init [PATH] [--dry-run]``: 0 done (or nothing to do), 2 a bad PATH or a
    file that cannot be read or parsed (one line on stderr; nothing is written)."""
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
    for warning in _dedupe(plan.warnings):
        print(f"typed-pallas init: warning: {warning}", file=sys.stderr)
    if not plan.files:
        out.write(f"typed-pallas init: {plan.root} is already set up; nothing changed\n")
        for line in _dedupe(plan.unchanged):
            out.write(f"  = {line}\n")
        return 0
    if args.dry_run:
        out.write(plan.diff())
        out.write(
            f"typed-pallas init --dry-run: would change {len(plan.files)} file(s); nothing written\n"
        )
        for line in _dedupe(plan.changed):
            out.write(f"  + {line}\n")
        return 0
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
    out.write(f"typed-pallas init: set up {plan.root} ({len(plan.files)} file(s) written)\n")
    for line in _dedupe(plan.changed):
        out.write(f"  + {line}\n")
    for line in _dedupe(plan.unchanged):
        out.write(f"  = {line}\n")
    out.write(f"  see {DOCS} for each editor\n")
    return 0


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
