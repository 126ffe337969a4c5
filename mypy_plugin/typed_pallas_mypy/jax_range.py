"""The mypy plugin's JAX-range warning: ``typed_pallas._jax_range`` under the plugin's name.

The plugin reads JAX's stubs and sources, so a JAX outside the supported range
(``jax>=0.10,<0.13``) may give missed or odd platform findings.
``warn_if_unsupported_jax()`` says so once per process, naming both versions and what
to do, through ``warnings.warn`` (category ``typed_pallas._jax_range.UnsupportedJaxWarning``,
so ``PYTHONWARNINGS`` and ``-W`` filters apply); under ``-W error`` the message goes to
stderr instead of raising.

``note_unchecked_jax()`` prints, once per process, the one-line note of a jax release
typed-pallas was not checked at (``typed_pallas._jax_range.jax_check_status``) to stderr:
a note, never an error, and the same line on cold, warm and daemon runs (it depends on
the installed jax only, not on mypy's cache); not under ``typed-pallas check``, which
says it itself (``NOTE_SHOWN_ENV``).

What it does not do: hold any logic of its own (the range, the comparison and the
message all live in ``typed_pallas._jax_range``), import jax or mypy, or stop mypy.
"""

from __future__ import annotations

import contextlib
import functools
import os
import sys

from typed_pallas import _jax_range

__all__ = ["note_unchecked_jax", "warn_if_unsupported_jax"]

#: ``typed_pallas._jax_range.warn_if_unsupported_jax`` as the plugin calls it from
#: ``plugin(version)``: named after the plugin, and never raising.
warn_if_unsupported_jax = functools.partial(
    _jax_range.warn_if_unsupported_jax, who=_jax_range.PLUGIN, never_raise=True
)


_noted: list[str] = []


def note_unchecked_jax() -> str | None:
    """Print the unchecked-jax note to stderr, once per process; the note, or None. Never raises."""
    if _noted or os.environ.get(_jax_range.NOTE_SHOWN_ENV):
        return None
    try:
        note = _jax_range.jax_check_status(who=_jax_range.PLUGIN).note
        if note is not None:
            _noted.append(note)
            print(note, file=sys.stderr)
        return note
    except Exception:
        with contextlib.suppress(Exception):
            _noted.append("")
        return None
