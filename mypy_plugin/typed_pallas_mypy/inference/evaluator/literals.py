"""Large displays made only of constants: their value is built once per node.

A table of tuning constants (jax's ragged paged attention ships a dict of thousands of
tuples) is evaluated every time its module is imported, and the summaries import a
module once per platform and question: building its values again each time was a
third of what a summary of jax's ops cost. A display whose every leaf is a constant
(``1``, ``-1``, ``"bf16"``, ``None``) and whose every inner display is a tuple, list,
set or dict of such, with no list, set or dict inside a tuple, is a *literal*: its value depends on nothing but the node.

What is shared and what is not, as in Python: a tuple of constants is immutable (and
CPython itself keeps one object per such display), so its value is built once and
shared by every evaluation; a list, dict or set is a new object each time the display
runs, so each evaluation gets a fresh copy of the outer containers (the tuples inside
stay shared). Small displays are not kept: evaluating them costs less than the lookup.

What this does not do: keep any display holding a name, call, comprehension or
``**spread`` (those depend on where they run), or change what a display evaluates to.
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Callable
from typing import Final

from typed_pallas_mypy.inference.evaluator.domain import Container, Value, VSet

#: displays with fewer nodes than this are evaluated each time
SMALLEST: Final = 64

#: a literal display's value, or None for a display that is not a literal (or is small)
_BUILT: weakref.WeakKeyDictionary[ast.expr, VSet | None] = weakref.WeakKeyDictionary()

_DISPLAYS: Final = (ast.Tuple, ast.List, ast.Set, ast.Dict)


def literal_value(node: ast.expr, build: Callable[[], VSet]) -> VSet:
    """The value of the display ``node``: built by ``build`` the first time when ``node``
    is a large literal, then shared (its lists, dicts and sets copied); else ``build()``."""
    try:
        kept = _BUILT[node]
    except KeyError:
        kept = None
        if _size_if_literal(node) >= SMALLEST:
            kept = build()
            _BUILT[node] = kept
            return _fresh_set(kept)
        _BUILT[node] = None
    if kept is None:
        return build()
    return _fresh_set(kept)


def _size_if_literal(node: ast.expr) -> int:
    """How many nodes the display ``node`` has, or 0 when it is not a literal."""
    size = 0
    stack: list[ast.expr | None] = [node]
    while stack:
        current = stack.pop()
        size += 1
        if isinstance(current, ast.Constant):
            continue
        if (
            isinstance(current, ast.UnaryOp)
            and isinstance(current.op, (ast.USub, ast.UAdd))
            and isinstance(current.operand, ast.Constant)
        ):
            continue
        if isinstance(current, (ast.Tuple, ast.List, ast.Set)):
            if any(isinstance(elt, ast.Starred) for elt in current.elts):
                return 0
            if isinstance(current, ast.Tuple) and any(
                isinstance(elt, (ast.List, ast.Set, ast.Dict)) for elt in ast.walk(current)
            ):
                return 0  # a tuple holding a list: not shared, as the list is not
            stack.extend(current.elts)
        elif isinstance(current, ast.Dict):
            if any(key is None for key in current.keys):
                return 0  # a ``**spread``
            stack.extend(current.keys)
            stack.extend(current.values)
        else:
            return 0
    return size


def _fresh_set(values: VSet) -> VSet:
    return frozenset(_fresh(value) for value in values)


def _fresh(value: Value) -> Value:
    """``value`` as a display's new evaluation gives it: a new list, dict or set (their
    insides fresh the same way), the same tuple."""
    if not isinstance(value, Container) or value.kind == "tuple":
        return value
    made = Container(value.kind)
    made.items = [_fresh_set(item) for item in value.items]
    made.entries = [(key, _fresh_set(item)) for key, item in value.entries]
    made.exact = value.exact
    made.loose = _fresh_set(value.loose)
    made.values_known = value.values_known
    return made
