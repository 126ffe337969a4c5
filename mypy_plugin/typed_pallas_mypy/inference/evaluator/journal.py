"""Undoing a question's heap writes, so that one run of a package's imports serves many
questions.

A question about a module (``questions.module_findings``) runs the module's imports,
then each of its functions with unknown arguments. Running the imports of a large
package costs far more than the functions, and is the same for every module the
package's own import runs; so the machine that ran them is kept, and each question's
function runs are recorded here: before a write to a heap object or frame that existed
when the question began, its state is saved once (``touch``), and ``restore`` puts every
saved state back in place (the same dicts and lists, which other objects share), so the
next question starts from the state after the imports, as a fresh machine would.

What it does not do: undo writes to objects made during the question (they are
unreachable afterwards), or keep the machine's own tables (``machine.Machine.recording``
does that).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator

from typed_pallas_mypy.inference.evaluator.domain import (
    ClassObj,
    Container,
    Frame,
    GeneratorObj,
    ModuleObj,
    Obj,
    VSet,
)


class Journal:
    """The saved states of what a question wrote and existed before it (``start``)."""

    def __init__(self, start: int) -> None:
        self.start = start
        self.undo: dict[int, Callable[[], None]] = {}

    def touch(self, target: Obj | Frame) -> None:
        """Save ``target``'s state before its first write, when it predates the question."""
        if target.serial < self.start and id(target) not in self.undo:
            self.undo[id(target)] = _saved(target)

    def restore(self) -> None:
        """Put every saved state back, in the same containers."""
        for undo in self.undo.values():
            undo()
        self.undo.clear()


def _saved(target: Obj | Frame) -> Callable[[], None]:
    """What puts ``target`` back as it is now."""
    if isinstance(target, Frame):
        names = dict(target.vars)
        return lambda: _refill(target.vars, names)
    attrs = dict(target.attrs)
    if isinstance(target, Container):
        items, entries = list(target.items), list(target.entries)
        exact, loose, factory = target.exact, target.loose, target.factory
        values_known = target.values_known

        def container() -> None:
            _refill(target.attrs, attrs)
            target.items[:] = items
            target.entries[:] = entries
            target.exact, target.loose, target.factory = exact, loose, factory
            target.values_known = values_known

        return container
    if isinstance(target, GeneratorObj):
        position, taking, total = target.position, target.taking, target.total

        def generator() -> None:
            _refill(target.attrs, attrs)
            target.position, target.taking, target.total = position, taking, total

        return generator
    if isinstance(target, ClassObj):
        fields = None if target.fields is None else list(target.fields)
        flags = set(target.flags)
        pytree = target.pytree

        def cls() -> None:
            _refill(target.attrs, attrs)
            target.fields = fields
            target.flags.clear()
            target.flags.update(flags)
            target.pytree = pytree

        return cls
    if isinstance(target, ModuleObj):
        done = target.done

        def module() -> None:
            _refill(target.attrs, attrs)
            target.done = done

        return module
    return lambda: _refill(target.attrs, attrs)


def _refill(current: dict[str, VSet], saved: dict[str, VSet]) -> None:
    current.clear()
    current.update(saved)


#: the journal of the question running now (the evaluator runs one question at a time)
_active: list[Journal] = []


def touch(target: Obj | Frame) -> None:
    """About to write ``target``: save it in the running question's journal, if any."""
    if _active:
        _active[-1].touch(target)


def written() -> bool:
    """Whether the running question has written anything that existed before it."""
    return bool(_active and _active[-1].undo)


@contextlib.contextmanager
def recording(start: int) -> Iterator[Journal]:
    """Record the writes made until the block ends to what existed before ``start``."""
    journal = Journal(start)
    _active.append(journal)
    try:
        yield journal
    finally:
        _active.pop()
