"""Fixtures of the language server tests: a small project with a wrong-platform call, and
a client connected to ``typed-pallas lsp`` over stdio (pytest-lsp), one per test module.

The mypy cache is the module's own: its first check is a cold one (jax is analysed
once, with work-done progress), the later ones are warm.
"""

from __future__ import annotations

import asyncio
import os
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

#: how long a check may take before a test gives up (a cold one analyses jax: ~30 s, more
#: on a loaded 2-core runner)
CHECK_TIMEOUT_S = 240.0

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


def server_env() -> dict[str, str]:
    env = dict(os.environ)
    for name in (config.CONFIG_ENV, config.PLATFORMS_ENV, "MYPYPATH"):
        env.pop(name, None)
    return env


async def start(
    root: Path, *args: str, command: list[str] | None = None, capabilities: str = "neovim@v0.11.0"
) -> LanguageClient:
    """A client connected to a new server for the project at ``root``."""
    cfg = ClientServerConfig(
        server_command=command or server_command(*args), server_env=server_env()
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


@pytest_asyncio.fixture(scope="module", loop_scope="module")
async def client(project: Path) -> AsyncIterator[LanguageClient]:
    """The module's server session (Neovim 0.11's capabilities)."""
    client = await start(project)
    yield client
    await client.shutdown_session()
    await client.stop()
