"""How the plugin's cost grows with the number of Pallas call sites in a module.

Usage (from the repository root)::

    .venv312/bin/python benchmarks/plugin_scaling.py            # 10, 100 and 1000 sites
    .venv312/bin/python benchmarks/plugin_scaling.py --base 20 --runs 5

Generates one synthetic module per size (1x, 10x, 100x ``--base`` call sites). Each site
is a TPU kernel (``pltpu.sync_copy`` in its body: evidence) built by ``pl.pallas_call``
in an annotated function; the params are passed in rotation inline, through a local
variable, or under an ``if jax.default_backend() == "tpu":`` guard, and every tenth site
has Triton params (a real mismatch, so reporting is timed too). The cache is warmed once
on a module with the same imports, so each timed run re-checks only the synthetic
module (a fresh comment changes its hash). Plugin and baseline runs are interleaved.

Prints, per size: median (and min) wall time with and without the plugin, the
difference, the difference per call site, and the errors the plugin reported (must be
one in ten sites). The plugin's code digest is part of its version, so an edit to the
plugin during a run invalidates mypy's cache and shows as one slow run: read the mins.
Linear means the per-site difference stays flat from 10x to 100x.
What it does not do: spread sites over many modules (``plugin_overhead.py`` uses real code).
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from eval.mypyrun import PLUGIN, run_mypy, write_config

HEADER = '''"""Synthetic Pallas module for the scaling benchmark."""
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton

'''

SITE = """
def kernel_{i}(x_ref, o_ref):
    pltpu.sync_copy(x_ref, o_ref)


def call_{i}(x: jax.Array) -> jax.Array:
{body}
"""

BODIES = (
    # inline constructor
    """    return pl.pallas_call(kernel_{i}, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                          compiler_params={cls}(vmem_limit_bytes={i}))(x)""",
    # local variable
    """    params = {cls}()
    f = pl.pallas_call(kernel_{i}, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), compiler_params=params)
    return f(x)""",
    # guarded
    """    if jax.default_backend() == "tpu":
        return pl.pallas_call(kernel_{i}, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
                              compiler_params={cls}())(x)
    return x""",
)


def module_text(n: int, salt: str) -> str:
    parts = [HEADER]
    for i in range(n):
        wrong = i % 10 == 9
        cls = "pltriton.CompilerParams" if wrong else "pltpu.CompilerParams"
        body = BODIES[i % 3].format(i=i, cls=cls)
        if wrong and i % 3 == 0:
            body = body.replace(f"(vmem_limit_bytes={i})", f"(num_warps={4})")
        parts.append(SITE.format(i=i, body=body))
    parts.append(f"\n# {salt}\n")
    return "".join(parts)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", type=int, default=10, help="call sites at 1x")
    ap.add_argument("--scales", default="1,10,100")
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="tp-scaling-"))
    configs = {
        "plugin": write_config(work / "plugin.ini", PLUGIN),
        "baseline": write_config(work / "plain.ini", None),
    }
    rows: list[dict[str, object]] = []
    out: dict[str, object] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python benchmarks/plugin_scaling.py " + " ".join(argv or sys.argv[1:]),
        "rows": rows,
    }
    try:
        # warm both caches on the imports alone
        (work / "warm.py").write_text(HEADER)
        for cfg, ini in configs.items():
            r = run_mypy(
                ["warm.py"],
                cwd=work,
                root=work,
                cache_dir=work / f"cache-{cfg}",
                config=ini,
                python=args.python,
            )
            if r.crashed or r.blocked:
                raise SystemExit(r.tail)
        print("median (min) of the runs; a spike in one run is usually a cache invalidation")
        print(
            f"{'sites':>6s} {'baseline s':>14s} {'plugin s':>14s} {'diff s':>7s} {'ms/site':>8s} {'min ms/site':>11s} {'errors':>7s}"
        )
        for scale in (int(s) for s in args.scales.split(",")):
            n = args.base * scale
            times: dict[str, list[float]] = {c: [] for c in configs}
            errors = 0
            for k in range(args.runs):
                for cfg in list(configs) if k % 2 == 0 else list(configs)[::-1]:
                    (work / "synth.py").write_text(module_text(n, f"{cfg} {k} {time.time()}"))
                    r = run_mypy(
                        ["synth.py"],
                        cwd=work,
                        root=work,
                        cache_dir=work / f"cache-{cfg}",
                        config=configs[cfg],
                        python=args.python,
                    )
                    if r.crashed or r.blocked:
                        raise SystemExit(f"mypy {'crashed' if r.crashed else 'stopped'}:\n{r.tail}")
                    times[cfg].append(r.seconds)
                    if cfg == "plugin":
                        errors = len(r.platform_errors)
            b, p = statistics.median(times["baseline"]), statistics.median(times["plugin"])
            bmin, pmin = min(times["baseline"]), min(times["plugin"])
            row = {
                "sites": n,
                "baseline_median_s": round(b, 3),
                "plugin_median_s": round(p, 3),
                "baseline_min_s": round(bmin, 3),
                "plugin_min_s": round(pmin, 3),
                "ms_per_site_min": round(1e3 * (pmin - bmin) / n, 3),
                "diff_s": round(p - b, 3),
                "ms_per_site": round(1e3 * (p - b) / n, 3),
                "ratio": round(p / b, 3),
                "plugin_errors": errors,
                "expected_errors": n // 10,
                "baseline_all": [round(x, 2) for x in times["baseline"]],
                "plugin_all": [round(x, 2) for x in times["plugin"]],
            }
            rows.append(row)
            print(
                f"{n:6d} {b:7.2f} ({bmin:5.2f}) {p:7.2f} ({pmin:5.2f}) {p - b:7.2f} {row['ms_per_site']:8.2f} "
                f"{row['ms_per_site_min']:11.2f} {errors:4d}/{n // 10}"
            )
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
        print(f"JSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
