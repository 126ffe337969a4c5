"""Ground truth for the parity harness: every ``fire_*`` shape of ``kernlib`` fails to
lower for cuda and rocm (and lowers for tpu), every ``silent_*`` twin lowers for cuda
and rocm, by cross-lowering on this CPU host (``typed_pallas.check_lowering``) at
whichever end of the JAX range this environment has. The H200 run of
``benchmarks/gpu_validation.py --parity`` lowers and runs the same functions natively.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator

import pytest
from parity_cases import HERE, every_function_has_a_form, fire_functions, input_of, silent_functions

import typed_pallas


@pytest.fixture(scope="module")
def shapes() -> Iterator[object]:
    sys.path.insert(0, str(HERE))
    try:
        yield importlib.import_module("kernlib.shapes")
    finally:
        sys.path.remove(str(HERE))
        for name in [m for m in sys.modules if m == "kernlib" or m.startswith("kernlib.")]:
            del sys.modules[name]


def _statuses(shapes: object, name: str) -> dict[str, str]:
    import jax.numpy as jnp

    fn = getattr(shapes, name)
    report = typed_pallas.check_lowering(fn, jnp.zeros(input_of(name), jnp.float32))
    return {platform: result.status for platform, result in report.items()}


def test_every_shape_function_belongs_to_a_form() -> None:
    assert every_function_has_a_form() == set()


@pytest.mark.slow
@pytest.mark.parametrize("name", fire_functions())
def test_fire_shapes_lower_only_for_tpu(shapes: object, name: str) -> None:
    assert _statuses(shapes, name) == {"tpu": "lowered", "cuda": "mismatch", "rocm": "mismatch"}


@pytest.mark.slow
@pytest.mark.parametrize("name", silent_functions())
def test_silent_shapes_lower_for_cuda_and_rocm(shapes: object, name: str) -> None:
    found = _statuses(shapes, name)
    assert (found["cuda"], found["rocm"]) == ("lowered", "lowered")
