"""mypy's daemon with the typed-pallas plugin vs the daemon alone: edit-to-diagnostics.

Usage (from the repository root)::

    .venv312/bin/python benchmarks/daemon_overhead.py                  # jax's ops as a project
    .venv312/bin/python benchmarks/daemon_overhead.py --rounds 9 --json benchmarks/results/daemon.json

The target is a copy of this venv's ``jax/experimental/pallas/ops`` (42 files) in a
temporary folder, checked as the project's own code (``--explicit-package-bases``; its
absolute imports still name the installed jax), with the preset of ``typed-pallas
check`` but ``follow_imports = normal`` (the daemon supports no ``silent``), once with
the plugin and once without. Two
daemons run side by side, each with its own cache and status file. After a first
``dmypy run`` (timed apart: the daemon's cold start), each round edits the body of one
function of one ops file (its first statement becomes ``_edit = N``, N changing every
round: the module's interface does not change) and times ``dmypy run`` on each daemon,
the order alternating every round so that drift in the host's load hits both. Printed:
the medians of the edit-to-diagnostics times and their ratio plugin / daemon alone,
both measured in this run, the findings of the last round (they must not change), and
where the time goes: the medians of mypy's own per-update figures
(``--perf-stats-file``): the whole fine-grained update, and the type check of the
edited module, inside which the plugin's hooks run.

``--one-at-a-time`` measures the way a user runs the daemon: one daemon alive at a time.
In each of ``--blocks`` blocks, each configuration (the order alternating per block)
gets a fresh daemon, whose cold start is not timed, then ``--rounds`` body edits, and
is stopped before the other starts. Two daemons alive side by side share the host's
caches and memory: the one that ran second in a round finds them holding the other's
data, which costs the larger process more.

What it does not do: assert a time, measure memory, or keep the daemons (both are
stopped at the end, also on an error).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from eval.corpus import venv_jax
from eval.mypyrun import PLUGIN, clean_env

CONFIGS: tuple[str, ...] = ("plugin", "baseline")
#: mypy's per-update figures kept (``dmypy run --perf-stats-file``): the fine-grained
#: update, and the type check of the modules it processed (the edited one)
PERF_KEYS: tuple[str, ...] = ("fg_update_time", "typecheck_time")
OPS = Path("jax/experimental/pallas/ops")


def copy_ops(python: str, work: Path) -> tuple[Path, list[str], str]:
    """The project folder, its files (relative) and the file the rounds edit."""
    _, site = venv_jax(python)
    project = work / "project"
    shutil.copytree(site / OPS, project / "jax_ops", ignore=shutil.ignore_patterns("__pycache__"))
    files = sorted(str(p.relative_to(project)) for p in (project / "jax_ops").rglob("*.py"))
    edited = "jax_ops/tpu/flash_attention.py"
    if edited not in files:
        edited = next(f for f in files if not f.endswith("__init__.py"))
    return project, files, edited


def _keep(kept: dict[str, list[float]], figures: dict[str, float]) -> None:
    for key, value in figures.items():
        kept[key].append(value)


def _edit(path: Path, text: str) -> None:
    """Write ``text`` with an mtime at least a second later than the file's: mypy's
    daemon compares whole-second mtimes (with the size) to find changed files."""
    old = path.stat().st_mtime_ns
    path.write_text(text)
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, max(stat.st_mtime_ns, old + 1_000_000_000)))


def body_edit(source: str, round_number: int) -> str:
    """``source`` with the first statement of its first top-level function's body
    preceded by ``_edit = <round_number>`` (a body edit: no interface changes)."""
    tree = ast.parse(source)
    func = next(
        node for node in tree.body if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    )
    first = func.body[0]
    # a decorated statement starts at its first decorator, not at its ``def``
    decorators = getattr(first, "decorator_list", [])
    start = min([first.lineno, *(d.lineno for d in decorators)])
    lines = source.splitlines(keepends=True)
    indent = lines[first.lineno - 1][: first.col_offset]
    lines.insert(start - 1, f"{indent}_edit = {round_number}\n")
    return "".join(lines)


class Daemon:
    def __init__(self, name: str, work: Path, project: Path, files: list[str], python: str) -> None:
        self.name = name
        self.project = project
        self.files = files
        self.python = python
        self.status = work / f"{name}.status.json"
        self.cache = work / f"{name}.cache"
        self.config = work / f"{name}.ini"
        self.stats = work / f"{name}.perf.json"
        #: mypy's figures (``PERF_KEYS``, seconds) for the last run; empty when not written
        self.last_perf: dict[str, float] = {}
        self.config.write_text(
            "[mypy]\n"
            + (f"plugins = {PLUGIN}\n" if name == "plugin" else "")
            + "ignore_missing_imports = True\ncheck_untyped_defs = True\nshow_error_codes = True\n"
        )

    def run(self) -> tuple[float, list[str]]:
        start = time.perf_counter()
        done = subprocess.run(
            [
                self.python,
                "-m",
                "mypy.dmypy",
                "--status-file",
                str(self.status),
                "run",
                "--timeout",
                "900",
                "--perf-stats-file",
                str(self.stats),
                "--",
                "--config-file",
                str(self.config),
                "--cache-dir",
                str(self.cache),
                "--explicit-package-bases",
                *self.files,
            ],
            cwd=self.project,
            env=clean_env(),
            capture_output=True,
            text=True,
            timeout=1800,
            check=False,
        )
        seconds = time.perf_counter() - start
        if done.returncode not in (0, 1) or "Traceback" in done.stderr:
            raise SystemExit(f"dmypy ({self.name}) failed:\n{done.stdout}\n{done.stderr}")
        findings = [line for line in done.stdout.splitlines() if "[pallas-platform]" in line]
        try:
            stats = json.loads(self.stats.read_text())
            self.last_perf = {key: float(stats[key]) for key in PERF_KEYS}
        except (OSError, ValueError, KeyError, TypeError):
            self.last_perf = {}
        self.stats.unlink(missing_ok=True)
        return seconds, findings

    def stop(self) -> None:
        subprocess.run(
            [self.python, "-m", "mypy.dmypy", "--status-file", str(self.status), "kill"],
            cwd=self.project,
            env=clean_env(),
            capture_output=True,
            timeout=60,
            check=False,
        )


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="daemon_overhead", description=__doc__.split("\n\n")[0])
    ap.add_argument("--python", default=sys.executable, help="interpreter whose mypy is used")
    ap.add_argument("--rounds", type=int, default=9, help="edit rounds (default: %(default)s)")
    ap.add_argument("--json", type=Path, default=None, help="where to write the results")
    ap.add_argument(
        "--one-at-a-time",
        action="store_true",
        help="one daemon alive at a time, in blocks of --rounds edits (see the docstring)",
    )
    ap.add_argument(
        "--blocks", type=int, default=3, help="with --one-at-a-time (default: %(default)s)"
    )
    args = ap.parse_args(argv)
    if args.rounds < 1 or args.blocks < 1:
        ap.error("--rounds and --blocks must be at least 1")
    work = Path(tempfile.mkdtemp(prefix="typed-pallas-daemon-"))
    daemons: dict[str, Daemon] = {}
    try:
        project, files, edited = copy_ops(args.python, work)
        original = (project / edited).read_text()
        path = project / edited
        times: dict[str, list[float]] = {name: [] for name in CONFIGS}
        perf: dict[str, dict[str, list[float]]] = {
            name: {key: [] for key in PERF_KEYS} for name in CONFIGS
        }
        findings: dict[str, list[str]] = {}
        if args.one_at_a_time:
            first: dict[str, float] = {}
            for block in range(args.blocks):
                order = CONFIGS if block % 2 == 0 else CONFIGS[::-1]
                for name in order:
                    path.write_text(original)
                    daemon = daemons[name] = Daemon(name, work, project, files, args.python)
                    try:
                        first.setdefault(name, daemon.run()[0])
                        for number in range(args.rounds):
                            _edit(path, body_edit(original, number + 1))
                            seconds, findings[name] = daemon.run()
                            times[name].append(seconds)
                            _keep(perf[name], daemon.last_perf)
                    finally:
                        daemon.stop()
                        daemon.status.unlink(missing_ok=True)  # the next one starts afresh
                        shutil.rmtree(daemon.cache, ignore_errors=True)
        else:
            daemons = {name: Daemon(name, work, project, files, args.python) for name in CONFIGS}
            first = {name: daemon.run()[0] for name, daemon in daemons.items()}
            for number in range(args.rounds):
                _edit(path, body_edit(original, number + 1))
                order = CONFIGS if number % 2 == 0 else CONFIGS[::-1]
                for name in order:
                    seconds, found = daemons[name].run()
                    times[name].append(seconds)
                    findings[name] = found
                    _keep(perf[name], daemons[name].last_perf)
        medians = {name: statistics.median(values) for name, values in times.items()}
        ratio = medians["plugin"] / medians["baseline"]
        how = (
            f"one daemon at a time, {args.blocks} blocks of {args.rounds} edits"
            if args.one_at_a_time
            else "side by side, alternating"
        )
        print(f"target: a copy of {OPS} ({len(files)} files), body edit of {edited} ({how})")
        print(
            f"first run (cold daemon): plugin {first['plugin']:.2f} s, alone {first['baseline']:.2f} s"
        )
        print(
            f"edit-to-diagnostics, median of {len(times['plugin'])}: plugin {medians['plugin']:.3f} s, "
            f"alone {medians['baseline']:.3f} s, ratio {ratio:.2f}"
        )
        perf_medians = {
            name: {key: statistics.median(values) for key, values in kept.items() if values}
            for name, kept in perf.items()
        }
        for key in PERF_KEYS:
            plugin_s = perf_medians["plugin"].get(key)
            alone_s = perf_medians["baseline"].get(key)
            if plugin_s is not None and alone_s is not None:
                print(
                    f"mypy's {key}, median: plugin {plugin_s * 1000:.1f} ms, "
                    f"alone {alone_s * 1000:.1f} ms, plugin's extra {(plugin_s - alone_s) * 1000:.1f} ms"
                )
        print(f"findings with the plugin: {len(findings['plugin'])}")
        if args.json is not None:
            args.json.parent.mkdir(parents=True, exist_ok=True)
            args.json.write_text(
                json.dumps(
                    {
                        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
                        "python": platform.python_version(),
                        "host": f"{platform.machine()} {os.cpu_count()} cpu",
                        "files": len(files),
                        "edited": edited,
                        "mode": how,
                        "first": first,
                        "times": times,
                        "medians": medians,
                        "ratio": ratio,
                        "perf": perf,
                        "perf_medians": perf_medians,
                        "findings": findings["plugin"],
                    },
                    indent=2,
                )
                + "\n"
            )
    finally:
        for daemon in daemons.values():
            daemon.stop()
        shutil.rmtree(work, ignore_errors=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
