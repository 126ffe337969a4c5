"""Files that opt out of mypy (``# mypy: ignore-errors``), and their shadow copies.

A file with mypy's inline setting ``ignore_errors`` hides every error, and mypy strips
its function bodies: no plugin hook runs there, so ``typed-pallas check`` cannot see a
wrong ``compiler_params`` in it. ``check --check-opted-out`` (and the evaluation in
``eval/``) hands mypy, for each such file, a *shadow copy* (``--shadow-file SOURCE
SHADOW``) in which the setting is turned off; mypy then reads the copy in place of the
file and reports at the file's own path, lines and columns.

What it does:

* :func:`opts_out` says whether a file's text opts out, the way mypy reads it: its
  lines that start with ``# mypy: `` (``mypy.util.get_mypy_comments``), parsed with
  mypy's own ``parse_mypy_comments`` (``ignore-errors``, ``ignore_errors = True``,
  ``disallow-untyped-defs, ignore-errors``; the last line that sets it wins, so
  ``ignore-errors=False`` does not opt out; ``#mypy: ignore-errors`` without the space
  is no inline setting for mypy, and none here). mypy is imported only for a file
  holding ``# mypy: ``.
* :func:`neutralised` turns the setting off: each ``ignore-errors`` entry is dropped
  from its ``# mypy: `` line (the line's other entries stay; a line left with none
  becomes ``#``). Only those comment lines change, each on its own line and with its
  line ending, so no line or column of the code moves, and the file's bytes are kept
  as they are (any encoding). The copy is shorter than the file, so mypy's cache,
  which takes a file of the same size and whole-second mtime as unchanged, always
  hashes it when a run switches between the file and its copy.
* :func:`shadow_copies` writes the copies of the files that opt out into a folder and
  returns ``{file: copy}``; each copy gets its file's mtime, so mypy's cache sees the
  copy change exactly when the file does. :func:`shadow_folder` is a temporary folder
  for them, removed afterwards, also on error. :func:`shadow_arguments` spells the
  pairs as mypy's ``--shadow-file`` options.

What it does not do: run mypy, choose which findings of such a file to show (``check``
keeps only ``pallas-platform`` there), read the project's mypy configuration (a
``[mypy-pkg.*]`` section with ``ignore_errors = True`` is not inline and is left
alone), or change any file of the project.
"""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Iterable, Iterator, Mapping
from typing import Final

__all__ = [
    "INLINE_PREFIX",
    "neutralised",
    "opts_out",
    "shadow_arguments",
    "shadow_copies",
    "shadow_folder",
]

#: How mypy recognises an inline configuration line (``mypy.util.get_mypy_comments``).
INLINE_PREFIX: Final = "# mypy: "
_PREFIX_BYTES: Final = INLINE_PREFIX.encode("ascii")
#: The setting that opts a file out, as mypy names it once ``-`` is ``_``.
SETTING: Final = "ignore_errors"
#: Bytes are read as Latin-1, which maps each byte to one character and back: a file
#: in any encoding is rewritten byte for byte outside the lines changed.
_BYTES: Final = "latin-1"


def _inline_lines(text: str) -> list[tuple[int, str]]:
    """mypy's inline configuration lines: (1-based line, the text after the prefix)."""
    return [
        (i + 1, line[len(INLINE_PREFIX) :])
        for i, line in enumerate(text.split("\n"))
        if line.startswith(INLINE_PREFIX)
    ]


def opts_out(text: str) -> bool:
    """Whether mypy reads ``text`` (a module's source) as opting out with ``ignore_errors``."""
    if INLINE_PREFIX not in text:
        return False
    lines = _inline_lines(text)
    if not lines:
        return False
    from mypy.config_parser import parse_mypy_comments
    from mypy.options import Options

    changes, _errors = parse_mypy_comments(lines, Options())
    return changes.get(SETTING) is True


def _entries(directive: str) -> list[str]:
    """The raw comma-separated entries of an inline line, quotes kept (mypy's
    ``split_directive`` splits the same way, but drops the quotes)."""
    parts: list[str] = []
    current: list[str] = []
    quoted = False
    for char in directive:
        if char == '"':
            quoted = not quoted
        if char == "," and not quoted:
            parts.append("".join(current))
            current = []
        else:
            current.append(char)
    parts.append("".join(current))
    return parts


def _sets_ignore_errors(entry: str) -> bool:
    name = entry.replace('"', "").split("=", 1)[0].strip()
    return name.replace("-", "_") == SETTING


def _neutral_line(line: str) -> str:
    """One inline line without its ``ignore_errors`` entries (``#`` when none is left)."""
    body, ending = (line[:-1], "\r") if line.endswith("\r") else (line, "")
    kept = [e for e in _entries(body[len(INLINE_PREFIX) :]) if not _sets_ignore_errors(e)]
    kept = [e.strip() for e in kept if e.strip()]
    return (INLINE_PREFIX + ", ".join(kept) if kept else "#") + ending


def neutralised(text: str) -> str | None:
    """``text`` with mypy's ``ignore_errors`` inline setting turned off, or None when it
    does not opt out. Only ``# mypy: `` lines change, and no line is added or removed."""
    if not opts_out(text):
        return None
    lines = text.split("\n")
    for i, line in enumerate(lines):
        if line.startswith(INLINE_PREFIX):
            lines[i] = _neutral_line(line)
    return "\n".join(lines)


def _read(path: str) -> str | None:
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return None  # mypy reports a file it cannot read
    return data.decode(_BYTES) if _PREFIX_BYTES in data else ""


def opted_out_files(files: Iterable[str]) -> list[str]:
    """The files among ``files`` whose text opts out (:func:`opts_out`), in order."""
    return [f for f in files if (text := _read(f)) and opts_out(text)]


def shadow_copies(files: Iterable[str], folder: str) -> dict[str, str]:
    """Write into ``folder`` a :func:`neutralised` copy of each file of ``files`` that opts
    out; ``{file: copy}`` (files that do not opt out, or cannot be read, are left out).

    The copy keeps the file's name (in a subfolder of its own) and gets its mtime.
    """
    copies: dict[str, str] = {}
    for index, path in enumerate(files):
        text = _read(path)
        shadow_text = neutralised(text) if text else None
        if shadow_text is None:
            continue
        where = os.path.join(folder, str(index))
        os.makedirs(where, exist_ok=True)
        shadow = os.path.join(where, os.path.basename(path))
        with open(shadow, "wb") as f:
            f.write(shadow_text.encode(_BYTES))
        stat = os.stat(path)
        os.utime(shadow, ns=(stat.st_atime_ns, stat.st_mtime_ns))
        copies[path] = shadow
    return copies


@contextlib.contextmanager
def shadow_folder() -> Iterator[str]:
    """A temporary folder for shadow copies, removed afterwards (also on error)."""
    with tempfile.TemporaryDirectory(prefix="typed-pallas-shadow-") as folder:
        yield folder


def shadow_arguments(copies: Mapping[str, str]) -> list[str]:
    """mypy's options for ``{file: copy}``: ``--shadow-file FILE COPY`` per pair."""
    return [arg for path, shadow in copies.items() for arg in ("--shadow-file", path, shadow)]
