"""``functools.singledispatch`` and ``singledispatchmethod``: a function chosen by the class
of the first argument (after ``self`` for a method).

A ``Dispatcher`` holds the base function and what ``register`` added, each with its class
(given, ``f.register(int)``, or read from the first parameter's annotation). A call runs
the function registered for a class the argument is known to be an instance of, the base
when it is known to be an instance of none of them, and, where that is not known, any of
those that may match (their joined outcome: a kernel counts only where every one runs it).

What it does not do: rank several registered classes an argument belongs to by its MRO
(all of them may run), or follow ``register`` with a union annotation.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass
from typing import TYPE_CHECKING

from typed_pallas_mypy.inference.evaluator import journal
from typed_pallas_mypy.inference.evaluator.domain import (
    ANYTHING,
    Container,
    Flow,
    Frame,
    FunctionObj,
    Obj,
    Outcome,
    Value,
    VSet,
    only,
    vset,
)
from typed_pallas_mypy.inference.parsing import parse_expression

if TYPE_CHECKING:
    from typed_pallas_mypy.inference.evaluator.machine import Machine


class Dispatcher(Obj):
    """What ``singledispatch(base)`` returns (``method``: ``singledispatchmethod``, bound
    like a function and dispatching on the argument after ``self``). Its registrations
    are its ``attrs`` ``"0"``, ``"1"``...: a (class, function) tuple each."""

    __slots__ = ("base", "method")

    def __init__(self, base: VSet, method: bool) -> None:
        super().__init__()
        self.base = base
        self.method = method

    def registrations(self) -> list[tuple[Value, VSet]]:
        out: list[tuple[Value, VSet]] = []
        for index in range(len(self.attrs)):
            pair = only(self.attrs.get(str(index), ANYTHING))
            if isinstance(pair, Container) and len(pair.items) == 2:
                cls = only(pair.items[0])
                if cls is not None:
                    out.append((cls, pair.items[1]))
        return out


@dataclass(frozen=True, slots=True)
class Register(Value):
    """``dispatcher.register``, or ``dispatcher.register(cls)`` waiting for its function."""

    dispatcher: Dispatcher
    cls: VSet | None = None


def register(m: Machine, value: Register, args: list[VSet]) -> Outcome:
    """``f.register(func)`` (its class from its annotation), ``f.register(cls, func)``, or
    ``f.register(cls)`` (a decorator taking the function)."""
    if value.cls is None and len(args) == 1 and _is_class(args[0]):
        return Outcome(returns=vset(Register(value.dispatcher, args[0])))
    if value.cls is not None and len(args) == 1:
        cls, func = value.cls, args[0]
    elif len(args) == 2:
        cls, func = args
    elif len(args) == 1:
        cls, func = _annotated_class(m, args[0], value.dispatcher.method), args[0]
    else:
        return Outcome(returns=ANYTHING)
    pair = Container("tuple")
    pair.items = [cls, func]
    dispatcher = value.dispatcher
    journal.touch(dispatcher)
    dispatcher.attrs[str(len(dispatcher.attrs))] = vset(pair)
    return Outcome(returns=func)


def candidates(dispatcher: Dispatcher, args: list[VSet], star_unknown: bool) -> VSet:
    """The functions a call with ``args`` may run."""
    from typed_pallas_mypy.inference.evaluator.library import instance_of

    index = 1 if dispatcher.method else 0
    if index >= len(args):
        return ANYTHING if star_unknown else dispatcher.base
    chosen: set[Value] = set()
    for value in args[index]:
        answers = [(instance_of(value, cls), func) for cls, func in dispatcher.registrations()]
        matched = [func for answer, func in answers if answer is True]
        if len(matched) == 1 and not any(answer is None for answer, _ in answers):
            chosen |= matched[0]
            continue
        chosen |= {f for answer, func in answers if answer is not False for f in func}
        if not matched:
            chosen |= dispatcher.base
    return frozenset(chosen)


def _is_class(values: VSet) -> bool:
    from typed_pallas_mypy.inference.evaluator.domain import ClassObj, External

    one = only(values)
    return isinstance(one, ClassObj) or (
        isinstance(one, External) and one.fullname.startswith("builtins.")
    )


def _annotated_class(m: Machine, func: VSet, method: bool) -> VSet:
    """The class annotating ``func``'s first parameter (after ``self`` for a method),
    evaluated in its module as ``typing.get_type_hints`` would; unknown otherwise."""
    one = only(func)
    if not isinstance(one, FunctionObj) or isinstance(one.node, ast.Lambda):
        return ANYTHING
    params = [*one.node.args.posonlyargs, *one.node.args.args]
    index = 1 if method else 0
    if index >= len(params) or params[index].annotation is None:
        return ANYTHING
    annotation = params[index].annotation
    assert annotation is not None
    if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
        try:
            annotation = parse_expression(annotation.value)
        except SyntaxError:
            return ANYTHING
    frame = Frame(one.module.attrs, one.module, None)
    return m.expressions.evaluate(annotation, frame, Flow())
