"""pytest plugin (entry point ``typed_pallas``): fail on CPU a test whose kernels would not lower in production.

Registers:

* the marker ``@pytest.mark.lowers_on("tpu", "cuda", ...)``: the platforms the code under
  test must lower for ("tpu", "cuda", "rocm", "cpu"; "gpu" means cuda and rocm);
* the fixture ``lowering_check``: ``lowering_check(fn, *args, **kwargs)`` runs
  ``typed_pallas.check_lowering`` for the marker's platforms (all of tpu/cuda/rocm when the
  test has no marker), fails the test with the report's table when one of them does not
  lower, and returns the ``LoweringReport``. ``lowering_check.report(fn, *args)`` returns the
  report without failing.

A test marked ``lowers_on`` gets the fixture automatically and fails if it never calls
it: a marker that checks nothing would pass silently.

!!! Example

    ```python
    @pytest.mark.lowers_on("tpu", "cuda")
    def test_attention_lowers(lowering_check):
        lowering_check(attention, q, k, v)
    ```

Importing this module imports neither jax nor typed_pallas's jax-backed modules (only the
platform table, ``typed_pallas._platforms``); the fixture loads them on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, Any

import pytest

from typed_pallas import _platforms

if TYPE_CHECKING:
    from typed_pallas._check_lowering import LoweringReport

__all__ = ["LoweringCheck", "lowering_check"]

MARKER = "lowers_on"
FIXTURE = "lowering_check"
_DEFAULT = _platforms.LOWERING_PLATFORMS


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        f"{MARKER}(*platforms): the kernels checked through the {FIXTURE} fixture must lower for "
        "these platforms ('tpu', 'cuda', 'rocm', 'cpu'; 'gpu' = cuda and rocm), checked on CPU by "
        "cross-platform lowering (typed_pallas.check_lowering)",
    )


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.get_closest_marker(MARKER) is None:
            continue
        names = getattr(item, "fixturenames", None)
        if isinstance(names, list) and FIXTURE not in names:
            names.append(FIXTURE)


def _platforms_of(node: pytest.Item) -> tuple[str, ...]:
    marks = list(node.iter_markers(MARKER))
    if not marks:
        return _DEFAULT
    platforms: list[str] = []
    for mark in marks:
        if not mark.args:
            raise pytest.UsageError(
                f"{node.nodeid}: @pytest.mark.{MARKER} needs platforms, e.g. {MARKER}('tpu')"
            )
        for arg in mark.args:
            if not isinstance(arg, str):
                raise pytest.UsageError(
                    f"{node.nodeid}: @pytest.mark.{MARKER} takes platform names, got {arg!r}"
                )
            platforms.append(arg)
    return tuple(dict.fromkeys(platforms))


class LoweringCheck:
    """The ``lowering_check`` fixture's value: call it with ``(fn, *args, **kwargs)``."""

    def __init__(self, platforms: tuple[str, ...]) -> None:
        self.platforms = platforms
        self.reports: list[LoweringReport] = []

    def report(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> LoweringReport:
        """``check_lowering`` for this test's platforms, without failing."""
        from typed_pallas._check_lowering import check_lowering

        result = check_lowering(fn, *args, platforms=self.platforms, **kwargs)
        self.reports.append(result)
        return result

    def __call__(self, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> LoweringReport:
        result = self.report(fn, *args, **kwargs)
        bad = [p for p, r in result.items() if not r.ok]
        if bad:
            pytest.fail(
                f"{result.name} does not lower for {', '.join(bad)} "
                f"(required by @pytest.mark.{MARKER}{self.platforms!r}):\n{result.table()}",
                pytrace=False,
            )
        return result


@pytest.fixture
def lowering_check(request: pytest.FixtureRequest) -> Iterator[LoweringCheck]:
    """Check on CPU that kernels lower for the platforms of ``@pytest.mark.lowers_on``."""
    checker = LoweringCheck(_platforms_of(request.node))
    yield checker
    marked = request.node.get_closest_marker(MARKER) is not None
    if marked and not checker.reports:
        failed = getattr(request.node, "_typed_pallas_failed", False)
        if not failed:
            pytest.fail(
                f"{request.node.nodeid} is marked @pytest.mark.{MARKER} but never called the "
                f"{FIXTURE} fixture: nothing was checked",
                pytrace=False,
            )


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[Any]:
    outcome: Any = yield
    report = outcome.get_result()
    if call.when == "call" and report.failed:
        item._typed_pallas_failed = True  # type: ignore[attr-defined]
