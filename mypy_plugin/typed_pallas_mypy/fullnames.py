"""Every fully qualified name the plugin matches, in one place.

Names are what mypy's semantic analyser resolves a reference to (``RefExpr.fullname``):
the defining module for names JAX re-exports (``pl.pallas_call`` is
``jax._src.pallas.pallas_call.pallas_call``), or the public module when a stub in
``jax-stubs`` defines the name itself. Both spellings are listed, so the plugin keeps
working whichever way the stubs go. Checked against the releases of
``typed_pallas._versions.CHECKED_RELEASES``; ``jax.pallas.X`` (jax >= 0.12.1) is read as
``jax.experimental.pallas.X`` (``_platforms.canonical_fullname``).

What JAX's callables (and ``functools``', builtins') do with the functions they are given
(keep them, trace them, differentiate them, register rules) is not here: it is the table of
``inference.jax_api``, one row per callable, proven against both ends of the JAX range.

This module only holds data: no mypy import, no jax import.
"""

from __future__ import annotations

from typing import Final

from typed_pallas import _platforms

# --------------------------------------------------------------------------- entry points

#: ``jax.experimental.pallas.pallas_call``
PALLAS_CALL: Final = "jax._src.pallas.pallas_call.pallas_call"
PALLAS_CALL_PUBLIC: Final = "jax.experimental.pallas.pallas_call"
#: ``jax.experimental.pallas.kernel`` (mesh entry point, wraps ``mpmd_map``)
PL_KERNEL: Final = "jax._src.pallas.helpers.kernel"
PL_KERNEL_PUBLIC: Final = "jax.experimental.pallas.kernel"
#: ``jax.experimental.pallas.mosaic_gpu.kernel``: lowers with Mosaic GPU only
PLGPU_KERNEL: Final = "jax._src.pallas.mosaic_gpu.core.kernel"
PLGPU_KERNEL_PUBLIC: Final = "jax.experimental.pallas.mosaic_gpu.kernel"
#: ``jax.experimental.pallas.core_map`` (deprecated in jax 0.12 in favour of ``pl.kernel``)
CORE_MAP: Final = "jax._src.pallas.core.core_map"
CORE_MAP_PUBLIC: Final = "jax.experimental.pallas.core_map"
#: typed-pallas' own entry points (``typed_pallas.pallas_call`` etc.)
TP_PALLAS_CALL: Final = "typed_pallas._entry.pallas_call"
TP_KERNEL: Final = "typed_pallas._entry.kernel"
TP_MOSAIC_GPU_KERNEL: Final = "typed_pallas._entry.mosaic_gpu_kernel"

#: ``functools.partial``: hooked to see ``partial(pl.pallas_call, compiler_params=...)``
FUNCTOOLS_PARTIAL: Final = "functools.partial"

#: typed-pallas' static protocol ``CompilerParams[P]``
TYPED_PROTOCOL: Final = "typed_pallas._params.CompilerParams"

#: ``@typed_pallas.platform("tpu")``: the tagged function lowers only for that platform
PLATFORM_TAG: Final = frozenset({"typed_pallas.platform", "typed_pallas._tagged.platform"})

# --------------------------------------------------------------------------- guards

#: ``jax.default_backend()``: "tpu", "gpu" (cuda and rocm) or "cpu"
DEFAULT_BACKEND: Final = frozenset(
    {
        "jax._src.xla_bridge.default_backend",
        "jax.default_backend",
        "jax.extend.backend.default_backend",
    }
)
#: ``jax.devices()`` / ``jax.local_devices()``: ``[i].platform`` is a platform name
DEVICES: Final = frozenset(
    {
        "jax._src.xla_bridge.devices",
        "jax._src.xla_bridge.local_devices",
        "jax.devices",
        "jax.local_devices",
    }
)
#: ``jax.extend.backend.get_default_device()``: the device computations run on by default
GET_DEFAULT_DEVICE: Final = frozenset(
    {
        "jax._src.interpreters.pxla.get_default_device",
        "jax.extend.backend.get_default_device",
    }
)
#: What an annotation ``jax.Device`` resolves to (mypy types it ``Any``: jaxlib ships no
#: stub, so a parameter's annotation is read as written and resolved by name)
DEVICE_TYPES: Final = frozenset(
    {
        "jax.Device",
        "jaxlib.xla_client.Device",
        "jaxlib._jax.Device",
        "jaxlib.xla_extension.Device",
        "jax._src.lib.xla_client.Device",
    }
)
#: ``any(...)`` / ``all(...)`` over devices, ``next(iter(x.devices()))``, ``list(...)``
BUILTIN_ANY: Final = "builtins.any"
BUILTIN_ALL: Final = "builtins.all"
BUILTIN_NEXT: Final = "builtins.next"
#: calls that keep a collection of devices a collection of the same devices
DEVICE_COLLECTION_COPIES: Final = frozenset(
    {"builtins.list", "builtins.tuple", "builtins.sorted", "builtins.iter", "builtins.set"}
)
#: ``pltpu.is_tpu_device()``: True only on TPU
IS_TPU_DEVICE: Final = frozenset(
    {
        "jax._src.pallas.mosaic.tpu_info.is_tpu_device",
        "jax.experimental.pallas.tpu.is_tpu_device",
        "jax._src.tpu_info.is_tpu_device",  # jax >= 0.12
    }
)
#: ``jax.lax.platform_dependent(*args, tpu=f, cuda=g, rocm=h, default=d)``
PLATFORM_DEPENDENT: Final = frozenset(
    {
        "jax._src.lax.control_flow.conditionals.platform_dependent",
        "jax.lax.platform_dependent",
    }
)
#: ``typed_pallas.dispatch(*, tpu=..., gpu=..., cuda=..., rocm=..., default=...)``
TP_DISPATCH: Final = frozenset(
    {
        "typed_pallas._dispatch.dispatch",
        "typed_pallas.dispatch",
    }
)
#: every name of a compiler-params class (``pltpu.CompilerParams(...)``): constructing
#: params is where a wrapper mypy cannot see into is usually called
PARAMS_CLASSES: Final = frozenset(_platforms.PARAMS_BY_FULLNAME)
#: ``typed_pallas.PlatformFn``: a callable tagged with its platform
PLATFORM_FN: Final = "typed_pallas._tagged.PlatformFn"

#: calls where a platform is decided, or params are made (hooked to report the
#: decision-site findings of the function they are in)
DECISION_CALLS: Final = (
    DEFAULT_BACKEND
    | DEVICES
    | GET_DEFAULT_DEVICE
    | IS_TPU_DEVICE
    | PLATFORM_DEPENDENT
    | TP_DISPATCH
    | PARAMS_CLASSES
)

#: ``__call__`` of the objects library kernels are (``jax.jit``, ``jax.custom_vjp`` /
#: ``custom_jvp``, ``functools.partial``): calling one may run a library kernel, whose
#: findings are reported there (``functools.partial.__call__`` keeps mypy's own hook)
CALLABLE_OBJECT_CALLS: Final = frozenset(
    {
        "jax._src.pjit.JitWrapped.__call__",
        "jax._src.custom_derivatives.custom_vjp.__call__",
        "jax._src.custom_derivatives.custom_jvp.__call__",
    }
)
PARTIAL_CALL: Final = "functools.partial.__call__"

#: calls that end a block like ``raise`` does (test skips)
SKIP_CALLS: Final = frozenset(
    {
        "pytest.skip",
        "_pytest.outcomes.skip",
        "_pytest.outcomes.fail",
        "pytest.fail",
        "sys.exit",
    }
)
#: method names that end a block (``self.skipTest(...)``)
SKIP_METHODS: Final = frozenset({"skipTest"})

# --------------------------------------------------------------------------- namespaces

#: Module prefixes whose names belong to one Pallas backend. Evidence tables key on
#: (backend, last name component), so a private module moving between JAX versions
#: (``mosaic.primitives`` vs ``mosaic.helpers``) does not matter. Order matters:
#: ``jax._src.pallas.mosaic_gpu.`` must be tried before ``jax._src.pallas.mosaic.``
#: would match it (it does not, because of the trailing dot, but keep the order anyway).
BACKEND_NAMESPACES: Final[tuple[tuple[str, str], ...]] = _platforms.BACKEND_NAMESPACES


# --------------------------------------------------------------------------- library reader

#: References whose presence means a library function decides the platform itself.
PLATFORM_SOURCES: Final = DEFAULT_BACKEND | IS_TPU_DEVICE | PLATFORM_DEPENDENT | TP_DISPATCH
#: Attribute names that read a device's platform or kind (``d.platform``,
#: ``jax.devices()[0].device_kind``): a library function reading one may choose per platform.
PLATFORM_ATTRIBUTES: Final = frozenset({"platform", "device_kind"})
#: The only part of jax the library reader reads; the rest of jax is its framework
#: (calls there are entry points or opaque).
JAX_READ_PREFIX: Final = "jax.experimental.pallas.ops."
#: Top-level packages that define no Pallas kernel: jax's own runtime dependencies, the
#: test frameworks a project's tests import, and typed-pallas. Names in them are never looked up in the library reader, which would
#: otherwise read and cache their modules (numpy, jaxlib) for nothing.
NO_KERNEL_PACKAGES: Final = frozenset(
    {
        "jaxlib",
        "numpy",
        "ml_dtypes",
        "opt_einsum",
        "scipy",
        "absl",
        "typing_extensions",
        "pytest",
        "_pytest",
        "pluggy",
        "packaging",
        "iniconfig",
        "hypothesis",
        "typed_pallas",
        "typed_pallas_mypy",
    }
)
