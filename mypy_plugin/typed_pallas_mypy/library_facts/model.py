"""The local facts of one library module, and their JSON form.

``reader`` turns one module's source into a ``ModuleFacts``: what each function, class
and module-level alias of that module does, with every name already resolved to a
fully qualified name, but nothing looked up in other modules yet. ``requirements``
combines the local facts of several modules lazily; ``store`` keeps them on disk.

An argument as a caller passes it is summarised as a short string (``ArgSum``), enough
to decide interpret mode:

* ``"F"``: a literal that keeps interpret mode off (``False``, ``None``, ``0``);
* ``"T"``: a literal that turns it on (``True``, a non-zero int, ``InterpretParams()``);
* ``"p:NAME"``: the calling function's own parameter ``NAME`` (never rebound in it);
* ``"o:NAME"``: a parameter ``NAME`` of an enclosing function (a closure's free variable);
* ``"a:ATTR"``: ``self.ATTR`` inside a method (for a ``**self.ATTR`` splat: that splat);
* ``"?"``: anything else.

What it does not do: read source (``reader``) or decide requirements (``requirements``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Final

#: An argument summary (see the module docstring).
ArgSum = str
FALSE: Final = "F"
TRUE: Final = "T"
UNKNOWN: Final = "?"

#: Parameter kinds.
POSONLY: Final = "posonly"
POS: Final = "pos"
KWONLY: Final = "kwonly"
STAR: Final = "star"
DSTAR: Final = "dstar"
#: The default of a parameter without one.
REQUIRED: Final = "required"


class FactsFormatError(ValueError):
    """Stored facts that do not have the shape this version writes."""


@dataclass(frozen=True)
class Param:
    name: str
    #: POSONLY, POS, KWONLY, STAR or DSTAR
    kind: str
    #: REQUIRED, or the default's ArgSum ("F", "T" or "?")
    default: str
    #: rebound somewhere in the function body (its value may differ from the argument)
    rebound: bool = False


@dataclass(frozen=True)
class CallArgs:
    """How a call passes its arguments, each summarised."""

    #: the positional arguments before any ``*args`` splat
    positional: tuple[ArgSum, ...] = ()
    #: keyword arguments, by name
    keywords: tuple[tuple[str, ArgSum], ...] = ()
    #: a ``*args`` splat (positions from it on are unknown)
    star: bool = False
    #: one summary per ``**splat``: ``"a:ATTR"`` for ``**self.ATTR``, ``"p:NAME"``, or ``"?"``
    star_kwargs: tuple[ArgSum, ...] = ()

    def keyword(self, name: str) -> ArgSum | None:
        for key, value in self.keywords:
            if key == name:
                return value
        return None


NO_ARGS: Final = CallArgs()


@dataclass(frozen=True)
class Evidence:
    """One reason a kernel can only lower with ``backends`` (as ``evidence.Evidence``)."""

    backends: tuple[str, ...]
    #: source spelling, e.g. ``pltpu.make_async_copy``
    what: str
    line: int


@dataclass(frozen=True)
class EntryEvent:
    """A Pallas entry-point call that runs on every path and whose kernel is run."""

    line: int
    #: the entry point's fullname (a key of ``ENTRIES``)
    entry: str
    #: the backend of its params class; "" when absent, "?" when unknown
    params: str
    evidence: tuple[Evidence, ...]
    #: a kernel body defined in another module: its fullname (its body evidence counts)
    kernel: str | None
    #: the ``interpret=`` argument
    interpret: ArgSum


#: ``CallEvent.mode``: call the target / call the result of calling the target
CALL: Final = "call"
RESULT: Final = "result"


@dataclass(frozen=True)
class CallEvent:
    """A call that runs on every path, of a named function, method or class."""

    line: int
    #: fullnames of the callee (several: one of them, chosen at run time);
    #: ``"self:NAME"`` for a method of the same instance
    targets: tuple[str, ...]
    args: CallArgs
    #: CALL, or RESULT: ``target(args)(then)`` (a class's instance, or a factory's result)
    mode: str = CALL
    then: CallArgs | None = None
    #: ``self.method(...)``: the callee's first parameter is the instance
    bound: bool = False
    #: the call read as a ``pl.pallas_call`` (it passes ``compiler_params=``), in case
    #: the callee is a wrapper of one
    as_entry: EntryEvent | None = None


Event = EntryEvent | CallEvent


@dataclass(frozen=True)
class WrapperFact:
    """A function that forwards its parameters to a Pallas entry point."""

    entry: str
    #: (entry parameter, wrapper parameter, the wrapper parameter's position or -1)
    forwards: tuple[tuple[str, str, int], ...]
    #: the wrapper's ``**kwargs`` name when it splats it into the entry call
    kwargs: str | None
    #: the kernel runs when the wrapper's result is called (the entry call is in a
    #: returned closure, or returned unapplied), not in the wrapper's own call
    deferred: bool = False


@dataclass(frozen=True)
class FunctionSummary:
    """What one function does on every path, with names resolved."""

    #: qualified name inside its module: ``f``, ``C.m``, ``f.<locals>.g``
    qualname: str
    line: int
    params: tuple[Param, ...]
    #: defined directly in a class and not a staticmethod (the first parameter is the instance)
    is_method: bool
    #: decorated with something that does not keep the function (a call runs something else)
    opaque: bool
    #: why it can have no requirement (it branches on the platform, calls a parameter...)
    blocked: str | None
    events: tuple[Event, ...]
    #: ``return target(args)`` on every path: a class's instance or a factory's result
    returns: tuple[str, CallArgs, int] | None
    #: ``return inner`` (a nested function) on every path: its fullname and the line
    returns_closure: tuple[str, int] | None
    #: global names it references anywhere (for platform helpers and variables elsewhere)
    refs: tuple[str, ...]
    #: a body that is one ``return`` of an expression: "platform" when that expression
    #: reads the platform (a guard or platform helper), "return" when it does not (it
    #: may still call one: a helper of helpers), "" for any other body
    helper: str
    #: backend-only primitives of its body and of the functions it calls (for a kernel
    #: passed from another module)
    body_evidence: tuple[Evidence, ...]
    wrapper: WrapperFact | None
    #: for ``__init__``: instance attribute -> ``"p:NAME"`` (a parameter) or ``"kwargs"``
    self_attrs: tuple[tuple[str, str], ...] = ()


@dataclass(frozen=True)
class ClassSummary:
    qualname: str
    line: int
    #: resolved fullnames of the bases ("?" for one that is not a plain name)
    bases: tuple[str, ...]
    #: decorated with something that may not return the class
    opaque: bool
    #: method name -> qualname of its function summary
    methods: tuple[tuple[str, str], ...]
    #: a dataclass without bases: its fields, in order, as constructor parameters
    fields: tuple[Param, ...] | None = None


#: ``Alias.kind``
REF: Final = "ref"  # name = other_name
PARTIAL: Final = "partial"  # name = functools.partial(target, *args, **kwargs)
KEEP: Final = "keep"  # name = jax.jit(target) / jax.custom_vjp(target)
INSTANCE: Final = "instance"  # name = target(args): a class's instance or a factory's result
CHOICE: Final = "choice"  # name = a if cond else b


@dataclass(frozen=True)
class Alias:
    """A module-level name bound once to a callable built from other names."""

    line: int
    kind: str
    targets: tuple[str, ...]
    args: CallArgs = NO_ARGS


#: ``Binding.kind``
DEF: Final = "def"
CLASS: Final = "class"
IMPORT: Final = "import"
ALIAS: Final = "alias"
VALUE: Final = "value"  # assigned something else (a constant, a computed value)
PLATFORM_VALUE: Final = "platform"  # assigned a value read from the platform
AMBIGUOUS: Final = "ambiguous"  # bound more than once


@dataclass(frozen=True)
class Binding:
    kind: str
    #: DEF/CLASS: qualname; IMPORT: the imported fullname; others: ""
    target: str = ""


@dataclass(frozen=True)
class ModuleFacts:
    """The local facts of one module."""

    module: str
    #: whether the source mentions "pallas" (otherwise only its bindings were read)
    pallas: bool
    bindings: Mapping[str, Binding]
    functions: Mapping[str, FunctionSummary]
    classes: Mapping[str, ClassSummary]
    aliases: Mapping[str, Alias]


# --------------------------------------------------------------------------- JSON


def _args_json(args: CallArgs) -> list[object]:
    return [
        list(args.positional),
        [list(k) for k in args.keywords],
        args.star,
        list(args.star_kwargs),
    ]


def _str(value: object) -> str:
    if not isinstance(value, str):
        raise FactsFormatError(f"expected a string, got {value!r}")
    return value


def _int(value: object) -> int:
    if not isinstance(value, int) or isinstance(value, bool):
        raise FactsFormatError(f"expected an int, got {value!r}")
    return value


def _list(value: object) -> Sequence[object]:
    if not isinstance(value, list):
        raise FactsFormatError(f"expected a list, got {value!r}")
    return value


def _dict(value: object) -> Mapping[str, object]:
    if not isinstance(value, dict):
        raise FactsFormatError(f"expected an object, got {value!r}")
    return value


def _strs(value: object) -> tuple[str, ...]:
    return tuple(_str(v) for v in _list(value))


def _pair(value: object) -> tuple[str, str]:
    items = _strs(value)
    if len(items) != 2:
        raise FactsFormatError(f"expected a pair, got {value!r}")
    return items[0], items[1]


def _args_from(raw: object) -> CallArgs:
    items = _list(raw)
    if len(items) != 4 or not isinstance(items[2], bool):
        raise FactsFormatError(f"bad call arguments {raw!r}")
    return CallArgs(
        _strs(items[0]), tuple(_pair(k) for k in _list(items[1])), items[2], _strs(items[3])
    )


def _evidence_json(ev: Evidence) -> list[object]:
    return [list(ev.backends), ev.what, ev.line]


def _evidence_from(raw: object) -> Evidence:
    items = _list(raw)
    if len(items) != 3:
        raise FactsFormatError(f"bad evidence {raw!r}")
    return Evidence(_strs(items[0]), _str(items[1]), _int(items[2]))


def _event_json(event: Event) -> dict[str, object]:
    if isinstance(event, EntryEvent):
        return {
            "entry": event.entry,
            "line": event.line,
            "params": event.params,
            "evidence": [_evidence_json(e) for e in event.evidence],
            "kernel": event.kernel,
            "interpret": event.interpret,
        }
    return {
        "call": list(event.targets),
        "line": event.line,
        "args": _args_json(event.args),
        "mode": event.mode,
        "then": _args_json(event.then) if event.then is not None else None,
        "bound": event.bound,
        "as_entry": _event_json(event.as_entry) if event.as_entry is not None else None,
    }


def _event_from(raw: object) -> Event:
    data = _dict(raw)
    if "entry" in data:
        kernel = data.get("kernel")
        return EntryEvent(
            _int(data.get("line")),
            _str(data.get("entry")),
            _str(data.get("params")),
            tuple(_evidence_from(e) for e in _list(data.get("evidence"))),
            _str(kernel) if kernel is not None else None,
            _str(data.get("interpret")),
        )
    then = data.get("then")
    bound = data.get("bound")
    as_entry_raw = data.get("as_entry")
    if not isinstance(bound, bool):
        raise FactsFormatError(f"bad call event {raw!r}")
    as_entry = _event_from(as_entry_raw) if as_entry_raw is not None else None
    if as_entry is not None and not isinstance(as_entry, EntryEvent):
        raise FactsFormatError(f"bad call event {raw!r}")
    return CallEvent(
        _int(data.get("line")),
        _strs(data.get("call")),
        _args_from(data.get("args")),
        _str(data.get("mode")),
        _args_from(then) if then is not None else None,
        bound,
        as_entry,
    )


def _param_json(param: Param) -> list[object]:
    return [param.name, param.kind, param.default, param.rebound]


def _param_from(raw: object) -> Param:
    items = _list(raw)
    if len(items) != 4 or not isinstance(items[3], bool):
        raise FactsFormatError(f"bad parameter {raw!r}")
    return Param(_str(items[0]), _str(items[1]), _str(items[2]), items[3])


def function_json(fn: FunctionSummary) -> dict[str, object]:
    wrapper = fn.wrapper
    return {
        "line": fn.line,
        "params": [_param_json(p) for p in fn.params],
        "method": fn.is_method,
        "opaque": fn.opaque,
        "blocked": fn.blocked,
        "events": [_event_json(e) for e in fn.events],
        "returns": [fn.returns[0], _args_json(fn.returns[1]), fn.returns[2]]
        if fn.returns is not None
        else None,
        "closure": list(fn.returns_closure) if fn.returns_closure is not None else None,
        "refs": list(fn.refs),
        "helper": fn.helper,
        "body": [_evidence_json(e) for e in fn.body_evidence],
        "wrapper": [
            wrapper.entry,
            [list(f) for f in wrapper.forwards],
            wrapper.kwargs,
            wrapper.deferred,
        ]
        if wrapper is not None
        else None,
        "attrs": [list(a) for a in fn.self_attrs],
    }


def _bool(value: object) -> bool:
    if not isinstance(value, bool):
        raise FactsFormatError(f"expected a bool, got {value!r}")
    return value


def _forward_from(raw: object) -> tuple[str, str, int]:
    items = _list(raw)
    if len(items) != 3:
        raise FactsFormatError(f"bad forward {raw!r}")
    return _str(items[0]), _str(items[1]), _int(items[2])


def function_from(qualname: str, raw: object) -> FunctionSummary:
    data = _dict(raw)
    blocked = data.get("blocked")
    returns_raw = data.get("returns")
    returns: tuple[str, CallArgs, int] | None = None
    if returns_raw is not None:
        items = _list(returns_raw)
        if len(items) != 3:
            raise FactsFormatError(f"bad return {returns_raw!r}")
        returns = (_str(items[0]), _args_from(items[1]), _int(items[2]))
    closure_raw = data.get("closure")
    closure: tuple[str, int] | None = None
    if closure_raw is not None:
        items = _list(closure_raw)
        if len(items) != 2:
            raise FactsFormatError(f"bad closure {closure_raw!r}")
        closure = (_str(items[0]), _int(items[1]))
    wrapper_raw = data.get("wrapper")
    wrapper: WrapperFact | None = None
    if wrapper_raw is not None:
        items = _list(wrapper_raw)
        if len(items) != 4:
            raise FactsFormatError(f"bad wrapper {wrapper_raw!r}")
        wrapper = WrapperFact(
            _str(items[0]),
            tuple(_forward_from(f) for f in _list(items[1])),
            _str(items[2]) if items[2] is not None else None,
            _bool(items[3]),
        )
    return FunctionSummary(
        qualname=qualname,
        line=_int(data.get("line")),
        params=tuple(_param_from(p) for p in _list(data.get("params"))),
        is_method=_bool(data.get("method")),
        opaque=_bool(data.get("opaque")),
        blocked=_str(blocked) if blocked is not None else None,
        events=tuple(_event_from(e) for e in _list(data.get("events"))),
        returns=returns,
        returns_closure=closure,
        refs=_strs(data.get("refs")),
        helper=_str(data.get("helper")),
        body_evidence=tuple(_evidence_from(e) for e in _list(data.get("body"))),
        wrapper=wrapper,
        self_attrs=tuple(_pair(a) for a in _list(data.get("attrs"))),
    )


def class_json(cls: ClassSummary) -> dict[str, object]:
    return {
        "line": cls.line,
        "bases": list(cls.bases),
        "opaque": cls.opaque,
        "methods": [list(m) for m in cls.methods],
        "fields": [_param_json(p) for p in cls.fields] if cls.fields is not None else None,
    }


def class_from(qualname: str, raw: object) -> ClassSummary:
    data = _dict(raw)
    fields = data.get("fields")
    return ClassSummary(
        qualname=qualname,
        line=_int(data.get("line")),
        bases=_strs(data.get("bases")),
        opaque=_bool(data.get("opaque")),
        methods=tuple(_pair(m) for m in _list(data.get("methods"))),
        fields=tuple(_param_from(p) for p in _list(fields)) if fields is not None else None,
    )


def module_json(facts: ModuleFacts) -> dict[str, object]:
    return {
        "pallas": facts.pallas,
        "bindings": {k: [b.kind, b.target] for k, b in sorted(facts.bindings.items())},
        "functions": {k: function_json(f) for k, f in sorted(facts.functions.items())},
        "classes": {k: class_json(c) for k, c in sorted(facts.classes.items())},
        "aliases": {
            k: [a.line, a.kind, list(a.targets), _args_json(a.args)]
            for k, a in sorted(facts.aliases.items())
        },
    }


def module_from(module: str, raw: object) -> ModuleFacts:
    """The facts ``module_json`` wrote; ``FactsFormatError`` for anything else."""
    data = _dict(raw)
    bindings = {}
    for name, value in _dict(data.get("bindings")).items():
        kind, target = _pair(value)
        bindings[name] = Binding(kind, target)
    aliases = {}
    for name, value in _dict(data.get("aliases")).items():
        items = _list(value)
        if len(items) != 4:
            raise FactsFormatError(f"bad alias {value!r}")
        aliases[name] = Alias(_int(items[0]), _str(items[1]), _strs(items[2]), _args_from(items[3]))
    return ModuleFacts(
        module=module,
        pallas=_bool(data.get("pallas")),
        bindings=bindings,
        functions={k: function_from(k, v) for k, v in _dict(data.get("functions")).items()},
        classes={k: class_from(k, v) for k, v in _dict(data.get("classes")).items()},
        aliases=aliases,
    )
