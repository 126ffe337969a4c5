"""Ground truth for the parity harness, from JAX's own verdict: every ``fire_*`` function
of ``kernlib.shapes`` fails to lower for cuda and rocm with JAX's own error, and lowers
for tpu with its Mosaic TPU kernel in the module; every ``silent_*`` twin lowers for cuda
and rocm. At whichever end of the JAX range this environment has.

Lowering is JAX's raw ``jax.jit(fn).trace(x).lower(lowering_platforms=(p,))`` (the same
call at jax 0.10 and 0.12), inside the abstract mesh that jax 0.12 needs to lower Mosaic
TPU and Triton kernels on a CPU host (``typed_pallas._jaxcompat.cross_lowering``). The
verdict is the exception JAX raised, its exact type and text, checked against what was
measured at each end (``VERDICTS``), and it must have been raised in JAX's own code:
typed_pallas neither classifies nor rewrites it here.

JAX fills its params registry lazily, so its error depends on what the process lowered
before (an empty ``AssertionError`` at 0.12, "install jaxlib GPU" at 0.10, while the Mosaic
TPU registration is not loaded). The fixture loads JAX's registration modules first,
which makes the verdict the same whatever ran before. ``benchmarks/parity_on_gpu.py``
runs the same functions natively on a GPU.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import jax
import jax.numpy as jnp
import pytest
from parity_cases import HERE, every_function_has_a_form, fire_functions, input_of, silent_functions

from typed_pallas import _jaxcompat, _platforms

#: the custom call of a Mosaic TPU kernel in a lowered module: a fire_* function's kernel
#: must be there when it lowers for tpu (not traced away, nor dropped as dead code)
TPU_KERNEL_CALL = "tpu_custom_call"

#: JAX's verdict on TPU compiler params lowered for cuda and for rocm, with every
#: registration loaded, per (major, minor) of jax: (exception type, its text)
VERDICTS: dict[tuple[int, int], tuple[type[BaseException], str]] = {
    (0, 10): (ValueError, "Compiler params for platform tpu cannot be used for gpu lowering."),
    (0, 12): (ValueError, "Compiler params for platform tpu cannot be used for gpu lowering."),
}

JAX_DIR = Path(jax.__file__).resolve().parent

pytestmark = pytest.mark.filterwarnings(
    "ignore:The Pallas Triton backend is deprecated:DeprecationWarning"
)


def jax_end() -> tuple[int, int]:
    major, minor = jax.__version__.split(".")[:2]
    return int(major), int(minor)


def verdict() -> tuple[type[BaseException], str]:
    if jax_end() not in VERDICTS:
        pytest.fail(
            f"no verdict recorded for jax {jax.__version__}: lower a fire_* function for cuda "
            "at this version and add what JAX raises to VERDICTS"
        )
    return VERDICTS[jax_end()]


def raised_in_jax(error: BaseException) -> bool:
    """True when the innermost frame of ``error``'s traceback is JAX's own code."""
    tb = error.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return Path(tb.tb_frame.f_code.co_filename).resolve().is_relative_to(JAX_DIR)


def lower(fn: Callable[..., Any], platform: str, *args: Any) -> tuple[str, BaseException | None]:
    """JAX's raw lowering of ``fn(*args)`` for ``platform``: (module text, None) or ("", error)."""

    def fresh(*a: Any) -> Any:  # a new function for each platform: nothing cached
        return fn(*a)

    with _jaxcompat.cross_lowering(platform):
        try:
            lowered = jax.jit(fresh).trace(*args).lower(lowering_platforms=(platform,))
        except Exception as error:
            return "", error
    return lowered.as_text(), None


@pytest.fixture(scope="module")
def jax_registrations_loaded() -> Iterator[None]:
    """JAX's registration modules loaded, typed_pallas' backstop off, tracebacks unfiltered."""
    for backend in _platforms.PARAMS_BY_BACKEND:
        assert _jaxcompat.registration_module(backend) is not None, backend
    backstop = sys.modules.get("typed_pallas._backstop")
    if backstop is not None:
        assert not backstop.backstop_installed(), "typed_pallas' backstop would answer, not JAX"
    filtering = jax.config.jax_traceback_filtering
    jax.config.update("jax_traceback_filtering", "off")
    try:
        yield
    finally:
        jax.config.update("jax_traceback_filtering", filtering)


@pytest.fixture(scope="module")
def shapes(jax_registrations_loaded: None) -> Iterator[Any]:
    sys.path.insert(0, str(HERE))
    try:
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
    assert TPU_KERNEL_CALL in text, f"{name}: no TPU kernel in the module lowered for tpu"
    expected_type, expected_text = verdict()
    for platform in ("cuda", "rocm"):
        _, error = lower(fn, platform, x)
        assert error is not None, f"{name} lowers for {platform}"
        assert (type(error), str(error)) == (expected_type, expected_text), (platform, error)
        assert raised_in_jax(error), (platform, error)


@pytest.mark.slow
@pytest.mark.parametrize("name", silent_functions())
def test_silent_shapes_lower_for_cuda_and_rocm(shapes: Any, name: str) -> None:
    fn = getattr(shapes, name)
    x = jnp.zeros(input_of(name), jnp.float32)
    for platform in ("cuda", "rocm"):
        _, error = lower(fn, platform, x)
        assert error is None, f"{name} does not lower for {platform}: {error!r}"
