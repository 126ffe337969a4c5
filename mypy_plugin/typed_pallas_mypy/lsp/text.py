"""Reading the plugin's notes and the source text for the language server.

* :func:`note_locations`: the places a note names. The plugin's notes name places as
  ``path:line`` (``flash (tpu_ops.py:20) lowers only for tpu: it calls _fwd at
  tpu_ops.py:21``; paths relative to the project's root, or to the site-packages root of
  an installed package: ``jax/experimental/pallas/ops/tpu/flash_attention.py:140``) or,
  in the finding's own file, ``at line N`` (``the if at line 13 lets this lower only for
  cuda, rocm``). A path is resolved against the given roots in order; a place that is not
  a line of a real file is left out, never guessed.
* :func:`ignore_edit`: the edit that adds ``# type: ignore[CODE]`` to a line: at its end,
  before a comment the line already has, or into the brackets of an ignore that lists
  other codes; none when the line already ignores the code (or everything) or ends
  inside a string (a comment cannot go there).
* :func:`word_end`: where the name that starts at a column ends (mypy marks one
  character of a call; the editor underlines the callee's name).

What it does not do: import pygls or lsprotocol (plain data in, plain data out), or
read the editor's buffers (the caller passes the text).
"""

from __future__ import annotations

import io
import os
import re
import tokenize
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Final

__all__ = ["NoteLocation", "ignore_edit", "note_locations", "word_end"]

#: ``path.py:line`` inside a note (a Windows drive letter allowed)
_PATH_LINE: Final = re.compile(r"(?P<path>(?:[A-Za-z]:)?[\w.\\/-]+\.pyi?):(?P<line>\d+)\b")
#: ``at line N`` of the finding's own file
_AT_LINE: Final = re.compile(r"\bat line (?P<line>\d+)\b")
_NAME: Final = re.compile(r"[A-Za-z_][\w.]*")
_IGNORE: Final = re.compile(r"#\s*type:\s*ignore(?P<brackets>\[(?P<codes>[^\]]*)\])?")


@dataclass(frozen=True)
class NoteLocation:
    """A line of a real file that a note names (line 1-based; the line's text)."""

    path: str
    line: int
    text: str


@lru_cache(maxsize=256)
def _lines_of(path: str, mtime_ns: int) -> tuple[str, ...] | None:
    try:
        with open(path, encoding="utf-8", errors="replace") as f:
            return tuple(line.rstrip("\r\n") for line in f)
    except OSError:
        return None


def _line_of(path: str, line: int) -> str | None:
    try:
        mtime = os.stat(path).st_mtime_ns
    except OSError:
        return None
    lines = _lines_of(path, mtime)
    if lines is None or not 1 <= line <= len(lines):
        return None
    return lines[line - 1]


def _resolve(path: str, roots: Sequence[str]) -> str | None:
    path = path.replace("\\", "/")
    candidates = [path] if os.path.isabs(path) else [os.path.join(r, path) for r in roots]
    for candidate in candidates:
        if os.path.isfile(candidate):
            return os.path.abspath(candidate)
    return None


def note_locations(note: str, own_file: str, roots: Sequence[str]) -> list[NoteLocation]:
    """The real places ``note`` names, in its order (``own_file``: the finding's file)."""
    found: list[NoteLocation] = []
    for m in _PATH_LINE.finditer(note):
        path = _resolve(m["path"], roots)
        if path is None:
            continue
        line = int(m["line"])
        text = _line_of(path, line)
        if text is not None:
            found.append(NoteLocation(path, line, text))
    if found or _PATH_LINE.search(note):
        return found  # "at line N" in a note that names other files may be about them
    own = _resolve(own_file, roots) if own_file else None
    if own is None:
        return found
    for m in _AT_LINE.finditer(note):
        line = int(m["line"])
        text = _line_of(own, line)
        if text is not None:
            found.append(NoteLocation(own, line, text))
    return found


def word_end(line_text: str, column: int) -> int:
    """The end (0-based, exclusive) of the dotted name starting at ``column`` (0-based);
    ``column + 1`` where no name starts there."""
    m = _NAME.match(line_text, column)
    if m is None:
        return min(column + 1, max(len(line_text), column + 1))
    return m.end()


def _comments_and_strings(source: str, line: int) -> tuple[int | None, bool] | None:
    """(column of the comment on ``line`` or None, whether the line ends inside a string),
    by tokenizing ``source``; None when it cannot be tokenized."""
    comment: int | None = None
    try:
        for tok in tokenize.generate_tokens(io.StringIO(source).readline):
            if tok.type == tokenize.COMMENT and tok.start[0] == line:
                comment = tok.start[1]
            if tok.type == tokenize.STRING and tok.start[0] <= line < tok.end[0]:
                return comment, True
            if tok.start[0] > line:
                break
    except (tokenize.TokenError, SyntaxError):
        return None
    return comment, False


def _naive_comment(line_text: str) -> int | None:
    quote: str | None = None
    for i, ch in enumerate(line_text):
        if quote:
            if ch == quote:
                quote = None
        elif ch in "'\"":
            quote = ch
        elif ch == "#":
            return i
    return None


def ignore_edit(source: str, line: int, code: str) -> tuple[int, int, str] | None:
    """The edit of ``line`` (1-based) of ``source`` that ignores ``code`` there:
    (start column, end column, new text), columns 0-based in the line; None when the line
    already ignores it or cannot take a comment."""
    lines = source.splitlines()
    if not 1 <= line <= len(lines):
        return None
    text = lines[line - 1]
    m = _IGNORE.search(text)
    if m is not None:
        if m["brackets"] is None:
            return None  # a bare ignore already ignores every code
        codes = [c.strip() for c in m["codes"].split(",") if c.strip()]
        if code in codes:
            return None
        end = m.end("codes")
        return (end, end, f", {code}" if codes else code)
    scanned = _comments_and_strings(source, line)
    if scanned is None:
        comment = _naive_comment(text)
    else:
        comment, in_string = scanned
        if in_string:
            return None
    ignore = f"# type: ignore[{code}]"
    if comment is not None:
        return (comment, comment, f"{ignore}  ")
    end = len(text.rstrip())
    return (end, len(text), f"  {ignore}")
