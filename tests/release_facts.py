"""The stubs against the per-release facts (stubs/releases/jax-VERSION.json): shared reading.

``stub_names`` reads a stub file's public names (explicit re-exports, assignments,
classes, functions) with the release marker on each (``# jax >= 0.12 only``,
``# jax < 0.12.1 only``, ``# jax >= 0.12, < 0.12.1 only``); ``releases_of_marker`` says
which checked releases a marker names; ``problems`` compares one stub module with the
facts and returns what is wrong, in words. ``tests/test_release_facts.py`` runs it over
every stub module and feeds it wrong stubs to show it fails.

What it does not do: import jax (the facts files are what JAX was), or decide what a
name's type is (stubtest does, per release).
"""

from __future__ import annotations

import ast
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from typed_pallas._versions import release

ROOT = Path(__file__).resolve().parent.parent
STUBS = ROOT / "stubs" / "jax-stubs"
FACTS = ROOT / "stubs" / "releases"

_MARKER = re.compile(
    r"#.*?\bjax (?:>= ?(?P<lo>[\d.]+)(?:, ?< ?(?P<hi2>[\d.]+))?|< ?(?P<hi>[\d.]+)) only\b"
)


@dataclass(frozen=True)
class StubName:
    """One public name of a stub module (a field or parameter for ``kind`` "field"/"param")."""

    name: str
    line: int
    marker: str | None  #: the marker text ("jax >= 0.12 only"), or None


def load_facts(folder: Path = FACTS) -> dict[str, dict[str, Any]]:
    """release -> facts, for every jax-VERSION.json in ``folder``."""
    out: dict[str, dict[str, Any]] = {}
    for path in sorted(folder.glob("jax-*.json")):
        facts = json.loads(path.read_text())
        out[facts["jax"]] = facts
    return out


def _marker(lines: Sequence[str], first: int, last: int) -> str | None:
    for text in lines[first - 1 : last]:
        found = _MARKER.search(text)
        if found:
            return found.group(0)[found.group(0).index("jax") :]
    return None


def releases_of_marker(marker: str, checked: Sequence[str]) -> frozenset[str]:
    """The releases of ``checked`` that ``marker`` ("jax >= 0.12 only"...) names."""
    found = _MARKER.search("# " + marker)
    assert found is not None, marker
    lo, hi = found.group("lo"), found.group("hi") or found.group("hi2")
    out = set()
    for version in checked:
        parts = release(version)
        assert parts is not None
        if lo is not None and parts < (release(lo) or ()):
            continue
        if hi is not None and parts >= (release(hi) or ()):
            continue
        out.add(version)
    return frozenset(out)


def module_of(path: Path) -> str:
    rel = path.relative_to(STUBS).with_suffix("")
    parts = ["jax", *rel.parts]
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def stub_names(path: Path) -> tuple[list[StubName], dict[str, list[StubName]]]:
    """The module's public names, and for each class its fields and ``__init__`` parameters
    (keyed "Class" and "Class.__init__")."""
    text = path.read_text()
    lines = text.splitlines()
    tree = ast.parse(text)
    names: list[StubName] = []
    members: dict[str, list[StubName]] = {}

    def add(name: str, node: ast.AST, *, header_only: bool = False) -> None:
        if name.startswith("_"):
            return
        first = node.lineno  # type: ignore[attr-defined]
        last = first if header_only else (node.end_lineno or first)  # type: ignore[attr-defined]
        names.append(StubName(name, first, _marker(lines, first, last)))

    for node in tree.body:
        if isinstance(node, ast.ImportFrom):
            for alias in node.names:
                if alias.asname is not None and alias.asname == alias.name:
                    add(alias.name, node)
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname is not None and alias.name.endswith("." + alias.asname):
                    add(alias.asname, node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    add(target.id, node)
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
            add(node.target.id, node)
        elif isinstance(node, ast.FunctionDef):
            if not any(n.name == node.name for n in names):  # overloads: the first one
                add(node.name, node, header_only=True)
        elif isinstance(node, ast.ClassDef):
            add(node.name, node, header_only=True)
            fields = []
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    name = item.target.id
                    if not name.startswith("_"):
                        end = item.end_lineno or item.lineno
                        fields.append(StubName(name, item.lineno, _marker(lines, item.lineno, end)))
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    args = [*item.args.posonlyargs, *item.args.args, *item.args.kwonlyargs]
                    members[f"{node.name}.__init__"] = [
                        StubName(
                            a.arg,
                            a.lineno,
                            _marker(lines, a.lineno, a.end_lineno or a.lineno),
                        )
                        for a in args
                        if a.arg != "self"
                    ]
            members[node.name] = fields
    return names, members


def stub_modules() -> dict[str, Path]:
    return {module_of(p): p for p in sorted(STUBS.rglob("*.pyi"))}


def runtime_names(facts: Mapping[str, Any], module: str) -> set[str] | None:
    """The names ``module`` has at one release (deprecated ones too), or None without it."""
    entry = facts["modules"].get(module)
    if entry is None:
        return None
    return set(entry["public"]) | set(entry.get("modules", ())) | set(entry["deprecated"])


def problems(
    module: str,
    path: Path,
    facts: Mapping[str, Mapping[str, Any]],
    untyped: Mapping[tuple[str, str], str],
) -> list[str]:
    """What is wrong with the stub of ``module`` against the facts of every release.

    ``untyped``: the runtime names the stub leaves out on purpose, (module, name) -> why.
    A deprecated name need not be typed; a removed one is not a name of the release."""
    checked = sorted(facts, key=lambda v: release(v) or ())
    having = [v for v in checked if runtime_names(facts[v], module) is not None]
    if not having:
        return [f"{module}: no checked release has this module"]
    out: list[str] = []
    names, members = stub_names(path)
    typed = {n.name for n in names}
    for stub in names:
        present = frozenset(
            v for v in having if stub.name in (runtime_names(facts[v], module) or set())
        )
        where = f"{path.name}:{stub.line}: {module}.{stub.name}"
        if not present:
            out.append(f"{where} exists at no checked release ({', '.join(having)})")
            continue
        marked = releases_of_marker(stub.marker, having) if stub.marker else frozenset(having)
        if marked != present:
            out.append(
                f"{where} exists at {', '.join(sorted(present, key=checked.index))} but is "
                + (f"marked '{stub.marker}'" if stub.marker else "not marked")
            )
    for version in having:
        for name in sorted((runtime_names(facts[version], module) or set()) - typed):
            if (module, name) not in untyped and not facts[version]["modules"][module][
                "deprecated"
            ].get(name):
                out.append(f"{module}.{name} (jax {version}) is neither in the stub nor in UNTYPED")
    for (mod, name), _ in untyped.items():
        if mod == module and name in typed:
            out.append(f"{module}.{name} is in UNTYPED but the stub types it")
    for params, entry in _params_of(module, facts, having).items():
        cls = params.rpartition(".")[2]
        for key, label in ((cls, "fields"), (f"{cls}.__init__", "constructor")):
            if key not in members:
                continue
            for stub in members[key]:
                present = frozenset(
                    v for v, names_at in entry[label].items() if stub.name in names_at
                )
                where = f"{path.name}:{stub.line}: {params} {label} {stub.name}"
                if not present:
                    out.append(f"{where} exists at no checked release")
                    continue
                marked = (
                    releases_of_marker(stub.marker, having) if stub.marker else frozenset(having)
                )
                if marked != present:
                    out.append(
                        f"{where} exists at {', '.join(sorted(present, key=checked.index))} but is "
                        + (f"marked '{stub.marker}'" if stub.marker else "not marked")
                    )
            stubbed = {s.name for s in members[key]}
            for version, names_at in entry[label].items():
                for name in sorted(set(names_at) - stubbed):
                    out.append(f"{params} {label} {name} (jax {version}) is missing from the stub")
    return out


def _params_of(
    module: str, facts: Mapping[str, Mapping[str, Any]], having: Sequence[str]
) -> dict[str, dict[str, dict[str, list[str]]]]:
    """params class -> {"fields"/"constructor": {release: names}} for ``module``'s class."""
    out: dict[str, dict[str, dict[str, list[str]]]] = {}
    for version in having:
        entry = facts[version]["params"].get(f"{module}.CompilerParams")
        if entry is None:
            continue
        got = out.setdefault(f"{module}.CompilerParams", {"fields": {}, "constructor": {}})
        got["fields"][version] = list(entry["fields"])
        got["constructor"][version] = [p["name"] for p in entry["constructor"]]
    return out
