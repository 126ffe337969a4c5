"""Cost of ``cache_keys.library_uses`` on a warm run: every project module's stamp of the
library files its findings read, with and without the per-build memo.

Usage (from the repository root)::

    .venv312/bin/python benchmarks/library_uses_cost.py --python .venv312-wheel/bin/python
    .venv312/bin/python benchmarks/library_uses_cost.py --target library-calls --repeat 21

Runs mypy + plugin once, cold, on a target of ``plugin_overhead.py`` (default ``tokamax``:
181 files, whose imports make 429 project modules), then, in this process, asks
``library_uses(cache, module, writing=False)`` for every module that recorded library
files, as mypy's warm run does through ``report_config_data``:

* **no memo** (baseline; what every warm run did before the memo): each module stats
  each of its files;
* **one memo per build** (what the plugin passes now): each distinct list of files is
  stamped once.

Prints the median of ``--repeat`` passes of each, and their ratio; both give the same
stamps (checked).

What it does not do: time the rest of ``report_config_data`` or of mypy's warm run
(``plugin_overhead.py`` does).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from plugin_overhead import targets_for, timed_run  # this script's folder is on sys.path

from eval.corpus import DEFAULT_CACHE
from eval.mypyrun import PLUGIN, write_config
from typed_pallas_mypy import cache_keys


def _median_ms(repeat: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=(__doc__ or "").split("\n\n")[0])
    ap.add_argument("--target", default="tokamax")
    ap.add_argument("--repeat", type=int, default=11)
    ap.add_argument("--python", default=sys.executable)
    ap.add_argument("--cache-dir", type=Path, default=DEFAULT_CACHE)
    args = ap.parse_args(argv)
    python = os.path.abspath(args.python) if os.sep in args.python else args.python
    work = Path(tempfile.mkdtemp(prefix="tp-library-uses-"))
    try:
        target = targets_for(args.target, python, args.cache_dir.expanduser(), work)
        cache = work / "cache"
        timed_run(target, cache, write_config(work / "plugin.ini", PLUGIN), python)
        folder = cache_keys.plugin_folder(str(cache), "library-uses")
        names = sorted(cache_keys._records(folder or "", None))  # the modules with a record

        def stamps(memo: cache_keys.LibraryStamps | None) -> list[str | None]:
            return [cache_keys.library_uses(str(cache), n, writing=False, memo=memo) for n in names]

        same = stamps(None) == stamps(cache_keys.new_library_stamps())
        plain = _median_ms(args.repeat, lambda: stamps(None))
        memo = _median_ms(args.repeat, lambda: stamps(cache_keys.new_library_stamps()))
        lists = Counter(
            cache_keys.library_uses(str(cache), n, writing=False) for n in names
        ).most_common()
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(
        f"{args.target}: {len(names)} project modules recorded library files "
        f"({len(lists)} distinct lists); same stamps with and without the memo: {same}"
    )
    print(f"  no memo (baseline)     {plain:8.2f} ms  1.00x")
    print(f"  one memo per build     {memo:8.2f} ms  {memo / plain:5.2f}x")
    return 0


if __name__ == "__main__":
    sys.exit(main())
