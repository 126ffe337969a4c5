"""``typed-pallas platforms PATHS``: the inferred platform map, to look at.

What it does: runs mypy in-process on PATHS with the ``typed-pallas check`` preset
(:data:`typed_pallas_mypy.cli.findings.PRESET`: the plugin, ``follow_imports = silent``,
``ignore_missing_imports``, ``check_untyped_defs``), then, for each module of a file
under PATHS, lists what the plugin infers (``transformers.platform_facts``): every
function with facts (its requirement and the chain of notes behind it, guard-helper
sets, platform source, wrapper, body evidence) and every place where the platform is
decided against a requirement (``transformers.decisions``). :func:`render` prints it as
text (grouped by module), JSON (sorted, stable) or a Mermaid ``graph LR`` (a node per
function with a requirement, caller -> callee edges, a node per failing decision site).
Each JSON entry of a function or library kernel carries an identity that an edit elsewhere
in its file does not move (``module``, ``qualname``, ``path`` from the folder the module is
imported from, ``reason`` without line numbers) beside ``where`` and ``chain``, which hold
line numbers.

The user modules are re-analysed on every run (a per-module option that changes each
time makes their cache entries stale) while installed packages such as jax come from
the cache folder (``.mypy_cache/typed-pallas-map`` by default).

When mypy cannot analyse PATHS (a syntax error, a file it cannot read or decode, two
files with one module name, a command line it refuses), :func:`build_map` raises
:class:`MapError` with mypy's error lines and builds no map: a map of the other files
would read as complete. ``typed-pallas platforms`` (``cli.platforms``) turns it into one
line on stderr, as it does missing PATHS and a bad configuration before mypy runs.

What it does not do: report mypy's other errors, or change anything the plugin checks.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import re
import tempfile
import uuid
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

if TYPE_CHECKING:
    from collections.abc import Mapping

    from mypy.nodes import MypyFile, NameExpr

    from typed_pallas_mypy.transformers.module_index import ModuleIndex
    from typed_pallas_mypy.transformers.platform_facts import Facts

__all__ = [
    "OUTPUTS",
    "DecisionSite",
    "FunctionEntry",
    "LockEntry",
    "LockError",
    "MapError",
    "ModuleMap",
    "build_map",
    "compare_locks",
    "lock_entries",
    "parse_lock",
    "read_lock",
    "render",
    "render_lock",
    "to_json",
]

OUTPUTS: Final = ("text", "json", "mermaid")
DEFAULT_MAP_CACHE: Final = os.path.join(".mypy_cache", "typed-pallas-map")


@dataclass(frozen=True)
class FunctionEntry:
    name: str  # fullname
    where: str
    platforms: tuple[str, ...] | None  # None: no requirement
    chain: tuple[str, ...] = ()
    guard: tuple[tuple[str, ...] | None, tuple[str, ...] | None] | None = None
    platform_source: bool = False
    wrapper: str | None = None
    evidence: tuple[tuple[tuple[str, ...], str, int], ...] = ()
    calls: tuple[str, ...] = ()  # callees with a requirement (Mermaid edges)
    #: the identity, which no edit elsewhere moves (``where`` and ``chain`` hold line
    #: numbers): the defining module, the name in it, and the file relative to the
    #: folder the module is imported from (``pkg/ops.py``, ``pkg/__init__.py``)
    module: str = ""
    qualname: str = ""
    path: str = ""


@dataclass(frozen=True)
class DecisionSite:
    line: int
    column: int
    function: str | None  # the outermost function around it, None at module level
    message: str
    notes: tuple[str, ...] = ()
    requires: tuple[str, ...] = ()  # functions whose requirement the notes cite


@dataclass
class ModuleMap:
    module: str
    path: str
    functions: list[FunctionEntry] = field(default_factory=list)
    decisions: list[DecisionSite] = field(default_factory=list)
    #: library kernels the module calls (installed packages' functions with a requirement)
    libraries: list[FunctionEntry] = field(default_factory=list)
    #: public names the module binds by importing a function of another module (``from
    #: pkg._impl import op`` in ``pkg/__init__.py``): (the name here, the function's fullname)
    reexports: list[tuple[str, str]] = field(default_factory=list)


class MapError(Exception):
    """mypy could not analyse the paths; ``lines`` are its error lines (mypy's text shape)."""

    def __init__(self, lines: Sequence[str]) -> None:
        super().__init__("\n".join(lines))
        self.lines = list(lines)


# --------------------------------------------------------------------------- building


def _python_files(paths: Sequence[str]) -> set[str]:
    out: set[str] = set()
    for path in paths:
        if os.path.isdir(path):
            for root, _dirs, files in os.walk(path):
                out.update(
                    os.path.abspath(os.path.join(root, f)) for f in files if f.endswith(".py")
                )
        else:
            out.add(os.path.abspath(path))
    return out


def build_map(paths: Sequence[str], *, cache_dir: str | None = None) -> list[ModuleMap]:
    """Run mypy with the preset on ``paths``; the map of the modules of those files.

    Raises :class:`MapError` when mypy cannot analyse them (nothing is mapped then), and
    ``config.ConfigError`` for a bad typed-pallas configuration.
    """
    from mypy import build
    from mypy.errors import CompileError
    from mypy.main import process_options

    from typed_pallas_mypy import config
    from typed_pallas_mypy.cli.findings import PRESET

    wanted = _python_files(paths)
    saved = os.environ.get(config.CONFIG_ENV)
    with tempfile.TemporaryDirectory() as tmp:
        ini = os.path.join(tmp, "mypy.ini")
        with open(ini, "w") as f:
            f.write(PRESET)
        try:
            if not (saved or "").strip():
                found = config.find_config_file(None)
                if found:
                    os.environ[config.CONFIG_ENV] = os.path.abspath(found)
            plugin_config = config.resolve_config(None)
            said = io.StringIO()  # what mypy prints before it stops on its command line
            try:
                with contextlib.redirect_stdout(said), contextlib.redirect_stderr(said):
                    sources, options = process_options(
                        [
                            "--config-file",
                            ini,
                            "--cache-dir",
                            cache_dir or DEFAULT_MAP_CACHE,
                            *paths,
                        ],
                        require_targets=True,
                    )
            except SystemExit:
                raise MapError(said.getvalue().splitlines()) from None
            options.fine_grained_incremental = (
                True  # keeps the checked trees (mypy frees them otherwise)
            )
            marker = f"TYPED_PALLAS_MAP_{uuid.uuid4().hex}"
            for source in sources:
                if source.module:
                    options.per_module_options[source.module] = {"always_true": [marker]}
            try:
                result = build.build(sources, options)
            except CompileError as e:  # a blocking error: a syntax error, an unreadable file
                raise MapError(e.messages) from None
        finally:
            if saved is None:
                os.environ.pop(config.CONFIG_ENV, None)
            else:
                os.environ[config.CONFIG_ENV] = saved
    modules = result.manager.modules
    maps = []
    for name in sorted(modules):
        tree = modules[name]
        if tree.path and os.path.abspath(tree.path) in wanted and not tree.is_cache_skeleton:
            maps.append(
                _module_map(
                    modules,
                    name,
                    plugin_config.platforms_for(name),
                    options.python_executable,
                    options.cache_dir,
                )
            )
    return maps


def _module_map(
    modules: Mapping[str, MypyFile],
    name: str,
    configured: frozenset[str] | None,
    python_executable: str | None = None,
    cache_dir: str | None = None,
) -> ModuleMap:
    from mypy.nodes import CallExpr, Decorator, FuncDef
    from mypy.server.subexpr import get_subexpressions

    from typed_pallas_mypy.transformers.decisions import findings
    from typed_pallas_mypy.transformers.inference_use import display_path
    from typed_pallas_mypy.transformers.module_index import index_of
    from typed_pallas_mypy.transformers.nodes import start_of
    from typed_pallas_mypy.transformers.platform_facts import Facts

    facts = Facts(modules, cache_dir, python_executable)
    tree = modules[name]
    index = index_of(tree, facts)
    out = ModuleMap(name, display_path(tree.path))
    root_path = _root_path(name, tree.path)
    module_facts = facts.module_facts(tree)
    first_notes: dict[str, str] = {}
    for fullname in sorted(module_facts):
        ff = module_facts[fullname]
        req = ff.requirement
        calls: set[str] = set()
        node = facts.names.node_of(fullname)
        func = node.func if isinstance(node, Decorator) else node
        if req is not None and isinstance(func, FuncDef):
            for expr in get_subexpressions(func):
                if isinstance(expr, CallExpr):
                    callee = facts.names.callee_function(expr.callee, func)
                    if callee and callee != fullname and facts.of(callee).requirement is not None:
                        calls.add(callee)
        if req is not None and req.chain:
            first_notes[fullname] = req.chain[0]
        out.functions.append(
            FunctionEntry(
                name=fullname,
                where=ff.where,
                platforms=tuple(sorted(req.platforms)) if req is not None else None,
                chain=req.chain if req is not None else (),
                guard=(
                    (_sorted(ff.guard[0]), _sorted(ff.guard[1])) if ff.guard is not None else None
                ),
                platform_source=ff.platform_source,
                wrapper=ff.wrapper.entry if ff.wrapper is not None else None,
                evidence=tuple((e.backends, e.what, e.line) for e in ff.evidence),
                calls=tuple(sorted(calls)),
                module=name,
                qualname=fullname.removeprefix(name + "."),
                path=root_path,
            )
        )
    out.reexports = _reexports(tree)
    out.libraries = _library_kernels(facts, modules, tree, index)
    # requirements of other modules' (and libraries') functions the notes may cite
    cited = dict(first_notes)
    cited.update((f.name, f.chain[0]) for f in out.libraries if f.chain)
    for other in modules:
        if (
            other != name
            and facts.names.is_user_module(other)
            and not modules[other].is_cache_skeleton
        ):
            for fullname, ff in facts.module_facts(modules[other]).items():
                if ff.requirement is not None and ff.requirement.chain:
                    cited[fullname] = ff.requirement.chain[0]
    found = findings(tree, index, facts, configured)
    sites: list[DecisionSite] = []
    for items in found.by_target.values():
        for item in items:
            outer = index.outermost_function_at(start_of(_at(item.line, item.column)))
            requires = sorted(fn for fn, note in cited.items() if note in item.notes)
            sites.append(
                DecisionSite(
                    item.line,
                    item.column + 1,  # 1-based, as mypy prints it
                    outer.fullname if isinstance(outer, FuncDef) else None,
                    item.message,
                    item.notes,
                    tuple(requires),
                )
            )
    out.decisions = sorted(sites, key=lambda s: (s.line, s.column, s.message))
    return out


def _reexports(tree: MypyFile) -> list[tuple[str, str]]:
    """The public names ``tree`` binds to another module's function by importing it (its
    ``__all__`` decides what is public where it has one, as mypy reads it)."""
    from mypy.nodes import Decorator, FuncDef, OverloadedFuncDef

    found: list[tuple[str, str]] = []
    for name, symbol in sorted(tree.names.items()):
        node = symbol.node
        if (
            symbol.module_public
            and not name.startswith("_")
            and isinstance(node, FuncDef | Decorator | OverloadedFuncDef)
            and node.fullname != f"{tree.fullname}.{name}"
        ):
            found.append((name, node.fullname))
    return found


def library_map(prefix: str, *, cache_dir: str | None = None) -> list[ModuleMap]:
    """The map of an installed library (``--library jax.experimental.pallas.ops``): every
    public function, class and alias of the modules under ``prefix`` that lowers only for
    some platforms, with the chain, read from the source as the plugin reads it. Raises
    :class:`MapError` when no installed module is called ``prefix``."""
    import sys

    from typed_pallas._versions import installed_version, release
    from typed_pallas_mypy.cache_keys import plugin_folder
    from typed_pallas_mypy.inference import Inference

    roots = [p for p in sys.path if p and os.path.isdir(p)]
    installed = installed_version("jax")
    reader = Inference(
        roots,
        plugin_folder(cache_dir or DEFAULT_MAP_CACHE, "libraries"),
        release=release(installed) if installed is not None else None,
    )
    entries = reader.module_map(prefix)
    read = reader.modules_read()
    if not entries and prefix not in read:
        raise MapError([f"{prefix}: no installed module of that name (or it could not be read)"])
    maps: dict[str, ModuleMap] = {}
    for public, target in reader.reexports(prefix):
        module, name = public.rsplit(".", 1)
        found = maps.setdefault(
            module, ModuleMap(module, _relative(read.get(module, ""), roots, module))
        )
        found.reexports.append((name, target))
    for fullname, requirement in entries:
        if requirement is None:
            continue
        module = fullname.rsplit(".", 1)[0]
        where = requirement.chain[0].split(" (", 1)[1].split(")", 1)[0] if requirement.chain else ""
        found = maps.setdefault(
            module, ModuleMap(module, _relative(read.get(module, ""), roots, module))
        )
        found.functions.append(
            FunctionEntry(
                name=fullname,
                where=where,
                platforms=tuple(sorted(requirement.platforms)),
                chain=requirement.chain,
                module=module,
                qualname=fullname.removeprefix(module + "."),
                path=found.path,
            )
        )
    return [maps[name] for name in sorted(maps) if maps[name].functions or maps[name].reexports]


def _relative(path: str, roots: Sequence[str], module: str = "") -> str:
    """``path`` relative to the innermost search root it lies under (as library notes
    spell it: ``jax/experimental/...``); a module under no root (an editable install's
    finder maps it) is spelt from its name the same way."""
    under = [root for root in roots if path.startswith(os.path.join(root, ""))]
    if not under:
        if module and path:
            tail = "/__init__.py" if os.path.basename(path) == "__init__.py" else ".py"
            return module.replace(".", "/") + tail
        return path
    return os.path.relpath(path, max(under, key=len)).replace(os.sep, "/")


def _root_path(module: str, path: str) -> str:
    """The file of ``module`` relative to the folder it is imported from, spelt from the
    module's name (``pkg.ops`` -> ``pkg/ops.py``; a package's ``pkg/__init__.py``), so that
    neither the working folder nor where the package lies moves it."""
    base = os.path.basename(path)
    stem, dot, suffix = base.partition(".")
    tail = f"/{base}" if stem == "__init__" else f".{suffix}" if dot else ".py"
    return module.replace(".", "/") + tail


def _library_kernels(
    facts: Facts, modules: Mapping[str, MypyFile], tree: MypyFile, index: ModuleIndex
) -> list[FunctionEntry]:
    """The library functions with a requirement that the module's code calls or names
    (a caller's ``calls`` already lists them: the Mermaid edges into the library)."""
    from mypy.nodes import CallExpr, RefExpr
    from mypy.server.subexpr import get_subexpressions

    from typed_pallas_mypy.transformers.nodes import start_of

    found: dict[str, FunctionEntry] = {}
    for expr in get_subexpressions(tree):
        if not isinstance(expr, (CallExpr, RefExpr)):
            continue
        target = expr.callee if isinstance(expr, CallExpr) else expr
        func = index.function_at(start_of(expr))
        name = facts.names.callee_function(target, func)
        if name is None or name in found or not facts.names.is_library_name(name):
            continue
        req = facts.of(name).requirement
        if req is None:
            continue
        where = facts.of(name).where
        # the engine's path of the file it read (library notes spell it from the root)
        read = re.sub(r"(?::\d+)+$", "", where)
        module = facts.names.module_of(name)
        if module is None and read.endswith((".py", ".pyi")):
            module = re.sub(r"(?:/__init__)?\.pyi?$", "", read).replace("/", ".")
        if not read.endswith((".py", ".pyi")) and module is not None and module in modules:
            read = _root_path(module, modules[module].path)
        found[name] = FunctionEntry(
            name=name,
            where=where,
            platforms=tuple(sorted(req.platforms)),
            chain=req.chain,
            module=module or "",
            qualname=name.removeprefix(module + ".") if module else name,
            path=read,
        )
    return [found[name] for name in sorted(found)]


def _at(line: int, column: int) -> NameExpr:
    from mypy.nodes import NameExpr

    node = NameExpr("")
    node.line, node.column = line, column
    return node


def _sorted(items: frozenset[str] | None) -> tuple[str, ...] | None:
    return tuple(sorted(items)) if items is not None else None


# --------------------------------------------------------------------------- rendering


def to_json(maps: Sequence[ModuleMap]) -> dict[str, object]:
    """The map as JSON-ready data, sorted."""
    modules: list[dict[str, object]] = []
    for m in sorted(maps, key=lambda m: m.module):
        functions = [
            {
                **_identity(f),
                "where": f.where,
                "platforms": list(f.platforms) if f.platforms is not None else None,
                "chain": list(f.chain),
                "guard": [list(s) if s is not None else None for s in f.guard] if f.guard else None,
                "platform_source": f.platform_source,
                "wrapper": f.wrapper,
                "evidence": [
                    {"backends": list(b), "spelling": s, "line": n} for b, s, n in f.evidence
                ],
                "calls": list(f.calls),
            }
            for f in m.functions
        ]
        decisions = [
            {
                "line": d.line,
                "column": d.column,
                "function": d.function,
                "message": d.message,
                "notes": list(d.notes),
                "requires": list(d.requires),
            }
            for d in m.decisions
        ]
        libraries = [
            {
                **_identity(f),
                "where": f.where,
                "platforms": list(f.platforms) if f.platforms is not None else None,
                "chain": list(f.chain),
            }
            for f in m.libraries
        ]
        modules.append(
            {
                "module": m.module,
                "path": m.path,
                "functions": functions,
                "decisions": decisions,
                "libraries": libraries,
            }
        )
    return {"modules": modules}


def _identity(f: FunctionEntry) -> dict[str, object]:
    """What names an entry in JSON whatever else in its file is edited: ``name`` (the
    fullname), ``module``, ``qualname``, ``path`` (relative to the folder the module is
    imported from) and ``reason`` (the first note of ``chain`` without line numbers, as
    the lock file gives it; None with no requirement)."""
    return {
        "name": f.name,
        "module": f.module,
        "qualname": f.qualname,
        "path": f.path,
        "reason": _stable_reason(f.chain[0]) if f.platforms is not None and f.chain else None,
    }


def _text(maps: Sequence[ModuleMap]) -> Iterator[str]:
    shown = [m for m in maps if m.functions or m.decisions or m.libraries]
    if not shown:
        yield "No platform facts: no function here has a platform requirement or decides one."
        return
    for m in shown:
        yield f"{m.module} ({m.path})"
        for f in m.functions:
            short = f.name[len(m.module) + 1 :]
            what = []
            if f.platforms is not None:
                what.append(f"lowers only for {', '.join(f.platforms)}")
            if f.guard is not None:
                true, false = (", ".join(s) if s is not None else "?" for s in f.guard)
                what.append(f"guard helper (true: {true}; false: {false})")
            if f.platform_source:
                what.append("returns the platform")
            if f.wrapper is not None:
                what.append(f"wraps {f.wrapper}")
            if f.evidence and f.platforms is None:
                what.append(
                    "body uses " + ", ".join(f"{s} ({'/'.join(b)})" for b, s, _ in f.evidence)
                )
            yield f"  {short} ({f.where}): {'; '.join(what)}"
            for note in f.chain:
                yield f"      {note}"
        for f in m.libraries:
            platforms = ", ".join(f.platforms or ())
            yield f"  uses {f.name} ({f.where}): lowers only for {platforms}"
            for note in f.chain:
                yield f"      {note}"
        for d in m.decisions:
            where = f" in {d.function[len(m.module) + 1 :]}" if d.function else ""
            yield f"  decided at {m.path}:{d.line}{where}: {d.message}"
            for note in d.notes:
                yield f"      {note}"
        yield ""


def _node_id(name: str) -> str:
    return "f_" + "".join(c if c.isalnum() else "_" for c in name)


def _label(text: str) -> str:
    return text.replace('"', "#quot;")


def _mermaid(maps: Sequence[ModuleMap]) -> Iterator[str]:
    yield "graph LR"
    nodes: dict[str, str] = {}
    edges: list[str] = []
    required = {f.name for m in maps for f in m.functions if f.platforms is not None}
    for m in sorted(maps, key=lambda m: m.module):
        for f in m.libraries:
            nodes[f.name] = (
                f'  {_node_id(f.name)}[("{_label(f.name)}<br/>{", ".join(f.platforms or ())}")]'
            )
        for f in m.functions:
            if f.platforms is not None:
                nodes[f.name] = (
                    f'  {_node_id(f.name)}["{_label(f.name)}<br/>{", ".join(f.platforms)}"]'
                )
                edges.extend(f"  {_node_id(f.name)} --> {_node_id(c)}" for c in f.calls)
        for i, d in enumerate(m.decisions):
            site = f"d_{_node_id(m.module)[2:]}_{d.line}_{d.column}_{i}"
            where = f" in {d.function}" if d.function else ""
            nodes[site] = (
                f'  {site}{{{{"{_label(m.path)}:{d.line}{where}<br/>{_label(d.message)}"}}}}'
            )
            edges.extend(f"  {site} -.->|fails| {_node_id(r)}" for r in d.requires)
            if d.function is not None and d.function in required:
                edges.append(f"  {_node_id(d.function)} --- {site}")
    for key in sorted(nodes):
        yield nodes[key]
    yield from sorted(set(edges))
    for key in sorted(nodes):
        if key.startswith("d_"):
            yield f"  style {key} stroke:#d33,stroke-width:2px"


def render(maps: Sequence[ModuleMap], output: str) -> str:
    """The map in ``output`` format (one of :data:`OUTPUTS`)."""
    if output == "json":
        return json.dumps(to_json(maps), indent=2, sort_keys=True) + "\n"
    lines = _mermaid(maps) if output == "mermaid" else _text(maps)
    return "\n".join(lines).rstrip("\n") + "\n"


# --------------------------------------------------------------------------- lock and check

#: the first line of a lock file; a file without it is not one
LOCK_MAGIC: Final = "# typed-pallas platform lock"
LOCK_FORMAT: Final = 1
_LOCK_HEAD_RE: Final = re.compile(r"^# typed-pallas platform lock, format (\d+)\b")
_LOCK_ENTRY_RE: Final = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*(?:\.[A-Za-z_][A-Za-z0-9_]*)*): (.+)$")
_PLATFORM_RE: Final = re.compile(r"^[a-z][a-z0-9_]*$")
_REASON_INDENT: Final = "    "


class LockError(Exception):
    """A lock file that cannot be read, or is not a lock file (one line, for the user)."""


@dataclass(frozen=True)
class LockEntry:
    """One public name that lowers only for some platforms, and why (one line)."""

    platforms: tuple[str, ...]
    reason: str = ""


def lock_entries(maps: Sequence[ModuleMap]) -> dict[str, LockEntry]:
    """The public names of ``maps`` that lower only for some platforms, each with the
    reason its chain gives first, line numbers and the working folder taken out (they
    move with unrelated edits)."""
    out: dict[str, LockEntry] = {}
    defined = {f.name: f for m in maps for f in m.functions}
    for m in maps:
        named = [(f.name, f) for f in m.functions]
        named += [
            (f"{m.module}.{name}", defined[target])
            for name, target in m.reexports
            if target in defined
        ]
        for public, f in named:
            if f.platforms is None or any(part.startswith("_") for part in public.split(".")):
                continue
            reason = _stable_reason(f.chain[0]) if f.chain else ""
            out[public] = LockEntry(tuple(sorted(f.platforms)), reason)
    return out


def _stable_reason(note: str) -> str:
    """A chain note without its head (``name (path:line)``), line numbers or the
    working folder: what stays the same while the reason does."""
    text = note.replace(os.path.join(os.getcwd(), ""), "")
    head = re.match(r"^\S+ \([^)]*\) (.*)$", text)
    if head:
        text = head.group(1)
    plain = re.match(r"^lowers only for [^:]*: (.*)$", text)
    if plain:
        text = plain.group(1)
    text = re.sub(r"(\.pyi?):\d+(?::\d+)?", r"\1", text)
    text = re.sub(r" (?:at|on) line \d+", "", text)
    text = re.sub(r"\blines? \d+(?:-\d+)?", "line", text)
    return " ".join(text.split())


def render_lock(entries: Mapping[str, LockEntry], made_by: str) -> str:
    """The lock file's text: a header, then each name (sorted) with its platforms and,
    indented below, the reason."""
    lines = [
        f"{LOCK_MAGIC}, format {LOCK_FORMAT}: every public name that lowers only for some",
        "# platforms, with the platforms and why; a name not listed lowers for every platform.",
        f"# Made by: {made_by} --lock FILE",
        f"# Checked by: {made_by} --check FILE",
    ]
    for name in sorted(entries):
        entry = entries[name]
        lines.append(f"{name}: {', '.join(entry.platforms)}")
        if entry.reason:
            lines.append(_REASON_INDENT + entry.reason)
    return "\n".join(lines) + "\n"


def read_lock(path: str) -> dict[str, LockEntry]:
    """The entries of the lock file at ``path``. Raises :class:`LockError` (one line)
    when it cannot be read or is not a lock file of this format."""
    try:
        with open(path, encoding="utf-8") as handle:
            text = handle.read()
    except FileNotFoundError:
        raise LockError(f"{path}: no such lock file; make it with --lock {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise LockError(f"{path}: cannot read the lock file ({e.__class__.__name__})") from None
    return parse_lock(text, path)


def parse_lock(text: str, path: str = "the lock file") -> dict[str, LockEntry]:
    """The entries of a lock file's ``text`` (:func:`read_lock`)."""
    lines = text.splitlines()
    head = _LOCK_HEAD_RE.match(lines[0]) if lines else None
    if head is None:
        raise LockError(
            f"{path}: not a typed-pallas platform lock (its first line is not "
            f"'{LOCK_MAGIC}, format {LOCK_FORMAT}: ...'); make one with --lock"
        )
    if int(head.group(1)) != LOCK_FORMAT:
        raise LockError(
            f"{path}: a platform lock of format {head.group(1)}, this typed-pallas reads format "
            f"{LOCK_FORMAT}; make it again with --lock"
        )
    entries: dict[str, LockEntry] = {}
    last: str | None = None
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip() or line.startswith("#"):
            continue
        if line.startswith(_REASON_INDENT) and line.strip():
            if last is None or entries[last].reason:
                raise LockError(f"{path}:{number}: a reason line that follows no name")
            entries[last] = LockEntry(entries[last].platforms, " ".join(line.split()))
            continue
        found = _LOCK_ENTRY_RE.match(line)
        platforms = [p.strip() for p in found.group(2).split(",")] if found else []
        if found is None or not all(_PLATFORM_RE.match(p) for p in platforms):
            raise LockError(
                f"{path}:{number}: not a lock line (expected 'module.name: platform, ...' "
                "or an indented reason)"
            )
        name = found.group(1)
        if name in entries:
            raise LockError(f"{path}:{number}: {name} is listed twice")
        entries[name] = LockEntry(tuple(sorted(platforms)))
        last = name
    return entries


def _platforms_text(entry: LockEntry | None) -> str:
    return ", ".join(entry.platforms) if entry is not None else "every platform"


def compare_locks(
    old: Mapping[str, LockEntry], new: Mapping[str, LockEntry]
) -> tuple[list[str], list[str]]:
    """(the names whose platforms changed, each as ``name: old -> new`` with the new
    reason; the names whose reason alone changed), sorted by name."""
    changed: list[str] = []
    reasons: list[str] = []
    for name in sorted(set(old) | set(new)):
        before, after = old.get(name), new.get(name)
        if (before.platforms if before else None) != (after.platforms if after else None):
            line = f"{name}: {_platforms_text(before)} -> {_platforms_text(after)}"
            if after is not None and after.reason:
                line += f" ({after.reason})"
            elif after is None:
                line += " (no restriction inferred now, or no longer a public name)"
            changed.append(line)
        elif before is not None and after is not None and before.reason != after.reason:
            reasons.append(f"{name}: {after.reason}")
    return changed, reasons
