"""Platform predicates, and the claims a class makes with them.

A **platform predicate** is a function or instance method with one parameter annotated
``jax.Device`` whose body is one ``return`` of a platform condition on that parameter
(also ``try: return <condition>`` with handlers returning ``False``, and early ``if
<condition>: return False`` exits before a last ``return``, of which only the true side
is known). The inference reads the body, as it reads every condition
(``Inference.predicate_sets``); this module says which parameter is the device, which
needs mypy's view of the class (an overridden method's annotation):

    def supported_on(self, device: jax.Device) -> bool:
        return device.platform == "gpu" and device.compute_capability >= "9.0"

* ``predicate_kind``: whether a function is one (its ``facts_store.Predicate``);
* ``answer_in``: the answer to the calls the inference leaves to mypy in a condition
  (``["ask", ...]``): a predicate's call, found by its receiver's type;
* ``sets_at_call``: a call of a predicate given a device (``op.supported_on(dev)``,
  ``self.supported_on(jax.devices()[0])``) is a guard: it says what the predicate says
  of that device. The callee is found through its name, ``self.``, or a receiver whose
  class the source states (a parameter's annotation, ``Cls()``, a variable assigned
  ``Cls(...)`` once);
* ``gates_of``: a **gate** is a method that raises (or returns) unless
  ``self.<predicate>(...)`` says yes, then calls methods of ``self``: tokamax's
  ``Op.__call__`` raises ``NotImplementedError`` unless ``self.supported_on(device)``,
  then runs ``self._fwd``;
* ``class_claims``: for every class of a module, each gate in its MRO ties the class's
  own predicate to its own kernel methods, so a predicate that admits a platform one of
  those methods cannot lower for is a claim that fails (``Claim``), reported at the
  predicate with the requirement's chain.

A parameter without the annotation is not a device (an attribute named ``platform`` on
an arbitrary object says nothing), unless the method overrides one whose parameter at
that position is annotated ``jax.Device`` (``def supported_on(self, device) -> bool:``
in a subclass of tokamax's ``Op``; ``inherited_device_parameters``). What it does not do: infer requirements
(``typed_pallas_mypy.inference``), keep or store facts (``platform_facts``, ``facts_store``), or word
messages (``decisions``).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from mypy.nodes import (
    ARG_NAMED,
    ARG_POS,
    ARG_STAR,
    Block,
    CallExpr,
    ClassDef,
    Decorator,
    Expression,
    ForStmt,
    FuncDef,
    FuncItem,
    IfStmt,
    MemberExpr,
    MypyFile,
    NameExpr,
    Node,
    OverloadedFuncDef,
    RaiseStmt,
    RefExpr,
    ReturnStmt,
    Statement,
    TryStmt,
    TypeInfo,
    UnaryExpr,
    Var,
    WhileStmt,
    WithStmt,
)
from mypy.server.subexpr import get_subexpressions
from mypy.types import (
    AnyType,
    CallableType,
    Instance,
    ProperType,
    Type,
    TypeOfAny,
    get_proper_type,
)

from typed_pallas_mypy.inference.combine import Ask
from typed_pallas_mypy.transformers import guards
from typed_pallas_mypy.transformers.facts_store import Gate, Predicate, Requirement
from typed_pallas_mypy.transformers.guards import LOWERING, Guard, Sets
from typed_pallas_mypy.transformers.nodes import Pos, end_of, passed, start_of

if TYPE_CHECKING:
    from typed_pallas_mypy.transformers.platform_facts import Facts


# --------------------------------------------------------------------------- device parameters


def predicate_kind(
    func: FuncDef,
    lookup: Facts,
    read: Callable[[FuncDef, str], Sets],
) -> Predicate | None:
    """The predicate ``func`` is, if it is one: one ``jax.Device`` parameter (annotated,
    or annotated by the method it overrides), and a body that returns a condition on it
    (``read(func, parameter)``: the inference reads the body, as it reads every
    condition; see the module docstring for the shapes)."""
    if func.is_static or func.is_class:
        return None
    params = lookup.device_parameters(func) or inherited_device_parameters(func, lookup)
    if len(params) != 1:
        return None
    position, variable = params[0]
    true_set, false_set = read(func, variable.name)
    if (true_set is None or true_set == guards.UNIVERSE) and false_set is None:
        return None
    return Predicate(variable.name, position, _is_method(func), (true_set, false_set))


def device_arguments(
    call: CallExpr, positions: Sequence[int], keywords: Sequence[str]
) -> list[Expression]:
    """The arguments of ``call`` at ``positions`` among its positional ones (``*args``
    counted as one) and passed as ``keywords``: those the inference saw as devices."""
    found: list[Expression] = []
    ordinal = 0
    for arg, kind, name in zip(call.args, call.arg_kinds, call.arg_names):
        if kind in (ARG_POS, ARG_STAR):
            if kind == ARG_POS and ordinal in positions:
                found.append(arg)
            ordinal += 1
        elif kind == ARG_NAMED and name in keywords:
            found.append(arg)
    return found


def answer_in(
    node: Node,
    func_of: Callable[[CallExpr], FuncItem | None],
    answer: Callable[[CallExpr, FuncItem | None, Callable[[Expression], bool]], Sets | None],
) -> Ask:
    """What answers the inference's ``["ask", ...]`` leaves for the code of ``node`` (a
    module or a function): ``answer(call, the function it is in, is_device)`` for the
    call at the leaf's span, ``is_device`` true of the arguments the inference saw as
    devices (a predicate's call: ``sets_at_call``). The calls of ``node`` are listed
    (``calls_by_span``) when a leaf is first asked about: most conditions have none."""
    calls: dict[tuple[int, int, int, int], CallExpr] = {}
    listed = False

    def ask(
        where: tuple[int, int, int, int], positions: tuple[int, ...], keywords: tuple[str, ...]
    ) -> Sets | None:
        nonlocal listed
        if not listed:
            calls.update(calls_by_span(node))
            listed = True
        call = calls.get(where)
        if call is None:
            return None
        devices = device_arguments(call, positions, keywords)
        return answer(call, func_of(call), lambda arg: any(arg is d for d in devices))

    return ask


def calls_by_span(node: Node) -> dict[tuple[int, int, int, int], CallExpr]:
    """The calls inside ``node`` by (line, column, end line, end column)."""
    return {
        (e.line, e.column, e.end_line or e.line, e.end_column or 0): e
        for e in get_subexpressions(node)
        if isinstance(e, CallExpr)
    }


def _is_method(func: FuncDef) -> bool:
    """An instance method (``FuncDef.info`` of a function is mypy's falsy stand-in)."""
    return bool(func.info) and bool(func.arguments) and not func.is_static and not func.is_class


# --------------------------------------------------------------------------- calls


def inherited_device_parameters(func: FuncDef, lookup: Facts) -> list[tuple[int, Var]]:
    """The parameters of a method, left unannotated, that the nearest method it
    overrides annotates ``jax.Device`` (read from that method's facts, so from mypy's
    cache too)."""
    if not func.info:
        return []
    for base in func.info.mro[1:]:
        symbol = base.names.get(func.name)
        if symbol is None or symbol.node is None:
            continue
        positions = lookup.of(symbol.node.fullname).device_params
        return [
            (i, func.arguments[i].variable)
            for i in positions
            if i < len(func.arguments) and _unannotated(func, i)
        ]
    return []


def _unannotated(func: FuncDef, position: int) -> bool:
    written = func.unanalyzed_type
    if not isinstance(written, CallableType):
        return True
    if position >= len(written.arg_types):
        return False
    annotation = get_proper_type(written.arg_types[position])
    return isinstance(annotation, AnyType) and annotation.type_of_any == TypeOfAny.unannotated


#: The expression a variable of a function was assigned once, if any.
ValueOf = Callable[[NameExpr, FuncItem | None], Expression | None]


def _class_of_type(typ: Type | None) -> TypeInfo | None:
    proper: ProperType | None = get_proper_type(typ) if typ is not None else None
    return proper.type if isinstance(proper, Instance) else None


def _constructed(expr: Expression) -> TypeInfo | None:
    """The class of ``Cls(...)``."""
    if isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr):
        node = expr.callee.node
        if isinstance(node, TypeInfo):
            return node
    return None


def receiver_class(
    expr: Expression, func: FuncItem | None, value_of: ValueOf | None
) -> TypeInfo | None:
    """The class of a receiver as the source states it: ``Cls()``, a parameter or a
    variable annotated with a class, or a variable assigned ``Cls(...)`` once."""
    found = _constructed(expr)
    if found is not None:
        return found
    if not isinstance(expr, NameExpr) or not isinstance(expr.node, Var):
        return None
    var = expr.node
    if isinstance(func, FuncDef) and isinstance(func.type, CallableType):
        for arg, typ in zip(func.arguments, func.type.arg_types):
            if arg.variable is var:
                return _class_of_type(typ)
    if not var.is_inferred and var.type is not None:
        return _class_of_type(var.type)
    if value_of is not None:
        value = value_of(expr, func)
        if value is not None:
            return _constructed(value)
    return None


def _method_fullname(info: TypeInfo, name: str) -> str | None:
    try:
        sym = info.get(name)
    except AttributeError:  # a class mypy has not finished (no MRO yet)
        return None
    node = sym.node if sym is not None else None
    if isinstance(node, (FuncDef, Decorator, OverloadedFuncDef)):
        return node.fullname
    return None


def _is_unbound_owner(expr: Expression) -> bool:
    """``Cls.method`` or ``module.function``: nothing is bound to the first parameter."""
    return isinstance(expr, RefExpr) and isinstance(expr.node, (TypeInfo, MypyFile))


def device_argument(call: CallExpr, predicate: Predicate, bound: bool) -> Expression | None:
    """The argument a call passes for the predicate's device parameter."""
    position = predicate.position - (1 if bound else 0)
    return passed(call, predicate.parameter, position).expr


def sets_at_call(
    call: CallExpr,
    func: FuncItem | None,
    is_device: Callable[[Expression], bool],
    lookup: Facts,
    value_of: ValueOf | None,
) -> Sets | None:
    """What a call of a predicate given a device (``is_device``) says, or None."""
    callee = call.callee
    name = lookup.names.callee_function(callee, func)
    if name is None and isinstance(callee, MemberExpr):
        info = receiver_class(callee.expr, func, value_of)
        if info is not None:
            name = _method_fullname(info, callee.name)
    if name is None:
        return None
    predicate = lookup.predicate_of(name)
    if predicate is None:
        return None
    bound = (
        predicate.method and isinstance(callee, MemberExpr) and not _is_unbound_owner(callee.expr)
    )
    argument = device_argument(call, predicate, bound)
    if argument is None or not is_device(argument):
        return None
    return predicate.sets


# --------------------------------------------------------------------------- gates


def _self_name(func: FuncDef) -> str | None:
    if func.is_static or func.is_class or not func.arguments or not func.info:
        return None
    return func.arguments[0].variable.name


def _gating_predicate(stmt: IfStmt, self_name: str) -> str | None:
    """``if not self.<predicate>(...): raise`` (or ``return``): the predicate's name."""
    if len(stmt.expr) != 1 or stmt.else_body is not None:
        return None
    cond = stmt.expr[0]
    if not (isinstance(cond, UnaryExpr) and cond.op == "not" and isinstance(cond.expr, CallExpr)):
        return None
    callee = cond.expr.callee
    if not (
        isinstance(callee, MemberExpr)
        and isinstance(callee.expr, NameExpr)
        and callee.expr.name == self_name
    ):
        return None
    body = stmt.body[0].body
    if not body or not isinstance(body[-1], (RaiseStmt, ReturnStmt)):
        return None
    return callee.name


def _statements(stmts: Sequence[Statement]) -> Iterator[Statement]:
    """Every statement of a function's own body (not of the functions it defines)."""
    for stmt in stmts:
        yield stmt
        if isinstance(stmt, IfStmt):
            for block in stmt.body:
                yield from _statements(block.body)
            if stmt.else_body is not None:
                yield from _statements(stmt.else_body.body)
        elif isinstance(stmt, (ForStmt, WhileStmt)):
            yield from _statements(stmt.body.body)
            if stmt.else_body is not None:
                yield from _statements(stmt.else_body.body)
        elif isinstance(stmt, WithStmt):
            yield from _statements(stmt.body.body)
        elif isinstance(stmt, TryStmt):
            yield from _statements(stmt.body.body)
            for handler in stmt.handlers:
                yield from _statements(handler.body)
            if stmt.else_body is not None:
                yield from _statements(stmt.else_body.body)
            if stmt.finally_body is not None:
                yield from _statements(stmt.finally_body.body)
        elif isinstance(stmt, Block):
            yield from _statements(stmt.body)


def gates_of(func: FuncDef, guard_at: Callable[[Pos], Guard | None]) -> tuple[Gate, ...]:
    """The gates of a method: each ``if not self.<predicate>(...): raise``, with the
    calls of ``self``'s other methods after it (in nested functions too). A call that a
    platform guard of its own narrows is left out (the claim would need that guard)."""
    self_name = _self_name(func)
    if self_name is None:
        return ()
    gates: list[Gate] = []
    for stmt in _statements(func.body.body):
        if not isinstance(stmt, IfStmt):
            continue
        predicate = _gating_predicate(stmt, self_name)
        if predicate is None:
            continue
        after = end_of(stmt)
        own_region = f"at line {stmt.line}"
        calls: list[tuple[str, int]] = []
        for expr in get_subexpressions(func.body):
            if not isinstance(expr, CallExpr) or start_of(expr) <= after:
                continue
            callee = expr.callee
            if not (
                isinstance(callee, MemberExpr)
                and isinstance(callee.expr, NameExpr)
                and callee.expr.name == self_name
                and callee.name != predicate
            ):
                continue
            guard = guard_at(start_of(expr))
            if guard is not None and any(not r.why.endswith(own_region) for r in guard.regions):
                continue
            if (callee.name, expr.line) not in calls:
                calls.append((callee.name, expr.line))
        if calls:
            gates.append(Gate(predicate, stmt.line, tuple(calls)))
    return tuple(gates)


# --------------------------------------------------------------------------- claims


@dataclass(frozen=True)
class Claim:
    """A predicate of a class that admits platforms a kernel method of it cannot lower
    for: ``at`` is where it is reported, ``target`` the function whose check reports it."""

    at: FuncDef
    target: FuncDef
    #: the admitted platforms the kernel method cannot lower for
    failing: frozenset[str]
    requirement: Requirement
    kernel: str
    notes: tuple[str, ...]


def _classes(stmts: Sequence[Statement]) -> Iterator[ClassDef]:
    for stmt in stmts:
        if isinstance(stmt, ClassDef):
            yield stmt
            yield from _classes(stmt.defs.body)
        elif isinstance(stmt, IfStmt):
            for block in stmt.body:
                yield from _classes(block.body)
            if stmt.else_body is not None:
                yield from _classes(stmt.else_body.body)


def _definition(info: TypeInfo, name: str) -> FuncDef | None:
    try:
        sym = info.get(name)
    except AttributeError:
        return None
    node = sym.node if sym is not None else None
    if isinstance(node, Decorator):
        node = node.func
    return node if isinstance(node, FuncDef) else None


def _short(fullname: str) -> str:
    return fullname.rsplit(".", 1)[-1]


def class_claims(tree: MypyFile, facts: Facts) -> list[Claim]:
    """Every failing claim of the classes defined in ``tree``."""
    out: list[Claim] = []
    seen: set[tuple[int, str]] = set()
    for classdef in _classes(tree.defs):
        info = classdef.info
        if not info or not getattr(info, "mro", None):
            continue
        for owner in info.mro:
            if not facts.names.is_user_module(facts.names.module_of(owner.fullname)):
                continue  # gates are read from the project's own code
            for sym in list(owner.names.values()):
                node = sym.node
                if isinstance(node, OverloadedFuncDef):
                    node = node.impl
                if isinstance(node, Decorator):
                    node = node.func
                if not isinstance(node, FuncDef):
                    continue
                for gate in facts.gates_of(node.fullname):
                    for claim in _gate_claims(tree, info, node, gate, facts):
                        key = (id(claim.at), claim.kernel)
                        if key not in seen:  # one claim per predicate and kernel method
                            seen.add(key)
                            out.append(claim)
    return out


def _gate_claims(
    tree: MypyFile, info: TypeInfo, gate_method: FuncDef, gate: Gate, facts: Facts
) -> list[Claim]:
    predicate_def = _definition(info, gate.predicate)
    if predicate_def is None:
        return []
    predicate = facts.predicate_of(predicate_def.fullname)
    if predicate is None or predicate.sets[0] is None:
        return []
    admitted = predicate.sets[0] & LOWERING
    out: list[Claim] = []
    for kernel_name, line in gate.calls:
        kernel_def = _definition(info, kernel_name)
        if kernel_def is None:
            continue
        requirement = facts.of(kernel_def.fullname).requirement
        if requirement is None or requirement.interpret is not None:
            continue
        failing = admitted - requirement.platforms
        if not failing:
            continue
        here_predicate = facts.names.module_of(predicate_def.fullname) == tree.fullname
        here_kernel = facts.names.module_of(kernel_def.fullname) == tree.fullname
        if not (here_predicate or here_kernel):
            continue  # reported where they are defined
        at = predicate_def if here_predicate else kernel_def
        target = kernel_def if here_kernel else predicate_def
        gate_where = facts.of(gate_method.fullname).where
        gate_path = gate_where.rsplit(":", 1)[0]
        owner = (
            f"{gate_method.info.name}.{gate_method.name}" if gate_method.info else gate_method.name
        )
        why = (
            f"{_short(predicate_def.fullname)} ({facts.of(predicate_def.fullname).where}) "
            f"admits {', '.join(sorted(admitted))}, and {owner} ({gate_where}) raises unless "
            f"self.{gate.predicate}(...) says yes, then calls self.{kernel_name} at "
            f"{gate_path}:{line}"
        )
        out.append(
            Claim(
                at,
                target,
                frozenset(failing),
                requirement,
                kernel_def.fullname,
                (*requirement.chain, why),
            )
        )
    return out
