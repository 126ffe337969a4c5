"""Under mypy's daemon, ``Facts.refresh`` looks at the files it read once per build epoch
(``reporting.build_epoch``), not at each of the hundreds of hook calls of an edit.

The daemon's round trips themselves (an edit in another module moves a finding) are in
``test_incremental.py``; this file pins the two facts that the skipping rests on."""

from __future__ import annotations

from types import SimpleNamespace
from typing import Any, cast

from mypy.errors import Errors
from mypy.options import Options

from typed_pallas_mypy.transformers import reporting
from typed_pallas_mypy.transformers.platform_facts import Facts


def _api(errors: object) -> Any:
    return cast(Any, SimpleNamespace(msg=SimpleNamespace(errors=errors)))


def test_mypy_replaces_the_epoch_when_it_resets_its_errors() -> None:
    errors = Errors(Options())
    api = _api(errors)
    first = reporting.build_epoch(api)
    assert first is not None
    assert reporting.build_epoch(api) is first
    errors.reset()  # what the daemon does before it re-reads a changed module
    assert reporting.build_epoch(api) is not first


def test_no_epoch_without_mypy_errors() -> None:
    assert reporting.build_epoch(_api(None)) is None


def test_refresh_looks_once_an_epoch() -> None:
    facts = Facts({})
    gone = "pkg.gone"  # a module read earlier, no longer in the build: changed
    epoch: dict[str, object] = {}
    facts._stamps[gone] = object()
    facts.refresh(epoch)
    assert gone not in facts._stamps
    facts._stamps[gone] = object()
    facts.refresh(epoch)  # the same epoch: nothing is looked at
    assert gone in facts._stamps
    facts.refresh({})  # a new epoch: looked at again
    assert gone not in facts._stamps


def test_refresh_without_an_epoch_always_looks() -> None:
    facts = Facts({})
    for _ in range(2):
        facts._stamps["pkg.gone"] = object()
        facts.refresh(None)
        assert "pkg.gone" not in facts._stamps
