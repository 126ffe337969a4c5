"""Which modules can reach a Pallas kernel: a cheap bound on what a question can find.

A function runs only what its module can reach when the evaluator runs it: the module
itself, the packages above it (Python imports a parent before its modules), and what
each of those imports, anywhere in its text (at the top, in a function, under a guard,
relative, ``importlib.import_module("literal")``, ``__import__("literal")``), and so on.
A kernel is made only by a Pallas entry point, and the source that calls one names
Pallas (``from jax.experimental import pallas as pl``, ``jax.pallas``, a library that
says ``pallas`` in its imports): a module *touches Pallas* when its text contains
``pallas``. So a function whose module reaches no module that touches Pallas runs no
kernel, and has no requirement, without a run.

Imports are read from the text, not parsed: a word in a string or a comment that looks
like an import is an edge too. Reading too much costs only a question; reading too
little would hide a kernel, so an import whose name is not a literal
(``import_module(name)``) reaches everything.

What it does not do: run anything, or read jax's or the standard library's modules (the
``source`` gives None for them: they are tables, and jax's Pallas modules are named by
the modules that import them).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Final

#: a module's source: (path, is a package, text), or None (not found, or not read)
Source = Callable[[str], tuple[str, bool, str] | None]

#: ``import a.b as c, d`` (after a line start or ``;``): the names
_IMPORT: Final = re.compile(r"(?:^|;)[ \t]*import[ \t]+([\w.][\w. \t,]*)", re.MULTILINE)
#: ``from .a import (b, c)``: the dots, the module, the names (one line, or in brackets)
_FROM: Final = re.compile(
    r"(?:^|;)[ \t]*from[ \t]+(\.*)[ \t]*([\w.]*)[ \t]+import[ \t]+(\([^)]*\)|[^\n;#]*)",
    re.MULTILINE,
)
#: ``importlib.import_module(...)`` or ``__import__(...)``: a literal name (and a
#: literal package for a relative one), or something else
_DYNAMIC: Final = re.compile(
    r"\b(?:import_module|__import__)\(\s*(?:(['\"])([\w.]+)\1(?:\s*,\s*(['\"])([\w.]*)\3)?)?"
)
_WORD: Final = re.compile(r"[A-Za-z_]\w*(?:\.[A-Za-z_]\w*)*")


def absolute_module(level: int, name: str, package: str) -> str | None:
    """The module a relative import names: ``level`` dots in ``package`` (the importing
    module's package), then ``name``; None when the dots go above the top."""
    if not level:
        return name or None
    parts = package.split(".") if package else []
    if level - 1 > len(parts):
        return None
    base = parts[: len(parts) - (level - 1)]
    if name:
        base.append(name)
    return ".".join(base) or None


def imported_modules(module: str, is_package: bool, text: str) -> tuple[frozenset[str], bool]:
    """The modules ``text`` (the source of ``module``) may import, each a candidate
    (``from a import b`` names ``a`` and ``a.b``), and whether it imports a module whose
    name is not written in it."""
    package = module if is_package else module.rpartition(".")[0]
    found: set[str] = set()
    for match in _IMPORT.finditer(text):
        for item in match.group(1).split(","):
            words = item.split()
            if words and _WORD.fullmatch(words[0]):
                found.add(words[0])
    for match in _FROM.finditer(text):
        base = absolute_module(len(match.group(1)), match.group(2), package)
        if base is None:
            continue
        found.add(base)
        for item in match.group(3).strip("()").split(","):
            words = item.split()
            if words and _WORD.fullmatch(words[0]) and "." not in words[0]:
                found.add(f"{base}.{words[0]}")
    dynamic = False
    for match in _DYNAMIC.finditer(text):
        name = match.group(2)
        if name is None:
            dynamic = True
            continue
        dots = len(name) - len(name.lstrip("."))
        if dots:
            anchor = match.group(4) if match.group(4) is not None else package
            resolved = absolute_module(dots, name[dots:], anchor)
            if resolved is not None:
                found.add(resolved)
        else:
            found.add(name)
    return frozenset(found), dynamic


def _parents(module: str) -> list[str]:
    parts = module.split(".")
    return [".".join(parts[:i]) for i in range(1, len(parts))]


class PallasReach:
    """Whether a module can reach one that touches Pallas, from its sources (``source``):
    ``may_reach(module)``; ``forget(modules)`` after they changed."""

    def __init__(self, source: Source) -> None:
        self._source = source
        #: module -> (touches Pallas, the modules it may import, imports one not named);
        #: None: not found or not read
        self._read: dict[str, tuple[bool, frozenset[str], bool] | None] = {}
        #: answers of ``may_reach``
        self._answers: dict[str, bool] = {}
        #: for a module that reaches no Pallas, the modules read to say so
        self._read_for: dict[str, frozenset[str]] = {}

    def _facts(self, module: str) -> tuple[bool, frozenset[str], bool] | None:
        if module not in self._read:
            found = self._source(module)
            if found is None:
                self._read[module] = None
            else:
                _, is_package, text = found
                edges, dynamic = imported_modules(module, is_package, text)
                self._read[module] = ("pallas" in text, edges, dynamic)
        return self._read[module]

    def may_reach(self, module: str) -> bool:
        """Whether running ``module`` (its parents first, then its imports, and theirs)
        may run a module that touches Pallas: False only when none of them does."""
        answer = self._answers.get(module)
        if answer is not None:
            return answer
        seen: set[str] = set()
        stack = [module, *_parents(module)]
        while stack:
            name = stack.pop()
            if name in seen:
                continue
            seen.add(name)
            if self._answers.get(name) is False:
                continue  # everything it reaches was seen not to touch Pallas
            facts = self._facts(name)
            if facts is None:
                continue
            touches, edges, dynamic = facts
            if touches or dynamic:
                self._answers[module] = True
                return True
            for edge in edges:
                if edge not in seen:
                    stack.append(edge)
                    stack.extend(p for p in _parents(edge) if p not in seen)
        for name in seen:
            self._answers[name] = False  # each reaches only what this search saw
        self._read_for[module] = frozenset(n for n in seen if self._read.get(n) is not None)
        return False

    def read_for(self, module: str) -> frozenset[str]:
        """The modules whose sources said that ``module`` reaches no Pallas (after
        ``may_reach`` said so): its answer depends on them."""
        return self._read_for.get(module, frozenset({module}))

    def forget(self, modules: frozenset[str] | None) -> None:
        """Forget what was read of ``modules`` (every module when None) and of the
        modules not found (one may be installed since), and every answer."""
        self._answers.clear()
        self._read_for.clear()
        if modules is None:
            self._read.clear()
            return
        for name in [n for n, facts in self._read.items() if facts is None or n in modules]:
            del self._read[name]
