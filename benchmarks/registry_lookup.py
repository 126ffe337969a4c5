"""Cost of typed_pallas.get_lowering_rule against JAX's own get_lowering_rule.

Three cases, each timed for both lookups in the same run (median of --runs, each the best
per-call time over 100 short batches of --number calls):

* hit: a registered class, matching platform (returns the rule);
* miss: a class nobody registered (returns None);
* mismatch: a class of the other platform (raises ValueError; caught).

Also ``platform_of`` on an instance, and an empty-call baseline. Prints ns per call and
the ratio ours / JAX's.

Usage: python benchmarks/registry_lookup.py [--runs 7] [--number 500]
"""

from __future__ import annotations

import argparse
import contextlib
import statistics
import sys
import timeit
from collections.abc import Callable
from typing import Any


def best_ns(fn: Callable[[], object], number: int) -> float:
    # many short batches: on a shared, CPU-quota'd host a long batch gets throttled and
    # the slower function would pay for it more
    return min(timeit.repeat(fn, number=number, repeat=100)) / number * 1e9


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--number", type=int, default=500)
    args = parser.parse_args()

    import jax
    from jax._src.pallas import core as pallas_core
    from jax._src.pallas.mosaic import pallas_call_registration  # noqa: F401  (JAX registers TPU params)
    from jax.experimental.pallas import tpu as pltpu

    import typed_pallas
    from typed_pallas import _registry

    class Unknown:
        pass

    tpu_cls = pltpu.CompilerParams
    typed_pallas.get_lowering_rule(tpu_cls, "tpu")  # warm the cache / lazy import

    def catch(fn: Callable[[], Any]) -> Callable[[], None]:
        def run() -> None:
            with contextlib.suppress(ValueError):
                fn()

        return run

    cases: dict[str, tuple[Callable[[], object], Callable[[], object]]] = {
        "hit": (
            lambda: pallas_core.get_lowering_rule(tpu_cls, "tpu"),
            lambda: _registry.get_lowering_rule(tpu_cls, "tpu"),
        ),
        "miss": (
            lambda: pallas_core.get_lowering_rule(Unknown, "tpu"),
            lambda: _registry.get_lowering_rule(Unknown, "tpu"),
        ),
        "mismatch": (
            catch(lambda: pallas_core.get_lowering_rule(tpu_cls, "gpu")),
            catch(lambda: _registry.get_lowering_rule(tpu_cls, "gpu")),
        ),
    }
    params = tpu_cls()
    baseline = statistics.median(best_ns(lambda: None, args.number) for _ in range(args.runs))
    print(
        f"# get_lowering_rule, Python {sys.version.split()[0]}, jax {jax.__version__}; median of {args.runs} runs"
    )
    print(f"empty-lambda baseline: {baseline:.0f} ns")
    print("| case | JAX ns | typed_pallas ns | ratio |")
    print("|---|---|---|---|")
    for name, (theirs, ours) in cases.items():
        jax_ns = statistics.median(best_ns(theirs, args.number) for _ in range(args.runs))
        our_ns = statistics.median(best_ns(ours, args.number) for _ in range(args.runs))
        print(f"| {name} | {jax_ns:.0f} | {our_ns:.0f} | {our_ns / jax_ns:.2f} |")
    po = statistics.median(
        best_ns(lambda: _registry.platform_of(params), args.number) for _ in range(args.runs)
    )
    print(f"| platform_of(instance) | - | {po:.0f} | - |")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
