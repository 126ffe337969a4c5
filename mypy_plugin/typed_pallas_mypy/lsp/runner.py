"""Running mypy for the language server: pre-started workers and shadow files.

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

__all__ = ["WORKER_MODULE", "Shadows", "Workers"]

WORKER_MODULE: Final = "typed_pallas_mypy.lsp.worker"
#: shadow modification times: tenths of a second since the epoch, modulo this (1970-2001)
SHADOW_CLOCK_SPAN: Final = 10**9
#: how long a worker may take to end after it was asked to, before it is killed
STOP_GRACE_S: Final = 2.0


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
        """Write ``text`` as the shadow of ``source``; returns the shadow's path."""
        data = text.encode("utf-8")
        avoid = {self._last_size.get(source)}
        with contextlib.suppress(OSError):
            avoid.add(os.stat(source).st_size)
        pad = 0
        while len(data) + pad in avoid:
            pad += 1
        data += b"\n" * pad
        shadow = self.path_for(source)
        os.makedirs(os.path.dirname(shadow), exist_ok=True)
        with open(shadow, "wb") as f:
            f.write(data)
        tick = self._tick()
        os.utime(shadow, (tick, tick))
        self._last_size[source] = len(data)
        return shadow

    def remove_all(self) -> None:
        shutil.rmtree(self.folder, ignore_errors=True)
