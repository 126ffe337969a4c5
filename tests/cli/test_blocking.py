"""``cli/blocking.py``: the one line that says which error stopped mypy and what to do."""

from __future__ import annotations

import pytest

from typed_pallas_mypy.cli import blocking
from typed_pallas_mypy.cli.findings import MypyMessage


def _error(file: str, line: int, message: str, code: str | None = None) -> MypyMessage:
    return MypyMessage(file, line, 1, "error", message, code)


@pytest.mark.parametrize(
    ("errors", "expected"),
    [
        pytest.param(
            [_error("a.py", 3, "invalid syntax", "syntax"), _error("b.py", 1, "x", "syntax")],
            "typed-pallas: error: a.py:3: invalid syntax; nothing was checked: fix the syntax error "
            "and rerun (1 more error of this kind)",
            id="syntax",
        ),
        pytest.param(
            [_error("gone.py", 0, "Cannot read file: Permission denied")],
            "typed-pallas: error: gone.py: Cannot read file: Permission denied; nothing was checked: "
            "check that the file exists and can be read, or leave it out of PATHS, and rerun",
            id="unreadable",
        ),
        pytest.param(
            [_error("", 0, 'Cannot find module "nosuch"')],
            'typed-pallas: error: mypy: Cannot find module "nosuch"; nothing was checked: check the '
            "module's name: it must be importable from the current folder or MYPYPATH",
            id="module-not-found",
        ),
        pytest.param(
            [_error("", 0, "May only specify one of: module/package, files, or command.")],
            "typed-pallas: error: mypy: May only specify one of: module/package, files, or command; "
            "nothing was checked: fix it and rerun",
            id="anything-else",
        ),
    ],
)
def test_blocking_line(errors: list[MypyMessage], expected: str) -> None:
    assert blocking.blocking_line(errors) == expected


def test_stopped_message_takes_mypys_one_line_or_leaves_a_traceback_on_stderr() -> None:
    message, left = blocking.stopped_message(2, "Can't find package 'nosuch'\n")
    assert (message.file, message.line, message.message, left) == (
        "",
        0,
        "Can't find package 'nosuch'",
        "",
    )
    crash = "Traceback (most recent call last):\nAssertionError\n"
    message, left = blocking.stopped_message(2, crash)
    assert (message.message, left) == ("mypy stopped with exit status 2", crash)
