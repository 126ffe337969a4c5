"""What a callee expression names (``Callee``), as the reader resolves it
(``_ModuleReader.callable_of``) and the trace program runs it (``program``): an entry
point, functions of known names, the result of a call, a variable holding an entry
call's result, a function under an entry-point decorator, one of several (``a if c
else b``), the branch of the lowering platform, or something known to run nothing or
not known.

What it does not do: resolve anything (plain records).
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Final

from typed_pallas_mypy.inference.model import CallArgs, EntryEvent
from typed_pallas_mypy.inference.scopes import Scope


@dataclass(frozen=True)
class EntryRef:
    """An entry point (or ``functools.partial`` of one), with the call that names it."""

    fullname: str
    call: ast.Call
    #: ``functools.partial(entry, ...)``: the partial's call
    partial: bool = False


@dataclass(frozen=True)
class FunctionRef:
    targets: tuple[str, ...]
    bound: CallArgs | None = None
    #: ``self.method``
    self_bound: bool = False
    #: called through ``jax.grad`` and the like
    differentiated: bool = False


@dataclass(frozen=True)
class CallResult:
    target: str
    args: CallArgs
    #: the call whose result is called (for a wrapper's call: its own arguments)
    call: ast.Call | None = field(default=None, compare=False)
    #: called through ``jax.grad`` and the like
    differentiated: bool = False


@dataclass(frozen=True)
class MethodOf:
    """``C(...).name`` / ``v.name`` where ``v`` holds ``C(...)``: the method ``name`` of
    the instance that calling ``result.target`` builds (``combine`` looks it up through
    the class's bases: the instance's class is known exactly)."""

    result: CallResult
    name: str


@dataclass(frozen=True)
class ItemOf:
    """``make(...)[i]`` (``fwd, bwd = make(...)``): the item ``index`` of the tuple that
    calling ``result.target`` returns."""

    result: CallResult
    index: int


@dataclass(frozen=True)
class KnownCallable:
    """A call that runs nothing with a requirement (builtins, a value's method...)."""


@dataclass(frozen=True)
class UnknownCallable:
    reason: str


@dataclass(frozen=True)
class EntryVariable:
    """A local variable holding an entry call's result (``call = pl.pallas_call(...)``)."""

    name: str
    value: ast.Call
    #: the scope the variable was assigned in
    scope: Scope = field(compare=False)


@dataclass(frozen=True)
class DecoratedEntry:
    """A function of this module decorated with ``functools.partial(pl.pallas_call, ...)``
    (or ``pl.kernel``): calling it runs that entry point with the function as kernel."""

    event: EntryEvent


@dataclass(frozen=True)
class Choice:
    """``(a if c else b)``: one of these runs."""

    options: tuple[Callee, ...]


@dataclass(frozen=True)
class PlatformChoice:
    """``typed_pallas.dispatch(tpu=f, gpu=g, ...)``: the branch of the lowering platform."""

    branches: tuple[tuple[str | None, ast.expr], ...] = field(compare=False)


Callee = (
    EntryRef
    | FunctionRef
    | CallResult
    | MethodOf
    | ItemOf
    | KnownCallable
    | UnknownCallable
    | EntryVariable
    | DecoratedEntry
    | Choice
    | PlatformChoice
)

KNOWN: Final = KnownCallable()
