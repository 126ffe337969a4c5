# Partial stub (PEP 561) for jax.pallas.tpu, shipped by typed-pallas.
#
# jax >= 0.12.1 only: JAX's preferred import path, of which jax.experimental.pallas.tpu is an alias
# from that release on. Every name is re-exported from the stub of jax.experimental.pallas.tpu,
# which defines the platform types once (typed_pallas.CompilerParams[...] for each
# params class); this file lists exactly the public names jax.pallas.tpu has (stubtest
# at 0.12.1 checks both ways), so a name of the alias only (a deprecated one) is not
# offered here.

from jax.experimental.pallas.tpu import ACC as ACC
from jax.experimental.pallas.tpu import annotate as annotate
from jax.experimental.pallas.tpu import ARBITRARY as ARBITRARY
from jax.experimental.pallas.tpu import async_copy as async_copy
from jax.experimental.pallas.tpu import async_remote_copy as async_remote_copy
from jax.experimental.pallas.tpu import bitcast as bitcast
from jax.experimental.pallas.tpu import BufferedRef as BufferedRef
from jax.experimental.pallas.tpu import BufferType as BufferType
from jax.experimental.pallas.tpu import ChipVersion as ChipVersion
from jax.experimental.pallas.tpu import CMEM as CMEM
from jax.experimental.pallas.tpu import CompilerParams as CompilerParams
from jax.experimental.pallas.tpu import conv as conv
from jax.experimental.pallas.tpu import core_barrier as core_barrier
from jax.experimental.pallas.tpu import CORE_PARALLEL as CORE_PARALLEL
from jax.experimental.pallas.tpu import CoreType as CoreType
from jax.experimental.pallas.tpu import dma_semaphore as dma_semaphore
from jax.experimental.pallas.tpu import einshape as einshape
from jax.experimental.pallas.tpu import emit_pipeline as emit_pipeline
from jax.experimental.pallas.tpu import emit_pipeline_with_allocations as emit_pipeline_with_allocations
from jax.experimental.pallas.tpu import emit_pipeline_with_async_prefetch as emit_pipeline_with_async_prefetch
from jax.experimental.pallas.tpu import force_tpu_interpret_mode as force_tpu_interpret_mode
from jax.experimental.pallas.tpu import get_barrier_semaphore as get_barrier_semaphore
from jax.experimental.pallas.tpu import get_tpu_info as get_tpu_info
from jax.experimental.pallas.tpu import get_tpu_info_for_chip as get_tpu_info_for_chip
from jax.experimental.pallas.tpu import GridDimensionSemantics as GridDimensionSemantics
from jax.experimental.pallas.tpu import has_memory_space as has_memory_space
from jax.experimental.pallas.tpu import HBM as HBM
from jax.experimental.pallas.tpu import InterpretParams as InterpretParams
from jax.experimental.pallas.tpu import is_tpu_device as is_tpu_device
from jax.experimental.pallas.tpu import join_bits as join_bits
from jax.experimental.pallas.tpu import load as load
from jax.experimental.pallas.tpu import LoweringException as LoweringException
from jax.experimental.pallas.tpu import make_async_copy as make_async_copy
from jax.experimental.pallas.tpu import make_async_remote_copy as make_async_remote_copy
from jax.experimental.pallas.tpu import matmul_acc_lhs as matmul_acc_lhs
from jax.experimental.pallas.tpu import matmul_lhs_fifo as matmul_lhs_fifo
from jax.experimental.pallas.tpu import matmul_pop as matmul_pop
from jax.experimental.pallas.tpu import matmul_pop_fifo as matmul_pop_fifo
from jax.experimental.pallas.tpu import matmul_push_rhs as matmul_push_rhs
from jax.experimental.pallas.tpu import MemorySpace as MemorySpace
from jax.experimental.pallas.tpu import pack_elementwise as pack_elementwise
from jax.experimental.pallas.tpu import pack_fp6 as pack_fp6
from jax.experimental.pallas.tpu import PARALLEL as PARALLEL
from jax.experimental.pallas.tpu import PipelineStep as PipelineStep
from jax.experimental.pallas.tpu import PrefetchScalarGridSpec as PrefetchScalarGridSpec
from jax.experimental.pallas.tpu import prng_random_bits as prng_random_bits
from jax.experimental.pallas.tpu import prng_seed as prng_seed
from jax.experimental.pallas.tpu import reciprocal as reciprocal
from jax.experimental.pallas.tpu import request_p_state as request_p_state
from jax.experimental.pallas.tpu import reset_tpu_interpret_mode_state as reset_tpu_interpret_mode_state
from jax.experimental.pallas.tpu import roll as roll
from jax.experimental.pallas.tpu import run_on_first_core as run_on_first_core
from jax.experimental.pallas.tpu import sample_block as sample_block
from jax.experimental.pallas.tpu import SEMAPHORE as SEMAPHORE
from jax.experimental.pallas.tpu import SemaphoreType as SemaphoreType
from jax.experimental.pallas.tpu import set_tpu_interpret_mode as set_tpu_interpret_mode
from jax.experimental.pallas.tpu import SideEffectType as SideEffectType
from jax.experimental.pallas.tpu import SMEM as SMEM
from jax.experimental.pallas.tpu import split_bits as split_bits
from jax.experimental.pallas.tpu import stateful_bernoulli as stateful_bernoulli
from jax.experimental.pallas.tpu import stateful_bits as stateful_bits
from jax.experimental.pallas.tpu import stateful_normal as stateful_normal
from jax.experimental.pallas.tpu import stateful_uniform as stateful_uniform
from jax.experimental.pallas.tpu import stochastic_round as stochastic_round
from jax.experimental.pallas.tpu import store as store
from jax.experimental.pallas.tpu import SUBCORE_PARALLEL as SUBCORE_PARALLEL
from jax.experimental.pallas.tpu import sync_copy as sync_copy
from jax.experimental.pallas.tpu import TensorCoreMesh as TensorCoreMesh
from jax.experimental.pallas.tpu import Tiling as Tiling
from jax.experimental.pallas.tpu import to_pallas_key as to_pallas_key
from jax.experimental.pallas.tpu import touch as touch
from jax.experimental.pallas.tpu import TpuInfo as TpuInfo
from jax.experimental.pallas.tpu import trace_value as trace_value
from jax.experimental.pallas.tpu import unpack_elementwise as unpack_elementwise
from jax.experimental.pallas.tpu import unpack_fp6 as unpack_fp6
from jax.experimental.pallas.tpu import VMEM as VMEM
from jax.experimental.pallas.tpu import VMEM_SHARED as VMEM_SHARED
from jax.experimental.pallas.tpu import with_memory_space_constraint as with_memory_space_constraint
