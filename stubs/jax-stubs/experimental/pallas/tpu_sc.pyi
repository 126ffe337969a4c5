# Partial stub (PEP 561) for jax.experimental.pallas.tpu_sc, shipped by typed-pallas.
#
# Every public name of the runtime module is re-exported from the private module
# that defines it, so checkers keep JAX's own types; names present at only some
# of the checked JAX releases (typed_pallas._versions.CHECKED_RELEASES) are marked
# "jax >= X only" / "jax < X only" / "jax >= X, < Y only": tests/test_release_facts.py
# checks each mark against the releases' facts (stubs/releases/), and stubtest runs at
# each release with its own allowlist (stubs/allowlists/jax-RELEASE.txt). What the stub adds: nothing yet (it is
# here so the TPU SparseCore meshes keep their types next to the other modules).


from jax._src.pallas.mosaic.sc_core import get_sparse_core_info as get_sparse_core_info
from jax._src.pallas.mosaic.sc_core import Indices as Indices
from jax._src.pallas.mosaic.sc_core import ScalarSubcoreMesh as ScalarSubcoreMesh
from jax._src.pallas.mosaic.sc_core import SparseCorePushStreamWarning as SparseCorePushStreamWarning  # type: ignore[attr-defined]  # jax >= 0.12 only
from jax._src.pallas.mosaic.sc_core import VectorSubcoreMesh as VectorSubcoreMesh
from jax._src.pallas.mosaic.sc_primitives import addupdate as addupdate
from jax._src.pallas.mosaic.sc_primitives import addupdate_compressed as addupdate_compressed
from jax._src.pallas.mosaic.sc_primitives import addupdate_scatter as addupdate_scatter
from jax._src.pallas.mosaic.sc_primitives import all_reduce_ffs as all_reduce_ffs
from jax._src.pallas.mosaic.sc_primitives import all_reduce_population_count as all_reduce_population_count
from jax._src.pallas.mosaic.sc_primitives import bitcast as bitcast
from jax._src.pallas.mosaic.sc_primitives import cummax as cummax
from jax._src.pallas.mosaic.sc_primitives import cumsum as cumsum
from jax._src.pallas.mosaic.sc_primitives import fetch_and_add as fetch_and_add
from jax._src.pallas.mosaic.sc_primitives import load_expanded as load_expanded
from jax._src.pallas.mosaic.sc_primitives import load_gather as load_gather
from jax._src.pallas.mosaic.sc_primitives import pack as pack
from jax._src.pallas.mosaic.sc_primitives import PackFormat as PackFormat
from jax._src.pallas.mosaic.sc_primitives import parallel_loop as parallel_loop
from jax._src.pallas.mosaic.sc_primitives import scan_count as scan_count
from jax._src.pallas.mosaic.sc_primitives import slice_subcore_vmem_from_shared as slice_subcore_vmem_from_shared  # type: ignore[attr-defined]  # jax >= 0.12 only
from jax._src.pallas.mosaic.sc_primitives import sort_key_val as sort_key_val
from jax._src.pallas.mosaic.sc_primitives import store_compressed as store_compressed
from jax._src.pallas.mosaic.sc_primitives import store_scatter as store_scatter
from jax._src.pallas.mosaic.sc_primitives import subcore_barrier as subcore_barrier
from jax._src.pallas.mosaic.sc_primitives import unpack as unpack
