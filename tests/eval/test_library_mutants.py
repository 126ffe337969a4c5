"""The library-call evaluation (``eval.library_mutants``, step 5 of ``eval.corpus``) on a
small package that calls a fake installed kernel library: which calls it finds, which
mutants it plans and which of them are real bugs, that a mutant keeps every line where
it was, how a mutant is judged and scored, and, through mypy with the plugin, which
mutants are caught (firing) and which stay silent."""

from __future__ import annotations

import ast
import os
import sys
from pathlib import Path

import jax
import pytest

from eval.corpus import check_library_mutants
from eval.library_mutants import (
    CallSearch,
    LibraryResult,
    config_text,
    find_library_calls,
    judge,
    plan_library_mutants,
    prove,
    schedule_library,
    score,
    write_library_mutant,
)
from eval.mypyrun import PLUGIN, write_config
from typed_pallas_mypy.inference import Inference

JAX_SITE = os.path.dirname(os.path.dirname(jax.__file__))

#: the installed library: a TPU kernel, a Triton kernel whose caller can interpret it,
#: a wrapper that forwards its params, and a function without a kernel
FAKELIB = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


def tpu_add(x):
    return pl.pallas_call(_body, out_shape=x, compiler_params=pltpu.CompilerParams())(x)


def gpu_add(x, interpret=False):
    return pl.pallas_call(
        _body, out_shape=x, compiler_params=pltriton.CompilerParams(), interpret=interpret
    )(x)


def call_kernel(kernel, out_shape, **kwargs):
    return pl.pallas_call(kernel, out_shape=out_shape, **kwargs)


def plain(x):
    return x + 1
"""

TPU_USER = """\
import fakelib


def run(x):
    y = fakelib.tpu_add(x)
    return fakelib.plain(y)
"""

GPU_USER = """\
import jax
from fakelib import gpu_add


def run(x):
    if jax.default_backend() == "gpu":
        return gpu_add(x)
    return x


def interpreted(x, flag):
    return gpu_add(x, interpret=flag)
"""

WRAPPER_USER = """\
from jax.experimental.pallas import tpu as pltpu

import fakelib


def body(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def run(x):
    return fakelib.call_kernel(body, x, compiler_params=pltpu.CompilerParams())(x)
"""


def _project(tmp_path: Path) -> tuple[Path, Path]:
    """(the checked package's root, the site-packages folder of the fake library)."""
    site = tmp_path / "lib" / "site-packages"
    (site / "fakelib").mkdir(parents=True)
    (site / "fakelib" / "__init__.py").write_text(FAKELIB)
    (site / "fakelib" / "py.typed").write_text("")
    root = tmp_path / "root"
    (root / "app").mkdir(parents=True)
    (root / "app" / "__init__.py").write_text("")
    (root / "app" / "tpu_user.py").write_text(TPU_USER)
    (root / "app" / "gpu_user.py").write_text(GPU_USER)
    (root / "app" / "wrapper_user.py").write_text(WRAPPER_USER)
    return root, site


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def _calls(root: Path, site: Path) -> CallSearch:
    facts = Inference([str(site), JAX_SITE], None)
    return find_library_calls(root, "app", facts, ["fakelib"])


def test_finds_the_library_calls_with_a_requirement(tmp_path: Path) -> None:
    root, site = _project(tmp_path)
    found = _calls(root, site)
    got = {
        (c.relpath, c.line, c.callee, c.kind, tuple(sorted(c.platforms)), c.interpret)
        for c in found.calls
    }
    assert got == {
        ("app/tpu_user.py", 5, "fakelib.tpu_add", "function", ("tpu",), "none"),
        ("app/gpu_user.py", 7, "fakelib.gpu_add", "function", ("cuda", "rocm"), "absent"),
        ("app/gpu_user.py", 12, "fakelib.gpu_add", "function", ("cuda", "rocm"), "unknown"),
        ("app/wrapper_user.py", 11, "fakelib.call_kernel", "wrapper", ("tpu",), "absent"),
    }
    # fakelib.plain has no requirement: counted, not a library call
    assert found.without_requirement == {"fakelib": 1}
    spans = {(c.relpath, c.line): c.span for c in found.calls}
    assert spans[("app/tpu_user.py", 5)] == (5, 5)


def test_plans_guard_swap_and_config_mutants_with_verdicts(tmp_path: Path) -> None:
    root, site = _project(tmp_path)
    mutants, skipped = plan_library_mutants(root, _calls(root, site).calls)
    got = {(m.form, m.call.relpath, m.call.line, m.platform, m.real_bug) for m in mutants}
    assert got == {
        ("guard", "app/tpu_user.py", 5, "gpu", True),
        ("config", "app/tpu_user.py", 5, "gpu", True),
        # inside `if jax.default_backend() == "gpu"`: an inserted tpu guard is dead code,
        # and so is the call in a module configured for tpu; the swapped guard is the bug
        ("guard", "app/gpu_user.py", 7, "tpu", False),
        ("swap", "app/gpu_user.py", 7, "tpu", True),
        ("config", "app/gpu_user.py", 7, "tpu", False),
        # interpret= from a parameter: it may lower anywhere
        ("guard", "app/gpu_user.py", 12, "tpu", False),
        ("config", "app/gpu_user.py", 12, "tpu", False),
        ("guard", "app/wrapper_user.py", 11, "gpu", True),
        ("config", "app/wrapper_user.py", 11, "gpu", True),
    }
    why = {(m.form, m.call.line, m.call.relpath): m.why_not for m in mutants}
    assert why[("guard", 12, "app/gpu_user.py")] == "interpret mode at the call is unknown"
    assert why[("guard", 7, "app/gpu_user.py")] == (
        "under the guard at line 6, which keeps it on cuda, rocm: that path never runs there"
    )
    assert {(s.call.relpath, s.call.line, s.form, s.reason) for s in skipped} == {
        ("app/tpu_user.py", 5, "swap", "no platform guard decides the call"),
        ("app/gpu_user.py", 12, "swap", "no platform guard decides the call"),
        ("app/wrapper_user.py", 11, "swap", "no platform guard decides the call"),
    }


def test_mutants_keep_lines_parse_and_schedule(tmp_path: Path) -> None:
    root, site = _project(tmp_path)
    mutants, _ = plan_library_mutants(root, _calls(root, site).calls)
    texts: dict[tuple[str, str, int], str] = {}
    for i, m in enumerate(mutants):
        shadows = write_library_mutant(root, m, tmp_path / "out" / str(i))
        for rel, path in shadows.items():
            old, new = (root / rel).read_text(), path.read_text()
            ast.parse(new)
            assert old.splitlines() != new.splitlines()[: len(old.splitlines())]
            assert len(new.splitlines()) == len(old.splitlines()) + int(m.append_import)
            texts[(m.form, rel, m.call.line)] = new
    assert texts[("guard", "app/tpu_user.py", 5)].splitlines()[4] == (
        '    if _tp_jax.default_backend() == "gpu": y = fakelib.tpu_add(x)'
    )
    assert texts[("guard", "app/tpu_user.py", 5)].splitlines()[-1] == "import jax as _tp_jax"
    assert texts[("swap", "app/gpu_user.py", 7)].splitlines()[5] == (
        '    if jax.default_backend() == "tpu":'
    )
    assert texts[("guard", "app/gpu_user.py", 12)].splitlines()[11] == (
        '    if jax.default_backend() == "tpu": return gpu_add(x, interpret=flag)'
    )
    rounds = list(schedule_library(mutants))
    for batch in rounds:
        if batch[0].form == "config":
            assert all(m.form == "config" for m in batch)
            assert len({m.override for m in batch}) == len(
                {(m.override, m.platform) for m in batch}
            )
        else:
            files = [f for m in batch for f in m.files]
            assert len(files) == len(set(files))
    assert sorted(m.id for b in rounds for m in b) == sorted(m.id for m in mutants)
    assert config_text([("app.tpu_user", "gpu")]) == (
        "[tool.typed-pallas]\n\n[[tool.typed-pallas.overrides]]\n"
        'module = ["app.tpu_user"]\nplatforms = ["gpu"]\n'
    )


def test_judge_and_score(tmp_path: Path) -> None:
    root, site = _project(tmp_path)
    mutants, _ = plan_library_mutants(root, _calls(root, site).calls)
    by = {(m.form, m.call.relpath, m.call.line): m for m in mutants}
    hit = judge(
        by[("guard", "app/tpu_user.py", 5)],
        [("app/tpu_user.py", 5, "Compiler params ..."), ("app/tpu_user.py", 6, "elsewhere")],
    )
    assert hit.caught and hit.messages == ["app/tpu_user.py:5: Compiler params ..."]
    assert hit.elsewhere == ["app/tpu_user.py:6: elsewhere"]
    miss = judge(by[("config", "app/tpu_user.py", 5)], [("app/gpu_user.py", 5, "other file")])
    assert not miss.caught and miss.elsewhere == []
    not_real = judge(by[("guard", "app/gpu_user.py", 12)], [("app/gpu_user.py", 12, "x")])
    results: list[LibraryResult] = [hit, miss, not_real]
    assert score(results, require_proof=False) == {
        "guard": {"fakelib": {"caught": 1, "mutants": 1}, "all": {"caught": 1, "mutants": 1}},
        "config": {"fakelib": {"caught": 0, "mutants": 1}, "all": {"caught": 0, "mutants": 1}},
        "all": {"fakelib": {"caught": 1, "mutants": 2}, "all": {"caught": 1, "mutants": 2}},
    }
    # with proofs required, a callee whose lowering was not proven does not count
    assert score(results) == {}
    prove(results, {"fakelib.tpu_add": ["tpu"]})
    assert [r.proven for r in results] == [True, True, None]
    assert score(results)["all"]["all"] == {"caught": 1, "mutants": 2}
    prove(results, {"fakelib.tpu_add": ["tpu", "cuda", "rocm"]})  # lowers everywhere
    assert [r.proven for r in results] == [False, False, None]


@pytest.mark.slow
def test_mutants_through_mypy_and_the_plugin(tmp_path: Path) -> None:
    """Firing: every real bug (the TPU kernel guarded or configured for gpu, the swapped
    guard, the library wrapper given TPU params on the gpu path). Silent: the
    interpreted call, and nothing on the unmodified package."""
    root, site = _project(tmp_path)
    calls = _calls(root, site).calls
    mutants, _ = plan_library_mutants(root, calls)
    files = sorted({c.relpath for c in calls})
    base, results, runs = check_library_mutants(
        files,
        mutants,
        tmp_path / "work",
        extra_env={"TYPED_PALLAS_MYPY_DEBUG": "1"},
        cwd=root,
        root=root,
        cache_dir=tmp_path / "cache",
        config=write_config(tmp_path / "mypy.ini", PLUGIN),
        python=sys.executable,
        extra_pythonpath=[str(site)],
    )
    assert not any(r.crashed or r.blocked for r in runs), [r.tail for r in runs]
    assert base.platform_errors == []
    caught = {
        (r.mutant.form, r.mutant.call.relpath, r.mutant.call.line) for r in results if r.caught
    }
    assert caught == {
        ("guard", "app/tpu_user.py", 5),
        ("config", "app/tpu_user.py", 5),
        ("swap", "app/gpu_user.py", 7),
        ("guard", "app/wrapper_user.py", 11),
        ("config", "app/wrapper_user.py", 11),
    }
    assert score(results, require_proof=False)["all"]["all"] == {"caught": 5, "mutants": 5}
