"""The reader's copies of the plugin's tables equal the plugin's own.

``library_facts._vocabulary`` copies ``transformers.calls.ENTRIES`` and
``transformers.platform_facts.KEEPS_FUNCTION`` because those modules import mypy and the
reader must not. ``differences`` is the comparison; it is shown to catch a changed
copy, then applied to the real tables.
"""

from __future__ import annotations

from collections.abc import Mapping

from typed_pallas_mypy import fullnames
from typed_pallas_mypy.library_facts import _vocabulary
from typed_pallas_mypy.transformers import calls, platform_facts


def _shape(spec: object) -> tuple[object, ...]:
    return tuple(
        getattr(spec, field) for field in ("title", "positional", "body", "mesh", "backends")
    )


def differences(ours: Mapping[str, object], theirs: Mapping[str, object]) -> list[str]:
    """Keys whose entry spec differs (or exists on one side only)."""
    out = [k for k in sorted(set(ours) | set(theirs)) if k not in ours or k not in theirs]
    out += [k for k in sorted(set(ours) & set(theirs)) if _shape(ours[k]) != _shape(theirs[k])]
    return out


def test_the_comparison_catches_a_changed_copy() -> None:
    changed = dict(_vocabulary.ENTRIES)
    changed[fullnames.PALLAS_CALL] = _vocabulary.EntrySpec("pl.pallas_call", ("kernel",), "kernel")
    del changed[fullnames.CORE_MAP]
    assert differences(changed, calls.ENTRIES) == [fullnames.CORE_MAP, fullnames.PALLAS_CALL]


def test_entries_equal_the_plugins() -> None:
    assert differences(_vocabulary.ENTRIES, calls.ENTRIES) == []


def test_keepers_equal_the_plugins_plus_custom_derivatives() -> None:
    assert _vocabulary.KEEPS_FUNCTION == platform_facts.KEEPS_FUNCTION
    assert _vocabulary.KEEPERS - platform_facts.KEEPS_FUNCTION == _vocabulary.KEEPS_PRIMAL
    assert _vocabulary.CONFIGURED_KEEPERS <= _vocabulary.KEEPERS


def test_platform_sources_are_decision_calls() -> None:
    assert _vocabulary.PLATFORM_SOURCES <= fullnames.DECISION_CALLS
    assert fullnames.DEFAULT_BACKEND <= _vocabulary.PLATFORM_SOURCES
