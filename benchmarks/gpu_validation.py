"""GPU validation: JAX's own Pallas GPU ops through the typed API vs raw JAX (NVIDIA GPU).

Run on a machine with an NVIDIA GPU (Hopper for the Mosaic GPU case), from the
repository root, with typed-pallas importable (installed, or ``PYTHONPATH=src``)::

    python benchmarks/gpu_validation.py --json gpu_validation.json

What it does:

1. **Ops, typed vs raw.** JAX's Triton ops from ``jax.experimental.pallas.ops.gpu``
   (softmax, layer_norm, rms_norm, attention forward and its gradient; jax 0.12.1 no
   longer ships them, and there the run has only the Mosaic GPU case and says so under
   ``"absent"``) and the Mosaic GPU
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

The routing, the typed-vs-raw comparison of one op and the runner of the programs are
shared with the TPU check, benchmarks/tpu_validation.py (benchmarks/pallas_validation.py).

What it does not do: tune kernels, or measure anything but whole compiled calls.
"""

from __future__ import annotations

import argparse
import importlib
import sys
import textwrap
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pallas_validation as pv  # this script's folder is on sys.path
from pallas_validation import MismatchCase

EXPECTED = "Compiler params for platform tpu cannot be used for gpu lowering."
EXPECTED_BACKEND = "Compiler params for backend triton cannot be used for mosaic_gpu lowering."


# --------------------------------------------------------------------------- ops


#: JAX's Triton example ops this check runs, where the installed jax ships them (jax
#: 0.12.1 removed them: examples, not an API)
TRITON_OPS = ("attention", "layer_norm", "rms_norm", "softmax")


def triton_ops() -> dict[str, Any]:
    """The modules of ``TRITON_OPS`` the installed jax has, by name."""
    found: dict[str, Any] = {}
    for name in TRITON_OPS:
        try:
            found[name] = importlib.import_module(f"jax.experimental.pallas.ops.gpu.{name}")
        except ModuleNotFoundError:
            continue
    return found


def op_cases(interpret: bool) -> list[dict[str, Any]]:
    import jax
    import jax.numpy as jnp

    ops = triton_ops()
    if set(ops) != set(TRITON_OPS):
        return mosaic_gpu_cases(interpret, jax.random.key(1))
    attention, layer_norm, rms_norm, softmax = (ops[name] for name in TRITON_OPS)

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
    return cases + mosaic_gpu_cases(interpret, next(k))


def mosaic_gpu_cases(interpret: bool, key: Any) -> list[dict[str, Any]]:
    """The Mosaic GPU Hopper matmul's case (none in interpret mode)."""
    import jax
    import jax.numpy as jnp

    cases: list[dict[str, Any]] = []
    k = iter(jax.random.split(key, 2))
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


def run_op(case: dict[str, Any], samples: int, inner: int) -> dict[str, Any]:
    """``case`` built raw and by the typed entry point it names (pv.run_op)."""
    import typed_pallas

    replacement = (
        typed_pallas.pallas_call
        if case["entry"] == "pallas_call"
        else typed_pallas.mosaic_gpu_kernel
    )
    return pv.run_op(case, replacement, samples, inner)


# --------------------------------------------------------------------------- mismatch cases

# Each case is a program of its own, run in a fresh interpreter: the prelude, the case's
# ``build`` (which defines ``f``, a function of ``x``), then one step, all built by
# mismatch_program() and nowhere else (tests/test_gpu_validation.py compiles and runs
# exactly these programs on CPU).

_PRELUDE = (
    textwrap.dedent("""
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
""")
    + pv.REPORT_DEF
)

#: the step on a CPU host (``--interpret``, the tests): lower ``f`` for a GPU platform with
#: jax.export (cross-lowering, as tests/runtime/test_matrix.py does), run nothing
_LOWER = "from typed_pallas import _jaxcompat\n_jaxcompat.export_text(f, {platform!r}, x)\n"


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
    step = pv.run_step(case) if lower_for is None else _LOWER.format(platform=lower_for)
    return pv.program(_PRELUDE, case, step)


def run_mismatch(
    name: str, case: MismatchCase, env: dict[str, str], lower_for: str | None = None
) -> dict[str, Any]:
    """Run ``mismatch_program(case, lower_for)`` in a fresh interpreter; its result row."""
    return pv.run_case(name, case, mismatch_program(case, lower_for), env, EXPECTED, lower_for)


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

    env = pv.environment()

    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python benchmarks/gpu_validation.py " + " ".join(argv or sys.argv[1:]),
    }
    # mismatch cases first, each in a fresh interpreter (--interpret: lowered for cuda here)
    if not args.skip_mismatch:
        lower_for = "cuda" if args.interpret else None
        report["mismatch"] = [run_mismatch(n, c, env, lower_for) for n, c in MISMATCH_CASES.items()]

    report.update(pv.describe_platform())
    cases = op_cases(args.interpret)
    report["absent"] = [
        f"jax.experimental.pallas.ops.gpu.{n}" for n in TRITON_OPS if n not in triton_ops()
    ]
    if args.only:
        cases = [c for c in cases if c["name"] in args.only]
    samples, inner = (3, 1) if args.interpret else (args.samples, args.inner)
    report["ops"] = [run_op(c, samples, inner) for c in cases]

    pv.print_ops(report)
    pv.print_mismatch(report.get("mismatch", []))
    pv.write_json(args.json, report)
    print(f"JSON: {args.json}")
    mismatch_ok = all(m["as_expected"] is not False for m in report.get("mismatch", []))
    return 0 if mismatch_ok and all(r.get("ok") for r in report["ops"]) else 1


if __name__ == "__main__":
    sys.exit(main())
