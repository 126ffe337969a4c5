# Partial stub (PEP 561) for jax.pallas, shipped by typed-pallas.
#
# jax >= 0.12.1 only: JAX's preferred import path, of which jax.experimental.pallas is an alias
# from that release on. Every name is re-exported from the stub of jax.experimental.pallas,
# which defines the platform types once (typed_pallas.CompilerParams[...] for each
# params class); this file lists exactly the public names jax.pallas has (stubtest
# at 0.12.1 checks both ways), so a name of the alias only (a deprecated one) is not
# offered here.

from jax.experimental.pallas import align_to as align_to
from jax.experimental.pallas import ANY as ANY
from jax.experimental.pallas import BlockDim as BlockDim
from jax.experimental.pallas import Blocked as Blocked
from jax.experimental.pallas import BlockSpec as BlockSpec
from jax.experimental.pallas import BoundedSlice as BoundedSlice
from jax.experimental.pallas import broadcast_to as broadcast_to
from jax.experimental.pallas import Buffered as Buffered
from jax.experimental.pallas import cdiv as cdiv
from jax.experimental.pallas import CompilerParams as CompilerParams
from jax.experimental.pallas import CostEstimate as CostEstimate
from jax.experimental.pallas import debug_check as debug_check
from jax.experimental.pallas import debug_print as debug_print
from jax.experimental.pallas import delay as delay
from jax.experimental.pallas import ds as ds
from jax.experimental.pallas import dslice as dslice
from jax.experimental.pallas import Element as Element
from jax.experimental.pallas import empty as empty
from jax.experimental.pallas import empty_like as empty_like
from jax.experimental.pallas import empty_ref_like as empty_ref_like
from jax.experimental.pallas import enable_debug_checks as enable_debug_checks
from jax.experimental.pallas import enable_poison_buffers as enable_poison_buffers
from jax.experimental.pallas import estimate_cost as estimate_cost
from jax.experimental.pallas import get_global as get_global
from jax.experimental.pallas import GridSpec as GridSpec  # deprecated in jax 0.12.1
from jax.experimental.pallas import HOST as HOST
from jax.experimental.pallas import Indirect as Indirect
from jax.experimental.pallas import kernel as kernel
from jax.experimental.pallas import loop as loop
from jax.experimental.pallas import lower_as_mlir as lower_as_mlir
from jax.experimental.pallas import MemoryRef as MemoryRef
from jax.experimental.pallas import MemorySpace as MemorySpace
from jax.experimental.pallas import multiple_of as multiple_of
from jax.experimental.pallas import next_power_of_2 as next_power_of_2
from jax.experimental.pallas import no_block_spec as no_block_spec
from jax.experimental.pallas import num_programs as num_programs
from jax.experimental.pallas import pad_ref as pad_ref
from jax.experimental.pallas import pallas_call as pallas_call
from jax.experimental.pallas import pallas_call_p as pallas_call_p  # deprecated in jax 0.12.1
from jax.experimental.pallas import pallas_export_experimental as pallas_export_experimental
from jax.experimental.pallas import program_id as program_id
from jax.experimental.pallas import RevisitMode as RevisitMode
from jax.experimental.pallas import run_scoped as run_scoped
from jax.experimental.pallas import run_state as run_state
from jax.experimental.pallas import select_ref as select_ref
from jax.experimental.pallas import semaphore as semaphore
from jax.experimental.pallas import semaphore_read as semaphore_read
from jax.experimental.pallas import semaphore_signal as semaphore_signal
from jax.experimental.pallas import semaphore_wait as semaphore_wait
from jax.experimental.pallas import Slice as Slice
from jax.experimental.pallas import Squeezed as Squeezed
from jax.experimental.pallas import squeezed as squeezed
from jax.experimental.pallas import strides_from_shape as strides_from_shape
from jax.experimental.pallas import when as when
from jax.experimental.pallas import with_scoped as with_scoped
