"""The ``pallas-platform`` code works in every place mypy lets a user name it.

mypy checks the codes named in its options right after it has loaded the plugins, and
reads a module's inline ``# mypy:`` comment when it parses the module, before any hook
runs: the code must exist once the plugin's entry point has been called. Each test
below ran into ``Invalid error code(s): pallas-platform`` or an ``INTERNAL ERROR``
(``KeyError: 'pallas-platform'``) while the code was created only with the first
report. The forms: the ``disable_error_code`` option (mypy.ini, pyproject.toml,
setup.cfg), the command-line flag, a per-module section, the inline comment,
``# type: ignore[pallas-platform]`` in a module that turns the code back on, and the
daemon. ``typed-pallas check`` is in ``tests/cli/test_check.py``.

Every run is a fresh mypy process (the test process may have created the code
already). The runs share two caches: one for the configurations that leave the code
enabled (it starts with jax analysed, ``mypy_seeds``: the checked modules are the
project's) and one for those that disable it everywhere (a global option change makes
mypy analyse jax again).
"""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mypy_seeds import MypySeeds

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent

#: a Triton-params call of a TPU-only kernel; the first line is free for a ``# mypy:`` comment
CALL = """\
{first}
from typing import Any
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def body(x_ref: Any, o_ref: Any) -> None:
    pltpu.sync_copy(x_ref, o_ref)


def f(x: jax.Array) -> object:
    return pl.pallas_call(body, out_shape=x, compiler_params=pltriton.CompilerParams())(x){ignore}


def g(x: jax.Array) -> object:
    return pl.pallas_call(body, out_shape=x, compiler_params=pltriton.CompilerParams())(x)
"""


def _errors(module: str, *lines: int) -> list[str]:
    out: list[str] = []
    for line in lines:
        out += [
            f"{module}.py:{line}: error: Compiler params for platform gpu cannot be used for "
            "tpu lowering.  [pallas-platform]",
            f"{module}.py:{line}: note: pltpu.sync_copy at line 10 makes this kernel TPU-only",
            f"{module}.py:{line}: note: Triton params lower only for cuda, rocm; for tpu lowering "
            "use jax.experimental.pallas.tpu.CompilerParams, or guard the call with "
            "jax.default_backend() == 'gpu' (or typed_pallas.dispatch).",
        ]
    return out


FILES = {
    "loud.py": CALL.format(first='"""No configuration comment."""', ignore=""),
    "inline_off.py": CALL.format(first='# mypy: disable-error-code="pallas-platform"', ignore=""),
    "quiet.py": CALL.format(first='"""Silenced by its [mypy-quiet] section."""', ignore=""),
    # the code is off project-wide, back on here, and one line ignores it: the ignore
    # is used (warn-unused-ignores says nothing about it) and the other line fires
    "ignored.py": CALL.format(
        first='# mypy: enable-error-code="pallas-platform", warn-unused-ignores',
        ignore="  # type: ignore[pallas-platform]",
    ),
}

PLAIN_INI = "[mypy]\nplugins = typed_pallas_mypy\n"
CONFIGS = {
    "plain.ini": PLAIN_INI,
    "per_module.ini": PLAIN_INI + "\n[mypy-quiet]\ndisable_error_code = pallas-platform\n",
    "mypy.ini": PLAIN_INI + "disable_error_code = pallas-platform\n",
    "pyproject.toml": (
        '[tool.mypy]\nplugins = ["typed_pallas_mypy"]\ndisable_error_code = ["pallas-platform"]\n'
    ),
    "setup.cfg": PLAIN_INI + "disable_error_code = pallas-platform\n",
}


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory, mypy_seeds: MypySeeds) -> Path:
    root = tmp_path_factory.mktemp("error_code")
    for name, text in {**FILES, **CONFIGS}.items():
        (root / name).write_text(text)
    mypy_seeds.into(root / "enabled", PLAIN_INI)
    return root


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MYPY", "TYPED_PALLAS"))}
    env["TYPED_PALLAS_MYPY_DEBUG"] = "1"
    return env


def _mypy(root: Path, cache: str, *args: str) -> list[str]:
    """mypy's output lines (stdout, then stderr) for ``args``; no crash allowed."""
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(root / cache), *args],
        cwd=root,
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    output = completed.stdout + completed.stderr
    assert "INTERNAL ERROR" not in output and "Invalid error code" not in output, output
    return output.splitlines()


def test_code_enabled_by_default(project: Path) -> None:
    # the firing case of every test below
    assert _mypy(project, "enabled", "--config-file", "plain.ini", "loud.py") == [
        *_errors("loud", 14, 18),
        "Found 2 errors in 1 file (checked 1 source file)",
    ]


def test_inline_comment(project: Path) -> None:
    assert _mypy(project, "enabled", "--config-file", "plain.ini", "loud.py", "inline_off.py") == [
        *_errors("loud", 14, 18),
        "Found 2 errors in 1 file (checked 2 source files)",
    ]


def test_per_module_section(project: Path) -> None:
    assert _mypy(project, "enabled", "--config-file", "per_module.ini", "loud.py", "quiet.py") == [
        *_errors("loud", 14, 18),
        "Found 2 errors in 1 file (checked 2 source files)",
    ]


@pytest.mark.parametrize("config", ["mypy.ini", "pyproject.toml", "setup.cfg"])
def test_config_option(project: Path, config: str) -> None:
    assert _mypy(project, "disabled", "--config-file", config, "loud.py") == [
        "Success: no issues found in 1 source file"
    ]


def test_command_line_flag(project: Path) -> None:
    args = ("--config-file", "plain.ini", "--disable-error-code", "pallas-platform", "loud.py")
    assert _mypy(project, "disabled", *args) == ["Success: no issues found in 1 source file"]


def test_type_ignore_where_the_module_enables_the_code(project: Path) -> None:
    assert _mypy(project, "disabled", "--config-file", "mypy.ini", "loud.py", "ignored.py") == [
        *_errors("ignored", 18),
        "Found 1 error in 1 file (checked 2 source files)",
    ]


@pytest.fixture
def daemon(project: Path) -> Iterator[list[str]]:
    status = str(project / "dmypy.json")
    command = [str(BIN / "dmypy"), "--status-file", status]
    yield command
    subprocess.run([*command, "kill"], cwd=project, env=_env(), capture_output=True, timeout=60)


def test_daemon(project: Path, daemon: list[str]) -> None:
    """The daemon with a per-module section and an inline comment, then after an edit
    of the inline comment: the first run and the re-check both know the code."""

    def run() -> list[str]:
        completed = subprocess.run(
            [*daemon, "run", "--timeout", "300", "--", "--config-file", "per_module.ini",
             "--cache-dir", str(project / "daemon"), "loud.py", "quiet.py", "inline_off.py"],
            cwd=project, env=_env(), capture_output=True, text=True, timeout=600,
        )  # fmt: skip
        output = completed.stdout + completed.stderr
        assert "INTERNAL ERROR" not in output and "Invalid error code" not in output, output
        return [line for line in output.splitlines() if not line.startswith("Daemon")]

    assert run() == [*_errors("loud", 14, 18), "Found 2 errors in 1 file (checked 3 source files)"]
    inline = project / "inline_off.py"
    try:
        inline.write_text(FILES["inline_off.py"].replace("disable-error-code", "enable-error-code"))
        os.utime(inline, (inline.stat().st_atime + 2, inline.stat().st_mtime + 2))
        assert run() == [
            *_errors("loud", 14, 18),
            *_errors("inline_off", 14, 18),
            "Found 4 errors in 2 files (checked 3 source files)",
        ]
    finally:
        inline.write_text(FILES["inline_off.py"])
