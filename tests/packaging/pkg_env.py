"""Helpers for the packaging tests: build the sdist and wheel once, make clean venvs, run checkers.

The fixtures are registered by conftest.py (``from pkg_env import ...``).

The point of these tests is that typed-pallas's files are found ONLY through the
built wheel, never through the editable install of the checkout. A test venv is
made with ``python -m venv --without-pip`` (no system site-packages); jax, numpy,
mypy and pip come from the running test environment through one ``.pth`` line
that points at a *filtered mirror* of its site-packages: a folder of symlinks to
every entry except typed-pallas's own (``typed_pallas*``, the editable ``.pth``
files, ``jax-stubs``) and except other ``.pth`` files, so the editable paths
(src/, mypy_plugin/, stubs/) never reach ``sys.path``. Tests assert that too.

What this module does not do: touch the test environment itself (pip installs and
uninstalls go into the test venv's own site-packages; only typed-pallas and the
co-installed stub packages, which the mirror leaves out, are ever uninstalled).

The mirror is right for what typed-pallas's files alone do. It is wrong where another
package shares a folder with jax: through the mirror jax sits in another ``sys.path`` root
than ``site-packages``, and pyright, for one, resolves a module by root. Tests of what a
user gets next to another package use ``user_venv`` instead: a fresh venv with pip, and
``pip install`` of the built wheel and of the other package with their dependencies from
the index (jax included), as a user types it; they skip when the index cannot be reached.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from importlib import metadata
from pathlib import Path

import pytest
from matrix_data import JAX_PYREFLY_STUBS

REPO = Path(__file__).resolve().parents[2]
BIN = Path(sys.executable).parent


def wheel_layout() -> dict[str, str]:
    """Source path -> path in the wheel, from pyproject's hatch wheel target (packages + force-include)."""
    import tomllib

    wheel = tomllib.loads((REPO / "pyproject.toml").read_text())["tool"]["hatch"]["build"][
        "targets"
    ]["wheel"]
    layout = {source: source.rsplit("/", 1)[-1] for source in wheel.get("packages", [])}
    layout.update(wheel.get("force-include", {}))
    return layout


def stubs_in_wheel() -> str:
    """Where the wheel puts stubs/jax-stubs ("jax-stubs" or e.g. "typed_pallas_stubs/jax-stubs")."""
    return wheel_layout()["stubs/jax-stubs"]


#: names left out of the mirror of the test environment's site-packages (lowercase prefixes)
MIRROR_EXCLUDED_PREFIXES = (
    "typed_pallas",
    "typed-pallas",
    "_typed_pallas",
    "__editable__",
    "jax-stubs",
    "jax_pyrefly_stubs",
    "pyrefly_shape_extensions",
    "shape_extensions",
)


def _run(
    cmd: Sequence[str | os.PathLike[str]],
    *,
    cwd: Path | None = None,
    env: dict[str, str] | None = None,
    timeout: float = 600,
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(part) for part in cmd],
        cwd=cwd,
        env=env,
        capture_output=True,
        text=True,
        timeout=timeout,
        check=False,
    )


def clean_environ() -> dict[str, str]:
    """os.environ without variables that would leak the checkout into a child process."""
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "MYPYPATH", "VIRTUAL_ENV", "PYTHONHOME")
    }
    environ["PIP_DISABLE_PIP_VERSION_CHECK"] = "1"
    environ["PYTHONDONTWRITEBYTECODE"] = "1"
    return environ


@dataclass(frozen=True)
class Dist:
    wheel: Path
    sdist: Path


@pytest.fixture(scope="session")
def dist(tmp_path_factory: pytest.TempPathFactory) -> Dist:
    """The sdist, and the wheel built FROM that sdist (so the sdist is complete), once per session."""
    out = tmp_path_factory.mktemp("dist")
    cmd: list[str] = [sys.executable, "-m", "build", "--outdir", str(out)]
    try:
        import hatchling  # noqa: F401  # type: ignore[import-not-found, unused-ignore]

        cmd.append("--no-isolation")  # the backend is here: no download
    except ImportError:
        pass  # isolated build: pip fetches hatchling from the index
    result = _run([*cmd, str(REPO)], env=clean_environ())
    if result.returncode != 0:
        log = result.stdout + result.stderr
        if re.search(
            r"(No matching distribution found|Could not find a version).*hatchling", log, re.S
        ) or re.search(
            r"(Network is unreachable|Temporary failure in name resolution|Max retries exceeded)",
            log,
        ):
            pytest.skip(
                f"cannot build: the index is unreachable to fetch the build backend (hatchling):\n{log[-800:]}"
            )
        pytest.fail(f"python -m build failed:\n{log[-4000:]}")
    wheels = sorted(out.glob("typed_pallas-*.whl"))
    sdists = sorted(out.glob("typed_pallas-*.tar.gz"))
    assert len(wheels) == 1 and len(sdists) == 1, sorted(p.name for p in out.iterdir())
    return Dist(wheel=wheels[0], sdist=sdists[0])


@pytest.fixture(scope="session")
def site_mirror(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder of symlinks to the test environment's site-packages, minus typed-pallas and .pth files."""
    # named like a real one (.../site-packages/jax/...): tools that tell installed packages
    # from user code by path (the plugin's report_config_data does) must see the same thing
    mirror = tmp_path_factory.mktemp("base-env") / "site-packages"
    mirror.mkdir()
    sources = {sysconfig.get_path("purelib"), sysconfig.get_path("platlib")}
    for source in sorted(sources):
        for entry in sorted(os.listdir(source)):
            lowered = entry.lower()
            if lowered.startswith(MIRROR_EXCLUDED_PREFIXES) or lowered.endswith(".pth"):
                continue
            target = mirror / entry
            if not target.exists():
                target.symlink_to(Path(source) / entry)
    return mirror


@dataclass(frozen=True)
class Checked:
    """A checker's run: exit status, output, and the error lines as (file name, line)."""

    returncode: int
    output: str
    errors: frozenset[tuple[str, int]]

    def error_lines(self, name: str) -> set[int]:
        return {line for file, line in self.errors if file == name}


@dataclass(frozen=True)
class Venv:
    root: Path
    mypy_cache: Path
    #: pip's constraints for ``pip_install`` (a user venv's; None for a mirror venv)
    constraints: Path | None = None

    @property
    def python(self) -> Path:
        return self.root / "bin" / "python"

    @property
    def site(self) -> Path:
        return Path(
            subprocess.check_output(
                [str(self.python), "-c", "import sysconfig; print(sysconfig.get_path('purelib'))"],
                text=True,
            ).strip()
        )

    def pip(self, *args: str | os.PathLike[str]) -> subprocess.CompletedProcess[str]:
        result = _run([self.python, "-m", "pip", *args], env=clean_environ())
        assert result.returncode == 0, (
            f"pip {' '.join(map(str, args))} failed:\n{result.stdout}{result.stderr}"
        )
        return result

    def install(self, *wheels: Path) -> None:
        self.pip("install", "--no-deps", "--no-index", *wheels)

    def pip_install(self, requirement: str) -> None:
        """``pip install REQUIREMENT`` with its dependencies from the index, as a user runs it
        (held to ``constraints``; ``--no-compile``: no checker reads bytecode, and compiling jax
        and scipy takes longer than the rest of the install). Skips when the index is unreachable."""
        assert self.constraints is not None, "pip_install is for a user venv (user_venv)"
        cmd: list[str | Path] = ["install", "--no-compile", "-c", self.constraints, requirement]
        result = _run(
            [self.python, "-m", "pip", *cmd], cwd=self.root, env=clean_environ(), timeout=900
        )
        if result.returncode != 0:
            log = result.stdout + result.stderr
            if OFFLINE.search(log):
                pytest.skip(f"the package index is unreachable: {log[-800:]}")
            pytest.fail(f"pip install {requirement} failed:\n{log[-4000:]}")

    def run(self, script: str, *args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        """One of the venv's own commands (``typed-pallas``...), in ``cwd``."""
        return _run([self.root / "bin" / script, *args], cwd=cwd, env=clean_environ(), timeout=900)

    def uninstall(self, *names: str) -> None:
        self.pip("uninstall", "-y", *names)

    def python_run(self, code: str, *, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return _run([self.python, "-c", code], cwd=cwd, env=clean_environ())

    # --- checkers: each runs in `cwd` (a folder with no config of the checkout) ---------------

    def mypy(self, cwd: Path, files: Sequence[str], config: str | None = "[mypy]\n") -> Checked:
        """The venv's mypy; ``config`` is written to mypy.ini, None: the project's own config."""
        options: list[str] = []
        if config is not None:
            (cwd / "mypy.ini").write_text(config)
            options = ["--config-file", "mypy.ini"]
        result = _run(
            [
                self.python,
                "-m",
                "mypy",
                *options,
                "--cache-dir",
                self.mypy_cache,
                "--no-error-summary",
                "--show-traceback",
                *files,
            ],
            cwd=cwd,
            env=clean_environ(),
            timeout=900,
        )
        pattern = re.compile(r"^(?P<file>[^:\s]+\.pyi?):(?P<line>\d+): error:", re.M)
        return _checked(result, pattern)

    def stubs_root(self) -> Path | None:
        """The folder holding typed-pallas's jax-stubs when it is not site-packages itself (own sys.path root)."""
        root = (self.site / stubs_in_wheel()).parent
        return root if root != self.site and (root / "jax-stubs").is_dir() else None

    def pyright(
        self, cwd: Path, files: Sequence[str], tool: str = "pyright", *, configure: bool = True
    ) -> Checked:
        """pyright (or ``tool``: basedpyright) as docs/checkers.md tells users to run it: stubPath
        at our stubs root, if any; ``configure=False``: with the project's own config."""
        exe = _tool(tool)
        if configure:
            root = self.stubs_root()
            config = {"stubPath": str(root)} if root is not None else {}
            (cwd / "pyrightconfig.json").write_text(json.dumps(config))
        result = _run(
            [exe, "--pythonpath", self.python, "--outputjson", *files], cwd=cwd, env=clean_environ()
        )
        try:
            report = json.loads(result.stdout)
        except json.JSONDecodeError:
            return Checked(
                result.returncode, result.stdout + result.stderr, frozenset({("<crash>", 0)})
            )
        errors = frozenset(
            (Path(d["file"]).name, d["range"]["start"]["line"] + 1)
            for d in report.get("generalDiagnostics", [])
            if d.get("severity") == "error"
        )
        return Checked(result.returncode, result.stdout + result.stderr, errors)

    def pyrefly(self, cwd: Path, files: Sequence[str], preset: str | None = "default") -> Checked:
        """pyrefly with ``--preset``; None: the preset of the project's config."""
        options = [] if preset is None else ["--preset", preset]
        result = _run(
            [
                _tool("pyrefly"),
                "check",
                "--python-interpreter-path",
                self.python,
                *options,
                "--output-format",
                "min-text",
                *files,
            ],
            cwd=cwd,
            env=clean_environ(),
        )
        return _checked(result, re.compile(r"^ERROR (?P<file>[^:\s]+\.pyi?):(?P<line>\d+):", re.M))

    def ty(self, cwd: Path, files: Sequence[str]) -> Checked:
        result = _run(
            [_tool("ty"), "check", "--python", self.python, "--output-format", "concise", *files],
            cwd=cwd,
            env=clean_environ(),
        )
        return _checked(
            result, re.compile(r"^(?P<file>[^:\s]+\.pyi?):(?P<line>\d+):\d+: error\[", re.M)
        )


def _checked(result: subprocess.CompletedProcess[str], pattern: re.Pattern[str]) -> Checked:
    output = result.stdout + result.stderr
    errors = frozenset((Path(m["file"]).name, int(m["line"])) for m in pattern.finditer(output))
    return Checked(result.returncode, output, errors)


def _tool(name: str) -> str:
    exe = BIN / name
    if exe.exists():
        return str(exe)
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed in the test environment (pip install -e '.[test]')")
    return found


def new_venv(root: Path, site_mirror: Path, mypy_cache: Path) -> Venv:
    """A clean venv at ``root`` that sees the test environment's packages (the mirror) but none of ours."""
    result = _run([sys.executable, "-m", "venv", "--without-pip", root], env=clean_environ())
    assert result.returncode == 0, result.stderr
    venv = Venv(root=root, mypy_cache=mypy_cache)
    (venv.site / "_test_base_environment.pth").write_text(f"{site_mirror}\n")
    return venv


@pytest.fixture(scope="session")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One mypy cache for every venv of the session: jax's modules sit at the same (mirror)
    paths in all of them, so mypy reuses their analysis; what differs is re-checked."""
    return tmp_path_factory.mktemp("mypy-cache")


@pytest.fixture
def make_venv(tmp_path: Path, site_mirror: Path, mypy_cache: Path) -> Callable[[str], Venv]:
    """``make_venv(name)`` -> a new clean venv under this test's tmp_path."""

    def make(name: str = "venv") -> Venv:
        return new_venv(tmp_path / name, site_mirror, mypy_cache)

    return make


#: a user's mypy config enabling the plugin; the other lines equal the CLI's preset, so the
#: CLI test reuses the mypy cache this run leaves (one cold analysis of jax, not two)
MYPY_CONFIG = """\
[mypy]
plugins = typed_pallas_mypy
follow_imports = silent
ignore_missing_imports = True
check_untyped_defs = True
show_error_codes = True
"""


@pytest.fixture(scope="session")
def installed(
    dist: Dist, site_mirror: Path, mypy_cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> Venv:
    """A clean venv with the built wheel installed (not editable), shared by the session's tests."""
    venv = new_venv(tmp_path_factory.mktemp("wheel-venv") / "venv", site_mirror, mypy_cache)
    venv.install(dist.wheel)
    return venv


# --- a user's venv -------------------------------------------------------------------------

#: held to the test environment's versions in a user venv, so that the tests measure the
#: versions the docs name (pip would take the newest in the declared range otherwise)
USER_PINNED = ("jax", "jaxlib", "mypy")
#: pip's words when the index cannot be reached (its retry warnings name the connection
#: error; "versions: none" is a package it found nowhere): the test skips
OFFLINE = re.compile(
    r"Network is unreachable|Temporary failure in name resolution|Name or service not known"
    r"|Failed to establish a new connection|Max retries exceeded|ConnectTimeoutError"
    r"|ReadTimeoutError|\(from versions: none\)"
)


def user_requirements(dist: Dist) -> dict[str, str]:
    """What a user types after ``pip install`` for each package of matrix_data.SEQUENCES
    (ours: the built wheel with its mypy extra)."""
    return {"ours": f"typed-pallas[mypy] @ {dist.wheel.as_uri()}", "theirs": JAX_PYREFLY_STUBS}


def user_venv(root: Path, mypy_cache: Path) -> Venv:
    """A fresh venv at ``root`` (what was there is removed), made as a user makes one:
    ``python -m venv``, pip included, nothing of the test environment; ``Venv.pip_install``
    installs into it from the index, held to the test environment's versions."""
    shutil.rmtree(root, ignore_errors=True)
    result = _run([sys.executable, "-m", "venv", root], env=clean_environ())
    assert result.returncode == 0, result.stderr
    constraints = root.parent / "constraints.txt"
    pins = [f"{name}=={metadata.version(name)}" for name in USER_PINNED]
    constraints.write_text("".join(f"{pin}\n" for pin in [*pins, JAX_PYREFLY_STUBS]))
    return Venv(root=root, mypy_cache=mypy_cache, constraints=constraints)


@pytest.fixture(scope="module")
def make_user_venv(tmp_path_factory: pytest.TempPathFactory) -> Callable[[], Venv]:
    """``make_user_venv()`` -> a fresh user venv, at the same path each time within a module,
    with one mypy cache: jax's files keep their paths, so mypy analyses jax once per module
    (it compares a cached file's hash when only its mtime changed)."""
    folder = tmp_path_factory.mktemp("user")

    def make() -> Venv:
        return user_venv(folder / "venv", folder / "mypy-cache")

    return make


def assert_not_from_checkout(venv: Venv) -> None:
    """typed_pallas, typed_pallas_mypy and jax-stubs resolve inside the venv; no checkout path is on sys.path."""
    code = (
        "import json, sys, typed_pallas, typed_pallas_mypy\n"
        "print(json.dumps({'path': sys.path, 'rt': typed_pallas.__file__, 'plugin': typed_pallas_mypy.__file__}))\n"
    )
    result = venv.python_run(code, cwd=venv.root)
    assert result.returncode == 0, result.stderr
    found = json.loads(result.stdout)
    site = str(venv.site)
    assert found["rt"].startswith(site) and found["plugin"].startswith(site), found
    checkout = {str(REPO / part) for part in ("src", "mypy_plugin", "stubs", "")}
    leaked = [entry for entry in found["path"] if entry.rstrip("/") in checkout]
    assert not leaked, f"the checkout is on sys.path of the wheel venv: {leaked}"
