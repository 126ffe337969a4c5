"""The plugin's evidence tables against real lowering: each sampled entry really fails.

For a sample of every kind of evidence the plugin reports (body primitives, scratch
allocations, grid-spec keywords) this builds a small kernel and cross-lowers it on CPU
for tpu, cuda and rocm (``typed_pallas.check_lowering``) with each params class. An
entry that says "only backend B" must lower with B's params somewhere (control: the
sample is a valid kernel) and with no other backend's params anywhere. It also pins
what is *not* evidence: memory spaces in block specs lower with Triton params, and so
does ``PrefetchScalarGridSpec`` below its threshold.

Mosaic GPU through ``pl.pallas_call`` always fails on jax 0.12 (``plgpu.kernel`` is the
path there), so the Mosaic GPU control through ``pl.pallas_call`` only runs on jax <
0.12, and body samples are also lowered through ``plgpu.kernel`` (the body runs on
shared-memory copies of the operands), which is a real Mosaic GPU lowering on both ends.
The suite runs under both venvs (jax 0.10.2 and 0.12.x); a name that only one of them
has is checked to be absent on the other (``Sample.since``) instead of skipped.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
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

JAX_VERSION = tuple(int(p) for p in jax.__version__.split(".")[:2])
JAX_012 = JAX_VERSION >= (0, 12)

PARAMS: dict[str, Callable[[], Any]] = {
    "mosaic_tpu": pltpu.CompilerParams,
    "triton": pltriton.CompilerParams,
    "mosaic_gpu": plgpu.CompilerParams,
}
#: backend namespace -> the public module its names come from
MODULES: dict[str, Any] = {"mosaic_tpu": pltpu, "triton": pltriton, "mosaic_gpu": plgpu}

SHAPE = (8, 128)
X = jax.ShapeDtypeStruct(SHAPE, jnp.float32)
ALL = (slice(None), slice(None))


def _copy(x_ref: Any, o_ref: Any, *scratch: Any) -> None:
    o_ref[...] = x_ref[...]


def _kernel_call(body: Callable[..., None], backend: str, **kwargs: Any) -> Callable[[Any], Any]:
    out = kwargs.pop("out_shape", X)

    def run(x: Any) -> Any:
        return pl.pallas_call(body, out_shape=out, compiler_params=PARAMS[backend](), **kwargs)(x)

    return run


def _lowered_on(body: Callable[..., None], backend: str, **kwargs: Any) -> set[str]:
    x = jnp.zeros(SHAPE, jnp.float32)
    report = typed_pallas.check_lowering(_kernel_call(body, backend, **kwargs), x)
    return {platform for platform, result in report.items() if result.status == "lowered"}


def _mgpu_kernel_call(body: Callable[..., None]) -> Callable[[Any], Any]:
    """``plgpu.kernel`` around a ``(x_ref, o_ref)`` body: GMEM -> SMEM, body, SMEM -> GMEM."""

    def kernel(x_gmem: Any, o_gmem: Any, x_smem: Any, o_smem: Any, barrier: Any) -> None:
        plgpu.copy_gmem_to_smem(x_gmem, x_smem, barrier)
        plgpu.barrier_wait(barrier)
        body(x_smem, o_smem)
        plgpu.commit_smem()
        plgpu.copy_smem_to_gmem(o_smem, o_gmem)
        plgpu.wait_smem_to_gmem(0)

    def run(x: Any) -> Any:
        out = jax.ShapeDtypeStruct(x.shape, x.dtype)
        scratch = [
            plgpu.SMEM(x.shape, x.dtype),
            plgpu.SMEM(x.shape, x.dtype),
            plgpu.Barrier(num_arrivals=1),
        ]
        # out_type/scratch_types: both ends take them (0.12 refuses out_shape/scratch_shapes)
        return plgpu.kernel(
            kernel, out_type=out, scratch_types=scratch, compiler_params=plgpu.CompilerParams()
        )(x)

    return run


def _mgpu_kernel_lowers(body: Callable[..., None]) -> bool:
    report = typed_pallas.check_lowering(
        _mgpu_kernel_call(body), jnp.zeros(SHAPE, jnp.float32), platforms=("cuda",)
    )
    return report["cuda"].status == "lowered"


def _set(o_ref: Any, value: Any) -> None:
    o_ref[...] = value


def _atomic(op: str) -> Callable[..., None]:
    def body(x_ref: Any, o_ref: Any) -> None:
        o_ref[...] = x_ref[...]
        getattr(pltriton, op)(o_ref, ALL, x_ref[...])

    return body


def _atomic_cas_gpu(x_ref: Any, o_ref: Any, lock_ref: Any) -> None:
    """A Triton lock: a rank-0 output ref (Triton and Mosaic GPU take rank-0 blocks)."""
    o_ref[...] = x_ref[...]
    lock_ref[...] = jnp.int32(0)
    old = pltriton.atomic_cas(lock_ref, jnp.int32(0), jnp.int32(1))
    o_ref[0:1, :] = jnp.full((1, SHAPE[1]), old.astype(jnp.float32))


def _atomic_cas_tpu(x_ref: Any, o_ref: Any) -> None:
    """The same on TPU, which takes no rank-0 blocks: a scoped SMEM scalar (old value used)."""
    o_ref[...] = x_ref[...]

    def scoped(lock_ref: Any) -> None:
        lock_ref[...] = jnp.int32(0)
        old = pltriton.atomic_cas(lock_ref, jnp.int32(0), jnp.int32(1))
        o_ref[0:1, :] = jnp.full((1, SHAPE[1]), old.astype(jnp.float32))

    pl.run_scoped(scoped, pltpu.SMEM((), jnp.int32))


def _atomic_cas_tpu_control(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...]

    def scoped(lock_ref: Any) -> None:
        lock_ref[...] = jnp.int32(0)
        o_ref[0:1, :] = jnp.full((1, SHAPE[1]), lock_ref[...].astype(jnp.float32))

    pl.run_scoped(scoped, pltpu.SMEM((), jnp.int32))


def _inline_asm(x_ref: Any, o_ref: Any) -> None:
    [y] = pltriton.elementwise_inline_asm(
        "tanh.approx.f32 $0, $1;",
        args=[x_ref[...]],
        constraints="=f,f",
        pack=1,
        result_shape_dtypes=[X],
    )
    o_ref[...] = y


def _stochastic_round(x_ref: Any, o_ref: Any) -> None:
    bits = jnp.zeros(SHAPE, jnp.uint32)
    o_ref[...] = pltpu.stochastic_round(x_ref[...], bits, target_dtype=jnp.bfloat16).astype(
        jnp.float32
    )


def _pack_elementwise(x_ref: Any, o_ref: Any) -> None:
    packed = pltpu.pack_elementwise([x_ref[...], x_ref[...]], packed_dtype=jnp.bfloat16)
    o_ref[...] = x_ref[...] + packed.astype(jnp.float32)


def _unpack_elementwise(x_ref: Any, o_ref: Any) -> None:
    bits = jax.lax.bitcast_convert_type(x_ref[...], jnp.uint32)
    o_ref[...] = pltpu.unpack_elementwise(
        bits, index=0, packed_dtype=jnp.bfloat16, unpacked_dtype=jnp.float32
    )


@dataclass(frozen=True)
class Sample:
    """A kernel using one entry: body and pallas_call keywords."""

    body: Callable[..., None]
    kwargs: dict[str, Any] = field(default_factory=dict)
    #: backend -> (body, kwargs) where that backend needs another spelling of the same use
    #: (first the sample, then its control without the entry, which must lower)
    other_use: dict[str, tuple[Callable[..., None], Callable[..., None]]] = field(
        default_factory=dict
    )
    #: the first jax (major, minor) that has the name; older ones must not have it
    since: tuple[int, int] | None = None


#: (table, key) -> a sample
SAMPLES: dict[tuple[str, tuple[str, str]], Sample] = {
    ("BODY", ("mosaic_tpu", "sync_copy")): Sample(
        lambda x_ref, o_ref: pltpu.sync_copy(x_ref, o_ref)
    ),
    ("BODY", ("mosaic_tpu", "roll")): Sample(
        lambda x_ref, o_ref: _set(o_ref, pltpu.roll(x_ref[...], 1, 1))
    ),
    ("BODY", ("mosaic_tpu", "bitcast")): Sample(
        lambda x_ref, o_ref: _set(o_ref, pltpu.bitcast(x_ref[...], jnp.float32))
    ),
    ("BODY", ("mosaic_tpu", "prng_seed")): Sample(
        lambda x_ref, o_ref: (pltpu.prng_seed(0), _set(o_ref, x_ref[...]))[1]
    ),
    ("BODY", ("mosaic_tpu", "stochastic_round")): Sample(_stochastic_round),
    ("BODY", ("mosaic_tpu", "pack_elementwise")): Sample(_pack_elementwise),
    ("BODY", ("mosaic_tpu", "unpack_elementwise")): Sample(_unpack_elementwise),
    ("BODY", ("mosaic_tpu", "annotate")): Sample(
        lambda x_ref, o_ref: _set(o_ref, pltpu.annotate(x_ref)[...]), since=(0, 12)
    ),
    ("BODY", ("triton", "elementwise_inline_asm")): Sample(_inline_asm),
    ("BODY", ("triton", "max_contiguous")): Sample(
        lambda x_ref, o_ref: _set(o_ref, pltriton.max_contiguous(x_ref[...], list(SHAPE)))
    ),
    ("BODY", ("triton", "approx_tanh")): Sample(
        lambda x_ref, o_ref: _set(o_ref, pltriton.approx_tanh(x_ref[...]))
    ),
    ("BODY", ("triton", "debug_barrier")): Sample(
        lambda x_ref, o_ref: (pltriton.debug_barrier(), _set(o_ref, x_ref[...]))[1]
    ),
    **{
        ("BODY", ("triton", op)): Sample(_atomic(op))
        for op in (
            "atomic_xchg",
            "atomic_add",
            "atomic_max",
            "atomic_min",
            "atomic_and",
            "atomic_or",
            "atomic_xor",
        )
    },
    ("BODY", ("triton", "atomic_cas")): Sample(
        _atomic_cas_gpu,
        {"out_shape": (X, jax.ShapeDtypeStruct((), jnp.int32))},
        other_use={"mosaic_tpu": (_atomic_cas_tpu, _atomic_cas_tpu_control)},
    ),
    ("SCRATCH", ("mosaic_tpu", "VMEM")): Sample(
        _copy, {"scratch_shapes": [pltpu.VMEM(SHAPE, jnp.float32)]}
    ),
    ("SCRATCH", ("mosaic_tpu", "SMEM")): Sample(
        _copy, {"scratch_shapes": [pltpu.SMEM((8,), jnp.int32)]}
    ),
    ("SCRATCH", ("mosaic_tpu", "SemaphoreType")): Sample(
        _copy, {"scratch_shapes": [pltpu.SemaphoreType.DMA]}
    ),
    ("SCRATCH", ("mosaic_gpu", "SMEM")): Sample(
        _copy, {"scratch_shapes": [plgpu.SMEM(SHAPE, jnp.float32)]}
    ),
    ("SCRATCH", ("mosaic_gpu", "Barrier")): Sample(
        _copy, {"scratch_shapes": [plgpu.Barrier(num_arrivals=1)]}
    ),
}

_TABLES = {
    "BODY": evidence_tables.BODY_EVIDENCE,
    "SCRATCH": evidence_tables.SCRATCH_EVIDENCE,
    "MESH": evidence_tables.MESH_EVIDENCE,
}


def _entry_id(entry: tuple[str, tuple[str, str]]) -> str:
    return f"{entry[0].lower()}-{entry[1][0]}-{entry[1][1]}"


def _assert_lowers_only_where_allowed(
    key: tuple[str, str], backend: str, allowed: frozenset[str], lowered: set[str]
) -> None:
    """An entry's sample with ``backend``'s params: lowers somewhere when the entry allows
    the backend (the control), nowhere when it does not."""
    if backend in allowed:
        if backend == "mosaic_gpu" and JAX_012:
            return  # pl.pallas_call + Mosaic GPU params never lowers on 0.12
        assert lowered, f"control: {key} with {backend} params should lower somewhere"
    else:
        assert not lowered, f"{key} with {backend} params lowered on {sorted(lowered)}"


@pytest.mark.parametrize("entry", list(SAMPLES), ids=_entry_id)
def test_evidence_entry_fails_to_lower_with_other_params(
    entry: tuple[str, tuple[str, str]],
) -> None:
    table, key = entry
    assert key in _TABLES[table], f"{key} is not in {table}_EVIDENCE"
    allowed = _TABLES[table][key]
    sample = SAMPLES[entry]
    namespace, name = key
    if sample.since is not None and sample.since > JAX_VERSION:
        # the kernel cannot even trace here: the name is missing (say so, do not skip)
        assert not hasattr(MODULES[namespace], name), (
            f"{name} exists before jax {sample.since}: measure it"
        )
        return
    assert hasattr(MODULES[namespace], name)
    for backend in PARAMS:
        if backend in sample.other_use:
            body, control = sample.other_use[backend]
            assert _lowered_on(control, backend), (
                f"control for {key}'s {backend} use does not lower"
            )
            lowered = _lowered_on(body, backend)
        else:
            lowered = _lowered_on(sample.body, backend, **sample.kwargs)
        _assert_lowers_only_where_allowed(key, backend, allowed, lowered)
    if table == "BODY" and "mosaic_gpu" not in allowed and not sample.kwargs:
        assert not _mgpu_kernel_lowers(sample.body), f"{key} lowered for cuda through plgpu.kernel"


def test_mgpu_kernel_wrapper_lowers_a_plain_body() -> None:
    """Control for the plgpu.kernel leg above: without the entry, the wrapper lowers."""
    assert _mgpu_kernel_lowers(_copy)


def test_every_new_kind_of_entry_is_sampled() -> None:
    """Every Triton body entry and every grid-spec entry has a lowering sample here."""
    sampled = {key for table, key in SAMPLES if table == "BODY"}
    triton = {key for key in evidence_tables.BODY_EVIDENCE if key[0] == "triton"}
    assert triton <= sampled, sorted(triton - sampled)
    assert set(evidence_tables.GRID_SPEC_EVIDENCE) <= set(GRID_SPEC_SAMPLES)


@pytest.mark.parametrize("space", ["SMEM", "VMEM"])
def test_block_spec_memory_spaces_are_no_evidence(space: str) -> None:
    spec = pl.BlockSpec(memory_space=getattr(pltpu, space))
    assert _lowered_on(_copy, "triton", in_specs=[spec]) >= {"cuda"}
    key = ("mosaic_tpu", space)
    # the memory space is TPU-only evidence as a scratch allocation (the table the plugin
    # reads for scratch_shapes / run_scoped only), and in no table read elsewhere
    assert evidence_tables.SCRATCH_EVIDENCE.get(key) == evidence_tables.TPU_ONLY
    assert key not in evidence_tables.BODY_EVIDENCE
    assert key not in evidence_tables.MESH_EVIDENCE
    assert key not in evidence_tables.GRID_SPEC_EVIDENCE


def test_prefetch_scalar_grid_spec_class_alone_is_no_evidence() -> None:
    spec = pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=0, grid=(1,))
    assert _lowered_on(_copy, "triton", grid_spec=spec) >= {"cuda"}
    for table in _TABLES.values():
        assert ("mosaic_tpu", "PrefetchScalarGridSpec") not in table


def _grid_spec_call(cls: Any, keyword: str, n: int, backend: str) -> Callable[[Any], Any]:
    """A copy kernel with ``n`` prefetched scalars (``cls(keyword=n, ...)``)."""

    def body(*refs: Any) -> None:
        refs[n + 1][...] = refs[n][...]

    def index_map(i: Any, *scalars: Any) -> tuple[int, int]:
        return (0, 0)

    block = pl.BlockSpec(SHAPE, index_map)
    spec = cls(**{keyword: n}, grid=(1,), in_specs=[block], out_specs=block)

    def run(x: Any) -> Any:
        scalars = [jnp.zeros((1,), jnp.int32)] * n
        out = jax.ShapeDtypeStruct(x.shape, x.dtype)
        return pl.pallas_call(
            body, out_shape=out, grid_spec=spec, compiler_params=PARAMS[backend]()
        )(*scalars, x)

    return run


def _grid_spec_lowered_on(cls: Any, keyword: str, n: int, backend: str) -> set[str]:
    report = typed_pallas.check_lowering(
        _grid_spec_call(cls, keyword, n, backend), jnp.zeros(SHAPE, jnp.float32)
    )
    return {platform for platform, result in report.items() if result.status == "lowered"}


#: grid-spec entries with a lowering sample (the kernel in _grid_spec_call)
GRID_SPEC_SAMPLES = [("mosaic_tpu", "PrefetchScalarGridSpec")]


@pytest.mark.parametrize("key", GRID_SPEC_SAMPLES, ids=lambda k: f"{k[0]}-{k[1]}")
def test_grid_spec_entry_fails_to_lower_with_other_params(key: tuple[str, str]) -> None:
    keyword, threshold, allowed = evidence_tables.GRID_SPEC_EVIDENCE[key]
    cls = getattr(MODULES[key[0]], key[1])
    for n in (threshold, threshold + 1):
        for backend in PARAMS:
            lowered = _grid_spec_lowered_on(cls, keyword, n, backend)
            if backend in allowed:
                if backend == "mosaic_gpu" and JAX_012:
                    continue  # pl.pallas_call + Mosaic GPU params never lowers on 0.12
                assert lowered, (
                    f"control: {key[1]}({keyword}={n}) with {backend} params should lower"
                )
            else:
                assert not lowered, (
                    f"{key[1]}({keyword}={n}) with {backend} params lowered on {sorted(lowered)}"
                )
    # below the threshold it proves nothing: it lowers with every backend's params
    for backend in PARAMS:
        if backend == "mosaic_gpu" and JAX_012:
            continue
        assert _grid_spec_lowered_on(cls, keyword, threshold - 1, backend), (
            f"{key[1]}({keyword}={threshold - 1}) with {backend} params should lower"
        )


def _masked_load(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = pltriton.load(x_ref, mask=jnp.ones(SHAPE, bool), other=0.0)


def _unmasked_load(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = pltriton.load(x_ref, other=0.0)


def _masked_load_unused(x_ref: Any, o_ref: Any) -> None:
    pltriton.load(x_ref, mask=jnp.ones(SHAPE, bool), other=0.0)
    o_ref[...] = x_ref[...]


def _masked_store(x_ref: Any, o_ref: Any) -> None:
    pltriton.store(o_ref, x_ref[...], mask=jnp.ones(SHAPE, bool))


#: keyword entries with a lowering sample: the call given the keyword, its value used
KEYWORD_SAMPLES: dict[tuple[str, str], Callable[..., None]] = {
    ("triton", "load"): _masked_load,
}


def test_every_keyword_entry_is_sampled() -> None:
    assert set(evidence_tables.KEYWORD_EVIDENCE) <= set(KEYWORD_SAMPLES)


@pytest.mark.parametrize("key", list(KEYWORD_SAMPLES), ids=lambda k: f"{k[0]}-{k[1]}")
def test_keyword_entry_fails_to_lower_with_other_params(key: tuple[str, str]) -> None:
    _, allowed = evidence_tables.KEYWORD_EVIDENCE[key]
    body = KEYWORD_SAMPLES[key]
    for backend in PARAMS:
        _assert_lowers_only_where_allowed(key, backend, allowed, _lowered_on(body, backend))
    if "mosaic_gpu" not in allowed:
        assert not _mgpu_kernel_lowers(body), f"{key} lowered for cuda through plgpu.kernel"


@pytest.mark.parametrize(
    "body", [_unmasked_load, _masked_load_unused, _masked_store], ids=lambda b: b.__name__
)
def test_triton_load_store_without_a_used_mask_are_no_evidence(body: Callable[..., None]) -> None:
    """Without ``mask=``, with the loaded value dead, or a masked store: Mosaic TPU
    lowers, so the name alone proves nothing against TPU."""
    assert "tpu" in _lowered_on(body, "mosaic_tpu")
    assert ("triton", "store") not in evidence_tables.KEYWORD_EVIDENCE
    assert ("triton", "load") not in evidence_tables.BODY_EVIDENCE
