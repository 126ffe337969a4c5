"""Name resolution: which function an expression names, and whose code it is.

``Names`` answers, over mypy's modules of one build:

* ``module_of(fullname)``: the module defining a name (longest module prefix);
* ``node_of(fullname)``: its definition in that module's symbol tables;
* ``is_user_module`` / ``is_installed_module``: the project's own code, or an installed
  package (site-packages; ``is_user_path`` and ``is_installed_path`` for paths);
* ``callee_function(expr)``: the function an expression names, through
  ``functools.partial``, function-keeping wrappers (``jax.jit``, ``functools.wraps``...:
  ``fullnames.KEEPS_FUNCTION``), aliases and ``self.method``;
* ``call_target(call)``: what a call inside a function runs (``CallTarget``): a function
  of the project or of an installed package (by fullname), a known call that needs no
  looking into, or something only runtime knows (a parameter, a local callable).

What it does not do: infer platforms (``requirements``), keep facts
(``platform_facts``), or read function bodies.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final, Literal

from mypy.nodes import (
    CallExpr,
    Decorator,
    Expression,
    FuncDef,
    FuncItem,
    MemberExpr,
    MypyFile,
    NameExpr,
    Node,
    OverloadedFuncDef,
    RefExpr,
    TypeInfo,
    Var,
)

from typed_pallas_mypy import fullnames

#: How many alias hops (``impl = f``) are followed.
ALIAS_DEPTH: Final = 4

#: Path parts of installed packages and of mypy's typeshed.
THIRD_PARTY_MARKERS: Final = ("site-packages", "dist-packages", "typeshed")


def is_installed_path(path: str) -> bool:
    """Whether a module path is an installed package's or typeshed's."""
    normal = path.replace("\\", "/")
    return any(f"/{marker}/" in normal for marker in THIRD_PARTY_MARKERS)


def is_user_path(path: str) -> bool:
    """Whether a module path is the user's code (not installed, not a stub)."""
    return bool(path) and not is_installed_path(path) and not path.endswith(".pyi")


def ref_name(expr: Expression) -> str | None:
    """The fullname a reference resolved to, or None."""
    if isinstance(expr, RefExpr) and expr.fullname:
        return expr.fullname
    return None


def keeps_function(node: Decorator) -> bool:
    """Whether every decorator of ``node`` returns the function's behaviour unchanged."""
    for dec in node.decorators:
        target = dec.callee if isinstance(dec, CallExpr) else dec
        name = ref_name(target)
        if name == fullnames.FUNCTOOLS_PARTIAL and isinstance(dec, CallExpr) and dec.args:
            name = ref_name(dec.args[0])
        if name not in fullnames.KEEPS_FUNCTION:
            return False
    return True


@dataclass(frozen=True)
class CallTarget:
    """What a call inside a function runs, as far as the source says.

    * ``function``: a function (or alias) of the project or of an installed package,
      named by ``fullname``: its facts say what it lowers for;
    * ``known``: nothing to look into (a class, a method of a value, a library call
      that is not a function the plugin knows);
    * ``unknown``: only runtime knows (a parameter, a local callable, ``self.attr``):
      a function making such a call has no requirement.
    """

    kind: Literal["function", "known", "unknown"]
    fullname: str | None = None


KNOWN: Final = CallTarget("known")
UNKNOWN: Final = CallTarget("unknown")


class Names:
    """Name lookups over the modules of one mypy build (``modules`` is mypy's own dict,
    so modules added later in the build are seen)."""

    def __init__(self, modules: Mapping[str, MypyFile]) -> None:
        self.modules = modules
        self._module_of: dict[str, str | None] = {}
        self._user_paths: dict[str, bool] = {}

    def forget(self) -> None:
        self._module_of.clear()

    def module_of(self, fullname: str) -> str | None:
        """The module defining ``fullname`` (longest module prefix)."""
        if fullname in self._module_of:
            return self._module_of[fullname]
        found: str | None = None
        parts = fullname.split(".")
        for i in range(len(parts) - 1, 0, -1):
            candidate = ".".join(parts[:i])
            if candidate in self.modules:
                found = candidate
                break
        self._module_of[fullname] = found
        return found

    def is_user_module(self, module: str | None) -> bool:
        if module is None:
            return False
        tree = self.modules.get(module)
        if tree is None:
            return False
        cached = self._user_paths.get(tree.path)
        if cached is None:
            cached = self._user_paths[tree.path] = is_user_path(tree.path)
        return cached

    def is_installed_module(self, module: str | None) -> bool:
        tree = self.modules.get(module) if module is not None else None
        return tree is not None and is_installed_path(tree.path)

    def node_of(self, fullname: str) -> Node | None:
        """The definition of ``fullname`` in its module's symbol tables."""
        module = self.module_of(fullname)
        if module is None:
            return None
        tree = self.modules[module]
        rest = fullname[len(module) + 1 :].split(".")
        table = tree.names
        node: Node | None = None
        for i, part in enumerate(rest):
            sym = table.get(part)
            if sym is None or sym.node is None:
                return None
            node = sym.node
            if i < len(rest) - 1:
                if not isinstance(node, TypeInfo):
                    return None
                table = node.names
        return node

    def callee_function(
        self, expr: Expression, func: FuncItem | None, depth: int = 0
    ) -> str | None:
        """The fullname of the function ``expr`` names, through partial, jit, aliases
        and ``self.``; None when it is not a function the plugin can know."""
        if depth > ALIAS_DEPTH:
            return None
        if isinstance(expr, CallExpr):
            wrapped = ref_name(expr.callee)
            if (
                wrapped == fullnames.FUNCTOOLS_PARTIAL or wrapped in fullnames.KEEPS_FUNCTION
            ) and expr.args:
                return self.callee_function(expr.args[0], func, depth + 1)
            return None
        if isinstance(expr, MemberExpr) and isinstance(expr.expr, NameExpr) and func is not None:
            method = self._self_method(expr, func)
            if method is not None:
                return method or None
        if isinstance(expr, RefExpr):
            return self._reference(expr)
        return None

    def _self_method(self, expr: MemberExpr, func: FuncItem) -> str | None:
        """``self.name`` inside a method: the method's fullname, "" for an attribute that
        is not a method, None when ``expr`` is not on ``self``."""
        info = getattr(func, "info", None)
        assert isinstance(expr.expr, NameExpr)
        if not (
            isinstance(func, FuncDef)
            and isinstance(info, TypeInfo)
            and func.arguments
            and func.arguments[0].variable.name == expr.expr.name
            and not func.is_static
        ):
            return None
        try:
            method = info.get(expr.name)
        except AttributeError:  # a class mypy has not finished (no MRO yet)
            return ""
        if method is not None and isinstance(method.node, (FuncDef, Decorator, OverloadedFuncDef)):
            return method.node.fullname
        return ""

    def _reference(self, expr: RefExpr) -> str | None:
        node = expr.node
        module = self.module_of(expr.fullname) if expr.fullname else None
        if self.is_installed_module(module):
            # an installed package: mypy dropped its bodies; the library reader knows
            # what its functions, aliases and objects lower for
            return expr.fullname
        if isinstance(node, (FuncDef, OverloadedFuncDef)):
            return node.fullname
        if isinstance(node, Decorator):
            return node.fullname if keeps_function(node) else None
        if isinstance(node, Var) and expr.fullname:
            if node.is_inferred and self.is_user_module(module):
                return expr.fullname  # an alias: its facts follow the assignment
            if module is None and node.type is None:
                return expr.fullname  # a name of a package mypy could not follow
        return None

    def call_target(self, call: CallExpr, func: FuncDef) -> CallTarget:
        """What ``call`` (inside ``func``) runs."""
        params = {arg.variable.name for arg in func.arguments}
        callee = call.callee
        target = self.callee_function(callee, func)
        if target is not None:
            module = self.module_of(target)
            if self.is_user_module(module) or self.is_installed_module(module) or module is None:
                return CallTarget("function", target)
            return KNOWN
        if isinstance(callee, NameExpr):
            node = callee.node
            if isinstance(node, Var):
                if callee.name in params or node.fullname == callee.name:
                    return UNKNOWN  # a parameter or a local callable
                return UNKNOWN if self.is_user_module(self.module_of(node.fullname)) else KNOWN
            return KNOWN
        if isinstance(callee, MemberExpr):
            if isinstance(callee.expr, NameExpr) and self._self_method(callee, func) == "":
                return UNKNOWN  # self.attr(...) that is not a method
            return KNOWN  # x.method(...): a method of a value, library code
        if isinstance(callee, CallExpr):
            inner = ref_name(callee.callee)
            if inner is not None and not self.is_user_module(self.module_of(inner)):
                return UNKNOWN if inner in fullnames.KEEPS_FUNCTION else KNOWN
            return UNKNOWN
        return UNKNOWN
