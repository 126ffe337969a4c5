"""Fixtures of the CLI tests: an empty project as the current folder, and one mypy cache
shared by every end-to-end run of the session that keeps the command's preset, which
starts with jax analysed (``mypy_seeds``: the runs check their projects' modules)."""

from __future__ import annotations

from pathlib import Path

import pytest
from mypy_seeds import MypySeeds

from typed_pallas_mypy import config


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project (a repository root) as the current folder, with no typed-pallas settings."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(config.CONFIG_ENV, raising=False)
    monkeypatch.delenv(config.PLATFORMS_ENV, raising=False)
    monkeypatch.delenv("MYPYPATH", raising=False)
    return tmp_path


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory, mypy_seeds: MypySeeds) -> str:
    """The mypy cache of the end-to-end ``typed-pallas check`` runs."""
    cache = tmp_path_factory.mktemp("mypy-cache") / "cache"
    mypy_seeds.check_into(cache)
    return str(cache)
