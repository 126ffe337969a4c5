"""The JAX releases typed-pallas was checked at, and the note every entry point gives for another.

``typed_pallas._versions.CHECKED_RELEASES`` is the one list. A jax that is not one of them
(newer than the newest, between two, older than the oldest, a pre-release of one) gets one
line from ``typed-pallas check`` (stderr, exit status unchanged), ``typed-pallas --version``,
the mypy plugin (stderr, once per process, never an error; warm runs as cold ones) and
``typed_pallas.jax_check_status()``; a checked release gets nothing. An unchecked jax is
simulated by replacing the list (``CHECKED_RELEASES_TEST_ENV``, read by every process the
test starts): the installed jax then is not on it.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

import typed_pallas
from typed_pallas import _jax_range, _versions

ROOT = Path(__file__).resolve().parent.parent
BIN = Path(sys.executable).parent
JAX = _versions.installed_version("jax")
assert JAX is not None
#: a checked list without the installed jax, all older: the installed one is "newer"
OLDER_ONLY = "0.0.1,0.0.2"
VERSION = typed_pallas.__version__


def _env(checked: str | None) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != _versions.CHECKED_RELEASES_TEST_ENV}
    if checked is not None:
        env[_versions.CHECKED_RELEASES_TEST_ENV] = checked
    return env


def _newer_note(who: str) -> str:
    return (
        f"{who}: note: jax {JAX} is newer than 0.0.2, the newest checked release; "
        f"typed-pallas {VERSION} was checked at jax 0.0.1, 0.0.2, so its stubs, the plugin's "
        f"JAX API table and its evidence tables may be incomplete for jax {JAX} "
        "(names it added, moved or removed)"
    )


# ----------------------------------------------------------------------------- the list


def test_the_checked_releases() -> None:
    assert _versions.CHECKED_RELEASES == ("0.10.2", "0.12.0.1", "0.12.1")


@pytest.mark.parametrize("release", _versions.CHECKED_RELEASES)
def test_each_checked_release_has_its_facts_and_its_allowlist(release: str) -> None:
    assert (ROOT / "stubs" / "releases" / f"jax-{release}.json").is_file()
    assert (ROOT / "stubs" / "allowlists" / f"jax-{release}.txt").is_file()


def test_the_test_environments_pin_checked_releases() -> None:
    pins = (ROOT / "scripts" / "_venv.sh").read_text()
    for release in ("0.10.2", "0.12.0.1", "0.12.1"):
        assert f'"jax=={release} jaxlib=={release}"' in pins


def test_the_installed_jax_is_checked() -> None:
    # The environments the suite runs in pin checked releases (scripts/test-newest excepted).
    assert JAX in _versions.CHECKED_RELEASES


def test_the_override_replaces_the_list(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(_versions.CHECKED_RELEASES_TEST_ENV, " 0.1 ,0.2,")
    assert _versions.checked_releases() == ("0.1", "0.2")
    monkeypatch.delenv(_versions.CHECKED_RELEASES_TEST_ENV)
    assert _versions.checked_releases() == ("0.10.2", "0.12.0.1", "0.12.1")


# ----------------------------------------------------------------------------- the note

CHECKED = ("0.10.2", "0.12.0.1", "0.12.1")
TAIL = (
    "typed-pallas {v} was checked at jax 0.10.2, 0.12.0.1, 0.12.1, so its stubs, the plugin's "
    "JAX API table and its evidence tables may be incomplete for jax {j} (names it added, "
    "moved or removed)"
)


@pytest.mark.parametrize(
    ("installed", "position"),
    [
        ("0.12.2", "is newer than 0.12.1, the newest checked release"),
        ("0.13.0", "is newer than 0.12.1, the newest checked release"),
        ("0.11.0", "is between the checked releases 0.10.2 and 0.12.0.1, and not itself checked"),
        ("0.12.0", "is between the checked releases 0.10.2 and 0.12.0.1, and not itself checked"),
        ("0.12.0.2", "is between the checked releases 0.12.0.1 and 0.12.1, and not itself checked"),
        ("0.10.1", "is older than 0.10.2, the oldest checked release"),
        ("0.12.1rc1", "is a variant of the checked release 0.12.1, not itself checked"),
    ],
)
def test_an_unchecked_release_gets_one_line(installed: str, position: str) -> None:
    status = _jax_range.jax_check_status(installed=installed, checked=CHECKED)
    assert status.checked is False
    assert status.note == (
        f"typed-pallas: note: jax {installed} {position}; " + TAIL.format(v=VERSION, j=installed)
    )
    assert "\n" not in status.note


@pytest.mark.parametrize("installed", ["0.10.2", "0.12.0.1", "0.12.1", " 0.12.1"])
def test_a_checked_release_is_silent(installed: str) -> None:
    status = _jax_range.jax_check_status(installed=installed, checked=CHECKED)
    assert (status.checked, status.note) == (True, None)


def test_an_unreadable_version_is_silent() -> None:
    status = _jax_range.jax_check_status(installed="unknown", checked=CHECKED)
    assert (status.checked, status.note) == (None, None)


def test_the_runtime_function(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(_versions.CHECKED_RELEASES_TEST_ENV, raising=False)
    assert typed_pallas.jax_check_status() == (JAX, CHECKED, True, None)
    monkeypatch.setenv(_versions.CHECKED_RELEASES_TEST_ENV, OLDER_ONLY)
    status = typed_pallas.jax_check_status()
    assert isinstance(status, typed_pallas.JaxCheckStatus)
    assert status == (JAX, ("0.0.1", "0.0.2"), False, _newer_note("typed-pallas"))


# ----------------------------------------------------------------------------- entry points


def _run(args: list[str], checked: str | None, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        args, cwd=cwd, env=_env(checked), capture_output=True, text=True, timeout=600, check=False
    )


@pytest.mark.slow
def test_version_says_so(tmp_path: Path) -> None:
    silent = _run([str(BIN / "typed-pallas"), "--version"], None, tmp_path)
    noted = _run([str(BIN / "typed-pallas"), "--version"], OLDER_ONLY, tmp_path)
    assert silent.returncode == noted.returncode == 0
    assert len(silent.stdout.splitlines()) == 1, silent.stdout
    assert noted.stdout.splitlines() == [silent.stdout.strip(), _newer_note("typed-pallas")]


@pytest.mark.slow
def test_check_says_so_on_stderr_with_the_same_status(tmp_path: Path) -> None:
    (tmp_path / "clean.py").write_text("x: int = 1\n")
    (tmp_path / "broken.py").write_text("def f(:\n")
    cache = ["--cache-dir", str(tmp_path / "cache")]
    for name, status in (("clean.py", 0), ("broken.py", 2)):
        silent = _run([str(BIN / "typed-pallas"), "check", *cache, name], None, tmp_path)
        noted = _run([str(BIN / "typed-pallas"), "check", *cache, name], OLDER_ONLY, tmp_path)
        assert silent.returncode == noted.returncode == status, noted.stderr
        assert noted.stdout == silent.stdout
        assert "note: jax" not in silent.stderr
        assert noted.stderr.count("note: jax") == 1
        assert noted.stderr.splitlines()[0] == _newer_note("typed-pallas")


@pytest.mark.slow
def test_the_plugin_notes_it_once_on_cold_and_warm_runs(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x: int = 1\n")
    (tmp_path / "b.py").write_text("y: str = 1\n")  # a real error: the note is not one
    (tmp_path / "mypy.ini").write_text("[mypy]\nplugins = typed_pallas_mypy\n")
    mypy = [sys.executable, "-m", "mypy", "--config-file", "mypy.ini"]
    cache = ["--cache-dir", str(tmp_path / "cache")]
    silent = _run([*mypy, *cache, "a.py", "b.py"], None, tmp_path)
    cold = _run([*mypy, *cache, "a.py", "b.py"], OLDER_ONLY, tmp_path)
    warm = _run([*mypy, *cache, "a.py", "b.py"], OLDER_ONLY, tmp_path)
    assert silent.returncode == cold.returncode == warm.returncode == 1
    assert silent.stdout == cold.stdout == warm.stdout
    assert "b.py:1: error" in cold.stdout and "note: jax" not in cold.stdout
    assert silent.stderr == ""
    assert cold.stderr == warm.stderr == _newer_note("typed-pallas mypy plugin") + "\n"


@pytest.mark.slow
def test_the_plugin_gives_the_range_warning_alone_when_jax_is_out_of_range() -> None:
    code = (
        "import warnings; warnings.simplefilter('ignore');"
        "from typed_pallas_mypy import jax_range, main;"
        "from typed_pallas import _versions;"
        "_versions.installed_version = lambda name: '0.13.0';"
        "main.plugin('2.4.1')"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code],
        env=_env(OLDER_ONLY),
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert proc.returncode == 0, proc.stderr
    assert "note: jax" not in proc.stderr
