"""The ``typed-pallas`` command itself (``cli/__init__.py``): ``--version``, help texts, what
works without mypy installed, the documentation of its options, and the pre-commit hook."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from cli_support import ROOT

from typed_pallas_mypy import cli, config
from typed_pallas_mypy.cli import check


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert re.match(
        r"typed-pallas \S+ \(mypy \S+, Python 3\.\d+\.\d+\)$", capsys.readouterr().out.strip()
    )


def test_check_help_has_no_checkout_paths() -> None:
    parser = cli.build_parser()
    check_help = parser._subparsers._group_actions[0].choices["check"].format_help()  # type: ignore[union-attr]
    assert "docs/" not in check_help and "sarif" in check_help
    assert check.SLOW_NOTICE.startswith("{prog}: first analysis of jax")


def test_empty_selection_is_documented() -> None:
    help_text = cli.build_parser()._subparsers._group_actions[0].choices["check"].format_help()  # type: ignore[union-attr]
    assert "with no Python file, or a file that is not Python: an error" in help_text
    assert "exit status 2 (nothing was checked)" in help_text
    doc = (ROOT / "docs" / "configuration.md").read_text()
    assert "there are no .py[i] files in" in doc and "not a Python file" in doc


def test_configuration_doc_covers_every_key() -> None:
    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    names = [
        *config.TOP_LEVEL_KEYS, *config.OVERRIDE_KEYS, *config.CONFIG_PLATFORM_NAMES,
        config.PLATFORMS_ENV, config.CONFIG_ENV, f"[{config.TOML_TABLE}]", f"[{config.INI_SECTION}]",
        config.INI_OVERRIDE_PREFIX, "--platform", "--all-errors", "--output", "--expect",
    ]  # fmt: skip
    for name in names:
        assert name in doc, name


# --------------------------------------------------------------------------- without mypy


_BLOCK_MYPY = textwrap.dedent(
    """
    import importlib.abc, importlib.util, sys

    class _NoMypy(importlib.abc.MetaPathFinder):
        def find_spec(self, name, path=None, target=None):
            if name == "mypy" or name.startswith("mypy."):
                raise ModuleNotFoundError(f"No module named {name!r}")
            return None

    sys.meta_path.insert(0, _NoMypy())
    _find_spec = importlib.util.find_spec
    importlib.util.find_spec = lambda name, *a, **k: None if name == "mypy" else _find_spec(name, *a, **k)
    from typed_pallas_mypy.cli import main
    code = main(sys.argv[1:])
    assert "mypy" not in sys.modules, "mypy was imported"
    sys.exit(code)
    """
)


def _run(*args: str, cwd: str | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", _BLOCK_MYPY, *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        check=False,
    )


def test_version_works_without_mypy() -> None:
    result = _run("--version")
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("typed-pallas "), result.stdout


def test_explain_works_without_mypy() -> None:
    result = _run("explain", "pallas-platform")
    assert result.returncode == 0, result.stderr
    assert "# pallas-platform" in result.stdout


def test_check_without_mypy_says_what_to_install(tmp_path: Path) -> None:
    source = tmp_path / "kernel.py"
    source.write_text("x = 1\n")
    result = _run("check", str(source), cwd=str(tmp_path))
    assert result.returncode == 2, (result.stdout, result.stderr)
    assert "mypy is not installed" in result.stderr and "typed-pallas[mypy]" in result.stderr, (
        result.stderr
    )


def test_plugin_package_imports_without_mypy() -> None:
    code = (
        "import sys\n"
        "import typed_pallas_mypy\n"
        "assert callable(typed_pallas_mypy.plugin)\n"
        "assert 'mypy' not in sys.modules, sorted(m for m in sys.modules if m.startswith('mypy'))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


# --------------------------------------------------------------------------- pre-commit, version


def test_pre_commit_hook_definition() -> None:
    yaml = pytest.importorskip("yaml")
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (hook,) = hooks
    assert hook["id"] == "typed-pallas"
    assert hook["entry"] == "typed-pallas check"
    assert hook["language"] == "python"
    assert "python" in hook["types_or"]


def test_pre_commit_examples_work_without_a_tag() -> None:
    """docs/configuration.md's `repo: local` hook runs what .pre-commit-hooks.yaml runs, and no
    example pins a `rev` that does not exist (a tag-less repository: a commit or a local hook)."""
    yaml = pytest.importorskip("yaml")
    root = ROOT
    (hook,) = yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text())
    doc = (root / "docs" / "configuration.md").read_text()
    section = doc[doc.index("## pre-commit") :]
    blocks = [
        yaml.safe_load(b) for b in section.split("```yaml\n")[1:] for b in [b.split("```")[0]]
    ]
    local = next(b for b in blocks if b["repos"][0]["repo"] == "local")["repos"][0]["hooks"][0]
    for key in ("id", "entry", "types_or", "require_serial"):
        assert local[key] == hook[key], key
    assert local["language"] == "system"  # the project's own environment: its jax, mypy and cache
    remote = next(b for b in blocks if b["repos"][0]["repo"] != "local")["repos"][0]
    assert "commit" in section[: section.index(str(remote["rev"]))] or "tag" in str(remote["rev"])
    assert remote["hooks"][0]["id"] == hook["id"]
    assert remote["hooks"][0]["additional_dependencies"][0] == hook["additional_dependencies"][0]


def test_version_is_declared_once() -> None:
    """pyproject's version is the only one: the runtime, the plugin and the CLI read the metadata."""
    import importlib.metadata
    import tomllib

    import typed_pallas
    from typed_pallas_mypy import config as plugin_config

    root = ROOT
    declared = tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]
    assert typed_pallas.__version__ == importlib.metadata.version("typed-pallas") == declared
    assert plugin_config.package_version() == declared
    assert f'"{declared}"' not in (root / "src" / "typed_pallas" / "__init__.py").read_text()
