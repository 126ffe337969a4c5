"""Configuration shared by every test directory.

``asyncio_default_fixture_loop_scope`` in ``pyproject.toml`` is pytest-asyncio's option
(``tests/lsp``). An environment without pytest-asyncio (the Python 3.13 smoke slice, which
runs no language server test) declares it here, so that pytest does not warn about an
unknown configuration option there.

``mypy_seeds`` (session): mypy caches in which jax has been analysed once, one per mypy
configuration (tests/mypy_seeds.py), for tests that would otherwise analyse jax again
in each of their own caches.
"""

from __future__ import annotations

import importlib.util

import pytest
from mypy_seeds import MypySeeds

ASYNCIO_OPTION = "asyncio_default_fixture_loop_scope"


def pytest_addoption(parser: pytest.Parser) -> None:
    if importlib.util.find_spec("pytest_asyncio") is None:
        parser.addini(ASYNCIO_OPTION, "pytest-asyncio's option (not installed here)")


@pytest.fixture(scope="session")
def mypy_seeds(tmp_path_factory: pytest.TempPathFactory) -> MypySeeds:
    return MypySeeds(tmp_path_factory.mktemp("mypy-seeds"))
