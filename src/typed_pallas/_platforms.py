"""The one source of truth: platforms, the compiler-params table, and the error texts.

This module imports neither jax nor mypy. The runtime (``typed_pallas``), the stubs
(``stubs/``) and the mypy plugin (``typed_pallas_mypy``) all read what they need from
here, and ``tests/test_consistency.py`` keeps them in sync.

What it holds:

* the platform literals (``Platform``, ``TPU``, ``GPU``), the finer backends
  (``Backend``) and the platforms JAX lowers for (``LoweringPlatform``);
* ``PARAMS_CLASSES``: one row per JAX compiler-params class: its backend, its
  platform, where JAX defines and exports it, and which lowering platforms it can
  serve;
* the message templates, starting with JAX's own
  ``Compiler params for platform {platform} cannot be used for {expected_platform} lowering.``
  and the hints that go into notes (never into the message).

What it does not do: look anything up in jax, or decide what a call means.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

__all__ = [
    "BACKENDS",
    "GPU",
    "LOWERING_PLATFORMS",
    "PARAMS_CLASSES",
    "PLATFORMS",
    "TPU",
    "Backend",
    "LoweringPlatform",
    "ParamsClass",
    "Platform",
]

#: The platforms of JAX's lowering-rule registry, and of its error text.
Platform = Literal["tpu", "gpu"]
TPU = Literal["tpu"]
GPU = Literal["gpu"]

#: The three Pallas backends, one per compiler-params class.
Backend = Literal["mosaic_tpu", "triton", "mosaic_gpu"]

#: What ``jax.export(..., platforms=[...])`` and ``lowering_platforms=`` take.
LoweringPlatform = Literal["tpu", "cuda", "rocm"]

PLATFORMS: Final[tuple[Platform, ...]] = ("tpu", "gpu")
BACKENDS: Final[tuple[Backend, ...]] = ("mosaic_tpu", "triton", "mosaic_gpu")
LOWERING_PLATFORMS: Final[tuple[LoweringPlatform, ...]] = ("tpu", "cuda", "rocm")

#: Registry platform of each lowering platform (JAX keys its registry on "gpu").
PLATFORM_OF_LOWERING: Final[Mapping[str, Platform]] = {
    "tpu": "tpu",
    "cuda": "gpu",
    "rocm": "gpu",
    "gpu": "gpu",
}

#: Lowering platforms that a platform name (as a user or JAX spells it) stands for.
#: ``jax.default_backend()`` and ``Device.platform`` say "gpu" for both cuda and rocm.
LOWERINGS_OF_NAME: Final[Mapping[str, frozenset[LoweringPlatform]]] = {
    "tpu": frozenset({"tpu"}),
    "gpu": frozenset({"cuda", "rocm"}),
    "cuda": frozenset({"cuda"}),
    "rocm": frozenset({"rocm"}),
}

#: Backend names that are not platforms but that users and tables write.
BACKEND_ALIASES: Final[Mapping[str, Backend]] = {
    "mosaic_tpu": "mosaic_tpu",
    "mosaic": "mosaic_tpu",
    "triton": "triton",
    "mosaic_gpu": "mosaic_gpu",
}


@dataclass(frozen=True)
class ParamsClass:
    """One JAX compiler-params class and what it may lower for."""

    #: the Pallas backend the class configures
    backend: Backend
    #: the registry platform, as in JAX's error text
    platform: Platform
    #: the public module that exports the class
    module: str
    #: the class name in that module (and in JAX's private module)
    name: str
    #: private modules that define it, over the supported JAX range
    defining_modules: tuple[str, ...]
    #: the ``typed_pallas`` alias
    alias: str
    #: lowering platforms whose lowering accepts this class
    lowers_on: frozenset[LoweringPlatform]
    #: human name used in notes
    title: str

    @property
    def public_fullname(self) -> str:
        return f"{self.module}.{self.name}"

    @property
    def fullnames(self) -> tuple[str, ...]:
        """Every fully qualified name the class is known by (public first)."""
        return (self.public_fullname,) + tuple(f"{m}.{self.name}" for m in self.defining_modules)


PARAMS_CLASSES: Final[tuple[ParamsClass, ...]] = (
    ParamsClass(
        backend="mosaic_tpu",
        platform="tpu",
        module="jax.experimental.pallas.tpu",
        name="CompilerParams",
        defining_modules=("jax._src.pallas.mosaic.core",),
        alias="TPUCompilerParams",
        lowers_on=frozenset({"tpu"}),
        title="Mosaic TPU",
    ),
    ParamsClass(
        backend="triton",
        platform="gpu",
        module="jax.experimental.pallas.triton",
        name="CompilerParams",
        defining_modules=("jax._src.pallas.triton.core",),
        alias="TritonCompilerParams",
        lowers_on=frozenset({"cuda", "rocm"}),
        title="Triton",
    ),
    ParamsClass(
        backend="mosaic_gpu",
        platform="gpu",
        module="jax.experimental.pallas.mosaic_gpu",
        name="CompilerParams",
        defining_modules=("jax._src.pallas.mosaic_gpu.core",),
        alias="MosaicGPUCompilerParams",
        lowers_on=frozenset({"cuda"}),
        title="Mosaic GPU",
    ),
)

PARAMS_BY_BACKEND: Final[Mapping[Backend, ParamsClass]] = {p.backend: p for p in PARAMS_CLASSES}
PARAMS_BY_FULLNAME: Final[Mapping[str, ParamsClass]] = {
    name: p for p in PARAMS_CLASSES for name in p.fullnames
}

#: JAX's protocol that every params class satisfies (carries no platform).
JAX_PARAMS_PROTOCOL: Final = "jax._src.pallas.core.CompilerParams"

# --------------------------------------------------------------------------- messages

#: JAX's own text (jax/_src/pallas/core.py, get_lowering_rule). Do not reword.
MISMATCH_TEMPLATE: Final = (
    "Compiler params for platform {platform} cannot be used for {expected_platform} lowering."
)

#: Same shape, one level finer: Triton vs Mosaic GPU, or Mosaic GPU on ROCm.
BACKEND_MISMATCH_TEMPLATE: Final = (
    "Compiler params for backend {backend} cannot be used for {expected} lowering."
)

#: Legacy dict params (``dict(mosaic=...)``) that JAX fails on only at lowering.
LEGACY_DICT_MESSAGE: Final = (
    "Compiler params must be a compiler-params object, not a dict: "
    "use jax.experimental.pallas.tpu.CompilerParams(...), "
    "jax.experimental.pallas.triton.CompilerParams(...) or "
    "jax.experimental.pallas.mosaic_gpu.CompilerParams(...)."
)

#: Matches JAX's message and ours; groups: platform, expected.
MISMATCH_PATTERN: Final = re.compile(
    r"Compiler params for platform (?P<platform>\w+) cannot be used for (?P<expected>\w+) lowering\."
)
BACKEND_MISMATCH_PATTERN: Final = re.compile(
    r"Compiler params for backend (?P<backend>\w+) cannot be used for (?P<expected>\w+) lowering\."
)


def mismatch_message(platform: str, expected_platform: str) -> str:
    """JAX's platform-mismatch text, exactly."""
    return MISMATCH_TEMPLATE.format(platform=platform, expected_platform=expected_platform)


def backend_mismatch_message(backend: str, expected: str) -> str:
    """The backend-level twin of :func:`mismatch_message`."""
    return BACKEND_MISMATCH_TEMPLATE.format(backend=backend, expected=expected)


def is_mismatch_message(text: str) -> bool:
    """True for JAX's (or our) platform/backend mismatch text, wherever it sits in ``text``."""
    return bool(MISMATCH_PATTERN.search(text) or BACKEND_MISMATCH_PATTERN.search(text))


def params_for_lowering(lowering: str) -> tuple[ParamsClass, ...]:
    """The params classes that lower for ``lowering`` ("tpu", "gpu", "cuda" or "rocm")."""
    targets = LOWERINGS_OF_NAME.get(lowering, frozenset())
    return tuple(p for p in PARAMS_CLASSES if p.lowers_on & targets)


def fix_hint(backend: Backend, expected: str) -> str:
    """A note for a mismatch: what to use instead. Goes into notes, never the message."""
    have = PARAMS_BY_BACKEND[backend]
    options = [p.public_fullname for p in params_for_lowering(expected) if p.backend != backend]
    where = sorted(have.lowers_on)
    if options:
        use = " or ".join(options)
        return (
            f"{have.title} params lower only for {', '.join(where)}; "
            f"for {expected} lowering use {use}, or guard the call with "
            f"jax.default_backend() == {have.platform!r} (or typed_pallas.dispatch)."
        )
    return f"{have.title} params lower only for {', '.join(where)}; nothing lowers for {expected}."


ROCM_MOSAIC_GPU_NOTE: Final = (
    "Mosaic GPU does not support AMD ROCm devices; "
    "use jax.experimental.pallas.triton.CompilerParams for rocm."
)
