"""A device's kind string under an assumed platform (``domain.DeviceKind``).

``jax.devices()[0].device_kind`` is a model name whose text the evaluator does not know;
what a test of it says about the platform is ``typed_pallas_mypy.device_kinds``'s (its
markers, written once for the plugin and the engine). Here a test is answered under the
platform the machine assumes: true, false, or unknown where the markers do not say.

What it does not do: know any device's full kind, or follow other string methods.
"""

from __future__ import annotations

import ast
from typing import Final

from typed_pallas_mypy import device_kinds
from typed_pallas_mypy.inference.evaluator.domain import (
    ANYTHING,
    Const,
    Container,
    DeviceKind,
    Value,
    VSet,
    only,
    string_items,
    vset,
)

#: string methods of a device kind the evaluator follows (``kind.lower()``,
#: ``kind.startswith("TPU")``)
METHODS: Final = frozenset({"lower", "casefold", "startswith"})


def method_call(kind: DeviceKind, args: list[VSet]) -> VSet:
    """What calling a device kind's string method gives."""
    if kind.method in ("lower", "casefold") and not args:
        return vset(DeviceKind(kind.platform, lowered=True))
    if kind.method == "startswith" and len(args) == 1:
        text = only(args[0])
        if isinstance(text, Const) and isinstance(text.value, str):
            sets = device_kinds.substring_sets(text.value, kind.lowered)
            return _kind_answer(sets, kind.platform)
    return ANYTHING


def comparison(op: ast.cmpop, a: Value, b: Value) -> bool | None:
    """``"TPU" in kind``, ``kind == "TPU v4"``, ``kind in ("TPU v4", "TPU v5")``, each
    also negated: what ``device_kinds`` says the test means under the assumed platform."""
    negated = isinstance(op, (ast.NotIn, ast.NotEq))
    if isinstance(b, DeviceKind) and not b.method and isinstance(op, (ast.In, ast.NotIn)):
        if not (isinstance(a, Const) and isinstance(a.value, str)):
            return None
        answer = _kind_truth(device_kinds.substring_sets(a.value, b.lowered), b.platform)
    else:
        kind, other = (a, b) if isinstance(a, DeviceKind) else (b, a)
        assert isinstance(kind, DeviceKind)
        if kind.method:
            return None
        names = _literal_strings(other)
        if names is None:
            return None
        if isinstance(op, (ast.Eq, ast.NotEq)) and len(names) == 1 and isinstance(other, Const):
            sets = device_kinds.comparison_sets("==", names, kind.lowered)
        elif isinstance(op, (ast.In, ast.NotIn)) and kind is a and isinstance(other, Container):
            sets = device_kinds.comparison_sets("in", names, kind.lowered)
        else:
            return None
        answer = _kind_truth(sets, kind.platform)
    if answer is None:
        return None
    return not answer if negated else answer


def _literal_strings(value: Value) -> list[str] | None:
    if isinstance(value, Const):
        return [value.value] if isinstance(value.value, str) else None
    return string_items(value)


def _kind_truth(sets: device_kinds.Sets, platform: str) -> bool | None:
    """Whether a test with (platforms when true, platforms when false) ``sets`` is true
    under ``platform``; None where the sets do not say."""
    when_true, when_false = sets
    if when_true is not None and platform not in when_true:
        return False
    if when_false is not None and platform not in when_false:
        return True
    return None


def _kind_answer(sets: device_kinds.Sets, platform: str) -> VSet:
    answer = _kind_truth(sets, platform)
    return ANYTHING if answer is None else vset(Const(answer))
