"""``mypy.stubtest``: typed-pallas's stubs follow the installed JAX.

Runs stubtest over ``jax.experimental.pallas`` (and, through it, every stubbed
submodule) against the JAX of this venv, with the allowlists in ``stubs/allowlists``:
``common.txt`` for every version, plus ``jax-0.10.txt`` (jax < 0.12) or ``jax-0.12.txt``
(jax >= 0.12) for the names the stubs keep for the other end of the supported range.
Stubtest fails on unused allowlist entries, so the lists cannot grow stale.

Not stubbed, hence ``--ignore-missing-stub``: ``jax.experimental.pallas.ops`` and
``.fuser`` (the stub package is partial; checkers read those from the jax wheel).
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import jax
import pytest

ROOT = Path(__file__).resolve().parent.parent
ALLOWLISTS = ROOT / "stubs" / "allowlists"
CONFIG = ROOT / "tests" / "checker_configs" / "stubtest.ini"


def _jax_minor() -> tuple[int, int]:
    major, minor = (int(p) for p in re.findall(r"\d+", jax.__version__)[:2])
    return major, minor


def version_allowlist() -> Path:
    return ALLOWLISTS / ("jax-0.10.txt" if _jax_minor() < (0, 12) else "jax-0.12.txt")


@pytest.mark.slow
def test_stubtest_clean(tmp_path: Path) -> None:
    cmd = [
        sys.executable, "-m", "mypy.stubtest",
        "--mypy-config-file", str(CONFIG),
        "--ignore-missing-stub",
        "--allowlist", str(ALLOWLISTS / "common.txt"),
        "--allowlist", str(version_allowlist()),
        "jax.experimental.pallas",
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
        assert re.fullmatch(r"jax\.experimental\.pallas(\.\w+)+", entry), (
            f"{path.name}: not an exact name: {entry!r}"
        )
        assert comments, f"{path.name}: {entry} has no reason (a comment line right above it)"


def test_allowlist_checker_rejects_a_bare_or_wildcard_entry(tmp_path: Path) -> None:
    bad = tmp_path / "bad.txt"
    bad.write_text("jax.experimental.pallas.tpu.*\n")
    with pytest.raises(AssertionError):
        test_allowlist_entries_are_exact_and_explained(bad)


def test_version_specific_names_are_marked_in_the_stubs() -> None:
    """Every name a version allowlist excuses is marked in the stub as version-only."""
    marks = {"jax-0.10.txt": "jax >= 0.12 only", "jax-0.12.txt": "jax < 0.12 only"}
    stub_dir = ROOT / "stubs" / "jax-stubs" / "experimental" / "pallas"
    for name, mark in marks.items():
        for entry, _ in _entries(ALLOWLISTS / name):
            module, _, attr = entry.removeprefix("jax.experimental.pallas.").partition(".")
            top = attr.split(".")[0] if attr else module
            stub = stub_dir / f"{module}.pyi"
            lines = stub.read_text().splitlines()
            if attr.startswith("CompilerParams."):
                continue  # fields: marked on the field lines, checked by stubtest itself
            marked = False
            for i, ln in enumerate(lines):
                if ln.startswith(f"def {top}("):  # a function: the mark is on one of its parameters
                    block = lines[
                        i : next(
                            (j for j in range(i + 1, len(lines)) if lines[j].startswith(")")), i
                        )
                    ]
                    marked = marked or any(mark in b for b in block)
                elif re.search(rf"\b{re.escape(top)}\b", ln) and mark in ln:
                    marked = True
            assert marked, (
                f"{entry} is allowlisted in {name} but {stub.name} does not mark it '{mark}'"
            )
