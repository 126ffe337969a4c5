"""Generated programs judged by JAX (``eval.generated``, issue 50).

* every variant of every form renders to valid Python, and generation is repeatable;
* the runner is honest: a program JAX refuses that the checker is made to miss counts as a
  miss, a program JAX lowers that the checker is made to flag counts as a false finding,
  and a program that does not lower for its own kernel's platform is not judged;
* the CI slice: a fixed seed and count, JAX's verdicts from the committed cache (which must
  hold them: the cache is current), the real ``typed-pallas check`` in the three layouts at
  this environment's end; no false finding, and recall not below the recorded figure
  (``eval/generated/recall-floor.json``).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from eval.generated import checker, report, truth
from eval.generated.__main__ import run
from eval.generated.forms import FORMS, GUARDS, KERNELS
from eval.generated.program import build, generate

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
