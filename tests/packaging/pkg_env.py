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

What this module does not do: download jax (the test environment's is reused), or
touch the test environment itself (pip installs and uninstalls go into the test
venv's own site-packages; only typed-pallas and the co-installed stub packages,
which the mirror leaves out, are ever uninstalled).
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
from pathlib import Path

import pytest

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

    def uninstall(self, *names: str) -> None:
        self.pip("uninstall", "-y", *names)

    def python_run(self, code: str, *, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
        return _run([self.python, "-c", code], cwd=cwd, env=clean_environ())

    # --- checkers: each runs in `cwd` (a folder with no config of the checkout) ---------------

    def mypy(self, cwd: Path, files: Sequence[str], config: str = "[mypy]\n") -> Checked:
        (cwd / "mypy.ini").write_text(config)
        result = _run(
            [
                self.python,
                "-m",
                "mypy",
                "--config-file",
                "mypy.ini",
                "--cache-dir",
                self.mypy_cache,
                "--no-error-summary",
                "--show-traceback",
                *files,
            ],
            cwd=cwd,
            env=clean_environ(),
        )
        pattern = re.compile(r"^(?P<file>[^:\s]+\.pyi?):(?P<line>\d+): error:", re.M)
        return _checked(result, pattern)

    def stubs_root(self) -> Path | None:
        """The folder holding typed-pallas's jax-stubs when it is not site-packages itself (own sys.path root)."""
        root = (self.site / stubs_in_wheel()).parent
        return root if root != self.site and (root / "jax-stubs").is_dir() else None

    def pyright(self, cwd: Path, files: Sequence[str], tool: str = "pyright") -> Checked:
        """pyright as docs/checkers.md tells users to run it: stubPath at our stubs root, if any."""
        exe = _tool(tool)
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

    def pyrefly(self, cwd: Path, files: Sequence[str]) -> Checked:
        result = _run(
            [
                _tool("pyrefly"),
                "check",
                "--python-interpreter-path",
                self.python,
                "--preset",
                "default",
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
