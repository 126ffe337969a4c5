# Partial stub (PEP 561) for jax.experimental.pallas.triton, shipped by typed-pallas.
#
# Every public name of the runtime module is re-exported from the private module
# that defines it, so checkers keep JAX's own types; names present at only some
# of the checked JAX releases (typed_pallas._versions.CHECKED_RELEASES) are marked
# "jax >= X only" / "jax < X only" / "jax >= X, < Y only": tests/test_release_facts.py
# checks each mark against the releases' facts (stubs/releases/), and stubtest runs at
# each release with its own allowlist (stubs/allowlists/jax-RELEASE.txt). What the stub adds: the platform of
# CompilerParams (a typed_pallas.CompilerParams[Literal["gpu"]]).


from dataclasses import dataclass
from typing import Literal

import typed_pallas
from jax._src.pallas.triton import core as _triton_core

from jax._src.pallas.primitives import dot as dot
from jax._src.pallas.triton.gpu_info import get_gpu_info as get_gpu_info  # type: ignore[import-not-found]  # jax >= 0.12 only
from jax._src.pallas.triton.gpu_info import get_gpu_info_from_version as get_gpu_info_from_version  # jax >= 0.12 only
from jax._src.pallas.triton.gpu_info import GpuInfo as GpuInfo  # jax >= 0.12 only
from jax._src.pallas.triton.gpu_info import GpuVersion as GpuVersion  # jax >= 0.12 only
from jax._src.pallas.triton.gpu_info import is_gpu_device as is_gpu_device  # jax >= 0.12 only
from jax._src.pallas.triton.pallas_call_registration import CUSTOM_CALL_TARGET_NAME as CUSTOM_CALL_TARGET_NAME  # type: ignore[attr-defined]  # jax >= 0.12 only
from jax._src.pallas.triton.primitives import approx_tanh as approx_tanh
from jax._src.pallas.triton.primitives import atomic_add as atomic_add
from jax._src.pallas.triton.primitives import atomic_and as atomic_and
from jax._src.pallas.triton.primitives import atomic_cas as atomic_cas
from jax._src.pallas.triton.primitives import atomic_max as atomic_max
from jax._src.pallas.triton.primitives import atomic_min as atomic_min
from jax._src.pallas.triton.primitives import atomic_or as atomic_or
from jax._src.pallas.triton.primitives import atomic_xchg as atomic_xchg
from jax._src.pallas.triton.primitives import atomic_xor as atomic_xor
from jax._src.pallas.triton.primitives import debug_barrier as debug_barrier
from jax._src.pallas.triton.primitives import elementwise_inline_asm as elementwise_inline_asm
from jax._src.pallas.triton.primitives import load as load
from jax._src.pallas.triton.primitives import max_contiguous as max_contiguous
from jax._src.pallas.triton.primitives import store as store

@dataclass(frozen=True)
class CompilerParams(_triton_core.CompilerParams, typed_pallas.CompilerParams[Literal["gpu"]]):
    """Triton compiler params: lower only for platform "gpu" (cuda and rocm).

    Statically a subclass of JAX's class (at runtime it *is* JAX's class).
    """

    num_warps: int | None = None
    num_stages: int | None = None
    @property
    def __pallas_platform__(self) -> Literal["gpu"]: ...
