"""``mypy.stubtest``: typed-pallas's stubs follow the installed JAX.

Runs stubtest over ``jax.experimental.pallas`` (and, through it, every stubbed
submodule), and ``jax.pallas`` where the release has it and the tree a stub for it (none
today: checkers read JAX's own jax.pallas, docs/checkers.md), against the JAX of this venv,
with the allowlists in ``stubs/allowlists``: ``common.txt`` for every release, plus
``jax-RELEASE.txt`` for the installed release (one per checked release,
``typed_pallas._versions.CHECKED_RELEASES``) for the names the stubs keep for other
releases. Stubtest fails on unused allowlist entries, so the lists cannot grow stale; a
release with no allowlist fails with what to do (scripts/test-newest).

Not stubbed, hence ``--ignore-missing-stub``: ``jax.experimental.pallas.ops`` and
``.fuser`` (the stub package is partial; checkers read those from the jax wheel).
"""

from __future__ import annotations

import importlib.util
import re
import subprocess
import sys
from pathlib import Path

import jax
import pytest
from release_facts import _MARKER as _MARK
from release_facts import releases_of_marker

from typed_pallas import _versions

ROOT = Path(__file__).resolve().parent.parent
ALLOWLISTS = ROOT / "stubs" / "allowlists"
CONFIG = ROOT / "tests" / "checker_configs" / "stubtest.ini"


def version_allowlist(version: str | None = None) -> Path:
    """The allowlist of the installed (or the given) jax release."""
    return ALLOWLISTS / f"jax-{version or jax.__version__}.txt"


def stubtest_modules() -> list[str]:
    """The stubbed top-level Pallas modules this jax has (jax.pallas: 0.12.1 on, if stubbed)."""
    pallas_stub = ROOT / "stubs" / "jax-stubs" / "pallas" / "__init__.pyi"
    has_pallas = importlib.util.find_spec("jax.pallas") is not None and pallas_stub.is_file()
    return ["jax.experimental.pallas"] + (["jax.pallas"] if has_pallas else [])


@pytest.mark.slow
def test_stubtest_clean(tmp_path: Path) -> None:
    allowlist = version_allowlist()
    assert allowlist.is_file(), (
        f"jax {jax.__version__} is not a checked release (no {allowlist.name}): run "
        "scripts/jax_release_facts.py here, fix the stubs against the new facts, write "
        f"stubs/allowlists/{allowlist.name} and add the release to "
        "typed_pallas._versions.CHECKED_RELEASES"
    )
    cmd = [
        sys.executable, "-m", "mypy.stubtest",
        "--mypy-config-file", str(CONFIG),
        "--ignore-missing-stub",
        "--allowlist", str(ALLOWLISTS / "common.txt"),
        "--allowlist", str(allowlist),
        *stubtest_modules(),
    ]  # fmt: skip
    # Not from the repository root: there "stubs/..." and the .pth path would be two
    # names for one stub file.
    proc = subprocess.run(
        cmd, cwd=tmp_path, capture_output=True, text=True, timeout=1200, check=False
    )
    assert proc.returncode == 0, (
        f"stubtest (jax {jax.__version__}):\n{proc.stdout[-6000:]}\n{proc.stderr[-2000:]}"
    )


def _entries(path: Path) -> list[tuple[str, list[str]]]:
    """(entry, comment lines just above it) for each allowlist entry."""
    out: list[tuple[str, list[str]]] = []
    comments: list[str] = []
    for raw in path.read_text().splitlines():
        line = raw.strip()
        if not line:
            comments = []
        elif line.startswith("#"):
            comments.append(line)
        else:
            out.append((line.split("#")[0].strip(), list(comments)))
    return out


@pytest.mark.parametrize("path", sorted(ALLOWLISTS.glob("*.txt")), ids=lambda p: p.name)
def test_allowlist_entries_are_exact_and_explained(path: Path) -> None:
    entries = _entries(path)
    assert entries, f"{path.name} is empty: delete it instead"
    for entry, comments in entries:
        assert re.fullmatch(r"jax\.(experimental\.)?pallas(\.\w+)+", entry), (
            f"{path.name}: not an exact name: {entry!r}"
        )
        assert comments, f"{path.name}: {entry} has no reason (a comment line right above it)"


def test_allowlist_checker_rejects_a_bare_or_wildcard_entry(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("jax.experimental.pallas.tpu.*\n")
    with pytest.raises(AssertionError):
        test_allowlist_entries_are_exact_and_explained(bad)


@pytest.mark.parametrize("path", sorted(ALLOWLISTS.glob("jax-*.txt")), ids=lambda p: p.name)
def test_release_allowlist_names_are_marked_in_the_stubs(path: Path) -> None:
    """Every name a release's allowlist excuses is marked in the stub as absent there:
    a mark (``# jax >= 0.12.1 only``) whose releases leave this one out."""
    version = path.stem.removeprefix("jax-")
    assert version in _versions.CHECKED_RELEASES, f"{path.name}: not a checked release"
    stub_dir = ROOT / "stubs" / "jax-stubs" / "experimental" / "pallas"
    problems = unmarked_entries(path, stub_dir, _versions.CHECKED_RELEASES)
    assert not problems, "\n".join(problems)


def unmarked_entries(path: Path, stub_dir: Path, checked: tuple[str, ...]) -> list[str]:
    """The entries of allowlist ``path`` (jax-RELEASE.txt) that no stub mark excludes."""
    version = path.stem.removeprefix("jax-")
    problems: list[str] = []
    for entry, _ in _entries(path):
        module, _, attr = entry.removeprefix("jax.experimental.pallas.").partition(".")
        stub = stub_dir / f"{module}.pyi"
        if not stub.is_file():  # a name of jax.experimental.pallas itself
            attr, stub = entry.removeprefix("jax.experimental.pallas."), stub_dir / "__init__.pyi"
        top = attr.split(".")[0]
        lines = stub.read_text().splitlines()
        if attr.startswith("CompilerParams."):
            continue  # fields: marked on the field lines (tests/test_release_facts.py)
        marks: list[str] = []
        for i, ln in enumerate(lines):
            if ln.startswith(f"def {top}("):  # a function: the mark is on one of its parameters
                end = next((j for j in range(i + 1, len(lines)) if lines[j].startswith(")")), i)
                block = lines[i:end]
            elif re.search(rf"\b{re.escape(top)}\b", ln):
                block = [ln]
            else:
                continue
            marks += [
                m.group(0)[m.group(0).index("jax") :] for b in block if (m := _MARK.search(b))
            ]
        if not any(version not in releases_of_marker(m, checked) for m in marks):
            problems.append(
                f"{entry} is allowlisted in {path.name} but {stub.name} marks it {marks or 'nowhere'}"
            )
    return problems


def test_meta_an_allowlisted_name_needs_a_mark_that_excludes_the_release(tmp_path: Path) -> None:
    (tmp_path / "tpu.pyi").write_text(
        "from x import a as a  # jax < 0.12.1 only\n"
        "from x import b as b  # jax < 0.12 only\n"
        "from x import c as c\n"
    )
    allowlist = tmp_path / "jax-0.12.0.1.txt"
    allowlist.write_text(
        "# why\njax.experimental.pallas.tpu.a\njax.experimental.pallas.tpu.b\n"
        "jax.experimental.pallas.tpu.c\n"
    )
    assert unmarked_entries(allowlist, tmp_path, ("0.10.2", "0.12.0.1", "0.12.1")) == [
        "jax.experimental.pallas.tpu.a is allowlisted in jax-0.12.0.1.txt but tpu.pyi marks it "
        "['jax < 0.12.1 only']",
        "jax.experimental.pallas.tpu.c is allowlisted in jax-0.12.0.1.txt but tpu.pyi marks it nowhere",
    ]


def test_there_is_an_allowlist_per_checked_release() -> None:
    assert sorted(p.stem for p in ALLOWLISTS.glob("jax-*.txt")) == sorted(
        f"jax-{v}" for v in _versions.CHECKED_RELEASES
    )
