"""Cost of the library reader (``typed_pallas_mypy.inference``), cold and cached.

Reads every public name of jax's ``jax.experimental.pallas.ops`` (the jax of the
interpreter running this script, found without importing it) with ``module_map``:

* **parse only** (baseline): ``ast.parse`` of the same files, nothing else;
* **cold**: a fresh ``Inference`` with an empty cache folder (parse, local facts,
  requirements, cache written);
* **cached**: a fresh ``Inference`` over the cache the cold run wrote (no parse).

Each is the median of ``--repeat`` runs, printed with its ratio to the baseline of the
same run. ``--package NAME`` (repeatable) also maps third-party packages found under
``--root`` folders (site-packages-like; e.g. wheels unpacked with ``pip download
--no-deps`` + unzip), and prints per package: modules read, public names with a
requirement by platform, wrappers found, cold and cached time.

Usage: ``python benchmarks/library_facts.py [--repeat 5] [--root DIR --package NAME ...]``.
No timing is asserted anywhere; this only prints.
"""

from __future__ import annotations

import argparse
import ast
import functools
import importlib.metadata
import importlib.util
import statistics
import tempfile
import time
from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from typed_pallas_mypy.inference import Inference

OPS = "jax.experimental.pallas.ops"


def _jax_site_packages() -> Path:
    spec = importlib.util.find_spec("jax")
    if spec is None or not spec.submodule_search_locations:
        raise SystemExit("error: jax is not installed in this interpreter")
    return Path(next(iter(spec.submodule_search_locations))).parent


def _module_map(roots: list[str], cache: str, package: str) -> object:
    return Inference(roots, cache).module_map(package)


def _median(runs: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(runs):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def _parse_only(site_packages: Path) -> None:
    for path in sorted((site_packages / OPS.replace(".", "/")).rglob("*.py")):
        ast.parse(path.read_bytes())


def _cold(roots: Sequence[str], prefix: str) -> Inference:
    with tempfile.TemporaryDirectory() as cache:
        facts = Inference(roots, cache)
        facts.module_map(prefix)
        return facts


def _summary(facts: Inference, prefix: str) -> tuple[int, Counter[str], int]:
    mapped = facts.module_map(prefix)
    by_platform: Counter[str] = Counter(
        ",".join(sorted(found.platforms)) if found is not None else "none" for _, found in mapped
    )
    wrappers = sum(1 for name, _ in mapped if facts.wrapper(name) is not None)
    top = prefix.split(".")[0]
    read = sum(1 for module in facts.modules_read() if module.split(".")[0] == top)
    return read, by_platform, wrappers


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--repeat", type=int, default=5)
    parser.add_argument("--root", action="append", default=[], help="site-packages-like folder")
    parser.add_argument("--package", action="append", default=[], help="package to map")
    args = parser.parse_args(argv)
    site_packages = _jax_site_packages()
    roots = [str(site_packages)]
    print(f"jax {importlib.metadata.version('jax')} at {site_packages}, {args.repeat} runs each")

    baseline = _median(args.repeat, lambda: _parse_only(site_packages))
    cold = _median(args.repeat, lambda: _cold(roots, OPS))
    with tempfile.TemporaryDirectory() as cache:
        Inference(roots, cache).module_map(OPS)
        cached = _median(args.repeat, lambda: Inference(roots, cache).module_map(OPS))
    files = len(list((site_packages / OPS.replace(".", "/")).rglob("*.py")))
    print(f"\n{OPS} ({files} files), median seconds (ratio to parse only):")
    print(f"  parse only (baseline)  {baseline:8.3f}  1.00x")
    print(f"  cold (empty cache)     {cold:8.3f}  {cold / baseline:5.2f}x")
    print(f"  cached (second run)    {cached:8.3f}  {cached / baseline:5.2f}x")
    read, by_platform, wrappers = _summary(_cold(roots, OPS), OPS)
    print(f"  modules read {read}, public names by requirement {dict(sorted(by_platform.items()))}")

    if args.package:
        all_roots = [*args.root, *roots]
        print("\nthird-party packages (cold = empty cache; cached = second instance):")
        for package in args.package:
            package_cold = _median(args.repeat, functools.partial(_cold, all_roots, package))
            with tempfile.TemporaryDirectory() as cache:
                Inference(all_roots, cache).module_map(package)
                package_cached = _median(
                    args.repeat, functools.partial(_module_map, all_roots, cache, package)
                )
                read, by_platform, wrappers = _summary(Inference(all_roots, cache), package)
            print(
                f"  {package}: modules read {read}, public names by requirement "
                f"{dict(sorted(by_platform.items()))}, wrappers {wrappers}, "
                f"cold {package_cold:.2f}s, cached {package_cached:.2f}s "
                f"({package_cached / package_cold:.2f}x of cold)"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
