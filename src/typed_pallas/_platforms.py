"""The one source of truth: platforms, the compiler-params table, and the error texts.

This module imports neither jax nor mypy. The runtime (``typed_pallas``), the stubs
(``stubs/``) and the mypy plugin (``typed_pallas_mypy``) all read what they need from
here, and ``tests/test_consistency.py`` keeps them in sync.

What it holds:

* the platform literals (``Platform``, ``TPU``, ``GPU``), the finer backends
  (``Backend``), the platforms JAX lowers for (``LoweringPlatform``), the names a
  user writes for either (``LoweringName``: "gpu" is cuda and rocm), and the
  platforms a computation can target, the host included (``TargetPlatform``);
* ``PARAMS_CLASSES``: one row per JAX compiler-params class: its backend, its
  platform, where JAX defines, exports and registers it, which lowering platforms it
  can serve, the custom calls its kernels lower to, and how notes name it. Every
  other per-backend table here (``BACKEND_NAMESPACES``, ``KERNEL_OF_CUSTOM_CALL``,
  ``GPU_CUSTOM_CALLS``...) is derived from it, so a new backend costs one row (and
  one stub class in ``stubs/``);
* the guard universe of the mypy plugin (``GUARD_UNIVERSE``, ``LOWERINGS_OF_GUARD_NAME``)
  and the device kinds used to lower for a platform on a host without it;
* the message templates, starting with JAX's own
  ``Compiler params for platform {platform} cannot be used for {expected_platform} lowering.``
  and the hints that go into notes (never into the message).

What it does not do: look anything up in jax, or decide what a call means.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Final, Literal, NamedTuple

__all__ = [
    "ABSTRACT_DEVICE_KINDS",
    "BACKENDS",
    "BACKEND_LABELS",
    "BACKEND_LOWERING_NOTES",
    "BACKEND_NAMESPACES",
    "BRANCH_KEYWORDS_OF_LOWERING",
    "CHAIN_CALL_NOTE",
    "CHAIN_ENTRY_NOTE",
    "CHAIN_INSTANCE_NOTE",
    "CHAIN_RETURNS_NOTE",
    "CHAIN_RULE_NOTE",
    "CHAIN_RUNS_NOTE",
    "GPU",
    "GPU_CUSTOM_CALLS",
    "GUARD_UNIVERSE",
    "HOST_PLATFORM",
    "KERNEL_OF_CUSTOM_CALL",
    "LOWERINGS_OF_GUARD_NAME",
    "LOWERINGS_OF_NAME",
    "LOWERING_NAMES",
    "LOWERING_PLATFORMS",
    "LOWERING_SET",
    "PALLAS_PACKAGE_ALIASES",
    "PARAMS_BY_BACKEND",
    "PARAMS_BY_FULLNAME",
    "PARAMS_CLASSES",
    "PARAMS_DECIDE",
    "PLATFORMS",
    "PLATFORM_NAMES",
    "PLATFORM_OF_LOWERING",
    "PROOF_NOTE",
    "SOLE_BACKEND_OF_PLATFORM",
    "TARGET_PLATFORMS",
    "TPU",
    "Backend",
    "LoweringName",
    "LoweringPlatform",
    "ParamsClass",
    "Platform",
    "TargetPlatform",
    "canonical_fullname",
]

#: The platforms of JAX's lowering-rule registry, and of its error text.
Platform = Literal["tpu", "gpu"]
TPU = Literal["tpu"]
GPU = Literal["gpu"]

#: The three Pallas backends, one per compiler-params class.
Backend = Literal["mosaic_tpu", "triton", "mosaic_gpu"]

#: What ``jax.export(..., platforms=[...])`` and ``lowering_platforms=`` take.
LoweringPlatform = Literal["tpu", "cuda", "rocm"]

#: A platform or lowering platform, as users and ``typed_pallas.dispatch`` keywords write it.
LoweringName = Literal["tpu", "gpu", "cuda", "rocm"]

#: Every platform a computation can lower for: the accelerators and the host.
TargetPlatform = Literal["tpu", "cuda", "rocm", "cpu"]

PLATFORMS: Final[tuple[Platform, ...]] = ("tpu", "gpu")
BACKENDS: Final[tuple[Backend, ...]] = ("mosaic_tpu", "triton", "mosaic_gpu")
LOWERING_PLATFORMS: Final[tuple[LoweringPlatform, ...]] = ("tpu", "cuda", "rocm")
LOWERING_NAMES: Final[tuple[LoweringName, ...]] = ("tpu", "gpu", "cuda", "rocm")

#: The host: Pallas kernels lower for it only in interpret mode.
HOST_PLATFORM: Final = "cpu"
TARGET_PLATFORMS: Final[tuple[TargetPlatform, ...]] = (*LOWERING_PLATFORMS, HOST_PLATFORM)

#: Names that ``pick_lowering`` and ``import_backend`` accept (``jax.default_backend()`` values
#: and lowering platforms).
PLATFORM_NAMES: Final[tuple[str, ...]] = (*LOWERING_NAMES, HOST_PLATFORM)

#: ``LOWERING_PLATFORMS`` as a set, for intersections.
LOWERING_SET: Final = frozenset(LOWERING_PLATFORMS)

#: Every platform a guard (``if jax.default_backend() == ...``) can speak of. "cpu" is
#: there so that ``!= "tpu"`` is not "gpu".
GUARD_UNIVERSE: Final = frozenset({"tpu", "cuda", "rocm", "cpu"})

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

#: What a platform name in a guard or a branch keyword (``platform_dependent(cpu=...)``)
#: stands for, within ``GUARD_UNIVERSE``: ``LOWERINGS_OF_NAME`` plus the host.
LOWERINGS_OF_GUARD_NAME: Final[Mapping[str, frozenset[str]]] = {
    **LOWERINGS_OF_NAME,
    HOST_PLATFORM: frozenset({HOST_PLATFORM}),
}

#: ``typed_pallas.dispatch`` keywords that serve a lowering platform, most specific first.
BRANCH_KEYWORDS_OF_LOWERING: Final[Mapping[str, tuple[LoweringName, ...]]] = {
    lowering: tuple(dict.fromkeys((lowering, PLATFORM_OF_LOWERING[lowering])))
    for lowering in LOWERING_PLATFORMS
}

#: Device kind used to lower for a platform on a host without that device (jax >= 0.12
#: reads it from an abstract mesh); the device platform is the registry platform.
_DEVICE_KIND_OF_LOWERING: Final[Mapping[LoweringPlatform, str]] = {
    "tpu": "TPU v5 lite",
    "cuda": "NVIDIA H100",
    "rocm": "gfx942",
}
#: lowering platform -> (device kind, device platform) of that abstract device
ABSTRACT_DEVICE_KINDS: Final[Mapping[str, tuple[str, str]]] = {
    lowering: (kind, PLATFORM_OF_LOWERING[lowering])
    for lowering, kind in _DEVICE_KIND_OF_LOWERING.items()
}

# ----------------------------------------------------------------------------- device kinds
# What ``Device.device_kind`` says about the platform (measured; docs/platforms.md). Device
# kinds tell generations apart, so a comparison of them decides the platform only where
# one platform alone can match:
#
# * TPU: every kind jax's ``tpu_info.chip_version_from_device_kind`` knows contains "TPU"
#   ("TPU v2" ... "TPU v6 lite", "TPU7x", "TPU8i"), and no GPU or CPU kind does: "TPU"
#   in a kind is true on TPU and false elsewhere;
# * CUDA: kinds are product names, "NVIDIA H200" (read on an H200), "NVIDIA H100 80GB
#   HBM3", but also "Tesla T4" (jax's ``gpu_info.GpuVersion``): "NVIDIA" in a kind is
#   true only on CUDA, its absence proves nothing;
# * ROCm: "AMD Instinct MI300X" or an architecture such as "gfx942:sramecc+:xnack-":
#   "AMD" or "gfx" is true only on ROCm;
# * CPU: "cpu".
#
#: substring of a device kind -> the platform a kind containing it belongs to
DEVICE_KIND_MARKERS: Final[Mapping[str, str]] = {
    "TPU": "tpu",
    "NVIDIA": "cuda",
    "Tesla": "cuda",
    "AMD": "rocm",
    "gfx": "rocm",
}
#: markers that every kind of their platform contains (their absence rules it out)
DEVICE_KIND_EXHAUSTIVE_MARKERS: Final = frozenset({"TPU"})

#: Backend names that are not platforms but that users and tables write.
BACKEND_ALIASES: Final[Mapping[str, Backend]] = {
    "mosaic_tpu": "mosaic_tpu",
    "mosaic": "mosaic_tpu",
    "triton": "triton",
    "mosaic_gpu": "mosaic_gpu",
}


class ParamsClass(NamedTuple):
    """One JAX compiler-params class and what it may lower for.

    A named tuple, not a frozen dataclass: the plugin imports this module on every mypy
    run, warm ones included, where generating a dataclass's methods cost a millisecond.
    """

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
    #: the private package that implements the backend (its meshes, primitives, lowering)
    private_package: str
    #: public modules besides ``module`` whose names belong to this backend only
    other_public_modules: tuple[str, ...]
    #: the JAX module whose import registers the class in JAX's own registry
    registration_module: str
    #: custom-call targets that a kernel of this backend lowers to
    custom_calls: tuple[str, ...]
    #: what the plugin calls a kernel that only this backend lowers ("a TPU kernel")
    kernel_label: str

    @property
    def public_fullname(self) -> str:
        return f"{self.module}.{self.name}"

    @property
    def fullnames(self) -> tuple[str, ...]:
        """Every fully qualified name the class is known by (public first)."""
        return (self.public_fullname, *tuple(f"{m}.{self.name}" for m in self.defining_modules))

    @property
    def namespaces(self) -> tuple[str, ...]:
        """Module prefixes (with their trailing dot) whose names belong to this backend."""
        return tuple(
            f"{m}." for m in (self.private_package, self.module, *self.other_public_modules)
        )


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
        private_package="jax._src.pallas.mosaic",
        other_public_modules=("jax.experimental.pallas.tpu_sc",),
        registration_module="jax._src.pallas.mosaic.pallas_call_registration",
        custom_calls=("tpu_custom_call",),
        kernel_label="TPU",
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
        private_package="jax._src.pallas.triton",
        other_public_modules=(),
        registration_module="jax._src.pallas.triton.pallas_call_registration",
        custom_calls=("__gpu$xla.gpu.triton",),
        kernel_label="Triton",
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
        private_package="jax._src.pallas.mosaic_gpu",
        other_public_modules=(),
        registration_module="jax._src.pallas.mosaic_gpu.pallas_call_registration",
        custom_calls=("mosaic_gpu_v2", "mosaic_gpu"),
        kernel_label="Mosaic GPU",
    ),
)

PARAMS_BY_BACKEND: Final[Mapping[Backend, ParamsClass]] = {p.backend: p for p in PARAMS_CLASSES}
PARAMS_BY_FULLNAME: Final[Mapping[str, ParamsClass]] = {
    name: p for p in PARAMS_CLASSES for name in p.fullnames
}

#: JAX's public Pallas packages by the name the project reads them under: from jax 0.12.1
#: on, ``jax.pallas`` (and its ``tpu``, ``tpu_sc``, ``mosaic_gpu``, ``fuser``) is the
#: preferred import path and ``jax.experimental.pallas*`` its alias (``from jax.pallas
#: import *``). Every table here and in the plugin names the ``jax.experimental.pallas``
#: spelling, which exists at every supported release; :func:`canonical_fullname` maps the
#: other one onto it. The stubs define each class once under ``jax.experimental.pallas``
#: and re-export it from ``jax.pallas``.
PALLAS_PACKAGE_ALIASES: Final[Mapping[str, str]] = {"jax.pallas": "jax.experimental.pallas"}


def canonical_fullname(fullname: str) -> str:
    """``fullname`` with JAX's preferred Pallas package spelled as the tables spell it
    (``"jax.pallas.tpu.CompilerParams"`` -> ``"jax.experimental.pallas.tpu.CompilerParams"``);
    any other name unchanged. Cheap: every name the plugin's engine resolves passes here."""
    if not fullname.startswith("jax.pallas"):
        return fullname
    for alias, canonical in PALLAS_PACKAGE_ALIASES.items():
        if fullname == alias or fullname.startswith(alias + "."):
            return canonical + fullname[len(alias) :]
    return fullname


#: The backend a platform implies when it has only one (a class registered for "tpu").
SOLE_BACKEND_OF_PLATFORM: Final[Mapping[Platform, Backend]] = {
    platform: backends[0]
    for platform in PLATFORMS
    if len(backends := [p.backend for p in PARAMS_CLASSES if p.platform == platform]) == 1
}

#: Module prefix -> backend, longest prefix first (``mosaic_gpu.`` before ``mosaic.``).
BACKEND_NAMESPACES: Final[tuple[tuple[str, Backend], ...]] = tuple(
    sorted(
        ((prefix, p.backend) for p in PARAMS_CLASSES for prefix in p.namespaces),
        key=lambda item: -len(item[0]),
    )
)

#: Custom-call target -> the backend whose kernels lower to it.
KERNEL_OF_CUSTOM_CALL: Final[Mapping[str, Backend]] = {
    call: p.backend for p in PARAMS_CLASSES for call in p.custom_calls
}

#: Custom calls of GPU kernels: ``jax.export`` refuses them unless told otherwise.
GPU_CUSTOM_CALLS: Final[tuple[str, ...]] = tuple(
    call for p in PARAMS_CLASSES if p.platform == "gpu" for call in p.custom_calls
)

#: Backend -> what the plugin calls a kernel that only that backend lowers.
BACKEND_LABELS: Final[Mapping[Backend, str]] = {p.backend: p.kernel_label for p in PARAMS_CLASSES}

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

_CONSTRUCTORS: Final = tuple(f"{p.public_fullname}(...)" for p in PARAMS_CLASSES)

#: Legacy dict params (``dict(mosaic=...)``) that JAX fails on only at lowering.
LEGACY_DICT_MESSAGE: Final = (
    "Compiler params must be a compiler-params object, not a dict: "
    f"use {', '.join(_CONSTRUCTORS[:-1])} or {_CONSTRUCTORS[-1]}."
)

#: The public params classes in one phrase ("jax.experimental.pallas.tpu/triton/mosaic_gpu.CompilerParams").
PUBLIC_PARAMS_CLASSES: Final = f"jax.experimental.pallas.{'/'.join(p.module.rsplit('.', 1)[-1] for p in PARAMS_CLASSES)}.CompilerParams"

#: A regular expression matching JAX's message and ours; groups: platform, expected. A
#: string (``re`` compiles and caches it on first use): the plugin imports this module on
#: every mypy run, and never matches a message.
MISMATCH_REGEX: Final = r"Compiler params for platform (?P<platform>\w+) cannot be used for (?P<expected>\w+) lowering\."
#: ... its backend-level twin; groups: backend, expected.
BACKEND_MISMATCH_REGEX: Final = (
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
    return bool(re.search(MISMATCH_REGEX, text) or re.search(BACKEND_MISMATCH_REGEX, text))


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

#: The note for a backend lowered for a lowering platform of its own platform that it
#: does not serve; a pair missing here gets :func:`fix_hint`.
BACKEND_LOWERING_NOTES: Final[Mapping[tuple[Backend, str], str]] = {
    ("mosaic_gpu", "rocm"): ROCM_MOSAIC_GPU_NOTE,
}


def backend_lowering_note(backend: Backend, lowering: str) -> str:
    """The note for ``backend``'s params lowered for ``lowering``, which it does not serve."""
    return BACKEND_LOWERING_NOTES.get((backend, lowering)) or fix_hint(backend, lowering)


# ----------------------------------------------------------------------------- version facts

#: The first JAX version whose ``pl.pallas_call`` registers no Mosaic GPU lowering: from
#: it on, ``pl.pallas_call`` with Mosaic GPU params fails on every platform (measured on
#: 0.12.0.1; 0.10.2 lowers it). ``plgpu.kernel`` is the Mosaic GPU entry point there.
NO_MOSAIC_GPU_PALLAS_CALL_FROM: Final = (0, 12)

#: The first JAX version whose ``pl.pallas_call`` without params lowers with Triton on a
#: GPU. Before it, such a call lowers with Mosaic GPU there, which does not lower for rocm
#: (measured: jax 0.10.2 refuses rocm with "Mosaic GPU does not yet support AMD ROCm
#: devices"; 0.12.0.1 and 0.12.1 lower it for tpu, cuda and rocm). The checker does not
#: report it: code under a guard for "gpu" that runs on NVIDIA is correct to its authors,
#: as with Mosaic GPU params (docs/inference-model.md, "The evaluator").
TRITON_DEFAULT_FROM: Final = (0, 12)

#: The first JAX version that drops, before lowering, a kernel whose result nothing uses
#: (dead code under ``jax.jit``: a sort key's result, which only orders the items). Before
#: it such a kernel is lowered, and refused where its params do not lower (measured:
#: ``max([x], key=lambda v: kernel(v).sum())`` with TPU params lowered for cuda: jax 0.10.2
#: refuses it, 0.12.0.1 and 0.12.1 lower the program).
DEAD_KERNELS_DROPPED_FROM: Final = (0, 12)

#: Before this JAX version, Mosaic GPU params lowered for rocm are refused in a fresh
#: process ("Mosaic GPU does not yet support AMD ROCm devices") but lowered silently once
#: a cuda lowering has loaded Mosaic GPU's registration (measured at 0.10.2, for
#: ``pl.pallas_call`` and ``plgpu.kernel``); from it on they are refused. JAX's answer
#: depends on what ran before, so a checker says nothing about that cell there.
MOSAIC_GPU_ROCM_REFUSED_FROM: Final = (0, 12)

#: What the runtime guard and the plugin say about that call.
MOSAIC_GPU_PALLAS_CALL_MESSAGE: Final = (
    "This JAX does not lower Mosaic GPU params through pl.pallas_call; "
    "use plgpu.kernel (typed_pallas.mosaic_gpu_kernel) instead."
)


# ----------------------------------------------------------------------------- checked releases

#: The one line every entry point (``typed-pallas check`` and ``--version``, the mypy
#: plugin, ``typed_pallas.jax_check_status()``) gives when the installed jax is not a
#: release typed-pallas was checked at (``typed_pallas._versions.CHECKED_RELEASES``).
UNCHECKED_JAX_NOTE: Final = (
    "{who}: note: jax {installed} is {position}; typed-pallas {version} was checked at jax "
    "{checked}, so its stubs, the plugin's JAX API table and its evidence tables may be "
    "incomplete for jax {installed} (names it added, moved or removed)"
)
#: ``{position}`` of that note, by where the installed release lies among the checked ones
UNCHECKED_NEWER: Final = "newer than {newest}, the newest checked release"
UNCHECKED_BETWEEN: Final = (
    "between the checked releases {lower} and {upper}, and not itself checked"
)
UNCHECKED_OLDER: Final = "older than {oldest}, the oldest checked release"
UNCHECKED_SAME_RELEASE: Final = "a variant of the checked release {same}, not itself checked"


def unchecked_jax_note(
    who: str, installed: str, version: str, checked: tuple[str, ...], position: str
) -> str:
    """The unchecked-jax note (one line)."""
    return UNCHECKED_JAX_NOTE.format(
        who=who, installed=installed, version=version, checked=", ".join(checked), position=position
    )


# ----------------------------------------------------------------------------- plugin notes

#: A call whose ``interpret=`` is not a literal: its params still have to match its kernel.
INTERPRET_UNKNOWN_NOTE: Final = (
    "interpret= is not a literal here: JAX ignores compiler params only in interpret mode, "
    "so this call fails unless it is interpreted"
)

#: A call whose ``interpret=`` is the enclosing function's parameter, off by default: the
#: call is judged as it runs by default (compiled).
INTERPRET_DEFAULT_NOTE: Final = (
    "interpret= is the parameter {name}, off by default: the call is judged as it runs "
    "compiled; it fails unless its caller turns interpret mode on"
)
INTERPRET_PASSED_OFF_NOTE: Final = (
    "interpret= is the parameter {name}, which every use of {function} in this module "
    "passes off: the call is judged as it runs compiled; it fails unless a caller "
    "elsewhere turns interpret mode on"
)

#: A call whose ``interpret=`` is a platform condition (``jax.default_backend() != "tpu"``):
#: it runs compiled only where that condition is false.
INTERPRET_CONDITION_NOTE: Final = (
    "the interpret= condition{what} is false only for {platforms}: the call runs compiled "
    "there, interpreted elsewhere"
)

#: The notes of a finding that show the way to its kernel, one per function on the way:
#: it calls the next one, or its entry call makes the kernel, or its call runs a kernel
#: made elsewhere. ``where``/``at``: ``path:line``.
CHAIN_CALL_NOTE: Final = "{name} ({where}) lowers only for {platforms}: it calls {callee} at {at}"
#: the same, when what it calls is an instance (its class's ``__call__`` runs)
CHAIN_INSTANCE_NOTE: Final = (
    "{name} ({where}) lowers only for {platforms}: it calls a {cls} at {at}, whose __call__ "
    "lowers only for {platforms}"
)
#: the first step of a way through an instance another function made (a factory)
CHAIN_RETURNS_NOTE: Final = (
    "{name} ({where}) returns a {cls} at {at}, which lowers only for {platforms}"
)
#: the step of a way through a custom-derivative function whose rule ran in its place
CHAIN_RULE_NOTE: Final = (
    "{name} ({where}) lowers only for {platforms}: its derivative rule {callee} at {at} does"
)
CHAIN_ENTRY_NOTE: Final = (
    "{name} ({where}) lowers only for {platforms}: its {entry} at {at} {decides}"
)
CHAIN_RUNS_NOTE: Final = (
    "{name} ({where}) lowers only for {platforms}: it runs, at {at}, the kernel of the "
    "{entry} at {made}, which {decides}"
)
#: what decides where a kernel lowers, in the notes above: its params
PARAMS_DECIDE: Final = "takes {params}"

#: A function that lowers only for some platforms, used where the platform is another
#: (when the requirement comes from kernel evidence, not from params).
#: what a kernel's evidence says in a chain note (``{params}`` of the notes above, where
#: the kernel's body or arguments, not its params, decide): "uses pltpu.sync_copy (line
#: 10), TPU-only"
PROOF_NOTE: Final = "uses {what} ({place}line {line}), {label}-only"

REQUIREMENT_TEMPLATE: Final = (
    "{name} lowers only for {required}; it cannot be used for {platform} lowering."
)
