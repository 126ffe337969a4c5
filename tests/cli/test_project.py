"""``cli/project.py``: what ``typed-pallas check`` finds out about the project's layout (src
layouts, the project's own ``mypy_path``, its own module names) and gives mypy."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from cli_support import fake_mypy

from typed_pallas_mypy import cli
from typed_pallas_mypy.cli import findings, project


def _src_project(root: Path, *, init: bool) -> None:
    pkg = root / "src" / "pkg"
    pkg.mkdir(parents=True)
    if init:
        (pkg / "__init__.py").write_text("")
    (pkg / "kernels.py").write_text("def body(x_ref, o_ref): ...\n")
    (pkg / "dispatch.py").write_text("from pkg.kernels import body\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_pkg.py").write_text("import pkg\n")
    (root / "tool.py").write_text("")


@pytest.mark.parametrize("init", [True, False], ids=["package", "namespace-package"])
def test_src_layout_is_added_to_mypy_path(proj: Path, init: bool) -> None:
    _src_project(proj, init=init)
    for paths in (["src/pkg/dispatch.py"], ["src/pkg"], ["src"], ["src/pkg", "tests"]):
        layout = project.find_layout(paths)
        assert layout.mypy_path == (str(proj / "src"),), paths
        assert layout.explicit_package_bases and layout.origins == (f"src layout (src{os.sep})",)
        assert {"pkg", "tests", "tool"} <= set(layout.own_modules), layout.own_modules
    flat = project.find_layout(["tests", "tool.py"])
    assert flat.mypy_path == () and not flat.explicit_package_bases  # nothing under src/
    assert "pkg" not in flat.own_modules and {"tests", "tool"} <= set(flat.own_modules)


def test_src_without_packages_is_not_a_src_layout(proj: Path) -> None:
    (proj / "src").mkdir()
    (proj / "src" / "script.py").write_text("")
    assert project.find_layout(["src/script.py"]).mypy_path == ()


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("mypy.ini", "[mypy]\nmypy_path = lib, $MYPY_CONFIG_FILE_DIR/vendor\n"),
        ("pyproject.toml", '[tool.mypy]\nmypy_path = ["lib", "$MYPY_CONFIG_FILE_DIR/vendor"]\n'),
        ("setup.cfg", "[mypy]\nmypy_path = lib:vendor\n"),
    ],
)
def test_projects_own_mypy_path_is_used(proj: Path, name: str, text: str) -> None:
    (proj / name).write_text(text)
    for folder in ("lib/libpkg", "vendor/vend"):
        (proj / folder).mkdir(parents=True)
        (proj / folder / "__init__.py").write_text("")
    layout = project.find_layout(["."])
    assert layout.mypy_path == (str(proj / "lib"), str(proj / "vendor"))
    assert layout.origins == (f"{name}: mypy_path",) * 2
    assert not layout.explicit_package_bases  # the project's own settings, no more
    assert {"libpkg", "vend"} <= set(layout.own_modules)


def test_preset_carries_the_layout(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _src_project(proj, init=False)
    fake = fake_mypy(monkeypatch)
    assert cli.main(["check", "src/pkg"]) == 0
    (preset,) = fake.presets
    assert f"mypy_path = {proj / 'src'}\n" in preset and "explicit_package_bases = True\n" in preset
    own = next(line for line in preset.splitlines() if line.startswith("[mypy-pkg"))
    assert {"pkg.*", "tests.*", "tool.*"} <= set(own[len("[mypy-") : -1].split(","))
    assert preset.endswith(f"{own}\nignore_missing_imports = False\nfollow_imports = normal\n")
    assert findings.PRESET in preset.replace(
        f"mypy_path = {proj / 'src'}\nexplicit_package_bases = True\n", ""
    )
    # jax's missing modules are reported (check turns them into a warning) before the own ones
    assert "[mypy-jax.*]\nignore_missing_imports = False\n" in preset
    assert preset.index("[mypy-jax.*]") < preset.index(own)
    # what eval/ and benchmarks/ run is unchanged
    assert findings.preset_config() == findings.PRESET and "[mypy-" not in findings.PRESET


# --------------------------------------------------------------------------- shared module names


def _write(root: Path, *files: str) -> None:
    for name in files:
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text("")


def test_files_sharing_a_module_name_are_found(proj: Path) -> None:
    _write(proj, "flash/kernel.py", "matmul/kernel.py", "kernel.py", "flash/utils.py")
    files = sorted(project.python_files(["."]))
    assert project.shared_module_names(files) == (
        ("kernel", ("flash/kernel.py", "kernel.py", "matmul/kernel.py")),
    )
    layout = project.find_layout(["."])
    assert layout.explicit_package_bases
    assert "kernel" in layout.own_modules  # `import kernel` beside one: warned, not silent
    assert layout.note() is not None and layout.note().startswith(  # type: ignore[union-attr]
        "1 module name is shared by several files (kernel: flash/kernel.py, kernel.py, "
        "matmul/kernel.py): "
    )


@pytest.mark.parametrize(
    "files",
    [
        ("flash/__init__.py", "flash/kernel.py", "matmul/__init__.py", "matmul/kernel.py"),
        ("flash/kernel.py", "flash/kernel.pyi"),  # one module: the stub and its source
        ("flash/kernel.py", "matmul/matmul_kernel.py"),
    ],
    ids=["packages", "stub-beside-source", "different-names"],
)
def test_files_with_their_own_module_names_are_not_shared(proj: Path, files: tuple[str]) -> None:
    _write(proj, *files)
    assert project.shared_module_names(project.python_files(["."])) == ()
    layout = project.find_layout(["."])
    assert not layout.explicit_package_bases and layout.note() is None


def test_excluded_files_do_not_share_a_name(proj: Path) -> None:
    _write(proj, "flash/kernel.py", "old/kernel.py")
    assert project.checked_files(["."], exclude=["^old/"]) == ["flash/kernel.py"]
    assert project.shared_module_names(project.checked_files(["."], exclude=["^old/"])) == ()
    assert project.shared_module_names(project.checked_files(["."], exclude=["^build/"])) != ()
    assert not project.find_layout(["."], exclude=["^old/$"]).explicit_package_bases
    # a file named on the command line is checked whatever the patterns say (as mypy does)
    assert project.checked_files(["old/kernel.py"], exclude=["^old/"]) == ["old/kernel.py"]


def test_module_names_follow_mypys_rules(proj: Path) -> None:
    _write(
        proj,
        "pkg/__init__.py",
        "pkg/sub/__init__.py",
        "pkg/sub/kernel.py",
        "pkg/ns/kernel.py",  # a namespace folder inside a package
        "loose/kernel.py",
        "flash-attn/kernel.py",
    )
    assert project.default_module_name("pkg/sub/kernel.py") == "pkg.sub.kernel"
    assert project.default_module_name("pkg/sub/__init__.py") == "pkg.sub"
    assert project.default_module_name("pkg/ns/kernel.py") == "pkg.ns.kernel"
    assert project.default_module_name("loose/kernel.py") == "kernel"
    bases = project.package_bases([], str(proj))
    assert project.mypy_module("loose/kernel.py", bases) == ("loose.kernel", str(proj))
    # a folder that is no package name stops the crawl: the file is top-level there
    assert project.mypy_module("flash-attn/kernel.py", bases) == (
        "kernel",
        str(proj / "flash-attn"),
    )


def test_folders_that_are_no_package_names_are_checked_in_groups(proj: Path) -> None:
    """``flash-attn/kernel.py`` and ``matmul-v2/kernel.py`` are both ``kernel`` even with
    explicit_package_bases: one mypy run per group of files with distinct names, each
    folder's files together (their imports of each other resolve)."""
    _write(
        proj,
        "flash-attn/kernel.py",
        "flash-attn/run.py",
        "matmul-v2/kernel.py",
        "matmul-v2/run.py",
        "matmul-v2/tune.py",
        "tools/kernel.py",
    )
    layout = project.find_layout(["."])
    assert layout.explicit_package_bases
    assert layout.groups == (
        ("flash-attn/kernel.py", "flash-attn/run.py", "tools/kernel.py"),
        ("matmul-v2/kernel.py", "matmul-v2/run.py", "matmul-v2/tune.py"),
    )
    assert layout.note() == (
        "2 module names are shared by several files (kernel: flash-attn/kernel.py, "
        "matmul-v2/kernel.py, tools/kernel.py; 1 more): checked in 2 mypy runs, each over "
        "files whose module names differ"
    )
    # silent: package names (explicit_package_bases alone tells them apart): one run
    assert project.find_layout(["tools"]).groups == ()


@pytest.mark.parametrize(
    ("name", "text", "python"),
    [
        ("k.py", "", True),
        ("k.pyi", "", True),
        ("bench", "#!/usr/bin/env python3\n", True),
        ("notes.txt", "x = 1\n", False),
        ("run.sh", "#!/bin/sh\n", False),
    ],
)
def test_is_python_file(proj: Path, name: str, text: str, python: bool) -> None:
    (proj / name).write_text(text)
    assert project.is_python_file(name) is python


def test_group_aliases_name_this_groups_file_of_the_same_module(proj: Path) -> None:
    """mypy's one cache repeats an unchanged module's errors under the file it was cached
    with: in each group's run, the other groups' files of its module names are its own."""
    _write(proj, "flash-attn/kernel.py", "matmul-v2/kernel.py", "matmul-v2/tune.py")
    layout = project.find_layout(["."])
    bases = project.package_bases(layout.mypy_path, str(proj))
    assert project.group_aliases(layout.groups, bases) == (
        {"matmul-v2/kernel.py": "flash-attn/kernel.py"},
        {"flash-attn/kernel.py": "matmul-v2/kernel.py"},
    )
    assert project.group_aliases((), bases) == ()


def test_folders_whose_files_import_each_other_are_import_roots(proj: Path) -> None:
    """A kernel collection run from each folder (``from kernel import run`` beside
    kernel.py): with explicit_package_bases that import resolves only if the folder is a
    base, so such a folder joins mypy_path; a folder without such an import does not."""
    _write(proj, "flash/kernel.py", "matmul/kernel.py", "matmul/tune.py")
    (proj / "flash" / "bench.py").write_text("from kernel import run\nimport os\n")
    (proj / "matmul" / "tune.py").write_text("import tune\nimport numpy\n")  # itself only
    assert project.sibling_import_folders(project.checked_files(["."])) == [str(proj / "flash")]
    layout = project.find_layout(["."])
    assert layout.mypy_path == (str(proj / "flash"),)
    assert layout.origins == (f"its files import each other (flash{os.sep})",)
    assert layout.explicit_package_bases and layout.groups == ()  # kernel, matmul.kernel
    assert "bench" in layout.own_modules  # an unresolved one is still warned about
    assert layout.note() == (
        "1 module name is shared by several files (kernel: flash/kernel.py, matmul/kernel.py): "
        "1 folder whose files import each other by name is an import root (flash/); each "
        "file is checked as the module its path from the project's root names (mypy's "
        "explicit_package_bases)"
    )
    # both folders import their own kernel: both are roots, both files are `kernel`
    (proj / "matmul" / "tune.py").write_text("from kernel import run\n")
    layout = project.find_layout(["."])
    assert layout.mypy_path == (str(proj / "flash"), str(proj / "matmul"))
    assert layout.groups == (
        ("flash/bench.py", "flash/kernel.py"),
        ("matmul/kernel.py", "matmul/tune.py"),
    )
    # silent: a package folder's imports are its own business
    (proj / "matmul" / "__init__.py").write_text("")
    assert project.sibling_import_folders(["matmul/tune.py", "matmul/kernel.py"]) == []
