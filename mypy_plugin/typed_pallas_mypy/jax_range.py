"""The mypy plugin's JAX-range warning: one line on stderr when the installed JAX is unsupported.

The plugin reads JAX's stubs and sources, so a JAX outside the range declared in
typed-pallas's metadata (``jax>=0.10,<0.13``) may give missed or odd platform
findings. ``warn_if_unsupported_jax()`` says so once per process, naming both
versions and what to do, through ``warnings.warn`` (category
``typed_pallas._jax_range.UnsupportedJaxWarning``, so ``PYTHONWARNINGS`` and
``-W`` filters apply).

What it does not do: import jax (versions come from ``importlib.metadata``), stop
mypy, or raise, whatever happens, including under ``-W error``: the plugin must
never be why mypy crashes. The comparison itself lives in
``typed_pallas._jax_range`` (no jax import there either).
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterable, Mapping

__all__ = ["warn_if_unsupported_jax"]

WHO = "typed-pallas mypy plugin"


def warn_if_unsupported_jax(
    *,
    requirements: Iterable[str] | None = None,
    installed: Callable[[str], str | None] | Mapping[str, str] | None = None,
    once: bool = True,
) -> str | None:
    """Warn if the installed jax/jaxlib are outside typed-pallas's range; return the message.

    Call it from the plugin entry point ``plugin(version)``. ``None`` when in range,
    when nothing can be determined, or when anything at all goes wrong.
    """
    try:
        from typed_pallas import _jax_range

        return _jax_range.warn_if_unsupported_jax(
            who=WHO, stacklevel=2, requirements=requirements, installed=installed, once=once
        )
    except Exception as error:  # noqa: BLE001 - never crash mypy
        if isinstance(error, Warning):  # -W error turned the warning into an exception
            try:
                print(f"warning: {error}", file=sys.stderr)
            except Exception:  # noqa: BLE001
                pass
            return str(error)
        return None
