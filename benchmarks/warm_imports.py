"""What a warm mypy run imports because of the typed-pallas plugin, and what that costs.

Usage (from the repository root)::

    .venv312/bin/python benchmarks/warm_imports.py --python .venv312-wheel/bin/python
    .venv312/bin/python benchmarks/warm_imports.py --target tokamax --runs 9 --bytecode none

Prepares a target of ``plugin_overhead.py`` (default ``library-calls``), fills one cache
with the plugin and one without, then runs mypy warm (nothing changed) ``--runs`` times
per configuration, alternating, with ``PYTHONPROFILEIMPORTTIME=1`` (Python's
``-X importtime``); with ``--edit``, each of these runs sees the target's edited file
with a new comment appended (``--shadow-file``), so mypy checks that module again and
the plugin's checks run. Prints, for the modules only the plugin's runs import, the median of
each module's own import time (without its imports'), their sum, and the median total
import time of both configurations. ``--bytecode`` as in ``plugin_overhead.py``.

What it does not do: time anything but imports (``plugin_overhead.py`` times whole
runs), or attribute the time of modules both configurations import.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from plugin_overhead import (  # this script's folder is on sys.path, as for any script
    CONFIGS,
    Target,
    alternating,
    package_folders,
    set_bytecode,
    targets_for,
)

from eval.corpus import DEFAULT_CACHE
from eval.mypyrun import PLUGIN, clean_env, write_config
from typed_pallas_mypy.cli.findings import mypy_command

#: one line of ``-X importtime``: self and cumulative microseconds, then the module
IMPORT_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| +(\S+)\s*$")


def own_import_times(stderr: str) -> dict[str, int]:
    """module -> its own import time in microseconds, from ``-X importtime`` output."""
    found: dict[str, int] = {}
    for line in stderr.splitlines():
        match = IMPORT_LINE.match(line)
        if match is not None:
            found[match.group(3)] = int(match.group(1))
    return found


def run(
    target: Target,
    cache: Path,
    config: Path,
    python: str,
    importtime: bool,
    shadow: Path | None = None,
) -> str:
    """One mypy run over ``target`` (its edited file replaced by ``shadow``); its stderr."""
    arguments = list(target.arguments)
    if shadow is not None:
        arguments[:0] = ["--shadow-file", str(target.root / target.edited), str(shadow)]
    command = mypy_command(str(config), str(cache), arguments, python=python)
    env = clean_env(target.pythonpath)
    if importtime:
        env["PYTHONPROFILEIMPORTTIME"] = "1"
    completed = subprocess.run(command, cwd=target.cwd, env=env, capture_output=True, text=True)
    if completed.returncode not in (0, 1):
        raise SystemExit(f"mypy stopped ({completed.returncode}):\n{completed.stderr[-3000:]}")
    return completed.stderr


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--target", default="library-calls")
    ap.add_argument("--runs", type=int, default=9)
    ap.add_argument("--bytecode", choices=("written", "none"), default="written")
    ap.add_argument("--edit", action="store_true", help="warm runs after an edit")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    python = os.path.abspath(args.python) if os.sep in args.python else args.python
    pyc = set_bytecode(args.bytecode, package_folders(python))
    work = Path(tempfile.mkdtemp(prefix="tp-imports-"))
    try:
        target = targets_for(args.target, python, args.cache_dir.expanduser(), work)
        configs = {
            "plugin": write_config(work / "plugin.ini", PLUGIN),
            "baseline": write_config(work / "plain.ini", None),
        }
        caches = {c: work / f"cache-{c}" for c in CONFIGS}
        for config in CONFIGS:
            run(target, caches[config], configs[config], python, importtime=False)
        times: dict[str, list[dict[str, int]]] = {c: [] for c in CONFIGS}
        original = (target.root / target.edited).read_text()
        for number in range(args.runs):
            for config in alternating(number):
                shadow = None
                if args.edit:
                    shadow = work / "shadow.py"
                    shadow.write_text(f"{original}\n# edit {config} {number}\n")
                stderr = run(target, caches[config], configs[config], python, True, shadow)
                times[config].append(own_import_times(stderr))
    finally:
        shutil.rmtree(work, ignore_errors=True)

    baseline_modules = set().union(*times["baseline"])
    extra = sorted(set().union(*times["plugin"]) - baseline_modules)
    medians = {m: statistics.median(run.get(m, 0) for run in times["plugin"]) for m in extra}
    totals = {c: statistics.median(sum(run.values()) for run in times[c]) for c in CONFIGS}
    print(
        f"{args.target}, bytecode {args.bytecode} ({pyc} .pyc files), {args.runs} warm runs "
        f"{'after an edit ' if args.edit else ''}per configuration; modules only the "
        f"plugin's runs import: {len(extra)}"
    )
    for module in sorted(extra, key=lambda m: -medians[m]):
        print(f"  {module:50s} {medians[module] / 1000:7.2f} ms")
    extra_total = sum(medians.values()) / 1000
    print(f"  {'sum of their own import times (medians)':50s} {extra_total:7.2f} ms")
    print(
        f"  all imports, median total: plugin {totals['plugin'] / 1000:.1f} ms, "
        f"baseline {totals['baseline'] / 1000:.1f} ms"
    )
    if args.json:
        out = {
            "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
            "command": "python benchmarks/warm_imports.py " + " ".join(argv or sys.argv[1:]),
            "target": args.target,
            "bytecode": args.bytecode,
            "edit": args.edit,
            "pyc_files": pyc,
            "runs": args.runs,
            "plugin_only_modules_ms": {m: round(medians[m] / 1000, 3) for m in extra},
            "plugin_only_sum_ms": round(extra_total, 2),
            "all_imports_median_ms": {c: round(totals[c] / 1000, 1) for c in CONFIGS},
        }
        args.json.write_text(json.dumps(out, indent=1) + "\n")
        print(f"JSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
