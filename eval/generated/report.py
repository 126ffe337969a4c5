"""Scoring and the report: JAX's truth against the checker's answer, per end and layout.

Each (program, end, layout) is one case: ``caught`` (JAX fails, the checker reports the
program), ``missed`` (JAX fails, nothing reported), ``false`` (JAX lowers, the checker
reports), ``quiet`` (JAX lowers, nothing reported), ``unjudged`` (the program does not
trace at that end: ``truth.NO_TRACE``), ``rocm_only`` and ``rocm_only_reported`` (JAX
refuses only rocm, under a guard for "gpu" that cuda passes: ``truth.ROCM_ONLY``, which the
checker leaves unreported by design). Recall is caught / (caught + missed); false findings
are counted, over the programs JAX lowers; the rocm-only cases are counted apart. A program counts once for each distinct form it
holds, in the by-form table.

The report folder gets ``summary.json`` (every figure), ``report.md`` (the tables) and, for
each form, the smallest program of its missed and of its false cases (``missed/<form>/``,
``false/<form>/``): the program's files and a ``CASE.md`` saying what JAX and the checker
said, so that a miss is a ready reproduction.
"""

from __future__ import annotations

import json
import re
import shutil
from collections import Counter, defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

from eval.generated.checker import LAYOUTS, Findings
from eval.generated.forms import BY_NAME
from eval.generated.program import Program
from eval.generated.truth import FAILS, LOWERS, NO_TRACE, ROCM_ONLY

CAUGHT: Final = "caught"
MISSED: Final = "missed"
FALSE: Final = "false"
QUIET: Final = "quiet"
UNJUDGED: Final = "unjudged"
#: JAX refuses only rocm under a guard for "gpu": silent by design, or reported
BY_DESIGN: Final = "rocm_only"
BY_DESIGN_REPORTED: Final = "rocm_only_reported"
PLAIN_GUARD: Final = "jax.default_backend() =="

#: end -> program name -> (truth, JAX's message or why)
Truths = Mapping[str, Mapping[str, tuple[str, str]]]
#: (end, layout) -> the checker's findings
Answers = Mapping[tuple[str, str], Findings]


@dataclass(frozen=True)
class Case:
    program: Program
    end: str
    layout: str
    truth: str
    why: str
    findings: tuple[tuple[str, int, str], ...]

    @property
    def outcome(self) -> str:
        if self.truth == NO_TRACE:
            return UNJUDGED
        if self.truth == FAILS:
            return CAUGHT if self.findings else MISSED
        if self.truth == ROCM_ONLY:
            return BY_DESIGN_REPORTED if self.findings else BY_DESIGN
        return FALSE if self.findings else QUIET


def score(programs: Sequence[Program], truths: Truths, answers: Answers) -> list[Case]:
    """Every (program, end, layout) case of the runs in ``answers``."""
    cases: list[Case] = []
    for (end, layout), findings in answers.items():
        for program in programs:
            truth, why = truths[end][program.name]
            assert truth in (FAILS, LOWERS, NO_TRACE, ROCM_ONLY), truth
            cases.append(
                Case(program, end, layout, truth, why, tuple(findings.get(program.name, ())))
            )
    return cases


@dataclass
class Tally:
    caught: int = 0
    missed: int = 0
    false: int = 0
    quiet: int = 0
    unjudged: int = 0
    rocm_only: int = 0
    rocm_only_reported: int = 0

    def add(self, outcome: str) -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)

    @property
    def fails(self) -> int:
        return self.caught + self.missed

    @property
    def lowers(self) -> int:
        return self.false + self.quiet

    @property
    def recall(self) -> float | None:
        return self.caught / self.fails if self.fails else None

    def as_dict(self) -> dict[str, Any]:
        return {
            "fails": self.fails,
            "caught": self.caught,
            "recall": None if self.recall is None else round(self.recall, 4),
            "lowers": self.lowers,
            "false findings": self.false,
            "unjudged": self.unjudged,
            "rocm only (not reported by design)": self.rocm_only,
            "rocm only, reported": self.rocm_only_reported,
        }


def tally(cases: Iterable[Case], keys: Callable[[Case], Iterable[str]]) -> dict[str, Tally]:
    out: dict[str, Tally] = defaultdict(Tally)
    for case in cases:
        for k in keys(case):
            out[k].add(case.outcome)
    return dict(out)


def _per_run(cases: Sequence[Case]) -> dict[tuple[str, str], list[Case]]:
    runs: dict[tuple[str, str], list[Case]] = defaultdict(list)
    for case in cases:
        runs[(case.end, case.layout)].append(case)
    return runs


def summary(cases: Sequence[Case], releases: Mapping[str, str]) -> dict[str, Any]:
    """Every figure, per run (end, layout): overall, by form, depth, kernel, guard."""
    out: dict[str, Any] = {"runs": {}}
    for (end, layout), run in sorted(_per_run(cases).items()):
        out["runs"][f"{end} (jax {releases.get(end, '?')}) {layout}"] = {
            "overall": tally(run, lambda c: ["all"])["all"].as_dict(),
            "by form": _dicts(tally(run, lambda c: sorted(set(c.program.form_names())))),
            "by depth": _dicts(tally(run, lambda c: [str(c.program.depth)])),
            "by kernel": _dicts(tally(run, lambda c: [c.program.kernel])),
            "by guard": _dicts(tally(run, lambda c: [f"{c.program.guard} {c.program.platform}"])),
        }
    truths: dict[str, dict[str, str]] = defaultdict(dict)
    for case in cases:
        truths[case.program.name][case.end] = case.truth
    out["ends disagree"] = sorted(name for name, t in truths.items() if len(set(t.values())) > 1)
    return out


def _dicts(tallies: Mapping[str, Tally]) -> dict[str, dict[str, Any]]:
    return {k: v.as_dict() for k, v in sorted(tallies.items())}


def _cell(t: Tally | None) -> str:
    if t is None or (t.fails == 0 and t.false == 0):
        return "-" if t is None or t.fails == 0 else f"{t.caught}/{t.fails}"
    return f"{t.caught}/{t.fails}" + (f" +{t.false}F" if t.false else "")


def _forms_of(case: Case) -> list[str]:
    return sorted(set(case.program.form_names()))


def _guard_of(case: Case) -> list[str]:
    return [f"{case.program.guard} '{case.program.platform}'"]


def _kernel_of(case: Case) -> list[str]:
    return [case.program.kernel]


def _depth_of(case: Case) -> list[str]:
    return [f"depth {case.program.depth}"]


def form_table(
    cases: Sequence[Case],
    releases: Mapping[str, str],
    keys: Callable[[Case], list[str]] = _forms_of,
    title: str = "form",
) -> str:
    """Markdown: key (form by default) x (end, layout) caught/fails (+N false findings),
    programs per key."""
    runs = _per_run(cases)
    columns = sorted(runs)
    by_run = {run: tally(runs[run], keys) for run in columns}
    overall = {run: tally(runs[run], lambda c: ["all"])["all"] for run in columns}
    programs: Counter[str] = Counter()
    seen: set[str] = set()
    for case in cases:
        if case.program.name not in seen:
            seen.add(case.program.name)
            programs.update(set(keys(case)))
    head = [title, "family", "programs"] + [
        f"jax {releases.get(end, end)} {layout}" for end, layout in columns
    ]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for name in sorted(programs, key=lambda n: (_family(n), n)):
        cells = [_cell(by_run[run].get(name)) for run in columns]
        lines.append(f"| {name} | {_family(name)} | {programs[name]} | " + " | ".join(cells) + " |")
    cells = [_cell(overall[run]) for run in columns]
    lines.append(f"| **all** | | {len(seen)} | " + " | ".join(cells) + " |")
    recall = [
        "-" if overall[run].recall is None else f"{100 * (overall[run].recall or 0):.1f}%"
        for run in columns
    ]
    lines.append("| recall | | | " + " | ".join(recall) + " |")
    false = [str(overall[run].false) + f" of {overall[run].lowers}" for run in columns]
    lines.append("| false findings | | | " + " | ".join(false) + " |")
    rocm = [
        f"{overall[run].rocm_only_reported} of "
        f"{overall[run].rocm_only + overall[run].rocm_only_reported}"
        for run in columns
    ]
    lines.append(
        "| reported of rocm-only refusals (by design: none) | | | " + " | ".join(rocm) + " |"
    )
    return "\n".join(lines) + "\n"


def _family(name: str) -> str:
    form = BY_NAME.get(name)
    return form.family if form is not None else ""


def tables(cases: Sequence[Case], releases: Mapping[str, str]) -> str:
    """The by-form table, then by guard, kernel and depth."""
    return "\n".join(
        [
            form_table(cases, releases),
            form_table(cases, releases, _guard_of, "guard"),
            form_table(cases, releases, _kernel_of, "kernel"),
            form_table(cases, releases, _depth_of, "depth"),
        ]
    )


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", text.lower()).strip("-")


def write_cases(cases: Sequence[Case], folder: Path) -> dict[str, dict[str, str]]:
    """For each form, the smallest program of its missed and of its false cases, written
    under ``folder/missed/<form>/`` and ``folder/false/<form>/``; what was written."""
    written: dict[str, dict[str, str]] = {MISSED: {}, FALSE: {}}
    # a component (form or guard) missed on its own: a form with a missed case at depth 1
    # under the plain guard, a guard with no case caught. A reproduction for a form is the
    # program with the fewest such other components, then the shallowest, then the smallest:
    # the form, not its company, is what it shows.
    alone = {
        c.program.forms[0][0]
        for c in cases
        if c.outcome == MISSED and c.program.depth == 1 and c.program.guard == PLAIN_GUARD
    }
    caught_guards = {c.program.guard for c in cases if c.outcome == CAUGHT}

    def suspects(program: Program, form: str) -> int:
        others = [name for name in program.form_names() if name != form]
        return sum(name in alone for name in others) + (program.guard not in caught_guards)

    for outcome in (MISSED, FALSE):
        shutil.rmtree(folder / outcome, ignore_errors=True)
        where: dict[str, list[Case]] = defaultdict(list)
        for case in cases:
            if case.outcome == outcome:
                where[case.program.name].append(case)
        for form in BY_NAME:
            holders = [cs for cs in where.values() if form in cs[0].program.form_names()]
            if not holders:
                continue
            smallest = min(
                holders,
                key=lambda cs: (
                    suspects(cs[0].program, form),
                    cs[0].program.depth,
                    cs[0].program.guard != PLAIN_GUARD,
                    cs[0].program.size(),
                ),
            )
            program = smallest[0].program
            target = folder / outcome / _slug(form) / program.name
            program.write(target)
            runs = ", ".join(f"{c.end} {c.layout}" for c in smallest)
            findings = sorted({f for c in smallest for f in c.findings})
            (target / "CASE.md").write_text(
                f"# {outcome}: {program.describe()}\n\n"
                f"- form: {form}; forms bottom to top: {program.forms}\n"
                f"- other parts of this program missed on their own: "
                f"{suspects(program, form)}\n"
                f"- JAX: {smallest[0].truth} ({smallest[0].why})\n"
                f"- runs: {runs}\n"
                f"- the guarded call: {program.app}:{program.call_line}\n"
                f"- findings: {findings or 'none'}\n\n"
                f"Check: `typed-pallas check {program.app}` in this folder; JAX: lower "
                f"`{'.'.join(program.entry)}` for {', '.join(program.lowering_platforms)}.\n"
            )
            written[outcome][form] = str(target.relative_to(folder))
    return written


def write(
    cases: Sequence[Case],
    folder: Path,
    releases: Mapping[str, str],
    header: str,
) -> dict[str, Any]:
    folder.mkdir(parents=True, exist_ok=True)
    data = summary(cases, releases)
    data["reproductions"] = write_cases(cases, folder)
    (folder / "summary.json").write_text(json.dumps(data, indent=1) + "\n")
    cases_json = [
        {
            "program": c.program.name,
            "describe": c.program.describe(),
            "end": c.end,
            "layout": c.layout,
            "truth": c.truth,
            "why": c.why,
            "outcome": c.outcome,
            "findings": c.findings,
        }
        for c in cases
    ]
    (folder / "cases.json").write_text(json.dumps(cases_json) + "\n")
    (folder / "report.md").write_text(f"{header}\n\n{tables(cases, releases)}")
    return data


def layouts_in(cases: Sequence[Case]) -> list[str]:
    return [layout for layout in LAYOUTS if any(c.layout == layout for c in cases)]
