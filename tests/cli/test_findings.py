"""``cli/findings.py``: mypy's JSON output parsed into messages, which of them are
typed-pallas findings, and the mypy cache folder of each environment."""

from __future__ import annotations

import os
import subprocess

import pytest
from cli_support import mypy_json_line

from typed_pallas_mypy.cli import findings

# --------------------------------------------------------------------------- mypy JSON -> messages


def test_parse_mypy_json_attaches_notes_and_makes_columns_one_based() -> None:
    out = "\n".join(
        [
            mypy_json_line(hint="first\nsecond"),
            mypy_json_line(severity="note", line=7, message="evidence elsewhere", code=None),
            mypy_json_line(file="b.py", severity="note", message="alone", code="misc"),
            "Found 1 error in 1 file (errors prevented further checking)",
        ]
    )
    parsed, other = findings.parse_mypy_json(out)
    assert [f.file for f in parsed] == ["a.py", "b.py"]
    first = parsed[0]
    assert (first.line, first.column, first.end_column) == (3, 5, 10)
    assert first.notes == ["first", "second", "evidence elsewhere"]
    assert parsed[1].severity == "note" and parsed[1].notes == []
    assert other == ["Found 1 error in 1 file (errors prevented further checking)"]


def test_select_keeps_plugin_codes_and_stub_mismatches_unless_all_errors() -> None:
    # a syntax error is mypy's own: a run it stopped is shown whole (``check``), one it
    # did not stop is a warning (``unread_code``); it was kept as a finding before
    parsed, _ = findings.parse_mypy_json(
        "\n".join(
            [
                mypy_json_line(code="pallas-platform"),
                mypy_json_line(code="arg-type", message="type error"),
                mypy_json_line(code="syntax", message="bad syntax"),
                mypy_json_line(code="misc", severity="note", message="Revealed type", line=9),
                mypy_json_line(
                    code="arg-type",
                    line=11,
                    message='Argument "compiler_params" to "kernel" has incompatible type "tpu.CompilerParams"; '
                    "expected \"typed_pallas._params.CompilerParams[Literal['gpu']] | None\"",
                ),
                mypy_json_line(
                    code="call-overload",
                    line=12,
                    message='No overload variant of "pallas_call" matches',
                    hint="Possible overload variants:\n    def pallas_call(...) -> PlatformFn[Literal['tpu'], ...]",
                ),
                mypy_json_line(
                    code="call-overload",
                    line=13,
                    message='No overload variant of "f" matches',
                    hint="x",
                ),
            ]
        )
    )
    codes = findings.plugin_error_codes()
    assert "pallas-platform" in codes
    kept = findings.select(parsed, codes, all_errors=False)
    assert [(f.code, f.line) for f in kept] == [
        ("pallas-platform", 3),
        ("arg-type", 11),
        ("call-overload", 12),
    ]
    assert len(findings.select(parsed, codes, all_errors=True)) == 7
    assert [(f.code, f.message) for f in findings.unread_code(parsed)] == [("syntax", "bad syntax")]


def test_unread_code_is_the_syntax_errors_only() -> None:
    parsed, _ = findings.parse_mypy_json(
        "\n".join(
            [
                mypy_json_line(code="syntax", message="Syntax error in type annotation", line=1),
                mypy_json_line(code="syntax", severity="note", message="Suggestion", line=1),
                mypy_json_line(code="syntax", message='Invalid "type: ignore" comment', line=2),
                mypy_json_line(code="valid-type", message="Invalid type", line=3),
                mypy_json_line(code="misc", message="Invalid base class", line=4),
                mypy_json_line(code="pallas-platform", line=5),
                mypy_json_line(code=None, file="b.py", severity="note", message="a note", line=6),
            ]
        )
    )
    unread = findings.unread_code(parsed)
    assert [(f.line, f.message, f.notes) for f in unread] == [
        (1, "Syntax error in type annotation", ["Suggestion"]),
        (2, 'Invalid "type: ignore" comment', []),
    ]
    assert findings.select(parsed, findings.plugin_error_codes(), all_errors=False) == [parsed[4]]


# --------------------------------------------------------------------------- what `check` shows


def _finding(message: str, code: str, notes: list[str] | None = None) -> object:
    from typed_pallas_mypy.cli.findings import MypyMessage

    return MypyMessage("m.py", 3, 5, "error", message, code, notes or [])


@pytest.mark.parametrize(
    ("message", "code", "shown"),
    [
        pytest.param(
            'Argument "compiler_params" to "pallas_call" has incompatible type "dict[str, dict[str, int]]"; '
            'expected "CompilerParams | None"',
            "arg-type",
            True,
            id="legacy-dict-params-shown",
        ),
        pytest.param(
            'Argument "compiler_params" to "kernel" has incompatible type "CompilerParams"; '
            "expected \"CompilerParams[Literal['gpu']] | None\"",
            "arg-type",
            True,
            id="stub-platform-mismatch-shown",
        ),
        pytest.param(
            'Argument "compiler_params" to "build" has incompatible type "int"; '
            'expected "dict[str, int]"',
            "arg-type",
            False,
            id="another-functions-compiler-params-hidden",
        ),
        pytest.param(
            'Argument "compiler_params" to "make" of "Builder" has incompatible type "str"; '
            'expected "int"',
            "arg-type",
            False,
            id="a-methods-compiler-params-hidden",
        ),
        pytest.param(
            'Argument "compiler_params" to "build" has incompatible type "dict[str, int]"; '
            'expected "CompilerParams"',
            "arg-type",
            True,
            id="dict-where-params-expected-shown",
        ),
        pytest.param(
            "Syntax error in type annotation", "syntax", False, id="annotation-syntax-hidden"
        ),
        pytest.param(
            'Argument "out_shape" to "pallas_call" has incompatible type "int"; expected "Any"',
            "arg-type",
            False,
            id="other-arg-type-hidden",
        ),
        pytest.param(
            'Argument 3 to "kernel" has incompatible type "**dict[str, Mesh]"; '
            "expected \"CompilerParams[Literal['gpu']] | None\"",
            "arg-type",
            False,
            id="splat-without-params-hidden",
        ),
        pytest.param('Name "x" is not defined', "name-defined", False, id="other-error-hidden"),
    ],
)
def test_check_shows_params_type_errors_only(message: str, code: str, shown: bool) -> None:
    from typed_pallas_mypy.cli.findings import is_typed_pallas_finding

    assert is_typed_pallas_finding(_finding(message, code), frozenset({"pallas-platform"})) is shown  # type: ignore[arg-type]


# --------------------------------------------------------------------------- cache per environment


def test_cache_folder_names_python_jax_and_mypy_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    tag = findings.environment_tag()
    assert tag.startswith("py3.") and "-jax" in tag and "-mypy" in tag
    versions = {"jax": "0.10.2", "mypy": "2.4.1"}
    monkeypatch.setattr(findings, "installed_version", lambda name: versions[name])
    first = findings.environment_cache()
    versions["jax"] = "0.12.0"
    second = findings.environment_cache()
    assert first != second, "two environments on one project must not share a cache"
    assert os.path.dirname(first) == os.path.dirname(second) == findings.DEFAULT_CACHE
    assert first.endswith("-jax0.10.2-mypy2.4.1") and second.endswith("-jax0.12.0-mypy2.4.1")


# --------------------------------------------------------------------------- mypy's text lines


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        pytest.param(
            "broken.py:1: error: Expected a parameter or the end of the parameter list  [syntax]",
            (
                "broken.py",
                1,
                1,
                "error",
                "Expected a parameter or the end of the parameter list",
                "syntax",
            ),
            id="with-line-and-code",
        ),
        pytest.param(
            "pkg/a.py:12:5: note: see here",
            ("pkg/a.py", 12, 5, "note", "see here", None),
            id="with-column",
        ),
        pytest.param(
            "latin1.py: error: Cannot decode file: 'utf-8' codec can't decode byte 0xe9",
            (
                "latin1.py",
                0,
                1,
                "error",
                "Cannot decode file: 'utf-8' codec can't decode byte 0xe9",
                None,
            ),
            id="no-line",
        ),
        pytest.param(
            'mypy: error: Cannot find module "nosuch"',
            ("", 0, 1, "error", 'Cannot find module "nosuch"', None),
            id="no-file",
        ),
        pytest.param(
            "Found 1 error in 1 file (errors prevented further checking)", None, id="summary"
        ),
        pytest.param("Traceback (most recent call last):", None, id="traceback"),
    ],
)
def test_parse_mypy_text_line(line: str, expected: tuple[object, ...] | None) -> None:
    found = findings.parse_mypy_text_line(line)
    if expected is None:
        assert found is None
    else:
        assert found is not None
        assert (
            found.file,
            found.line,
            found.column,
            found.severity,
            found.message,
            found.code,
        ) == expected


def test_parse_mypy_text_joins_notes_and_drops_mypys_usage_block() -> None:
    text = (
        'd2/x.py: error: Duplicate module named "x" (also at "d1/x.py")\n'
        "d2/x.py: note: Common resolutions include:\n"
        "usage: mypy [-h] [-v] [-V] [more options; see below]\n"
        "            [-m MODULE] [-p PACKAGE] [files ...]\n"
        "something else\n"
    )
    messages, other = findings.parse_mypy_text(text)
    assert [(m.file, m.message, m.notes) for m in messages] == [
        (
            "d2/x.py",
            'Duplicate module named "x" (also at "d1/x.py")',
            ["Common resolutions include:"],
        )
    ]
    assert other == ["something else"]


def test_run_mypy_reads_the_blocking_errors_mypy_prints_on_stderr(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """mypy -O json still prints a file it cannot read or decode as text on stderr: it is a message
    of the run (before, it was lost from JSON and SARIF); the rest of stderr is kept."""

    def fake_run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
        return subprocess.CompletedProcess(
            cmd,
            2,
            "Found 1 error in 1 file (errors prevented further checking)\n",
            "gone.py: error: Cannot read file: Permission denied\nextra text\n",
        )

    monkeypatch.setattr(findings.subprocess, "run", fake_run)
    run = findings.run_mypy(["gone.py"], [], cache_dir="c", env={})
    assert [(m.file, m.line, m.message) for m in run.findings] == [
        ("gone.py", 0, "Cannot read file: Permission denied")
    ]
    assert run.stderr == "extra text\n" and run.blocked
    assert run.other_output == ["Found 1 error in 1 file (errors prevented further checking)"]
