"""``typed-pallas init`` next to jax-pyrefly-stubs, in both install orders (built wheel, clean venv).

What it shows (docs/editors.md, "Next to jax-pyrefly-stubs"):

* before ``init``: ``typed-pallas check`` and ``init`` print one stderr line that names the
  package and says to run ``typed-pallas init``; pyright then sees what it sees without
  jax-pyrefly-stubs: ``typed_pallas.TPUCompilerParams`` is typed, JAX's own
  ``pltpu.CompilerParams`` is not (no ``stubPath`` yet); plain mypy stops on their numpy
  stub (``test_coinstall.py`` pins that);
* after ``init`` (no other setting): pyright and basedpyright report the wrong-platform call
  and not the right one, and still see jax-pyrefly-stubs' ``jax.jit``; mypy runs (the
  override ``init`` adds) and sees both packages: the wrong call and their ``jax.jit``.

Needs Python >= 3.12 (jax-pyrefly-stubs' Requires-Python) and the two wheels
(``test_coinstall.py`` downloads them once).
"""

from __future__ import annotations

import json
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from matrix_data import SEQUENCES
from pkg_env import Dist, Venv, clean_environ

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        sys.version_info < (3, 12),
        reason="jax-pyrefly-stubs 1.4.0 requires Python >= 3.12 (Requires-Python)",
    ),
]

PROBE = """\
from typing import Literal

import jax
import typed_pallas
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def takes_tpu(p: typed_pallas.CompilerParams[Literal["tpu"]]) -> None: ...


def double(x: int) -> int:
    return 2 * x


takes_tpu(pltpu.CompilerParams())
takes_tpu(typed_pallas.TPUCompilerParams())
takes_tpu(pltriton.CompilerParams())
jax.jit(double)("not an int")
"""
JAX_CLASS_LINE, WRONG_LINE, JIT_LINE = 16, 18, 19
BIN = Path(sys.executable).parent


def _pyright(tool: str, venv: Venv, root: Path) -> set[int]:
    proc = subprocess.run(
        [str(BIN / tool), "--pythonpath", str(venv.python), "--outputjson", "probe.py"],
        cwd=root,
        capture_output=True,
        text=True,
        env=clean_environ(),
        timeout=600,
        check=False,
    )
    report = json.loads(proc.stdout)
    return {
        d["range"]["start"]["line"] + 1
        for d in report["generalDiagnostics"]
        if d["severity"] == "error"
    }


def _mypy(venv: Venv, root: Path) -> tuple[int, set[int], str]:
    proc = subprocess.run(
        [
            str(venv.python),
            "-m",
            "mypy",
            "--cache-dir",
            str(root.parent / "mypy-cache"),
            "-O",
            "json",
            "probe.py",
        ],
        cwd=root,
        capture_output=True,
        text=True,
        env=clean_environ(),
        timeout=900,
        check=False,
    )
    lines = {
        json.loads(raw)["line"]
        for raw in proc.stdout.splitlines()
        if raw.startswith("{")
        and json.loads(raw)["severity"] == "error"
        and json.loads(raw)["file"] == "probe.py"
    }
    return proc.returncode, lines, proc.stdout[-3000:] + proc.stderr[-2000:]


def _cli(venv: Venv, root: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(venv.python), "-m", "typed_pallas_mypy.cli", *args],
        cwd=root,
        capture_output=True,
        text=True,
        env=clean_environ(),
        timeout=900,
        check=False,
    )


@pytest.mark.parametrize("order", list(SEQUENCES))
def test_init_next_to_jax_pyrefly_stubs(
    order: str,
    dist: Dist,
    their_wheels: tuple[Path, Path],
    make_venv: Callable[[str], Venv],
    tmp_path: Path,
) -> None:
    stubs_wheel, shapes_wheel = their_wheels
    venv = make_venv("venv")
    first, second = SEQUENCES[order][:2]
    wheels = {"+ours": [dist.wheel], "+theirs": [shapes_wheel, stubs_wheel]}
    venv.install(*wheels[first])
    venv.install(*wheels[second])
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "probe.py").write_text(PROBE)

    # before init: as without jax-pyrefly-stubs, typed-pallas's names are typed and JAX's own
    # class is not (line 16: no stubPath yet); their jax.jit is seen
    assert _pyright("pyright", venv, root) == {JAX_CLASS_LINE, WRONG_LINE, JIT_LINE}
    check = _cli(venv, root, "check", "probe.py")
    assert "typed-pallas: jax-pyrefly-stubs 1.4.0 is installed" in check.stderr, check.stderr
    assert "run `typed-pallas init`" in check.stderr

    done = _cli(venv, root, "init")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "skip jax-pyrefly-stubs' jax.numpy stub" in done.stdout, done.stdout
    assert "pyrefly and ty see only its jax-stubs" in done.stderr, done.stderr

    for tool in ("pyright", "basedpyright"):
        assert _pyright(tool, venv, root) == {WRONG_LINE, JIT_LINE}, (
            tool
        )  # ours and theirs both seen
    rc, lines, output = _mypy(venv, root)
    assert rc == 1 and lines == {WRONG_LINE, JIT_LINE}, output  # ours and theirs both seen
    again = _cli(venv, root, "init")
    assert "nothing changed" in again.stdout, again.stdout
