"""The project's own mypy silencing, honoured by ``typed-pallas check`` and ``typed-pallas
lsp`` as by mypy: ``disable_error_code`` and ``enable_error_code`` (globally and per
module), ``ignore_errors`` per module, and ``exclude``, in ``mypy.ini``, ``setup.cfg``
and ``pyproject.toml``.

End to end (slow): one sample project per format, the same configuration written three
ways. Every module holds the same wrong call (Triton params under a TPU guard); only
the configuration tells them apart:

* ``plain.py``: the global ``disable_error_code`` silences it;
* ``active/k.py``: ``enable_error_code`` for ``active.*`` turns the code back on: the
  one finding, the firing twin of every silent module;
* ``active/legacy.py``: a per-module ``disable_error_code`` silences it again;
* ``active/vendored.py``: a per-module ``ignore_errors`` silences it;
* ``active/generated/k.py``: ``exclude`` leaves it out.

Each project is checked by mypy itself (the configuration as the project runs it), by
``typed-pallas check``, and by ``typed-pallas lsp`` (its first check in a fresh mypy
process, then one in mypy's fine-grained state), all with one mypy cache: the sample
configuration repeats the preset's global settings, so jax is analysed once for the
module. mypy's daemon reads the configuration with the same parser as mypy
(``mypy.main.process_options``) and is not run here.

Fast: what ``check`` gives mypy (the preset's sections, ``--exclude``), and each bad
silencing setting as one error line, from ``check`` and from the language server's plan.
"""

from __future__ import annotations

import dataclasses
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import fake_mypy
from pytest_lsp import LanguageClient

from tests.lsp.conftest import FINE_GRAINED_CHECK, check_now, logged, ready, server_env, start, uri
from typed_pallas_mypy import cli, config
from typed_pallas_mypy.cli import project
from typed_pallas_mypy.lsp import session

SAMPLE = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as pltriton


def kernel(x_ref: jax.Array, o_ref: jax.Array) -> None:
    o_ref[...] = x_ref[...]


def run(x: jax.Array) -> jax.Array:
    if jax.default_backend() == "tpu":
        return pl.pallas_call(kernel, out_shape=x, compiler_params=pltriton.CompilerParams())(x)
    return x
"""
MESSAGE = "Compiler params for platform gpu cannot be used for tpu lowering."
#: the modules of a sample project (each holds SAMPLE; the packages' __init__.py are empty)
MODULES = (
    "plain.py",
    "active/k.py",
    "active/legacy.py",
    "active/vendored.py",
    "active/generated/k.py",
)
#: what every entry point reports: (file, line, column, code)
EXPECTED = [("active/k.py", 12, 16, "pallas-platform")]

#: the preset's global settings (``findings.PRESET_SETTINGS``), so that mypy run on the
#: project's own configuration keeps jax's cache as ``check`` wrote it
INI = """\
[mypy]
plugins = typed_pallas_mypy
follow_imports = silent
ignore_missing_imports = True
check_untyped_defs = True
show_error_codes = True
disable_error_code = pallas-platform
exclude = ^active/generated/

[mypy-active.*]
enable_error_code = pallas-platform

[mypy-active.legacy]
disable_error_code = pallas-platform

[mypy-active.vendored]
ignore_errors = True
"""
TOML = """\
[tool.mypy]
plugins = ["typed_pallas_mypy"]
follow_imports = "silent"
ignore_missing_imports = true
check_untyped_defs = true
show_error_codes = true
disable_error_code = ["pallas-platform"]
exclude = ["^active/generated/"]

[[tool.mypy.overrides]]
module = "active.*"
enable_error_code = "pallas-platform"

[[tool.mypy.overrides]]
module = ["active.legacy"]
disable_error_code = ["pallas-platform"]

[[tool.mypy.overrides]]
module = "active.vendored"
ignore_errors = true
"""
FORMATS = {"mypy.ini": INI, "setup.cfg": INI, "pyproject.toml": TOML}

#: what ``read_silencing`` makes of each of them
SILENCING = project.Silencing(
    settings=(("disable_error_code", "pallas-platform"),),
    modules=(
        ("active.*", (("enable_error_code", "pallas-platform"),)),
        ("active.legacy", (("disable_error_code", "pallas-platform"),)),
        ("active.vendored", (("ignore_errors", "True"),)),
    ),
    exclude=("^active/generated/",),
)
#: the preset ``check`` gives mypy for a sample project (after the preset's own settings)
PRESET_TAIL = """\
show_error_codes = True
disable_error_code = pallas-platform

[mypy-jax.*]
ignore_missing_imports = False

[mypy-plain.*]
ignore_missing_imports = False
follow_imports = normal

[mypy-active.*]
ignore_missing_imports = False
follow_imports = normal
enable_error_code = pallas-platform

[mypy-active.legacy]
disable_error_code = pallas-platform

[mypy-active.vendored]
ignore_errors = True
"""


def write_project(root: Path, config_name: str, config_text: str) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    for module in MODULES:
        path = root / module
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(SAMPLE, encoding="utf-8")
    for package in ("active", "active/generated"):
        (root / package / "__init__.py").write_text("", encoding="utf-8")
    (root / config_name).write_text(config_text, encoding="utf-8")
    return root


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch) -> None:
    for name in (config.CONFIG_ENV, config.PLATFORMS_ENV, "MYPYPATH"):
        monkeypatch.delenv(name, raising=False)


# --------------------------------------------------------------------------- fast


@pytest.mark.parametrize("name", FORMATS)
def test_each_format_reads_the_same(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch, clean_env: None
) -> None:
    root = write_project(tmp_path, name, FORMATS[name])
    monkeypatch.chdir(root)
    found = project.read_silencing()
    assert found == dataclasses.replace(SILENCING, file=name)
    assert found.arguments() == ["--exclude=^active/generated/"]


@pytest.mark.parametrize("name", FORMATS)
def test_check_gives_mypy_the_silencing(
    tmp_path: Path, name: str, monkeypatch: pytest.MonkeyPatch, clean_env: None
) -> None:
    """The preset carries the settings (the own modules' section of ``active.*`` and the
    project's are one), ``exclude`` is on the command line; the language server's plan is
    the same."""
    root = write_project(tmp_path, name, FORMATS[name])
    monkeypatch.chdir(root)
    fake = fake_mypy(monkeypatch)
    assert cli.main(["check", "."]) == 0
    (preset,) = fake.presets
    assert preset.endswith(PRESET_TAIL), preset
    (command,) = fake.commands
    assert command[-2:] == ["--exclude=^active/generated/", "."]
    planned = session.plan(session.Options(), str(tmp_path))
    assert isinstance(planned, session.Plan)
    assert Path(planned.config_file).read_text(encoding="utf-8") == preset
    assert planned.command[-2:] == command[-2:] and planned.fresh_command[-2:] == command[-2:]


def test_without_silencing_the_preset_is_unchanged(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_env: None
) -> None:
    """A mypy configuration that silences nothing adds nothing (the silent twin of the above)."""
    root = write_project(tmp_path, "mypy.ini", "[mypy]\nplugins = typed_pallas_mypy\n")
    monkeypatch.chdir(root)
    fake = fake_mypy(monkeypatch)
    assert cli.main(["check", "."]) == 0
    (preset,) = fake.presets
    assert preset.endswith(
        "show_error_codes = True\n\n[mypy-jax.*]\nignore_missing_imports = False\n\n"
        "[mypy-active.*,plain.*]\n"
        "ignore_missing_imports = False\nfollow_imports = normal\n"
    ), preset
    assert "--exclude" not in " ".join(fake.commands[0])


#: (config file, text, the error line after ``typed-pallas: error: ``)
BAD = [
    pytest.param(
        "mypy.ini",
        "[mypy]\ndisable_error_code = pallas-platfrom\n",
        "mypy.ini: [mypy]: disable_error_code: unknown error code 'pallas-platfrom' (did you "
        "mean 'pallas-platform'?); name a code that mypy or typed-pallas defines (mypy stops "
        "on an unknown one too)",
        id="unknown-code-global",
    ),
    pytest.param(
        "pyproject.toml",
        '[tool.mypy]\n[[tool.mypy.overrides]]\nmodule = "legacy.*"\n'
        'enable_error_code = ["pallas_platform"]\n',
        'pyproject.toml: [module = "legacy.*"]: enable_error_code: unknown error code '
        "'pallas_platform' (did you mean 'pallas-platform'?); name a code that mypy or "
        "typed-pallas defines (mypy stops on an unknown one too)",
        id="unknown-code-per-module",
    ),
    pytest.param(
        "setup.cfg",
        "[mypy]\n[mypy-legacy.*]\nignore_errors = maybe\n",
        "setup.cfg: [mypy-legacy.*]: ignore_errors: Not a boolean: maybe; write the value as "
        "mypy's documentation shows it",
        id="not-a-boolean",
    ),
    pytest.param(
        "mypy.ini",
        "[mypy]\nexclude = (generated\n",
        "mypy.ini: [mypy]: exclude: '(generated' is not a regular expression (missing ), "
        "unterminated subpattern at position 0); write a Python regular expression",
        id="exclude-not-a-regex",
    ),
    pytest.param(
        "mypy.ini",
        "[mypy]\ndisable_error_codes = pallas-platform\n",
        "mypy.ini: [mypy]: Unrecognized option: disable_error_codes = pallas-platform: mypy "
        "ignores it; did you mean disable_error_code?",
        id="misspelt-key",
    ),
    pytest.param(
        "pyproject.toml",
        '[tool.mypy]\n[[tool.mypy.overrides]]\ndisable_error_code = ["pallas-platform"]\n',
        "pyproject.toml: mypy cannot read it: toml config file contains a "
        "[[tool.mypy.overrides]] section, but no module to override was specified.; fix the "
        "file",
        id="override-without-module",
    ),
]


@pytest.mark.parametrize(("name", "text", "error"), BAD)
def test_bad_silencing_is_one_error_line(
    proj: Path,
    name: str,
    text: str,
    error: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (proj / "a.py").write_text(SAMPLE, encoding="utf-8")
    (proj / name).write_text(text, encoding="utf-8")
    fake = fake_mypy(monkeypatch)
    assert cli.main(["check", "a.py"]) == 2
    out, err = capsys.readouterr()
    assert out == "" and not fake.commands
    assert err == f"typed-pallas: error: {error} (see `typed-pallas explain configuration`)\n"
    stop = session.plan(session.Options(), str(proj))
    assert isinstance(stop, session.Stop) and stop.severity == "error"
    assert stop.message == f"{error} (see `typed-pallas explain configuration`)"


def test_another_plugins_codes_are_left_out(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A code no one check loads defines is an error (above), unless the configuration
    loads another plugin that may define it: then it is left out (check does not load
    that plugin, so its errors cannot occur), and ``-v`` says so."""
    (proj / "a.py").write_text(SAMPLE, encoding="utf-8")
    (proj / "mypy.ini").write_text(
        "[mypy]\nplugins = typed_pallas_mypy, other.plugin:entry\n"
        "disable_error_code = other-code, pallas-platform\n",
        encoding="utf-8",
    )
    fake = fake_mypy(monkeypatch)
    assert cli.main(["check", "-v", "a.py"]) == 0
    (preset,) = fake.presets
    assert "\ndisable_error_code = pallas-platform\n" in preset and "other" not in preset
    err = capsys.readouterr().err
    assert "typed-pallas: silencing from mypy.ini: disable_error_code\n" in err
    assert (
        "typed-pallas: not loaded: the plugin other.plugin:entry of mypy.ini (check loads "
        "typed-pallas' only); error codes left out: other-code\n"
    ) in err


def test_a_section_mypy_skips_is_a_warning(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / "a.py").write_text(SAMPLE, encoding="utf-8")
    (proj / "mypy.ini").write_text(
        "[mypy]\n[mypy-leg*cy]\ndisable_error_code = pallas-platform\n", encoding="utf-8"
    )
    fake = fake_mypy(monkeypatch)
    assert cli.main(["check", "a.py"]) == 0
    assert "leg*cy" not in fake.presets[0]
    assert capsys.readouterr().err.startswith(
        "typed-pallas: warning: mypy.ini: [mypy-leg*cy]: Patterns must be fully-qualified "
        "module names, optionally with '*' in some components (e.g spam.*.eggs.*); mypy "
        "ignores that section\n"
    )


# --------------------------------------------------------------------------- end to end


@pytest.fixture(scope="module")
def projects(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    base = tmp_path_factory.mktemp("silencing")
    return {
        name: write_project(base / name.replace(".", "_"), name, text)
        for name, text in FORMATS.items()
    }


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    """The module's mypy cache: its configurations all disable a code globally, which is
    part of every module's cached options (jax's too), so it is not the CLI tests' one."""
    return str(tmp_path_factory.mktemp("silencing-cache"))


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MYPY", "TYPED_PALLAS"))}
    env["TYPED_PALLAS_MYPY_DEBUG"] = "1"
    return env


@pytest.mark.slow
@pytest.mark.parametrize("name", FORMATS)
def test_check(
    projects: dict[str, Path],
    cache: str,
    name: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    clean_env: None,
) -> None:
    monkeypatch.chdir(projects[name])
    monkeypatch.setenv("TYPED_PALLAS_MYPY_DEBUG", "1")
    status = cli.main(["check", "--cache-dir", cache, "--output", "json", "."])
    out, err = capsys.readouterr()
    found = [(f["file"], f["line"], f["column"], f["code"]) for f in json.loads(out)]
    assert found == EXPECTED, err
    assert status == 1


@pytest.mark.slow
@pytest.mark.parametrize("name", FORMATS)
def test_mypy(projects: dict[str, Path], cache: str, name: str) -> None:
    """mypy itself, with the project's configuration: the same one finding."""
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", cache, "--show-column-numbers", "."],
        cwd=projects[name],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=600,
    )
    errors = [line for line in completed.stdout.splitlines() if ": error: " in line]
    assert errors == [
        f"{file}:{line}:{column}: error: {MESSAGE}  [{code}]"
        for file, line, column, code in EXPECTED
    ], completed.stdout + completed.stderr
    assert completed.returncode == 1


def _published(client: LanguageClient, root: Path) -> list[tuple[str, int, int, str]]:
    found = []
    for module in MODULES:
        for diag in client.diagnostics.get(uri(root / module), []):
            start = diag.range.start
            found.append((module, start.line + 1, start.character + 1, str(diag.code)))
    return found


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="function")
@pytest.mark.parametrize("name", FORMATS)
async def test_lsp(projects: dict[str, Path], cache: str, name: str) -> None:
    """A check in a fresh mypy process, then one in mypy's fine-grained state: the same
    one finding, nothing published for the silenced modules."""
    root = projects[name]
    client = await start(root, "--cache-dir", cache, env=server_env(TYPED_PALLAS_MYPY_DEBUG="1"))
    try:
        await check_now(client)
        assert _published(client, root) == EXPECTED
        assert {u for u, d in client.diagnostics.items() if d} == {uri(root / "active/k.py")}
        await ready(client)
        await check_now(client)
        assert logged(client, FINE_GRAINED_CHECK), "\n".join(m.message for m in client.log_messages)
        assert _published(client, root) == EXPECTED
    finally:
        await client.shutdown_session()
        await client.stop()
