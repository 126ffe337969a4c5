"""typed-pallas: JAX Pallas compiler params typed by platform.

Importing ``typed_pallas`` imports neither jax nor mypy, and of its own modules only
``_platforms``: every other name is loaded on first use (``typed_pallas.pallas_call``,
``typed_pallas.TPUCompilerParams``, ``typed_pallas.platform``,
``typed_pallas.PlatformMismatchError``...). The mypy plugin imports ``_platforms`` on
every mypy run, warm ones included, and pays for nothing else here. Type checkers read
the static imports below.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from typed_pallas._platforms import (
    GPU as GPU,
)
from typed_pallas._platforms import (
    TPU as TPU,
)
from typed_pallas._platforms import (
    Backend as Backend,
)
from typed_pallas._platforms import (
    LoweringPlatform as LoweringPlatform,
)
from typed_pallas._platforms import (
    Platform as Platform,
)

if TYPE_CHECKING:
    #: pyproject's [project] version, read from the installed metadata on first access
    __version__: str
    from typed_pallas._backstop import install_backstop as install_backstop
    from typed_pallas._check_lowering import (
        LoweringReport as LoweringReport,
    )
    from typed_pallas._check_lowering import (
        PlatformResult as PlatformResult,
    )
    from typed_pallas._check_lowering import (
        check_lowering as check_lowering,
    )
    from typed_pallas._dispatch import Dispatch as Dispatch
    from typed_pallas._dispatch import dispatch as dispatch
    from typed_pallas._entry import (
        kernel as kernel,
    )
    from typed_pallas._entry import (
        mosaic_gpu_kernel as mosaic_gpu_kernel,
    )
    from typed_pallas._entry import (
        pallas_call as pallas_call,
    )
    from typed_pallas._errors import (
        LegacyParamsError as LegacyParamsError,
    )
    from typed_pallas._errors import (
        PlatformMismatchError as PlatformMismatchError,
    )
    from typed_pallas._errors import (
        UnknownPlatformError as UnknownPlatformError,
    )
    from typed_pallas._jax_range import (
        JaxCheckStatus as JaxCheckStatus,
    )
    from typed_pallas._jax_range import (
        jax_check_status as jax_check_status,
    )
    from typed_pallas._params import CompilerParams as CompilerParams
    from typed_pallas._params import (
        MosaicGPUCompilerParams as MosaicGPUCompilerParams,
    )
    from typed_pallas._params import (
        TPUCompilerParams as TPUCompilerParams,
    )
    from typed_pallas._params import (
        TritonCompilerParams as TritonCompilerParams,
    )
    from typed_pallas._registry import (
        backend_of as backend_of,
    )
    from typed_pallas._registry import (
        get_lowering_rule as get_lowering_rule,
    )
    from typed_pallas._registry import (
        platform_of as platform_of,
    )
    from typed_pallas._registry import (
        register_lowering_rule as register_lowering_rule,
    )
    from typed_pallas._select import (
        Redispatch as Redispatch,
    )
    from typed_pallas._select import (
        import_backend as import_backend,
    )
    from typed_pallas._select import (
        pick_lowering as pick_lowering,
    )
    from typed_pallas._select import (
        redispatch as redispatch,
    )
    from typed_pallas._tagged import PlatformFn as PlatformFn
    from typed_pallas._tagged import platform as platform

#: public name -> private module that defines it (loaded on first access)
_LAZY: dict[str, str] = {
    "LegacyParamsError": "typed_pallas._errors",
    "PlatformMismatchError": "typed_pallas._errors",
    "UnknownPlatformError": "typed_pallas._errors",
    "CompilerParams": "typed_pallas._params",
    "PlatformFn": "typed_pallas._tagged",
    "platform": "typed_pallas._tagged",
    "TPUCompilerParams": "typed_pallas._params",
    "TritonCompilerParams": "typed_pallas._params",
    "MosaicGPUCompilerParams": "typed_pallas._params",
    "platform_of": "typed_pallas._registry",
    "backend_of": "typed_pallas._registry",
    "register_lowering_rule": "typed_pallas._registry",
    "get_lowering_rule": "typed_pallas._registry",
    "pallas_call": "typed_pallas._entry",
    "kernel": "typed_pallas._entry",
    "mosaic_gpu_kernel": "typed_pallas._entry",
    "install_backstop": "typed_pallas._backstop",
    "dispatch": "typed_pallas._dispatch",
    "pick_lowering": "typed_pallas._select",
    "import_backend": "typed_pallas._select",
    "redispatch": "typed_pallas._select",
    "check_lowering": "typed_pallas._check_lowering",
    "LoweringReport": "typed_pallas._check_lowering",
    "PlatformResult": "typed_pallas._check_lowering",
    "Dispatch": "typed_pallas._dispatch",
    "Redispatch": "typed_pallas._select",
    "JaxCheckStatus": "typed_pallas._jax_range",
    "jax_check_status": "typed_pallas._jax_range",
}


def _installed_version() -> str:
    # One source: pyproject's [project] version, as the installed metadata carries it
    # (read on first access only); "0+unknown" for a bare source tree on sys.path.
    from typed_pallas._versions import installed_version

    return installed_version("typed-pallas") or "0+unknown"


def __getattr__(name: str) -> Any:
    if name == "__version__":
        globals()[name] = value = _installed_version()
        return value
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'typed_pallas' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "GPU",
    "TPU",
    "Backend",
    "LoweringPlatform",
    "Platform",
    *_LAZY,
]
