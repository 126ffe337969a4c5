"""Platform evidence of one call's arguments: mesh and scratch allocations.

Every reference is resolved through mypy's symbol tables (``RefExpr.fullname``) and
mapped to a backend namespace by its module (``fullnames.BACKEND_NAMESPACES``), then
looked up in ``evidence_tables``; a mesh argument is also read from its declared type.
References that sit under a platform guard are not evidence: that code only runs on
one platform.

What it does not do: read a kernel's body (the inference reads every kernel body, of
the project or of a library, with one rule: ``inference.reader``), follow other
modules, or decide anything; ``calls.py`` compares the evidence with the params.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from mypy.nodes import CallExpr, Expression, FuncItem, IntExpr, NameExpr, Node, RefExpr
from mypy.types import Instance, Type, get_proper_type

from typed_pallas_mypy import evidence_tables, fullnames
from typed_pallas_mypy.transformers.module_index import ModuleIndex
from typed_pallas_mypy.transformers.nodes import ref_fullname, spelling, start_of, subexpressions

#: How many variable assignments deep an argument is followed.
_NAME_DEPTH: Final = 3


@dataclass(frozen=True)
class Evidence:
    """One reason a kernel can only lower with ``backends``."""

    backends: frozenset[str]
    #: source spelling, e.g. ``pltpu.make_async_copy``
    what: str
    line: int

    def describe(self) -> str:
        label = " or ".join(sorted(evidence_tables.BACKEND_LABEL[b] for b in self.backends))
        return f"{self.what} at line {self.line} makes this kernel {label}-only"


def namespace_key(fullname: str) -> tuple[str, str] | None:
    """(backend namespace, last name) of a backend's name; None for any other name."""
    if fullname in _NAMESPACE_KEYS:
        return _NAMESPACE_KEYS[fullname]
    found: tuple[str, str] | None = None
    for prefix, namespace in fullnames.BACKEND_NAMESPACES:
        if fullname.startswith(prefix):
            found = (namespace, fullname.rsplit(".", 1)[1])
            break
    if len(_NAMESPACE_KEYS) < _NAMESPACE_CACHE_SIZE:
        _NAMESPACE_KEYS[fullname] = found
    return found


#: fullname -> namespace_key(fullname): a module has thousands of references and few names
_NAMESPACE_KEYS: dict[str, tuple[str, str] | None] = {}
_NAMESPACE_CACHE_SIZE: Final = 200_000


def _lookup(
    expr: Expression, table: Mapping[tuple[str, str], frozenset[str]]
) -> frozenset[str] | None:
    name = ref_fullname(expr)
    if name is None:
        return None
    key = namespace_key(name)
    return table.get(key) if key is not None else None


def from_expressions(
    nodes: list[Expression],
    table: Mapping[tuple[str, str], frozenset[str]],
    index: ModuleIndex | None = None,
) -> list[Evidence]:
    out: list[Evidence] = []
    seen: set[str] = set()
    for expr in nodes:
        if not isinstance(expr, RefExpr):
            continue
        backends = _lookup(expr, table)
        if backends is None:
            continue
        if index is not None and index.guard_at(start_of(expr)) is not None:
            continue  # platform-guarded code inside the kernel
        what = spelling(expr)
        if what in seen:
            continue
        seen.add(what)
        out.append(Evidence(backends, what, expr.line))
    return out


def _assigned(name: NameExpr, index: ModuleIndex, func: FuncItem | None) -> list[Expression]:
    """What a local (or module-level) variable named by ``name`` was assigned."""
    for owner in (func, None):
        key = (id(owner) if owner is not None else 0, name.name)
        assigned = index.assignments.get(key)
        if assigned:
            return [value for _, value in assigned]
    return []


def _values(expr: Expression, index: ModuleIndex, func: FuncItem | None) -> list[Expression]:
    """``expr`` and every value that the local variables inside it were assigned,
    following names through assignments up to ``_NAME_DEPTH`` levels
    (``scratch = [m_scratch]``, ``m_scratch = pltpu.VMEM(...)``)."""
    out: list[Expression] = [expr]
    seen: set[int] = {id(expr)}
    frontier: list[Expression] = [expr]
    for _ in range(_NAME_DEPTH):
        following: list[Expression] = []
        for sub in subexpressions(list(frontier)):
            if isinstance(sub, NameExpr):
                for value in _assigned(sub, index, func):
                    if id(value) not in seen:
                        seen.add(id(value))
                        following.append(value)
        out.extend(following)
        frontier = following
        if not frontier:
            break
    return out


def scratch(
    exprs: list[Expression], grid_specs: list[Expression], index: ModuleIndex, func: FuncItem | None
) -> list[Evidence]:
    """Scratch allocations: ``scratch_shapes``/``scratch_types`` values, and the
    ``scratch_shapes=`` of a grid spec (``pltpu.PrefetchScalarGridSpec(...)``). Block
    specs are left out: their memory spaces prove nothing (see ``evidence_tables``)."""
    found: list[Expression] = list(exprs)
    literal: list[Evidence] = []
    for spec in grid_specs:
        for value in _values(spec, index, func):
            for sub in subexpressions([value]):
                if isinstance(sub, CallExpr):
                    found.extend(
                        arg
                        for name, arg in zip(sub.arg_names, sub.args)
                        if name == "scratch_shapes"
                    )
                    literal.extend(_grid_spec_literal(sub, index, func))
    nodes: list[Node] = []
    for expr in found:
        nodes.extend(_values(expr, index, func))
    return literal + from_expressions(subexpressions(nodes), evidence_tables.SCRATCH_EVIDENCE)


def _grid_spec_literal(call: CallExpr, index: ModuleIndex, func: FuncItem | None) -> list[Evidence]:
    """``pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1, ...)``: a keyword whose int
    literal (written there, or assigned once to the variable passed) reaches the
    threshold of ``evidence_tables.GRID_SPEC_EVIDENCE``."""
    name = ref_fullname(call.callee)
    key = namespace_key(name) if name is not None else None
    entry = evidence_tables.GRID_SPEC_EVIDENCE.get(key) if key is not None else None
    if entry is None:
        return []
    keyword, threshold, backends = entry
    for arg_name, arg in zip(call.arg_names, call.args):
        if arg_name != keyword:
            continue
        value = arg
        if isinstance(arg, NameExpr):
            assigned = _assigned(arg, index, func)
            value = assigned[0] if len(assigned) == 1 else arg
        if isinstance(value, IntExpr) and value.value >= threshold:
            return [
                Evidence(backends, f"{spelling(call.callee)}({keyword}={value.value})", call.line)
            ]
    return []


def mesh(
    expr: Expression, typ: Type | None, index: ModuleIndex, func: FuncItem | None
) -> list[Evidence]:
    """A TPU or Mosaic GPU mesh, by constructor or by the mesh value's class."""
    nodes: list[Node] = list(_values(expr, index, func))
    for sub in subexpressions(nodes):
        if isinstance(sub, CallExpr):
            backends = _lookup(sub.callee, evidence_tables.MESH_EVIDENCE)
            if backends is not None:
                return [Evidence(backends, f"the mesh {spelling(sub)}", sub.line)]
    if typ is not None:
        proper = get_proper_type(typ)
        if isinstance(proper, Instance):
            key = namespace_key(proper.type.fullname)
            backends = evidence_tables.MESH_EVIDENCE.get(key) if key is not None else None
            if backends is not None:
                return [Evidence(backends, f"the {proper.type.name} mesh", expr.line)]
    return []
