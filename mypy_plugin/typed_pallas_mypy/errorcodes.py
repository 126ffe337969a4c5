"""The plugin's one error code, ``pallas-platform``.

Silence one line with ``# type: ignore[pallas-platform]``, or everything with
``disable_error_code = ["pallas-platform"]`` (``--disable-error-code pallas-platform``).
The message of every ``pallas-platform`` error is JAX's own runtime text
(``typed_pallas._platforms.mismatch_message`` / ``backend_mismatch_message``), so one
search finds the static error and the runtime ``ValueError``.
"""

from __future__ import annotations

from typing import Final

from mypy.errorcodes import ErrorCode

PALLAS_PLATFORM: Final = ErrorCode(
    "pallas-platform",
    "Pallas compiler params cannot lower for the platform the call runs on",
    "Pallas",
)
