"""What a function lowers for, asked of the evaluator: its summary for callers that do not
say their arguments (a library's public function, a lock file, a hover).

``function_summary`` runs the function under each lowering platform as a caller that
passes only what it must would call it: each parameter without a default is unknown,
each parameter with one keeps it (so ``interpret=False`` stays off). Under a platform the
function is **reached** when some path of it returns, and **refused** when a kernel it runs
on every such path cannot lower for that platform. It lowers only for the reached
platforms that do not refuse it, when that is not all of them.

This is the question the rules' ``Inference.requirement`` answers today; the two are
compared on real packages before one replaces the other (docs/inference-model.md).

What it does not do: bind a method's receiver to an instance (it is unknown), or say
which argument would change the answer (a caller's call site is asked by ``verdict``).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import Final

from typed_pallas_mypy.inference.evaluator.domain import (
    ANYTHING,
    ClassObj,
    Flow,
    Kernel,
    ModuleObj,
    Value,
    VSet,
    only,
    vset,
)
from typed_pallas_mypy.inference.evaluator.machine import Loader, Machine, OutOfBudget, SiteKey
from typed_pallas_mypy.inference.evaluator.verdict import PLATFORMS, Link, chain_from, lowers_on

#: the pseudo call site a summary's call is recorded at (no line of any module)
_SUMMARY_SITE: Final[SiteKey] = ("<summary>", 0, 0, 0, 0)


@dataclass(frozen=True)
class FunctionSummary:
    """A function's run under each platform: where some path returns (``reached``),
    where a kernel run on every such path refuses (``failing``), the refusing kernels,
    and the way to the first of them."""

    reached: tuple[str, ...]
    failing: tuple[str, ...]
    kernels: tuple[Kernel, ...]
    chain: tuple[Link, ...] = ()

    @property
    def lowers_only_for(self) -> frozenset[str] | None:
        """The platforms it lowers for, when not every platform: None when it lowers
        everywhere it is reached, or is reached nowhere."""
        if not self.reached:
            return None
        allowed = frozenset(self.reached) - frozenset(self.failing)
        return allowed if allowed != frozenset(PLATFORMS) else None


def function_summary(
    loader: Loader,
    module: str,
    qualname: str,
    release: tuple[int, ...] | None,
    trees: dict[tuple[str, str], ast.Module | None] | None = None,
    importable: dict[str, bool] | None = None,
) -> FunctionSummary | None:
    """The summary of ``module.qualname`` (a function, or a method as ``Class.name``) at
    the JAX ``release``; None when it is not found or a run did not finish."""
    reached: list[str] = []
    failing: list[str] = []
    kernels: list[Kernel] = []
    chain: tuple[Link, ...] | None = None
    for platform in PLATFORMS:
        machine = Machine(loader, platform, trees, importable)
        try:
            found = machine.module(module)
            target = _lookup(found, qualname) if found is not None else None
            if target is None:
                return None
            flow = Flow()
            machine.steps = 0
            machine.calling.append(_SUMMARY_SITE)
            try:
                made = _call_as_required(machine, vset(target), target, flow, receiver=False)
                if isinstance(target, ClassObj) and flow.live:
                    # a class stands for its instances: what calling one runs
                    method = _method(target, "__call__")
                    if method is not None:
                        _call_as_required(machine, made, method, flow, receiver=True)
            finally:
                machine.calling.pop()
        except (OutOfBudget, RecursionError):
            return None
        if machine.unfinished:
            return None
        if not flow.live:
            continue
        reached.append(platform)
        refusing = [k for k in flow.ran if not lowers_on(k, platform, release)]
        if refusing:
            failing.append(platform)
            kernels.extend(k for k in refusing if k not in kernels)
            if chain is None:
                chain = chain_from(machine, _SUMMARY_SITE, kernels[0])
    return FunctionSummary(tuple(reached), tuple(failing), tuple(kernels), chain or ())


def _call_as_required(
    machine: Machine, callee: VSet, signature: Value, flow: Flow, *, receiver: bool
) -> VSet:
    """``callee`` called with what ``signature``'s parameters require (for a class, its
    ``__init__``'s; ``receiver``: the first parameter is bound already)."""
    if isinstance(signature, ClassObj):
        init = _method(signature, "__init__")
        args, keywords, star, double_star = (
            _required_arguments(init) if init is not None else ([], {}, False, False)
        )
        args = args[1:]  # ``self``: the instance being made
    else:
        args, keywords, star, double_star = _required_arguments(signature)
        if receiver:
            args = args[1:]
    return machine.calls.call(
        callee, args, keywords, flow, star_unknown=star, kw_unknown=double_star
    )


def _method(cls: ClassObj, name: str) -> Value | None:
    """The one value ``name`` is in the first class of ``cls``'s MRO that defines it."""
    for klass in cls.mro:
        if isinstance(klass, ClassObj) and name in klass.attrs:
            return only(klass.attrs[name])
    return None


def _lookup(module: ModuleObj, qualname: str) -> Value | None:
    """The one value ``qualname`` names in ``module`` after its body ran."""
    value: Value | None = module
    for part in qualname.split("."):
        if not isinstance(value, (ModuleObj, ClassObj)):
            return None
        value = only(value.attrs.get(part, ANYTHING))
        if value is None:
            return None
    return value


def _required_arguments(
    target: Value,
) -> tuple[list[VSet], dict[str, VSet], bool, bool]:
    """Unknown values for the parameters without a default of the function ``target``
    is or wraps, and whether its ``*args`` and ``**kwargs`` take unknown ones too (a
    wrapper's, passed on); nothing for another callable (called without arguments)."""
    node = getattr(target, "node", None)
    if node is None:
        funcs = getattr(target, "func", None)
        one = only(funcs) if isinstance(funcs, frozenset) else None
        node = getattr(one, "node", None)
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return [], {}, False, False
    spec = node.args
    positional = [*spec.posonlyargs, *spec.args]
    required = len(positional) - len(spec.defaults)
    args: list[VSet] = [ANYTHING] * max(required, 0)
    keywords = {
        p.arg: ANYTHING
        for p, default in zip(spec.kwonlyargs, spec.kw_defaults, strict=True)
        if default is None
    }
    return args, keywords, spec.vararg is not None, spec.kwarg is not None
