"""One inference, three layouts: the same kernel library gives the same findings, with the
same notes, whether it is the project's own code, an installed package without
``py.typed`` or one with it.

The application (``parity_cases.application``) calls every ``fire_*`` and ``silent_*``
function of ``kernlib`` on the GPU path of a ``jax.default_backend()`` guard. Expected:
exactly one ``pallas-platform`` error per ``fire_*`` call (JAX's text for TPU params
lowered for gpu), none anywhere else, and word-for-word the same notes in every layout
(paths are relative to the project's folder or to site-packages: the same text). Each
call is its own test case, over one mypy run per layout; the cases the engine does not
get right yet are marked (``ENGINE_MISSES``). The ground truth for each function is JAX's
own verdict on cross-lowering it (``test_ground_truth``).

Each layout is also checked warm (from mypy's cache), under the daemon and in mypy's
parallel mode: the same findings as the cold serial run.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from parity_cases import APPLICATION_FORMS, FORMS, LIBRARY, application, application_case

pytestmark = pytest.mark.slow

ERROR = re.compile(r"^app\.py:(\d+): error: (.*)  \[pallas-platform\]$")
NOTE = re.compile(r"^app\.py:(\d+): note: (.*)$")
MYPY_INI = """\
[mypy]
plugins = typed_pallas_mypy
ignore_missing_imports = True
check_untyped_defs = True
"""

Findings = dict[int, tuple[str, tuple[str, ...]]]
LAYOUTS = ("project", "untyped", "typed")


def parse(output: str) -> Findings:
    found: Findings = {}
    for line in output.splitlines():
        error = ERROR.match(line)
        if error is not None:
            found[int(error.group(1))] = (error.group(2), ())
            continue
        note = NOTE.match(line)
        if note is not None and int(note.group(1)) in found:
            message, notes = found[int(note.group(1))]
            found[int(note.group(1))] = (message, (*notes, note.group(2)))
    return found


def _layout(root: Path, layout: str) -> dict[str, str]:
    """Write the application and the library for ``layout``; the environment to run in."""
    project = root / "project"
    project.mkdir(parents=True)
    source, _ = application()
    (project / "app.py").write_text(source)
    (project / "mypy.ini").write_text(MYPY_INI)
    env = {**os.environ, "TYPED_PALLAS_MYPY_DEBUG": "1"}
    env.pop("PYTHONPATH", None)
    if layout == "project":
        shutil.copytree(LIBRARY, project / "kernlib", ignore=shutil.ignore_patterns("__pycache__"))
        return env
    site = root / "lib" / "site-packages"
    shutil.copytree(LIBRARY, site / "kernlib", ignore=shutil.ignore_patterns("__pycache__"))
    if layout == "typed":
        (site / "kernlib" / "py.typed").write_text("")
    env["PYTHONPATH"] = str(site)
    return env


def run_mypy(project: Path, env: dict[str, str], cache: Path, *extra: str) -> str:
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache), *extra, "app.py"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert "INTERNAL ERROR" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert done.returncode in (0, 1), done.stdout + done.stderr
    return done.stdout


@pytest.fixture(scope="module")
def runs(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[dict[str, tuple[Path, dict[str, str], Findings]]]:
    base = tmp_path_factory.mktemp("parity")
    cache = base / "mypy-cache"  # shared: jax is analysed once
    out: dict[str, tuple[Path, dict[str, str], Findings]] = {}
    for layout in LAYOUTS:
        env = _layout(base / layout, layout)
        project = base / layout / "project"
        out[layout] = (project, env, parse(run_mypy(project, env, cache)))
    yield out


#: cases the engine does not get right yet, in every layout: case -> what it misses. The
#: ground truth of each is proven all the same (test_ground_truth.py); a mark comes off
#: when the engine learns the form (strict: a case that passes fails the run).
ENGINE_MISSES: dict[str, str] = {}


def _cases() -> list[object]:
    _, cases = application()
    params: list[object] = []
    for layout in LAYOUTS:
        for case in cases:
            reason = ENGINE_MISSES.get(case)
            marks = [pytest.mark.xfail(strict=True, reason=reason)] if reason else []
            params.append(pytest.param(layout, case, marks=marks, id=f"{layout}-{case}"))
    return params


@pytest.mark.parametrize(("layout", "case"), _cases())
def test_each_fire_call_is_one_finding_each_silent_call_none(
    runs: dict[str, tuple[Path, dict[str, str], Findings]], layout: str, case: str
) -> None:
    _, cases = application()
    line, expected = cases[case]
    found = runs[layout][2].get(line)
    if expected is None:
        assert found is None, f"{layout}: {case} reported {found}"
        return
    assert found is not None, f"{layout}: {case} missed"
    message, notes = found
    assert message == expected, (layout, case)
    if case.startswith("fire_"):
        assert notes[0].startswith(f"{case} (kernlib/shapes.py:"), (layout, notes)
    assert re.search(r"lets this (call )?lower only for cuda, rocm$", notes[-1]), (layout, notes)


@pytest.mark.parametrize("layout", LAYOUTS)
def test_nothing_is_reported_outside_the_calls(
    runs: dict[str, tuple[Path, dict[str, str], Findings]], layout: str
) -> None:
    _, cases = application()
    lines = {line for line, _ in cases.values()}
    assert sorted(set(runs[layout][2]) - lines) == []


def test_the_three_layouts_give_the_same_notes(
    runs: dict[str, tuple[Path, dict[str, str], Findings]],
) -> None:
    project = runs["project"][2]
    for layout in ("untyped", "typed"):
        assert runs[layout][2] == project, layout


def test_every_form_has_a_firing_case() -> None:
    _, cases = application()
    fires = {fire for _, fire, _ in FORMS if fire is not None}
    fires |= {application_case("fire", form) for form, _, _ in APPLICATION_FORMS}
    assert {case for case, (_, message) in cases.items() if message is not None} == fires
    assert len(FORMS) + len(APPLICATION_FORMS) >= 73


@pytest.mark.parametrize("layout", LAYOUTS)
def test_warm_daemon_and_parallel_runs_give_the_cold_findings(
    runs: dict[str, tuple[Path, dict[str, str], Findings]], tmp_path: Path, layout: str
) -> None:
    project, env, cold = runs[layout]
    cache = tmp_path / "cache"
    assert parse(run_mypy(project, env, cache)) == cold  # cold, its own cache
    assert parse(run_mypy(project, env, cache)) == cold  # warm
    assert parse(run_mypy(project, env, tmp_path / "parallel", "-n", "2")) == cold
    status = tmp_path / "dmypy.json"
    daemon = [sys.executable, "-m", "mypy.dmypy", "--status-file", str(status)]
    try:
        done = subprocess.run(
            [*daemon, "run", "--", "--cache-dir", str(tmp_path / "daemon"), "app.py"],
            cwd=project,
            env=env,
            capture_output=True,
            text=True,
            timeout=900,
            check=False,
        )
        assert parse(done.stdout) == cold, done.stdout + done.stderr
    finally:
        subprocess.run(
            [*daemon, "stop"], cwd=project, env=env, capture_output=True, timeout=60, check=False
        )
