"""The Pallas entry points the plugin checks, and how each takes its kernel, mesh and params.

An *entry point* is a call that builds a Pallas kernel: ``pl.pallas_call``, ``pl.kernel``,
``plgpu.kernel``, ``pl.core_map`` and typed-pallas' own ``pallas_call``, ``kernel`` and
``mosaic_gpu_kernel``. ``ENTRIES`` maps each one's fully qualified names (from
``fullnames``) to an ``EntrySpec``. Every part of the plugin that recognises an entry
call (the checks, the requirement inference, the library reader) reads this table.

This module holds data, plus ``entry_evidence`` (the rule both the checks and the reader
apply to an entry's own restriction and its ``platform=``): no mypy import, no jax import.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from typed_pallas import _platforms
from typed_pallas_mypy import evidence_tables, fullnames


@dataclass(frozen=True)
class EntrySpec:
    """How one entry point takes its kernel, mesh and params."""

    #: how notes spell it
    title: str
    #: positional parameters, in order (for ``functools.partial`` positional binding)
    positional: tuple[str, ...]
    #: the parameter holding the kernel body, if any
    body: str | None
    #: the parameter holding the mesh, if any
    mesh: str | None = None
    #: the only backends this entry point lowers with (None: any)
    backends: frozenset[str] | None = None
    #: the parameter that declares the platform (typed-pallas' entry points), if any
    platform_keyword: str | None = None
    #: a grid-based ``pallas_call`` (jax >= 0.12 has no Mosaic GPU lowering for it)
    is_pallas_call: bool = False


_PALLAS_CALL: Final = EntrySpec(
    "pl.pallas_call", ("kernel", "out_shape"), "kernel", is_pallas_call=True
)
_PL_KERNEL: Final = EntrySpec("pl.kernel", ("body", "out_type"), "body", mesh="mesh")
_PLGPU_KERNEL: Final = EntrySpec(
    "plgpu.kernel",
    ("body", "out_shape"),
    "body",
    backends=evidence_tables.MOSAIC_GPU_ONLY,
)
_CORE_MAP: Final = EntrySpec("pl.core_map", ("mesh",), None, mesh="mesh")

#: entry point fullname -> how it takes its arguments
ENTRIES: Final[dict[str, EntrySpec]] = {
    fullnames.PALLAS_CALL: _PALLAS_CALL,
    fullnames.PALLAS_CALL_PUBLIC: _PALLAS_CALL,
    fullnames.PL_KERNEL: _PL_KERNEL,
    fullnames.PL_KERNEL_PUBLIC: _PL_KERNEL,
    fullnames.PLGPU_KERNEL: _PLGPU_KERNEL,
    fullnames.PLGPU_KERNEL_PUBLIC: _PLGPU_KERNEL,
    fullnames.CORE_MAP: _CORE_MAP,
    fullnames.CORE_MAP_PUBLIC: _CORE_MAP,
    fullnames.TP_PALLAS_CALL: EntrySpec(
        "typed_pallas.pallas_call",
        ("kernel", "out_shape"),
        "kernel",
        platform_keyword="platform",
        is_pallas_call=True,
    ),
    fullnames.TP_KERNEL: EntrySpec(
        "typed_pallas.kernel",
        ("body", "out_type"),
        "body",
        mesh="mesh",
        platform_keyword="platform",
    ),
    fullnames.TP_MOSAIC_GPU_KERNEL: EntrySpec(
        "typed_pallas.mosaic_gpu_kernel",
        ("body", "out_shape"),
        "body",
        backends=evidence_tables.MOSAIC_GPU_ONLY,
    ),
}


def entry_evidence(entry: EntrySpec, declared: str | None) -> list[tuple[tuple[str, ...], str]]:
    """``(sorted backends, what)`` for what a call of ``entry`` proves by itself.

    ``declared`` is the literal string given as the entry's platform keyword (None when
    absent or not a string literal): its backends come first, then the entry point's own
    restriction."""
    found: list[tuple[tuple[str, ...], str]] = []
    if entry.platform_keyword is not None and declared is not None:
        backends = sorted(
            str(row.backend) for row in _platforms.PARAMS_CLASSES if row.platform == declared
        )
        if backends:
            found.append((tuple(backends), f"platform={declared!r}"))
    if entry.backends is not None:
        found.append((tuple(sorted(entry.backends)), entry.title))
    return found
