"""benchmarks/tpu_validation.py, checked on CPU: its programs, its parity marks, its ops.

The TPU check runs each wrong-params case as a program of its own, in a fresh
interpreter, built by ``mismatch_program`` from a prelude, the case's code and one step
(strings neither mypy nor a CPU run of the ops sees into). Here, for exactly the programs
the check builds (``MISMATCH_CASES``, both steps):

* every name a program uses is bound in it or a builtin (``symtable``; no jax, fast);
* the TPU program, run on this CPU host, gets as far as a CPU lets it: it fails only
  with JAX's "only interpret mode on CPU", or earlier with the case's own expected error;
* the program lowered for tpu (``jax.export``, what ``--interpret`` runs) gives what the
  case claims (the typed API's exact ``ValueError``; the controls lower), and raw JAX's
  cases fail with no error of a broken program.

And what the TPU run compares with: ``TPU_PATH_FAILS`` (the parity harness's silent twins
that must fail on the TPU) is exactly the set of parity functions JAX refuses to lower
for tpu, every ``fire_*`` function lowers for tpu; and two ops run through the typed
entry point in TPU interpret mode give the raw op's lowered text and outputs.
"""

from __future__ import annotations

import concurrent.futures
import json
import os
from pathlib import Path
from typing import Any

import pytest
from script_loader import load_script
from test_gpu_validation import BROKEN, undefined_names

from typed_pallas import _platforms

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "tpu_validation.py"

#: what JAX raises when a (non-interpret) Pallas call is run on a CPU host
NO_TPU = "Only interpret mode is supported on CPU backend."
#: the two steps: run on the TPU (None), lowered for tpu on this host
STEPS = (None, "tpu")
#: JAX's own error for Triton params on ``pl.kernel`` lowered for a CPU (its fallback
#: path calls ``.replace`` on the params, which Triton's class lacks, at both JAX ends):
#: the raw case's program, run on this host, stops there rather than at NO_TPU
CPU_RAW_KERNEL = {
    "raw pl.kernel (TPU mesh) + Triton params": "'CompilerParams' object has no attribute 'replace'"
}


tv = load_script(SCRIPT)
NAMES: list[str] = list(tv.MISMATCH_CASES)


# --------------------------------------------------------------------------- static


@pytest.mark.parametrize("lower_for", STEPS, ids=["tpu", "lowered-tpu"])
@pytest.mark.parametrize("name", NAMES)
def test_every_name_is_defined(name: str, lower_for: str | None) -> None:
    program = tv.mismatch_program(tv.MISMATCH_CASES[name], lower_for)
    assert undefined_names(program) == set(), program


def test_the_name_check_reads_these_programs() -> None:
    """A helper of the script used inside a program is caught (the H200 run's bug)."""
    program = tv.mismatch_program(tv.MISMATCH_CASES[NAMES[0]])
    broken = program.replace("jax.block_until_ready(", "_ready(")
    assert broken != program
    assert undefined_names(broken) == {"_ready"}


def test_expected_texts_are_the_platform_tables() -> None:
    """What the cases expect is the runtime's own text (one source of truth)."""
    expects = {c.expect for c in tv.MISMATCH_CASES.values() if c.expect is not None}
    assert expects == {_platforms.mismatch_message("gpu", "tpu")}
    assert _platforms.mismatch_message("gpu", "tpu") == tv.EXPECTED
    controls = {n: c.result for n, c in tv.MISMATCH_CASES.items() if c.must_run}
    assert sorted(controls.values()) == ["x", "x", "x", "x + 1"]


def test_each_wrong_cell_is_measured_raw_and_claimed_typed() -> None:
    """Triton and Mosaic GPU params: raw, typed, raw after the backstop; pl.kernel: raw, typed."""
    raw = [n for n, c in tv.MISMATCH_CASES.items() if c.expect is None and not c.must_run]
    assert raw == [
        "raw pl.pallas_call + Triton params",
        "raw pl.pallas_call + Mosaic GPU params",
        "raw pl.kernel (TPU mesh) + Triton params",
    ]
    claimed = [n for n, c in tv.MISMATCH_CASES.items() if c.expect is not None]
    assert len(claimed) == 5


# --------------------------------------------------------------------------- run on CPU


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str | None], dict[str, Any]]:
    """Every case's program, both steps, each in a fresh CPU interpreter, two at a time."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    cells = [(name, step) for name in NAMES for step in STEPS]

    def run(cell: tuple[str, str | None]) -> dict[str, Any]:
        name, step = cell
        row: dict[str, Any] = tv.run_mismatch(name, tv.MISMATCH_CASES[name], env, step)
        return row

    with concurrent.futures.ThreadPoolExecutor(min(2, os.cpu_count() or 1)) as pool:
        return dict(zip(cells, pool.map(run, cells)))


def _skip_without_mosaic_gpu(name: str, row: dict[str, Any]) -> None:
    """Mosaic GPU cannot be imported where absl is missing (jax 0.10): the script skips
    that row (its reason in ``skipped``), and so does this test."""
    if row.get("skipped"):
        assert "mgpu_params()" in tv.MISMATCH_CASES[name].build, row
        pytest.skip(row["skipped"])


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_tpu_program_runs_on_cpu_until_it_needs_a_tpu(
    name: str, results: dict[tuple[str, str | None], dict[str, Any]]
) -> None:
    row = results[name, None]
    _skip_without_mosaic_gpu(name, row)
    case = tv.MISMATCH_CASES[name]
    if name in CPU_RAW_KERNEL:
        assert (row["raised"], row["message"]) == ("AttributeError", CPU_RAW_KERNEL[name]), row
        return
    allowed = {NO_TPU} | ({case.expect} if case.expect is not None else set())
    assert row["is_value_error"] and row["message"] in allowed, row


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_program_lowered_for_tpu_gives_what_the_case_claims(
    name: str, results: dict[tuple[str, str | None], dict[str, Any]]
) -> None:
    row = results[name, "tpu"]
    _skip_without_mosaic_gpu(name, row)
    assert row["raised"] != "(process failed)", row["message"]
    assert not BROKEN & set(row.get("mro") or ()), row
    case = tv.MISMATCH_CASES[name]
    if case.expect is not None or case.must_run:
        assert row["as_expected"] is True, row
    else:
        # raw JAX refuses the wrong cell too (it is measured, not claimed): never lowers
        assert row["raised"] is not None, row


# --------------------------------------------------------------------------- parity marks


def test_marked_twins_are_twins_of_the_harness() -> None:
    """Every name in TPU_PATH_FAILS is a silent twin the harness lists (no stale mark)."""
    with tv.parity_harness() as (cases, _shapes):
        assert set(cases.silent_functions()) >= tv.TPU_PATH_FAILS


@pytest.mark.slow
def test_marks_are_jaxs_own_verdict_for_tpu() -> None:
    """Each parity function lowered for tpu with raw JAX (no typed-pallas in the verdict):
    every ``fire_*`` lowers, and the ``silent_*`` twins that fail are exactly the marked."""
    rows = tv.parity_rows(native=False)
    failed = {row["name"] for row in rows if row["status"] == "failed"}
    assert not {name for name in failed if name.startswith("fire_")}
    assert failed == tv.TPU_PATH_FAILS, (
        f"unmarked: {sorted(failed - tv.TPU_PATH_FAILS)}; "
        f"marked but lowered: {sorted(tv.TPU_PATH_FAILS - failed)}"
    )
    assert all(row["status"] == row["expected"] for row in rows)


# --------------------------------------------------------------------------- ops


@pytest.mark.slow
def test_ops_through_the_typed_entry_in_interpret_mode(tmp_path: Path) -> None:
    """Two of JAX's TPU ops, routed to typed_pallas.pallas_call, in TPU interpret mode."""
    out = tmp_path / "tpu_validation.json"
    argv = ["--interpret", "--skip-mismatch", "--skip-parity", "--json", str(out)]
    status = tv.main([*argv, "--only", "example_double", "--only", "matmul"])
    report = json.loads(out.read_text())
    rows = {row["op"]: row for row in report["ops"]}
    assert sorted(rows) == ["example_double", "matmul"]
    for row in rows.values():
        assert "error" not in row, row
        assert row["typed_calls"] == 1, row
        assert row["lowered_identical"] and row["outputs_bitwise_equal"], row
        assert row["matches_reference"], row
    assert status == 0


# --------------------------------------------------------------------------- skipped rows

ABSL_MISSING = {"raised": "ModuleNotFoundError", "message": "No module named 'absl'"}
MGPU_CASES = [n for n, c in tv.MISMATCH_CASES.items() if "mgpu_params()" in c.build]


def _run_reporting(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    outcome: Any,
) -> tuple[int, list[dict[str, Any]], str]:
    """``main`` over the wrong-params part only, each program's row made by ``outcome(name,
    case)`` (the programs are not run): exit status, the JSON rows, what it printed."""

    def fake_run_case(
        name: str, case: Any, source: str, env: Any, exact: str, lower_for: Any = None
    ) -> dict[str, Any]:
        row = {"case": name, "is_value_error": False, "mro": None, **outcome(name, case)}
        row["exact_expected_text"] = row.get("message") == exact
        row["as_expected"] = tv.pv.as_expected(case, row)
        return row

    monkeypatch.setattr(tv.pv, "run_case", fake_run_case)
    out = tmp_path / "tpu_validation.json"
    status = tv.main(["--skip-ops", "--skip-parity", "--json", str(out)])
    return status, json.loads(out.read_text())["mismatch"], capsys.readouterr().out


def _as_claimed(name: str, case: Any) -> dict[str, Any]:
    if case.expect is not None:
        return {"raised": "ValueError", "is_value_error": True, "message": case.expect}
    if case.must_run:
        return {"raised": None, "message": None}
    return {"raised": "ValueError", "is_value_error": True, "message": "raw JAX refused it"}


def test_a_missing_optional_dependency_is_a_skipped_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """absl missing on a TPU host: the three Mosaic GPU rows are skipped with their reason,
    every other row as claimed, and the run passes (it failed with three NOT AS EXPECTED)."""
    assert len(MGPU_CASES) == 3

    def outcome(name: str, case: Any) -> dict[str, Any]:
        return dict(ABSL_MISSING) if name in MGPU_CASES else _as_claimed(name, case)

    status, rows, printed = _run_reporting(tmp_path, monkeypatch, capsys, outcome)
    assert status == 0, printed
    skipped = {row["case"]: row["skipped"] for row in rows if row.get("skipped")}
    assert sorted(skipped) == sorted(MGPU_CASES)
    for reason in skipped.values():
        assert reason.startswith("optional dependency absl is not installed (Mosaic GPU's params")
        assert reason.endswith("pip install absl-py to run it")
    assert "NOT AS EXPECTED" not in printed
    assert printed.count(": SKIPPED: optional dependency absl") == 3
    assert "mismatch: 3 of 12 case(s) skipped (a missing optional dependency)" in printed


def test_all_present_means_no_skipped_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    status, rows, printed = _run_reporting(tmp_path, monkeypatch, capsys, _as_claimed)
    assert status == 0
    assert not any("skipped" in row for row in rows)
    assert "SKIPPED" not in printed and "skipped" not in printed


@pytest.mark.parametrize(
    ("missing_in", "module"),
    [
        ("typed_pallas.pallas_call + Mosaic GPU params", "typed_pallas"),  # not optional
        ("typed_pallas.pallas_call + Triton params", "absl"),  # not this case's dependency
    ],
    ids=["undeclared-module", "case-without-that-dependency"],
)
def test_any_other_missing_module_still_fails_the_run(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    missing_in: str,
    module: str,
) -> None:
    def outcome(name: str, case: Any) -> dict[str, Any]:
        if name == missing_in:
            return {"raised": "ModuleNotFoundError", "message": f"No module named '{module}'"}
        return _as_claimed(name, case)

    status, rows, printed = _run_reporting(tmp_path, monkeypatch, capsys, outcome)
    assert status == 1
    assert not any("skipped" in row for row in rows)
    assert f"- {missing_in}: ModuleNotFoundError" in printed and "[NOT AS EXPECTED]" in printed
