"""Iteration as Python does it: the items a container, a generator, a class's
``__iter__``, an enum or a library iterator (``map``, ``itertools.starmap``...) gives, in
order, running what producing them runs.

What it does not do: call functions (``calls``), or know what a library callable returns
(``library`` makes its iterators; ``jax_api.ApiRow.iterator`` says what each yields).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from typed_pallas_mypy.inference.evaluator import journal, library
from typed_pallas_mypy.inference.evaluator.domain import (
    DEVICE,
    NONE,
    ClassObj,
    Const,
    Container,
    Devices,
    Flow,
    GeneratorObj,
    InstanceObj,
    VSet,
    only,
    vset,
)
from typed_pallas_mypy.inference.evaluator.expressions import defines, exact_items

if TYPE_CHECKING:
    from typed_pallas_mypy.inference.evaluator.machine import Machine


class Iteration:
    """The iteration cases of the evaluator (one ``Machine`` each)."""

    def __init__(self, machine: Machine) -> None:
        self.m = machine

    def iterate(self, values: VSet, flow: Flow) -> list[VSet] | None:
        """The items iterating ``values`` gives, in order, when they are known (and run
        what producing them runs); None when they are not."""
        one = only(values)
        if isinstance(one, Container):
            if not one.exact:
                return None
            if one.kind == "dict":
                return [vset(k) for k, _ in one.entries]
            return list(one.items)
        if isinstance(one, Const) and isinstance(one.value, (tuple, str)):
            return [vset(Const(v)) for v in one.value]
        if isinstance(one, Devices):
            return [vset(DEVICE)]
        if isinstance(one, GeneratorObj):
            return self._generator_items(one, flow)
        if (
            isinstance(one, InstanceObj)
            and isinstance(one.cls, ClassObj)
            and "enum" in one.cls.flags
        ):
            return None
        if isinstance(one, ClassObj) and "enum" in one.flags:
            return [v for k, v in one.attrs.items() if any(isinstance(x, InstanceObj) for x in v)]
        if (
            isinstance(one, InstanceObj)
            and one.store is not None
            and isinstance(one.cls, ClassObj)
            and not defines(one.cls, "__iter__")
        ):
            return self.iterate(vset(one.store), flow)  # a dict, list or set subclass's items
        if (
            isinstance(one, InstanceObj)
            and isinstance(one.cls, ClassObj)
            and defines(one.cls, "__iter__")
        ):
            # ``for x in obj``: Python iterates what ``obj.__iter__()`` returns
            method = self.m.expressions.class_attribute(
                one.cls, one.cls, "__iter__", flow, instance=one
            )
            iterator = self.m.calls.call(method, [], {}, flow)
            if one in iterator or not flow.live:
                return None  # an iterator of its own (``__next__``): not followed
            return self.iterate(iterator, flow)
        return None

    def _generator_items(self, gen: GeneratorObj, flow: Flow) -> list[VSet] | None:
        """Every item ``gen`` has left, running what producing them runs."""
        produced = self.produce(gen, flow, None)
        return produced

    def produce(self, gen: GeneratorObj, flow: Flow, count: int | None) -> list[VSet] | None:
        """The next ``count`` items of ``gen`` (all that are left when None), running
        what producing them runs on ``flow``; None when they are not known. Taking them
        moves the generator on."""
        m = self.m
        journal.touch(gen)
        start = gen.position
        if gen.lazy:
            return self._lazy_items(gen, flow, count)
        if gen.gen_expr is not None and gen.frame is not None:
            rows, exact, _ = m.expressions.comprehension_items(
                gen.gen_expr.generators, [gen.gen_expr.elt], gen.frame, flow
            )
            if not exact:
                return None
            taken = [row[0] for row in rows][start:]
            taken = taken if count is None else taken[:count]
            gen.position += len(taken)
            return taken
        outcome = self.m.calls.run_generator(gen)
        flow.may_ran = flow.may_ran | outcome.may_ran
        rans = outcome.extra.get("yield_rans")
        values = outcome.extra.get("yield_items")
        if not isinstance(values, list) or not isinstance(rans, list):
            if outcome.yield_ran is not None and start == 0:
                flow.ran = flow.ran | outcome.yield_ran
            return None
        end = len(values) if count is None else min(len(values), start + count)
        if count is None:
            flow.ran = flow.ran | outcome.ran  # taken to the end: the body ran to its end
        elif end > start:
            flow.ran = flow.ran | rans[end - 1]
        gen.position = end
        return values[start:end]

    def _lazy_items(self, gen: GeneratorObj, flow: Flow, count: int | None) -> list[VSet] | None:
        """The next items of a library iterator (``GeneratorObj.lazy``: the
        ``jax_api.ApiRow.iterator`` kind), calling its function as each is taken."""
        if gen.source is None:
            self.m.statements.maybe_detached(
                flow, lambda f: self.m.calls.call(gen.func, [], {}, f, star_unknown=True)
            )
            return None
        kind = gen.lazy
        items: list[VSet] = []
        if kind == "accumulate" and gen.position == 0 and gen.initial is not None:
            gen.total = gen.initial
            items.append(gen.initial)
        for index in range(gen.position, len(gen.source)):
            if count is not None and len(items) >= count:
                break
            item = gen.source[index]
            gen.position += 1
            if kind == "accumulate":
                if gen.total is None:
                    gen.total = item
                else:
                    gen.total = self.m.calls.call(gen.func, [gen.total, item], {}, flow)
                items.append(gen.total)
                continue
            if kind == "dropwhile" and gen.taking:
                items.append(item)
                continue
            unpacked = exact_items(item) if kind == "starmap" else [item]
            decided = Flow()
            if gen.func == vset(NONE):  # ``filter(None, items)``: the items' own truth
                result = item
            else:
                result = self.m.calls.call(
                    gen.func, unpacked or [], {}, decided, star_unknown=unpacked is None
                )
            ran, may_ran = decided.ran, decided.may_ran
            if gen.read_by_python:  # its results only decide: what it traces is dead code
                ran, may_ran = library.unused(ran), library.unused(may_ran)
            flow.ran, flow.may_ran = flow.ran | ran, flow.may_ran | may_ran
            if not decided.live:
                flow.live = False
                return items
            if kind in ("map", "starmap"):
                items.append(result)
                continue
            kept = library.kept_by_filter(gen.func, item, result)
            if kept is None:
                return None
            if kind == "filterfalse":
                kept = not kept
            if kind == "takewhile" and not kept:
                gen.position = len(gen.source)  # exhausted
                break
            if kind == "dropwhile":
                if not kept:
                    gen.taking = True
                    items.append(item)
                continue
            if kept:
                items.append(item)
        return items
