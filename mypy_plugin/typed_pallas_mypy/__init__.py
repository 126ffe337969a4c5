"""typed-pallas mypy plugin. Enable with ``plugins = ["typed_pallas_mypy"]``.

Checks JAX Pallas compiler params against the platform a call can lower for: evidence
in the kernel body and the call's arguments, enclosing platform guards, and the
platforms configured per module. Errors use the code ``pallas-platform`` and JAX's
own runtime text. See ``typed_pallas_mypy.main``.
"""

from typed_pallas_mypy.main import plugin as plugin

__all__ = ["plugin"]
