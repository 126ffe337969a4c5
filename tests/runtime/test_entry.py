"""typed_pallas.pallas_call / kernel / mosaic_gpu_kernel in this process (CPU).

The fresh-process mismatch matrix is in test_matrix.py; here: interpret-mode results,
build-time errors, tags, signatures, byte-identical lowering and the guard itself.
"""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pytest

import typed_pallas as tp
from typed_pallas import _backstop, _jaxcompat
from typed_pallas._errors import LegacyParamsError, PlatformMismatchError, UnknownPlatformError

jax = pytest.importorskip("jax")
jnp = pytest.importorskip("jax.numpy")
pl = pytest.importorskip("jax.experimental.pallas")
pltpu = pytest.importorskip("jax.experimental.pallas.tpu")
pltriton = pytest.importorskip("jax.experimental.pallas.triton")

SHAPE = jax.ShapeDtypeStruct((8, 128), jnp.float32)


def mosaic_gpu() -> Any:
    try:
        from jax.experimental.pallas import mosaic_gpu as plgpu
    except Exception as exc:  # jax 0.10 without absl
        pytest.skip(f"Mosaic GPU not importable here: {exc}")
    return plgpu


def add_one(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + 1


def copy(x_ref: Any, o_ref: Any) -> None:
    pltpu.sync_copy(x_ref, o_ref)


def tpu_mesh() -> Any:
    """A one-core TPU mesh, spelled as the installed release has it: ``pltpu.TensorCoreMesh``
    from jax 0.12 (0.12.1 removed ``create_tensorcore_mesh``), the factory before."""
    if hasattr(pltpu, "TensorCoreMesh"):
        return pltpu.TensorCoreMesh(axis_name="core", num_cores=1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        return pltpu.create_tensorcore_mesh("core", num_cores=1)


@pytest.fixture
def x() -> Any:
    return jnp.arange(8 * 128, dtype=jnp.float32).reshape(8, 128)


# ----------------------------------------------------------------------------- interpret mode


@pytest.mark.parametrize("params", ["tpu", "triton", "none"])
def test_pallas_call_interpret_is_correct(params: str, x: Any) -> None:
    cp = {"tpu": pltpu.CompilerParams(), "triton": pltriton.CompilerParams(), "none": None}[params]
    fn = tp.pallas_call(add_one, SHAPE, compiler_params=cp, interpret=True)
    np.testing.assert_allclose(np.asarray(jax.jit(fn)(x)), np.asarray(x) + 1)
    assert _platforms_of(fn) == {"tpu": "tpu", "triton": "gpu", "none": None}[params]


def test_kernel_interpret_is_correct(x: Any) -> None:
    fn = tp.kernel(
        copy, SHAPE, mesh=tpu_mesh(), compiler_params=pltpu.CompilerParams(), interpret=True
    )
    np.testing.assert_allclose(np.asarray(jax.jit(fn)(x)), np.asarray(x))
    assert fn.__pallas_platform__ == "tpu"


def test_kernel_decorator_interpret(x: Any) -> None:
    @tp.kernel(out_type=SHAPE, mesh=tpu_mesh(), interpret=True)
    def body(x_ref: Any, o_ref: Any) -> None:
        pltpu.sync_copy(x_ref, o_ref)

    assert body.__pallas_platform__ == "tpu"  # from the mesh
    np.testing.assert_allclose(np.asarray(jax.jit(body)(x)), np.asarray(x))


def test_mosaic_gpu_kernel_interpret(x: Any) -> None:
    plgpu = mosaic_gpu()
    fn = tp.mosaic_gpu_kernel(
        add_one, out_type=SHAPE, compiler_params=plgpu.CompilerParams(), interpret=True
    )
    assert fn.__pallas_platform__ == "gpu"
    np.testing.assert_allclose(np.asarray(jax.jit(fn)(x)), np.asarray(x) + 1)


def test_interpret_ignores_params_like_jax(x: Any) -> None:
    """A truthy interpret= keeps JAX's behaviour: no error for params of another platform."""
    fn = tp.pallas_call(
        add_one, SHAPE, platform="gpu", compiler_params=pltpu.CompilerParams(), interpret=True
    )  # type: ignore[call-overload]
    np.testing.assert_allclose(np.asarray(jax.jit(fn)(x)), np.asarray(x) + 1)
    fn = tp.kernel(
        copy, SHAPE, mesh=tpu_mesh(), compiler_params=pltriton.CompilerParams(), interpret=True
    )  # type: ignore[arg-type]
    assert fn is not None


def _platforms_of(fn: object) -> str | None:
    return getattr(fn, "__pallas_platform__", None)


# ----------------------------------------------------------------------------- build time


def test_legacy_dict_params_fail_at_build() -> None:
    for interpret in (False, True):
        with pytest.raises(LegacyParamsError):
            tp.pallas_call(add_one, SHAPE, compiler_params={"mosaic": {}}, interpret=interpret)  # type: ignore[call-overload]
        with pytest.raises(TypeError):  # LegacyParamsError is a TypeError
            tp.kernel(copy, SHAPE, mesh=tpu_mesh(), compiler_params={"mosaic": {}})


@pytest.mark.parametrize(
    ("platform", "params", "text"),
    [
        ("gpu", "tpu", "Compiler params for platform tpu cannot be used for gpu lowering."),
        ("tpu", "triton", "Compiler params for platform gpu cannot be used for tpu lowering."),
    ],
)
def test_platform_contradicting_params_fails_at_build(
    platform: str, params: str, text: str
) -> None:
    cp = {"tpu": pltpu.CompilerParams(), "triton": pltriton.CompilerParams()}[params]
    with pytest.raises(ValueError) as info:
        tp.pallas_call(add_one, SHAPE, platform=platform, compiler_params=cp)  # type: ignore[call-overload]
    assert type(info.value) is PlatformMismatchError
    assert str(info.value) == text
    assert info.value.__notes__


def test_platform_agreeing_with_params_tags() -> None:
    fn = tp.pallas_call(add_one, SHAPE, platform="tpu", compiler_params=pltpu.CompilerParams())
    assert fn.__pallas_platform__ == "tpu"
    fn2 = tp.pallas_call(add_one, SHAPE, platform="gpu")
    assert fn2.__pallas_platform__ == "gpu"
    assert _platforms_of(tp.pallas_call(add_one, SHAPE)) is None
    with pytest.raises(UnknownPlatformError, match="cuda"):
        tp.pallas_call(add_one, SHAPE, platform="cuda")  # type: ignore[call-overload]


def test_unknown_params_class_fails_at_build_unless_interpreting() -> None:
    class Mine:
        pass

    with pytest.raises(UnknownPlatformError):
        tp.pallas_call(add_one, SHAPE, compiler_params=Mine())  # type: ignore[call-overload]
    tp.pallas_call(add_one, SHAPE, compiler_params=Mine(), interpret=True)  # type: ignore[call-overload]


def test_kernel_mesh_and_params_must_agree() -> None:
    with pytest.raises(PlatformMismatchError) as info:
        tp.kernel(copy, SHAPE, mesh=tpu_mesh(), compiler_params=pltriton.CompilerParams())  # type: ignore[arg-type]
    assert str(info.value) == "Compiler params for platform gpu cannot be used for tpu lowering."
    assert any("TensorCoreMesh" in note for note in info.value.__notes__)
    fn = tp.kernel(copy, SHAPE, mesh=tpu_mesh(), compiler_params=pltpu.CompilerParams())
    assert fn.__pallas_platform__ == "tpu"
    with pytest.raises(ValueError, match="lowers for tpu only"):
        tp.kernel(copy, SHAPE, mesh=tpu_mesh(), platform="gpu")  # type: ignore[call-overload]


def test_kernel_gpu_mesh_with_tpu_params() -> None:
    plgpu = mosaic_gpu()
    with pytest.raises(PlatformMismatchError) as info:
        tp.kernel(add_one, SHAPE, mesh=plgpu.Mesh(), compiler_params=pltpu.CompilerParams())  # type: ignore[call-overload]
    assert str(info.value) == "Compiler params for platform tpu cannot be used for gpu lowering."


def test_mosaic_gpu_kernel_refuses_tpu_params() -> None:
    mosaic_gpu()
    with pytest.raises(PlatformMismatchError) as info:
        tp.mosaic_gpu_kernel(add_one, out_type=SHAPE, compiler_params=pltpu.CompilerParams())  # type: ignore[call-overload]
    assert str(info.value) == "Compiler params for platform tpu cannot be used for gpu lowering."
    deco = tp.mosaic_gpu_kernel(out_type=SHAPE)
    assert callable(deco)


# ----------------------------------------------------------------------------- signatures


def _names(fn: Callable[..., Any]) -> list[str]:
    return list(inspect.signature(fn).parameters)


def test_signatures_follow_the_installed_jax() -> None:
    assert _names(tp.pallas_call) == [*_names(pl.pallas_call), "platform"]
    jax_kernel = inspect.signature(pl.kernel).parameters
    assert _names(tp.kernel) == [*jax_kernel, "platform"]
    for name, param in inspect.signature(pl.pallas_call).parameters.items():
        assert inspect.signature(tp.pallas_call).parameters[name].default == param.default


def test_mosaic_gpu_kernel_signature_follows_the_installed_jax() -> None:
    plgpu = mosaic_gpu()
    assert _names(tp.mosaic_gpu_kernel) == _names(plgpu.kernel)


def test_keywords_are_forwarded_as_given(monkeypatch: pytest.MonkeyPatch) -> None:
    seen: list[tuple[tuple[Any, ...], dict[str, Any]]] = []

    def fake(*args: Any, **kwargs: Any) -> Callable[..., Any]:
        seen.append((args, kwargs))
        return lambda *a: a

    monkeypatch.setattr(pl, "pallas_call", fake)
    cp = pltpu.CompilerParams()
    tp.pallas_call(add_one, SHAPE, compiler_params=cp, grid=(2,), name="k")
    tp.pallas_call(add_one, SHAPE)
    assert seen[0] == ((add_one, SHAPE), {"grid": (2,), "name": "k", "compiler_params": cp})
    assert seen[1] == ((add_one, SHAPE), {}), "keywords left out stay JAX's defaults"


# ----------------------------------------------------------------------------- lowering


LOWERED = [("tpu", "tpu"), ("triton", "cuda"), ("triton", "rocm")]


@pytest.mark.parametrize(("params", "target"), LOWERED)
def test_matched_cells_lower_to_identical_text(params: str, target: str, x: Any) -> None:
    texts = []
    for build in (pl.pallas_call, tp.pallas_call):  # one call site: same source locations
        cp = {"tpu": pltpu.CompilerParams(), "triton": pltriton.CompilerParams()}[params]
        texts.append(_jaxcompat.export_text(build(add_one, SHAPE, compiler_params=cp), target, x))
    assert texts[0] == texts[1]
    assert ("tpu_custom_call" if target == "tpu" else "triton") in texts[1]


def test_kernel_tpu_mesh_lowers_to_identical_text(x: Any) -> None:
    texts = []
    for build in (pl.kernel, tp.kernel):
        fn = build(copy, SHAPE, mesh=tpu_mesh(), compiler_params=pltpu.CompilerParams())
        texts.append(_jaxcompat.export_text(fn, "tpu", x))
    assert texts[0] == texts[1]


@pytest.mark.parametrize(
    ("params", "target", "shown"),
    [
        ("tpu", "cuda", "Compiler params for platform tpu cannot be used for gpu lowering."),
        ("triton", "tpu", "Compiler params for platform gpu cannot be used for tpu lowering."),
    ],
)
def test_mismatched_cell_raises_at_lowering(params: str, target: str, shown: str, x: Any) -> None:
    cp = {"tpu": pltpu.CompilerParams(), "triton": pltriton.CompilerParams()}[params]
    fn = tp.pallas_call(add_one, SHAPE, compiler_params=cp)
    with pytest.raises(ValueError) as info:
        _jaxcompat.export_text(fn, target, x)
    assert isinstance(info.value, PlatformMismatchError)
    assert str(info.value) == shown


def test_guard_wraps_and_restores_jax_rules() -> None:
    tp.pallas_call(add_one, SHAPE)  # installs the guard
    prim = _jaxcompat.primitive("pallas_call")
    rule, _ = _jaxcompat.generic_lowering_rule(prim)
    assert getattr(rule, "__typed_pallas_guard__", False)
    original = _backstop._originals["pallas_call"][0]
    _backstop.ensure_guard()  # idempotent: no guard around the guard
    assert _jaxcompat.generic_lowering_rule(prim)[0] is rule
    _backstop.remove_guard()
    try:
        assert _jaxcompat.generic_lowering_rule(prim)[0] is original
        assert not getattr(original, "__typed_pallas_guard__", False)
    finally:
        _backstop.ensure_guard()


def test_backstop_covers_raw_jax_calls_only_while_installed(x: Any) -> None:
    def lower_raw() -> BaseException | None:
        fn = pl.pallas_call(
            add_one, SHAPE, compiler_params=pltriton.CompilerParams()
        )  # a fresh, unmarked object
        try:
            _jaxcompat.export_text(fn, "tpu", x)
        except BaseException as exc:  # JAX's own outcome varies by version and history
            return exc
        return None

    tp.install_backstop()
    tp.install_backstop()  # idempotent
    try:
        err = lower_raw()
        assert type(err) is PlatformMismatchError
        assert str(err) == "Compiler params for platform gpu cannot be used for tpu lowering."
    finally:
        _backstop.uninstall_backstop()
    assert type(lower_raw()) is not PlatformMismatchError


def test_mosaic_gpu_params_through_pallas_call(x: Any) -> None:
    """jax 0.10 lowers them (Mosaic GPU); jax 0.12 has no rule and would fail on a bare
    assert: the guard names the way out instead."""
    plgpu = mosaic_gpu()
    from typed_pallas import _registry

    fn = tp.pallas_call(add_one, SHAPE, compiler_params=plgpu.CompilerParams())
    if _registry.get_lowering_rule(plgpu.CompilerParams, "cuda") is None:
        with pytest.raises(NotImplementedError, match=r"plgpu\.kernel"):
            _jaxcompat.export_text(fn, "cuda", x)
    else:
        assert "mosaic_gpu" in _jaxcompat.export_text(fn, "cuda", x)
