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

import ast
from dataclasses import dataclass
from typing import Final

from typed_pallas import _platforms
from typed_pallas._versions import CHECKED_RELEASES, release
from typed_pallas_mypy.entries import ENTRIES
from typed_pallas_mypy.inference.evaluator import stdlib_models
from typed_pallas_mypy.inference.evaluator.domain import (
    ANYTHING,
    ClassObj,
    Flow,
    FunctionObj,
    Kernel,
    Transformed,
    only,
)
from typed_pallas_mypy.inference.evaluator.machine import (
    Loader,
    Machine,
    OutOfBudget,
    SiteKey,
    SiteRecord,
)

PLATFORMS: Final = _platforms.LOWERING_PLATFORMS
_PALLAS_CALLS: Final = frozenset(
    name for name, spec in ENTRIES.items() if spec.is_pallas_call and spec.platform_keyword is None
)


def by_place(kernels: frozenset[Kernel]) -> list[Kernel]:
    """``kernels`` in the order of where they are made (module, line, entry, backend):
    the first one a note names is the same in every process (a set's order is not)."""
    return sorted(kernels, key=lambda k: (k.module, k.line, k.entry, k.backend, repr(k)))


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
    proven = proven_platforms(kernel)
    if proven is not None and platform not in proven:
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


#: the JAX releases a kernel's lowering is asked at when the installed one is not
#: known: none in particular, and each the project was checked at
_RELEASES: Final = (None, *(release(v) for v in CHECKED_RELEASES))


def may_refuse(kernel: Kernel, platform: str) -> bool:
    """Whether JAX may refuse to lower ``kernel`` for ``platform`` at some checked release."""
    return any(not lowers_on(kernel, platform, r) for r in _RELEASES)


def proven_platforms(kernel: Kernel) -> frozenset[str] | None:
    """The lowering platforms every proof of ``kernel`` allows (``evidence``); None with
    no proof, or when the proofs, its params or its entry point leave none (the params
    and the entry point are the author's word; the tables only say what the others
    refuse)."""
    if not kernel.proofs:
        return None
    allowed = frozenset(PLATFORMS)
    for proof in kernel.proofs:
        allowed &= {
            p
            for backend in proof.backends
            for p in _platforms.PARAMS_BY_BACKEND[backend].lowers_on  # type: ignore[index]
        }
    row = _platforms.PARAMS_BY_BACKEND.get(kernel.backend)  # type: ignore[call-overload]
    if row is not None:
        allowed_by_params = allowed & frozenset(row.lowers_on)
        if not allowed_by_params:
            return None
    if kernel.backends is not None:
        by_entry = {
            p
            for b in kernel.backends
            for p in _platforms.PARAMS_BY_BACKEND[b].lowers_on  # type: ignore[index]
        }
        if not allowed & by_entry:
            return None
    return allowed or None


@dataclass(frozen=True)
class Link:
    """One step of the way from a call site to a kernel it runs: the function ``name``
    of ``module``, defined at line ``defined``, calls ``callee`` at its line ``line``;
    in the last step ``callee`` is None and the call at ``line`` runs the kernel (the
    kernel's entry call, when the kernel is made in that function). ``path``: the module's file as the reader shows it ("" until the engine says)."""

    module: str
    name: str
    defined: int
    line: int
    callee: str | None
    path: str = ""
    #: the class whose body defines the function, for a method ("" for none)
    owner: str = ""
    #: ``callee`` is defined in this function (a nested function it made)
    nested: bool = False
    #: a first step that makes what the call calls: the function ``name`` returns an
    #: instance of this class, made at ``line`` (whose ``__call__`` is the next step)
    made: str = ""
    #: ``callee`` is this function's derivative rule, which the call ran in its place
    #: (registered at ``line``)
    rule: bool = False


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
    #: the way from the call to the first refusing kernel, through the functions it
    #: entered (empty when the call is the kernel's own entry call, or the way is lost)
    chain: tuple[Link, ...] = ()
    #: the file of the first refusing kernel's module, as the reader shows it ("" until
    #: the engine says)
    kernel_path: str = ""

    def kernel_lowers_for(self, release: tuple[int, ...] | None) -> tuple[str, ...]:
        """The lowering platforms the first refusing kernel lowers for at ``release``."""
        return tuple(p for p in PLATFORMS if lowers_on(self.kernels[0], p, release))

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
    chain: tuple[Link, ...] | None = None
    for platform, machine in machines.items():
        if machine is None:
            return None
        found = _outermost(machine, module, line)
        if found is None or not found[1].reached:
            continue
        key, site = found
        reached.append(platform)
        refusing = [k for k in by_place(site.ran) if not lowers_on(k, platform, release)]
        if refusing:
            failing.append(platform)
            kernels.extend(k for k in refusing if k not in kernels)
            if all(_declares(k, platform) for k in refusing):
                chosen.append(platform)
            if chain is None:
                chain = chain_from(machine, key, kernels[0])
    return CallVerdict(tuple(reached), tuple(failing), tuple(kernels), tuple(chosen), chain or ())


#: Steps followed from a call site to its kernel before the way is given up.
_MAX_CHAIN: Final = 16


def _chain(
    machine: Machine, key: SiteKey, kernel: Kernel, seen: set[SiteKey]
) -> tuple[Link, ...] | None:
    """The way from the call at ``key`` to ``kernel``: through a function the call
    entered, the call in that function's own body that ran the kernel, and on; it ends
    in the function whose call ran the kernel itself (made there, or given to it)."""
    if len(seen) >= _MAX_CHAIN:
        return None
    seen.add(key)
    record = machine.sites.get(key)
    if record is None:
        return None
    for function in sorted(record.entered, key=lambda f: (f.module.name, f.node.lineno)):
        steps = _steps(machine, function, kernel, seen)
        if not steps:
            continue
        node = function.node
        name = "<lambda>" if isinstance(node, ast.Lambda) else node.name
        module, defined = function.module.name, node.lineno
        owner = function.owner.name if isinstance(function.owner, ClassObj) else ""
        step, rest = _way_on(machine, steps, kernel, seen)
        if stdlib_models.is_model(module):
            # a model of the standard library stands for C code: the caller calls what
            # the model called (``copy_context().run(f, x)`` calls ``f``)
            return rest or ()
        if rest and _wraps(function, rest[0]):
            # a ``functools.wraps`` wrapper calling what it wraps presents itself as it
            # (its name, its ``__wrapped__``): the caller calls the wrapped function
            return rest
        if rest:
            nested = rest[0].module == module and defined < rest[0].defined <= (
                node.end_lineno or defined
            )
            link = Link(module, name, defined, step[1], rest[0].name, owner=owner, nested=nested)
            return (link, *rest)
        made_here = kernel.module == module and defined <= kernel.line <= (
            node.end_lineno or defined
        )
        line = kernel.line if made_here else step[1]
        return (Link(module, name, defined, line, None, owner=owner),)
    return None


def chain_from(machine: Machine, key: SiteKey, kernel: Kernel) -> tuple[Link, ...]:
    """The way from the call recorded at ``key`` to ``kernel`` (empty when lost); when
    the call calls an instance another function made (``make_splash_mha(...)(q, k,
    v)``), the way starts where it was made."""
    chain = _chain(machine, key, kernel, set()) or ()
    if not chain:
        return chain
    record = machine.sites.get(key)
    by_rule = _rule_step(machine, record, chain[0])
    if by_rule is not None:
        return (by_rule, *chain)
    if not chain[0].owner:
        return chain
    origins = {
        (instance.made_at, instance.cls.name)
        for instance in (record.called if record is not None else ())
        if instance.made_at is not None
        and isinstance(instance.cls, ClassObj)
        and chain[0].owner in (c.name for c in instance.cls.mro if isinstance(c, ClassObj))
    }
    if len(origins) != 1:
        return chain
    (((module, line, function), cls),) = origins
    node = function.node
    if isinstance(node, ast.Lambda) or (
        module == key[0] and node.lineno <= key[1] <= (node.end_lineno or node.lineno)
    ):
        return chain  # made where it is called: no step to show
    made_by = Link(module, node.name, node.lineno, line, None, made=cls)
    return (made_by, *chain)


def _wraps(function: FunctionObj, step: Link) -> bool:
    """``function`` is a ``functools.wraps`` wrapper of the function of ``step``."""
    return any(
        isinstance(wrapped, FunctionObj)
        and (wrapped.module.name, wrapped.node.lineno) == (step.module, step.defined)
        for wrapped in function.attrs.get("__wrapped__", ())
    )


def _rule_step(machine: Machine, record: SiteRecord | None, first: Link) -> Link | None:
    """The step before ``first`` when it is a derivative rule the call ran in place of a
    ``custom_vjp`` / ``custom_jvp`` function (``jax.grad(f)(x)`` runs ``f``'s ``fwd``):
    the function, whose rule it is, registered at its ``defvjp`` line."""
    for function in record.derived if record is not None else ():
        for method, (given, named) in machine.rules.get(function, {}).items():
            rules = [v for values in (*given, *named.values()) for v in values]
            if not any(
                isinstance(rule, FunctionObj)
                and (rule.module.name, rule.node.lineno) == (first.module, first.defined)
                for rule in rules
            ):
                continue
            primals = function.func if isinstance(function, Transformed) else frozenset()
            primal = next((f for f in primals if isinstance(f, FunctionObj)), None)
            site = machine.rule_sites.get((function, method))
            if primal is None or site is None or isinstance(primal.node, ast.Lambda):
                continue
            return Link(
                primal.module.name,
                primal.node.name,
                primal.node.lineno,
                site[1],
                first.name,
                rule=True,
            )
    return None


def same_kernel(a: Kernel, b: Kernel) -> bool:
    """The same entry call's kernel, whatever its run added (nested in a primitive, a
    result nothing uses)."""
    return (a.entry, a.module, a.line, a.backend) == (b.entry, b.module, b.line, b.backend)


def _way_on(
    machine: Machine, steps: list[SiteKey], kernel: Kernel, seen: set[SiteKey]
) -> tuple[SiteKey, tuple[Link, ...] | None]:
    """Of the calls ``steps`` that ran ``kernel`` (outermost first), the first the way
    goes on through, and the way from it: the kernel's own entry call, or a call whose
    callee's body ran it. In ``fn(add_one_tpu(x))`` with ``fn`` unknown, the outer call
    ran the kernel only by its argument: the way goes through ``add_one_tpu``. When none
    goes on, the outermost, with no way on."""
    for step in steps:
        if (step[0], step[1]) == (kernel.module, kernel.line):
            return step, None
        tried = set(seen)
        rest = _chain(machine, step, kernel, tried)
        if rest:
            seen |= tried
            return step, rest
    return steps[0], None


def _steps(
    machine: Machine, function: FunctionObj, kernel: Kernel, seen: set[SiteKey]
) -> list[SiteKey]:
    """The calls of ``function``'s own body (not of a function nested in it) that ran
    ``kernel``, outermost first (on every path; else those that may have)."""
    node = function.node
    start, end = node.lineno, node.end_lineno or node.lineno
    nested = [
        (
            (inner.lineno, inner.col_offset),
            (inner.end_lineno or inner.lineno, inner.end_col_offset or 0),
        )
        for inner in ast.walk(node)
        if inner is not node
        and isinstance(inner, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
    ]
    own: list[tuple[SiteKey, SiteRecord]] = []
    for key, record in machine.sites.items():
        module, line, column, _, _ = key
        if module != function.module.name or not start <= line <= end or key in seen:
            continue
        if any(a <= (line, column) <= b for a, b in nested):
            continue
        own.append((key, record))
    # a call that ran the kernel; else one that may have (in a ``try`` body whose handler
    # catches a refusal, a call runs its kernels only may: the way still goes through it)
    for ran_by in (_ran_on_every_path, _may_have_run):
        found = [key for key, record in own if any(same_kernel(kernel, k) for k in ran_by(record))]
        if found:
            return sorted(found, key=lambda key: (key[1], key[2], -key[3], -key[4]))
    return []


def _ran_on_every_path(record: SiteRecord) -> frozenset[Kernel]:
    return frozenset().union(*record.frames.values())


def _may_have_run(record: SiteRecord) -> frozenset[Kernel]:
    return record.may_ran


def _declares(kernel: Kernel, lowering: str) -> bool:
    """The kernel's params name the platform of ``lowering`` (Mosaic GPU params for rocm:
    the author chose a backend of that platform that does not serve it, knowingly)."""
    row = _platforms.PARAMS_BY_BACKEND.get(kernel.backend)  # type: ignore[call-overload]
    return row is not None and row.platform == _platforms.PLATFORM_OF_LOWERING.get(lowering)


def _outermost(machine: Machine, module: str, line: int) -> tuple[SiteKey, SiteRecord] | None:
    """The outermost call at ``line`` (first to start, last to end): its key and record."""
    found = machine.sites_by_line().get((module, line))
    if not found:
        return None
    (column, end_line, end_column), record = min(found, key=lambda item: item[0])
    return (module, line, column, -end_line, -end_column), record
