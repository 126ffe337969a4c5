"""``python -m eval.generated --seed S --n N --depth D``: generate, judge, check, report.

Usage (from the repository root, with any environment that has typed-pallas)::

    .venv312/bin/python -m eval.generated --seed 50 --n 200 --depth 3
    .venv312/bin/python -m eval.generated --seed 50 --n 200 --depth 3 --verdicts-only
    .venv312/bin/python -m eval.generated --seed 50 --n 200 --depth 3 --check-verdicts

JAX's verdicts come from the cache (``eval/generated/verdicts.json``) or are lowered and
added to it (``--verdicts-only`` stops there: the command that regenerates the cache;
``--fresh-verdicts`` lowers these programs again even where cached; ``--check-verdicts``
exits 1 when a verdict of these programs is missing for a JAX release installed at an end).
The checker runs once per batch of ``--check-batch`` programs, layout and end. The report
goes to ``--report`` (default ``.cache/generated/report``); ``--table`` prints the
by-form table for docs/RESULTS.md.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from eval.generated import checker, report, truth
from eval.generated.program import Program, generate

REPO = Path(__file__).resolve().parents[2]
FLOOR = Path(__file__).with_name("recall-floor.json")


def run(
    programs: Sequence[Program],
    ends: Sequence[str],
    layouts: Sequence[str],
    work: Path,
    *,
    check_batch: int = 400,
    verdict_batch: int = 250,
    cache_path: Path = truth.CACHE,
    lower_missing: bool = True,
) -> tuple[list[report.Case], dict[str, str]]:
    """The cases of ``programs`` at ``ends`` in ``layouts``; the JAX release of each end."""
    work = work.resolve()  # the checker runs in the project's folder: absolute paths only
    releases = {end: truth.jax_release(end) for end in ends}
    if lower_missing:
        outcomes = truth.judge(programs, ends, work, batch=verdict_batch, cache_path=cache_path)
    else:
        cache = truth.load_cache(cache_path)
        absent = [
            (end, p.name) for end in ends for p in truth.missing(programs, releases[end], cache)
        ]
        if absent:
            raise LookupError(
                f"{len(absent)} verdicts missing from {cache_path} (first: {absent[0]}); "
                "regenerate: python -m eval.generated ... --verdicts-only"
            )
        outcomes = {
            end: {p.name: cache[truth.key(p, releases[end])] for p in programs} for end in ends
        }
    truths = {
        end: {p.name: truth.verdict(p, outcomes[end][p.name]) for p in programs} for end in ends
    }
    answers: dict[tuple[str, str], checker.Findings] = {}

    def check_end(end: str) -> None:  # the ends at once: their own folders and mypy caches
        for layout in layouts:
            found: checker.Findings = {}
            for start in range(0, len(programs), check_batch):
                batch = programs[start : start + check_batch]
                found.update(checker.check(batch, end, layout, work))
            answers[(end, layout)] = found

    with ThreadPoolExecutor(max_workers=len(ends)) as pool:
        list(pool.map(check_end, ends))
    answers = {(end, layout): answers[(end, layout)] for end in ends for layout in layouts}
    return report.score(programs, truths, answers), releases


def _recall(cases: Sequence[report.Case]) -> dict[tuple[str, str], float]:
    tallies = report.tally(cases, lambda c: [f"{c.end}\0{c.layout}"])
    out: dict[tuple[str, str], float] = {}
    for joined, t in tallies.items():
        end, layout = joined.split("\0")
        out[(end, layout)] = math.floor((t.recall or 0.0) * 10_000) / 10_000  # never above
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m eval.generated", description=__doc__)
    parser.add_argument("--seed", type=int, default=50)
    parser.add_argument("--n", type=int, default=200)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument("--ends", default=",".join(truth.ENDS), help="py311,py312")
    parser.add_argument("--layouts", default=",".join(checker.LAYOUTS))
    parser.add_argument("--work", type=Path, default=REPO / ".cache" / "generated" / "work")
    parser.add_argument("--report", type=Path, default=REPO / ".cache" / "generated" / "report")
    parser.add_argument("--check-batch", type=int, default=400)
    parser.add_argument("--verdict-batch", type=int, default=250)
    parser.add_argument("--verdicts", type=Path, default=truth.CACHE, help="the verdict cache")
    parser.add_argument("--verdicts-only", action="store_true")
    parser.add_argument("--fresh-verdicts", action="store_true")
    parser.add_argument("--check-verdicts", action="store_true")
    parser.add_argument("--table", action="store_true", help="print the by-form table")
    parser.add_argument(
        "--write-floor",
        action="store_true",
        help="record this run's recall per end and layout as the CI slice's floor",
    )
    args = parser.parse_args(argv)
    ends = [e for e in args.ends.split(",") if e]
    layouts = [layout for layout in args.layouts.split(",") if layout]
    began = time.monotonic()
    programs = generate(args.seed, args.n, args.depth)
    command = f"python -m eval.generated --seed {args.seed} --n {args.n} --depth {args.depth}"
    if args.check_verdicts:
        cache = truth.load_cache(args.verdicts)
        absent = {end: len(truth.missing(programs, truth.jax_release(end), cache)) for end in ends}
        print(json.dumps({"programs": len(programs), "missing verdicts": absent}))
        return 1 if any(absent.values()) else 0
    if args.fresh_verdicts:
        cache = truth.load_cache(args.verdicts)
        names = {p.digest for p in programs}
        kept = {k: v for k, v in cache.items() if k.split("@")[0] not in names}
        truth.save_cache(kept, args.verdicts)
    if args.verdicts_only:
        truth.judge(programs, ends, args.work, batch=args.verdict_batch, cache_path=args.verdicts)
        print(f"verdicts of {len(programs)} programs in {time.monotonic() - began:.0f}s")
        return 0
    cases, releases = run(
        programs,
        ends,
        layouts,
        args.work,
        check_batch=args.check_batch,
        verdict_batch=args.verdict_batch,
        cache_path=args.verdicts,
    )
    elapsed = time.monotonic() - began
    header = (
        f"# Generated programs judged by JAX\n\n`{command}`: {len(programs)} programs "
        f"(after dropping duplicates), ends {', '.join(f'{e} (jax {releases[e]})' for e in ends)}, "
        f"{elapsed:.0f}s. Cells: caught / programs JAX refuses to lower "
        "(+N false findings on programs JAX lowers). Programs JAX refuses only for rocm, "
        "under a guard for 'gpu' that cuda passes, are counted apart: code for NVIDIA GPUs, "
        "not reported by design."
    )
    data = report.write(cases, args.report, releases, header)
    for run_name, figures in data["runs"].items():
        print(run_name, json.dumps(figures["overall"]))
    print(f"ends disagree on {len(data['ends disagree'])} programs")
    if args.write_floor:
        recall: dict[str, dict[str, float]] = {}
        for case_run, figures in _recall(cases).items():
            recall.setdefault(case_run[0], {})[case_run[1]] = figures
        FLOOR.write_text(
            json.dumps(
                {
                    "about": "the CI slice (tests/eval/test_generated.py): recall may not fall "
                    "below these figures; written by " + command + " --write-floor",
                    "seed": args.seed,
                    "n": args.n,
                    "depth": args.depth,
                    "recall": recall,
                },
                indent=1,
            )
            + "\n"
        )
    if args.table:
        print(report.tables(cases, releases))
    print(f"report: {args.report} ({elapsed:.0f}s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
