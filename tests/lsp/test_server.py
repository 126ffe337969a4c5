"""``typed-pallas lsp`` end to end: a real LSP client (pytest-lsp) over stdio.

One server session for the module (``conftest.client``, Neovim 0.11's capabilities); its
first check is cold (work-done progress). The tests run in file order on that session:
open, unsaved edits of the guard, an edit of a callee module, code actions, a broken
configuration; then two sessions of their own: shutdown leaves no process, and an
environment without mypy gets a message.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import sys
from pathlib import Path

import pytest
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import DISPATCH, TPU_OPS, start, uri, wait_until

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

MESSAGE = "Compiler params for platform tpu cannot be used for gpu lowering."


def _open(client: LanguageClient, path: Path, text: str | None = None) -> None:
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(
                uri=uri(path),
                language_id="python",
                version=1,
                text=path.read_text(encoding="utf-8") if text is None else text,
            )
        )
    )


_versions: dict[str, int] = {}


def _replace(client: LanguageClient, path: Path, line: int, old: str, new: str, text: str) -> str:
    """Replace ``old`` by ``new`` on ``line`` (0-based) of the buffer ``text``, unsaved."""
    lines = text.split("\n")
    column = lines[line].index(old)
    lines[line] = lines[line][:column] + new + lines[line][column + len(old) :]
    key = uri(path)
    _versions[key] = _versions.get(key, 1) + 1
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            types.VersionedTextDocumentIdentifier(uri=key, version=_versions[key]),
            [
                types.TextDocumentContentChangePartial(
                    range=types.Range(
                        types.Position(line, column), types.Position(line, column + len(old))
                    ),
                    text=new,
                )
            ],
        )
    )
    return "\n".join(lines)


def _messages(client: LanguageClient, path: Path) -> list[str]:
    return [d.message.split("\n")[0] for d in client.diagnostics.get(uri(path), [])]


async def test_open_gives_the_finding_with_its_chain(client: LanguageClient, project: Path) -> None:
    dispatch = project / "dispatch.py"
    _open(client, dispatch)
    await wait_until(lambda: bool(client.diagnostics.get(uri(dispatch))), "dispatch.py's finding")
    (diag,) = client.diagnostics[uri(dispatch)]
    assert diag.message.split("\n")[0] == MESSAGE
    assert (diag.source, diag.code) == ("typed-pallas", "pallas-platform")
    assert diag.severity == types.DiagnosticSeverity.Error
    # line 6, column 16 (1-based): the callee's name is underlined
    assert diag.range == types.Range(types.Position(5, 15), types.Position(5, 34))
    assert diag.code_description is not None
    assert diag.code_description.href.endswith("pallas-platform.md")
    related = [
        (Path(r.location.uri).name, r.location.range.start.line, r.message)
        for r in diag.related_information or []
    ]
    chain = (
        "add_one_tpu (./tpu_ops.py:8) lowers only for tpu: its pl.pallas_call at "
        "./tpu_ops.py:9 takes Mosaic TPU params"
    )
    guard = "the if at line 5 lets this lower only for cuda, rocm"
    assert related == [
        ("tpu_ops.py", 7, chain),
        ("tpu_ops.py", 8, chain),
        ("dispatch.py", 4, guard),
    ]
    # nothing else of mypy's output: untyped.py's errors are not published, and the
    # annotation mypy could not read is check's warning, in the log
    assert set(client.diagnostics) == {uri(dispatch)}
    logged = [log.message for log in client.log_messages]
    assert any(
        m.startswith("typed-pallas: warning: cannot read the type annotation at untyped.py:6:12 ")
        for m in logged
    ), logged
    # the first check analysed jax: work-done progress, begun and ended
    kinds = [[type(v).__name__ for v in values] for values in client.progress_reports.values()]
    assert ["WorkDoneProgressBegin", "WorkDoneProgressEnd"] in kinds, kinds


async def test_unsaved_guard_edits_come_and_go(client: LanguageClient, project: Path) -> None:
    dispatch = project / "dispatch.py"
    text = DISPATCH
    # 'gpu' -> 'tpu' keeps the file's size: mypy must still see every edit
    for guard, expected in (("tpu", []), ("gpu", [MESSAGE]), ("tpu", []), ("gpu", [MESSAGE])):
        text = _replace(
            client, dispatch, 4, "'gpu'" if guard == "tpu" else "'tpu'", f"'{guard}'", text
        )
        await wait_until(
            lambda e=expected: _messages(client, dispatch) == e,  # type: ignore[misc]
            f"dispatch.py's findings to be {expected} with the {guard} guard",
        )
    assert dispatch.read_text(encoding="utf-8") == DISPATCH  # the file itself is untouched


async def test_callee_edit_updates_a_closed_caller(client: LanguageClient, project: Path) -> None:
    tpu_ops, caller = project / "tpu_ops.py", project / "caller.py"
    assert _messages(client, caller) == []
    _open(client, tpu_ops)
    line = TPU_OPS.split("\n").index("    return pl.pallas_call(kernel, out_shape=x)(x)")
    _replace(
        client,
        tpu_ops,
        line,
        "out_shape=x)",
        "out_shape=x, compiler_params=pltpu.CompilerParams())",
        TPU_OPS,
    )
    await wait_until(lambda: _messages(client, caller) == [MESSAGE], "caller.py's new finding")
    # closing the unsaved buffer: back to the file on disk, the finding goes
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri(tpu_ops)))
    )
    await wait_until(lambda: _messages(client, caller) == [], "caller.py's finding to go")


async def test_code_actions_explain_and_ignore(client: LanguageClient, project: Path) -> None:
    dispatch = project / "dispatch.py"
    diags = client.diagnostics[uri(dispatch)]
    assert diags, "the guard edits left dispatch.py without its finding"
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri(dispatch)),
            range=diags[0].range,
            context=types.CodeActionContext(diagnostics=list(diags)),
        )
    )
    assert actions is not None
    by_title = {a.title: a for a in actions}
    explain = by_title["Explain pallas-platform (typed-pallas explain pallas-platform)"]
    ignore = by_title["Ignore pallas-platform on this line (# type: ignore[pallas-platform])"]
    assert isinstance(explain, types.Command) and isinstance(ignore, types.CodeAction)
    assert ignore.edit is not None and ignore.edit.changes is not None
    (edit,) = ignore.edit.changes[uri(dispatch)]
    line = "        return tpu_ops.add_one_tpu(x)"
    assert (edit.range.start.line, edit.range.start.character, edit.new_text) == (
        5,
        len(line),
        "  # type: ignore[pallas-platform]",
    )
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(explain.command, explain.arguments)
    )
    await wait_until(lambda: bool(client.shown_documents), "the explanation to be shown")
    shown = client.shown_documents[-1].uri
    assert shown.endswith("pallas-platform.md") and os.path.isfile(shown.removeprefix("file://"))


async def test_broken_configuration_is_a_message(client: LanguageClient, project: Path) -> None:
    pyproject = project / "pyproject.toml"
    pyproject.write_text('[tool.typed-pallas]\nplatforms = ["tpuu"]\n', encoding="utf-8")
    client.text_document_did_save(
        types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri(pyproject)))
    )
    await wait_until(
        lambda: any("tpuu" in m.message for m in client.messages),
        "a message about the configuration",
    )
    (shown,) = [m for m in client.messages if "tpuu" in m.message]
    assert shown.type == types.MessageType.Error
    assert (
        re.search(r"pyproject\.toml", shown.message)
        and "typed-pallas explain configuration" in shown.message
    )
    pyproject.unlink()  # fixed: the server is still there and checks again
    _replace(client, project / "dispatch.py", 4, "'gpu'", "'tpu'", DISPATCH)
    await wait_until(
        lambda: _messages(client, project / "dispatch.py") == [], "a check after the fix"
    )


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    with contextlib.suppress(OSError), open(f"/proc/{pid}/stat", encoding="utf-8") as f:
        return f.read().split(") ")[1][0] != "Z"  # a zombie is a process that has ended
    return True


async def test_shutdown_leaves_no_process(project: Path) -> None:
    client = await start(project)
    dispatch = project / "dispatch.py"
    _open(client, dispatch)
    await wait_until(lambda: bool(client.diagnostics.get(uri(dispatch))), "a finding")
    _replace(client, dispatch, 4, "'gpu'", "'tpu'", DISPATCH)  # a check starts: shut down during it
    await asyncio.sleep(0.5)
    pids = [
        int(m.group(1))
        for log in client.log_messages
        if (m := re.search(r"mypy worker (\d+) started", log.message))
    ]
    assert len(pids) >= 2, [log.message for log in client.log_messages]
    server = client._server
    assert server is not None
    await client.shutdown_session()
    await client.stop()
    assert server.returncode == 0
    await wait_until(lambda: not any(_alive(p) for p in pids), "every mypy worker to end", 10)


async def test_missing_mypy_is_a_message(project: Path) -> None:
    hide_mypy = (
        "import sys; sys.modules['mypy'] = None; from typed_pallas_mypy.cli import main; "
        "sys.exit(main(['lsp']))"
    )
    client = await start(project, command=[sys.executable, "-c", hide_mypy])
    try:
        await wait_until(lambda: bool(client.messages), "a message", 30)
        (shown,) = client.messages
        assert shown.type == types.MessageType.Error
        assert "mypy is not installed here; install it with: pip install" in shown.message
    finally:
        await client.shutdown_session()
        await client.stop()
