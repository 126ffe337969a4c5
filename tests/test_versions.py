"""``typed_pallas._versions``: installed versions (the fast path and its fallback) and PEP 440
release numbers.

``installed_version`` must answer exactly what ``importlib.metadata.version`` answers: checked
for the real distributions typed-pallas reads (jax, jaxlib, mypy, typed-pallas itself, an
editable install in the test environments) and for fake layouts built in a temporary folder
(a package next to its dist-info, an editable install, two dist-infos, odd spellings).
"""

from __future__ import annotations

import importlib
import subprocess
import sys
from collections.abc import Iterator
from importlib import metadata
from pathlib import Path

import pytest

from typed_pallas import _versions
from typed_pallas._versions import installed_version, release


@pytest.fixture(autouse=True)
def _fresh_cache() -> Iterator[None]:
    installed_version.cache_clear()
    yield
    installed_version.cache_clear()


# ----------------------------------------------------------------------------- release


@pytest.mark.parametrize(
    ("version", "expected"),
    [
        ("0.12.0.1", (0, 12, 0, 1)),
        ("0.10.2", (0, 10, 2)),
        ("0.10", (0, 10)),
        ("2", (2,)),
        ("0.13.0.dev20261129", (0, 13, 0)),
        ("0.13.0rc1", (0, 13, 0)),
        ("0.4.33+cuda12.cudnn89", (0, 4, 33)),
        ("1.0.post2", (1, 0)),
        ("v1.2", (1, 2)),
        ("1!2.0", (2, 0)),
        (" 0.8.3", (0, 8, 3)),
        ("not-a-version", None),
        ("", None),
        (".1", None),
        ("1.0.", (1, 0)),
        ("1..2", (1,)),
        ("V3", (3,)),
        ("1!", (1,)),
        ("!2", None),
        ("x1", None),
    ],
)
def test_release(version: str, expected: tuple[int, ...] | None) -> None:
    assert release(version) == expected


# ----------------------------------------------------------------------------- the real ones


@pytest.mark.parametrize("dist", ["jax", "jaxlib", "mypy", "typed-pallas", "typed_pallas"])
def test_agrees_with_importlib_metadata(dist: str) -> None:
    assert installed_version(dist) == metadata.version(dist)


def test_the_fast_path_answers_for_the_real_ones() -> None:
    """No fallback for what the plugin asks on every run (typed-pallas is an editable install
    in the test environments: its dist-info is found in site-packages, not next to src/)."""
    for dist in ("jax", "jaxlib", "mypy", "typed-pallas"):
        assert _versions._fast_version(dist) == metadata.version(dist), dist


def test_not_installed_is_none() -> None:
    assert installed_version("tp-no-such-distribution") is None


def test_answers_are_memoized() -> None:
    first = installed_version("jax")
    assert installed_version("jax") is first
    assert installed_version.cache_info().hits == 1


def test_importing_it_imports_neither_jax_nor_mypy() -> None:
    code = (
        "import sys\n"
        "from typed_pallas._versions import installed_version\n"
        "assert installed_version('jax') and installed_version('mypy')\n"
        "loaded = sorted(m for m in ('jax', 'mypy', 'importlib.metadata') if m in sys.modules)\n"
        "print(loaded)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "[]", result.stdout + result.stderr


# ----------------------------------------------------------------------------- fake layouts


def _dist_info(folder: Path, name: str, version: str, header: str = "Version") -> None:
    info = folder / f"{name}-{version}.dist-info"
    info.mkdir(parents=True)
    (info / "METADATA").write_text(
        f"Metadata-Version: 2.4\nName: {name}\n{header}: {version}\nSummary: x\n\nVersion: 9.9 (in the body: not a header)\n"
    )


def _package(folder: Path, name: str) -> None:
    (folder / name).mkdir(parents=True)
    (folder / name / "__init__.py").write_text("raise AssertionError('never imported')\n")


def _prepend(monkeypatch: pytest.MonkeyPatch, *folders: Path) -> None:
    for folder in reversed(folders):
        monkeypatch.syspath_prepend(str(folder))
    importlib.invalidate_caches()


def test_package_next_to_its_dist_info(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    site = tmp_path / "site-packages"
    _package(site, "tp_fake_beside")
    _dist_info(site, "tp_fake_beside", "1.2.3rc1")
    _prepend(monkeypatch, site)
    assert _versions._fast_version("tp-fake-beside") == "1.2.3rc1"
    assert installed_version("tp-fake-beside") == "1.2.3rc1" == metadata.version("tp-fake-beside")
    assert "tp_fake_beside" not in sys.modules


def test_names_are_compared_as_pep_503_normalizes_them(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site-packages"
    _package(site, "tp_fake_spelled")
    _dist_info(site, "TP_Fake.Spelled", "4.0")
    _prepend(monkeypatch, site)
    for spelling in ("tp-fake-spelled", "TP.Fake_Spelled", "tp__fake--spelled"):
        assert installed_version(spelling) == "4.0", spelling


def test_editable_install_finds_the_dist_info_in_site_packages(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The package lies in a checkout's src/, its dist-info in site-packages."""
    src = tmp_path / "checkout" / "src"
    _package(src, "tp_fake_editable")
    site = tmp_path / "venv" / "lib" / "site-packages"
    _dist_info(site, "tp_fake_editable", "0.7.0")
    _dist_info(site, "tp_fake_other", "9.9.9")
    _prepend(monkeypatch, src, site)
    assert _versions._fast_version("tp-fake-editable") == "0.7.0"
    assert installed_version("tp-fake-editable") == "0.7.0" == metadata.version("tp-fake-editable")


def test_a_distribution_whose_package_has_another_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """PyYAML -> yaml: no package of that name, the dist-info is still found in site-packages."""
    site = tmp_path / "site-packages"
    _package(site, "tp_fake_module")
    _dist_info(site, "TP_Fake_Dist", "3.1")
    _prepend(monkeypatch, site)
    assert installed_version("tp-fake-dist") == "3.1" == metadata.version("tp-fake-dist")


def test_two_dist_infos_fall_back_to_importlib_metadata(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    site = tmp_path / "site-packages"
    _package(site, "tp_fake_twice")
    _dist_info(site, "tp_fake_twice", "1.0")
    _dist_info(site, "tp_fake_twice", "2.0")
    _prepend(monkeypatch, site)
    asked: list[str] = []

    def fallback(dist: str) -> str:
        asked.append(dist)
        return "from importlib.metadata"

    monkeypatch.setattr(_versions, "_metadata_fallback", fallback)
    assert _versions._fast_version("tp-fake-twice") is None
    assert installed_version("tp-fake-twice") == "from importlib.metadata"
    assert asked == ["tp-fake-twice"]


def test_a_dist_info_without_a_version_header_falls_back(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Only the headers are read: a "Version:" line in the body is not the version."""
    site = tmp_path / "site-packages"
    _package(site, "tp_fake_headless")
    _dist_info(site, "tp_fake_headless", "5.5", header="X-Not-Version")
    _prepend(monkeypatch, site)
    monkeypatch.setattr(_versions, "_metadata_fallback", lambda dist: None)
    assert _versions._fast_version("tp-fake-headless") is None
    assert installed_version("tp-fake-headless") is None


def test_the_fallback_is_importlib_metadata() -> None:
    assert _versions._metadata_fallback("jax") == metadata.version("jax")
    assert _versions._metadata_fallback("tp-no-such-distribution") is None
