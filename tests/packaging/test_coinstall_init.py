"""``typed-pallas init`` next to jax-pyrefly-stubs, set up as a user does, in both install orders.

The steps are a user's: a fresh venv made with ``python -m venv`` (pip included), then
``pip install <the built wheel>[mypy]`` and ``pip install jax-pyrefly-stubs`` (one order or
the other), each with its dependencies from the index, so jax, jaxlib and their
``jax-stubs`` all land in the venv's ``site-packages``; ``typed-pallas init`` in the
project; each checker run from the project's root with only the interpreter named.

What it shows (docs/editors.md, "Next to jax-pyrefly-stubs"):

* before ``init``: ``typed-pallas check`` prints one stderr line that names the package,
  says to run ``typed-pallas init`` and that the other checkers need links, and its mypy
  stops on their ``jax.numpy`` stub; pyright cannot resolve ``jax.experimental`` at all
  (their ``jax-stubs`` has an ``__init__.pyi`` and no ``experimental``);
* after ``init``: mypy runs (the override ``init`` adds) and reports the wrong-platform call
  and their ``jax.jit``; pyright and basedpyright report only their ``jax.jit``: the pallas
  modules come from ``.typings`` but the ``jax._src`` modules they derive from do not
  resolve (pyright takes their ``jax-stubs`` for all of ``jax`` in ``site-packages``), so
  JAX's params classes derive from ``Unknown`` and pass for anything; pyrefly and ty see
  only theirs (the right call is an error too); ``init`` says both on stderr;
* after the two links docs/editors.md gives (jax into typed-pallas's own ``sys.path`` root,
  for pyright; typed-pallas's ``experimental`` into their folder, for pyrefly and ty): all
  five report the wrong call and not the right ones, and keep their ``jax.jit``; Python
  still imports jax from ``site-packages``; ``init`` again changes nothing (its stub copy
  stays typed-pallas's own) and warns no more.

An earlier version installed the two wheels with ``--no-deps --no-index`` into a venv that
saw jax through a ``.pth`` line (``pkg_env``'s mirror of the test environment): jax then
sat in another ``sys.path`` root than their ``jax-stubs``, pyright found ``jax._src`` there,
and the test passed where a user's setup fails.

Versions: pip resolves from the index, constrained to the test environment's jax, jaxlib
and mypy and to jax-pyrefly-stubs 1.4.0, so that the test measures the versions the docs
name; pyright, basedpyright, pyrefly and ty are the test environment's (pinned by the test
extra; ``pip install pyright`` gave the same pyright 1.1.414 when this was written), named
the venv's interpreter with ``--pythonpath`` / ``--python-interpreter-path`` / ``--python``. Needs the index (pip's cache makes a rerun fast); skips when it is
unreachable, as ``test_coinstall.py``'s download does. The two orders reuse one venv path
and one mypy cache, so the second mypy run does not analyse jax again.

Needs Python >= 3.12 (jax-pyrefly-stubs' Requires-Python).
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from matrix_data import JAX_PYREFLY_STUBS, SEQUENCES
from pkg_env import Dist, clean_environ

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        sys.version_info < (3, 12),
        reason="jax-pyrefly-stubs 1.4.0 requires Python >= 3.12 (Requires-Python)",
    ),
]

PROBE = """\
from typing import Literal

import jax
import typed_pallas
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def takes_tpu(p: typed_pallas.CompilerParams[Literal["tpu"]]) -> None: ...


def double(x: int) -> int:
    return 2 * x


takes_tpu(pltpu.CompilerParams())
takes_tpu(typed_pallas.TPUCompilerParams())
takes_tpu(pltriton.CompilerParams())
jax.jit(double)("not an int")
"""
TPU_IMPORT_LINE, TRITON_IMPORT_LINE = 5, 6
JAX_CLASS_LINE, WRONG_LINE, JIT_LINE = 16, 18, 19
BIN = Path(sys.executable).parent
#: held to the test environment's versions (the ones the docs name) in the user's installs
PINNED = ("jax", "jaxlib", "mypy")
OFFLINE = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Max retries exceeded"
    r"|No matching distribution found for jax-pyrefly-stubs"
)


def _run(
    cmd: list[str | Path], cwd: Path, timeout: float = 900
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in cmd],
        cwd=cwd,
        capture_output=True,
        text=True,
        env=clean_environ(),
        timeout=timeout,
        check=False,
    )


def _pip_install(python: Path, constraints: Path, requirement: str) -> None:
    """``pip install REQUIREMENT`` with its dependencies from the index, as a user runs it
    (``--no-compile``: no checker reads bytecode, and compiling jax and scipy takes longer
    than the rest of the install)."""
    cmd: list[str | Path] = [python, "-m", "pip", "install", "--no-compile"]
    proc = _run([*cmd, "-c", constraints, requirement], cwd=python.parent)
    if proc.returncode != 0:
        log = proc.stdout + proc.stderr
        if OFFLINE.search(log):
            pytest.skip(f"the package index is unreachable: {log[-800:]}")
        pytest.fail(f"pip install {requirement} failed:\n{log[-4000:]}")


def _error_lines(tool: str, python: Path, root: Path) -> set[int]:
    """The probe's error lines as ``tool`` reports them, run from the project's root."""
    exe = BIN / tool
    if not exe.exists():
        pytest.skip(f"{tool} is not installed in the test environment (pip install -e '.[test]')")
    if tool in ("pyright", "basedpyright"):
        proc = _run([exe, "--pythonpath", python, "--outputjson", "probe.py"], cwd=root)
        return {
            d["range"]["start"]["line"] + 1
            for d in json.loads(proc.stdout)["generalDiagnostics"]
            if d["severity"] == "error" and Path(d["file"]).name == "probe.py"
        }
    if tool == "pyrefly":  # its preset comes from the [tool.pyrefly] table init writes
        cmd: list[str | Path] = [exe, "check", "--python-interpreter-path", python]
        cmd += ["--output-format", "min-text", "probe.py"]
        pattern = r"^ERROR probe\.py:(\d+):"
    else:
        cmd = [exe, "check", "--python", python, "--output-format", "concise", "probe.py"]
        pattern = r"^probe\.py:(\d+):\d+: error\["
    proc = _run(cmd, cwd=root)
    return {int(m[1]) for m in re.finditer(pattern, proc.stdout + proc.stderr, re.M)}


def _mypy(python: Path, root: Path, cache: Path) -> tuple[int, set[int], str]:
    proc = _run([python, "-m", "mypy", "--cache-dir", cache, "-O", "json", "probe.py"], cwd=root)
    found = [json.loads(raw) for raw in proc.stdout.splitlines() if raw.startswith("{")]
    lines = {f["line"] for f in found if f["severity"] == "error" and f["file"] == "probe.py"}
    return proc.returncode, lines, proc.stdout[-3000:] + proc.stderr[-2000:]


@pytest.fixture(scope="module")
def user_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One folder for both orders: the venv is made again at the same path (the mypy cache holds)."""
    return tmp_path_factory.mktemp("coinstall-init")


@pytest.mark.parametrize("order", list(SEQUENCES))
def test_init_next_to_jax_pyrefly_stubs(
    order: str, dist: Dist, user_dir: Path, tmp_path: Path
) -> None:
    venv = user_dir / "venv"
    shutil.rmtree(venv, ignore_errors=True)
    made = _run([sys.executable, "-m", "venv", venv], cwd=user_dir)
    assert made.returncode == 0, made.stderr
    python = venv / "bin" / "python"
    constraints = user_dir / "constraints.txt"
    constraints.write_text(
        "".join(f"{name}=={metadata.version(name)}\n" for name in PINNED) + f"{JAX_PYREFLY_STUBS}\n"
    )
    # what a user types for each step of SEQUENCES (ours: the wheel with its mypy extra)
    requirement = {
        "+ours": f"typed-pallas[mypy] @ {dist.wheel.as_uri()}",
        "+theirs": JAX_PYREFLY_STUBS,
    }
    for step in SEQUENCES[order][:2]:
        _pip_install(python, constraints, requirement[step])
    site = Path(
        _run(
            [python, "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"], cwd=venv
        ).stdout.strip()
    )
    assert (site / "jax").is_dir() and (site / "jax-stubs" / "__init__.pyi").is_file()

    root = tmp_path / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "probe.py").write_text(PROBE)
    cache = user_dir / "mypy-cache"

    # before init: pyright takes their jax-stubs for all of jax, which has no experimental
    assert _error_lines("pyright", python, root) == {TPU_IMPORT_LINE, TRITON_IMPORT_LINE, JIT_LINE}
    check = _run([venv / "bin" / "typed-pallas", "check", "probe.py"], cwd=root)
    assert "typed-pallas: jax-pyrefly-stubs 1.4.0 is installed" in check.stderr, check.stderr
    assert "run `typed-pallas init`" in check.stderr
    assert "pyright, basedpyright, pyrefly and ty see no platform types" in check.stderr
    # and its mypy stops on their jax.numpy stub (the preset does not skip it)
    assert check.returncode == 2, check.stdout + check.stderr
    assert "Too many arguments for argument constructor" in check.stderr, check.stderr

    done = _run([venv / "bin" / "typed-pallas", "init"], cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "skip jax-pyrefly-stubs' jax.numpy stub" in done.stdout, done.stdout
    assert "pyrefly and ty see only its jax-stubs" in done.stderr, done.stderr
    assert "pyright, basedpyright and Pylance see none of jax's own modules" in done.stderr
    ours = site / "typed_pallas_stubs"
    assert f"ln -s {site / 'jax'} {ours / 'jax'}" in done.stderr, done.stderr
    experimental = f"{ours / 'jax-stubs' / 'experimental'} {site / 'jax-stubs' / 'experimental'}"
    assert f"ln -s {experimental}" in done.stderr, done.stderr

    # after init: mypy sees both; pyright's JAX classes derive from Unknown and pass anywhere
    rc, lines, output = _mypy(python, root, cache)
    assert rc == 1 and lines == {WRONG_LINE, JIT_LINE}, output
    for tool in ("pyright", "basedpyright"):
        assert _error_lines(tool, python, root) == {JIT_LINE}, tool
    for tool in ("pyrefly", "ty"):  # theirs only: JAX's class has no platform
        assert _error_lines(tool, python, root) == {JAX_CLASS_LINE, WRONG_LINE, JIT_LINE}, tool

    # the two links of docs/editors.md, as written there
    (site / "typed_pallas_stubs" / "jax").symlink_to("../jax")
    (site / "jax-stubs" / "experimental").symlink_to(
        site / "typed_pallas_stubs" / "jax-stubs" / "experimental"
    )
    for tool in ("pyright", "basedpyright", "pyrefly", "ty"):
        assert _error_lines(tool, python, root) == {WRONG_LINE, JIT_LINE}, tool
    rc, lines, output = _mypy(python, root, cache)
    assert rc == 1 and lines == {WRONG_LINE, JIT_LINE}, output
    imported = _run([python, "-c", "import jax; print(jax.__file__)"], cwd=root)
    assert imported.stdout.strip() == str(site / "jax" / "__init__.py"), imported
    again = _run([venv / "bin" / "typed-pallas", "init"], cwd=root)
    assert again.returncode == 0 and "nothing changed" in again.stdout, again.stdout + again.stderr
    assert "warning" not in again.stderr, again.stderr
