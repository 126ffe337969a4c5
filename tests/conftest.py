"""Configuration shared by every test directory.

``asyncio_default_fixture_loop_scope`` in ``pyproject.toml`` is pytest-asyncio's option
(``tests/lsp``). An environment without pytest-asyncio (the Python 3.13 smoke slice, which
runs no language server test) declares it here, so that pytest does not warn about an
unknown configuration option there.
"""

from __future__ import annotations

import importlib.util

import pytest

ASYNCIO_OPTION = "asyncio_default_fixture_loop_scope"


def pytest_addoption(parser: pytest.Parser) -> None:
    if importlib.util.find_spec("pytest_asyncio") is None:
        parser.addini(ASYNCIO_OPTION, "pytest-asyncio's option (not installed here)")
