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
from collections.abc import Iterator
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
    return _function_proofs(m, body, 0, set())


def _function_proofs(
    m: Machine, function: FunctionObj, depth: int, seen: set[int]
) -> tuple[Proof, ...]:
    if id(function) in seen:
        return ()
    seen.add(id(function))
    node = function.node
    frame = Frame(_locals_of(node), function.module, function.closure, function=function)
    found: list[Proof] = []
    roots: list[ast.AST] = [node.body] if isinstance(node, ast.Lambda) else list(node.body)
    statements = {
        id(n.value)
        for n in ast.walk(node)
        if isinstance(n, ast.Expr) and isinstance(n.value, ast.Call)
    }
    where = "" if depth == 0 else function.qualname
    for sub in _read_nodes(m, roots, frame):
        if isinstance(sub, (ast.Name, ast.Attribute)):
            link: ast.expr = sub
            while isinstance(link, (ast.Name, ast.Attribute)):  # each name of the chain
                key = _key(_value(m, link, frame))
                backends = _BODY_TABLES.get(key) if key is not None else None
                if backends is not None:
                    module = function.module.name
                    found.append(Proof(backends, ast.unparse(link), module, sub.lineno, where))
                    break
                if not isinstance(link, ast.Attribute):
                    break
                link = link.value
        elif isinstance(sub, ast.Call):
            callee = _value(m, sub.func, frame)
            one = only(callee)
            if isinstance(one, FunctionObj) and depth < BODY_DEPTH:
                found.extend(_function_proofs(m, one, depth + 1, seen))
            elif id(sub) not in statements and sub.keywords:
                found.extend(_keyword_proofs(sub, _key(callee), function, where))
    return tuple(found)


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
            yield Proof(backends, what, function.module.name, call.lineno, where)


def _read_nodes(m: Machine, roots: list[ast.AST], frame: Frame) -> Iterator[ast.AST]:
    """The nodes of the body that trace: a branch whose condition is known false is
    left out; the names of an attribute chain are given once, as the whole chain."""
    stack = list(reversed(roots))
    while stack:
        node = stack.pop()
        if isinstance(node, (ast.If, ast.IfExp, ast.While)):
            known = _truth(m, node.test, frame)
            stack.append(node.test)
            if known is not False:
                stack.extend(reversed(node.body) if isinstance(node.body, list) else [node.body])
            if known is not True and not isinstance(node, ast.While):
                orelse = node.orelse
                stack.extend(reversed(orelse) if isinstance(orelse, list) else [orelse])
            continue
        yield node
        if isinstance(node, ast.Attribute):
            continue  # the chain is one name
        stack.extend(reversed(list(ast.iter_child_nodes(node))))


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


def _locals_of(node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda) -> dict[str, VSet]:
    """The body's own names (its parameters and what it binds), unknown: a name of the
    body is not the module's name of the same spelling."""
    spec = node.args
    names = {a.arg for a in [*spec.posonlyargs, *spec.args, *spec.kwonlyargs]}
    names |= {a.arg for a in (spec.vararg, spec.kwarg) if a is not None}
    body = [node.body] if isinstance(node, ast.Lambda) else node.body
    for statement in body:
        for sub in ast.walk(statement):
            if isinstance(sub, ast.Name) and isinstance(sub.ctx, ast.Store):
                names.add(sub.id)
    return dict.fromkeys(names, ANYTHING)


def _short(fullname: str) -> str:
    key = evidence_tables.namespace_key(fullname)
    prefix = {"mosaic_tpu": "pltpu", "mosaic_gpu": "plgpu", "triton": "pltriton"}
    return f"{prefix.get(key[0], key[0])}.{key[1]}" if key is not None else fullname
