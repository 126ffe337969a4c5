"""``CompilerParams[P]``: the platform-typed view of JAX's compiler-params classes.

At runtime ``TPUCompilerParams``, ``TritonCompilerParams`` and
``MosaicGPUCompilerParams`` are JAX's own classes (JAX looks params up by exact
type, so we never subclass them). Type checkers see each as a
``CompilerParams[TPU]`` / ``CompilerParams[GPU]`` through the stubs shipped in
``stubs/`` (the JAX classes' stubs derive from this protocol).

This module imports jax only when one of the three aliases is first used.
"""

from __future__ import annotations

import dataclasses
from typing import TYPE_CHECKING, Any, ClassVar, Protocol, TypeVar

from typed_pallas._platforms import Platform

__all__ = ["CompilerParams", "MosaicGPUCompilerParams", "TPUCompilerParams", "TritonCompilerParams"]

_P_co = TypeVar("_P_co", bound=Platform, covariant=True)


class CompilerParams(Protocol[_P_co]):
    """Compiler params for platform ``P`` (``Literal["tpu"]`` or ``Literal["gpu"]``).

    A static type only: annotate with ``CompilerParams[Literal["tpu"]]`` (or
    ``CompilerParams[typed_pallas.TPU]``) and checkers reject params of the other
    platform. ``CompilerParams[Platform]`` accepts both. Like JAX's own
    protocol, instances are dataclasses.
    """

    __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]]

    @property
    def __pallas_platform__(self) -> _P_co: ...


if TYPE_CHECKING:
    from typing import Literal

    from jax.experimental.pallas import mosaic_gpu as _plgpu
    from jax.experimental.pallas import tpu as _pltpu
    from jax.experimental.pallas import triton as _pltriton
    from typing_extensions import override

    # For checkers each alias is a subclass of JAX's public class that carries its
    # platform itself, so ``typed_pallas.TPUCompilerParams(...)`` is a
    # ``CompilerParams[Literal["tpu"]]`` even where a checker does not read the
    # ``jax-stubs`` (pyright and basedpyright without ``stubPath``: docs/checkers.md).
    # With the stubs the base already carries it, and this only repeats it.
    # At runtime (below) each alias *is* JAX's class.

    class TPUCompilerParams(_pltpu.CompilerParams, CompilerParams[Literal["tpu"]]):
        """``jax.experimental.pallas.tpu.CompilerParams`` (Mosaic TPU), platform "tpu"."""

        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]] = {}

        @property
        @override
        def __pallas_platform__(self) -> Literal["tpu"]:
            return "tpu"

    class TritonCompilerParams(_pltriton.CompilerParams, CompilerParams[Literal["gpu"]]):
        """``jax.experimental.pallas.triton.CompilerParams`` (Triton), platform "gpu"."""

        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]] = {}

        @property
        @override
        def __pallas_platform__(self) -> Literal["gpu"]:
            return "gpu"

    class MosaicGPUCompilerParams(_plgpu.CompilerParams, CompilerParams[Literal["gpu"]]):
        """``jax.experimental.pallas.mosaic_gpu.CompilerParams`` (Mosaic GPU), platform "gpu"."""

        __dataclass_fields__: ClassVar[dict[str, dataclasses.Field[Any]]] = {}

        @property
        @override
        def __pallas_platform__(self) -> Literal["gpu"]:
            return "gpu"

else:

    def __getattr__(name: str) -> Any:
        from typed_pallas import _platforms

        for row in _platforms.PARAMS_CLASSES:
            if row.alias == name:
                import importlib

                return getattr(importlib.import_module(row.module), row.name)
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
