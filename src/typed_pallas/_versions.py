"""Installed distribution versions and PEP 440 release numbers, written once for the project.

* :func:`installed_version` answers what ``importlib.metadata.version`` answers, fast and
  memoized. The mypy plugin asks for jax's and its own version on every run, warm runs
  included, and ``importlib.metadata`` costs about 10 ms there (it scans every
  distribution of every ``sys.path`` entry). The fast path finds the distribution's
  top-level package with ``importlib.util.find_spec`` (which imports nothing for a
  top-level name), then the one ``NAME-VERSION.dist-info`` folder next to it, and reads
  the ``Version:`` header of its ``METADATA``. For an editable install the package lies
  in the checkout and the dist-info in site-packages: the site-packages folders of
  ``sys.path`` are searched for the one matching folder. Anything else (no such folder,
  two of them, an ``.egg-info``, a zip) falls back to ``importlib.metadata``.
* :func:`release` reads the release segment of a PEP 440 version (``"0.12.1rc1"`` ->
  ``(0, 12, 1)``), for range checks and feature gates.
* ``CHECKED_RELEASES``: the JAX releases the project was checked at, the one list
  (stubtest and ``stubs/releases/jax-VERSION.json`` per release, the plugin's JAX API
  table, the evidence tables, the test environments); :func:`checked_releases` is what
  the entry points read (``typed_pallas._jax_range.jax_check_status`` says whether the
  installed jax is one of them).

What it does not do: import jax or mypy (the plugin and a bare ``import typed_pallas``
use it), import the distribution it is asked about, compare specifiers, or map a
distribution to a top-level package whose name differs from the distribution's
(``PyYAML`` -> ``yaml``): those take the ``importlib.metadata`` fallback, which is
correct, only slower.
"""

from __future__ import annotations

import functools
import importlib.util
import os
import sys
from typing import Final

__all__ = ["CHECKED_RELEASES", "checked_releases", "installed_version", "release"]

#: The JAX releases typed-pallas was checked at, oldest first: each has its facts file
#: (stubs/releases/jax-VERSION.json), its stubtest allowlist (stubs/allowlists/) and a
#: test environment (scripts/_venv.sh). When a JAX release appears, scripts/test-newest
#: says what to regenerate before it is added here.
CHECKED_RELEASES: Final[tuple[str, ...]] = ("0.10.2", "0.12.0.1", "0.12.1")

#: Tests only: a comma-separated list that replaces ``CHECKED_RELEASES`` in this process
#: and the processes it starts (mypy, the CLI), to simulate a jax that was not checked.
CHECKED_RELEASES_TEST_ENV: Final = "TYPED_PALLAS_TEST_CHECKED_RELEASES"


def checked_releases() -> tuple[str, ...]:
    """``CHECKED_RELEASES``, or the test override (``CHECKED_RELEASES_TEST_ENV``) when set."""
    override = os.environ.get(CHECKED_RELEASES_TEST_ENV)
    if override:
        return tuple(part.strip() for part in override.split(",") if part.strip())
    return CHECKED_RELEASES


#: the folders of ``sys.path`` where installers put ``.dist-info`` folders
_SITE_FOLDERS: Final = ("site-packages", "dist-packages")
_DIST_INFO: Final = ".dist-info"


def release(version: str) -> tuple[int, ...] | None:
    """``"0.12.0.1"`` -> ``(0, 12, 0, 1)``; ``None`` when ``version`` has no release segment.

    Pre-, post-, dev- and local segments are dropped (``"0.13.0.dev1"`` -> ``(0, 13, 0)``),
    and so is an epoch (``"1!2.0"`` -> ``(2, 0)``).

    Read with string methods, not a regular expression: every mypy run asks, warm ones
    included, and compiling the expression cost a quarter of a millisecond there.
    """
    text = version.lstrip()
    if text[:1] in ("v", "V"):
        text = text[1:]
    epoch, bang, rest = text.partition("!")
    if bang and epoch.isdecimal() and _leading_digits(rest):
        text = rest
    parts: list[int] = []
    for chunk in text.split("."):
        digits = _leading_digits(chunk)
        if not digits:
            break
        parts.append(int(digits))
        if len(digits) < len(chunk):
            break
    return tuple(parts) if parts else None


def _leading_digits(text: str) -> str:
    end = 0
    while end < len(text) and text[end].isdecimal():
        end += 1
    return text[:end]


def _normalized(name: str) -> str:
    """PEP 503's normalized name, with "_" as a wheel's dist-info folder writes it."""
    joined = name.replace("-", "_").replace(".", "_")
    while "__" in joined:
        joined = joined.replace("__", "_")
    return joined.lower()


def _dist_info_in(folder: str, name: str) -> list[str]:
    """The ``.dist-info`` folders in ``folder`` whose distribution name normalizes to ``name``."""
    try:
        entries = os.listdir(folder)
    except OSError:
        return []
    found = []
    # Normalizing keeps a first character that is no separator (lower-cased): comparing
    # it first spares the regular expression for almost every entry of site-packages.
    first = name[:1]
    for entry in entries:
        if entry.endswith(_DIST_INFO) and "-" in entry:
            head = entry[0].lower()[:1]
            if head != first and not (head in "-_." and first == "_"):
                continue
            dist = entry.partition("-")[0]
            if _normalized(dist) == name:
                found.append(os.path.join(folder, entry))
    return found


def _metadata_version(dist_info: str) -> str | None:
    """The ``Version:`` header of ``dist_info/METADATA`` (headers end at the first blank line)."""
    try:
        with open(os.path.join(dist_info, "METADATA"), encoding="utf-8") as metadata:
            for line in metadata:
                if not line.strip():
                    return None
                key, _, value = line.partition(":")
                if key.strip().lower() == "version":
                    return value.strip() or None
    except OSError:
        return None
    return None


def _package_folder(name: str) -> str | None:
    """The folder that holds the top-level package or module ``name``, without importing it."""
    try:
        spec = importlib.util.find_spec(name)
    except (ImportError, ValueError):
        return None
    if spec is None:
        return None
    if spec.submodule_search_locations:  # a package (regular or namespace)
        locations = list(spec.submodule_search_locations)
        return os.path.dirname(locations[0]) if len(locations) == 1 else None
    if spec.origin and spec.has_location:  # a single-file module or an extension
        return os.path.dirname(spec.origin)
    return None


def _fast_version(dist: str) -> str | None:
    name = _normalized(dist)
    folder = _package_folder(name)
    if folder is not None:
        beside = _dist_info_in(folder, name)
        if len(beside) == 1:
            return _metadata_version(beside[0])
        if beside:
            return None  # two versions side by side: let importlib.metadata decide
    # an editable install (or a package found elsewhere): the dist-info lies in site-packages
    for entry in sys.path:
        if os.path.basename(os.path.normpath(entry or ".")) in _SITE_FOLDERS:
            found = _dist_info_in(entry, name)
            if len(found) == 1:
                return _metadata_version(found[0])
            if found:
                return None
    return None


def _metadata_fallback(dist: str) -> str | None:
    from importlib import metadata

    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


@functools.cache
def installed_version(dist: str) -> str | None:
    """The installed version of distribution ``dist`` (``"jax"``, ``"typed-pallas"``), or ``None``.

    The same answer as ``importlib.metadata.version`` (``None`` where it raises
    ``PackageNotFoundError``), memoized for the process: call ``cache_clear()`` after
    installing or removing packages in a running process.
    """
    try:
        version = _fast_version(dist)
    except Exception:  # an odd sys.path entry or file: the slow path still knows
        version = None
    return version if version is not None else _metadata_fallback(dist)
