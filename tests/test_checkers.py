"""Run the five type checkers over ``tests/assert_type/check_*.py``.

One checker invocation per checker covers every case file (the checkers are the
slow part), then one pytest case per (checker, file) reports that file's errors,
so a failure names both. The convention the files follow (one targeted ignore per
checker on an expected-error line, unused ignores are errors) is in
``tests/assert_type/README.md``; the settings are in ``tests/checker_configs/``.

A canary file written at run time proves, per checker, that the settings really
report a missing error (an unused ignore) and an unexpected one.

What this does not do: decide what each case means (``scripts/support_matrix.py``
reads the cases for ``docs/checkers.md``), or run the mypy plugin (its own tests do).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
CASES_DIR = ROOT / "tests" / "assert_type"
CONFIGS = ROOT / "tests" / "checker_configs"
CHECKERS = ("mypy", "pyright", "basedpyright", "pyrefly", "ty")
CASE_FILES = sorted(CASES_DIR.glob("check_*.py"))
#: ``MIN_JAX = "0.12.1"`` in a case file: it imports a path JAX added in that release
_MIN_JAX = re.compile(r'^MIN_JAX = "(?P<version>[\d.]+)"', re.MULTILINE)


def _too_new(case_file: Path) -> str | None:
    """Why ``case_file`` is not for the installed jax (None: it is)."""
    found = _MIN_JAX.search(case_file.read_text())
    if found is None:
        return None
    from typed_pallas._versions import installed_version, release

    here = release(installed_version("jax") or "0") or (0,)
    needed = release(found["version"]) or (0,)
    if here >= needed:
        return None
    return (
        f"{case_file.name} needs jax >= {found['version']} (installed: {installed_version('jax')})"
    )


#: the case files for the installed jax: a checker run covers exactly these
RUN_FILES = [f for f in CASE_FILES if _too_new(f) is None]
BIN = Path(sys.executable).parent
TIMEOUT_S = 900

CANARY = (
    '"""Canary: line 3 has an ignore for an error that is not there, line 4 an error with no ignore."""\n'
    "\n"
    "x: int = 1  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]"
    "  # pyrefly: ignore[bad-assignment]  # ty: ignore[invalid-assignment]\n"
    'y: int = "not an int"\n'
)
CANARY_LINES = {3, 4}

pytestmark = pytest.mark.slow


@dataclass(frozen=True)
class Diagnostic:
    path: Path
    line: int
    code: str
    message: str

    def __str__(self) -> str:
        return f"{self.path.name}:{self.line}: [{self.code}] {self.message}"


@dataclass(frozen=True)
class Run:
    """One checker's errors over all files, or why it produced none."""

    errors: tuple[Diagnostic, ...]
    failure: str | None  # the checker crashed, or its output could not be read


def _exe(name: str) -> str | None:
    candidate = BIN / name
    if candidate.exists():
        return str(candidate)
    return shutil.which(name)


def _command(checker: str, exe: str, files: list[Path], cache: Path) -> list[str]:
    py = sys.executable
    paths = [str(f) for f in files]
    if checker == "mypy":
        return [
            exe,
            "--config-file",
            str(CONFIGS / "mypy.ini"),
            "--cache-dir",
            str(cache),
            "--python-executable",
            py,
            "-O",
            "json",
            *paths,
        ]
    if checker in ("pyright", "basedpyright"):
        return [
            exe,
            "-p",
            str(CONFIGS / "pyrightconfig.json"),
            "--pythonpath",
            py,
            "--outputjson",
            *paths,
        ]
    if checker == "pyrefly":
        return [
            exe,
            "check",
            "-c",
            str(CONFIGS / "pyrefly.toml"),
            "--python-interpreter-path",
            py,
            "--output-format",
            "json",
            *paths,
        ]
    if checker == "ty":
        return [
            exe,
            "check",
            "--config-file",
            str(CONFIGS / "ty.toml"),
            "--python",
            py,
            "--output-format",
            "concise",
            "--color",
            "never",
            *paths,
        ]
    raise AssertionError(checker)


_TY_LINE = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+):(?P<col>\d+): (?P<sev>\w+)\[(?P<code>[^\]]+)\] (?P<msg>.*)$"
)


def _parse(checker: str, out: str) -> list[Diagnostic]:
    found: list[Diagnostic] = []
    if checker == "mypy":
        for raw in out.splitlines():
            if not raw.startswith("{"):
                continue
            item = json.loads(raw)
            if item["severity"] == "error":
                found.append(
                    Diagnostic(
                        Path(item["file"]).resolve(),
                        item["line"],
                        item["code"] or "",
                        item["message"],
                    )
                )
    elif checker in ("pyright", "basedpyright"):
        data = json.loads(out[out.index("{") :])
        for item in data["generalDiagnostics"]:
            if item["severity"] == "error":
                line = item["range"]["start"]["line"] + 1
                found.append(
                    Diagnostic(
                        Path(item["file"]).resolve(), line, item.get("rule", ""), item["message"]
                    )
                )
    elif checker == "pyrefly":
        data = json.loads(out[out.index("{") :])
        for item in data["errors"]:
            if item.get("severity", "error") == "error":
                found.append(
                    Diagnostic(
                        (ROOT / item["path"]).resolve(),
                        item["line"],
                        item["name"],
                        item["description"],
                    )
                )
    elif checker == "ty":
        for raw in out.splitlines():
            m = _TY_LINE.match(raw.strip())
            if m and m["sev"] == "error":
                found.append(
                    Diagnostic((ROOT / m["path"]).resolve(), int(m["line"]), m["code"], m["msg"])
                )
    return found


def _run_checker(checker: str, files: list[Path], cache: Path) -> Run:
    exe = _exe(checker)
    if exe is None:
        pytest.skip(f"{checker} is not installed (pip install -e .[test])")
    cmd = _command(checker, exe, files, cache)
    proc = subprocess.run(
        cmd, cwd=ROOT, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    out = proc.stdout
    try:
        errors = _parse(checker, out)
    except (ValueError, KeyError) as exc:
        return Run(
            (),
            f"unreadable output ({exc!r}); rc={proc.returncode}\n{out[-3000:]}\n{proc.stderr[-3000:]}",
        )
    # Exit codes: 0 clean, 1 errors found; anything else is a crash or a config error.
    if proc.returncode not in (0, 1) or (proc.returncode == 1 and not errors):
        return Run(tuple(errors), f"rc={proc.returncode}\n{out[-3000:]}\n{proc.stderr[-3000:]}")
    return Run(tuple(errors), None)


class Runs:
    """Runs each checker once, on first use, over every case file plus the canary."""

    def __init__(self, canary: Path, cache: Path) -> None:
        self.canary = canary.resolve()
        self._cache = cache
        self._runs: dict[str, Run] = {}

    def __getitem__(self, checker: str) -> Run:
        if checker not in self._runs:
            self._runs[checker] = _run_checker(checker, [*RUN_FILES, self.canary], self._cache)
        return self._runs[checker]


@pytest.fixture(scope="session")
def checker_runs(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> Runs:
    name = f"checkers-py{sys.version_info[0]}{sys.version_info[1]}"
    store = getattr(request.config, "cache", None)  # absent with -p no:cacheprovider
    base = Path(store.mkdir(name)) if store is not None else tmp_path_factory.mktemp(name)
    # The canary keeps one path next to mypy's cache: mypy replays a cached module's
    # errors under the path it had when cached.
    canary = base / "canary_checkers.py"
    canary.write_text(CANARY)
    cache = base / "mypy-cache"
    cache.mkdir(exist_ok=True)
    return Runs(canary, cache)


@pytest.mark.parametrize("checker", CHECKERS)
def test_canary_reports_missing_and_unexpected_errors(checker: str, checker_runs: Runs) -> None:
    """The settings must make an unused ignore and an unignored error both fail."""
    run = checker_runs[checker]
    assert run.failure is None, run.failure
    lines = {d.line for d in run.errors if d.path == checker_runs.canary}
    assert lines == CANARY_LINES, (
        f"{checker} reported canary lines {sorted(lines)}, expected {sorted(CANARY_LINES)}"
    )


@pytest.mark.parametrize("case_file", CASE_FILES, ids=[f.name for f in CASE_FILES])
@pytest.mark.parametrize("checker", CHECKERS)
def test_case_file(checker: str, case_file: Path, checker_runs: Runs) -> None:
    if (why := _too_new(case_file)) is not None:
        pytest.skip(why)
    run = checker_runs[checker]
    assert run.failure is None, run.failure
    mine = [d for d in run.errors if d.path == case_file.resolve()]
    assert not mine, f"{checker} on {case_file.name}:\n" + "\n".join(str(d) for d in mine)
