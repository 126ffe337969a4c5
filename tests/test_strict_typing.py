"""The project type-checks itself strictly: ``mypy --strict`` over the runtime and the
plugin, with mypy's own ``proper_plugin`` (plugin code must expand types before
``isinstance``), as ``[tool.mypy]`` in pyproject.toml declares."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[1]


def test_strict_mypy_is_clean(tmp_path: Path) -> None:
    config = tmp_path / "strict.ini"
    config.write_text(
        "[mypy]\npython_version = 3.11\nstrict = True\nplugins = mypy.plugins.proper_plugin\n"
    )
    completed = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(config),
            "--cache-dir",
            str(tmp_path / "cache"),
            "src/typed_pallas",
            "mypy_plugin/typed_pallas_mypy",
        ],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert completed.returncode == 0, completed.stdout + completed.stderr
    assert "Success: no issues found" in completed.stdout
