"""Ground truth for the parity harness, from JAX's own verdict: every ``fire_*`` function
of ``kernlib.shapes`` fails to lower for cuda and rocm with JAX's own error, and lowers
for tpu with its Mosaic TPU kernel in the module; every ``silent_*`` twin lowers for cuda
and rocm. At whichever end of the JAX range this environment has.

The lowering is JAX's, raw (``jax_verdict.lower``); the verdict is the exception JAX
raised, its exact type and text, checked against what was measured at each end
(``VERDICTS``), and it must have been raised in JAX's own code: typed_pallas neither
classifies nor rewrites it here. ``jax_verdict.jax_alone`` makes it independent of what
the process lowered before. ``benchmarks/parity_on_gpu.py`` runs the same functions
natively on a GPU.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Iterator
from typing import Any

import jax.numpy as jnp
import pytest
from jax_verdict import MOSAIC_TPU_CALL, TPU_PARAMS_ON_GPU, jax_alone, jax_end, lower, raised_in_jax
from parity_cases import HERE, every_function_has_a_form, fire_functions, input_of, silent_functions

pytestmark = pytest.mark.filterwarnings(
    "ignore:The Pallas Triton backend is deprecated:DeprecationWarning"
)

#: JAX's verdict on a fire_* function (TPU compiler params) lowered for cuda and for
#: rocm, per end of the JAX range: (exception type, its text)
VERDICTS: dict[tuple[int, int], tuple[type[BaseException], str]] = {
    (0, 10): (ValueError, TPU_PARAMS_ON_GPU),
    (0, 12): (ValueError, TPU_PARAMS_ON_GPU),
}


@pytest.fixture(scope="module")
def shapes() -> Iterator[Any]:
    sys.path.insert(0, str(HERE))
    try:
        with jax_alone():
            yield importlib.import_module("kernlib.shapes")
    finally:
        sys.path.remove(str(HERE))
        for name in [m for m in sys.modules if m == "kernlib" or m.startswith("kernlib.")]:
            del sys.modules[name]


def test_every_shape_function_belongs_to_a_form() -> None:
    assert every_function_has_a_form() == set()


@pytest.mark.slow
@pytest.mark.parametrize("name", fire_functions())
def test_fire_shapes_lower_for_tpu_and_jax_refuses_them_for_gpus(shapes: Any, name: str) -> None:
    fn = getattr(shapes, name)
    x = jnp.zeros(input_of(name), jnp.float32)
    text, error = lower(fn, "tpu", x)
    assert error is None, f"{name} does not lower for tpu: {error!r}"
    # the kernel is in the module: not traced away, nor dropped as dead code
    assert MOSAIC_TPU_CALL in text, f"{name}: no TPU kernel in the module lowered for tpu"
    expected = VERDICTS[jax_end()]
    for platform in ("cuda", "rocm"):
        _, error = lower(fn, platform, x)
        assert error is not None, f"{name} lowers for {platform}"
        assert (type(error), str(error)) == expected, (platform, error)
        assert raised_in_jax(error), (platform, error)


@pytest.mark.slow
@pytest.mark.parametrize("name", silent_functions())
def test_silent_shapes_lower_for_cuda_and_rocm(shapes: Any, name: str) -> None:
    fn = getattr(shapes, name)
    x = jnp.zeros(input_of(name), jnp.float32)
    for platform in ("cuda", "rocm"):
        _, error = lower(fn, platform, x)
        assert error is None, f"{name} does not lower for {platform}: {error!r}"
