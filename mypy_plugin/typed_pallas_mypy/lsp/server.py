"""The ``typed-pallas lsp`` language server (pygls): findings of ``typed-pallas check`` as
diagnostics, with code actions.

When it checks: once the editor has connected (the analysis of jax starts before the
first file is opened), when a file is opened or saved (after 50 ms, so that a batch of
opened files is one check), and while a buffer is edited after
:data:`DEBOUNCE_FINE_GRAINED_S` without a change (:data:`DEBOUNCE_S` until mypy's
fine-grained state is loaded). One check runs at a time; an edit during a check starts
another after it. Every check checks the same paths as ``typed-pallas check`` with the
server's arguments (default: the project's root), with one shadow file per unsaved
buffer (``runner.Shadows``), so a finding a change causes in another module (a caller
of an edited function) shows there too, open or not.

How: in mypy's fine-grained state kept by a worker (``runner.Incremental``, started in
the background after the first check), which re-checks what an edit changes; until it
is loaded, and whenever it cannot check, in a fresh mypy process (``runner.Workers``).
:data:`INCREMENTAL_ENV` ``=0`` turns the first off.

What it publishes, per file: the findings ``session.outcome`` selects, each one a
diagnostic with source ``typed-pallas``, its error code, a ``codeDescription`` link to
the code's explanation (the documentation's URL when the installed package names one,
else the page that ships in the package), the notes that name places as
``relatedInformation`` (``text.note_locations``: the callee chain, the guard), and the
other notes in the message. A file whose findings are gone gets an empty list. Nothing
else of mypy's output is published, so the server runs next to Pylance, basedpyright,
pyrefly or ty without repeating their errors.

The request ``typed-pallas/check`` (:data:`CHECK_REQUEST`) checks now and answers
once a check that began after it has ended, its diagnostics published: what the editor
sent before the request is in that check. Tests wait on it rather than on a quiet time.

Code actions on a finding: show its explanation (the ``typed-pallas.explain`` command:
the page opens in the editor through ``window/showDocument``, or its first paragraph
is shown as a message), and add ``# type: ignore[CODE]`` on the line.

What the user is told: a cold cache (the first analysis of jax, about half a minute) is
work-done progress; a configuration the plugin refuses, missing paths or a missing mypy
is one error message (``window/showMessage``: the line ``typed-pallas check`` prints),
shown once until it changes, and the server keeps running and checks again on the next
save; a check mypy could not complete (a syntax error while typing) keeps the findings
shown and logs why (``window/logMessage``).

Shutdown (``shutdown``, ``exit``, or the editor closing the connection) ends the mypy
workers and removes the shadow files: no process is left behind.

What it does not do: run mypy itself (``runner``), decide what a check reports
(``session``), or read the workspace's files other than the open buffers and the
places notes name.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from importlib import resources
from typing import Any, Final

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import from_fs_path, to_fs_path
from pygls.workspace import TextDocument

from typed_pallas_mypy import config
from typed_pallas_mypy.cli.explain import error_doc, project_urls
from typed_pallas_mypy.cli.findings import MypyMessage, cache_is_warm
from typed_pallas_mypy.lsp import session, text
from typed_pallas_mypy.lsp.runner import Incremental, Shadows, Workers

__all__ = [
    "CHECK_REQUEST",
    "DEBOUNCE_FINE_GRAINED_S",
    "DEBOUNCE_S",
    "EXPLAIN_COMMAND",
    "INCREMENTAL_ENV",
    "SOURCE",
    "TypedPallasServer",
    "build_server",
]

SOURCE: Final = "typed-pallas"
EXPLAIN_COMMAND: Final = "typed-pallas.explain"
#: the request that checks now and answers once that check's diagnostics are published
#: (``{"checks": N}``, the number of checks ended so far): for tests and editor commands
#: that need to know a check is done, not to guess it from a quiet time
CHECK_REQUEST: Final = "typed-pallas/check"
#: quiet time after the last change before an unsaved buffer is checked, while each
#: check is a fresh mypy process (about half a second of work)
DEBOUNCE_S: Final = 0.4
#: the same once mypy's fine-grained state is loaded (a check of an edit: a few
#: hundredths of a second)
DEBOUNCE_FINE_GRAINED_S: Final = 0.1
#: delay of the check after an open or a save (files opened together: one check)
SOON_S: Final = 0.05
PROGRESS_TITLE: Final = "typed-pallas"
#: ``0`` here: every check runs in a fresh mypy process (mypy's fine-grained mode unused)
INCREMENTAL_ENV: Final = "TYPED_PALLAS_LSP_INCREMENTAL"
_SEVERITY: Final = {
    "error": types.MessageType.Error,
    "warning": types.MessageType.Warning,
    "info": types.MessageType.Info,
}


def explain_href(code: str) -> str | None:
    """Where a code's explanation is: the documentation's URL when the installed package's
    metadata names one, else the page shipped in the package (a file URI); None when the
    code has no page."""
    if error_doc(code) is None:
        return None
    base = next(
        (u for label, u in project_urls().items() if label.lower() == "documentation"), None
    )
    if base:
        return f"{base.rstrip('/')}/errors.md#{code.lower()}"
    page = resources.files("typed_pallas_mypy").joinpath("errors", f"{code}.md")
    if not page.is_file():
        return None
    found: str | None = from_fs_path(os.path.abspath(str(page)))
    return found


def _search_roots() -> list[str]:
    """Where a note's relative path may start: the project's root, then every folder on
    ``sys.path`` (site-packages: the checker runs in this interpreter)."""
    roots = [os.getcwd()]
    roots += [p for p in sys.path if p and os.path.isdir(p) and p not in roots]
    return roots


class TypedPallasServer(LanguageServer):
    """The server: its options, its mypy workers, what it has published."""

    def __init__(self, options: session.Options) -> None:
        super().__init__(
            "typed-pallas", config.package_version(),
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
        )  # fmt: skip
        self.options = options
        self.workdir = tempfile.mkdtemp(prefix="typed-pallas-lsp-")
        self.shadows = Shadows(os.path.join(self.workdir, "shadows"))
        self.workers = Workers(self.log)
        self.incremental = Incremental(self.log)
        if os.environ.get(INCREMENTAL_ENV, "") == "0":
            self.incremental.disabled = f"{INCREMENTAL_ENV}=0"
        #: uri -> diagnostics published last
        self.published: dict[str, list[types.Diagnostic]] = {}
        self._timer: asyncio.TimerHandle | None = None
        self._timer_when = 0.0
        self._timer_debounce = False
        self._task: asyncio.Task[None] | None = None
        self._again = False
        self._problem: str | None = None
        self._progress_count = 0
        self._closed = False
        #: files that had a shadow in the last check
        self._shadowed: set[str] = set()
        #: the last note on files that opt out of mypy, logged once while it stays
        self._opted_out_note: str | None = None
        #: checks begun and ended so far, and the ``typed-pallas/check`` requests waiting
        #: for a check to end: (the number of ended checks that answers it, the answer)
        self.checks_begun = 0
        self.checks_ended = 0
        self._waiting: list[tuple[int, asyncio.Future[int]]] = []

    # ------------------------------------------------------------------ messages

    def log(self, message: str, kind: types.MessageType = types.MessageType.Log) -> None:
        with contextlib.suppress(Exception):  # before initialize or after the connection closed
            self.window_log_message(types.LogMessageParams(kind, f"typed-pallas: {message}"))

    def tell(self, message: str, severity: session.Severity) -> None:
        """Show a problem once (again only after another one, or after a good check);
        information (nothing to check) goes to the log only."""
        self.log(message, _SEVERITY[severity])
        if severity == "info" or message == self._problem:
            return
        self._problem = message
        self.window_show_message(
            types.ShowMessageParams(_SEVERITY[severity], f"typed-pallas: {message}")
        )

    # ------------------------------------------------------------------ scheduling

    @property
    def debounce_s(self) -> float:
        """The quiet time before an unsaved buffer is checked: shorter once an edit's
        check is fine-grained."""
        return DEBOUNCE_FINE_GRAINED_S if self.incremental.ready else DEBOUNCE_S

    def schedule(self, delay: float, *, debounce: bool = False) -> None:
        """Check after ``delay`` seconds; a debounced request moves a debounced timer later."""
        if self._closed:
            return
        loop = asyncio.get_running_loop()
        when = loop.time() + delay
        if self._timer is not None:
            if not self._timer_debounce and self._timer_when <= when:
                return  # a sooner check covers this one
            self._timer.cancel()
        self._timer = loop.call_later(delay, self._fire)
        self._timer_when, self._timer_debounce = when, debounce

    def _fire(self) -> None:
        self._timer = None
        if self._task is not None and not self._task.done():
            self._again = True
            return
        self._task = asyncio.ensure_future(self._checks())

    async def _checks(self) -> None:
        while not self._closed:
            self._again = False
            self.checks_begun += 1
            try:
                await self.check_once()
            except Exception as e:  # a bug of the server: told, and the server goes on
                if self._closed:
                    return
                self.tell(f"internal error while checking: {type(e).__name__}: {e}", "error")
            finally:
                self.checks_ended += 1
                self._answer_waiting()
            if not self._again:
                return

    def _answer_waiting(self, everyone: bool = False) -> None:
        still = []
        for target, future in self._waiting:
            if future.done():
                continue
            if everyone or self.checks_ended >= target:
                future.set_result(self.checks_ended)
            else:
                still.append((target, future))
        self._waiting = still

    async def check_now(self) -> int:
        """Check now and return once a check that began after this call has ended (its
        diagnostics are published by then); the number of checks ended so far.

        A check running now saw the editor's state of when it began, so the answer waits
        for the next one: what the editor sent before this request is in it."""
        if self._closed:
            return self.checks_ended
        target = self.checks_begun + 1  # the next check to begin (none runs in between)
        future: asyncio.Future[int] = asyncio.get_running_loop().create_future()
        self._waiting.append((target, future))
        self.schedule(0.0)
        return await future

    # ------------------------------------------------------------------ one check

    def _open_buffers(self) -> dict[str, str]:
        """file -> text of every open buffer whose text is not the file's."""
        buffers: dict[str, str] = {}
        for uri, doc in list(self.workspace.text_documents.items()):
            path = to_fs_path(uri) if uri.startswith("file:") else None
            if not path or not path.endswith((".py", ".pyi")) or not os.path.isfile(path):
                continue
            try:
                with open(path, encoding="utf-8", newline="") as f:
                    on_disk = f.read()
            except (OSError, UnicodeDecodeError):
                on_disk = None
            if doc.source == on_disk:
                continue
            buffers[os.path.abspath(path)] = doc.source
        return buffers

    async def check_once(self) -> None:
        planned = session.plan(self.options, self.workdir)
        if isinstance(planned, session.Stop):
            self.tell(planned.message, planned.severity)
            if planned.findings is not None:
                self.publish(planned.findings)
            return
        session.with_buffers(planned, self._open_buffers(), self.shadows.write)
        shadows = planned.shadows
        self._shadowed = {source for source, _ in shadows}
        cwd = os.getcwd()
        run = await self.incremental.run(planned, cwd)
        if run is None:
            token: str | None = None
            if planned.cold:
                token = await self._begin_progress(planned.slow_notice)
            try:
                run = await self.workers.run(planned.fresh_command, planned.env, cwd)
            finally:
                if token is not None:
                    self.work_done_progress.end(token, types.WorkDoneProgressEnd(message="done"))
            if not self._closed and cache_is_warm(planned.cache_dir):
                await self.incremental.start(planned, cwd)
        if self._closed:
            return
        result = session.outcome(planned, run)
        for line in result.log:
            self.log(line)
        if result.opted_out_note != self._opted_out_note:
            self._opted_out_note = result.opted_out_note
            if result.opted_out_note is not None:
                self.log(result.opted_out_note, types.MessageType.Info)
        if result.findings is None:
            return
        if result.warning is not None:
            self.tell(result.warning, "warning")
        else:
            self._problem = None
        self.publish(result.findings)

    async def _begin_progress(self, notice: str) -> str | None:
        self.log(notice, types.MessageType.Info)
        window = self.client_capabilities.window
        if window is None or not window.work_done_progress:
            return None
        self._progress_count += 1
        token = f"typed-pallas-check-{os.getpid()}-{self._progress_count}"
        try:
            await self.work_done_progress.create_async(token)
        except Exception:
            return None
        self.work_done_progress.begin(
            token,
            types.WorkDoneProgressBegin(title=PROGRESS_TITLE, message=notice, cancellable=False),
        )
        return token

    # ------------------------------------------------------------------ diagnostics

    def _line_text(self, path: str, line: int) -> str:
        doc = self._document(path)
        if doc is not None:
            lines = doc.lines
            return lines[line - 1].rstrip("\r\n") if 1 <= line <= len(lines) else ""
        found = text.note_locations(f"{path}:{line}", path, [])
        return found[0].text if found else ""

    def _document(self, path: str) -> TextDocument | None:
        uri = from_fs_path(path)
        if uri is None or uri not in self.workspace.text_documents:
            return None
        return self.workspace.get_text_document(uri)

    def _units(self, line_text: str, column: int) -> int:
        """A 0-based column in characters as the client counts (UTF-16 by default)."""
        units: int = self.workspace.position_codec.client_num_units(line_text[:column])
        return units

    def diagnostic(self, finding: MypyMessage, roots: Sequence[str]) -> types.Diagnostic:
        path = os.path.abspath(finding.file)
        line = max(finding.line, 1)
        line_text = self._line_text(path, line)
        start = max(finding.column - 1, 0)
        end_line = line
        if finding.end_line is not None and finding.end_line > line and finding.end_column:
            end_line, end = finding.end_line, finding.end_column - 1
            end_text = self._line_text(path, end_line)
        else:
            end = (finding.end_column or 0) - 1
            if end <= start + 1:
                end = text.word_end(line_text, start)
            end_text = line_text
        related: list[types.DiagnosticRelatedInformation] = []
        unplaced: list[str] = []
        for note in finding.notes:
            places = text.note_locations(note, finding.file, roots)
            if not places:
                unplaced.append(note)
            for place in places:
                uri = from_fs_path(place.path)
                if uri is None:
                    continue
                width = self._units(place.text, len(place.text))
                span = types.Range(
                    types.Position(place.line - 1, 0), types.Position(place.line - 1, width)
                )
                related.append(types.DiagnosticRelatedInformation(types.Location(uri, span), note))
        href = explain_href(finding.code) if finding.code else None
        return types.Diagnostic(
            range=types.Range(
                types.Position(line - 1, self._units(line_text, start)),
                types.Position(end_line - 1, self._units(end_text, end)),
            ),
            message="\n".join([finding.message, *unplaced]),
            severity=(
                types.DiagnosticSeverity.Error
                if finding.severity == "error"
                else types.DiagnosticSeverity.Information
            ),
            code=finding.code,
            code_description=types.CodeDescription(href=href) if href else None,
            source=SOURCE,
            related_information=related or None,
        )

    def publish(self, findings: Sequence[MypyMessage]) -> None:
        roots = _search_roots()
        by_uri: dict[str, list[types.Diagnostic]] = {}
        for finding in findings:
            if not finding.file:
                continue
            uri = from_fs_path(os.path.abspath(finding.file))
            if uri is None:
                continue
            by_uri.setdefault(uri, []).append(self.diagnostic(finding, roots))
        for uri in set(self.published) - set(by_uri):
            by_uri[uri] = []
        for uri, diagnostics in by_uri.items():
            if not diagnostics and not self.published.get(uri):
                continue
            self.text_document_publish_diagnostics(
                types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
            )
        self.published = {uri: d for uri, d in by_uri.items() if d}

    # ------------------------------------------------------------------ code actions

    def code_actions(
        self, params: types.CodeActionParams
    ) -> list[types.Command | types.CodeAction]:
        actions: list[types.Command | types.CodeAction] = []
        uri = params.text_document.uri
        doc = self.workspace.get_text_document(uri)
        seen: set[tuple[str, int]] = set()
        for diag in params.context.diagnostics:
            if diag.source != SOURCE or not isinstance(diag.code, str):
                continue
            code, line = diag.code, diag.range.start.line
            if (code, line) in seen:
                continue
            seen.add((code, line))
            # a plain Command (a code action may be one): clients that tell the two kinds
            # apart by the type of their "command" field read it right
            actions.append(
                types.Command(
                    title=f"Explain {code} (typed-pallas explain {code})",
                    command=EXPLAIN_COMMAND,
                    arguments=[code],
                )
            )
            edit = text.ignore_edit(doc.source, line + 1, code)
            if edit is None:
                continue
            start, end, new_text = edit
            line_text = doc.lines[line].rstrip("\r\n") if line < len(doc.lines) else ""
            span = types.Range(
                types.Position(line, self._units(line_text, start)),
                types.Position(line, self._units(line_text, end)),
            )
            actions.append(
                types.CodeAction(
                    title=f"Ignore {code} on this line (# type: ignore[{code}])",
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diag],
                    edit=types.WorkspaceEdit(changes={uri: [types.TextEdit(span, new_text)]}),
                )
            )
        return actions

    def explain(self, code: str) -> None:
        doc = error_doc(code)
        href = explain_href(code)
        if doc is None:
            self.tell(f"no explanation for {code!r}; try `typed-pallas explain {code}`", "warning")
            return
        window = self.client_capabilities.window
        can_show = window is not None and window.show_document is not None
        if href is not None and can_show:
            self.window_show_document(
                types.ShowDocumentParams(uri=href, external=not href.startswith("file:"))
            )
            return
        paragraphs = [p.strip() for p in doc.split("\n\n") if p.strip()]
        summary = "\n\n".join(paragraphs[:2])
        self.window_show_message(
            types.ShowMessageParams(
                types.MessageType.Info,
                f"{summary}\n\n(the whole text: `typed-pallas explain {code}`)",
            )
        )

    # ------------------------------------------------------------------ shutdown

    def close_now(self) -> None:
        """What :meth:`close` does, without waiting (the event loop is ending)."""
        self._closed = True
        self._answer_waiting(everyone=True)
        if self._timer is not None:
            self._timer.cancel()
        self.workers.kill_now()
        self.incremental.kill_now()
        shutil.rmtree(self.workdir, ignore_errors=True)

    async def close(self) -> None:
        """End the workers and remove the server's files; idempotent."""
        if self._closed:
            return
        self._closed = True
        self._answer_waiting(everyone=True)
        if self._timer is not None:
            self._timer.cancel()
        await self.workers.close()
        await self.incremental.close()
        if self._task is not None and not self._task.done():
            self._task.cancel()
            with contextlib.suppress(BaseException):
                await self._task
        self.shadows.remove_all()
        shutil.rmtree(self.workdir, ignore_errors=True)


def _root_of(params: types.InitializeParams) -> str | None:
    if params.workspace_folders:
        return to_fs_path(params.workspace_folders[0].uri)
    if params.root_uri:
        return to_fs_path(params.root_uri)
    return params.root_path


def build_server(options: session.Options) -> TypedPallasServer:
    """The server with its handlers registered."""
    server = TypedPallasServer(options)

    @server.feature(types.INITIALIZE)
    def initialize(ls: TypedPallasServer, params: types.InitializeParams) -> None:
        root = _root_of(params)
        if root and os.path.isdir(root):
            os.chdir(root)

    @server.feature(types.INITIALIZED)
    def initialized(ls: TypedPallasServer, params: types.InitializedParams) -> None:
        ls.log(f"checking {' '.join(ls.options.paths) or '.'} in {os.getcwd()}")
        if ls.incremental.disabled is not None:
            ls.log(
                f"mypy's fine-grained mode is off ({ls.incremental.disabled}): every check "
                "runs in a fresh mypy process"
            )
        ls.schedule(0.0)

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: TypedPallasServer, params: types.DidOpenTextDocumentParams) -> None:
        ls.schedule(SOON_S)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    def did_save(ls: TypedPallasServer, params: types.DidSaveTextDocumentParams) -> None:
        ls.schedule(SOON_S)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    def did_change(ls: TypedPallasServer, params: types.DidChangeTextDocumentParams) -> None:
        ls.schedule(ls.debounce_s, debounce=True)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    def did_close(ls: TypedPallasServer, params: types.DidCloseTextDocumentParams) -> None:
        path = to_fs_path(params.text_document.uri)
        if path and os.path.abspath(path) in ls._shadowed:
            ls.schedule(SOON_S)  # its unsaved text is gone: back to the file's

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix]),
    )
    def code_action(
        ls: TypedPallasServer, params: types.CodeActionParams
    ) -> list[types.Command | types.CodeAction]:
        return ls.code_actions(params)

    @server.feature(CHECK_REQUEST)
    async def check_now(ls: TypedPallasServer, params: Any) -> dict[str, int]:
        return {"checks": await ls.check_now()}

    @server.command(EXPLAIN_COMMAND)
    def explain(ls: TypedPallasServer, *args: Any) -> None:
        code = args[0] if args and isinstance(args[0], str) else "pallas-platform"
        ls.explain(code)

    @server.feature(types.SHUTDOWN)
    async def shutdown(ls: TypedPallasServer, params: None) -> None:
        await ls.close()

    @server.feature(types.EXIT)
    def exit_(ls: TypedPallasServer, params: None) -> None:
        # synchronous: pygls ends the process right after (an async handler here keeps
        # pygls's stdin reader waiting, and the process with it)
        ls.close_now()

    return server


def serve(options: session.Options) -> int:
    """Serve over stdio until the editor disconnects; 0."""
    server = build_server(options)
    try:
        server.start_io()
    finally:
        # the connection closed without shutdown (the editor went away): end the workers
        server.close_now()
    return 0
