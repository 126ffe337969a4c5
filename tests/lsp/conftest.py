"""Fixtures of the language server tests: a small project with a wrong-platform call, and
a client connected to ``typed-pallas lsp`` over stdio (pytest-lsp), one per test module
and route: the server as it runs by default (mypy's fine-grained state in its worker,
once loaded), and with every check a fresh mypy process (``server.INCREMENTAL_ENV=0``).

The mypy cache is the module's own: its first check is a cold one (jax is analysed
once, with work-done progress), the later ones are warm.

Tests wait for events, not times: :func:`check_now` (the server's ``typed-pallas/check``
request, answered once a check that began after it has published its diagnostics),
:func:`ready` (the fine-grained state's log line), :func:`wait_until` (a condition on
what the client received). ``--reverse-order`` runs the tests of this folder backwards:
each must set up what it needs.
"""

from __future__ import annotations

import asyncio
import os
import re
import sys
import time
from collections.abc import AsyncIterator, Callable
from pathlib import Path

import pytest
import pytest_asyncio
from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from typed_pallas_mypy import config
from typed_pallas_mypy.lsp.server import CHECK_REQUEST, INCREMENTAL_ENV


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--reverse-order",
        action="store_true",
        help="run the tests of tests/lsp in reverse order (each sets up what it needs: the "
        "order must not matter; pytest-randomly's -p randomly shuffles them too)",
    )


@pytest.hookimpl(trylast=True)  # after pytest groups the tests by their module's fixtures
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    if not config.getoption("--reverse-order", default=False):
        return
    here = Path(__file__).resolve().parent
    places = [i for i, item in enumerate(items) if here in Path(item.path).resolve().parents]
    for place, item in zip(places, [items[i] for i in reversed(places)], strict=True):
        items[place] = item


#: how long a check may take before a test gives up (a cold one analyses jax: ~30 s, more
#: on a loaded 2-core runner)
CHECK_TIMEOUT_S = 240.0
#: the routes a server checks by: its fine-grained state, or fresh processes only
ROUTES = ("fine-grained", "fresh")
#: the server's log line once its fine-grained state is loaded
READY = "fine-grained checking ready"
#: its log line for each check in that state
FINE_GRAINED_CHECK = "fine-grained check in"
#: its log line when a fine-grained worker starts
FINE_GRAINED_START = "(fine-grained: loading the cache)"

TPU_OPS = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]

def add_one_tpu(x):
    return pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())(x)

def add_one(x):
    return pl.pallas_call(kernel, out_shape=x)(x)
"""

DISPATCH = """\
import jax
import tpu_ops

def run(x):
    if jax.default_backend() == 'gpu':
        return tpu_ops.add_one_tpu(x)
    return x
"""

CALLER = """\
import jax
import tpu_ops

def run(x):
    if jax.default_backend() == 'gpu':
        return tpu_ops.add_one(x)
    return x
"""

#: a module with mypy errors that are not typed-pallas findings (never published), one of
#: them an annotation mypy cannot read (check's warning: in the server's log)
UNTYPED = """\
def f(x: int) -> str:
    return x

y: int = "no"

def g() -> (int, str):
    return 1, ""
"""


def write_project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir(exist_ok=True)
    for name, text in (
        ("tpu_ops.py", TPU_OPS),
        ("dispatch.py", DISPATCH),
        ("caller.py", CALLER),
        ("untyped.py", UNTYPED),
    ):
        (root / name).write_text(text, encoding="utf-8")
    return root


def uri(path: Path) -> str:
    found = from_fs_path(str(path))
    assert found is not None
    return found


def server_command(*args: str) -> list[str]:
    return [sys.executable, "-m", "typed_pallas_mypy.cli", "lsp", *args]


def server_env(route: str = "fine-grained", **extra: str) -> dict[str, str]:
    env = dict(os.environ)
    for name in (config.CONFIG_ENV, config.PLATFORMS_ENV, "MYPYPATH", INCREMENTAL_ENV):
        env.pop(name, None)
    if route == "fresh":
        env[INCREMENTAL_ENV] = "0"
    env.update(extra)
    return env


async def start(
    root: Path,
    *args: str,
    command: list[str] | None = None,
    capabilities: str = "neovim@v0.11.0",
    env: dict[str, str] | None = None,
) -> LanguageClient:
    """A client connected to a new server for the project at ``root``."""
    cfg = ClientServerConfig(
        server_command=command or server_command(*args), server_env=env or server_env()
    )
    client = await cfg.start()
    assert isinstance(client, LanguageClient)
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities(capabilities),
            root_uri=uri(root),
            workspace_folders=[types.WorkspaceFolder(uri=uri(root), name=root.name)],
        )
    )
    return client


async def check_now(client: LanguageClient, timeout: float = CHECK_TIMEOUT_S) -> int:
    """Ask the server to check now (``typed-pallas/check``); return once a check that
    began after the request has ended: what the client sent before is in it, and its
    diagnostics have arrived (they come before the answer). The number of checks ended."""
    answer = await asyncio.wait_for(client.protocol.send_request_async(CHECK_REQUEST, {}), timeout)
    checks = answer["checks"] if isinstance(answer, dict) else answer.checks
    assert isinstance(checks, int) and checks > 0, answer
    return checks


async def wait_until(
    condition: Callable[[], bool], what: str, timeout: float = CHECK_TIMEOUT_S
) -> None:
    """Wait for ``condition`` (the client's state after some notifications)."""
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise AssertionError(f"timed out after {timeout:.0f} s waiting for {what}")
        await asyncio.sleep(0.05)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(tmp_path_factory.mktemp("lsp-project"))


def logged(client: LanguageClient, text: str) -> list[str]:
    """The server's log lines that contain ``text``."""
    return [m.message for m in client.log_messages if text in m.message]


_STARTED = re.compile(r"mypy worker (\d+) started \(fine-grained: loading the cache\)")
_READY = re.compile(r"fine-grained checking ready in .* \(mypy worker (\d+)\)")


async def ready(client: LanguageClient) -> None:
    """Wait until the server's last fine-grained worker has loaded mypy's state (a worker
    the server stopped while it loaded, when the configuration changed, never says so).

    Checks after this one run in that state only when they are for the same
    configuration: wait after a check with the test's own (:func:`settled`)."""

    def last_is_ready() -> bool:
        started = [m[1] for log in client.log_messages if (m := _STARTED.search(log.message))]
        done = {m[1] for log in client.log_messages if (m := _READY.search(log.message))}
        return bool(started) and started[-1] in done

    await wait_until(last_is_ready, "the fine-grained state to load")


async def settled(client: LanguageClient, route: str) -> None:
    """Check the test's starting state (a configuration another test left may start
    another fine-grained worker), and on the fine-grained route wait until that state is
    loaded: the test's next checks of edits run in it."""
    await check_now(client)
    if route == "fine-grained":
        await ready(client)


@pytest.fixture(scope="module", params=ROUTES)
def route(request: pytest.FixtureRequest) -> str:
    found: str = request.param
    return found


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(project: Path, route: str) -> AsyncIterator[LanguageClient]:
    """The module's server session for ``route`` (Neovim 0.11's capabilities)."""
    client = await start(project, env=server_env(route))
    yield client
    await client.shutdown_session()
    await client.stop()
