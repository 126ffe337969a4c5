"""``typed-pallas check --check-opted-out`` (``cli/opted_out.py``, ``cli/check.py``): files
that opt out of mypy (``# mypy: ignore-errors``) are given to mypy as shadow copies with
the opt-out turned off, and only their ``pallas-platform`` errors are shown; without the
flag, one note on stderr says how many were not checked. The ``check_opted_out`` key.

The fast tests read the copies and the mypy command (``cli_support.FakeMypy``); the slow
ones run mypy with the plugin's debug switch on, sharing one cache (conftest.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import fake_mypy, mypy_json_line

from typed_pallas_mypy import cli, config
from typed_pallas_mypy.cli import opted_out

# --------------------------------------------------------------------------- reading, copies


@pytest.mark.parametrize(
    ("header", "opts_out", "shadow_header"),
    [
        pytest.param("# mypy: ignore-errors\n", True, "#\n", id="plain"),
        pytest.param("# mypy: ignore-errors=True\n", True, "#\n", id="equals-true"),
        pytest.param("# mypy: ignore_errors = true\n", True, "#\n", id="underscore-spaces"),
        pytest.param("# mypy:  ignore-errors \n", True, "#\n", id="extra-spaces"),
        pytest.param(
            "# mypy: disallow-untyped-defs, ignore-errors\n",
            True,
            "# mypy: disallow-untyped-defs\n",
            id="with-another-setting",
        ),
        pytest.param(
            '# mypy: disable-error-code="misc, arg-type", ignore-errors\n',
            True,
            '# mypy: disable-error-code="misc, arg-type"\n',
            id="quoted-comma-kept",
        ),
        pytest.param("# mypy: ignore-errors\r\n", True, "#\r\n", id="crlf"),
        pytest.param("# mypy: ignore-errors\n# mypy: ignore-errors=False\n", False, None, id="off"),
        pytest.param("#mypy: ignore-errors\n", False, None, id="no-space-is-not-mypys"),
        pytest.param("# mypy: disable-error-code=misc\n", False, None, id="other-setting"),
        pytest.param("x = '# mypy: ignore-errors'\n", False, None, id="in-a-string"),
        pytest.param("", False, None, id="none"),
    ],
)
def test_opt_out_is_read_as_mypy_reads_it_and_turned_off_in_place(
    header: str, opts_out: bool, shadow_header: str | None
) -> None:
    body = "import jax\n\n\ndef f(x):  # a comment\n    return x\n"
    text = header + body
    assert opted_out.opts_out(text) is opts_out
    shadow = opted_out.neutralised(text)
    if shadow_header is None:
        assert shadow is None
        return
    assert shadow == shadow_header + body  # only the comment line changed
    assert shadow.count("\n") == text.count("\n")
    assert len(shadow) < len(text)  # mypy's cache hashes it when a run switches
    assert not opted_out.opts_out(shadow)


def test_shadow_copies_keep_bytes_and_mtime_and_the_folder_goes(tmp_path: Path) -> None:
    opted = tmp_path / "k.py"
    opted.write_bytes(b"# -*- coding: latin-1 -*-\n# mypy: ignore-errors\nname = '\xe9'\r\n")
    os.utime(opted, (1_700_000_000, 1_700_000_000))
    plain = tmp_path / "p.py"
    plain.write_text("x = 1\n")
    with pytest.raises(RuntimeError), opted_out.shadow_folder() as folder:
        copies = opted_out.shadow_copies([str(opted), str(plain)], folder)
        assert list(copies) == [str(opted)]
        shadow = Path(copies[str(opted)])
        assert shadow.name == "k.py"
        assert shadow.read_bytes() == b"# -*- coding: latin-1 -*-\n#\nname = '\xe9'\r\n"
        assert int(shadow.stat().st_mtime) == 1_700_000_000
        assert opted_out.shadow_arguments(copies) == ["--shadow-file", str(opted), str(shadow)]
        raise RuntimeError  # the folder is removed on error too
    assert not Path(folder).exists()
    assert opted.read_bytes().startswith(b"# -*- coding: latin-1 -*-\n# mypy: ignore-errors\n")


# --------------------------------------------------------------------------- check, fake mypy


def _shadow_pairs(command: list[str]) -> list[tuple[str, str]]:
    return [(command[i + 1], command[i + 2]) for i, a in enumerate(command) if a == "--shadow-file"]


def test_without_the_flag_one_note_and_no_shadow(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / "k.py").write_text("# mypy: ignore-errors\nx = 1\n")
    (proj / "sub").mkdir()
    (proj / "sub" / "m.py").write_text("# mypy: ignore-errors=True\n")
    (proj / "plain.py").write_text("x = 1\n")
    fake = fake_mypy(monkeypatch)
    assert cli.main(["check", "."]) == 0
    out, err = capsys.readouterr()
    assert _shadow_pairs(fake.commands[0]) == []
    assert out == "Success: no typed-pallas issues found\n"  # stdout as before
    notes = [line for line in err.splitlines() if "ignore-errors" in line]
    assert notes == [
        "typed-pallas: note: 2 files not checked (k.py, sub/m.py): they opt out of mypy with "
        "'# mypy: ignore-errors', which hides every error there; --check-opted-out checks "
        "them for pallas-platform only"
    ]


def test_no_note_when_nothing_opts_out(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / "plain.py").write_text("#mypy: ignore-errors\nx = 1\n")  # not mypy's spelling
    fake_mypy(monkeypatch)
    assert cli.main(["check", "."]) == 0
    assert "ignore-errors" not in capsys.readouterr().err


@pytest.mark.parametrize("all_errors", [False, True], ids=["default", "all-errors"])
def test_with_the_flag_shadow_copies_and_only_platform_errors_there(
    proj: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    all_errors: bool,
) -> None:
    (proj / "k.py").write_text("# mypy: ignore-errors\nx = 1\n")
    (proj / "plain.py").write_text("x = 1\n")
    stdout = "\n".join(
        [
            mypy_json_line(file="k.py", line=5, code="pallas-platform"),
            mypy_json_line(file="k.py", line=6, code="arg-type", message="mypy's own"),
            mypy_json_line(file="k.py", line=7, code=None, severity="note", message="a note"),
            mypy_json_line(file="plain.py", line=2, code="arg-type", message="shown"),
        ]
    )
    fake = fake_mypy(monkeypatch, stdout=stdout, returncode=1)
    argv = ["check", "--check-opted-out", "--output", "json", "."]
    assert cli.main(argv + (["--all-errors"] if all_errors else [])) == 1
    out, err = capsys.readouterr()
    ((source, shadow),) = _shadow_pairs(fake.commands[0])
    assert source == "k.py" and Path(shadow).name == "k.py"
    assert not os.path.exists(shadow)  # the temporary folder is gone
    shown = [(f["file"], f["line"], f["code"]) for f in json.loads(out)]
    expected = [("k.py", 5, "pallas-platform")]
    if all_errors:
        expected.append(("plain.py", 2, "arg-type"))
    assert shown == expected
    assert "ignore-errors" not in err


# --------------------------------------------------------------------------- the key


@pytest.mark.parametrize(
    ("file", "text", "on"),
    [
        ("pyproject.toml", "[tool.typed-pallas]\ncheck_opted_out = true\n", True),
        ("pyproject.toml", "[tool.typed-pallas]\ncheck_opted_out = false\n", False),
        ("setup.cfg", "[mypy.plugins.typed-pallas]\ncheck_opted_out = true\n", True),
        ("mypy.ini", "[mypy.plugins.typed-pallas]\nplatforms = tpu\n", False),
    ],
)
def test_the_key_turns_it_on_and_the_flag_wins(
    proj: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    file: str,
    text: str,
    on: bool,
) -> None:
    (proj / file).write_text(text)
    (proj / "k.py").write_text("# mypy: ignore-errors\nx = 1\n")
    assert config.resolve_config(None).check_opted_out is on
    fake = fake_mypy(monkeypatch)
    assert cli.main(["check", "k.py"]) == 0
    assert bool(_shadow_pairs(fake.commands[-1])) is on
    assert ("--check-opted-out checks it" in capsys.readouterr().err) is not on
    assert cli.main(["check", "--no-check-opted-out", "k.py"]) == 0
    assert _shadow_pairs(fake.commands[-1]) == []
    assert cli.main(["check", "--check-opted-out", "k.py"]) == 0
    assert [source for source, _ in _shadow_pairs(fake.commands[-1])] == ["k.py"]


def test_the_key_survives_the_platforms_variable(
    proj: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (proj / "pyproject.toml").write_text("[tool.typed-pallas]\ncheck_opted_out = true\n")
    monkeypatch.setenv(config.PLATFORMS_ENV, "gpu")
    assert config.resolve_config(None).check_opted_out is True


@pytest.mark.parametrize(
    ("file", "text", "said"),
    [
        (
            "pyproject.toml",
            '[tool.typed-pallas]\ncheck_opted_out = "yes"\n',
            "[tool.typed-pallas]: 'check_opted_out' must be true or false, got the string "
            "'yes'; write check_opted_out = true",
        ),
        (
            "pyproject.toml",
            "[tool.typed-pallas]\ncheck_opted_out = 1\n",
            "[tool.typed-pallas]: 'check_opted_out' must be true or false, got int 1; "
            "write check_opted_out = true",
        ),
        (
            "setup.cfg",
            "[mypy.plugins.typed-pallas]\ncheck_opted_out = maybe\n",
            "[mypy.plugins.typed-pallas]: 'check_opted_out' must be true or false, got the "
            "string 'maybe'; write check_opted_out = true",
        ),
    ],
)
def test_a_bad_value_of_the_key_is_one_clear_error(
    proj: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    file: str,
    text: str,
    said: str,
) -> None:
    (proj / file).write_text(text)
    (proj / "k.py").write_text("x = 1\n")
    fake = fake_mypy(monkeypatch)
    assert cli.main(["check", "k.py"]) == 2
    assert fake.commands == []  # before mypy
    err = capsys.readouterr().err
    assert err.startswith("typed-pallas: error: ") and err.count("\n") == 1, err
    assert f"{file}: {said} (see `typed-pallas explain configuration`)" in err


# --------------------------------------------------------------------------- end to end


OPTED_BAD = """\
# mypy: ignore-errors
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def run(x):
    if jax.default_backend() == "gpu":
        return pl.pallas_call(
            kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            compiler_params=pltpu.CompilerParams(),
        )(x)
    return x


not_an_int: int = "mypy's own error, opted out of"
"""
OPTED_BAD_LINE = 13  # the pl.pallas_call line
MESSAGE = "Compiler params for platform tpu cannot be used for gpu lowering."

OPTED_GOOD = OPTED_BAD.replace('"gpu"', '"tpu"')


def run_cli(cwd: Path, cache: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if k not in (config.PLATFORMS_ENV, config.CONFIG_ENV)
    }
    env["TYPED_PALLAS_MYPY_DEBUG"] = "1"  # a hook's exception reaches mypy
    return subprocess.run(
        [sys.executable, "-m", "typed_pallas_mypy.cli", "check", "--cache-dir", cache, *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


@pytest.fixture
def opted_proj(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "bad.py").write_text(OPTED_BAD)
    (tmp_path / "good.py").write_text(OPTED_GOOD)
    return tmp_path


@pytest.mark.slow
def test_opted_out_file_reported_at_its_real_line_only_with_the_flag(
    opted_proj: Path, mypy_cache: str
) -> None:
    """With, without, then with the flag again on one cache: right every time (mypy's
    cache must not carry the copy's result to the file, or back)."""
    for flag in (True, False, True, False):
        proc = run_cli(opted_proj, mypy_cache, *(["--check-opted-out"] if flag else []), "bad.py")
        if flag:
            assert proc.returncode == 1, proc.stderr
            first = proc.stdout.splitlines()[0]
            assert first.startswith(f"bad.py:{OPTED_BAD_LINE}:"), proc.stdout
            assert first.endswith(f"error: {MESSAGE}  [pallas-platform]")
            assert proc.stdout.splitlines()[-1] == "Found 1 typed-pallas error in 1 file"
            assert "ignore-errors" not in proc.stderr
        else:
            assert proc.returncode == 0, proc.stdout + proc.stderr
            assert proc.stdout == "Success: no typed-pallas issues found\n"
            assert "1 file not checked (bad.py)" in proc.stderr
        assert "INTERNAL ERROR" not in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.slow
def test_opted_out_files_show_nothing_else_even_with_all_errors(
    opted_proj: Path, mypy_cache: str
) -> None:
    good = run_cli(opted_proj, mypy_cache, "--check-opted-out", "--all-errors", "good.py")
    assert good.returncode == 0, good.stdout + good.stderr
    assert good.stdout == "Success: no issues found\n"  # its str-for-int error stays hidden
    both = run_cli(
        opted_proj, mypy_cache, "--check-opted-out", "--all-errors", "--output", "json", "."
    )
    assert both.returncode == 1, both.stderr
    found = [(f["file"], f["line"], f["code"]) for f in json.loads(both.stdout)]
    assert found == [("bad.py", OPTED_BAD_LINE, "pallas-platform")]


def test_mypys_status_1_for_hidden_errors_only_is_success(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """mypy exits 1 for an error of the copy that ``check`` hides: not a run that stopped."""
    (proj / "k.py").write_text("# mypy: ignore-errors\nx = 1\n")
    stdout = mypy_json_line(file="k.py", line=2, code="assignment", message="mypy's own")
    fake_mypy(monkeypatch, stdout=stdout, returncode=1)
    assert cli.main(["check", "--check-opted-out", "--all-errors", "k.py"]) == 0
    out, err = capsys.readouterr()
    assert out == "Success: no issues found\n" and "stopped" not in err
