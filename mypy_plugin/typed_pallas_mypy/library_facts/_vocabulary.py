"""The names the library reader matches, without importing mypy.

The plugin keeps its entry-point table (``ENTRIES``) and its list of decorators that
keep a function (``KEEPS_FUNCTION``) in modules that import mypy
(``transformers/calls.py``, ``transformers/platform_facts.py``); the reader must not
import mypy, so it holds copies here. ``tests/library_facts/test_vocabulary.py`` checks
that the copies equal the plugin's tables, so they cannot drift apart.

TODO(lead): once ``typed_pallas_mypy/entries.py`` exists (the entry-point vocabulary
moved out of ``transformers/calls.py``), import ``ENTRIES`` and ``EntrySpec`` from there
and delete the copy below; move ``KEEPS_FUNCTION`` to a mypy-free module the same way.

What it does not do: decide anything; it only holds names.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from typed_pallas_mypy import evidence_tables, fullnames


@dataclass(frozen=True)
class EntrySpec:
    """How one entry point takes its kernel, mesh and params (as ``calls.EntrySpec``)."""

    #: how notes spell it
    title: str
    #: positional parameters, in order
    positional: tuple[str, ...]
    #: the parameter holding the kernel body, if any
    body: str | None
    #: the parameter holding the mesh, if any
    mesh: str | None = None
    #: the only backends this entry point lowers with (None: any)
    backends: frozenset[str] | None = None


_PALLAS_CALL: Final = EntrySpec("pl.pallas_call", ("kernel", "out_shape"), "kernel")
_PL_KERNEL: Final = EntrySpec("pl.kernel", ("body", "out_type"), "body", mesh="mesh")
_PLGPU_KERNEL: Final = EntrySpec(
    "plgpu.kernel", ("body", "out_shape"), "body", backends=evidence_tables.MOSAIC_GPU_ONLY
)
_CORE_MAP: Final = EntrySpec("pl.core_map", ("mesh",), None, mesh="mesh")

#: Pallas entry points by fullname (a copy of ``transformers.calls.ENTRIES``).
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
        "typed_pallas.pallas_call", ("kernel", "out_shape"), "kernel"
    ),
    fullnames.TP_KERNEL: EntrySpec(
        "typed_pallas.kernel", ("body", "out_type"), "body", mesh="mesh"
    ),
    fullnames.TP_MOSAIC_GPU_KERNEL: EntrySpec(
        "typed_pallas.mosaic_gpu_kernel",
        ("body", "out_shape"),
        "body",
        backends=evidence_tables.MOSAIC_GPU_ONLY,
    ),
}

#: Callables that return their function argument's behaviour unchanged (a copy of
#: ``transformers.platform_facts.KEEPS_FUNCTION``).
KEEPS_FUNCTION: Final = frozenset(
    {
        "jax.jit",
        "jax._src.api.jit",
        "jax._src.pjit.jit",
        "jax.vmap",
        "jax._src.api.vmap",
        "jax.pmap",
        "jax._src.api.pmap",
        "jax.grad",
        "jax._src.api.grad",
        "jax.value_and_grad",
        "jax._src.api.value_and_grad",
        "jax.checkpoint",
        "jax.remat",
        "jax._src.ad_checkpoint.checkpoint",
        "jax.named_call",
        "jax._src.api.named_call",
        "jax.named_scope",
        "functools.wraps",
        "functools.cache",
        "functools.lru_cache",
        "functools._lru_cache_wrapper",
        "typed_pallas.platform",
        "typed_pallas._tagged.platform",
    }
)

#: ``jax.custom_vjp(f)`` / ``jax.custom_jvp(f)``: calling the result runs the primal
#: ``f`` (the rules run only under differentiation), so it lowers for what ``f`` does.
KEEPS_PRIMAL: Final = frozenset(
    {
        "jax.custom_vjp",
        "jax.custom_jvp",
        "jax._src.custom_derivatives.custom_vjp",
        "jax._src.custom_derivatives.custom_jvp",
    }
)

#: Keepers whose positional arguments configure them: ``jax.named_scope("n")(f)``,
#: ``functools.wraps(g)(f)``, ``functools.lru_cache(8)(f)``,
#: ``typed_pallas.platform("tpu")(f)`` keep ``f``, not their argument.
CONFIGURED_KEEPERS: Final = frozenset(
    {
        "jax.named_scope",
        "functools.wraps",
        "functools.lru_cache",
        "typed_pallas.platform",
        "typed_pallas._tagged.platform",
    }
)

#: What the reader lets through as a function-keeping decorator or wrapper call.
KEEPERS: Final = KEEPS_FUNCTION | KEEPS_PRIMAL

#: Method decorators that keep the method callable as written.
METHOD_KEEPERS: Final = frozenset({"builtins.staticmethod", "builtins.classmethod"})

#: Class decorators that return the class itself (so ``C(...)`` still builds a ``C``).
CLASS_KEEPERS: Final = frozenset(
    {
        "dataclasses.dataclass",
        "jax.tree_util.register_pytree_node_class",
        "jax.tree_util.register_dataclass",
        "jax.tree_util.register_static",
        "functools.total_ordering",
        "typing.final",
        "chex.dataclass",
        "flax.struct.dataclass",
    }
)
#: Class decorators that make the class a dataclass (its fields are constructor parameters).
DATACLASS_DECORATORS: Final = frozenset(
    {"dataclasses.dataclass", "chex.dataclass", "flax.struct.dataclass"}
)

#: References whose presence means a function decides the platform itself.
PLATFORM_SOURCES: Final = (
    fullnames.DEFAULT_BACKEND
    | fullnames.IS_TPU_DEVICE
    | fullnames.PLATFORM_DEPENDENT
    | fullnames.TP_DISPATCH
)
#: Attribute names that read a device's platform or kind (``d.platform``,
#: ``jax.devices()[0].device_kind``): a function reading one may choose per platform.
PLATFORM_ATTRIBUTES: Final = frozenset({"platform", "device_kind"})

#: ``functools.partial``
PARTIAL: Final = fullnames.FUNCTOOLS_PARTIAL

#: Module prefixes of jax's own framework: never read (calls there are entry points or
#: opaque). Only ``jax.experimental.pallas.ops`` is read inside jax.
JAX_READ_PREFIX: Final = "jax.experimental.pallas.ops."
