"""Mutants in files that opt out of mypy (``# mypy: ignore-errors``) are counted apart by
``eval.corpus``: mypy strips those files' function bodies and hides their errors, so no
plugin hook runs there. The detection, that mypy indeed reports nothing there, and the
re-run of those mutants through ``typed-pallas check --check-opted-out``'s shadow copies
(``eval.corpus.evaluate_opted_out``)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from eval.corpus import MutantResult, PackageEval, evaluate_opted_out, opts_out_of_mypy
from eval.mutants import Site, plan_mutants
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
        ("# mypy:  ignore_errors = True\n", True),
        ("#mypy: ignore_errors\n", False),  # mypy reads only "# mypy: " lines
        ("# mypy: ignore-errors\n# mypy: ignore-errors=False\n", False),
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
    """The same wrong call is reported without the comment and not with it (both files in
    one mypy run: a file's opt-out comment applies to that file only)."""
    config = write_config(tmp_path / "mypy.ini", PLUGIN)
    names = {"plain": "", "opted": "# mypy: ignore-errors\n"}
    for name, header in names.items():
        (tmp_path / f"{name}.py").write_text(header + WRONG_CALL)
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(config), "--no-incremental"]
        + [f"{name}.py" for name in names],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
    )
    lines = completed.stdout.splitlines()
    found = {
        name: any(line.startswith(f"{name}.py:") and "[pallas-platform]" in line for line in lines)
        for name in names
    }
    assert found == {"plain": True, "opted": False}, completed.stdout + completed.stderr


#: the ``pl.pallas_call`` line of ``WRONG_CALL`` once the opt-out line is above it
CALL_LINE = 14
RIGHT_CALL = WRONG_CALL.replace("pltriton.CompilerParams()", "pltpu.CompilerParams()")


@pytest.mark.slow
def test_opted_out_mutants_are_rerun_through_the_shadow_copies(tmp_path: Path) -> None:
    """A right call in a file that opts out: no error through the route on the unmodified
    file, and both swaps of its params (to triton, to mosaic_gpu) caught there."""
    root = tmp_path / "site"
    (root / "tiny").mkdir(parents=True)
    (root / "tiny" / "__init__.py").write_text("")
    rel = "tiny/kern.py"
    (root / rel).write_text("# mypy: ignore-errors\n" + RIGHT_CALL)
    assert "pl.pallas_call" in (root / rel).read_text().splitlines()[CALL_LINE - 1]
    site = Site(
        package="tiny", version="0", relpath=rel, line=CALL_LINE, entry_point="pl.pallas_call",
        params_class="tpu", passing_pattern="inline-ctor", platform="tpu",
        body_prims="tpu", arg_prims="-", interpret_kw="-", enclosing_func="f", scope="lib",
    )  # fmt: skip
    mutants, unmutable, _ = plan_mutants(root, [site])
    assert not unmutable and {m.to_backend for m in mutants} == {"triton", "mosaic_gpu"}
    ev = PackageEval("tiny", "0")
    ev.results = [MutantResult(m, opted_out=opts_out_of_mypy(root / rel)) for m in mutants]
    ev.results.append(MutantResult(mutants[0], opted_out=False))  # not re-run
    config = write_config(tmp_path / "mypy.ini", PLUGIN)
    common = dict(cwd=root, root=root, cache_dir=tmp_path / "cache", config=config)
    evaluate_opted_out(
        ev, root, [rel, "tiny/__init__.py"], ["--explicit-package-bases", rel], common,
        tmp_path / "work",
    )  # fmt: skip
    assert ev.opted_out_files == [rel]
    assert ev.opted_out_false_positives == []
    assert [r.caught_with_check_opted_out for r in ev.results] == [True, True, False]
    assert len(ev.opted_out_runs) == 3 and not any(r.crashed for r in ev.opted_out_runs)
    assert (root / rel).read_text().startswith("# mypy: ignore-errors\n")  # left as it was
