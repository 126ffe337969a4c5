"""The fast slice of the corpus evaluation: mypy + plugin over jax's own Pallas ops.

Checks ``jax/experimental/pallas/ops`` as shipped in this venv's jax wheel (no network,
no configuration): mypy must not crash, the plugin must report nothing on the
unmodified ops (any report there is a false positive), and a handful of wrong-platform
mutants (built by ``eval.mutants``, checked in one extra warm-cache run) must each be
reported at their call, by the plugin (``pallas-platform``) or, where the stubs narrow
the entry point (``plgpu.kernel``), by the stubs (``arg-type`` on ``compiler_params``). Two mypy runs in all, about a minute per venv.

The full evaluation over 19 PyPI packages is ``python -m eval.corpus`` (on demand).
"""

from __future__ import annotations

import os
import sys
import tempfile
from pathlib import Path

import jax
import pytest

from eval.mutants import BACKEND_MODULES, Mutant, discover_sites, plan_mutants, write_mutant
from eval.mypyrun import PLUGIN, RunResult, run_mypy, write_config

pytestmark = pytest.mark.slow

SITE_PACKAGES = Path(os.path.dirname(os.path.dirname(jax.__file__)))
OPS = "jax/experimental/pallas/ops"

#: (file under ops/, backend swapped in): first call site of the file that passes params.
#: Each has platform evidence the plugin is meant to use: a Mosaic GPU entry point
#: (plgpu.kernel), or TPU-only primitives in the kernel body or arguments.
MUTANTS: tuple[tuple[str, str], ...] = (
    ("gpu/hopper_matmul_mgpu.py", "tpu"),  # plgpu.kernel, params in a local variable
    ("gpu/reduce_scatter_mgpu.py", "tpu"),
    ("gpu/attention_mgpu.py", "triton"),  # backend swap: Triton params on Mosaic GPU
    ("tpu/matmul.py", "triton"),
    ("tpu/ragged_paged_attention/kernel.py", "mosaic_gpu"),
    ("tpu/all_gather.py", "triton"),  # unannotated function: needs check_untyped_defs
)


def _modules() -> list[str]:
    mods = []
    for p in sorted((SITE_PACKAGES / OPS).rglob("*.py")):
        rel = p.relative_to(SITE_PACKAGES).with_suffix("").parts
        mods.append(".".join(rel[:-1] if rel[-1] == "__init__" else rel))
    return mods


def _mutants() -> list[Mutant]:
    out = []
    for rel, to in MUTANTS:
        relpath = f"{OPS}/{rel}"
        sites = discover_sites(SITE_PACKAGES, relpath, "jax", jax.__version__)
        assert sites, f"no call site with compiler params found in {relpath}"
        planned, unmutable, _ = plan_mutants(SITE_PACKAGES, sites[:1])
        assert not unmutable, unmutable
        out += [m for m in planned if m.to_backend == to]
    assert len(out) == len(MUTANTS)
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory: pytest.TempPathFactory) -> tuple[RunResult, RunResult, list[Mutant]]:
    tmp = tmp_path_factory.mktemp("eval-jax-ops")
    config = write_config(tmp / "mypy.ini", PLUGIN)
    targets = [a for m in _modules() for a in ("-m", m)]
    common = dict(
        cwd=tmp,
        root=SITE_PACKAGES,
        cache_dir=tmp / "cache",
        config=config,
        python=sys.executable,
        flags=["--check-untyped-defs"],
    )
    base = run_mypy(targets, **common)
    mutants = _mutants()
    shadows: dict[str, Path] = {}
    for i, m in enumerate(mutants):
        shadows.update(write_mutant(SITE_PACKAGES, m, tmp / f"m{i}"))
    mutated = run_mypy(targets, shadows=shadows, **common)
    return base, mutated, mutants


def test_mypy_does_not_crash(runs: tuple[RunResult, RunResult, list[Mutant]]) -> None:
    base, mutated, _ = runs
    for r in (base, mutated):
        assert not r.crashed and not r.blocked, r.tail
        assert r.rc in (0, 1), r.tail


def test_no_reports_on_jax_own_ops(runs: tuple[RunResult, RunResult, list[Mutant]]) -> None:
    base, _, _ = runs
    assert any(d.relpath.startswith(OPS) for d in base.diagnostics), (
        "mypy said nothing: did it check the ops?"
    )
    assert [f"{d.relpath}:{d.line}: {d.message}" for d in base.typed_pallas_errors] == []


@pytest.mark.parametrize("index", range(len(MUTANTS)), ids=[f"{f}->{b}" for f, b in MUTANTS])
def test_mutant_reported_at_its_call(
    runs: tuple[RunResult, RunResult, list[Mutant]], index: int
) -> None:
    _, mutated, mutants = runs
    m = mutants[index]
    lo, hi = m.call_span
    # the plugin's pallas-platform error, or (where the stubs narrow the entry point, as
    # for plgpu.kernel) the stubs' arg-type error on compiler_params
    here = [
        d for d in mutated.typed_pallas_errors if d.relpath == m.site.relpath and lo <= d.line <= hi
    ]
    assert here, (
        f"{m.id} not reported; typed-pallas errors in that file: "
        f"{[(d.line, d.message) for d in mutated.typed_pallas_errors if d.relpath == m.site.relpath]}"
    )
    assert all(
        "cannot be used for" in d.message or 'Argument "compiler_params"' in d.message for d in here
    )


def test_mutant_module_really_changes_the_params() -> None:
    """The mutation itself: same lines, the construction swapped, the import at the end."""
    m = _mutants()[0]
    original = (SITE_PACKAGES / m.site.relpath).read_text().splitlines()
    with tempfile.TemporaryDirectory() as d:
        out = write_mutant(SITE_PACKAGES, m, Path(d))[m.site.relpath].read_text().splitlines()
    assert out[-1] == f"import {BACKEND_MODULES[m.to_backend]} as _tp_mut"
    changed = [i for i, (a, b) in enumerate(zip(original, out)) if a != b]
    assert changed and all(m.edits[0].lineno - 1 <= i <= m.edits[0].end_lineno - 1 for i in changed)
    assert "_tp_mut.CompilerParams(" in out[m.edits[0].lineno - 1]
