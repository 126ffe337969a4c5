"""``evaluate``: what an expression may evaluate to, one case per ``ast`` expression kind.

A name is looked up by Python's scoping rules (the frame, the enclosing functions'
frames but not class bodies, the module, the builtins; ``global`` and ``nonlocal``); an
attribute by the data model (``attribute``: a module's namespace, a class's method
resolution order with its descriptors, an instance's own attributes before its
class's); a subscript of a container by a known key; a call by ``calls.Calls.call``;
comprehensions with their targets bound to each known item; ``a if c else b``, ``and``
and ``or`` by the truth of their conditions, both sides where it is not known.
Evaluating may run kernels and end the path (a call that never returns): ``flow`` says.

What it does not do: run statements (``statements``) or bind arguments (``calls``).
"""

from __future__ import annotations

import ast
import builtins
import operator
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, Final

from typed_pallas_mypy.inference import jax_api
from typed_pallas_mypy.inference.evaluator import dispatch, journal, kinds, library
from typed_pallas_mypy.inference.evaluator.domain import (
    ANYTHING,
    NOTHING,
    UNKNOWN,
    Array,
    BoundMethod,
    ClassObj,
    Const,
    Container,
    ContainerMethod,
    Descriptor,
    Device,
    DeviceKind,
    Devices,
    External,
    Flow,
    Frame,
    FunctionObj,
    GeneratorObj,
    InstanceObj,
    Jaxpr,
    ModuleObj,
    Namespace,
    Obj,
    Partial,
    Registrar,
    Super,
    Transformed,
    Value,
    VSet,
    has_array,
    join,
    only,
    shape_of,
    vset,
)
from typed_pallas_mypy.inference.evaluator.literals import literal_value
from typed_pallas_mypy.inference.evaluator.machine import site_key

if TYPE_CHECKING:
    from typed_pallas_mypy.inference.evaluator.machine import Machine

_BUILTIN_NAMES: Final = frozenset(dir(builtins))

_COMPARE: Final[dict[type[ast.cmpop], Callable[[Any, Any], object]]] = {
    ast.Eq: operator.eq,
    ast.NotEq: operator.ne,
    ast.Lt: operator.lt,
    ast.LtE: operator.le,
    ast.Gt: operator.gt,
    ast.GtE: operator.ge,
    ast.In: lambda a, b: operator.contains(b, a),
    ast.NotIn: lambda a, b: not operator.contains(b, a),
}


def truth(values: VSet) -> bool | None:
    """Whether ``values`` is true: True or False when every value it may be agrees."""
    seen: set[bool] = set()
    for value in values:
        one = _truth_of(value)
        if one is None:
            return None
        seen.add(one)
    return seen.pop() if len(seen) == 1 else None


def _truth_of(value: Value) -> bool | None:
    if isinstance(value, Const):
        try:
            return bool(value.value)
        except Exception:
            return None
    if isinstance(value, Container):
        if value.exact:
            return bool(value.items or value.entries)
        return None
    if isinstance(value, (FunctionObj, ClassObj, ModuleObj, BoundMethod, Transformed, Devices)):
        return True
    if isinstance(value, Device):
        return True
    return None


class Expressions:
    """The expression cases of the evaluator (one ``Machine`` each)."""

    def __init__(self, machine: Machine) -> None:
        self.m = machine
        #: each node kind's case (``_Call`` for ``ast.Call``), or None: found once
        self._cases: dict[type[ast.expr], Callable[[Any, Frame, Flow], VSet] | None] = {}

    # ---------------------------------------------------------------- the dispatch

    def evaluate(self, node: ast.expr, frame: Frame, flow: Flow) -> VSet:
        """What ``node`` may evaluate to in ``frame`` on the path ``flow``."""
        self.m.tick()
        if not flow.live:
            return NOTHING
        kind = type(node)
        try:
            case = self._cases[kind]
        except KeyError:
            case = self._cases[kind] = getattr(self, f"_{kind.__name__}", None)
        if case is None:
            return ANYTHING
        return case(node, frame, flow)

    def _Constant(self, node: ast.Constant, frame: Frame, flow: Flow) -> VSet:
        return vset(Const(node.value))

    def _JoinedStr(self, node: ast.JoinedStr, frame: Frame, flow: Flow) -> VSet:
        parts: list[str] | None = []
        for value in node.values:
            if isinstance(value, ast.Constant) and isinstance(value.value, str):
                if parts is not None:
                    parts.append(value.value)
                continue
            assert isinstance(value, ast.FormattedValue)
            found = only(self.evaluate(value.value, frame, flow))
            plain = value.conversion == -1 and value.format_spec is None
            if (
                parts is not None
                and plain
                and isinstance(found, Const)
                and isinstance(found.value, (str, int))
                and not isinstance(found.value, bool)
            ):
                parts.append(str(found.value))
            else:
                parts = None
        return ANYTHING if parts is None else vset(Const("".join(parts)))

    def _Name(self, node: ast.Name, frame: Frame, flow: Flow) -> VSet:
        return self.lookup(node.id, frame)

    def lookup(self, name: str, frame: Frame) -> VSet:
        """A name's value by Python's scoping rules."""
        if name in frame.globals:
            return self._global(name, frame.module)
        current: Frame | None = frame
        first = True
        while current is not None and current.vars is not current.module.attrs:
            if (first or not current.is_class) and name in current.vars:
                return current.vars[name]
            first = False
            current = current.parent
        return self._global(name, frame.module)

    def _global(self, name: str, module: ModuleObj) -> VSet:
        if name in module.attrs:
            return module.attrs[name]
        if name in _BUILTIN_NAMES:
            return vset(External(f"builtins.{name}"))
        return ANYTHING

    def _Attribute(self, node: ast.Attribute, frame: Frame, flow: Flow) -> VSet:
        base = self.evaluate(node.value, frame, flow)
        return self.attribute(base, node.attr, flow)

    def attribute(self, base: VSet, name: str, flow: Flow) -> VSet:
        """``base.name`` for each value ``base`` may be."""
        parts = [self.attribute_of(value, name, flow) for value in base]
        return join(*parts) if parts else NOTHING

    def attribute_of(self, value: Value, name: str, flow: Flow) -> VSet:
        m = self.m
        if isinstance(value, ModuleObj):
            if name in value.attrs:
                return value.attrs[name]
            if value.is_package:
                sub = m.module(f"{value.name}.{name}")
                if sub is not None:
                    return vset(sub)
            getter = value.attrs.get("__getattr__")
            if getter is not None:
                return m.calls.call(getter, [vset(Const(name))], {}, flow)
            return ANYTHING
        if isinstance(value, External):
            return library.external_attribute(m, value, name)
        if isinstance(value, ClassObj):
            if name == "__dict__" and not defines(value, name):
                return vset(Namespace(value))
            return self.class_attribute(value, value, name, flow, instance=None)
        if isinstance(value, Descriptor):
            if name == "__func__" and value.kind in ("staticmethod", "classmethod"):
                return value.func  # the function the descriptor object wraps
            if name == "fget" and value.kind == "property":
                return value.func
            return ANYTHING
        if isinstance(value, InstanceObj):
            return self.instance_attribute(value, name, flow)
        if isinstance(value, Super):
            return self._super_attribute(value, name, flow)
        if isinstance(value, Container):
            return vset(ContainerMethod(value, name))
        if isinstance(value, dispatch.Dispatcher):
            return vset(dispatch.Register(value)) if name == "register" else ANYTHING
        if isinstance(value, Transformed):
            if name in ("defvjp", "defjvp", "defjvps", "def_vmap", "def_partition"):
                return vset(Registrar(value, name))
            if name == "__wrapped__":
                return value.func
            return ANYTHING
        if isinstance(value, Device):
            if name == "platform":
                return vset(Const(m.backend_name))
            if name == "device_kind":
                return vset(DeviceKind(m.platform))
            return ANYTHING
        if isinstance(value, DeviceKind) and not value.method:
            if name in kinds.METHODS:
                return vset(DeviceKind(value.platform, value.lowered, name))
            return ANYTHING
        if isinstance(value, Array):
            return _array_attribute(value, name)
        if isinstance(value, Jaxpr):
            return vset(value) if name == "jaxpr" else ANYTHING  # a closed jaxpr's jaxpr
        if isinstance(value, FunctionObj):
            if name in value.attrs:
                return value.attrs[name]
            if name == "__name__":
                return vset(
                    Const(value.node.name if not isinstance(value.node, ast.Lambda) else "<lambda>")
                )
            return ANYTHING
        if isinstance(value, Const) and value.value is None:
            return NOTHING  # AttributeError: this path ends
        return ANYTHING

    def class_attribute(
        self,
        cls: ClassObj,
        start: ClassObj,
        name: str,
        flow: Flow,
        *,
        instance: Value | None,
        after: ClassObj | None = None,
    ) -> VSet:
        """``name`` looked up through ``start``'s method resolution order (after the class
        ``after``, for ``super()``), with descriptors applied: on an ``instance`` or on the
        class ``cls``."""
        mro = start.mro
        if after is not None and after in mro:
            mro = mro[mro.index(after) + 1 :]
        for klass in mro:
            if isinstance(klass, External):
                return library.external_class_attribute(self.m, klass, name, instance)
            if not isinstance(klass, ClassObj):
                return ANYTHING
            if name in klass.attrs:
                return _bind(self, klass.attrs[name], cls, instance, flow)
        if name == "__new__":
            return vset(External("builtins.object.__new__"))  # every class derives from object
        return ANYTHING

    def instance_attribute(self, instance: InstanceObj, name: str, flow: Flow) -> VSet:
        cls = instance.cls
        if isinstance(cls, ClassObj):
            # a data descriptor (a property) wins over the instance's own attribute
            for klass in cls.mro:
                if isinstance(klass, ClassObj) and name in klass.attrs:
                    if any(
                        isinstance(v, Descriptor) and v.kind == "property"
                        for v in klass.attrs[name]
                    ):
                        return _bind(self, klass.attrs[name], cls, instance, flow)
                    break
            if name in instance.attrs:
                return instance.attrs[name]
            if _lookup_fails(cls, name) and defines(cls, "__getattr__"):
                # the normal lookup fails: Python calls ``__getattr__`` with the name
                getter = self.class_attribute(cls, cls, "__getattr__", flow, instance=instance)
                return self.m.calls.call(getter, [vset(Const(name))], {}, flow)
            if instance.store is not None and not defines(cls, name):
                return vset(ContainerMethod(instance.store, name))  # ``d.get``, ``d.items``
            return self.class_attribute(cls, cls, name, flow, instance=instance)
        if name in instance.attrs:
            return instance.attrs[name]
        return ANYTHING

    def _super_attribute(self, value: Super, name: str, flow: Flow) -> VSet:
        receiver = value.receiver
        if isinstance(receiver, InstanceObj) and isinstance(receiver.cls, ClassObj):
            return self.class_attribute(
                receiver.cls, receiver.cls, name, flow, instance=receiver, after=value.owner
            )
        if isinstance(receiver, ClassObj):
            found = self.class_attribute(
                receiver, receiver, name, flow, instance=None, after=value.owner
            )
            if name == "__init_subclass__":
                return frozenset(
                    BoundMethod(f, receiver) if isinstance(f, FunctionObj) else f for f in found
                )
            return found
        return ANYTHING

    def _Subscript(self, node: ast.Subscript, frame: Frame, flow: Flow) -> VSet:
        base = self.evaluate(node.value, frame, flow)
        key = self.evaluate(node.slice, frame, flow)
        return self.subscript(base, key, flow)

    def subscript(self, base: VSet, key: VSet, flow: Flow) -> VSet:
        from typed_pallas_mypy.inference.evaluator.subscripts import subscript_of

        parts = [subscript_of(self.m, value, key, flow) for value in base]
        return join(*parts) if parts else NOTHING

    def _Call(self, node: ast.Call, frame: Frame, flow: Flow) -> VSet:
        # what this call runs, its arguments included, is recorded for its site: the
        # path's kernels so far are set aside while it runs, then joined back
        saved = (flow.ran, flow.may_ran)
        flow.ran, flow.may_ran = frozenset(), frozenset()
        reached = False
        try:
            callee = self.evaluate(node.func, frame, flow)
            args, star_unknown = self.arguments(node.args, frame, flow)
            keywords, kw_unknown = self.keywords(node.keywords, frame, flow)
            if not flow.live:
                return NOTHING
            reached = True
            self.m.calling.append(site_key(frame.module.name, node))
            try:
                return self.m.calls.call(
                    callee,
                    args,
                    keywords,
                    flow,
                    star_unknown=star_unknown,
                    kw_unknown=kw_unknown,
                    site=node,
                    frame=frame,
                )
            finally:
                self.m.calling.pop()
        finally:
            own, own_may = flow.ran, flow.may_ran
            flow.ran, flow.may_ran = saved[0] | own, saved[1] | own_may
            if reached:
                self.m.record(frame, node, own if flow.live else frozenset(), own_may)

    def arguments(self, nodes: list[ast.expr], frame: Frame, flow: Flow) -> tuple[list[VSet], bool]:
        """The positional arguments' values; True when a ``*`` splat left some unknown."""
        values: list[VSet] = []
        unknown = False
        for arg in nodes:
            if isinstance(arg, ast.Starred):
                spread = self.evaluate(arg.value, frame, flow)
                items = exact_items(spread)
                if items is None or unknown:
                    unknown = True
                else:
                    values.extend(items)
            elif unknown:
                self.evaluate(arg, frame, flow)
            else:
                values.append(self.evaluate(arg, frame, flow))
        return values, unknown

    def keywords(
        self, nodes: list[ast.keyword], frame: Frame, flow: Flow
    ) -> tuple[dict[str, VSet], bool]:
        values: dict[str, VSet] = {}
        unknown = False
        for kw in nodes:
            value = self.evaluate(kw.value, frame, flow)
            if kw.arg is not None:
                values[kw.arg] = value
                continue
            mapping = only(value)
            if isinstance(mapping, Container) and mapping.kind == "dict" and mapping.exact:
                for key, item in mapping.entries:
                    if isinstance(key, Const) and isinstance(key.value, str):
                        values[key.value] = item
                    else:
                        unknown = True
            else:
                unknown = True
        return values, unknown

    def _Lambda(self, node: ast.Lambda, frame: Frame, flow: Flow) -> VSet:
        return vset(self.m.statements.make_function(node, frame, flow, "<lambda>"))

    def _IfExp(self, node: ast.IfExp, frame: Frame, flow: Flow) -> VSet:
        test = truth(self.evaluate(node.test, frame, flow))
        if test is True:
            return self.evaluate(node.body, frame, flow)
        if test is False:
            return self.evaluate(node.orelse, frame, flow)
        return self.m.statements.either(
            frame,
            flow,
            [
                lambda f: self.evaluate(node.body, frame, f),
                lambda f: self.evaluate(node.orelse, frame, f),
            ],
        )

    def _BoolOp(self, node: ast.BoolOp, frame: Frame, flow: Flow) -> VSet:
        is_and = isinstance(node.op, ast.And)
        results: list[VSet] = []
        for value_node in node.values:
            value = self.evaluate(value_node, frame, flow)
            test = truth(value)
            if test is None:
                results.append(value)
                # the rest may or may not run: evaluate them without their effects on must
                rest = node.values[node.values.index(value_node) + 1 :]
                for other in rest:
                    results.append(self.m.statements.maybe(frame, flow, self._later(other, frame)))
                return join(*results)
            if test is (not is_and):
                results.append(value)
                return join(*results)
        return join(*results) if results else NOTHING

    def _later(self, node: ast.expr, frame: Frame) -> Callable[[Flow], VSet]:
        """Evaluating ``node`` in ``frame`` on a flow given later."""

        def run(flow: Flow) -> VSet:
            return self.evaluate(node, frame, flow)

        return run

    def _UnaryOp(self, node: ast.UnaryOp, frame: Frame, flow: Flow) -> VSet:
        operand = self.evaluate(node.operand, frame, flow)
        if isinstance(node.op, ast.Not):
            test = truth(operand)
            return ANYTHING if test is None else vset(Const(not test))
        value = only(operand)
        if (
            isinstance(value, Const)
            and isinstance(value.value, (int, float))
            and not isinstance(value.value, bool)
        ):
            if isinstance(node.op, ast.USub):
                return vset(Const(-value.value))
            if isinstance(node.op, ast.UAdd):
                return vset(value)
        if has_array(operand):
            return vset(Array(shape_of(operand)))
        return ANYTHING

    def _BinOp(self, node: ast.BinOp, frame: Frame, flow: Flow) -> VSet:
        left = self.evaluate(node.left, frame, flow)
        right = self.evaluate(node.right, frame, flow)
        from typed_pallas_mypy.inference.evaluator import operators

        return operators.binary(self.m, node.op, left, right, flow)

    def _Compare(self, node: ast.Compare, frame: Frame, flow: Flow) -> VSet:
        left = self.evaluate(node.left, frame, flow)
        result: bool | None = True
        for op_node, right_node in zip(node.ops, node.comparators, strict=True):
            right = self.evaluate(right_node, frame, flow)
            one = compare(op_node, left, right)
            if one is None:
                from typed_pallas_mypy.inference.evaluator import operators

                one = operators.rich_compare(self.m, op_node, left, right, flow)
            if one is False:
                result = False
            elif one is None and result is True:
                result = None
            left = right
        if has_array(left) and result is None:
            return ANYTHING
        return ANYTHING if result is None else vset(Const(result))

    def _NamedExpr(self, node: ast.NamedExpr, frame: Frame, flow: Flow) -> VSet:
        value = self.evaluate(node.value, frame, flow)
        self.m.statements.bind_name(node.target.id, value, frame)
        return value

    def _Starred(self, node: ast.Starred, frame: Frame, flow: Flow) -> VSet:
        return self.evaluate(node.value, frame, flow)

    def _Tuple(self, node: ast.Tuple, frame: Frame, flow: Flow) -> VSet:
        return literal_value(node, lambda: self._sequence("tuple", node.elts, frame, flow))

    def _List(self, node: ast.List, frame: Frame, flow: Flow) -> VSet:
        return literal_value(node, lambda: self._sequence("list", node.elts, frame, flow))

    def _Set(self, node: ast.Set, frame: Frame, flow: Flow) -> VSet:
        return literal_value(node, lambda: self._sequence("set", node.elts, frame, flow))

    def _sequence(self, kind: str, elts: list[ast.expr], frame: Frame, flow: Flow) -> VSet:
        made = Container(kind)
        for elt in elts:
            if isinstance(elt, ast.Starred):
                items = exact_items(self.evaluate(elt.value, frame, flow))
                if items is None:
                    made.exact = False
                else:
                    made.items.extend(items)
            else:
                made.items.append(self.evaluate(elt, frame, flow))
        if not made.exact:
            made.loose = join(*made.items)
        return vset(made)

    def _Dict(self, node: ast.Dict, frame: Frame, flow: Flow) -> VSet:
        return literal_value(node, lambda: self._dict_display(node, frame, flow))

    def _dict_display(self, node: ast.Dict, frame: Frame, flow: Flow) -> VSet:
        made = NewDict()
        for key_node, value_node in zip(node.keys, node.values, strict=True):
            if key_node is None:
                spread = only(self.evaluate(value_node, frame, flow))
                if isinstance(spread, Container) and spread.kind == "dict" and spread.exact:
                    for spread_key, spread_value in spread.entries:
                        made.put(spread_key, spread_value)
                else:
                    made.container.exact = False
                continue
            key = self.evaluate(key_node, frame, flow)
            made.put_any(key, self.evaluate(value_node, frame, flow))
        return vset(made.finished())

    def _ListComp(self, node: ast.ListComp, frame: Frame, flow: Flow) -> VSet:
        return self._comprehension("list", node.generators, [node.elt], frame, flow)

    def _SetComp(self, node: ast.SetComp, frame: Frame, flow: Flow) -> VSet:
        return self._comprehension("set", node.generators, [node.elt], frame, flow)

    def _DictComp(self, node: ast.DictComp, frame: Frame, flow: Flow) -> VSet:
        return self._comprehension("dict", node.generators, [node.key, node.value], frame, flow)

    def _GeneratorExp(self, node: ast.GeneratorExp, frame: Frame, flow: Flow) -> VSet:
        return vset(GeneratorObj(None, None, node, frame))

    def comprehension_items(
        self, generators: list[ast.comprehension], elts: list[ast.expr], frame: Frame, flow: Flow
    ) -> tuple[list[list[VSet]], bool, bool]:
        """The values of ``elts`` for each item the ``generators`` give, in order; whether
        they are all the items (exact); whether at least one item is sure."""
        inner = Frame(
            {},
            frame.module,
            frame,
            qualname=frame.qualname,
            receiver=frame.receiver,
            function=frame.function,
        )
        rows: list[list[VSet]] = []
        exact = True

        def walk(index: int, sure: bool) -> bool:
            nonlocal exact
            if index == len(generators):
                row = [
                    self.evaluate(elt, inner, flow)
                    if sure
                    else self.m.statements.maybe(inner, flow, self._later(elt, inner))
                    for elt in elts
                ]
                rows.append(row)
                return sure
            gen = generators[index]
            source_frame = frame if index == 0 else inner
            iterable = self.evaluate(gen.iter, source_frame, flow)
            items = self.m.iteration.iterate(iterable, flow)
            if items is None:
                exact = False
                self.m.statements.bind_target(gen.target, ANYTHING, inner, flow)
                walk_conditions(gen, index, sure=False)
                return False
            any_sure = False
            for item in items:
                self.m.statements.bind_target(gen.target, item, inner, flow)
                if walk_conditions(gen, index, sure):
                    any_sure = True
            return any_sure

        def walk_conditions(gen: ast.comprehension, index: int, sure: bool) -> bool:
            nonlocal exact
            for condition in gen.ifs:
                test = truth(self.evaluate(condition, inner, flow))
                if test is False:
                    return False
                if test is None:
                    exact = False
                    sure = False
            return walk(index + 1, sure)

        some = walk(0, True)
        return rows, exact, some

    def _comprehension(
        self,
        kind: str,
        generators: list[ast.comprehension],
        elts: list[ast.expr],
        frame: Frame,
        flow: Flow,
    ) -> VSet:
        rows, exact, _ = self.comprehension_items(generators, elts, frame, flow)
        if kind == "dict":
            built = NewDict()
            for key, value in rows:
                built.put_any(key, value)
            made = built.finished()
        else:
            made = Container(kind)
            made.items = [row[0] for row in rows]
        if not exact:
            made.exact = False
            made.loose = join(made.loose, *(row[-1] for row in rows))
        return vset(made)

    def _Await(self, node: ast.Await, frame: Frame, flow: Flow) -> VSet:
        self.evaluate(node.value, frame, flow)
        return ANYTHING

    def _Yield(self, node: ast.Yield, frame: Frame, flow: Flow) -> VSet:
        value = (
            self.evaluate(node.value, frame, flow) if node.value is not None else vset(Const(None))
        )
        self.m.statements.yielded(value, frame, flow)
        return ANYTHING

    def _YieldFrom(self, node: ast.YieldFrom, frame: Frame, flow: Flow) -> VSet:
        source = self.evaluate(node.value, frame, flow)
        items = self.m.iteration.iterate(source, flow)
        if items is None:
            self.m.statements.yielded(ANYTHING, frame, flow)
        else:
            for item in items:
                self.m.statements.yielded(item, frame, flow)
        return ANYTHING

    def _Slice(self, node: ast.Slice, frame: Frame, flow: Flow) -> VSet:
        for part in (node.lower, node.upper, node.step):
            if part is not None:
                self.evaluate(part, frame, flow)
        return ANYTHING


def _bind(
    expressions: Expressions, found: VSet, cls: ClassObj, instance: Value | None, flow: Flow
) -> VSet:
    """What a class attribute ``found`` gives looked up on ``instance`` (None: on the class
    ``cls``): a function becomes a bound method, a descriptor (``staticmethod``,
    ``classmethod``, ``property``, an instance with ``__get__``) does what it does."""
    m = expressions.m
    out: list[VSet] = []
    for value in found:
        if isinstance(value, FunctionObj):
            out.append(vset(BoundMethod(value, instance)) if instance is not None else vset(value))
        elif isinstance(value, Descriptor):
            if value.kind == "staticmethod":
                out.append(value.func)
            elif value.kind == "classmethod":
                out.append(frozenset(BoundMethod(f, cls) for f in value.func))
            elif value.kind == "property":
                if instance is None:
                    out.append(vset(value))
                else:
                    out.append(m.calls.call(value.func, [vset(instance)], {}, flow))
            elif value.kind == "partialmethod" and instance is not None:
                out.append(
                    frozenset(
                        Partial(p.func, (vset(instance), *p.args), p.keywords)
                        if isinstance(p, Partial)
                        else UNKNOWN
                        for p in value.func
                    )
                )
            else:
                out.append(ANYTHING)
        elif isinstance(value, Transformed) and instance is not None and _binds(value):
            out.append(vset(BoundMethod(value, instance)))
        elif isinstance(value, dispatch.Dispatcher) and instance is not None:
            out.append(vset(BoundMethod(value, instance)))  # a function, or a descriptor
        elif (
            isinstance(value, InstanceObj)
            and isinstance(value.cls, ClassObj)
            and defines(value.cls, "__get__")
        ):
            getter = expressions.class_attribute(
                value.cls, value.cls, "__get__", flow, instance=value
            )
            owner_instance = vset(instance) if instance is not None else vset(Const(None))
            out.append(m.calls.call(getter, [owner_instance, vset(cls)], {}, flow))
        else:
            out.append(vset(value))
    return join(*out)


def _binds(value: Transformed) -> bool:
    """What a row of JAX's table returned binds like a function (``ApiRow.result_binds``)."""
    row = jax_api.row(value.keeper)
    return row is not None and row.binds_as_method


def defines(cls: ClassObj, name: str) -> bool:
    return any(isinstance(k, ClassObj) and name in k.attrs for k in cls.mro)


def _lookup_fails(cls: ClassObj, name: str) -> bool:
    """Whether looking ``name`` up on ``cls``'s instances finds nothing in the class's
    method resolution order, every class of which the evaluator read (a library base
    may define anything; ``object`` defines no public name)."""
    for klass in cls.mro:
        if isinstance(klass, ClassObj):
            if name in klass.attrs:
                return False
        elif not (isinstance(klass, External) and klass.fullname == "builtins.object"):
            return False
    return not (name.startswith("__") and name.endswith("__"))


# -- containers ------------------------------------------------------------------------


def hashable_key(value: Value) -> bool:
    return not isinstance(value, (Container, Array)) and value is not UNKNOWN


class NewDict:
    """A dict being built by a display or a comprehension: each key found once by its
    hash, not by a scan of the entries (a display of thousands of keys is linear). As in
    Python, a key equal to an earlier one (``{True: a, 1: b}``) keeps the earlier key and
    its place, and takes the later value."""

    __slots__ = ("container", "loose", "places")

    def __init__(self) -> None:
        self.container = Container("dict")
        #: each key's index in ``container.entries``
        self.places: dict[Value, int] = {}
        #: the values put under keys not known, joined once (``finished``): joined one by
        #: one, a display of thousands of such keys was quadratic
        self.loose: list[VSet] = []

    def finished(self) -> Container:
        """The dict built."""
        if self.loose:
            self.container.loose = join(self.container.loose, *self.loose)
            self.loose = []
        return self.container

    def put(self, key: Value, value: VSet) -> None:
        """``d[key] = value`` for a key known and hashable."""
        entries = self.container.entries
        at = self.places.get(key)
        if at is None:
            self.places[key] = len(entries)
            entries.append((key, value))
        else:
            entries[at] = (entries[at][0], value)

    def put_any(self, key: VSet, value: VSet) -> None:
        """``d[key] = value`` for a key that may not be known: then the dict is no
        longer exact, and may hold ``value`` under some key."""
        one = only(key)
        if one is None or not hashable_key(one):
            self.container.exact = False
            self.loose.append(value)
        else:
            self.put(one, value)


def set_entry(container: Container, key: Value, value: VSet) -> None:
    journal.touch(container)
    for i, (k, _) in enumerate(container.entries):
        if k == key:
            container.entries[i] = (k, value)  # an equal key keeps the first one, as in Python
            return
    container.entries.append((key, value))


def exact_items(values: VSet) -> list[VSet] | None:
    """The items of the one exact sequence ``values`` holds (a dict: its keys), else None."""
    one = only(values)
    if isinstance(one, Container) and one.exact:
        if one.kind == "dict":
            return [vset(k) for k, _ in one.entries]
        return list(one.items)
    if isinstance(one, Const) and isinstance(one.value, tuple):
        return [vset(Const(v)) for v in one.value]
    return None


def container_item(container: Container, key: VSet) -> VSet:
    """``container[key]``: the item under a known key; what any item may be otherwise."""
    one = only(key)
    if container.kind == "dict":
        if isinstance(one, Value) and hashable_key(one):
            for k, v in container.entries:
                if k == one:
                    return join(v, container.loose) if container.loose else v
            if container.exact:
                return NOTHING  # KeyError: this path ends
        return container.all_items()
    if isinstance(one, Const) and isinstance(one.value, int) and not isinstance(one.value, bool):
        if container.exact:
            try:
                return container.items[one.value]
            except IndexError:
                return NOTHING
    return container.all_items()


def compare(op: ast.cmpop, left: VSet, right: VSet) -> bool | None:
    """One comparison of two places: True or False when every pair of values agrees."""
    if isinstance(op, (ast.Is, ast.IsNot)):
        result = _identity(left, right)
        if result is None:
            return None
        return result if isinstance(op, ast.Is) else not result
    fn = _COMPARE.get(type(op))
    if fn is None:
        return None
    seen: set[bool] = set()
    for a in left:
        for b in right:
            one = _compare_values(fn, op, a, b)
            if one is None:
                return None
            seen.add(one)
    return seen.pop() if len(seen) == 1 else None


def _compare_values(
    fn: Callable[[object, object], object], op: ast.cmpop, a: Value, b: Value
) -> bool | None:
    if isinstance(a, DeviceKind) or isinstance(b, DeviceKind):
        return kinds.comparison(op, a, b)
    if isinstance(a, Const) and isinstance(b, Const):
        try:
            return bool(fn(a.value, b.value))
        except Exception:
            return None
    if (
        isinstance(op, (ast.In, ast.NotIn))
        and isinstance(b, Container)
        and b.exact
        and isinstance(a, Const)
    ):
        members: list[Value] = []
        if b.kind == "dict":
            members = [k for k, _ in b.entries]
        else:
            for item in b.items:
                value = only(item)
                if value is None:
                    return None
                members.append(value)
        if not all(isinstance(v, Const) for v in members):
            return None
        inside = a in members
        return inside if isinstance(op, ast.In) else not inside
    if (
        isinstance(op, (ast.Eq, ast.NotEq))
        and isinstance(a, InstanceObj)
        and isinstance(b, InstanceObj)
    ):
        if isinstance(a.cls, ClassObj) and "enum" in a.cls.flags and a.cls is b.cls:
            same = a is b
            return same if isinstance(op, ast.Eq) else not same
    return None


def _identity(left: VSet, right: VSet) -> bool | None:
    a, b = only(left), only(right)
    if a is None or b is None:
        if left and right and UNKNOWN not in left and UNKNOWN not in right:
            if all(isinstance(x, Const) and x.value is None for x in right):
                if not any(isinstance(x, Const) and x.value is None for x in left):
                    return False
        return None
    if isinstance(a, Const) and isinstance(b, Const):
        if a.value is None or b.value is None or isinstance(a.value, bool):
            return a.value is b.value
        return None
    if isinstance(b, Const) and b.value is None:
        return False  # an object is not None
    if isinstance(a, Const) and a.value is None:
        return False
    if isinstance(a, type(b)) and not isinstance(a, (Array, Device)):
        return a == b
    if isinstance(a, Obj) and isinstance(b, Obj):
        return False  # two objects of the heap, of different kinds: never the same object
    return None


# -- arrays ----------------------------------------------------------------------------


#: what an array's ``.at[index]`` is: its methods (``apply``, ``set``...) are JAX's
INDEX_UPDATE: Final = "jax._src.numpy.array_methods._IndexUpdateRef"


def _array_attribute(value: Array, name: str) -> VSet:
    """An array's ``ndim``, ``shape`` and ``T`` (what its shape says), or unknown."""
    shape = value.shape
    if name == "ndim" and shape is not None:
        return vset(Const(len(shape)))
    if name == "shape" and shape is not None:
        return vset(Const(shape))
    if name == "T":
        return vset(Array(tuple(reversed(shape)) if shape is not None else None))
    if name in ("real", "imag"):
        return vset(Array(shape))
    if name == "at":  # ``x.at`` and ``x.at[i]`` both read as the update reference
        return vset(External(INDEX_UPDATE))
    return ANYTHING


def indexed_shape(shape: tuple[int, ...] | None, key: VSet) -> tuple[int, ...] | None:
    """The shape of ``array[key]`` for ``None``, an integer and ``...``."""
    one = only(key)
    if shape is None or not isinstance(one, Const):
        return None
    if one.value is None:
        return (1, *shape)
    if one.value is Ellipsis:
        return shape
    if isinstance(one.value, int) and not isinstance(one.value, bool) and shape:
        return shape[1:]
    return None


def broadcast_shape(left: VSet, right: VSet) -> tuple[int, ...] | None:
    """The shape of an operation on an array and an array or a number."""
    a, b = only(left), only(right)
    shapes = [v.shape for v in (a, b) if isinstance(v, Array)]
    others = [v for v in (a, b) if not isinstance(v, Array)]
    if any(s is None for s in shapes):
        return None
    if any(not (isinstance(o, Const) and isinstance(o.value, (int, float))) for o in others):
        return None
    return shapes[0] if all(s == shapes[0] for s in shapes) else None
