"""Mutants in files that opt out of mypy (``# mypy: ignore-errors``) are counted apart by
``eval.corpus``: mypy strips those files' function bodies and hides their errors, so no
plugin hook runs there. The detection, and that mypy indeed reports nothing there."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from eval.corpus import opts_out_of_mypy
from eval.mypyrun import PLUGIN, write_config

WRONG_CALL = """\
from typing import Any
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def body(x_ref: Any, o_ref: Any) -> None:
    pltpu.sync_copy(x_ref, o_ref)


def f(x: jax.Array) -> object:
    return pl.pallas_call(body, out_shape=x, compiler_params=pltriton.CompilerParams())(x)
"""


@pytest.mark.parametrize(
    ("header", "opted_out"),
    [
        ("# mypy: ignore-errors\n", True),
        ("#mypy: ignore_errors\n", True),
        ("# mypy: disallow-untyped-defs, ignore-errors\n", True),
        ("", False),
        ("# mypy: disable-error-code=misc\n", False),
        ("x = '# mypy: ignore-errors'\n", False),
    ],
)
def test_opt_out_comment_is_recognised(tmp_path: Path, header: str, opted_out: bool) -> None:
    path = tmp_path / "mod.py"
    path.write_text(header + WRONG_CALL)
    assert opts_out_of_mypy(path) is opted_out


def test_mypy_reports_nothing_in_a_file_that_opts_out(tmp_path: Path) -> None:
    """The same wrong call is reported without the comment and not with it."""
    config = write_config(tmp_path / "mypy.ini", PLUGIN)
    found = {}
    for name, header in (("plain", ""), ("opted", "# mypy: ignore-errors\n")):
        (tmp_path / f"{name}.py").write_text(header + WRONG_CALL)
        completed = subprocess.run(
            [
                sys.executable,
                "-m",
                "mypy",
                "--config-file",
                str(config),
                "--no-incremental",
                f"{name}.py",
            ],
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=600,
        )
        found[name] = "[pallas-platform]" in completed.stdout
    assert found == {"plain": True, "opted": False}
