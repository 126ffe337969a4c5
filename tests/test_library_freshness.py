"""After an edit, an install or an uninstall of a library the plugin read, the next run
gives what a cold run gives: mypy with the same cache, ``dmypy`` and ``typed-pallas
check`` (the editor server's worker: tests/lsp/test_finegrained.py).

mypy tracks neither of these libraries: an untyped package on a ``PYTHONPATH`` folder
that is not named site-packages (``path``), and a package that an editable install's
import-hook finder maps (``finder``: setuptools' default ``pip install -e`` layout, a
``.pth`` file and a finder in a site folder, the source elsewhere). The plugin's engine
reads them, and the files it read or found missing are in the project modules' cache
keys (``cache_keys.library_uses``) and the daemon's plugin version. ``app.py`` calls
the library's kernel under a GPU guard: a finding while the kernel takes TPU params,
none once it takes Triton params, none while the library is not installed. Each step
compares the warm run (and the daemon, and check) with a cold run of the project's
modules (``Project.cold``: jax stays cached).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mypy_seeds import MypySeeds, mypy_env

from tests.test_incremental import Project

pytestmark = pytest.mark.slow

LIBRARY = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


def add_one(x):
    return pl.pallas_call(_body, out_shape=x, compiler_params=PARAMS)(x)
"""

TPU = "pltpu.CompilerParams()"
TRITON = "pltriton.CompilerParams()"

APP = """\
import jax
import mylib


def run(x: jax.Array) -> object:
    if jax.default_backend() == "gpu":
        return mylib.add_one(x)
    return x
"""

INI = "[mypy]\nplugins = typed_pallas_mypy\nignore_missing_imports = True\n"

FINDING = (
    "app.py:7: error: Compiler params for platform tpu cannot be used for gpu lowering."
    "  [pallas-platform]"
)
SILENT = ["Success: no issues found in 1 source file"]


def _errors(lines: list[str]) -> list[str]:
    return [line for line in lines if ": error: " in line]


def _touch_later(path: Path) -> None:
    """A new mtime whatever the file system's clock resolution (an edit of the same
    size in the same tick would keep the stamp, as it keeps mypy's own)."""
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))


class Library:
    """``mylib`` installed one of two ways (the module docstring), on ``PYTHONPATH``."""

    def __init__(self, root: Path, layout: str) -> None:
        self.layout = layout
        #: the folder on PYTHONPATH
        self.folder = root / ("vendor" if layout == "path" else "site")
        self.folder.mkdir()
        #: the package's folder when installed
        self.package = (
            self.folder / "mylib" if layout == "path" else root / "mylib-src" / "src" / "mylib"
        )

    @property
    def env(self) -> dict[str, str]:
        return {"PYTHONPATH": str(self.folder)}

    def _finder_files(self) -> dict[str, str]:
        return {
            "__editable__.mylib-0.1.pth": (
                "import __editable___mylib_0_1_finder; __editable___mylib_0_1_finder.install()\n"
            ),
            "__editable___mylib_0_1_finder.py": (
                f"MAPPING = {{'mylib': {str(self.package)!r}}}\nNAMESPACES = {{}}\n"
            ),
        }

    def install(self, params: str) -> None:
        self.write(params)
        if self.layout == "finder":
            for name, text in self._finder_files().items():
                (self.folder / name).write_text(text)

    def write(self, params: str) -> None:
        """Write (or edit) the kernel's module."""
        init = self.package / "__init__.py"
        init.parent.mkdir(parents=True, exist_ok=True)
        init.write_text(LIBRARY.replace("PARAMS", params))
        _touch_later(init)

    def uninstall(self) -> None:
        if self.layout == "path":
            shutil.rmtree(self.package)
        else:  # pip uninstall of an editable install leaves the source
            for name in self._finder_files():
                (self.folder / name).unlink()


@pytest.fixture
def project(tmp_path: Path, mypy_seeds: MypySeeds) -> Iterator[Project]:
    proj = Project(tmp_path, mypy_seeds)
    proj.files = ("app.py",)
    proj.lines_of = ("app.py", "Success", "Found")
    proj.write_files({"app.py": APP, "mypy.ini": INI})
    yield proj
    proj.dmypy("kill")


def _agree(project: Project, errors: list[str], *, daemon: bool) -> None:
    """The warm run (and the daemon) give a cold run's answer, which is ``errors``."""
    warm = project.mypy("warm")
    cold = project.cold()
    assert _errors(cold) == errors, cold
    assert warm == cold
    if daemon:
        assert project.daemon() == cold


@pytest.mark.parametrize("layout", ["path", "finder"])
def test_an_edit_of_a_library_mypy_does_not_track(project: Project, layout: str) -> None:
    library = Library(project.root, layout)
    project.extra_env = library.env
    daemon = layout == "finder"  # one daemon per test: each restart analyses jax again
    library.install(TPU)
    _agree(project, [FINDING], daemon=daemon)
    library.write(TRITON)  # the kernel now takes the GPU's params: no finding
    _agree(project, [], daemon=daemon)
    library.write(TPU)  # and back
    _agree(project, [FINDING], daemon=daemon)


@pytest.mark.parametrize("layout", ["path", "finder"])
def test_an_install_and_an_uninstall_after_a_run(project: Project, layout: str) -> None:
    library = Library(project.root, layout)
    project.extra_env = library.env
    daemon = layout == "finder"
    first = project.mypy("warm")  # not installed: nothing to say
    assert first == SILENT, first
    if daemon:
        assert project.daemon() == SILENT
    library.install(TPU)
    _agree(project, [FINDING], daemon=daemon)
    library.uninstall()  # no crash (Project.mypy asserts no traceback), no stale finding
    _agree(project, [], daemon=daemon)


def _check(root: Path, cache: Path, env: dict[str, str]) -> list[tuple[str, int, str]]:
    command = ["check", "--output", "json", "--cache-dir", str(cache), "app.py"]
    done = subprocess.run(
        [sys.executable, "-m", "typed_pallas_mypy.cli", *command],
        cwd=root,
        env={**mypy_env(), **env},
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert "Traceback" not in done.stderr, done.stderr
    assert done.returncode in (0, 1), done.stderr
    return [(f["file"], f["line"], f["code"]) for f in json.loads(done.stdout)]


def test_check_after_an_install_an_edit_and_an_uninstall(
    tmp_path: Path, mypy_seeds: MypySeeds
) -> None:
    """``typed-pallas check`` keeps its cache between runs: each run gives what a run
    from a cache where only jax was analysed gives."""
    app = tmp_path / "app"
    (app / ".git").mkdir(parents=True)
    (app / "app.py").write_text(APP)
    library = Library(tmp_path, "path")
    mypy_seeds.check_into(tmp_path / "warm")
    colds = 0

    def agree(expected: list[tuple[str, int, str]]) -> None:
        nonlocal colds
        colds += 1
        mypy_seeds.check_into(tmp_path / f"cold{colds}")
        cold = _check(app, tmp_path / f"cold{colds}", library.env)
        assert cold == expected
        assert _check(app, tmp_path / "warm", library.env) == cold

    finding = [("app.py", 7, "pallas-platform")]
    agree([])  # not installed yet
    library.install(TPU)
    agree(finding)
    library.write(TRITON)
    agree([])
    library.write(TPU)
    agree(finding)
    library.uninstall()
    agree([])
