"""The output formats of ``typed-pallas check``: a table of name -> writer.

``text`` prints mypy-style lines (``file:line:col: error: message  [code]``, then one
line per note) and a summary line; ``json`` prints one JSON list of findings (no
summary); ``github`` prints GitHub Actions annotations (``::error file=...::...``) and
the summary line. :data:`FORMATS` is the table; :func:`emit` writes one of them.

A new format is one writer function and one row of :data:`FORMATS`; ``--output``
offers exactly the names in the table.

What it does not do: choose which findings to show (``findings.select``) or decide the
exit status (``check``).
"""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping, Sequence
from typing import Final, TextIO

from typed_pallas_mypy.cli.findings import Finding

__all__ = ["FORMATS", "OUTPUTS", "emit", "github_line", "summary_line", "text_lines", "to_json"]

#: A writer: (findings to show, whether --all-errors, stream, whether to end with a summary).
Writer = Callable[[Sequence[Finding], bool, TextIO, bool], None]


def text_lines(finding: Finding) -> list[str]:
    """mypy's own text shape: the message with its code, then one line per note."""
    where = f"{finding.file}:{finding.line}:{finding.column}"
    code = f"  [{finding.code}]" if finding.code and finding.severity == "error" else ""
    out = [f"{where}: {finding.severity}: {finding.message}{code}"]
    out += [f"{where}: note: {note}" for note in finding.notes]
    return out


def to_json(finding: Finding) -> dict[str, object]:
    """The object ``--output json`` prints for one finding (columns 1-based)."""
    return {
        "file": finding.file,
        "line": finding.line,
        "column": finding.column,
        "end_line": finding.end_line,
        "end_column": finding.end_column,
        "severity": finding.severity,
        "code": finding.code,
        "message": finding.message,
        "notes": list(finding.notes),
    }


def _github_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _github_property(text: str) -> str:
    return _github_data(text).replace(":", "%3A").replace(",", "%2C")


def github_line(finding: Finding) -> str:
    """One GitHub Actions workflow command (``::error`` or ``::notice``) for a finding."""
    kind = "error" if finding.severity == "error" else "notice"
    props = [f"file={_github_property(finding.file)}", f"line={finding.line}", f"col={finding.column}"]
    if finding.end_line is not None:
        props.append(f"endLine={finding.end_line}")
    if finding.end_column is not None and finding.end_line == finding.line:
        props.append(f"endColumn={finding.end_column}")
    if finding.code:
        props.append(f"title={_github_property(finding.code)}")
    body = "\n".join([finding.message, *finding.notes])
    return f"::{kind} {','.join(props)}::{_github_data(body)}"


def summary_line(shown: Sequence[Finding], all_errors: bool) -> str:
    """mypy's last line: ``Success: no ... issues found`` or ``Found N ... errors in M files``."""
    errors = [f for f in shown if f.severity == "error"]
    what = "" if all_errors else " typed-pallas"
    if not errors:
        return f"Success: no{what} issues found"
    files = len({f.file for f in errors})
    s = "" if len(errors) == 1 else "s"
    fs = "" if files == 1 else "s"
    return f"Found {len(errors)}{what} error{s} in {files} file{fs}"


def _write_text(shown: Sequence[Finding], all_errors: bool, stream: TextIO, summary: bool) -> None:
    for finding in shown:
        for line in text_lines(finding):
            stream.write(line + "\n")
    if summary:
        stream.write(summary_line(shown, all_errors) + "\n")


def _write_json(shown: Sequence[Finding], all_errors: bool, stream: TextIO, summary: bool) -> None:
    stream.write(json.dumps([to_json(f) for f in shown], indent=2) + "\n")


def _write_github(shown: Sequence[Finding], all_errors: bool, stream: TextIO, summary: bool) -> None:
    for finding in shown:
        stream.write(github_line(finding) + "\n")
    if summary:
        stream.write(summary_line(shown, all_errors) + "\n")


#: ``--output`` name -> writer; the first is the default.
FORMATS: Final[Mapping[str, Writer]] = {
    "text": _write_text,
    "json": _write_json,
    "github": _write_github,
}
OUTPUTS: Final = tuple(FORMATS)


def emit(shown: Sequence[Finding], output: str, all_errors: bool, stream: TextIO, *, summary: bool = True) -> None:
    """Write ``shown`` to ``stream`` in the format named ``output`` (a key of :data:`FORMATS`)."""
    FORMATS[output](shown, all_errors, stream, summary)
