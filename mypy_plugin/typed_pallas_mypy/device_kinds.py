"""What a test of a device's kind string says about the platform, written once.

``jax.Device.device_kind`` is a model name ("TPU v5 lite", "NVIDIA H100 80GB HBM3",
"AMD Instinct MI300X"); only some substrings belong to one platform alone
(``_platforms.DEVICE_KIND_MARKERS``), and only some are in every kind of their platform
(``DEVICE_KIND_EXHAUSTIVE_MARKERS``: without "TPU" a kind is not a TPU's). These
functions turn a literal tested against a kind (``"TPU" in kind``,
``kind.startswith("NVIDIA")``, ``kind == "TPU v4"``, each also on ``kind.lower()``) into
(platforms when the test is true, platforms when it is false), ``None`` where it is not
known. The mypy side (``transformers.guards``) and the inference (``inference.reader``)
recognise the kind in their own syntax trees and ask here what the test means.

What it does not do: recognise a device or its kind in code, or import mypy or jax.
"""

from __future__ import annotations

from typed_pallas import _platforms

__all__ = ["Sets", "comparison_sets", "kind_platform", "substring_sets"]

#: (platforms when true, platforms when false); None = not known
Sets = tuple[frozenset[str] | None, frozenset[str] | None]


def kind_platform(text: str, lowered: bool) -> str | None:
    """The one platform whose device kinds contain ``text`` (``lowered``: compared with
    the lowercased kind), if its markers say so."""
    found = {
        platform
        for marker, platform in _platforms.DEVICE_KIND_MARKERS.items()
        if (marker.lower() if lowered else marker) in text
    }
    return found.pop() if len(found) == 1 else None


def substring_sets(text: str, lowered: bool) -> Sets:
    """(true, false) of ``text in kind`` / ``kind.startswith(text)``."""
    platform = kind_platform(text, lowered)
    if platform is None:
        return None, None
    exhaustive = {m.lower() if lowered else m for m in _platforms.DEVICE_KIND_EXHAUSTIVE_MARKERS}
    false_set = _platforms.GUARD_UNIVERSE - {platform} if text in exhaustive else None
    return frozenset({platform}), false_set


def comparison_sets(op: str, names: list[str], lowered: bool) -> Sets:
    """(true, false) of ``kind == name``, ``kind != name``, ``kind in names`` or
    ``kind not in names``: a kind equal to a name has that name's platform; unequal
    says nothing."""
    if op in ("==", "!=") and len(names) != 1:
        return None, None
    matched: set[str] = set()
    for name in names:
        platform = kind_platform(name, lowered)
        if platform is None:
            return None, None
        matched.add(platform)
    whole = frozenset(matched)
    if op in ("==", "in"):
        return whole, None
    if op in ("!=", "not in"):
        return None, whole
    return None, None
