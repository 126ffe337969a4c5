"""`typed-pallas`: what it does without mypy installed, and which mypy errors `check` shows.

mypy is an optional extra (`typed-pallas[mypy]`), so the command must start without it.
Each case runs in a fresh interpreter in which importing mypy fails.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

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


# --------------------------------------------------------------------------- what `check` shows


def _finding(message: str, code: str, notes: list[str] | None = None) -> object:
    from typed_pallas_mypy.cli.findings import Finding

    return Finding("m.py", 3, 5, "error", message, code, notes or [])


@pytest.mark.parametrize(
    ("message", "code", "shown"),
    [
        pytest.param(
            'Argument "compiler_params" to "pallas_call" has incompatible type "dict[str, dict[str, int]]"; '
            'expected "CompilerParams | None"',
            "arg-type",
            True,
            id="legacy-dict-params-shown",
        ),
        pytest.param(
            'Argument "compiler_params" to "kernel" has incompatible type "CompilerParams"; '
            "expected \"CompilerParams[Literal['gpu']] | None\"",
            "arg-type",
            True,
            id="stub-platform-mismatch-shown",
        ),
        pytest.param(
            'Argument "out_shape" to "pallas_call" has incompatible type "int"; expected "Any"',
            "arg-type",
            False,
            id="other-arg-type-hidden",
        ),
        pytest.param(
            'Argument 3 to "kernel" has incompatible type "**dict[str, Mesh]"; '
            "expected \"CompilerParams[Literal['gpu']] | None\"",
            "arg-type",
            False,
            id="splat-without-params-hidden",
        ),
        pytest.param('Name "x" is not defined', "name-defined", False, id="other-error-hidden"),
    ],
)
def test_check_shows_params_type_errors_only(message: str, code: str, shown: bool) -> None:
    from typed_pallas_mypy.cli.findings import is_typed_pallas_finding

    assert is_typed_pallas_finding(_finding(message, code), frozenset({"pallas-platform"})) is shown  # type: ignore[arg-type]
