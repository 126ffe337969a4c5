"""``typed-pallas lsp``: edit-to-diagnostics latency against ``dmypy run`` on the same edit,
and the first diagnostics after open on a cold and a warm cache.

Usage (from the repository root; needs the ``test`` extra: pytest-lsp is the client)::

    .venv312/bin/python benchmarks/lsp_latency.py [--modules 40] [--edits 15] [--json FILE]

The project, generated in a temporary folder: ``tpu_ops.py`` (a function whose
``pl.pallas_call`` takes Mosaic TPU params), ``dispatch.py`` (calls it under a
``jax.default_backend() == 'gpu'`` guard: one finding) and ``--modules`` more modules
that import jax and ``tpu_ops`` and call it under the right guard (no finding), so
that every check reads a project of a realistic size from the cache.

The edit: ``dispatch.py``'s guard alternates between ``'gpu'`` (the finding) and
``'tpus'`` (none: an unknown platform, and a size change, which ``dmypy`` needs to see
two edits within one second: it takes a file of the same size and modification second
as unchanged).

Measured in this run; the saved edits go in rounds (the server, then ``dmypy run``, then a
fresh mypy process, on the same edit), so a change of the host's load hits all three:

* **cold**: a new server on an empty cache folder: from ``didOpen`` of ``dispatch.py`` to
  its diagnostics (jax is analysed first);
* **warm**: a new server on that cache: the same;
* **save**: as an editor saves: ``didChange``, the file written, then ``didSave``: from
  ``didSave`` to the diagnostics that show the edit (the median of ``--edits``);
* **change**: the same edit as an unsaved ``didChange``: includes the server's
  debounce (``server.DEBOUNCE_S``);
* **baseline, dmypy run**: the same file written, then ``dmypy run`` (the daemon
  warmed first with two runs): wall time of the command. The daemon cannot run
  ``typed-pallas check``'s preset (it refuses ``follow_imports = silent``), so it runs
  what ``typed-pallas init`` writes for mypy (the plugin, ``check_untyped_defs``), the
  way the VS Code mypy extension runs it;
* **fresh mypy process**: ``python -m mypy`` with the preset on a copy of the warm
  cache, as ``typed-pallas check`` runs it (no worker started ahead): what the server
  would take without its workers.

Printed: the medians and the ratios save / dmypy, change / dmypy, fresh process / dmypy.

What it does not do: assert a time, or measure memory.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities

from typed_pallas._versions import installed_version
from typed_pallas_mypy.cli.findings import mypy_command, preset_config
from typed_pallas_mypy.lsp.server import DEBOUNCE_S

TPU_OPS = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]

def add_one_tpu(x):
    return pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())(x)
"""
DISPATCH = """\
import jax
import tpu_ops

def run(x):
    if jax.default_backend() == {guard!r}:
        return tpu_ops.add_one_tpu(x)
    return x
"""
FILLER = """\
import jax
import jax.numpy as jnp
import tpu_ops

def step_{i}(x):
    if jax.default_backend() == 'tpu':
        return tpu_ops.add_one_tpu(x)
    return jnp.tanh(x) * {i}
"""
GUARDS = ("tpus", "gpu")  # no finding, one finding
INIT_MYPY = "[mypy]\nplugins = typed_pallas_mypy\ncheck_untyped_defs = True\n"


def write_project(root: Path, modules: int) -> None:
    (root / ".git").mkdir(parents=True)
    (root / "tpu_ops.py").write_text(TPU_OPS)
    (root / "dispatch.py").write_text(DISPATCH.format(guard="gpu"))
    for i in range(modules):
        (root / f"mod_{i:03d}.py").write_text(FILLER.format(i=i))


def uri(path: Path) -> str:
    found: str | None = from_fs_path(str(path))
    assert found is not None
    return found


async def wait_for(client: LanguageClient, key: str, findings: int, timeout: float = 600) -> float:
    """Seconds until ``key``'s published diagnostics have ``findings`` entries."""
    start = time.perf_counter()
    while len(client.diagnostics.get(key, ())) != findings or key not in client.diagnostics:
        if time.perf_counter() - start > timeout:
            raise TimeoutError(f"no diagnostics with {findings} finding(s) for {key}")
        await asyncio.sleep(0.002)
    return time.perf_counter() - start


async def session(root: Path, cache: Path) -> LanguageClient:
    cfg = ClientServerConfig(
        server_command=[
            sys.executable,
            "-m",
            "typed_pallas_mypy.cli",
            "lsp",
            "--cache-dir",
            str(cache),
        ]
    )
    client = await cfg.start()
    assert isinstance(client, LanguageClient)
    await client.initialize_session(
        types.InitializeParams(
            capabilities=client_capabilities("neovim@v0.11.0"), root_uri=uri(root)
        )
    )
    return client


async def first_diagnostics(root: Path, cache: Path) -> tuple[LanguageClient, float]:
    client = await session(root, cache)
    dispatch = root / "dispatch.py"
    start = time.perf_counter()
    client.text_document_did_open(
        types.DidOpenTextDocumentParams(
            types.TextDocumentItem(uri(dispatch), "python", 1, dispatch.read_text())
        )
    )
    await wait_for(client, uri(dispatch), 1)
    return client, time.perf_counter() - start


class Dmypy:
    """``dmypy run`` on the project, with what ``typed-pallas init`` writes for mypy."""

    def __init__(self, root: Path, work: Path) -> None:
        ini = work / "init-mypy.ini"
        ini.write_text(INIT_MYPY)
        self.root = root
        self.base = [sys.executable, "-m", "mypy.dmypy", "--status-file", str(work / "dmypy.json")]
        self.run_command = [*self.base, "run", "--timeout", "900", "--", "--config-file", str(ini),
                            "--cache-dir", str(work / "dmypy-cache"), "-O", "json", "."]  # fmt: skip

    def run(self, guard: str) -> float:
        start = time.perf_counter()
        done = subprocess.run(self.run_command, cwd=self.root, capture_output=True, text=True)
        elapsed = time.perf_counter() - start
        found = done.stdout.count('"code": "pallas-platform"')
        if found != (guard == "gpu"):
            raise RuntimeError(
                f"dmypy gave {found} findings with the {guard} guard:\n{done.stdout}"
            )
        return elapsed

    def kill(self) -> None:
        subprocess.run([*self.base, "kill"], cwd=self.root, capture_output=True)


def fresh_process(root: Path, ini: Path, cache: Path, guard: str) -> float:
    """``python -m mypy`` as ``typed-pallas check`` runs it (no worker started ahead)."""
    start = time.perf_counter()
    done = subprocess.run(
        mypy_command(str(ini), str(cache), ["."]), cwd=root, capture_output=True, text=True
    )
    elapsed = time.perf_counter() - start
    if done.stdout.count('"code": "pallas-platform"') != (guard == "gpu"):
        raise RuntimeError(f"mypy missed the {guard} edit:\n{done.stdout}")
    return elapsed


async def measure(modules: int, edits: int) -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="typed-pallas-lsp-bench-"))
    root, cache = work / "proj", work / "cache"
    write_project(root, modules)
    dispatch = root / "dispatch.py"
    key = uri(dispatch)
    times: dict[str, list[float]] = {"save": [], "dmypy": [], "fresh": [], "change": []}
    dmypy = Dmypy(root, work)
    try:
        client, cold = await first_diagnostics(root, cache)
        await client.shutdown_session()
        await client.stop()  # type: ignore[no-untyped-call]  # pytest-lsp leaves it untyped
        client, warm = await first_diagnostics(root, cache)
        # the fresh process gets a copy of the warm cache: it must see each edit too
        fresh_cache = work / "fresh-cache"
        shutil.copytree(cache, fresh_cache)
        ini = work / "preset.ini"
        ini.write_text(preset_config(own_modules=sorted(p.stem for p in root.glob("*.py"))))
        for n in range(2):  # the daemon's cold start, then one warm run
            dispatch.write_text(DISPATCH.format(guard=GUARDS[n % 2]))
            dmypy.run(GUARDS[n % 2])
        version = 1
        # rounds: the same edit to the server (saved), to dmypy, to a fresh mypy process
        for n in range(edits):
            guard = GUARDS[n % 2]
            text = DISPATCH.format(guard=guard)
            version += 1  # as an editor saves: the buffer changes, is written, then didSave
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    types.VersionedTextDocumentIdentifier(version=version, uri=key),
                    [types.TextDocumentContentChangeWholeDocument(text)],
                )
            )
            dispatch.write_text(text)
            start = time.perf_counter()
            client.text_document_did_save(
                types.DidSaveTextDocumentParams(types.TextDocumentIdentifier(key), text)
            )
            await wait_for(client, key, guard == "gpu")
            times["save"].append(time.perf_counter() - start)
            times["dmypy"].append(dmypy.run(guard))
            times["fresh"].append(fresh_process(root, ini, fresh_cache, guard))
        # unsaved edits (the debounce included), starting from the other state
        for n in range(edits):
            guard = GUARDS[(n + edits) % 2]
            version += 1
            start = time.perf_counter()
            client.text_document_did_change(
                types.DidChangeTextDocumentParams(
                    types.VersionedTextDocumentIdentifier(version=version, uri=key),
                    [types.TextDocumentContentChangeWholeDocument(DISPATCH.format(guard=guard))],
                )
            )
            await wait_for(client, key, guard == "gpu")
            times["change"].append(time.perf_counter() - start)
        await client.shutdown_session()
        await client.stop()  # type: ignore[no-untyped-call]  # pytest-lsp leaves it untyped
    finally:
        dmypy.kill()
        shutil.rmtree(work, ignore_errors=True)
    med = {k: statistics.median(v) for k, v in times.items()}
    return {
        "modules": modules + 2,
        "edits": edits,
        "debounce_s": DEBOUNCE_S,
        "cold_first_diagnostics_s": round(cold, 3),
        "warm_first_diagnostics_s": round(warm, 3),
        "median_s": {k: round(v, 3) for k, v in med.items()},
        "ratio_vs_dmypy_run": {
            "save": round(med["save"] / med["dmypy"], 3),
            "change (with debounce)": round(med["change"] / med["dmypy"], 3),
            "fresh mypy process": round(med["fresh"] / med["dmypy"], 3),
        },
        "all_s": {k: [round(t, 3) for t in v] for k, v in times.items()},
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--modules", type=int, default=40, help="modules besides the two of the finding"
    )
    parser.add_argument("--edits", type=int, default=15, help="edits per mode (medians)")
    parser.add_argument("--json", metavar="FILE", help="write the results there")
    args = parser.parse_args()
    result = asyncio.run(measure(args.modules, args.edits))
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    result["machine"] = {
        "cpus": os.cpu_count(),
        "system": f"{platform.system()} {platform.machine()}",
        "python": platform.python_version(),
        "mypy": installed_version("mypy"),
        "jax": installed_version("jax"),
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
    }
    m, r = result["median_s"], result["ratio_vs_dmypy_run"]
    print(f"project: {result['modules']} modules; {args.edits} edits per mode; medians")
    print(
        f"first diagnostics after open: cold {result['cold_first_diagnostics_s']:.2f} s, warm {result['warm_first_diagnostics_s']:.2f} s"
    )
    print(f"dmypy run (baseline):        {m['dmypy']:.3f} s")
    print(f"server, didSave:             {m['save']:.3f} s  ratio {r['save']:.2f}")
    print(
        f"server, didChange (+{DEBOUNCE_S} s debounce): {m['change']:.3f} s  ratio {r['change (with debounce)']:.2f}"
    )
    print(
        f"fresh mypy process (no worker): {m['fresh']:.3f} s  ratio {r['fresh mypy process']:.2f}"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
