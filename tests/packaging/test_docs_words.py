"""What users read names nothing they cannot look up, and installs nothing from an index.

The docs users read (README.md, CHANGELOG.md, docs/, benchmarks/README.md and every text
file under examples/) must not speak of the project's internal working sessions or issue
numbers ("session 4", "issue 23", "issue #17", "stop 3"): no reader can look those up.
Commits and dates can be. And since typed-pallas is on no package index, no doc may tell a
user to `pip install typed-pallas` by name: that installs whatever an index holds under
the name. Each failure names the file and line.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]

INTERNAL = re.compile(r"session \d|issue \d+|issue #\d+|stop \d+", re.IGNORECASE)
#: `pip install typed-pallas`, `pip install "typed-pallas[mypy]"`: a name, not a path
FROM_AN_INDEX = re.compile(r"""pip install\s+(?:-\S+\s+)*["']?typed[-_]pallas\b""", re.IGNORECASE)
TEXT_SUFFIXES = {".md", ".py", ".yml", ".yaml", ".toml", ".txt", ".json", ".cfg", ".ini"}


def shipped_docs() -> list[Path]:
    docs = [REPO / "README.md", REPO / "CHANGELOG.md", REPO / "benchmarks" / "README.md"]
    docs += sorted((REPO / "docs").rglob("*.md"))
    docs += sorted(
        p
        for p in (REPO / "examples").rglob("*")
        if p.is_file() and p.suffix in TEXT_SUFFIXES and "__pycache__" not in p.parts
    )
    return docs


def hits(pattern: re.Pattern[str], paths: list[Path]) -> list[str]:
    return [
        f"{path.relative_to(REPO)}:{number}: {line.strip()}"
        for path in paths
        for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if pattern.search(line)
    ]


def test_the_docs_users_read_are_all_found() -> None:
    names = {str(p.relative_to(REPO)) for p in shipped_docs()}
    expected = {
        "README.md",
        "CHANGELOG.md",
        "benchmarks/README.md",
        "docs/RESULTS.md",
        "docs/results-history.md",
        "docs/quickstart.md",
        "examples/README.md",
        "examples/ci/github-actions.yml",
        "examples/ci/gitlab-ci.yml",
    }
    assert expected <= names, sorted(expected - names)


def test_no_internal_session_or_issue_numbers() -> None:
    found = hits(INTERNAL, shipped_docs())
    assert found == [], "internal labels a reader cannot look up:\n" + "\n".join(found)


def test_no_install_of_typed_pallas_from_an_index() -> None:
    found = hits(FROM_AN_INDEX, shipped_docs())
    assert found == [], "installs typed-pallas by name (from an index):\n" + "\n".join(found)


@pytest.mark.parametrize(
    ("line", "internal"),
    [
        ("### 2026-12-06 (session 24): one guard rule", True),
        ("identical to Session 21 mutant by mutant", True),
        ("after the one inference (issue 23)", True),
        ("see issue #17 for the list", True),
        ("at the stop 3 commit", True),
        (
            "[`plugin_overhead_session23.json`](../benchmarks/results/plugin_overhead_session23.json)",
            False,
        ),
        ("the session's end", False),
        ("other sessions' test runs", False),
        ("mypy issues a note", False),
        ("a non-stop run", False),
    ],
)
def test_the_internal_pattern_fires_and_stays_silent(line: str, internal: bool) -> None:
    assert bool(INTERNAL.search(line)) is internal


@pytest.mark.parametrize(
    ("line", "from_an_index"),
    [
        ('pip install "typed-pallas[mypy]"', True),
        ("pip install typed-pallas", True),
        ("pip install -U typed_pallas", True),
        ('pip install "/path/to/typed-pallas[mypy]"', False),
        ('python -m pip install "./.typed-pallas[mypy]"', False),
        ('pip install "dist/typed_pallas-0.1.0-py3-none-any.whl[mypy]"', False),
        ("pip install jax-pyrefly-stubs", False),
    ],
)
def test_the_index_pattern_fires_and_stays_silent(line: str, from_an_index: bool) -> None:
    assert bool(FROM_AN_INDEX.search(line)) is from_an_index


def test_a_hit_names_its_file_and_line() -> None:
    doc = REPO / "docs" / "quickstart.md"  # a real doc, so that relative_to(REPO) works
    found = hits(re.compile(r"^# Quickstart$"), [doc])
    assert found == ["docs/quickstart.md:1: # Quickstart"]
