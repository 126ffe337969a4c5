"""Installed distributions' versions, read without importing them (placeholder; the
tooling branch replaces this module with the fast, memoized reader)."""

from __future__ import annotations

import functools
from importlib import metadata


@functools.cache
def installed_version(dist: str) -> str | None:
    """The installed version of distribution ``dist``, or None."""
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None
