"""Bad input never ends in a traceback or a silent pass: every subcommand (``check``,
``platforms``, ``init``, ``explain``) in every output format, on each input of
``cli_errors_table.INPUTS`` (a missing path, a folder with no Python file, a syntax error,
a file that is not UTF-8, an empty file, an annotation mypy cannot read (a warning,
not a finding), invalid TOML, a pyproject.toml that is not
UTF-8, an unknown configuration key, an unknown platform in the configuration and in
``--platform``, an unknown ``--output``).

Each case runs the command in-process on a fresh project and compares with the literal
table: the exit status, the one line on stderr (exactly one: a first mypy run's
cold-cache line aside), what stdout holds in that format, no traceback, and ``init``
writes nothing when it fails. The console script itself runs the cases of the issue
that found the tracebacks (``typed-pallas platforms``), in a subprocess.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from cli_errors_table import (
    COMMANDS,
    DOC,
    EXPECTED,
    INPUTS,
    Input,
    argv_for,
    matches,
    render_markdown,
    stdout_summary,
)

from typed_pallas_mypy import cli, platform_map

COLD_CACHE = "typed-pallas: first analysis of jax"


def _cases() -> list[object]:
    cases: list[object] = []
    for inp in INPUTS:
        for command in COMMANDS:
            for output in command.outputs if inp.with_formats else (None,):
                marks = [pytest.mark.slow] if command.name in inp.runs_mypy else []
                cases.append(
                    pytest.param(
                        inp,
                        command.name,
                        output,
                        marks=marks,
                        id=f"{inp.name}-{command.name}-{output}",
                    )
                )
    return cases


def _snapshot(root: Path) -> dict[str, bytes]:
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


@pytest.fixture(scope="session")
def map_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The mypy cache of the in-process ``platforms`` runs."""
    return str(tmp_path_factory.mktemp("map-cache"))


@pytest.mark.parametrize(("inp", "command", "output"), _cases())
def test_bad_input(
    inp: Input,
    command: str,
    output: str | None,
    proj: Path,
    mypy_cache: str,
    map_cache: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    for name, body in inp.files.items():
        (proj / name).parent.mkdir(parents=True, exist_ok=True)
        (proj / name).write_bytes(body)
    monkeypatch.setattr(platform_map, "DEFAULT_MAP_CACHE", map_cache)
    before = _snapshot(proj)
    expected = EXPECTED[(inp.name, command)]
    try:
        status = cli.main(argv_for(inp, command, output, mypy_cache))
    except SystemExit as e:  # argparse's own usage errors
        status = e.code  # type: ignore[assignment]
    out, err = capsys.readouterr()

    assert "Traceback" not in out + err
    assert status == expected.status, err
    told = [line for line in err.splitlines() if not line.startswith(COLD_CACHE)]
    if expected.stderr:
        assert len(told) == 1, err
        assert matches(expected.stderr, told[0], str(proj)), told[0]
    else:
        assert told == [], err
    if status == 2:
        assert told[0].startswith("typed-pallas: error: "), told[0]
    assert matches(expected.stdout.get(output, ""), stdout_summary(command, output, out), str(proj))
    if command == "init" and status != 0:
        assert _snapshot(proj) == before, "init wrote something"


def test_every_case_has_an_expectation() -> None:
    cases = {(inp.name, command.name) for inp in INPUTS for command in COMMANDS}
    assert cases == set(EXPECTED)
    assert len(INPUTS) == 12 and len(EXPECTED) == 48


def test_the_documented_table_is_this_one() -> None:
    assert DOC.read_text(encoding="utf-8") == render_markdown(), (
        "run python tests/cli/cli_errors_table.py"
    )


@pytest.mark.parametrize(
    ("args", "first_line"),
    [
        pytest.param(
            ["nope.py"],
            "typed-pallas: error: no such file or directory: nope.py; name files or folders that exist",
            id="missing-path",
        ),
        pytest.param(
            ["broken.py"],
            "typed-pallas: error: broken.py:1: Expected a parameter or the end of the parameter list; "
            "nothing was checked: fix the syntax error and rerun (1 more error of this kind)",
            id="syntax-error",
        ),
        pytest.param(
            ["latin1.py"],
            "typed-pallas: error: latin1.py: Cannot decode file: 'utf-8' codec can't decode byte 0xe9 "
            "in position 8: invalid continuation byte; nothing was checked: save the file as UTF-8, or "
            "declare its encoding on its first line (# -*- coding: latin-1 -*-), and rerun",
            id="not-utf8",
        ),
    ],
)
@pytest.mark.slow
def test_console_script_platforms(tmp_path: Path, args: list[str], first_line: str) -> None:
    """``python -m typed_pallas_mypy.cli platforms`` (the console script's code): one line, status 2."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "broken.py").write_bytes(b"def f(:\n")
    (tmp_path / "latin1.py").write_bytes(b'name = "\xe9t\xe9"\n')
    proc = subprocess.run(
        [sys.executable, "-m", "typed_pallas_mypy.cli", "platforms", *args],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert (proc.returncode, proc.stdout, proc.stderr) == (2, "", first_line + "\n")
