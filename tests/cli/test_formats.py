"""``cli/formats.py``: the text, JSON, GitHub and SARIF outputs of ``typed-pallas check``."""

from __future__ import annotations

import io
import json
import os
from pathlib import Path

import pytest
from cli_support import fake_mypy, mypy_json_line, validate_sarif

from typed_pallas_mypy import cli
from typed_pallas_mypy.cli import explain, findings, formats


def test_output_formats() -> None:
    finding = findings.MypyMessage(
        file="pkg/k.py", line=12, column=5, severity="error", code="pallas-platform",
        message="Compiler params for platform tpu cannot be used for gpu lowering.",
        notes=["evidence: a, b", "100% sure"], end_line=12, end_column=20,
    )  # fmt: skip
    assert formats.text_lines(finding) == [
        "pkg/k.py:12:5: error: Compiler params for platform tpu cannot be used for gpu lowering.  [pallas-platform]",
        "pkg/k.py:12:5: note: evidence: a, b",
        "pkg/k.py:12:5: note: 100% sure",
    ]
    assert formats.github_line(finding) == (
        "::error file=pkg/k.py,line=12,col=5,endLine=12,endColumn=20,title=pallas-platform::"
        "Compiler params for platform tpu cannot be used for gpu lowering.%0Aevidence: a, b%0A100%25 sure"
    )
    odd = findings.MypyMessage(
        file="a,b:c.py", line=1, column=1, severity="note", code=None, message="x"
    )
    assert formats.github_line(odd) == "::notice file=a%2Cb%3Ac.py,line=1,col=1::x"
    stream = io.StringIO()
    formats.emit([finding], "json", False, stream)
    data = json.loads(stream.getvalue())
    assert data == [
        {
            "file": "pkg/k.py", "line": 12, "column": 5, "end_line": 12, "end_column": 20,
            "severity": "error", "code": "pallas-platform", "message": finding.message,
            "notes": ["evidence: a, b", "100% sure"],
        }
    ]  # fmt: skip
    stream = io.StringIO()
    formats.emit([], "text", False, stream)
    assert stream.getvalue() == "Success: no typed-pallas issues found\n"
    stream = io.StringIO()
    formats.emit([finding, finding], "text", False, stream)
    assert stream.getvalue().splitlines()[-1] == "Found 2 typed-pallas errors in 1 file"


# --------------------------------------------------------------------------- SARIF


def test_sarif_log_structure() -> None:
    shown = [
        findings.MypyMessage(
            "pkg/a.py",
            12,
            16,
            "error",
            "Compiler params for platform tpu ...",
            "pallas-platform",
            ["the if at line 11 ..."],
            12,
            40,
        ),
        findings.MypyMessage("pkg/a.py", 20, 5, "error", "Argument 1 ...", "arg-type", [], 20, 9),
        findings.MypyMessage("b.py", 0, 1, "error", "file-level", "pallas-platform"),
        findings.MypyMessage("b.py", 3, 1, "note", "a standalone note", None),
        findings.MypyMessage(
            os.path.abspath("c.py"), 2, 3, "error", "absolute path", "syntax", [], 4, 1
        ),
    ]
    log = formats.sarif_log(shown, cwd="/work/proj")
    validate_sarif(log)
    run = log["runs"][0]  # type: ignore[index]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [
        "pallas-platform",
        "arg-type",
        "note",
        "syntax",
    ]
    first = run["results"][0]
    assert first["message"]["text"] == "Compiler params for platform tpu ...\nthe if at line 11 ..."
    assert first["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 12, "startColumn": 16, "endLine": 12, "endColumn": 40,
    }  # fmt: skip
    assert first["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "pkg/a.py",
        "uriBaseId": "%SRCROOT%",
    }
    assert run["results"][2]["locations"][0]["physicalLocation"]["region"]["startLine"] == 1
    assert run["results"][3]["level"] == "note"
    assert run["results"][4]["locations"][0]["physicalLocation"]["artifactLocation"][
        "uri"
    ].startswith("file:///")
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file:///work/proj/"
    rule = run["tool"]["driver"]["rules"][0]
    assert "typed-pallas explain pallas-platform" in rule["help"]["text"]
    assert rule["help"]["markdown"] == explain.error_doc("pallas-platform")


def test_sarif_output_from_check(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / "a.py").write_text("x = 1\n")
    fake_mypy(monkeypatch, stdout=mypy_json_line(), returncode=1)
    assert cli.main(["check", "--output", "sarif", "a.py"]) == 1
    log = json.loads(capsys.readouterr().out)
    validate_sarif(log)
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "pallas-platform" and result["level"] == "error"


# --------------------------------------------------------------------------- errors without a line


DECODE = "Cannot decode file: 'utf-8' codec can't decode byte 0xe9 in position 8: invalid continuation byte"
NO_LINE = findings.MypyMessage("latin1.py", 0, 1, "error", DECODE, None)
NO_FILE = findings.MypyMessage("", 0, 1, "error", 'Cannot find module "nosuch"', None)
LOCATED = findings.MypyMessage("k.py", 3, 5, "error", "m", "pallas-platform", [], 3, 9)


def test_errors_without_a_line_or_a_file_in_every_format() -> None:
    """A file mypy cannot decode (no line) and a module it cannot find (no file) are in each format."""
    assert formats.text_lines(NO_LINE) == [f"latin1.py: error: {DECODE}"]
    assert formats.text_lines(NO_FILE) == ['mypy: error: Cannot find module "nosuch"']
    assert formats.to_json(NO_LINE) == {
        "file": "latin1.py", "line": None, "column": None, "end_line": None, "end_column": None,
        "severity": "error", "code": None, "message": DECODE, "notes": [],
    }  # fmt: skip
    assert formats.to_json(NO_FILE)["file"] is None
    assert formats.github_line(NO_LINE) == f"::error file=latin1.py::{DECODE}"
    assert formats.github_line(NO_FILE) == '::error::Cannot find module "nosuch"'
    # a located one is unchanged
    assert (
        formats.github_line(LOCATED)
        == "::error file=k.py,line=3,col=5,endLine=3,endColumn=9,title=pallas-platform::m"
    )


def test_sarif_of_a_run_that_did_not_complete() -> None:
    log = formats.sarif_log([NO_LINE, NO_FILE], cwd="/work/proj", complete=False)
    validate_sarif(log)
    run = log["runs"][0]  # type: ignore[index]
    (invocation,) = run["invocations"]
    assert invocation == {
        "executionSuccessful": False,
        "toolExecutionNotifications": [
            {"level": "error", "message": {"text": 'Cannot find module "nosuch"'}}
        ],
    }
    (result,) = run["results"]  # the one with a file; code scanning needs a location
    assert result["ruleId"] == "mypy-error" and result["level"] == "error"
    assert result["message"]["text"] == DECODE
    assert result["locations"][0]["physicalLocation"] == {
        "artifactLocation": {"uri": "latin1.py", "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": 1, "startColumn": 1},
    }
    (rule,) = run["tool"]["driver"]["rules"]
    assert rule["id"] == "mypy-error"
    assert rule["shortDescription"]["text"].startswith("an error mypy gives without an error code")
    # a run that completed says so, and has no notification
    done = formats.sarif_log([LOCATED], cwd="/work/proj")
    assert done["runs"][0]["invocations"] == [{"executionSuccessful": True}]  # type: ignore[index]
