"""How the reader reads a condition: what a guard tests, what a guard helper or a
platform predicate returns (``model.Condition``), and which values are devices.

``ConditionReading`` is the part of ``reader._ModuleReader`` that reads conditions:
platform sources (``jax.default_backend()``, ``<device>.platform``, a variable holding
one, a platform helper's call) compared with literals, ``pltpu.is_tpu_device()``, a
device's kind tested against a literal (``device_kinds``), ``any``/``all`` over one
platform's devices, a variable holding a condition, ``not``/``and``/``or`` of them, and
the calls left to the plugin (``["ask", ...]``: platform predicates found by their
receiver's type). Devices are recognised by shape: an element of ``jax.devices()``, a
mesh's device array, a parameter annotated ``jax.Device``, the variable of a ``for``
over devices.

What it does not do: combine a condition with other modules' answers (``combine``), or
resolve names itself (the reader's ``ref`` and ``lookup``).
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Sequence
from typing import TypeVar

from typed_pallas_mypy import device_kinds, fullnames
from typed_pallas_mypy.inference import model
from typed_pallas_mypy.inference.model import Binding
from typed_pallas_mypy.inference.parsing import parse_expression
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
    is_docstring,
    is_opaque_name,
    position_of,
    span_of,
)

_T = TypeVar("_T")


class ConditionReading:
    """The condition-reading methods of ``reader._ModuleReader`` (its base class)."""

    # What the reader provides (set in ``_ModuleReader.__init__``):
    module: str
    module_scope: Scope
    bindings: dict[str, Binding]
    raw: dict[str, list[tuple[str, object]]]
    nodes: ChildIndex
    #: set while the plugin asks (``Sites.condition_at``): unreadable calls become
    #: ``["ask", ...]`` leaves
    asking: bool
    #: how many variables deep ``_through`` is
    _following: int

    def ref(self, expr: ast.AST, scope: Scope) -> str | None:
        """``_ModuleReader.ref``."""
        raise NotImplementedError

    def lookup(self, name: str, scope: Scope) -> Lookup:
        """``_ModuleReader.lookup``."""
        raise NotImplementedError

    def value_at(self, found: LocalName, pos: Pos) -> ast.expr | None:
        """``_ModuleReader.value_at``."""
        raise NotImplementedError

    def _assigned_once(self, name: str, scope: Scope) -> ast.expr | None:
        """``_ModuleReader._assigned_once``."""
        raise NotImplementedError

    # ------------------------------------------------------------------ conditions

    def _helper_condition(self, node: FunctionNode, scope: Scope) -> model.Condition | None:
        """What a one-``return`` guard or platform helper returns (``model.Condition``)."""
        stmts = [s for s in node.body if not is_docstring(s)]
        if len(stmts) != 1 or not isinstance(stmts[0], ast.Return) or stmts[0].value is None:
            return None
        return self.condition(stmts[0].value, scope)

    def predicate_condition(
        self, node: FunctionNode, scope: Scope, parameter: str
    ) -> model.Condition | None:
        """What a platform predicate returns of its device ``parameter``: a body that is
        one ``return <condition>`` (both sides hold); ``try: return <condition>`` whose
        handlers all ``return False`` (tokamax: only the true side holds); or early
        ``if <condition>: return False`` (or ``raise``) exits before a last ``return``,
        with nothing between that returns or binds the device again (true only where no
        exit was taken and the last condition holds). None for any other body."""
        devices = frozenset({parameter})
        body = [stmt for stmt in node.body if not is_docstring(stmt)]
        returned = _predicate_return(body)
        if returned is not None:
            expr, both_sides = returned
            found = self.condition(expr, scope, devices)
            if found is None or both_sides:
                return found
            return ["true only", found]
        if len(body) < 2 or not isinstance(body[-1], ast.Return) or body[-1].value is None:
            return None
        parts: list[object] = []
        for stmt in body[:-1]:
            test = _false_exit_test(stmt)
            if test is not None:
                parts.append(["not", self.condition(test, scope, devices)])
            elif isinstance(stmt, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
                targets = stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target]
                if any(
                    isinstance(n, ast.Name) and n.id == parameter
                    for target in targets
                    for n in self.nodes.walk(target)
                ):
                    return None  # the device is bound again
            elif not isinstance(stmt, ast.Expr):
                return None
        parts.append(self.condition(body[-1].value, scope, devices))
        return ["true only", ["and", *parts]]

    def condition(
        self, expr: ast.expr, scope: Scope, devices: frozenset[str] = frozenset()
    ) -> model.Condition | None:
        """What a condition tests (``model.Condition``): the plugin's one reading of
        conditions (a guard helper's ``return``, a predicate's body, a guard of the
        project's code: ``Sites.condition_at``): platform sources (a variable holding
        one, a platform helper's call) compared with literals, ``pltpu.is_tpu_device()``,
        another helper, a device's kind tested against a literal (``device_kinds``),
        ``any``/``all`` over one platform's devices, a variable holding a condition, and
        ``not``/``and``/``or`` of them. ``devices``: names bound to a device (the
        variable of ``any(... for d in jax.devices())``, a predicate's parameter)."""
        if self._is_platform_value(expr, scope, devices):
            return ["source"]
        if isinstance(expr, ast.UnaryOp) and isinstance(expr.op, ast.Not):
            inner = self.condition(expr.operand, scope, devices)
            return ["not", inner] if inner is not None else None
        if isinstance(expr, ast.BoolOp):
            parts = [self.condition(v, scope, devices) for v in expr.values]
            kind = "and" if isinstance(expr.op, ast.And) else "or"
            return [kind, *parts]  # an unknown part: None inside (``combine`` decides)
        if isinstance(expr, ast.Name) and expr.id not in devices:
            return self._through(expr, scope, lambda value, at: self.condition(value, at), None)
        if isinstance(expr, ast.Call):
            if not expr.args and not expr.keywords:
                name = self.ref(expr.func, scope)
                if name in fullnames.IS_TPU_DEVICE:
                    return ["cmp", "==", ["tpu"]]
                if name is not None and not is_opaque_name(name):
                    return ["call", name]
                return None
            found = self._quantified(expr, scope, devices) or self._startswith(expr, scope, devices)
            if found is None and self.asking:
                return self._ask(expr, scope, devices)
            return found
        if isinstance(expr, ast.Compare) and len(expr.ops) == 1:
            left, right = expr.left, expr.comparators[0]
            op = {ast.Eq: "==", ast.NotEq: "!=", ast.In: "in", ast.NotIn: "not in"}.get(
                type(expr.ops[0])
            )
            if op is None:
                return None
            tested = self._kind_comparison(op, left, right, scope, devices)
            if tested is not None:
                return tested
            if op in ("==", "!=") and (
                self._is_platform_value(right, scope, devices)
                or self._platform_call(right, scope) is not None
            ):
                left, right = right, left
            names = _strings(right)
            if names is None or (op in ("==", "!=") and len(names) != 1):
                return None
            if self._is_platform_value(left, scope, devices):
                return ["cmp", op, names]
            helper = self._platform_call(left, scope)
            return ["helper cmp", helper, op, names] if helper is not None else None
        return None

    def _platform_call(self, expr: ast.expr, scope: Scope) -> str | None:
        """The fullname a call without arguments calls, when it may be a platform
        helper (``def backend(): return jax.default_backend()``; ``combine`` decides)."""
        if not isinstance(expr, ast.Call) or expr.args or expr.keywords:
            return None
        name = self.ref(expr.func, scope)
        if name is None or is_opaque_name(name) or name in fullnames.DEFAULT_BACKEND:
            return None
        return name

    def _ask(self, call: ast.Call, scope: Scope, devices: frozenset[str]) -> model.Condition:
        """``["ask", [line, column, end line, end column], [positions], [keywords]]``: a
        call for the plugin to read (a platform predicate, by its receiver's type), with
        the positions and keywords of its arguments that are devices here."""
        positions = [
            i
            for i, arg in enumerate(call.args)
            if not isinstance(arg, ast.Starred) and self._is_device(arg, scope, devices)
        ]
        keywords = [
            k.arg
            for k in call.keywords
            if k.arg is not None and self._is_device(k.value, scope, devices)
        ]
        return ["ask", list(span_of(call)), positions, keywords]

    def _through(
        self,
        name: ast.Name,
        scope: Scope,
        read: Callable[[ast.expr, Scope], _T],
        default: _T,
    ) -> _T:
        """``read`` of the value a variable holds where ``name`` reads it: a local
        bound once (or last before, in straight-line code), or a global of this module
        assigned once; ``default`` for anything else, or past ``NAME_DEPTH`` variables."""
        if self._following >= NAME_DEPTH:
            return default
        found = self.lookup(name.id, scope)
        value: ast.expr | None = None
        value_scope = scope
        if isinstance(found, LocalName):
            value, value_scope = self.value_at(found, position_of(name)), found.scope
        elif isinstance(found, GlobalName) and found.fullname == f"{self.module}.{name.id}":
            value, value_scope = self._assigned_once(name.id, scope), self.module_scope
        if value is None:
            return default
        self._following += 1
        try:
            return read(value, value_scope)
        finally:
            self._following -= 1

    def _is_platform_value(
        self, expr: ast.expr, scope: Scope, devices: frozenset[str] = frozenset()
    ) -> bool:
        """``jax.default_backend()``, ``<device>.platform`` (``_is_device``), or a
        module's variable holding one."""
        if isinstance(expr, ast.Call) and not expr.args:
            return self.ref(expr.func, scope) in fullnames.DEFAULT_BACKEND
        if isinstance(expr, ast.Attribute) and expr.attr == "platform":
            return self._is_device(expr.value, scope, devices)
        if isinstance(expr, ast.Name) and expr.id not in devices:
            found = self.lookup(expr.id, scope)
            if isinstance(found, GlobalName) and found.fullname == f"{self.module}.{expr.id}":
                binding = self.bindings.get(expr.id)
                value = self.raw.get(expr.id, [("", None)])[0][1]
                return (
                    binding is not None
                    and binding.kind == model.PLATFORM_VALUE
                    and isinstance(value, ast.expr)
                    and self._is_platform_value(value, self.module_scope)
                )
            return self._through(
                expr, scope, lambda value, at: self._is_platform_value(value, at), False
            )
        return False

    # ------------------------------------------------------------------ devices

    def _is_device(self, expr: ast.expr, scope: Scope, devices: frozenset[str]) -> bool:
        """A ``jax.Device`` of the platform code here lowers for, recognised by shape:
        an element of a collection of them (``_is_device_collection``), a mesh's
        ``devices[(0,) * n]``, ``get_default_device()``, ``next(<collection>)``, or a
        name in ``devices``."""
        if isinstance(expr, ast.Name):
            return expr.id in devices or self._device_variable(expr, scope)
        if isinstance(expr, ast.Subscript):
            base = expr.value
            if isinstance(base, ast.Attribute) and base.attr == "devices":
                if _is_zero_index(expr.slice):
                    return True  # mesh.devices[(0,) * ndim]
            return self._is_device_collection(base, scope)
        if isinstance(expr, ast.Call):
            name = self.ref(expr.func, scope)
            if name in fullnames.GET_DEFAULT_DEVICE:
                return not expr.args and not expr.keywords
            if name == fullnames.BUILTIN_NEXT and len(expr.args) == 1:
                return self._is_device_collection(expr.args[0], scope)
        return False

    def _device_variable(self, name: ast.Name, scope: Scope) -> bool:
        """A parameter annotated ``jax.Device``, the variable of a ``for`` over devices
        (and bound no other simple way), or a variable holding a device."""
        found = self.lookup(name.id, scope)
        if isinstance(found, ParamRef):
            return self.is_annotated_device(found.scope, found.name)
        if isinstance(found, LocalName) and name.id in found.scope.loops:
            loops = found.scope.loops[name.id]
            return name.id not in found.scope.assigns and all(
                self._is_device_collection(it, found.scope) for it in loops
            )
        return self._through(
            name, scope, lambda value, at: self._is_device(value, at, frozenset()), False
        )

    def is_annotated_device(self, scope: Scope, name: str) -> bool:
        """Whether the parameter ``name`` of the function of ``scope`` is annotated
        ``jax.Device`` (or ``jax.Device | None``, ``Optional[jax.Device]``), resolved by
        name (jaxlib ships no stub). The one rule for device parameters: the plugin's
        platform predicates ask it too (``Inference.device_parameters``)."""
        node = scope.node
        if node is None or isinstance(node, ast.Lambda):
            return False
        arguments = node.args
        for arg in [*arguments.posonlyargs, *arguments.args, *arguments.kwonlyargs]:
            if arg.arg == name:
                return self._names_device(arg.annotation, scope.parent or self.module_scope)
        return False

    def _names_device(self, annotation: ast.expr | None, scope: Scope) -> bool:
        if isinstance(annotation, ast.Constant) and isinstance(annotation.value, str):
            try:
                annotation = parse_expression(annotation.value)
            except SyntaxError:
                return False
        if isinstance(annotation, ast.BinOp) and isinstance(annotation.op, ast.BitOr):
            sides = [annotation.left, annotation.right]
            kept = [s for s in sides if not (isinstance(s, ast.Constant) and s.value is None)]
            return len(kept) == 1 and self._names_device(kept[0], scope)
        if isinstance(annotation, ast.Subscript) and self.ref(annotation.value, scope) in (
            "typing.Optional",
            "typing_extensions.Optional",
        ):
            return self._names_device(annotation.slice, scope)
        if not isinstance(annotation, (ast.Name, ast.Attribute)):
            return False
        return self.ref(annotation, scope) in fullnames.DEVICE_TYPES

    def _is_device_collection(self, expr: ast.expr, scope: Scope) -> bool:
        """Devices of one platform: ``jax.devices()`` / ``jax.local_devices()`` (no
        ``backend=``), ``x.devices()``, ``x.sharding.device_set``, ``mesh.devices.flat``,
        ``list(...)`` of one, a variable holding one."""
        if isinstance(expr, ast.Name):
            return self._through(
                expr, scope, lambda value, at: self._is_device_collection(value, at), False
            )
        if isinstance(expr, ast.Call):
            func = expr.func
            name = self.ref(func, scope)
            if name in fullnames.DEVICES:
                if any(k.arg == "backend" or k.arg is None for k in expr.keywords):
                    return False
                local = name is not None and name.endswith("local_devices")
                return not expr.args or (local and len(expr.args) == 1)
            if name in fullnames.DEVICE_COLLECTION_COPIES and len(expr.args) == 1:
                return self._is_device_collection(expr.args[0], scope)
            if isinstance(func, ast.Attribute) and not expr.args and not expr.keywords:
                if func.attr == "devices" and (name is None or name.startswith(self.module)):
                    return True  # a value's method: jax.Array.devices()
                if func.attr in ("ravel", "flatten", "tolist"):
                    return _is_mesh_devices(func.value) or self._is_device_collection(
                        func.value, scope
                    )
            return False
        if isinstance(expr, ast.Attribute):
            if expr.attr == "device_set":
                return True
            if expr.attr == "flat" and isinstance(expr.value, ast.Attribute):
                return expr.value.attr == "devices"
            return _is_mesh_devices(expr)
        return False

    def _kind_source(self, expr: ast.expr, scope: Scope, devices: frozenset[str]) -> bool | None:
        """For ``<device>.device_kind``: False; ``<device>.device_kind.lower()``: True
        (the markers compare lowercased); None for anything else."""
        if (
            isinstance(expr, ast.Call)
            and isinstance(expr.func, ast.Attribute)
            and expr.func.attr == "lower"
            and not expr.args
            and not expr.keywords
        ):
            inner = self._kind_source(expr.func.value, scope, devices)
            return True if inner is False else None
        if isinstance(expr, ast.Attribute) and expr.attr == "device_kind":
            return False if self._is_device(expr.value, scope, devices) else None
        if isinstance(expr, ast.Name) and expr.id not in devices:
            return self._through(
                expr, scope, lambda value, at: self._kind_source(value, at, frozenset()), None
            )
        return None

    def _kind_comparison(
        self, op: str, left: ast.expr, right: ast.expr, scope: Scope, devices: frozenset[str]
    ) -> model.Condition | None:
        """``"TPU" in <kind>``, ``<kind> == "TPU v4"``, ``<kind> in (...)``."""
        if op in ("in", "not in") and isinstance(left, ast.Constant):
            lowered = self._kind_source(right, scope, devices)
            if lowered is None or not isinstance(left.value, str):
                return None
            true_set, false_set = device_kinds.substring_sets(left.value, lowered)
            if op == "not in":
                true_set, false_set = false_set, true_set
            return _sets_condition(true_set, false_set)
        if op in ("==", "!=") and self._kind_source(left, scope, devices) is None:
            left, right = right, left
        lowered = self._kind_source(left, scope, devices)
        names = _strings(right)
        if lowered is None or names is None:
            return None
        return _sets_condition(*device_kinds.comparison_sets(op, names, lowered))

    def _startswith(
        self, call: ast.Call, scope: Scope, devices: frozenset[str]
    ) -> model.Condition | None:
        """``<kind>.startswith("TPU")``."""
        func = call.func
        if not (isinstance(func, ast.Attribute) and func.attr == "startswith"):
            return None
        if len(call.args) != 1 or call.keywords:
            return None
        prefix = call.args[0]
        if not (isinstance(prefix, ast.Constant) and isinstance(prefix.value, str)):
            return None
        lowered = self._kind_source(func.value, scope, devices)
        if lowered is None:
            return None
        return _sets_condition(*device_kinds.substring_sets(prefix.value, lowered))

    def _quantified(
        self, call: ast.Call, scope: Scope, devices: frozenset[str]
    ) -> model.Condition | None:
        """``any(<condition on d> for d in <devices>)`` / ``all(...)``: the condition on
        one device (the devices of one collection share a platform, and one is never
        empty); with a filter (``if ...``) ``any`` may be false and ``all`` true for no
        device at all: only the other side is known."""
        name = self.ref(call.func, scope)
        if name not in (fullnames.BUILTIN_ANY, fullnames.BUILTIN_ALL) or len(call.args) != 1:
            return None
        generator = call.args[0]
        if not isinstance(generator, (ast.GeneratorExp, ast.ListComp)):
            return None
        if len(generator.generators) != 1 or call.keywords:
            return None
        loop = generator.generators[0]
        if not isinstance(loop.target, ast.Name) or loop.is_async:
            return None
        if not self._is_device_collection(loop.iter, scope):
            return None
        inner = self.condition(generator.elt, scope, devices | {loop.target.id})
        if inner is None or not loop.ifs:
            return inner
        return ["true only" if name == fullnames.BUILTIN_ANY else "false only", inner]


# --------------------------------------------------------------------------- helpers


def _returns_false(body: Sequence[ast.stmt]) -> bool:
    return (
        len(body) == 1
        and isinstance(body[0], ast.Return)
        and isinstance(body[0].value, ast.Constant)
        and body[0].value.value is False
    )


def _predicate_return(body: Sequence[ast.stmt]) -> tuple[ast.expr, bool] | None:
    """(the condition, whether both its sides hold) of a body that is one ``return``,
    or ``try: return <condition>`` whose handlers all ``return False`` (only its true
    side holds)."""
    if len(body) != 1:
        return None
    stmt = body[0]
    if isinstance(stmt, ast.Return) and stmt.value is not None:
        return stmt.value, True
    if (
        isinstance(stmt, ast.Try)
        and stmt.handlers
        and not stmt.orelse
        and not stmt.finalbody
        and len(stmt.body) == 1
        and isinstance(stmt.body[0], ast.Return)
        and stmt.body[0].value is not None
        and all(_returns_false(handler.body) for handler in stmt.handlers)
    ):
        return stmt.body[0].value, False
    return None


def _false_exit_test(stmt: ast.stmt) -> ast.expr | None:
    """The test of ``if <test>: return False`` (or ``raise``) without ``else``."""
    if not isinstance(stmt, ast.If) or stmt.orelse:
        return None
    if _returns_false(stmt.body) or (len(stmt.body) == 1 and isinstance(stmt.body[0], ast.Raise)):
        return stmt.test
    return None


def _is_zero_index(expr: ast.expr) -> bool:
    """``(0,) * n``, ``(0, 0)``: an index tuple of a mesh's device array."""
    if isinstance(expr, ast.BinOp) and isinstance(expr.op, ast.Mult):
        return _is_zero_index(expr.left) or _is_zero_index(expr.right)
    if isinstance(expr, ast.Tuple):
        return bool(expr.elts) and all(
            isinstance(e, ast.Constant) and type(e.value) is int for e in expr.elts
        )
    return False


def _is_mesh_devices(expr: ast.expr) -> bool:
    """``mesh.devices`` / ``self.mesh.devices`` / ``get_mesh().devices``: the device array
    of something named a mesh."""
    if not (isinstance(expr, ast.Attribute) and expr.attr == "devices"):
        return False
    owner = expr.value
    if isinstance(owner, ast.Call):
        owner = owner.func
    name = owner.id if isinstance(owner, ast.Name) else getattr(owner, "attr", "")
    return "mesh" in str(name).lower()


def _sets_condition(
    true_set: frozenset[str] | None, false_set: frozenset[str] | None
) -> model.Condition | None:
    """``["sets", true, false]``: platforms known directly (a device kind's markers)."""
    if true_set is None and false_set is None:
        return None
    return [
        "sets",
        sorted(true_set) if true_set is not None else None,
        sorted(false_set) if false_set is not None else None,
    ]


def _strings(expr: ast.expr) -> list[str] | None:
    """The literal strings of ``"tpu"`` or ``("cuda", "rocm")``; None for anything else."""
    items = expr.elts if isinstance(expr, (ast.Tuple, ast.List, ast.Set)) else [expr]
    out: list[str] = []
    for item in items:
        if not (isinstance(item, ast.Constant) and isinstance(item.value, str)):
            return None
        out.append(item.value)
    return out
