"""The project type-checks itself strictly: ``mypy`` run with the one self-check config,
``[tool.mypy]`` in pyproject.toml (strict, mypy's own ``proper_plugin``, the
``explicit-override`` error code, over the runtime, the plugin, eval/, benchmarks/ and
scripts/). The test writes no config of its own: what it checks is what pyproject says,
and what the pre-commit hook and a developer's plain ``mypy`` run check too."""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def test_the_self_check_config_is_strict_over_every_python_folder() -> None:
    """The config itself: a test of the run below is only as good as what it covers."""
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config["strict"] is True
    assert config["plugins"] == ["mypy.plugins.proper_plugin"]
    assert config["enable_error_code"] == ["explicit-override"]
    assert config["files"] == [
        "src/typed_pallas",
        "mypy_plugin/typed_pallas_mypy",
        "eval",
        "benchmarks",
        "scripts",
    ]


def test_strict_mypy_is_clean(tmp_path: Path) -> None:
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache")],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "Success: no issues found" in completed.stdout
