"""The editor setups of ``docs/lsp.md``: the files in ``editors/`` are what the page quotes,
each one parses, and the command each one starts is a working ``typed-pallas lsp``. The
Zed extension's Rust source is read, not built (building it needs Zed's extension
crate and the WebAssembly target): the command it starts and the settings it reads."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp.conftest import start, wait_until

ROOT = Path(__file__).resolve().parents[2]
EDITORS = ROOT / "editors"
COMMAND = ["typed-pallas", "lsp"]


def _commands() -> dict[str, list[str]]:
    """editor -> the command its setup starts, read from its file."""
    lua = (EDITORS / "neovim" / "typed_pallas.lua").read_text()
    m = re.search(r"cmd = \{ (.*?) \}", lua)
    assert m and 'vim.lsp.enable("typed_pallas")' in lua
    helix = tomllib.loads((EDITORS / "helix" / "languages.toml").read_text())
    server = helix["language-server"]["typed-pallas"]
    (python,) = [lang for lang in helix["language"] if lang["name"] == "python"]
    assert {"name": "typed-pallas", "only-features": ["diagnostics", "code-action"]} in python[
        "language-servers"
    ]
    elisp = (EDITORS / "emacs" / "typed-pallas.el").read_text()
    code = re.sub(r";.*", "", elisp)
    assert code.count("(") == code.count(")")
    (eglot, lsp_mode) = re.findall(r"\(\"typed-pallas\" \"lsp\"\)", code)
    package = json.loads((EDITORS / "vscode" / "package.json").read_text())
    setting = package["contributes"]["configuration"]["properties"]["typed-pallas.command"]
    assert package["activationEvents"] == ["onLanguage:python"]
    assert (EDITORS / "vscode" / package["main"]).is_file()
    assert "vscode-languageclient" in package["dependencies"]
    extension = (EDITORS / "vscode" / package["main"]).read_text()
    assert 'require("vscode-languageclient/node")' in extension
    assert '.getConfiguration("typed-pallas")' in extension and '.inspect("command")' in extension
    return {
        "neovim": json.loads(f"[{m.group(1)}]"),
        "helix": [server["command"], *server["args"]],
        "emacs (eglot)": json.loads(
            eglot.replace('" "', '", "').replace("(", "[").replace(")", "]")
        ),
        "emacs (lsp-mode)": json.loads(
            lsp_mode.replace('" "', '", "').replace("(", "[").replace(")", "]")
        ),
        "vscode": setting["default"],
        "zed": _zed_command(),
    }


def _zed_command() -> list[str]:
    """The command the Zed extension starts, read from its Rust source, after checking
    that its manifest, crate and settings snippet are what Zed reads."""
    zed = EDITORS / "zed"
    manifest = tomllib.loads((zed / "extension.toml").read_text())
    assert manifest["id"] == "typed-pallas" and manifest["schema_version"] == 1
    assert manifest["language_servers"] == {
        "typed-pallas": {"name": "typed-pallas", "languages": ["Python"]}
    }
    crate = tomllib.loads((zed / "Cargo.toml").read_text())
    assert crate["lib"]["crate-type"] == ["cdylib"]
    assert (zed / crate["lib"]["path"]).is_file() and "zed_extension_api" in crate["dependencies"]
    source = (zed / crate["lib"]["path"]).read_text()
    assert "impl zed::Extension for TypedPallas" in source
    assert "zed::register_extension!(TypedPallas);" in source
    # the server id Zed passes names the settings it reads (lsp.typed-pallas.binary)
    assert "LspSettings::for_worktree(language_server_id.as_ref(), worktree)" in source
    (binary,) = re.findall(r'worktree\.which\("([^"]+)"\)', source)
    (arguments,) = re.findall(r"unwrap_or_else\(\|\| vec!\[(.*?)\]\)", source)
    settings = json.loads(re.sub(r"(?m)^\s*//.*$", "", (zed / "settings.json").read_text()))
    assert settings["languages"]["Python"]["language_servers"] == [manifest["id"], "..."]
    return [binary, *re.findall(r'"([^"]+)"\.to_string\(\)', arguments)]


def test_every_setup_starts_typed_pallas_lsp() -> None:
    assert _commands() == dict.fromkeys(
        ["neovim", "helix", "emacs (eglot)", "emacs (lsp-mode)", "vscode", "zed"], COMMAND
    )


@pytest.mark.parametrize(
    "name",
    [
        "neovim/typed_pallas.lua",
        "helix/languages.toml",
        "emacs/typed-pallas.el",
        "zed/extension.toml",
        "zed/src/lib.rs",
        "zed/settings.json",
    ],
)
def test_the_docs_quote_the_files(name: str) -> None:
    page = (ROOT / "docs" / "lsp.md").read_text()
    assert (EDITORS / name).read_text() in page, f"docs/lsp.md does not quote editors/{name}"


@pytest.mark.slow
@pytest.mark.asyncio(loop_scope="function")
async def test_the_setups_command_serves(tmp_path: Path) -> None:
    """``typed-pallas lsp``, the console script of this environment, answers as a server."""
    script = Path(sys.executable).with_name(COMMAND[0])
    assert script.is_file(), script
    (tmp_path / ".git").mkdir()
    client = await start(tmp_path, command=[str(script), *COMMAND[1:]])
    try:
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams("typed-pallas.explain", ["no-such-code"])
        )
        await wait_until(lambda: bool(client.messages), "the server's answer", 30)
        assert [m.message for m in client.messages] == [
            "typed-pallas: no explanation for 'no-such-code'; try `typed-pallas explain no-such-code`"
        ]
    finally:
        await client.shutdown_session()
        await client.stop()
    assert client._server is not None and client._server.returncode == 0


#: a command that installs typed-pallas by name, which a package index would resolve to
#: whatever it holds under that name (typed-pallas is on none): `pip install typed-pallas`,
#: `install 'typed-pallas[lsp]'`; a path (`"/path/to/typed-pallas[lsp]"`) is not one
BY_NAME = re.compile(r"""install\s+(?:-\S+\s+)*\\?["']?typed[-_]pallas\b""", re.IGNORECASE)


def _rust_string(source: str, after: str) -> str:
    """The first Rust string literal after ``after`` in ``source``, as Rust reads it (a
    backslash at a line's end drops the line break and the next line's indentation)."""
    start = source.index(after)
    m = re.compile(r'"((?:[^"\\]|\\.)*)"', re.S).search(source, start)
    assert m is not None
    text = re.sub(r"\\\n\s*", "", m.group(1))
    return text.replace('\\"', '"').replace("\\\\", "\\")


def test_zeds_hint_installs_from_the_clone() -> None:
    source = (EDITORS / "zed" / "src" / "lib.rs").read_text()
    assert _rust_string(source, ".ok_or_else(") == (
        "typed-pallas is not on the PATH of the project's shell: install it with its lsp "
        "extra into the project's environment from your clone of it (pip install "
        '"/path/to/typed-pallas[lsp]"; it is on no package index, so not by name), or set '
        "lsp.typed-pallas.binary.path in Zed's settings"
    )


def test_no_setup_installs_typed_pallas_by_name() -> None:
    files = [
        p
        for p in EDITORS.rglob("*")
        if p.is_file()
        and not {"node_modules", "target"} & set(p.parts)  # what npm and cargo write
        and (
            p.suffix in {".md", ".json", ".toml", ".rs", ".lua", ".el", ".js"}
            or p.name == "LICENSE"
        )
    ]
    assert len(files) >= 10, files
    found = [
        f"{path.relative_to(ROOT)}: {m.group(0)!r}"
        for path in files
        for m in BY_NAME.finditer(_joined(path.read_text(encoding="utf-8")))
    ]
    assert found == []
    # the pattern finds what it must (a meta-check), also in a string that goes on over
    # a line break (Zed's hint did)
    assert BY_NAME.search("pip install 'typed-pallas[lsp]'")
    assert BY_NAME.search(_joined("\"...: install \\\n     'typed-pallas[lsp]' into\""))
    assert not BY_NAME.search('pip install "/path/to/typed-pallas[lsp]"')


def _joined(text: str) -> str:
    """``text`` with each backslash-newline (and the next line's indentation) as one space."""
    return re.sub(r"\\\n\s*", " ", text)


def test_vscode_extension_starts_the_selected_interpreters_typed_pallas() -> None:
    """The extension asks the Python extension (ms-python.python) for the workspace's
    interpreter, then python.defaultInterpreterPath, and starts the typed-pallas beside it,
    else the one on PATH; the user's typed-pallas.command wins (command.js, its logic, is
    tested by node: :func:`test_vscode_command_resolution_under_node`)."""
    vscode = EDITORS / "vscode"
    extension = (vscode / "extension.js").read_text()
    assert 'require("./command")' in extension and "resolveCommand({" in extension
    assert 'getExtension("ms-python.python")' in extension
    assert "getActiveEnvironmentPath" in extension and "resolveEnvironment" in extension
    assert '.get("defaultInterpreterPath")' in extension
    assert '.inspect("command")' in extension  # set by the user, not the default
    assert "onDidChangeActiveEnvironmentPath" in extension  # a new selection restarts it
    command = (vscode / "command.js").read_text()
    assert 'require("vscode")' not in command  # node runs it without VS Code
    assert "test/**" in (vscode / ".vscodeignore").read_text().splitlines()


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed here")
def test_vscode_command_resolution_under_node() -> None:
    """editors/vscode/test/command.test.js: the interpreter's script (POSIX, a Windows venv
    and base install), PATH when there is none or no interpreter, the setting first,
    python.defaultInterpreterPath's forms."""
    test_file = EDITORS / "vscode" / "test" / "command.test.js"
    proc = subprocess.run(
        ["node", "--test", str(test_file)], capture_output=True, text=True, timeout=120
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert re.search(r"^# pass 6$", proc.stdout, re.M) and "# fail 0" in proc.stdout, proc.stdout


def test_vscode_extension_packs_without_a_question() -> None:
    """What ``npx @vscode/vsce package`` asks for or stops on, there: a publisher, an
    engine, a repository (it asks without one), a LICENSE file (it asks without one), a
    README with no relative link (it stops on one when the repository is on no public
    host); node_modules and the .vsix stay out of git. (``vsce package`` itself ran on
    this folder with vsce 3.9, stdin closed, when these fields were added.)"""
    vscode = EDITORS / "vscode"
    package = json.loads((vscode / "package.json").read_text())
    for key in ("name", "displayName", "description", "version", "publisher", "license"):
        assert isinstance(package[key], str) and package[key], key
    assert package["license"] == "Apache-2.0"
    assert re.fullmatch(r"\^\d+\.\d+\.\d+", package["engines"]["vscode"])
    assert package["repository"] == {"type": "git", "url": "../..", "directory": "editors/vscode"}
    assert (ROOT / package["repository"]["directory"] / "package.json").is_file()
    assert (vscode / "LICENSE").read_text() == (ROOT / "LICENSE").read_text()
    readme = (vscode / "README.md").read_text()
    assert not [t for t in re.findall(r"\]\(([^)\s]+)\)", readme) if "://" not in t]
    assert "`typed-pallas explain lsp`" in readme
    ignored = (vscode / ".gitignore").read_text().splitlines()
    assert {"node_modules/", "*.vsix"} <= set(ignored)
    assert "*.vsix" in (vscode / ".vscodeignore").read_text().splitlines()
