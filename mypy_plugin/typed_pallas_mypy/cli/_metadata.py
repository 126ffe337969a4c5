"""The installed version of a distribution, for every module of the CLI.

One helper with the signature of ``typed_pallas._versions.installed_version`` (the
runtime's, made in parallel), so that the CLI can switch to it by changing one import.

What it does not do: parse versions, or import ``importlib.metadata`` before it is
called (it costs a warm ``typed-pallas check`` about 10 ms).
"""

from __future__ import annotations

__all__ = ["installed_version"]


def installed_version(dist: str) -> str | None:
    """The installed version of distribution ``dist``, or None when it is not installed."""
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version(dist)
    except PackageNotFoundError:
        return None
