"""``typed_pallas.check_lowering``: lower a function for TPU, CUDA and ROCm on a CPU machine.

``check_lowering(fn, *args, platforms=("tpu", "cuda", "rocm"), **kwargs)`` traces
``jax.jit(fn)`` and lowers it for each platform in turn (cross-platform lowering: no
accelerator needed), and returns a ``LoweringReport`` with one ``PlatformResult`` per
platform: ``"lowered"`` (with the Pallas custom calls the module contains),
``"mismatch"`` (compiler params for another platform, with the text) or ``"error"``
(anything else: type, text, and a hint when we have one). It turns "run CI on the
production backend" into something a CPU runner does; the pytest plugin
(``typed_pallas.pytest_plugin``) wraps it in a marker and a fixture.

How a cell is classified (see ``docs/patterns.md``):

* ``mismatch`` when the lowering raised ``PlatformMismatchError`` or a ``ValueError``
  whose text is JAX's (``_platforms.MISMATCH_REGEX`` / ``BACKEND_MISMATCH_REGEX``);
  ``source`` says ``"jax"`` or ``"typed_pallas"``.
* ``mismatch`` with ``source="inferred"`` only when it is *provable*: a Pallas kernel
  that this platform really lowers (branches of ``lax.platform_dependent`` /
  ``typed_pallas.dispatch`` for other platforms are skipped) carries compiler params
  whose class cannot serve this platform (``_platforms.PARAMS_CLASSES``, plus classes
  registered with ``typed_pallas.register_lowering_rule``). Then JAX's own error, often an
  *empty* ``AssertionError`` or a misleading "install jaxlib GPU", is kept in
  ``error`` and the message is JAX's anchor text. The same proof also catches jax
  0.10's *silent* lowering of Mosaic GPU params for rocm.
* ``error`` otherwise. An empty ``AssertionError`` raised inside Pallas lowering whose
  params cannot be identified stays an ``error``, with a hint naming the likely cause.

The result does not depend on what the process lowered before (JAX fills its registry
lazily, so its own error changes with history; the proof does not).

Lowering uses ``jax.jit(fn).trace(*args).lower(lowering_platforms=(p,))`` inside an
abstract mesh naming a device of ``p`` (jax 0.12 needs one to lower Triton and Mosaic
TPU on a CPU host). It does not compile or run anything. Importing this module imports jax.
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Final, Literal

import jax
from typing_extensions import override

from typed_pallas import _jaxcompat, _platforms
from typed_pallas._dispatch import cross_lowering_targets
from typed_pallas._errors import PlatformMismatchError, UnknownPlatformError

__all__ = ["LoweringError", "LoweringReport", "PlatformResult", "Status", "check_lowering"]

Status = Literal["lowered", "mismatch", "error"]
Source = Literal["jax", "typed_pallas", "inferred"]

#: what check_lowering lowers for when not told
DEFAULT_PLATFORMS: Final[tuple[str, ...]] = _platforms.LOWERING_PLATFORMS

#: platforms check_lowering accepts ("cpu" is a valid lowering platform too)
VALID_PLATFORMS: Final[tuple[str, ...]] = _platforms.TARGET_PLATFORMS
_CALL_TARGET: Final = re.compile(
    r"""(?:call_target_name\s*=\s*|stablehlo\.custom_call\s+@)"?([\w$.]+)"?"""
)

_EMPTY_ASSERT_HINT: Final = (
    "JAX raised an empty AssertionError while lowering a Pallas kernel; the usual cause is "
    "compiler params for another platform (jax/_src/pallas asserts the params class instead of "
    "raising its ValueError). Build the kernel with typed_pallas.pallas_call or call "
    "typed_pallas.install_backstop() to get the exact error."
)
_JAXLIB_GPU_HINT: Final = (
    "JAX 0.10 says this for TPU compiler params lowered for a GPU even when the GPU lowering "
    "modules are installed: check the kernel's compiler_params first."
)
_CPU_HINT: Final = "Pallas kernels lower for cpu only with interpret=True; use dispatch(default=...) for a reference."


@dataclass(frozen=True)
class PlatformResult:
    """One cell of a ``LoweringReport``."""

    #: the lowering platform ("tpu", "cuda", "rocm", "cpu")
    platform: str
    #: "lowered", "mismatch" or "error"
    status: Status
    #: the error text ("" when lowered); for an inferred mismatch, JAX's anchor text
    message: str = ""
    #: the exception class name (``None`` when lowered)
    error_type: str | None = None
    #: for a mismatch: who said so ("jax", "typed_pallas", or "inferred" from the params)
    source: Source | None = None
    #: what to do, when we know
    hint: str | None = None
    #: kernel custom calls found in the lowered module ("mosaic_tpu", "triton", "mosaic_gpu")
    kernels: tuple[str, ...] = ()
    #: seconds spent tracing and lowering this platform
    seconds: float = 0.0
    #: the exception itself (not compared, not printed)
    error: BaseException | None = field(default=None, compare=False, repr=False)

    @property
    def ok(self) -> bool:
        return self.status == "lowered"

    def cell(self) -> str:
        """A short table cell: ``OK[triton]``, ``VE``, ``VE(inferred; AssertionError)``, ``AssertionError: ...``."""
        if self.status == "lowered":
            return f"OK[{','.join(self.kernels) or '-'}]"
        if self.status == "mismatch":
            if self.source == "inferred":
                raw = self.error_type or "lowered"
                return f"VE(inferred; JAX: {raw})"
            return "VE" if self.source == "jax" else "VE(typed_pallas)"
        text = self.message if len(self.message) <= 60 else self.message[:57] + "..."
        return f"{self.error_type}: {text or '<empty>'}"


class LoweringError(AssertionError):
    """Raised by ``LoweringReport.assert_lowers``: some platform did not lower."""


@dataclass(frozen=True)
class LoweringReport(Mapping[str, PlatformResult]):
    """Per-platform outcome of ``check_lowering``: a read-only mapping platform -> ``PlatformResult``."""

    #: the function's name
    name: str
    results: Mapping[str, PlatformResult]

    @override
    def __getitem__(self, platform: str) -> PlatformResult:
        return self.results[platform]

    @override
    def __iter__(self) -> Iterator[str]:
        return iter(self.results)

    @override
    def __len__(self) -> int:
        return len(self.results)

    @property
    def ok(self) -> bool:
        """True when every platform lowered."""
        return all(r.ok for r in self.results.values())

    def platforms_with(self, status: Status) -> tuple[str, ...]:
        return tuple(p for p, r in self.results.items() if r.status == status)

    @property
    def lowered(self) -> tuple[str, ...]:
        return self.platforms_with("lowered")

    @property
    def mismatched(self) -> tuple[str, ...]:
        return self.platforms_with("mismatch")

    @property
    def failed(self) -> tuple[str, ...]:
        return self.platforms_with("error")

    def assert_lowers(self, *platforms: str) -> None:
        """Raise ``LoweringError`` (an ``AssertionError``) unless each of ``platforms`` (default: all) lowered."""
        wanted = platforms or tuple(self.results)
        missing = [p for p in wanted if p not in self.results]
        if missing:
            raise LoweringError(f"{self.name}: not checked for {', '.join(missing)}")
        bad = [p for p in wanted if not self.results[p].ok]
        if bad:
            raise LoweringError(f"{self.name} does not lower for {', '.join(bad)}:\n{self.table()}")

    def table(self) -> str:
        """A plain-text table, one line per platform."""
        width = max((len(p) for p in self.results), default=4)
        lines = []
        for platform, result in self.results.items():
            line = f"  {platform:<{width}}  {result.status:<8}  {result.cell()}"
            if result.status != "lowered" and result.message and result.source != "inferred":
                line = f"  {platform:<{width}}  {result.status:<8}  {result.error_type}: {result.message}"
            elif result.status == "mismatch":
                line += f"  {result.message}"
            if result.hint:
                line += f"\n  {'':<{width}}  hint: {result.hint}"
            lines.append(line)
        return "\n".join(lines)

    def to_dict(self) -> dict[str, dict[str, Any]]:
        """JSON-ready: platform -> {status, message, error_type, source, hint, kernels}."""
        return {
            p: {
                "status": r.status,
                "message": r.message,
                "error_type": r.error_type,
                "source": r.source,
                "hint": r.hint,
                "kernels": list(r.kernels),
            }
            for p, r in self.results.items()
        }

    @override
    def __str__(self) -> str:
        return f"check_lowering({self.name}):\n{self.table()}"

    @override
    def __repr__(self) -> str:
        cells = ", ".join(f"{p}={r.cell()!r}" for p, r in self.results.items())
        return f"LoweringReport({self.name}: {cells})"


# --------------------------------------------------------------------------- proof from the jaxpr


def _subjaxprs(value: Any) -> Iterator[Any]:
    items = value if isinstance(value, (tuple, list)) else (value,)
    for item in items:
        inner = getattr(item, "jaxpr", item)
        if hasattr(inner, "eqns"):
            yield inner


def _reachable_params(jaxpr: Any, platform: str) -> Iterator[Any]:
    """Compiler params of the Pallas kernels that lowering ``jaxpr`` for ``platform`` lowers."""
    for eqn in getattr(jaxpr, "eqns", ()):
        params = eqn.params
        name = eqn.primitive.name
        if params.get("interpret"):
            continue  # an interpreted kernel runs anywhere: JAX ignores its params
        if "compiler_params" in params and params["compiler_params"] is not None:
            yield params["compiler_params"]
        if name == "typed_pallas_on_platforms" and platform not in params.get("platforms", ()):
            continue
        branches_platforms = params.get("branches_platforms") if name == "cond" else None
        if branches_platforms is not None:
            chosen = None
            for index, names in enumerate(branches_platforms):
                if names is None or platform in names:
                    chosen = index
                    break
            branches = params.get("branches", ())
            if chosen is not None and chosen < len(branches):
                for sub in _subjaxprs(branches[chosen]):
                    yield from _reachable_params(sub, platform)
            continue
        for key, value in params.items():
            if key == "compiler_params":
                continue
            for sub in _subjaxprs(value):
                yield from _reachable_params(sub, platform)


def _proven_mismatch(jaxpr: Any, platform: str) -> PlatformMismatchError | None:
    """JAX's error for the first reachable kernel whose params cannot serve ``platform``."""
    if platform not in _platforms.LOWERINGS_OF_NAME:
        return None
    try:
        from typed_pallas import _registry
    except Exception:  # pragma: no cover - registry unavailable
        return None
    for params in _reachable_params(jaxpr, platform):
        if isinstance(params, Mapping):
            continue  # legacy dict params: JAX's own TypeError says enough
        entry = _registry.resolve(type(params))
        if entry is None:
            continue  # unknown class: say nothing
        error = _registry.mismatch_error(entry, platform)
        if error is not None:
            return error
    return None


# --------------------------------------------------------------------------- classification


def _chain(error: BaseException) -> Iterator[BaseException]:
    seen: set[int] = set()
    current: BaseException | None = error
    while current is not None and id(current) not in seen:
        seen.add(id(current))
        yield current
        current = current.__cause__ or current.__context__


def _mismatch_in(error: BaseException) -> tuple[BaseException, Source] | None:
    for link in _chain(error):
        if isinstance(link, PlatformMismatchError):
            return link, "typed_pallas"
        if isinstance(link, ValueError) and _platforms.is_mismatch_message(str(link)):
            return link, "jax"
    return None


def _hint_for(error: BaseException, platform: str) -> str | None:
    text = str(error)
    if isinstance(error, AssertionError) and not text.strip():
        return _EMPTY_ASSERT_HINT
    if "install jaxlib GPU" in text or "To use Pallas on GPU" in text:
        return _JAXLIB_GPU_HINT
    if platform == _platforms.HOST_PLATFORM and "interpret mode" in text:
        return _CPU_HINT
    return None


def _kernels(text: str) -> tuple[str, ...]:
    found = []
    for target in _CALL_TARGET.findall(text):
        kind = _platforms.KERNEL_OF_CUSTOM_CALL.get(target)
        if kind is not None and kind not in found:
            found.append(kind)
    return tuple(found)


def classify(
    platform: str,
    error: BaseException | None,
    *,
    module_text: str = "",
    proof: PlatformMismatchError | None = None,
    seconds: float = 0.0,
) -> PlatformResult:
    """One cell from what lowering did: ``error`` (``None`` when it lowered) and the proof, if any."""
    if error is not None:
        found = _mismatch_in(error)
        if found is not None:
            link, source = found
            notes = getattr(link, "__notes__", None) or []
            return PlatformResult(
                platform,
                "mismatch",
                str(link),
                type(link).__name__,
                source,
                hint=notes[0] if notes else None,
                seconds=seconds,
                error=error,
            )
        if proof is not None:
            notes = getattr(proof, "__notes__", None) or []
            return PlatformResult(
                platform,
                "mismatch",
                str(proof),
                type(error).__name__,
                "inferred",
                hint=(notes[0] if notes else None),
                seconds=seconds,
                error=error,
            )
        return PlatformResult(
            platform,
            "error",
            str(error),
            type(error).__name__,
            None,
            hint=_hint_for(error, platform),
            seconds=seconds,
            error=error,
        )
    kernels = _kernels(module_text)
    if proof is not None:
        # JAX lowered it anyway (jax 0.10: Mosaic GPU params for rocm once registered).
        return PlatformResult(
            platform,
            "mismatch",
            str(proof),
            None,
            "inferred",
            hint=f"JAX lowered it silently ({', '.join(kernels) or 'no kernel'}); it cannot run there.",
            kernels=kernels,
            seconds=seconds,
            error=proof,
        )
    return PlatformResult(platform, "lowered", kernels=kernels, seconds=seconds)


def _check_platforms(platforms: Sequence[str]) -> tuple[str, ...]:
    if isinstance(platforms, str):
        platforms = (platforms,)
    out: list[str] = []
    for p in platforms:
        if p in VALID_PLATFORMS:
            out.append(p)
        elif p in _platforms.LOWERINGS_OF_NAME:  # "gpu": cuda and rocm, in table order
            out.extend(
                q for q in _platforms.LOWERING_PLATFORMS if q in _platforms.LOWERINGS_OF_NAME[p]
            )
        else:
            names = (
                *VALID_PLATFORMS,
                *(n for n in _platforms.LOWERINGS_OF_NAME if n not in VALID_PLATFORMS),
            )
            valid = ", ".join(repr(v) for v in names)
            raise UnknownPlatformError(
                f"check_lowering: unknown platform {p!r}: expected one of {valid}"
            )
    return tuple(dict.fromkeys(out))


def check_lowering(
    fn: Callable[..., Any],
    *args: Any,
    platforms: Sequence[str] = DEFAULT_PLATFORMS,
    device_kinds: Mapping[str, tuple[str, str]] | None = None,
    **kwargs: Any,
) -> LoweringReport:
    """Lower ``fn(*args, **kwargs)`` for each platform on this machine and report each outcome.

    !!! Example

        ```python
        report = typed_pallas.check_lowering(my_op, x, platforms=("tpu", "cuda"))
        report.assert_lowers("tpu")      # AssertionError with a table if not
        report["cuda"].status            # "lowered" | "mismatch" | "error"
        ```

    Arguments:
        fn: what to check; it is wrapped in a fresh ``jax.jit`` (``kwargs`` are static).
        *args: arrays or ``jax.ShapeDtypeStruct``s, as ``jax.jit(fn).trace`` takes them.
        platforms: lowering platforms: "tpu", "cuda", "rocm", "cpu" ("gpu" means cuda and rocm).
        device_kinds: platform -> (device kind, device platform) for the abstract device
            jax 0.12 needs, e.g. ``{"tpu": ("TPU v6 lite", "tpu")}``; defaults to
            TPU v5 lite / NVIDIA H100 / gfx942.
        **kwargs: passed to ``fn`` (closed over, not traced).

    Returns:
        A ``LoweringReport``, in the order of ``platforms``. It never raises for a
        lowering failure: that is what the report is for.
    """
    targets = _check_platforms(platforms)
    kinds = dict(_platforms.ABSTRACT_DEVICE_KINDS)
    kinds.update(device_kinds or {})
    name = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None) or repr(fn)
    results: dict[str, PlatformResult] = {}
    for platform in targets:
        start = time.perf_counter()

        def fresh(*a: Any) -> Any:  # a new function each time: no jit cache across platforms
            return fn(*a, **kwargs)

        error: BaseException | None = None
        text = ""
        jaxpr = None
        with (
            cross_lowering_targets((platform,), kinds),
            _jaxcompat.cross_lowering(platform, kinds.get(platform)),
        ):
            try:
                traced = jax.jit(fresh).trace(*args)
                jaxpr = traced.jaxpr
                lowered = traced.lower(lowering_platforms=(platform,))
                text = lowered.as_text()
            except Exception as exc:
                error = exc
        proof = _proven_mismatch(jaxpr, platform) if jaxpr is not None else None
        results[platform] = classify(
            platform, error, module_text=text, proof=proof, seconds=time.perf_counter() - start
        )
    return LoweringReport(name, results)
