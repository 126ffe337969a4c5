# Partial stub (PEP 561) for jax.experimental.pallas.tpu, shipped by typed-pallas.
#
# Every public name of the runtime module is re-exported from the private module
# that defines it, so checkers keep JAX's own types; names present at only some
# of the checked JAX releases (typed_pallas._versions.CHECKED_RELEASES) are marked
# "jax >= X only" / "jax < X only" / "jax >= X, < Y only": tests/test_release_facts.py
# checks each mark against the releases' facts (stubs/releases/), and stubtest runs at
# each release with its own allowlist (stubs/allowlists/jax-RELEASE.txt). What the stub adds: the platform of
# CompilerParams (a typed_pallas.CompilerParams[Literal["tpu"]]).


from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from typing_extensions import Self

import typed_pallas
from jax._src.pallas import core as _pl_core
from jax._src.pallas.mosaic import core as _mosaic_core
from jax._src.pallas.mosaic.core import DimensionSemantics as _DimensionSemantics
from jax._src.tpu_custom_call import OptLevel as _OptLevel  # type: ignore[attr-defined]  # jax >= 0.12 only

from jax._src.pallas.core import semaphore as semaphore  # jax < 0.12 only
from jax._src.pallas.einshape import einshape as einshape
from jax._src.pallas.mosaic import core as core  # jax < 0.12.1 only (a private module under a public name)
from jax._src.pallas.mosaic.core import CoreType as CoreType
from jax._src.pallas.mosaic.core import create_tensorcore_mesh as create_tensorcore_mesh  # type: ignore[attr-defined]  # jax < 0.12.1 only (deprecated in 0.12.0.1, removed in 0.12.1: JAX says use TensorCoreMesh)
from jax._src.pallas.mosaic.core import dma_semaphore as dma_semaphore
from jax._src.pallas.mosaic.core import GridDimensionSemantics as GridDimensionSemantics
from jax._src.pallas.mosaic.core import MemorySpace as MemorySpace
from jax._src.pallas.mosaic.core import PrefetchScalarGridSpec as PrefetchScalarGridSpec
from jax._src.pallas.mosaic.core import SemaphoreType as SemaphoreType
from jax._src.pallas.mosaic.core import SideEffectType as SideEffectType
from jax._src.pallas.mosaic.core import TensorCoreMesh as TensorCoreMesh  # jax >= 0.12 only
from jax._src.pallas.mosaic.helpers import core_barrier as core_barrier
from jax._src.pallas.mosaic.helpers import join_bits as join_bits  # type: ignore[attr-defined]  # jax >= 0.12 only
from jax._src.pallas.mosaic.helpers import pack_fp6 as pack_fp6  # type: ignore[attr-defined]  # jax >= 0.12 only
from jax._src.pallas.mosaic.helpers import run_on_first_core as run_on_first_core
from jax._src.pallas.mosaic.helpers import split_bits as split_bits  # type: ignore[attr-defined]  # jax >= 0.12 only
from jax._src.pallas.mosaic.helpers import sync_copy as sync_copy
from jax._src.pallas.mosaic.helpers import unpack_fp6 as unpack_fp6  # type: ignore[attr-defined]  # jax >= 0.12 only
from jax._src.pallas.mosaic.interpret.interpret_pallas_call import force_tpu_interpret_mode as force_tpu_interpret_mode
from jax._src.pallas.mosaic.interpret.interpret_pallas_call import reset_tpu_interpret_mode_state as reset_tpu_interpret_mode_state
from jax._src.pallas.mosaic.interpret.interpret_pallas_call import set_tpu_interpret_mode as set_tpu_interpret_mode
from jax._src.pallas.mosaic.interpret.params import InterpretParams as InterpretParams
from jax._src.pallas.mosaic.lowering import LoweringException as LoweringException
from jax._src.pallas.mosaic.pipeline import BufferedRef as BufferedRef
from jax._src.pallas.mosaic.pipeline import BufferedRefBase as BufferedRefBase
from jax._src.pallas.mosaic.pipeline import BufferType as BufferType
from jax._src.pallas.mosaic.pipeline import emit_pipeline as emit_pipeline
from jax._src.pallas.mosaic.pipeline import emit_pipeline_with_allocations as emit_pipeline_with_allocations
from jax._src.pallas.mosaic.pipeline import PipelineStep as PipelineStep  # type: ignore[attr-defined]  # jax >= 0.12 only
from jax._src.pallas.mosaic.prefetch import emit_pipeline_with_async_prefetch as emit_pipeline_with_async_prefetch  # type: ignore[import-not-found]  # jax >= 0.12 only
from jax._src.pallas.mosaic.primitives import annotate as annotate  # type: ignore[attr-defined]  # jax >= 0.12 only
from jax._src.pallas.mosaic.primitives import async_copy as async_copy
from jax._src.pallas.mosaic.primitives import async_remote_copy as async_remote_copy
from jax._src.pallas.mosaic.primitives import bitcast as bitcast
from jax._src.pallas.mosaic.primitives import conv as conv  # type: ignore[attr-defined]  # jax >= 0.12 only
from jax._src.pallas.mosaic.primitives import get_barrier_semaphore as get_barrier_semaphore
from jax._src.pallas.mosaic.primitives import has_memory_space as has_memory_space  # type: ignore[attr-defined]  # jax >= 0.12 only
from jax._src.pallas.mosaic.primitives import load as load
from jax._src.pallas.mosaic.primitives import make_async_copy as make_async_copy
from jax._src.pallas.mosaic.primitives import make_async_remote_copy as make_async_remote_copy
from jax._src.pallas.mosaic.primitives import matmul_acc_lhs as matmul_acc_lhs
from jax._src.pallas.mosaic.primitives import matmul_lhs_fifo as matmul_lhs_fifo  # type: ignore[attr-defined]  # jax >= 0.12 only
from jax._src.pallas.mosaic.primitives import matmul_pop as matmul_pop
from jax._src.pallas.mosaic.primitives import matmul_pop_fifo as matmul_pop_fifo  # type: ignore[attr-defined]  # jax >= 0.12 only
from jax._src.pallas.mosaic.primitives import matmul_push_rhs as matmul_push_rhs
from jax._src.pallas.mosaic.primitives import pack_elementwise as pack_elementwise
from jax._src.pallas.mosaic.primitives import prng_random_bits as prng_random_bits
from jax._src.pallas.mosaic.primitives import prng_seed as prng_seed
from jax._src.pallas.mosaic.primitives import request_p_state as request_p_state  # type: ignore[attr-defined]  # jax >= 0.12.1 only
from jax._src.pallas.mosaic.primitives import roll as roll
from jax._src.pallas.mosaic.primitives import stochastic_round as stochastic_round
from jax._src.pallas.mosaic.primitives import store as store
from jax._src.pallas.mosaic.primitives import touch as touch
from jax._src.pallas.mosaic.primitives import trace_value as trace_value
from jax._src.pallas.mosaic.primitives import unpack_elementwise as unpack_elementwise
from jax._src.pallas.mosaic.primitives import with_memory_space_constraint as with_memory_space_constraint
from jax._src.pallas.mosaic.random import sample_block as sample_block
from jax._src.pallas.mosaic.random import stateful_bernoulli as stateful_bernoulli
from jax._src.pallas.mosaic.random import stateful_bits as stateful_bits
from jax._src.pallas.mosaic.random import stateful_normal as stateful_normal
from jax._src.pallas.mosaic.random import stateful_uniform as stateful_uniform
from jax._src.pallas.mosaic.random import to_pallas_key as to_pallas_key
from jax._src.pallas.mosaic.tpu_info import ChipVersion as ChipVersion
from jax._src.pallas.mosaic.tpu_info import get_tpu_info as get_tpu_info
from jax._src.pallas.mosaic.tpu_info import get_tpu_info_for_chip as get_tpu_info_for_chip
from jax._src.pallas.mosaic.tpu_info import is_tpu_device as is_tpu_device
from jax._src.pallas.mosaic.tpu_info import Tiling as Tiling
from jax._src.pallas.mosaic.tpu_info import TpuInfo as TpuInfo
from jax._src.pallas.primitives import DeviceIdType as DeviceIdType  # jax < 0.12 only
from jax._src.pallas.primitives import reciprocal as reciprocal  # jax >= 0.12 only
from jax._src.pallas.primitives import semaphore_read as semaphore_read  # jax < 0.12 only
from jax._src.pallas.primitives import semaphore_signal as semaphore_signal  # jax < 0.12 only
from jax._src.pallas.primitives import semaphore_wait as semaphore_wait  # jax < 0.12 only
from jax._src.pallas.mosaic.core import AccMemorySpace as _AccMemorySpace  # type: ignore[attr-defined]  # jax >= 0.12 only

ACC = _AccMemorySpace  # jax >= 0.12 only

PARALLEL = GridDimensionSemantics.PARALLEL
CORE_PARALLEL = GridDimensionSemantics.CORE_PARALLEL
SUBCORE_PARALLEL = GridDimensionSemantics.SUBCORE_PARALLEL
ARBITRARY = GridDimensionSemantics.ARBITRARY
CMEM = MemorySpace.CMEM
SMEM = MemorySpace.SMEM
VMEM = MemorySpace.VMEM
VMEM_SHARED = MemorySpace.VMEM_SHARED
HBM = MemorySpace.HBM
SEMAPHORE = MemorySpace.SEMAPHORE
HOST = _pl_core.MemorySpace.HOST  # type: ignore[attr-defined]  # jax < 0.12 only (deprecated alias of pl.HOST)

@dataclass(frozen=True)
class CompilerParams(_mosaic_core.CompilerParams, typed_pallas.CompilerParams[Literal["tpu"]]):
    """Mosaic TPU compiler params: lower only for platform "tpu".

    Statically a subclass of JAX's class (at runtime it *is* JAX's class) and a
    ``typed_pallas.CompilerParams[Literal["tpu"]]``.
    """

    dimension_semantics: tuple[_DimensionSemantics, ...] | None = None
    allow_input_fusion: tuple[bool, ...] | None = None
    vmem_limit_bytes: int | None = None
    collective_id: int | None = None
    has_side_effects: bool | SideEffectType = False
    flags: dict[str, Any] | None = None
    internal_scratch_in_bytes: int | None = None
    serialization_format: int = 1
    disable_bounds_checks: bool = False
    disable_semaphore_checks: bool = False
    skip_device_barrier: bool = False
    allow_collective_id_without_custom_barrier: bool = False
    shape_invariant_numerics: bool = True
    use_tc_tiling_on_sc: bool | None = None
    needs_layout_passes: bool = True
    fuse_transposed_lhs_in_matmul: bool = False
    opt_level: _OptLevel | None = None  # jax >= 0.12 only
    def __init__(
        self,
        dimension_semantics: Sequence[_DimensionSemantics] | None = None,
        allow_input_fusion: Sequence[bool] | None = None,
        vmem_limit_bytes: int | None = None,
        collective_id: int | None = None,
        has_side_effects: bool | SideEffectType = False,
        flags: Mapping[str, Any] | None = None,
        internal_scratch_in_bytes: int | None = None,
        serialization_format: int = 1,
        disable_bounds_checks: bool = False,
        disable_semaphore_checks: bool = False,
        skip_device_barrier: bool = False,
        allow_collective_id_without_custom_barrier: bool = False,
        shape_invariant_numerics: bool = True,
        use_tc_tiling_on_sc: bool | None = None,
        needs_layout_passes: bool = True,
        fuse_transposed_lhs_in_matmul: bool = False,
        opt_level: _OptLevel | None = None,  # jax >= 0.12 only
    ) -> None: ...
    @property
    def __pallas_platform__(self) -> Literal["tpu"]: ...
    def replace(obj, /, **changes: Any) -> Self: ...  # runtime: replace = dataclasses.replace
