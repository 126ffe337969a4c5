"""CONTRIBUTING.md names what exists: every repository path it quotes and every link resolves,
and every command it gives is an executable script of the repository."""

from __future__ import annotations

import os
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
GUIDE = ROOT / "CONTRIBUTING.md"
TOP_LEVEL = ("src/", "stubs/", "mypy_plugin/", "eval/", "benchmarks/", "docs/", "examples/",
             "scripts/", "tests/", ".ci/")  # fmt: skip


def quoted_paths(text: str) -> set[str]:
    """Repository paths in `code spans` (the part before a space, ``::`` or a glob)."""
    found = set()
    for span in re.findall(r"`([^`\n]+)`", text):
        for word in span.split():
            word = word.rstrip(".,;:)").split("::")[0]
            if word.startswith(TOP_LEVEL) and not re.search(r"[*<>\[]", word):
                found.add(word)
    return found


def test_the_path_extraction_finds_paths_and_leaves_the_rest() -> None:
    sample = "run `scripts/test-one tests/x.py -k y`, see `src/a/` and `tests/*.yml`, `mypy`"
    assert quoted_paths(sample) == {"scripts/test-one", "tests/x.py", "src/a/"}


def test_every_quoted_path_exists() -> None:
    paths = quoted_paths(GUIDE.read_text())
    assert len(paths) > 30, sorted(
        paths
    )  # the guide quotes the layout; an empty set checks nothing
    missing = sorted(p for p in paths if not (ROOT / p).exists())
    assert missing == []


def test_every_script_it_runs_is_executable() -> None:
    scripts = {p for p in quoted_paths(GUIDE.read_text()) if p.startswith("scripts/")}
    assert {"scripts/test", "scripts/test-one", "scripts/lint", "scripts/check"} <= scripts
    for script in scripts - {"scripts/gen_docs.py", "scripts/support_matrix.py"}:
        assert os.access(ROOT / script, os.X_OK), script


def test_relative_links_resolve() -> None:
    for target in re.findall(r"\]\(([^)#\s]+)(?:#[^)]*)?\)", GUIDE.read_text()):
        if "://" not in target:
            assert (ROOT / target).exists(), target
