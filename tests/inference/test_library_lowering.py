"""The reader's requirements for jax's ops against real lowering (cross-lowering on CPU).

For a sample of jax's ``pallas.ops`` entries (TPU, Triton, Mosaic GPU; a function, a
``custom_vjp`` re-export, a factory's kernel object), the platforms the reader says
each lowers for must be exactly those ``typed_pallas.check_lowering`` lowers it for:
the others fail. Runs under both venvs (jax 0.10.2 and 0.12.x).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.slow

jax = pytest.importorskip("jax")
jnp = jax.numpy

import typed_pallas  # noqa: E402
from typed_pallas_mypy.inference import Inference  # noqa: E402

OPS = "jax.experimental.pallas.ops."
SITE_PACKAGES = Path(jax.__file__).parent.parent


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


#: entry -> (how to call it, the platforms it lowers for, written out); for a factory
#: (``make_splash_mha``), calling what it returns is what lowers
SAMPLES: dict[str, tuple[Callable[[], tuple[Callable[..., Any], tuple[Any, ...]]], set[str]]] = {
    "tpu.flash_attention.flash_attention": (_flash_attention, {"tpu"}),
    "tpu.megablox.gmm": (_gmm, {"tpu"}),
    "tpu.splash_attention.splash_attention_kernel.make_splash_mha": (_splash, {"tpu"}),
    "gpu.attention.mha": (_mha, {"cuda", "rocm"}),
    "gpu.softmax.softmax": (_softmax, {"cuda", "rocm"}),
    "gpu.hopper_matmul_mgpu.matmul": (_hopper_matmul, {"cuda"}),
}


@pytest.fixture(scope="module")
def facts() -> Inference:
    return Inference([str(SITE_PACKAGES)], None)


@pytest.mark.parametrize("name", sorted(SAMPLES))
def test_requirement_matches_cross_lowering(facts: Inference, name: str) -> None:
    build, expected = SAMPLES[name]
    found = facts.requirement(OPS + name) or facts.result_requirement(OPS + name)
    assert found is not None
    assert set(found.platforms) == expected
    fn, args = build()
    report = typed_pallas.check_lowering(fn, *args)
    lowered = {platform for platform, result in report.items() if result.status == "lowered"}
    assert lowered == expected
    assert set(report) - lowered == {"tpu", "cuda", "rocm"} - expected
