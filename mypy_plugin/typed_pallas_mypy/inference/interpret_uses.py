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
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Final

from typed_pallas_mypy import fullnames
from typed_pallas_mypy.inference import jax_api, model
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
        #: function fullname -> its uses (None: not all found), as asked
        self._uses: dict[str, _Uses | None] = {}
        #: word -> the names and attributes spelled so (``_spelled``), as asked
        self._names: dict[str, list[tuple[ast.expr, Scope, ast.AST, ast.AST]]] = {}

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
        uses = self._uses_of(scope)
        if uses is None:
            return False
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

    def _uses_of(self, scope: Scope) -> _Uses | None:
        """The uses of the function of ``scope`` in the module; None when a name spelled
        like it does not resolve to one global (a local variable: not followed)."""
        assert isinstance(scope.node, (ast.FunctionDef, ast.AsyncFunctionDef))
        fullname = f"{self.reader.module}.{scope.qualname}"
        if fullname in self._uses:
            return self._uses[fullname]
        reader = self.reader
        uses = _Uses()
        result: _Uses | None = uses
        for node, at, parent, above in self._spelled(scope.node.name):
            if isinstance(node, ast.Name):
                found = reader.lookup(node.id, at)
                if isinstance(found, ParamRef):
                    continue
                if not isinstance(found, GlobalName):
                    result = None
                    break
                name: str | None = found.fullname
            else:
                name = reader.ref(node, at)
            if name != fullname:
                continue
            uses.references += 1
            if isinstance(parent, ast.Call):
                self._note_argument(uses, node, at, parent)
            elif (
                isinstance(parent, ast.Attribute)
                and parent.attr in jax_api.DERIVATIVE_RULES
                and isinstance(above, ast.Call)
                and above.func is parent
                and self._nondiff_argnums(fullname) is not None
            ):
                uses.references -= 1  # ``primal.defvjp`` registers rules: not a use of it
        self._uses[fullname] = result
        return result

    def _note_argument(self, uses: _Uses, node: ast.expr, at: Scope, call: ast.Call) -> None:
        """``node``, naming the function, as the callee of ``call`` or one of its arguments
        (a ``functools.partial`` binding it, a derivative rule registered with it)."""
        if call.func is node:
            uses.calls.append((call, at, 0))
            return
        if node not in call.args:
            return
        if call.args[0] is node and self.reader.ref(call.func, at) == fullnames.FUNCTOOLS_PARTIAL:
            uses.calls.append((call, at, 1))
            return
        func = call.func
        if isinstance(func, ast.Attribute) and func.attr in jax_api.DERIVATIVE_RULES:
            primal = self.reader.ref(func.value, at)
            nondiff = self._nondiff_argnums(primal) if primal is not None else None
            if primal is not None and nondiff is not None:
                forward = func.attr == "defvjp" and call.args.index(node) == 0
                uses.rules.append(_Rule(primal, forward, nondiff))

    def _spelled(self, word: str) -> list[tuple[ast.expr, Scope, ast.AST, ast.AST]]:
        """Every name and attribute of the module spelled ``word`` (``f``, ``m.f``), with
        the scope it is read in, its parent and the parent's parent. A statement whose
        lines do not write the word is not gone into (``SourceText.may_mention``)."""
        if word in self._names:
            return self._names[word]
        reader = self.reader
        written = word.encode()
        found: list[tuple[ast.expr, Scope, ast.AST, ast.AST]] = []
        stack: list[tuple[ast.AST, Scope, ast.AST]] = [
            (reader.tree, reader.module_scope, reader.tree)
        ]
        while stack:
            node, scope, parent = stack.pop()
            inner = reader.scopes.get(id(node), scope)
            for child in reader.nodes.children(node):
                if isinstance(child, ast.stmt) and not reader.text.may_mention(child, written):
                    continue
                at = scope if _outside(node, child) else inner
                if (isinstance(child, ast.Name) and child.id == word) or (
                    isinstance(child, ast.Attribute) and child.attr == word
                ):
                    found.append((child, at, node, parent))
                stack.append((child, at, node))
        self._names[word] = found
        return found

    def _nondiff_argnums(self, primal: str) -> tuple[int, ...] | None:
        """The ``nondiff_argnums`` of the custom derivative ``primal``, when its decorator
        says them literally (``@jax.custom_vjp``: none); None when it is not one."""
        found = self.reader.function_of(primal)
        if found is None:
            return None
        node, scope = found
        around = scope.parent or self.reader.module_scope
        for decorator in node.decorator_list:
            if self.reader.ref(decorator, around) in jax_api.CUSTOM_DERIVATIVES:
                return ()
            if not (
                isinstance(decorator, ast.Call)
                and self.reader.ref(decorator.func, around) == fullnames.FUNCTOOLS_PARTIAL
                and decorator.args
                and self.reader.ref(decorator.args[0], around) in jax_api.CUSTOM_DERIVATIVES
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


def _outside(node: ast.AST, child: ast.AST) -> bool:
    """Whether ``child`` of ``node`` is read in the scope around ``node``: a function's
    or lambda's parameters (their defaults), decorators and return annotation."""
    if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda)):
        return False
    return (
        child is node.args
        or child in getattr(node, "decorator_list", ())
        or child is getattr(node, "returns", None)
    )
