"""The built wheel and sdist, installed (not editable) into a clean venv, as a user gets them.

An editable install hides a missing ``.pyi``, a missing ``py.typed`` or a plugin
module left out of the wheel; these tests build the sdist, build the wheel from it,
install the wheel into a venv that cannot see the checkout (see pkg_env.py) and
check from there: the wheel's files against an allowlist of what each of its folders may
hold (and its size against a bound), the file lists against the source tree, the metadata of both
artifacts against pyproject (name, version, requires-python, classifiers, project
URLs, extras, entry points), the documentation pages the CLI links, the mypy plugin
loading, the platform types in mypy, pyright, pyrefly and ty (a wrong-platform call
fails, the right one passes), ``typed-pallas check`` / ``explain`` / ``--version`` and
``typed_pallas.__version__``, and the README's first install line (a path install from
a clone, this checkout standing in for it).
"""

from __future__ import annotations

import email.message
import email.parser
import fnmatch
import os
import re
import tarfile
import tomllib
import zipfile
from collections.abc import Callable
from pathlib import Path

import pytest
from pkg_env import (
    MYPY_CONFIG,
    REPO,
    Checked,
    Dist,
    Venv,
    assert_not_from_checkout,
    stubs_in_wheel,
    wheel_layout,
)

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


#: What the wheel may hold, folder by folder (shell-style patterns; ``*`` crosses folders):
#: sources, stubs, PEP 561 markers, the stubs root's .pth, the error pages the CLI reads, the
#: documentation pages in the metadata folder, and what a wheel's metadata always has.
#: Anything else (a built wheel, a compiled extension, a cache) is a stray file.
WHEEL_ALLOWLIST: dict[str, tuple[str, ...]] = {
    "typed_pallas/": ("*.py", "py.typed"),
    "typed_pallas_mypy/": ("*.py", "py.typed", "errors/*.md"),
    "typed_pallas_stubs/": ("jax-stubs/*.pyi", "jax-stubs/py.typed"),
    "typed_pallas-*.dist-info/": (
        "METADATA",
        "WHEEL",
        "RECORD",
        "entry_points.txt",
        "licenses/LICENSE",
        "extra_metadata/docs/*.md",
    ),
    "": ("typed_pallas_stubs.pth",),  # files at the wheel's root
}
#: the bound on the wheel's size: it is about 700 kB (the code, the evaluator beside the
#: rules it replaces until they are deleted, JAX's API table, the docs in its metadata,
#: the results history the most: 43 kB compressed); a stray binary is megabytes
WHEEL_SIZE_LIMIT = 800_000


def not_allowed_in_wheel(names: list[str]) -> list[str]:
    """The names of a wheel's files that ``WHEEL_ALLOWLIST`` does not allow, in order."""
    refused = []
    for name in names:
        if name.endswith("/"):
            continue  # a folder entry
        folder, _, rest = name.partition("/")
        if not rest:
            folder, rest = "", name
        allowed = next(
            (
                patterns
                for prefix, patterns in WHEEL_ALLOWLIST.items()
                if prefix and fnmatch.fnmatchcase(f"{folder}/", prefix)
            ),
            WHEEL_ALLOWLIST[""] if folder == "" else (),
        )
        if not any(fnmatch.fnmatchcase(rest, pattern) for pattern in allowed):
            refused.append(name)
    return refused


def test_the_allowlist_refuses_stray_files() -> None:
    """The allowlist itself: what the wheel holds today passes, stray files are refused."""
    allowed = [
        "typed_pallas/__init__.py",
        "typed_pallas/py.typed",
        "typed_pallas_mypy/transformers/calls.py",
        "typed_pallas_mypy/errors/pallas-platform.md",
        "typed_pallas_stubs/jax-stubs/experimental/pallas/tpu.pyi",
        "typed_pallas_stubs/jax-stubs/py.typed",
        "typed_pallas_stubs.pth",
        "typed_pallas-0.1.0.dist-info/METADATA",
        "typed_pallas-0.1.0.dist-info/extra_metadata/docs/errors.md",
        "typed_pallas-0.1.0.dist-info/licenses/LICENSE",
        "typed_pallas_mypy/cli/",
    ]
    stray = [
        "typed_pallas_mypy/transformers/ruff-0.17.6-py3-none-manylinux_2_17_x86_64.whl",
        "typed_pallas/_speedups.cpython-312-x86_64-linux-gnu.so",
        "typed_pallas/__pycache__/_select.cpython-312.pyc",
        "typed_pallas_mypy/notes.md",
        "typed_pallas_stubs/jax-stubs/experimental/pallas/tpu.py",
        "typed_pallas_stubs/other-stubs/x.pyi",
        "typed_pallas-0.1.0.dist-info/extra_metadata/docs/image.png",
        "conftest.py",
        "tests/test_wheel.py",
    ]
    assert not_allowed_in_wheel(allowed) == []
    assert not_allowed_in_wheel(allowed + stray) == stray


def test_wheel_holds_only_allowed_files_and_stays_small(dist: Dist) -> None:
    size = dist.wheel.stat().st_size
    print(f"{dist.wheel.name}: {size:,} bytes (limit {WHEEL_SIZE_LIMIT:,})")
    with zipfile.ZipFile(dist.wheel) as wheel:
        names = wheel.namelist()
        biggest = max(wheel.infolist(), key=lambda info: info.compress_size)
    assert not_allowed_in_wheel(names) == [], "stray files in the wheel"
    assert size < WHEEL_SIZE_LIMIT, f"{size:,} bytes; the biggest file is {biggest.filename}"


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


def _allowed_source_files(folder: str) -> set[str]:
    """``_source_files(folder)`` that the allowlist lets into the wheel (where it puts them)."""
    top = PACKAGES[folder]
    return {f for f in _source_files(folder) if not not_allowed_in_wheel([f"{top}/{f}"])}


def _wheel_names(dist: Dist) -> set[str]:
    with zipfile.ZipFile(dist.wheel) as wheel:
        return set(wheel.namelist())


def test_wheel_has_every_allowed_source_file_stub_and_marker(dist: Dist) -> None:
    """Every source file the allowlist accepts ships (a file left out of the build fails);
    what the source folders hold beyond it is for the allowlist test above to refuse."""
    names = _wheel_names(dist)
    for folder, top in PACKAGES.items():
        source = _allowed_source_files(folder)
        in_wheel = {name.removeprefix(f"{top}/") for name in names if name.startswith(f"{top}/")}
        assert source - in_wheel == set(), f"{folder}: missing from the wheel"
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
    ours = {
        name.removeprefix(f"{STUBS}/")
        for name in _wheel_names(dist)
        if name.startswith(f"{STUBS}/")
    }
    theirs = {name.removeprefix("jax-stubs/") for name in JAX_PYREFLY_STUBS_FILES}
    assert ours & theirs == {"py.typed"}, (
        f"{sorted(ours & theirs - {'py.typed'})} collide with jax-pyrefly-stubs"
    )


def _wheel_metadata(dist: Dist) -> tuple[str, email.message.Message, str]:
    with zipfile.ZipFile(dist.wheel) as wheel:
        info = next(n.split("/")[0] for n in wheel.namelist() if n.endswith(".dist-info/METADATA"))
        metadata = email.parser.Parser().parsestr(wheel.read(f"{info}/METADATA").decode())
        entry_points = wheel.read(f"{info}/entry_points.txt").decode()
    return info, metadata, entry_points


def _sdist_metadata(dist: Dist) -> email.message.Message:
    with tarfile.open(dist.sdist) as sdist:
        member = next(
            m for m in sdist.getmembers() if m.name.count("/") == 1 and m.name.endswith("/PKG-INFO")
        )
        data = sdist.extractfile(member)
        assert data is not None
        return email.parser.Parser().parsestr(data.read().decode())


def _entry_point_sections(text: str) -> dict[str, dict[str, str]]:
    sections: dict[str, dict[str, str]] = {}
    current: dict[str, str] = {}
    for line in text.splitlines():
        if line.startswith("[") and line.endswith("]"):
            current = sections.setdefault(line[1:-1], {})
        elif "=" in line:
            name, _, value = line.partition("=")
            current[name.strip()] = value.strip()
    return sections


@pytest.mark.parametrize("artifact", ["wheel", "sdist"])
def test_metadata_is_the_pyproject_metadata(dist: Dist, artifact: str) -> None:
    """Name, version, Python, classifiers, project URLs: the built artifacts say what pyproject says."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    metadata = _wheel_metadata(dist)[1] if artifact == "wheel" else _sdist_metadata(dist)
    assert metadata["Name"] == project["name"] == "typed-pallas"
    assert metadata["Version"] == project["version"]
    assert metadata["Requires-Python"] == project["requires-python"]
    assert metadata["Summary"] == project["description"]
    assert (metadata.get_all("Classifier") or []) == project["classifiers"]
    urls = {
        label: url
        for label, _, url in (e.partition(", ") for e in metadata.get_all("Project-URL") or [])
    }
    assert urls == project.get("urls", {})
    # the classifiers follow what CI tests (scripts/_venv.sh), and nothing else
    tested = {f"Programming Language :: Python :: {v}" for v in ("3.11", "3.12", "3.13")}
    declared = {
        c for c in project["classifiers"] if c.startswith("Programming Language :: Python :: 3.")
    }
    assert declared == tested
    extras = set(metadata.get_all("Provides-Extra") or [])
    assert extras == set(project["optional-dependencies"]), extras


def test_wheel_metadata_declares_range_license_and_entry_points(dist: Dist) -> None:
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    info, metadata, entry_points = _wheel_metadata(dist)
    with zipfile.ZipFile(dist.wheel) as wheel:
        licenses = [n for n in wheel.namelist() if n.startswith(f"{info}/licenses/")]
    assert info == f"typed_pallas-{project['version']}.dist-info"
    assert metadata["License-Expression"] == "Apache-2.0"
    requires = metadata.get_all("Requires-Dist") or []
    assert any(
        r.replace(" ", "").startswith("jax") and "<0.13" in r and ">=0.10" in r for r in requires
    ), requires
    from packaging.requirements import Requirement

    mypy_extra = Requirement(
        next(r for r in requires if r.startswith("mypy") and "extra == 'mypy'" in r)
    )
    (declared,) = (Requirement(r) for r in project["optional-dependencies"]["mypy"])
    assert (mypy_extra.name, mypy_extra.specifier) == (declared.name, declared.specifier)
    sections = _entry_point_sections(entry_points)
    assert (
        sections["console_scripts"]
        == project["scripts"]
        == {"typed-pallas": "typed_pallas_mypy.cli:main"}
    )
    assert (
        sections["pytest11"]
        == project["entry-points"]["pytest11"]
        == {"typed_pallas": "typed_pallas.pytest_plugin"}
    )
    assert set(sections) == {"console_scripts", *project["entry-points"]}
    assert licenses == [f"{info}/licenses/LICENSE"]
    with zipfile.ZipFile(dist.wheel) as wheel:
        assert b"Apache License" in wheel.read(licenses[0])


def test_wheel_ships_the_documentation_the_cli_links(dist: Dist) -> None:
    """The CLI's messages point to `typed-pallas explain TOPIC`: docs/ is in the wheel's metadata folder."""
    from typed_pallas_mypy.cli.explain import TOPICS

    info = _wheel_metadata(dist)[0]
    with zipfile.ZipFile(dist.wheel) as wheel:
        shipped = {
            n.removeprefix(f"{info}/extra_metadata/docs/")
            for n in wheel.namelist()
            if "/extra_metadata/docs/" in n
        }
        assert shipped == {p.name for p in (REPO / "docs").iterdir() if p.suffix == ".md"}
        for page in TOPICS.values():
            assert (
                wheel.read(f"{info}/extra_metadata/docs/{page}")
                == (REPO / "docs" / page).read_bytes()
            ), page
        assert not [n for n in wheel.namelist() if n.startswith("typed_pallas_mypy/docs/")]


def test_sdist_has_sources_docs_and_license(dist: Dist) -> None:
    with tarfile.open(dist.sdist) as sdist:
        names = {name.split("/", 1)[1] for name in sdist.getnames() if "/" in name}
    for required in (
        "pyproject.toml",
        "README.md",
        "LICENSE",
        "CHANGELOG.md",
        "stubs/jax-stubs/py.typed",
    ):
        assert required in names, required
    for folder in PACKAGES:
        missing = {f"{folder}/{f}" for f in _allowed_source_files(folder)} - names
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
    result = installed.python_run(
        "import sys, typed_pallas; assert 'jax' not in sys.modules; print('ok')"
    )
    assert result.stdout.strip() == "ok", result.stderr


def _assert_only_wrong_line(checked: Checked, checker: str) -> None:
    assert checked.error_lines("platform_probe.py") == {WRONG_LINE}, (
        f"{checker}:\n{checked.output[-3000:]}"
    )
    assert {f for f, _ in checked.errors} == {"platform_probe.py"}, (
        f"{checker}:\n{checked.output[-3000:]}"
    )


def test_mypy_with_plugin_sees_platform_types(installed: Venv, probe_dir: Path) -> None:
    checked = installed.mypy(probe_dir, ["platform_probe.py"], config=MYPY_CONFIG)
    assert "Error importing plugin" not in checked.output and "Traceback" not in checked.output, (
        checked.output
    )
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
    (folder / "right_only.py").write_text(
        PLATFORM_PROBE.replace("needs_tpu(pltriton.CompilerParams())", "pass")
    )
    cache = ["--cache-dir", str(installed.mypy_cache)]
    wrong = _run(
        [exe, "check", "--all-errors", *cache, "platform_probe.py"], cwd=folder, env=clean_environ()
    )
    assert wrong.returncode == 1, wrong.stdout + wrong.stderr
    assert f"platform_probe.py:{WRONG_LINE}:" in wrong.stdout, wrong.stdout + wrong.stderr
    right = _run(
        [exe, "check", "--all-errors", *cache, "right_only.py"], cwd=folder, env=clean_environ()
    )
    assert right.returncode == 0, right.stdout + right.stderr
    explain = _run([exe, "explain", "pallas-platform"], cwd=folder, env=clean_environ())
    assert explain.returncode == 0 and "pallas-platform" in explain.stdout, (
        explain.stdout + explain.stderr
    )
    topic = _run([exe, "explain", "configuration"], cwd=folder, env=clean_environ())
    assert topic.returncode == 0, topic.stdout + topic.stderr
    assert topic.stdout == (REPO / "docs" / "configuration.md").read_text()
    version = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    shown = _run([exe, "--version"], cwd=folder, env=clean_environ())
    assert shown.stdout.startswith(f"typed-pallas {version} (mypy "), shown.stdout + shown.stderr
    runtime = installed.python_run("import typed_pallas; print(typed_pallas.__version__)")
    assert runtime.stdout.strip() == version, runtime.stderr


def _readme_install_line() -> str:
    """The README's first `pip install` line (in its "Install and use" block)."""
    text = (REPO / "README.md").read_text()
    return next(
        line.strip() for line in text.splitlines() if line.strip().startswith("pip install")
    )


def test_readme_first_install_line_installs_from_a_clone(make_venv: Callable[[str], Venv]) -> None:
    """`pip install "/path/to/typed-pallas[mypy]"`, with this checkout as the clone, installs a
    working typed-pallas (what pip builds from the path: the same backend as the wheel above)."""
    import shlex

    from pkg_env import _run, clean_environ

    words = shlex.split(_readme_install_line().split("#")[0])
    assert words[:2] == ["pip", "install"] and len(words) == 3, words
    requirement = words[2]
    assert requirement.startswith("/path/to/typed-pallas[") and requirement.endswith("[mypy]"), (
        requirement
    )
    venv = make_venv("readme")
    local = requirement.replace("/path/to/typed-pallas", str(REPO))
    # --no-deps: jax and mypy come from the test environment (the venv sees them already)
    installed_from_path = _run(
        [venv.python, "-m", "pip", "install", "--no-deps", local], env=clean_environ()
    )
    log = installed_from_path.stdout + installed_from_path.stderr
    if installed_from_path.returncode != 0 and re.search(
        r"(No matching distribution|Network is unreachable|Temporary failure in name resolution)",
        log,
    ):
        pytest.skip(
            f"cannot build: the index is unreachable to fetch the build backend (hatchling):\n{log[-800:]}"
        )
    assert installed_from_path.returncode == 0, log
    assert_not_from_checkout(venv)
    version = _run([venv.root / "bin" / "typed-pallas", "--version"], env=clean_environ())
    assert version.returncode == 0 and version.stdout.startswith("typed-pallas "), (
        version.stdout + version.stderr
    )
