"""The platform facts of one function, and how they are kept in mypy's cache.

``FunctionFacts`` is what ``platform_facts`` infers for a function (its requirement,
guard-helper sets, wrapper shape, kernel evidence, a platform table, and, for platform
predicates and the methods that gate on them, ``Predicate`` and ``Gate``). A module checked
in this run is read from its AST; one loaded from mypy's cache has no function bodies, so
its facts are stored, as JSON in the type of a private module symbol
``__typed_pallas_facts__``, when mypy writes that cache (``store``). The symbol is part of
the module's serialized symbol table, so a change of facts changes the module's interface
hash (incremental runs re-check its dependents) and its snapshot (the daemon fires the
trigger ``trigger_of(module)``, on which callers register a dependency).

Inside mypy's daemon a re-parsed module's facts are stored again only if a hook fires in
it, which a module without calls (a platform predicate comparing ``device.platform``)
never does. So there every project module, as soon as it is parsed, also gets a private
symbol ``__typed_pallas_source__`` whose type holds the hash of its source
(``mark_source``): any edit fires ``source_trigger_of(module)``, and callers that
consulted the module's facts register a dependency on it too. Outside the daemon the
symbol is never added (it would change the module's interface hash on every edit).

``definitions(tree)`` lists the fullnames whose facts a module stores (its top-level
functions, methods and aliases).

What it does not do: infer anything (``typed_pallas_mypy.inference``), or read other modules.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from mypy.nodes import (
    GDEF,
    AssignmentStmt,
    CallExpr,
    ClassDef,
    Decorator,
    DictExpr,
    FuncDef,
    IfStmt,
    MypyFile,
    NameExpr,
    OverloadedFuncDef,
    RefExpr,
    Statement,
    SymbolTableNode,
    Var,
)
from mypy.types import Instance, LiteralType, get_proper_type

from typed_pallas_mypy.inference import Requirement as Requirement
from typed_pallas_mypy.inference.model import Evidence
from typed_pallas_mypy.transformers.guards import Sets

#: The private module symbol that holds a module's facts in mypy's cache.
FACTS_SYMBOL: Final = "__typed_pallas_facts__"
#: Bump when the stored format changes.
FACTS_FORMAT: Final = 8

# --------------------------------------------------------------------------- facts


@dataclass(frozen=True)
class Wrapper:
    """A function that forwards its parameters to a Pallas entry point."""

    #: the entry point's fullname (a key of ``entries.ENTRIES``)
    entry: str
    #: (entry-point parameter, wrapper parameter name, its position or -1)
    forwards: tuple[tuple[str, str, int], ...]
    #: the line of the entry-point call inside the wrapper
    line: int
    #: the wrapper's ``**kwargs`` parameter, when it forwards it to the entry point
    #: (a caller's keywords the wrapper does not name reach the entry point as they are)
    kwargs: str | None = None
    #: (name, position) of the wrapper's ``*args``, when it forwards it as the entry
    #: point's leading positional arguments
    args: tuple[str, int] | None = None


@dataclass(frozen=True)
class Predicate:
    """A function returning a platform condition on its ``jax.Device`` parameter."""

    #: the device parameter's name
    parameter: str
    #: its position among the function's parameters (``self`` included)
    position: int
    #: an instance method: a call on an instance passes one argument less
    method: bool
    #: (platforms when it returns true, when false) for the device it is given
    sets: Sets


@dataclass(frozen=True)
class Gate:
    """A method that raises (or returns) unless ``self.<predicate>(...)`` says yes, then
    calls methods of ``self`` (``Op.__call__``: ``supported_on``, then ``_fwd``)."""

    #: the predicate method's name
    predicate: str
    #: the line of the ``if`` that raises
    line: int
    #: (method name, line) of each ``self.<name>(...)`` call after it
    calls: tuple[tuple[str, int], ...]


@dataclass(frozen=True)
class FunctionFacts:
    name: str
    requirement: Requirement | None = None
    #: guard helper: (platforms when it returns true, when false)
    guard: Sets | None = None
    #: returns a platform string
    platform_source: bool = False
    wrapper: Wrapper | None = None
    #: backend-only primitives its body uses
    evidence: tuple[Evidence, ...] = ()
    #: where it is defined, for notes ("tpu_ops.py:13")
    where: str = ""
    #: a module-level table keyed by platform: (key, fullname of the entry's function)
    table: tuple[tuple[str, str], ...] = ()
    #: a platform predicate (``supported_on(self, device)``)
    predicate: Predicate | None = None
    #: a method gating calls of ``self``'s methods on a predicate of ``self``
    gates: tuple[Gate, ...] = ()
    #: positions of the parameters annotated ``jax.Device`` (an override that leaves
    #: them unannotated, ``def supported_on(self, device)``, takes them from here)
    device_params: tuple[int, ...] = ()
    #: a module-level variable holding a function-keeping decorator
    #: (``jaxtyped = jaxtyping.jaxtyped(typechecker=...)``)
    keeping_decorator: bool = False
    #: what calling its result lowers for (a factory of kernels: ``make(...)(x)``);
    #: stored so that a caller of the result re-checks when it changes
    result: Requirement | None = None
    #: the backend of the params it always returns a construction of (a params factory,
    #: whatever its annotation says); "" when it is none
    params: str = ""

    def is_empty(self) -> bool:
        return (
            self.requirement is None
            and self.guard is None
            and not self.platform_source
            and self.wrapper is None
            and not self.evidence
            and not self.table
            and self.predicate is None
            and not self.gates
            and not self.device_params
            and not self.keeping_decorator
            and self.result is None
            and not self.params
        )


#: The facts of a function nothing is known of.
NO_FACTS: Final = FunctionFacts("")


def _sets_to_json(sets: Sets) -> list[list[str] | None]:
    return [sorted(s) if s is not None else None for s in sets]


def _sets_from_json(raw: object) -> Sets | None:
    if not isinstance(raw, list) or len(raw) != 2:
        return None
    out: list[frozenset[str] | None] = []
    for item in raw:
        out.append(frozenset(str(x) for x in item) if isinstance(item, list) else None)
    return (out[0], out[1])


def _requirement_json(req: Requirement) -> dict[str, object]:
    data: dict[str, object] = {"req": [sorted(req.platforms), list(req.cause), list(req.chain)]}
    if req.interpret is not None:
        data["interpret"] = list(req.interpret)
    if req.interpret_field is not None:
        data["interpret_field"] = list(req.interpret_field)
    return data


def facts_to_json(facts: FunctionFacts) -> dict[str, object]:
    data: dict[str, object] = {"where": facts.where}
    if facts.requirement is not None:
        data.update(_requirement_json(facts.requirement))
    if facts.result is not None:
        data["result"] = _requirement_json(facts.result)
    if facts.guard is not None:
        data["guard"] = _sets_to_json(facts.guard)
    if facts.platform_source:
        data["source"] = True
    if facts.wrapper is not None:
        data["wrapper"] = [
            facts.wrapper.entry,
            [list(f) for f in facts.wrapper.forwards],
            facts.wrapper.line,
            facts.wrapper.kwargs,
            list(facts.wrapper.args) if facts.wrapper.args is not None else None,
        ]
    if facts.evidence:
        data["evidence"] = [[list(e.backends), e.what, e.line] for e in facts.evidence]
    if facts.table:
        data["table"] = [list(entry) for entry in facts.table]
    if facts.predicate is not None:
        pred = facts.predicate
        data["predicate"] = [pred.parameter, pred.position, pred.method, _sets_to_json(pred.sets)]
    if facts.gates:
        data["gates"] = [
            [gate.predicate, gate.line, [list(call) for call in gate.calls]] for gate in facts.gates
        ]
    if facts.device_params:
        data["devices"] = list(facts.device_params)
    if facts.keeping_decorator:
        data["keeps"] = True
    if facts.params:
        data["params"] = facts.params
    return data


def _predicate_from_json(raw: object) -> Predicate | None:
    if not isinstance(raw, list) or len(raw) != 4:
        return None
    parameter, position, method, sets_raw = raw
    sets = _sets_from_json(sets_raw)
    if not isinstance(parameter, str) or not isinstance(position, int) or sets is None:
        return None
    return Predicate(parameter, position, method is True, sets)


def _gates_from_json(raw: object) -> tuple[Gate, ...]:
    gates: list[Gate] = []
    if not isinstance(raw, list):
        return ()
    for item in raw:
        if not (isinstance(item, list) and len(item) == 3 and isinstance(item[2], list)):
            continue
        calls = tuple(
            (str(call[0]), int(call[1]))
            for call in item[2]
            if isinstance(call, list) and len(call) == 2 and isinstance(call[1], int)
        )
        line = item[1] if isinstance(item[1], int) else 0
        gates.append(Gate(str(item[0]), line, calls))
    return tuple(gates)


def _requirement_from_json(data: Mapping[str, object]) -> Requirement | None:
    requirement = None
    raw = data.get("req")
    if isinstance(raw, list) and len(raw) == 3:
        plats, cause, chain = raw
        if (
            isinstance(plats, list)
            and isinstance(cause, list)
            and len(cause) == 3
            and isinstance(chain, list)
        ):
            interpret = data.get("interpret")
            field = data.get("interpret_field")
            requirement = Requirement(
                frozenset(str(p) for p in plats),
                (str(cause[0]), str(cause[1]), str(cause[2])),
                tuple(str(c) for c in chain),
                interpret=(str(interpret[0]), int(interpret[1]))
                if isinstance(interpret, list) and len(interpret) == 2
                else None,
                interpret_field=(str(field[0]), field[1] is True)
                if isinstance(field, list) and len(field) == 2
                else None,
            )
    return requirement


def facts_from_json(name: str, data: Mapping[str, object]) -> FunctionFacts:
    requirement = _requirement_from_json(data)
    result_raw = data.get("result")
    result = _requirement_from_json(result_raw) if isinstance(result_raw, dict) else None
    wrapper = None
    raw = data.get("wrapper")
    if isinstance(raw, list) and len(raw) == 5 and isinstance(raw[1], list):
        forwards = tuple(
            (str(f[0]), str(f[1]), int(f[2])) for f in raw[1] if isinstance(f, list) and len(f) == 3
        )
        args = raw[4]
        wrapper = Wrapper(
            str(raw[0]),
            forwards,
            int(raw[2]) if isinstance(raw[2], int) else 0,
            kwargs=str(raw[3]) if isinstance(raw[3], str) else None,
            args=(str(args[0]), int(args[1]))
            if isinstance(args, list) and len(args) == 2
            else None,
        )
    evidence: list[Evidence] = []
    raw = data.get("evidence")
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, list) and len(item) == 3 and isinstance(item[0], list):
                backends = tuple(sorted(str(b) for b in item[0]))
                evidence.append(Evidence(backends, str(item[1]), int(item[2])))
    table: list[tuple[str, str]] = []
    raw = data.get("table")
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, list) and len(item) == 2:
                table.append((str(item[0]), str(item[1])))
    raw = data.get("devices")
    device_params = (
        tuple(i for i in raw if isinstance(i, int) and not isinstance(i, bool))
        if isinstance(raw, list)
        else ()
    )
    return FunctionFacts(
        name,
        requirement=requirement,
        guard=_sets_from_json(data.get("guard")),
        platform_source=data.get("source") is True,
        wrapper=wrapper,
        evidence=tuple(evidence),
        where=str(data.get("where", "")),
        table=tuple(table),
        predicate=_predicate_from_json(data.get("predicate")),
        gates=_gates_from_json(data.get("gates")),
        device_params=device_params,
        keeping_decorator=data.get("keeps") is True,
        result=result,
        params=str(data.get("params", "")),
    )


# --------------------------------------------------------------------------- the cache symbol


def definitions(tree: MypyFile) -> list[str]:
    """Fullnames of the top-level functions, methods and aliases of a module."""
    names: list[str] = []
    for stmt in tree.defs:
        names.extend(_defined(stmt))
    return names


def _defined(stmt: Statement) -> list[str]:
    if isinstance(stmt, (FuncDef, Decorator, OverloadedFuncDef)):
        return [stmt.fullname]
    if isinstance(stmt, ClassDef):
        out: list[str] = []
        for inner in stmt.defs.body:
            if isinstance(inner, (FuncDef, Decorator, OverloadedFuncDef)):
                out.append(inner.fullname)
        return out
    if isinstance(stmt, AssignmentStmt) and len(stmt.lvalues) == 1:
        lvalue = stmt.lvalues[0]
        if isinstance(lvalue, NameExpr) and isinstance(lvalue.node, Var) and lvalue.fullname:
            if isinstance(stmt.rvalue, (RefExpr, CallExpr, DictExpr)):
                return [lvalue.fullname]
    if isinstance(stmt, IfStmt):
        out = []
        for body in stmt.body:
            for inner in body.body:
                out.extend(_defined(inner))
        if stmt.else_body is not None:
            for inner in stmt.else_body.body:
                out.extend(_defined(inner))
        return out
    return []


def stored_json(node: SymbolTableNode | None) -> dict[str, object] | None:
    if node is None or not isinstance(node.node, Var) or node.node.type is None:
        return None
    typ = get_proper_type(node.node.type)
    if not isinstance(typ, LiteralType) or not isinstance(typ.value, str):
        return None
    try:
        data = json.loads(typ.value)
    except ValueError:
        return None
    if not isinstance(data, dict) or data.get("format") != FACTS_FORMAT:
        return None
    functions = data.get("functions")
    return functions if isinstance(functions, dict) else None


def store(tree: MypyFile, facts: Mapping[str, FunctionFacts], str_type: Instance) -> None:
    """Put ``facts`` into ``tree``'s symbol table (replacing what was there)."""
    prefix = tree.fullname + "."
    functions = {
        name[len(prefix) :]: facts_to_json(found)
        for name, found in sorted(facts.items())
        if name.startswith(prefix)
    }
    if not functions:
        tree.names.pop(FACTS_SYMBOL, None)
        return
    text = json.dumps({"format": FACTS_FORMAT, "functions": functions}, sort_keys=True)
    var = Var(FACTS_SYMBOL, LiteralType(text, str_type))
    var._fullname = f"{tree.fullname}.{FACTS_SYMBOL}"
    var.is_ready = True
    existing = tree.names.get(FACTS_SYMBOL)
    if existing is not None and stored_json(existing) == json.loads(text)["functions"]:
        return
    tree.names[FACTS_SYMBOL] = SymbolTableNode(
        GDEF, var, module_public=False, plugin_generated=True
    )


def trigger_of(module: str) -> str:
    """The daemon's trigger for a change of ``module``'s facts."""
    return f"<{module}.{FACTS_SYMBOL}>"


#: The private module symbol whose type holds the hash of its module's source (daemon only).
SOURCE_SYMBOL: Final = "__typed_pallas_source__"


def mark_source(tree: MypyFile, str_type: Instance) -> None:
    """Give ``tree`` (just parsed, inside mypy's daemon) the symbol ``SOURCE_SYMBOL``,
    typed with the hash of its source file; nothing if the file cannot be read."""
    try:
        with open(tree.path, "rb") as source:
            digest = hashlib.sha256(source.read()).hexdigest()[:16]
    except (OSError, ValueError):
        return
    var = Var(SOURCE_SYMBOL, LiteralType(digest, str_type))
    var._fullname = f"{tree.fullname}.{SOURCE_SYMBOL}"
    var.is_ready = True
    tree.names[SOURCE_SYMBOL] = SymbolTableNode(
        GDEF, var, module_public=False, plugin_generated=True
    )


def source_trigger_of(module: str) -> str:
    """The daemon's trigger for any edit of ``module`` (``mark_source``)."""
    return f"<{module}.{SOURCE_SYMBOL}>"
