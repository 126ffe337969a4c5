"""The mypy plugin's JAX-range warning: ``typed_pallas._jax_range`` under the plugin's name.

The plugin reads JAX's stubs and sources, so a JAX outside the supported range
(``jax>=0.10,<0.13``) may give missed or odd platform findings.
``warn_if_unsupported_jax()`` says so once per process, naming both versions and what
to do, through ``warnings.warn`` (category ``typed_pallas._jax_range.UnsupportedJaxWarning``,
so ``PYTHONWARNINGS`` and ``-W`` filters apply); under ``-W error`` the message goes to
stderr instead of raising.

What it does not do: hold any logic of its own (the range, the comparison and the
message all live in ``typed_pallas._jax_range``), import jax or mypy, or stop mypy.
"""

from __future__ import annotations

import functools

from typed_pallas import _jax_range

__all__ = ["warn_if_unsupported_jax"]

#: ``typed_pallas._jax_range.warn_if_unsupported_jax`` as the plugin calls it from
#: ``plugin(version)``: named after the plugin, and never raising.
warn_if_unsupported_jax = functools.partial(
    _jax_range.warn_if_unsupported_jax, who=_jax_range.PLUGIN, never_raise=True
)
