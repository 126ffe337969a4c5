"""The plugin's evidence tables against real lowering: each sampled entry really fails.

For a sample of every kind of evidence the plugin reports (body primitives, scratch
allocations) this builds a small kernel and cross-lowers it on CPU for tpu, cuda and
rocm (``typed_pallas.check_lowering``) with each params class. An entry that says
"only backend B" must lower with B's params somewhere (control: the sample is a valid
kernel) and with no other backend's params anywhere. It also pins what is *not*
evidence: memory spaces in block specs lower with Triton params.

Mosaic GPU through ``pl.pallas_call`` always fails on jax 0.12 (``plgpu.kernel`` is the
path there), so the Mosaic GPU control only runs on jax < 0.12.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

pytestmark = pytest.mark.slow

jax = pytest.importorskip("jax")
jnp = jax.numpy

from jax.experimental import pallas as pl  # noqa: E402
from jax.experimental.pallas import mosaic_gpu as plgpu  # noqa: E402
from jax.experimental.pallas import tpu as pltpu  # noqa: E402
from jax.experimental.pallas import triton as pltriton  # noqa: E402

import typed_pallas  # noqa: E402
from typed_pallas_mypy import evidence_tables  # noqa: E402

JAX_012 = tuple(int(p) for p in jax.__version__.split(".")[:2]) >= (0, 12)

PARAMS: dict[str, Callable[[], Any]] = {
    "mosaic_tpu": pltpu.CompilerParams,
    "triton": pltriton.CompilerParams,
    "mosaic_gpu": plgpu.CompilerParams,
}


def _copy(x_ref: Any, o_ref: Any, *scratch: Any) -> None:
    o_ref[...] = x_ref[...]


def _kernel_call(body: Callable[..., None], backend: str, **kwargs: Any) -> Callable[[Any], Any]:
    def run(x: Any) -> Any:
        out = jax.ShapeDtypeStruct(x.shape, x.dtype)
        return pl.pallas_call(body, out_shape=out, compiler_params=PARAMS[backend](), **kwargs)(x)

    return run


def _lowered_on(body: Callable[..., None], backend: str, **kwargs: Any) -> set[str]:
    x = jnp.zeros((8, 128), jnp.float32)
    report = typed_pallas.check_lowering(_kernel_call(body, backend, **kwargs), x)
    return {platform for platform, result in report.items() if result.status == "lowered"}


#: (table, key) -> a sample: kernel body and pallas_call keywords
SAMPLES: dict[tuple[str, tuple[str, str]], tuple[Callable[..., None], dict[str, Any]]] = {
    ("BODY", ("mosaic_tpu", "sync_copy")): (lambda x_ref, o_ref: pltpu.sync_copy(x_ref, o_ref), {}),
    ("BODY", ("mosaic_tpu", "roll")): (
        lambda x_ref, o_ref: o_ref.__setitem__(..., pltpu.roll(x_ref[...], 1, 1)),
        {},
    ),
    ("BODY", ("mosaic_tpu", "bitcast")): (
        lambda x_ref, o_ref: o_ref.__setitem__(..., pltpu.bitcast(x_ref[...], jnp.float32)),
        {},
    ),
    ("BODY", ("mosaic_tpu", "prng_seed")): (
        lambda x_ref, o_ref: (pltpu.prng_seed(0), o_ref.__setitem__(..., x_ref[...]))[1],
        {},
    ),
    ("SCRATCH", ("mosaic_tpu", "VMEM")): (_copy, {"scratch_shapes": [pltpu.VMEM((8, 128), jnp.float32)]}),
    ("SCRATCH", ("mosaic_tpu", "SMEM")): (_copy, {"scratch_shapes": [pltpu.SMEM((8,), jnp.int32)]}),
    ("SCRATCH", ("mosaic_tpu", "SemaphoreType")): (_copy, {"scratch_shapes": [pltpu.SemaphoreType.DMA]}),
    ("SCRATCH", ("mosaic_gpu", "SMEM")): (_copy, {"scratch_shapes": [plgpu.SMEM((8, 128), jnp.float32)]}),
    ("SCRATCH", ("mosaic_gpu", "Barrier")): (_copy, {"scratch_shapes": [plgpu.Barrier(num_arrivals=1)]}),
}

_TABLES = {"BODY": evidence_tables.BODY_EVIDENCE, "SCRATCH": evidence_tables.SCRATCH_EVIDENCE}


@pytest.mark.parametrize("entry", list(SAMPLES), ids=lambda e: f"{e[0].lower()}-{e[1][0]}-{e[1][1]}")
def test_evidence_entry_fails_to_lower_with_other_params(entry: tuple[str, tuple[str, str]]) -> None:
    table, key = entry
    allowed = _TABLES[table][key]
    body, kwargs = SAMPLES[entry]
    for backend in PARAMS:
        lowered = _lowered_on(body, backend, **kwargs)
        if backend in allowed:
            if backend == "mosaic_gpu" and JAX_012:
                continue  # pl.pallas_call + Mosaic GPU params never lowers on 0.12
            assert lowered, f"control: {key} with {backend} params should lower somewhere"
        else:
            assert not lowered, f"{key} with {backend} params lowered on {sorted(lowered)}"


@pytest.mark.parametrize("space", ["SMEM", "VMEM"])
def test_block_spec_memory_spaces_are_no_evidence(space: str) -> None:
    spec = pl.BlockSpec(memory_space=getattr(pltpu, space))
    assert _lowered_on(_copy, "triton", in_specs=[spec]) >= {"cuda"}
    assert ("mosaic_tpu", space) not in evidence_tables.BODY_EVIDENCE


def test_prefetch_scalar_grid_spec_is_no_evidence() -> None:
    spec = pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=0, grid=(1,))
    assert _lowered_on(_copy, "triton", grid_spec=spec) >= {"cuda"}
    for table in _TABLES.values():
        assert ("mosaic_tpu", "PrefetchScalarGridSpec") not in table
