"""typed_pallas.dispatch on CPU: execution, branch checks, and what each platform's module contains."""

from __future__ import annotations

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from patterns_kernels import (
    TPU_CALL,
    TRITON_CALL,
    export_text,
    mosaic_gpu_available,
    raw_kernel,
    reference,
    tpu_kernel,
    triton_kernel,
    x_input,
)

import typed_pallas
from typed_pallas import PlatformMismatchError, UnknownPlatformError
from typed_pallas._check_lowering import _kernels as kernels


@pytest.fixture(scope="module")
def attention() -> typed_pallas.Dispatch:  # type: ignore[name-defined]
    return typed_pallas.dispatch(tpu=tpu_kernel(), gpu=triton_kernel(), default=reference)


# ----------------------------------------------------------------------------- execution on CPU


def test_default_branch_runs_on_cpu_under_jit_and_eagerly(attention) -> None:
    x = x_input()
    np.testing.assert_array_equal(jax.jit(attention)(x), x + 1)
    np.testing.assert_array_equal(attention(x), x + 1)


def test_keywords_and_static_arguments_reach_the_branch() -> None:
    def ref(x, *, scale, name="add"):
        assert name == "add"
        return x * scale + 1

    kernel = tpu_kernel()

    @typed_pallas.platform("tpu")
    def tpu(x, *, scale, name="add"):  # every branch is traced: same signature
        return kernel(x * scale)

    d = typed_pallas.dispatch(tpu=tpu, default=ref)
    x = x_input()
    np.testing.assert_array_equal(jax.jit(lambda x: d(x, scale=3))(x), x * 3 + 1)
    np.testing.assert_array_equal(d(x, scale=2, name="add"), x * 2 + 1)


def test_pytree_arguments_and_results() -> None:
    d = typed_pallas.dispatch(
        tpu=typed_pallas.platform("tpu")(lambda t: {"y": t["a"]}),
        default=lambda t: {"y": t["a"] + t["b"]},
    )
    out = jax.jit(d)({"a": jnp.ones(3), "b": jnp.ones(3)})
    np.testing.assert_array_equal(out["y"], 2 * np.ones(3))


@pytest.mark.parametrize("backend", ["mosaic_tpu", "triton"])
def test_each_pallas_branch_runs_in_interpret_mode(backend: str) -> None:
    # The kernel body of each Pallas branch, interpreted on CPU through the default slot.
    compiled = tpu_kernel() if backend == "mosaic_tpu" else triton_kernel()
    keyword = "tpu" if backend == "mosaic_tpu" else "gpu"
    d = typed_pallas.dispatch(**{keyword: compiled}, default=raw_kernel(backend, interpret=True))
    x = x_input()
    np.testing.assert_array_equal(jax.jit(d)(x), x + 1)


def test_vmap_and_grad_go_through(attention) -> None:
    xs = jnp.stack([x_input(), 2 * x_input()])
    np.testing.assert_array_equal(jax.jit(jax.vmap(attention))(xs), xs + 1)
    g = jax.grad(lambda x: attention(x).sum())(x_input())
    np.testing.assert_array_equal(g, np.ones_like(g))


def test_a_dispatch_is_not_tagged_with_its_first_branch(attention) -> None:
    from typed_pallas._tagged import platform_of_callable

    assert platform_of_callable(attention) is None
    assert platform_of_callable(typed_pallas.dispatch(tpu=tpu_kernel())) is None
    assert platform_of_callable(typed_pallas.redispatch(tpu_kernel(), reference)) is None
    # so it fits any slot of another dispatch as the default, and is refused nowhere
    outer = typed_pallas.dispatch(gpu=triton_kernel(), default=attention)
    np.testing.assert_array_equal(jax.jit(outer)(x_input()), x_input() + 1)


def test_branch_for_reports_the_chosen_callable(attention) -> None:
    assert attention.branch_for("tpu") is attention.branches["tpu"]
    assert attention.branch_for("cuda") is attention.branches["gpu"]
    assert attention.branch_for("rocm") is attention.branches["gpu"]
    assert attention.branch_for("cpu") is reference
    specific = typed_pallas.dispatch(gpu=triton_kernel(), cuda=triton_kernel())
    assert specific.branch_for("cuda") is specific.branches["cuda"]
    assert specific.branch_for("cpu") is None


# ----------------------------------------------------------------------------- runtime branch checks


@pytest.mark.parametrize(
    ("keyword", "make", "tagged", "expected"),
    [
        ("tpu", triton_kernel, "gpu", "tpu"),
        ("gpu", tpu_kernel, "tpu", "gpu"),
        ("cuda", tpu_kernel, "tpu", "cuda"),
        ("rocm", tpu_kernel, "tpu", "rocm"),
    ],
)
def test_wrong_platform_tag_is_a_platform_mismatch(keyword, make, tagged, expected) -> None:
    with pytest.raises(PlatformMismatchError) as info:
        typed_pallas.dispatch(**{keyword: make()}, default=reference)
    assert isinstance(info.value, ValueError)
    assert (
        str(info.value)
        == f"Compiler params for platform {tagged} cannot be used for {expected} lowering."
    )
    assert any("dispatch" in note for note in info.value.__notes__)


@pytest.mark.parametrize(
    ("keyword", "make"),
    [("tpu", tpu_kernel), ("gpu", triton_kernel), ("cuda", triton_kernel), ("rocm", triton_kernel)],
)
def test_right_tags_and_untagged_callables_are_accepted(keyword, make) -> None:
    assert typed_pallas.dispatch(**{keyword: make()}).branches[keyword] is not None
    assert typed_pallas.dispatch(**{keyword: reference}).branches[keyword] is reference


def test_mosaic_gpu_backend_tag_is_refused_for_rocm() -> None:
    def kernel(x):
        return x

    kernel.__pallas_platform__ = "gpu"  # type: ignore[attr-defined]
    kernel.__pallas_backend__ = "mosaic_gpu"  # type: ignore[attr-defined]
    assert typed_pallas.dispatch(cuda=kernel).branches["cuda"] is kernel
    with pytest.raises(
        PlatformMismatchError, match=r"backend mosaic_gpu cannot be used for rocm lowering"
    ):
        typed_pallas.dispatch(rocm=kernel)


def test_no_branch_and_non_callables_are_refused() -> None:
    with pytest.raises(UnknownPlatformError, match="at least one branch"):
        typed_pallas.dispatch()
    with pytest.raises(TypeError, match="tpu= must be callable"):
        typed_pallas.dispatch(tpu=3)  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="default= must be callable"):
        typed_pallas.dispatch(tpu=tpu_kernel(), default="ref")  # type: ignore[arg-type]


# ----------------------------------------------------------------------------- lowered modules


@pytest.mark.parametrize(
    ("platform", "present", "absent"),
    [
        ("tpu", TPU_CALL, TRITON_CALL),
        ("cuda", TRITON_CALL, TPU_CALL),
        ("rocm", TRITON_CALL, TPU_CALL),
        ("cpu", None, (TPU_CALL, TRITON_CALL)),
    ],
)
def test_each_platform_module_holds_only_its_kernel(attention, platform, present, absent) -> None:
    text, _ = export_text(attention, [platform], x_input())
    if present:
        assert present in text
    for name in absent if isinstance(absent, tuple) else (absent,):
        assert name not in text
    expected = {"tpu": ("mosaic_tpu",), "cuda": ("triton",), "rocm": ("triton",), "cpu": ()}[
        platform
    ]
    assert kernels(text) == expected


def test_one_export_serves_tpu_cuda_and_cpu(attention) -> None:
    text, exported = export_text(attention, ["tpu", "cuda", "cpu"], x_input())
    assert exported.platforms == ("tpu", "cuda", "cpu")
    assert set(kernels(text)) == {"mosaic_tpu", "triton"}
    # the artifact runs here (cpu picks the reference branch)
    x = x_input()
    np.testing.assert_array_equal(exported.call(x), x + 1)


def test_plain_platform_dependent_cannot_export_pallas_for_several_platforms() -> None:
    # The failure dispatch's narrowing exists for: each kept branch is lowered for every platform.
    tpu, triton = raw_kernel("mosaic_tpu"), raw_kernel("triton")

    def plain(x):
        return jax.lax.platform_dependent(x, tpu=tpu, cuda=triton, default=reference)

    # JAX's cpu error, or the platform mismatch when typed_pallas's backstop is installed;
    # from jax 0.12.1 the Triton branch asks for a GPU device first (a RuntimeError)
    with pytest.raises(
        (ValueError, RuntimeError),
        match=r"Only interpret mode is supported on CPU backend|Compiler params for platform"
        r"|No supported GPU devices found",
    ):
        export_text(plain, ["tpu", "cuda", "cpu"], x_input())
    text, _ = export_text(plain, ["tpu"], x_input())  # single platform is fine
    assert TPU_CALL in text and TRITON_CALL not in text


@pytest.mark.skipif(
    not mosaic_gpu_available(), reason="jax.experimental.pallas.mosaic_gpu does not import here"
)
def test_mosaic_gpu_kernel_in_the_cuda_slot() -> None:
    mgpu = typed_pallas.platform("gpu")(raw_kernel("mosaic_gpu"))
    d = typed_pallas.dispatch(tpu=tpu_kernel(), cuda=mgpu, rocm=triton_kernel(), default=reference)
    assert kernels(export_text(d, ["cuda"], x_input())[0]) == ("mosaic_gpu",)
    assert kernels(export_text(d, ["rocm"], x_input())[0]) == ("triton",)


def test_typed_pallas_call_kernels_fill_the_slots_and_lower_alone() -> None:
    from patterns_kernels import SHAPE, add_one_body, params

    out = jax.ShapeDtypeStruct(SHAPE, jnp.float32)
    tpu = typed_pallas.pallas_call(add_one_body, out, compiler_params=params("mosaic_tpu"))
    gpu = typed_pallas.pallas_call(add_one_body, out, compiler_params=params("triton"))
    assert (tpu.__pallas_platform__, gpu.__pallas_platform__) == ("tpu", "gpu")
    with pytest.raises(PlatformMismatchError):
        typed_pallas.dispatch(tpu=gpu)
    d = typed_pallas.dispatch(tpu=tpu, gpu=gpu, default=reference)
    assert kernels(export_text(d, ["tpu"], x_input())[0]) == ("mosaic_tpu",)
    assert kernels(export_text(d, ["rocm"], x_input())[0]) == ("triton",)
    assert set(kernels(export_text(d, ["tpu", "cuda", "rocm", "cpu"], x_input())[0])) == {
        "mosaic_tpu",
        "triton",
    }
