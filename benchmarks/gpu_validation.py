"""GPU validation: JAX's own Pallas GPU ops through the typed API vs raw JAX (NVIDIA GPU).

Run on a machine with an NVIDIA GPU (Hopper for the Mosaic GPU case), from the
repository root, with typed-pallas importable (installed, or ``PYTHONPATH=src``)::

    python benchmarks/gpu_validation.py --json gpu_validation.json

What it does:

1. **Ops, typed vs raw.** JAX's Triton ops from ``jax.experimental.pallas.ops.gpu``
   (softmax, layer_norm, rms_norm, attention forward and its gradient) and the Mosaic GPU
   Hopper matmul (``hopper_matmul_mgpu``) are compiled twice in one process: as shipped
   (raw JAX), and with the op module's ``pl`` (or ``plgpu``) name pointing to a proxy of
   that module whose ``pallas_call`` is ``typed_pallas.pallas_call`` (or whose ``kernel``
   is ``typed_pallas.mosaic_gpu_kernel``), so the op's own kernel is built by the typed
   API. No JAX code is copied. For each op it records: how many calls went through the
   typed entry point, whether the lowered StableHLO text is identical, whether the
   outputs are bitwise equal (and close to a plain-JAX reference), and the median kernel
   time of both (interleaved samples, same process) with their ratio.
2. **Wrong params on the GPU.** Each case in a fresh interpreter (JAX's behaviour
   depends on which lowering rules earlier calls registered): TPU params through raw
   ``pl.pallas_call`` (JAX 0.11/0.12 give an empty ``AssertionError``), through
   ``typed_pallas.pallas_call`` (the exact ``ValueError``), through raw
   ``pl.pallas_call`` after ``typed_pallas.install_backstop()``, TPU params on
   ``plgpu.kernel`` raw vs ``typed_pallas.mosaic_gpu_kernel``, and Triton params on
   ``plgpu.kernel`` raw vs typed.

   Each case says what it must give (the typed API's exact ``ValueError``, the control
   runs); the raw cases measure what JAX does. A case not as expected fails the run.

It writes a JSON with everything and prints a table. ``--interpret`` is a smoke test of
this script on any machine: the ops run in Pallas interpret mode (no timings worth
reading, no Mosaic GPU), and the wrong-params cases are lowered for cuda on this host with
``jax.export`` instead of run (tests/test_gpu_validation.py compiles and runs them on CPU).

What it does not do: tune kernels, or measure anything but whole compiled calls.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import functools
import json
import os
import platform
import statistics
import subprocess
import sys
import textwrap
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

EXPECTED = "Compiler params for platform tpu cannot be used for gpu lowering."
EXPECTED_BACKEND = "Compiler params for backend triton cannot be used for mosaic_gpu lowering."


# --------------------------------------------------------------------------- typed routing


class Counter:
    def __init__(self) -> None:
        self.n = 0


def _proxy(
    real: types.ModuleType, name: str, replacement: Callable[..., Any], counter: Counter
) -> types.ModuleType:
    """A module object that is ``real`` except that ``name`` is ``replacement`` (counted)."""
    proxy = types.ModuleType(f"{real.__name__}__typed")

    @functools.wraps(replacement)
    def counted(*args: Any, **kwargs: Any) -> Any:
        counter.n += 1
        return replacement(*args, **kwargs)

    setattr(proxy, name, counted)
    proxy.__getattr__ = lambda attr: getattr(real, attr)  # type: ignore[method-assign]  # PEP 562
    return proxy


@contextlib.contextmanager
def routed(
    module: types.ModuleType,
    alias: str,
    name: str,
    replacement: Callable[..., Any],
    counter: Counter,
) -> Iterator[None]:
    """While active, ``module.<alias>.<name>`` is ``replacement``."""
    real = getattr(module, alias)
    setattr(module, alias, _proxy(real, name, replacement, counter))
    try:
        yield
    finally:
        setattr(module, alias, real)


# --------------------------------------------------------------------------- ops


def op_cases(interpret: bool) -> list[dict[str, Any]]:
    import jax
    import jax.numpy as jnp
    from jax.experimental.pallas.ops.gpu import attention, layer_norm, rms_norm, softmax

    k = iter(jax.random.split(jax.random.key(0), 16))
    small = interpret
    rows, cols = (64, 256) if small else (8192, 4096)
    x = jax.random.normal(next(k), (rows, cols), jnp.float32)
    n, d = (64, 256) if small else (4096, 2048)
    xn = jax.random.normal(
        next(k), (2, n // 2, d), jnp.float32
    )  # the norms vmap twice: (batch, seq, d)
    w = jax.random.normal(next(k), (d,), jnp.float32)
    b = jax.random.normal(next(k), (d,), jnp.float32)
    bsz, seq, heads, hd = (1, 128, 2, 64) if small else (2, 2048, 8, 64)
    q, kk, v = (jax.random.normal(next(k), (bsz, seq, heads, hd), jnp.float16) for _ in range(3))

    def ln_ref(x: Any, w: Any, b: Any) -> Any:
        mu = x.mean(-1, keepdims=True)
        var = ((x - mu) ** 2).mean(-1, keepdims=True)
        return (x - mu) / jnp.sqrt(var + 1e-5) * w + b

    def rms_ref(x: Any, w: Any, b: Any) -> Any:
        return x / jnp.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * w + b

    def mha_loss(q: Any, k: Any, v: Any) -> Any:
        return attention.mha(q, k, v, None, interpret=interpret).astype(jnp.float32).sum()

    cases: list[dict[str, Any]] = [
        dict(
            name="softmax",
            module=softmax,
            args=(x,),
            fn=lambda x: softmax.softmax(x, interpret=interpret),
            ref=lambda x: jax.nn.softmax(x, -1),
            tol=1e-5,
        ),
        dict(
            name="layer_norm",
            module=layer_norm,
            args=(xn, w, b),
            fn=lambda x, w, b: layer_norm.layer_norm(x, w, b, interpret=interpret),
            ref=ln_ref,
            tol=1e-4,
        ),
        dict(
            name="rms_norm",
            module=rms_norm,
            args=(xn, w, b),
            fn=lambda x, w, b: rms_norm.rms_norm(x, w, b, interpret=interpret),
            ref=rms_ref,
            tol=1e-4,
        ),
        dict(
            name="attention_fwd",
            module=attention,
            args=(q, kk, v),
            fn=lambda q, k, v: attention.mha(q, k, v, None, interpret=interpret),
            ref=lambda q, k, v: attention.mha_reference(q, k, v, None),
            tol=2e-2,
        ),
        dict(
            name="attention_grad",
            module=attention,
            args=(q, kk, v),
            fn=lambda q, k, v: jax.grad(mha_loss, argnums=(0, 1, 2))(q, k, v),
            ref=None,
            tol=0,
        ),
    ]
    for c in cases:
        c.update(alias="pl", entry="pallas_call", backend="triton")
    if not interpret:
        from jax.experimental.pallas.ops.gpu import hopper_matmul_mgpu as hm

        m_, n_, k_ = 4096, 4096, 4096
        a = jax.random.normal(next(k), (m_, k_), jnp.float16)
        bb = jax.random.normal(next(k), (k_, n_), jnp.float16)
        cfg = hm.TuningConfig(tile_m=128, tile_n=128, tile_k=64, max_concurrent_steps=4)
        cases.append(
            dict(
                name="hopper_matmul_mgpu",
                module=hm,
                args=(a, bb),
                alias="plgpu",
                entry="kernel",
                backend="mosaic_gpu",
                fn=lambda a, b: hm.matmul(a, b, None, cfg),
                ref=lambda a, b: jnp.dot(a.astype(jnp.float32), b.astype(jnp.float32)).astype(
                    jnp.float16
                ),
                tol=2e-2,
            )
        )
    return cases


def _leaves(x: Any) -> list[Any]:
    import jax

    return jax.tree_util.tree_leaves(x)


def _diff(a: str, b: str, limit: int = 12) -> list[str]:
    """The first differing lines of two module texts (long lines cut)."""
    import difflib

    lines = [
        ln[:300]
        for ln in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0)
        if ln[:1] in "+-" and not ln.startswith(("+++", "---"))
    ]
    return lines[:limit]


def _ready(value: Any) -> Any:
    """``jax.block_until_ready`` (untyped in jax)."""
    import jax

    return jax.block_until_ready(value)  # type: ignore[no-untyped-call]


def _clear_caches() -> None:
    """``jax.clear_caches`` (untyped in jax)."""
    import jax

    jax.clear_caches()  # type: ignore[no-untyped-call]


def time_pair(
    f1: Callable[..., Any], f2: Callable[..., Any], args: tuple[Any, ...], samples: int, inner: int
) -> tuple[list[float], list[float]]:
    """Interleaved samples of ``inner`` back-to-back calls each; ms per call."""

    for f in (f1, f2):
        for _ in range(3):
            _ready(f(*args))
    t1: list[float] = []
    t2: list[float] = []
    for i in range(samples):
        order = ((f1, t1), (f2, t2)) if i % 2 == 0 else ((f2, t2), (f1, t1))
        for f, acc in order:
            _ready(f(*args))
            t0 = time.perf_counter()
            for _ in range(inner):
                out = f(*args)
            _ready(out)
            acc.append((time.perf_counter() - t0) * 1e3 / inner)
    return t1, t2


def run_op(case: dict[str, Any], samples: int, inner: int) -> dict[str, Any]:
    import jax
    import numpy as np

    import typed_pallas

    res: dict[str, Any] = {"op": case["name"], "backend": case["backend"]}
    replacement = (
        typed_pallas.pallas_call
        if case["entry"] == "pallas_call"
        else typed_pallas.mosaic_gpu_kernel
    )
    args = case["args"]
    try:
        # The ops jit themselves: clear JAX's caches so each variant really traces the op.
        _clear_caches()
        raw_fn = jax.jit(lambda *a: case["fn"](*a))
        raw_low = raw_fn.lower(*args)
        raw = raw_low.compile()
        counter = Counter()
        _clear_caches()
        typed_fn = jax.jit(lambda *a: case["fn"](*a))
        with routed(case["module"], case["alias"], case["entry"], replacement, counter):
            typed_low = typed_fn.lower(*args)
        typed = typed_low.compile()
        res["typed_calls"] = counter.n
        # control: the same op lowered raw a second time (some lowerings embed ids or
        # counters, so text can differ between two raw lowerings too)
        _clear_caches()
        raw2_low = jax.jit(lambda *a: case["fn"](*a)).lower(*args)
        a_txt, b_txt, c_txt = raw_low.as_text(), typed_low.as_text(), raw2_low.as_text()
        res["lowered_identical"] = a_txt == b_txt
        res["raw_vs_raw_identical"] = a_txt == c_txt
        if a_txt != b_txt:
            res["lowered_diff_typed"] = _diff(a_txt, b_txt)
            res["lowered_diff_raw_vs_raw"] = _diff(a_txt, c_txt)
            res["lowered_identical_modulo_raw_noise"] = _diff(a_txt, b_txt) == _diff(a_txt, c_txt)
        out_raw, out_typed = raw(*args), typed(*args)
        la, lb = _leaves(out_raw), _leaves(out_typed)
        res["outputs_bitwise_equal"] = len(la) == len(lb) and all(
            np.array_equal(np.asarray(p), np.asarray(q)) for p, q in zip(la, lb)
        )
        if case["ref"] is not None:
            ref = _leaves(case["ref"](*args))
            err = max(
                float(
                    np.max(np.abs(np.asarray(p, np.float32) - np.asarray(r, np.float32)))
                    / (float(np.max(np.abs(np.asarray(r, np.float32)))) or 1.0)
                )
                for p, r in zip(la, ref)
            )
            res["max_rel_error_vs_reference"] = err
            res["matches_reference"] = err <= case["tol"]
        t_raw, t_typed = time_pair(raw, typed, args, samples, inner)
        res["raw_ms_median"] = statistics.median(t_raw)
        res["typed_ms_median"] = statistics.median(t_typed)
        res["ratio_typed_over_raw"] = res["typed_ms_median"] / res["raw_ms_median"]
        res["samples"] = samples
        res["calls_per_sample"] = inner
        res["ok"] = bool(
            res["typed_calls"]
            and res["outputs_bitwise_equal"]
            and res.get("matches_reference", True)
        )
    except Exception as e:  # recorded, not hidden
        res["ok"] = False
        res["error"] = f"{type(e).__name__}: {str(e)[:2000]}"
    return res


# --------------------------------------------------------------------------- mismatch cases

# Each case is a program of its own, run in a fresh interpreter: the prelude, the case's
# ``build`` (which defines ``f``, a function of ``x``), then one step, all built by
# mismatch_program() and nowhere else (tests/test_gpu_validation.py compiles and runs
# exactly these programs on CPU). The programs are strings: mypy does not see into them,
# and they cannot use this module's helpers.

_PRELUDE = textwrap.dedent("""
    import json, sys, traceback
    import jax, jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu
    from jax.experimental.pallas import triton as pltriton
    x = jnp.arange(256 * 128, dtype=jnp.float32).reshape(256, 128)
    def add_one(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    def mgpu():
        from jax.experimental.pallas import mosaic_gpu as plgpu
        return plgpu
    def mgpu_kw():
        import inspect
        ps = inspect.signature(mgpu().kernel).parameters
        return {"out_type": out} if "out_type" in ps else {"out_shape": out}
    def _report(exc):
        print("@@RESULT@@" + json.dumps({"raised": type(exc).__name__ if exc else None,
               "is_value_error": isinstance(exc, ValueError), "message": str(exc) if exc else None,
               "mro": [c.__name__ for c in type(exc).__mro__] if exc else None}))
""")

#: the step on the GPU: run ``f`` on ``x``
_RUN = "y = jax.block_until_ready(jax.jit(f)(x))\n"
#: and, for a case that must run, check its result
_CHECK = "assert bool((y == x + 1).all())\n"
#: the step on a CPU host (``--interpret``, the tests): lower ``f`` for a GPU platform with
#: jax.export (cross-lowering, as tests/runtime/test_matrix.py does), run nothing
_LOWER = "from typed_pallas import _jaxcompat\n_jaxcompat.export_text(f, {platform!r}, x)\n"


@dataclasses.dataclass(frozen=True)
class MismatchCase:
    """One wrong-params case (or the control)."""

    #: source that defines ``f`` from the prelude's names
    build: str
    #: the exact ``ValueError`` text the typed API must give; None where the case measures
    #: what raw JAX does
    expect: str | None = None
    #: the control: ``f`` must run (lower, on a CPU host) and give ``x + 1``
    must_run: bool = False


MISMATCH_CASES: dict[str, MismatchCase] = {
    "raw pl.pallas_call + TPU params": MismatchCase("""
        f = pl.pallas_call(add_one, out_shape=out, compiler_params=pltpu.CompilerParams())
    """),
    "typed_pallas.pallas_call + TPU params": MismatchCase(
        """
        import typed_pallas
        f = typed_pallas.pallas_call(add_one, out_shape=out, compiler_params=pltpu.CompilerParams())
        """,
        expect=EXPECTED,
    ),
    "raw pl.pallas_call + TPU params, after install_backstop()": MismatchCase(
        """
        import typed_pallas
        typed_pallas.install_backstop()
        f = pl.pallas_call(add_one, out_shape=out, compiler_params=pltpu.CompilerParams())
        """,
        expect=EXPECTED,
    ),
    "raw plgpu.kernel + TPU params": MismatchCase("""
        plgpu = mgpu()
        def body(x_ref, o_ref):
            o_ref[...] = x_ref[...] + 1.0
        f = plgpu.kernel(body, compiler_params=pltpu.CompilerParams(), **mgpu_kw())
    """),
    "typed_pallas.mosaic_gpu_kernel + TPU params": MismatchCase(
        """
        import typed_pallas
        plgpu = mgpu()
        def body(x_ref, o_ref):
            o_ref[...] = x_ref[...] + 1.0
        f = typed_pallas.mosaic_gpu_kernel(body, compiler_params=pltpu.CompilerParams(), **mgpu_kw())
        """,
        expect=EXPECTED,
    ),
    "raw plgpu.kernel + Triton params": MismatchCase("""
        plgpu = mgpu()
        def body(x_ref, o_ref):
            o_ref[...] = x_ref[...] + 1.0
        f = plgpu.kernel(body, compiler_params=pltriton.CompilerParams(), **mgpu_kw())
    """),
    "typed_pallas.mosaic_gpu_kernel + Triton params": MismatchCase(
        """
        import typed_pallas
        plgpu = mgpu()
        def body(x_ref, o_ref):
            o_ref[...] = x_ref[...] + 1.0
        f = typed_pallas.mosaic_gpu_kernel(body, compiler_params=pltriton.CompilerParams(), **mgpu_kw())
        """,
        expect=EXPECTED_BACKEND,
    ),
    "control: typed_pallas.pallas_call + Triton params (must run)": MismatchCase(
        """
        import typed_pallas
        f = typed_pallas.pallas_call(add_one, out_shape=out, compiler_params=pltriton.CompilerParams())
        """,
        must_run=True,
    ),
}


def mismatch_program(case: MismatchCase, lower_for: str | None = None) -> str:
    """The whole program of ``case``: on the GPU (``lower_for`` None) it runs ``f``; with
    ``lower_for`` (``"cuda"``) it lowers ``f`` for that platform on this host instead."""
    if lower_for is None:
        step = _RUN + (_CHECK if case.must_run else "")
    else:
        step = _LOWER.format(platform=lower_for)
    body = textwrap.dedent(case.build).strip() + "\n" + step
    return (
        _PRELUDE
        + "try:\n"
        + textwrap.indent(body, "    ")
        + "except Exception as exc:\n    _report(exc)\nelse:\n    _report(None)\n"
    )


def as_expected(case: MismatchCase, result: dict[str, Any]) -> bool | None:
    """Whether ``result`` is what ``case`` claims; None for raw JAX (what it does is measured)."""
    if case.must_run:
        return result.get("raised") is None
    if case.expect is not None:
        return bool(result.get("is_value_error")) and result.get("message") == case.expect
    return None


def run_mismatch(
    name: str, case: MismatchCase, env: dict[str, str], lower_for: str | None = None
) -> dict[str, Any]:
    """Run ``mismatch_program(case, lower_for)`` in a fresh interpreter; its result row."""
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-c", mismatch_program(case, lower_for)],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("@@RESULT@@")), None)
    res: dict[str, Any] = {"case": name, "seconds": round(time.perf_counter() - t0, 1)}
    if lower_for is not None:
        res["lowered_for"] = lower_for
    if line is None:
        res.update(
            raised="(process failed)", message=(p.stdout + p.stderr)[-1500:], is_value_error=False
        )
    else:
        res.update(json.loads(line[len("@@RESULT@@") :]))
    res["exact_expected_text"] = res.get("message") == EXPECTED
    res["as_expected"] = as_expected(case, res)
    return res


# --------------------------------------------------------------------------- main


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", type=Path, default=Path("gpu_validation.json"))
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--inner", type=int, default=10, help="calls per timed sample")
    ap.add_argument("--interpret", action="store_true", help="CPU smoke test of this script")
    ap.add_argument("--only", action="append", help="only these ops (repeatable)")
    ap.add_argument("--skip-mismatch", action="store_true")
    args = ap.parse_args(argv)

    env = dict(os.environ)
    src = str(Path(__file__).resolve().parent.parent / "src")
    env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [env.get("PYTHONPATH")])])
    if src not in sys.path:
        sys.path.insert(0, src)

    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python benchmarks/gpu_validation.py " + " ".join(argv or sys.argv[1:]),
    }
    # mismatch cases first, each in a fresh interpreter (--interpret: lowered for cuda here)
    if not args.skip_mismatch:
        lower_for = "cuda" if args.interpret else None
        report["mismatch"] = [run_mismatch(n, c, env, lower_for) for n, c in MISMATCH_CASES.items()]

    import jax

    import typed_pallas

    dev = jax.devices()[0]
    report.update(
        jax=jax.__version__,
        jaxlib=getattr(jax.lib, "__version__", None) or jax.__version__,
        device=getattr(dev, "device_kind", str(dev)),
        platform=dev.platform,
        python=platform.python_version(),
        typed_pallas=getattr(typed_pallas, "__version__", None),
    )
    cases = op_cases(args.interpret)
    if args.only:
        cases = [c for c in cases if c["name"] in args.only]
    samples, inner = (3, 1) if args.interpret else (args.samples, args.inner)
    report["ops"] = [run_op(c, samples, inner) for c in cases]

    print(f"jax {report['jax']} on {report['device']}  ({report['date']})")
    print(
        f"{'op':20s} {'typed calls':>11s} {'same HLO':>8s} {'raw=raw':>7s} {'bitwise':>7s} {'ref ok':>6s} "
        f"{'raw ms':>8s} {'typed ms':>8s} {'ratio':>6s}"
    )
    for r in report["ops"]:
        if "error" in r:
            print(f"{r['op']:20s} ERROR {r['error'][:200]}")
            continue
        print(
            f"{r['op']:20s} {r['typed_calls']:>11d} {r['lowered_identical']!s:>8s} "
            f"{r['raw_vs_raw_identical']!s:>7s} "
            f"{r['outputs_bitwise_equal']!s:>7s} {r.get('matches_reference', '-')!s:>6s} "
            f"{r['raw_ms_median']:8.3f} {r['typed_ms_median']:8.3f} {r['ratio_typed_over_raw']:6.3f}"
        )
    for m in report.get("mismatch", []):
        msg = m.get("message") or ""
        print(
            f"- {m['case']}: {m['raised']}"
            + (f": {msg[:160]!r}" if m["raised"] else "")
            + ("  [exact]" if m["exact_expected_text"] else "")
            + {True: "  [as expected]", False: "  [NOT AS EXPECTED]", None: ""}[m["as_expected"]]
        )
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(report, indent=1) + "\n")
    print(f"JSON: {args.json}")
    mismatch_ok = all(m["as_expected"] is not False for m in report.get("mismatch", []))
    return 0 if mismatch_ok and all(r.get("ok") for r in report["ops"]) else 1


if __name__ == "__main__":
    sys.exit(main())
