"""``typed-pallas init`` next to jax-pyrefly-stubs, set up as a user does, in both install orders.

The steps are a user's: a fresh venv made with ``python -m venv`` (pip included), then
``pip install <the built wheel>[mypy]`` and ``pip install jax-pyrefly-stubs`` (one order or
the other), each with its dependencies from the index, so jax, jaxlib and their
``jax-stubs`` all land in the venv's ``site-packages``; ``typed-pallas init`` in the
project; each checker run from the project's root with only the interpreter named.

What it shows (docs/checkers.md, "Next to jax-pyrefly-stubs"):

* before ``init``: ``typed-pallas check`` prints one stderr line that names the package and
  says to run ``typed-pallas init``, and its mypy stops on their ``jax.numpy`` stub; pyright
  cannot resolve ``jax.experimental`` at all (their ``jax-stubs`` has an ``__init__.pyi`` and
  no ``experimental``);
* after ``init`` alone, with no warning and nothing changed in the environment: all five
  checkers report the wrong-platform call and their ``jax.jit``, and not the right calls,
  and ``jax.numpy`` still resolves (``init`` wrote mypy's override, the stub copy and the
  ``jax/`` overlay of links pyright reads from ``stubPath``, pyrefly's ``search-path`` and
  ty's ``extra-paths``); Python still imports jax from ``site-packages``; ``init`` again
  changes nothing.

An earlier version installed the two wheels with ``--no-deps --no-index`` into a venv that
saw jax through a ``.pth`` line (``pkg_env``'s mirror of the test environment): jax then
sat in another ``sys.path`` root than their ``jax-stubs``, pyright found ``jax._src`` there,
and the test passed where a user's setup fails.

Versions: pip resolves from the index, held to the test environment's jax, jaxlib and mypy
and to jax-pyrefly-stubs 1.4.0 (pkg_env.user_venv, shared with ``test_coinstall.py``), so
that the test measures the versions the docs name; pyright, basedpyright, pyrefly and ty
are the test environment's (pinned by the test extra; ``pip install pyright`` gave the same
pyright 1.1.414 when this was written), named the venv's interpreter with ``--pythonpath``
/ ``--python-interpreter-path`` / ``--python``, and read the project's config. Needs the
index (pip's cache makes a rerun fast); skips when it is unreachable. The two orders reuse
one venv path and one mypy cache, so the second mypy run does not analyse jax again.

Needs Python >= 3.12 (jax-pyrefly-stubs' Requires-Python).
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from matrix_data import SEQUENCES
from pkg_env import Dist, Venv, user_requirements

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
from jax.numpy import zeros  # an error only where jax.numpy does not resolve

zeros((2, 3))
"""
TPU_IMPORT_LINE, TRITON_IMPORT_LINE = 5, 6
WRONG_LINE, JIT_LINE = 18, 19


def _error_lines(tool: str, venv: Venv, root: Path) -> set[int]:
    """The probe's error lines as ``tool`` reports them, run from the project's root with
    the project's config (what ``init`` wrote) and only the interpreter named."""
    if tool in ("pyright", "basedpyright"):
        checked = venv.pyright(root, ["probe.py"], tool, configure=False)
    elif tool == "pyrefly":  # its preset comes from the [tool.pyrefly] table init writes
        checked = venv.pyrefly(root, ["probe.py"], preset=None)
    else:
        checked = venv.ty(root, ["probe.py"])
    return checked.error_lines("probe.py")


def _mypy(venv: Venv, root: Path) -> tuple[int, set[int], str]:
    checked = venv.mypy(root, ["probe.py"], config=None)  # the config init wrote
    return checked.returncode, checked.error_lines("probe.py"), checked.output[-5000:]


@pytest.mark.parametrize("order", list(SEQUENCES))
def test_init_next_to_jax_pyrefly_stubs(
    order: str, dist: Dist, make_user_venv: Callable[[], Venv], tmp_path: Path
) -> None:
    venv = make_user_venv()
    requirement = user_requirements(dist)
    for step in SEQUENCES[order][:2]:
        venv.pip_install(requirement[step[1:]])
    site = venv.site
    assert (site / "jax").is_dir() and (site / "jax-stubs" / "__init__.pyi").is_file()

    root = tmp_path / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "probe.py").write_text(PROBE)

    # before init: pyright takes their jax-stubs for all of jax, which has no experimental
    assert _error_lines("pyright", venv, root) == {TPU_IMPORT_LINE, TRITON_IMPORT_LINE, JIT_LINE}
    check = venv.run("typed-pallas", "check", "probe.py", cwd=root)
    assert "typed-pallas: jax-pyrefly-stubs 1.4.0 is installed" in check.stderr, check.stderr
    assert "run `typed-pallas init`" in check.stderr
    assert "sets pyright, basedpyright, Pylance, pyrefly and ty up" in check.stderr
    # and its mypy stops on their jax.numpy stub (the preset does not skip it)
    assert check.returncode == 2, check.stdout + check.stderr
    assert "Too many arguments for argument constructor" in check.stderr, check.stderr

    done = venv.run("typed-pallas", "init", cwd=root)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "warning" not in done.stderr, done.stderr
    for what in (
        "skip jax-pyrefly-stubs' jax.numpy stub",
        ".typings/jax/: links to the",
        "search-path += '.typings'",
        "extra-paths += '.typings'",
    ):
        assert what in done.stdout, done.stdout
    assert (root / ".typings" / "jax" / "_src").resolve() == (site / "jax" / "_src").resolve()

    # after init alone: every checker sees the platform types and keeps their jax.jit
    rc, lines, output = _mypy(venv, root)
    assert rc == 1 and lines == {WRONG_LINE, JIT_LINE}, output
    for tool in ("pyright", "basedpyright", "pyrefly", "ty"):
        assert _error_lines(tool, venv, root) == {WRONG_LINE, JIT_LINE}, tool
    # nothing in the environment changed: Python imports jax as before
    assert not (site / "typed_pallas_stubs" / "jax").exists()
    assert not (site / "jax-stubs" / "experimental").exists()
    imported = venv.python_run("import jax; print(jax.__file__)", cwd=root)
    assert imported.stdout.strip() == str(site / "jax" / "__init__.py"), imported
    again = venv.run("typed-pallas", "init", cwd=root)
    assert again.returncode == 0 and "nothing changed" in again.stdout, again.stdout + again.stderr
    assert "warning" not in again.stderr, again.stderr
