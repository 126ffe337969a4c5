"""The language server's mypy processes (``python -m typed_pallas_mypy.lsp.worker``).

Two kinds, both started by the server ahead of time with the check's environment and
folder, both speaking one JSON object a line on stdin and stdout:

* ``python -m typed_pallas_mypy.lsp.worker`` runs mypy once: it has already imported
  mypy and the plugin (about 0.2 s of every run), reads one request
  ``{"command": [python, "-m", "mypy", ARGS...]}`` (the command
  :func:`typed_pallas_mypy.cli.findings.mypy_command` builds for ``typed-pallas
  check``), runs mypy with ARGS in this process (``mypy.api.run``: the same ``main`` as
  ``python -m mypy``), answers ``{"stdout", "stderr", "status"}`` and ends with
  ``os._exit`` (mypy's own command line skips the interpreter's teardown too: freeing
  mypy's objects takes longer than many warm runs). End of input before a request ends
  it at once.
* ``python -m typed_pallas_mypy.lsp.worker --incremental`` keeps mypy's state between
  checks (``finegrained.Incremental``): each request ``{"command": [...], "shadows":
  [[file, shadow file], ...]}`` gets ``{"stdout", "stderr", "status", "updated"}``
  (``updated``: the modules given to mypy as changed), or, when it
  cannot be checked here, one of ``{"unavailable": why}`` (this mypy cannot keep its
  state: every check is a fresh process from now on), ``{"fresh": why}`` (a fresh
  process checks this one: mypy refused the command line, and says why there),
  ``{"restart": why}`` (a file was added or removed, the options changed: a new
  worker starts from the cache; this one ends) or ``{"crashed": traceback}`` (mypy
  raised; this one ends). A request with another command than the first one is a
  restart. End of input ends it.

What mypy or the plugin print while a request runs is the reply's ``stderr``: the
reply channel is the process's original stdout, and nothing else writes there.

What it does not do: choose mypy's arguments (the server builds them with the CLI's
functions) or parse mypy's output.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import sys
import traceback
from typing import Any, Final, TextIO

#: what a request's command must start with after the interpreter
MYPY_MODULE: Final = ("-m", "mypy")
#: the option that selects the long-lived worker
INCREMENTAL: Final = "--incremental"


def _reply(channel: TextIO, reply: dict[str, Any]) -> None:
    channel.write(json.dumps(reply) + "\n")
    channel.flush()


def _arguments(request: Any) -> list[str]:
    """The mypy arguments of a request; ValueError for one that is not a mypy command."""
    command = request["command"]
    if not isinstance(command, list) or tuple(command[1:3]) != MYPY_MODULE:
        raise ValueError(f"not a mypy command: {command!r}")
    return [str(a) for a in command[3:]]


def run_once() -> None:
    """Import mypy and the plugin, wait for one request, answer it, exit."""
    import mypy.api

    import typed_pallas_mypy.main  # noqa: F401  (the plugin mypy loads: imported ahead)

    line = sys.stdin.readline()
    if not line.strip():
        os._exit(0)
    try:
        arguments = _arguments(json.loads(line))
    except (ValueError, KeyError, TypeError) as e:
        _reply(
            sys.stdout,
            {"stdout": "", "stderr": f"typed-pallas lsp worker: bad request ({e})\n", "status": 2},
        )
        os._exit(2)
    stdout, stderr, status = mypy.api.run(arguments)
    _reply(sys.stdout, {"stdout": stdout, "stderr": stderr, "status": status})
    os._exit(0)


def serve_incremental() -> None:
    """Answer requests with one ``finegrained.Incremental`` until end of input."""
    channel = os.fdopen(os.dup(sys.stdout.fileno()), "w", encoding="utf-8")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())  # stray output: not on the channel
    sys.stdout = sys.stderr
    from typed_pallas_mypy.lsp import finegrained

    why = finegrained.unsupported()
    import typed_pallas_mypy.main  # noqa: F401  (the plugin mypy loads: imported ahead)

    state: finegrained.Incremental | None = None
    for line in sys.stdin:
        if not line.strip():
            continue
        try:
            request = json.loads(line)
            arguments = _arguments(request)
            shadows = {str(source): str(shadow) for source, shadow in request.get("shadows", [])}
        except (ValueError, KeyError, TypeError) as e:
            _reply(channel, {"fresh": f"bad request ({e})"})
            continue
        if why is not None:
            _reply(channel, {"unavailable": why})
            continue
        if state is not None and arguments != state.arguments:
            _reply(channel, {"restart": "another mypy command line"})
            break
        captured = io.StringIO()
        try:
            with contextlib.redirect_stdout(captured), contextlib.redirect_stderr(captured):
                if state is None:
                    state = finegrained.Incremental(arguments)
                result = state.check(shadows)
        except finegrained.NotApplicable as e:
            _reply(channel, {"fresh": str(e)})
            continue
        except finegrained.Restart as e:
            _reply(channel, {"restart": str(e)})
            break
        except finegrained.Unsupported as e:
            why = str(e)
            _reply(channel, {"unavailable": why})
            continue
        except BaseException:  # mypy's own crash, or a bug here: this state is lost
            _reply(channel, {"crashed": traceback.format_exc()})
            break
        _reply(
            channel,
            {
                "stdout": result.stdout,
                "stderr": captured.getvalue(),
                "status": result.status,
                "updated": state.updated,
            },
        )
    channel.close()
    os._exit(0)


def main() -> None:
    if INCREMENTAL in sys.argv[1:]:
        serve_incremental()
    else:
        run_once()


if __name__ == "__main__":
    main()
