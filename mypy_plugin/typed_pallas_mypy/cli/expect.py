"""``typed-pallas check --expect``: findings compared with ``# expect[CODE]: MESSAGE`` comments.

What it does: reads the ``# expect[CODE]`` / ``# expect[CODE]: MESSAGE`` comments of
the checked ``.py``/``.pyi`` files (:func:`read_expectations`), pairs each error with
the nearest comment that names its code (and its message, when the comment gives one)
on the same line or inside the same call or innermost statement
(:func:`compare_expectations`), and prints what is unexpected, what is missing, and a
one-line verdict (:func:`report_expectations`). ``scripts/check`` runs it on
``examples/`` (see examples/README.md).

What it does not do: run mypy, or look at notes (only errors are expected).
"""

from __future__ import annotations

import ast
import os
import re
import warnings
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Final, TextIO

from typed_pallas_mypy.cli.findings import MypyMessage

__all__ = [
    "EXPECT_RE",
    "Expectation",
    "compare_expectations",
    "python_files",
    "read_expectations",
    "report_expectations",
]

EXPECT_RE: Final = re.compile(r"#\s*expect\[(?P<code>[\w-]+)\](?::\s*(?P<message>.*?))?\s*$")
#: Folders never searched for files (besides hidden ones), as mypy skips them.
SKIPPED_FOLDERS: Final = frozenset({"__pycache__", "site-packages", "node_modules"})


@dataclass
class Expectation:
    """A ``# expect[CODE]: MESSAGE`` comment, and the spans of the code around it."""

    file: str
    line: int
    code: str
    message: str | None
    #: (first line, last line) of each call and the innermost statement holding the comment
    spans: list[tuple[int, int]] = field(default_factory=list)

    def distance(self, finding: MypyMessage) -> int | None:
        """Size of the smallest span holding ``finding`` (None: no match)."""
        if finding.code != self.code or os.path.normpath(finding.file) != os.path.normpath(
            self.file
        ):
            return None
        if self.message is not None and finding.message.strip() != self.message:
            return None
        sizes = [b - a for a, b in self.spans if a <= finding.line <= b]
        if finding.line == self.line:
            sizes.append(0)
        return min(sizes) if sizes else None


def python_files(paths: Iterable[str]) -> list[str]:
    """The .py files under ``paths``, skipping hidden folders and caches, as mypy does."""
    out: list[str] = []
    for path in paths:
        if os.path.isfile(path):
            if path.endswith((".py", ".pyi")):
                out.append(path)
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(d for d in dirs if not d.startswith(".") and d not in SKIPPED_FOLDERS)
            out += [os.path.join(root, f) for f in sorted(files) if f.endswith((".py", ".pyi"))]
    return out


def read_expectations(path: str) -> list[Expectation]:
    """The ``# expect[...]`` comments of one file, with the spans of the code around each."""
    with open(path, encoding="utf-8") as f:
        source = f.read()
    found = []
    for lineno, text in enumerate(source.splitlines(), 1):
        if "expect[" not in text:
            continue
        m = EXPECT_RE.search(text)
        if m:
            found.append(Expectation(path, lineno, m["code"], m["message"] or None))
    if not found:
        return found
    try:
        with warnings.catch_warnings():  # ``"a\+b"`` in the file: mypy's to report, not ours
            warnings.simplefilter("ignore")
            tree = ast.parse(source, path)
    except SyntaxError:
        return found
    nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.Call, ast.stmt))]
    for exp in found:
        holding = [n for n in nodes if n.lineno <= exp.line <= (n.end_lineno or n.lineno)]
        stmts = [n for n in holding if isinstance(n, ast.stmt)]
        inner = min(stmts, key=lambda n: (n.end_lineno or n.lineno) - n.lineno) if stmts else None
        exp.spans = [
            (n.lineno, n.end_lineno or n.lineno)
            for n in holding
            if isinstance(n, ast.Call) or n is inner
        ]
    return found


def compare_expectations(
    findings: Sequence[MypyMessage], expectations: Sequence[Expectation]
) -> tuple[list[tuple[MypyMessage, Expectation]], list[MypyMessage], list[Expectation]]:
    """Pair findings with expectations (nearest first): matched, unexpected, missing."""
    errors = [f for f in findings if f.severity == "error"]
    pairs = []
    for i, finding in enumerate(errors):
        for j, exp in enumerate(expectations):
            d = exp.distance(finding)
            if d is not None:
                pairs.append((d, i, j))
    used_f: set[int] = set()
    used_e: set[int] = set()
    matched = []
    for _, i, j in sorted(pairs):
        if i not in used_f and j not in used_e:
            used_f.add(i)
            used_e.add(j)
            matched.append((errors[i], expectations[j]))
    unexpected = [f for i, f in enumerate(errors) if i not in used_f]
    missing = [e for j, e in enumerate(expectations) if j not in used_e]
    return matched, unexpected, missing


def report_expectations(
    findings: Sequence[MypyMessage], paths: Sequence[str], stream: TextIO
) -> bool:
    """Print how findings compare to ``# expect[...]`` comments; True when exactly equal."""
    write = stream.write
    expectations = [e for path in python_files(paths) for e in read_expectations(path)]
    matched, unexpected, missing = compare_expectations(findings, expectations)
    for f in unexpected:
        write(f"unexpected: {f.file}:{f.line}:{f.column}: {f.message}  [{f.code}]\n")
    for e in missing:
        msg = f": {e.message}" if e.message else ""
        write(f"missing:    {e.file}:{e.line}: expect[{e.code}]{msg}\n")
    files = sorted({os.path.normpath(e.file) for e in expectations})
    ok = not unexpected and not missing
    if ok:
        where = (
            f" (in {', '.join(sorted({os.path.dirname(f) or '.' for f in files}))})"
            if files
            else ""
        )
        write(
            f"Expectations met: {len(matched)} finding{'s' if len(matched) != 1 else ''}, "
            f"exactly the {len(expectations)} expected{where}; no other finding.\n"
        )
    else:
        write(
            f"Expectations NOT met: {len(matched)} of {len(expectations)} expected findings reported, "
            f"{len(missing)} missing, {len(unexpected)} unexpected.\n"
        )
    return ok
