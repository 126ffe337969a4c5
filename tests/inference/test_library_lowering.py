"""The reader's requirements for library kernels against JAX's own verdict on lowering them.

For a sample of jax's ``pallas.ops`` entries (TPU, Triton, Mosaic GPU; a function, a
``custom_vjp`` re-export, a factory's kernel object; an entry of a module the installed
release does not ship is skipped, saying so: jax 0.12.1 removed the Triton ops) and of
the tests' own library (``tests/fixtures``' ``kernops``: Triton, Mosaic TPU, Mosaic GPU,
no params, a factory's kernel object), the platforms the reader says each
lowers for must be exactly those JAX lowers it for, with the entry's kernel in the
module; for every other platform JAX must refuse it, with the exception measured at this
end of the JAX range (``VERDICTS``), raised in JAX's own code. Lowering is JAX's raw
lowering on this CPU host (``tests/parity/jax_verdict.py``); typed_pallas decides nothing
here. Runs under both venvs (jax 0.10.2 and 0.12.x).

One cell is JAX's own hole: at jax 0.10, once Mosaic GPU's registration is loaded, a Mosaic
GPU kernel lowers for rocm, where it cannot run (its registry answers before its ROCm
check). In a fresh process, before that registration loads, JAX refuses it with its own
ROCm message; ``test_mosaic_gpu_for_rocm_in_a_fresh_process`` records that verdict.
"""

from __future__ import annotations

import importlib.util
import json
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytestmark = [
    pytest.mark.slow,
    pytest.mark.filterwarnings("ignore:The Pallas Triton backend is deprecated:DeprecationWarning"),
]

import jax  # noqa: E402
from fixtures import kernops_site  # noqa: E402
from parity.jax_verdict import (  # noqa: E402
    GPU_PARAMS_ON_TPU,
    MOSAIC_GPU_CALL,
    MOSAIC_TPU_CALL,
    TPU_PARAMS_ON_GPU,
    TRITON_CALL,
    jax_alone,
    jax_end,
    lower,
    raised_in_jax,
)

from typed_pallas import _versions  # noqa: E402
from typed_pallas_mypy.inference import Inference, Requirement  # noqa: E402

jnp = jax.numpy

OPS = "jax.experimental.pallas.ops."
SITE_PACKAGES = Path(jax.__file__).parent.parent
PLATFORMS = ("tpu", "cuda", "rocm")


def _flash_attention() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.tpu.flash_attention import flash_attention

    q = jnp.zeros((1, 2, 128, 128), jnp.float32)
    return flash_attention, (q, q, q)


def _gmm() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.tpu.megablox import gmm

    lhs = jnp.zeros((256, 128), jnp.float32)
    rhs = jnp.zeros((2, 128, 128), jnp.float32)
    return gmm, (lhs, rhs, jnp.array([128, 128], jnp.int32))


def _splash() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_kernel as sk
    from jax.experimental.pallas.ops.tpu.splash_attention import splash_attention_mask as sm

    mask = sm.MultiHeadMask([sm.CausalMask((128, 128))] * 2)
    kernel = sk.make_splash_mha(mask, head_shards=1, q_seq_shards=1)
    q = jnp.zeros((2, 128, 128), jnp.float32)
    return (lambda q, k, v: kernel(q, k, v)), (q, q, q)


def _mha() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.gpu.attention import mha

    q = jnp.zeros((1, 128, 2, 64), jnp.float16)
    return (lambda q, k, v: mha(q, k, v, None)), (q, q, q)


def _softmax() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.gpu.softmax import softmax

    return softmax, (jnp.zeros((16, 128), jnp.float32),)


def _hopper_matmul() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    from jax.experimental.pallas.ops.gpu import hopper_matmul_mgpu as hm

    config = hm.TuningConfig(tile_m=128, tile_n=128, tile_k=64, max_concurrent_steps=2)
    a = jnp.zeros((256, 256), jnp.float16)
    return (lambda a, b: hm.matmul(a, b, None, config)), (a, a)


#: entry -> (how to call it, the platforms it lowers for, written out, and the custom call
#: its kernel lowers to there); for a factory (``make_splash_mha``), calling what it
#: returns is what lowers
SAMPLES: dict[
    str, tuple[Callable[[], tuple[Callable[..., Any], tuple[Any, ...]]], set[str], str]
] = {
    "tpu.flash_attention.flash_attention": (_flash_attention, {"tpu"}, MOSAIC_TPU_CALL),
    "tpu.megablox.gmm": (_gmm, {"tpu"}, MOSAIC_TPU_CALL),
    "tpu.splash_attention.splash_attention_kernel.make_splash_mha": (
        _splash,
        {"tpu"},
        MOSAIC_TPU_CALL,
    ),
    "gpu.attention.mha": (_mha, {"cuda", "rocm"}, TRITON_CALL),
    "gpu.softmax.softmax": (_softmax, {"cuda", "rocm"}, TRITON_CALL),
    "gpu.hopper_matmul_mgpu.matmul": (_hopper_matmul, {"cuda"}, MOSAIC_GPU_CALL),
}


def _kernops(module: str) -> Any:
    """A module of the tests' library, imported from its site-packages-like folder."""
    import importlib

    if str(kernops_site.SITE) not in sys.path:
        sys.path.insert(0, str(kernops_site.SITE))
    return importlib.import_module(f"kernops.{module}")


def _k_mha() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    q = jnp.zeros((1, 128, 2, 64), jnp.float16)
    return (lambda q, k, v: _kernops("gpu.attention").mha(q, k, v)), (q, q, q)


def _k_softmax() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    return _kernops("gpu.softmax").softmax, (jnp.zeros((16, 128), jnp.float32),)


def _k_multiply() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    a = jnp.zeros((128, 128), jnp.float16)
    return _kernops("gpu.multiply_mgpu").multiply, (a, a)


def _k_flash() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    q = jnp.zeros((1, 2, 128, 128), jnp.float32)
    return _kernops("tpu.flash").flash, (q, q, q)


def _k_matmul() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    a = jnp.zeros((256, 256), jnp.float32)
    return _kernops("tpu.matmul").matmul, (a, a)


def _k_make_flash() -> tuple[Callable[..., Any], tuple[Any, ...]]:
    kernel = _kernops("wrappers").make_flash()
    q = jnp.zeros((1, 2, 128, 128), jnp.float32)
    return (lambda q, k, v: kernel(q, k, v)), (q, q, q)


#: the tests' library: entry (under ``kernops.``) -> as ``SAMPLES``
KERNOPS: dict[
    str, tuple[Callable[[], tuple[Callable[..., Any], tuple[Any, ...]]], set[str], str]
] = {
    "gpu.attention.mha": (_k_mha, {"cuda", "rocm"}, TRITON_CALL),
    "gpu.softmax.softmax": (_k_softmax, {"cuda", "rocm"}, TRITON_CALL),
    "gpu.multiply_mgpu.multiply": (_k_multiply, {"cuda"}, MOSAIC_GPU_CALL),
    "tpu.flash.flash": (_k_flash, {"tpu"}, MOSAIC_TPU_CALL),
    "tpu.matmul.matmul": (_k_matmul, {"tpu"}, MOSAIC_TPU_CALL),
    "wrappers.make_flash": (_k_make_flash, {"tpu"}, MOSAIC_TPU_CALL),
}

TPU_ON_GPU = (ValueError, TPU_PARAMS_ON_GPU)
GPU_ON_TPU = (ValueError, GPU_PARAMS_ON_TPU)
EMPTY_ASSERT = (AssertionError, "")  # JAX's bare assert on the params class
#: JAX 0.10 lowers the cell although the kernel cannot run there (see the module docstring)
LOWERS_REGARDLESS = None

_TPU_ONLY = {"cuda": TPU_ON_GPU, "rocm": TPU_ON_GPU}
_TRITON = {"tpu": GPU_ON_TPU}

#: JAX's verdict on each platform an entry does not lower for, per end of the JAX range,
#: with every registration loaded: (exception type, its text)
VERDICTS: dict[tuple[int, int], dict[str, dict[str, tuple[type[BaseException], str] | None]]] = {
    (0, 10): {
        "tpu.flash_attention.flash_attention": _TPU_ONLY,
        "tpu.megablox.gmm": _TPU_ONLY,
        "tpu.splash_attention.splash_attention_kernel.make_splash_mha": _TPU_ONLY,
        "gpu.attention.mha": _TRITON,
        "gpu.softmax.softmax": _TRITON,
        "gpu.hopper_matmul_mgpu.matmul": {"tpu": EMPTY_ASSERT, "rocm": LOWERS_REGARDLESS},
    },
    (0, 12): {
        "tpu.flash_attention.flash_attention": _TPU_ONLY,
        "tpu.megablox.gmm": _TPU_ONLY,
        "tpu.splash_attention.splash_attention_kernel.make_splash_mha": _TPU_ONLY,
        "gpu.attention.mha": _TRITON,
        "gpu.softmax.softmax": _TRITON,
        "gpu.hopper_matmul_mgpu.matmul": {"tpu": EMPTY_ASSERT, "rocm": EMPTY_ASSERT},
    },
}

#: the same for the tests' library
KERNOPS_VERDICTS: dict[
    tuple[int, int], dict[str, dict[str, tuple[type[BaseException], str] | None]]
] = {
    (0, 10): {
        "gpu.attention.mha": _TRITON,
        "gpu.softmax.softmax": _TRITON,
        "gpu.multiply_mgpu.multiply": {"tpu": EMPTY_ASSERT, "rocm": LOWERS_REGARDLESS},
        "tpu.flash.flash": _TPU_ONLY,
        "tpu.matmul.matmul": _TPU_ONLY,
        "wrappers.make_flash": _TPU_ONLY,
    },
    (0, 12): {
        "gpu.attention.mha": _TRITON,
        "gpu.softmax.softmax": _TRITON,
        "gpu.multiply_mgpu.multiply": {"tpu": EMPTY_ASSERT, "rocm": EMPTY_ASSERT},
        "tpu.flash.flash": _TPU_ONLY,
        "tpu.matmul.matmul": _TPU_ONLY,
        "wrappers.make_flash": _TPU_ONLY,
    },
}

#: JAX's verdict on the Mosaic GPU matmul lowered for rocm first thing in a fresh process
FRESH_MOSAIC_GPU_ON_ROCM: dict[tuple[int, int], tuple[str, str]] = {
    (0, 10): (
        "ValueError",
        "Mosaic GPU does not yet support AMD ROCm devices. "
        "Use ``compiler_params=pltriton.CompilerParams()`` for ROCm.",
    ),
    (0, 12): ("AssertionError", ""),
}


@pytest.fixture(scope="module")
def facts() -> Inference:
    # asked for the installed JAX, as the plugin asks
    return Inference([str(SITE_PACKAGES)], None, release=_versions.release(jax.__version__))


@pytest.fixture(scope="module")
def kernops_facts() -> Inference:
    return Inference([str(kernops_site.SITE)], None, release=_versions.release(jax.__version__))


@pytest.fixture(scope="module")
def only_jax() -> Iterator[None]:
    with jax_alone():
        yield


def test_every_sample_has_a_verdict_at_each_end() -> None:
    for samples, table in ((SAMPLES, VERDICTS), (KERNOPS, KERNOPS_VERDICTS)):
        for end, verdicts in table.items():
            assert set(verdicts) == set(samples), end
            for name, (_, platforms, _) in samples.items():
                assert set(verdicts[name]) == set(PLATFORMS) - platforms, (end, name)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_requirement_matches_jax(facts: Inference, only_jax: None, name: str) -> None:
    module = OPS + name.rsplit(".", 1)[0]
    if importlib.util.find_spec(module) is None:
        pytest.skip(f"jax {jax.__version__} does not ship {module}")
    found = facts.requirement(OPS + name) or facts.result_requirement(OPS + name)
    _matches_jax(found, SAMPLES[name], VERDICTS[jax_end()][name])


@pytest.mark.parametrize("name", sorted(KERNOPS))
def test_kernops_requirement_matches_jax(
    kernops_facts: Inference, only_jax: None, name: str
) -> None:
    found = kernops_facts.requirement("kernops." + name) or kernops_facts.result_requirement(
        "kernops." + name
    )
    _matches_jax(found, KERNOPS[name], KERNOPS_VERDICTS[jax_end()][name])


def _matches_jax(
    found: Requirement | None,
    sample: tuple[Callable[[], tuple[Callable[..., Any], tuple[Any, ...]]], set[str], str],
    verdicts: dict[str, tuple[type[BaseException], str] | None],
) -> None:
    build, lowers_for, kernel_call = sample
    # where JAX's answer depends on what was lowered before (it lowers here, refuses in
    # a fresh process), the checker says nothing: the platform is not restricted
    expected = lowers_for | {p for p, v in verdicts.items() if v is LOWERS_REGARDLESS}
    assert found is not None
    assert set(found.platforms) == expected
    fn, args = build()
    for platform in PLATFORMS:
        text, error = lower(fn, platform, *args)
        if platform in expected:
            assert error is None, (platform, error)
            assert kernel_call in text, platform
            continue
        verdict = verdicts[platform]
        assert error is not None, f"lowers for {platform}"
        assert (type(error), str(error)) == verdict, (platform, error)
        assert raised_in_jax(error), (platform, error)


#: the Mosaic GPU matmul lowered for rocm first thing in a fresh interpreter (argv[1]: the
#: folder of jax_verdict); prints [registered Mosaic GPU classes before, error type, text,
#: raised in JAX]
FRESH_SCRIPT = """
import json, sys
import jax, jax.numpy as jnp
from jax.experimental.pallas.ops.gpu import hopper_matmul_mgpu as hm
from typed_pallas import _jaxcompat
sys.path.insert(0, sys.argv[1])
from jax_verdict import lower, raised_in_jax
jax.config.update("jax_traceback_filtering", "off")
before = [c.__module__ for c in _jaxcompat.jax_registry() if "mosaic_gpu" in c.__module__]
config = hm.TuningConfig(tile_m=128, tile_n=128, tile_k=64, max_concurrent_steps=2)
a = jnp.zeros((256, 256), jnp.float16)
_, error = lower(lambda a, b: hm.matmul(a, b, None, config), "rocm", a, a)
assert error is not None, "lowered"
print(json.dumps([before, type(error).__name__, str(error), raised_in_jax(error)]))
"""


def test_mosaic_gpu_for_rocm_in_a_fresh_process() -> None:
    """JAX's own refusal of the cell that 0.10 lowers once Mosaic GPU's registration loaded."""
    parity = Path(__file__).resolve().parent.parent / "parity"
    done = subprocess.run(
        [sys.executable, "-c", FRESH_SCRIPT, str(parity)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert done.returncode == 0, done.stderr
    loaded, error_type, text, in_jax = json.loads(done.stdout.splitlines()[-1])
    assert loaded == []  # no Mosaic GPU registration before the lowering
    assert (error_type, text) == FRESH_MOSAIC_GPU_ON_ROCM[jax_end()]
    assert in_jax
