"""Fixtures for the library reader's tests (helpers: ``library_fakes``).

Every test runs with the plugin's debug switch on, so an exception inside the reader
fails the test instead of becoming silence (tests of that silence turn it off).
``parses`` lists the modules parsed, one per reader built. ``rules_answer`` pins a test
to the rules (``SUMMARIES_ENV=0``): it tests their own machinery (their store of facts,
lazy and reused readings, their reader), which goes with them.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from library_fakes import MakeLib, fake_library_maker

from typed_pallas_mypy.inference import SUMMARIES_ENV, reader


@pytest.fixture(autouse=True)
def _debug(monkeypatch: pytest.MonkeyPatch) -> Iterator[None]:
    monkeypatch.setenv("TYPED_PALLAS_MYPY_DEBUG", "1")
    yield


@pytest.fixture
def rules_answer(monkeypatch: pytest.MonkeyPatch) -> None:
    """The rules answer what functions lower for (read when an ``Inference`` is built)."""
    monkeypatch.setenv(SUMMARIES_ENV, "0")


@pytest.fixture
def make_lib(tmp_path_factory: pytest.TempPathFactory) -> MakeLib:
    return fake_library_maker(tmp_path_factory.mktemp("env"))


@pytest.fixture
def parses(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The modules parsed (a reader built for each parse), in order."""
    seen: list[str] = []
    original = reader._ModuleReader.__init__

    def counting(
        self: reader._ModuleReader,
        tree: object,
        module: str,
        is_package: bool,
        source: bytes,
        reuse: reader.Reusable | None = None,
    ) -> None:
        seen.append(module)
        original(self, tree, module, is_package, source, reuse)  # type: ignore[arg-type]

    monkeypatch.setattr(reader._ModuleReader, "__init__", counting)
    return seen
