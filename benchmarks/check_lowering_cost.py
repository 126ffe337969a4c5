"""Cost of ``typed_pallas.check_lowering`` against a plain ``jax.jit(f).lower(...)``, same run.

Usage (from the repository root)::

    .venv312/bin/python benchmarks/check_lowering_cost.py            # 15 runs each
    .venv311/bin/python benchmarks/check_lowering_cost.py --runs 30 --json out.json

Workloads (each run builds a fresh function, so no JAX trace/lowering cache is reused):

* ``jnp``: a small jnp function (what ``jax.jit(f).lower(x)`` can lower on this CPU host);
* ``tpu-kernel``: a ``pl.pallas_call`` with TPU params (an (8, 128) add-one);
* ``dispatch``: ``typed_pallas.dispatch(tpu=..., gpu=..., default=...)`` over three branches.

Measured, median over ``--runs`` (interleaved so load drift hits all alike):

* ``plain``: ``jax.jit(f).lower(x)`` for the default backend (cpu) for ``jnp``; for the
  kernels, which cannot lower on cpu, one ``jax.jit(f).trace(x).lower(lowering_platforms=("tpu",))``
  (with the abstract device jax 0.12 needs);
* ``plain x3``: the same plain lowering once per platform tpu, cuda, rocm (sum; a lowering
  that raises, like the TPU kernel's for cuda, is timed up to the exception);
* ``check_lowering``: ``check_lowering(f, x)`` for tpu, cuda and rocm.

Prints the medians and the ratios check_lowering / plain and check_lowering / plain x3.
What it does not do: compile or run anything, or time a real accelerator.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
import warnings
from collections.abc import Callable
from typing import Any

warnings.simplefilter("ignore")

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental import pallas as pl  # noqa: E402
from jax.experimental.pallas import tpu as pltpu  # noqa: E402
from jax.experimental.pallas import triton as pltriton  # noqa: E402

import typed_pallas  # noqa: E402
from typed_pallas._jaxcompat import cross_lowering  # noqa: E402

PLATFORMS = ("tpu", "cuda", "rocm")
X = jax.ShapeDtypeStruct((8, 128), jnp.float32)  # type: ignore[no-untyped-call]


def _body(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + 1


def make_jnp() -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        return jnp.tanh(x) * 2 + x.sum()

    return f


def make_tpu_kernel() -> Callable[[Any], Any]:
    def f(x: Any) -> Any:
        return pl.pallas_call(_body, out_shape=X, compiler_params=pltpu.CompilerParams())(x)

    return f


def make_dispatch() -> Callable[[Any], Any]:
    @typed_pallas.platform("tpu")
    def tpu(x: Any) -> Any:
        return pl.pallas_call(_body, out_shape=X, compiler_params=pltpu.CompilerParams())(x)

    @typed_pallas.platform("gpu")
    def gpu(x: Any) -> Any:
        return pl.pallas_call(_body, out_shape=X, compiler_params=pltriton.CompilerParams())(x)

    def reference(x: Any) -> Any:
        return x + 1

    return typed_pallas.dispatch(tpu=tpu, gpu=gpu, default=reference)


def plain_lower(fn: Callable[[Any], Any], platform: str | None) -> None:
    """One plain lowering; a failure (a TPU kernel for cuda) is timed like a success."""
    try:
        if platform is None:
            jax.jit(fn).lower(X)
            return
        with cross_lowering(platform):
            jax.jit(fn).trace(X).lower(lowering_platforms=(platform,))
    except Exception:
        pass


def lowering_for(
    make: Callable[[], Callable[[Any], Any]], platform: str | None
) -> Callable[[], None]:
    """A step that builds a fresh function and lowers it for ``platform`` (the timed unit)."""
    return lambda: plain_lower(make(), platform)


def timed(step: Callable[[], object]) -> float:
    start = time.perf_counter()
    step()
    return time.perf_counter() - start


def measure(
    make: Callable[[], Callable[[Any], Any]], runs: int, cpu_lowers: bool
) -> dict[str, float]:
    single = "cpu" if cpu_lowers else "tpu"
    times: dict[str, list[float]] = {"plain": [], "plain x3": [], "check_lowering": []}
    # one warm-up of each, so imports and one-time registrations are not timed
    plain_lower(make(), None if cpu_lowers else "tpu")
    typed_pallas.check_lowering(make(), X)
    for p in PLATFORMS:
        plain_lower(make(), p)
    for _ in range(runs):
        times["plain"].append(timed(lambda: plain_lower(make(), None if cpu_lowers else "tpu")))
        times["plain x3"].append(sum(timed(lowering_for(make, p)) for p in PLATFORMS))
        report_time = timed(lambda: typed_pallas.check_lowering(make(), X))
        times["check_lowering"].append(report_time)
    medians = {k: statistics.median(v) for k, v in times.items()}
    medians["ratio vs plain"] = medians["check_lowering"] / medians["plain"]
    medians["ratio vs plain x3"] = medians["check_lowering"] / medians["plain x3"]
    medians["plain platform"] = single  # type: ignore[assignment]
    return medians


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=15)
    parser.add_argument("--json", help="also write the results here")
    args = parser.parse_args()
    workloads = {
        "jnp": (make_jnp, True),
        "tpu-kernel": (make_tpu_kernel, False),
        "dispatch": (make_dispatch, False),
    }
    results: dict[str, dict[str, float]] = {}
    print(f"jax {jax.__version__}, {args.runs} runs, median seconds")
    print(
        f"{'workload':<11} {'plain':>9} {'plain x3':>9} {'check_lowering':>15} {'/plain':>7} {'/plain x3':>9}"
    )
    for name, (make, cpu_lowers) in workloads.items():
        r = measure(make, args.runs, cpu_lowers)
        results[name] = r
        print(
            f"{name:<11} {r['plain']:>9.4f} {r['plain x3']:>9.4f} {r['check_lowering']:>15.4f} "
            f"{r['ratio vs plain']:>6.2f}x {r['ratio vs plain x3']:>8.2f}x"
        )
    print("plain = jax.jit(f).lower(x) on cpu for jnp; one cross-lowering for tpu for the kernels")
    if args.json:
        with open(args.json, "w") as fh:
            json.dump({"jax": jax.__version__, "runs": args.runs, "results": results}, fh, indent=2)


if __name__ == "__main__":
    main()
