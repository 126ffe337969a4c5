"""Whether a function's parameter that an entry call passes as ``interpret=`` is kept off
wherever its module runs the function, read with ``ast`` like every other rule.

The params check judges a call whose ``interpret=`` is a parameter of the function around
it (``pl.pallas_call(..., interpret=interpret)`` in ``def f(x, interpret=False)``) as it
runs compiled when nothing in the module turns the parameter on
(``InterpretUses.kept_off``). The parameter is kept off when it is never rebound and

* its default is off (``False``, ``None``, ``0``) and no use of the function in the
  module passes anything else, or
* it has no default and the function has uses in the module, every one followed and
  passing off.

A use is a call (``f(x, False)``), a ``functools.partial(f, interpret=...)`` binding, or
a ``custom_vjp`` / ``custom_jvp`` derivative rule registered with ``primal.defvjp(fwd,
bwd)``, which receives the primal call's arguments (the forward rule all of them in order,
the backward rule the ``nondiff_argnums`` ones first). What a use passes may be a
parameter of its own function, decided the same way; a parameter that only flows around a
circle of such uses is off, since nothing turns it on.

What it does not do: look at other modules (a caller elsewhere may turn interpret mode
on: the finding's note says so), or decide what a requirement's ``interpret=`` is
(``combine``, which follows it to every caller).
"""

from __future__ import annotations

import ast
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from typed_pallas_mypy import fullnames
from typed_pallas_mypy.inference import model
from typed_pallas_mypy.inference.model import FALSE, ArgSum
from typed_pallas_mypy.inference.scopes import GlobalName, ParamRef, Scope

if TYPE_CHECKING:
    from typed_pallas_mypy.inference.reader import _ModuleReader

#: How the parameter is kept off: by its default, or by every use passing it off.
DEFAULT: Final = "default"
PASSED: Final = "passed"

#: (how, the parameter's name, the function's name) of a parameter kept off
KeptOff = tuple[str, str, str]


@dataclass(frozen=True)
class _Rule:
    """A derivative rule registered for ``primal`` (its fullname)."""

    primal: str
    forward: bool
    nondiff: tuple[int, ...]

    def primal_position(self, position: int) -> int | None:
        """The primal's parameter the rule's parameter at ``position`` receives."""
        if self.forward:
            return position
        return self.nondiff[position] if position < len(self.nondiff) else None


@dataclass
class _Uses:
    """The uses of one function in the module, and how many references name it."""

    #: calls ``f(...)`` and bindings ``functools.partial(f, ...)``: (call, the scope it
    #: is read in, how many of its arguments come before the function's)
    calls: list[tuple[ast.Call, Scope, int]] = field(default_factory=list)
    rules: list[_Rule] = field(default_factory=list)
    references: int = 0

    @property
    def all_followed(self) -> bool:
        return self.references <= len(self.calls) + len(self.rules)


class InterpretUses:
    """``kept_off`` over one module's reader; the uses are listed on the first question
    (one walk of the module: most modules are never asked)."""

    def __init__(self, reader: _ModuleReader) -> None:
        self.reader = reader
        self._uses: dict[str, _Uses] | None = None
        #: simple names that some reference does not resolve to one global
        self._unresolved: set[str] = set()

    def kept_off(self, name: ast.Name) -> KeptOff | None:
        """For ``name`` (the ``interpret=`` argument of a call), when it is a parameter
        of the function around it that the module keeps off: how, and the names."""
        scope = self.reader.scope_around(name)
        found = self.reader.lookup(name.id, scope)
        node = scope.node
        if not isinstance(found, ParamRef) or found.scope is not scope:
            return None
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        if not self._off(scope, name.id, set()):
            return None
        how = DEFAULT if scope.params[name.id].default != model.REQUIRED else PASSED
        return how, name.id, node.name

    # ------------------------------------------------------------------ the rule

    def _off(self, scope: Scope, name: str, following: set[tuple[int, str]]) -> bool:
        key = (id(scope), name)
        if key in following:
            return True  # a circle: nothing on it turns the parameter on
        following.add(key)
        param = scope.params.get(name)
        node = scope.node
        if param is None or param.rebound or param.kind in (model.STAR, model.DSTAR):
            return False
        if param.default not in (FALSE, model.REQUIRED):
            return False
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return False
        if node.name in self._all_uses()[1]:
            return False  # some reference to a function of that name is not followed
        uses = self._all_uses()[0].get(f"{self.reader.module}.{scope.qualname}", _Uses())
        required = param.default == model.REQUIRED
        if required and (not uses.all_followed or not (uses.calls or uses.rules)):
            return False
        index = scope.param_list.index(param)
        position = -1 if param.kind == model.KWONLY else index - (1 if scope.is_method else 0)
        marker = ("p", name, str(position), param.default)
        # a partial's own calls are not followed: one binding nothing keeps the default
        # (off), and leaves a required parameter unknown
        for call, at, skip in uses.calls:
            if not self._is_off(
                self.reader.call_args(call, at, skip=skip).passed(marker), at, following
            ):
                return False
        for rule in uses.rules:
            at_primal = rule.primal_position(index)
            primal = self.reader.function_of(rule.primal)
            if at_primal is None or primal is None:
                return False
            primal_scope = primal[1]
            if at_primal >= len(primal_scope.param_list):
                return False
            primal_name = primal_scope.param_list[at_primal].name
            if not self._off(primal_scope, primal_name, following):
                return False
        return True

    def _is_off(
        self, value: ArgSum | tuple[str, ...], scope: Scope, following: set[tuple[int, str]]
    ) -> bool:
        """A literal off, or a parameter of ``scope``'s function kept off."""
        if value == FALSE:
            return True
        if not isinstance(value, str):
            return False  # from a ``**self.attr`` splat
        kind, _, given = value.partition(":")
        return kind == "p" and self._off(scope, given, following)

    # ------------------------------------------------------------------ the uses

    def _all_uses(self) -> tuple[dict[str, _Uses], set[str]]:
        if self._uses is None:
            self._uses = {}
            for node, scope in self._nodes():
                self._note(node, scope)
        return self._uses, self._unresolved

    def _nodes(self) -> Iterator[tuple[ast.AST, Scope]]:
        """Every node of the module with the scope it is read in (a function's or
        lambda's body in its own; its decorators and defaults in the one around it)."""
        reader = self.reader
        stack: list[tuple[ast.AST, Scope]] = [(reader.tree, reader.module_scope)]
        while stack:
            node, scope = stack.pop()
            yield node, scope
            inner = reader.scopes.get(id(node), scope)
            for child in reader.nodes.children(node):
                outside = isinstance(
                    node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)
                ) and (
                    child is node.args
                    or child in getattr(node, "decorator_list", ())
                    or child is getattr(node, "returns", None)
                )
                stack.append((child, scope if outside else inner))

    def _note(self, node: ast.AST, scope: Scope) -> None:
        assert self._uses is not None
        reader = self.reader
        if isinstance(node, ast.Name):
            found = reader.lookup(node.id, scope)
            if isinstance(found, GlobalName):
                self._uses.setdefault(found.fullname, _Uses()).references += 1
            elif not isinstance(found, ParamRef):
                self._unresolved.add(node.id)
            return
        if isinstance(node, ast.Attribute):
            name = reader.ref(node, scope)
            if name is not None:
                self._uses.setdefault(name, _Uses()).references += 1
            return
        if not isinstance(node, ast.Call):
            return
        callee = reader.ref(node.func, scope)
        if callee is not None:
            self._uses.setdefault(callee, _Uses()).calls.append((node, scope, 0))
        if callee == fullnames.FUNCTOOLS_PARTIAL and node.args:
            bound = reader.ref(node.args[0], scope)
            if bound is not None:
                self._uses.setdefault(bound, _Uses()).calls.append((node, scope, 1))
        func = node.func
        if isinstance(func, ast.Attribute) and func.attr in fullnames.DERIVATIVE_RULES:
            primal = reader.ref(func.value, scope)
            nondiff = self._nondiff_argnums(primal) if primal is not None else None
            if primal is None or nondiff is None:
                return
            for i, arg in enumerate(node.args):
                rule = reader.ref(arg, scope)
                if rule is not None:
                    forward = func.attr == "defvjp" and i == 0
                    self._uses.setdefault(rule, _Uses()).rules.append(
                        _Rule(primal, forward, nondiff)
                    )
            # ``primal.defvjp`` reads the primal to register its rules: not a use of it
            self._uses.setdefault(primal, _Uses()).references -= 1

    def _nondiff_argnums(self, primal: str) -> tuple[int, ...] | None:
        """The ``nondiff_argnums`` of the custom derivative ``primal``, when its decorator
        says them literally (``@jax.custom_vjp``: none); None when it is not one."""
        found = self.reader.function_of(primal)
        if found is None:
            return None
        node, scope = found
        around = scope.parent or self.reader.module_scope
        for decorator in node.decorator_list:
            if self.reader.ref(decorator, around) in fullnames.CUSTOM_DERIVATIVES:
                return ()
            if not (
                isinstance(decorator, ast.Call)
                and self.reader.ref(decorator.func, around) == fullnames.FUNCTOOLS_PARTIAL
                and decorator.args
                and self.reader.ref(decorator.args[0], around) in fullnames.CUSTOM_DERIVATIVES
            ):
                continue
            nondiff: tuple[int, ...] = ()
            for keyword in decorator.keywords:
                if keyword.arg != "nondiff_argnums":
                    continue
                value = keyword.value
                if not isinstance(value, (ast.Tuple, ast.List)) or not all(
                    isinstance(item, ast.Constant) and type(item.value) is int
                    for item in value.elts
                ):
                    return None
                nondiff = tuple(
                    item.value
                    for item in value.elts
                    if isinstance(item, ast.Constant) and type(item.value) is int
                )
            return nondiff
        return None
