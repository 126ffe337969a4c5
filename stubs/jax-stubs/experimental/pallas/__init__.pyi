# Partial stub (PEP 561) for jax.experimental.pallas, shipped by typed-pallas.
#
# Every public name of the runtime module is re-exported from the private module
# that defines it, so checkers keep JAX's own types; names present at only some
# of the checked JAX releases (typed_pallas._versions.CHECKED_RELEASES) are marked
# "jax >= X only" / "jax < X only" / "jax >= X, < Y only": tests/test_release_facts.py
# checks each mark against the releases' facts (stubs/releases/), and stubtest runs at
# each release with its own allowlist (stubs/allowlists/jax-RELEASE.txt). What the stub adds: nothing to the
# names themselves: pl.CompilerParams stays JAX's platform-free protocol, so
# pl.pallas_call accepts every params class.


from collections.abc import Callable, Sequence
from typing import Any, Literal, overload

import typed_pallas
from jax._src import core as _jax_core
from jax._src.api import NotSpecified as _NotSpecified
from jax._src.pallas.core import Mesh as _Mesh
from jax._src.pallas.core import ScratchShapeTree as _ScratchShapeTree
from jax._src.pallas.mosaic import core as _mosaic_core
from jax._src.pallas.mosaic import sc_core as _sc_core
from jax._src.pallas.mosaic_gpu import core as _mgpu_core
from jax._src.pallas.triton import core as _triton_core

from jax._src.pallas.core import BlockDim as BlockDim
from jax._src.pallas.core import Blocked as Blocked
from jax._src.pallas.core import BlockSpec as BlockSpec
from jax._src.pallas.core import BoundedSlice as BoundedSlice
from jax._src.pallas.core import Buffered as Buffered
from jax._src.pallas.core import CompilerParams as CompilerParams
from jax._src.pallas.core import core_map as core_map  # deprecated from jax 0.12 (JAX: use pl.kernel)
from jax._src.pallas.core import CostEstimate as CostEstimate
from jax._src.pallas.core import debug_check as debug_check
from jax._src.pallas.core import debug_checks_enabled as debug_checks_enabled  # jax < 0.12 only
from jax._src.pallas.core import Element as Element
from jax._src.pallas.core import enable_debug_checks as enable_debug_checks
from jax._src.pallas.core import enable_poison_buffers as enable_poison_buffers
from jax._src.pallas.core import GridSpec as GridSpec  # deprecated from jax 0.12.1 (JAX: pass its arguments to pallas_call)
from jax._src.pallas.core import Indirect as Indirect
from jax._src.pallas.core import lower_as_mlir as lower_as_mlir
from jax._src.pallas.core import MemoryRef as MemoryRef
from jax._src.pallas.core import MemorySpace as MemorySpace
from jax._src.pallas.core import no_block_spec as no_block_spec
from jax._src.pallas.core import pad_ref as pad_ref  # type: ignore[attr-defined]  # jax >= 0.12.1 only
from jax._src.pallas.core import pallas_export_experimental as pallas_export_experimental
from jax._src.pallas.core import RevisitMode as RevisitMode
from jax._src.pallas.core import semaphore as semaphore
from jax._src.pallas.core import squeezed as squeezed
from jax._src.pallas.core import Squeezed as Squeezed
from jax._src.pallas.cost_estimate import estimate_cost as estimate_cost
from jax._src.pallas.helpers import empty as empty
from jax._src.pallas.helpers import empty_like as empty_like
from jax._src.pallas.helpers import empty_ref_like as empty_ref_like
from jax._src.pallas.helpers import loop as loop
from jax._src.pallas.helpers import select_ref as select_ref
from jax._src.pallas.helpers import when as when
from jax._src.pallas.helpers import with_scoped as with_scoped
from jax._src.pallas.pallas_call import pallas_call as pallas_call
from jax._src.pallas.pallas_call import pallas_call_p as pallas_call_p  # deprecated from jax 0.12.1 (JAX: internal to Pallas)
from jax._src.pallas.primitives import debug_print as debug_print
from jax._src.pallas.primitives import delay as delay
from jax._src.pallas.primitives import DeviceIdType as DeviceIdType  # deprecated from jax 0.12
from jax._src.pallas.primitives import dot as dot  # jax < 0.12 only
from jax._src.pallas.primitives import get_global as get_global
from jax._src.pallas.primitives import multiple_of as multiple_of
from jax._src.pallas.primitives import num_programs as num_programs
from jax._src.pallas.primitives import program_id as program_id
from jax._src.pallas.primitives import reciprocal as reciprocal  # deprecated from jax 0.12 (JAX: moved to pltpu)
from jax._src.pallas.primitives import run_scoped as run_scoped
from jax._src.pallas.primitives import semaphore_read as semaphore_read
from jax._src.pallas.primitives import semaphore_signal as semaphore_signal
from jax._src.pallas.primitives import semaphore_wait as semaphore_wait
from jax._src.pallas.utils import align_to as align_to
from jax._src.pallas.utils import cdiv as cdiv
from jax._src.pallas.utils import next_power_of_2 as next_power_of_2
from jax._src.pallas.utils import strides_from_shape as strides_from_shape
from jax._src.state.discharge import run_state as run_state
from jax._src.state.indexing import ds as ds
from jax._src.state.indexing import dslice as dslice
from jax._src.state.indexing import Slice as Slice
from jax._src.state.primitives import broadcast_to as broadcast_to

ANY = MemorySpace.ANY
# jax < 0.12: pallas MemorySpace.HOST; jax >= 0.12: jax._src.core.MemorySpace.Host
HOST: MemorySpace | _jax_core.MemorySpace

# pl.kernel: the mesh decides the platform. A TPU mesh (TensorCoreMesh, the SparseCore
# meshes) takes TPU params, a Mosaic GPU mesh (plgpu.Mesh, WarpMesh) GPU params; a mesh
# whose platform the type does not tell takes no params or params typed Any.
# (A checker cannot accept "unknown mesh + GPU params" without accepting
# "TPU mesh + GPU params": a TPU mesh is a Mesh.)
_TPUMesh = _mosaic_core.TensorCoreMesh | _sc_core.ScalarSubcoreMesh | _sc_core.VectorSubcoreMesh
_GPUMesh = _mgpu_core.Mesh | _mgpu_core.WarpMesh
_TPUParams = typed_pallas.CompilerParams[Literal["tpu"]] | _mosaic_core.CompilerParams
_GPUParams = (
    typed_pallas.CompilerParams[Literal["gpu"]] | _mgpu_core.CompilerParams | _triton_core.CompilerParams
)

@overload
def kernel(
    body: Callable[..., Any] | Sequence[Callable[..., Any]] | _NotSpecified = ...,
    out_type: object = (),
    *,
    mesh: _TPUMesh | Sequence[_TPUMesh],
    scratch_types: _ScratchShapeTree = (),
    compiler_params: _TPUParams | None = None,
    interpret: Any = False,
    cost_estimate: CostEstimate | None = None,
    debug: bool = False,
    name: str | None = None,
    metadata: dict[str, str] | None = None,
) -> Any: ...
@overload
def kernel(
    body: Callable[..., Any] | Sequence[Callable[..., Any]] | _NotSpecified = ...,
    out_type: object = (),
    *,
    mesh: _GPUMesh | Sequence[_GPUMesh],
    scratch_types: _ScratchShapeTree = (),
    compiler_params: _GPUParams | None = None,
    interpret: Any = False,
    cost_estimate: CostEstimate | None = None,
    debug: bool = False,
    name: str | None = None,
    metadata: dict[str, str] | None = None,
) -> Any: ...
@overload
def kernel(
    body: Callable[..., Any] | Sequence[Callable[..., Any]] | _NotSpecified = ...,
    out_type: object = (),
    *,
    mesh: _Mesh | Sequence[_Mesh],
    scratch_types: _ScratchShapeTree = (),
    compiler_params: None = None,
    interpret: Any = False,
    cost_estimate: CostEstimate | None = None,
    debug: bool = False,
    name: str | None = None,
    metadata: dict[str, str] | None = None,
) -> Any: ...
