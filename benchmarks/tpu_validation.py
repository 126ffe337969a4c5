"""TPU validation: JAX's own Pallas TPU ops through the typed API vs raw JAX (TPU).

Run on a machine with a TPU, from the repository root, with typed-pallas importable
(installed, or ``PYTHONPATH=src``; the programs this script starts get ``src`` first on
their ``PYTHONPATH``)::

    python benchmarks/tpu_validation.py --json tpu_validation.json

What it does (the TPU counterpart of benchmarks/gpu_validation.py):

1. **Wrong params on the TPU.** Each case in a fresh interpreter (JAX's behaviour
   depends on which lowering rules earlier calls registered), before this process opens
   the chip: Triton params and Mosaic GPU params through raw ``pl.pallas_call`` (what JAX
   does is recorded), through ``typed_pallas.pallas_call`` (the exact ``ValueError``),
   through raw ``pl.pallas_call`` after ``typed_pallas.install_backstop()``; Triton
   params on ``pl.kernel`` with a TPU mesh, raw vs ``typed_pallas.kernel``. Controls that
   must run and give the right result: TPU params through the typed entry, TPU-only
   bodies (``pltpu.sync_copy``, a DMA semaphore) through the typed entry without params,
   and ``typed_pallas.kernel`` on a TPU mesh.
2. **Ops, typed vs raw.** JAX's TPU ops from ``jax.experimental.pallas.ops.tpu``
   (the example kernel, the blocked matmul, flash attention forward and its gradient,
   splash attention forward and its gradient, paged attention, ragged paged attention,
   megablox's grouped matmul and its gradient, the Threefry and Philox random bits) are
   compiled twice in one process: as shipped (raw JAX), and with the op module's ``pl``
   pointing to a proxy of that module whose ``pallas_call`` is ``typed_pallas.pallas_call``,
   so the op's own kernel is built by the typed API. No JAX code is copied. For each op:
   how many calls went through the typed entry point, whether the lowered text is
   identical, whether the outputs are bitwise equal (and close to a plain-JAX
   reference), and the median time of both (interleaved samples, same process) with
   their ratio. ``all_gather`` is not run: on one chip (a mesh axis of size 1) it returns
   its input without running a kernel.
3. **The parity harness on the TPU** (``tests/parity``): every ``fire_*`` function runs a
   TPU-only kernel, so on the TPU it must run; every ``silent_*`` twin must run too,
   except those marked in ``TPU_PATH_FAILS`` (they run a kernel with Triton params: right
   on a GPU, wrong on the TPU path), which must fail.

Each case says what it must give; the raw cases measure what JAX does. A case not as
expected, an op whose outputs differ or miss the reference, fails the run (exit 1). A
case whose optional dependency is missing on this machine (``absl`` for the Mosaic GPU
params cases on a TPU host: ``OPTIONAL_DEPENDENCIES``) is a skipped row with its reason.
The JSON is written after each part, so a run cut short keeps what it measured.

``--interpret`` is a smoke test of this script on a CPU host: the ops run in Pallas' TPU
interpret mode (``pltpu.force_tpu_interpret_mode()``) on small shapes (no timings worth
reading), the wrong-params programs and the parity functions are lowered for tpu on this
host with ``jax.export`` instead of run (tests/test_tpu_validation.py runs them on CPU).

What it does not do: tune kernels, run collectives, or measure anything but whole
compiled calls.
"""

from __future__ import annotations

import argparse
import contextlib
import importlib
import re
import sys
import textwrap
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pallas_validation as pv  # this script's folder is on sys.path
from pallas_validation import MismatchCase

EXPECTED = "Compiler params for platform gpu cannot be used for tpu lowering."
PARITY = pv.ROOT / "tests" / "parity"

# --------------------------------------------------------------------------- mismatch cases

# Each case is a program of its own, run in a fresh interpreter: the prelude, the case's
# ``build`` (which defines ``f``, a function of ``x``), then one step, all built by
# mismatch_program() and nowhere else (tests/test_tpu_validation.py compiles and runs
# exactly these programs on CPU).

_PRELUDE = (
    textwrap.dedent("""
    import json, sys
    import jax, jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import tpu as pltpu
    from jax.experimental.pallas import triton as pltriton
    x = jnp.arange(256 * 128, dtype=jnp.float32).reshape(256, 128)
    out = jax.ShapeDtypeStruct(x.shape, x.dtype)
    def add_one(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1.0
    def copy_body(x_ref, o_ref):
        pltpu.sync_copy(x_ref, o_ref)
    def dma_body(x_hbm, o_hbm, sem):
        copy = pltpu.make_async_copy(x_hbm, o_hbm, sem)
        copy.start()
        copy.wait()
    def hbm():
        return pl.BlockSpec(memory_space=pl.ANY)
    def mgpu_params():
        from jax.experimental.pallas import mosaic_gpu as plgpu
        return plgpu.CompilerParams()
    def tpu_mesh():
        if hasattr(pltpu, "TensorCoreMesh"):  # jax >= 0.12 (0.12.1 removed the factory)
            return pltpu.TensorCoreMesh(axis_name="core", num_cores=1)
        return pltpu.create_tensorcore_mesh("core", num_cores=1)
""")
    + pv.REPORT_DEF
)

#: the step on a CPU host (``--interpret``, the tests): lower ``f`` for tpu with
#: jax.export (cross-lowering, as tests/runtime/test_matrix.py does), run nothing
_LOWER = "from typed_pallas import _jaxcompat\n_jaxcompat.export_text(f, {platform!r}, x)\n"


MISMATCH_CASES: dict[str, MismatchCase] = {
    "raw pl.pallas_call + Triton params": MismatchCase("""
        f = pl.pallas_call(add_one, out_shape=out, compiler_params=pltriton.CompilerParams())
    """),
    "typed_pallas.pallas_call + Triton params": MismatchCase(
        """
        import typed_pallas
        f = typed_pallas.pallas_call(add_one, out_shape=out, compiler_params=pltriton.CompilerParams())
        """,
        expect=EXPECTED,
    ),
    "raw pl.pallas_call + Triton params, after install_backstop()": MismatchCase(
        """
        import typed_pallas
        typed_pallas.install_backstop()
        f = pl.pallas_call(add_one, out_shape=out, compiler_params=pltriton.CompilerParams())
        """,
        expect=EXPECTED,
    ),
    "raw pl.pallas_call + Mosaic GPU params": MismatchCase("""
        f = pl.pallas_call(add_one, out_shape=out, compiler_params=mgpu_params())
    """),
    "typed_pallas.pallas_call + Mosaic GPU params": MismatchCase(
        """
        import typed_pallas
        f = typed_pallas.pallas_call(add_one, out_shape=out, compiler_params=mgpu_params())
        """,
        expect=EXPECTED,
    ),
    "raw pl.pallas_call + Mosaic GPU params, after install_backstop()": MismatchCase(
        """
        import typed_pallas
        typed_pallas.install_backstop()
        f = pl.pallas_call(add_one, out_shape=out, compiler_params=mgpu_params())
        """,
        expect=EXPECTED,
    ),
    "raw pl.kernel (TPU mesh) + Triton params": MismatchCase("""
        f = pl.kernel(copy_body, out_type=out, mesh=tpu_mesh(), compiler_params=pltriton.CompilerParams())
    """),
    "typed_pallas.kernel (TPU mesh) + Triton params": MismatchCase(
        """
        import typed_pallas
        f = typed_pallas.kernel(copy_body, out_type=out, mesh=tpu_mesh(), compiler_params=pltriton.CompilerParams())
        """,
        expect=EXPECTED,
    ),
    "control: typed_pallas.pallas_call + TPU params (must run)": MismatchCase(
        """
        import typed_pallas
        f = typed_pallas.pallas_call(add_one, out_shape=out, compiler_params=pltpu.CompilerParams())
        """,
        must_run=True,
    ),
    "control: TPU-only body (pltpu.sync_copy), no params, typed_pallas.pallas_call (must run)": MismatchCase(
        """
        import typed_pallas
        f = typed_pallas.pallas_call(copy_body, out_shape=out)
        """,
        must_run=True,
        result="x",
    ),
    "control: TPU-only body (DMA semaphore), no params, typed_pallas.pallas_call (must run)": MismatchCase(
        """
        import typed_pallas
        f = typed_pallas.pallas_call(
            dma_body, out_shape=out, in_specs=[hbm()], out_specs=hbm(),
            scratch_shapes=[pltpu.SemaphoreType.DMA],
        )
        """,
        must_run=True,
        result="x",
    ),
    "control: typed_pallas.kernel (TPU mesh) + TPU params (must run)": MismatchCase(
        """
        import typed_pallas
        f = typed_pallas.kernel(copy_body, out_type=out, mesh=tpu_mesh(), compiler_params=pltpu.CompilerParams())
        """,
        must_run=True,
        result="x",
    ),
}


def mismatch_program(case: MismatchCase, lower_for: str | None = None) -> str:
    """The whole program of ``case``: on the TPU (``lower_for`` None) it runs ``f``; with
    ``lower_for`` (``"tpu"``) it lowers ``f`` for that platform on this host instead."""
    step = pv.run_step(case) if lower_for is None else _LOWER.format(platform=lower_for)
    return pv.program(_PRELUDE, case, step)


#: optional dependencies of the cases: what a case's code calls -> (the module it may
#: lack, why, the distribution that provides it). A case that stops on that module's
#: ModuleNotFoundError is a skipped row with its reason, not a failed one.
OPTIONAL_DEPENDENCIES: dict[str, tuple[str, str, str]] = {
    "mgpu_params()": (
        "absl",
        "Mosaic GPU's params (jax.experimental.pallas.mosaic_gpu) import absl, which jax "
        "does not require and a TPU host may lack",
        "absl-py",
    ),
}

_NO_MODULE = re.compile(r"No module named '([^']+)'")


def skip_reason(case: MismatchCase, row: dict[str, Any]) -> str | None:
    """Why the row of ``case`` is skipped: its program stopped on a missing optional
    dependency of that case (:data:`OPTIONAL_DEPENDENCIES`); None otherwise (any other
    error, a missing module the case does not declare, is the row's outcome)."""
    if row.get("raised") != "ModuleNotFoundError":
        return None
    found = _NO_MODULE.search(str(row.get("message") or ""))
    if found is None:
        return None
    missing = found[1].split(".", 1)[0]
    for call, (module, why, distribution) in OPTIONAL_DEPENDENCIES.items():
        if call in case.build and module == missing:
            return f"optional dependency {module} is not installed ({why}); pip install {distribution} to run it"
    return None


def run_mismatch(
    name: str, case: MismatchCase, env: dict[str, str], lower_for: str | None = None
) -> dict[str, Any]:
    """Run ``mismatch_program(case, lower_for)`` in a fresh interpreter; its result row
    (``skipped``: the reason, where an optional dependency of the case is missing)."""
    row = pv.run_case(name, case, mismatch_program(case, lower_for), env, EXPECTED, lower_for)
    if (reason := skip_reason(case, row)) is not None:
        row["skipped"] = reason
        row["as_expected"] = None  # not run: neither as expected nor not
    return row


def print_mismatch(rows: list[dict[str, Any]]) -> None:
    """The wrong-params table (pallas_validation's), a skipped row with its reason, and
    the count of skipped rows."""
    for row in rows:
        if row.get("skipped"):
            print(f"- {row['case']}: SKIPPED: {row['skipped']}")
        else:
            pv.print_mismatch([row])
    if skipped := sum(bool(row.get("skipped")) for row in rows):
        print(f"mismatch: {skipped} of {len(rows)} case(s) skipped (a missing optional dependency)")


# --------------------------------------------------------------------------- ops


def _gmm_reference(sizes: list[int]) -> Callable[..., Any]:
    """Plain JAX for megablox's ``gmm``: each group's rows times that group's matrix."""
    import jax.numpy as jnp

    bounds = [sum(sizes[:g]) for g in range(len(sizes) + 1)]

    def ref(lhs: Any, rhs: Any) -> Any:
        parts = [
            jnp.dot(lhs[bounds[g] : bounds[g + 1]].astype(jnp.float32), rhs[g].astype(jnp.float32))
            for g in range(len(sizes))
        ]
        return jnp.concatenate(parts, axis=0)

    return ref


def _paged_reference(q: Any, k_pages: Any, v_pages: Any, lengths: Any, page_indices: Any) -> Any:
    """Plain JAX for ``paged_attention``: gather each sequence's pages, mask past its length."""
    import jax
    import jax.numpy as jnp

    heads_kv, _, page, d = k_pages.shape
    batch, heads_q, _ = q.shape
    seq = page_indices.shape[1] * page

    def gather(pages: Any) -> Any:  # (heads_kv, batch, pages, page, d) -> (batch, heads_kv, seq, d)
        g = pages[:, page_indices].reshape(heads_kv, batch, seq, d)
        return g.transpose(1, 0, 2, 3).astype(jnp.float32)

    k, v = gather(k_pages), gather(v_pages)
    qg = q.reshape(batch, heads_kv, heads_q // heads_kv, d).astype(jnp.float32)
    logits = jnp.einsum("bhgd,bhsd->bhgs", qg, k)
    valid = jnp.arange(seq)[None, None, None, :] < lengths[:, None, None, None]
    weights = jax.nn.softmax(jnp.where(valid, logits, -jnp.inf), axis=-1)
    return jnp.einsum("bhgs,bhsd->bhgd", weights, v).reshape(batch, heads_q, d)


def op_cases(interpret: bool) -> list[dict[str, Any]]:
    """JAX's TPU ops with their inputs (small ones in interpret mode) and references."""
    import jax
    import jax.numpy as jnp
    import numpy as np
    from jax.experimental.pallas.ops.tpu import example_kernel, matmul
    from jax.experimental.pallas.ops.tpu import flash_attention as fa
    from jax.experimental.pallas.ops.tpu.megablox import ops as megablox_ops
    from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention_kernel as paged
    from jax.experimental.pallas.ops.tpu.ragged_paged_attention import kernel as ragged
    from jax.experimental.pallas.ops.tpu.random import philox, threefry
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as splash
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as masks

    # the package re-exports its gmm function under the module's name
    megablox = importlib.import_module("jax.experimental.pallas.ops.tpu.megablox.gmm")
    small = interpret
    keys = iter(jax.random.split(jax.random.key(0), 32))
    rng = np.random.default_rng(0)
    f32, bf16 = jnp.float32, jnp.bfloat16
    dt = f32 if small else bf16

    def normal(shape: tuple[int, ...], dtype: Any = dt) -> Any:
        return jax.random.normal(next(keys), shape, dtype)

    cases: list[dict[str, Any]] = []

    def add(name: str, module: Any, args: tuple[Any, ...], fn: Any, ref: Any, tol: float) -> None:
        cases.append(dict(name=name, module=module, args=args, fn=fn, ref=ref, tol=tol))

    # the example kernel and the blocked matmul
    x = normal((256, 256) if small else (512, 512), f32)
    add("example_double", example_kernel, (x,), example_kernel.double, lambda x: x * 2, 0.0)
    n, blk = (256, 128) if small else (2048, 512)
    a, b = normal((n, n)), normal((n, n))
    add(
        "matmul",
        matmul,
        (a, b),
        lambda a, b: matmul.matmul(a, b, block_shape=(blk, blk), block_k=blk),
        lambda a, b: jnp.dot(a.astype(f32), b.astype(f32)).astype(a.dtype),
        2e-2,
    )

    # flash attention, forward and gradient
    bsz, heads, seq, d = (1, 2, 256, 128) if small else (2, 8, 2048, 128)
    q, k, v = (
        normal((bsz, heads, seq, d)),
        normal((bsz, heads, seq, d)),
        normal((bsz, heads, seq, d)),
    )
    scale = 1.0 / d**0.5

    def flash(q: Any, k: Any, v: Any) -> Any:
        return fa.flash_attention(q, k, v, causal=True, sm_scale=scale)

    def flash_ref(q: Any, k: Any, v: Any) -> Any:
        # (mha_reference's own custom_vjp has no backward rule)
        return fa.mha_reference_no_custom_vjp(q, k, v, causal=True, sm_scale=scale)

    def grad_of(f: Callable[..., Any], argnums: tuple[int, ...] = (0, 1, 2)) -> Callable[..., Any]:
        return jax.grad(lambda *a: f(*a).astype(f32).sum(), argnums=argnums)

    add("flash_attention_fwd", fa, (q, k, v), flash, flash_ref, 2e-2)
    add("flash_attention_grad", fa, (q, k, v), grad_of(flash), grad_of(flash_ref), 5e-2)

    # splash attention (causal mask), forward and gradient, over a batch with jax.vmap
    mask = masks.MultiHeadMask([masks.CausalMask((seq, seq)) for _ in range(heads)])
    kernel = splash.make_splash_mha_single_device(mask=mask)
    reference = splash.make_masked_mha_reference(mask)
    qs = q * scale

    def splash_fwd(q: Any, k: Any, v: Any) -> Any:
        return jax.vmap(kernel)(q, k, v)

    def splash_ref(q: Any, k: Any, v: Any) -> Any:
        return jax.vmap(reference)(q, k, v)

    add("splash_attention_fwd", splash, (qs, k, v), splash_fwd, splash_ref, 2e-2)
    add(
        "splash_attention_grad",
        splash,
        (qs, k, v),
        grad_of(splash_fwd),
        grad_of(splash_ref),
        5e-2,
    )

    # paged attention (decode): each sequence's pages scattered over the cache
    batch, heads_q, heads_kv, page, per_seq, per_block = (
        (2, 2, 2, 16, 8, 4) if small else (8, 8, 8, 16, 128, 8)
    )
    pages = batch * per_seq
    qd = normal((batch, heads_q, d)) * scale
    k_pages, v_pages = normal((heads_kv, pages, page, d)), normal((heads_kv, pages, page, d))
    lengths = jnp.asarray(rng.integers(1, per_seq * page + 1, batch), jnp.int32)
    page_indices = jnp.asarray(rng.permutation(pages).reshape(batch, per_seq), jnp.int32)
    add(
        "paged_attention",
        paged,
        (qd, k_pages, v_pages, lengths, page_indices),
        lambda *a: paged.paged_attention(*a, pages_per_compute_block=per_block),
        _paged_reference,
        2e-2,
    )

    # ragged paged attention: prefill and decode sequences in one batch of tokens
    q_lens = [24, 1, 7, 1] if small else [500, 1, 300, 1, 200, 1, 20, 1]
    kv_lens = [40, 33, 20, 64] if small else [800, 900, 300, 1024, 260, 77, 20, 512]
    page, per_seq, heads_q, heads_kv = (16, 4, 4, 2) if small else (16, 64, 8, 4)
    seqs = len(q_lens)
    tokens = 64 if small else 1024
    total_pages = seqs * per_seq
    rq = normal((tokens, heads_q, d))
    kv_pages = normal((total_pages, page, 2 * heads_kv, d))
    rkv_lens = jnp.asarray(kv_lens, jnp.int32)
    rpage_indices = jnp.asarray(rng.permutation(total_pages).reshape(seqs, per_seq), jnp.int32)
    cu_q_lens = jnp.asarray(np.concatenate([[0], np.cumsum(q_lens)]), jnp.int32)
    num_seqs = jnp.asarray([seqs], jnp.int32)
    blocks = dict(
        num_kv_pages_per_block=4 if small else 8, num_queries_per_block=8 if small else 32
    )

    def ragged_ref(*a: Any) -> Any:
        out = ragged.ref_ragged_paged_attention(*a, sm_scale=scale)
        return out

    def ragged_op(*a: Any) -> Any:
        # only the rows of real tokens are defined (the rest of the batch is padding)
        return ragged.ragged_paged_attention(*a, sm_scale=scale, **blocks)[: sum(q_lens)]

    add(
        "ragged_paged_attention",
        ragged,
        (rq, kv_pages, rkv_lens, rpage_indices, cu_q_lens, num_seqs),
        ragged_op,
        ragged_ref,
        2e-2,
    )

    # megablox's grouped matmul (uneven groups), forward and gradient (gmm and tgmm)
    sizes = [40, 88, 0, 128] if small else [100, 156, 0, 300, 212, 256, 1, 255]
    m, kk, nn = sum(sizes), (128 if small else 512), (128 if small else 512)
    lhs, rhs = normal((m, kk)), normal((len(sizes), kk, nn))
    group_sizes = jnp.asarray(sizes, jnp.int32)
    tiling = (128, 128, 128)
    gmm_ref = _gmm_reference(sizes)

    def gmm(lhs: Any, rhs: Any) -> Any:
        return megablox.gmm(lhs, rhs, group_sizes, f32, tiling)

    def gmm_vjp(lhs: Any, rhs: Any) -> Any:
        return megablox_ops.gmm(lhs, rhs, group_sizes, f32, tiling)

    add("megablox_gmm", megablox, (lhs, rhs), gmm, gmm_ref, 1e-2)
    add(
        "megablox_gmm_grad",
        megablox,
        (lhs, rhs),
        grad_of(gmm_vjp, (0, 1)),
        grad_of(gmm_ref, (0, 1)),
        2e-2,
    )

    # random bits: Threefry against JAX's own Threefry, Philox (no JAX twin) bitwise only
    shape = (256, 512) if small else (2048, 2048)
    key = jnp.asarray([0, 42], jnp.uint32)

    def jax_threefry(key: Any) -> Any:
        return jax.random.bits(jax.random.wrap_key_data(key, impl="threefry2x32"), shape)

    add(
        "threefry_random_bits",
        threefry,
        (key,),
        lambda key: threefry.plthreefry_random_bits(key, 32, shape),
        jax_threefry,
        0.0,
    )
    add(
        "philox_random_bits",
        philox,
        (key,),
        lambda key: philox.philox_random_bits(key, 32, shape),
        None,
        0.0,
    )
    for c in cases:
        c.update(alias="pl", entry="pallas_call", backend="mosaic_tpu")
    return cases


#: ops JAX ships that this check does not run, and why
NOT_RUN = {
    "all_gather": "on one chip (a mesh axis of size 1) it returns its input without running a kernel",
}
#: ops that TPU interpret mode (``--interpret``) cannot run, and why
NOT_INTERPRETED = {
    "ragged_paged_attention": "TPU interpret mode cannot read its reshaped page buffers"
    " (AttributeError: 'ReshapeTransform' object has no attribute 'indices')",
}


def run_op(case: dict[str, Any], samples: int, inner: int, interpret: bool) -> dict[str, Any]:
    """``case`` built raw and by ``typed_pallas.pallas_call`` (in TPU interpret mode with
    ``interpret``)."""
    from jax.experimental.pallas import tpu as pltpu

    import typed_pallas

    mode = pltpu.force_tpu_interpret_mode() if interpret else contextlib.nullcontext()
    with mode:
        return pv.run_op(case, typed_pallas.pallas_call, samples, inner)


# --------------------------------------------------------------------------- parity harness

#: The parity harness's ``silent_*`` twins that run a kernel with Triton params: right on
#: a GPU (what the harness proves), wrong on the TPU path, so on the TPU they must fail.
#: Every other ``silent_*`` twin runs no kernel, a TPU kernel only in interpret mode, or
#: takes the TPU side of a platform decision. tests/test_tpu_validation.py checks this
#: set against JAX's own verdict (lowering each function for tpu on a CPU host).
TPU_PATH_FAILS = frozenset(
    {
        "silent_direct",
        "silent_optional_import",
        "silent_if_else",
        "silent_match",
        "silent_choice",
        "silent_try",
        "silent_with_return",
        "silent_cond",
        "silent_switch",
        "silent_fori_loop",
        "silent_while_loop",
        "silent_scan",
        "silent_jit",
        "silent_keeper_variable",
        "silent_wraps_decorator",
        "silent_op_object",
        "silent_op_updating_itself",
        "silent_memoized",
        "silent_factory",
        "silent_vmap_of_factory",
        "silent_checkpoint_of_object",
        "silent_returned_closure",
        "silent_local_callable",
        "silent_nested_entry",
        "silent_wrapper_result",
        "silent_table_literal_key",
        "silent_pytest_skip",
        "silent_try_finally",
        "silent_inherited_method",
        "silent_super_call",
        "silent_classmethod",
        "silent_params_on_instance",
        "silent_kernel_on_instance",
        "silent_dataclass_default",
        "silent_list_literal_index",
        "silent_tuple_literal_index",
        "silent_dict_name_key",
        "silent_unpacked_factory",
        "silent_vectorize",
    }
)


@contextlib.contextmanager
def parity_harness() -> Iterator[tuple[Any, Any]]:
    """``(parity_cases, kernlib.shapes)``, imported from tests/parity (and forgotten after)."""
    sys.path.insert(0, str(PARITY))
    try:
        cases: Any = importlib.import_module("parity_cases")
        shapes: Any = importlib.import_module("kernlib.shapes")
        yield cases, shapes
    finally:
        sys.path.remove(str(PARITY))
        for name in [m for m in sys.modules if m in ("kernlib", "parity_cases")]:
            del sys.modules[name]
        for name in [m for m in sys.modules if m.startswith("kernlib.")]:
            del sys.modules[name]


def _outcome(work: Callable[[], Any]) -> tuple[str, str]:
    """("ok", "") if ``work`` returns, else ("failed", the exception's first line)."""
    try:
        pv.ready(work())
    except Exception as error:  # any failure to lower or run is the answer
        text = f"{type(error).__name__}: {error}".strip()
        return "failed", text.splitlines()[0][:300]
    return "ok", ""


def parity_rows(native: bool) -> list[dict[str, Any]]:
    """Every function of the parity harness, run on this TPU (``native``) or lowered for
    tpu on this host with jax.export: "ok" or "failed", against what it must give."""
    import jax
    import jax.numpy as jnp
    from jax import export

    from typed_pallas import _jaxcompat

    rows: list[dict[str, Any]] = []
    with parity_harness() as (cases, shapes):
        for name in [*cases.fire_functions(), *cases.silent_functions()]:
            x = jnp.zeros(cases.input_of(name), jnp.float32)
            fn = getattr(shapes, name)

            def work(fn: Any = fn, x: Any = x) -> Any:
                if native:
                    return jax.jit(fn)(x)
                with _jaxcompat.cross_lowering("tpu"):
                    return export.export(jax.jit(fn), platforms=["tpu"])(x).mlir_module()

            status, error = _outcome(work)
            expected = "failed" if name in TPU_PATH_FAILS else "ok"
            rows.append(
                {
                    "name": name,
                    "step": "run" if native else "lowered for tpu",
                    "status": status,
                    "expected": expected,
                    "error": error,
                }
            )
    return rows


# --------------------------------------------------------------------------- main


def _print_parity(rows: list[dict[str, Any]]) -> None:
    for row in rows:
        mark = "ok " if row["status"] == row["expected"] else "BAD"
        print(f"{mark} {row['name']:36} {row['status']:7} {row['error'][:100]}")
    good = sum(row["status"] == row["expected"] for row in rows)
    print(f"parity: {good}/{len(rows)} as expected")


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", type=Path, default=Path("tpu_validation.json"))
    ap.add_argument("--samples", type=int, default=30)
    ap.add_argument("--inner", type=int, default=10, help="calls per timed sample")
    ap.add_argument("--interpret", action="store_true", help="CPU smoke test of this script")
    ap.add_argument("--only", action="append", help="only these ops (repeatable)")
    ap.add_argument("--skip-mismatch", action="store_true")
    ap.add_argument("--skip-ops", action="store_true")
    ap.add_argument("--skip-parity", action="store_true")
    args = ap.parse_args(argv)

    env = pv.environment()
    report: dict[str, Any] = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python benchmarks/tpu_validation.py " + " ".join(argv or sys.argv[1:]),
        "not_run": NOT_RUN | (NOT_INTERPRETED if args.interpret else {}),
    }
    # mismatch cases first, each in a fresh interpreter, while this process does not hold
    # the chip (one program at a time can); --interpret: lowered for tpu on this host
    if not args.skip_mismatch:
        lower_for = "tpu" if args.interpret else None
        report["mismatch"] = []
        for name, mismatch in MISMATCH_CASES.items():
            report["mismatch"].append(run_mismatch(name, mismatch, env, lower_for))
            pv.write_json(args.json, report)
        print_mismatch(report["mismatch"])

    report.update(pv.describe_platform())
    report["ops"] = []
    if not args.skip_ops:
        cases = op_cases(args.interpret)
        cases = [c for c in cases if c["name"] not in report["not_run"]]
        if args.only:
            cases = [c for c in cases if c["name"] in args.only]
        samples, inner = (3, 1) if args.interpret else (args.samples, args.inner)
        for case in cases:
            report["ops"].append(run_op(case, samples, inner, args.interpret))
            pv.write_json(args.json, report)
        pv.print_ops(report)
    if not args.skip_parity:
        report["parity"] = parity_rows(native=not args.interpret)
        pv.write_json(args.json, report)
        _print_parity(report["parity"])

    pv.write_json(args.json, report)
    print(f"JSON: {args.json}")
    mismatch_ok = all(m["as_expected"] is not False for m in report.get("mismatch", []))
    parity_ok = all(r["status"] == r["expected"] for r in report.get("parity", []))
    ops_ok = all(r.get("ok") for r in report["ops"])
    return 0 if mismatch_ok and parity_ok and ops_ok else 1


if __name__ == "__main__":
    sys.exit(main())
