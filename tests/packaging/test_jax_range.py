"""The supported-JAX-range warning (runtime and mypy plugin), with fake versions.

The range is declared once, in pyproject's ``[project].dependencies``; these tests
check that the installed metadata says the same, that an in-range JAX is silent,
and that an out-of-range one gets one clear warning (never an exception).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
import warnings
from pathlib import Path

import pytest

from typed_pallas import _jax_range
from typed_pallas._jax_range import (
    OutOfRange,
    UnsupportedJaxWarning,
    check_jax_range,
    declared_ranges,
    version_in_range,
    warn_if_unsupported_jax,
)
from typed_pallas_mypy import jax_range as plugin_jax_range

REPO = Path(__file__).resolve().parents[2]
REQUIRES = ["jax>=0.10,<0.13", "jaxlib<0.13,>=0.10", "typing-extensions>=4.10", 'mypy==2.4.1; extra == "test"']


@pytest.fixture(autouse=True)
def _fresh_once_guard() -> None:
    _jax_range._warned.clear()


@pytest.mark.parametrize(
    ("version", "spec", "expected"),
    [
        ("0.10.2", ">=0.10,<0.13", True),
        ("0.10", ">=0.10,<0.13", True),
        ("0.12.0.1", ">=0.10,<0.13", True),
        ("0.12.99", ">=0.10,<0.13", True),
        ("0.13.0", ">=0.10,<0.13", False),
        ("0.13.0.dev20261129", ">=0.10,<0.13", False),  # a dev build of 0.13 is not < 0.13
        ("0.13.1+cuda", ">=0.10,<0.13", False),
        ("0.9.2", ">=0.10,<0.13", False),
        ("1.0", ">=0.10,<0.13", False),
        ("0.12.1", "~=0.12.0", True),
        ("0.13.0", "~=0.12.0", False),
        ("0.11.5", "==0.11.*", True),
        ("0.12.0", "==0.11.*", False),
        ("0.11.2", "!=0.11.2", False),
        ("0.11.2", "", True),
        ("not-a-version", ">=0.10", None),
        ("0.11", ">=banana", None),
        ("0.11", "=>0.10", None),
    ],
)
def test_version_in_range(version: str, spec: str, expected: bool | None) -> None:
    assert version_in_range(version, spec) is expected


def test_declared_ranges_ignore_markers_and_extras() -> None:
    assert declared_ranges(REQUIRES) == {"jax": ">=0.10,<0.13", "jaxlib": ">=0.10,<0.13"}
    assert declared_ranges(["jax[cuda12] (>=0.10, <0.13)"]) == {"jax": ">=0.10,<0.13"}
    assert declared_ranges(['jax<0.11; python_version < "3.12"']) == {}
    assert declared_ranges([]) == {}


def test_metadata_declares_the_range_of_pyproject() -> None:
    """One source: the installed metadata's jax range is pyproject's (no copy anywhere else)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    from_pyproject = declared_ranges(project["dependencies"])
    assert from_pyproject["jax"]  # the range exists...
    assert declared_ranges() == from_pyproject  # ...and the installed metadata agrees


def test_installed_jax_is_in_range_and_silent() -> None:
    """The test venvs run both ends of the range: no warning there."""
    assert check_jax_range() == []
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert warn_if_unsupported_jax() is None
    assert caught == []


@pytest.mark.parametrize("jax_version", ["0.13.1", "0.9.2", "0.13.0.dev20261129"])
def test_out_of_range_warns_with_both_versions_and_the_fix(jax_version: str) -> None:
    installed = {"jax": jax_version, "jaxlib": jax_version}
    with pytest.warns(UnsupportedJaxWarning) as record:
        message = warn_if_unsupported_jax(requirements=REQUIRES, installed=installed)
    assert message is not None and len(record) == 1
    text = str(record[0].message)
    assert text == message
    assert f"jax {jax_version} is installed" in text
    assert "supports jax>=0.10,<0.13" in text
    assert "pip install 'jax>=0.10,<0.13'" in text
    assert record[0].filename == __file__  # points at the caller, not at _jax_range


def test_only_the_out_of_range_distribution_is_named() -> None:
    problems = check_jax_range(requirements=REQUIRES, installed={"jax": "0.12.0.1", "jaxlib": "0.13.0"})
    assert problems == [OutOfRange("jaxlib", "0.13.0", ">=0.10,<0.13")]


@pytest.mark.parametrize(
    ("requirements", "installed"),
    [
        ([], {"jax": "0.13.1"}),  # no metadata (a source checkout): nothing to compare
        (REQUIRES, {}),  # jax not installed
        (REQUIRES, {"jax": "weird", "jaxlib": "0.12.0"}),  # unreadable version
        (["jax>=banana"], {"jax": "0.13.1"}),  # unreadable specifier
    ],
)
def test_unknown_means_silent(requirements: list[str], installed: dict[str, str]) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert warn_if_unsupported_jax(requirements=requirements, installed=installed) is None
    assert caught == []


def test_never_raises_and_warns_once() -> None:
    def broken(name: str) -> str | None:
        raise RuntimeError("metadata is corrupt")

    assert warn_if_unsupported_jax(requirements=REQUIRES, installed=broken) is None
    bad = {"jax": "0.13.1", "jaxlib": "0.13.1"}
    with pytest.warns(UnsupportedJaxWarning):
        assert warn_if_unsupported_jax(requirements=REQUIRES, installed=bad) is not None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert warn_if_unsupported_jax(requirements=REQUIRES, installed=bad) is None
    assert caught == []


def test_plugin_warns_names_itself_and_survives_warnings_as_errors(capsys: pytest.CaptureFixture[str]) -> None:
    bad = {"jax": "0.13.1", "jaxlib": "0.13.1"}
    with pytest.warns(UnsupportedJaxWarning, match="typed-pallas mypy plugin: jax 0.13.1 is installed"):
        assert plugin_jax_range.warn_if_unsupported_jax(requirements=REQUIRES, installed=bad) is not None
    _jax_range._warned.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # mypy run with -W error: still no exception
        message = plugin_jax_range.warn_if_unsupported_jax(requirements=REQUIRES, installed=bad)
    assert message is not None and "jax 0.13.1" in message
    assert "jax 0.13.1 is installed" in capsys.readouterr().err
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert plugin_jax_range.warn_if_unsupported_jax(requirements=REQUIRES, installed={"jax": "0.12.0"}) is None
    assert caught == []


def test_neither_check_imports_jax() -> None:
    code = (
        "import sys\n"
        "from typed_pallas import _jax_range\n"
        "from typed_pallas_mypy import jax_range\n"
        "_jax_range.check_jax_range(); jax_range.warn_if_unsupported_jax()\n"
        "assert 'jax' not in sys.modules, 'jax was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


_FAKE_JAX_0_13 = (
    "import importlib.metadata as md, warnings\n"
    "real = md.version\n"
    "md.version = lambda name: '0.13.1' if name in ('jax', 'jaxlib') else real(name)\n"
    "warnings.simplefilter('always')\n"
)

#: where the checks are meant to be called from: (file, code that triggers it)
ENTRY_POINTS = {
    "runtime": ("src/typed_pallas/_jaxcompat.py", "import typed_pallas._jaxcompat"),
    "plugin": ("mypy_plugin/typed_pallas_mypy/main.py", "from typed_pallas_mypy import plugin; plugin('2.4.1')"),
}


@pytest.mark.parametrize("part", sorted(ENTRY_POINTS))
def test_entry_point_warns_for_an_unsupported_jax(part: str) -> None:
    """With jax 0.13.1 faked in the metadata, the first jax-backed import / the plugin entry warns once."""
    source, trigger = ENTRY_POINTS[part]
    if "warn_if_unsupported_jax" not in (REPO / source).read_text():
        pytest.skip(f"{source} does not call warn_if_unsupported_jax() yet (see the packaging report)")
    for jax_version, expected in ((None, 0), ("0.13.1", 1)):
        prelude = _FAKE_JAX_0_13 if jax_version else "import warnings\nwarnings.simplefilter('always')\n"
        code = prelude + trigger + "\n" + trigger.replace("import typed_pallas._jaxcompat", "import typed_pallas._registry") + "\n"
        result = subprocess.run([sys.executable, "-W", "always", "-c", code], capture_output=True, text=True, check=False)
        assert result.returncode == 0, result.stderr
        assert result.stderr.count(": UnsupportedJaxWarning:") == expected, result.stderr
        if expected:
            assert "jax 0.13.1 is installed" in result.stderr and ">=0.10,<0.13" in result.stderr, result.stderr
