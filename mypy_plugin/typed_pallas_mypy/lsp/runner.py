"""Running mypy for the language server: mypy's state kept between checks, pre-started
workers and shadow files.

* :class:`Incremental` keeps mypy's fine-grained state in one long-lived worker
  (``typed_pallas_mypy.lsp.worker --incremental``, ``finegrained``): an edit re-checks
  what it changes. It starts in the background after a fresh process has checked (the
  cache is then warm, and loading it and checking the project's modules takes about as
  long as a fresh run, or longer): until it is ready, and whenever it cannot check (this
  mypy lacks what it uses, mypy refused the command line, a file was added, it crashed),
  :meth:`run` returns None and the check runs in a fresh process. A worker that must start again
  (a file added or removed, the configuration changed) starts in the background; one
  that crashed twice is not started again, nor one this mypy cannot run.
* :class:`Workers` runs one mypy command at a time in a worker process
  (``typed_pallas_mypy.lsp.worker``) that was started ahead of time with the check's
  environment and folder, and starts the next one as soon as a run ends; a run
  gives a :class:`~typed_pallas_mypy.cli.findings.MypyRun`, parsed with the CLI's own
  parsers. :meth:`Workers.close` ends every worker (the one waiting and a running one)
  and waits for them: nothing is left behind.
* :class:`Shadows` writes the text of unsaved buffers to files that mypy reads instead
  of the files on disk (``--shadow-file SOURCE SHADOW``). mypy takes a file as unchanged
  when its size and modification time (in whole seconds) are those in its cache, and then
  compares the hash of the *source* file, not the shadow's: a shadow whose size equals
  the one mypy recorded would be taken for the text it recorded. So each shadow gets a
  size that is neither the file's size on disk nor the previous shadow's (one or two
  blank lines at the end, which change no line of the code), and a modification time of
  its own: a tenth of a second count in 1970-2001, which no edited file has and which
  grows with every write.

What it does not do: decide mypy's arguments or what to report (``session``), or talk
to the editor (``server``).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import shutil
import signal
import sys
import time
from collections.abc import Callable, Mapping, Sequence
from typing import Final

from typed_pallas_mypy.cli.findings import MypyRun, parse_mypy_json, parse_mypy_text
from typed_pallas_mypy.lsp.session import Plan

__all__ = ["WORKER_MODULE", "Incremental", "Shadows", "Workers"]

WORKER_MODULE: Final = "typed_pallas_mypy.lsp.worker"
#: shadow modification times: tenths of a second since the epoch, modulo this (1970-2001)
SHADOW_CLOCK_SPAN: Final = 10**9
#: how long a worker may take to end after it was asked to, before it is killed
STOP_GRACE_S: Final = 2.0
#: the incremental worker's option (``worker.INCREMENTAL``)
INCREMENTAL_OPTION: Final = "--incremental"
#: crashes of mypy's fine-grained mode after which every check is a fresh process
MAX_CRASHES: Final = 2
#: the longest reply line read from a worker (mypy's output for a large project)
REPLY_LIMIT: Final = 1 << 30

Key = tuple[str, tuple[tuple[str, str], ...], tuple[str, ...], str]


class Incremental:
    """mypy's fine-grained state in one long-lived worker, for one command line."""

    def __init__(self, log: Callable[[str], None] = lambda _: None) -> None:
        self._log = log
        self._proc: asyncio.subprocess.Process | None = None
        self._key: Key | None = None
        #: the first request of the worker, sent in the background
        self._first: asyncio.Task[dict[str, object] | None] | None = None
        self._ready = False
        self._crashes = 0
        self._closed = False
        self._tasks: set[asyncio.Task[None]] = set()
        #: why it is not used (None: it is, or will be once started)
        self.disabled: str | None = None
        #: every worker process started
        self.started: list[int] = []

    @staticmethod
    def _key_of(planned: Plan, cwd: str) -> Key:
        """What a worker is for: another folder, environment, command line or plugin
        configuration needs another (the plugin reads its configuration once)."""
        return (cwd, tuple(sorted(planned.env.items())), tuple(planned.command),
                planned.plugin_config)  # fmt: skip

    @property
    def ready(self) -> bool:
        return self._ready and self._proc is not None and self._proc.returncode is None

    async def run(self, planned: Plan, cwd: str) -> MypyRun | None:
        """The check in the worker; None when a fresh process must run it (the worker is
        not ready, or not started: :meth:`start`)."""
        if self._closed or self.disabled is not None:
            return None
        if self._key_of(planned, cwd) != self._key:
            await self._stop()
        if not self.ready:
            return None
        start = time.perf_counter()
        reply = await self._ask(planned)
        run = self._read(reply, planned.command)
        if run is not None and reply is not None:
            updated = reply.get("updated")
            names = [str(m) for m in updated] if isinstance(updated, list) else []
            shown = ", ".join(names[:5]) + (", ..." if len(names) > 5 else "")
            self._log(
                f"fine-grained check in {time.perf_counter() - start:.3f} s: "
                f"{len(names)} changed module(s){f' ({shown})' if names else ''}"
            )
        return run

    async def start(self, planned: Plan, cwd: str) -> None:
        """Start the worker in the background, unless it runs or is not used: after a
        fresh process has checked (the cache is warm, and the first diagnostics do not
        wait for the cache load)."""
        if self._closed or self.disabled is not None or self._proc is not None:
            return
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", WORKER_MODULE, INCREMENTAL_OPTION,
            stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE, env=dict(planned.env), cwd=cwd,
            limit=REPLY_LIMIT,
        )  # fmt: skip
        self._proc, self._key, self._ready = proc, self._key_of(planned, cwd), False
        self.started.append(proc.pid)
        self._log(f"mypy worker {proc.pid} started (fine-grained: loading the cache)")
        self._keep(asyncio.ensure_future(self._drain(proc)))
        self._first = asyncio.ensure_future(self._first_reply(proc, planned))

    async def _first_reply(
        self, proc: asyncio.subprocess.Process, planned: Plan
    ) -> dict[str, object] | None:
        start = time.perf_counter()
        reply = await self._ask(planned, proc)
        if proc is not self._proc or self._closed:
            return reply
        if reply is not None and "stdout" in reply:
            self._ready = True
            self._log(
                f"fine-grained checking ready in {time.perf_counter() - start:.1f} s "
                f"(mypy worker {proc.pid}): edits re-check what they change"
            )
        elif reply is not None and "fresh" in reply:
            # mypy refused the command line before loading anything: counted as a
            # failure, so that a command it always refuses is not tried at every check
            why = f"mypy refused the command line: {reply['fresh']}"
            self._read({"crashed": why}, planned.command)
        else:
            self._read(reply, planned.command)
        return reply

    def _keep(self, task: asyncio.Task[None]) -> None:
        """Keep a reference to a background task until it is done."""
        self._tasks.add(task)
        task.add_done_callback(self._tasks.discard)

    async def _drain(self, proc: asyncio.subprocess.Process) -> None:
        """What the worker prints outside a request (a warning at import): the log."""
        assert proc.stderr is not None
        while line := await proc.stderr.readline():
            self._log(f"mypy worker {proc.pid}: {line.decode('utf-8', 'replace').rstrip()}")

    async def _ask(
        self, planned: Plan, proc: asyncio.subprocess.Process | None = None
    ) -> dict[str, object] | None:
        """Send one request and read its reply; None when the worker ended."""
        proc = proc or self._proc
        if proc is None or proc.stdin is None or proc.stdout is None:
            return None
        shadows = [list(pair) for pair in planned.shadows]
        request = {"command": list(planned.command), "shadows": shadows}
        try:
            proc.stdin.write((json.dumps(request) + "\n").encode("utf-8"))
            await proc.stdin.drain()
            line = await proc.stdout.readline()
        except (ConnectionError, OSError):
            return None
        try:
            reply = json.loads(line.decode("utf-8", "replace"))
        except ValueError:
            return None
        return reply if isinstance(reply, dict) else None

    def _read(self, reply: dict[str, object] | None, command: Sequence[str]) -> MypyRun | None:
        """The run a reply gives, or None (a fresh process checks), after acting on why."""
        if reply is not None and "stdout" in reply:
            return _parse_reply(list(command), 0, json.dumps(reply).encode("utf-8"), b"")
        if reply is not None and "fresh" in reply:
            self._log(f"this check runs in a fresh mypy process: {reply['fresh']}")
            return None
        if reply is not None and "unavailable" in reply:
            self.disabled = str(reply["unavailable"])
            self._log(
                f"fine-grained checking is not available with this mypy ({self.disabled}): "
                "every check runs in a fresh mypy process"
            )
        elif reply is not None and "restart" in reply:
            self._log(f"fine-grained checking starts again: {reply['restart']}")
        else:
            self._crashes += 1
            why = str(reply["crashed"]) if reply is not None and "crashed" in reply else "it ended"
            self._log(f"mypy's fine-grained mode failed ({why.rstrip()})")
            if self._crashes >= MAX_CRASHES:
                self.disabled = f"it failed {self._crashes} times"
                self._log("every check runs in a fresh mypy process from now on")
        self._ready = False
        proc, self._proc, self._key = self._proc, None, None
        if proc is not None:
            self._keep(asyncio.ensure_future(_end(proc)))
        return None

    async def _stop(self) -> None:
        proc, self._proc, self._key, self._ready = self._proc, None, None, False
        if self._first is not None and not self._first.done():
            self._first.cancel()
        if proc is not None:
            await _end(proc)

    def kill_now(self) -> None:
        """End the worker without an event loop (the server's loop has ended)."""
        self._closed = True
        proc = self._proc
        if proc is not None and proc.returncode is None:
            with contextlib.suppress(OSError):
                os.kill(proc.pid, signal.SIGKILL)

    async def close(self) -> None:
        """End the worker and wait for it."""
        self._closed = True
        await self._stop()


async def _end(proc: asyncio.subprocess.Process) -> None:
    """End a worker: end of input, then killed if it does not end in time."""
    if proc.returncode is not None:
        return
    if proc.stdin is not None:
        proc.stdin.close()
    try:
        await asyncio.wait_for(proc.wait(), STOP_GRACE_S)
    except TimeoutError:
        proc.kill()
        await proc.wait()


class Workers:
    """One mypy run at a time, each in a fresh process started before it is needed."""

    def __init__(self, log: Callable[[str], None] = lambda _: None) -> None:
        self._log = log
        self._spare: asyncio.subprocess.Process | None = None
        self._spare_key: tuple[str, tuple[tuple[str, str], ...]] | None = None
        self._running: asyncio.subprocess.Process | None = None
        self._closed = False
        #: every worker process started (their ids are in the server's log)
        self.started: list[int] = []

    async def _start(self, env: Mapping[str, str], cwd: str) -> asyncio.subprocess.Process:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            WORKER_MODULE,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=dict(env),
            cwd=cwd,
        )
        self.started.append(proc.pid)
        self._log(f"mypy worker {proc.pid} started")
        return proc

    @staticmethod
    def _key(env: Mapping[str, str], cwd: str) -> tuple[str, tuple[tuple[str, str], ...]]:
        return (cwd, tuple(sorted(env.items())))

    async def prestart(self, env: Mapping[str, str], cwd: str) -> None:
        """Start the worker for the next run now, unless one with this environment waits."""
        key = self._key(env, cwd)
        if self._closed or (self._spare is not None and self._spare_key == key):
            return
        await self._stop(self._spare)
        self._spare = await self._start(env, cwd)
        self._spare_key = key

    async def run(self, command: Sequence[str], env: Mapping[str, str], cwd: str) -> MypyRun:
        """Run ``command`` (``python -m mypy ...``) in a worker; parse what it gave."""
        if self._closed:
            raise RuntimeError("the mypy workers are closed")
        await self.prestart(env, cwd)
        proc, self._spare, self._spare_key = self._spare, None, None
        assert proc is not None
        self._running = proc
        request = json.dumps({"command": list(command)}) + "\n"
        try:
            out, err = await proc.communicate(request.encode("utf-8"))
        finally:
            self._running = None
        if not self._closed:
            await self.prestart(env, cwd)
        return _parse_reply(list(command), proc.returncode, out, err)

    async def _stop(self, proc: asyncio.subprocess.Process | None) -> None:
        if proc is None or proc.returncode is not None:
            return
        if proc.stdin is not None:
            proc.stdin.close()  # a waiting worker ends on end of input
        try:
            await asyncio.wait_for(proc.wait(), STOP_GRACE_S)
        except TimeoutError:
            proc.kill()  # a running one is killed
            await proc.wait()

    def kill_now(self) -> None:
        """End every worker without an event loop (the server's loop has ended)."""
        self._closed = True
        for proc in (self._running, self._spare):
            if proc is not None and proc.returncode is None:
                with contextlib.suppress(OSError):
                    os.kill(proc.pid, signal.SIGKILL)

    async def close(self) -> None:
        """End every worker and wait for them."""
        self._closed = True
        running, spare = self._running, self._spare
        self._spare = None
        if running is not None and running.returncode is None:
            running.kill()
            await running.wait()
        await self._stop(spare)


def _parse_reply(command: list[str], returncode: int | None, out: bytes, err: bytes) -> MypyRun:
    """The worker's JSON answer as a MypyRun; a worker that gave none (a crash, killed)
    is a run that did not complete (exit status 2, what it printed kept)."""
    stderr = err.decode("utf-8", "replace")
    try:
        reply = json.loads(out.decode("utf-8", "replace"))
        stdout, mypy_stderr, status = reply["stdout"], reply["stderr"], int(reply["status"])
    except (ValueError, KeyError, TypeError):
        stdout = out.decode("utf-8", "replace")
        mypy_stderr = f"the mypy worker ended with status {returncode} and no answer\n"
        status = 2
    findings, other = parse_mypy_json(stdout)
    from_stderr, rest = parse_mypy_text(mypy_stderr + stderr)
    leftover = "".join(line + "\n" for line in rest)
    return MypyRun(command, status, findings + from_stderr, other, leftover)


class Shadows:
    """The shadow files of unsaved buffers, in one folder of the server's own."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._last_size: dict[str, int] = {}
        self._last_text: dict[str, str] = {}
        self._last_tick = 0

    def _tick(self) -> int:
        tick = (time.time_ns() // 10**8) % SHADOW_CLOCK_SPAN
        if tick <= self._last_tick:
            tick = self._last_tick + 1
        self._last_tick = tick
        return tick

    def path_for(self, source: str) -> str:
        digest = hashlib.sha256(os.path.abspath(source).encode("utf-8")).hexdigest()[:16]
        return os.path.join(self.folder, digest, os.path.basename(source))

    def write(self, source: str, text: str) -> str:
        """Write ``text`` as the shadow of ``source``, unless its shadow has that text
        already; returns the shadow's path."""
        shadow = self.path_for(source)
        if self._last_text.get(source) == text and os.path.isfile(shadow):
            return shadow
        data = text.encode("utf-8")
        avoid = {self._last_size.get(source)}
        with contextlib.suppress(OSError):
            avoid.add(os.stat(source).st_size)
        pad = 0
        while len(data) + pad in avoid:
            pad += 1
        data += b"\n" * pad
        os.makedirs(os.path.dirname(shadow), exist_ok=True)
        with open(shadow, "wb") as f:
            f.write(data)
        tick = self._tick()
        os.utime(shadow, (tick, tick))
        self._last_size[source] = len(data)
        self._last_text[source] = text
        return shadow

    def remove_all(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
