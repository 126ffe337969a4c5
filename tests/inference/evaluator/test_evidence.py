"""What a kernel's body and its entry call's arguments prove (``evidence``): a kernel
without params that uses a backend-only name (``evidence_tables``, each entry
cross-lowered on both JAX ends) lowers only where that backend does; a scratch
allocation, a mesh and a grid spec with scalar prefetch prove the same; a name only a
branch the platform rules out uses proves nothing there; params that contradict the
proofs win.

Each program defines a kernel in ``app`` (the ``lib`` prelude is imported) and calls it
under a guard for "gpu": a finding when the evidence is TPU-only.
"""

from __future__ import annotations

import pytest
from evaluator_programs import fires

HEAD = """
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton

{kernel}

def main(x):
    if jax.default_backend() == "gpu":
        return {call}  # here
    return x
"""

DMA = "def body(x_ref, o_ref):\n    pltpu.sync_copy(x_ref, o_ref)\n"
COPY = "def body(x_ref, o_ref):\n    o_ref[...] = x_ref[...]\n"
CALL = "pl.pallas_call(body, out_shape=x{extra})(x)"


def _fires(kernel: str, extra: str = "") -> bool:
    return fires(HEAD.format(kernel=kernel, call=CALL.format(extra=extra)), params=None)


@pytest.mark.parametrize(
    ("kernel", "expected"),
    [
        (DMA, True),
        (COPY, False),
        # the name is used, not only called: a DMA descriptor made and started
        (
            "def body(x_ref, o_ref):\n    copy = pltpu.make_async_copy(x_ref, o_ref, None)\n"
            "    copy.start()\n",
            True,
        ),
        # in a function the body calls
        (
            "def _move(a, b):\n    pltpu.sync_copy(a, b)\n\n"
            "def body(x_ref, o_ref):\n    _move(x_ref, o_ref)\n",
            True,
        ),
        # under a branch the platform rules out where the call runs
        (
            "def body(x_ref, o_ref):\n    if jax.default_backend() == 'tpu':\n"
            "        pltpu.sync_copy(x_ref, o_ref)\n    else:\n        o_ref[...] = x_ref[...]\n",
            False,
        ),
        # under a branch on the data: either may trace
        (
            "def body(x_ref, o_ref):\n    if x_ref.shape[0] > 8:\n"
            "        pltpu.sync_copy(x_ref, o_ref)\n",
            True,
        ),
        # a local of the body that shares a module name is not that module
        ("def body(x_ref, o_ref):\n    pltpu = o_ref\n    pltpu.sync_copy(x_ref)\n", False),
    ],
    ids=["dma", "plain-copy", "descriptor", "helper", "platform-branch", "data-branch", "local"],
)
def test_body_evidence(kernel: str, expected: bool) -> None:
    assert _fires(kernel) is expected


@pytest.mark.parametrize(
    ("extra", "expected"),
    [
        (", scratch_shapes=[pltpu.VMEM((8,), None)]", True),
        (", scratch_shapes=[pltpu.SemaphoreType.DMA]", True),
        (", in_specs=[pl.BlockSpec(memory_space=pltpu.SMEM)]", False),
        (", grid_spec=pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, grid=(1,))", True),
        (", grid_spec=pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=0, grid=(1,))", False),
    ],
    ids=[
        "vmem-scratch",
        "semaphore-scratch",
        "block-spec-memory-space",
        "prefetch-1",
        "prefetch-0",
    ],
)
def test_argument_evidence(extra: str, expected: bool) -> None:
    assert _fires(COPY, extra) is expected


def test_a_masked_load_proves_triton_only_when_its_value_is_used() -> None:
    used = "def body(x_ref, o_ref):\n    o_ref[...] = pltriton.load(x_ref, mask=x_ref[...] > 0)\n"
    dead = "def body(x_ref, o_ref):\n    pltriton.load(x_ref, mask=x_ref[...] > 0)\n"
    program = HEAD.replace('== "gpu"', '== "tpu"')
    call = CALL.format(extra="")
    assert fires(program.format(kernel=used, call=call), params=None) is True
    assert fires(program.format(kernel=dead, call=call), params=None) is False


def test_params_that_contradict_the_body_win() -> None:
    # Triton params and a TPU DMA: the params say where the author meant it to run
    extra = ", compiler_params=pltriton.CompilerParams()"
    assert _fires(DMA, extra) is False
