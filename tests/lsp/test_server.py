"""``typed-pallas lsp`` end to end: a real LSP client (pytest-lsp) over stdio.

One server session for the module and route (``conftest.client``, Neovim 0.11's
capabilities): the default one, whose edits are checked in mypy's fine-grained state once
it is loaded, and one whose every check is a fresh mypy process; the first session's
first check is cold (work-done progress). The tests run in file order on each session:
open, unsaved edits of the guard, an edit of a callee module, code actions, a broken
configuration; then sessions of their own: shutdown leaves no process, a mypy whose
internals the fine-grained route cannot use falls back to fresh processes (and says so),
and an environment without mypy gets a message.
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

from tests.lsp.conftest import (
    DISPATCH,
    FINE_GRAINED_CHECK,
    READY,
    TPU_OPS,
    logged,
    ready,
    server_env,
    start,
    uri,
    wait_until,
)
from typed_pallas_mypy.lsp.server import INCREMENTAL_ENV

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
    lines = [log.message for log in client.log_messages]
    assert any(
        m.startswith("typed-pallas: warning: cannot read the type annotation at untyped.py:6:12 ")
        for m in lines
    ), lines
    # a first check that analysed jax (the module's first session): work-done progress,
    # begun and ended
    if logged(client, "first analysis of jax"):
        kinds = [[type(v).__name__ for v in values] for values in client.progress_reports.values()]
        assert ["WorkDoneProgressBegin", "WorkDoneProgressEnd"] in kinds, kinds


def _fine_grained_checks(client: LanguageClient, module: str) -> int:
    return len([m for m in logged(client, FINE_GRAINED_CHECK) if f"({module}" in m])


async def test_unsaved_guard_edits_come_and_go(
    client: LanguageClient, project: Path, route: str
) -> None:
    if route == "fine-grained":
        await ready(client)
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
    if route == "fine-grained":  # each edit: a fine-grained check of dispatch alone
        assert _fine_grained_checks(client, "dispatch") >= 4, logged(client, FINE_GRAINED_CHECK)
    else:
        assert not logged(client, FINE_GRAINED_CHECK) and not logged(client, READY)
        assert logged(client, f"off ({INCREMENTAL_ENV}=0): every check runs in a fresh")


async def test_callee_edit_updates_a_closed_caller(
    client: LanguageClient, project: Path, route: str
) -> None:
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
    if route == "fine-grained":  # mypy was given tpu_ops: caller.py was checked through it
        assert _fine_grained_checks(client, "tpu_ops") >= 2, logged(client, FINE_GRAINED_CHECK)


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


async def test_a_configuration_edit_changes_the_findings(
    client: LanguageClient, project: Path, route: str
) -> None:
    """The plugin's configuration is read when mypy's state loads: an edit of it (the
    file's content, the same file) reaches the findings on either route."""
    pyproject, tpu_ops = project / "pyproject.toml", project / "tpu_ops.py"
    steps = (('["tpu", "gpu"]', []), ('["gpu"]', [MESSAGE]), ('["tpu", "gpu"]', []))
    try:
        for platforms, expected in steps:
            if route == "fine-grained":
                await ready(client)
            pyproject.write_text(f"[tool.typed-pallas]\nplatforms = {platforms}\n")
            client.text_document_did_save(
                types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri(pyproject)))
            )
            await wait_until(
                lambda e=expected: _messages(client, tpu_ops) == e,  # type: ignore[misc]
                f"tpu_ops.py's findings to be {expected} with platforms = {platforms}",
            )
    finally:
        pyproject.unlink()


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
    await wait_until(lambda: bool(logged(client, "(fine-grained")), "the fine-grained worker")
    _replace(client, dispatch, 4, "'gpu'", "'tpu'", DISPATCH)  # a check starts: shut down during it
    await asyncio.sleep(0.5)
    pids = [
        int(m.group(1))
        for log in client.log_messages
        if (m := re.search(r"mypy worker (\d+) started", log.message))
    ]
    assert len(pids) >= 3, [log.message for log in client.log_messages]
    server = client._server
    assert server is not None
    await client.shutdown_session()
    await client.stop()
    assert server.returncode == 0
    await wait_until(lambda: not any(_alive(p) for p in pids), "every mypy worker to end", 10)


#: a sitecustomize that takes from mypy a name the fine-grained route uses (another
#: mypy's internals), in every process the server starts
INCOMPATIBLE_MYPY = "import mypy.build\ndel mypy.build.DEPS_META_FILE\n"


async def test_incompatible_mypy_falls_back_to_fresh_processes(
    project: Path, tmp_path: Path
) -> None:
    (tmp_path / "sitecustomize.py").write_text(INCOMPATIBLE_MYPY, encoding="utf-8")
    client = await start(project, env=server_env(PYTHONPATH=str(tmp_path)))
    try:
        dispatch = project / "dispatch.py"
        _open(client, dispatch)
        await wait_until(lambda: _messages(client, dispatch) == [MESSAGE], "the finding")
        unavailable = (
            "fine-grained checking is not available with this mypy "
            "(mypy.build has no DEPS_META_FILE): every check runs in a fresh mypy process"
        )
        await wait_until(lambda: bool(logged(client, unavailable)), "the fallback's log line")
        _replace(client, dispatch, 4, "'gpu'", "'tpu'", DISPATCH)
        await wait_until(lambda: _messages(client, dispatch) == [], "the edit's check")
        assert not logged(client, FINE_GRAINED_CHECK)
    finally:
        await client.shutdown_session()
        await client.stop()


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


#: ``dispatch.py`` in a file that opts out of mypy, with an error of mypy's own
OPTED_OUT = "# mypy: ignore-errors\n" + DISPATCH + "\ny: int = 'no'\n"


async def test_a_file_that_opts_out_of_mypy_is_checked_with_the_option(tmp_path: Path) -> None:
    """``--check-opted-out``: the finding in a file with ``# mypy: ignore-errors``, and
    nothing else of mypy's there; an unsaved fix of it is checked too. Without the
    option: no finding, and check's note in the log."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "tpu_ops.py").write_text(TPU_OPS, encoding="utf-8")
    opted = tmp_path / "opted.py"
    opted.write_text(OPTED_OUT, encoding="utf-8")
    client = await start(tmp_path, "--check-opted-out")
    try:
        _open(client, opted)
        await wait_until(lambda: _messages(client, opted) == [MESSAGE], "the finding")
        (diag,) = client.diagnostics[uri(opted)]
        assert diag.range.start.line == 6  # its line in the file (the copy moves none)
        _replace(client, opted, 5, "'gpu'", "'tpu'", OPTED_OUT)
        await wait_until(lambda: _messages(client, opted) == [], "the unsaved fix's check")
    finally:
        await client.shutdown_session()
        await client.stop()
    client = await start(tmp_path, env=server_env("fresh"))
    try:
        _open(client, opted)
        note = "note: 1 file not checked (opted.py): it opts out of mypy"
        await wait_until(lambda: bool(logged(client, note)), "the note")
        await asyncio.sleep(1)  # the check's diagnostics follow its log lines
        assert _messages(client, opted) == []
    finally:
        await client.shutdown_session()
        await client.stop()
