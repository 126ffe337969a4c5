"""Control flow: the statements that choose among ways or repeat them, run with their
effects (``if`` on a condition not known under the assumed platform, loops, ``try``,
``with``, ``match``).

Each way runs from the same state and the states are joined (``statements.Statements.either``):
a name holds what any way bound, and the kernels run on every way are those run on each. A
loop over a sequence whose items are known runs its body once per item, in order; a
``while`` runs iteration by iteration while its condition is known. A ``try``'s handlers
take the exceptions raised on its ways that they catch (``library.exception_matches``), and
a context manager that swallows exceptions lets the ways that raised go on after its block.
``match`` runs its cases one after another: a case that surely matches runs alone.

What it does not do: run simple statements, bind names or define anything
(``statements``), or evaluate expressions (``expressions``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from typed_pallas_mypy.inference.evaluator import library
from typed_pallas_mypy.inference.evaluator.domain import (
    ANYTHING,
    NOTHING,
    ClassObj,
    Container,
    Context,
    External,
    Flow,
    Frame,
    InstanceObj,
    Kernel,
    VSet,
    join,
    only,
    vset,
)
from typed_pallas_mypy.inference.evaluator.expressions import exact_items, truth

if TYPE_CHECKING:
    from typed_pallas_mypy.inference.evaluator.machine import Machine
    from typed_pallas_mypy.inference.evaluator.statements import Exit, Statements

#: Items of a known sequence a ``for`` runs its body for, one by one, before it runs it once for all.
_UNROLL: Final = 16


class ControlFlow:
    """The control-flow cases of the evaluator (one ``Machine`` each)."""

    def __init__(self, machine: Machine) -> None:
        self.m = machine

    @property
    def st(self) -> Statements:
        return self.m.statements

    def _If(self, stmt: ast.If, frame: Frame, flow: Flow) -> None:
        test = truth(self.m.expressions.evaluate(stmt.test, frame, flow))
        if _is_type_checking(stmt.test):
            test = False
        if test is True:
            self.st.block(stmt.body, frame, flow)
        elif test is False:
            self.st.block(stmt.orelse, frame, flow)
        elif flow.live:
            self.st.either(
                frame,
                flow,
                [
                    lambda f: self.st.block(stmt.body, frame, f),
                    lambda f: self.st.block(stmt.orelse, frame, f),
                ],
            )

    def _For(self, stmt: ast.For | ast.AsyncFor, frame: Frame, flow: Flow) -> None:
        iterable = self.m.expressions.evaluate(stmt.iter, frame, flow)
        if not flow.live:
            return
        items = self.m.iteration.iterate(iterable, flow)
        self._loop(
            stmt,
            frame,
            flow,
            items,
            lambda item, f: self.st.bind_target(stmt.target, item, frame, f),
        )

    _AsyncFor = _For

    def _While(self, stmt: ast.While, frame: Frame, flow: Flow) -> None:
        """Iterations whose condition is known run one by one (up to ``_UNROLL``); from
        the first whose condition is not known, the body runs zero or more times."""
        for _ in range(_UNROLL):
            test = truth(self.m.expressions.evaluate(stmt.test, frame, flow))
            if not flow.live:
                return
            if test is False:
                self.st.block(stmt.orelse, frame, flow)
                return
            if test is None:
                break
            if not self._one_iteration(stmt, frame, flow):
                return
        else:
            if truth(self.m.expressions.evaluate(stmt.test, frame, flow)) is True:
                # still true after the iterations followed: it ends by a break or never
                self._loop(stmt, frame, flow, [NOTHING], lambda item, f: None, forever=True)
                return
        self._loop(stmt, frame, flow, None, lambda item, f: None)

    def _one_iteration(self, stmt: ast.While, frame: Frame, flow: Flow) -> bool:
        """One iteration of a ``while`` whose condition holds; False when it left the loop
        (a ``break``: the ways that broke are joined here, the loop is over)."""
        exit_ = self.st._exit(frame)
        saved = (list(exit_.breaks), list(exit_.continues)) if exit_ is not None else None
        if exit_ is not None:
            exit_.breaks.clear()
            exit_.continues.clear()
        self.st.block(stmt.body, frame, flow)
        broke = False
        if exit_ is not None and saved is not None:
            going_on = [(dict(frame.vars), flow.ran)] if flow.live else []
            going_on.extend(exit_.continues)
            if exit_.breaks:
                # a way that breaks leaves the loop; the loop is taken as over for the
                # ways that go on too (their next iterations are not followed)
                broke = True
                self.st._merge(frame, flow, dict(frame.vars), [*going_on, *exit_.breaks])
            elif exit_.continues:
                self.st._merge(frame, flow, dict(frame.vars), going_on)
            exit_.breaks[:] = saved[0]
            exit_.continues[:] = saved[1]
        return flow.live and not broke

    def _loop(
        self,
        stmt: ast.For | ast.AsyncFor | ast.While,
        frame: Frame,
        flow: Flow,
        items: list[VSet] | None,
        bind: Callable[[VSet, Flow], None],
        *,
        forever: bool = False,
    ) -> None:
        """A loop's body once per known item (``items``), or zero or more times."""
        exit_ = self.st._exit(frame)
        saved = (list(exit_.breaks), list(exit_.continues)) if exit_ is not None else None
        if exit_ is not None:
            exit_.breaks.clear()
            exit_.continues.clear()

        def once(item: VSet, f: Flow) -> None:
            bind(item, f)
            self.st.block(stmt.body, frame, f)
            if exit_ is not None and exit_.continues:
                ends = [(dict(frame.vars), f.ran)] if f.live else []
                ends.extend(exit_.continues)
                exit_.continues.clear()
                self.st._merge(frame, f, dict(frame.vars), ends)

        if items is not None and len(items) <= _UNROLL and not forever:
            for item in items:
                if not flow.live:
                    break
                once(item, flow)
        elif forever:
            once(NOTHING, flow)
            flow.live = False
        else:
            item = join(*items) if items else ANYTHING
            self.st.maybe(frame, flow, lambda f: once(item, f) or NOTHING)  # type: ignore[func-returns-value]
        breaks = list(exit_.breaks) if exit_ is not None else []
        if flow.live and stmt.orelse:
            self.st.block(stmt.orelse, frame, flow)
        if breaks:
            ends = [(dict(frame.vars), flow.ran)] if flow.live else []
            ends.extend(breaks)
            self.st._merge(frame, flow, dict(frame.vars), ends)
        if exit_ is not None and saved is not None:
            exit_.breaks[:] = saved[0]
            exit_.continues[:] = saved[1]

    def _With(self, stmt: ast.With | ast.AsyncWith, frame: Frame, flow: Flow) -> None:
        swallowed: list[VSet] = []
        interprets = 0  # managers under which every kernel may run interpreted
        for item in stmt.items:
            manager = self.m.expressions.evaluate(item.context_expr, frame, flow)
            entered = self.m.calls.enter(manager, flow)
            if item.optional_vars is not None:
                self.st.bind_target(item.optional_vars, entered, frame, flow)
            kinds = self._swallows(manager, flow)
            if kinds is not None:
                swallowed.append(kinds)
            interprets += any(isinstance(v, Context) and v.interprets for v in manager)
        self.m.interpreting += interprets
        try:
            self._with_body(stmt, frame, flow, swallowed)
        finally:
            self.m.interpreting -= interprets

    def _with_body(
        self, stmt: ast.With | ast.AsyncWith, frame: Frame, flow: Flow, swallowed: list[VSet]
    ) -> None:
        """A ``with`` statement's body, with the exceptions its managers swallow."""
        exit_ = self.st._exit(frame)
        if not swallowed or exit_ is None:
            self.st.block(stmt.body, frame, flow)
            return
        # the exceptions a manager swallows go on after the block, as a handler would
        raised_before = len(exit_.raises)
        start_vars = dict(frame.vars)
        self.st.block(stmt.body, frame, flow)
        ends = [(dict(frame.vars), flow.ran)] if flow.live else []
        kept: list[tuple[VSet, dict[str, VSet], frozenset[Kernel]]] = []
        for raised, vars_, ran in exit_.raises[raised_before:]:
            verdicts = [library.exception_matches(raised, kinds) for kinds in swallowed]
            if any(v is True for v in verdicts):
                ends.append((vars_, ran))
            elif any(v is None for v in verdicts):
                ends.append((vars_, ran))
                kept.append((raised, vars_, ran))
            else:
                kept.append((raised, vars_, ran))
        del exit_.raises[raised_before:]
        exit_.raises.extend(kept)
        self.st._merge(frame, flow, start_vars, ends)

    def _swallows(self, manager: VSet, flow: Flow) -> VSet | None:
        """The exception classes a context manager's exit swallows (``contextlib.suppress``,
        an ``__exit__`` that returns true); None when it swallows none."""
        one = only(manager)
        if isinstance(one, InstanceObj) and one.cls == External("contextlib.suppress"):
            return one.attrs.get("kinds", ANYTHING)
        if isinstance(one, InstanceObj) and isinstance(one.cls, ClassObj):
            method = self.m.expressions.class_attribute(
                one.cls, one.cls, "__exit__", flow, instance=one
            )
            if method == ANYTHING:
                return None
            probe = Flow()
            result = self.m.calls.call(method, [ANYTHING, ANYTHING, ANYTHING], {}, probe)
            if probe.live and truth(result) is True:
                return vset(External("builtins.BaseException"))
        return None

    _AsyncWith = _With

    def _Try(self, stmt: ast.Try, frame: Frame, flow: Flow) -> None:
        exit_ = self.st._exit(frame)
        if exit_ is None:
            self.st.block(stmt.body, frame, flow)
            return
        raised_before = len(exit_.raises)
        returned_before = len(exit_.returns)
        handler_kinds = [
            self.m.expressions.evaluate(handler.type, frame, flow)
            if handler.type is not None
            else ANYTHING
            for handler in stmt.handlers
        ]
        start_vars = dict(frame.vars)
        start_ran = flow.ran
        catching = int(_catches_refusals(handler_kinds))
        self.m.catching += catching
        try:
            self.st.block(stmt.body, frame, flow)
        finally:
            self.m.catching -= catching
        if catching and self._may_refuse(flow, exit_, start_ran, raised_before, returned_before):
            # run eagerly, a kernel is lowered when it is called and its refusal is raised
            # there, into the handlers, with what the body bound not known; traced (by
            # ``jax.jit``...), the refusal comes at lowering, outside the ``try``: the
            # body's way keeps its kernels. The caller refuses when both ways do.
            midway = _midway(start_vars, frame.vars)
            exit_.raises.insert(raised_before, (_REFUSAL_RAISED, midway, start_ran))
        if flow.live and stmt.orelse:
            self.st.block(stmt.orelse, frame, flow)
        body_end = (dict(frame.vars), flow.ran) if flow.live else None
        new_raises = exit_.raises[raised_before:]
        del exit_.raises[raised_before:]
        ends: list[tuple[dict[str, VSet], frozenset[Kernel]]] = []
        if body_end is not None:
            ends.append(body_end)
        may = set(flow.may_ran)
        unhandled: list[tuple[VSet, dict[str, VSet], frozenset[Kernel]]] = []
        for raised, vars_, ran in new_raises:
            caught = False
            for handler, kinds in zip(stmt.handlers, handler_kinds, strict=True):
                match = library.exception_matches(raised, kinds)
                if match is False:
                    continue
                self.st.restore(frame, vars_)
                flow.live, flow.ran = True, ran
                if handler.name is not None:
                    self.st.bind_name(
                        handler.name, raised if match is True else join(raised, ANYTHING), frame
                    )
                self.st.block(handler.body, frame, flow)
                may |= flow.may_ran
                if flow.live:
                    ends.append((dict(frame.vars), flow.ran))
                if match is True:
                    caught = True
                    break
            if not caught:
                unhandled.append((raised, vars_, ran))
        if not ends:
            self.st.restore(frame, start_vars)
            flow.live = False
            flow.ran = start_ran
        else:
            self.st._merge(frame, flow, start_vars, ends)
        flow.may_ran = frozenset(may)
        exit_.raises.extend(unhandled)
        if stmt.finalbody:
            if flow.live:
                self.st.block(stmt.finalbody, frame, flow)
            else:
                # the path left by return or raise: the finally block still runs (its
                # effects on names matter to nothing after it)
                probe = Flow(ran=flow.ran)
                self.st.block(stmt.finalbody, frame, probe)
            self._finally_on_returns(stmt, frame, exit_, returned_before)

    def _may_refuse(
        self,
        flow: Flow,
        exit_: Exit,
        start_ran: frozenset[Kernel],
        raised_before: int,
        returned_before: int,
    ) -> bool:
        """Whether a kernel the ``try`` body ran (or may have run) may refuse this
        machine's platform, at some JAX release the project checks."""
        from typed_pallas_mypy.inference.evaluator.verdict import may_refuse

        kernels = set(flow.ran | flow.may_ran) - start_ran
        for _, ran, may in exit_.returns[returned_before:]:
            kernels |= ran | may
        for _, _, ran in exit_.raises[raised_before:]:
            kernels |= ran
        return any(may_refuse(kernel, self.m.platform) for kernel in kernels)

    def _finally_on_returns(
        self, stmt: ast.Try, frame: Frame, exit_: Exit, returned_before: int
    ) -> None:
        """A ``return`` in the ``try`` (or a handler, or ``else``) runs the ``finally``
        block before the function returns: what that block runs on every path is run on
        the way out of each such ``return`` too."""
        returned = len(exit_.returns)
        if returned == returned_before:
            return
        way_out = Flow()
        self.st.block(stmt.finalbody, frame, way_out)
        if not way_out.live:
            return
        for i in range(returned_before, returned):
            value, ran, may = exit_.returns[i]
            exit_.returns[i] = (value, ran | way_out.ran, may | way_out.ran | way_out.may_ran)

    _TryStar = _Try

    def _Match(self, stmt: ast.Match, frame: Frame, flow: Flow) -> None:
        subject = self.m.expressions.evaluate(stmt.subject, frame, flow)
        self._cases(stmt.cases, 0, subject, frame, flow)

    def _cases(
        self, cases: list[ast.match_case], index: int, subject: VSet, frame: Frame, flow: Flow
    ) -> None:
        """``match`` from case ``index`` on: a case that surely matches (pattern and guard)
        runs alone; one that may match runs as one way, the later cases as the other."""
        if index == len(cases) or not flow.live:
            return
        case = cases[index]
        matched = library.pattern_matches(self.m, case.pattern, subject, frame)
        if matched is False:
            self._cases(cases, index + 1, subject, frame, flow)
            return

        def this_case(f: Flow) -> None:
            self._bind_pattern(case.pattern, subject, frame, f)
            guard = (
                True
                if case.guard is None
                else truth(self.m.expressions.evaluate(case.guard, frame, f))
            )
            if guard is True:
                self.st.block(case.body, frame, f)
            elif guard is False:
                self._cases(cases, index + 1, subject, frame, f)
            else:
                self.st.either(
                    frame,
                    f,
                    [
                        lambda g: self.st.block(case.body, frame, g),
                        lambda g: self._cases(cases, index + 1, subject, frame, g),
                    ],
                )

        if matched is True:
            this_case(flow)
        else:
            self.st.either(
                frame, flow, [this_case, lambda f: self._cases(cases, index + 1, subject, frame, f)]
            )

    def _bind_pattern(self, pattern: ast.pattern, subject: VSet, frame: Frame, flow: Flow) -> None:
        if isinstance(pattern, ast.MatchAs):
            if pattern.pattern is not None:
                self._bind_pattern(pattern.pattern, subject, frame, flow)
            if pattern.name is not None:
                self.st.bind_name(pattern.name, subject, frame)
        elif isinstance(pattern, ast.MatchOr):
            for name in _pattern_names(pattern):
                self.st.bind_name(name, ANYTHING, frame)
        elif isinstance(pattern, ast.MatchSequence):
            items = exact_items(subject)
            for i, sub in enumerate(pattern.patterns):
                if isinstance(sub, ast.MatchStar):
                    if sub.name is not None:
                        self.st.bind_name(sub.name, ANYTHING, frame)
                    items = None
                    continue
                item = items[i] if items is not None and i < len(items) else ANYTHING
                self._bind_pattern(sub, item, frame, flow)
        elif isinstance(pattern, ast.MatchMapping):
            mapping = only(subject)
            for key_node, sub in zip(pattern.keys, pattern.patterns, strict=True):
                value = ANYTHING
                if isinstance(mapping, Container) and mapping.kind == "dict":
                    key = only(self.m.expressions.evaluate(key_node, frame, flow))
                    if key is not None:
                        value = self.m.expressions.subscript(subject, vset(key), flow) or ANYTHING
                self._bind_pattern(sub, value, frame, flow)
            if pattern.rest is not None:
                self.st.bind_name(pattern.rest, ANYTHING, frame)
        elif isinstance(pattern, ast.MatchClass):
            for sub, value in library.class_pattern_fields(self.m, pattern, subject):
                self._bind_pattern(sub, value, frame, flow)
        elif isinstance(pattern, ast.MatchStar) and pattern.name is not None:
            self.st.bind_name(pattern.name, ANYTHING, frame)


def _is_type_checking(test: ast.expr) -> bool:
    if isinstance(test, ast.Name):
        return test.id == "TYPE_CHECKING"
    return isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def _pattern_names(pattern: ast.pattern) -> list[str]:
    names: list[str] = []
    for node in ast.walk(pattern):
        if (isinstance(node, ast.MatchAs) and node.name is not None) or (
            isinstance(node, ast.MatchStar) and node.name is not None
        ):
            names.append(node.name)
        elif isinstance(node, ast.MatchMapping) and node.rest is not None:
            names.append(node.rest)
    return names


#: what JAX raises when it refuses to lower a kernel: ``ValueError`` (its params'
#: platform check, and at jax 0.10 a missing lowering) or an empty ``AssertionError``
#: (jax 0.12's GPU lowering), each measured at both ends
_REFUSALS: Final = (External("builtins.ValueError"), External("builtins.AssertionError"))


def _catches_refusals(handler_kinds: list[VSet]) -> bool:
    """Whether a handler of the ``try`` may catch a lowering refusal."""
    return any(
        library.exception_matches(vset(refusal), kinds) is not False
        for kinds in handler_kinds
        for refusal in _REFUSALS
    )


#: the refusal a ``try`` body's kernel may raise when run eagerly: either kind
_REFUSAL_RAISED: Final = frozenset(_REFUSALS)


def _midway(start: dict[str, VSet], now: dict[str, VSet]) -> dict[str, VSet]:
    """The names of a frame where a ``try`` body stopped part way: as they were before it,
    and those the body bound may be anything (bound or not yet)."""
    out = dict(start)
    for name, value in now.items():
        before = start.get(name)
        if before is not value:
            out[name] = ANYTHING if before is None else join(before, ANYTHING)
    return out
