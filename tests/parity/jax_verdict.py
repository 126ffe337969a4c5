"""JAX's own verdict on lowering a function for a platform, on a CPU host, for the
ground-truth tests (``tests/parity/test_ground_truth.py``,
``tests/inference/test_library_lowering.py``).

``lower`` is JAX's raw ``jax.jit(fn).trace(*args).lower(lowering_platforms=(p,))`` (the
same call at jax 0.10 and 0.12) inside the abstract mesh that jax 0.12 needs to lower
Mosaic TPU and Triton kernels on a CPU host (``typed_pallas._jaxcompat.cross_lowering``,
the only typed_pallas code on the way). What it returns is what JAX did: the module's
text, or the exception JAX raised, unclassified.

``jax_alone`` makes that verdict independent of the process's history: JAX fills its
params registry lazily, so its error for the same cell changes with what was lowered
before (an empty ``AssertionError`` at 0.12 and "install jaxlib GPU" at 0.10 until the
Mosaic TPU registration loads). It loads every registration module first, checks that
typed_pallas' backstop is not installed (it would answer instead of JAX), and turns
JAX's traceback filtering off so that ``raised_in_jax`` sees the raising frame.
"""

from __future__ import annotations

import contextlib
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any, Final

import jax
import pytest

from typed_pallas import _jaxcompat, _platforms

#: the custom call each kind of kernel lowers to (in the lowered module's text)
MOSAIC_TPU_CALL: Final = "tpu_custom_call"
TRITON_CALL: Final = "__gpu$xla.gpu.triton"
MOSAIC_GPU_CALL: Final = "mosaic_gpu_v2"

#: JAX's text for compiler params of one platform lowered for another (with the
#: registrations loaded, at both ends of the range)
TPU_PARAMS_ON_GPU: Final = "Compiler params for platform tpu cannot be used for gpu lowering."
GPU_PARAMS_ON_TPU: Final = "Compiler params for platform gpu cannot be used for tpu lowering."

JAX_DIR: Final = Path(jax.__file__).resolve().parent

#: the ends of the supported range whose verdicts the tests record
JAX_ENDS: Final = ((0, 10), (0, 12))


def jax_end() -> tuple[int, int]:
    """(major, minor) of this environment's jax; a clear failure for one not measured."""
    major, minor = (int(part) for part in jax.__version__.split(".")[:2])
    if (major, minor) not in JAX_ENDS:
        pytest.fail(
            f"no verdicts recorded for jax {jax.__version__}: lower the cases at this version "
            "and record what JAX does"
        )
    return major, minor


def raised_in_jax(error: BaseException) -> bool:
    """True when the innermost frame of ``error``'s traceback is JAX's own code."""
    tb = error.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return Path(tb.tb_frame.f_code.co_filename).resolve().is_relative_to(JAX_DIR)


def lower(fn: Callable[..., Any], platform: str, *args: Any) -> tuple[str, BaseException | None]:
    """JAX's lowering of ``fn(*args)`` for ``platform``: (module text, None) or ("", error)."""

    def fresh(*a: Any) -> Any:  # a new function for each platform: nothing cached
        return fn(*a)

    with _jaxcompat.cross_lowering(platform):
        try:
            lowered = jax.jit(fresh).trace(*args).lower(lowering_platforms=(platform,))
        except Exception as error:
            return "", error
    return lowered.as_text(), None


@contextlib.contextmanager
def jax_alone() -> Iterator[None]:
    """Every JAX registration loaded, typed_pallas' backstop off, tracebacks unfiltered."""
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
