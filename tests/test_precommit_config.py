"""The project's own ``.pre-commit-config.yaml`` checks what CI checks, with the same versions:
ruff pinned to the test extra's ruff, mypy with ``[tool.mypy]`` and nothing else, and
typed-pallas on the examples as ``scripts/check`` runs it."""

from __future__ import annotations

import re
import tomllib
from pathlib import Path
from typing import Any

import yaml

ROOT = Path(__file__).resolve().parents[1]


def _config() -> dict[str, Any]:
    config: dict[str, Any] = yaml.safe_load((ROOT / ".pre-commit-config.yaml").read_text())
    return config


def _hooks(repo: str) -> dict[str, dict[str, Any]]:
    (entry,) = [r for r in _config()["repos"] if r["repo"] == repo]
    return {hook["id"]: hook for hook in entry["hooks"]}


def test_ruff_hooks_are_pinned_to_the_test_extras_ruff() -> None:
    extras = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]
    (pin,) = [r for r in extras["test"] if r.startswith("ruff")]
    version = re.fullmatch(r"ruff==([\d.]+)", pin)
    assert version, pin
    (ruff,) = [r for r in _config()["repos"] if r["repo"].endswith("/ruff-pre-commit")]
    assert ruff["rev"] == f"v{version.group(1)}" == "v0.17.6"
    assert [hook["id"] for hook in ruff["hooks"]] == ["ruff-check", "ruff-format"]
    # no hook arguments: the configuration is pyproject's [tool.ruff], as for scripts/test
    assert all(set(hook) == {"id"} for hook in ruff["hooks"])


def test_the_mypy_hook_is_the_strict_self_check() -> None:
    hook = _hooks("local")["mypy-strict"]
    assert hook["entry"] == ".venv312/bin/mypy"  # no arguments: [tool.mypy] decides
    assert "args" not in hook
    assert hook["pass_filenames"] is False
    assert hook["language"] == "system"


def test_the_typed_pallas_hook_runs_what_scripts_check_runs() -> None:
    hook = _hooks("local")["typed-pallas-examples"]
    assert hook["entry"] == ".venv312/bin/typed-pallas check examples/ --expect"
    assert hook["pass_filenames"] is False
    check = (ROOT / "scripts" / "check").read_text()
    assert "typed-pallas check examples/ --expect" in check
