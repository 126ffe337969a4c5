"""The local facts of one module, and their JSON form: the inference's one IR.

``reader`` turns one module's source (a project module or an installed package's, the
same way) into a ``ModuleFacts``: what each function, class and module-level name of
that module does, with every name already resolved to a fully qualified name, but
nothing looked up in other modules yet. ``combine`` combines the local facts of several
modules lazily; ``store`` keeps them on disk.

A function is summarised as the **trace program** of its body (``steps``): what runs
when Python executes it, which is what JAX traces. Steps are

* ``EntryEvent``: a Pallas kernel run (an entry point's result called, or a kernel
  object run by ``pl.core_map``);
* ``CallEvent``: a call of a named function, method or class, or of the result of one;
* ``Alt``: alternatives, one of which runs (``if``/``else``, ``match``, a conditional
  expression, a loop body that may run or not, ``lax.platform_dependent``'s branches,
  each run only when lowering for its platforms);
* ``Return``: the path returns here, with what calling the returned value would run;
* ``Stop``: the path ends without returning (``raise``).

An argument as a caller passes it is summarised as a short string (``ArgSum``), enough
to decide interpret mode:

* ``"F"``: a literal that keeps interpret mode off (``False``, ``None``, ``0``);
* ``"T"``: a literal that turns it on (``True``, a non-zero int, ``InterpretParams()``);
* ``"p:NAME"``: the calling function's own parameter ``NAME`` (never rebound in it);
* ``"o:NAME"``: a parameter ``NAME`` of an enclosing function (a closure's free variable);
* ``"a:ATTR"``: ``self.ATTR`` inside a method (for a ``**self.ATTR`` splat: that splat);
* ``"c:CLASS.FIELD"``: a field of a config object whose class declares a literal
  default (``config.interpret``, the parameter ``config: Config``);
* ``"?"``: anything else.

What it does not do: read source (``reader``) or decide requirements (``combine``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from typing_extensions import override

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
    #: the annotation's class, when it is a name of a class (``config: Config``)
    annotation: str = ""


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

    def passed(self, marker: tuple[str, ...]) -> ArgSum | tuple[str, ...]:
        """What these arguments pass for the parameter a ``("p", name, position or -1,
        default)`` marker names: the argument, the default when absent (``FALSE``, or
        ``UNKNOWN`` for any other), ``UNKNOWN`` where a splat may hold it, and
        ``("k", attr, name, fallback)`` where a ``**self.attr`` splat may."""
        _, name, position_text, default = marker
        position = int(position_text)
        given = self.keyword(name)
        if given is not None:
            return given
        if position >= 0:
            if position < len(self.positional):
                return self.positional[position]
            if self.star:
                return UNKNOWN
        self_splats = [s[2:] for s in self.star_kwargs if s.startswith("a:")]
        others = [s for s in self.star_kwargs if not s.startswith("a:")]
        absent = FALSE if default == FALSE else UNKNOWN
        if self_splats:
            if len(self_splats) != 1:
                return UNKNOWN
            fallback = UNKNOWN if others or (self.star and position >= 0) else absent
            return ("k", self_splats[0], name, fallback)
        if others:
            return UNKNOWN
        return absent


NO_ARGS: Final = CallArgs()
#: The arguments of a call made by JAX (``lax.cond``'s operands): not known
UNKNOWN_ARGS: Final = CallArgs(star=True, star_kwargs=(UNKNOWN,))
#: In a ``Return`` value: the arguments the caller of the returned value passes
CALLER = "@"
CALLER_ARGS: Final = CallArgs(star_kwargs=(CALLER,))


@dataclass(frozen=True)
class Evidence:
    """One reason a kernel can only lower with ``backends`` (as ``evidence.Evidence``)."""

    backends: tuple[str, ...]
    #: source spelling, e.g. ``pltpu.make_async_copy``
    what: str
    line: int


@dataclass(frozen=True)
class EntryEvent:
    """A Pallas kernel run: an entry point's result called (or ``pl.core_map``)."""

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
    #: read from a call of something else (``CallEvent.as_entry``): where that call
    #: passes the kernel and the params (a position or a keyword), for matching them
    #: with a wrapper's parameters
    via: tuple[str, str] = ("", "")


#: ``CallEvent.mode``: call the target / call the result of calling the target / call
#: the method ``attr`` of the instance calling the target (a class) builds
CALL: Final = "call"
RESULT: Final = "result"
METHOD: Final = "method"


@dataclass(frozen=True)
class CallEvent:
    """A call of a named function, method or class."""

    line: int
    #: fullnames of the callee; ``"self:NAME"`` for a method of the same instance;
    #: ``"TABLE[KEY]"`` for a literal key into a module-level platform table or literal
    #: container; ``"super:NAME"`` for ``super().NAME``; ``"self:ATTR.NAME"`` for a method
    #: of an instance the instance keeps in ``ATTR``
    targets: tuple[str, ...]
    args: CallArgs
    #: CALL, RESULT: ``target(args)(then)`` (a class's instance, or a factory's result),
    #: or METHOD: ``target(args).attr(then)``
    mode: str = CALL
    then: CallArgs | None = None
    #: ``self.method(...)``: the callee's first parameter is the instance
    bound: bool = False
    #: the call read as a ``pl.pallas_call`` (it passes ``compiler_params=``), in case
    #: the callee is a wrapper of one
    as_entry: EntryEvent | None = None
    #: under ``jax.grad`` (and the other differentiating transformations): the
    #: ``defvjp`` / ``defjvp`` rules of the ``custom_vjp`` functions it reaches run
    #: instead of their primal
    differentiated: bool = False
    #: METHOD: the name of the method called
    attr: str = ""
    #: traced for ``jax.vjp``'s forward pass: a ``custom_vjp`` function it reaches runs
    #: its forward rule (the backward one runs when the pullback is called)
    forward: bool = False
    #: RESULT: the item of the returned tuple that is called (``fwd, bwd = make()``),
    #: -1 for the returned value itself
    item: int = -1


Event = EntryEvent | CallEvent


@dataclass(frozen=True)
class Arm:
    """One alternative of an ``Alt``."""

    steps: tuple[Step, ...]
    #: the lowering platforms for which this arm runs (``platform_dependent``); None: any
    platforms: tuple[str, ...] | None = None


@dataclass(frozen=True)
class Alt:
    """Alternatives, one of which runs (an empty arm: none of them)."""

    line: int
    arms: tuple[Arm, ...]


@dataclass(frozen=True)
class Return:
    """The path returns here. ``value``: what calling the returned value runs (an entry
    point's kernel, or a call of a function, class instance or factory result with the
    arguments the caller will pass, ``UNKNOWN_ARGS`` standing for them); None when
    the value is not a callable the reader knows."""

    line: int
    value: Event | None = None
    #: a literal tuple returned (``return fwd, bwd``): what calling each item runs, as
    #: ``value`` says of the whole
    items: tuple[Event | None, ...] | None = None


@dataclass(frozen=True)
class Stop:
    """The path ends without returning (``raise``, ``sys.exit``)."""

    line: int


Step = EntryEvent | CallEvent | Alt | Return | Stop


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
    #: the line of the entry call
    line: int = 0
    #: (name, position) of the wrapper's ``*args`` when it passes it on as the entry
    #: point's leading positional arguments
    args: tuple[str, int] | None = None


#: What a guard helper returns, as nested lists (JSON as it is):
#: ``["source"]``: a platform string itself (``jax.default_backend()``);
#: ``["cmp", op, [names]]``: the platform compared with literals (op: ==, !=, in, not in);
#: ``["not", c]``, ``["and", c, ...]``, ``["or", c, ...]``; ``["call", fullname]``: what
#: another helper returns.
Condition = list[object]


#: ``FunctionSummary.decorator``: what the function does as a decorator
KEEPS: Final = "keeps"  # returns a ``functools.wraps`` closure calling its argument
KEEPS_FACTORY: Final = "factory"  # returns such a decorator
KEEPS_BOTH: Final = "both"  # either: ``@deco`` and ``@deco(...)`` (``func=None`` first)


@dataclass(frozen=True)
class FunctionSummary:
    """What one function does, with names resolved."""

    #: qualified name inside its module: ``f``, ``C.m``, ``f.<locals>.g``
    qualname: str
    line: int
    params: tuple[Param, ...]
    #: defined directly in a class and not a staticmethod (the first parameter is the instance)
    is_method: bool
    #: decorated with something that does not keep the function (a call runs something else)
    opaque: bool
    #: why it can have no requirement (it reads the platform)
    blocked: str | None
    #: the trace program of its body
    steps: tuple[Step, ...]
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
    #: decorators of other modules whose meaning ``combine`` resolves (a variable
    #: holding ``jaxtyping.jaxtyped(...)``, a library's own ``functools.wraps`` decorator)
    decorators: tuple[str, ...] = ()
    #: decorated with ``jax.custom_vjp`` / ``custom_jvp`` (its ``defvjp`` rules count)
    derivative: bool = False
    #: KEEPS / KEEPS_FACTORY / ""
    decorator: str = ""
    #: decorated with ``functools.partial(pl.pallas_call, ...)`` (or ``pl.kernel``):
    #: calling it runs that entry point with this function as the kernel
    decorated_entry: EntryEvent | None = None
    #: a guard helper's condition (``helper == "platform"``): ``Condition``
    condition: Condition | None = None
    #: the backend of the params every ``return`` constructs (``def params(): return
    #: pltpu.CompilerParams(...)``), whatever its annotation says; "" otherwise
    returns_params: str = ""
    #: how a method is reached through its class or instance: ``CLASSMETHOD`` (its first
    #: parameter is the class it is looked up on), ``PROPERTY`` (reading it runs it, and
    #: calling it calls what it returns), "" for any other function
    access: str = ""


#: ``FunctionSummary.access``
CLASSMETHOD: Final = "classmethod"
PROPERTY: Final = "property"


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
    #: class-level attributes with a literal default (``interpret: bool = False``)
    defaults: tuple[tuple[str, str], ...] = ()


#: ``ModuleFacts.rules`` kinds: ``defvjp``'s forward and backward rules, ``defjvp``'s rule
RULE_FORWARD: Final = "fwd"
RULE_BACKWARD: Final = "bwd"
RULE_JVP: Final = "jvp"

#: ``Alias.kind``
REF: Final = "ref"  # name = other_name
PARTIAL: Final = "partial"  # name = functools.partial(target, *args, **kwargs)
KEEP: Final = "keep"  # name = jax.jit(target) / jax.custom_vjp(target)
INSTANCE: Final = "instance"  # name = target(args): a class's instance or a factory's result
CHOICE: Final = "choice"  # name = a if cond else b
TABLE: Final = "table"  # name = {"tpu": f, "gpu": g}: a platform table
ITEMS: Final = "items"  # name = (f, g) / [f, g] / {"a": f, 1: g}: a literal container
KEEPER: Final = "keeper"  # name = jaxtyping.jaxtyped(typechecker=...): a keeping decorator


@dataclass(frozen=True)
class Alias:
    """A module-level name bound once to a callable built from other names."""

    line: int
    kind: str
    targets: tuple[str, ...]
    args: CallArgs = NO_ARGS
    #: TABLE, ITEMS: the key of each target (ITEMS: ``repr`` of the literal index, a
    #: sequence's negative indexes too)
    keys: tuple[str, ...] = ()


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


def partial_args(bound: CallArgs, later: CallArgs) -> CallArgs:
    """The arguments a ``functools.partial`` passes: its own, then the call's."""
    positional = bound.positional if bound.star else bound.positional + later.positional
    keywords = dict(bound.keywords)
    keywords.update(dict(later.keywords))
    return CallArgs(
        positional,
        tuple(keywords.items()),
        bound.star or later.star,
        bound.star_kwargs + later.star_kwargs,
    )


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
    #: module-level name -> (fullname, line, kind) of its ``defvjp`` / ``defjvp`` rules;
    #: kind: ``RULE_FORWARD`` / ``RULE_BACKWARD`` (``defvjp``'s), ``RULE_JVP`` (``defjvp``'s)
    rules: Mapping[str, tuple[tuple[str, int, str], ...]] = field(default_factory=dict)
    #: modules whose names ``from m import *`` brings in
    stars: tuple[str, ...] = ()


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


def _bool(value: object) -> bool:
    if not isinstance(value, bool):
        raise FactsFormatError(f"expected a bool, got {value!r}")
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


def _step_json(step: Step) -> dict[str, object]:
    if isinstance(step, EntryEvent):
        return {
            "entry": step.entry,
            "line": step.line,
            "params": step.params,
            "evidence": [_evidence_json(e) for e in step.evidence],
            "kernel": step.kernel,
            "interpret": step.interpret,
            "via": list(step.via),
        }
    if isinstance(step, CallEvent):
        return {
            "call": list(step.targets),
            "line": step.line,
            "args": _args_json(step.args),
            "mode": step.mode,
            "then": _args_json(step.then) if step.then is not None else None,
            "bound": step.bound,
            "as_entry": _step_json(step.as_entry) if step.as_entry is not None else None,
            "grad": step.differentiated,
            "attr": step.attr,
            "fwd": step.forward,
            "item": step.item,
        }
    if isinstance(step, Alt):
        return {
            "alt": [
                [[_step_json(s) for s in arm.steps], list(arm.platforms) if arm.platforms else None]
                for arm in step.arms
            ],
            "line": step.line,
        }
    if isinstance(step, Return):
        return {
            "return": _step_json(step.value) if step.value is not None else None,
            "line": step.line,
            "items": [_step_json(i) if i is not None else None for i in step.items]
            if step.items is not None
            else None,
        }
    return {"stop": True, "line": step.line}


def _event_from(raw: object) -> Event:
    step = _step_from(raw)
    if not isinstance(step, (EntryEvent, CallEvent)):
        raise FactsFormatError(f"expected an event, got {raw!r}")
    return step


def _step_from(raw: object) -> Step:
    data = _dict(raw)
    line = _int(data.get("line"))
    if "entry" in data:
        kernel = data.get("kernel")
        return EntryEvent(
            line,
            _str(data.get("entry")),
            _str(data.get("params")),
            tuple(_evidence_from(e) for e in _list(data.get("evidence"))),
            _str(kernel) if kernel is not None else None,
            _str(data.get("interpret")),
            _pair(data.get("via")),
        )
    if "call" in data:
        then = data.get("then")
        as_entry_raw = data.get("as_entry")
        as_entry = _step_from(as_entry_raw) if as_entry_raw is not None else None
        if as_entry is not None and not isinstance(as_entry, EntryEvent):
            raise FactsFormatError(f"bad call event {raw!r}")
        return CallEvent(
            line,
            _strs(data.get("call")),
            _args_from(data.get("args")),
            _str(data.get("mode")),
            _args_from(then) if then is not None else None,
            _bool(data.get("bound")),
            as_entry,
            _bool(data.get("grad")),
            _str(data.get("attr", "")),
            _bool(data.get("fwd", False)),
            _int(data.get("item", -1)),
        )
    if "alt" in data:
        arms: list[Arm] = []
        for raw_arm in _list(data.get("alt")):
            items = _list(raw_arm)
            if len(items) != 2:
                raise FactsFormatError(f"bad alternative {raw_arm!r}")
            platforms = _strs(items[1]) if items[1] is not None else None
            arms.append(Arm(tuple(_step_from(s) for s in _list(items[0])), platforms))
        return Alt(line, tuple(arms))
    if "return" in data:
        value = data.get("return")
        raw_items = data.get("items")
        returned: tuple[Event | None, ...] | None = None
        if raw_items is not None:
            returned = tuple(_event_from(i) if i is not None else None for i in _list(raw_items))
        return Return(line, _event_from(value) if value is not None else None, returned)
    if data.get("stop") is True:
        return Stop(line)
    raise FactsFormatError(f"bad step {raw!r}")


def _param_json(param: Param) -> list[object]:
    return [param.name, param.kind, param.default, param.rebound, param.annotation]


def _param_from(raw: object) -> Param:
    items = _list(raw)
    if len(items) != 5 or not isinstance(items[3], bool):
        raise FactsFormatError(f"bad parameter {raw!r}")
    return Param(_str(items[0]), _str(items[1]), _str(items[2]), items[3], _str(items[4]))


def function_json(fn: FunctionSummary) -> dict[str, object]:
    wrapper = fn.wrapper
    return {
        "line": fn.line,
        "params": [_param_json(p) for p in fn.params],
        "method": fn.is_method,
        "opaque": fn.opaque,
        "blocked": fn.blocked,
        "steps": [_step_json(s) for s in fn.steps],
        "refs": list(fn.refs),
        "helper": fn.helper,
        "body": [_evidence_json(e) for e in fn.body_evidence],
        "wrapper": [
            wrapper.entry,
            [list(f) for f in wrapper.forwards],
            wrapper.kwargs,
            wrapper.deferred,
            wrapper.line,
            list(wrapper.args) if wrapper.args is not None else None,
        ]
        if wrapper is not None
        else None,
        "attrs": [list(a) for a in fn.self_attrs],
        "decorators": list(fn.decorators),
        "derivative": fn.derivative,
        "decorator": fn.decorator,
        "decorated_entry": _step_json(fn.decorated_entry)
        if fn.decorated_entry is not None
        else None,
        "condition": fn.condition,
        "returns_params": fn.returns_params,
        "access": fn.access,
    }


def _forward_from(raw: object) -> tuple[str, str, int]:
    items = _list(raw)
    if len(items) != 3:
        raise FactsFormatError(f"bad forward {raw!r}")
    return _str(items[0]), _str(items[1]), _int(items[2])


def function_from(qualname: str, raw: object) -> FunctionSummary:
    data = _dict(raw)
    blocked = data.get("blocked")
    wrapper_raw = data.get("wrapper")
    wrapper: WrapperFact | None = None
    if wrapper_raw is not None:
        items = _list(wrapper_raw)
        if len(items) != 6:
            raise FactsFormatError(f"bad wrapper {wrapper_raw!r}")
        star = items[5]
        wrapper = WrapperFact(
            _str(items[0]),
            tuple(_forward_from(f) for f in _list(items[1])),
            _str(items[2]) if items[2] is not None else None,
            _bool(items[3]),
            _int(items[4]),
            (_str(_list(star)[0]), _int(_list(star)[1])) if star is not None else None,
        )
    decorated_raw = data.get("decorated_entry")
    decorated = _step_from(decorated_raw) if decorated_raw is not None else None
    if decorated is not None and not isinstance(decorated, EntryEvent):
        raise FactsFormatError(f"bad decorated entry {decorated_raw!r}")
    return FunctionSummary(
        qualname=qualname,
        line=_int(data.get("line")),
        params=tuple(_param_from(p) for p in _list(data.get("params"))),
        is_method=_bool(data.get("method")),
        opaque=_bool(data.get("opaque")),
        blocked=_str(blocked) if blocked is not None else None,
        steps=tuple(_step_from(s) for s in _list(data.get("steps"))),
        refs=_strs(data.get("refs")),
        helper=_str(data.get("helper")),
        body_evidence=tuple(_evidence_from(e) for e in _list(data.get("body"))),
        wrapper=wrapper,
        self_attrs=tuple(_pair(a) for a in _list(data.get("attrs"))),
        decorators=_strs(data.get("decorators")),
        derivative=_bool(data.get("derivative")),
        decorator=_str(data.get("decorator")),
        decorated_entry=decorated,
        condition=_condition_from(data.get("condition")),
        returns_params=_str(data.get("returns_params", "")),
        access=_str(data.get("access", "")),
    )


def _condition_from(raw: object) -> Condition | None:
    if raw is None:
        return None
    items = _list(raw)
    if not items or not isinstance(items[0], str):
        raise FactsFormatError(f"bad condition {raw!r}")
    return list(items)


def class_json(cls: ClassSummary) -> dict[str, object]:
    return {
        "line": cls.line,
        "bases": list(cls.bases),
        "opaque": cls.opaque,
        "methods": [list(m) for m in cls.methods],
        "fields": [_param_json(p) for p in cls.fields] if cls.fields is not None else None,
        "defaults": [list(d) for d in cls.defaults],
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
        defaults=tuple(_pair(d) for d in _list(data.get("defaults"))),
    )


def module_json(facts: ModuleFacts) -> dict[str, object]:
    return {
        "pallas": facts.pallas,
        "bindings": {k: [b.kind, b.target] for k, b in sorted(facts.bindings.items())},
        "functions": _functions_json(facts.functions),
        "names": list(facts.functions),
        "classes": {k: class_json(c) for k, c in sorted(facts.classes.items())},
        "aliases": {
            k: [a.line, a.kind, list(a.targets), _args_json(a.args), list(a.keys)]
            for k, a in sorted(facts.aliases.items())
        },
        "rules": {k: [list(r) for r in v] for k, v in sorted(dict(facts.rules).items())},
        "stars": list(facts.stars),
    }


class Functions(Mapping[str, FunctionSummary]):
    """The functions of one module, each summarised or decoded when first asked for.

    A run asks about a few of a module's functions (in a cold run over jax's ops, 179
    of the 602 functions and lambdas of the modules read: most lambdas are index maps
    nothing calls), so a summary is worked out when asked: from the stored JSON
    (``stored``) when the module's facts were kept on disk, else by ``summarize`` (the
    module's reader, or a reading of its source when a stored entry lacks the function).
    A summary depends only on the module's source and the function's name (the reader
    keeps no state that depends on the order of questions: ``test_lazy_summaries``), so
    the order in which they are asked changes nothing.

    ``names``: every function and lambda of the module, in the reader's order. A
    function that cannot be worked out (its stored JSON does not decode, or nothing can
    summarise it any more) reads as opaque: its requirement is unknown, and nothing is
    said of its calls."""

    def __init__(
        self,
        names: Sequence[str],
        stored: Mapping[str, object] | None = None,
        summarize: Callable[[str], FunctionSummary | None] | None = None,
    ) -> None:
        self._names = tuple(names)
        self._known = frozenset(self._names)
        self._stored: Mapping[str, object] = stored if stored is not None else {}
        #: how to summarise a function the stored JSON lacks (None: nothing can)
        self.summarize = summarize
        self._done: dict[str, FunctionSummary] = {}
        #: how many of ``_done`` were worked out here, not decoded (``unsaved``)
        self._worked_out = 0
        self._saved = 0

    @override
    def __getitem__(self, qualname: str) -> FunctionSummary:
        found = self._done.get(qualname)
        if found is not None:
            return found
        if qualname not in self._known:
            raise KeyError(qualname)
        raw = self._stored.get(qualname)
        if raw is not None:
            try:
                found = function_from(qualname, raw)
            except (FactsFormatError, TypeError, ValueError):
                found = _opaque(qualname, raw)
        else:
            found = self.summarize(qualname) if self.summarize is not None else None
            if found is None:
                found = bare_function(qualname, opaque=True, blocked="its facts are not kept")
            else:
                self._worked_out += 1
        self._done[qualname] = found
        return found

    @override
    def __iter__(self) -> Iterator[str]:
        return iter(self._names)

    @override
    def __len__(self) -> int:
        return len(self._names)

    @override
    def __contains__(self, qualname: object) -> bool:
        return qualname in self._known

    def unsaved(self) -> bool:
        """Whether summaries were worked out since ``saved_json`` last ran."""
        return self._worked_out != self._saved

    def saved_json(self) -> dict[str, object]:
        """The JSON of every function known so far (stored or worked out), for the
        on-disk store; the rest is written as names only, to be worked out later."""
        out: dict[str, object] = dict(self._stored)
        for qualname, fn in self._done.items():
            if qualname not in self._stored:
                out[qualname] = function_json(fn)
        self._saved = self._worked_out
        return {k: out[k] for k in sorted(out)}


def _opaque(qualname: str, raw: object) -> FunctionSummary:
    line = raw.get("line") if isinstance(raw, dict) else None
    return bare_function(
        qualname,
        line if isinstance(line, int) else 0,
        opaque=True,
        blocked="its stored facts do not decode",
    )


def bare_function(
    qualname: str, line: int = 0, *, opaque: bool = False, blocked: str | None = None
) -> FunctionSummary:
    """A function with no parameters whose body does nothing known (code at a module's
    top level, the API's caller, a function whose facts are lost)."""
    return FunctionSummary(
        qualname=qualname,
        line=line,
        params=(),
        is_method=False,
        opaque=opaque,
        blocked=blocked,
        steps=(),
        refs=(),
        helper="",
        body_evidence=(),
        wrapper=None,
    )


def _functions_json(functions: Mapping[str, FunctionSummary]) -> dict[str, object]:
    if isinstance(functions, Functions):
        return functions.saved_json()
    return {k: function_json(f) for k, f in sorted(functions.items())}


def module_from(module: str, raw: object) -> ModuleFacts:
    """The facts ``module_json`` wrote; ``FactsFormatError`` for anything else."""
    data = _dict(raw)
    stored = _dict(data.get("functions"))
    if not set(stored) <= set(_strs(data.get("names"))):
        raise FactsFormatError("stored functions that are not named")
    bindings = {}
    for name, value in _dict(data.get("bindings")).items():
        kind, target = _pair(value)
        bindings[name] = Binding(kind, target)
    aliases = {}
    for name, value in _dict(data.get("aliases")).items():
        items = _list(value)
        if len(items) != 5:
            raise FactsFormatError(f"bad alias {value!r}")
        aliases[name] = Alias(
            _int(items[0]), _str(items[1]), _strs(items[2]), _args_from(items[3]), _strs(items[4])
        )
    rules: dict[str, tuple[tuple[str, int, str], ...]] = {}
    for name, value in _dict(data.get("rules")).items():
        found: list[tuple[str, int, str]] = []
        for item in _list(value):
            triple = _list(item)
            if len(triple) != 3:
                raise FactsFormatError(f"bad rule {item!r}")
            found.append((_str(triple[0]), _int(triple[1]), _str(triple[2])))
        rules[name] = tuple(found)
    return ModuleFacts(
        module=module,
        pallas=_bool(data.get("pallas")),
        bindings=bindings,
        functions=Functions(_strs(data.get("names")), stored),
        classes={k: class_from(k, v) for k, v in _dict(data.get("classes")).items()},
        aliases=aliases,
        rules=rules,
        stars=_strs(data.get("stars")),
    )
