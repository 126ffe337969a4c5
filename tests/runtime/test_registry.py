"""typed_pallas's params registry: platform_of/backend_of, register/get_lowering_rule."""

from __future__ import annotations

import dataclasses
import json
import pickle
import re
import subprocess
import sys
import textwrap
import threading
from collections.abc import Iterator
from typing import Any

import pytest

import typed_pallas as tp
from typed_pallas import _platforms, _registry
from typed_pallas._errors import LegacyParamsError, PlatformMismatchError, UnknownPlatformError

pltpu = pytest.importorskip("jax.experimental.pallas.tpu")
pltriton = pytest.importorskip("jax.experimental.pallas.triton")


def mosaic_gpu() -> Any:
    try:
        from jax.experimental.pallas import mosaic_gpu as plgpu
    except Exception as exc:  # jax 0.10 without absl
        pytest.skip(f"Mosaic GPU not importable here: {exc}")
    return plgpu


def rule_a(ctx: Any, *args: Any, **kwargs: Any) -> Any:
    return "a"


def rule_b(ctx: Any, *args: Any, **kwargs: Any) -> Any:
    return "b"


@pytest.fixture
def forget() -> Iterator[list[type]]:
    """Classes appended here are unregistered after the test."""
    registered: list[type] = []
    yield registered
    for cls in registered:
        _registry._forget(cls)


def make_params(platform: str | None = None, name: str = "UserParams") -> type:
    ns: dict[str, Any] = {}
    if platform is not None:
        ns["__pallas_platform__"] = property(lambda self: platform)
    return dataclasses.dataclass(frozen=True)(type(name, (), ns))


# ----------------------------------------------------------------------------- JAX's classes


@pytest.mark.parametrize(
    ("module", "platform", "backend"),
    [(pltpu, "tpu", "mosaic_tpu"), (pltriton, "gpu", "triton")],
)
def test_jax_classes_platform_and_backend(module: Any, platform: str, backend: str) -> None:
    assert tp.platform_of(module.CompilerParams) == platform
    assert tp.platform_of(module.CompilerParams()) == platform
    assert tp.backend_of(module.CompilerParams()) == backend


def test_mosaic_gpu_class() -> None:
    plgpu = mosaic_gpu()
    assert tp.platform_of(plgpu.CompilerParams()) == "gpu"
    assert tp.backend_of(plgpu.CompilerParams) == "mosaic_gpu"
    with pytest.raises(PlatformMismatchError) as info:
        tp.get_lowering_rule(plgpu.CompilerParams, "rocm")
    assert (
        str(info.value)
        == "Compiler params for backend mosaic_gpu cannot be used for rocm lowering."
    )
    assert info.value.__notes__ == [
        "Mosaic GPU does not support AMD ROCm devices; use jax.experimental.pallas.triton.CompilerParams for rocm."
    ]
    tp.get_lowering_rule(plgpu.CompilerParams, "cuda")  # no error (a rule, or None on jax 0.12)


@pytest.mark.parametrize(
    ("params_cls", "expected", "platform", "shown"),
    [
        ("tpu", "gpu", "tpu", "gpu"),
        ("tpu", "cuda", "tpu", "gpu"),
        ("tpu", "rocm", "tpu", "gpu"),
        ("triton", "tpu", "gpu", "tpu"),
    ],
)
def test_mismatch_has_jax_exact_text(
    params_cls: str, expected: str, platform: str, shown: str
) -> None:
    cls = {"tpu": pltpu, "triton": pltriton}[params_cls].CompilerParams
    with pytest.raises(ValueError) as info:  # `except ValueError` keeps working
        tp.get_lowering_rule(cls, expected)  # type: ignore[arg-type]
    err = info.value
    assert isinstance(err, PlatformMismatchError)
    assert (
        str(err) == f"Compiler params for platform {platform} cannot be used for {shown} lowering."
    )
    assert err.__notes__, "the hint goes into a note"
    assert all("cannot be used" not in note for note in err.__notes__)


@pytest.mark.parametrize(
    ("cls_name", "expected"),
    [("tpu", "tpu"), ("triton", "gpu"), ("triton", "cuda"), ("triton", "rocm")],
)
def test_matched_lookup_returns_jax_rule(cls_name: str, expected: str) -> None:
    from jax._src.pallas import core as pallas_core

    cls = {"tpu": pltpu, "triton": pltriton}[cls_name].CompilerParams
    rule = tp.get_lowering_rule(cls, expected)  # type: ignore[arg-type]
    assert rule is not None
    assert rule is pallas_core._backend_lowering_rules[cls][0]


def test_miss_returns_none_and_unknown_platform_raises() -> None:
    assert tp.get_lowering_rule(make_params(), "tpu") is None
    with pytest.raises(UnknownPlatformError):
        tp.get_lowering_rule(pltpu.CompilerParams, "cpu")  # type: ignore[arg-type]


def test_error_pickles_with_text_and_notes() -> None:
    with pytest.raises(PlatformMismatchError) as info:
        tp.get_lowering_rule(pltpu.CompilerParams, "cuda")
    copy = pickle.loads(pickle.dumps(info.value))
    assert type(copy) is PlatformMismatchError
    assert str(copy) == str(info.value)
    assert copy.__notes__ == info.value.__notes__
    assert (copy.params_platform, copy.expected_platform) == ("tpu", "gpu")


def test_known_eagerly_in_a_fresh_process() -> None:
    """Before any backend registration module is imported, the lookup already knows."""
    code = textwrap.dedent(
        """
        import sys
        import typed_pallas
        from jax.experimental.pallas import tpu as pltpu
        from jax._src.pallas import core
        assert "jax._src.pallas.mosaic.pallas_call_registration" not in sys.modules
        assert core.get_lowering_rule(pltpu.CompilerParams, "gpu") is None  # JAX: not yet known
        assert typed_pallas.platform_of(pltpu.CompilerParams) == "tpu"
        try:
            typed_pallas.get_lowering_rule(pltpu.CompilerParams, "cuda")
        except ValueError as e:
            print("ERR", e)
        """
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert out.returncode == 0, out.stderr[-2000:]
    assert "ERR Compiler params for platform tpu cannot be used for gpu lowering." in out.stdout


# ----------------------------------------------------------------------------- JAX's own text

#: Run in a fresh process, so that no typed-pallas guard or registration is in the way:
#: JAX's registry is asked directly for every (registered class x other platform) cell,
#: and a raw ``pl.pallas_call`` with Triton params is lowered for tpu by JAX alone.
_JAX_RAISES = textwrap.dedent(
    """
    import importlib, json
    import jax, jax.numpy as jnp
    from jax.experimental import pallas as pl
    from jax._src.pallas import core
    from typed_pallas import _jaxcompat, _platforms

    cells = []
    for row in _platforms.PARAMS_CLASSES:
        try:
            importlib.import_module(row.registration_module)
            cls = getattr(importlib.import_module(row.module), row.name)
        except Exception:
            continue  # Mosaic GPU without absl on jax 0.10
        if cls not in core._backend_lowering_rules:
            continue  # this JAX registers no rule for the class (Mosaic GPU on jax 0.12)
        for platform in _platforms.PLATFORMS:
            if platform == row.platform:
                continue
            try:
                core.get_lowering_rule(cls, platform)
            except ValueError as error:
                cells.append(["registry", row.platform, platform, type(error).__name__, str(error)])

    def add_one(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1

    x = jnp.zeros((8, 128), jnp.float32)
    triton = importlib.import_module(_platforms.PARAMS_BY_BACKEND["triton"].module)
    fn = pl.pallas_call(add_one, jax.ShapeDtypeStruct(x.shape, x.dtype), compiler_params=triton.CompilerParams())
    try:
        _jaxcompat.export_text(fn, "tpu", x)
    except ValueError as error:
        cells.append(["lowering", "gpu", "tpu", type(error).__name__, str(error)])
    print(json.dumps(cells))
    """
)


def test_our_template_is_the_text_jax_itself_raises() -> None:
    """JAX's own registry raises its platform-mismatch ValueError; the text is our template."""
    out = subprocess.run(
        [sys.executable, "-c", _JAX_RAISES], capture_output=True, text=True, timeout=300
    )
    assert out.returncode == 0, out.stderr[-2000:]
    cells = json.loads(out.stdout.strip().splitlines()[-1])
    if not cells:  # pragma: no cover - no JAX of the supported range is like this
        pytest.skip("this JAX never raises its platform-mismatch ValueError: nothing to compare")
    assert {(kind, platform, expected) for kind, platform, expected, _, _ in cells} >= {
        ("registry", "gpu", "tpu"),
        ("registry", "tpu", "gpu"),
        ("lowering", "gpu", "tpu"),
    }, cells
    for _kind, platform, expected, error_type, text in cells:
        assert error_type == "ValueError"  # JAX's plain ValueError, not ours
        assert (
            text
            == f"Compiler params for platform {platform} cannot be used for {expected} lowering."
        )
        assert text == _platforms.MISMATCH_TEMPLATE.format(
            platform=platform, expected_platform=expected
        )
        assert re.fullmatch(_platforms.MISMATCH_REGEX, text), text


# ----------------------------------------------------------------------------- platform_of errors


def test_platform_of_errors() -> None:
    with pytest.raises(LegacyParamsError) as legacy:
        tp.platform_of({"mosaic": {"dimension_semantics": ("parallel",)}})
    assert str(legacy.value) == (
        "Compiler params must be a compiler-params object, not a dict: use "
        "jax.experimental.pallas.tpu.CompilerParams(...), jax.experimental.pallas.triton.CompilerParams(...) "
        "or jax.experimental.pallas.mosaic_gpu.CompilerParams(...)."
    )
    with pytest.raises(TypeError):
        tp.platform_of(None)
    with pytest.raises(UnknownPlatformError, match="register_lowering_rule") as unknown:
        tp.platform_of(make_params())
    assert (
        "use jax.experimental.pallas.tpu/triton/mosaic_gpu.CompilerParams, or register it"
        in str(unknown.value)
    )
    with pytest.raises(UnknownPlatformError):
        tp.backend_of(int)


# ----------------------------------------------------------------------------- register


def test_register_and_lookup_user_class(forget: list[type]) -> None:
    from jax._src.pallas import core as pallas_core

    cls = make_params("tpu")
    forget.append(cls)
    tp.register_lowering_rule(cls, rule_a, "tpu")
    assert tp.get_lowering_rule(cls, "tpu") is rule_a
    assert tp.platform_of(cls()) == "tpu"
    assert tp.backend_of(cls) == "mosaic_tpu"
    assert pallas_core.get_lowering_rule(cls, "tpu") is rule_a, "handed on to JAX's registry"
    with pytest.raises(PlatformMismatchError) as info:
        tp.get_lowering_rule(cls, "rocm")
    assert str(info.value) == "Compiler params for platform tpu cannot be used for gpu lowering."


def test_same_registration_twice_is_a_noop(forget: list[type]) -> None:
    cls = make_params("gpu")
    forget.append(cls)
    tp.register_lowering_rule(cls, rule_a, "gpu", backend="triton")
    tp.register_lowering_rule(cls, rule_a, "gpu", backend="triton")
    assert tp.get_lowering_rule(cls, "cuda") is rule_a
    assert tp.backend_of(cls) == "triton"


def test_conflicting_registration_raises_unless_replace(forget: list[type]) -> None:
    cls = make_params()
    forget.append(cls)
    tp.register_lowering_rule(cls, rule_a, "gpu")
    with pytest.raises(ValueError, match="already registered"):
        tp.register_lowering_rule(cls, rule_b, "gpu")
    assert tp.get_lowering_rule(cls, "gpu") is rule_a
    with pytest.raises(PlatformMismatchError):
        tp.register_lowering_rule(cls, rule_a, "tpu")
    tp.register_lowering_rule(cls, rule_b, "gpu", replace=True)
    assert tp.get_lowering_rule(cls, "gpu") is rule_b
    tp.register_lowering_rule(cls, rule_b, "tpu", replace=True)
    assert tp.platform_of(cls) == "tpu"
    with pytest.raises(UnknownPlatformError, match="without a backend"):
        _registry._forget(cls)
        tp.register_lowering_rule(cls, rule_a, "gpu")
        tp.backend_of(cls)


def test_jax_classes_cannot_change_platform() -> None:
    for replace in (False, True):
        with pytest.raises(PlatformMismatchError, match="platform gpu cannot be used for tpu"):
            tp.register_lowering_rule(pltriton.CompilerParams, rule_a, "tpu", replace=replace)  # type: ignore[call-overload]
    assert tp.platform_of(pltriton.CompilerParams) == "gpu"


def test_replacing_a_jax_rule_needs_replace_and_forget_restores_it() -> None:
    jax_rule = tp.get_lowering_rule(pltpu.CompilerParams, "tpu")
    assert jax_rule is not None
    tp.register_lowering_rule(pltpu.CompilerParams, jax_rule, "tpu")  # the same: a no-op
    with pytest.raises(ValueError, match="already registered"):
        tp.register_lowering_rule(pltpu.CompilerParams, rule_a, "tpu")
    try:
        tp.register_lowering_rule(pltpu.CompilerParams, rule_a, "tpu", replace=True)
        assert tp.get_lowering_rule(pltpu.CompilerParams, "tpu") is rule_a
    finally:
        _registry._forget(pltpu.CompilerParams)
    assert tp.get_lowering_rule(pltpu.CompilerParams, "tpu") is jax_rule


def test_declared_platform_is_checked(forget: list[type]) -> None:
    cls = make_params("tpu")
    forget.append(cls)
    with pytest.raises(PlatformMismatchError) as info:
        tp.register_lowering_rule(cls, rule_a, "gpu")  # type: ignore[arg-type]
    assert str(info.value) == "Compiler params for platform tpu cannot be used for gpu lowering."
    with pytest.raises(UnknownPlatformError, match="'gpu'"):
        tp.register_lowering_rule(cls, rule_a, "cuda")  # type: ignore[call-overload]
    with pytest.raises(LegacyParamsError):
        tp.register_lowering_rule(dict, rule_a, "tpu")  # type: ignore[call-overload]


def test_subclasses_resolve_through_the_mro(forget: list[type]) -> None:
    base = make_params("gpu", "Base")
    forget.append(base)
    tp.register_lowering_rule(base, rule_a, "gpu", backend="mosaic_gpu")

    class Child(base):  # type: ignore[misc, valid-type]
        pass

    class GrandChild(Child):
        pass

    assert tp.get_lowering_rule(GrandChild, "cuda") is rule_a
    assert tp.backend_of(GrandChild()) == "mosaic_gpu"
    with pytest.raises(PlatformMismatchError, match="backend mosaic_gpu cannot be used for rocm"):
        tp.get_lowering_rule(GrandChild, "rocm")
    with pytest.raises(PlatformMismatchError, match="platform gpu cannot be used for tpu"):
        tp.register_lowering_rule(Child, rule_b, "tpu")

    class TritonChild(pltriton.CompilerParams):  # type: ignore[misc]
        pass

    assert tp.platform_of(TritonChild()) == "gpu"
    assert tp.get_lowering_rule(TritonChild, "rocm") is tp.get_lowering_rule(
        pltriton.CompilerParams, "rocm"
    )
    with pytest.raises(PlatformMismatchError, match="platform gpu cannot be used for tpu"):
        tp.get_lowering_rule(TritonChild, "tpu")


def test_classes_registered_directly_with_jax_are_seen(forget: list[type]) -> None:
    from jax._src.pallas import core as pallas_core

    cls = make_params()
    forget.append(cls)
    pallas_core.register_lowering_rule(cls, rule_a, "gpu")
    try:
        assert tp.platform_of(cls) == "gpu"
        assert tp.get_lowering_rule(cls, "rocm") is rule_a
        with pytest.raises(ValueError, match="already registered"):
            tp.register_lowering_rule(cls, rule_b, "gpu")
    finally:
        pallas_core._backend_lowering_rules.pop(cls, None)


def test_32_threads_register_and_look_up(forget: list[type]) -> None:
    classes = [make_params("tpu" if i % 2 else "gpu", f"P{i}") for i in range(32)]
    shared = make_params("gpu", "Shared")
    contested = make_params("tpu", "Contested")
    forget.extend([*classes, shared, contested])
    rules = [lambda ctx, *a, _i=i, **k: _i for i in range(32)]
    errors: list[BaseException] = []
    winners: list[int] = []
    refused: list[int] = []
    barrier = threading.Barrier(32)
    old = sys.getswitchinterval()
    sys.setswitchinterval(1e-6)

    def work(i: int) -> None:
        try:
            barrier.wait()
            platform = "tpu" if i % 2 else "gpu"
            tp.register_lowering_rule(classes[i], rule_a, platform)  # type: ignore[call-overload]
            tp.register_lowering_rule(shared, rule_a, "gpu")  # the same by everyone: a no-op
            for _ in range(20):
                for j, other in enumerate(classes):
                    got = _registry.resolve(other)
                    if got is not None and got.platform != ("tpu" if j % 2 else "gpu"):
                        raise AssertionError(f"{other} resolved to {got}")
                assert tp.platform_of(pltpu.CompilerParams) == "tpu"
                with pytest.raises(PlatformMismatchError):
                    tp.get_lowering_rule(pltriton.CompilerParams, "tpu")
            barrier.wait()
            try:  # 32 different rules for one class: one wins, 31 are refused
                tp.register_lowering_rule(contested, rules[i], "tpu")
                winners.append(i)
            except ValueError:
                refused.append(i)
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=work, args=(i,)) for i in range(32)]
    try:
        for t in threads:
            t.start()
        for t in threads:
            t.join()
    finally:
        sys.setswitchinterval(old)
    assert not errors, errors[:3]
    for i, cls in enumerate(classes):
        assert tp.platform_of(cls) == ("tpu" if i % 2 else "gpu")
        assert tp.get_lowering_rule(cls, "tpu" if i % 2 else "gpu") is rule_a
    assert tp.get_lowering_rule(shared, "gpu") is rule_a
    assert len(winners) == 1 and len(refused) == 31
    assert tp.get_lowering_rule(contested, "tpu") is rules[winners[0]]
