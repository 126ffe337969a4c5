"""The built wheel and sdist, installed (not editable) into a clean venv, as a user gets them.

An editable install hides a missing ``.pyi``, a missing ``py.typed`` or a plugin
module left out of the wheel; these tests build the sdist, build the wheel from it,
install the wheel into a venv that cannot see the checkout (see pkg_env.py) and
check from there: the file lists against the source tree, the metadata, the mypy
plugin loading, the platform types in mypy, pyright, pyrefly and ty (a wrong-platform
call fails, the right one passes), and ``typed-pallas check`` / ``explain``.
"""

from __future__ import annotations

import email.parser
import os
import tarfile
import tomllib
import zipfile
from pathlib import Path

import pytest

from pkg_env import MYPY_CONFIG, REPO, Checked, Dist, Venv, assert_not_from_checkout, stubs_in_wheel, wheel_layout

pytestmark = pytest.mark.slow

#: source folder -> folder in the wheel (pyproject's [tool.hatch.build.targets.wheel])
PACKAGES = {source: target for source, target in wheel_layout().items() if (REPO / source).is_dir()}
#: source file -> file in the wheel (force-included files, e.g. the stubs root's .pth)
FILES = {source: target for source, target in wheel_layout().items() if (REPO / source).is_file()}
STUBS = stubs_in_wheel()

#: what jax-pyrefly-stubs 1.4.0 ships in the same jax-stubs folder (its RECORD). Any of
#: these in our wheel would overwrite theirs, and uninstalling either package would
#: delete it from the other: see docs/stub-layout-notes.md.
JAX_PYREFLY_STUBS_FILES = frozenset(
    {
        "jax-stubs/__init__.pyi",
        "jax-stubs/_array.pyi",
        "jax-stubs/_shapes.pyi",
        "jax-stubs/py.typed",
        "jax-stubs/random.pyi",
        "jax-stubs/typing.pyi",
        "jax-stubs/lax/__init__.pyi",
        "jax-stubs/lax/linalg.pyi",
        "jax-stubs/nn/__init__.pyi",
        "jax-stubs/nn/initializers.pyi",
        "jax-stubs/numpy/__init__.pyi",
        "jax-stubs/numpy/fft.pyi",
        "jax-stubs/numpy/linalg.pyi",
    }
)

PLATFORM_PROBE = '''\
"""Platform types as a user sees them: the right params pass, the wrong ones fail."""

from typing import Literal

import typed_pallas
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def needs_tpu(params: typed_pallas.CompilerParams[Literal["tpu"]]) -> None: ...


needs_tpu(pltpu.CompilerParams())
needs_tpu(pltriton.CompilerParams())  # wrong platform
'''
WRONG_LINE = 14



def _source_files(folder: str) -> set[str]:
    """Files under ``folder`` that a build would pick up (no caches, no compiled files)."""
    root = REPO / folder
    found = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if d != "__pycache__" and not d.startswith(".")]
        for name in filenames:
            if name.endswith((".pyc", ".pyo")) or name.startswith("."):
                continue
            found.add(Path(dirpath, name).relative_to(root).as_posix())
    return found


def _wheel_names(dist: Dist) -> set[str]:
    with zipfile.ZipFile(dist.wheel) as wheel:
        return set(wheel.namelist())


def test_wheel_has_every_source_file_stub_and_marker(dist: Dist) -> None:
    names = _wheel_names(dist)
    for folder, top in PACKAGES.items():
        source = _source_files(folder)
        in_wheel = {name.removeprefix(f"{top}/") for name in names if name.startswith(f"{top}/")}
        assert source - in_wheel == set(), f"{folder}: missing from the wheel"
        assert in_wheel - source == set(), f"{top}: in the wheel but not in {folder}"
        assert "py.typed" in in_wheel, f"{top}/py.typed (PEP 561 marker) missing"
    assert "stubs/jax-stubs" in PACKAGES, "the wheel does not ship stubs/jax-stubs"
    stubs = {name for name in names if name.startswith(f"{STUBS}/")}
    assert any(name.endswith(".pyi") for name in stubs), f"no .pyi in the wheel's {STUBS}"
    with zipfile.ZipFile(dist.wheel) as wheel:
        marker = wheel.read(f"{STUBS}/py.typed").decode()
        assert marker.strip() == "partial", "jax-stubs must be a PEP 561 *partial* stub package"
        assert marker == (REPO / "stubs/jax-stubs/py.typed").read_text()
        for source_file, target in FILES.items():
            assert wheel.read(target) == (REPO / source_file).read_bytes(), target


def test_no_stub_file_shared_with_jax_pyrefly_stubs(dist: Dist) -> None:
    """Rule 1 of docs/stub-layout-notes.md, whatever folder our jax-stubs is installed in: no
    module stub at a path jax-pyrefly-stubs uses (in a shared folder it would overwrite
    theirs and vanish when either package is uninstalled)."""
    ours = {name.removeprefix(f"{STUBS}/") for name in _wheel_names(dist) if name.startswith(f"{STUBS}/")}
    theirs = {name.removeprefix("jax-stubs/") for name in JAX_PYREFLY_STUBS_FILES}
    assert ours & theirs == {"py.typed"}, f"{sorted(ours & theirs - {'py.typed'})} collide with jax-pyrefly-stubs"


def test_wheel_metadata_declares_range_license_and_entry_points(dist: Dist) -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    with zipfile.ZipFile(dist.wheel) as wheel:
        info = next(n.split("/")[0] for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(wheel.read(f"{info}/METADATA").decode())
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
        licenses = [n for n in wheel.namelist() if n.startswith(f"{info}/licenses/")]
    assert metadata["Name"] == "typed-pallas" and metadata["Version"] == project["version"]
    assert metadata["License-Expression"] == "Apache-2.0"
    requires = metadata.get_all("Requires-Dist") or []
    assert any(r.replace(" ", "").startswith("jax") and "<0.13" in r and ">=0.10" in r for r in requires), requires
    assert "typed-pallas = typed_pallas_mypy.cli:main" in entry_points
    assert "typed_pallas = typed_pallas.pytest_plugin" in entry_points
    assert licenses == [f"{info}/licenses/LICENSE"]
    with zipfile.ZipFile(dist.wheel) as wheel:
        assert b"Apache License" in wheel.read(licenses[0])


def test_sdist_has_sources_docs_and_license(dist: Dist) -> None:
    with tarfile.open(dist.sdist) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    for required in ("pyproject.toml", "README.md", "LICENSE", "CHANGELOG.md", "stubs/jax-stubs/py.typed"):
        assert required in names, required
    for folder in PACKAGES:
        missing = {f"{folder}/{f}" for f in _source_files(folder)} - names
        assert missing == set(), f"missing from the sdist: {sorted(missing)}"


# --- the installed wheel -------------------------------------------------------------------


@pytest.fixture(scope="module")
def probe_dir(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("probe")
    (folder / "platform_probe.py").write_text(PLATFORM_PROBE)
    return folder


def test_everything_comes_from_the_wheel(installed: Venv) -> None:
    assert_not_from_checkout(installed)
    stubs = installed.site / STUBS
    assert (stubs / "py.typed").read_text() == (REPO / "stubs/jax-stubs/py.typed").read_text()
    root = installed.stubs_root()
    if root is not None:  # an own sys.path root (added by a .pth): python must put it on sys.path
        result = installed.python_run("import sys; print('\\n'.join(sys.path))")
        assert str(root) in result.stdout.splitlines(), result.stdout
    assert sorted(p.relative_to(stubs).as_posix() for p in stubs.rglob("*.pyi")) == sorted(
        f for f in _source_files("stubs/jax-stubs") if f.endswith(".pyi")
    )
    result = installed.python_run("import sys, typed_pallas; assert 'jax' not in sys.modules; print('ok')")
    assert result.stdout.strip() == "ok", result.stderr


def _assert_only_wrong_line(checked: Checked, checker: str) -> None:
    assert checked.error_lines("platform_probe.py") == {WRONG_LINE}, f"{checker}:\n{checked.output[-3000:]}"
    assert {f for f, _ in checked.errors} == {"platform_probe.py"}, f"{checker}:\n{checked.output[-3000:]}"


def test_mypy_with_plugin_sees_platform_types(installed: Venv, probe_dir: Path) -> None:
    checked = installed.mypy(probe_dir, ["platform_probe.py"], config=MYPY_CONFIG)
    assert "Error importing plugin" not in checked.output and "Traceback" not in checked.output, checked.output
    assert checked.returncode == 1, checked.output
    _assert_only_wrong_line(checked, "mypy")
    assert "[arg-type]" in checked.output


@pytest.mark.parametrize("tool", ["pyright", "basedpyright"])
def test_pyright_sees_platform_types(installed: Venv, probe_dir: Path, tool: str) -> None:
    _assert_only_wrong_line(installed.pyright(probe_dir, ["platform_probe.py"], tool=tool), tool)


def test_pyrefly_sees_platform_types(installed: Venv, probe_dir: Path) -> None:
    _assert_only_wrong_line(installed.pyrefly(probe_dir, ["platform_probe.py"]), "pyrefly")


def test_ty_sees_platform_types(installed: Venv, probe_dir: Path) -> None:
    _assert_only_wrong_line(installed.ty(probe_dir, ["platform_probe.py"]), "ty")


def test_cli_check_and_explain_run_from_the_wheel(installed: Venv, probe_dir: Path) -> None:
    from pkg_env import _run, clean_environ

    exe = installed.root / "bin" / "typed-pallas"
    assert exe.exists(), "console script typed-pallas not installed"
    folder = probe_dir / "cli"  # no config file here: zero configuration, as the README promises
    folder.mkdir(exist_ok=True)
    (folder / "platform_probe.py").write_text(PLATFORM_PROBE)
    (folder / "right_only.py").write_text(PLATFORM_PROBE.replace("needs_tpu(pltriton.CompilerParams())", "pass"))
    cache = ["--cache-dir", str(installed.mypy_cache)]
    wrong = _run([exe, "check", "--all-errors", *cache, "platform_probe.py"], cwd=folder, env=clean_environ())
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert f"platform_probe.py:{WRONG_LINE}:" in wrong.stdout, wrong.stdout + wrong.stderr
    right = _run([exe, "check", "--all-errors", *cache, "right_only.py"], cwd=folder, env=clean_environ())
    assert right.returncode == 0, right.stdout + right.stderr
    explain = _run([exe, "explain", "pallas-platform"], cwd=folder, env=clean_environ())
    assert explain.returncode == 0 and "pallas-platform" in explain.stdout, explain.stdout + explain.stderr
