"""The exceptions typed-pallas raises. Imports neither jax nor mypy.

``PlatformMismatchError`` is a ``ValueError`` whose message is exactly JAX's
(``Compiler params for platform tpu cannot be used for gpu lowering.``), so an
existing ``except ValueError`` and a text search both keep working. What to do
instead goes into ``add_note``, never into the message.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

from typing_extensions import override

from typed_pallas import _platforms


class PlatformMismatchError(ValueError):
    """Compiler params were lowered for a platform (or backend) they do not serve.

    Attributes:
        params_platform: the params' platform ("tpu" or "gpu") or backend
            ("mosaic_gpu", ...) when the mismatch is within one platform.
        expected_platform: what was being lowered for ("tpu", "gpu", "cuda", "rocm").
    """

    params_platform: Final[str]
    expected_platform: Final[str]

    def __init__(
        self, params_platform: str, expected_platform: str, *, backend_level: bool = False
    ) -> None:
        if backend_level:
            message = _platforms.backend_mismatch_message(params_platform, expected_platform)
        else:
            message = _platforms.mismatch_message(params_platform, expected_platform)
        super().__init__(message)
        self.params_platform = params_platform
        self.expected_platform = expected_platform

    @override
    def __reduce__(
        self,
    ) -> tuple[Callable[..., PlatformMismatchError], tuple[str, str, bool, list[str] | None]]:
        # keep pickling (multiprocessing, pytest-xdist) working, notes included
        level = re.search(_platforms.BACKEND_MISMATCH_REGEX, str(self)) is not None
        return (
            _rebuild,
            (self.params_platform, self.expected_platform, level, getattr(self, "__notes__", None)),
        )


def _rebuild(
    params_platform: str, expected: str, backend_level: bool, notes: list[str] | None
) -> PlatformMismatchError:
    err = PlatformMismatchError(params_platform, expected, backend_level=backend_level)
    for note in notes or ():
        err.add_note(note)
    return err


class LegacyParamsError(TypeError):
    """Dict compiler params (``dict(mosaic=...)``), which JAX rejects only at lowering."""

    def __init__(self) -> None:
        super().__init__(_platforms.LEGACY_DICT_MESSAGE)


class UnknownPlatformError(ValueError):
    """A platform or backend name that typed-pallas does not know."""


for _cls in (PlatformMismatchError, LegacyParamsError, UnknownPlatformError):
    _cls.__module__ = "typed_pallas"
del _cls
