"""pick_lowering, import_backend and redispatch."""

from __future__ import annotations

import sys
import types

import jax
import numpy as np
import pytest
from patterns_kernels import raw_kernel, reference, x_input

import typed_pallas
from typed_pallas import PlatformMismatchError, UnknownPlatformError, _platforms
from typed_pallas._select import is_platform_mismatch

# ----------------------------------------------------------------------------- pick_lowering


def test_pick_lowering_defaults_to_this_backend() -> None:
    assert typed_pallas.pick_lowering() == jax.default_backend() == "cpu"


@pytest.mark.parametrize("name", ["tpu", "cuda", "rocm", "cpu"])
def test_lowering_names_are_returned_as_they_are(name: str) -> None:
    assert typed_pallas.pick_lowering(name) == name


def test_gpu_without_a_gpu_backend_asks_for_cuda_or_rocm() -> None:
    with pytest.raises(UnknownPlatformError, match="pass 'cuda' or 'rocm'"):
        typed_pallas.pick_lowering("gpu")


@pytest.mark.parametrize("bad", ["metal", "TPU", "", 3])
def test_unknown_backends_list_the_valid_ones(bad: object) -> None:
    with pytest.raises(
        UnknownPlatformError, match="expected one of 'tpu', 'gpu', 'cuda', 'rocm', 'cpu'"
    ):
        typed_pallas.pick_lowering(bad)  # type: ignore[call-overload]


# ----------------------------------------------------------------------------- import_backend


@pytest.fixture
def fake_modules(monkeypatch: pytest.MonkeyPatch) -> dict[str, int]:
    """Two modules that count their imports; ``tp_fake_tpu`` cannot be imported at all."""
    imports = {"tp_fake_ref": 0}

    class Finder:
        def find_spec(self, name, path=None, target=None):  # type: ignore[no-untyped-def]
            if name == "tp_fake_tpu":
                raise AssertionError("the TPU module must never be imported on this host")
            return None

    ref = types.ModuleType("tp_fake_ref")
    ref.flash = lambda x: x + 1  # type: ignore[attr-defined]

    monkeypatch.setattr(sys, "meta_path", [Finder(), *sys.meta_path])
    monkeypatch.delitem(sys.modules, "tp_fake_ref", raising=False)

    import importlib

    real_import_module = importlib.import_module

    def import_module(name, package=None):  # type: ignore[no-untyped-def]
        if name == "tp_fake_ref":
            imports["tp_fake_ref"] += 1
            sys.modules["tp_fake_ref"] = ref
            return ref
        return real_import_module(name, package)

    monkeypatch.setattr(importlib, "import_module", import_module)
    return imports


def test_only_the_current_backends_module_is_imported(fake_modules: dict[str, int]) -> None:
    table = {"tpu": "tp_fake_tpu", "default": "tp_fake_ref"}
    module = typed_pallas.import_backend(table)
    assert module.__name__ == "tp_fake_ref" and fake_modules["tp_fake_ref"] == 1
    flash = typed_pallas.import_backend({"tpu": "tp_fake_tpu:flash", "cpu": "tp_fake_ref:flash"})
    assert flash(1) == 2


def test_lazy_waits_for_first_use(fake_modules: dict[str, int]) -> None:
    lazy = typed_pallas.import_backend({"tpu": "tp_fake_tpu", "default": "tp_fake_ref"}, lazy=True)
    assert fake_modules["tp_fake_ref"] == 0 and "not loaded yet" in repr(lazy)
    assert lazy.flash(2) == 3
    assert fake_modules["tp_fake_ref"] == 1


def test_gpu_entries_serve_cuda_and_rocm_and_specific_ones_win() -> None:
    table = {"gpu": "json", "cuda": "csv", "default": "os"}
    assert typed_pallas.import_backend(table, "cuda").__name__ == "csv"
    assert typed_pallas.import_backend(table, "rocm").__name__ == "json"
    assert typed_pallas.import_backend(table, "tpu").__name__ == "os"
    assert typed_pallas.import_backend({"gpu": "json"}, "gpu").__name__ == "json"


def test_unknown_keys_backends_and_missing_entries_are_clear_errors() -> None:
    with pytest.raises(
        UnknownPlatformError,
        match=r"unknown key.*'metal'.*expected 'tpu', 'gpu', 'cuda', 'rocm', 'cpu', 'default'",
    ):
        typed_pallas.import_backend({"metal": "json"})
    with pytest.raises(UnknownPlatformError, match="unknown JAX backend 'mps'"):
        typed_pallas.import_backend({"tpu": "json"}, "mps")
    with pytest.raises(UnknownPlatformError, match="no entry for 'cpu' and no 'default'"):
        typed_pallas.import_backend({"tpu": "json"})


# ----------------------------------------------------------------------------- redispatch


def raiser(error: BaseException):  # type: ignore[no-untyped-def]
    def candidate(x):  # type: ignore[no-untyped-def]
        raise error

    candidate.__qualname__ = f"raises_{type(error).__name__}"
    return candidate


@pytest.mark.parametrize(
    "error",
    [
        PlatformMismatchError("tpu", "gpu"),
        ValueError(_platforms.mismatch_message("gpu", "tpu")),
        ValueError(f"while lowering: {_platforms.backend_mismatch_message('mosaic_gpu', 'rocm')}"),
    ],
)
def test_a_mismatch_falls_back_to_the_next_candidate(error: BaseException) -> None:
    r = typed_pallas.redispatch(raiser(error), reference)
    x = x_input()
    np.testing.assert_array_equal(r(x), x + 1)
    assert r.chosen == 1


def test_a_mismatch_in_the_cause_chain_counts() -> None:
    def wrapped(x):  # type: ignore[no-untyped-def]
        try:
            raise ValueError(_platforms.mismatch_message("tpu", "gpu"))
        except ValueError as inner:
            raise RuntimeError("lowering failed") from inner

    assert is_platform_mismatch(RuntimeError("x")) is False
    # a RuntimeError is not caught even with a mismatch inside: only ValueErrors are
    with pytest.raises(RuntimeError):
        typed_pallas.redispatch(wrapped, reference)(x_input())


@pytest.mark.parametrize(
    "error", [ValueError("shapes do not match"), AssertionError(), TypeError("bad")]
)
def test_every_other_error_propagates(error: BaseException) -> None:
    r = typed_pallas.redispatch(raiser(error), reference)
    with pytest.raises(type(error)):
        r(x_input())
    assert r.chosen is None


def test_a_real_jax_value_error_that_is_not_a_mismatch_propagates() -> None:
    # A compiled TPU kernel on CPU: "Only interpret mode is supported on CPU backend."
    r = typed_pallas.redispatch(jax.jit(raw_kernel("mosaic_tpu")), reference)
    with pytest.raises(ValueError, match="Only interpret mode"):
        r(x_input())


def test_all_candidates_mismatching_raises_the_last_with_every_attempt_noted() -> None:
    r = typed_pallas.redispatch(
        raiser(PlatformMismatchError("tpu", "gpu")), raiser(PlatformMismatchError("gpu", "cpu"))
    )
    with pytest.raises(PlatformMismatchError) as info:
        r(1)
    assert str(info.value) == "Compiler params for platform gpu cannot be used for cpu lowering."
    assert "raises_PlatformMismatchError" in info.value.__notes__[-1]


def test_the_winner_is_remembered_unless_told_otherwise() -> None:
    calls = []

    def first(x):  # type: ignore[no-untyped-def]
        calls.append("first")
        raise PlatformMismatchError("tpu", "gpu")

    r = typed_pallas.redispatch(first, reference)
    r(1)
    r(1)
    assert calls == ["first"]
    fresh = typed_pallas.redispatch(first, reference, remember=False)
    fresh(1)
    fresh(1)
    assert calls == ["first"] * 3


def test_inside_jit_it_refuses_and_points_to_dispatch() -> None:
    r = typed_pallas.redispatch(raw_kernel("mosaic_tpu"), reference)
    with pytest.raises(TypeError, match=r"typed_pallas\.dispatch"):
        jax.jit(r)(x_input())
    single = typed_pallas.redispatch(reference)
    np.testing.assert_array_equal(jax.jit(single)(x_input()), x_input() + 1)


def test_no_candidates_or_non_callables_are_refused() -> None:
    with pytest.raises(TypeError):
        typed_pallas.redispatch()
    with pytest.raises(TypeError):
        typed_pallas.redispatch(reference, 3)  # type: ignore[arg-type]
