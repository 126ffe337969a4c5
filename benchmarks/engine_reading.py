"""What the engine costs to read jax's Pallas ops: the rules against the evaluator's
summaries, in the same run, with their answers compared.

Usage (from the repository root)::

    .venv312/bin/python benchmarks/engine_reading.py                 # both, 3 rounds
    .venv312/bin/python benchmarks/engine_reading.py --rounds 5 --json out.json

Every top-level function and method of ``jax/experimental/pallas/ops`` (this venv's jax,
read as installed library code) is asked what it lowers for, called plainly and with its
result called too (a factory of kernels): by the rules (``Inference.requirement`` and
``result_requirement`` with ``TYPED_PALLAS_SUMMARIES=0``) and by the summaries
(``Inference.ask_summaries`` then ``summary``, as the plugin asks a module's functions
together). Each round builds a fresh engine for each (no cache on disk: what a first
run costs), alternating which goes first. Printed: the median seconds of each, their
ratio (summaries / rules), and how many functions each finds restricted, with the names
whose platforms (called plainly) the two disagree on.

What it does not do: time mypy (``plugin_overhead.py`` does), or judge which answer is
right (the generated programs and the parity harness do, against JAX).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "mypy_plugin"))

import jax

from typed_pallas_mypy.cache_keys import SUMMARIES_ENV
from typed_pallas_mypy.inference import Inference, Requirement

Answers = dict[str, tuple[Requirement | None, Requirement | None]]


def ops_names(root: Path) -> list[str]:
    """The fullnames of the top-level functions and methods of jax's Pallas ops."""
    names: list[str] = []
    for path in sorted((root / "jax/experimental/pallas/ops").rglob("*.py")):
        module = ".".join(path.relative_to(root).with_suffix("").parts)
        if module.endswith(".__init__"):
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        for node in tree.body:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                names.append(f"{module}.{node.name}")
            elif isinstance(node, ast.ClassDef):
                names.extend(
                    f"{module}.{node.name}.{item.name}"
                    for item in node.body
                    if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef))
                )
    return list(dict.fromkeys(names))  # a name defined twice (an overload) once


def _engine(root: Path, summaries: bool) -> Inference:
    os.environ[SUMMARIES_ENV] = "1" if summaries else "0"
    release = tuple(int(p) for p in jax.__version__.split(".")[:3] if p.isdigit())
    return Inference([str(root)], None, release=release)


def ask(root: Path, names: list[str], summaries: bool) -> tuple[float, Answers]:
    """(seconds, answers) of one fresh engine asked about every name."""
    engine = _engine(root, summaries)
    start = time.perf_counter()
    if summaries:
        engine.ask_summaries(names, result=True)
    answers = {name: (engine.requirement(name), engine.result_requirement(name)) for name in names}
    return time.perf_counter() - start, answers


def _platforms(found: Requirement | None) -> list[str] | None:
    return sorted(found.platforms) if found is not None else None


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--json", type=Path, default=None)
    args = parser.parse_args()
    root = Path(jax.__file__).resolve().parent.parent
    names = ops_names(root)
    times: dict[str, list[float]] = {"rules": [], "summaries": []}
    answers: dict[str, Answers] = {}
    for round_ in range(args.rounds):
        order = ("rules", "summaries") if round_ % 2 == 0 else ("summaries", "rules")
        for which in order:
            seconds, answers[which] = ask(root, names, which == "summaries")
            times[which].append(seconds)
    rules, summaries = (statistics.median(times[k]) for k in ("rules", "summaries"))
    # called plainly: the result's answer differs by convention where a function returns
    # arrays (the summaries: calling the result runs what the call ran; the rules: None)
    differ = sorted(
        name
        for name in names
        if _platforms(answers["rules"][name][0]) != _platforms(answers["summaries"][name][0])
    )
    restricted = {
        which: sum(1 for plain, _ in found.values() if plain is not None)
        for which, found in answers.items()
    }
    print(f"jax {jax.__version__}: {len(names)} functions and methods of pallas.ops")
    print(f"rules      {rules:7.2f} s  ({restricted['rules']} restricted)")
    print(f"summaries  {summaries:7.2f} s  ({restricted['summaries']} restricted)")
    print(f"ratio summaries / rules: {summaries / rules:.2f}")
    print(f"platforms differ ({len(differ)}): {', '.join(differ) or '-'}")
    if args.json is not None:
        args.json.write_text(
            json.dumps(
                {
                    "jax": jax.__version__,
                    "functions": len(names),
                    "seconds": times,
                    "median": {"rules": rules, "summaries": summaries},
                    "ratio": summaries / rules,
                    "restricted": restricted,
                    "differ": {
                        name: {
                            which: [_platforms(a) for a in answers[which][name]]
                            for which in ("rules", "summaries")
                        }
                        for name in differ
                    },
                },
                indent=1,
            )
        )


if __name__ == "__main__":
    main()
