"""typed-pallas mypy plugin. Enable with ``plugins = ["typed_pallas_mypy"]``.

Checks JAX Pallas compiler params against the platform a call can lower for: evidence
in the kernel body and the call's arguments, enclosing platform guards, and the
platforms configured per module. Errors use the code ``pallas-platform`` and JAX's
own runtime text. See ``typed_pallas_mypy.main``.

Importing this package imports neither mypy nor jax: ``plugin`` loads the mypy side on
first call, so the ``typed-pallas`` command (``explain``, ``--version``, and a clear
message when mypy is missing) works without mypy installed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from mypy.plugin import Plugin

__all__ = ["plugin"]


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point: the plugin class for this mypy ``version``."""
    from typed_pallas_mypy.main import plugin as _plugin

    return _plugin(version)


def __getattr__(name: str) -> Any:
    # Computed on each access: mypy's daemon reads it to see whether the plugin (and,
    # through it, the typed-pallas configuration) changed between runs.
    if name == "__version__":
        from typed_pallas_mypy import cache_keys

        return cache_keys.versioned_name()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
