"""Prove the platform of library kernels by lowering them on this CPU host, per platform.

Usage (from the repository root)::

    .venv312/bin/python -m eval.library_proofs            # JSON: eval/results/library-proofs-py312.json

For each library function the library-call mutants (``eval.library_mutants``) put on
another platform's path, a small call with valid shapes is lowered with
``typed_pallas.check_lowering`` (``jax.jit(...).trace(...).lower(lowering_platforms=...)``
under an abstract device of each platform) for tpu, cuda and rocm. A function's
platform is *proven* when it lowers for its own platform (the control: the sample is a
valid call) and fails for the others; the JSON keeps each outcome and JAX's first line
of error. The mutants' real-bug verdicts use these outcomes (``eval.corpus`` reads the
JSON when it renders the library-call table).

A sample for a finding on unmodified code sits here too (``FINDINGS``): the code the
plugin reported, lowered the same way (the JSON's ``findings``).

Some Mosaic GPU functions read the device while tracing (``jax.devices()[0].core_count``,
CUDA's runtime version) and cannot lower on a CPU host: their outcomes come from the same
samples lowered on a GPU machine, ``eval/results/library-proofs-h200.json``, which
``eval.corpus`` reads too.

A function of a module the installed jax does not ship (jax 0.12.1 removed the Triton
ops) gets ``"absent"`` instead of outcomes.

What it does not do: run a kernel (lowering needs no device), or prove anything for a
function without a sample here (those stay "not lowered" in the report).
"""

from __future__ import annotations

import argparse
import functools
import importlib
import json
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp

import typed_pallas

RESULTS = Path(__file__).with_name("results")
OPS = "jax.experimental.pallas.ops"
PLATFORMS = ("tpu", "cuda", "rocm")

#: A sample: () -> (function, arguments) of one call with valid shapes.
Sample = Callable[[], tuple[Callable[..., Any], tuple[Any, ...]]]


def _spec(shape: tuple[int, ...], dtype: Any) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype)  # type: ignore[no-untyped-call]


def _f32(*shape: int) -> jax.ShapeDtypeStruct:
    return _spec(shape, jnp.float32)


def _bf16(*shape: int) -> jax.ShapeDtypeStruct:
    return _spec(shape, jnp.bfloat16)


def _i32(*shape: int) -> jax.ShapeDtypeStruct:
    return _spec(shape, jnp.int32)


def _f16(*shape: int) -> jax.ShapeDtypeStruct:
    return _spec(shape, jnp.float16)


def _splash(factory: str, mqa: bool) -> Sample:
    def build() -> tuple[Callable[..., Any], tuple[Any, ...]]:
        from jax.experimental.pallas.ops.tpu.splash_attention import (
            splash_attention_kernel as splash,
        )
        from jax.experimental.pallas.ops.tpu.splash_attention import (
            splash_attention_mask as mask_lib,
        )

        heads, seq, dim = 2, 256, 128
        mask = mask_lib.MultiHeadMask([mask_lib.CausalMask((seq, seq))] * heads)
        kwargs: dict[str, Any] = {"head_shards": 1, "q_seq_shards": 1}
        if "single_device" in factory:
            kwargs = {}
        kernel = getattr(splash, factory)(mask, **kwargs)
        kv = (seq, dim) if mqa else (heads, seq, dim)
        return kernel, (_f32(heads, seq, dim), _f32(*kv), _f32(*kv))

    return build


def _flash_attention() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.tpu.flash_attention import flash_attention

    x = _f32(1, 2, 256, 128)
    return flash_attention, (x, x, x)


def _gmm(module: str) -> Sample:
    def build() -> tuple[Callable[..., Any], tuple[Any, ...]]:
        import importlib

        gmm = importlib.import_module(module).gmm
        return gmm, (_bf16(512, 256), _bf16(4, 256, 256), _i32(4))

    return build


def _tpu_paged_attention() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.tpu.paged_attention import paged_attention

    fn = functools.partial(paged_attention, pages_per_compute_block=4)
    pages = _f32(2, 64, 16, 128)
    return fn, (_f32(4, 2, 128), pages, pages, _i32(4), _i32(4, 8))


def _tpu_matmul() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.tpu.matmul import matmul

    return functools.partial(matmul, block_shape=(128, 128)), (_f32(256, 256), _f32(256, 256))


def _ops_module(name: str) -> Any:
    """``jax.experimental.pallas.ops.<name>``, imported by name: jax 0.12.1 removed the
    Triton ops (``gpu.attention``, ``gpu.softmax``, ``gpu.decode_attention``,
    ``gpu.paged_attention``, the norms), so a static import would not resolve there."""
    return importlib.import_module(f"{OPS}.{name}")


def _mha() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    mha = _ops_module("gpu.attention").mha

    x = _f16(1, 256, 2, 64)
    return functools.partial(mha, segment_ids=None), (x, x, x)


def _norm(module: str, name: str) -> Sample:
    def build() -> tuple[Callable[..., Any], tuple[Any, ...]]:
        import importlib

        fn = getattr(importlib.import_module(module), name)
        return fn, (_f32(2, 8, 256), _f32(256), _f32(256))  # vmapped twice: 3-d input

    return build


def _softmax() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    return _ops_module("gpu.softmax").softmax, (_f32(8, 256),)


def _decode(name: str) -> Sample:
    def build() -> tuple[Callable[..., Any], tuple[Any, ...]]:
        fn = getattr(_ops_module("gpu.decode_attention"), name)
        if name == "mqa":
            return fn, (_f16(2, 16, 64), _f16(2, 512, 64), _f16(2, 512, 64))
        return fn, (_f16(2, 16, 64), _f16(2, 512, 2, 64), _f16(2, 512, 2, 64))

    return build


def _gpu_paged_attention() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    paged_attention = _ops_module("gpu.paged_attention").paged_attention
    fn = functools.partial(paged_attention, k_splits=2, pages_per_compute_block=4)
    pages = _f16(2, 64, 16, 64)
    return fn, (_f16(4, 16, 64), pages, pages, _i32(4, 8), _i32(4))


def _hopper_matmul() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.gpu import hopper_matmul_mgpu as hm

    config = hm.TuningConfig(tile_m=128, tile_n=128, tile_k=64, max_concurrent_steps=2)
    fn = functools.partial(hm.matmul, c=None, config=config)
    return fn, (_f16(512, 512), _f16(512, 512))


def _attention_mgpu() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.gpu import attention_mgpu

    config = attention_mgpu.TuningConfig(block_q=64, block_kv=64, max_concurrent_steps=2)
    x = _f16(1, 256, 2, 128)
    return functools.partial(attention_mgpu.attention, config=config), (x, x, x)


def _ragged_paged_attention() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.tpu.ragged_paged_attention import ragged_paged_attention

    fn = functools.partial(
        ragged_paged_attention, num_kv_pages_per_block=4, num_queries_per_block=16
    )
    # q: [tokens, q heads, dim]; kv_pages: [pages, page size, 2 * kv heads, dim]
    args = (_bf16(64, 4, 128), _bf16(32, 16, 4, 128), _i32(4), _i32(4, 8), _i32(5), _i32(1))
    return fn, args


def _ragged_dot_mgpu() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.gpu import ragged_dot_mgpu

    fn = functools.partial(
        ragged_dot_mgpu.ragged_dot,
        block_m=64,
        block_n=64,
        block_k=64,
        max_concurrent_steps=2,
        grid_block_n=1,
    )
    return (
        lambda lhs, rhs, sizes: fn(lhs, rhs, group_sizes=sizes),
        (_f16(256, 128), _f16(4, 128, 128), _i32(4)),
    )


def _transposed_ragged_dot() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.gpu import transposed_ragged_dot_mgpu as trd

    fn = functools.partial(
        trd.transposed_ragged_dot,
        block_m=64,
        block_n=64,
        block_k=64,
        max_concurrent_steps=2,
        grid_block_n=1,
    )
    return (
        lambda lhs, rhs, sizes: fn(lhs, rhs, group_sizes=sizes),
        (_f16(256, 128), _f16(256, 128), _i32(4)),
    )


def _mixed_matmul() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.gpu import hopper_mixed_type_matmul_mgpu as mm

    config = mm.TuningConfig(tile_m=128, tile_n=128, tile_k=64, max_concurrent_steps=2)
    fn = functools.partial(mm.mixed_matmul_kernel, out_dtype=jnp.bfloat16, config=config)
    a = _spec((512, 512), jnp.int8)
    return fn, (a, _bf16(512, 512))


def _blackwell_matmul() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.gpu import blackwell_matmul_mgpu as bm

    config = bm.TuningConfig(
        tile_m=128, tile_n=128, tile_k=64, max_concurrent_steps=2, collective=False
    )
    return functools.partial(bm.matmul_kernel, config=config), (_f16(512, 512), _f16(512, 512))


def _blackwell_ragged_dot() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.gpu import blackwell_matmul_mgpu as bm
    from jax.experimental.pallas.ops.gpu import blackwell_ragged_dot_mgpu as brd

    config = brd.TuningConfig(
        tile_m=128,
        tile_n=128,
        tile_k=64,
        max_concurrent_steps=2,
        collective=False,
        grid_tile_width=1,
        grid_minor_dim=bm.MatmulDimension.N,
    )
    fn = functools.partial(brd.ragged_dot_kernel, config=config)
    return fn, (_f16(512, 256), _f16(4, 256, 256), _i32(4))


#: library function (fully qualified, as the call sites name it) -> its sample
SAMPLES: dict[str, Sample] = {
    f"{OPS}.tpu.splash_attention.splash_attention_kernel.make_splash_mha": _splash(
        "make_splash_mha", False
    ),
    f"{OPS}.tpu.splash_attention.splash_attention_kernel.make_splash_mha_single_device": _splash(
        "make_splash_mha_single_device", False
    ),
    f"{OPS}.tpu.splash_attention.splash_attention_kernel.make_splash_mqa_single_device": _splash(
        "make_splash_mqa_single_device", True
    ),
    f"{OPS}.tpu.flash_attention.flash_attention": _flash_attention,
    f"{OPS}.tpu.megablox.gmm": _gmm(f"{OPS}.tpu.megablox"),
    f"{OPS}.tpu.paged_attention.paged_attention": _tpu_paged_attention,
    f"{OPS}.tpu.matmul.matmul": _tpu_matmul,
    f"{OPS}.gpu.attention.mha": _mha,
    f"{OPS}.gpu.layer_norm.layer_norm": _norm(f"{OPS}.gpu.layer_norm", "layer_norm"),
    f"{OPS}.gpu.rms_norm.rms_norm": _norm(f"{OPS}.gpu.rms_norm", "rms_norm"),
    f"{OPS}.gpu.softmax.softmax": _softmax,
    f"{OPS}.gpu.decode_attention.mqa": _decode("mqa"),
    f"{OPS}.gpu.decode_attention.gqa": _decode("gqa"),
    f"{OPS}.gpu.paged_attention.paged_attention": _gpu_paged_attention,
    f"{OPS}.gpu.hopper_matmul_mgpu.matmul": _hopper_matmul,
    f"{OPS}.gpu.attention_mgpu.attention": _attention_mgpu,
    f"{OPS}.tpu.ragged_paged_attention.ragged_paged_attention": _ragged_paged_attention,
    f"{OPS}.gpu.ragged_dot_mgpu.ragged_dot": _ragged_dot_mgpu,
    f"{OPS}.gpu.transposed_ragged_dot_mgpu.transposed_ragged_dot": _transposed_ragged_dot,
    f"{OPS}.gpu.hopper_mixed_type_matmul_mgpu.mixed_matmul_kernel": _mixed_matmul,
    f"{OPS}.gpu.blackwell_matmul_mgpu.matmul_kernel": _blackwell_matmul,
    f"{OPS}.gpu.blackwell_ragged_dot_mgpu.ragged_dot_kernel": _blackwell_ragged_dot,
}


def _mosaic_gpu_params_through_pallas_call() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    """jax's tests/pallas/export_back_compat_pallas_test.py (test_mosaic_gpu_add_one):
    ``pl.pallas_call`` with ``plgpu.CompilerParams()``, as the test writes it."""
    from jax.experimental import pallas as pl
    from jax.experimental.pallas import mosaic_gpu as plgpu

    def add_one(x_ref: Any, o_ref: Any) -> None:
        o_ref[...] = x_ref[...] + 1

    call = pl.pallas_call(
        add_one,
        out_shape=_f32(256),
        grid=(2,),
        compiler_params=plgpu.CompilerParams(),
    )
    return call, (_f32(256),)


#: findings on unmodified code (where, as eval.corpus lists them) -> a sample of the code
FINDINGS: dict[str, Sample] = {
    "jax-tests:tests/pallas/export_back_compat_pallas_test.py:82": (
        _mosaic_gpu_params_through_pallas_call
    ),
}

#: aliases the call sites use for the same function
ALIASES: dict[str, str] = {
    f"{OPS}.tpu.splash_attention.make_splash_mha": f"{OPS}.tpu.splash_attention.splash_attention_kernel.make_splash_mha",
}


def _first_line(text: str) -> str:
    lines = [line for line in text.strip().splitlines() if line.strip()]
    return lines[0][:300] if lines else ""


def prove(name: str, sample: Sample) -> dict[str, Any]:
    """Lower one sample for each platform; the outcome per platform."""
    out: dict[str, Any] = {"function": name}
    start = time.perf_counter()
    try:
        fn, args = sample()
    except ModuleNotFoundError as e:  # a module this jax does not ship: nothing to prove
        if not (e.name or "").startswith(OPS + "."):
            raise
        out["absent"] = f"jax {jax.__version__} has no {e.name}"
        return out
    except Exception as e:  # a sample that cannot be built proves nothing
        out["error"] = f"{type(e).__name__}: {_first_line(str(e))}"
        return out
    report = typed_pallas.check_lowering(fn, *args, platforms=PLATFORMS)
    out["lowering"] = {
        platform: {
            "status": report[platform].status,
            "error_type": report[platform].error_type,
            "message": _first_line(report[platform].message or ""),
        }
        for platform in PLATFORMS
    }
    lowered = [p for p in PLATFORMS if report[p].status == "lowered"]
    out["lowers_for"] = lowered
    out["proven"] = bool(lowered) and len(lowered) < len(PLATFORMS)
    out["seconds"] = round(time.perf_counter() - start, 1)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.library_proofs", description=__doc__)
    ap.add_argument("--json", type=Path, default=None)
    ap.add_argument("-f", "--function", action="append", help="only these (repeatable)")
    args = ap.parse_args(argv)
    chosen = {n: s for n, s in SAMPLES.items() if not args.function or n in args.function}
    rows = []
    for name, sample in chosen.items():
        row = prove(name, sample)
        rows.append(row)
        state = (
            row.get("error")
            or row.get("absent")
            or (", ".join(f"{p} {row['lowering'][p]['status']}" for p in PLATFORMS))
        )
        print(f"{name.removeprefix(OPS + '.')}: {state}", flush=True)
    findings = []
    if not args.function:
        for where, sample in FINDINGS.items():
            row = prove(where, sample)
            findings.append(row)
            state = row.get("error") or (
                ", ".join(f"{p} {row['lowering'][p]['status']}" for p in PLATFORMS)
            )
            print(f"finding {where}: {state}", flush=True)
    dest = (
        args.json or RESULTS / f"library-proofs-py{sys.version_info[0]}{sys.version_info[1]}.json"
    )
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(
        json.dumps(
            {"jax": jax.__version__, "aliases": ALIASES, "functions": rows, "findings": findings},
            indent=1,
        )
        + "\n"
    )
    print(f"JSON: {dest}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
