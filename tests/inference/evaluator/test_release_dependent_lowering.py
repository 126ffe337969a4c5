"""Facts that depend on the JAX release (measured, ``typed_pallas._platforms``): before
jax 0.12 ``pl.pallas_call`` without params lowers with Mosaic GPU on GPUs, which refuses
rocm; from 0.12 it lowers with Triton there. Neither is reported: code under a guard for
"gpu" that runs on NVIDIA is correct to its authors. Mosaic GPU params lower for cuda; for rocm
before 0.12 JAX's answer depends on what was lowered before (nothing can be said), and
from 0.12 ``pl.pallas_call`` lowers Mosaic GPU params nowhere. Without a release, no fact
that depends on it is used.
"""

from __future__ import annotations

import pytest
from evaluator_programs import fires

OLD = (0, 10, 2)
NEW = (0, 12, 1)


def _guarded(kernel: str, guard: str = 'jax.default_backend() == "gpu"') -> str:
    return f"""
def main(x):
    if {guard}:
        return lib.{kernel}(x)  # here
    return x
"""


@pytest.mark.parametrize("release", [OLD, NEW, None], ids=["0.10.2", "0.12.1", "no-release"])
def test_pallas_call_without_params_under_a_gpu_guard_is_silent(
    release: tuple[int, ...] | None,
) -> None:
    # jax 0.10.2 refuses rocm there (its GPU default is Mosaic GPU); not reported
    assert not fires(_guarded("bare_kernel"), release=release)


@pytest.mark.parametrize("release", [OLD, NEW, None], ids=["0.10.2", "0.12.1", "no-release"])
def test_pallas_call_without_params_unguarded_is_silent(release: tuple[int, ...] | None) -> None:
    # it lowers for tpu and cuda at every release: the refusal on rocm is not everywhere
    program = "def main(x):\n    return lib.bare_kernel(x)  # here\n"
    assert not fires(program, release=release)


@pytest.mark.parametrize("release", [OLD, NEW, None], ids=["0.10.2", "0.12.1", "no-release"])
def test_triton_params_under_a_gpu_guard_are_silent(release: tuple[int, ...] | None) -> None:
    assert not fires(_guarded("triton_kernel"), release=release)


@pytest.mark.parametrize(
    ("guard", "expected"),
    [('jax.default_backend() == "tpu"', True), ('jax.default_backend() == "gpu"', False)],
    ids=["tpu-guard-fires", "gpu-guard-silent"],
)
def test_mosaic_gpu_params_at_0_10_2(guard: str, expected: bool) -> None:
    assert fires(_guarded("mosaic_gpu_kernel", guard), release=OLD) is expected


def test_mosaic_gpu_params_through_pallas_call_at_0_12_1() -> None:
    # pl.pallas_call lowers Mosaic GPU params on no platform from jax 0.12
    assert fires(_guarded("mosaic_gpu_kernel"), release=NEW)
