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
    fps = [(p["package"], f) for p in data["packages"] for f in p["false_positives"]]
    out += ["", f"Errors on unmodified code: {len(fps)}."]
    out += [f"- {pkg} `{f['where']}` [{f.get('source')}]: {f['message']}" for pkg, f in fps]
    return "\n".join(out) + "\n"


KIND_TITLES = {
    "guard": "guard's platform string swapped (`if`, `elif`, early exit, condition variable)",
    "guard-helper": "guard helper's platform string swapped (counted at the ifs that call it)",
    "table": "platform table: two keys swapped",
    "platform_dependent": "`lax.platform_dependent` branch keyword renamed, or two branches swapped",
    "wrapper": "package wrapper call: params class swapped (the params swaps above, at wrapper calls)",
}


def dispatch_section(data: dict[str, Any], d: dict[str, Any]) -> list[str]:
    out = [
        "",
        "Dispatch-site mutants (caught: a new `pallas-platform` error in the guard statement and "
        "the region it decides, the table and its use, or the `platform_dependent` call):",
        "",
        "| kind | mutants | caught |",
        "|---|---|---|",
    ]
    for k, v in d["by_kind"].items():
        out.append(
            f"| {KIND_TITLES.get(k, k)} | {v['mutants']} | {pct(v) if v['mutants'] else '-'} |"
        )
    out += [
        "",
        "By form: " + ", ".join(f"{k} {pct(v)}" for k, v in d["by_form"].items()) + ".",
        f"Errors on the unmodified files of the dispatch runs (Pallas files plus the sites' files): "
        f"{d['false_positives']}; crashes: {d['crashes']} ({d['runs']} mypy runs, {d['mypy_seconds']:.0f} s).",
        "",
        "Dispatch sites found but not mutated: "
        + "; ".join(f"{k} {n}" for k, n in d["sites_skipped"].items())
        + ".",
        "",
        "| mutant | where | caught |",
        "|---|---|---|",
    ]
    for p in data["packages"]:
        for m in p.get("dispatch_mutants", []):
            out.append(
                f"| {m['kind']}/{m['form']} ({m['scope']}): `{m['detail']}` | {p['package']} `{m['where']}` | "
                f"{'yes' if m['caught'] else 'no'} |"
            )
    return out


def main(argv: list[str] | None = None) -> int:
    args = argv if argv is not None else sys.argv[1:]
    path = Path(args[0]) if args else Path(__file__).with_name("results") / "corpus-py312.json"
    sys.stdout.write(render(json.loads(path.read_text())))
    return 0


if __name__ == "__main__":
    sys.exit(main())
