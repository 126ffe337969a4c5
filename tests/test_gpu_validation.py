"""The wrong-params programs of benchmarks/gpu_validation.py, checked on CPU.

The GPU check runs each case as a program of its own, in a fresh interpreter, built by
``mismatch_program`` from a prelude, the case's code and one step. They are strings, so
neither mypy nor a CPU run of the script used to see into them: the strict-typing pass
renamed ``jax.block_until_ready`` to a helper of the script inside them, and on the H200
every case failed with ``NameError: name '_ready' is not defined``. Here, for exactly the
programs the check builds (``MISMATCH_CASES``, both steps):

* every name a program uses is bound in it or a builtin (``symtable``; no jax, fast);
* the GPU program, run on this CPU host, gets as far as a CPU lets it: it fails only
  with JAX's "only interpret mode on CPU", or earlier with the case's own expected error;
* the program lowered for cuda (``jax.export``, what ``--interpret`` runs) gives what the
  case claims (the typed API's exact ``ValueError``; the control lowers), and raw JAX's
  cases fail with no error of a broken program (NameError, ImportError, AttributeError,
  TypeError, SyntaxError).
"""

from __future__ import annotations

import builtins
import concurrent.futures
import os
import symtable
from pathlib import Path
from typing import Any

import pytest
from script_loader import load_script

from typed_pallas import _platforms

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / "benchmarks" / "gpu_validation.py"

#: what JAX raises when a (non-interpret) Pallas call is run on a CPU host
NO_GPU = "Only interpret mode is supported on CPU backend."
#: errors of a broken program rather than of JAX (checked on the exception's MRO)
BROKEN = {"NameError", "ImportError", "AttributeError", "TypeError", "SyntaxError"}
#: the two steps: run on the GPU (None), lowered for cuda on this host
STEPS = (None, "cuda")


gv = load_script(SCRIPT)
NAMES: list[str] = list(gv.MISMATCH_CASES)


def undefined_names(program: str) -> set[str]:
    """Names ``program`` reads that it never binds at module level and that are no builtin.

    Module-level reads, and reads in functions that resolve to module globals; the
    functions' own locals and parameters are theirs. Order is not checked (a name bound
    only after its use passes here and fails when run).
    """
    top = symtable.symtable(program, "<gpu_validation case>", "exec")
    known = set(dir(builtins)) | {
        s.get_name() for s in top.get_symbols() if s.is_assigned() or s.is_imported()
    }
    missing: set[str] = set()

    def visit(table: symtable.SymbolTable, module_level: bool) -> None:
        for sym in table.get_symbols():
            if sym.is_referenced() and (module_level or sym.is_global()):
                if sym.get_name() not in known:
                    missing.add(sym.get_name())
        for child in table.get_children():
            visit(child, False)

    visit(top, True)
    return missing


# --------------------------------------------------------------------------- static


@pytest.mark.parametrize("lower_for", STEPS, ids=["gpu", "lowered-cuda"])
@pytest.mark.parametrize("name", NAMES)
def test_every_name_is_defined(name: str, lower_for: str | None) -> None:
    program = gv.mismatch_program(gv.MISMATCH_CASES[name], lower_for)
    assert undefined_names(program) == set(), program


def test_the_name_check_catches_the_h200_bug() -> None:
    """The check fails on the program the H200 ran (a helper of the script in the string)."""
    program = gv.mismatch_program(gv.MISMATCH_CASES[NAMES[0]])
    broken = program.replace("jax.block_until_ready(", "_ready(")
    assert broken != program
    assert undefined_names(broken) == {"_ready"}
    # and a name read only inside a function of the program
    assert undefined_names(program + "def g():\n    return helper()\n") == {"helper"}


def test_expected_texts_are_the_platform_tables() -> None:
    """What the cases expect is the runtime's own text (one source of truth)."""
    expects = {c.expect for c in gv.MISMATCH_CASES.values() if c.expect is not None}
    assert expects == {
        _platforms.mismatch_message("tpu", "gpu"),
        _platforms.backend_mismatch_message("triton", "mosaic_gpu"),
    }
    assert [n for n, c in gv.MISMATCH_CASES.items() if c.must_run] == [NAMES[-1]]


# --------------------------------------------------------------------------- run on CPU


@pytest.fixture(scope="module")
def results() -> dict[tuple[str, str | None], dict[str, Any]]:
    """Every case's program, both steps, each in a fresh CPU interpreter, two at a time."""
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(ROOT / "src"), env.get("PYTHONPATH")]))
    cells = [(name, step) for name in NAMES for step in STEPS]

    def run(cell: tuple[str, str | None]) -> dict[str, Any]:
        name, step = cell
        row: dict[str, Any] = gv.run_mismatch(name, gv.MISMATCH_CASES[name], env, step)
        return row

    with concurrent.futures.ThreadPoolExecutor(min(2, os.cpu_count() or 1)) as pool:
        return dict(zip(cells, pool.map(run, cells)))


def _skip_without_mosaic_gpu(name: str, row: dict[str, Any]) -> None:
    """Mosaic GPU cannot be imported where absl is missing (jax 0.10): no GPU check either."""
    if row.get("raised") == "ModuleNotFoundError" and "absl" in str(row.get("message")):
        assert "mgpu()" in gv.MISMATCH_CASES[name].build, row
        pytest.skip(f"Mosaic GPU cannot be imported here: {row['message']}")


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_gpu_program_runs_on_cpu_until_it_needs_a_gpu(
    name: str, results: dict[tuple[str, str | None], dict[str, Any]]
) -> None:
    row = results[name, None]
    _skip_without_mosaic_gpu(name, row)
    case = gv.MISMATCH_CASES[name]
    allowed = {NO_GPU} | ({case.expect} if case.expect is not None else set())
    assert row["is_value_error"] and row["message"] in allowed, row


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_program_lowered_for_cuda_gives_what_the_case_claims(
    name: str, results: dict[tuple[str, str | None], dict[str, Any]]
) -> None:
    row = results[name, "cuda"]
    _skip_without_mosaic_gpu(name, row)
    assert row["raised"] != "(process failed)", row["message"]
    assert not BROKEN & set(row.get("mro") or ()), row
    assert row["as_expected"] is not False, row
    if gv.MISMATCH_CASES[name].expect is not None or gv.MISMATCH_CASES[name].must_run:
        assert row["as_expected"] is True, row
