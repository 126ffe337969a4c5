"""Running statements: a module's body when it is imported, a function's body when it is
called, a class body when the class is created, each with its effects.

Straight-line code binds names in order (the last binding wins). Where control may go
two ways (``if`` on a condition not known under the assumed platform, a loop whose trip
count is not known, a ``try`` whose handler may run, ``match`` cases) each way runs from
the same state and the states are joined: a name holds what any way bound, and the
kernels run on every way are those run on each (``Flow.ran`` intersected). A way that
``return``s, ``raise``s or ``break``s ends there. A loop over a sequence whose items are
known runs its body once per item, in order. Class creation does what Python does: the
body runs in its own namespace, the bases' ``__init_subclass__`` runs, ``__set_name__``
of the namespace's values runs, enum members and dataclass fields are made.

What it does not do: evaluate expressions (``expressions``) or bind a call's arguments
(``calls``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, TypeVar

from typed_pallas_mypy.inference.evaluator import journal, library, operators
from typed_pallas_mypy.inference.evaluator.domain import (
    ANYTHING,
    NOTHING,
    UNKNOWN,
    ClassObj,
    Const,
    Container,
    Descriptor,
    External,
    Flow,
    Frame,
    FunctionObj,
    InstanceObj,
    Kernel,
    ModuleObj,
    Value,
    VSet,
    both_ran,
    join,
    only,
    vset,
)
from typed_pallas_mypy.inference.evaluator.expressions import (
    defines,
    exact_items,
    set_entry,
    truth,
)
from typed_pallas_mypy.inference.reach import absolute_module

if TYPE_CHECKING:
    from typed_pallas_mypy.inference.evaluator.machine import Machine

_T = TypeVar("_T")


@dataclass
class Exit:
    """Where the ways that leave a body go: the values and kernels of each ``return``,
    each ``yield``, each ``raise`` (with the exception), each ``break``/``continue``."""

    returns: list[tuple[VSet, frozenset[Kernel], frozenset[Kernel]]] = field(default_factory=list)
    yields: list[tuple[VSet, frozenset[Kernel]]] = field(default_factory=list)
    #: a ``yield`` ran on one of several ways (its items are then not one sequence)
    branched_yield: bool = False
    #: how many ways deep the body started (``Statements.ways``)
    depth: int = 0
    raises: list[tuple[VSet, dict[str, VSet], frozenset[Kernel]]] = field(default_factory=list)
    breaks: list[tuple[dict[str, VSet], frozenset[Kernel]]] = field(default_factory=list)
    continues: list[tuple[dict[str, VSet], frozenset[Kernel]]] = field(default_factory=list)


class Statements:
    """The statement cases of the evaluator (one ``Machine`` each)."""

    def __init__(self, machine: Machine) -> None:
        self.m = machine
        #: the exits of the bodies being run, innermost last, by frame
        self._exits: dict[int, list[Exit]] = {}
        #: how many ``either`` ways deep the run is
        self.ways = 0

    # ------------------------------------------------------------------ bodies

    def run_body(
        self, body: list[ast.stmt], frame: Frame, flow: Flow, returns: Exit | None
    ) -> Exit:
        """Run a module's, class's or function's body; its exits."""
        exit_ = returns or Exit()
        exit_.depth = self.ways
        self._exits.setdefault(id(frame), []).append(exit_)
        try:
            self.block(body, frame, flow)
        finally:
            stack = self._exits[id(frame)]
            stack.pop()
            if not stack:
                del self._exits[id(frame)]
        return exit_

    def _exit(self, frame: Frame) -> Exit | None:
        stack = self._exits.get(id(frame))
        return stack[-1] if stack else None

    def block(self, body: list[ast.stmt], frame: Frame, flow: Flow) -> None:
        for stmt in body:
            if not flow.live:
                return
            self.m.tick()
            name = f"_{type(stmt).__name__}"
            method = getattr(self, name, None) or getattr(self.m.control, name, None)
            if method is not None:
                method(stmt, frame, flow)

    # ------------------------------------------------------------------ ways

    def either(self, frame: Frame, flow: Flow, ways: list[Callable[[Flow], _T]]) -> VSet:
        """Run each of ``ways`` from the same state and join what they leave; the values
        they give (for expressions), joined."""
        start_vars = dict(frame.vars)
        start = (flow.ran, flow.may_ran)
        ends: list[tuple[dict[str, VSet], frozenset[Kernel]]] = []
        values: list[VSet] = []
        may: set[Kernel] = set(flow.may_ran)
        for way in ways:
            _restore(frame, start_vars)
            flow.live, flow.ran, flow.may_ran = True, start[0], start[1]
            self.ways += 1
            try:
                value = way(flow)
            finally:
                self.ways -= 1
            may |= flow.may_ran
            if flow.live:
                ends.append((dict(frame.vars), flow.ran))
                if isinstance(value, frozenset):
                    values.append(value)
        self._merge(frame, flow, start_vars, ends)
        flow.may_ran = frozenset(may)
        return join(*values) if values else NOTHING

    def maybe(self, frame: Frame, flow: Flow, way: Callable[[Flow], VSet]) -> VSet:
        """Run ``way`` or not (its kernels are not on every path); the value it gives."""
        result: list[VSet] = []

        def run(f: Flow) -> VSet:
            value = way(f)
            result.append(value)
            return value

        self.either(frame, flow, [run, lambda f: NOTHING])
        return join(*result) if result else NOTHING

    def _merge(
        self,
        frame: Frame,
        flow: Flow,
        start_vars: dict[str, VSet],
        ends: list[tuple[dict[str, VSet], frozenset[Kernel]]],
    ) -> None:
        if not ends:
            _restore(frame, start_vars)
            flow.live = False
            return
        merged: dict[str, VSet] = {}
        for vars_, _ in ends:
            for name, value in vars_.items():
                merged[name] = join(merged[name], value) if name in merged else value
        _restore(frame, merged)
        ran = ends[0][1]
        for _, more in ends[1:]:
            ran = both_ran(ran, more)
        flow.live = True
        flow.ran = ran

    # ------------------------------------------------------------------ simple statements

    def restore(self, frame: Frame, vars_: dict[str, VSet]) -> None:
        """Put ``frame``'s names back as ``vars_`` holds them."""
        _restore(frame, vars_)

    def _Expr(self, stmt: ast.Expr, frame: Frame, flow: Flow) -> None:
        self.m.expressions.evaluate(stmt.value, frame, flow)

    def _Assign(self, stmt: ast.Assign, frame: Frame, flow: Flow) -> None:
        value = self.m.expressions.evaluate(stmt.value, frame, flow)
        if frame.is_class and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
            if library.is_field_marker(value):  # ``fn = attr.ib(...)``: a field, unannotated
                _note_field(frame, stmt.targets[0].id, value)
        for target in stmt.targets:
            self.bind_target(target, value, frame, flow)

    def _AnnAssign(self, stmt: ast.AnnAssign, frame: Frame, flow: Flow) -> None:
        if stmt.value is None:
            if frame.is_class and isinstance(stmt.target, ast.Name):
                frame.vars.setdefault("__annotations_order__", NOTHING)
                _note_field(frame, stmt.target.id, None)
            return
        value = self.m.expressions.evaluate(stmt.value, frame, flow)
        if frame.is_class and isinstance(stmt.target, ast.Name):
            _note_field(frame, stmt.target.id, value)
        self.bind_target(stmt.target, value, frame, flow)

    def _AugAssign(self, stmt: ast.AugAssign, frame: Frame, flow: Flow) -> None:
        expressions = self.m.expressions
        current = expressions.evaluate(_as_load(stmt.target), frame, flow)
        value = expressions.evaluate(stmt.value, frame, flow)
        one, other = only(current), only(value)
        if (
            isinstance(stmt.op, ast.Add)
            and isinstance(one, Container)
            and one.kind == "list"
            and isinstance(other, Container)
        ):
            # ``items += [...]``: the list is extended in place
            if other.exact and other.kind in ("list", "tuple"):
                journal.touch(one)
                one.items.extend(other.items)
            else:
                _loosen(one, other.all_items())
            return
        if (
            isinstance(stmt.op, ast.BitOr)
            and isinstance(one, Container)
            and isinstance(other, Container)
            and one.kind == other.kind == "dict"
        ):
            # ``table |= {...}``: the dict is updated in place
            for key, item in other.entries:
                set_entry(one, key, item)
            if not other.exact:
                _loosen(one, other.all_items())
            return
        result = operators.binary(self.m, stmt.op, current, value, flow)
        self.bind_target(stmt.target, result, frame, flow)

    def _Return(self, stmt: ast.Return, frame: Frame, flow: Flow) -> None:
        value = (
            self.m.expressions.evaluate(stmt.value, frame, flow)
            if stmt.value is not None
            else vset(Const(None))
        )
        if not flow.live:
            return
        exit_ = self._exit(frame)
        if exit_ is not None:
            exit_.returns.append((value, flow.ran, flow.may_ran))
        flow.live = False

    def yielded(self, value: VSet, frame: Frame, flow: Flow) -> None:
        exit_ = self._exit(frame)
        if exit_ is not None and flow.live:
            exit_.yields.append((value, flow.ran))
            if self.ways > exit_.depth:
                exit_.branched_yield = True

    def _Raise(self, stmt: ast.Raise, frame: Frame, flow: Flow) -> None:
        raised = ANYTHING
        if stmt.exc is not None:
            raised = self.m.expressions.evaluate(stmt.exc, frame, flow)
        self.raise_(raised, frame, flow)

    def raise_(self, raised: VSet, frame: Frame, flow: Flow) -> None:
        """The path raises ``raised`` here: a handler around it may take it."""
        if not flow.live:
            return
        exit_ = self._exit(frame)
        if exit_ is not None:
            exit_.raises.append((raised, dict(frame.vars), flow.ran))
        flow.live = False

    def may_raise(self, raised: VSet, frame: Frame, flow: Flow, *, ends: bool) -> None:
        """A call here may raise ``raised`` (and ends the path when ``ends``)."""
        if ends:
            self.raise_(raised, frame, flow)
            return
        exit_ = self._exit(frame)
        if exit_ is not None and flow.live:
            exit_.raises.append((raised, dict(frame.vars), flow.ran))

    def maybe_detached(self, flow: Flow, way: Callable[[Flow], object]) -> None:
        """Run ``way`` on a path of its own: what it runs may run, not on every path."""
        side = Flow(ran=flow.ran, may_ran=flow.may_ran)
        way(side)
        flow.may_ran = flow.may_ran | side.may_ran | side.ran

    def _Assert(self, stmt: ast.Assert, frame: Frame, flow: Flow) -> None:
        test = truth(self.m.expressions.evaluate(stmt.test, frame, flow))
        if test is False:
            self.raise_(vset(External("builtins.AssertionError")), frame, flow)

    def _Break(self, stmt: ast.Break, frame: Frame, flow: Flow) -> None:
        exit_ = self._exit(frame)
        if exit_ is not None and flow.live:
            exit_.breaks.append((dict(frame.vars), flow.ran))
        flow.live = False

    def _Continue(self, stmt: ast.Continue, frame: Frame, flow: Flow) -> None:
        exit_ = self._exit(frame)
        if exit_ is not None and flow.live:
            exit_.continues.append((dict(frame.vars), flow.ran))
        flow.live = False

    def _Global(self, stmt: ast.Global, frame: Frame, flow: Flow) -> None:
        frame.globals.update(stmt.names)

    def _Nonlocal(self, stmt: ast.Nonlocal, frame: Frame, flow: Flow) -> None:
        frame.nonlocals.update(stmt.names)

    def _Delete(self, stmt: ast.Delete, frame: Frame, flow: Flow) -> None:
        for target in stmt.targets:
            if isinstance(target, ast.Name):
                journal.touch(frame)
                frame.vars.pop(target.id, None)

    # ------------------------------------------------------------------ binding

    def bind_name(self, name: str, value: VSet, frame: Frame) -> None:
        """Bind ``name`` in the frame Python binds it in (``global``, ``nonlocal``)."""
        if name in frame.globals:
            journal.touch(frame.module)
            frame.module.attrs[name] = value
            return
        if name in frame.nonlocals:
            current = frame.parent
            while current is not None:
                if not current.is_class and name in current.vars:
                    journal.touch(current)
                    current.vars[name] = value
                    return
                current = current.parent
        journal.touch(frame)
        frame.vars[name] = value

    def bind_target(self, target: ast.expr, value: VSet, frame: Frame, flow: Flow) -> None:
        """An assignment's target bound to ``value`` (names, attributes, items, unpacking)."""
        expressions = self.m.expressions
        if isinstance(target, ast.Name):
            self.bind_name(target.id, value, frame)
        elif isinstance(target, (ast.Tuple, ast.List)):
            self._unpack(target.elts, value, frame, flow)
        elif isinstance(target, ast.Starred):
            self.bind_target(target.value, ANYTHING, frame, flow)
        elif isinstance(target, ast.Attribute):
            owner = expressions.evaluate(target.value, frame, flow)
            self.set_attribute(owner, target.attr, value, flow)
        elif isinstance(target, ast.Subscript):
            owner = expressions.evaluate(target.value, frame, flow)
            key = expressions.evaluate(target.slice, frame, flow)
            self.set_item(owner, key, value)

    def _unpack(self, elts: list[ast.expr], value: VSet, frame: Frame, flow: Flow) -> None:
        items = exact_items(value)
        if items is None and len(value) > 1 and UNKNOWN not in value:
            # each value a sequence of known items: unpack each, join per target
            per_value = [exact_items(vset(v)) for v in value]
            if all(p is not None and len(p) == len(elts) for p in per_value):
                for i, elt in enumerate(elts):
                    self.bind_target(
                        elt, join(*(p[i] for p in per_value if p is not None)), frame, flow
                    )
                return
        starred = [i for i, elt in enumerate(elts) if isinstance(elt, ast.Starred)]
        if items is None:
            for elt in elts:
                self.bind_target(elt, ANYTHING, frame, flow)
            return
        if not starred:
            if len(items) != len(elts):
                flow.live = False  # ValueError: this path ends
                return
            for elt, item in zip(elts, items, strict=True):
                self.bind_target(elt, item, frame, flow)
            return
        star = starred[0]
        after = len(elts) - star - 1
        if len(items) < len(elts) - 1:
            flow.live = False
            return
        for elt, item in zip(elts[:star], items[:star], strict=True):
            self.bind_target(elt, item, frame, flow)
        rest = Container("list")
        rest.items = list(items[star : len(items) - after])
        star_target = elts[star]
        assert isinstance(star_target, ast.Starred)
        self.bind_target(star_target.value, vset(rest), frame, flow)
        for elt, item in zip(elts[star + 1 :], items[len(items) - after :], strict=True):
            self.bind_target(elt, item, frame, flow)

    def set_attribute(self, owner: VSet, name: str, value: VSet, flow: Flow) -> None:
        """``owner.name = value``: one owner is set (a strong update), several may be."""
        targets = [v for v in owner if v is not UNKNOWN]
        strong = len(targets) == 1 and UNKNOWN not in owner
        for target in targets:
            if isinstance(target, (ModuleObj, ClassObj, InstanceObj, FunctionObj)):
                journal.touch(target)
                if strong:
                    target.attrs[name] = value
                else:
                    target.attrs[name] = join(target.attrs.get(name, NOTHING), value)

    def set_item(self, owner: VSet, key: VSet, value: VSet) -> None:
        """``owner[key] = value``."""
        targets = [store for v in owner if (store := _item_store(v)) is not None]
        one_key = only(key)
        for target in targets:
            if target.kind == "dict" and one_key is not None and not isinstance(one_key, Container):
                if len(targets) == 1 and UNKNOWN not in owner:
                    set_entry(target, one_key, value)
                else:
                    _loosen(target, value)
            elif (
                target.kind == "list"
                and isinstance(one_key, Const)
                and isinstance(one_key.value, int)
                and target.exact
                and -len(target.items) <= one_key.value < len(target.items)
                and len(targets) == 1
            ):
                journal.touch(target)
                target.items[one_key.value] = value
            else:
                _loosen(target, value)

    # ------------------------------------------------------------------ definitions

    def make_function(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
        frame: Frame,
        flow: Flow,
        name: str,
    ) -> FunctionObj:
        expressions = self.m.expressions
        args = node.args
        defaults = tuple(expressions.evaluate(d, frame, flow) for d in args.defaults)
        kw_defaults = {
            a.arg: expressions.evaluate(d, frame, flow)
            for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True)
            if d is not None
        }
        qualname = f"{frame.qualname}.{name}" if frame.qualname else name
        if frame.function is not None and not frame.is_class:
            qualname = f"{frame.qualname}.<locals>.{name}"
        closure = (
            frame
            if frame.parent is not None or frame.is_class or frame.function is not None
            else None
        )
        if closure is not None and closure.is_class:
            closure = closure.parent
        made = FunctionObj(node, frame.module, qualname, closure, defaults, kw_defaults)
        if not isinstance(node, ast.Lambda):
            self.m.made.setdefault(id(node), made)
        return made

    def _FunctionDef(
        self, stmt: ast.FunctionDef | ast.AsyncFunctionDef, frame: Frame, flow: Flow
    ) -> None:
        decorators = [self.m.expressions.evaluate(d, frame, flow) for d in stmt.decorator_list]
        function = self.make_function(stmt, frame, flow, stmt.name)
        value: VSet = vset(function)
        for node, decorator in reversed(list(zip(stmt.decorator_list, decorators))):
            # applied where it is written: a kernel it makes is made there
            site = node if isinstance(node, ast.Call) else None
            value = self.m.calls.call(decorator, [value], {}, flow, site=site, frame=frame)
            if not flow.live:
                return
        self.bind_name(stmt.name, value, frame)

    _AsyncFunctionDef = _FunctionDef

    def _ClassDef(self, stmt: ast.ClassDef, frame: Frame, flow: Flow) -> None:
        expressions = self.m.expressions
        decorators = [expressions.evaluate(d, frame, flow) for d in stmt.decorator_list]
        bases: list[Value] = []
        for base_node in stmt.bases:
            base = only(expressions.evaluate(base_node, frame, flow))
            bases.append(base if base is not None else UNKNOWN)
        class_keywords = {
            kw.arg: expressions.evaluate(kw.value, frame, flow) for kw in stmt.keywords if kw.arg
        }
        meta = only(class_keywords.pop("metaclass", NOTHING))
        qualname = f"{frame.qualname}.{stmt.name}" if frame.qualname else stmt.name
        cls = ClassObj(stmt.name, frame.module, qualname, tuple(bases))
        cls.mro = _mro(cls)
        cls.meta = meta if isinstance(meta, ClassObj) else _inherited_meta(cls)
        library.classify(cls)
        body = Frame(cls.attrs, frame.module, frame, is_class=True, qualname=qualname)
        cls.attrs["__qualname__"] = vset(Const(qualname))
        cls.attrs["__name__"] = vset(Const(stmt.name))
        self.run_body(stmt.body, body, Flow(ran=flow.ran), returns=None)
        _finish_class(cls)
        for value in list(cls.attrs.values()):
            for v in value:
                if isinstance(v, FunctionObj) and v.owner is None:
                    v.owner = cls
                elif isinstance(v, Descriptor):
                    for f in v.func:
                        if isinstance(f, FunctionObj) and f.owner is None:
                            f.owner = cls
        self._class_creation_hooks(cls, flow, class_keywords)
        result: VSet = vset(cls)
        for decorator in reversed(decorators):
            result = self.m.calls.call(decorator, [result], {}, flow)
            if not flow.live:
                return
        self.bind_name(stmt.name, result, frame)

    def _class_creation_hooks(self, cls: ClassObj, flow: Flow, keywords: dict[str, VSet]) -> None:
        """``__set_name__`` of the namespace's values, then the bases' ``__init_subclass__``."""
        calls = self.m.calls
        for name, values in list(cls.attrs.items()):
            for value in values:
                if isinstance(value, InstanceObj) and isinstance(value.cls, ClassObj):
                    hook = self.m.expressions.class_attribute(
                        value.cls, value.cls, "__set_name__", flow, instance=value
                    )
                    if hook != ANYTHING:
                        calls.call(hook, [vset(cls), vset(Const(name))], {}, flow)
        for base in cls.mro[1:]:
            if isinstance(base, ClassObj) and "__init_subclass__" in base.attrs:
                hooks = base.attrs["__init_subclass__"]
                bound = frozenset(
                    calls.bind_first(f, cls) if isinstance(f, FunctionObj) else f for f in hooks
                )
                bound = frozenset(
                    b
                    for f in bound
                    for b in (
                        f.func if isinstance(f, Descriptor) and f.kind == "classmethod" else (f,)
                    )
                )
                calls.call(
                    frozenset(
                        calls.bind_first(f, cls) if isinstance(f, FunctionObj) else f for f in bound
                    ),
                    [],
                    keywords,
                    flow,
                )
                break

    # ------------------------------------------------------------------ imports

    def _Import(self, stmt: ast.Import, frame: Frame, flow: Flow) -> None:
        for alias in stmt.names:
            module = self.import_module(alias.name)
            if alias.asname is not None:
                self.bind_name(alias.asname, module, frame)
            else:
                top = alias.name.split(".")[0]
                self.bind_name(top, self.import_module(top), frame)
            if module == NOTHING:
                self.raise_(self._import_error(alias.name), frame, flow)

    def _import_error(self, name: str) -> VSet:
        """What importing ``name`` raises when it cannot be imported."""
        if name in self.m.broken:
            return vset(External("builtins.SyntaxError"))
        return vset(External("builtins.ImportError"))

    def import_module(self, name: str) -> VSet:
        """The module ``name`` (run on first import), or ``External`` for one not read;
        nothing for a module that cannot be imported (``ImportError``)."""
        found = self.m.module(name)
        if found is not None:
            return vset(found)
        if name in self.m.broken:
            return NOTHING
        if self.m.loader(name.split(".")[0]) is not None or not self.m.exists(name):
            return NOTHING
        return vset(External(library.canonical(name)))

    def _ImportFrom(self, stmt: ast.ImportFrom, frame: Frame, flow: Flow) -> None:
        name = _absolute(stmt, frame.module)
        if name is None:
            return
        source = self.import_module(name)
        if source == NOTHING:
            self.raise_(self._import_error(name), frame, flow)
            return
        module = only(source)
        for alias in stmt.names:
            if alias.name == "*":
                if isinstance(module, ModuleObj):
                    for key, value in _star_names(module):
                        self.bind_name(key, value, frame)
                continue
            value = self.m.expressions.attribute(source, alias.name, flow)
            if isinstance(module, ModuleObj) and alias.name not in module.attrs:
                sub = self.m.module(f"{module.name}.{alias.name}")
                if sub is not None:
                    value = vset(sub)
            self.bind_name(alias.asname or alias.name, value, frame)

    # ------------------------------------------------------------------ control flow


# -- helpers ----------------------------------------------------------------------------


def _item_store(value: Value) -> Container | None:
    """Where ``value[key] = ...`` puts the item: a container, or the items of an instance
    of a ``dict``, ``list`` or ``set`` subclass whose ``__setitem__`` is the built-in one."""
    if isinstance(value, Container):
        return value
    if (
        isinstance(value, InstanceObj)
        and isinstance(value.cls, ClassObj)
        and not defines(value.cls, "__setitem__")
    ):
        return value.store
    return None


def _restore(frame: Frame, vars_: dict[str, VSet]) -> None:
    journal.touch(frame)
    frame.vars.clear()
    frame.vars.update(vars_)


def _loosen(container: Container, value: VSet) -> None:
    """``value`` stored in ``container`` at a place not known: what it holds stays known
    when it was known before (an exact container, or one whose values are known)."""
    journal.touch(container)
    container.values_known = container.exact or container.values_known
    container.exact = False
    container.loose = join(container.loose, value)


def _as_load(target: ast.expr) -> ast.expr:
    if isinstance(target, ast.Name):
        node: ast.expr = ast.Name(target.id, ast.Load())
    elif isinstance(target, ast.Attribute):
        node = ast.Attribute(target.value, target.attr, ast.Load())
    elif isinstance(target, ast.Subscript):
        node = ast.Subscript(target.value, target.slice, ast.Load())
    else:
        return target
    return ast.copy_location(node, target)


def _note_field(frame: Frame, name: str, default: VSet | None) -> None:
    order = frame.vars.get("__fields__")
    made = only(order) if order else None
    if not isinstance(made, Container):
        made = Container("list")
        frame.vars["__fields__"] = vset(made)
    made.items.append(vset(Const(name)))
    made.entries.append((Const(name), default if default is not None else NOTHING))


def _finish_class(cls: ClassObj) -> None:
    """Dataclass and NamedTuple fields, enum members: what class creation makes."""
    fields_value = cls.attrs.pop("__fields__", None)
    cls.attrs.pop("__annotations_order__", None)
    own: list[tuple[str, VSet | None]] = []
    made = only(fields_value) if fields_value else None
    if isinstance(made, Container):
        own = [(str(k.value), v if v else None) for k, v in made.entries if isinstance(k, Const)]
    cls.own_fields = own
    inherited: list[tuple[str, VSet | None]] = []
    for base in reversed(cls.mro[1:]):
        if isinstance(base, ClassObj) and base.fields is not None:
            inherited.extend(base.fields)
    if "namedtuple" in cls.flags or "dataclass" in cls.flags:
        names = {n for n, _ in own}
        cls.fields = [f for f in inherited if f[0] not in names] + own
    if "enum" in cls.flags:
        for name, values in list(cls.attrs.items()):
            if name.startswith("_") or any(
                isinstance(v, (FunctionObj, Descriptor)) for v in values
            ):
                continue
            member = InstanceObj(cls)
            member.attrs["value"] = values
            member.attrs["name"] = vset(Const(name))
            cls.attrs[name] = vset(member)


def _inherited_meta(cls: ClassObj) -> ClassObj | None:
    """The metaclass a class takes from its bases (the first base that has one)."""
    for base in cls.bases:
        if isinstance(base, ClassObj) and base.meta is not None:
            return base.meta
    return None


def _mro(cls: ClassObj) -> tuple[Value, ...]:
    """C3 linearisation over the bases (a library base ends the walk)."""
    sequences: list[list[Value]] = []
    for base in cls.bases:
        if isinstance(base, ClassObj):
            sequences.append(list(base.mro))
        else:
            sequences.append([base])
    sequences.append(list(cls.bases))
    result: list[Value] = [cls]
    while True:
        sequences = [s for s in sequences if s]
        if not sequences:
            return tuple(result)
        for seq in sequences:
            head = seq[0]
            if not any(head in s[1:] for s in sequences):
                break
        else:
            return tuple(result) + tuple(b for b in cls.bases if b not in result)
        result.append(head)
        for s in sequences:
            if s and s[0] == head:
                del s[0]


def _absolute(stmt: ast.ImportFrom, module: ModuleObj) -> str | None:
    package = module.name if module.is_package else module.name.rpartition(".")[0]
    return absolute_module(stmt.level, stmt.module or "", package)


def _star_names(module: ModuleObj) -> list[tuple[str, VSet]]:
    exported = module.attrs.get("__all__")
    names = exact_items(exported) if exported else None
    if names is not None:
        out = []
        for item in names:
            one = only(item)
            if isinstance(one, Const) and isinstance(one.value, str) and one.value in module.attrs:
                out.append((one.value, module.attrs[one.value]))
        return out
    return [(k, v) for k, v in module.attrs.items() if not k.startswith("_")]
