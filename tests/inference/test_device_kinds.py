"""``device_kinds``: what a literal tested against a device's kind says (both the mypy
side's guards and the inference ask it)."""

from __future__ import annotations

from typed_pallas_mypy.device_kinds import comparison_sets, kind_platform, substring_sets

NOT_TPU = frozenset({"cuda", "rocm", "cpu"})


def test_a_marker_of_one_platform_names_it() -> None:
    assert kind_platform("TPU v5 lite", lowered=False) == "tpu"
    assert kind_platform("nvidia", lowered=True) == "cuda"
    assert kind_platform("gfx942", lowered=False) == "rocm"


def test_no_marker_or_markers_of_two_platforms_name_none() -> None:
    assert kind_platform("H100", lowered=False) is None
    assert kind_platform("tpu", lowered=False) is None  # "TPU" is compared as written
    assert kind_platform("NVIDIA AMD", lowered=False) is None


def test_only_an_exhaustive_marker_rules_its_platform_out_when_absent() -> None:
    assert substring_sets("TPU", lowered=False) == (frozenset({"tpu"}), NOT_TPU)
    assert substring_sets("tpu", lowered=True) == (frozenset({"tpu"}), NOT_TPU)
    # a "Tesla T4" is CUDA without "NVIDIA": its absence says nothing
    assert substring_sets("NVIDIA", lowered=False) == (frozenset({"cuda"}), None)
    assert substring_sets("v5", lowered=False) == (None, None)


def test_equal_to_a_kind_names_its_platform_unequal_says_nothing() -> None:
    assert comparison_sets("==", ["TPU v4"], lowered=False) == (frozenset({"tpu"}), None)
    assert comparison_sets("!=", ["TPU v4"], lowered=False) == (None, frozenset({"tpu"}))
    both = frozenset({"cuda", "rocm"})
    assert comparison_sets("in", ["NVIDIA H100", "AMD MI300X"], lowered=False) == (both, None)
    assert comparison_sets("==", ["TPU v4", "TPU v5"], lowered=False) == (None, None)
    assert comparison_sets("in", ["TPU v4", "H100"], lowered=False) == (None, None)
