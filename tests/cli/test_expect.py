"""``cli/expect.py``: ``typed-pallas check --expect`` pairs findings with ``# expect[CODE]``
comments; the examples carry them."""

from __future__ import annotations

import os
import textwrap
from pathlib import Path

from cli_support import EXAMPLES

from typed_pallas_mypy.cli import expect, findings


def test_expectations_pair_findings_with_comments(tmp_path: Path) -> None:
    src = tmp_path / "k.py"
    src.write_text(
        textwrap.dedent(
            """\
            f(
                a=1,  # expect[pallas-platform]: message one
            )
            g(b=2)  # expect[pallas-platform]
            h(c=3)  # expect[other-code]
            """
        )
    )
    exps = expect.read_expectations(str(src))
    assert [(e.line, e.code, e.message) for e in exps] == [
        (2, "pallas-platform", "message one"),
        (4, "pallas-platform", None),
        (5, "other-code", None),
    ]

    def finding(line: int, message: str, code: str = "pallas-platform") -> findings.MypyMessage:
        return findings.MypyMessage(
            file=str(src), line=line, column=1, severity="error", message=message, code=code
        )

    matched, unexpected, missing = expect.compare_expectations(
        [
            finding(1, "message one"),
            finding(4, "anything"),
            finding(4, "extra"),
            finding(5, "x", "pallas-platform"),
        ],
        exps,
    )
    assert sorted((f.line, e.line) for f, e in matched) == [(1, 2), (4, 4)]
    assert [(f.line, f.message) for f in unexpected] == [(4, "extra"), (5, "x")]
    assert [e.line for e in missing] == [5]
    # a wrong message does not match
    _, unexpected, missing = expect.compare_expectations([finding(1, "message two")], exps[:1])
    assert len(unexpected) == 1 and len(missing) == 1


def test_a_file_with_an_invalid_escape_is_read_without_a_warning(tmp_path: Path) -> None:
    """The compiler warns about ``"a\\+b"`` (Python >= 3.12: ``SyntaxWarning``); reading
    the comments must print nothing, and must still pair a multi-line call's lines."""
    import warnings

    src = tmp_path / "k.py"
    src.write_text('PATTERN = "a\\+b"\nf(\n    a=1,  # expect[pallas-platform]\n)\n')
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        (exp,) = expect.read_expectations(str(src))
    assert (exp.line, exp.code) == (3, "pallas-platform")
    assert (2, 4) in exp.spans  # the call around the comment: the file was parsed


def test_every_mistake_example_has_an_expectation_and_correct_ones_none() -> None:
    files = expect.python_files([str(EXAMPLES)])
    mistakes = [f for f in files if "mistakes" in f]
    assert len(mistakes) >= 5
    for path in mistakes:
        assert expect.read_expectations(path), path
    for path in files:
        if "correct" in path:
            assert not expect.read_expectations(path), path
    names = [os.path.basename(f) for f in files]
    assert len(names) == len(set(names)), "mypy names scripts by file name: keep them unique"
