"""What the reader knows of a module's syntax, before reading anything in it: its
scopes and how a name looks up in them, the child lists its walks share, and how a
node's place and spelling are written.

* ``Scope``: a function or lambda (or the module): parameters, the names it binds and
  how, its imports and nested definitions; ``GlobalName`` / ``ParamRef`` / ``LocalName``:
  what a name looks up to (``reader._ModuleReader.lookup``);
* ``ChildIndex``: each node's children listed once (operators and contexts left out);
* ``SourceText``: whether a stretch of the source may define a function, a lambda or a
  ``:=`` (a walk for them is needed only where it may);
* positions (``position_of``, ``end_of``, ``span_of``), ``spelling`` of a dotted
  reference, ``is_opaque_name`` (names never read).

What it does not do: resolve a name (``reader``), or decide anything about platforms.
"""

from __future__ import annotations

import ast
import bisect
import re
import sys
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Final

from typed_pallas_mypy.fullnames import JAX_READ_PREFIX
from typed_pallas_mypy.inference.model import Param

#: How many variable assignments deep a value is followed (an argument, a condition).
NAME_DEPTH: Final = 3

#: Top-level packages whose names are never worth recording as references.
_UNRECORDED_TOPS: Final = frozenset({"builtins", "numpy", "jaxlib", *sys.stdlib_module_names})


FunctionNode = ast.FunctionDef | ast.AsyncFunctionDef


ScopeNode = ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda


Pos = tuple[int, int]


def span_of(node: ast.expr) -> tuple[int, int, int, int]:
    """(line, column, end line, end column): how the plugin names a call's place."""
    return (node.lineno, node.col_offset, node.end_lineno or node.lineno, node.end_col_offset or 0)


def is_opaque_name(fullname: str) -> bool:
    """Names of code never read: builtins, the standard library, numpy, and jax's own
    framework (everything in jax but ``jax.experimental.pallas.ops``)."""
    top = fullname.split(".", 1)[0]
    if top in _UNRECORDED_TOPS:
        return True
    return top == "jax" and not fullname.startswith(JAX_READ_PREFIX)


def end_of(node: ast.AST) -> Pos:
    """Where a statement's effect starts: its end (a binding exists after it)."""
    line = getattr(node, "end_lineno", None)
    col = getattr(node, "end_col_offset", None)
    if line is None or col is None:
        return position_of(node)
    return (line, col)


def position_of(node: ast.AST) -> Pos:
    return (getattr(node, "lineno", 0), getattr(node, "col_offset", 0))


def spelling(expr: ast.AST) -> str:
    """How the source spells a dotted reference (``pltpu.make_async_copy``)."""
    if isinstance(expr, ast.Name):
        return expr.id
    if isinstance(expr, ast.Attribute):
        return f"{spelling(expr.value)}.{expr.attr}"
    if isinstance(expr, ast.Call):
        return f"{spelling(expr.func)}(...)"
    if isinstance(expr, ast.Subscript):
        return f"{spelling(expr.value)}[...]"
    return "<expression>"


@dataclass
class Scope:
    """A function or lambda: its parameters and the names it binds."""

    node: ScopeNode | None
    qualname: str
    parent: Scope | None
    params: dict[str, Param] = field(default_factory=dict)
    param_list: list[Param] = field(default_factory=list)
    #: name -> [(position, value)] of simple assignments ``name = value``
    assigns: dict[str, list[tuple[Pos, ast.expr]]] = field(default_factory=dict)
    #: names bound in other ways (tuple targets, loops, ``with ... as``, walrus...)
    complex: set[str] = field(default_factory=set)
    #: name -> what each ``for name in <iterable>:`` loop binding it iterates over
    loops: dict[str, list[ast.expr]] = field(default_factory=dict)
    #: name -> nested function definitions
    defs: dict[str, list[FunctionNode]] = field(default_factory=dict)
    imports: dict[str, list[str]] = field(default_factory=dict)
    declared_global: set[str] = field(default_factory=set)
    #: the class a method is defined in (qualname), if any
    class_qualname: str | None = None
    is_method: bool = False

    @property
    def self_name(self) -> str | None:
        if self.is_method and self.param_list and self.param_list[0].kind in ("posonly", "pos"):
            return self.param_list[0].name
        return None

    def bound(self, name: str) -> bool:
        return (
            name in self.assigns
            or name in self.complex
            or name in self.defs
            or name in self.imports
        )


#: Name lookup results.
@dataclass(frozen=True)
class GlobalName:
    fullname: str


@dataclass(frozen=True)
class ParamRef:
    scope: Scope
    name: str


@dataclass(frozen=True)
class LocalName:
    scope: Scope
    name: str
    #: bound only by simple assignments
    simple: bool


Lookup = GlobalName | ParamRef | LocalName


#: Fields that hold only an operator or an expression context (``ast.Add``,
#: ``ast.Load``...): nothing the reader looks for, so its walks skip them.
_OPERATOR_FIELDS: Final = frozenset({"op", "ops", "ctx"})


#: node class -> the fields that may hold nodes (``child_nodes``): its fields but
#: ``_OPERATOR_FIELDS`` and those seen holding a name, a number or a string (a field of
#: Python's grammar holds one kind of value: ``Name.id`` is never a node)
_CHILD_FIELDS: dict[type, tuple[str, ...]] = {}


#: The children of a node that has none, shared (most nodes are leaves: names, constants).
_NO_CHILDREN: Final[tuple[ast.AST, ...]] = ()


def child_nodes(node: ast.AST) -> tuple[ast.AST, ...]:
    """The direct children of ``node`` in ``ast.iter_child_nodes``'s order, without the
    operators and expression contexts (``_OPERATOR_FIELDS``)."""
    kind = type(node)
    fields = _CHILD_FIELDS.get(kind)
    if fields is None:
        fields = _CHILD_FIELDS[kind] = tuple(
            name for name in node._fields if name not in _OPERATOR_FIELDS
        )
    out: list[ast.AST] = []
    primitive: list[str] = []
    for name in fields:
        value = getattr(node, name, None)
        if value is None:
            continue
        if value.__class__ is list:
            items = [item for item in value if isinstance(item, ast.AST)]
            if items:
                out.extend(items)
            elif value and value[0] is not None:
                primitive.append(name)  # a list of names (``Global.names``)
        elif isinstance(value, ast.AST):
            out.append(value)
        else:
            primitive.append(name)
    if primitive:
        _CHILD_FIELDS[kind] = tuple(name for name in fields if name not in primitive)
    return tuple(out) if out else _NO_CHILDREN


def walk_nodes(node: ast.AST) -> Iterator[ast.AST]:
    """``node`` and every node under it, as ``ChildIndex.walk`` gives them, listing no
    child: for a tree walked once (a module-level table of literals)."""
    order = [node]
    for current in order:
        yield current
        order.extend(child_nodes(current))


class ChildIndex:
    """The children of the nodes of one tree, each node's listed once: the reader walks
    the same subtrees many times (a function's own nodes, what runs on every path, its
    scan, its trace program, the conditions inside it)."""

    def __init__(self) -> None:
        #: node -> its children, listed on first ask (the reader's busiest loops read
        #: it directly: a method call a node costs more than the lookup)
        self.lists: dict[ast.AST, tuple[ast.AST, ...]] = {}

    def children(self, node: ast.AST) -> tuple[ast.AST, ...]:
        """``node``'s children (``child_nodes``)."""
        found = self.lists.get(node)
        if found is None:
            found = self.lists[node] = child_nodes(node)
        return found

    def walk(self, node: ast.AST) -> list[ast.AST]:
        """``node`` and every node under it, in ``ast.walk``'s order (breadth first;
        operators and expression contexts left out)."""
        lists = self.lists
        order = [node]
        for current in order:  # the list grows as it is read: each level after the last
            found = lists.get(current)
            if found is None:  # ``children``, written out: walks are the reader's loop
                found = lists[current] = child_nodes(current)
            order.extend(found)
        return order

    def own_definitions(
        self, body: Sequence[ast.AST], text: SourceText | None = None
    ) -> list[ast.AST]:
        """The functions, lambdas and ``:=`` expressions of a body that belong to its own
        scope: not those inside a nested function, lambda or class (depth first, last
        statement first). With the module's ``text``, a statement whose lines define
        nothing (``SourceText.may_define``) is not gone into."""
        lists = self.lists
        out: list[ast.AST] = []
        stack: list[ast.AST] = list(body)
        while stack:
            node = stack.pop()
            kind = type(node)
            if kind in _NESTED_SCOPES:
                out.append(node)
                continue
            if kind is ast.ClassDef:
                continue
            if kind is ast.NamedExpr:
                out.append(node)
            elif text is not None and kind in _STATEMENTS and not text.may_define([node]):
                continue
            found = lists.get(node)
            if found is None:
                found = lists[node] = child_nodes(node)
            stack.extend(found)
        return out


#: A word without which no function, lambda or ``:=`` is written (``SourceText``).
_DEFINING_WORD: Final = re.compile(rb"lambda|:=|\bdef\b")


class SourceText:
    """A module's source by line, to tell without a walk that a stretch of it defines
    no function, lambda or ``:=`` (``ChildIndex.own_definitions`` would find nothing):
    none of ``lambda``, ``def`` or ``:=`` is written on its lines. Such a word in a
    string or a comment only costs the walk. Lines are counted as ``ast`` counts them
    (``\\n``, ``\\r\\n`` or ``\\r`` ends one: ``bytes.splitlines``)."""

    def __init__(self, source: bytes) -> None:
        self._source = source
        starts = [0]
        for line in source.splitlines(keepends=True):
            starts.append(starts[-1] + len(line))
        #: line number -> the offset of its first byte (line 1 at index 1)
        self._starts = [0, *starts]
        #: word -> the lines writing it, in order (``may_mention``)
        self._mentions: dict[bytes, list[int]] = {}

    def may_define(self, nodes: Sequence[ast.AST]) -> bool:
        """Whether the lines of ``nodes`` (the first's first to the last's last) may
        define a function, a lambda or a ``:=``."""
        if not nodes:
            return False
        stretch = self._stretch(nodes[0], nodes[-1])
        return stretch is None or _DEFINING_WORD.search(stretch) is not None

    def may_mention(self, node: ast.AST, word: bytes) -> bool:
        """Whether the lines of ``node`` may name ``word`` (a name or an attribute):
        the word is written there, as a whole word (the lines that write it are found
        once a word)."""
        lines = self._mentions.get(word)
        if lines is None:
            pattern = re.compile(rb"\b" + re.escape(word) + rb"\b")
            offsets = [match.start() for match in pattern.finditer(self._source)]
            lines = self._mentions[word] = [
                bisect.bisect_right(self._starts, at) - 1 for at in offsets
            ]
        span = self._lines_of(node, node)
        if span is None:
            return True
        first, last = span
        at = bisect.bisect_left(lines, first)
        return at < len(lines) and lines[at] <= last

    def _stretch(self, first_node: ast.AST, last_node: ast.AST) -> bytes | None:
        """The source from ``first_node``'s first line (its decorators' included) to
        ``last_node``'s last; None where a place is not known."""
        span = self._lines_of(first_node, last_node)
        if span is None:
            return None
        return self._source[self._starts[span[0]] : self._starts[span[1] + 1]]

    def _lines_of(self, first_node: ast.AST, last_node: ast.AST) -> tuple[int, int] | None:
        """``first_node``'s first line (its decorators' included) and ``last_node``'s
        last; None where a place is not known."""
        first = getattr(first_node, "lineno", None)
        for decorator in getattr(first_node, "decorator_list", ()):  # written above it
            first = min(first or decorator.lineno, decorator.lineno)
        last = getattr(last_node, "end_lineno", None)
        if first is None or last is None or not 1 <= first <= last < len(self._starts) - 1:
            return None
        return first, last


#: Every kind of statement (``ChildIndex.own_definitions``).
_STATEMENTS: Final = frozenset(
    kind for kind in vars(ast).values() if isinstance(kind, type) and issubclass(kind, ast.stmt)
)


#: Nodes that open a scope of their own (``ChildIndex.own_definitions``).
_NESTED_SCOPES: Final = frozenset({ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda})


def is_docstring(stmt: ast.stmt) -> bool:
    return (
        isinstance(stmt, ast.Expr)
        and isinstance(stmt.value, ast.Constant)
        and isinstance(stmt.value.value, str)
    )
