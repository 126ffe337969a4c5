"""A function body -> its trace program (``model.Step``): what JAX traces when it runs.

JAX traces a Python function by running it: every statement on the path Python takes
runs, and a Pallas kernel is lowered when its entry point's result is called. So the
program of a body follows Python's control flow, statement by statement:

* calls run in evaluation order (arguments first); a conditional expression, the right
  operand of ``and`` / ``or`` and a loop body whose trip count is not known become
  alternatives (``Alt``), one arm of which may be empty (nothing runs);
* ``if``/``elif``/``else`` and ``match`` are alternatives; ``try`` is the body (with
  ``else``) or one of the handlers, then ``finally``; ``with`` runs its body (under
  ``pltpu.force_tpu_interpret_mode()`` every kernel is interpreted); a ``for`` over a
  non-empty literal sequence runs its body at least once;
* ``return`` ends a path (``Return``, with what calling the returned value would run),
  ``raise`` and ``pytest.skip``/``sys.exit`` end it without returning (``Stop``);
* a call of an entry point's result (``pl.pallas_call(...)(x)``, a variable holding
  one, a function decorated with ``functools.partial(pl.pallas_call, ...)``) runs its
  kernel (``EntryEvent``); building a kernel and not calling it runs nothing;
* JAX's control flow traces the functions it is given whatever the predicate or trip
  count: ``lax.cond`` and ``lax.switch`` every branch, ``fori_loop``, ``while_loop``,
  ``scan``, ``map`` and ``associative_scan`` their bodies, ``jax.vjp`` / ``jvp`` /
  ``linearize`` their function; transformations (``jit``, ``vmap``, ``checkpoint``,
  ``shard_map``, ``custom_vjp``...) keep what their function runs (``reader``);
* ``lax.platform_dependent`` and ``typed_pallas.dispatch`` run, for each lowering
  platform, only the branch of that platform (``Arm.platforms``).

What it does not do: decide what a program lowers for (``combine``), or resolve names
(``reader``).
"""

from __future__ import annotations

import ast
import dataclasses
from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from typed_pallas import _platforms
from typed_pallas_mypy import fullnames
from typed_pallas_mypy.inference import jax_api, model
from typed_pallas_mypy.inference.callables import (
    CallResult,
    Choice,
    DecoratedEntry,
    EntryRef,
    EntryVariable,
    FunctionRef,
    ItemOf,
    MethodOf,
    PlatformChoice,
)
from typed_pallas_mypy.inference.model import (
    CALLER_ARGS,
    TRUE,
    UNKNOWN_ARGS,
    Alt,
    Arm,
    CallArgs,
    CallEvent,
    EntryEvent,
    Event,
    Return,
    Step,
    Stop,
)

if TYPE_CHECKING:
    from typed_pallas_mypy.inference.reader import _ModuleReader
    from typed_pallas_mypy.inference.scopes import Scope

#: JAX's control flow and the other calls that trace functions right away, whatever the
#: predicate or trip count: fullname -> the positions (and keywords) of the functions it
#: traces (``jax_api``'s table: ``lax.cond`` both branches, ``lax.switch`` every branch of
#: its sequence, loop and ``scan`` bodies, ``jax.vjp``'s function...)
TRACED_ARGUMENTS: Final = jax_api.TRACED_ARGUMENTS
#: ... and differentiate it: the ``defvjp`` rules of what it reaches run too
DIFFERENTIATING_TRACERS: Final = jax_api.DIFFERENTIATING_CALLS
#: ``with`` contexts under which every Pallas kernel is interpreted (lowers anywhere)
INTERPRET_CONTEXTS: Final = jax_api.INTERPRET_CONTEXTS

#: The ending of a block: falls through, returns, stops, or leaves its loop.
_THROUGH: Final = ""
_RETURN: Final = "return"
_STOP: Final = "stop"
_BREAK: Final = "break"


def _non_empty_literal(expr: ast.expr) -> bool:
    return (
        isinstance(expr, (ast.Tuple, ast.List, ast.Set))
        and bool(expr.elts)
        and not any(isinstance(e, ast.Starred) for e in expr.elts)
    )


def _leaves_loop(body: Sequence[ast.stmt]) -> bool:
    """Whether a loop body has a ``break`` or ``continue`` of its own."""
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.Break, ast.Continue)):
            return True
        if isinstance(
            node,
            (ast.For, ast.AsyncFor, ast.While, ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef),
        ):
            continue
        if isinstance(node, ast.expr):
            continue
        stack.extend(ast.iter_child_nodes(node))
    return False


class ProgramBuilder:
    """Builds the trace program of one function (or lambda) of ``reader``'s module."""

    def __init__(self, reader: _ModuleReader, scope: Scope) -> None:
        self.reader = reader
        self.scope = scope
        #: inside ``with force_tpu_interpret_mode()``
        self.interpreted = False
        #: reading the function a differentiating transformation traces (``jax.vjp``)
        self.differentiating = False

    # ------------------------------------------------------------------ statements

    def body(self, stmts: Sequence[ast.stmt]) -> tuple[Step, ...]:
        steps, _ = self.block(stmts)
        return tuple(steps)

    def block(self, stmts: Sequence[ast.stmt]) -> tuple[list[Step], str]:
        """(the steps of ``stmts``, how the block ends)."""
        steps: list[Step] = []
        for stmt in stmts:
            ending = self.statement(stmt, steps)
            if ending != _THROUGH:
                return steps, ending
        return steps, _THROUGH

    def _arm(self, stmts: Sequence[ast.stmt]) -> tuple[Arm, str]:
        steps, ending = self.block(stmts)
        return Arm(tuple(steps)), ending

    def statement(self, stmt: ast.stmt, steps: list[Step]) -> str:
        """Add ``stmt``'s steps to ``steps``; how it ends."""
        if isinstance(stmt, ast.Expr):
            steps.extend(self.expression(stmt.value))
            if isinstance(stmt.value, ast.Call) and self._ends_run(stmt.value):
                steps.append(Stop(stmt.lineno))
                return _STOP
            return _THROUGH
        if isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            if stmt.value is not None:
                steps.extend(self.expression(stmt.value))
            return _THROUGH
        if isinstance(stmt, ast.Assert):
            steps.extend(self.expression(stmt.test))
            return _THROUGH
        if isinstance(stmt, ast.Return):
            value: Event | None = None
            items: tuple[Event | None, ...] | None = None
            if stmt.value is not None:
                steps.extend(self.expression(stmt.value))
                value = self.returned(stmt.value)
                if isinstance(stmt.value, ast.Tuple) and not any(
                    isinstance(e, ast.Starred) for e in stmt.value.elts
                ):
                    items = tuple(self.returned(e) for e in stmt.value.elts)
            steps.append(Return(stmt.lineno, value, items))
            return _RETURN
        if isinstance(stmt, ast.Raise):
            steps.append(Stop(stmt.lineno))
            return _STOP
        if isinstance(stmt, (ast.Break, ast.Continue)):
            return _BREAK
        if isinstance(stmt, ast.If):
            steps.extend(self.expression(stmt.test))
            return self._alternatives(stmt.lineno, [stmt.body, stmt.orelse], steps)
        if isinstance(stmt, ast.Match):
            steps.extend(self.expression(stmt.subject))
            bodies: list[Sequence[ast.stmt]] = [case.body for case in stmt.cases]
            last = stmt.cases[-1] if stmt.cases else None
            if last is None or last.guard is not None or not _irrefutable(last.pattern):
                bodies.append([])
            return self._alternatives(stmt.lineno, bodies, steps)
        if isinstance(stmt, (ast.For, ast.AsyncFor)):
            steps.extend(self.expression(stmt.iter))
            if _non_empty_literal(stmt.iter) and not _leaves_loop(stmt.body):
                body, ending = self.block(stmt.body)  # the first iteration runs
                steps.extend(body)
                return ending if ending != _BREAK else _THROUGH
            self._alternatives(stmt.lineno, [stmt.body, []], steps, loop=True)
            return _THROUGH
        if isinstance(stmt, ast.While):
            steps.extend(self.expression(stmt.test))
            self._alternatives(stmt.lineno, [stmt.body, []], steps, loop=True)
            return _THROUGH
        if isinstance(stmt, (ast.With, ast.AsyncWith)):
            interpreted = False
            for item in stmt.items:
                steps.extend(self.expression(item.context_expr))
                if self._interpret_context(item.context_expr):
                    interpreted = True
            before = self.interpreted
            self.interpreted = before or interpreted
            try:
                body, ending = self.block(stmt.body)
            finally:
                self.interpreted = before
            steps.extend(body)
            return ending
        if isinstance(stmt, (ast.Try, ast.TryStar)):
            return self._try(stmt, steps)
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            steps.extend(self.reader.definition_steps(stmt, self.scope))
            return _THROUGH
        return _THROUGH  # pass, import, global, class, del...

    def _alternatives(
        self,
        line: int,
        bodies: Sequence[Sequence[ast.stmt]],
        steps: list[Step],
        *,
        loop: bool = False,
    ) -> str:
        arms: list[Arm] = []
        endings: list[str] = []
        for body in bodies:
            arm, ending = self._arm(body)
            arms.append(arm)
            endings.append(_THROUGH if (loop and ending == _BREAK) else ending)
        if any(arm.steps for arm in arms):
            steps.append(Alt(line, tuple(arms)))
        if endings and all(e in (_RETURN, _STOP) for e in endings):
            return _STOP if all(e == _STOP for e in endings) else _RETURN
        if endings and all(e != _THROUGH for e in endings):
            return _BREAK if _BREAK in endings else _RETURN
        return _THROUGH

    def _try(self, stmt: ast.Try | ast.TryStar, steps: list[Step]) -> str:
        body = [*stmt.body, *stmt.orelse]
        handlers = [h.body for h in stmt.handlers]
        start = len(steps)
        ending = self._alternatives(stmt.lineno, [body, *handlers], steps)
        if stmt.finalbody:
            final_steps, final_ending = self.block(stmt.finalbody)
            # the ``finally`` runs on the paths that return inside the ``try`` too
            steps[start:] = _before_returns(steps[start:], tuple(final_steps))
            steps.extend(final_steps)
            if final_ending != _THROUGH:
                return final_ending
        return ending

    # ------------------------------------------------------------------ expressions

    def expression(self, expr: ast.expr) -> list[Step]:
        """The steps of evaluating ``expr``, in evaluation order."""
        if isinstance(expr, (ast.Name, ast.Constant)):
            return []  # the most common expressions: nothing runs
        if isinstance(expr, ast.Call):
            return self.call(expr)
        if isinstance(expr, ast.IfExp):
            out = self.expression(expr.test)
            arms = (
                Arm(tuple(self.expression(expr.body))),
                Arm(tuple(self.expression(expr.orelse))),
            )
            if any(arm.steps for arm in arms):
                out.append(Alt(expr.lineno, arms))
            return out
        if isinstance(expr, ast.BoolOp):
            out = self.expression(expr.values[0])
            for value in expr.values[1:]:
                maybe = self.expression(value)
                if maybe:
                    out.append(Alt(value.lineno, (Arm(tuple(maybe)), Arm(()))))
            return out
        if isinstance(expr, ast.Lambda):
            return []
        if isinstance(expr, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            return self.expression(expr.generators[0].iter)
        out = []
        for child in self.reader.nodes.children(expr):
            if isinstance(child, ast.expr):
                out.extend(self.expression(child))
        return out

    def call(self, call: ast.Call) -> list[Step]:
        """The steps of one call: its callee and arguments, then what it runs."""
        out: list[Step] = []
        if isinstance(call.func, ast.Call):
            out.extend(self.call(call.func))
        elif not isinstance(call.func, ast.Lambda):
            out.extend(self.expression(call.func))
        for arg in call.args:
            out.extend(self.expression(arg.value if isinstance(arg, ast.Starred) else arg))
        for keyword in call.keywords:
            out.extend(self.expression(keyword.value))
        out.extend(self.own(call))
        return out

    def own(self, call: ast.Call) -> list[Step]:
        """What a call itself runs (not its callee expression or its arguments)."""
        reader, scope = self.reader, self.scope
        out: list[Step] = []
        if self.interpreted:
            return out  # every kernel traced here runs interpreted: it lowers anywhere
        callee = reader.ref(call.func, scope)
        if callee is not None and callee in TRACED_ARGUMENTS:
            out.extend(self._traced(call, callee, TRACED_ARGUMENTS[callee]))
            return out
        if callee is not None and callee in fullnames.PLATFORM_DEPENDENT:
            branches: dict[str | None, ast.expr] = {
                k.arg: k.value for k in call.keywords if k.arg is not None
            }
            alt = self._platform_alternatives(call.lineno, branches, UNKNOWN_ARGS)
            if alt is not None:
                out.append(alt)
            return out
        if reader.entry_of(call, scope) is not None:
            return out  # building a kernel runs nothing
        out.extend(self.run(call.func, call, reader.call_args(call, scope)))
        return out

    def run(self, func: ast.expr, call: ast.Call | None, args: CallArgs) -> list[Step]:
        """The steps of calling ``func`` with ``args`` (``call``: the call doing it)."""
        what = self.reader.callable_of(func, self.scope)
        line = call.lineno if call is not None else func.lineno
        return self._run_callable(what, line, call, args)

    def _run_callable(
        self, what: object, line: int, call: ast.Call | None, args: CallArgs
    ) -> list[Step]:

        reader, scope = self.reader, self.scope
        if isinstance(what, EntryRef):
            return [self._entry(reader.entry_event(what, scope, what.call.lineno, None))]
        if isinstance(what, EntryVariable):
            entry = reader.entry_of(what.value, what.scope)
            if entry is None:
                return []
            event = reader.entry_event(entry, what.scope, what.value.lineno, None)
            return [self._entry(event)]
        if isinstance(what, DecoratedEntry):
            return [self._entry(what.event)]
        if isinstance(what, FunctionRef):
            merged = model.partial_args(what.bound, args) if what.bound is not None else args
            as_entry = (
                reader.as_entry(call, scope)
                if call is not None and len(what.targets) == 1 and what.bound is None
                else None
            )
            events = [
                CallEvent(
                    line,
                    (target,),
                    merged,
                    bound=what.self_bound,
                    as_entry=as_entry,
                    differentiated=what.differentiated or self.differentiating,
                )
                for target in what.targets
            ]
            return self._choice(line, events)
        if isinstance(what, CallResult):
            as_entry = reader.as_entry(what.call, scope)
            return [
                CallEvent(
                    line,
                    (what.target,),
                    what.args,
                    model.RESULT,
                    args,
                    as_entry=as_entry,
                    differentiated=what.differentiated or self.differentiating,
                )
            ]
        if isinstance(what, ItemOf):
            return [
                CallEvent(
                    line,
                    (what.result.target,),
                    what.result.args,
                    model.RESULT,
                    args,
                    differentiated=what.result.differentiated or self.differentiating,
                    item=what.index,
                )
            ]
        if isinstance(what, MethodOf):
            return [
                CallEvent(
                    line,
                    (what.result.target,),
                    what.result.args,
                    model.METHOD,
                    args,
                    bound=True,
                    differentiated=what.result.differentiated or self.differentiating,
                    attr=what.name,
                )
            ]
        if isinstance(what, Choice):
            arms = [
                Arm(tuple(self._run_callable(option, line, call, args))) for option in what.options
            ]
            return [Alt(line, tuple(arms))] if any(a.steps for a in arms) else []
        if isinstance(what, PlatformChoice):
            alt = self._platform_alternatives(line, dict(what.branches), args)
            return [alt] if alt is not None else []
        return []  # known (framework code, a value's method) or unknown: nothing to follow

    def _choice(self, line: int, events: list[CallEvent]) -> list[Step]:
        if len(events) == 1:
            return list(events)
        return [Alt(line, tuple(Arm((event,)) for event in events))]

    def _entry(self, event: EntryEvent) -> EntryEvent:
        if self.interpreted and event.interpret != TRUE:
            return EntryEvent(
                event.line, event.entry, event.params, event.evidence, event.kernel, TRUE
            )
        return event

    def _traced(
        self, call: ast.Call, callee: str, where: tuple[tuple[int, str | None], ...]
    ) -> list[Step]:
        """The functions JAX's control flow traces (every branch, every body)."""
        out: list[Step] = []
        keywords = {k.arg: k.value for k in call.keywords if k.arg is not None}
        positional = [a for a in call.args if not isinstance(a, ast.Starred)]
        starred = len(positional) != len(call.args)
        sequences = {
            (a.position, a.keyword) for a in jax_api.function_arguments(callee) if a.sequence
        }
        bounded = {
            (a.position, a.keyword): a.bounds
            for a in jax_api.function_arguments(callee)
            if a.bounds is not None
        }
        for position, keyword in where:
            bounds = bounded.get((position, keyword))
            if bounds is not None and _no_trips(positional, bounds):
                continue  # a loop that runs zero times: nothing its body does is lowered
            value: ast.expr | None = keywords.get(keyword) if keyword is not None else None
            if (
                value is None
                and position < len(positional)
                and not (starred and any(isinstance(a, ast.Starred) for a in call.args[:position]))
            ):
                value = positional[position]
            if value is None:
                continue
            functions = (
                list(value.elts)
                if isinstance(value, (ast.List, ast.Tuple)) and (position, keyword) in sequences
                else [value]
            )
            before = self.differentiating
            # ``jax.vjp`` / ``jax.linearize`` trace the forward part now; the derivative
            # (a custom function's backward rule) runs when the returned callable is called
            deferred = callee in jax_api.DEFERRED_DERIVATIVES
            self.differentiating = before or (callee in DIFFERENTIATING_TRACERS and not deferred)
            try:
                for function in functions:
                    steps = self.run(function, None, UNKNOWN_ARGS)
                    if deferred and not before:
                        steps = [_forward(step) for step in steps]
                    out.extend(steps)
            finally:
                self.differentiating = before
        return out

    def _platform_alternatives(
        self, line: int, branches: dict[str | None, ast.expr], args: CallArgs
    ) -> Alt | None:
        """One arm per lowering platform: the branch named for it, else ``default``
        (the most specific keyword first: ``cuda=`` wins over ``gpu=``)."""
        arms: list[Arm] = []
        for lowering in sorted(_platforms.LOWERING_SET):
            keywords = (*_platforms.BRANCH_KEYWORDS_OF_LOWERING[lowering], "default")
            branch = next((branches[k] for k in keywords if k in branches), None)
            steps = tuple(self.run(branch, None, args)) if branch is not None else ()
            arms.append(Arm(steps, (lowering,)))
        if not any(arm.steps for arm in arms):
            return None
        return Alt(line, tuple(arms))

    def _interpret_context(self, expr: ast.expr) -> bool:
        target = expr.func if isinstance(expr, ast.Call) else expr
        return self.reader.ref(target, self.scope) in INTERPRET_CONTEXTS

    def _ends_run(self, call: ast.Call) -> bool:
        """``pytest.skip(...)``, ``sys.exit(...)``, ``self.skipTest(...)``."""
        name = self.reader.ref(call.func, self.scope)
        if name in fullnames.SKIP_CALLS:
            return True
        return isinstance(call.func, ast.Attribute) and call.func.attr in fullnames.SKIP_METHODS

    # ------------------------------------------------------------------ returns

    def returned(self, value: ast.expr) -> Event | None:
        """What calling the value ``return value`` returns would run; None: not known."""

        reader, scope = self.reader, self.scope
        line = value.lineno
        if isinstance(value, ast.Call):
            entry = reader.entry_of(value, scope)
            if entry is not None and not entry.partial:
                return self._entry(reader.entry_event(entry, scope, line, None))
        what = reader.callable_of(value, scope)
        if isinstance(what, EntryRef):
            # ``return partial(pl.pallas_call, ...)`` and similar: not a kernel yet
            return None
        if isinstance(what, EntryVariable):
            entry = reader.entry_of(what.value, what.scope)
            if entry is None:
                return None
            return self._entry(reader.entry_event(entry, what.scope, line, None))
        if isinstance(what, DecoratedEntry):
            return self._entry(what.event)
        if isinstance(what, FunctionRef) and len(what.targets) == 1:
            args = (
                model.partial_args(what.bound, CALLER_ARGS)
                if what.bound is not None
                else CALLER_ARGS
            )
            return CallEvent(line, what.targets, args, bound=what.self_bound)
        if isinstance(what, CallResult):
            return CallEvent(line, (what.target,), what.args, model.RESULT, CALLER_ARGS)
        return None


def _before_returns(steps: Sequence[Step], inserted: tuple[Step, ...]) -> list[Step]:
    """``steps`` with ``inserted`` run before each ``Return`` (a ``finally`` block)."""
    out: list[Step] = []
    for step in steps:
        if isinstance(step, Return):
            out.extend(inserted)
            out.append(step)
        elif isinstance(step, Alt):
            arms = tuple(
                Arm(tuple(_before_returns(arm.steps, inserted)), arm.platforms) for arm in step.arms
            )
            out.append(Alt(step.line, arms))
        else:
            out.append(step)
    return out


def _forward(step: Step) -> Step:
    """``step`` as ``jax.vjp`` / ``jax.linearize`` run it now: its calls in the forward
    phase (``CallEvent.forward``)."""
    if isinstance(step, CallEvent):
        return dataclasses.replace(step, forward=True)
    if isinstance(step, Alt):
        arms = tuple(Arm(tuple(_forward(s) for s in arm.steps), arm.platforms) for arm in step.arms)
        return Alt(step.line, arms)
    return step


def _irrefutable(pattern: ast.pattern) -> bool:
    """``case _:`` or ``case name:``."""
    return isinstance(pattern, ast.MatchAs) and pattern.pattern is None


def _no_trips(positional: list[ast.expr], bounds: tuple[int, int]) -> bool:
    """The loop's bounds are int literals whose upper is not above its lower
    (``jax_api.Arg.bounds``)."""
    if max(bounds) >= len(positional):
        return False
    lower, upper = (positional[i] for i in bounds)
    return (
        isinstance(lower, ast.Constant)
        and isinstance(upper, ast.Constant)
        and type(lower.value) is int
        and type(upper.value) is int
        and upper.value <= lower.value
    )
