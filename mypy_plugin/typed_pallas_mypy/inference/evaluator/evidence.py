"""What a kernel's body and its entry call's arguments prove about the backend it lowers
with, read by the evaluator: the names of ``evidence_tables`` (each cross-lowered on both
JAX ends), found by what a name *is*, not how it is spelled.

* **Body**: a name the kernel body uses (called or not) whose value is a library name of
  ``BODY_EVIDENCE`` or ``SCRATCH_EVIDENCE`` (``pltpu.sync_copy``, ``pl.run_scoped(
  pltpu.VMEM(...))``), or a call given the keyword of ``KEYWORD_EVIDENCE`` whose value is
  used (``plgpu.load(..., mask=m)``), in the body, the functions it defines, and the
  functions it calls (``BODY_DEPTH`` levels). A branch whose condition the evaluator knows
  false is not read (under the machine's platform, a platform test is a constant); one
  it does not know is, as either branch may trace.
* **Arguments**: a scratch allocation in ``scratch_shapes`` / ``scratch_types`` (also in
  a grid spec), a mesh made by a constructor of ``MESH_EVIDENCE``, a grid spec of
  ``GRID_SPEC_EVIDENCE`` given its keyword at or above the threshold
  (``num_scalar_prefetch=1``). A library call of those tables gives a ``Made`` value,
  which remembers its constructor and its literal keywords.

The kernel then lowers only where every proof allows (``Kernel.proofs``); params that
contradict the proofs win (``verdict.lowers_on``): the tables prove what other backends
refuse, not what a kernel's author meant.

What it does not do: run the body (its arguments are refs JAX makes), or read a body of
another kind (a ``lax.cond`` branch is read as a name the body uses).
"""

from __future__ import annotations

import ast
import weakref
from collections.abc import Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Final

from typed_pallas_mypy import evidence_tables
from typed_pallas_mypy.inference.evaluator.domain import (
    ANYTHING,
    Const,
    Container,
    External,
    Flow,
    Frame,
    FunctionObj,
    Made,
    Proof,
    VSet,
    only,
)

if TYPE_CHECKING:
    from typed_pallas_mypy.inference.evaluator.machine import Machine

#: how many levels of called functions a kernel body's evidence is read through
BODY_DEPTH: Final = 2

_BODY_TABLES: Final = {**evidence_tables.SCRATCH_EVIDENCE, **evidence_tables.BODY_EVIDENCE}

#: the library names whose calls are ``Made`` values (argument evidence)
MADE_KEYS: Final = frozenset(
    {
        *evidence_tables.SCRATCH_EVIDENCE,
        *evidence_tables.MESH_EVIDENCE,
        *evidence_tables.GRID_SPEC_EVIDENCE,
    }
)

_SCRATCH_KEYWORDS: Final = ("scratch_shapes", "scratch_types")


def made(fullname: str, keywords: dict[str, VSet]) -> Made | None:
    """The value a call of the library name ``fullname`` gives when it is evidence
    (an allocation, a mesh, a grid spec); None for any other name."""
    key = evidence_tables.namespace_key(fullname)
    if key is None or key not in MADE_KEYS:
        return None
    literals = tuple(
        (name, one.value)
        for name, value in sorted(keywords.items())
        if isinstance(one := only(value), Const) and isinstance(one.value, int | str)
    )
    nested = tuple(
        (name, value) for name, value in sorted(keywords.items()) if name in _SCRATCH_KEYWORDS
    )
    return Made(fullname, literals, nested)


def argument_proofs(
    keywords: dict[str, VSet], mesh: VSet | None, module: str, line: int
) -> tuple[Proof, ...]:
    """What an entry call's arguments prove: its scratch allocations (also a grid
    spec's), its mesh, its grid spec."""
    found: list[Proof] = []
    for name in _SCRATCH_KEYWORDS:
        if name in keywords:
            found.extend(_allocations(keywords[name], module, line, 0))
    for spec in keywords.get("grid_spec", frozenset()):
        if isinstance(spec, Made):
            found.extend(_grid_spec(spec, module, line))
            for _, nested in spec.nested:
                found.extend(_allocations(nested, module, line, 0))
    for value in mesh or frozenset():
        if isinstance(value, Made):
            key = evidence_tables.namespace_key(value.fullname)
            backends = evidence_tables.MESH_EVIDENCE.get(key) if key is not None else None
            if backends is not None:
                found.append(Proof(backends, _short(value.fullname), module, line))
    return tuple(found)


def _allocations(values: VSet, module: str, line: int, depth: int) -> Iterator[Proof]:
    if depth > 3:
        return
    for value in values:
        if isinstance(value, Made):
            key = evidence_tables.namespace_key(value.fullname)
            backends = evidence_tables.SCRATCH_EVIDENCE.get(key) if key is not None else None
            if backends is not None:
                yield Proof(backends, _short(value.fullname), module, line)
        elif isinstance(value, Container):
            for item in [*value.items, *(v for _, v in value.entries)]:
                yield from _allocations(item, module, line, depth + 1)
        elif isinstance(value, External):
            # ``pltpu.SemaphoreType.DMA``: a member of a name of the table
            parts = value.fullname.split(".")
            for end in range(len(parts), 1, -1):
                prefix = ".".join(parts[:end])
                key = evidence_tables.namespace_key(prefix)
                backends = evidence_tables.SCRATCH_EVIDENCE.get(key) if key else None
                if backends is not None:
                    yield Proof(backends, _short(prefix), module, line)
                    break


def _grid_spec(spec: Made, module: str, line: int) -> Iterator[Proof]:
    key = evidence_tables.namespace_key(spec.fullname)
    rule = evidence_tables.GRID_SPEC_EVIDENCE.get(key) if key is not None else None
    if rule is None:
        return
    keyword, threshold, backends = rule
    given = dict(spec.literals).get(keyword)
    if isinstance(given, int) and not isinstance(given, bool) and given >= threshold:
        yield Proof(backends, f"{_short(spec.fullname)}({keyword}={given})", module, line)


def body_proofs(m: Machine, bodies: VSet) -> tuple[Proof, ...]:
    """What the kernel body ``bodies`` proves (one function the evaluator has;
    nothing when the body is not one known function)."""
    body = only(bodies)
    if not isinstance(body, FunctionObj):
        return ()
    if body not in m.proofs:  # a body's names mean the same wherever the kernel is made
        m.proofs[body] = _function_proofs(m, body, 0, set())
    return m.proofs[body]


def _function_proofs(
    m: Machine, function: FunctionObj, depth: int, seen: set[int]
) -> tuple[Proof, ...]:
    if id(function) in seen:
        return ()
    seen.add(id(function))
    plan = _plan(function.node)
    frame = Frame(
        dict.fromkeys(plan.names, ANYTHING), function.module, function.closure, function=function
    )
    truths: dict[int, bool | None] = {}

    def traced(guards: tuple[tuple[ast.expr, bool], ...]) -> bool:
        for test, branch in guards:
            if id(test) not in truths:
                truths[id(test)] = _truth(m, test, frame)
            known = truths[id(test)]
            if known is not None and known != branch:
                return False  # a branch the condition rules out here
        return True

    found: list[Proof] = []
    where = "" if depth == 0 else function.qualname
    for chain, guards in plan.chains:
        if traced(guards):
            proof = _chain_proof(m, chain, frame, function, where)
            if proof is not None:
                found.append(proof)
    for call, guards in plan.calls:
        if not traced(guards):
            continue
        callee = _value(m, call.func, frame)
        one = only(callee)
        if isinstance(one, FunctionObj) and depth < BODY_DEPTH:
            found.extend(_function_proofs(m, one, depth + 1, seen))
        elif id(call) not in plan.statements and call.keywords:
            found.extend(_keyword_proofs(call, _key(callee), function, where))
    return tuple(found)


def _chain_proof(
    m: Machine, chain: ast.Name | ast.Attribute, frame: Frame, function: FunctionObj, where: str
) -> Proof | None:
    """What a name or attribute chain of the body proves: its value, or the value of a
    name it is an attribute of (``pltpu.SemaphoreType.DMA``), in a table."""
    link: ast.expr = chain
    while isinstance(link, (ast.Name, ast.Attribute)):
        key = _key(_value(m, link, frame))
        backends = _BODY_TABLES.get(key) if key is not None else None
        if backends is not None:
            module = function.module.name
            what = ast.unparse(link)
            return Proof(backends, what, module, chain.lineno, where, function.qualname)
        if not isinstance(link, ast.Attribute):
            return None
        link = link.value
    return None


@dataclass(frozen=True)
class _Plan:
    """What of a definition's body may prove something, read once per definition: its
    own names (parameters and what it binds, nested functions' included: a name of the
    body is not the module's name of the same spelling), its calls written as statements
    (their value is dead), and the name chains and calls rooted at a name not its own,
    each with the conditions (test, branch) it is under."""

    names: frozenset[str]
    statements: frozenset[int]
    chains: tuple[tuple[ast.Name | ast.Attribute, tuple[tuple[ast.expr, bool], ...]], ...]
    calls: tuple[tuple[ast.Call, tuple[tuple[ast.expr, bool], ...]], ...]


_PLANS: Final[weakref.WeakKeyDictionary[ast.AST, _Plan]] = weakref.WeakKeyDictionary()


def _plan(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> _Plan:
    cached = _PLANS.get(node)
    if cached is not None:
        return cached
    spec = node.args
    names = {a.arg for a in [*spec.posonlyargs, *spec.args, *spec.kwonlyargs]}
    names |= {a.arg for a in (spec.vararg, spec.kwarg) if a is not None}
    statements: set[int] = set()
    for sub in ast.walk(node):
        if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
            names.add(sub.id)
        elif isinstance(sub, ast.arg):
            names.add(sub.arg)
        elif isinstance(sub, ast.Expr) and isinstance(sub.value, ast.Call):
            statements.add(id(sub.value))
    chains: list[tuple[ast.Name | ast.Attribute, tuple[tuple[ast.expr, bool], ...]]] = []
    calls: list[tuple[ast.Call, tuple[tuple[ast.expr, bool], ...]]] = []
    roots: list[ast.AST] = [node.body] if isinstance(node, ast.Lambda) else list(node.body)
    stack: list[tuple[ast.AST, tuple[tuple[ast.expr, bool], ...]]] = [
        (root, ()) for root in reversed(roots)
    ]
    while stack:
        sub, guards = stack.pop()
        if isinstance(sub, (ast.If, ast.IfExp, ast.While)):
            stack.append((sub.test, guards))
            body = sub.body if isinstance(sub.body, list) else [sub.body]
            stack.extend((item, (*guards, (sub.test, True))) for item in reversed(body))
            orelse = sub.orelse if isinstance(sub.orelse, list) else [sub.orelse]
            taken = guards if isinstance(sub, ast.While) else (*guards, (sub.test, False))
            stack.extend((item, taken) for item in reversed(orelse))
            continue
        if isinstance(sub, (ast.Name, ast.Attribute)):
            root = _root(sub)
            if root is not None and root not in names and _may_name_a_key(sub):
                chains.append((sub, guards))
            if isinstance(sub, ast.Attribute) and root is not None:
                continue  # the chain is one name
        elif isinstance(sub, ast.Call):
            root = _root(sub.func)
            if root is not None and root not in names:
                calls.append((sub, guards))
        stack.extend((child, guards) for child in reversed(list(ast.iter_child_nodes(sub))))
    plan = _Plan(frozenset(names), frozenset(statements), tuple(chains), tuple(calls))
    _PLANS[node] = plan
    return plan


#: the last names of the tables' keys: an attribute is a library member by its own name
_KEY_NAMES: Final = frozenset(name for _, name in [*_BODY_TABLES, *MADE_KEYS])


def _may_name_a_key(chain: ast.Name | ast.Attribute) -> bool:
    """Whether the chain may be a name of a table: a bare name may be any (an alias of
    an import); an attribute chain only when one of its attributes is a key's name."""
    node: ast.expr = chain
    while isinstance(node, ast.Attribute):
        if node.attr in _KEY_NAMES:
            return True
        node = node.value
    return isinstance(chain, ast.Name)


def _root(node: ast.expr) -> str | None:
    """The name an attribute chain starts from; None when it starts from anything else
    (a call, a subscript: reading it would run code)."""
    while isinstance(node, ast.Attribute):
        node = node.value
    return node.id if isinstance(node, ast.Name) else None


def _keyword_proofs(
    call: ast.Call, key: tuple[str, str] | None, function: FunctionObj, where: str
) -> Iterator[Proof]:
    rule = evidence_tables.KEYWORD_EVIDENCE.get(key) if key is not None else None
    if rule is None:
        return
    keyword, backends = rule
    for item in call.keywords:
        if item.arg == keyword and not (
            isinstance(item.value, ast.Constant) and item.value.value is None
        ):
            what = f"{ast.unparse(call.func)} with {keyword}="
            yield Proof(backends, what, function.module.name, call.lineno, where, function.qualname)


def _truth(m: Machine, test: ast.expr, frame: Frame) -> bool | None:
    value = only(_value(m, test, frame))
    if isinstance(value, Const):
        return bool(value.value)
    return None


def _value(m: Machine, node: ast.expr, frame: Frame) -> VSet:
    try:
        return m.expressions.evaluate(node, frame, Flow())
    except RecursionError:
        return ANYTHING


def _key(values: VSet) -> tuple[str, str] | None:
    one = only(values)
    if isinstance(one, External):
        return evidence_tables.namespace_key(one.fullname)
    if isinstance(one, Made):
        return evidence_tables.namespace_key(one.fullname)
    return None


def _short(fullname: str) -> str:
    key = evidence_tables.namespace_key(fullname)
    prefix = {"mosaic_tpu": "pltpu", "mosaic_gpu": "plgpu", "triton": "pltriton"}
    return f"{prefix.get(key[0], key[0])}.{key[1]}" if key is not None else fullname
