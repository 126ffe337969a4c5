"""The supported-JAX-range warning (runtime and mypy plugin), with fake versions.

The range is a constant of ``typed_pallas._jax_range``; these tests check that
pyproject's ``[project].dependencies`` (and the installed metadata) declare that very
range for jax and jaxlib, that an in-range JAX is silent, and that an out-of-range one
gets one clear warning (never an exception).
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
import warnings
from importlib import metadata
from pathlib import Path

import pytest
from packaging.requirements import Requirement
from packaging.specifiers import SpecifierSet

from typed_pallas import _jax_range
from typed_pallas._jax_range import (
    SUPPORTED_SPECIFIER,
    OutOfRange,
    UnsupportedJaxWarning,
    check_jax_range,
    version_in_range,
    warn_if_unsupported_jax,
)
from typed_pallas_mypy import jax_range as plugin_jax_range

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def _fresh_once_guard() -> None:
    _jax_range._warned.clear()


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("0.10.2", True),
        ("0.10", True),
        ("0.12.0.1", True),
        ("0.12.99", True),
        ("0.13.0", False),
        ("0.13.0.dev20261129", False),  # a dev build of 0.13 is not < 0.13
        ("0.13.1+cuda", False),
        ("0.9.2", False),
        ("0.9.99", False),
        ("1.0", False),
        ("not-a-version", None),
        ("", None),
    ],
)
def test_version_in_range(version: str, expected: bool | None) -> None:
    assert version_in_range(version) is expected


def test_the_constant_agrees_with_packaging_on_release_versions() -> None:
    """For plain release numbers the release comparison is PEP 440's."""
    specifier = SpecifierSet(SUPPORTED_SPECIFIER)
    for version in (
        "0.9.2",
        "0.10",
        "0.10.0",
        "0.11.2",
        "0.12.0.1",
        "0.12.99",
        "0.13",
        "0.13.0",
        "1.0",
    ):
        assert version_in_range(version) is specifier.contains(version), version


def _range_of(requirements: list[str], name: str) -> SpecifierSet:
    """The specifier of ``name`` among the unconditional requirements (no marker)."""
    found = [Requirement(r) for r in requirements]
    (requirement,) = [r for r in found if r.name == name and r.marker is None]
    return requirement.specifier


@pytest.mark.parametrize("name", _jax_range.CHECKED_DISTRIBUTIONS)
def test_pyproject_declares_the_constant_range(name: str) -> None:
    """One range: pyproject's dependencies say what ``_jax_range`` says (no other copy)."""
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    assert _range_of(project["dependencies"], name) == SpecifierSet(SUPPORTED_SPECIFIER)


@pytest.mark.parametrize("name", _jax_range.CHECKED_DISTRIBUTIONS)
def test_installed_metadata_declares_the_constant_range(name: str) -> None:
    requirements = metadata.requires("typed-pallas")
    assert requirements, "typed-pallas is installed (editable) in the test venvs"
    assert _range_of(requirements, name) == SpecifierSet(SUPPORTED_SPECIFIER)


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
        message = warn_if_unsupported_jax(installed=installed)
    assert message is not None and len(record) == 1
    text = str(record[0].message)
    assert text == message
    assert f"jax {jax_version} is installed" in text
    assert "supports jax>=0.10,<0.13" in text
    assert "pip install 'jax>=0.10,<0.13'" in text
    assert record[0].filename == __file__  # points at the caller, not at _jax_range


def test_only_the_out_of_range_distribution_is_named() -> None:
    problems = check_jax_range(installed={"jax": "0.12.0.1", "jaxlib": "0.13.0"})
    assert problems == [OutOfRange("jaxlib", "0.13.0", ">=0.10,<0.13")]


@pytest.mark.parametrize(
    "installed",
    [
        {},  # jax not installed
        {"jax": "weird", "jaxlib": "0.12.0"},  # unreadable version
        {"jax": "", "jaxlib": "0.11.2"},
    ],
)
def test_unknown_means_silent(installed: dict[str, str]) -> None:
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert warn_if_unsupported_jax(installed=installed) is None
    assert caught == []


def test_never_raises_and_warns_once() -> None:
    def broken(name: str) -> str | None:
        raise RuntimeError("metadata is corrupt")

    assert warn_if_unsupported_jax(installed=broken) is None
    bad = {"jax": "0.13.1", "jaxlib": "0.13.1"}
    with pytest.warns(UnsupportedJaxWarning):
        assert warn_if_unsupported_jax(installed=bad) is not None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert warn_if_unsupported_jax(installed=bad) is None
    assert caught == []


def test_plugin_warns_names_itself_and_survives_warnings_as_errors(
    capsys: pytest.CaptureFixture[str],
) -> None:
    bad = {"jax": "0.13.1", "jaxlib": "0.13.1"}
    with pytest.warns(
        UnsupportedJaxWarning, match="typed-pallas mypy plugin: jax 0.13.1 is installed"
    ):
        assert plugin_jax_range.warn_if_unsupported_jax(installed=bad) is not None
    _jax_range._warned.clear()
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # mypy run with -W error: still no exception
        message = plugin_jax_range.warn_if_unsupported_jax(installed=bad)
        _jax_range._warned.clear()
        with pytest.raises(UnsupportedJaxWarning):  # the runtime's own call lets -W error raise
            warn_if_unsupported_jax(installed=bad)
    assert message is not None and "jax 0.13.1" in message
    assert "jax 0.13.1 is installed" in capsys.readouterr().err
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        assert plugin_jax_range.warn_if_unsupported_jax(installed={"jax": "0.12.0"}) is None
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
    "import warnings\n"
    "from typed_pallas import _versions\n"
    "real = _versions.installed_version\n"
    "_versions.installed_version = lambda name: '0.13.1' if name in ('jax', 'jaxlib') else real(name)\n"
    "warnings.simplefilter('always')\n"
)

#: where the checks are meant to be called from: (file, code that triggers it)
ENTRY_POINTS = {
    "runtime": ("src/typed_pallas/_jaxcompat.py", "import typed_pallas._jaxcompat"),
    "plugin": (
        "mypy_plugin/typed_pallas_mypy/main.py",
        "from typed_pallas_mypy import plugin; plugin('2.4.1')",
    ),
}


@pytest.mark.parametrize("part", sorted(ENTRY_POINTS))
def test_entry_point_warns_for_an_unsupported_jax(part: str) -> None:
    """With jax 0.13.1 faked in the metadata, the first jax-backed import / the plugin entry warns once."""
    source, trigger = ENTRY_POINTS[part]
    assert "warn_if_unsupported_jax" in (REPO / source).read_text(), (
        f"{source} no longer calls the check"
    )
    for jax_version, expected in ((None, 0), ("0.13.1", 1)):
        prelude = (
            _FAKE_JAX_0_13 if jax_version else "import warnings\nwarnings.simplefilter('always')\n"
        )
        code = (
            prelude
            + trigger
            + "\n"
            + trigger.replace("import typed_pallas._jaxcompat", "import typed_pallas._registry")
            + "\n"
        )
        result = subprocess.run(
            [sys.executable, "-W", "always", "-c", code],
            capture_output=True,
            text=True,
            check=False,
        )
        assert result.returncode == 0, result.stderr
        assert result.stderr.count(": UnsupportedJaxWarning:") == expected, result.stderr
        if expected:
            assert "jax 0.13.1 is installed" in result.stderr and ">=0.10,<0.13" in result.stderr, (
                result.stderr
            )
