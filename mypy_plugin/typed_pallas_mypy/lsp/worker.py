"""One mypy run in an interpreter started ahead of time (``python -m typed_pallas_mypy.lsp.worker``).

The language server keeps one of these waiting: it has already imported mypy and the
plugin (about 0.2 s of every run), so an edit costs only mypy's own work. It reads one
JSON line from stdin, ``{"command": [python, "-m", "mypy", ARGS...]}`` (the command
:func:`typed_pallas_mypy.cli.findings.mypy_command` builds for ``typed-pallas check``),
runs mypy with ARGS in this process (``mypy.api.run``: the same ``main`` as
``python -m mypy``), writes one JSON object ``{"stdout", "stderr", "status"}`` to stdout
and ends with ``os._exit`` (mypy's own command line skips the interpreter's teardown
too: freeing mypy's objects takes longer than many warm runs).

Its environment and current folder are the check's, set by the server when it starts
the worker. End of stdin before a request (the server shut down, or died) ends it at
once with status 0.

What it does not do: choose mypy's arguments (the server builds them with the CLI's
functions), parse mypy's output, or run more than once (one process per run, as the CLI).
"""

from __future__ import annotations

import json
import os
import sys
from typing import Final

#: what a request's command must start with after the interpreter
MYPY_MODULE: Final = ("-m", "mypy")


def _reply(stdout: str, stderr: str, status: int) -> None:
    sys.stdout.write(json.dumps({"stdout": stdout, "stderr": stderr, "status": status}))
    sys.stdout.flush()


def main() -> None:
    """Import mypy and the plugin, wait for one request, answer it, exit."""
    import mypy.api

    import typed_pallas_mypy.main  # noqa: F401  (the plugin mypy loads: imported ahead)

    line = sys.stdin.readline()
    if not line.strip():
        os._exit(0)
    try:
        command = json.loads(line)["command"]
        if not isinstance(command, list) or tuple(command[1:3]) != MYPY_MODULE:
            raise ValueError(f"not a mypy command: {command!r}")
        arguments = [str(a) for a in command[3:]]
    except (ValueError, KeyError, TypeError) as e:
        _reply("", f"typed-pallas lsp worker: bad request ({e})\n", 2)
        os._exit(2)
    stdout, stderr, status = mypy.api.run(arguments)
    _reply(stdout, stderr, status)
    os._exit(0)


if __name__ == "__main__":
    main()
