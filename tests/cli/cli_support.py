"""Helpers the CLI tests share: a line of mypy's JSON output, a stand-in for the mypy
subprocess, the SARIF structure check, and the error documentation's code blocks.

Fixtures (an empty project as the current folder, one mypy cache for the end-to-end
runs) are in conftest.py next to this module.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest

from typed_pallas_mypy.cli import findings

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ROOT / "examples"
ERRORS_SRC = ROOT / "mypy_plugin" / "typed_pallas_mypy" / "errors"


def mypy_json_line(**kw: object) -> str:
    """One line of ``mypy -O json`` output: an error at a.py:3:4 unless ``kw`` says otherwise."""
    base: dict[str, object] = {
        "file": "a.py", "line": 3, "column": 4, "end_line": 3, "end_column": 9,
        "message": "m", "hint": None, "code": "pallas-platform", "severity": "error",
    }  # fmt: skip
    base.update(kw)
    return json.dumps(base)


class FakeMypy:
    """Stands in for the mypy subprocess: records each command and the preset it was given."""

    def __init__(self, stdout: str = "", returncode: int = 0, stderr: str = "") -> None:
        self.stdout, self.returncode, self.stderr = stdout, returncode, stderr
        self.commands: list[list[str]] = []
        self.presets: list[str] = []

    def __call__(self, cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
        self.commands.append(cmd)
        self.presets.append(Path(cmd[cmd.index("--config-file") + 1]).read_text())
        cache = cmd[cmd.index("--cache-dir") + 1]
        os.makedirs(os.path.join(cache, "3.12"), exist_ok=True)  # as mypy would write it
        Path(cache, "3.12", "cache.db").write_text("")
        return subprocess.CompletedProcess(cmd, self.returncode, self.stdout, self.stderr)


def fake_mypy(monkeypatch: pytest.MonkeyPatch, **kw: object) -> FakeMypy:
    """Replace the mypy subprocess of ``typed-pallas check`` with a :class:`FakeMypy`."""
    fake = FakeMypy(**kw)  # type: ignore[arg-type]
    monkeypatch.setattr(findings.subprocess, "run", fake)
    return fake


def validate_sarif(log: dict[str, object]) -> None:
    """The SARIF 2.1.0 structure code-scanning upload needs (the schema's required keys and types)."""
    assert log["version"] == "2.1.0" and str(log["$schema"]).endswith("sarif-2.1.0.json")
    runs = log["runs"]
    assert isinstance(runs, list) and len(runs) == 1
    run = runs[0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "typed-pallas" and isinstance(driver["version"], str)
    rules = driver["rules"]
    ids = [rule["id"] for rule in rules]
    assert len(ids) == len(set(ids)), "one rule per error code"
    for rule in rules:
        assert (
            isinstance(rule["shortDescription"]["text"], str) and rule["shortDescription"]["text"]
        )
        if "help" in rule:
            assert isinstance(rule["help"]["text"], str)
    assert run["columnKind"] in ("utf16CodeUnits", "unicodeCodePoints")
    (invocation,) = run["invocations"]
    assert invocation["executionSuccessful"] in (True, False)
    for notification in invocation.get("toolExecutionNotifications", []):
        assert notification["level"] in ("none", "note", "warning", "error")
        assert isinstance(notification["message"]["text"], str)
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file:///")
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/")
    for result in run["results"]:
        assert set(result) <= {"ruleId", "ruleIndex", "level", "message", "locations"}
        assert result["level"] in ("none", "note", "warning", "error")
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert isinstance(result["message"]["text"], str) and result["message"]["text"]
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        artifact = physical["artifactLocation"]
        assert "://" in artifact["uri"] or artifact["uriBaseId"] == "%SRCROOT%"
        assert not artifact["uri"].startswith("/") and "\\" not in artifact["uri"]
        region = physical["region"]
        assert all(isinstance(v, int) and v >= 1 for v in region.values())
        if "endLine" in region:
            assert region["endLine"] >= region["startLine"]
            if region["endLine"] == region["startLine"] and "endColumn" in region:
                assert region["endColumn"] >= region["startColumn"]


def error_docs() -> list[str]:
    return sorted(p.stem for p in ERRORS_SRC.glob("*.md"))


def smallest_code(code: str) -> str:
    """The first python block under '## Smallest code that triggers it'."""
    text = (ERRORS_SRC / f"{code}.md").read_text(encoding="utf-8")
    m = re.search(r"## Smallest code that triggers it\s+```python\n(.*?)```", text, re.S)
    assert m, code
    return m.group(1)


def first_block(code: str) -> str:
    text = (ERRORS_SRC / f"{code}.md").read_text(encoding="utf-8")
    m = re.search(r"```\n(.*?)```", text, re.S)
    assert m, code
    return m.group(1)


def first_block_after(code: str, marker: str) -> str:
    text = (ERRORS_SRC / f"{code}.md").read_text(encoding="utf-8")
    m = re.search(re.escape(marker) + r".*?```\n(.*?)```", text, re.S)
    assert m, (code, marker)
    return m.group(1)
