"""Cost of typed_pallas._versions.installed_version against importlib.metadata.version.

The mypy plugin asks for installed versions (jax, typed-pallas) on every run, warm runs
included, so what counts is the first call in a fresh process. Two measurements, both
lookups in the same run, for each distribution:

* fresh process, as the plugin meets it: one interpreter per sample imports mypy and
  typed_pallas (untimed: a plugin run has both), then times importing the lookup's module
  and the first lookup (ms). mypy does not import ``importlib.metadata``, so a plugin
  that uses it pays for its import; ``_versions`` pays for its own;
* in process: one uncached lookup, repeated (µs per call): ``metadata.version(dist)``
  against the fast path without the memo (``installed_version.__wrapped__``), and the
  memoized call.

Prints medians and the ratio importlib.metadata / ours. Asserts nothing.

Usage: python benchmarks/installed_version.py [--samples 15] [--number 200] [DIST ...]
"""

from __future__ import annotations

import argparse
import statistics
import subprocess
import sys
import timeit

DEFAULT_DISTRIBUTIONS = ("jax", "jaxlib", "mypy", "typed-pallas")

FRESH = {
    "importlib.metadata": (
        "import mypy.build, typed_pallas, time; t = time.perf_counter()\n"
        "from importlib import metadata\n"
        "metadata.version({dist!r})\n"
        "print((time.perf_counter() - t) * 1e3)\n"
    ),
    "installed_version": (
        "import mypy.build, typed_pallas, time; t = time.perf_counter()\n"
        "from typed_pallas._versions import installed_version\n"
        "installed_version({dist!r})\n"
        "print((time.perf_counter() - t) * 1e3)\n"
    ),
}


def fresh_ms(kind: str, dist: str, samples: int) -> float:
    """Median time (ms) of import + first lookup, one fresh interpreter per sample."""
    times = []
    for _ in range(samples):
        out = subprocess.run(
            [sys.executable, "-c", FRESH[kind].format(dist=dist)],
            capture_output=True,
            text=True,
            check=True,
        )
        times.append(float(out.stdout))
    return statistics.median(times)


def best_us(fn: object, number: int) -> float:
    assert callable(fn)
    return min(timeit.repeat(fn, number=number, repeat=20)) / number * 1e6


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=(__doc__ or "").splitlines()[0])
    parser.add_argument("--samples", type=int, default=15)
    parser.add_argument("--number", type=int, default=200)
    parser.add_argument("dists", nargs="*", default=list(DEFAULT_DISTRIBUTIONS))
    args = parser.parse_args(argv)

    from importlib import metadata

    from typed_pallas._versions import installed_version

    print(f"Python {sys.version.split()[0]}; {len(sys.path)} sys.path entries")
    print(
        f"{'distribution':14s} {'version':12s} "
        f"{'fresh: metadata':>16s} {'ours':>8s} {'ratio':>6s}   "
        f"{'in-process: metadata':>20s} {'ours':>8s} {'memo':>8s} {'ratio':>6s}"
    )
    for dist in args.dists:
        version = installed_version(dist)
        assert version == metadata.version(dist), (dist, version)
        slow_fresh = fresh_ms("importlib.metadata", dist, args.samples)
        fast_fresh = fresh_ms("installed_version", dist, args.samples)
        slow = best_us(lambda d=dist: metadata.version(d), args.number)
        fast = best_us(lambda d=dist: installed_version.__wrapped__(d), args.number)
        memo = best_us(lambda d=dist: installed_version(d), args.number)
        print(
            f"{dist:14s} {version:12s} "
            f"{slow_fresh:13.2f} ms {fast_fresh:5.2f} ms {slow_fresh / fast_fresh:5.1f}x   "
            f"{slow:17.1f} µs {fast:5.1f} µs {memo:5.2f} µs {slow / fast:5.1f}x"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
