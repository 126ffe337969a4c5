"""Generated programs judged by JAX (``eval.generated``, issue 50).

* every variant of every form renders to valid Python, and generation is repeatable;
* the grammar covers JAX's table: every row (``jax_api.ROWS``, ``CONTEXTS``,
  ``CLASS_DECORATORS``) is used by some variant or is in ``forms.NOT_FORMS`` with a reason,
  and the yardstick's seed gives every form at least 20 programs;
* the runner is honest: a program JAX refuses that the checker is made to miss counts as a
  miss, a program JAX lowers that the checker is made to flag counts as a false finding,
  and a program that does not lower for its own kernel's platform is not judged;
* the CI slice: a fixed seed and count, JAX's verdicts from the committed cache (which must
  hold them: the cache is current), the real ``typed-pallas check`` in the three layouts at
  this environment's end; no false finding, and recall not below the recorded figure
  (``eval/generated/recall-floor.json``).
"""

from __future__ import annotations

import ast
import builtins
import json
import sys
from collections.abc import Sequence
from pathlib import Path

import pytest

from eval.generated import checker, report, truth
from eval.generated.__main__ import run
from eval.generated.forms import (
    FORMS,
    GUARDS,
    KERNELS,
    NOT_FORMS,
    SPELLED_AS,
    Form,
    kernel_module,
)
from eval.generated.program import build, generate
from typed_pallas_mypy.inference import jax_api

FLOOR = Path(truth.__file__).with_name("recall-floor.json")


def test_every_variant_of_every_form_is_valid_python() -> None:
    for form in FORMS:
        for variant in range(len(form.variants)):
            program = build("tpu params", ((form.name, variant),), *_plain_guard("gpu"))
            for rel, text in program.files.items():
                compile(text, rel, "exec")  # raises on a broken template
    for guard, (platforms, _) in GUARDS.items():
        for platform in platforms:
            for kernel in KERNELS:
                program = build(kernel, (("def / lambda", 0),), guard, platform)
                for rel, text in program.files.items():
                    compile(text, rel, "exec")


def test_generation_is_repeatable_and_a_prefix_of_a_longer_run() -> None:
    first = generate(7, 30, 3)
    assert [p.name for p in first] == [p.name for p in generate(7, 30, 3)]
    longer = [p.name for p in generate(7, 60, 3)]
    assert longer[: len(first)] == [p.name for p in first]
    assert {p.depth for p in generate(7, 60, 3)} == {1, 2, 3}


Row = jax_api.ApiRow | jax_api.ContextRow | jax_api.ClassDecoratorRow
TABLE: tuple[Row, ...] = (*jax_api.ROWS, *jax_api.CONTEXTS, *jax_api.CLASS_DECORATORS)


def _references(text: str) -> tuple[set[str], set[str]]:
    """(the dotted names a module refers to, imports resolved; the attribute names it uses).
    A bare name of a builtin is ``builtins.NAME``; a name imported under several branches
    (``try`` / ``except ImportError``) stands for each."""
    tree = ast.parse(text)
    bound: dict[str, set[str]] = {}
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                target = alias.name if alias.asname else alias.name.split(".")[0]
                bound.setdefault(alias.asname or target, set()).add(target)
                names.add(alias.name)
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                bound.setdefault(alias.asname or alias.name, set()).add(full)
                names.add(full)
    attributes: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            attributes.add(node.attr)
        parts: list[str] = []
        current: ast.expr = node if isinstance(node, ast.expr) else ast.Constant(None)
        while isinstance(current, ast.Attribute):
            parts.append(current.attr)
            current = current.value
        if not isinstance(current, ast.Name):
            continue
        tail = parts[::-1]
        for base in bound.get(current.id, ()):
            names.add(".".join([base, *tail]))
        if current.id not in bound and hasattr(builtins, current.id):
            names.add(".".join(["builtins", current.id, *tail]))
    return names, attributes


def _modules(forms: Sequence[Form]) -> list[str]:
    """Every module a variant of ``forms`` renders to, and the kernels' modules."""
    texts = [kernel_module(kind) for kind in KERNELS]
    for form in forms:
        for variant in range(len(form.variants)):
            texts.extend(form.render(variant, pkg="pkg", level=1).values())
    return texts


def _used(entry: Row, modules: Sequence[tuple[set[str], set[str], str]]) -> bool:
    spellings = entry.spellings()
    for names, attributes, text in modules:
        if names.intersection(spellings):
            return True
        if any(SPELLED_AS.get(spelling, "\0") in text for spelling in spellings):
            return True
        if isinstance(entry, jax_api.ApiRow) and entry.kind is jax_api.Kind.METHOD:
            # ``f.defvjp(...)``: the class that makes ``f`` is named, the method is used
            owners = {spelling.rsplit(".", 1)[0] for spelling in spellings}
            method = spellings[0].rsplit(".", 1)[1]
            if names.intersection(owners) and method in attributes:
                return True
    return False


def _unaccounted(forms: Sequence[Form]) -> tuple[list[str], list[str]]:
    """(rows neither used by a variant of ``forms`` nor in NOT_FORMS, rows NOT_FORMS lists
    that a variant uses)."""
    modules = [(*_references(text), text) for text in _modules(forms)]
    missing, stale = [], []
    for entry in TABLE:
        first = entry.spellings()[0]
        used = _used(entry, modules)
        if not used and first not in NOT_FORMS:
            missing.append(first)
        if used and first in NOT_FORMS:
            stale.append(first)
    return missing, stale


def test_every_row_of_jax_table_is_used_by_a_form_or_excluded_with_a_reason() -> None:
    assert _unaccounted(FORMS) == ([], [])
    firsts = {entry.spellings()[0] for entry in TABLE}
    assert sorted(set(NOT_FORMS) - firsts) == []  # each names a row, by its first spelling
    assert all(reason.strip() for reason in NOT_FORMS.values())
    spelled = {spelling for entry in TABLE for spelling in entry.spellings()}
    assert sorted(set(SPELLED_AS) - spelled) == []


def test_a_row_no_form_uses_and_no_reason_excludes_is_reported() -> None:
    """The check can fail: without the form that holds the fuser, its rows are unaccounted."""
    fuser = [form for form in FORMS if "fuser" not in form.name]
    missing, stale = _unaccounted(fuser)
    assert "jax.experimental.pallas.fuser.fuse" in missing and stale == []
    assert _references("from a.b import c as d\nimport e.f\nd.g(e.f.h, min)")[0] >= {
        "a.b.c.g",
        "e.f.h",
        "builtins.min",
    }


def test_the_yardsticks_seed_gives_every_form_20_programs() -> None:
    programs = generate(50, 2000, 3)
    count = {form.name: 0 for form in FORMS}
    for program in programs:
        for name in set(program.form_names()):
            count[name] += 1
    assert {name: n for name, n in count.items() if n < 20} == {}


def _plain_guard(platform: str) -> tuple[str, str]:
    return "jax.default_backend() ==", platform


def test_the_runner_counts_a_made_miss_and_a_made_false_finding(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    refused = build("tpu params", (("def / lambda", 0),), *_plain_guard("gpu"))
    lowered = build("triton params", (("def / lambda", 0),), *_plain_guard("gpu"))
    broken = build("tpu params", (("jax.jit", 0),), *_plain_guard("gpu"))
    end = next(iter(truth.ENDS))
    release = "0.0.test"  # no JAX environment is asked: the verdicts are made up here
    monkeypatch.setattr(truth, "jax_release", lambda end: release)
    refusal = [
        "ValueError",
        "Compiler params for platform tpu cannot be used for gpu lowering.",
        True,
    ]
    cache = {
        truth.key(refused, release): {"tpu": None, "cuda": refusal, "rocm": refusal},
        truth.key(lowered, release): {"cuda": None, "rocm": None},
        # does not lower for its own platform: not judged, whatever the checker says
        truth.key(broken, release): {"tpu": ["TypeError", "x", False], "cuda": None, "rocm": None},
    }
    path = tmp_path / "verdicts.json"
    truth.save_cache(cache, path)

    def made_up(programs: object, end: str, layout: str, work: Path) -> checker.Findings:
        # the checker is made to miss `refused` and to flag `lowered` and `broken`
        return {
            lowered.name: [(lowered.app, lowered.call_line, "made up")],
            broken.name: [(broken.app, broken.call_line, "made up")],
        }

    monkeypatch.setattr(checker, "check", made_up)
    cases, _ = run(
        [refused, lowered, broken],
        [end],
        ["project"],
        tmp_path,
        cache_path=path,
        lower_missing=False,
    )
    outcome = {case.program.name: case.outcome for case in cases}
    assert outcome == {
        refused.name: report.MISSED,
        lowered.name: report.FALSE,
        broken.name: report.UNJUDGED,
    }
    overall = report.tally(cases, lambda c: ["all"])["all"]
    assert (overall.caught, overall.missed, overall.false, overall.recall) == (0, 1, 1, 0.0)

    def honest(programs: object, end: str, layout: str, work: Path) -> checker.Findings:
        return {refused.name: [(refused.app, refused.call_line, "found")]}

    monkeypatch.setattr(checker, "check", honest)
    cases, _ = run(
        [refused, lowered], [end], ["project"], tmp_path, cache_path=path, lower_missing=False
    )
    assert {c.program.name: c.outcome for c in cases} == {
        refused.name: report.CAUGHT,
        lowered.name: report.QUIET,
    }


def test_a_refusal_for_rocm_alone_under_a_guard_for_gpu_is_counted_apart() -> None:
    """Code for NVIDIA GPUs under a guard for "gpu": JAX refuses rocm, cuda lowers. The
    checker leaves it unreported by design, so it is neither a miss nor a false finding;
    a refusal for cuda too is a plain refusal."""
    program = build("mosaic gpu params", (("def / lambda", 0),), *_plain_guard("gpu"))
    assert set(program.lowering_platforms) == {"cuda", "rocm"}
    amd = ["ValueError", "Mosaic GPU does not yet support AMD ROCm devices", True]
    nvidia = ["ValueError", "Compiler params for platform mosaic_gpu cannot be used", True]
    rocm_only = truth.verdict(program, {"cuda": None, "rocm": amd})
    assert rocm_only[0] == truth.ROCM_ONLY and "cuda lowers" in rocm_only[1]
    tpu = build("tpu params", (("def / lambda", 0),), *_plain_guard("gpu"))
    both = truth.verdict(tpu, {"tpu": None, "cuda": nvidia, "rocm": amd})
    assert both[0] == truth.FAILS and both[1].startswith("cuda: ValueError")
    rocm_alone = truth.verdict(tpu, {"tpu": None, "cuda": None, "rocm": amd})
    assert rocm_alone[0] == truth.ROCM_ONLY
    assert truth.verdict(program, {"cuda": None, "rocm": None}) == (truth.LOWERS, "")
    case = report.Case(program, "py311", "project", rocm_only[0], rocm_only[1], ())
    assert case.outcome == report.BY_DESIGN
    flagged = report.Case(program, "py311", "project", rocm_only[0], "", (("app.py", 3, "x"),))
    assert flagged.outcome == report.BY_DESIGN_REPORTED
    tallied = report.tally([case, flagged], lambda c: ["all"])["all"]
    assert (tallied.fails, tallied.lowers, tallied.recall) == (0, 0, None)
    assert (tallied.rocm_only, tallied.rocm_only_reported) == (1, 1)


def test_a_missing_verdict_is_an_error_not_a_guess(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(truth, "jax_release", lambda end: "0.0.test")
    program = build("tpu params", (("def / lambda", 0),), *_plain_guard("gpu"))
    path = tmp_path / "verdicts.json"
    truth.save_cache({}, path)
    with pytest.raises(LookupError, match="verdicts missing"):
        run(
            [program],
            [next(iter(truth.ENDS))],
            ["project"],
            tmp_path,
            cache_path=path,
            lower_missing=False,
        )


def _this_end() -> str | None:
    here = Path(sys.prefix).resolve()
    for end in truth.ENDS:
        if truth.interpreter(end).parents[1].resolve() == here:
            return end
    return None


@pytest.mark.slow
def test_ci_slice_no_false_finding_and_recall_not_below_the_record(tmp_path: Path) -> None:
    end = _this_end()
    if end is None:
        pytest.skip("the slice runs at the ends of the JAX range (.venv311, .venv312)")
    floor = json.loads(FLOOR.read_text())
    programs = generate(floor["seed"], floor["n"], floor["depth"])
    cases, _ = run(programs, [end], list(checker.LAYOUTS), tmp_path, lower_missing=False)
    for layout in checker.LAYOUTS:
        ran = [c for c in cases if c.layout == layout]
        overall = report.tally(ran, lambda c: ["all"])["all"]
        false = [c.program.name for c in ran if c.outcome == report.FALSE]
        assert false == [], f"{end} {layout}: false findings on {false}"
        recorded = floor["recall"][end][layout]
        assert overall.recall is not None
        assert overall.recall >= recorded, (
            f"{end} {layout}: recall {overall.recall:.4f} fell below {recorded}"
        )
