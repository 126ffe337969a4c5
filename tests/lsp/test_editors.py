"""The editor setups of ``docs/lsp.md``: the files in ``editors/`` are what the page quotes,
each one parses, and the command each one starts is a working ``typed-pallas lsp``."""

from __future__ import annotations

import json
import re
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
    assert '.getConfiguration("typed-pallas")' in extension and '.get("command"' in extension
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
    }


def test_every_setup_starts_typed_pallas_lsp() -> None:
    assert _commands() == dict.fromkeys(
        ["neovim", "helix", "emacs (eglot)", "emacs (lsp-mode)", "vscode"], COMMAND
    )


@pytest.mark.parametrize(
    "name", ["neovim/typed_pallas.lua", "helix/languages.toml", "emacs/typed-pallas.el"]
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
