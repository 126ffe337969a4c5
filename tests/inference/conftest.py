"""Fixtures for the library reader's tests (helpers: ``library_fakes``).

Every test runs with the plugin's debug switch on, so an exception inside the reader
fails the test instead of becoming silence (tests of that silence turn it off).
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from library_fakes import MakeLib, fake_library_maker


@pytest.fixture(autouse=True)
def _debug(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TYPED_PALLAS_MYPY_DEBUG", "1")
    yield


@pytest.fixture
def make_lib(tmp_path_factory: pytest.TempPathFactory) -> MakeLib:
    return fake_library_maker(tmp_path_factory.mktemp("env"))
