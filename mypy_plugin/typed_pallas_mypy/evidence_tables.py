"""What counts as proof of a kernel's backend: Final data, one comment per entry.

A name is evidence only if the *other* backends' lowering fails on it (rule of thumb in
the reference notes: "treat as evidence only what makes the other backend's lowering
fail"). Names look alike across backends (``pltpu.SMEM`` is TPU scalar memory,
``plgpu.SMEM`` Mosaic GPU shared memory; ``load``/``store``/``dot`` exist in Triton and
Mosaic GPU), so every table keys on ``(backend namespace, name)``, where the namespace
comes from the resolved module of the reference (see ``fullnames.BACKEND_NAMESPACES``),
never from how the import alias is spelled.

Entries whose comment says "measured on both" were cross-lowered on CPU with jax 0.10.2
and 0.12.0.1 (tests/test_evidence_lowering.py runs under both): with each other
backend's params the kernel fails on tpu and cuda (Mosaic GPU also through
``plgpu.kernel``, since ``pl.pallas_call`` refuses Mosaic GPU params on 0.12 whatever
the body), and with its own params it lowers. A body name only proves anything when
its result is used: an op whose value is dead is dropped before lowering (measured: an
unused ``pltriton.atomic_cas`` on a scoped ref lowers on tpu).

Deliberately *not* evidence:

* ``pltpu.PrefetchScalarGridSpec`` by its class alone (with ``num_scalar_prefetch=0`` it
  lowers with Triton params on cuda: measured; a literal ``num_scalar_prefetch >= 1``
  is, see ``GRID_SPEC_EVIDENCE``), ``pl.GridSpec``, ``pl.BlockSpec``,
  ``pl.ANY``/``pltpu.HBM``;
* memory spaces in block specs (``pl.BlockSpec(memory_space=pltpu.SMEM)`` lowers with
  Triton params on cuda: measured); only scratch allocations count;
* ``pltriton.load``/``store`` and ``pltpu.load``/``store`` by their names: measured to
  lower with Mosaic TPU *and* Triton params (both are Pallas' generic masked
  load/store), also with ``other=`` or ``eviction_policy=``, and ``store`` with
  ``mask=``; only Mosaic GPU fails on them ("Unimplemented primitive ...: masked_load").
  Not entered: they would prove "not Mosaic GPU" only, a two-backend set the report
  does not word yet. A ``pltriton.load`` given ``mask=`` whose value is used is
  (``KEYWORD_EVIDENCE``). Mosaic GPU's own ``load``/``store`` are not measured;
  ``pltriton.dot`` is the generic ``pl.dot``;
* ``pltpu.with_memory_space_constraint``: fails in a kernel body with *every* params
  class, TPU's included (it belongs on the caller's arrays): measured;
* names that resolve outside a backend module and so could never match a key here:
  ``pltpu.einshape`` (``jax._src.pallas.einshape``) and ``pltpu.reciprocal``
  (``jax._src.pallas.primitives``, jax >= 0.12), although both fail with Triton;
* ``pltpu.get_tpu_info``/``is_tpu_device`` (Python-level queries, not lowering rules);
* generic ``pl.*`` primitives (``pl.semaphore_signal``, ``pl.run_scoped``...).

This module holds data, and the one key its tables are looked up by
(``namespace_key``): no mypy import, no jax import.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Final

from typed_pallas import _platforms


def namespace_key(fullname: str) -> tuple[str, str] | None:
    """(backend namespace, last name) of a backend's name (the key of every table
    here); None for any other name."""
    for prefix, namespace in _platforms.BACKEND_NAMESPACES:
        if fullname.startswith(prefix):
            return (namespace, fullname.rsplit(".", 1)[1])
    return None


TPU_ONLY: Final = frozenset({"mosaic_tpu"})
MOSAIC_GPU_ONLY: Final = frozenset({"mosaic_gpu"})
TRITON_ONLY: Final = frozenset({"triton"})

#: Human name of what a backend-only piece of evidence makes the kernel.
BACKEND_LABEL: Final[Mapping[str, str]] = dict(_platforms.BACKEND_LABELS.items())
#: ``_platforms.PARAMS_BY_BACKEND`` keyed by plain strings (evidence tables hold strings).
ROW_OF_BACKEND: Final[Mapping[str, _platforms.ParamsClass]] = dict(
    _platforms.PARAMS_BY_BACKEND.items()
)

#: Names used inside a kernel body (called or referenced), by (namespace, name).
BODY_EVIDENCE: Final[Mapping[tuple[str, str], frozenset[str]]] = {
    # TPU DMA primitives (dma_start/dma_wait): no Triton or Mosaic GPU lowering rule.
    ("mosaic_tpu", "make_async_copy"): TPU_ONLY,
    ("mosaic_tpu", "async_copy"): TPU_ONLY,
    # Remote (inter-chip) DMA: TPU ICI only.
    ("mosaic_tpu", "make_async_remote_copy"): TPU_ONLY,
    ("mosaic_tpu", "async_remote_copy"): TPU_ONLY,
    # run_scoped + TPU DMA. Measured: with Triton params tpu gives the platform error,
    # cuda "Unimplemented primitive in Pallas Triton lowering: run_scoped".
    ("mosaic_tpu", "sync_copy"): TPU_ONLY,
    # TPU software pipelining: built from TPU DMAs and semaphores.
    ("mosaic_tpu", "emit_pipeline"): TPU_ONLY,
    ("mosaic_tpu", "emit_pipeline_with_allocations"): TPU_ONLY,
    # Collective barrier semaphore of the TPU mesh.
    ("mosaic_tpu", "get_barrier_semaphore"): TPU_ONLY,
    # Mosaic TPU's own primitives (bitcast_p, roll_p): no GPU lowering rule.
    ("mosaic_tpu", "bitcast"): TPU_ONLY,
    ("mosaic_tpu", "roll"): TPU_ONLY,
    # TPU hardware PRNG, and the stateful samplers built on it.
    ("mosaic_tpu", "prng_seed"): TPU_ONLY,
    ("mosaic_tpu", "prng_random_bits"): TPU_ONLY,
    ("mosaic_tpu", "stateful_uniform"): TPU_ONLY,
    ("mosaic_tpu", "stateful_normal"): TPU_ONLY,
    ("mosaic_tpu", "stateful_bits"): TPU_ONLY,
    ("mosaic_tpu", "stateful_bernoulli"): TPU_ONLY,
    # MXU push/pop (TPU matrix unit).
    ("mosaic_tpu", "matmul_push_rhs"): TPU_ONLY,
    ("mosaic_tpu", "matmul_acc_lhs"): TPU_ONLY,
    ("mosaic_tpu", "matmul_pop"): TPU_ONLY,
    # Mosaic GPU TMA copies between global and shared memory.
    ("mosaic_gpu", "copy_gmem_to_smem"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "copy_smem_to_gmem"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "commit_smem"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "commit_smem_to_gmem_group"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "wait_smem_to_gmem"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "wait_gmem_to_smem"): MOSAIC_GPU_ONLY,
    # Mosaic GPU mbarriers.
    ("mosaic_gpu", "barrier_wait"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "barrier_arrive"): MOSAIC_GPU_ONLY,
    # Hopper/Blackwell tensor-core instructions and tensor memory.
    ("mosaic_gpu", "wgmma"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "wgmma_wait"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "tcgen05_mma"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "tcgen05_commit_arrive"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "async_load_tmem"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "async_store_tmem"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "wait_load_tmem"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "commit_tmem"): MOSAIC_GPU_ONLY,
    # Mosaic GPU pipelines (TMA + barriers), not the TPU emit_pipeline of the same name.
    ("mosaic_gpu", "emit_pipeline"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "emit_pipeline_warp_specialized"): MOSAIC_GPU_ONLY,
    # Register allocation hint and layout casts of Mosaic GPU's warpgroup model.
    ("mosaic_gpu", "set_max_registers"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "layout_cast"): MOSAIC_GPU_ONLY,
    # Triton inline PTX: no TPU or Mosaic GPU lowering rule.
    ("triton", "elementwise_inline_asm"): TRITON_ONLY,
    # Triton-only primitives of jax.experimental.pallas.triton, all present in jax 0.10.2
    # and 0.12.0.1. Measured on both: Mosaic TPU "Unimplemented primitive in Pallas TPU
    # lowering for tc: <prim>", Mosaic GPU (pallas_call on 0.10, plgpu.kernel on both)
    # "Unimplemented primitive in Pallas Mosaic GPU lowering: <prim>"; Triton lowers.
    # The tt.contiguity hint (max_contiguous_p).
    ("triton", "max_contiguous"): TRITON_ONLY,
    # PTX tanh.approx, built on elementwise_inline_asm.
    ("triton", "approx_tanh"): TRITON_ONLY,
    # debug_barrier_p (0.10.2 names the primitive "debug_barrier_p", 0.12 "debug_barrier").
    ("triton", "debug_barrier"): TRITON_ONLY,
    # Triton atomics: all seven build atomic_rmw_p.
    ("triton", "atomic_xchg"): TRITON_ONLY,
    ("triton", "atomic_add"): TRITON_ONLY,
    ("triton", "atomic_max"): TRITON_ONLY,
    ("triton", "atomic_min"): TRITON_ONLY,
    ("triton", "atomic_and"): TRITON_ONLY,
    ("triton", "atomic_or"): TRITON_ONLY,
    ("triton", "atomic_xor"): TRITON_ONLY,
    # atomic_cas_p on a scalar ref (measured on tpu with an SMEM scalar from run_scoped and
    # the old value used: "Unimplemented primitive ... atomic_cas").
    ("triton", "atomic_cas"): TRITON_ONLY,
    # Mosaic TPU primitives found in real kernel bodies (or named in issue 11), present in
    # jax 0.10.2 and 0.12.0.1 unless said. Measured on both: Triton "Unimplemented
    # primitive in Pallas Triton lowering: <prim>", Mosaic GPU the same; Mosaic TPU lowers.
    ("mosaic_tpu", "stochastic_round"): TPU_ONLY,
    ("mosaic_tpu", "pack_elementwise"): TPU_ONLY,
    ("mosaic_tpu", "unpack_elementwise"): TPU_ONLY,
    # jax >= 0.12 only: jax 0.10.2 has no pltpu.annotate (a body using it fails everywhere
    # there). 0.12.0.1: Triton fails on the ref transform (AttributeError
    # 'AccessAssumptionTransform' ... 'get_indexer_shape'), plgpu.kernel "Transforms are not
    # yet implemented for warpgroup semantics"; Mosaic TPU lowers.
    ("mosaic_tpu", "annotate"): TPU_ONLY,
}

#: Body calls that prove a backend only when given a keyword, their result used (a
#: call written as a statement is dropped before lowering): (namespace, name) ->
#: (keyword, backends).
KEYWORD_EVIDENCE: Final[Mapping[tuple[str, str], tuple[str, frozenset[str]]]] = {
    # A masked Triton load (jax's ops/gpu kernels: ``plgpu.load(x_ref.at[idx],
    # mask=idx < n, other=0.0)``). Measured on both, jax 0.10.2 and 0.12.0.1, with the
    # loaded value stored: Mosaic TPU lowering fails (an empty AssertionError; with a
    # vector index "`broadcast_to` is a Triton-specific primitive"), Mosaic GPU has no
    # masked_load rule, Triton lowers on cuda. Without ``mask=``, or with the value
    # unused, Mosaic TPU lowers.
    ("triton", "load"): ("mask", TRITON_ONLY),
}

#: Scratch allocations: names in ``scratch_shapes`` / ``scratch_types`` (also inside a
#: grid spec) and in the kernel body (``pl.run_scoped(pltpu.VMEM(...))``), by
#: (namespace, name). Measured with cross-lowering on CPU, jax 0.10.2 and 0.12.0.1
#: (tests/test_evidence_lowering.py): Triton has no scratch memory at all, and each
#: Mosaic backend rejects the other's memory spaces.
#: Memory spaces in *block specs* are no evidence: ``pl.BlockSpec(memory_space=
#: pltpu.SMEM)`` or ``pltpu.VMEM`` with Triton params lowers on cuda and rocm, and with
#: Mosaic GPU params on cuda (jax 0.10.2).
SCRATCH_EVIDENCE: Final[Mapping[tuple[str, str], frozenset[str]]] = {
    # TPU vector / scalar memory and semaphores: only Mosaic TPU allocates them.
    ("mosaic_tpu", "VMEM"): TPU_ONLY,
    ("mosaic_tpu", "SMEM"): TPU_ONLY,
    ("mosaic_tpu", "VMEM_SHARED"): TPU_ONLY,
    ("mosaic_tpu", "SEMAPHORE"): TPU_ONLY,
    ("mosaic_tpu", "SemaphoreType"): TPU_ONLY,
    ("mosaic_tpu", "dma_semaphore"): TPU_ONLY,
    # Mosaic GPU shared memory, tensor memory and barriers. Measured: scratch_shapes=
    # [plgpu.SMEM(...)] or [plgpu.Barrier(...)] with Triton params: "scratch memory not
    # implemented in the Triton backend"; with TPU params tpu lowering fails.
    ("mosaic_gpu", "SMEM"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "TMEM"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "Barrier"): MOSAIC_GPU_ONLY,
    ("mosaic_gpu", "ClusterBarrier"): MOSAIC_GPU_ONLY,
}

#: Meshes (``mesh=`` of ``pl.kernel``, first argument of ``pl.core_map``), by the
#: namespace and name of the constructor or of the mesh's class.
MESH_EVIDENCE: Final[Mapping[tuple[str, str], frozenset[str]]] = {
    # Measured: pl.kernel with a pltpu.create_tensorcore_mesh(...) mesh and Mosaic GPU
    # params fails on both platforms; GPU lowering rejects TPU meshes (NotImplementedError).
    ("mosaic_tpu", "create_tensorcore_mesh"): TPU_ONLY,
    ("mosaic_tpu", "TensorCoreMesh"): TPU_ONLY,
    # TPU SparseCore meshes (jax.experimental.pallas.tpu_sc).
    ("mosaic_tpu", "VectorSubcoreMesh"): TPU_ONLY,
    ("mosaic_tpu", "ScalarSubcoreMesh"): TPU_ONLY,
    # Mosaic GPU mesh: TPU params give "mpmd_map requires the mesh to define its
    # core_type..." on tpu; Triton params NotImplementedError / AssertionError.
    ("mosaic_gpu", "Mesh"): MOSAIC_GPU_ONLY,
}

#: Grid specs whose keyword, given as an int literal at or above a threshold, proves the
#: backends: (namespace, class name) -> (keyword, threshold, backends).
GRID_SPEC_EVIDENCE: Final[Mapping[tuple[str, str], tuple[str, int, frozenset[str]]]] = {
    # Scalar prefetch is Mosaic TPU's. Measured, jax 0.10.2 and 0.12.0.1, with
    # num_scalar_prefetch=1 and 2: Triton params "scalar prefetch not implemented in the
    # Triton backend" (cuda and rocm); Mosaic GPU params "Scalar prefetch not supported in
    # Mosaic GPU lowering." (cuda, 0.10.2; 0.12 refuses Mosaic GPU in pallas_call anyway);
    # TPU params lower. num_scalar_prefetch=0 lowers with Triton and Mosaic GPU params.
    ("mosaic_tpu", "PrefetchScalarGridSpec"): ("num_scalar_prefetch", 1, TPU_ONLY),
}
