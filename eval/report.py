"""Render a corpus evaluation JSON (``python -m eval.corpus``) as Markdown for docs/RESULTS.md.

Usage::

    python -m eval.report eval/results/corpus-py312.json

What it does not do: run anything; it only reads the JSON.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def pct(d: dict[str, int] | list[int]) -> str:
    c, n = (d["caught"], d["mutants"]) if isinstance(d, dict) else d
    return f"{c}/{n} ({100 * c / n:.0f}%)" if n else "-"


def render(data: dict[str, Any]) -> str:
    s = data["summary"]
    if data.get("only_library_calls"):
        return "\n".join(library_section(data, s["library_calls"])) + "\n"
    m = s["mutation"]
    out = [
        f"Run {data['date']}: `{data['command']}` (Python {data['python']}, jax {data['jax']}, "
        f"mypy {data['mypy']}, flags `{' '.join(data['mypy_flags'])}`, {data['host']}); "
        f"wall time {s['wall_seconds']:.0f} s ({s['mypy_seconds']['baseline_cold']:.0f} s unmodified code, "
        f"{s['mypy_seconds']['mutant_rounds']:.0f} s for {s['mypy_seconds']['rounds']} mutant rounds).",
        "",
        "| package | files | call sites | mutated sites | crashes | errors on unmodified code | mutants caught | with evidence | without evidence |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for p in data["packages"]:
        if p.get("skipped"):
            out.append(
                f"| {p['package']} | | {p['call_sites']} | | | skipped: {p['skipped']} | | | |"
            )
            continue
        out.append(
            f"| {p['package']} | {p['files']} | {p['call_sites']} | {p['mutated_sites']} | "
            f"{p['crashes'] + p['blocked_runs']} | {len(p['false_positives'])} | "
            f"{pct([p['caught'], p['mutants']])} | {pct(p['caught_with_evidence'])} | "
            f"{pct(p['caught_without_evidence'])} |"
        )
    out.append(
        f"| **total** | {s['files']} | {s['call_sites']} | {s['mutated_sites']} | {s['crashes'] + s['blocked_runs']} | "
        f"{s['false_positives']} | **{pct(m['all'])}** | **{pct(m['with_evidence'])}** | "
        f"**{pct(m['without_evidence'])}** |"
    )
    out += ["", "| mutants | caught |", "|---|---|"]
    rows = [
        ("platform swaps (tpu <-> gpu)", m["platform_swaps"]),
        ("  with evidence", m["platform_swaps_with_evidence"]),
        ("  without evidence", m["platform_swaps_without_evidence"]),
        ("with evidence, in files mypy checks", m.get("with_evidence_in_files_mypy_checks")),
        (
            "in files that opt out of mypy (`# mypy: ignore-errors`)",
            m.get("in_files_that_opt_out_of_mypy"),
        ),
        (
            "  caught with `typed-pallas check --check-opted-out`",
            m.get("in_files_that_opt_out_of_mypy_caught_with_check_opted_out"),
        ),
        (
            "  with evidence, caught with `--check-opted-out`",
            m.get("in_files_that_opt_out_of_mypy_with_evidence_caught_with_check_opted_out"),
        ),
        ("backend swaps (triton <-> mosaic_gpu)", m["backend_swaps"]),
        ("kernel-body evidence", m.get("body_evidence")),
        ("call-argument evidence only", m.get("args_only_evidence")),
        ("call has `**kwargs`", m.get("call_with_kwargs")),
        ("call passes `interpret=` (not literally False)", m.get("call_with_interpret")),
        (
            "neither, params inline or in a local variable, body evidence",
            m.get("plain_call_body_evidence"),
        ),
        ("caught by the plugin (`pallas-platform`)", m.get("caught_by_plugin")),
        (
            "caught by the stubs only (`arg-type` on `compiler_params`)",
            m.get("caught_by_stubs_only"),
        ),
        ("with the right message (JAX's text or its backend twin)", m["right_message"]),
        ("mypy's default flags (no `--check-untyped-defs`), all", m["default_flags"]["all"]),
        ("mypy's default flags, with evidence", m["default_flags"]["with_evidence"]),
    ]
    out += [f"| {k} | {pct(v)} |" for k, v in rows if v]
    out += [
        "",
        "By swap: " + ", ".join(f"{k} {pct(v)}" for k, v in m["by_pair"].items()) + ".",
        "By how the params reach the call: "
        + ", ".join(f"{k} {pct(v)}" for k, v in m["by_how"].items())
        + ".",
    ]
    clis = [p for p in data["packages"] if p.get("cli")]
    if clis:
        agree = sum(1 for p in clis if p["cli"].get("agrees_with_mypy"))
        out.append(
            f"`typed-pallas check --output json` reported exactly what mypy + plugin reported on "
            f"{agree}/{len(clis)} packages (jax's ops are checked by module name, not by the CLI)."
        )
    d = s.get("dispatch")
    if d is not None:
        out += dispatch_section(data, d)
    if "library_calls" in s:
        out += ["", *library_section(data, s["library_calls"])]
    fps = [(p["package"], f) for p in data["packages"] for f in p["false_positives"]]
    out += ["", f"Errors on unmodified code: {len(fps)}."]
    out += [f"- {pkg} `{f['where']}` [{f.get('source')}]: {f['message']}" for pkg, f in fps]
    if "false_positives_with_check_opted_out" in s:
        opted = [
            (p["package"], where)
            for p in data["packages"]
            for where in p.get("false_positives_with_check_opted_out", [])
        ]
        out += [
            "",
            f"`pallas-platform` errors on the unmodified files that opt out of mypy "
            f"({s['files_that_opt_out_of_mypy']} files), checked with `--check-opted-out`: "
            f"{len(opted)}.",
        ]
        out += [f"- {pkg} `{where}`" for pkg, where in opted]
    return "\n".join(out) + "\n"


#: the dispatch-site table's rows (``eval.corpus.DISPATCH_ROWS``) and their titles
ROW_TITLES = {
    "guard": "guard's platform string swapped (`default_backend()`, a variable, a helper call, a condition variable)",
    "device-guard": "guard on a device object's `.platform` (`jax.devices()[0]`, a mesh's devices, `get_default_device()`, a `jax.Device` parameter, `any()` over devices)",
    "guard-helper": "guard helper's platform string swapped (counted at the ifs that call it)",
    "predicate": "platform predicate (`supported_on(device)`): its platform string swapped",
    "registration": "registration (`@kernel_registry.register(..., Backend.TPU)`): the platform member swapped",
    "table": "platform table: two keys swapped",
    "platform_dependent": "`lax.platform_dependent` branch keyword renamed, or two branches swapped",
}
WRAPPER_TITLE = (
    "package wrapper call: params class swapped (the params swaps above, at wrapper calls)"
)


def dispatch_section(data: dict[str, Any], d: dict[str, Any]) -> list[str]:
    out = [
        "",
        "Dispatch-site mutants (caught: a new `pallas-platform` error in the guard statement and "
        "the region it decides, the predicate and the class methods it speaks for, the "
        "registration, the table and its use, or the `platform_dependent` call). A mutant is a "
        "real bug when the region its decision lets run on the other platform reaches a kernel "
        "that cannot lower there (params or the survey's evidence, interpret mode off, no guard "
        "of its own); only real bugs are scored:",
        "",
        "| form | mutants | real bugs | caught | not bugs, caught anyway |",
        "|---|---|---|---|---|",
    ]
    for k, v in d.get("by_row", {}).items():
        out.append(
            f"| {ROW_TITLES.get(k, k)} | {v['mutants']} | {v['real_bugs']} | "
            f"{pct([v['caught'], v['real_bugs']])} | {v['caught_not_bugs']} |"
        )
    w = d["by_kind"]["wrapper"]
    out.append(f"| {WRAPPER_TITLE} | {w['mutants']} | - | {pct(w)} | - |")
    out += [
        "",
        "Why mutants are not real bugs: "
        + "; ".join(f"{k} {n}" for k, n in d.get("not_bugs", {}).items())
        + ".",
        "By form: " + ", ".join(f"{k} {pct(v)}" for k, v in d["by_form"].items()) + ".",
        f"Errors on the unmodified files of the dispatch runs (Pallas files plus the sites' files): "
        f"{d['false_positives']}; crashes: {d['crashes']} ({d['runs']} mypy runs, {d['mypy_seconds']:.0f} s).",
        "",
        "Dispatch sites found but not mutated: "
        + "; ".join(f"{k} {n}" for k, n in d["sites_skipped"].items())
        + ".",
        "",
        "The real-bug mutants (the JSON lists the others, with why each is none):",
        "",
        "| mutant | where | caught |",
        "|---|---|---|",
    ]
    for p in data["packages"]:
        for m in p.get("dispatch_mutants", []):
            if m.get("real_bug", True):
                out.append(
                    f"| {m['kind']}/{m['form']} ({m['scope']}): `{m['detail']}` | "
                    f"{p['package']} `{m['where']}` | {'yes' if m['caught'] else 'no'} |"
                )
    return out


FORM_TITLES = {
    "guard": '`if jax.default_backend() == "<other>":` inserted on the call\'s line',
    "swap": "the platform string of a guard that decides the call, swapped",
    "config": 'the call\'s module configured `platforms = ["<other>"]`',
    "all": "all forms",
}


def library_section(data: dict[str, Any], s: dict[str, Any]) -> list[str]:
    """Step 5: library calls, their mutants (real bugs proven by lowering), findings."""
    out = [
        f"Run {data['date']}: `{data['command']}` (Python {data['python']}, jax {data['jax']}, "
        f"mypy {data['mypy']}, {data['host']}); {s['runs']} mypy runs, {s['mypy_seconds']:.0f} s.",
        "",
        "| source | libraries installed next to it | files read / checked | library calls with a requirement | library calls without one | findings on unmodified code | crashes |",
        "|---|---|---|---|---|---|---|",
    ]
    quiet = []
    for r in data["library_sources"]:
        if not (
            r["calls"] or r["calls_without_requirement"] or r["libraries"] or r["skipped"] is None
        ):
            quiet.append(r)
            continue
        if r["origin"] == "PyPI":
            name = f"{r['source']}=={r['version']}"
        else:
            name = f"{r['source']} ({r['origin']})"
        libs = ", ".join(r["libraries"]) or "-"
        by_lib: dict[str, int] = {}
        for c in r["calls"]:
            by_lib[c["library"]] = by_lib.get(c["library"], 0) + 1
        calls = ", ".join(f"{k} {v}" for k, v in sorted(by_lib.items())) or "0"
        without = ", ".join(f"{k} {v}" for k, v in sorted(r["calls_without_requirement"].items()))
        out.append(
            f"| {name} | {libs} | {r['files_scanned']} / {r['files_checked']} | {calls} | "
            f"{without or '0'} | {len(r['findings_on_unmodified'])} | {r['crashes']} |"
        )
    if quiet:
        out += [
            "",
            f"No library call at all in the {len(quiet)} other sources read: "
            + ", ".join(
                f"{r['source']}=={r['version']}" if r["origin"] == "PyPI" else r["source"]
                for r in quiet
            )
            + ".",
        ]
    libraries = sorted({lib for row in s["score"].values() for lib in row if lib != "all"})
    out += [
        "",
        f"Mutants: {s['mutants']}; real bugs by the reader's platform: {s['real_bugs']}; "
        f"of those, proven by lowering: {s['real_bugs_proven']}. Caught, real bugs proven "
        "by lowering only (a new `pallas-platform` error on the call):",
        "",
        "| form | " + " | ".join(libraries) + " | all |",
        "|---|" + "---|" * (len(libraries) + 1),
    ]
    for form in ("guard", "swap", "config", "all"):
        row = s["score"].get(form, {})
        cells = [pct(row[lib]) if lib in row else "-" for lib in [*libraries, "all"]]
        out.append(f"| {FORM_TITLES[form]} | " + " | ".join(cells) + " |")
    unproven = s["score_unproven_too"].get("all", {})
    if unproven.get("all"):
        out.append("")
        out.append(
            "Counting real bugs whose callee was not lowered too: "
            + ", ".join(f"{lib} {pct(c)}" for lib, c in sorted(unproven.items()))
            + f" (not lowered: {', '.join(f'`{c}`' for c in s['real_bugs_not_lowered']) or 'none'})."
        )
    if s["not_real"]:
        out += [
            "",
            "Mutants that are no real bug (not counted): "
            + "; ".join(f"{k} {v}" for k, v in sorted(s["not_real"].items()))
            + f". Caught among them: {s['caught_not_real']}.",
        ]
    if s["not_mutated"]:
        out.append(
            "Not mutated: "
            + "; ".join(f"{k} {v}" for k, v in sorted(s["not_mutated"].items()))
            + "."
        )
    missed = [
        (r["source"], m)
        for r in data["library_sources"]
        for m in r["mutants"]
        if m["real_bug"] and not m["caught"]
    ]
    if missed:
        out += ["", "| real bug missed | where | proven |", "|---|---|---|"]
        out += [
            f"| {m['form']}: `{m['detail']}` | {src} `{m['where']}` | "
            f"{'yes' if m.get('proven') else 'not lowered' if m.get('proven') is None else 'no'} |"
            for src, m in missed
        ]
    findings = [
        (r["source"], f) for r in data["library_sources"] for f in r["findings_on_unmodified"]
    ]
    out += ["", f"`pallas-platform` errors on the unmodified sources: {len(findings)}."]
    out += [f"- {src} `{f['where']}`: {f['message']}" for src, f in findings]
    return out


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    path = Path(args[0]) if args else Path(__file__).with_name("results") / "corpus-py312.json"
    sys.stdout.write(render(json.loads(path.read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
