"""Overhead of typed_pallas.pallas_call over jax.experimental.pallas.pallas_call.

Measured in one process, JAX first as the baseline (median of --runs):

* build: constructing the callable (``pallas_call(kernel, out_shape, compiler_params=...)``);
* trace+lower: ``jax.jit(fn).trace(x).lower(lowering_platforms=(target,))`` of a freshly
  built callable (no jit cache hit), for a matched cell;
* identical text: whether the two lowered modules are byte-identical (lowered from one
  call site, so source locations agree).

Usage: python benchmarks/entry_overhead.py [--runs 7] [--target tpu|cuda]
"""

from __future__ import annotations

import argparse
import statistics
import sys
import time
import timeit
import warnings
from collections.abc import Callable
from typing import Any

warnings.simplefilter("ignore")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--target", default="tpu", choices=["tpu", "cuda"])
    args = parser.parse_args()

    import jax
    import jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu
    from jax.experimental.pallas import triton as pltriton

    import typed_pallas
    from typed_pallas import _jaxcompat

    def kernel(x_ref: Any, o_ref: Any) -> None:
        o_ref[...] = x_ref[...] + 1

    shape = jax.ShapeDtypeStruct((8, 128), jnp.float32)  # type: ignore[no-untyped-call]
    x = jnp.zeros((8, 128), jnp.float32)
    make_params = pltpu.CompilerParams if args.target == "tpu" else pltriton.CompilerParams
    params = make_params()
    entries: dict[str, Callable[..., Any]] = {
        "jax": pl.pallas_call,
        "typed_pallas": typed_pallas.pallas_call,
    }

    def build(entry: Callable[..., Any]) -> Callable[[], object]:
        return lambda: entry(kernel, shape, compiler_params=params)

    def lower(entry: Callable[..., Any]) -> float:
        fn = entry(kernel, shape, compiler_params=make_params())
        start = time.perf_counter()
        with _jaxcompat.cross_lowering(args.target):
            jax.jit(fn).trace(x).lower(lowering_platforms=(args.target,))
        return time.perf_counter() - start

    number = 100  # short batches: long ones get throttled on a CPU-quota'd host
    build_us: dict[str, float] = {}
    lower_ms: dict[str, float] = {}
    # JAX first: typed_pallas's first call puts its lowering guard in place for the process
    for name, entry in entries.items():
        lower(entry)  # warm up imports and caches
        build_us[name] = statistics.median(
            min(timeit.repeat(build(entry), number=number, repeat=30)) / number * 1e6
            for _ in range(args.runs)
        )
        lower_ms[name] = statistics.median(lower(entry) * 1e3 for _ in range(args.runs))
    texts = []
    for entry in entries.values():  # one call site for both
        texts.append(
            _jaxcompat.export_text(
                entry(kernel, shape, compiler_params=make_params()), args.target, x
            )
        )

    print(
        f"# entry overhead, Python {sys.version.split()[0]}, jax {jax.__version__}, target {args.target}; median of {args.runs} runs"
    )
    print("| step | jax | typed_pallas | ratio |")
    print("|---|---|---|---|")
    print(
        f"| build (us) | {build_us['jax']:.1f} | {build_us['typed_pallas']:.1f} | {build_us['typed_pallas'] / build_us['jax']:.2f} |"
    )
    print(
        f"| trace+lower (ms) | {lower_ms['jax']:.2f} | {lower_ms['typed_pallas']:.2f} | {lower_ms['typed_pallas'] / lower_ms['jax']:.2f} |"
    )
    print(f"lowered module text byte-identical: {texts[0] == texts[1]} ({len(texts[0])} chars)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
