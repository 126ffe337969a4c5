# Partial stub (PEP 561) for jax.pallas.tpu_sc, shipped by typed-pallas.
#
# jax >= 0.12.1 only: JAX's preferred import path, of which jax.experimental.pallas.tpu_sc is an alias
# from that release on. Every name is re-exported from the stub of jax.experimental.pallas.tpu_sc,
# which defines the platform types once (typed_pallas.CompilerParams[...] for each
# params class); this file lists exactly the public names jax.pallas.tpu_sc has (stubtest
# at 0.12.1 checks both ways), so a name of the alias only (a deprecated one) is not
# offered here.

from jax.experimental.pallas.tpu_sc import addupdate as addupdate
from jax.experimental.pallas.tpu_sc import addupdate_compressed as addupdate_compressed
from jax.experimental.pallas.tpu_sc import addupdate_scatter as addupdate_scatter
from jax.experimental.pallas.tpu_sc import all_reduce_ffs as all_reduce_ffs
from jax.experimental.pallas.tpu_sc import all_reduce_population_count as all_reduce_population_count
from jax.experimental.pallas.tpu_sc import bitcast as bitcast
from jax.experimental.pallas.tpu_sc import cummax as cummax
from jax.experimental.pallas.tpu_sc import cumsum as cumsum
from jax.experimental.pallas.tpu_sc import fetch_and_add as fetch_and_add
from jax.experimental.pallas.tpu_sc import get_sparse_core_info as get_sparse_core_info
from jax.experimental.pallas.tpu_sc import Indices as Indices
from jax.experimental.pallas.tpu_sc import load_expanded as load_expanded
from jax.experimental.pallas.tpu_sc import load_gather as load_gather
from jax.experimental.pallas.tpu_sc import pack as pack
from jax.experimental.pallas.tpu_sc import PackFormat as PackFormat
from jax.experimental.pallas.tpu_sc import parallel_loop as parallel_loop
from jax.experimental.pallas.tpu_sc import ScalarSubcoreMesh as ScalarSubcoreMesh
from jax.experimental.pallas.tpu_sc import scan_count as scan_count
from jax.experimental.pallas.tpu_sc import slice_subcore_vmem_from_shared as slice_subcore_vmem_from_shared
from jax.experimental.pallas.tpu_sc import sort_key_val as sort_key_val
from jax.experimental.pallas.tpu_sc import SparseCorePushStreamWarning as SparseCorePushStreamWarning
from jax.experimental.pallas.tpu_sc import store_compressed as store_compressed
from jax.experimental.pallas.tpu_sc import store_scatter as store_scatter
from jax.experimental.pallas.tpu_sc import subcore_barrier as subcore_barrier
from jax.experimental.pallas.tpu_sc import unpack as unpack
from jax.experimental.pallas.tpu_sc import VectorSubcoreMesh as VectorSubcoreMesh
