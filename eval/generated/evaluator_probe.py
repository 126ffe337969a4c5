"""``python -m eval.generated.evaluator_probe``: the evaluator alone on generated programs.

Runs the engine's evaluator (``typed_pallas_mypy.inference.evaluator``) on each
generated program, in memory (no mypy, no files): the application's ``main`` under each
lowering platform, and asks whether the guarded call lowers nowhere its guard lets it
run. Scored against JAX's verdicts from the cache (``verdicts.json``; programs without a
cached verdict at a release are skipped), by form, guard and kernel, like the checker's
report. This measures the evaluator as it is built, before it answers for the plugin.

    .venv312/bin/python -m eval.generated.evaluator_probe --seed 50 --n 2000 --depth 3
"""

from __future__ import annotations

import argparse
import sys
import time
import traceback
from collections import Counter, defaultdict
from collections.abc import Sequence
from pathlib import Path

from eval.generated import truth
from eval.generated.program import Program, generate
from typed_pallas_mypy.inference.evaluator import call_verdict, run_function
from typed_pallas_mypy.inference.evaluator.machine import Loader, files_loader

RELEASES = ("0.10.2", "0.12.1")


def loader_of(program: Program) -> Loader:
    """A ``Loader`` over the program's files."""
    return files_loader(program.files)


def answer(program: Program, releases: Sequence[str] = RELEASES) -> dict[str, bool | None]:
    """Whether the evaluator finds the guarded call, at each JAX release; None when it
    could not finish."""
    app = program.app.removesuffix(".py")
    machines = run_function(loader_of(program), app, "main")
    out: dict[str, bool | None] = {}
    for release in releases:
        found = call_verdict(
            machines, app, program.call_line, tuple(int(p) for p in release.split("."))
        )
        out[release] = None if found is None else found.finding
    return out


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=50)
    parser.add_argument("--n", type=int, default=2000)
    parser.add_argument("--depth", type=int, default=3)
    parser.add_argument(
        "--show-missed", default="", help="print the programs missed with this form"
    )
    parser.add_argument("--show-false", action="store_true", help="print the false findings")
    parser.add_argument(
        "--verdicts", type=Path, default=truth.CACHE, help="the verdict cache (a held-out seed's)"
    )
    options = parser.parse_args(argv)
    programs = generate(options.seed, options.n, options.depth)
    cache = truth.load_cache(options.verdicts)
    began = time.monotonic()
    per_form: dict[str, Counter[str]] = defaultdict(Counter)
    per_guard: dict[str, Counter[str]] = defaultdict(Counter)
    totals: Counter[str] = Counter()
    answers: dict[str, dict[str, bool | None]] = {}
    crashes = 0
    for program in programs:
        try:
            answers[program.name] = answer(program)
        except Exception:
            crashes += 1
            answers[program.name] = dict.fromkeys(RELEASES)
            if crashes <= 3:
                print(f"crash on {program.describe()}:\n{traceback.format_exc()}", file=sys.stderr)
    for release in RELEASES:
        for program in programs:
            outcomes = cache.get(truth.key(program, release))
            if outcomes is None:
                continue
            verdict, _ = truth.verdict(program, outcomes)
            if verdict == truth.NO_TRACE:
                continue
            found = answers[program.name][release]
            if verdict == truth.ROCM_ONLY:  # not reported by design: counted apart
                totals["rocm only, reported" if found else "rocm only"] += 1
                continue
            if verdict == truth.FAILS:
                cell = "caught" if found else ("unfinished" if found is None else "missed")
                if (
                    cell != "caught"
                    and options.show_missed
                    and options.show_missed in program.form_names()
                ):
                    _show(program, release, cell)
            else:
                cell = "false" if found else "quiet"
                if found and options.show_false:
                    _show(program, release, cell)
            totals[cell] += 1
            for name in set(program.form_names()):
                per_form[name][cell] += 1
            per_guard[program.guard][cell] += 1
    print(f"{len(programs)} programs, {time.monotonic() - began:.1f}s\n")
    print("| form | caught / refused | false / lowered |\n|---|---|---|")
    for name in sorted(per_form):
        c = per_form[name]
        print(
            f"| {name} | {c['caught']}/{c['caught'] + c['missed'] + c['unfinished']} | {c['false']}/{c['false'] + c['quiet']} |"
        )
    print("\n| guard | caught / refused | false / lowered |\n|---|---|---|")
    for name in sorted(per_guard):
        c = per_guard[name]
        print(
            f"| {name} | {c['caught']}/{c['caught'] + c['missed'] + c['unfinished']} | {c['false']}/{c['false'] + c['quiet']} |"
        )
    refused = totals["caught"] + totals["missed"] + totals["unfinished"]
    print(
        f"\nall: caught {totals['caught']}/{refused} ({100 * totals['caught'] / max(refused, 1):.1f}%),"
        f" unfinished {totals['unfinished']} (crashes {crashes}), false {totals['false']}/{totals['false'] + totals['quiet']};"
        f" rocm-only refusals (not reported by design) {totals['rocm only']},"
        f" reported {totals['rocm only, reported']}"
    )
    return 0


def _show(program: Program, release: str, cell: str) -> None:
    print(f"===== {cell} at {release}: {program.describe()}", file=sys.stderr)
    for rel, text in sorted(program.files.items()):
        if rel.endswith("__init__.py"):
            continue
        print(f"# {rel}\n{text}", file=sys.stderr)


if __name__ == "__main__":
    raise SystemExit(main())
