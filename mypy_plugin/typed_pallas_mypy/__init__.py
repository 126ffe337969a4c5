"""typed-pallas mypy plugin. Enable with ``plugins = ["typed_pallas_mypy"]``.

Checks JAX Pallas compiler params against the platform a call can lower for: evidence
in the kernel body and the call's arguments, enclosing platform guards, and the
platforms configured per module. Errors use the code ``pallas-platform`` and JAX's
own runtime text. See ``typed_pallas_mypy.main``.
"""

from typing import Any

from typed_pallas_mypy import main as _main
from typed_pallas_mypy.main import plugin as plugin

__all__ = ["plugin"]


def __getattr__(name: str) -> Any:
    # Computed on each access: mypy's daemon reads it to see whether the plugin (and,
    # through it, the typed-pallas configuration) changed between runs.
    if name == "__version__":
        return _main.versioned_name()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
