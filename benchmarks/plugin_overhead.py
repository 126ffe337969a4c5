"""mypy + typed-pallas plugin vs mypy alone on real Pallas code: cold, warm, warm after an edit.

Usage (from the repository root)::

    .venv312/bin/python benchmarks/plugin_overhead.py                 # jax's own Pallas ops
    .venv312/bin/python benchmarks/plugin_overhead.py --target tokamax --cold-runs 3

Targets: ``jax-ops`` (``jax/experimental/pallas/ops`` of this venv's jax, -m modules) or any
surveyed package (installed by ``eval.corpus`` into ``--cache-dir``). Both configurations
are the preset of ``typed-pallas check`` (``follow_imports = silent``,
``ignore_missing_imports``, ``check_untyped_defs``; ``eval.mypyrun.write_config``), as in
the corpus evaluation, and differ only in the ``plugins =`` line. Runs are interleaved (plugin, baseline, plugin, ...) so load drift hits both.

* **cold**: empty cache dir (all of jax is analysed too);
* **warm**: the same run again, nothing changed;
* **warm-edit**: one checked file changed (a comment appended, via ``--shadow-file``),
  so mypy re-checks that module and re-reads the rest from its cache.

Prints the median wall time of each and the ratio plugin/baseline; ``--json`` writes them.
What it does not do: measure memory, or time anything inside mypy.
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

from eval.corpus import DEFAULT_CACHE, install, module_of, venv_jax
from eval.mutants import load_sites, package_files
from eval.mypyrun import PLUGIN, run_mypy, write_config


def targets_for(
    name: str, python: str, cache: Path, work: Path
) -> tuple[list[str], Path, Path, int]:
    """(mypy targets, cwd, root, number of files)."""
    if name == "jax-ops":
        _, sp = venv_jax(python)
        files = package_files(sp, "jax", [])
        return [a for f in files for a in ("-m", module_of(f))], work, sp, len(files)
    versions = {s.package: s.version for s in load_sites()}
    if name not in versions:
        raise SystemExit(f"unknown target {name!r}: jax-ops or one of {sorted(versions)}")
    root, _ = install(name, versions[name], cache, python)
    files = package_files(root, name, [])
    return ["--explicit-package-bases", *files], root, root, len(files)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument(
        "--target", action="append", help="jax-ops (default) or a surveyed package; repeatable"
    )
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--warm-runs", type=int, default=5)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="tp-overhead-"))
    configs = {
        "plugin": write_config(work / "plugin.ini", PLUGIN),
        "baseline": write_config(work / "plain.ini", None),
    }
    results: list[dict[str, object]] = []
    out: dict[str, object] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python benchmarks/plugin_overhead.py " + " ".join(argv or sys.argv[1:]),
        "results": results,
    }
    try:
        for target in args.target or ["jax-ops"]:
            targets, cwd, root, nfiles = targets_for(
                target, args.python, args.cache_dir.expanduser(), work
            )
            edit_rel = next(
                t
                for t in (
                    [
                        str(p.relative_to(root))
                        for p in sorted((root / "jax/experimental/pallas/ops").rglob("*.py"))
                    ]
                    if target == "jax-ops"
                    else [t for t in targets if t.endswith(".py")]
                )
                if not t.endswith("__init__.py")
            )
            shadow = work / "shadow.py"
            times: dict[str, dict[str, list[float]]] = {
                c: {"cold": [], "warm": [], "warm-edit": []} for c in configs
            }
            errors: dict[str, int] = {}
            error_sets: dict[str, set[tuple[str, int, str]]] = {}
            for i in range(max(args.cold_runs, 1)):
                for cfg in list(configs) if i % 2 == 0 else list(configs)[::-1]:
                    cache = work / f"cache-{cfg}"
                    shutil.rmtree(cache, ignore_errors=True)
                    common = dict(
                        cwd=cwd, root=root, cache_dir=cache, config=configs[cfg], python=args.python
                    )
                    r = run_mypy(targets, **common)
                    if r.crashed or r.blocked:
                        raise SystemExit(
                            f"mypy {'crashed' if r.crashed else 'stopped'} ({cfg}):\n{r.tail}"
                        )
                    times[cfg]["cold"].append(r.seconds)
                    errors[cfg] = len([d for d in r.diagnostics if d.severity == "error"])
                    error_sets[cfg] = {
                        (d.relpath, d.line, d.message)
                        for d in r.diagnostics
                        if d.severity == "error" and d.code != "pallas-platform"
                    }
                    if i == 0:
                        for j in range(args.warm_runs):
                            times[cfg]["warm"].append(run_mypy(targets, **common).seconds)
                            shadow.write_text(
                                (root / edit_rel).read_text() + f"\n# edit {cfg} {j}\n"
                            )
                            times[cfg]["warm-edit"].append(
                                run_mypy(targets, shadows={edit_rel: shadow}, **common).seconds
                            )
            # the plugin must not change mypy's other verdicts on real code
            changed = sorted(error_sets["plugin"] ^ error_sets["baseline"])
            res = {
                "target": target,
                "files": nfiles,
                "edited_file": edit_rel,
                "errors_reported": errors,
                "other_errors_changed_by_plugin": [f"{f}:{ln}: {m}" for f, ln, m in changed],
            }
            print(
                f"{target}: {nfiles} files; mypy errors reported: {errors}; "
                f"non-pallas errors that differ with the plugin: {len(changed)}"
            )
            for f, ln, m in changed[:5]:
                print(
                    f"    {'+' if (f, ln, m) in error_sets['plugin'] else '-'} {f}:{ln}: {m[:120]}"
                )
            print(f"  {'':10s} {'baseline s':>10s} {'plugin s':>10s} {'ratio':>6s}  runs")
            for mode in ("cold", "warm", "warm-edit"):
                b, p = (
                    statistics.median(times["baseline"][mode]),
                    statistics.median(times["plugin"][mode]),
                )
                res[mode] = {
                    "baseline_median_s": round(b, 3),
                    "plugin_median_s": round(p, 3),
                    "ratio": round(p / b, 3),
                    "runs": len(times["plugin"][mode]),
                    "baseline_all": [round(x, 2) for x in times["baseline"][mode]],
                    "plugin_all": [round(x, 2) for x in times["plugin"][mode]],
                }
                print(
                    f"  {mode:10s} {b:10.2f} {p:10.2f} {p / b:6.2f}  {len(times['plugin'][mode])}"
                )
            results.append(res)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    if args.json:
        args.json.write_text(json.dumps(out, indent=1) + "\n")
        print(f"JSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
