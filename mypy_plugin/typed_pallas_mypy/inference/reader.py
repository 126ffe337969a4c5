"""One module's source -> its local facts (``model.ModuleFacts``), with ``ast``.

The same reading for a project module and an installed one, with the tables every part
of the plugin shares (``entries.ENTRIES``, ``typed_pallas._platforms.PARAMS_BY_FULLNAME``,
``evidence_tables``):

* every name is resolved to a fully qualified name through the module's imports
  (relative and ``*`` ones too), the imports inside functions, nested functions and
  lambdas, and the module's own definitions;
* per function (and lambda): its trace program (``program``: what runs on each path,
  JAX's control flow and transformations); whether it reads the platform itself (then
  it has no requirement); whether it is a guard or platform helper (its condition);
  its body evidence (for callers in other modules that pass it as a kernel); whether
  it is a wrapper of an entry point (directly, through a returned closure, a nested
  kernel calling its kernel parameter, or a ``pl.core_map`` decorator); what it is as
  a decorator; its decorators' names, for ``combine`` to resolve;
* per class: bases, methods, class-level defaults, and the constructor parameters
  instance attributes hold;
* per module-level name: aliases (``f = g``, ``functools.partial(g, ...)``,
  ``jax.jit(g)``, ``g(...)``, ``a if c else b``), platform tables, variables holding a
  keeping decorator, and ``defvjp`` rules;
* ``Sites``: the calls of a module read the same way, by position: what a call runs
  (``call_site``, for decision sites) and what an entry call's mesh, scratch and grid
  spec arguments prove (``argument_evidence``) and its kernel body (``kernel_evidence``):
  the plugin's only reading of them, for the project's calls as for the libraries'.

Conditions (a guard's test, what a guard helper or predicate returns, which values are
devices) are read by its base class ``conditions.ConditionReading``; scopes, name
lookups, positions and the shared child lists are in ``scopes``.

What it does not do: look at other modules (``combine`` combines modules), import
anything it reads, or raise on bad source (a syntax error gives ``None``).
"""

from __future__ import annotations

import ast
import bisect
import builtins
import dataclasses
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, TypeVar

from typing_extensions import override

from typed_pallas import _platforms
from typed_pallas_mypy import evidence_tables, fullnames
from typed_pallas_mypy.entries import ENTRIES, EntrySpec, entry_evidence
from typed_pallas_mypy.evidence_tables import namespace_key
from typed_pallas_mypy.fullnames import FUNCTOOLS_PARTIAL, PLATFORM_ATTRIBUTES, PLATFORM_SOURCES
from typed_pallas_mypy.inference import jax_api, model
from typed_pallas_mypy.inference.callables import (
    KNOWN,
    Callee,
    CallResult,
    Choice,
    DecoratedEntry,
    EntryRef,
    EntryVariable,
    FunctionRef,
    ItemOf,
    KnownCallable,
    MethodOf,
    PlatformChoice,
    UnknownCallable,
)
from typed_pallas_mypy.inference.collector import collector_paused
from typed_pallas_mypy.inference.conditions import ConditionReading
from typed_pallas_mypy.inference.interpret_uses import InterpretUses, KeptOff
from typed_pallas_mypy.inference.jax_api import (
    CLASS_KEEPERS,
    CONFIGURED_KEEPERS,
    CUSTOM_DERIVATIVES,
    DATACLASS_DECORATORS,
    METHOD_KEEPERS,
)
from typed_pallas_mypy.inference.model import (
    FALSE,
    TRUE,
    UNKNOWN,
    Alias,
    ArgSum,
    Binding,
    CallArgs,
    ClassSummary,
    EntryEvent,
    Evidence,
    FunctionSummary,
    ModuleFacts,
    Param,
    Step,
    WrapperFact,
)
from typed_pallas_mypy.inference.parsing import parse_expression, parse_module
from typed_pallas_mypy.inference.reuse import ReuseKeys
from typed_pallas_mypy.inference.scopes import (
    NAME_DEPTH,
    ChildIndex,
    FunctionNode,
    GlobalName,
    LocalName,
    Lookup,
    ParamRef,
    Pos,
    Scope,
    ScopeNode,
    SourceText,
    child_nodes,
    end_of,
    is_docstring,
    is_opaque_name,
    position_of,
    span_of,
    spelling,
    walk_nodes,
)
from typed_pallas_mypy.inference.values import (
    KEEPERS,
    ValueReading,
    literal_get,
    unpacked,
)

#: Transformations that differentiate the function they keep (its ``defvjp`` rules run).
DIFFERENTIATING: Final = jax_api.DIFFERENTIATING
PARTIAL: Final = FUNCTOOLS_PARTIAL


#: Decorators making a method an attribute whose reading runs it.
_PROPERTIES: Final = frozenset({"builtins.property", "functools.cached_property"})


#: How many same-module calls deep the kernel body scan follows.
BODY_DEPTH: Final = 2
#: How many factory ``return`` levels deep params are resolved (as ``params._MAX_DEPTH``).
PARAMS_DEPTH: Final = 3
#: How many wrappers (partial, jit, variables) deep a callee is followed.
_CALLABLE_DEPTH: Final = 8

_FIELD: Final = frozenset({"dataclasses.field"})
#: References that read the platform (a function making one has no requirement):
#: ``platform_dependent`` and ``typed_pallas.dispatch`` are not among them, since the
#: trace program follows their per-platform branches (``program``)
_PLATFORM_READS: Final = PLATFORM_SOURCES - fullnames.PLATFORM_DEPENDENT - fullnames.TP_DISPATCH


#: The byte string whose presence says a module mentions Pallas (``ModuleFacts.pallas``).
PALLAS_MARKER: Final = b"pallas"


_T = TypeVar("_T")

#: An argument of an entry call, as the plugin names it (``Sites.argument_evidence``,
#: ``Sites.kernel_evidence``): (role: "mesh", "scratch", "grid_spec" or "kernel"; its index among the call's arguments as mypy
#: counts them, the positional ones then the keywords' values; its keyword, None when
#: passed by position)
Argument = tuple[str, int, str | None]

#: A module's summaries by (qualname, ``ReuseKeys`` digest), as a reading hands them to
#: the next reading of the module (``Sites.summarised``)
Reusable = Mapping[tuple[str, bytes], FunctionSummary]


class Sites:
    """The calls of one module, read as the inference reads them (``call_site``,
    ``argument_evidence``, ``kernel_evidence``).

    An expression is found by its span when asked (``_find``), going down from the
    module through the nodes whose span holds it: no index of every expression is
    built (most modules are asked about a few conditions and calls, and a module's
    every expression costs more than all the questions)."""

    def __init__(self, reader: _ModuleReader) -> None:
        self.reader = reader
        self._arguments: dict[
            tuple[tuple[int, int, int, int], tuple[Argument, ...]], tuple[tuple[str, Evidence], ...]
        ] = {}
        #: (span, calls only) -> the outermost such expression there, and its parent
        self._found: dict[
            tuple[tuple[int, int, int, int], bool], tuple[ast.expr, ast.AST] | None
        ] = {}
        #: span -> the test of an ``if``, ``while`` or ``assert`` statement there and the
        #: statement (``_statement_tests``: the conditions most asked about), on first use
        self._tests: dict[tuple[int, int, int, int], tuple[ast.expr, ast.AST]] | None = None
        #: whether parameters passed as ``interpret=`` are kept off, on first use
        self._interpret_uses: InterpretUses | None = None
        #: (start, end, statement) of the module's statements, decorators included
        self._top: list[tuple[Pos, Pos, ast.stmt]] = [
            (_start_with_decorators(stmt), end_of(stmt), stmt) for stmt in reader.tree.body
        ]

    def _find(
        self, where: tuple[int, int, int, int], call: bool
    ) -> tuple[ast.expr, ast.AST] | None:
        """The outermost expression (a call, with ``call``) whose span is ``where``, and
        its parent node; None when there is none."""
        key = (where, call)
        if key in self._found:
            return self._found[key]
        if not call:
            if self._tests is None:
                self._tests = _statement_tests(self.reader.tree.body)
            test = self._tests.get(where)
            if test is not None:  # held by a statement: no expression holds it
                self._found[key] = test
                return test
        found = self._found[key] = self._descend(where, call)
        return found

    def _descend(
        self, where: tuple[int, int, int, int], call: bool
    ) -> tuple[ast.expr, ast.AST] | None:
        """``_find``, going down from the module's statement that holds ``where``."""
        start, end = (where[0], where[1]), (where[2], where[3])
        index = bisect.bisect_right(self._top, start, key=lambda item: item[0]) - 1
        if index >= 0 and end <= self._top[index][1]:
            return self._down(self._top[index][2], self.reader.tree, where, start, end, call)
        return None

    def _down(
        self,
        top: ast.AST,
        parent: ast.AST,
        where: tuple[int, int, int, int],
        start: Pos,
        end: Pos,
        call: bool,
    ) -> tuple[ast.expr, ast.AST] | None:
        """``_find`` under ``top`` (whose span holds ``where``), outermost first: a child
        whose span does not hold ``where`` is not gone into (a child's span lies in its
        parent's, a definition's decorators included). A loop, not a recursion: a sum of
        a thousand terms is a thousand levels deep."""
        stack: list[tuple[ast.AST, ast.AST]] = [(top, parent)]
        while stack:
            node, above = stack.pop()
            if isinstance(node, ast.expr) and span_of(node) == where:
                if not call or isinstance(node, ast.Call):
                    return node, above
            holding: list[tuple[ast.AST, ast.AST]] = []
            for child in self.reader.nodes.children(node):
                if getattr(child, "lineno", None) is not None:
                    # a node without a place (``ast.arguments``...) is gone through
                    if start < _start_with_decorators(child) or end_of(child) < end:
                        continue
                holding.append((child, node))
            stack.extend(reversed(holding))
        return None

    @property
    def summarised(self) -> Reusable:
        """The summaries this reading worked out or reused, by (qualname, reuse key):
        empty when it keeps no keys (the module's first reading)."""
        return self.reader.summarised

    def call_site(self, where: tuple[int, int, int, int]) -> tuple[str, tuple[Step, ...]] | None:
        """(qualname of the function around it, "" at module level; what the call at
        ``where`` (line, column, end line, end column) runs, as trace steps), or None
        when there is no such call."""
        found = self._find(where, True)
        if found is None or not isinstance(found[0], ast.Call):
            return None
        try:
            return self.reader.call_site(found[0])
        except RecursionError:
            return None

    def argument_evidence(
        self, where: tuple[int, int, int, int], arguments: Sequence[Argument]
    ) -> tuple[tuple[str, Evidence], ...]:
        """What the arguments of the entry call at ``where`` (line, column, end line, end
        column) prove, as (kind, evidence), kind "mesh" or "scratch"
        (``_ModuleReader.argument_evidence``), read in the scope the call is in.
        ``arguments`` say which of its arguments hold the mesh, the scratch allocations
        and the grid spec; one not found as described, or a call not found, gives
        nothing."""
        key = (where, tuple(arguments))
        cached = self._arguments.get(key)
        if cached is not None:
            return cached
        found: tuple[tuple[str, Evidence], ...] = ()
        at = self._find(where, True)
        if at is not None:
            assert isinstance(at[0], ast.Call)
            try:
                found = tuple(self._argument_evidence(at[0], arguments))
            except RecursionError:
                found = ()
        self._arguments[key] = found
        return found

    def kernel_evidence(
        self,
        where: tuple[int, int, int, int],
        argument: Argument | None,
        *,
        decorated: bool,
        applied: bool,
    ) -> tuple[tuple[Evidence, ...], str | None]:
        """The kernel body of the entry call at ``where``, read in the scope the call is
        in: (the body evidence of a kernel defined in this module, the fullname of one
        defined in another module). The kernel is the call's ``argument`` (role
        "kernel") when given; else, with ``decorated``, the function the call decorates
        (``@functools.partial(pl.pallas_call, ...)``), and with ``applied``, the first
        argument of the call applying it (``pl.core_map(mesh)(body)``)."""
        at = self._find(where, True)
        if at is None:
            return (), None
        call, parent = at
        assert isinstance(call, ast.Call)
        reader = self.reader
        try:
            if argument is not None:
                expr = _argument(call, argument[1], argument[2])
                if expr is None:
                    return (), None
                node, ref = reader.kernel_of(expr, reader.scope_around(call))
                return (reader.body_evidence(node) if node is not None else ()), ref
            function = (
                parent
                if decorated
                and isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef))
                and any(d is call for d in parent.decorator_list)
                else None
            )
            if function is not None:
                return reader.body_evidence(function), None
            outer = (
                parent if applied and isinstance(parent, ast.Call) and parent.func is call else None
            )
            if outer is not None and outer.args:
                node = reader.kernel_function(outer.args[0], reader.scope_around(outer))
                return (reader.body_evidence(node) if node is not None else ()), None
        except RecursionError:
            pass
        return (), None

    def condition_at(self, where: tuple[int, int, int, int]) -> model.Condition | None:
        """What the expression at ``where`` tests, read as the inference reads a guard
        helper's condition, in the scope it is in (variables followed to what they were
        assigned, devices by shape, a parameter annotated ``jax.Device``), with the
        calls it cannot read left to the plugin (``["ask", ...]`` leaves: platform
        predicates, found by the receiver's type); None when there is no such
        expression or it tests nothing known. ``["source"]``: the platform itself."""
        at = self._find(where, False)
        if at is None:
            return None
        expr = at[0]
        reader = self.reader
        reader.asking = True
        try:
            return reader.condition(expr, reader.scope_around(expr))
        except RecursionError:
            return None
        finally:
            reader.asking = False

    def interpret_kept_off(self, where: tuple[int, int, int, int]) -> KeptOff | None:
        """For the name at ``where`` (an entry call's ``interpret=``): when it is a
        parameter this module keeps off (``interpret_uses``), how and the names."""
        found = self._find(where, False)
        if found is None or not isinstance(found[0], ast.Name):
            return None
        if self._interpret_uses is None:
            self._interpret_uses = InterpretUses(self.reader)
        return self._interpret_uses.kept_off(found[0])

    def predicate_condition(self, line: int, name: str, parameter: str) -> model.Condition | None:
        """What the function ``name`` defined at ``line`` returns of its parameter
        ``parameter`` as a device (``_ModuleReader.predicate_condition``), with the
        calls the reader cannot read left to the plugin; None when there is no such
        function or it is no platform predicate."""
        reader = self.reader
        for node, scope in reader.function_nodes.values():
            if node.lineno == line and node.name == name and parameter in scope.params:
                reader.asking = True
                try:
                    return reader.predicate_condition(node, scope, parameter)
                except RecursionError:
                    return None
                finally:
                    reader.asking = False
        return None

    def device_parameters(self, line: int, name: str) -> tuple[str, ...]:
        """The parameters of the function ``name`` defined at ``line`` annotated
        ``jax.Device`` (also ``jax.Device | None``, ``Optional[jax.Device]``), in order."""
        reader = self.reader
        for node, scope in reader.function_nodes.values():
            if node.lineno == line and node.name == name:
                return tuple(p for p in scope.params if reader.is_annotated_device(scope, p))
        return ()

    def _argument_evidence(
        self, call: ast.Call, arguments: Sequence[Argument]
    ) -> list[tuple[str, Evidence]]:
        by_role: dict[str, list[ast.expr]] = {"mesh": [], "scratch": [], "grid_spec": []}
        for role, index, keyword in arguments:
            expr = _argument(call, index, keyword)
            if expr is not None and role in by_role:
                by_role[role].append(expr)
        meshes, scratch, grid_specs = by_role["mesh"], by_role["scratch"], by_role["grid_spec"]
        if len(meshes) > 1 or not (meshes or scratch or grid_specs):
            return []
        scope = self.reader.scope_around(call)
        mesh = meshes[0] if meshes else None
        return self.reader.argument_evidence(mesh, scratch, grid_specs, scope)


def _is_none(kind: str, value: object) -> bool:
    """A raw binding ``name = None``."""
    return kind == "assign" and isinstance(value, ast.Constant) and value.value is None


def _argument(call: ast.Call, index: int, keyword: str | None) -> ast.expr | None:
    """The argument of ``call`` at ``index`` as mypy counts them (``Argument``), when it
    is passed as said (by position, or by that keyword); else None."""
    if index < 0:
        return None
    if index < len(call.args):
        found = call.args[index]
        return None if keyword is not None or isinstance(found, ast.Starred) else found
    at = index - len(call.args)
    if at >= len(call.keywords) or keyword is None or call.keywords[at].arg != keyword:
        return None
    return call.keywords[at].value


def _parsed(
    source: bytes, module: str, is_package: bool, reuse: Reusable | None = None
) -> _ModuleReader | None:
    """A reader over ``module``'s source, nothing read yet; None when it does not parse."""
    try:
        tree = parse_module(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return None
    return _ModuleReader(tree, module, is_package, source, reuse)


def sites(source: bytes, module: str, is_package: bool) -> Sites | None:
    """The calls of ``module`` (None when its source does not parse)."""
    with collector_paused():
        reader = _parsed(source, module, is_package)
        if reader is None:
            return None
        try:
            reader.prepare()
        except RecursionError:
            return None
    return Sites(reader)


def read_module_and_sites(
    source: bytes,
    module: str,
    *,
    is_package: bool,
    lazy: bool = False,
    reuse: Reusable | None = None,
) -> tuple[ModuleFacts | None, Sites | None]:
    """``read_module_keeping_sites`` and ``sites`` of one module from one parse and one
    reading (a project module the plugin will ask about by position). ``reuse``: the
    summaries of the module's previous reading (``Sites.summarised``), to take those
    whose reuse key is the same (``inference.reuse``); None: keep no keys (a module
    read once)."""
    facts, sites_of_reading = read_module_keeping_sites(
        source, module, is_package=is_package, lazy=lazy, reuse=reuse
    )
    return facts, sites_of_reading()


def read_module_keeping_sites(
    source: bytes,
    module: str,
    *,
    is_package: bool,
    lazy: bool = False,
    reuse: Reusable | None = None,
) -> tuple[ModuleFacts | None, Callable[[], Sites | None]]:
    """The local facts of ``module`` (``is_package``: read from an ``__init__.py``),
    None when the source does not parse; and a function that gives the module's
    ``Sites`` from the same parse and reading when called (a module the plugin may ask
    about by position later: asked, it is not parsed again). Holding the function holds
    the module's tree. ``lazy``: functions are summarised when asked for (the facts hold
    the tree too: a module whose tree is kept anyway, for its sites)."""
    with collector_paused():
        reader = _parsed(source, module, is_package, reuse)
        if reader is None:
            return None, _no_sites
        try:
            facts = reader.facts(lazy=lazy)
        except RecursionError:
            return None, _no_sites
    return facts, lambda: Sites(reader)


def _no_sites() -> Sites | None:
    return None


#: Nodes whose ``test`` decides what runs (``_ModuleReader._scan``).
_CONDITIONAL_NODES: Final = frozenset({ast.If, ast.IfExp, ast.While})


def _statement_tests(
    body: Sequence[ast.stmt],
) -> dict[tuple[int, int, int, int], tuple[ast.expr, ast.AST]]:
    """The tests of the ``if``, ``while`` and ``assert`` statements of a module, by span,
    each with its statement: found by going through statements only (no expression is
    gone into, so a test inside a lambda or a comprehension is not among them)."""
    found: dict[tuple[int, int, int, int], tuple[ast.expr, ast.AST]] = {}
    stack: list[ast.stmt] = list(body)
    while stack:
        stmt = stack.pop()
        if isinstance(stmt, (ast.If, ast.While, ast.Assert)):
            found.setdefault(span_of(stmt.test), (stmt.test, stmt))
        for name in _STATEMENT_LISTS:
            inner = getattr(stmt, name, None)
            if inner:
                stack.extend(inner)
        if isinstance(stmt, (ast.Try, ast.TryStar)):
            for handler in stmt.handlers:
                stack.extend(handler.body)
        elif isinstance(stmt, ast.Match):
            for case in stmt.cases:
                stack.extend(case.body)
    return found


#: The fields of a statement that hold statements (``_statement_tests``).
_STATEMENT_LISTS: Final = ("body", "orelse", "finalbody")


def _start_with_decorators(node: ast.AST) -> Pos:
    """Where a node's text starts: a decorated definition at its first decorator."""
    start = position_of(node)
    if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
        for decorator in node.decorator_list:
            start = min(start, position_of(decorator))
    return start


# --------------------------------------------------------------------------- scopes


@dataclass
class _Scan:
    """What one walk of a function finds (``_ModuleReader._scan``)."""

    platform: str | None = None
    refs: set[str] = field(default_factory=set)
    evidence: list[Evidence] = field(default_factory=list)
    callees: list[ScopeNode] = field(default_factory=list)
    #: whether it names an entry point anywhere (else it is no wrapper of one)
    names_entry: bool = False

    def merge(self, inner: _Scan, guarded: bool) -> None:
        if self.platform is None:
            self.platform = inner.platform
        self.refs |= inner.refs
        self.names_entry = self.names_entry or inner.names_entry
        if not guarded:
            self.evidence.extend(inner.evidence)
            self.callees.extend(inner.callees)


#: Names that prove a kernel's backend when its body uses them.
_BODY_TABLES: Final = {**evidence_tables.SCRATCH_EVIDENCE, **evidence_tables.BODY_EVIDENCE}
#: Strings a condition compares with when it asks for the platform or the backend
_PLATFORM_STRINGS: Final = frozenset(
    {*_platforms.PLATFORM_NAMES, *_platforms.BACKENDS, *_platforms.BACKEND_ALIASES}
)


def _literal_platform_strings(expr: ast.AST) -> bool | None:
    """For a value written with constants only (a number, a string, a tuple, list, set
    or dict of them: a table of tuned sizes), whether a platform string is among them;
    None for any other expression. It stops at the first node of another kind, and
    looks at each node of a table once, without listing children: the reader's walks
    of a large table cost more."""
    found = False
    stack = [expr]
    while stack:
        node = stack.pop()
        if type(node) is ast.Constant:
            value = node.value
            if isinstance(value, str) and value.lower() in _PLATFORM_STRINGS:
                found = True
        elif type(node) is ast.Tuple or type(node) is ast.List or type(node) is ast.Set:
            stack.extend(node.elts)
        elif type(node) is ast.Dict:
            if None in node.keys:  # ``{**other}``
                return None
            stack.extend(node.keys)  # type: ignore[arg-type]  # no None among them
            stack.extend(node.values)
        elif type(node) is ast.UnaryOp:
            stack.append(node.operand)
        else:
            return None
    return found


#: Top-level packages whose calls in a condition do not ask for the platform (JAX's
#: own platform reads are read as such before this is asked)
_NEVER_ASK_PLATFORM: Final = frozenset(
    {"jax", "numpy", "math", "builtins", "functools", "operator", "itertools", "dataclasses"}
)


# --------------------------------------------------------------------------- statements


def _contains_return(stmt: ast.stmt) -> bool:
    """Whether a statement may return early (a ``return`` nested in it, not in a
    nested function)."""
    stack: list[ast.AST] = [stmt]
    while stack:
        node = stack.pop()
        if isinstance(node, ast.Return):
            return True
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.expr):
            continue
        stack.extend(child_nodes(node))
    return False


@dataclass
class _Roots:
    """The parts of a body that run on every path that does not raise."""

    nodes: list[ast.AST] = field(default_factory=list)
    #: nested function definitions reached on every path (their decorators run)
    defs: list[FunctionNode] = field(default_factory=list)
    #: the value of the ``return`` that ends every path, if any
    returned: ast.expr | None = None


def unconditional_roots(body: Sequence[ast.stmt], out: _Roots | None = None) -> _Roots:
    """As ``unconditional.unconditional_roots``, over ``ast`` statements."""
    roots = out if out is not None else _Roots()
    for stmt in body:
        if isinstance(stmt, (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Assert)):
            roots.nodes.append(stmt)
        elif isinstance(stmt, ast.Return):
            if stmt.value is not None:
                roots.nodes.append(stmt.value)
                roots.returned = stmt.value
            break
        elif isinstance(stmt, ast.Raise):
            break
        elif isinstance(stmt, ast.If):
            roots.nodes.append(stmt.test)
            if _contains_return(stmt):
                break
        elif isinstance(stmt, (ast.For, ast.AsyncFor)):
            roots.nodes.append(stmt.iter)
            if _contains_return(stmt):
                break
        elif isinstance(stmt, ast.While):
            roots.nodes.append(stmt.test)
            if _contains_return(stmt):
                break
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            # The body runs whenever the ``with`` does: what runs on every path of the
            # body counts, up to its first statement that may return (where the
            # function may end). (``unconditional.py`` stops before such a body.)
            roots.nodes.extend(item.context_expr for item in stmt.items)
            unconditional_roots(stmt.body, roots)
            if any(_contains_return(s) for s in stmt.body):
                break
        elif isinstance(stmt, (ast.Try, ast.TryStar)):
            if _contains_return(stmt):
                break
            unconditional_roots(stmt.finalbody, roots)
        elif isinstance(stmt, ast.Match):
            roots.nodes.append(stmt.subject)
            if _contains_return(stmt):
                break
        elif isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            roots.defs.append(stmt)
    return roots


#: Nodes whose children are not all evaluated when they are (``unconditional_nodes``).
_PARTLY_EVALUATED: Final = (
    ast.IfExp,
    ast.BoolOp,
    ast.Lambda,
    ast.ListComp,
    ast.SetComp,
    ast.GeneratorExp,
    ast.DictComp,
    ast.FunctionDef,
    ast.AsyncFunctionDef,
    ast.ClassDef,
)


def unconditional_nodes(roots: Sequence[ast.AST], index: ChildIndex) -> list[ast.AST]:
    """Every node under ``roots`` that is evaluated whenever they are (branches of
    conditional expressions, right operands of ``and``/``or``, lambda bodies and
    comprehension bodies are left out), as ``unconditional.unconditional_expressions``
    (``index``: the children of the tree's nodes)."""
    out: list[ast.AST] = []
    stack: list[ast.AST] = list(reversed(roots))
    while stack:
        node = stack.pop()
        out.append(node)
        if not isinstance(node, _PARTLY_EVALUATED):
            stack.extend(reversed(index.children(node)))
            continue
        children: list[ast.AST]
        if isinstance(node, ast.IfExp):
            children = [node.test]
        elif isinstance(node, ast.BoolOp):
            children = list(node.values[:1])
        elif isinstance(node, ast.Lambda):
            children = []
        elif isinstance(node, (ast.ListComp, ast.SetComp, ast.GeneratorExp, ast.DictComp)):
            children = [node.generators[0].iter]
        else:  # a function or class definition: its body runs later, if at all
            children = []
        stack.extend(reversed(children))
    return out


# --------------------------------------------------------------------------- the reader


class _ModuleReader(ValueReading, ConditionReading):
    def __init__(
        self,
        tree: ast.Module,
        module: str,
        is_package: bool,
        source: bytes,
        reuse: Reusable | None = None,
    ) -> None:
        self.tree = tree
        self.module = module
        self.package = module if is_package else module.rpartition(".")[0]
        self.pallas = PALLAS_MARKER in source
        #: where a walk for nested functions and lambdas may find one
        self.text = SourceText(source)
        self._source = source
        #: the previous reading's summaries by (qualname, reuse key); None: keep no keys
        self._reuse = reuse
        self._reuse_keys: ReuseKeys | None = None
        #: the summaries worked out or reused here, by (qualname, reuse key): what the
        #: next reading of the module may reuse
        self.summarised: dict[tuple[str, bytes], FunctionSummary] = {}
        self.module_scope = Scope(None, "", None)
        #: name -> raw module-level bindings: ("def", node) / ("class", node) /
        #: ("import", fullname) / ("assign", value) / ("other", None)
        self.raw: dict[str, list[tuple[str, object]]] = {}
        self.scopes: dict[int, Scope] = {}
        #: qualname -> (function node, its scope)
        self.function_nodes: dict[str, tuple[FunctionNode, Scope]] = {}
        self.class_nodes: dict[str, ast.ClassDef] = {}
        #: qualname -> (lambda, its scope)
        self.lambda_nodes: dict[str, tuple[ast.Lambda, Scope]] = {}
        #: line -> the spans of functions and lambdas over it (``_spans_over``)
        self._spans_by_line: dict[int, list[tuple[Pos, Pos, Scope]]] = {}
        self._spans_count = 0
        #: modules ``from m import *`` reads names from
        self.stars: list[str] = []
        self.bindings: dict[str, Binding] = {}
        self._scans: dict[int, _Scan] = {}
        self._body: dict[int, tuple[Evidence, ...]] = {}
        self._straight_cache: dict[int, set[int]] = {}
        #: (cache, variable, id of its scope) -> ``_cached_copy``'s reading of the module
        self._caches: dict[tuple[str, str, int], bool] = {}
        #: ``_foreign_attribute_stores``, once asked
        self._foreign_stores: frozenset[str] | None = None
        #: ``_parents``, and every ``ast.Name`` of the module by its name
        self._parent_map: dict[int, ast.AST] | None = None
        self._names_used: dict[str, list[ast.Name]] = {}
        self.nodes = ChildIndex()
        #: (name, id of a scope) -> ``lookup``; None while ``prepare`` builds the scopes
        self._lookups: dict[tuple[str, int], Lookup] | None = None
        #: id of a function -> what runs on every path of it (``_on_every_path``)
        self._every_path: dict[int, tuple[_Roots, list[ast.AST]]] = {}
        #: expression -> ``_literal_platform_strings``
        self._literals: dict[ast.AST, bool | None] = {}
        #: (expression, id of its scope) -> ``_expr_platform``, once the scopes are built
        self._platform_reads: dict[tuple[ast.AST, int], str | None] = {}
        #: (condition, id of its scope, depth) -> ``_may_ask_platform``
        self._asks_platform: dict[tuple[ast.AST, int, int], bool] = {}
        #: fullname -> ``_name_fact``
        self._name_facts: dict[str, tuple[bool, tuple[str, ...] | None, bool]] = {}
        #: how many variables ``_through`` is following now (a bound on cycles)
        self._following = 0
        #: whether ``condition`` leaves a call it cannot read as an ``["ask", ...]`` leaf
        #: (``Sites.condition_at``: the plugin answers platform predicates by types)
        self.asking = False

    # ------------------------------------------------------------------ building

    def prepare(self) -> None:
        """Bindings and scopes: what name lookups need."""
        self._collect_module(self.tree.body)
        self._resolve_bindings()
        self._build_scopes()
        self._lookups = {}  # from here on, what a name stands for no longer changes

    def facts(self, *, lazy: bool = False) -> ModuleFacts:
        """The module's local facts. ``lazy``: each function is summarised when first
        asked for (``model.Functions``), and the facts hold this reader (and its tree)
        until then; otherwise every function is summarised now."""
        self.prepare()
        classes: dict[str, ClassSummary] = {}
        aliases: dict[str, Alias] = {}
        functions = model.Functions([*self.function_nodes, *self.lambda_nodes], None, self.summary)
        for qualname, cls in self.class_nodes.items():
            classes[qualname] = self._class_summary(qualname, cls)
        for name, binding in self.bindings.items():
            if binding.kind == model.ALIAS:
                alias = self._alias(name)
                if alias is not None:
                    aliases[name] = alias
                aliases.update(self._element_aliases(name))
        for qualname, cls in self.class_nodes.items():
            aliases.update(self._attribute_aliases(qualname, cls))
        rules = self._derivative_rules()
        if not lazy:
            for qualname in functions:
                functions[qualname]
            functions.summarize = None
        return ModuleFacts(
            self.module,
            self.pallas,
            self.bindings,
            functions,
            classes,
            aliases,
            rules,
            tuple(self.stars),
        )

    def summary(self, qualname: str) -> FunctionSummary | None:
        """The summary of the function or lambda ``qualname`` of this module (None when
        there is none; opaque when it nests too deeply to read); a class's ``__init__`` with the
        instance attributes it sets (``_init_attrs``)."""
        found = self.function_nodes.get(qualname) or self.lambda_nodes.get(qualname)
        if found is None:
            return None
        key = self._reuse_key(qualname)
        if key is not None:
            assert self._reuse is not None
            kept = self._reuse.get(key)
            if kept is not None:
                self.summarised[key] = kept
                return kept
        try:
            summary = self._summarize(*found)
            owner, _, name = qualname.rpartition(".")
            cls = self.class_nodes.get(owner) if name == "__init__" else None
            if cls is not None:
                summary = dataclasses.replace(summary, self_attrs=self._init_attrs(cls, owner))
        except RecursionError:
            return model.bare_function(
                qualname, found[0].lineno, opaque=True, blocked="it nests too deeply to read"
            )
        if key is not None:
            self.summarised[key] = summary
        return summary

    def _reuse_key(self, qualname: str) -> tuple[str, bytes] | None:
        """(qualname, its ``ReuseKeys`` digest) when this reading keeps keys."""
        if self._reuse is None:
            return None
        if self._reuse_keys is None:
            self._reuse_keys = ReuseKeys(self.tree, self._source, self.raw, self.pallas)
        digest = self._reuse_keys.key(qualname)
        return (qualname, digest) if digest is not None else None

    def _derivative_rules(self) -> dict[str, tuple[tuple[str, int, str], ...]]:
        """``f.defvjp(fwd, bwd)`` / ``f.defjvp(jvp)`` at the top level, and ``@f.defjvp``
        on a function: f's rules, each with its kind (``model.RULE_FORWARD``...)."""
        found: dict[str, list[tuple[str, int, str]]] = {}

        def registration(callee: ast.expr) -> str | None:
            """The name of the function ``callee`` (``f.defvjp``) registers rules of."""
            if (
                isinstance(callee, ast.Attribute)
                and callee.attr in jax_api.DERIVATIVE_RULES
                and isinstance(callee.value, ast.Name)
            ):
                return callee.value.id
            return None

        for stmt in self.tree.body:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for decorator in stmt.decorator_list:
                    owner = registration(decorator)
                    if owner is not None and isinstance(decorator, ast.Attribute):
                        kind = model.RULE_JVP if decorator.attr.startswith("defjvp") else ""
                        if kind:
                            rule = (f"{self.module}.{stmt.name}", stmt.lineno, kind)
                            found.setdefault(owner, []).append(rule)
                continue
            if not (isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call)):
                continue
            owner = registration(stmt.value.func)
            if owner is None:
                continue
            method = stmt.value.func.attr if isinstance(stmt.value.func, ast.Attribute) else ""
            for i, arg in enumerate(stmt.value.args):
                if method.startswith("defjvp"):
                    kind = model.RULE_JVP
                else:
                    kind = model.RULE_FORWARD if i == 0 else model.RULE_BACKWARD
                what = self.callable_of(arg, self.module_scope)
                if isinstance(what, FunctionRef) and len(what.targets) == 1 and not what.self_bound:
                    found.setdefault(owner, []).append((what.targets[0], stmt.lineno, kind))
        return {name: tuple(rules) for name, rules in found.items()}

    def _import_target(self, node: ast.ImportFrom) -> str | None:
        if node.level == 0:
            return _platforms.canonical_fullname(node.module or "")
        base = self.package.split(".") if self.package else []
        if node.level - 1 > len(base):
            return None
        if node.level > 1:
            base = base[: len(base) - (node.level - 1)]
        if node.module:
            base = [*base, node.module]
        return ".".join(base)

    def _import_names(self, stmt: ast.Import | ast.ImportFrom) -> list[tuple[str, str]]:
        out: list[tuple[str, str]] = []
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.asname is not None:
                    out.append((alias.asname, _platforms.canonical_fullname(alias.name)))
                else:
                    top = alias.name.split(".", 1)[0]
                    out.append((top, top))
            return out
        target = self._import_target(stmt)
        if target is None:
            return out
        for alias in stmt.names:
            if alias.name == "*":
                continue
            full = f"{target}.{alias.name}" if target else alias.name
            out.append((alias.asname or alias.name, full))
        return out

    def _collect_module(self, stmts: Sequence[ast.stmt]) -> None:
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                if self._is_overload(stmt.decorator_list, None):
                    continue
                self.raw.setdefault(stmt.name, []).append(("def", stmt))
            elif isinstance(stmt, ast.ClassDef):
                self.raw.setdefault(stmt.name, []).append(("class", stmt))
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for name, full in self._import_names(stmt):
                    self.raw.setdefault(name, []).append(("import", full))
                if isinstance(stmt, ast.ImportFrom) and any(a.name == "*" for a in stmt.names):
                    star = self._import_target(stmt)
                    if star:
                        self.stars.append(star)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    if isinstance(target, ast.Name):
                        self.raw.setdefault(target.id, []).append(("assign", stmt.value))
                    else:
                        for name in self._target_names(target):
                            self.raw.setdefault(name, []).append(("other", None))
            elif isinstance(stmt, ast.AnnAssign):
                if isinstance(stmt.target, ast.Name) and stmt.value is not None:
                    self.raw.setdefault(stmt.target.id, []).append(("assign", stmt.value))
            elif isinstance(stmt, ast.AugAssign):
                for name in self._target_names(stmt.target):
                    self.raw.setdefault(name, []).append(("other", None))
            elif isinstance(stmt, ast.If):
                # what runs when the module is imported: ``if TYPE_CHECKING:`` (and a literal
                # condition) takes one branch; any other condition may take either
                truth = _import_time_truth(stmt.test)
                if truth is not False:
                    self._collect_module(stmt.body)
                if truth is not True:
                    self._collect_module(stmt.orelse)
            elif isinstance(stmt, (ast.Try, ast.TryStar)):
                self._collect_module(stmt.body)
                for handler in stmt.handlers:
                    self._collect_module(handler.body)
                self._collect_module(stmt.orelse)
                self._collect_module(stmt.finalbody)
            elif isinstance(stmt, (ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith)):
                if isinstance(stmt, (ast.For, ast.AsyncFor)):
                    for name in self._target_names(stmt.target):
                        self.raw.setdefault(name, []).append(("other", None))
                self._collect_module(stmt.body)
                if isinstance(stmt, (ast.For, ast.AsyncFor, ast.While)):
                    self._collect_module(stmt.orelse)

    def _resolve_bindings(self) -> None:
        for name, raw in self.raw.items():
            imports = [(kind, value) for kind, value in raw if not _is_none(kind, value)]
            if len(imports) < len(raw) and imports and {kind for kind, _ in imports} == {"import"}:
                # an optional import (``try: from m import ops`` / ``except ImportError:
                # ops = None``): a use of None raises, so what runs is the import
                raw = imports
            kinds = {kind for kind, _ in raw}
            if len(raw) == 1 or (kinds == {"import"} and len({str(v) for _, v in raw}) == 1):
                kind, value = raw[0]
                if kind == "def" and isinstance(value, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    self.bindings[name] = Binding(model.DEF, name)
                elif kind == "class" and isinstance(value, ast.ClassDef):
                    self.bindings[name] = Binding(model.CLASS, name)
                    self.class_nodes[name] = value
                elif kind == "import":
                    self.bindings[name] = Binding(model.IMPORT, str(value))
                elif kind == "assign":
                    self.bindings[name] = Binding(model.ALIAS)
                else:
                    self.bindings[name] = Binding(model.VALUE)
            else:
                self.bindings[name] = Binding(model.AMBIGUOUS)

    def _build_scopes(self) -> None:
        for name, binding in list(self.bindings.items()):
            if binding.kind == model.DEF:
                node = self.raw[name][0][1]
                assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
                self._function_scope(node, name, self.module_scope, None)
            elif binding.kind == model.CLASS:
                cls = self.class_nodes[name]
                for stmt in _class_functions(cls, self):
                    self._function_scope(stmt, f"{name}.{stmt.name}", self.module_scope, name)
            elif binding.kind == model.ALIAS:
                value = self.raw[name][0][1]
                if isinstance(value, ast.expr):
                    self._lambdas(value, self.module_scope)
                    if self._expr_platform(value, self.module_scope) is not None:
                        self.bindings[name] = Binding(model.PLATFORM_VALUE)

    def _function_scope(
        self, node: FunctionNode, qualname: str, parent: Scope, class_qualname: str | None
    ) -> Scope:
        is_method = class_qualname is not None and not self._decorated_with(
            node.decorator_list, frozenset({"builtins.staticmethod"}), parent
        )
        scope = Scope(node, qualname, parent, class_qualname=class_qualname, is_method=is_method)
        self.scopes[id(node)] = scope
        self._params(node.args, scope)
        self._collect_locals(node.body, scope)
        own_definitions = self.nodes.own_definitions(node.body, self.text)
        for own in own_definitions:
            if isinstance(own, ast.NamedExpr) and isinstance(own.target, ast.Name):
                scope.complex.add(own.target.id)
        for name in list(scope.params):
            if scope.bound(name):
                param = scope.params[name]
                updated = Param(param.name, param.kind, param.default, rebound=True)
                scope.params[name] = updated
                scope.param_list = [updated if p.name == name else p for p in scope.param_list]
        self.function_nodes[qualname] = (node, scope)
        # nested functions and lambdas
        for decorator in node.decorator_list:
            self._lambdas(decorator, parent)
        for default in [*node.args.defaults, *[d for d in node.args.kw_defaults if d]]:
            self._lambdas(default, parent)
        self._nested(own_definitions, scope)
        return scope

    def _nested(self, own_definitions: Sequence[ast.AST], scope: Scope) -> None:
        """Scopes of the functions and lambdas among ``scope``'s own nodes
        (``ChildIndex.own_definitions``), in their order; the methods of local classes are
        not followed."""
        for node in own_definitions:
            if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
                self._function_scope(node, f"{scope.qualname}.<locals>.{node.name}", scope, None)
            elif isinstance(node, ast.Lambda):
                self._lambda_scope(node, scope)

    def _lambdas(self, expr: ast.AST, scope: Scope) -> None:
        if not self.text.may_define([expr]):
            return
        for node in self.nodes.walk(expr):
            if isinstance(node, ast.Lambda) and id(node) not in self.scopes:
                self._lambda_scope(node, scope)

    def _lambda_scope(self, node: ast.Lambda, parent: Scope) -> None:
        prefix = f"{parent.qualname}.<locals>." if parent.qualname else ""
        qualname = f"{prefix}<lambda:{node.lineno}:{node.col_offset}>"
        scope = Scope(node, qualname, parent)
        self.scopes[id(node)] = scope
        self.lambda_nodes[qualname] = (node, scope)
        self._params(node.args, scope)
        if self.text.may_define([node.body]):
            self._nested(self.nodes.own_definitions([node.body], self.text), scope)

    def _params(self, args: ast.arguments, scope: Scope) -> None:
        positional = [*args.posonlyargs, *args.args]
        defaults: list[ast.expr | None] = [None] * (len(positional) - len(args.defaults))
        defaults.extend(args.defaults)
        outer = scope.parent if scope.parent is not None else self.module_scope
        for i, arg in enumerate(positional):
            kind = model.POSONLY if i < len(args.posonlyargs) else model.POS
            scope.param_list.append(
                Param(
                    arg.arg,
                    kind,
                    self._default(defaults[i]),
                    annotation=self._annotation(arg.annotation, outer),
                )
            )
        if args.vararg is not None:
            scope.param_list.append(Param(args.vararg.arg, model.STAR, model.REQUIRED))
        for arg, default in zip(args.kwonlyargs, args.kw_defaults, strict=False):
            scope.param_list.append(
                Param(
                    arg.arg,
                    model.KWONLY,
                    self._default(default),
                    annotation=self._annotation(arg.annotation, outer),
                )
            )
        if args.kwarg is not None:
            scope.param_list.append(Param(args.kwarg.arg, model.DSTAR, model.REQUIRED))
        scope.params = {p.name: p for p in scope.param_list}

    def _annotation(self, expr: ast.expr | None, scope: Scope) -> str:
        """The class an annotation names (``Config``, ``"Config"``, ``cfg.Config``), or ""."""
        if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
            try:
                expr = parse_expression(expr.value)
            except SyntaxError:
                return ""
        if not isinstance(expr, (ast.Name, ast.Attribute)):
            return ""
        name = self.ref(expr, scope)
        return name if name is not None and not is_opaque_name(name) else ""

    def _default(self, expr: ast.expr | None) -> str:
        if expr is None:
            return model.REQUIRED
        literal = _literal(expr)
        return literal if literal is not None else UNKNOWN

    def _target_names(self, target: ast.AST) -> list[str]:
        """The names an assignment target binds (``a, (b, c)``: a, b, c); a subscript or
        an attribute binds none (``cache[key] = f``, ``self.kernel = k``, ``o_ref[...] =
        x``: ``cache``, ``key``, ``self`` and ``o_ref`` are read)."""
        return [
            n.id
            for n in self.nodes.walk(target)
            if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
        ]

    def _collect_locals(self, stmts: Sequence[ast.stmt], scope: Scope) -> None:
        for stmt in stmts:
            if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
                scope.defs.setdefault(stmt.name, []).append(stmt)
            elif isinstance(stmt, ast.ClassDef):
                scope.complex.add(stmt.name)
            elif isinstance(stmt, ast.Assign):
                for target in stmt.targets:
                    pairs = unpacked(target, stmt.value)
                    if isinstance(target, ast.Name):
                        scope.assigns.setdefault(target.id, []).append((end_of(stmt), stmt.value))
                    elif pairs is not None:  # ``a, b = f, g``: each name its element
                        for name, element in pairs:
                            scope.assigns.setdefault(name, []).append((end_of(stmt), element))
                    else:
                        scope.complex.update(self._target_names(target))
            elif isinstance(stmt, ast.AnnAssign):
                if isinstance(stmt.target, ast.Name):
                    if stmt.value is not None:
                        scope.assigns.setdefault(stmt.target.id, []).append(
                            (end_of(stmt), stmt.value)
                        )
            elif isinstance(stmt, ast.AugAssign):
                scope.complex.update(self._target_names(stmt.target))
            elif isinstance(stmt, (ast.Import, ast.ImportFrom)):
                for name, full in self._import_names(stmt):
                    scope.imports.setdefault(name, []).append(full)
            elif isinstance(stmt, (ast.Global, ast.Nonlocal)):
                scope.declared_global.update(stmt.names)
            elif isinstance(stmt, (ast.For, ast.AsyncFor)):
                scope.complex.update(self._target_names(stmt.target))
                if isinstance(stmt.target, ast.Name):
                    scope.loops.setdefault(stmt.target.id, []).append(stmt.iter)
                self._collect_locals(stmt.body, scope)
                self._collect_locals(stmt.orelse, scope)
            elif isinstance(stmt, (ast.While, ast.If)):
                self._collect_locals(stmt.body, scope)
                self._collect_locals(stmt.orelse, scope)
            elif isinstance(stmt, (ast.With, ast.AsyncWith)):
                for item in stmt.items:
                    if item.optional_vars is not None:
                        scope.complex.update(self._target_names(item.optional_vars))
                self._collect_locals(stmt.body, scope)
            elif isinstance(stmt, (ast.Try, ast.TryStar)):
                self._collect_locals(stmt.body, scope)
                for handler in stmt.handlers:
                    if handler.name:
                        scope.complex.add(handler.name)
                    self._collect_locals(handler.body, scope)
                self._collect_locals(stmt.orelse, scope)
                self._collect_locals(stmt.finalbody, scope)
            elif isinstance(stmt, ast.Match):
                for case in stmt.cases:
                    for node in ast.walk(case.pattern):
                        captured = getattr(node, "name", None)
                        if isinstance(captured, str):
                            scope.complex.add(captured)
                    self._collect_locals(case.body, scope)

    # ------------------------------------------------------------------ lookups

    @override
    def lookup(self, name: str, scope: Scope) -> Lookup:
        """What ``name`` stands for in ``scope``: a parameter, a local variable, or a
        global's fullname (a nested function's and an import's included). Answers are
        kept once the scopes are built (``prepare``)."""
        if self._lookups is None:
            return self._resolve(name, scope)
        key = (name, id(scope))
        found = self._lookups.get(key)
        if found is None:
            found = self._lookups[key] = self._resolve(name, scope)
        return found

    def _resolve(self, name: str, scope: Scope) -> Lookup:
        """``lookup``, worked out: the innermost scope binding ``name``, else the module."""
        current: Scope | None = scope
        while current is not None and current.node is not None:
            if name in current.declared_global:
                break
            if name in current.params:
                return ParamRef(current, name)
            if current.bound(name):
                defs = current.defs.get(name, [])
                imports = current.imports.get(name, [])
                others = name in current.assigns or name in current.complex
                if len(defs) == 1 and not imports and not others:
                    return GlobalName(f"{self.module}.{current.qualname}.<locals>.{name}")
                if imports and not defs and not others and len(set(imports)) == 1:
                    return GlobalName(imports[0])
                simple = not defs and not imports and name not in current.complex
                return LocalName(current, name, simple)
            current = current.parent
        return GlobalName(self._module_name(name, 0))

    def _module_name(self, name: str, depth: int) -> str:
        """The fullname a module-level name stands for: an import's target, the name
        a plain alias (``partial = functools.partial``) rebinds, or this module's own."""
        binding = self.bindings.get(name)
        if binding is None:
            if self.stars and not hasattr(builtins, name):
                return f"{self.module}.{name}"  # from a ``from m import *`` (``combine``)
            return f"builtins.{name}"
        if binding.kind == model.IMPORT:
            return binding.target
        if binding.kind == model.ALIAS and depth < 4:
            value = self.raw[name][0][1]
            if isinstance(value, ast.Name) and value.id != name:
                return self._module_name(value.id, depth + 1)
            if isinstance(value, ast.Attribute):
                base = self._dotted(value, depth + 1)
                if base is not None:
                    return base
        return f"{self.module}.{name}"

    def _dotted(self, expr: ast.expr, depth: int) -> str | None:
        if isinstance(expr, ast.Name):
            return self._module_name(expr.id, depth)
        if isinstance(expr, ast.Attribute):
            base = self._dotted(expr.value, depth)
            return (
                _platforms.canonical_fullname(f"{base}.{expr.attr}") if base is not None else None
            )
        return None

    @override
    def ref(self, expr: ast.AST, scope: Scope) -> str | None:
        """The fully qualified name ``expr`` refers to, when it names a global."""
        if isinstance(expr, ast.Name):
            found = self.lookup(expr.id, scope)
            return found.fullname if isinstance(found, GlobalName) else None
        if isinstance(expr, ast.Attribute):
            base = self.ref(expr.value, scope)
            return (
                _platforms.canonical_fullname(f"{base}.{expr.attr}") if base is not None else None
            )
        return None

    @override
    def self_attribute(self, expr: ast.AST, scope: Scope) -> str | None:
        """``ATTR`` of ``self.ATTR`` inside a method (or a function nested in one)."""
        if not isinstance(expr, ast.Attribute) or not isinstance(expr.value, ast.Name):
            return None
        found = self.lookup(expr.value.id, scope)
        if isinstance(found, ParamRef) and found.scope.self_name == expr.value.id:
            if not found.scope.params[expr.value.id].rebound:
                return expr.attr
        return None

    def function_of(self, fullname: str) -> tuple[FunctionNode, Scope] | None:
        """The node of a function of this module, by fullname."""
        prefix = self.module + "."
        if not fullname.startswith(prefix):
            return None
        return self.function_nodes.get(fullname[len(prefix) :])

    def _decorated_with(
        self, decorators: Sequence[ast.expr], names: frozenset[str], scope: Scope
    ) -> bool:
        return any(self.ref(d, scope) in names for d in decorators)

    def _is_overload(self, decorators: Sequence[ast.expr], scope: Scope | None) -> bool:
        for dec in decorators:
            if isinstance(dec, ast.Name) and dec.id == "overload":
                return True
            if isinstance(dec, ast.Attribute) and dec.attr == "overload":
                return True
        return False

    # ------------------------------------------------------------------ arguments

    def argsum(self, expr: ast.expr, scope: Scope) -> ArgSum:
        literal = _literal(expr)
        if literal is not None:
            return literal
        if isinstance(expr, ast.Call):
            name = self.ref(expr.func, scope)
            if name is not None and name.rsplit(".", 1)[-1] == "InterpretParams":
                return TRUE
            plain = not expr.args and all(k.arg is not None for k in expr.keywords)
            if name is not None and plain and not is_opaque_name(name):
                # a constructor call, as a config object (``Config(interpret=False)``);
                # given positional arguments, which field each sets is not known here
                fields = ",".join(f"{k.arg}={_literal(k.value) or UNKNOWN}" for k in expr.keywords)
                return f"n:{name}({fields})"
            return UNKNOWN
        if isinstance(expr, ast.Name):
            found = self.lookup(expr.id, scope)
            if isinstance(found, ParamRef):
                param = found.scope.params[expr.id]
                if param.rebound or param.kind in (model.STAR, model.DSTAR):
                    return UNKNOWN
                prefix = "p" if found.scope is scope else "o"
                return f"{prefix}:{expr.id}"
            return UNKNOWN
        attr = self.self_attribute(expr, scope)
        if attr is not None:
            return f"a:{attr}"
        if isinstance(expr, ast.Attribute) and isinstance(expr.value, ast.Name):
            # ``config.interpret``: a field of a config object this function is given
            found = self.lookup(expr.value.id, scope)
            if isinstance(found, ParamRef) and found.scope is scope:
                param = scope.params[expr.value.id]
                if (
                    not param.rebound
                    and param.annotation
                    and param.kind not in (model.STAR, model.DSTAR)
                ):
                    return f"c:{param.name}.{expr.attr}"
        return UNKNOWN

    def _splat(self, expr: ast.expr, scope: Scope) -> ArgSum:
        attr = self.self_attribute(expr, scope)
        if attr is not None:
            return f"a:{attr}"
        if isinstance(expr, ast.Name):
            found = self.lookup(expr.id, scope)
            if isinstance(found, ParamRef) and found.scope is scope:
                return f"p:{expr.id}"
        return UNKNOWN

    def call_args(self, call: ast.Call, scope: Scope, skip: int = 0) -> CallArgs:
        positional: list[ArgSum] = []
        star = False
        for arg in call.args[skip:]:
            if isinstance(arg, ast.Starred):
                star = True
                continue
            if not star:
                positional.append(self.argsum(arg, scope))
        keywords: list[tuple[str, ArgSum]] = []
        star_kwargs: list[ArgSum] = []
        for keyword in call.keywords:
            if keyword.arg is None:
                star_kwargs.append(self._splat(keyword.value, scope))
            else:
                keywords.append((keyword.arg, self.argsum(keyword.value, scope)))
        return CallArgs(tuple(positional), tuple(keywords), star, tuple(star_kwargs))

    # ------------------------------------------------------------------ callables

    @override
    def callable_of(self, expr: ast.expr, scope: Scope, depth: int = 0) -> Callee:
        """What calling ``expr`` runs."""
        if depth > _CALLABLE_DEPTH:
            return UnknownCallable(f"{spelling(expr)} (too many wrappers)")
        if isinstance(expr, ast.Call):
            attribute = self._literal_getattr(expr, scope)
            if attribute is not None:
                return self.callable_of(attribute, scope, depth + 1)
            return self._callable_call(expr, scope, depth)
        if isinstance(expr, ast.IfExp):
            left = self.callable_of(expr.body, scope, depth + 1)
            right = self.callable_of(expr.orelse, scope, depth + 1)
            if isinstance(left, KnownCallable) and isinstance(right, KnownCallable):
                return KNOWN
            return Choice((left, right))
        if isinstance(expr, ast.Lambda):
            lambda_scope = self.scopes.get(id(expr))
            if lambda_scope is None:
                return UnknownCallable("a lambda")
            return FunctionRef((f"{self.module}.{lambda_scope.qualname}",))
        if isinstance(expr, ast.Subscript):
            return self._table_entry(expr, scope, depth)
        attr = self.self_attribute(expr, scope)
        if attr is not None:
            return FunctionRef((f"self:{attr}",), None, self_bound=True)
        if isinstance(expr, ast.Name):
            found = self.lookup(expr.id, scope)
            if isinstance(found, ParamRef):
                return UnknownCallable(f"the parameter {expr.id}")
            if isinstance(found, LocalName):
                return self._local_callable(expr, found, scope, depth)
            return self._global_callable(found.fullname)
        if isinstance(expr, ast.Attribute):
            name = self.ref(expr, scope)
            if name is not None:
                return self._global_callable(name)
            return self._method_of_value(expr, scope, depth)
        return UnknownCallable(spelling(expr))

    def _global_callable(self, name: str) -> Callee:
        if name in ENTRIES or name in KEEPERS or name == PARTIAL or is_opaque_name(name):
            return KNOWN  # an entry point named but not called here, or framework code
        local = self.function_of(name)
        if local is not None:
            decorated = self._decorated_entry(local[0], local[1])
            if decorated is not None:
                return DecoratedEntry(decorated)
        return FunctionRef((name,))

    def _local_callable(self, expr: ast.Name, found: LocalName, scope: Scope, depth: int) -> Callee:
        items = self._loop_items(found)
        if items is not None:  # ``for fn in (f, g): fn(x)``: one of them each time
            options = tuple(self.callable_of(item, found.scope, depth + 1) for item in items)
            if all(isinstance(option, KnownCallable) for option in options):
                return KNOWN
            return options[0] if len(options) == 1 else Choice(options)
        value = self.value_at(found, position_of(expr))
        if value is None:
            return UnknownCallable(f"the local variable {found.name}")
        if isinstance(value, ast.Call) and self.entry_of(value, found.scope) is not None:
            return EntryVariable(found.name, value, found.scope)
        result = self.callable_of(value, found.scope, depth + 1)
        if found.scope is not scope:
            # assigned in an enclosing function: its parameters are not this one's
            if isinstance(result, FunctionRef) and result.bound is not None:
                result = FunctionRef(result.targets, _outer(result.bound), result.self_bound)
            elif isinstance(result, CallResult):
                result = CallResult(result.target, _outer(result.args), result.call)
            elif isinstance(result, MethodOf):
                made = result.result
                result = MethodOf(
                    CallResult(made.target, _outer(made.args), made.call), result.name
                )
            elif isinstance(result, ItemOf):
                made = result.result
                result = ItemOf(CallResult(made.target, _outer(made.args), made.call), result.index)
        if isinstance(
            result,
            CallResult
            | FunctionRef
            | KnownCallable
            | EntryVariable
            | DecoratedEntry
            | Choice
            | MethodOf
            | ItemOf,
        ):
            return result
        if isinstance(result, EntryRef) and not result.partial:
            return EntryVariable(found.name, result.call, found.scope)
        if isinstance(result, PlatformChoice):
            return result
        return UnknownCallable(f"the local variable {found.name}")

    @override
    def value_at(self, found: LocalName, pos: Pos) -> ast.expr | None:
        """The value a local variable holds at ``pos``: its one assignment, or the last
        one before ``pos`` when every assignment runs on every path (straight-line code)."""
        if not found.simple:
            return None
        assigned = [
            (at, value)
            for at, value in found.scope.assigns.get(found.name, [])
            if not self._rewraps(value, found.name, found.scope)
            and not self._cached_copy(value, found.name, found.scope)
        ]
        if len(assigned) == 1:
            return assigned[0][1]
        straight = self._straight(found.scope)
        if not assigned or any(id(value) not in straight for _, value in assigned):
            return None
        if self._in_nested(found.scope, pos):
            return None  # a closure reads the variable when it runs: any binding
        before = [value for at, value in assigned if at <= pos]
        return before[-1] if before else None

    def _in_nested(self, scope: Scope, pos: Pos) -> bool:
        """Whether ``pos`` lies in a function or lambda nested in ``scope``."""
        for node, inner in [*self.function_nodes.values(), *self.lambda_nodes.values()]:
            outer = inner.parent
            while outer is not None and outer is not scope:
                outer = outer.parent
            if outer is scope and position_of(node) <= pos <= end_of(node):
                return True
        return False

    def _rewraps(self, value: ast.expr, name: str, scope: Scope) -> bool:
        """``name = jax.vmap(name, ...)``: the variable still runs what it ran."""
        if not isinstance(value, ast.Call):
            return False
        kept = self._keeper(value, scope)
        return isinstance(kept, ast.Name) and kept.id == name

    def _cached_copy(self, value: ast.expr, name: str, scope: Scope) -> bool:
        """``name = CACHE.get(key)`` (or ``CACHE[key]``) where ``CACHE`` is a module-level
        dict, empty when defined, that this module only ever fills with ``name`` itself
        (``CACHE[key] = name`` in ``scope``), only reads otherwise (``.get(key)``,
        ``CACHE[key]``, ``key in CACHE``, ``len(CACHE)``), and passes nowhere: the
        variable still holds what its other assignments made (a memoized kernel build,
        ``jax.shard_map`` or ``jax.jit``)."""
        if isinstance(value, ast.Subscript):
            base: ast.expr = value.value
        elif (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Attribute)
            and value.func.attr == "get"
            and not value.keywords
            and len(value.args) == 1
        ):
            base = value.func.value
        else:
            return False
        if not isinstance(base, ast.Name):
            return False
        found = self.lookup(base.id, scope)
        if not isinstance(found, GlobalName) or found.fullname != f"{self.module}.{base.id}":
            return False
        key = (base.id, name, id(scope))
        known = self._caches.get(key)
        if known is None:
            known = self._caches[key] = self._fills_only_with(base.id, name, scope)
        return known

    def _fills_only_with(self, cache: str, name: str, scope: Scope) -> bool:
        """``_cached_copy``'s reading of the module: every use of ``cache``."""
        raw = self.raw.get(cache, [])
        if len(raw) != 1 or raw[0][0] != "assign":
            return False
        defined = raw[0][1]
        empty = (isinstance(defined, ast.Dict) and not defined.keys) or (
            isinstance(defined, ast.Call)
            and isinstance(defined.func, ast.Name)
            and defined.func.id == "dict"
            and not defined.args
            and not defined.keywords
        )
        if not empty:
            return False
        parents = self._parents()
        for use in self._names_used.get(cache, ()):
            parent = parents.get(id(use))
            if isinstance(use.ctx, ast.Store):
                continue  # the definition (one binding, checked above)
            if isinstance(parent, ast.Attribute) and parent.attr == "get":
                call = parents.get(id(parent))
                if isinstance(call, ast.Call) and call.func is parent and len(call.args) == 1:
                    continue
                return False
            if (
                isinstance(parent, ast.Call)
                and parent.args == [use]
                and self.ref(parent.func, self.scope_around(parent)) == "builtins.len"
            ):
                continue
            if isinstance(parent, ast.Compare) and use is not parent.left:
                if all(isinstance(op, (ast.In, ast.NotIn)) for op in parent.ops):
                    continue
                return False
            if not isinstance(parent, ast.Subscript) or parent.value is not use:
                return False
            if isinstance(parent.ctx, ast.Load):
                continue
            stored = parents.get(id(parent))
            if not (
                isinstance(parent.ctx, ast.Store)
                and isinstance(stored, ast.Assign)
                and stored.targets == [parent]
                and isinstance(stored.value, ast.Name)
                and stored.value.id == name
                and self.scope_around(stored) is scope
            ):
                return False
        return True

    @override
    def _every_path_roots(self, node: FunctionNode) -> list[ast.AST]:
        return list(self._on_every_path(node)[0].nodes)

    @override
    def _methods_of(self, cls: ast.ClassDef) -> list[FunctionNode]:
        return _class_functions(cls, self)

    @override
    def _parents(self) -> dict[int, ast.AST]:
        """id of a node -> the node it is a child of, and ``_names_used``: built once,
        when first asked (only a module with a memoized build asks)."""
        if self._parent_map is None:
            parents: dict[int, ast.AST] = {}
            for node in self.nodes.walk(self.tree):
                for child in self.nodes.children(node):
                    parents[id(child)] = node
                if isinstance(node, ast.Name):
                    self._names_used.setdefault(node.id, []).append(node)
            self._parent_map = parents
        return self._parent_map

    def _straight(self, scope: Scope) -> set[int]:
        """Ids of the values of the assignments of ``scope`` that run on every path, or
        on every path that reaches what follows them: the statements of the function's
        own body (after an early ``return``, every later statement has run the earlier
        ones: jax's ``layer_norm_backward`` binds ``kernel`` twice after one)."""
        cached = self._straight_cache.get(id(scope))
        if cached is not None:
            return cached
        found: set[int] = set()
        if isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            roots = [*self._on_every_path(scope.node)[0].nodes, *scope.node.body]
            for root in roots:
                if isinstance(root, (ast.Assign, ast.AnnAssign)) and root.value is not None:
                    found.add(id(root.value))
        self._straight_cache[id(scope)] = found
        return found

    def _on_every_path(self, node: FunctionNode) -> tuple[_Roots, list[ast.AST]]:
        """What runs on every path of ``node`` that does not raise: its roots
        (``unconditional_roots``) and every node evaluated with them
        (``unconditional_nodes``), found once per function."""
        found = self._every_path.get(id(node))
        if found is None:
            roots = unconditional_roots(node.body)
            found = (roots, unconditional_nodes(roots.nodes, self.nodes))
            self._every_path[id(node)] = found
        return found

    @override
    def _callable_call(self, call: ast.Call, scope: Scope, depth: int) -> Callee:
        """What calling the result of ``call`` runs."""
        looked_up = literal_get(call)
        if looked_up is not None:  # ``KERNELS.get("fast")``: the entry (None raises)
            return self._table_entry(looked_up, scope, depth)
        entry = self.entry_of(call, scope)
        if entry is not None:
            return entry
        callee = self.ref(call.func, scope)
        if callee == PARTIAL and call.args and not isinstance(call.args[0], ast.Starred):
            inner = self.callable_of(call.args[0], scope, depth + 1)
            bound = self.call_args(call, scope, skip=1)
            if isinstance(inner, FunctionRef) and not inner.self_bound:
                merged = bound if inner.bound is None else model.partial_args(inner.bound, bound)
                return FunctionRef(inner.targets, merged)
            if isinstance(inner, FunctionRef):
                return UnknownCallable(f"{spelling(call)} (a partial of a method)")
            return (
                inner
                if isinstance(inner, KnownCallable | UnknownCallable)
                else UnknownCallable(spelling(call))
            )
        keeper = self._keeper(call, scope)
        if keeper is not None:
            kept = self.callable_of(keeper, scope, depth + 1)
            if callee in DIFFERENTIATING and isinstance(kept, FunctionRef | CallResult):
                return dataclasses.replace(kept, differentiated=True)
            return kept
        if self._is_keeper_factory(call, scope):
            return KNOWN  # ``jax.jit(static_argnames=...)``: a decorator, not a function
        if callee in fullnames.TP_DISPATCH:
            return PlatformChoice(tuple((k.arg, k.value) for k in call.keywords))
        if callee is not None:
            if callee in KEEPERS or is_opaque_name(callee):
                return KNOWN
            return CallResult(callee, self.call_args(call, scope), call)
        if isinstance(call.func, ast.Call) and self._is_keeper_factory(call.func, scope):
            if call.args and not isinstance(call.args[0], ast.Starred):
                return self.callable_of(call.args[0], scope, depth + 1)
        if not isinstance(call.func, ast.Call):
            # a callee held in a local variable or a container (``cls = OPS["tpu"]``,
            # ``cls(...)``): the result of calling what it holds
            inner = self.callable_of(call.func, scope, depth + 1)
            if isinstance(inner, FunctionRef) and len(inner.targets) == 1 and inner.bound is None:
                # ``self.build(x)(y)``, ``cls.build(x)(y)``: where the method's parameters
                # start is not known here (a static method's or not), so its arguments
                # are not either
                args = model.UNKNOWN_ARGS if inner.self_bound else self.call_args(call, scope)
                return CallResult(inner.targets[0], args, call)
        return UnknownCallable(f"{spelling(call)}(...)")

    def _keeper(self, call: ast.Call, scope: Scope) -> ast.expr | None:
        """The function ``jax.jit(f, ...)`` / ``jax.custom_vjp(f)`` keeps, if ``call`` is one."""
        callee = self.ref(call.func, scope)
        if (
            callee in KEEPERS
            and callee not in CONFIGURED_KEEPERS
            and call.args
            and not isinstance(call.args[0], ast.Starred)
        ):
            return call.args[0]
        if isinstance(call.func, ast.Call) and self._is_keeper_factory(call.func, scope):
            if call.args and not isinstance(call.args[0], ast.Starred):
                return call.args[0]
        return None

    @override
    def _is_keeper_factory(self, call: ast.Call, scope: Scope) -> bool:
        """``jax.jit(static_argnames=...)`` or ``functools.partial(jax.jit, ...)``."""
        callee = self.ref(call.func, scope)
        if callee in CONFIGURED_KEEPERS or (callee in KEEPERS and not call.args):
            return True
        return bool(callee == PARTIAL and call.args and self.ref(call.args[0], scope) in KEEPERS)

    def entry_of(self, call: ast.Call, scope: Scope) -> EntryRef | None:
        callee = self.ref(call.func, scope)
        if callee in ENTRIES:
            return EntryRef(callee, call)
        if callee == PARTIAL and call.args:
            inner = self.ref(call.args[0], scope)
            if inner in ENTRIES:
                return EntryRef(inner, call, partial=True)
        return None

    # ------------------------------------------------------------------ platform reads

    def _chain(
        self, node: ast.Attribute | ast.Name, scope: Scope
    ) -> tuple[list[tuple[ast.expr, str]], ast.expr | None]:
        """The references a dotted chain makes, outermost last (``pltpu``,
        ``pltpu.SemaphoreType``, ``pltpu.SemaphoreType.DMA`` with their fullnames), and
        the expression at its base when that is not a name (``jax.devices()[0]``)."""
        links: list[ast.expr] = []
        current: ast.expr = node
        while isinstance(current, ast.Attribute):
            links.append(current)
            current = current.value
        if not isinstance(current, ast.Name):
            return [], current
        base = self.lookup(current.id, scope)
        if not isinstance(base, GlobalName):
            return [], None
        out: list[tuple[ast.expr, str]] = [(current, base.fullname)]
        name = base.fullname
        for link in reversed(links):
            assert isinstance(link, ast.Attribute)
            name = _platforms.canonical_fullname(f"{name}.{link.attr}")
            out.append((link, name))
        return out, None

    def _name_fact(self, name: str) -> tuple[bool, tuple[str, ...] | None, bool]:
        """What a fullname referenced in a body is to ``_scan``: (it reads the platform,
        the backends it is evidence of, it is opaque: never recorded as a reference),
        worked out once per name."""
        found = self._name_facts.get(name)
        if found is None:
            key = namespace_key(name)
            backends = _BODY_TABLES.get(key) if key is not None else None
            found = self._name_facts[name] = (
                self._reads_platform_name(name),
                tuple(sorted(backends)) if backends is not None else None,
                is_opaque_name(name),
            )
        return found

    def _reads_platform_name(self, name: str) -> bool:
        if name in _PLATFORM_READS:
            return True
        if name.startswith(self.module + "."):
            local = self.bindings.get(name[len(self.module) + 1 :])
            return local is not None and local.kind == model.PLATFORM_VALUE
        return False

    def _expr_platform(self, expr: ast.AST, scope: Scope) -> str | None:
        """How an expression reads the platform, if it does (lambdas inside included).

        Once the scopes are built, each answer is kept (a variable's value is asked
        about from every condition reading it); while they are built, a module-level
        value is walked without listing its children (a table of literals is seldom
        walked again, and what a name reads may still change)."""
        if self._literal(expr) is not None:
            return None  # constants only: no name, no attribute
        if self._lookups is None:
            return self._reads_platform(walk_nodes(expr), scope)
        key = (expr, id(scope))
        if key in self._platform_reads:
            return self._platform_reads[key]
        found = self._platform_reads[key] = self._reads_platform(self.nodes.walk(expr), scope)
        return found

    def _literal(self, expr: ast.AST) -> bool | None:
        """``_literal_platform_strings``, kept (a table is asked about from every
        condition that reads it)."""
        if expr in self._literals:
            return self._literals[expr]
        found = self._literals[expr] = _literal_platform_strings(expr)
        return found

    def _reads_platform(self, nodes: Iterable[ast.AST], scope: Scope) -> str | None:
        """``_expr_platform`` of the expression whose nodes are ``nodes``, worked out."""
        for sub in nodes:
            if isinstance(sub, ast.Attribute) and sub.attr in PLATFORM_ATTRIBUTES:
                return f"{spelling(sub)} at line {sub.lineno}"
            if isinstance(sub, (ast.Name, ast.Attribute)):
                links, _ = self._chain(sub, scope)
                if links and self._name_fact(links[-1][1])[0]:
                    return f"{spelling(sub)} at line {getattr(sub, 'lineno', 0)}"
        return None

    def _may_ask_platform(self, test: ast.AST, scope: Scope, depth: int = 0) -> bool:
        """Whether a condition inside a kernel body may depend on the platform in a way
        read nowhere else: a platform string compared with (a parameter, a config
        field), a call of anything but JAX, numpy, the standard library or builtins (a
        guard helper of any module, a predicate, a method), or a variable assigned such
        a value. Primitives under such a condition are not the kernel's evidence: the
        code may run on one platform only, and silence is the answer when unsure.

        Each answer is kept: the same conditions and variables are asked about again
        (from every enclosing function's scan, and for every condition reading them)."""
        key = (test, id(scope), depth)
        known = self._asks_platform.get(key)
        if known is None:
            known = self._asks_platform[key] = self._reads_asking(test, scope, depth)
        return known

    def _reads_asking(self, test: ast.AST, scope: Scope, depth: int) -> bool:
        """``_may_ask_platform``, worked out."""
        literal = self._literal(test)
        if literal is not None:
            return literal
        for sub in self.nodes.walk(test):
            if isinstance(sub, ast.Constant) and isinstance(sub.value, str):
                if sub.value.lower() in _PLATFORM_STRINGS:
                    return True
            elif isinstance(sub, ast.Call):
                name = self.ref(sub.func, scope)
                if name is None or name.split(".", 1)[0] not in _NEVER_ASK_PLATFORM:
                    return True
            elif isinstance(sub, ast.Name) and depth < NAME_DEPTH:
                for value, value_scope in self._assigned(sub.id, scope):
                    if self._expr_platform(value, value_scope) is not None:
                        return True
                    if self._may_ask_platform(value, value_scope, depth + 1):
                        return True
        return False

    def _scan(self, func: ScopeNode) -> _Scan:
        """One walk of a function (nested functions and lambdas included, each read
        once): how it reads the platform, the globals it references, and its kernel
        evidence with the functions of this module it calls (what is not under a
        platform guard)."""
        cached = self._scans.get(id(func))
        if cached is not None:
            return cached
        result = _Scan()
        self._scans[id(func)] = result  # a cycle sees what is known so far
        scope = self.scopes.get(id(func))
        if scope is None:
            return result
        roots: list[ast.AST] = [func.body] if isinstance(func, ast.Lambda) else list(func.body)
        stack: list[tuple[ast.AST, bool]] = [(root, False) for root in roots]
        #: calls written as statements: their value is dead (``KEYWORD_EVIDENCE``)
        statements: set[int] = set()
        scopes, lists = self.scopes, self.nodes.lists
        while stack:
            node, guarded = stack.pop()
            kind = type(node)  # parsed trees hold no subclasses of ast's node classes
            if kind is ast.Expr:
                assert isinstance(node, ast.Expr)
                if type(node.value) is ast.Call:
                    statements.add(id(node.value))
            if id(node) in scopes and node is not func:
                assert isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda))
                args = node.args
                outer: list[ast.AST] = [*args.defaults, *[d for d in args.kw_defaults if d]]
                if not isinstance(node, ast.Lambda):
                    outer.extend(node.decorator_list)
                stack.extend((item, guarded) for item in outer)
                result.merge(self._scan(node), guarded)
                continue
            if kind in _CONDITIONAL_NODES:
                assert isinstance(node, (ast.If, ast.IfExp, ast.While))
                read = self._expr_platform(node.test, scope)
                if read is not None:
                    if result.platform is None:
                        result.platform = read
                    guarded = True
                elif not guarded and self._may_ask_platform(node.test, scope):
                    guarded = True
            if kind is ast.Match and not guarded:
                assert isinstance(node, ast.Match)
                guarded = self._may_ask_platform(node.subject, scope) or any(
                    self._may_ask_platform(case.pattern, scope) for case in node.cases
                )
            if kind is ast.Attribute or kind is ast.Name:
                assert isinstance(node, (ast.Attribute, ast.Name))
                links, base = self._chain(node, scope)
                attr_node: ast.expr = node
                while isinstance(attr_node, ast.Attribute):
                    if attr_node.attr in PLATFORM_ATTRIBUTES and result.platform is None:
                        result.platform = f"{spelling(attr_node)} at line {attr_node.lineno}"
                    attr_node = attr_node.value
                for link, name in links:
                    if name in ENTRIES:
                        result.names_entry = True
                    reads, backends, _ = self._name_fact(name)
                    if result.platform is None and reads:
                        result.platform = f"{spelling(link)} at line {link.lineno}"
                    if not guarded and backends is not None:
                        result.evidence.append(Evidence(backends, spelling(link), link.lineno))
                if links and not self._name_fact(links[-1][1])[2]:
                    result.refs.add(links[-1][1])
                if base is not None:
                    stack.append((base, guarded))
                continue
            if kind is ast.Call and not guarded:
                assert isinstance(node, ast.Call)
                target = self.kernel_function(node.func, scope)
                if target is not None:
                    result.callees.append(target)
                elif node.keywords and id(node) not in statements:
                    found = self._keyword_evidence(node, scope)
                    if found is not None:
                        result.evidence.append(found)
            children = lists.get(node)
            if children is None:
                children = lists[node] = child_nodes(node)
            stack.extend([(child, guarded) for child in children])
        result.evidence.sort(key=lambda e: e.line)
        return result

    def _keyword_evidence(self, call: ast.Call, scope: Scope) -> Evidence | None:
        """What a body call given a keyword proves (``KEYWORD_EVIDENCE``): a masked
        Triton load. The caller has made sure its value is used."""
        name = self.ref(call.func, scope)
        key = namespace_key(name) if name is not None else None
        rule = evidence_tables.KEYWORD_EVIDENCE.get(key) if key is not None else None
        if rule is None:
            return None
        keyword, backends = rule
        for item in call.keywords:
            if item.arg == keyword and not (
                isinstance(item.value, ast.Constant) and item.value.value is None
            ):
                what = f"{spelling(call.func)} with {keyword}="
                return Evidence(tuple(sorted(backends)), what, call.lineno)
        return None

    def body_evidence(self, kernel: ScopeNode) -> tuple[Evidence, ...]:
        """A kernel's body evidence: the kernel and the functions of this module it
        calls, ``BODY_DEPTH`` levels deep."""
        cached = self._body.get(id(kernel))
        if cached is not None:
            return cached
        found: list[Evidence] = []
        seen: set[int] = {id(kernel)}
        frontier: list[ScopeNode] = [kernel]
        for _ in range(BODY_DEPTH + 1):
            following: list[ScopeNode] = []
            for func in frontier:
                scan = self._scan(func)
                found.extend(scan.evidence)
                for callee in scan.callees:
                    if id(callee) not in seen:
                        seen.add(id(callee))
                        following.append(callee)
            frontier = following
        unique: dict[str, Evidence] = {}
        for item in found:
            unique.setdefault(item.what, item)
        result = tuple(unique.values())
        self._body[id(kernel)] = result
        return result

    def kernel_function(self, expr: ast.expr, scope: Scope, depth: int = 0) -> ScopeNode | None:
        """The function or lambda of this module ``expr`` names (through ``partial``)."""
        if depth > 3:
            return None
        if isinstance(expr, ast.Lambda):
            return expr
        if isinstance(expr, ast.Call):
            if self.ref(expr.func, scope) == PARTIAL and expr.args:
                return self.kernel_function(expr.args[0], scope, depth + 1)
            return None
        name = self.ref(expr, scope)
        if name is None:
            return None
        found = self.function_of(name)
        return found[0] if found is not None else None

    def kernel_of(self, expr: ast.expr, scope: Scope) -> tuple[ScopeNode | None, str | None]:
        """The kernel body an entry call is given as ``expr``: (the function or lambda of
        this module, None), followed through a variable bound once (or, in straight-line
        code, last before the call) to such a function, or (None, the fullname of a
        function of another module), or (None, None) when not known."""
        node = self.kernel_function(expr, scope)
        if node is None and isinstance(expr, ast.Name):
            found = self.lookup(expr.id, scope)
            value: ast.expr | None = None
            value_scope = scope
            if isinstance(found, LocalName):
                value, value_scope = self.value_at(found, position_of(expr)), found.scope
            elif isinstance(found, GlobalName):
                value, value_scope = self._assigned_once(expr.id, scope), self.module_scope
            if value is not None:
                node = self.kernel_function(value, value_scope)
        if node is not None:
            return node, None
        target = expr
        while (
            isinstance(target, ast.Call) and self.ref(target.func, scope) == PARTIAL and target.args
        ):
            target = target.args[0]
        name = self.ref(target, scope)
        if name is not None and not name.startswith(self.module + "."):
            return None, name
        return None, None

    def _values(self, expr: ast.expr, scope: Scope) -> list[tuple[ast.expr, Scope]]:
        """``expr`` and the values the variables inside it were assigned, followed
        through assignments up to ``NAME_DEPTH`` levels (``scratch = [m_scratch]``,
        ``m_scratch = pltpu.VMEM(...)``), each name looked up where it is used: in its
        scope or a scope around it."""
        out: list[tuple[ast.expr, Scope]] = [(expr, scope)]
        seen: set[int] = {id(expr)}
        frontier = [(expr, scope)]
        for _ in range(NAME_DEPTH):
            following: list[tuple[ast.expr, Scope]] = []
            for value, value_scope in frontier:
                for sub in self.nodes.walk(value):
                    if not isinstance(sub, ast.Name):
                        continue
                    for assigned, assigned_scope in self._assigned(sub.id, value_scope):
                        if id(assigned) not in seen:
                            seen.add(id(assigned))
                            following.append((assigned, assigned_scope))
            out.extend(following)
            frontier = following
            if not frontier:
                break
        return out

    def _assigned(self, name: str, scope: Scope) -> list[tuple[ast.expr, Scope]]:
        found = self.lookup(name, scope)
        if isinstance(found, LocalName):
            return [(value, found.scope) for _, value in found.scope.assigns.get(name, [])]
        if isinstance(found, GlobalName) and found.fullname == f"{self.module}.{name}":
            raw = self.raw.get(name, [])
            return [
                (value, self.module_scope)
                for kind, value in raw
                if kind == "assign" and isinstance(value, ast.expr)
            ]
        return []

    @override
    def _assigned_once(self, name: str, scope: Scope) -> ast.expr | None:
        """The value of a variable bound once, by a simple assignment; else None."""
        found = self.lookup(name, scope)
        if isinstance(found, LocalName):
            assigned = found.scope.assigns.get(name, [])
            return assigned[0][1] if found.simple and len(assigned) == 1 else None
        if isinstance(found, GlobalName) and found.fullname == f"{self.module}.{name}":
            raw = self.raw.get(name, [])
            if len(raw) == 1 and raw[0][0] == "assign" and isinstance(raw[0][1], ast.expr):
                return raw[0][1]
        return None

    def _evidence_in(
        self, values: list[tuple[ast.expr, Scope]], table: dict[tuple[str, str], frozenset[str]]
    ) -> list[Evidence]:
        out: list[Evidence] = []
        seen: set[str] = set()
        for value, scope in values:
            for sub in self.nodes.walk(value):
                if not isinstance(sub, (ast.Name, ast.Attribute)):
                    continue
                name = self.ref(sub, scope)
                key = namespace_key(name) if name is not None else None
                backends = table.get(key) if key is not None else None
                if backends is None:
                    continue
                what = spelling(sub)
                if what not in seen:
                    seen.add(what)
                    out.append(Evidence(tuple(sorted(backends)), what, sub.lineno))
        return out

    def argument_evidence(
        self,
        mesh: ast.expr | None,
        scratch: list[ast.expr],
        grid_specs: list[ast.expr],
        scope: Scope,
    ) -> list[tuple[str, Evidence]]:
        """What an entry call's arguments prove, as (kind, evidence), kind "mesh" or
        "scratch": a TPU or Mosaic GPU mesh by its constructor (``_mesh``), scratch
        allocations and a grid spec's scratch and scalar prefetch (``_scratch``). A
        variable is followed to what it was assigned, in ``scope`` (where the call is)
        or a scope around it."""
        found: list[tuple[str, Evidence]] = []
        if mesh is not None:
            found.extend(("mesh", ev) for ev in self._mesh(mesh, scope))
        if scratch or grid_specs:
            found.extend(("scratch", ev) for ev in self._scratch(scratch, grid_specs, scope))
        return found

    def _scratch(
        self, exprs: list[ast.expr], grid_specs: list[ast.expr], scope: Scope
    ) -> list[Evidence]:
        """Scratch allocations: ``scratch_shapes``/``scratch_types`` values, and the
        ``scratch_shapes=`` of a grid spec (``pltpu.PrefetchScalarGridSpec(...)``) with
        its scalar prefetch (``_grid_spec_literal``). Block specs are left out: their
        memory spaces prove nothing (see ``evidence_tables``)."""
        found: list[tuple[ast.expr, Scope]] = [(e, scope) for e in exprs]
        literal: list[Evidence] = []
        for spec in grid_specs:
            for value, value_scope in self._values(spec, scope):
                for sub in self.nodes.walk(value):
                    if isinstance(sub, ast.Call):
                        found.extend(
                            (k.value, value_scope)
                            for k in sub.keywords
                            if k.arg == "scratch_shapes"
                        )
                        literal.extend(self._grid_spec_literal(sub, value_scope))
        values: list[tuple[ast.expr, Scope]] = []
        for expr, expr_scope in found:
            values.extend(self._values(expr, expr_scope))
        return literal + self._evidence_in(values, dict(evidence_tables.SCRATCH_EVIDENCE))

    def _grid_spec_literal(self, call: ast.Call, scope: Scope) -> list[Evidence]:
        """``pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, ...)``: a keyword whose
        int literal (written there, or assigned once to the variable passed) reaches the
        threshold of ``evidence_tables.GRID_SPEC_EVIDENCE``."""
        name = self.ref(call.func, scope)
        key = namespace_key(name) if name is not None else None
        entry = evidence_tables.GRID_SPEC_EVIDENCE.get(key) if key is not None else None
        if entry is None:
            return []
        keyword, threshold, backends = entry
        for kw in call.keywords:
            value = kw.value
            if isinstance(value, ast.Name):
                value = self._assigned_once(value.id, scope) or value
            if (
                kw.arg == keyword
                and isinstance(value, ast.Constant)
                and type(value.value) is int
                and value.value >= threshold
            ):
                what = f"{spelling(call.func)}({keyword}={value.value})"
                return [Evidence(tuple(sorted(backends)), what, call.lineno)]
        return []

    def _mesh(self, expr: ast.expr, scope: Scope) -> list[Evidence]:
        for value, value_scope in self._values(expr, scope):
            for sub in self.nodes.walk(value):
                if isinstance(sub, ast.Call):
                    name = self.ref(sub.func, value_scope)
                    key = namespace_key(name) if name is not None else None
                    backends = evidence_tables.MESH_EVIDENCE.get(key) if key is not None else None
                    if backends is not None:
                        what = f"the mesh {spelling(sub)}"
                        return [Evidence(tuple(sorted(backends)), what, sub.lineno)]
        return []

    # ------------------------------------------------------------------ params

    def params_of(self, expr: ast.expr, scope: Scope, pos: Pos, depth: int = 0) -> str:
        """The backend of the params ``expr`` holds: a backend, "" (absent), "?" (unknown)."""
        if depth > PARAMS_DEPTH:
            return UNKNOWN
        if isinstance(expr, ast.Constant) and expr.value is None:
            return ""
        if isinstance(expr, ast.Name):
            found = self.lookup(expr.id, scope)
            if isinstance(found, LocalName) and found.simple:
                values = [v for at, v in found.scope.assigns.get(expr.id, []) if at < pos]
                if values:
                    return _same([self.params_of(v, found.scope, pos, depth + 1) for v in values])
                return UNKNOWN
            if isinstance(found, GlobalName) and found.fullname == f"{self.module}.{expr.id}":
                values = [v for v, _ in self._assigned(expr.id, self.module_scope)]
                if values:
                    end = (10**9, 0)
                    return _same(
                        [self.params_of(v, self.module_scope, end, depth + 1) for v in values]
                    )
            return UNKNOWN
        attr = self.self_attribute(expr, scope)
        if attr is not None:
            held = self._held_by_self(attr, scope)
            if held is None:
                return UNKNOWN
            return self.params_of(held[0], held[1], (10**9, 0), depth + 1)
        if isinstance(expr, ast.Call):
            name = self.ref(expr.func, scope)
            if name is not None:
                row = _platforms.PARAMS_BY_FULLNAME.get(name)
                if row is not None:
                    return row.backend
                found_fn = self.function_of(name)
                if found_fn is not None and not found_fn[0].decorator_list:
                    factory, factory_scope = found_fn
                    returned = [
                        self.params_of(v, factory_scope, (10**9, 0), depth + 1)
                        for v in _returns(factory.body)
                    ]
                    return _same(returned) if returned else UNKNOWN
        return UNKNOWN

    # ------------------------------------------------------------------ entry calls

    def _view(
        self, entry: EntrySpec, call: ast.Call, partial: bool
    ) -> tuple[dict[str, ast.expr], bool, list[ast.expr]]:
        """(arguments by parameter name, has a splat, the ``**`` splats)."""
        args: dict[str, ast.expr] = {}
        has_splat = False
        splats: list[ast.expr] = []
        positional = call.args[1:] if partial else call.args
        for i, arg in enumerate(positional):
            if isinstance(arg, ast.Starred):
                has_splat = True
                continue
            if i < len(entry.positional):
                args[entry.positional[i]] = arg
        for keyword in call.keywords:
            if keyword.arg is None:
                has_splat = True
                splats.append(keyword.value)
            else:
                args[keyword.arg] = keyword.value
        return args, has_splat, splats

    def entry_event(
        self, found: EntryRef, scope: Scope, line: int, decorated: FunctionNode | None
    ) -> EntryEvent:
        entry = ENTRIES[found.fullname]
        args, has_splat, _ = self._view(entry, found.call, found.partial)
        if "interpret" in args:
            interpret = self.argsum(args["interpret"], scope)
        else:
            interpret = UNKNOWN if has_splat else FALSE
        params = ""
        if "compiler_params" in args:
            params = self.params_of(args["compiler_params"], scope, position_of(found.call))
        elif has_splat:
            params = UNKNOWN
        declared = args.get(entry.platform_keyword) if entry.platform_keyword else None
        literal = declared.value if isinstance(declared, ast.Constant) else None
        evidence = [
            Evidence(backends, what, line)
            for backends, what in entry_evidence(
                entry, literal if isinstance(literal, str) else None
            )
        ]
        mesh = args.get(entry.mesh) if entry.mesh is not None else None
        scratch = [args[n] for n in ("scratch_shapes", "scratch_types") if n in args]
        grid_specs = [args["grid_spec"]] if "grid_spec" in args else []
        for _, found_evidence in self.argument_evidence(mesh, scratch, grid_specs, scope):
            evidence.append(found_evidence)
        kernel_node: ScopeNode | None = None
        kernel_ref: str | None = None
        if entry.body is not None and entry.body in args:
            kernel_node, kernel_ref = self.kernel_of(args[entry.body], scope)
        elif decorated is not None:
            kernel_node = decorated
        if kernel_node is not None:
            evidence.extend(self.body_evidence(kernel_node))
        return EntryEvent(line, found.fullname, params, tuple(evidence), kernel_ref, interpret)

    # ------------------------------------------------------------------ functions

    def _summarize(self, node: ScopeNode, scope: Scope) -> FunctionSummary:
        from typed_pallas_mypy.inference.program import ProgramBuilder

        scan = self._scan(node)
        blocked = scan.platform
        blocked_reason = f"reads the platform ({blocked})" if blocked is not None else None
        if isinstance(node, ast.Lambda):
            body: list[ast.stmt] = [_lambda_return(node)]
            opaque, derivative = False, False
            decorators: tuple[str, ...] = ()
            decorated_entry = None
        else:
            body = list(node.body)
            opaque, decorators, derivative = self._decorators(node, scope)
            decorated_entry = self._decorated_entry(node, scope)
        steps = ProgramBuilder(self, scope).body(body)
        return FunctionSummary(
            qualname=scope.qualname,
            line=node.lineno,
            params=tuple(scope.param_list),
            is_method=scope.is_method,
            opaque=opaque,
            blocked=blocked_reason,
            steps=steps,
            refs=tuple(sorted(scan.refs)),
            helper=self._helper_kind(node, scope) if not isinstance(node, ast.Lambda) else "",
            body_evidence=self.body_evidence(node),
            wrapper=self._wrapper(node, scope) if not isinstance(node, ast.Lambda) else None,
            self_attrs=(),
            decorators=decorators,
            derivative=derivative,
            decorator=self._decorator_kind(node, scope) if not isinstance(node, ast.Lambda) else "",
            decorated_entry=decorated_entry,
            condition=self._helper_condition(node, scope)
            if not isinstance(node, ast.Lambda)
            else None,
            returns_params=self._returns_params(node, scope),
            access=self._access(node, scope) if not isinstance(node, ast.Lambda) else "",
        )

    def _access(self, node: FunctionNode, scope: Scope) -> str:
        """``model.CLASSMETHOD`` / ``model.PROPERTY`` for a method so decorated."""
        if scope.class_qualname is None:
            return ""
        parent = scope.parent if scope.parent is not None else self.module_scope
        names = {self.ref(d, parent) for d in node.decorator_list}
        if "builtins.classmethod" in names:
            return model.CLASSMETHOD
        if names & _PROPERTIES and len(node.decorator_list) == 1:
            return model.PROPERTY
        return ""

    def _returns_params(self, node: ScopeNode, scope: Scope) -> str:
        """The backend of the params an undecorated function always returns: every
        ``return`` constructs the same class, and the body ends with one (no path returns
        ``None``); "" otherwise."""
        if isinstance(node, ast.Lambda) or node.decorator_list or not node.body:
            return ""
        if not isinstance(node.body[-1], ast.Return):
            return ""
        returned = _returns(node.body)
        if any(isinstance(r, ast.Constant) and r.value is None for r in returned):
            return ""
        found = {self.params_of(r, scope, (10**9, 0)) for r in returned}
        if len(found) != 1:
            return ""
        backend = found.pop()
        return "" if backend == UNKNOWN else backend

    def call_site(self, found: ast.Call) -> tuple[str, tuple[Step, ...]]:
        from typed_pallas_mypy.inference.program import ProgramBuilder

        scope = self.scope_around(found)
        steps = ProgramBuilder(self, scope).own(found)
        return scope.qualname, tuple(steps)

    @override
    def scope_around(self, found: ast.AST) -> Scope:
        """The innermost function or lambda whose span holds ``found`` (the module's
        scope at module level)."""
        line, column = position_of(found)
        end_line, end_column = end_of(found)
        scope = self.module_scope
        best: tuple[int, int] | None = None
        for start, end, node_scope in self._spans_over(line):
            if start <= (line, column) and (end_line, end_column) <= end:
                if best is None or start >= best:
                    best = start
                    scope = node_scope
        return scope

    def _spans_over(self, line: int) -> list[tuple[Pos, Pos, Scope]]:
        """(start, end, scope) of each function and lambda whose span holds ``line``,
        functions first, each in the order it was found (an index by line, built
        again when a function or lambda was added since)."""
        count = len(self.function_nodes) + len(self.lambda_nodes)
        if count != self._spans_count:
            by_line: dict[int, list[tuple[Pos, Pos, Scope]]] = {}
            for node, node_scope in [*self.function_nodes.values(), *self.lambda_nodes.values()]:
                item = ((node.lineno, node.col_offset), end_of(node), node_scope)
                for at in range(item[0][0], item[1][0] + 1):
                    by_line.setdefault(at, []).append(item)
            self._spans_by_line = by_line
            self._spans_count = count
        return self._spans_by_line.get(line, [])

    def definition_steps(self, node: FunctionNode, scope: Scope) -> list[Step]:
        """What defining a nested function runs: a ``pl.core_map(mesh)`` decorator runs
        the function as a kernel right away."""
        out: list[Step] = []
        for decorator in node.decorator_list:
            if not isinstance(decorator, ast.Call):
                continue
            entry = self.entry_of(decorator, scope)
            if entry is not None and entry.fullname in (
                fullnames.CORE_MAP,
                fullnames.CORE_MAP_PUBLIC,
            ):
                out.append(self.entry_event(entry, scope, decorator.lineno, node))
        return out

    def _decorated_entry(self, node: ScopeNode, scope: Scope) -> EntryEvent | None:
        """The entry point a ``functools.partial(pl.pallas_call, ...)`` (or
        ``pl.kernel(...)``) decorator makes of ``node``, if any (``pl.core_map`` runs
        at definition: not here)."""
        if isinstance(node, ast.Lambda):
            return None
        parent = scope.parent if scope.parent is not None else self.module_scope
        for decorator in node.decorator_list:
            if not isinstance(decorator, ast.Call):
                continue
            entry = self.entry_of(decorator, parent)
            if entry is None or entry.fullname in (fullnames.CORE_MAP, fullnames.CORE_MAP_PUBLIC):
                continue
            if len(node.decorator_list) != 1:
                return None  # another decorator changes what runs
            return self.entry_event(entry, parent, decorator.lineno, node)
        return None

    def as_entry(self, call: ast.Call | None, scope: Scope) -> EntryEvent | None:
        """A call that passes params (``compiler_params=``, or a params constructor as
        an argument) and a kernel, read as the ``pl.pallas_call`` a wrapper would make
        of them (``qpl.pallas_call``, ``my_pallas_call(kernel, shape, params)``);
        ``EntryEvent.via`` says where each came from (``combine`` matches it with the
        wrapper's parameters)."""
        if call is None:
            return None
        params_from: str | None = None
        params_expr: ast.expr | None = None
        for keyword in call.keywords:
            if keyword.arg == "compiler_params":
                params_from, params_expr = keyword.arg, keyword.value
        positional: list[ast.expr] = []
        for arg in call.args:
            if isinstance(arg, ast.Starred):
                break
            positional.append(arg)
        if params_expr is None:
            for i, arg in enumerate(positional):
                if self.params_of(arg, scope, position_of(call)) not in ("", UNKNOWN):
                    params_from, params_expr = str(i), arg
                    break
        if params_expr is None or params_from is None or not positional:
            return None
        kernel_expr = positional[0]
        read = ast.Call(
            func=call.func,
            args=[kernel_expr],
            keywords=[
                ast.keyword(arg="compiler_params", value=params_expr),
                *(k for k in call.keywords if k.arg not in ("compiler_params", "kernel", None)),
            ],
        )
        ast.copy_location(read, call)
        entry = EntryRef(fullnames.PALLAS_CALL_PUBLIC, read)
        event = self.entry_event(entry, scope, call.lineno, None)
        return dataclasses.replace(event, via=("0", params_from))

    def _decorators(self, node: FunctionNode, scope: Scope) -> tuple[bool, tuple[str, ...], bool]:
        """(opaque, decorators of this project or library to resolve, custom derivative).

        A decorator keeps the function when it is one of ``KEEPERS`` (or a method
        keeper on a method), an entry point's partial (``decorated_entry``), or a name
        ``combine`` resolves to a keeping decorator (a variable holding one, a
        decorator whose wrapper uses ``functools.wraps``)."""
        parent = scope.parent if scope.parent is not None else self.module_scope
        unresolved: list[str] = []
        derivative = False
        for decorator in node.decorator_list:
            if isinstance(decorator, ast.Call) and self.entry_of(decorator, parent) is not None:
                continue
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            name = self.ref(target, parent)
            if name == PARTIAL and isinstance(decorator, ast.Call) and decorator.args:
                name = self.ref(decorator.args[0], parent)
            if name in CUSTOM_DERIVATIVES:
                derivative = True
            if name in KEEPERS:
                continue
            if isinstance(decorator, ast.Attribute) and decorator.attr in jax_api.DERIVATIVE_RULES:
                continue  # ``@f.defjvp``: registers the function as f's rule, returns it
            if scope.class_qualname is not None and name in METHOD_KEEPERS:
                continue
            if scope.class_qualname is not None and name in _PROPERTIES:
                continue  # its getter runs when the attribute is read (``access``)
            if isinstance(target, ast.Name) and self._every_binding_keeps(
                target.id, parent, called=isinstance(decorator, ast.Call)
            ):
                continue
            if name is None or is_opaque_name(name):
                return True, (), derivative
            # a name of this project or library: a variable holding a keeper, or a
            # decorator built with functools.wraps (``combine`` decides)
            marker = "()" if isinstance(decorator, ast.Call) else ""
            unresolved.append(name + marker)
        return False, tuple(unresolved), derivative

    def _every_binding_keeps(self, local: str, scope: Scope, *, called: bool) -> bool:
        """A module-level decorator name bound more than once (``try: from typed_pallas
        import platform`` / ``except ImportError: def platform(name): return lambda fn: fn``,
        or the same under ``if``) whose every binding gives back the function it decorates:
        whichever runs, the function stays what it is. ``called``: ``@name(...)``."""
        found = self.lookup(local, scope)
        binding = self.bindings.get(local)
        if not isinstance(found, GlobalName) or binding is None or binding.kind != model.AMBIGUOUS:
            return False
        candidates = self.raw.get(local, [])
        for kind, value in candidates:
            if kind == "import":
                target = str(value)
                if target in fullnames.PLATFORM_TAG and called:
                    continue  # ``@typed_pallas.platform("tpu")`` tags and returns the function
                if target in KEEPERS and not called:
                    continue
                return False
            if kind != "def" or not isinstance(value, (ast.FunctionDef, ast.AsyncFunctionDef)):
                return False
            if not _gives_back_its_argument(value, self.nodes, factory=called):
                return False
        return bool(candidates)

    def _decorator_kind(self, node: FunctionNode, scope: Scope) -> str:
        """What ``node`` is as a decorator, from every value it returns: KEEPS when
        each is its first parameter kept (``functools.wraps(fn)`` closures, ``jax.jit(fn)``
        and the other keepers, a variable holding one), KEEPS_FACTORY when each is such
        a decorator (``def deco(**options): return inner``), KEEPS_BOTH when it also
        returns ``functools.partial(deco, ...)`` (``@ejit`` and ``@ejit(...)`` alike)."""
        values = _returned_values(node.body, self.nodes)
        if not values or not scope.param_list:
            return ""
        wrapped = scope.param_list[0].name
        kinds: set[str] = set()
        for value in values:
            kind = self._returned_decorator(value, scope, wrapped, node)
            if not kind:
                return ""
            kinds.add(kind)
        if kinds == {model.KEEPS_FACTORY}:
            return model.KEEPS_FACTORY
        if kinds == {model.KEEPS}:
            return model.KEEPS
        if kinds == {model.KEEPS, "self"}:
            return model.KEEPS_BOTH
        return ""

    def _returned_decorator(
        self, value: ast.expr, scope: Scope, wrapped: str, node: FunctionNode
    ) -> str:
        """KEEPS, KEEPS_FACTORY, "self" (``functools.partial(<this function>, ...)``) or
        "" for one value a decorator returns."""
        if isinstance(value, ast.Call):
            callee = self.ref(value.func, scope)
            first = value.args[0] if value.args else None
            if callee in KEEPERS and isinstance(first, ast.Name) and first.id == wrapped:
                return model.KEEPS
            own = f"{self.module}.{scope.qualname}"
            if callee == PARTIAL and first is not None and self.ref(first, scope) == own:
                return "self"
            return ""
        if isinstance(value, ast.Lambda):
            # ``return lambda fn: fn``: a decorator that gives back what it decorates
            return model.KEEPS_FACTORY if _is_identity_lambda(value) else ""
        if not isinstance(value, ast.Name):
            return ""
        found = self.lookup(value.id, scope)
        if isinstance(found, ParamRef) and found.scope is scope and value.id == wrapped:
            return model.KEEPS  # ``def deco(fn): ...; return fn``: the function itself
        if isinstance(found, LocalName):
            held = [v for _, v in found.scope.assigns.get(found.name, [])] if found.simple else []
            kinds = {self._returned_decorator(v, scope, wrapped, node) for v in held}
            return kinds.pop() if len(kinds) == 1 and "self" not in kinds else ""
        if not isinstance(found, GlobalName):
            return ""
        inner = self.function_of(found.fullname)
        if inner is None or inner[1].parent is not scope:
            return ""
        inner_node, inner_scope = inner
        if self._wraps_parameter(inner_node, scope, wrapped):
            return model.KEEPS
        if self._decorator_kind(inner_node, inner_scope) == model.KEEPS:
            return model.KEEPS_FACTORY
        return ""

    def _wraps_parameter(self, node: FunctionNode, outer: Scope, wrapped: str) -> bool:
        """``@functools.wraps(fn) def wrapper(*args, **kwargs): ...``: a closure standing
        for ``fn``, the parameter ``wrapped`` of ``outer``."""
        for decorator in node.decorator_list:
            if (
                isinstance(decorator, ast.Call)
                and self.ref(decorator.func, outer) == "functools.wraps"
                and decorator.args
                and isinstance(decorator.args[0], ast.Name)
                and decorator.args[0].id == wrapped
            ):
                found = self.lookup(decorator.args[0].id, outer)
                if isinstance(found, ParamRef) and found.scope is outer:
                    return True
        return False

    def _helper_kind(self, node: FunctionNode, scope: Scope) -> str:
        stmts = [s for s in node.body if not is_docstring(s)]
        if len(stmts) != 1 or not isinstance(stmts[0], ast.Return) or stmts[0].value is None:
            return ""
        return "platform" if self._expr_platform(stmts[0].value, scope) is not None else "return"

    # ------------------------------------------------------------------ wrappers

    def _wrapper(self, node: FunctionNode, scope: Scope) -> WrapperFact | None:
        """As ``platform_facts._wrapper``, also through a returned closure (qwix's
        ``pallas_call`` builds the call in ``wrapper`` and returns it) and with the
        wrapper's own ``**kwargs`` splatted into the entry call."""
        if not self._scan(node).names_entry:
            return None  # no entry call in it, its closures or their decorators
        roots, nodes = self._on_every_path(node)
        candidates: list[tuple[FunctionNode, Scope, _Roots, list[ast.AST]]] = [
            (node, scope, roots, nodes)
        ]
        if roots.returned is not None and isinstance(roots.returned, ast.Name):
            name = self.ref(roots.returned, scope)
            found = self.function_of(name) if name is not None else None
            if found is not None and found[1].parent is scope:
                inner_roots, inner_nodes = self._on_every_path(found[0])
                candidates.append((found[0], found[1], inner_roots, inner_nodes))
        positions = _positions(scope)
        for candidate, candidate_scope, candidate_roots, candidate_nodes in candidates:
            decorated = self._decorated_wrapper(candidate_roots, candidate_scope, scope, positions)
            if decorated is not None:
                return decorated
            for sub in candidate_nodes:
                if not isinstance(sub, ast.Call):
                    continue
                entry = self.entry_of(sub, candidate_scope)
                if entry is None or entry.partial:
                    continue
                spec = ENTRIES[entry.fullname]
                args, _, splats = self._view(spec, sub, False)
                kwargs: str | None = None
                for splat in splats:
                    found_param = (
                        self.lookup(splat.id, candidate_scope)
                        if isinstance(splat, ast.Name)
                        else None
                    )
                    if (
                        isinstance(found_param, ParamRef)
                        and found_param.scope is scope
                        and scope.params[found_param.name].kind == model.DSTAR
                    ):
                        kwargs = found_param.name
                    else:
                        kwargs = None
                        break
                star_args = self._forwarded_star(sub, candidate_scope, scope)
                if star_args is None and any(
                    isinstance(a, ast.Starred) for a in sub.args[len(spec.positional) :]
                ):
                    continue
                if len(splats) != (1 if kwargs is not None else 0):
                    continue
                forwards: list[tuple[str, str, int]] = []
                for formal, actual in args.items():
                    param = self._forwarded_param(actual, candidate_scope, scope, formal, spec)
                    if param is not None:
                        forwards.append((formal, param, positions.get(param, -1)))
                forwarded = {f[0] for f in forwards}
                if star_args is not None and spec.body is not None and spec.body not in args:
                    forwarded = forwarded | {spec.body}  # the kernel comes in through *args
                if spec.body is None or spec.body not in forwarded:
                    continue
                if "compiler_params" not in forwarded and kwargs is None:
                    continue
                interpret = args.get("interpret")
                if (
                    interpret is not None
                    and "interpret" not in forwarded
                    and self.argsum(interpret, candidate_scope) != FALSE
                ):
                    return None
                deferred = candidate is not node or sub is candidate_roots.returned
                return WrapperFact(
                    entry.fullname,
                    tuple(sorted(forwards)),
                    kwargs,
                    deferred,
                    sub.lineno,
                    star_args,
                )
        return None

    def _forwarded_star(
        self, call: ast.Call, where: Scope, wrapper: Scope
    ) -> tuple[str, int] | None:
        """(name, position) of the wrapper's ``*args`` when the entry call passes it first
        (``pl.pallas_call(*args, **kwargs)``)."""
        if not call.args or not isinstance(call.args[0], ast.Starred):
            return None
        value = call.args[0].value
        if not isinstance(value, ast.Name):
            return None
        found = self.lookup(value.id, where)
        if not isinstance(found, ParamRef) or found.scope is not wrapper:
            return None
        param = wrapper.params[value.id]
        if param.kind != model.STAR or param.rebound:
            return None
        index = wrapper.param_list.index(param)
        return (value.id, index - (1 if wrapper.is_method else 0))

    def _decorated_wrapper(
        self, roots: _Roots, where: Scope, wrapper: Scope, positions: dict[str, int]
    ) -> WrapperFact | None:
        """A nested function run by a ``pl.core_map(mesh, compiler_params=...)`` decorator
        that calls the wrapper's kernel parameter (tpu-inference's ``core_map_helper.kernel``,
        a drop-in ``pl.kernel``): a wrapper of ``pl.kernel``."""
        for definition in roots.defs:
            for decorator in definition.decorator_list:
                if not isinstance(decorator, ast.Call):
                    continue
                entry = self.entry_of(decorator, where)
                if entry is None or entry.fullname not in (
                    fullnames.CORE_MAP,
                    fullnames.CORE_MAP_PUBLIC,
                ):
                    continue
                inner = self.scopes.get(id(definition))
                kernel = (
                    self._calls_parameter(definition, inner, wrapper) if inner is not None else None
                )
                if kernel is None:
                    continue
                spec = ENTRIES[entry.fullname]
                args, has_splat, _ = self._view(spec, decorator, False)
                if has_splat:
                    continue
                forwards = [("body", kernel, positions.get(kernel, -1))]
                for formal, actual in args.items():
                    param = self._forwarded_param(actual, where, wrapper, formal, spec)
                    if param is not None:
                        forwards.append((formal, param, positions.get(param, -1)))
                if "compiler_params" not in {f[0] for f in forwards}:
                    continue
                interpret = args.get("interpret")
                if interpret is not None and not any(f[0] == "interpret" for f in forwards):
                    if self.argsum(interpret, where) != FALSE:
                        return None
                return WrapperFact(
                    fullnames.PL_KERNEL_PUBLIC,
                    tuple(sorted(forwards)),
                    None,
                    True,
                    decorator.lineno,
                    None,
                )
        return None

    def _calls_parameter(self, node: FunctionNode, scope: Scope, wrapper: Scope) -> str | None:
        """The parameter of ``wrapper`` that ``node`` calls on every path (a kernel that
        runs the wrapper's kernel argument: ``def wrapped(*refs): return kernel(*refs)``)."""
        for sub in self._on_every_path(node)[1]:
            if isinstance(sub, ast.Call) and isinstance(sub.func, ast.Name):
                found = self.lookup(sub.func.id, scope)
                if isinstance(found, ParamRef) and found.scope is wrapper:
                    param = wrapper.params[sub.func.id]
                    if not param.rebound and param.kind not in (model.STAR, model.DSTAR):
                        return sub.func.id
        return None

    def _forwarded_param(
        self, actual: ast.expr, where: Scope, wrapper: Scope, formal: str, spec: EntrySpec
    ) -> str | None:
        """The wrapper parameter ``actual`` passes on: a parameter by name, or (for the
        kernel) a lambda or a nested function that calls that parameter."""
        if isinstance(actual, ast.Name):
            found = self.lookup(actual.id, where)
            if isinstance(found, ParamRef) and found.scope is wrapper:
                param = wrapper.params[actual.id]
                if not param.rebound and param.kind not in (model.STAR, model.DSTAR):
                    return actual.id
            if formal == spec.body and isinstance(found, GlobalName):
                local = self.function_of(found.fullname)
                if local is not None and ".<locals>." in found.fullname:
                    return self._calls_parameter(local[0], local[1], wrapper)
            return None
        if formal == spec.body and isinstance(actual, ast.Lambda):
            body = actual.body
            lambda_scope = self.scopes.get(id(actual), where)
            if isinstance(body, ast.Call) and isinstance(body.func, ast.Name):
                return self._forwarded_param(body.func, lambda_scope, wrapper, formal, spec)
        return None

    # ------------------------------------------------------------------ classes

    def _class_summary(self, qualname: str, cls: ast.ClassDef) -> ClassSummary:
        bases: list[str] = []
        for base in cls.bases:
            # ``Base[T]``: a generic alias, whose class is ``Base`` (``__mro_entries__``)
            named = base.value if isinstance(base, ast.Subscript) else base
            name = self.ref(named, self.module_scope)
            bases.append(name if name is not None else UNKNOWN)
        if cls.keywords:
            bases.append(UNKNOWN)  # a metaclass may change what calls do
        opaque = False
        dataclass_kw_only = False
        is_dataclass = False
        for decorator in cls.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            name = self.ref(target, self.module_scope)
            if name not in CLASS_KEEPERS:
                opaque = True
            if name in DATACLASS_DECORATORS:
                is_dataclass = True
                if isinstance(decorator, ast.Call) and any(
                    k.arg == "kw_only" for k in decorator.keywords
                ):
                    dataclass_kw_only = True
        methods: list[tuple[str, str]] = []
        for stmt in _class_functions(cls, self):
            methods.append((stmt.name, f"{qualname}.{stmt.name}"))
        fields = (
            self._fields(cls) if is_dataclass and not cls.bases and not dataclass_kw_only else None
        )
        defaults: list[tuple[str, str]] = []
        for item in cls.body:
            if isinstance(item, ast.Assign):
                targets, value = list(item.targets), item.value
            elif isinstance(item, ast.AnnAssign) and item.value is not None:
                targets, value = [item.target], item.value
            else:
                continue
            literal = _literal(value)
            for target in targets:
                if isinstance(target, ast.Name) and literal is not None:
                    defaults.append((target.id, literal))
        return ClassSummary(
            qualname, cls.lineno, tuple(bases), opaque, tuple(methods), fields, tuple(defaults)
        )

    @override
    def _fields(self, cls: ast.ClassDef) -> tuple[Param, ...] | None:
        out: list[Param] = []
        for stmt in cls.body:
            if not isinstance(stmt, ast.AnnAssign) or not isinstance(stmt.target, ast.Name):
                continue
            annotation = ast.unparse(stmt.annotation) if stmt.annotation is not None else ""
            if "ClassVar" in annotation:
                continue
            if "InitVar" in annotation or "KW_ONLY" in annotation:
                return None  # constructor positions this reader does not model
            default = model.REQUIRED
            if stmt.value is not None:
                if isinstance(stmt.value, ast.Call) and (
                    self.ref(stmt.value.func, self.module_scope) in _FIELD
                ):
                    if any(k.arg in ("kw_only", "init") for k in stmt.value.keywords):
                        return None
                    default = UNKNOWN
                else:
                    default = self._default(stmt.value)
            out.append(Param(stmt.target.id, model.POS, default))
        return tuple(out)

    def _init_attrs(self, cls: ast.ClassDef, qualname: str) -> tuple[tuple[str, str], ...]:
        """Instance attributes ``__init__`` sets once from a parameter (``self.x = x``)
        and no method sets again."""
        found = self.function_nodes.get(f"{qualname}.__init__")
        if found is None:
            return ()
        node, scope = found
        self_name = scope.self_name
        if self_name is None:
            return ()
        counts = self._self_assignments(cls, qualname)
        out: list[tuple[str, str]] = []
        for root in self._on_every_path(node)[0].nodes:
            if not isinstance(root, ast.Assign) or len(root.targets) != 1:
                continue
            target = root.targets[0]
            if not (
                isinstance(target, ast.Attribute)
                and isinstance(target.value, ast.Name)
                and target.value.id == self_name
                and counts.get(target.attr) == 1
                and isinstance(root.value, ast.Name)
            ):
                continue
            param = scope.params.get(root.value.id)
            if param is None or param.rebound:
                continue
            if param.kind == model.DSTAR:
                out.append((target.attr, "kwargs"))
            elif param.kind != model.STAR:
                out.append((target.attr, f"p:{param.name}"))
        return tuple(sorted(out))

    # ------------------------------------------------------------------ aliases

    def _alias(self, name: str) -> Alias | None:
        value = self.raw[name][0][1]
        if not isinstance(value, ast.expr):
            return None
        if isinstance(value, ast.Dict):
            return self._table(value)
        return self.alias_of(value, self.module_scope)

    def _table(self, value: ast.Dict) -> Alias | None:
        """``{"tpu": f, "gpu": g, "default": h}``: a platform table (every key a platform
        name, ``"cpu"`` or ``"default"``)."""
        keys: list[str] = []
        targets: list[str] = []
        for key, item in zip(value.keys, value.values):
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                return None
            if key.value not in _platforms.LOWERINGS_OF_NAME and key.value not in (
                "cpu",
                "default",
            ):
                return None
            what = self.callable_of(item, self.module_scope)
            if isinstance(what, FunctionRef) and len(what.targets) == 1 and what.bound is None:
                keys.append(key.value)
                targets.append(what.targets[0])
        if not keys:
            return None
        return Alias(value.lineno, model.TABLE, tuple(targets), keys=tuple(keys))


# --------------------------------------------------------------------------- helpers


def _class_functions(cls: ast.ClassDef, reader: _ModuleReader) -> list[FunctionNode]:
    """The methods of a class body (the implementation of an overload)."""
    out: dict[str, FunctionNode] = {}
    for stmt in cls.body:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            if reader._is_overload(stmt.decorator_list, None):
                continue
            out[stmt.name] = stmt
    return list(out.values())


def _literal(expr: ast.expr) -> str | None:
    """``"F"`` for ``False``/``None``/``0``, ``"T"`` for ``True``/non-zero ints."""
    if not isinstance(expr, ast.Constant):
        return None
    value = expr.value
    if value is None or value is False or (type(value) is int and value == 0):
        return FALSE
    if value is True or type(value) is int:
        return TRUE
    return None


def _same(results: list[str]) -> str:
    known = [r for r in results if r != ""]
    if not known:
        return "" if results else UNKNOWN
    first = known[0]
    if first == UNKNOWN or any(r != first for r in known):
        return UNKNOWN
    return first


def _returns(body: Sequence[ast.stmt]) -> list[ast.expr]:
    out: list[ast.expr] = []
    for stmt in body:
        if isinstance(stmt, ast.Return) and stmt.value is not None:
            out.append(stmt.value)
        elif isinstance(stmt, ast.If):
            out.extend(_returns(stmt.body))
            out.extend(_returns(stmt.orelse))
    return out


def _outer(args: CallArgs) -> CallArgs:
    """Arguments summarised in an enclosing function, seen from a nested one: that
    function's parameters are the nested one's outer parameters."""

    def convert(value: ArgSum) -> ArgSum:
        return f"o:{value[2:]}" if value.startswith("p:") else value

    return CallArgs(
        tuple(convert(v) for v in args.positional),
        tuple((k, convert(v)) for k, v in args.keywords),
        args.star,
        tuple(convert(v) for v in args.star_kwargs),
    )


def _positions(scope: Scope) -> dict[str, int]:
    """Parameter name -> the position a caller passes it at (-1: keyword only)."""
    out: dict[str, int] = {}
    index = 0
    params = scope.param_list[1:] if scope.is_method else scope.param_list
    for param in params:
        if param.kind in (model.POSONLY, model.POS):
            out[param.name] = index
            index += 1
        else:
            out[param.name] = -1
    return out


def _lambda_return(node: ast.Lambda) -> ast.stmt:
    """A lambda's body as the ``return`` statement it is."""
    stmt = ast.Return(value=node.body)
    ast.copy_location(stmt, node.body)
    return stmt


#: ``typing.TYPE_CHECKING`` (False when the module runs), as a name or an attribute of
#: any module name (``typing``, ``typing_extensions``, ``import typing as t``)
_TYPE_CHECKING: Final = "TYPE_CHECKING"


def _import_time_truth(test: ast.expr) -> bool | None:
    """What a module-level ``if`` test is when the module runs: False for
    ``TYPE_CHECKING`` (True only for type checkers), a literal's truth (``if False:``,
    ``if 0:``), negations of those; None for anything else (either branch may run)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        inner = _import_time_truth(test.operand)
        return None if inner is None else not inner
    if isinstance(test, ast.Constant) and isinstance(test.value, (bool, int, str, type(None))):
        return bool(test.value)
    if isinstance(test, ast.Name) and test.id == _TYPE_CHECKING:
        return False
    if isinstance(test, ast.Attribute) and isinstance(test.value, ast.Name):
        return False if test.attr == _TYPE_CHECKING else None
    return None


def _gives_back_its_argument(node: FunctionNode, index: ChildIndex, *, factory: bool) -> bool:
    """``def deco(fn): return fn`` (``factory``: ``def deco(*a): return lambda fn: fn``):
    every value the function returns is its first parameter (a lambda returning its own)."""
    values = _returned_values(node.body, index)
    params = node.args.posonlyargs + node.args.args
    if not values:
        return False
    if factory:
        return all(isinstance(v, ast.Lambda) and _is_identity_lambda(v) for v in values)
    return bool(params) and all(isinstance(v, ast.Name) and v.id == params[0].arg for v in values)


def _is_identity_lambda(node: ast.Lambda) -> bool:
    """``lambda fn: fn``: one positional parameter, returned as it is."""
    params = node.args.posonlyargs + node.args.args
    return (
        len(params) == 1
        and not node.args.vararg
        and not node.args.kwonlyargs
        and isinstance(node.body, ast.Name)
        and node.body.id == params[0].arg
    )


def _returned_values(body: Sequence[ast.stmt], index: ChildIndex) -> list[ast.expr]:
    """The values of every ``return`` of a body (nested functions and classes left out);
    an empty list when one returns nothing (``index``: the children of the tree's nodes)."""
    out: list[ast.expr] = []
    stack: list[ast.AST] = list(body)
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
            continue
        if isinstance(node, ast.Return):
            if node.value is None:
                return []
            out.append(node.value)
            continue
        if isinstance(node, ast.expr):
            continue
        stack.extend(index.children(node))
    return out
