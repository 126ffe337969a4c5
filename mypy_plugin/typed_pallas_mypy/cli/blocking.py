"""Errors that stop a run before anything is checked, each told in one line.

What it does: :func:`blocking_line` turns the first error of a run that mypy could not
finish (a syntax error, a file it cannot read or decode, a module it cannot find, two
files with one module name) into the one line ``typed-pallas check`` and
``typed-pallas platforms`` print on stderr: where, what mypy said, that nothing was
checked, and what to do (:data:`ADVICE`, looked up by what mypy's message says).
:func:`stopped_message` is the error a run that stopped without one is shown with, so
that every output format carries it (a JSON entry, a SARIF result, a GitHub annotation).

What it does not do: run mypy, parse its output (``findings``), or choose the exit status
(always 2 for these; the callers return it).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Final

from typed_pallas_mypy.cli.findings import NO_FILE, MypyMessage

__all__ = ["ADVICE", "blocking_line", "stopped_message"]

PROG: Final = "typed-pallas"

#: (what mypy's message says, what to do), the first match wins; ``syntax`` is the code of a
#: syntax error. Every other blocking error gets :data:`DEFAULT_ADVICE`.
ADVICE: Final[tuple[tuple[str, str], ...]] = (
    ("syntax", "fix the syntax error and rerun"),
    (
        "Cannot decode file",
        "save the file as UTF-8, or declare its encoding on its first line "
        "(# -*- coding: latin-1 -*-), and rerun",
    ),
    (
        "Cannot read file",
        "check that the file exists and can be read, or leave it out of PATHS, and rerun",
    ),
    (
        "Cannot find module",
        "check the module's name: it must be importable from the current folder or MYPYPATH",
    ),
    (
        "Can't find package",
        "check the package's name: it must be importable from the current folder or MYPYPATH",
    ),
    (
        "Duplicate module named",
        "check one of them only (typed-pallas check ... -- --exclude PATTERN), or add "
        "__init__.py files so that their module names differ",
    ),
    (
        "is not a valid Python package name",
        "rename the folder to a Python name, or name its files one by one",
    ),
)
DEFAULT_ADVICE: Final = "fix it and rerun"


def _advice(message: MypyMessage) -> str:
    for marker, advice in ADVICE:
        if marker == message.code or marker in message.message:
            return advice
    return DEFAULT_ADVICE


def _where(message: MypyMessage) -> str:
    if not message.file:
        return NO_FILE
    return f"{message.file}:{message.line}" if message.line > 0 else message.file


def blocking_line(errors: Sequence[MypyMessage]) -> str:
    """The stderr line for a run that ``errors`` stopped (the first one is told; at least one)."""
    first = errors[0]
    more = len(errors) - 1
    also = f" ({more} more error{'s' if more > 1 else ''} of this kind)" if more else ""
    return (
        f"{PROG}: error: {_where(first)}: {first.message.rstrip('.')}; nothing was checked: "
        f"{_advice(first)}{also}"
    )


def stopped_message(returncode: int, stderr: str) -> tuple[MypyMessage, str]:
    """The error shown for a run that stopped with no error message, and what is left of ``stderr``.

    mypy's one stderr line becomes the message (``Can't find package 'x'``); a longer text (a
    crash's traceback) stays on stderr, and the message says only that mypy stopped.
    """
    lines = [line for line in stderr.splitlines() if line.strip()]
    if len(lines) == 1:
        return _error(lines[0]), ""
    return _error(f"mypy stopped with exit status {returncode}"), stderr


def _error(text: str) -> MypyMessage:
    return MypyMessage(file="", line=0, column=1, severity="error", message=text, code=None)
