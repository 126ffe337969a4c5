"""Which function summaries of a module's previous reading still hold after an edit.

mypy's daemon (and the language server) reads a project module again after every edit,
and summarising its functions is most of what the inference does then; an edit changes
one function, most summaries come out the same. ``ReuseKeys.key(qualname)`` is a digest
of everything in the module a function's summary can depend on, so that a summary
worked out under the same key is the summary (``_ModuleReader.summary`` takes it from
the previous reading).

A summary is read from the module alone (``model.Functions``: no other module, and no
state that depends on the order of questions), from:

* the top-level statement the function is in (a ``def`` or a ``class``: its methods,
  nested functions and lambdas share it), with its first line: a summary holds lines;
* the module's other top-level statements that are not a plain ``def`` or ``class``
  (imports, assignments, ``if`` blocks...: what names stand for), with their lines;
* every top-level ``def`` or ``class`` whose name those write, and the ones whose names
  those write in turn (a kernel's body evidence follows its calls of the module's
  functions; a guard helper's condition follows the helpers it calls);
* for a name bound at the top level once, to a dictionary or a call's result, and
  written in one of those definitions: every statement that writes it (a memoized build
  reads every use of its cache dictionary).

Names are found as words in the statements' source, so a word in a string or a comment
only makes the key wider (a summary worked out again), never narrower. A module that
has a ``global`` statement anywhere gives no keys: a function can then rebind a module-level name
from its body; nor does one whose source is not ASCII: Python reads ``ｆoo`` as ``foo``,
which the words would not find. Nor does a function whose top-level statement is not a plain ``def`` or
``class`` (one defined under an ``if``), or whose name is bound more than once.

What it does not do: keep summaries (the reader does), or shift lines: a summary is
reused only at the lines it was read at (an edit that keeps every line where it was, or
a function above which nothing moved).
"""

from __future__ import annotations

import ast
import hashlib
import re
from collections.abc import Mapping, Sequence
from typing import Final

_WORD: Final = re.compile(rb"[A-Za-z_][A-Za-z_0-9]*")
_GLOBAL: Final = re.compile(rb"\bglobal\b")
_DEFINITIONS: Final = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


class ReuseKeys:
    """The reuse key of each function summary of one module (``key``).

    ``raw``: the reader's module-level bindings by name (``_ModuleReader.raw``): which
    names may be a cache that other functions fill."""

    def __init__(
        self,
        tree: ast.Module,
        source: bytes,
        raw: Mapping[str, Sequence[tuple[str, object]]],
        pallas: bool,
    ) -> None:
        self._off = not source.isascii() or (
            _GLOBAL.search(source) is not None
            and any(isinstance(node, ast.Global) for node in ast.walk(tree))
        )
        lines = source.splitlines(keepends=True)
        #: (first line with decorators, text, words) of each top-level statement
        self._statements: list[tuple[int, bytes, frozenset[bytes]]] = []
        #: name -> indices of the plain top-level definitions binding it
        self._defined: dict[bytes, list[int]] = {}
        environment_list: list[int] = []
        for stmt in tree.body:
            first = min([stmt.lineno, *(d.lineno for d in getattr(stmt, "decorator_list", ()))])
            last = stmt.end_lineno or stmt.lineno
            text = b"".join(lines[first - 1 : last])
            index = len(self._statements)
            self._statements.append((first, text, frozenset(_WORD.findall(text))))
            if isinstance(stmt, _DEFINITIONS):
                self._defined.setdefault(stmt.name.encode(), []).append(index)
            else:
                environment_list.append(index)
        #: names that may be a cache (bound once, to a dictionary or a call's result):
        #: every statement writing one counts
        caches = frozenset(
            name.encode()
            for name, bindings in raw.items()
            if len(bindings) == 1
            and bindings[0][0] == "assign"
            and isinstance(bindings[0][1], (ast.Dict, ast.Call))
        )
        #: names bound at the top level by something else than an import only: a
        #: statement writing one may say what it stands for (an alias, a ``defvjp``)
        linkable = frozenset(
            name.encode()
            for name, bindings in raw.items()
            if any(kind != "import" for kind, _ in bindings)
        )
        environment = frozenset(environment_list)
        #: per statement: the statements its names lead to (the definitions of the names
        #: it writes, the environment's statements writing them, a cache's writers)
        mentioning: dict[bytes, list[int]] = {}
        writers: dict[bytes, list[int]] = {}
        for at, (_, _, words) in enumerate(self._statements):
            for word in words & linkable if at in environment else ():
                mentioning.setdefault(word, []).append(at)
            for word in words & caches:
                writers.setdefault(word, []).append(at)
        self._links: list[frozenset[int]] = []
        for at, (_, _, words) in enumerate(self._statements):
            linked: set[int] = set()
            for word in words & linkable:
                linked.update(self._defined.get(word, ()))
                linked.update(mentioning.get(word, ()))
                if at not in environment and word in caches:
                    linked.update(writers[word])
            linked.discard(at)
            self._links.append(frozenset(linked))
        self._environment = environment
        #: the digest of the environment (every statement not a definition: what names
        #: stand for), which every key starts from
        self._base_digest = hashlib.blake2b(b"pallas" if pallas else b"-", digest_size=20)
        self._update(self._base_digest, sorted(environment))
        self._keys: dict[int, bytes] = {}

    def key(self, qualname: str) -> bytes | None:
        """The digest a summary of ``qualname`` depends on; None when none is safe."""
        if self._off:
            return None
        top = qualname.split(".", 1)[0].encode()
        found = self._defined.get(top)
        if found is None or len(found) != 1:
            return None
        index = found[0]
        key = self._keys.get(index)
        if key is None:
            extra = self._closure(index) - self._environment
            digest = self._base_digest.copy()
            digest.update(b"\1%d" % index)
            self._update(digest, sorted(extra))
            key = self._keys[index] = digest.digest()
        return key

    def _closure(self, index: int) -> set[int]:
        """The statement ``index`` and every statement it leads to (``_links``)."""
        included = {index}
        frontier = [index]
        while frontier:
            for other in self._links[frontier.pop()]:
                if other not in included:
                    included.add(other)
                    frontier.append(other)
        return included

    def _update(self, digest: hashlib.blake2b, statements: list[int]) -> None:
        for at in statements:
            first, text, _ = self._statements[at]
            digest.update(b"\0%d\0%d\0" % (first, len(text)))
            digest.update(text)
