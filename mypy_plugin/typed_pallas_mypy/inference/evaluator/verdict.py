"""Paths above values: whether a call lowers nowhere its guards let it run.

For each lowering platform (``tpu``, ``cuda``, ``rocm``) the program runs once
(``machine.Machine``) with that platform assumed, from a function called with unknown
arguments. A call site is **reached** under a platform when some path under it gets
there; under it, calling it **fails** when a kernel it runs on every path cannot lower
for that platform (its params' backend or its entry point does not lower there, and it
is not in interpret mode). The call is a finding when it is reached under some platform
and fails under every platform that reaches it (JAX refuses it wherever the guards let it
run), or when the guards around it narrowed the platforms and one they let through refuses
it (Mosaic GPU params under a guard for "gpu", which rocm passes). A question that runs out of budget, or a module that cannot be read, says nothing.

What it does not do: report (the plugin and the CLI word findings), or read kernel
bodies for evidence (the engine's ``evidence_tables`` do, for the plugin).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Final

from typed_pallas import _platforms
from typed_pallas_mypy.entries import ENTRIES
from typed_pallas_mypy.inference.evaluator.domain import ANYTHING, Flow, Kernel, only
from typed_pallas_mypy.inference.evaluator.machine import Loader, Machine, OutOfBudget, SiteRecord

PLATFORMS: Final = _platforms.LOWERING_PLATFORMS
_PALLAS_CALLS: Final = frozenset(
    name for name, spec in ENTRIES.items() if spec.is_pallas_call and spec.platform_keyword is None
)


def lowers_on(kernel: Kernel, platform: str, release: tuple[int, ...] | None = None) -> bool:
    """Whether ``kernel`` may lower for ``platform`` at the JAX ``release`` (True where
    not known)."""
    if kernel.interpret is not False:
        return True
    if kernel.result_unused and (
        kernel.nested or release is None or release[:2] >= _platforms.DEAD_KERNELS_DROPPED_FROM
    ):
        return True  # dropped as dead code before lowering (or not known whether it is)
    if (
        kernel.backend == "mosaic_gpu"
        and kernel.entry in _PALLAS_CALLS
        and release is not None
        and release[:2] >= _platforms.NO_MOSAIC_GPU_PALLAS_CALL_FROM
    ):
        return False  # this JAX registers no Mosaic GPU lowering for pl.pallas_call
    mosaic_gpu_only = kernel.backend == "mosaic_gpu" or kernel.backends == frozenset({"mosaic_gpu"})
    if (
        mosaic_gpu_only
        and platform == "rocm"
        and (release is None or release[:2] < _platforms.MOSAIC_GPU_ROCM_REFUSED_FROM)
    ):
        return True  # JAX's answer there depends on what was lowered before: say nothing
    row = _platforms.PARAMS_BY_BACKEND.get(kernel.backend)  # type: ignore[call-overload]
    if row is not None and platform not in row.lowers_on:
        return False
    if kernel.backends is not None:
        allowed = {
            p
            for b in kernel.backends
            for p in _platforms.PARAMS_BY_BACKEND[b].lowers_on  # type: ignore[index]
        }
        if platform not in allowed:
            return False
    return True


@dataclass(frozen=True)
class CallVerdict:
    """What one call site does under each platform; ``finding`` says whether JAX refuses
    it wherever it is reached, with the kernels that refuse (``kernels``)."""

    reached: tuple[str, ...]
    failing: tuple[str, ...]
    kernels: tuple[Kernel, ...]
    #: failing platforms whose refusing kernels all take params of that platform's kind
    #: (Mosaic GPU params on rocm): the author's choice, not a surprise
    chosen: tuple[str, ...] = ()

    @property
    def finding(self) -> bool:
        """JAX refuses the call on every platform that reaches it; or the guards narrowed
        the platforms and one they let through refuses it, not by the author's choice of
        that platform's backend (a kernel without params under a guard for "gpu", which
        rocm passes, at a JAX whose default there is Mosaic GPU)."""
        if not self.reached or not self.failing:
            return False
        if set(self.reached) == set(self.failing):
            return True
        surprising = set(self.failing) - set(self.chosen)
        return bool(surprising) and set(self.reached) != set(PLATFORMS)


def run_function(loader: Loader, module: str, function: str) -> dict[str, Machine | None]:
    """Run ``module.function`` (called with unknown arguments) under each platform."""
    machines: dict[str, Machine | None] = {}
    for platform in PLATFORMS:
        machine = Machine(loader, platform)
        try:
            found = machine.module(module)
            if found is None:
                machines[platform] = None
                continue
            target = found.attrs.get(function, ANYTHING)
            if only(target) is None:
                machines[platform] = None
                continue
            machine.calls.call(target, [], {}, Flow(), star_unknown=True, kw_unknown=True)
        except (OutOfBudget, RecursionError):
            machines[platform] = None
            continue
        machines[platform] = machine
    return machines


def call_verdict(
    machines: dict[str, Machine | None],
    module: str,
    line: int,
    release: tuple[int, ...] | None = None,
) -> CallVerdict | None:
    """The verdict on the outermost call at ``line`` of ``module`` at the JAX ``release``
    (None: facts that depend on the release are not used); None when a run did not
    finish."""
    reached: list[str] = []
    failing: list[str] = []
    chosen: list[str] = []
    kernels: list[Kernel] = []
    for platform, machine in machines.items():
        if machine is None:
            return None
        site = _outermost(machine, module, line)
        if site is None or not site.reached:
            continue
        reached.append(platform)
        refusing = [k for k in site.ran if not lowers_on(k, platform, release)]
        if refusing:
            failing.append(platform)
            kernels.extend(k for k in refusing if k not in kernels)
            if all(_declares(k, platform) for k in refusing):
                chosen.append(platform)
    return CallVerdict(tuple(reached), tuple(failing), tuple(kernels), tuple(chosen))


def _declares(kernel: Kernel, lowering: str) -> bool:
    """The kernel's params name the platform of ``lowering`` (Mosaic GPU params for rocm:
    the author chose a backend of that platform that does not serve it, knowingly)."""
    row = _platforms.PARAMS_BY_BACKEND.get(kernel.backend)  # type: ignore[call-overload]
    return row is not None and row.platform == _platforms.PLATFORM_OF_LOWERING.get(lowering)


def _outermost(machine: Machine, module: str, line: int) -> SiteRecord | None:
    """The record of the outermost call at ``line`` (first to start, last to end)."""
    found = machine.sites_by_line().get((module, line))
    return min(found, key=lambda item: item[0])[1] if found else None
