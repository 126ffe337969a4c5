"""Where the plugin's time goes in one mypy run: hook lookups, the library reader, its
disk cache, the facts stored when mypy writes a module.

Usage (from the repository root)::

    .venv312-wheel/bin/python benchmarks/plugin_profile.py                  # library-calls
    .venv312-wheel/bin/python benchmarks/plugin_profile.py --target jax-ops

Prepares a target of ``plugin_overhead.py`` and runs mypy + plugin three times, each in a
fresh interpreter that runs mypy in-process with some of the plugin's functions wrapped:
**cold** (empty cache), **first run** (mypy's cache emptied, the library facts kept) and
**warm**. Prints, per run, the CPU seconds of the whole mypy run and the CPU seconds
spent inside each wrapped function (outermost calls only: a recursive call is not
counted twice; a function called from another wrapped one is counted in both), with
how many times it was called, and the CPU seconds and passes of the garbage collector,
per generation. The plugin's modules are imported before the run starts, so their
import time is not in these figures (``warm_imports.py`` has it). ``--plain`` first runs
plain mypy cold the same way (same preset, no plugin, nothing wrapped): its total and
its garbage collection, beside the plugin's (what the plugin costs outside its hooks:
a collection more, or longer ones). The interpreter running this script runs mypy, and
must have typed-pallas installed the way it is to be measured (a wheel: see
``README.md``).

What it does not do: give wall-clock ratios against plain mypy (``plugin_overhead.py``
does, alternating runs), or see inside mypy's own time.
"""

from __future__ import annotations

import argparse
import contextlib
import functools
import gc
import importlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from plugin_overhead import targets_for  # this script's folder is on sys.path

from eval.corpus import DEFAULT_CACHE
from eval.mypyrun import PLUGIN, clean_env, write_config
from typed_pallas_mypy.cache_keys import plugin_folder

#: (module, attribute path) of the functions timed, and how the output names them
WRAPPED: tuple[tuple[str, str, str], ...] = (
    # a name seen before is a dict lookup mypy makes directly (``main._HookMemo``): only
    # each name's first lookup runs Python code
    (
        "typed_pallas_mypy.main",
        "TypedPallasPlugin._find_function_hook",
        "get_function_hook (new name)",
    ),
    ("typed_pallas_mypy.main", "TypedPallasPlugin._find_method_hook", "get_method_hook (new name)"),
    ("typed_pallas_mypy.transformers.hooks", "function_kind", "  function_kind (hook lookup)"),
    ("typed_pallas_mypy.inference", "Inference.requirement", "  library requirement"),
    ("typed_pallas_mypy.inference", "Inference.wrapper", "  library wrapper"),
    (
        "typed_pallas_mypy.inference.reader",
        "read_module_keeping_sites",
        "    parse a library module",
    ),
    (
        "typed_pallas_mypy.inference.reader",
        "read_module_and_sites",
        "    parse a project module",
    ),
    ("typed_pallas_mypy.inference.store", "_write", "    write a facts file"),
    ("typed_pallas_mypy.transformers.hooks", "check_entry_call", "check: entry point call"),
    ("typed_pallas_mypy.transformers.hooks", "widen_proven_mismatch", "check: entry signature"),
    ("typed_pallas_mypy.transformers.hooks", "check_user_call", "check: project function call"),
    ("typed_pallas_mypy.transformers.hooks", "check_library_call", "check: library kernel call"),
    ("typed_pallas_mypy.transformers.hooks", "check_decision_call", "check: decision call"),
    ("typed_pallas_mypy.transformers.hooks", "check_partial", "check: functools.partial"),
    ("typed_pallas_mypy.transformers.hooks", "check_partial_call", "check: partial object call"),
    ("typed_pallas_mypy.main", "TypedPallasPlugin.report_config_data", "report_config_data"),
    ("typed_pallas_mypy.transformers.hooks", "store_facts", "  store_facts (module written)"),
    ("typed_pallas_mypy.cache_keys", "library_uses", "  library_uses"),
)


def _wrap(module: str, path: str, label: str, spent: dict[str, list[float]]) -> None:
    owner: Any = importlib.import_module(module)
    *parents, name = path.split(".")
    for part in parents:
        owner = getattr(owner, part)
    original: Callable[..., Any] = getattr(owner, name)
    spent[label] = [0.0, 0]
    active = [0]

    @functools.wraps(original)
    def timed(*args: Any, **kwargs: Any) -> Any:
        spent[label][1] += 1
        if active[0]:
            return original(*args, **kwargs)
        active[0] += 1
        start = time.process_time()
        try:
            return original(*args, **kwargs)
        finally:
            spent[label][0] += time.process_time() - start
            active[0] -= 1

    setattr(owner, name, timed)


#: How the garbage collector's passes are reported, per generation (``_gc_probe``).
GC_LABELS: tuple[str, ...] = tuple(f"garbage collection, generation {g}" for g in range(3))


def _gc_probe(spent: dict[str, list[float]]) -> None:
    """Time every pass of the garbage collector into ``spent`` (seconds, passes), by the
    generation it collects: allocations the plugin keeps move mypy's own collections."""
    for label in GC_LABELS:
        spent[label] = [0.0, 0]
    started = [0.0]

    def on_pass(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            started[0] = time.process_time()
            return
        row = spent[GC_LABELS[info["generation"]]]
        row[0] += time.process_time() - started[0]
        row[1] += 1

    gc.callbacks.append(on_pass)


def child(arguments: list[str]) -> None:
    """One in-process mypy run with the functions of :data:`WRAPPED` timed (none with
    ``--plain``: plain mypy, for its total and its garbage collection); prints JSON."""
    spent: dict[str, list[float]] = {}
    if arguments[:1] == ["--plain"]:
        arguments = arguments[1:]
    else:
        for module, path, label in WRAPPED:
            _wrap(module, path, label, spent)
    from mypy import main as mypy_main

    _gc_probe(spent)
    start = time.process_time()
    with contextlib.suppress(SystemExit):  # mypy's exit status: errors found, or none
        mypy_main.main(args=arguments, clean_exit=True)
    spent["mypy run (total)"] = [time.process_time() - start, 1]
    print(json.dumps(spent))


def _run(arguments: list[str], cwd: Path, pythonpath: list[str]) -> dict[str, list[float]]:
    completed = subprocess.run(
        [sys.executable, __file__, "--child", *arguments],
        cwd=cwd,
        env=clean_env(pythonpath),
        capture_output=True,
        text=True,
    )
    lines = completed.stdout.strip().splitlines()
    if completed.returncode != 0 or not lines:
        raise SystemExit(f"the timed run failed:\n{completed.stderr[-3000:]}")
    found: dict[str, list[float]] = json.loads(lines[-1])
    return found


def main(argv: list[str] | None = None) -> int:
    if argv is None and sys.argv[1:2] == ["--child"]:
        child(sys.argv[2:])
        return 0
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--target", default="library-calls")
    ap.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    ap.add_argument(
        "--plain",
        action="store_true",
        help="also run plain mypy cold, in process, for its total and its garbage collection",
    )
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="tp-profile-"))
    try:
        target = targets_for(args.target, sys.executable, args.cache_dir.expanduser(), work)
        cache = work / "cache"
        config = write_config(work / "plugin.ini", PLUGIN)
        arguments = ["--config-file", str(config), "--cache-dir", str(cache), *target.arguments]
        runs: dict[str, dict[str, list[float]]] = {}
        if args.plain:
            plain = write_config(work / "plain.ini", None)
            plain_cache = work / "plain-cache"
            plain_arguments = [
                "--plain", "--config-file", str(plain), "--cache-dir", str(plain_cache),
                *target.arguments,
            ]  # fmt: skip
            runs["cold, plain mypy"] = _run(plain_arguments, target.cwd, target.pythonpath)
        runs["cold"] = _run(arguments, target.cwd, target.pythonpath)
        libraries = plugin_folder(str(cache), "libraries")
        if libraries is not None and os.path.isdir(libraries):
            kept = work / "libraries"
            shutil.copytree(libraries, kept)
            shutil.rmtree(cache)
            shutil.copytree(kept, libraries)
            runs["first run, facts kept"] = _run(arguments, target.cwd, target.pythonpath)
        runs["warm"] = _run(arguments, target.cwd, target.pythonpath)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    labels = ["mypy run (total)", *GC_LABELS, *(label for _, _, label in WRAPPED)]
    print(f"{args.target}: CPU seconds (calls)")
    print(f"  {'':34s}" + "".join(f"{mode:>24s}" for mode in runs))
    for label in labels:
        cells = "".join(
            f"{runs[mode].get(label, [0.0, 0])[0]:15.3f} ({int(runs[mode].get(label, [0.0, 0])[1]):5d})"
            for mode in runs
        )
        print(f"  {label:34s}{cells}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
