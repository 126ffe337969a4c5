"""The output formats of ``typed-pallas check``: a table of name -> writer.

``text`` prints mypy-style lines (``file:line:col: error: message  [code]``, then one
line per note) and a summary line; ``json`` prints one JSON list of findings (no
summary); ``github`` prints GitHub Actions annotations (``::error file=...::...``) and
the summary line; ``sarif`` prints one SARIF 2.1.0 log (one run, a rule per error code
shown, a result with its location per finding, and one invocation whose
``executionSuccessful`` says whether mypy checked everything) for code-scanning upload,
e.g. GitHub's ``upload-sarif``. :data:`FORMATS` is the table; :func:`emit` writes one of
them.

An error without a line (a file mypy cannot read or decode) or without a file (a module
it cannot find) is written in every format: mypy's own ``file: error: message`` shape
in text, ``null`` line and column (and file) in JSON, an annotation with the file only
(or none) for GitHub; in SARIF a result at the file's first line, or, without a file, a
notification of the run's invocation.

A new format is one writer function and one row of :data:`FORMATS`; ``--output``
offers exactly the names in the table.

What it does not do: choose which findings to show (``findings.select``) or decide the
exit status (``check``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import PurePath
from typing import Final, TextIO

from typed_pallas_mypy.cli.findings import NO_FILE, MypyMessage

__all__ = [
    "FORMATS",
    "OUTPUTS",
    "SARIF_SCHEMA",
    "Emission",
    "emit",
    "github_line",
    "sarif_log",
    "summary_line",
    "text_lines",
    "to_json",
]

SARIF_VERSION: Final = "2.1.0"
SARIF_SCHEMA: Final = "https://json.schemastore.org/sarif-2.1.0.json"
#: SARIF result levels for mypy's severities
SARIF_LEVELS: Final = {"error": "error", "warning": "warning", "note": "note"}
#: the rule of a finding without an error code (a standalone mypy note)
NOTE_RULE: Final = "note"
#: the rule of an error without an error code (a file mypy cannot read or decode, a module
#: it cannot find)
UNCODED_ERROR_RULE: Final = "mypy-error"
UNCODED_ERROR_DESCRIPTION: Final = (
    "an error mypy gives without an error code (a file it cannot read or decode, a module "
    "it cannot find); it stops mypy before anything is checked"
)


@dataclass(frozen=True)
class Emission:
    """How a writer writes the findings of one run."""

    #: whether --all-errors was given (the summary line says "typed-pallas" without it)
    all_errors: bool = False
    #: whether to end with a summary line (text, github)
    summary: bool = True
    #: whether mypy checked everything (SARIF's ``executionSuccessful``)
    complete: bool = True


#: A writer: (findings to show, how, stream).
Writer = Callable[[Sequence[MypyMessage], Emission, TextIO], None]


def _rule_id(finding: MypyMessage) -> str:
    if finding.code:
        return finding.code
    return UNCODED_ERROR_RULE if finding.severity == "error" else NOTE_RULE


def text_lines(finding: MypyMessage) -> list[str]:
    """mypy's own text shape: the message with its code, then one line per note."""
    where = finding.file or NO_FILE
    if finding.line > 0:
        where = f"{where}:{finding.line}:{finding.column}"
    code = f"  [{finding.code}]" if finding.code and finding.severity == "error" else ""
    out = [f"{where}: {finding.severity}: {finding.message}{code}"]
    out += [f"{where}: note: {note}" for note in finding.notes]
    return out


def to_json(finding: MypyMessage) -> dict[str, object]:
    """The object ``--output json`` prints for one finding (columns 1-based; line and column
    ``null`` for an error about a whole file, and file ``null`` too for one about no file)."""
    located = finding.line > 0
    return {
        "file": finding.file or None,
        "line": finding.line if located else None,
        "column": finding.column if located else None,
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


def github_line(finding: MypyMessage) -> str:
    """One GitHub Actions workflow command (``::error`` or ``::notice``) for a finding."""
    kind = "error" if finding.severity == "error" else "notice"
    props = [f"file={_github_property(finding.file)}"] if finding.file else []
    if finding.file and finding.line > 0:
        props += [f"line={finding.line}", f"col={finding.column}"]
        if finding.end_line is not None:
            props.append(f"endLine={finding.end_line}")
        if finding.end_column is not None and finding.end_line == finding.line:
            props.append(f"endColumn={finding.end_column}")
    if finding.code:
        props.append(f"title={_github_property(finding.code)}")
    body = _github_data("\n".join([finding.message, *finding.notes]))
    return f"::{kind} {','.join(props)}::{body}" if props else f"::{kind}::{body}"


def summary_line(shown: Sequence[MypyMessage], all_errors: bool) -> str:
    """mypy's last line: ``Success: no ... issues found`` or ``Found N ... errors in M files``."""
    errors = [f for f in shown if f.severity == "error"]
    what = "" if all_errors else " typed-pallas"
    if not errors:
        return f"Success: no{what} issues found"
    files = len({f.file for f in errors})
    s = "" if len(errors) == 1 else "s"
    fs = "" if files == 1 else "s"
    return f"Found {len(errors)}{what} error{s} in {files} file{fs}"


def _write_text(shown: Sequence[MypyMessage], how: Emission, stream: TextIO) -> None:
    for finding in shown:
        for line in text_lines(finding):
            stream.write(line + "\n")
    if how.summary:
        stream.write(summary_line(shown, how.all_errors) + "\n")


def _write_json(shown: Sequence[MypyMessage], how: Emission, stream: TextIO) -> None:
    stream.write(json.dumps([to_json(f) for f in shown], indent=2) + "\n")


def _write_github(shown: Sequence[MypyMessage], how: Emission, stream: TextIO) -> None:
    for finding in shown:
        stream.write(github_line(finding) + "\n")
    if how.summary:
        stream.write(summary_line(shown, how.all_errors) + "\n")


def _rule_description(code: str) -> str:
    """A one-line description of an error code: mypy's (the plugin's codes are mypy codes)."""
    try:
        from mypy import errorcodes

        from typed_pallas_mypy import errorcodes as ours
    except Exception:
        return code
    known = {v.code: v for v in vars(ours).values() if isinstance(v, errorcodes.ErrorCode)}
    known.update(getattr(errorcodes, "error_codes", {}))
    found = known.get(code)
    return str(found.description) if found is not None else code


def _sarif_rule(code: str) -> dict[str, object]:
    from typed_pallas_mypy.cli.explain import doc_link, error_doc

    rule: dict[str, object] = {"id": code, "shortDescription": {"text": _rule_description(code)}}
    if code == NOTE_RULE:
        rule["shortDescription"] = {"text": "a note from mypy"}
        return rule
    if code == UNCODED_ERROR_RULE:
        rule["shortDescription"] = {"text": UNCODED_ERROR_DESCRIPTION}
        return rule
    doc = error_doc(code)
    if doc is not None:
        rule["help"] = {"text": f"Run `typed-pallas explain {code}`.", "markdown": doc}
        rule["fullDescription"] = {"text": f"{_rule_description(code)} (see {doc_link(code)})"}
    else:
        rule["help"] = {
            "text": f"mypy error code {code}: https://mypy.readthedocs.io/en/stable/error_codes.html"
        }
    return rule


def _artifact_uri(path: str) -> dict[str, str]:
    if os.path.isabs(path):
        return {"uri": PurePath(path).as_uri()}
    return {"uri": PurePath(path).as_posix(), "uriBaseId": "%SRCROOT%"}


def _location(finding: MypyMessage) -> dict[str, object]:
    """A result's location; an error about a whole file is at its first line (code scanning
    shows a result only with a ``region.startLine``)."""
    region: dict[str, int] = {
        "startLine": max(finding.line, 1),
        "startColumn": max(finding.column, 1),
    }
    if finding.end_line is not None and finding.end_line >= region["startLine"]:
        region["endLine"] = finding.end_line
        if finding.end_column is not None and (
            finding.end_line > region["startLine"] or finding.end_column >= region["startColumn"]
        ):
            region["endColumn"] = finding.end_column
    return {"physicalLocation": {"artifactLocation": _artifact_uri(finding.file), "region": region}}


def sarif_log(
    shown: Sequence[MypyMessage], cwd: str | None = None, *, complete: bool = True
) -> dict[str, object]:
    """The SARIF 2.1.0 log of ``shown``: one run, rules from the error codes, results with locations.

    Relative paths (mypy's, from the current folder) are relative to ``%SRCROOT%``,
    the current folder; lines and columns are 1-based, columns in code points. The run's
    one invocation has ``executionSuccessful`` = ``complete``: false when mypy stopped
    before checking everything (a code-scanning upload must not read that as "no alerts").
    An error about no file (a module mypy cannot find) is a ``toolExecutionNotifications``
    entry of that invocation rather than a result: code scanning takes a result only with
    a location.
    """
    from typed_pallas_mypy import config
    from typed_pallas_mypy.cli.explain import project_urls

    codes: list[str] = []
    for finding in (f for f in shown if f.file):
        code = _rule_id(finding)
        if code not in codes:
            codes.append(code)
    index = {code: i for i, code in enumerate(codes)}
    results: list[dict[str, object]] = []
    notifications: list[dict[str, object]] = []
    for finding in shown:
        text = {"text": "\n".join([finding.message, *finding.notes])}
        level = SARIF_LEVELS.get(finding.severity, "note")
        if not finding.file:
            notifications.append({"level": level, "message": text})
            continue
        code = _rule_id(finding)
        results.append(
            {
                "ruleId": code,
                "ruleIndex": index[code],
                "level": level,
                "message": text,
                "locations": [_location(finding)],
            }
        )
    driver: dict[str, object] = {
        "name": "typed-pallas",
        "version": config.package_version(),
        "rules": [_sarif_rule(code) for code in codes],
    }
    urls = project_urls()
    home = urls.get("Documentation") or urls.get("Homepage") or urls.get("Repository")
    if home:
        driver["informationUri"] = home
    root = PurePath(os.path.abspath(cwd or os.getcwd())).as_uri().rstrip("/") + "/"
    invocation: dict[str, object] = {"executionSuccessful": complete}
    if notifications:
        invocation["toolExecutionNotifications"] = notifications
    run: dict[str, object] = {
        "tool": {"driver": driver},
        "originalUriBaseIds": {"%SRCROOT%": {"uri": root}},
        "columnKind": "unicodeCodePoints",
        "invocations": [invocation],
        "results": results,
    }
    return {"$schema": SARIF_SCHEMA, "version": SARIF_VERSION, "runs": [run]}


def _write_sarif(shown: Sequence[MypyMessage], how: Emission, stream: TextIO) -> None:
    stream.write(json.dumps(sarif_log(shown, complete=how.complete), indent=2) + "\n")


#: ``--output`` name -> writer; the first is the default.
FORMATS: Final[Mapping[str, Writer]] = {
    "text": _write_text,
    "json": _write_json,
    "github": _write_github,
    "sarif": _write_sarif,
}
OUTPUTS: Final = tuple(FORMATS)


def emit(
    shown: Sequence[MypyMessage],
    output: str,
    all_errors: bool,
    stream: TextIO,
    *,
    summary: bool = True,
    complete: bool = True,
) -> None:
    """Write ``shown`` to ``stream`` in the format named ``output`` (a key of :data:`FORMATS`).

    ``summary``: end with the summary line (text, github); ``complete``: mypy checked
    everything (SARIF's ``executionSuccessful``).
    """
    FORMATS[output](shown, Emission(all_errors, summary, complete), stream)
