"""``typed-pallas check`` (``cli/check.py``): usage and configuration errors that stop it
before mypy, the exit status, where the configuration comes from, the slow-run line, the
empty selection, the warning for the project's unresolved own imports; then end-to-end
runs of mypy with the plugin on a small project and on ``examples/``.

The fast tests replace the mypy subprocess with a fake (``cli_support.FakeMypy``); the
slow ones share one mypy cache (conftest.py), so jax is analysed once per session.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import (
    ROOT,
    fake_mypy,
    first_block_after,
    mypy_json_line,
    smallest_code,
    validate_sarif,
)
from mypy_seeds import MypySeeds

from typed_pallas_mypy import cli, config
from typed_pallas_mypy.cli import findings, formats

# --------------------------------------------------------------------------- before mypy


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        pytest.param(
            ["check", "--platform", "xpu", "."], "unknown platform 'xpu'", id="bad-platform"
        ),
        pytest.param(["check", "--output", "xml", "."], "invalid choice: 'xml'", id="bad-output"),
        pytest.param(
            ["check", "no/such/dir"], "no such file or directory: no/such/dir", id="missing-path"
        ),
        pytest.param(
            ["check", "--config", "no-such.toml", "."],
            "no-such.toml: no such file",
            id="missing-config",
        ),
        pytest.param(
            ["--", "--strict"],
            "arguments after -- are mypy's, for `typed-pallas check`",
            id="passthrough-without-command",
        ),
    ],
)
def test_usage_errors_exit_2_before_mypy(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        rc = cli.main(argv)
    except SystemExit as e:  # argparse's own usage errors
        rc = e.code  # type: ignore[assignment]
    assert rc == 2
    err = capsys.readouterr().err
    assert err.startswith("typed-pallas: error: ") and err.count("\n") == 1, err  # one line
    assert fragment in err


def test_bad_project_config_exits_2_before_mypy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "setup.cfg").write_text("[mypy.plugins.typed-pallas]\nplatforms = tpu, npu\n")
    (tmp_path / "k.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(config.CONFIG_ENV, raising=False)
    monkeypatch.delenv(config.PLATFORMS_ENV, raising=False)
    assert cli.main(["check", "k.py"]) == 2
    err = capsys.readouterr().err
    assert "setup.cfg: [mypy.plugins.typed-pallas] platforms: unknown platform 'npu'" in err


def test_missing_mypy_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mypy" else real(name, *a)
    )
    assert cli.main(["check", "."]) == 2
    err = capsys.readouterr().err
    assert "pip install 'mypy" in err and "(typed-pallas[mypy])" in err


def test_config_env_is_respected_and_config_option_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.typed-pallas]\nplatforms = ["tpu"]\n')
    other = tmp_path / "other.ini"
    other.write_text("[mypy.plugins.typed-pallas]\nplatforms = rocm\n")
    third = tmp_path / "third.toml"
    third.write_text('[tool.typed-pallas]\nplatforms = ["cuda"]\n')
    (tmp_path / "a.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(config.PLATFORMS_ENV, raising=False)
    seen: list[str] = []

    def fake_run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
        env = kw["env"]
        assert isinstance(env, dict)
        seen.append(env[config.CONFIG_ENV])
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(findings.subprocess, "run", fake_run)
    monkeypatch.delenv(config.CONFIG_ENV, raising=False)
    assert cli.main(["check", "a.py"]) == 0
    monkeypatch.setenv(config.CONFIG_ENV, str(other))
    assert cli.main(["check", "a.py"]) == 0
    assert cli.main(["check", "--config", str(third), "a.py"]) == 0
    assert seen == [str(tmp_path / "pyproject.toml"), str(other), str(third)]


def test_check_finds_the_config_with_the_plugins_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`check` passes on the file `config.find_config_file` finds (the plugin's own search)."""
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    (sub / "k.py").write_text("x = 1\n")
    (tmp_path / "pyproject.toml").write_text('[tool.typed-pallas]\nplatforms = ["tpu"]\n')
    (tmp_path / "a" / "mypy.ini").write_text("[mypy]\n")  # no section: skipped
    (tmp_path / "a" / "setup.cfg").write_text("[mypy.plugins.typed-pallas]\nplatforms = gpu\n")
    monkeypatch.chdir(sub)
    monkeypatch.delenv(config.CONFIG_ENV, raising=False)
    monkeypatch.delenv(config.PLATFORMS_ENV, raising=False)
    seen: list[str | None] = []

    def fake_run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
        env = kw["env"]
        assert isinstance(env, dict)
        seen.append(env.get(config.CONFIG_ENV))
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(findings.subprocess, "run", fake_run)
    assert cli.main(["check", "k.py"]) == 0
    assert seen == [str(tmp_path / "a" / "setup.cfg")] == [config.find_config_file(None)]
    (tmp_path / "a" / "setup.cfg").unlink()
    assert cli.main(["check", "k.py"]) == 0
    assert seen[-1] == str(tmp_path / "pyproject.toml")


# --------------------------------------------------------------------------- from mypy's result


CRASH = (
    "Traceback (most recent call last):\n"
    '  File "mypy/build.py", line 1, in build\n'
    "AssertionError: INTERNAL ERROR\n"
)


@pytest.mark.parametrize(
    ("returncode", "stdout", "stderr", "expected", "told"),
    [
        pytest.param(
            1,
            "",
            "No module named mypy\n",
            2,
            "typed-pallas: error: mypy: No module named mypy; nothing was checked: fix it and rerun\n",
            id="rc1-without-errors-is-not-success",
        ),
        pytest.param(
            2,
            "",
            CRASH,
            2,
            "typed-pallas: error: mypy: mypy stopped with exit status 2; nothing was checked: "
            "fix it and rerun\n" + CRASH,
            id="crash",
        ),
        pytest.param(0, "", "", 0, "", id="clean"),
        pytest.param(1, mypy_json_line(code="arg-type"), "", 0, "", id="only-other-codes"),
        pytest.param(1, mypy_json_line(), "", 1, "", id="finding"),
    ],
)
def test_exit_status_from_mypy_result(
    proj: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    returncode: int,
    stdout: str,
    stderr: str,
    expected: int,
    told: str,
) -> None:
    """What mypy's run gives: the status, and on stderr (after the cold-cache line) one line
    that says mypy stopped, then its own output (a crash's traceback)."""
    (proj / "a.py").write_text("x = 1\n")

    def fake_run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
        assert cmd[1:3] == ["-m", "mypy"] and "-O" in cmd and cmd[-1] == "a.py"
        return subprocess.CompletedProcess(cmd, returncode, stdout, stderr)

    monkeypatch.setattr(findings.subprocess, "run", fake_run)
    assert cli.main(["check", "a.py"]) == expected
    captured = capsys.readouterr()
    assert captured.err.split("\n", 1)[1] == told  # the first line is the cold cache's
    if expected == 2:
        assert "Success" not in captured.out


UNREADABLE = "gone.py: error: Cannot read file: Permission denied\n"
NOT_FOUND = 'mypy: error: Cannot find module "nosuch"\n'


@pytest.mark.parametrize(
    ("output", "stdout"),
    [
        pytest.param(
            "text",
            'gone.py: error: Cannot read file: Permission denied\nmypy: error: Cannot find module "nosuch"\n',
            id="text",
        ),
        pytest.param(
            "json",
            '[["gone.py", null, null, "Cannot read file: Permission denied"], '
            '[null, null, null, "Cannot find module \\"nosuch\\""]]',
            id="json",
        ),
        pytest.param(
            "github",
            "::error file=gone.py::Cannot read file: Permission denied\n"
            '::error::Cannot find module "nosuch"\n',
            id="github",
        ),
        pytest.param(
            "sarif",
            "executionSuccessful=false; results: mypy-error at gone.py; "
            'notifications: Cannot find module "nosuch"',
            id="sarif",
        ),
    ],
)
def test_errors_without_a_line_reach_every_format(
    proj: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    output: str,
    stdout: str,
) -> None:
    """A file mypy cannot read and a module it cannot find (printed on stderr, with no line):
    in the output of every format, exit status 2, one line on stderr."""
    (proj / "gone.py").write_text("x = 1\n")
    fake_mypy(
        monkeypatch,
        returncode=2,
        stdout="Found 2 errors in 1 file (errors prevented further checking)\n",
        stderr=UNREADABLE + NOT_FOUND,
    )
    assert cli.main(["check", "--output", output, "gone.py"]) == 2
    captured = capsys.readouterr()
    if output == "json":
        shown = json.dumps(
            [[f["file"], f["line"], f["code"], f["message"]] for f in json.loads(captured.out)]
        )
    elif output == "sarif":
        run = json.loads(captured.out)["runs"][0]
        (invocation,) = run["invocations"]
        shown = (
            f"executionSuccessful={str(invocation['executionSuccessful']).lower()}; results: "
            + ", ".join(
                f"{r['ruleId']} at {r['locations'][0]['physicalLocation']['artifactLocation']['uri']}"
                for r in run["results"]
            )
            + "; notifications: "
            + ", ".join(n["message"]["text"] for n in invocation["toolExecutionNotifications"])
        )
    else:
        shown = captured.out
    assert shown == stdout
    assert captured.err.splitlines()[1:] == [
        "typed-pallas: error: gone.py: Cannot read file: Permission denied; nothing was checked: "
        "check that the file exists and can be read, or leave it out of PATHS, and rerun "
        "(1 more error of this kind)"
    ]  # the first line is the cold cache's


def test_slow_run_line_only_while_the_cache_is_cold(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / "a.py").write_text("x = 1\n")
    fake = fake_mypy(monkeypatch)
    assert cli.main(["check", "a.py"]) == 0
    err = capsys.readouterr().err
    assert "first analysis of jax" in err and "about half a minute" in err
    cache = fake.commands[0][fake.commands[0].index("--cache-dir") + 1]
    assert cache == findings.environment_cache() and findings.environment_tag() in err
    assert cli.main(["check", "a.py"]) == 0
    assert "first analysis" not in capsys.readouterr().err  # the cache exists now
    assert cli.main(["check", "--cache-dir", str(proj / "elsewhere"), "a.py"]) == 0
    assert "first analysis" in capsys.readouterr().err  # an explicit --cache-dir is used as given
    assert fake.commands[-1][fake.commands[-1].index("--cache-dir") + 1] == str(proj / "elsewhere")


def test_unresolved_own_import_is_a_warning(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / "pkg").mkdir()
    (proj / "pkg" / "a.py").write_text("from pkg.gone import f\n")
    missing = mypy_json_line(
        file="pkg/a.py", line=1, code="import-not-found",
        message='Cannot find implementation or library stub for module named "pkg.gone"',
    )  # fmt: skip
    fake_mypy(monkeypatch, stdout=missing, returncode=1)
    assert cli.main(["check", "pkg/a.py"]) == 0  # a warning, not a finding
    captured = capsys.readouterr()
    assert "warning: cannot resolve the project's own import pkg.gone (pkg/a.py:1)" in captured.err
    assert "findings that depend on it are missed" in captured.err and "MYPYPATH" in captured.err
    assert captured.out.strip() == "Success: no typed-pallas issues found"
    fake_mypy(monkeypatch, stdout=mypy_json_line(file="pkg/a.py", code="arg-type"), returncode=1)
    assert cli.main(["check", "pkg/a.py"]) == 0
    assert "warning" not in capsys.readouterr().err


# --------------------------------------------------------------------------- mypy's own errors
#
# Errors of mypy's own that a run went on after are no findings: not in any format,
# not in the exit status. A syntax error that did not stop mypy (an annotation it could
# not read, as sglang-jax's `-> (Image, str, int)`) was shown and counted as one, and so
# was a wrong `compiler_params` argument to any function (another function's
# `compiler_params=` of any type); the syntax errors are now a warning on stderr.

ANNOTATION_WARNING = (
    "typed-pallas: warning: cannot read the type annotation at pkg/bench.py:1681:81 "
    "(Syntax error in type annotation; Suggestion: Use Tuple[T1, ..., Tn] instead of "
    "(T1, ..., Tn)): mypy takes it as Any, so findings that depend on it may be missed; "
    "fix it, or see mypy's message with --all-errors"
)


def _syntax_warning(where: str, message: str) -> str:
    return (
        f"typed-pallas: warning: mypy went on after a syntax error at {where} ({message}): it "
        "is mypy's own error, not a typed-pallas finding, but findings that depend on that "
        "code may be missed; fix it, or see mypy's message with --all-errors"
    )


#: (mypy's JSON line, the warning it gives, or None)
MYPY_OWN_ERRORS = {
    "annotation-syntax": (
        mypy_json_line(
            file="pkg/bench.py", line=1681, column=80, end_line=1681, end_column=97,
            code="syntax", message="Syntax error in type annotation",
            hint="Suggestion: Use Tuple[T1, ..., Tn] instead of (T1, ..., Tn)",
        ),
        ANNOTATION_WARNING,
    ),
    "invalid-type-ignore": (
        mypy_json_line(
            file="pkg/bench.py", line=24, column=12, code="syntax",
            message='Invalid "type: ignore" comment',
        ),
        _syntax_warning("pkg/bench.py:24:13", 'Invalid "type: ignore" comment'),
    ),
    "async-for-outside-async": (
        mypy_json_line(
            file="pkg/bench.py", line=29, column=4, code="syntax",
            message='"async for" outside async function',
        ),
        _syntax_warning("pkg/bench.py:29:5", '"async for" outside async function'),
    ),
    "compiler-params-of-another-function": (
        mypy_json_line(
            file="pkg/bench.py", line=42, column=22, code="arg-type",
            message='Argument "compiler_params" to "build" has incompatible type "int"; '
            'expected "dict[str, int]"',
        ),
        None,
    ),
}  # fmt: skip

FINDING = mypy_json_line(
    file="pkg/k.py", line=12, column=4, end_line=12, end_column=20,
    message="Compiler params for platform gpu cannot be used for tpu lowering.",
)  # fmt: skip


def _shown(output: str, out: str) -> list[str]:
    """What one format shows, one line per finding (or the summary for text and github)."""
    if output == "json":
        return [f"{f['file']}:{f['line']} [{f['code']}]" for f in json.loads(out)]
    if output == "sarif":
        log = json.loads(out)
        validate_sarif(log)
        (run,) = log["runs"]
        (invocation,) = run["invocations"]
        assert invocation["executionSuccessful"] is True
        assert "toolExecutionNotifications" not in invocation
        return [
            f"{r['locations'][0]['physicalLocation']['artifactLocation']['uri']}:"
            f"{r['locations'][0]['physicalLocation']['region']['startLine']} [{r['ruleId']}]"
            for r in run["results"]
        ]
    return out.splitlines()


#: what each format shows with only mypy's own error / with a finding as well
NOTHING = {
    "text": ["Success: no typed-pallas issues found"],
    "json": [],
    "github": ["Success: no typed-pallas issues found"],
    "sarif": [],
}
ONE_FINDING = {
    "text": [
        "pkg/k.py:12:5: error: Compiler params for platform gpu cannot be used for tpu "
        "lowering.  [pallas-platform]",
        "Found 1 typed-pallas error in 1 file",
    ],
    "json": ["pkg/k.py:12 [pallas-platform]"],
    "github": [
        "::error file=pkg/k.py,line=12,col=5,endLine=12,endColumn=21,title=pallas-platform::"
        "Compiler params for platform gpu cannot be used for tpu lowering.",
        "Found 1 typed-pallas error in 1 file",
    ],
    "sarif": ["pkg/k.py:12 [pallas-platform]"],
}


@pytest.mark.parametrize("output", formats.OUTPUTS)
@pytest.mark.parametrize("with_finding", [False, True], ids=["alone", "with-a-finding"])
@pytest.mark.parametrize("leak", list(MYPY_OWN_ERRORS))
def test_mypy_own_errors_are_no_findings(
    proj: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    leak: str,
    with_finding: bool,
    output: str,
) -> None:
    (proj / "pkg").mkdir()
    (proj / "pkg" / "bench.py").write_text("x = 1\n")
    (proj / "pkg" / "k.py").write_text("x = 1\n")
    line, warning = MYPY_OWN_ERRORS[leak]
    stdout = line + "\n" + (FINDING + "\n" if with_finding else "")
    fake_mypy(monkeypatch, stdout=stdout, returncode=1)
    assert cli.main(["check", "--output", output, "pkg"]) == (1 if with_finding else 0)
    captured = capsys.readouterr()
    assert _shown(output, captured.out) == (ONE_FINDING if with_finding else NOTHING)[output]
    warnings = [w for w in captured.err.splitlines() if w.startswith("typed-pallas: warning:")]
    assert warnings == ([warning] if warning else [])


def test_mypy_own_errors_are_shown_with_all_errors_and_not_warned(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / "bench.py").write_text("x = 1\n")
    annotation, _ = MYPY_OWN_ERRORS["annotation-syntax"]
    fake_mypy(monkeypatch, stdout=annotation.replace("pkg/bench.py", "bench.py"), returncode=1)
    assert cli.main(["check", "--all-errors", "bench.py"]) == 1
    captured = capsys.readouterr()
    assert captured.out.splitlines() == [
        "bench.py:1681:81: error: Syntax error in type annotation  [syntax]",
        "bench.py:1681:81: note: Suggestion: Use Tuple[T1, ..., Tn] instead of (T1, ..., Tn)",
        "Found 1 error in 1 file",
    ]
    assert "warning" not in captured.err


def test_several_unread_annotations_and_syntax_errors_are_one_line_each(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / "a.py").write_text("x = 1\n")
    lines = [
        mypy_json_line(line=n, column=0, code="syntax", message="Syntax error in type annotation")
        for n in (1, 2, 3, 4)
    ] + [
        mypy_json_line(line=n, column=0, code="syntax", message='Invalid "type: ignore" comment')
        for n in (5, 6)
    ]
    fake_mypy(monkeypatch, stdout="\n".join(lines), returncode=1)
    assert cli.main(["check", "a.py"]) == 0
    warnings = [w for w in capsys.readouterr().err.splitlines() if "warning" in w]
    assert warnings == [
        "typed-pallas: warning: cannot read 4 type annotations, at a.py:1:1, a.py:2:1, a.py:3:1, "
        "... (the first: Syntax error in type annotation): mypy takes them as Any, so findings "
        "that depend on them may be missed; fix them, or see mypy's messages with --all-errors",
        "typed-pallas: warning: mypy went on after 2 syntax errors, at a.py:5:1, a.py:6:1 (the "
        'first: Invalid "type: ignore" comment): they are mypy\'s own errors, not typed-pallas '
        "findings, but findings that depend on that code may be missed; fix them, or see "
        "mypy's messages with --all-errors",
    ]


# --------------------------------------------------------------------------- empty selection


@pytest.mark.parametrize("output", formats.OUTPUTS)
def test_empty_selection_is_an_error(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], output: str
) -> None:
    """A folder with no Python file (a typo in a CI path) checks nothing: exit 2, as mypy's
    "There are no .py[i] files", so that the CI step fails instead of passing green."""
    (proj / "docs").mkdir()
    (proj / "docs" / "notes.md").write_text("# no Python here\n")
    (proj / "assets" / ".cache").mkdir(parents=True)
    (proj / "assets" / ".cache" / "hidden.py").write_text("")  # mypy skips hidden folders too
    fake = fake_mypy(monkeypatch)
    assert cli.main(["check", "--output", output, "docs", "assets"]) == 2
    captured = capsys.readouterr()
    assert captured.err == (
        "typed-pallas: error: there are no .py[i] files in docs assets; nothing was checked: "
        "name files or folders that hold Python code\n"
    )
    assert fake.commands == [], "mypy must not run"
    assert captured.out == ""


def test_a_folder_without_python_beside_a_file_is_an_error(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each folder of PATHS must hold Python code, as mypy requires; a Python file beside
    one does not make the run complete."""
    (proj / "a.py").write_text("x = 1\n")
    (proj / "docs").mkdir()
    fake = fake_mypy(monkeypatch)
    assert cli.main(["check", "a.py", "docs"]) == 2
    assert "there are no .py[i] files in docs;" in capsys.readouterr().err
    assert fake.commands == []
    # silent: the same with a folder that holds Python code runs mypy and passes
    (proj / "docs" / "conf.py").write_text("x = 1\n")
    assert cli.main(["check", "a.py", "docs"]) == 0
    assert len(fake.commands) == 1
    assert "error" not in capsys.readouterr().err


def test_everything_excluded_is_an_error(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / "a.py").write_text("")
    fake_mypy(monkeypatch, returncode=2, stderr="There are no .py[i] files in directory '.'\n")
    assert cli.main(["check", ".", "--", "--exclude", "a"]) == 2
    assert capsys.readouterr().err.splitlines()[-1] + "\n" == (
        "typed-pallas: error: there are no .py[i] files left in . once mypy's exclude patterns "
        "are applied; nothing was checked: name files or folders that are not excluded\n"
    )


@pytest.mark.parametrize("name", ["notes.txt", "README", "data.json"])
def test_a_named_file_that_is_not_python_is_an_error(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    """mypy reads any file it is given as Python: prose that happens to parse was
    "Success" (exit 0) although nothing was checked."""
    (proj / name).write_text("kernels\n")
    (proj / "a.py").write_text("x = 1\n")
    fake = fake_mypy(monkeypatch)
    assert cli.main(["check", "a.py", name]) == 2
    assert capsys.readouterr().err == (
        f"typed-pallas: error: {name}: not a Python file (no .py or .pyi suffix, no python #! "
        "line); nothing was checked: name Python files, or folders that hold them\n"
    )
    assert fake.commands == []


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("k.py", "x = 1\n"),
        ("k.pyi", "x: int\n"),
        ("run-kernels", "#!/usr/bin/env python3\nx = 1\n"),  # a script pre-commit calls python
        ("tool", "#!/usr/bin/python\n"),
    ],
)
def test_a_named_python_file_is_checked_whatever_its_name(
    proj: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    name: str,
    text: str,
) -> None:
    (proj / name).write_text(text)
    fake = fake_mypy(monkeypatch)
    assert cli.main(["check", name]) == 0
    assert fake.commands and fake.commands[0][-1] == name
    assert "error" not in capsys.readouterr().err


def test_files_sharing_a_module_name_get_explicit_package_bases(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two ``kernel.py`` in folders without ``__init__.py`` stop mypy ("Duplicate module
    named"): check runs mypy with explicit_package_bases and says so in one line."""
    for folder in ("flash", "matmul"):
        (proj / folder).mkdir()
        (proj / folder / "kernel.py").write_text("x = 1\n")
    fake = fake_mypy(monkeypatch)
    assert cli.main(["check", "."]) == 0
    assert "explicit_package_bases = True" in fake.presets[0].splitlines()
    notes = [line for line in capsys.readouterr().err.splitlines() if "note" in line]
    assert notes == [
        "typed-pallas: note: 1 module name is shared by several files (kernel: "
        f"{os.path.join('flash', 'kernel.py')}, {os.path.join('matmul', 'kernel.py')}): each "
        "file is checked as the module its path from the project's root names (mypy's "
        "explicit_package_bases)"
    ]


def test_files_sharing_a_name_in_folders_that_are_no_package_names_run_in_groups(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``flash-attn/kernel.py`` and ``matmul-v2/kernel.py`` stay ``kernel`` even with
    explicit_package_bases: one mypy run per group of files, the findings of both (a
    module both import is reported once), the worst exit status."""
    for folder in ("flash-attn", "matmul-v2"):
        (proj / folder).mkdir()
        (proj / folder / "kernel.py").write_text("x = 1\n")
    (proj / "common.py").write_text("x = 1\n")
    shared = mypy_json_line(file="common.py", line=1, column=1)
    fake = fake_mypy(monkeypatch, stdout=shared, returncode=1)
    assert cli.main(["check", "--output", "json", "."]) == 1
    captured = capsys.readouterr()
    files = [cmd[cmd.index("json") + 1 :] for cmd in fake.commands]
    assert files == [
        ["common.py", os.path.join("flash-attn", "kernel.py")],
        [os.path.join("matmul-v2", "kernel.py")],
    ]
    assert [f["file"] for f in json.loads(captured.out)] == ["common.py"]  # once, not twice
    assert "checked in 2 mypy runs, each over files whose module names differ" in captured.err


def test_files_with_their_own_module_names_keep_mypys_default(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Silent twin: packages (``__init__.py``) or different names: no setting, no note."""
    for folder in ("flash", "matmul"):
        (proj / folder).mkdir()
        (proj / folder / "__init__.py").write_text("")
        (proj / folder / "kernel.py").write_text("x = 1\n")
    (proj / "scripts").mkdir()
    (proj / "scripts" / "bench.py").write_text("x = 1\n")
    fake = fake_mypy(monkeypatch)
    assert cli.main(["check", "."]) == 0
    assert "explicit_package_bases" not in fake.presets[0]
    assert "note" not in capsys.readouterr().err


# --------------------------------------------------------------------------- end to end (mypy)

BAD = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as pltriton


def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def run(x):
    if jax.default_backend() == "tpu":
        return pl.pallas_call(
            kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            compiler_params=pltriton.CompilerParams(num_warps=4),
        )(x)
    return x
"""


GOOD = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def run(x):
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltpu.CompilerParams(),
    )(x)
"""


TYPO = 'x: int = "not an int"\n'


@pytest.fixture(scope="module")
def sample_proj(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("sample_proj")
    (root / ".git").mkdir()
    (root / "bad_call.py").write_text(BAD)
    (root / "good_call.py").write_text(GOOD)
    (root / "typo.py").write_text(TYPO)
    (root / "broken.py").write_text("def f(:\n")
    return root


def run_cli(cwd: Path, cache: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if k not in (config.PLATFORMS_ENV, config.CONFIG_ENV)
    }
    return subprocess.run(
        [sys.executable, "-m", "typed_pallas_mypy.cli", "check", "--cache-dir", cache, *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


BAD_LINE = 12  # the pl.pallas_call line in BAD


MESSAGE = "Compiler params for platform gpu cannot be used for tpu lowering."


@pytest.mark.slow
def test_check_dot_with_two_kernel_py_checks_both(tmp_path: Path, mypy_cache: str) -> None:
    """A kernel collection (``flash/kernel.py``, ``matmul/kernel.py``, no ``__init__.py``):
    mypy alone stops on "Duplicate module named"; ``check .`` reports each file's finding."""
    (tmp_path / ".git").mkdir()
    for folder in ("flash", "matmul"):
        (tmp_path / folder).mkdir()
        # text of its own: the session's one mypy cache repeats a same-named module's
        # errors under the path it cached, for an unchanged text (mypy's own behaviour)
        (tmp_path / folder / "kernel.py").write_text(BAD + f"# {folder}, two top-level\n")
    (tmp_path / "matmul" / "good_kernel.py").write_text(GOOD)
    # a script beside one, run from its folder, imports it by its bare name
    (tmp_path / "flash" / "bench.py").write_text("from kernel import run\n\nrun(1)\n")
    proc = run_cli(tmp_path, mypy_cache, "--output", "json", ".")
    assert proc.returncode == 1, proc.stderr
    found = sorted((f["file"], f["line"], f["code"]) for f in json.loads(proc.stdout))
    assert found == [
        (os.path.join("flash", "kernel.py"), BAD_LINE, "pallas-platform"),
        (os.path.join("matmul", "kernel.py"), BAD_LINE, "pallas-platform"),
    ]
    assert "module name is shared by several files (kernel: " in proc.stderr
    assert "cannot resolve" not in proc.stderr  # `from kernel import run` resolved


@pytest.mark.slow
def test_check_dot_with_kernel_py_in_folders_that_are_no_package_names(
    tmp_path: Path, mypy_cache: str
) -> None:
    """``flash-attn/kernel.py`` and ``matmul-v2/kernel.py`` (no package names, so
    explicit_package_bases does not tell them apart): each file's finding is reported,
    and a script beside one imports its own folder's kernel."""
    (tmp_path / ".git").mkdir()
    for folder in ("flash-attn", "matmul-v2"):
        (tmp_path / folder).mkdir()
        # the same text in both (mypy's cache repeats the first one's errors under its
        # path in the second run: project.group_aliases), unlike any other test's
        (tmp_path / folder / "kernel.py").write_text(BAD + "# no package names\n")
    (tmp_path / "matmul-v2" / "bench.py").write_text("import kernel\nkernel.run(1)\n")
    proc = run_cli(tmp_path, mypy_cache, "--output", "json", ".", "--all-errors")
    assert proc.returncode == 1, proc.stderr
    found = sorted((f["file"], f["line"], f["code"]) for f in json.loads(proc.stdout))
    assert (os.path.join("flash-attn", "kernel.py"), BAD_LINE, "pallas-platform") in found
    assert (os.path.join("matmul-v2", "kernel.py"), BAD_LINE, "pallas-platform") in found
    assert not [f for f in found if f[0].endswith("bench.py")], found  # `import kernel` resolved
    assert "checked in 2 mypy runs" in proc.stderr


@pytest.mark.slow
def test_check_text_output(sample_proj: Path, mypy_cache: str) -> None:
    proc = run_cli(sample_proj, mypy_cache, "bad_call.py", "good_call.py", "typo.py")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"bad_call.py:{BAD_LINE}:")
    assert lines[0].endswith(f"error: {MESSAGE}  [pallas-platform]")
    assert any(
        line.startswith(f"bad_call.py:{BAD_LINE}:") and ": note: " in line for line in lines[1:]
    )
    assert "typo.py" not in proc.stdout  # mypy's own errors are not shown by default
    assert lines[-1] == "Found 1 typed-pallas error in 1 file"


@pytest.mark.slow
def test_check_json_and_github_outputs(sample_proj: Path, mypy_cache: str) -> None:
    proc = run_cli(sample_proj, mypy_cache, "--output", "json", "bad_call.py", "good_call.py")
    assert proc.returncode == 1, proc.stderr
    (item,) = json.loads(proc.stdout)
    assert item["file"] == "bad_call.py" and item["line"] == BAD_LINE and item["column"] >= 1
    assert (item["severity"], item["code"], item["message"]) == (
        "error",
        "pallas-platform",
        MESSAGE,
    )
    assert item["notes"] and all(isinstance(n, str) for n in item["notes"])

    proc = run_cli(sample_proj, mypy_cache, "--output", "github", "bad_call.py", "good_call.py")
    assert proc.returncode == 1, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert re.match(
        rf"::error file=bad_call\.py,line={BAD_LINE},col=\d+,.*title=pallas-platform::", first
    )
    assert MESSAGE + "%0A" in first


@pytest.mark.slow
def test_check_clean_all_errors_passthrough_and_blocking(
    sample_proj: Path, mypy_cache: str
) -> None:
    clean = run_cli(sample_proj, mypy_cache, "good_call.py")
    assert (clean.returncode, clean.stdout.strip()) == (
        0,
        "Success: no typed-pallas issues found",
    ), clean.stderr

    everything = run_cli(sample_proj, mypy_cache, "--all-errors", "good_call.py", "typo.py")
    assert everything.returncode == 1
    assert "typo.py:1:" in everything.stdout and "[assignment]" in everything.stdout

    # arguments after -- reach mypy (an option that leaves mypy's cache valid)
    excluded = run_cli(sample_proj, mypy_cache, ".", "--", "--exclude", r"(bad_call|broken)\.py$")
    assert (excluded.returncode, excluded.stdout.strip()) == (
        0,
        "Success: no typed-pallas issues found",
    ), excluded.stdout + excluded.stderr

    broken = run_cli(sample_proj, mypy_cache, "broken.py", "good_call.py")
    assert broken.returncode == 2
    assert "broken.py:1:" in broken.stdout and "[syntax]" in broken.stdout
    assert "Success" not in broken.stdout


@pytest.mark.slow
def test_examples_give_exactly_the_expected_findings(tmp_path: Path) -> None:
    """What scripts/check runs (there on jax 0.10.2; here on this venv's jax). Its own
    cache: the repository's mypy settings (strict) apply here, and in the shared cache
    they would make the next run with the preset analyse jax again."""
    proc = run_cli(ROOT, str(tmp_path / "cache"), "examples", "--expect")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Expectations met:" in proc.stdout


SRC_KERNELS = """\
from typing import Any
from jax.experimental.pallas import tpu as pltpu


def body(x_ref: Any, o_ref: Any) -> None:
    pltpu.sync_copy(x_ref, o_ref)
"""


SRC_DISPATCH = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as pltriton
from pkg.kernels import body


def f(x: jax.Array) -> object:
    return pl.pallas_call(body, out_shape=x, compiler_params=pltriton.CompilerParams())(x)
"""


@pytest.mark.slow
def test_src_layout_and_unresolved_own_imports(tmp_path: Path, mypy_cache: str) -> None:
    """A src layout with a namespace package (no __init__.py): without src/ on mypy_path the
    import of pkg.kernels would be Any and the finding lost; an import of a module the project
    does not have is a warning on stderr."""
    (tmp_path / ".git").mkdir()
    pkg = tmp_path / "src" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "kernels.py").write_text(SRC_KERNELS)
    (pkg / "dispatch.py").write_text(SRC_DISPATCH)
    found = run_cli(tmp_path, mypy_cache, "src/pkg")
    assert found.returncode == 1, found.stdout + found.stderr
    assert found.stdout.splitlines()[0].startswith("src/pkg/dispatch.py:8:"), found.stdout
    assert "sync_copy (in body, src/pkg/kernels.py:6)" in found.stdout
    assert "warning" not in found.stderr, found.stderr

    # a new size as well as a new text: mypy takes a file of the same size and mtime second
    # as unchanged, and a warm run can finish within that second
    (pkg / "dispatch.py").write_text(SRC_DISPATCH.replace("pkg.kernels", "pkg.missing_kernels"))
    missed = run_cli(tmp_path, mypy_cache, "src/pkg")
    assert missed.returncode == 0, missed.stdout + missed.stderr
    assert (
        "warning: cannot resolve the project's own import pkg.missing_kernels (src/pkg/dispatch.py:4)"
        in missed.stderr
    )


BENCH = """\
from typing import Any


class Image: ...


def sample(data: Any) -> (Image, str, int):
    return Image(), "prompt", len(data)
"""


@pytest.mark.slow
def test_an_annotation_mypy_cannot_read_is_a_warning(tmp_path: Path, mypy_cache: str) -> None:
    """sglang-jax's ``-> (Image, str, int)``: mypy goes on after it (exit status 1, in its
    JSON output); it is no finding, in no format and not in the exit status."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "bench.py").write_text(BENCH)
    (tmp_path / "bad_call.py").write_text(BAD)
    warning = (
        "typed-pallas: warning: cannot read the type annotation at bench.py:7:26 (Syntax "
        "error in type annotation; Suggestion: Use Tuple[T1, ..., Tn] instead of (T1, ..., "
        "Tn)): mypy takes it as Any, so findings that depend on it may be missed; fix it, or "
        "see mypy's message with --all-errors"
    )
    alone = run_cli(tmp_path, mypy_cache, "bench.py")
    assert (alone.returncode, alone.stdout) == (0, "Success: no typed-pallas issues found\n"), (
        alone.stdout + alone.stderr
    )
    assert warning in alone.stderr.splitlines(), alone.stderr

    both = run_cli(tmp_path, mypy_cache, "--output", "json", "bench.py", "bad_call.py")
    assert both.returncode == 1, both.stdout + both.stderr
    assert [(f["file"], f["line"], f["code"]) for f in json.loads(both.stdout)] == [
        ("bad_call.py", BAD_LINE, "pallas-platform")
    ]
    assert warning in both.stderr.splitlines(), both.stderr


@pytest.mark.slow
def test_check_lets_inline_comments_and_mypy_options_name_the_code(
    tmp_path: Path, mypy_cache: str
) -> None:
    """``pallas-platform`` in a module's ``# mypy:`` comment and in mypy's own options after
    ``--``: mypy stopped on both (an INTERNAL ERROR, ``Invalid error code(s)``) while the
    plugin created the code only with its first report (tests/test_error_code.py runs
    every form under plain mypy)."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "bad_call.py").write_text(BAD)
    (tmp_path / "silenced.py").write_text('# mypy: disable-error-code="pallas-platform"\n' + BAD)
    inline = run_cli(tmp_path, mypy_cache, "bad_call.py", "silenced.py")
    assert inline.returncode == 1, inline.stdout + inline.stderr
    errors = [line for line in inline.stdout.splitlines() if ": error: " in line]
    assert len(errors) == 1 and errors[0].startswith(f"bad_call.py:{BAD_LINE}:"), inline.stdout
    assert inline.stdout.splitlines()[-1] == "Found 1 typed-pallas error in 1 file"

    # a global option: its own cache, so that the shared one keeps its configuration
    flag = run_cli(
        tmp_path, str(tmp_path / "cache"), "bad_call.py", "--", "--disable-error-code",
        "pallas-platform",
    )  # fmt: skip
    assert (flag.returncode, flag.stdout) == (0, "Success: no typed-pallas issues found\n"), (
        flag.stdout + flag.stderr
    )


# The configured runs come last and share one configuration (platforms = gpu, from
# --platform or from the project file), so whatever a configuration change costs mypy's
# cache is paid once.


@pytest.mark.slow
def test_check_platform_option_and_project_config(
    tmp_path: Path, sample_proj: Path, mypy_cache: str
) -> None:
    # --platform sets the top-level platforms: unguarded TPU params now contradict them
    gpu = run_cli(sample_proj, mypy_cache, "--platform", "gpu", "good_call.py")
    assert gpu.returncode == 1, gpu.stderr
    assert "good_call.py:11:" in gpu.stdout
    assert (
        "Compiler params for platform tpu cannot be used for gpu lowering.  [pallas-platform]"
        in gpu.stdout
    )

    # the project's own [tool.typed-pallas] is found from the current folder
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.typed-pallas]\nplatforms = ["gpu"]\n')
    (tmp_path / "k.py").write_text(GOOD)
    configured = run_cli(tmp_path, mypy_cache, "k.py")
    assert configured.returncode == 1, configured.stderr
    assert "k.py:11:" in configured.stdout
    assert "Compiler params for platform tpu cannot be used for gpu lowering." in configured.stdout

    # the pallas-platform doc shows what its smallest code really gives
    (tmp_path / "add.py").write_text(smallest_code("pallas-platform"))
    doc = run_cli(tmp_path, mypy_cache, "--config", str(tmp_path / "pyproject.toml"), "add.py")
    shown = [
        line
        for line in first_block_after("pallas-platform", "`typed-pallas check add.py`").splitlines()
        if ": error: " in line
    ]
    assert doc.returncode == 1, doc.stderr
    assert [line for line in doc.stdout.splitlines() if ": error: " in line] == shown, (
        "update errors/pallas-platform.md"
    )


def test_check_of_one_file_reads_the_projects_other_modules(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    mypy_seeds: MypySeeds,
) -> None:
    """``check dispatch.py`` alone: the kernel module it imports is analysed with its
    function bodies (mypy drops them for silently followed modules), and only
    dispatch.py's findings are shown. Its cache starts with jax analysed, not tpu_ops."""
    mypy_seeds.check_into(tmp_path / "cache")
    (tmp_path / ".git").mkdir()
    (tmp_path / "tpu_ops.py").write_text(
        "import jax\n"
        "from jax.experimental import pallas as pl\n"
        "from jax.experimental.pallas import tpu as pltpu\n"
        "\n"
        "def kernel(x_ref, o_ref):\n"
        "    o_ref[...] = x_ref[...]\n"
        "\n"
        "def add_one_tpu(x):\n"
        "    return pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())(x)\n"
        "\n"
        "def unrelated(x: int) -> str:\n"
        "    return x  # a type error outside the checked path: not shown\n"
    )
    (tmp_path / "dispatch.py").write_text(
        "import jax\nimport tpu_ops\n\ndef run(x):\n"
        "    if jax.default_backend() == 'gpu':\n"
        "        return tpu_ops.add_one_tpu(x)\n"
        "    return x\n"
    )
    monkeypatch.chdir(tmp_path)
    code = cli.main(
        ["check", "--output", "json", "--cache-dir", str(tmp_path / "cache"), "dispatch.py"]
    )
    out = capsys.readouterr().out
    found = json.loads(out)
    assert code == 1, out
    assert [(f["file"], f["line"], f["code"]) for f in found] == [
        ("dispatch.py", 6, "pallas-platform")
    ], out


def test_a_jax_module_the_installed_release_lacks_is_a_warning(
    tmp_path: Path, mypy_cache: str
) -> None:
    """An import of a module that is not in the installed jax (one a release removed, as
    0.12.1 removed jax's Triton ops) makes what it defines Any, so calls into it go
    unchecked: a warning naming the module, the place and the release, never a finding.
    A module the release has says nothing."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "gone.py").write_text(
        "import jax\n"
        "from jax.experimental.pallas.ops.gpu.no_such_kernel import mha\n\n"
        "def f(q):\n"
        '    if jax.default_backend() == "tpu":\n'
        "        return mha(q)\n"
        "    return q\n"
    )
    (tmp_path / "present.py").write_text(
        "from jax.experimental.pallas.ops.tpu.flash_attention import flash_attention\n"
    )
    gone = run_cli(tmp_path, mypy_cache, "gone.py")
    assert gone.returncode == 0, gone.stdout + gone.stderr
    assert (
        "warning: jax.experimental.pallas.ops.gpu.no_such_kernel (gone.py:2) is not in the "
        "installed jax (" in gone.stderr
    ), gone.stderr
    assert "calls into it are not checked" in gone.stderr
    assert "own import" not in gone.stderr  # not the project's own module
    present = run_cli(tmp_path, mypy_cache, "present.py")
    assert present.returncode == 0, present.stdout + present.stderr
    assert "warning" not in present.stderr, present.stderr


def test_the_preset_reports_missing_jax_modules_only_when_asked() -> None:
    asked = findings.preset_config(report_missing=findings.REPORTED_MISSING_PACKAGES)
    assert "[mypy-jax.*]\nignore_missing_imports = False" in asked
    # what eval/ and the benchmarks run (and a project's own jax section) is left as it was
    assert "[mypy-jax.*]" not in findings.PRESET
