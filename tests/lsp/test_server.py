"""``typed-pallas lsp`` end to end: a real LSP client (pytest-lsp) over stdio.

One server session for the module and route (``conftest.client``, Neovim 0.11's
capabilities): the default one, whose edits are checked in mypy's fine-grained state once
it is loaded, and one whose every check is a fresh mypy process; the first session's
first check is cold (work-done progress). Each test sets up what it needs on that
session (``editor``: no buffer open, the project's files and no ``pyproject.toml`` on
disk) and waits for events, never for a time: ``typed-pallas/check`` answers once a
check that began after it has published its diagnostics (``conftest.check_now``), the
fine-grained state's log line says it is loaded. So any order works, and any one test
alone (``-k``; ``--reverse-order`` runs the file backwards). Then sessions of their own:
shutdown leaves no process, a mypy whose internals the fine-grained route cannot use
falls back to fresh processes (and says so), an environment without mypy gets a
message, and a file that opts out of mypy is checked with the option.
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
    CALLER,
    DISPATCH,
    FINE_GRAINED_CHECK,
    READY,
    TPU_OPS,
    check_now,
    logged,
    ready,
    server_env,
    settled,
    start,
    uri,
    wait_until,
    write_project,
)
from typed_pallas_mypy.lsp.server import INCREMENTAL_ENV

pytestmark = [pytest.mark.slow, pytest.mark.asyncio(loop_scope="module")]

MESSAGE = "Compiler params for platform tpu cannot be used for gpu lowering."


class Editor:
    """What the client has open on one server session, each buffer's text and version."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.texts: dict[Path, str] = {}
        self.versions: dict[Path, int] = {}

    def open(self, path: Path, text: str | None = None) -> None:
        if path in self.texts:
            self.close(path)
        self.texts[path] = path.read_text(encoding="utf-8") if text is None else text
        self.versions[path] = self.versions.get(path, 0) + 1
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                types.TextDocumentItem(
                    uri=uri(path),
                    language_id="python",
                    version=self.versions[path],
                    text=self.texts[path],
                )
            )
        )

    def replace(self, path: Path, line: int, old: str, new: str) -> None:
        """Replace ``old`` by ``new`` on ``line`` (0-based) of the open buffer, unsaved."""
        lines = self.texts[path].split("\n")
        column = lines[line].index(old)
        lines[line] = lines[line][:column] + new + lines[line][column + len(old) :]
        self.texts[path] = "\n".join(lines)
        self.versions[path] += 1
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                types.VersionedTextDocumentIdentifier(uri=uri(path), version=self.versions[path]),
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

    def close(self, path: Path) -> None:
        del self.texts[path]
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(types.TextDocumentIdentifier(uri(path)))
        )

    def save(self, path: Path) -> None:
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(uri(path)))
        )


@pytest.fixture(scope="module")
def session_editor(client: LanguageClient) -> Editor:
    """The module's session's buffers (one per route, as its client)."""
    return Editor(client)


@pytest.fixture
def editor(session_editor: Editor, project: Path) -> Editor:
    """The session as every test starts it: no buffer open, the project's files as written
    and no ``pyproject.toml`` on disk (the server sees it all at the test's first check)."""
    for path in list(session_editor.texts):
        session_editor.close(path)
    (project / "pyproject.toml").unlink(missing_ok=True)
    originals = {"tpu_ops.py": TPU_OPS, "dispatch.py": DISPATCH, "caller.py": CALLER}
    if any((project / n).read_text(encoding="utf-8") != t for n, t in originals.items()):
        write_project(project)
    return session_editor


def _messages(client: LanguageClient, path: Path) -> list[str]:
    return [d.message.split("\n")[0] for d in client.diagnostics.get(uri(path), [])]


async def test_open_gives_the_finding_with_its_chain(
    client: LanguageClient, project: Path, editor: Editor
) -> None:
    dispatch = project / "dispatch.py"
    editor.open(dispatch)
    await check_now(client)
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
    assert {u for u, found in client.diagnostics.items() if found} == {uri(dispatch)}
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
    """How many fine-grained checks were given ``module`` (their log line names the
    changed modules: ``... 2 changed module(s) (dispatch, tpu_ops)``)."""
    changed = [re.search(r"\(([\w., ]+)\)$", m) for m in logged(client, FINE_GRAINED_CHECK)]
    return len([m for m in changed if m and module in m[1].split(", ")])


async def test_unsaved_guard_edits_come_and_go(
    client: LanguageClient, project: Path, route: str, editor: Editor
) -> None:
    dispatch = project / "dispatch.py"
    editor.open(dispatch)
    await settled(client, route)
    before = _fine_grained_checks(client, "dispatch")
    # 'gpu' -> 'tpu' keeps the file's size: mypy must still see every edit
    for guard, expected in (("tpu", []), ("gpu", [MESSAGE]), ("tpu", []), ("gpu", [MESSAGE])):
        editor.replace(dispatch, 4, "'gpu'" if guard == "tpu" else "'tpu'", f"'{guard}'")
        await check_now(client)
        assert _messages(client, dispatch) == expected, guard
    assert dispatch.read_text(encoding="utf-8") == DISPATCH  # the file itself is untouched
    if route == "fine-grained":  # each edit: a fine-grained check of dispatch alone
        assert _fine_grained_checks(client, "dispatch") - before >= 4, logged(
            client, FINE_GRAINED_CHECK
        )
    else:
        assert not logged(client, FINE_GRAINED_CHECK) and not logged(client, READY)
        assert logged(client, f"off ({INCREMENTAL_ENV}=0): every check runs in a fresh")


async def test_callee_edit_updates_a_closed_caller(
    client: LanguageClient, project: Path, route: str, editor: Editor
) -> None:
    tpu_ops, caller = project / "tpu_ops.py", project / "caller.py"
    await settled(client, route)
    assert _messages(client, caller) == []
    before = _fine_grained_checks(client, "tpu_ops")
    editor.open(tpu_ops)
    line = TPU_OPS.split("\n").index("    return pl.pallas_call(kernel, out_shape=x)(x)")
    editor.replace(
        tpu_ops, line, "out_shape=x)", "out_shape=x, compiler_params=pltpu.CompilerParams())"
    )
    await check_now(client)
    assert _messages(client, caller) == [MESSAGE]
    # closing the unsaved buffer: back to the file on disk, the finding goes
    editor.close(tpu_ops)
    await check_now(client)
    assert _messages(client, caller) == []
    if route == "fine-grained":  # mypy was given tpu_ops: caller.py was checked through it
        assert _fine_grained_checks(client, "tpu_ops") - before >= 2, logged(
            client, FINE_GRAINED_CHECK
        )


async def test_code_actions_explain_and_ignore(
    client: LanguageClient, project: Path, editor: Editor
) -> None:
    dispatch = project / "dispatch.py"
    editor.open(dispatch)
    await check_now(client)
    diags = client.diagnostics[uri(dispatch)]
    assert [d.message.split("\n")[0] for d in diags] == [MESSAGE]
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
    shown_before = len(client.shown_documents)
    await client.workspace_execute_command_async(
        types.ExecuteCommandParams(explain.command, explain.arguments)
    )
    await wait_until(
        lambda: len(client.shown_documents) > shown_before, "the explanation to be shown"
    )
    shown = client.shown_documents[-1].uri
    assert shown.endswith("pallas-platform.md") and os.path.isfile(shown.removeprefix("file://"))


async def test_broken_configuration_is_a_message(
    client: LanguageClient, project: Path, editor: Editor
) -> None:
    pyproject, dispatch = project / "pyproject.toml", project / "dispatch.py"
    editor.open(dispatch)
    shown_before = len(client.messages)
    pyproject.write_text('[tool.typed-pallas]\nplatforms = ["tpuu"]\n', encoding="utf-8")
    editor.save(pyproject)
    await check_now(client)
    (shown,) = [m for m in client.messages[shown_before:] if "tpuu" in m.message]
    assert shown.type == types.MessageType.Error
    assert (
        re.search(r"pyproject\.toml", shown.message)
        and "typed-pallas explain configuration" in shown.message
    )
    pyproject.unlink()  # fixed: the server is still there and checks again
    editor.replace(dispatch, 4, "'gpu'", "'tpu'")
    await check_now(client)
    assert _messages(client, dispatch) == []


async def test_a_configuration_edit_changes_the_findings(
    client: LanguageClient, project: Path, route: str, editor: Editor
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
            editor.save(pyproject)
            await check_now(client)
            assert _messages(client, tpu_ops) == expected, platforms
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
    editor = Editor(client)
    dispatch = project / "dispatch.py"
    editor.open(dispatch)
    await check_now(client)
    assert _messages(client, dispatch) == [MESSAGE]
    await wait_until(lambda: bool(logged(client, "(fine-grained")), "the fine-grained worker")
    editor.replace(dispatch, 4, "'gpu'", "'tpu'")
    # a check starts at once (the request is handled before the shutdown): shut down during
    # it; the request is answered when the server closes
    pending = asyncio.ensure_future(check_now(client))
    await asyncio.sleep(0)  # one turn of the loop: the request is sent before the shutdown
    pids = [
        int(m.group(1))
        for log in client.log_messages
        if (m := re.search(r"mypy worker (\d+) started", log.message))
    ]
    assert len(pids) >= 3, [log.message for log in client.log_messages]
    server = client._server
    assert server is not None
    await client.shutdown_session()
    pending.cancel()  # answered at the close, or cut off by it: either is fine
    with contextlib.suppress(BaseException):
        await pending
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
        editor = Editor(client)
        dispatch = project / "dispatch.py"
        editor.open(dispatch)
        await check_now(client)
        assert _messages(client, dispatch) == [MESSAGE]
        unavailable = (
            "fine-grained checking is not available with this mypy "
            "(mypy.build has no DEPS_META_FILE): every check runs in a fresh mypy process"
        )
        await wait_until(lambda: bool(logged(client, unavailable)), "the fallback's log line")
        editor.replace(dispatch, 4, "'gpu'", "'tpu'")
        await check_now(client)
        assert _messages(client, dispatch) == []
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
        await check_now(client, 60)
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
        editor = Editor(client)
        editor.open(opted)
        await check_now(client)
        assert _messages(client, opted) == [MESSAGE]
        (diag,) = client.diagnostics[uri(opted)]
        assert diag.range.start.line == 6  # its line in the file (the copy moves none)
        editor.replace(opted, 5, "'gpu'", "'tpu'")
        await check_now(client)
        assert _messages(client, opted) == []
    finally:
        await client.shutdown_session()
        await client.stop()
    client = await start(tmp_path, env=server_env("fresh"))
    try:
        Editor(client).open(opted)
        await check_now(client)
        note = "note: 1 file not checked (opted.py): it opts out of mypy"
        assert logged(client, note), [m.message for m in client.log_messages]
        assert _messages(client, opted) == []
    finally:
        await client.shutdown_session()
        await client.stop()
