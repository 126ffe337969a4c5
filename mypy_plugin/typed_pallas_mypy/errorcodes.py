"""The plugin's one error code, ``pallas-platform``.

Silence one line with ``# type: ignore[pallas-platform]``, or everything with
``disable_error_code = ["pallas-platform"]`` (``--disable-error-code pallas-platform``).
The message of every ``pallas-platform`` error is JAX's own runtime text
(``typed_pallas._platforms.mismatch_message`` / ``backend_mismatch_message``), so one
search finds the static error and the runtime ``ValueError``.

Creating the ``ErrorCode`` registers it with mypy. The plugin's entry module
(``typed_pallas_mypy.main``) imports this module, so the code exists before mypy checks
the codes named in its options and in inline ``# mypy:`` comments; a code created only
with the first report would make those stop mypy (``Invalid error code(s)``, or an
``INTERNAL ERROR`` for an inline comment). ``tests/test_error_code.py`` runs each form.
"""

from __future__ import annotations

from typing import Final

from mypy.errorcodes import ErrorCode

PALLAS_PLATFORM: Final = ErrorCode(
    "pallas-platform",
    "Pallas compiler params cannot lower for the platform the call runs on",
    "Pallas",
)
