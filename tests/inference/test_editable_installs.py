"""A kernel library installed editable (``pip install -e``) the ways setuptools and
hatchling do it (an import-hook finder, a link tree, an ``editables`` redirector) is seen
by ``typed-pallas platforms --library`` and ``typed-pallas check``, as a normal install is.

One venv over the test environment (``--system-site-packages`` does not reach a venv's
packages: a ``.pth`` adds the test environment's site folder); the three variants are
installed into it one after another, each under its own distribution name. The build
backends come from the package index; the test is skipped when it cannot be reached.
"""

from __future__ import annotations

import os
import subprocess
import sys
import sysconfig
import textwrap
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

KERNEL = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


def double(x: jax.Array) -> jax.Array:
    return pl.pallas_call(
        _body,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltpu.CompilerParams(),
    )(x)
"""

APP = """\
import jax
import jax.numpy as jnp

import mykernels


def run() -> None:
    x = jnp.ones((8, 128))
    if jax.default_backend() == "gpu":
        mykernels.double(x)  # line 10: a finding
    elif jax.default_backend() == "tpu":
        mykernels.double(x)  # line 12: silent
"""

SETUPTOOLS = """\
[build-system]
requires = ["setuptools>=64"]
build-backend = "setuptools.build_meta"
[project]
name = "{name}"
version = "0.1"
[tool.setuptools]
packages = ["mykernels"]
"""

HATCHLING = """\
[build-system]
requires = ["hatchling"]
build-backend = "hatchling.build"
[project]
name = "{name}"
version = "0.1"
[tool.hatch.build]
dev-mode-exact = true
[tool.hatch.build.targets.wheel]
packages = ["src/mykernels"]
"""

#: (distribution, pyproject, package folder, pip's extra arguments, a file the install
#: must leave in site-packages: the proof that this variant is the one tested)
VARIANTS = [
    ("mykernels-st", SETUPTOOLS, "mykernels", [], "__editable___mykernels_st_0_1_finder.py"),
    (
        "mykernels-strict",
        SETUPTOOLS,
        "mykernels",
        ["--config-settings", "editable_mode=strict"],
        "__editable__.mykernels_strict-0.1.pth",
    ),
    ("mykernels-ht", HATCHLING, "src/mykernels", [], "_editable_impl_mykernels_ht.py"),
]


def _run(cmd: list[str], cwd: Path) -> subprocess.CompletedProcess[str]:
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "MYPYPATH")}
    return subprocess.run(cmd, cwd=cwd, env=env, capture_output=True, text=True, timeout=240)


def test_editable_installs_are_seen(tmp_path: Path) -> None:
    venv = tmp_path / "venv"
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", "--system-site-packages", str(venv)],
        check=True,
    )
    python = str(venv / "bin" / "python")
    site = _run(
        [python, "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"], tmp_path
    )
    venv_site = Path(site.stdout.strip())
    parent = sysconfig.get_paths()["purelib"]
    (venv_site / "zz_test_environment.pth").write_text(
        f"import site; site.addsitedir({parent!r})\n"
    )
    app = tmp_path / "app"
    app.mkdir()
    tp = [python, "-m", "typed_pallas_mypy.cli"]
    previous: str | None = None
    for dist, pyproject, package, extra, marker in VARIANTS:
        project = tmp_path / dist
        (project / package).mkdir(parents=True)
        (project / "pyproject.toml").write_text(pyproject.format(name=dist))
        (project / package / "__init__.py").write_text(KERNEL)
        if previous is not None:
            _run([python, "-m", "pip", "uninstall", "-qy", previous], tmp_path)
        installed = _run(
            [python, "-m", "pip", "install", "-q", "--no-deps", "-e", str(project), *extra],
            tmp_path,
        )
        if installed.returncode != 0 and "No matching distribution" in installed.stderr:
            pytest.skip(f"the build backend of {dist} cannot be installed: no package index")
        assert installed.returncode == 0, installed.stderr
        previous = dist
        assert (venv_site / marker).is_file(), sorted(os.listdir(venv_site))
        assert not (venv_site / "mykernels").exists()  # not a normal install

        mapped = _run([*tp, "platforms", "--library", "mykernels"], app)
        assert mapped.returncode == 0, (dist, mapped.stderr)
        assert "double (mykernels/__init__.py:10): lowers only for tpu" in mapped.stdout, dist
        assert str(tmp_path) not in mapped.stdout

        # a changed app.py each time: its findings are worked out again, not cached
        (app / "app.py").write_text(APP + f"# {dist}\n")
        checked = _run([*tp, "check", "app.py"], app)
        lines = [line for line in checked.stdout.splitlines() if "[pallas-platform]" in line]
        assert checked.returncode == 1, (dist, checked.stdout, checked.stderr)
        assert len(lines) == 1 and lines[0].startswith("app.py:10:9: error:"), (dist, lines)
        assert "app.py:12:" not in checked.stdout
        assert (
            textwrap.dedent("""\
            app.py:10:9: note: double (mykernels/__init__.py:10) lowers only for tpu""")
            in checked.stdout
        )
