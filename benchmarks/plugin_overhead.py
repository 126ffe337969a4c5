"""mypy + typed-pallas plugin vs mypy alone on real Pallas code: cold, warm, warm after an edit.

Usage (from the repository root)::

    .venv312/bin/python benchmarks/plugin_overhead.py                      # jax's own Pallas ops
    .venv312/bin/python benchmarks/plugin_overhead.py --target tokamax --cold-runs 3
    .venv312/bin/python benchmarks/plugin_overhead.py --target library-calls --bytecode both

Targets:

* ``jax-ops``: ``jax/experimental/pallas/ops`` of this venv's jax (42 files, as ``-m``
  modules: installed code, so the plugin only reads it);
* ``library-calls``: one user module, generated in a temporary folder, that imports
  jax's Pallas ops (TPU ``flash_attention``, Triton ``mha``, megablox ``gmm``, splash
  attention) and tokamax 0.0.17 (its public ``ragged_dot`` / ``dot_product_attention``
  and two of its kernels), and calls them under ``jax.default_backend()`` guards, on
  the right platform and on the wrong one (:data:`LIBRARY_CALLS`). tokamax ships no
  ``py.typed``: it is installed with ``pip install --no-deps --target`` into
  ``--cache-dir``/libs/tokamax-0.0.17/site-packages (outside the repository) and put on
  ``PYTHONPATH`` for both configurations. The plugin must report exactly the calls
  marked ``# WRONG``, in every run of every mode (checked, printed and kept in the JSON);
* any surveyed package (``eval.corpus`` installs it into ``--cache-dir``), checked as
  the project's own code.

Both configurations are the preset of ``typed-pallas check`` (``follow_imports =
silent``, ``ignore_missing_imports``, ``check_untyped_defs``; ``eval.mypyrun.write_config``)
and differ only in the ``plugins =`` line. Modes:

* **cold**: empty cache folder (all of jax is analysed too);
* **first run, library facts kept** (plugin only, when the plugin wrote library facts):
  mypy's cache emptied but ``<cache>/typed-pallas/libraries`` kept, against the same
  round's cold baseline; the library facts files are compared before and after (path,
  size, mtime): unchanged files mean the facts were read, not computed again;
* **warm**: the same run again, nothing changed;
* **warm-edit**: one checked file changed (a comment appended, via ``--shadow-file``),
  so mypy re-checks that module and reads the rest from its cache.

Every round of cold runs and every pair of warm runs alternates which configuration
goes first, so drift in the host's load hits both. Each run's wall time and CPU time
(user + system of the mypy process, from ``getrusage``) are kept; printed are the
medians and their ratios plugin / baseline, both measured in this run, and the paired
ratios: the median of each round's plugin / baseline (``paired_ratio``), the steadiest
figure on a host whose speed drifts from one minute to the next.

``--bytecode``: ``written`` compiles the plugin's and the runtime's modules first
(``compileall``, as ``pip install`` does), so mypy loads them from ``.pyc``;
``none`` removes their ``__pycache__`` folders and sets ``PYTHONDONTWRITEBYTECODE=1``,
so every mypy run compiles the plugin again (what this sandbox does by default);
``both`` measures one then the other. Only the two packages' own ``__pycache__``
folders are touched.

What it does not do: measure memory, time anything inside mypy, or assert a time.
"""

from __future__ import annotations

import argparse
import compileall
import json
import os
import platform
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from eval.corpus import DEFAULT_CACHE, install, module_of, venv_jax
from eval.mutants import load_sites, package_files
from eval.mypyrun import PLUGIN, RunResult, run_mypy, write_config
from typed_pallas_mypy.cache_keys import plugin_folder

CONFIGS: tuple[str, ...] = ("plugin", "baseline")
LIBRARY_TARGET = "library-calls"
#: the third-party kernel library of the ``library-calls`` target (no ``py.typed``)
TOKAMAX = ("tokamax", "0.0.17")
#: marks the calls the plugin must report in :data:`LIBRARY_CALLS`
WRONG = "# WRONG"
#: the packages whose bytecode ``--bytecode`` controls
BYTECODE_PACKAGES: tuple[str, ...] = ("typed_pallas_mypy", "typed_pallas")

LIBRARY_CALLS = f'''"""Library kernels called under platform guards: the right platform and the wrong one."""
from typing import Any

import jax
import tokamax
from jax.experimental.pallas.ops.gpu.hopper_matmul_mgpu import matmul as gpu_matmul
from jax.experimental.pallas.ops.tpu.flash_attention import flash_attention
from jax.experimental.pallas.ops.tpu.megablox import gmm
from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as splash
from tokamax._src.ops.mhc.post_kernel import mhc_post
from tokamax._src.ops.ragged_dot.pallas_mosaic_gpu_kernel_sm80 import ragged_dot_kernel


def attend(q: Any, k: Any, v: Any) -> Any:
    if jax.default_backend() == "tpu":
        return flash_attention(q, k, v)
    return gpu_matmul(q, k, None, None)


def attend_wrong(q: Any, k: Any, v: Any) -> Any:
    if jax.default_backend() == "gpu":
        return flash_attention(q, k, v)  {WRONG}
    return gpu_matmul(q, k, None, None)  {WRONG}


def experts(lhs: Any, rhs: Any, sizes: Any) -> Any:
    if jax.default_backend() == "tpu":
        return gmm(lhs, rhs, sizes)
    return tokamax.ragged_dot(lhs, rhs, sizes)


def experts_wrong(lhs: Any, rhs: Any, sizes: Any) -> Any:
    if jax.default_backend() == "gpu":
        return gmm(lhs, rhs, sizes)  {WRONG}
    return tokamax.ragged_dot(lhs, rhs, sizes)


def splash_attend(mask: Any, q: Any, k: Any, v: Any) -> Any:
    if jax.default_backend() == "tpu":
        kernel = splash.make_splash_mha(mask, head_shards=1, q_seq_shards=1)
        return jax.vmap(kernel)(q, k, v)
    return None


def splash_attend_wrong(mask: Any, q: Any, k: Any, v: Any) -> Any:
    if jax.default_backend() == "gpu":
        kernel = splash.make_splash_mha(mask, head_shards=1, q_seq_shards=1)
        return jax.vmap(kernel)(q, k, v)  {WRONG}
    return None


def mix(x: Any, h: Any) -> Any:
    if jax.default_backend() == "tpu":
        return mhc_post(x, h)
    return tokamax.dot_product_attention(x, h, h)


def mix_wrong(x: Any, h: Any) -> Any:
    if jax.default_backend() == "gpu":
        return mhc_post(x, h)  {WRONG}
    return None


def grouped(lhs: Any, rhs: Any, sizes: Any) -> Any:
    if jax.default_backend() == "gpu":
        return ragged_dot_kernel(lhs, rhs, sizes)
    return None


def grouped_wrong(lhs: Any, rhs: Any, sizes: Any) -> Any:
    if jax.default_backend() == "tpu":
        return ragged_dot_kernel(lhs, rhs, sizes)  {WRONG}
    return None
'''


@dataclass
class Target:
    """What mypy checks for one target, and where."""

    name: str
    #: mypy's arguments naming what to check
    arguments: list[str]
    cwd: Path
    #: paths in results are relative to this
    root: Path
    files: int
    #: the file ``warm-edit`` changes, relative to ``root``
    edited: str
    pythonpath: list[str] = field(default_factory=list)
    #: lines (of ``edited``) where the plugin must report, when known
    expected_lines: list[int] | None = None


@dataclass
class Timing:
    wall: list[float] = field(default_factory=list)
    cpu: list[float] = field(default_factory=list)


def install_library(name: str, version: str, cache: Path, python: str) -> Path:
    """``pip install --no-deps --target`` of ``name==version`` into a ``site-packages``
    folder under ``cache`` (the plugin treats only such folders as installed code)."""
    site = cache / "libs" / f"{name}-{version}" / "site-packages"
    if (site.parent / ".complete").exists():
        return site
    shutil.rmtree(site, ignore_errors=True)
    subprocess.run(
        [
            python,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-compile",
            "--disable-pip-version-check",
            "--target",
            str(site),
            f"{name}=={version}",
        ],
        check=True,
    )
    (site.parent / ".complete").write_text("")
    return site


def targets_for(name: str, python: str, cache: Path, work: Path) -> Target:
    if name == "jax-ops":
        _, sp = venv_jax(python)
        files = package_files(sp, "jax", [])
        edited = next(
            str(p.relative_to(sp))
            for p in sorted((sp / "jax/experimental/pallas/ops").rglob("*.py"))
            if p.name != "__init__.py"
        )
        arguments = [a for f in files for a in ("-m", module_of(f))]
        return Target(name, arguments, work, sp, len(files), edited)
    if name == LIBRARY_TARGET:
        site = install_library(*TOKAMAX, cache, python)
        project = work / "project"
        project.mkdir(parents=True, exist_ok=True)
        (project / "library_calls.py").write_text(LIBRARY_CALLS)
        expected = [
            number
            for number, line in enumerate(LIBRARY_CALLS.splitlines(), start=1)
            if line.endswith(WRONG)
        ]
        return Target(
            name,
            ["library_calls.py"],
            project,
            project,
            1,
            "library_calls.py",
            pythonpath=[str(site)],
            expected_lines=expected,
        )
    versions = {s.package: s.version for s in load_sites()}
    if name not in versions:
        raise SystemExit(
            f"unknown target {name!r}: jax-ops, {LIBRARY_TARGET} or one of {sorted(versions)}"
        )
    root, _ = install(name, versions[name], cache, python)
    files = package_files(root, name, [])
    edited = next(f for f in files if not f.endswith("__init__.py"))
    return Target(name, ["--explicit-package-bases", *files], root, root, len(files), edited)


# --------------------------------------------------------------------------- bytecode


def package_folders(python: str) -> list[Path]:
    """The source folders of :data:`BYTECODE_PACKAGES` as ``python`` imports them."""
    code = (
        "import importlib.util, json\n"
        f"names = {list(BYTECODE_PACKAGES)!r}\n"
        "print(json.dumps([list(importlib.util.find_spec(n).submodule_search_locations)[0]"
        " for n in names]))"
    )
    out = subprocess.run(
        [python, "-B", "-c", code], capture_output=True, text=True, check=True
    ).stdout
    return [Path(p) for p in json.loads(out.strip().splitlines()[-1])]


def set_bytecode(mode: str, folders: Sequence[Path]) -> int:
    """Prepare the packages' bytecode for ``mode``; returns how many ``.pyc`` files exist."""
    if mode == "written":
        os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
        for folder in folders:
            compileall.compile_dir(str(folder), quiet=1)
    else:
        os.environ["PYTHONDONTWRITEBYTECODE"] = "1"
        for folder in folders:
            for cache in list(folder.rglob("__pycache__")):
                shutil.rmtree(cache, ignore_errors=True)
    return sum(len(list(folder.rglob("*.pyc"))) for folder in folders)


# --------------------------------------------------------------------------- runs


def timed_run(
    target: Target,
    cache: Path,
    config: Path,
    python: str,
    shadows: Mapping[str, Path] | None = None,
) -> tuple[RunResult, float]:
    """One mypy run, and its CPU time (user + system of the mypy process)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    result = run_mypy(
        target.arguments,
        cwd=target.cwd,
        root=target.root,
        cache_dir=cache,
        config=config,
        python=python,
        shadows=shadows,
        extra_pythonpath=target.pythonpath,
    )
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if result.crashed or result.blocked:
        raise SystemExit(f"mypy {'crashed' if result.crashed else 'stopped'}:\n{result.tail}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return result, cpu


def record(timing: Timing, run: tuple[RunResult, float]) -> RunResult:
    result, cpu = run
    timing.wall.append(result.seconds)
    timing.cpu.append(cpu)
    return result


def alternating(round_number: int) -> tuple[str, ...]:
    return CONFIGS if round_number % 2 == 0 else CONFIGS[::-1]


def files_state(folder: str | None) -> dict[str, list[int]]:
    """name -> [size, mtime_ns] of the files in ``folder`` (empty when there is none)."""
    if folder is None or not os.path.isdir(folder):
        return {}
    out: dict[str, list[int]] = {}
    for name in sorted(os.listdir(folder)):
        found = os.stat(os.path.join(folder, name))
        out[name] = [found.st_size, found.st_mtime_ns]
    return out


def paired_ratio(base: Sequence[float], plugin: Sequence[float]) -> float | None:
    """The median of ``plugin[i] / base[i]``: runs with the same index ran in the same
    round, one right after the other, so drift in the host's speed between rounds
    cancels out of each ratio (the ratio of the two medians keeps it). None when a
    baseline run took no time."""
    ratios = [p / b for b, p in zip(base, plugin) if b > 0]
    if not ratios or len(ratios) < min(len(base), len(plugin)):
        return None
    return statistics.median(ratios)


def summary(base: Timing, plugin: Timing) -> dict[str, object]:
    b, p = statistics.median(base.wall), statistics.median(plugin.wall)
    bc, pc = statistics.median(base.cpu), statistics.median(plugin.cpu)
    paired = paired_ratio(base.wall, plugin.wall)
    paired_cpu = paired_ratio(base.cpu, plugin.cpu)
    return {
        "baseline_median_s": round(b, 3),
        "plugin_median_s": round(p, 3),
        "ratio": round(p / b, 3),
        "paired_ratio": round(paired, 3) if paired is not None else None,
        "baseline_cpu_median_s": round(bc, 3),
        "plugin_cpu_median_s": round(pc, 3),
        "cpu_ratio": round(pc / bc, 3) if bc else None,
        "paired_cpu_ratio": round(paired_cpu, 3) if paired_cpu is not None else None,
        "runs": len(plugin.wall),
        "baseline_all": [round(x, 3) for x in base.wall],
        "plugin_all": [round(x, 3) for x in plugin.wall],
    }


def measure(target: Target, args: argparse.Namespace, work: Path) -> dict[str, object]:
    configs = {
        "plugin": write_config(work / "plugin.ini", PLUGIN),
        "baseline": write_config(work / "plain.ini", None),
    }
    caches = {c: work / f"cache-{c}" for c in CONFIGS}
    cold = {c: Timing() for c in CONFIGS}
    first = Timing()
    warm = {c: Timing() for c in CONFIGS}
    edited = {c: Timing() for c in CONFIGS}
    errors: dict[str, int] = {}
    other_errors: dict[str, set[tuple[str, int, str]]] = {}
    #: mode -> the distinct sets of lines (of the edited file) the plugin reported at
    reported: dict[str, set[tuple[int, ...]]] = {}
    libraries = plugin_folder(str(caches["plugin"]), "libraries")
    facts_after_cold: dict[str, list[int]] = {}
    facts_reused: list[bool] = []
    shadow = work / "shadow.py"

    def run(
        config: str, mode: str, shadows: Mapping[str, Path] | None = None
    ) -> tuple[RunResult, float]:
        done = timed_run(target, caches[config], configs[config], args.python, shadows)
        if config == "plugin":
            lines = sorted({d.line for d in done[0].platform_errors if d.relpath == target.edited})
            reported.setdefault(mode, set()).add(tuple(lines))
        return done

    for round_number in range(max(args.cold_runs, 1)):
        for config in alternating(round_number):
            shutil.rmtree(caches[config], ignore_errors=True)
            result = record(cold[config], run(config, "cold"))
            errors[config] = len([d for d in result.diagnostics if d.severity == "error"])
            other_errors[config] = {
                (d.relpath, d.line, d.message)
                for d in result.diagnostics
                if d.severity == "error" and d.code != "pallas-platform"
            }
        facts_after_cold = files_state(libraries)
        if facts_after_cold and libraries is not None:
            # the first run after the library facts exist: mypy's cache gone, facts kept
            kept = work / "libraries-kept"
            shutil.rmtree(kept, ignore_errors=True)
            shutil.copytree(libraries, kept, copy_function=shutil.copy2)
            shutil.rmtree(caches["plugin"])
            shutil.copytree(kept, libraries, copy_function=shutil.copy2)
            before = files_state(libraries)
            record(first, run("plugin", "first-run-library-facts-kept"))
            facts_reused.append(files_state(libraries) == before)
    for pair in range(args.warm_runs):
        for config in alternating(pair):
            record(warm[config], run(config, "warm"))
    for pair in range(args.warm_runs):
        for config in alternating(pair):
            # one more character per pair: mypy takes a file of the same size and
            # modification second as unchanged, and would skip the recheck measured
            shadow.write_text(
                (target.root / target.edited).read_text()
                + f"\n# edit {config} {pair} {'.' * pair}\n"
            )
            record(edited[config], run(config, "warm-edit", shadows={target.edited: shadow}))

    changed = sorted(other_errors["plugin"] ^ other_errors["baseline"])
    outcome: dict[str, object] = {
        "target": target.name,
        "files": target.files,
        "edited_file": target.edited,
        "errors_reported": errors,
        "other_errors_changed_by_plugin": [f"{f}:{ln}: {m}" for f, ln, m in changed],
        "cold": summary(cold["baseline"], cold["plugin"]),
        "warm": summary(warm["baseline"], warm["plugin"]),
        "warm-edit": summary(edited["baseline"], edited["plugin"]),
    }
    if first.wall:
        outcome["first-run-library-facts-kept"] = summary(cold["baseline"], first)
        outcome["library_facts"] = {
            "files": facts_after_cold,
            "unchanged_by_each_first_run": facts_reused,
        }
    if target.expected_lines is not None:
        expected = tuple(target.expected_lines)
        outcome["findings"] = {
            "expected_lines": target.expected_lines,
            "reported_lines_by_mode": {m: sorted(found) for m, found in reported.items()},
            "exact_in_every_run": all(found == {expected} for found in reported.values()),
        }
    print_result(outcome, changed, other_errors["plugin"])
    return outcome


def print_result(
    result: Mapping[str, object],
    changed: Sequence[tuple[str, int, str]],
    plugin_errors: set[tuple[str, int, str]],
) -> None:
    print(
        f"{result['target']}: {result['files']} files; mypy errors reported: "
        f"{result['errors_reported']}; non-pallas errors that differ with the plugin: "
        f"{len(changed)}"
    )
    for f, ln, m in changed[:5]:
        print(f"    {'+' if (f, ln, m) in plugin_errors else '-'} {f}:{ln}: {m[:120]}")
    findings = result.get("findings")
    if isinstance(findings, dict):
        print(
            f"  pallas-platform errors, per mode: {findings['reported_lines_by_mode']}; expected "
            f"{findings['expected_lines']}: "
            f"{'exact in every run' if findings['exact_in_every_run'] else 'DIFFERENT'}"
        )
    facts = result.get("library_facts")
    if isinstance(facts, dict):
        print(
            f"  library facts files {sorted(facts['files'])}; unchanged by each first run: "
            f"{facts['unchanged_by_each_first_run']}"
        )
    print(
        f"  {'':30s} {'baseline s':>10s} {'plugin s':>10s} {'ratio':>6s} {'cpu ratio':>9s}"
        f" {'paired':>7s} {'paired cpu':>10s}  runs"
    )
    for mode in ("cold", "first-run-library-facts-kept", "warm", "warm-edit"):
        row = result.get(mode)
        if not isinstance(row, dict):
            continue
        print(
            f"  {mode:30s} {row['baseline_median_s']:10.3f} {row['plugin_median_s']:10.3f} "
            f"{row['ratio']:6.3f} {row['cpu_ratio']:9.3f} {_cell(row.get('paired_ratio')):>7s} "
            f"{_cell(row.get('paired_cpu_ratio')):>10s}  {row['runs']}"
        )


def _cell(value: object) -> str:
    return f"{value:.3f}" if isinstance(value, float) else "-"


def bytecode_modes(choice: str) -> list[str]:
    return ["written", "none"] if choice == "both" else [choice]


def load_average() -> list[float]:
    try:
        return [round(x, 2) for x in os.getloadavg()]
    except OSError:
        return []


def versions(python: str) -> dict[str, str]:
    code = (
        "import json, sys, mypy.version, importlib.metadata as m\n"
        "print(json.dumps({'python': sys.version.split()[0], 'mypy': mypy.version.__version__,"
        " 'jax': m.version('jax')}))"
    )
    out = subprocess.run([python, "-c", code], capture_output=True, text=True, check=True).stdout
    found: dict[str, str] = json.loads(out.strip().splitlines()[-1])
    return found


@dataclass
class Workdir:
    path: Path = field(default_factory=lambda: Path(tempfile.mkdtemp(prefix="tp-overhead-")))

    def fresh(self, name: str) -> Path:
        folder = self.path / name
        shutil.rmtree(folder, ignore_errors=True)
        folder.mkdir(parents=True)
        return folder


def runs(args: argparse.Namespace, work: Workdir) -> Iterator[dict[str, object]]:
    folders = package_folders(args.python)
    cache = Path(args.cache_dir).expanduser()
    for mode in bytecode_modes(args.bytecode):
        pyc = set_bytecode(mode, folders)
        print(
            f"--- bytecode {mode}: {pyc} .pyc files of {', '.join(BYTECODE_PACKAGES)}; "
            f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '(unset)')}"
        )
        for name in args.target or ["jax-ops"]:
            folder = work.fresh(f"{name}-{mode}")
            target = targets_for(name, args.python, cache, folder)
            load_before = load_average()
            result = measure(target, args, folder)
            result["bytecode"] = mode
            result["pyc_files"] = pyc
            result["load_average_before"] = load_before
            result["load_average_after"] = load_average()
            yield result


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument(
        "--target",
        action="append",
        help=f"jax-ops (default), {LIBRARY_TARGET} or a surveyed package; repeatable",
    )
    ap.add_argument("--cold-runs", type=int, default=3)
    ap.add_argument("--warm-runs", type=int, default=5)
    ap.add_argument("--bytecode", choices=("written", "none", "both"), default="written")
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args(argv)
    if os.sep in args.python:  # mypy runs in other folders; a venv's python is a symlink
        args.python = os.path.abspath(args.python)
    work = Workdir()
    results: list[dict[str, object]] = []
    out: dict[str, object] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python benchmarks/plugin_overhead.py " + " ".join(argv or sys.argv[1:]),
        "machine": {
            "cpus": os.cpu_count(),
            "system": f"{platform.system()} {platform.machine()}",
            **versions(args.python),
        },
        "results": results,
    }
    try:
        for result in runs(args, work):
            results.append(result)
            if args.json:  # written as it goes: a long run interrupted keeps what it measured
                args.json.write_text(json.dumps(out, indent=1) + "\n")
    finally:
        shutil.rmtree(work.path, ignore_errors=True)
    if args.json:
        print(f"JSON: {args.json}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
