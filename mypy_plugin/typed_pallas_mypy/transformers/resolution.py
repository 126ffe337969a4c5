"""Name resolution: which function an expression names, and whose code it is.

``Names`` answers, over mypy's modules of one build:

* ``module_of(fullname)``: the module defining a name (longest module prefix);
* ``node_of(fullname)``: its definition in that module's symbol tables;
* ``is_user_module`` / ``is_installed_module``: the project's own code, or an installed
  package (site-packages; ``is_user_path`` and ``is_installed_path`` for paths);
* ``callee_function(expr)``: the function an expression names, through
  ``functools.partial``, function-keeping wrappers (``jax.jit``, ``functools.wraps``...:
  ``inference.jax_api.KEEPS_FUNCTION``), aliases and ``self.method``: the names mypy gives a
  callee where the platform is decided (what a call runs is the engine's reading,
  ``typed_pallas_mypy.inference``).

What it does not do: infer platforms (``typed_pallas_mypy.inference``), keep facts
(``platform_facts``), or read function bodies.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Final

from mypy.nodes import (
    CallExpr,
    Decorator,
    Expression,
    FuncDef,
    FuncItem,
    Import,
    ImportFrom,
    MemberExpr,
    MypyFile,
    NameExpr,
    Node,
    OverloadedFuncDef,
    RefExpr,
    TypeInfo,
    Var,
)
from mypy.util import correct_relative_import

from typed_pallas import _platforms
from typed_pallas_mypy import fullnames
from typed_pallas_mypy.cache_keys import is_installed_path as is_installed_path

#: How many alias hops (``impl = f``) are followed.
ALIAS_DEPTH: Final = 4


def is_user_path(path: str) -> bool:
    """Whether a module path is the user's code (not installed, not a stub)."""
    return bool(path) and not is_installed_path(path) and not path.endswith(".pyi")


def ref_name(expr: Expression) -> str | None:
    """The fullname a reference resolved to, or None."""
    if isinstance(expr, RefExpr) and expr.fullname:
        return expr.fullname
    return None


def decorator_name(dec: Expression, names: Names | None = None) -> str | None:
    """``jax.jit`` for ``@jax.jit``, ``@jax.jit(...)`` and ``@functools.partial(jax.jit, ...)``;
    for a package mypy could not follow, the name as imported (``@jaxtyping.jaxtyped``
    after ``import jaxtyping``: ``jaxtyping.jaxtyped``), when ``names`` reads imports."""
    target = dec.callee if isinstance(dec, CallExpr) else dec
    if names is not None and _unfollowed(target):
        return names.untyped_target(target, None)
    name = ref_name(target)
    if name == fullnames.FUNCTOOLS_PARTIAL and isinstance(dec, CallExpr) and dec.args:
        name = ref_name(dec.args[0])
    return name


def _unfollowed(expr: Expression) -> bool:
    """Whether ``expr`` names something of a package mypy could not follow."""
    while isinstance(expr, MemberExpr):
        expr = expr.expr
    return (
        isinstance(expr, NameExpr) and isinstance(expr.node, Var) and expr.node.is_suppressed_import
    )


def keeps_function(node: Decorator, names: Names | None = None) -> bool:
    """Whether every decorator of ``node`` returns the function's behaviour unchanged
    (``jax.custom_vjp`` too: a call runs the primal; ``custom_derivative`` says more);
    with ``names``, also a project variable holding such a decorator."""
    return all(_keeps(dec, names) for dec in node.decorators)


def _keepers() -> frozenset[str]:
    """What keeps the function it is given (``inference.jax_api``'s table), imported when
    first asked: a warm run, where no hook runs, loads no part of the engine."""
    from typed_pallas_mypy.inference import jax_api

    return jax_api.KEEPS_FUNCTION | jax_api.CUSTOM_DERIVATIVES


def _keeps(dec: Expression, names: Names | None) -> bool:
    name = decorator_name(dec, names)
    if name is None:
        return False
    if name in _keepers():
        return True
    return names is not None and names.keeping_alias(name)


class Names:
    """Name lookups over the modules of one mypy build (``modules`` is mypy's own dict,
    so modules added later in the build are seen)."""

    def __init__(self, modules: Mapping[str, MypyFile]) -> None:
        self.modules = modules
        #: whether a project variable holds a function-keeping decorator
        #: (``jaxtyped = jaxtyping.jaxtyped(typechecker=...)``); set by ``platform_facts``,
        #: which reads it from the variable's module or its stored facts
        self.keeping_alias: Callable[[str], bool] = lambda fullname: False
        self._module_of: dict[str, str | None] = {}
        self._user_paths: dict[str, bool] = {}
        self._imports: dict[str, dict[str, str]] = {}

    def forget(self) -> None:
        self._module_of.clear()
        self._imports.clear()

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
        self, expr: Expression, func: FuncItem | None, depth: int = 0, module: str | None = None
    ) -> str | None:
        """The fullname of the function ``expr`` names, through partial, jit, aliases
        and ``self.``; None when it is not a function the plugin can know (``module``:
        the module ``expr`` is in, when ``func`` is not known)."""
        if depth > ALIAS_DEPTH:
            return None
        if isinstance(expr, CallExpr):
            wrapped = ref_name(expr.callee)
            if (wrapped == fullnames.FUNCTOOLS_PARTIAL or wrapped in _keepers()) and expr.args:
                return self.callee_function(expr.args[0], func, depth + 1, module)
            return None
        if isinstance(expr, MemberExpr) and isinstance(expr.expr, NameExpr) and func is not None:
            method = self._self_method(expr, func)
            if method is not None:
                return method or None
        if isinstance(expr, RefExpr):
            return self._reference(expr, func, module)
        return None

    def _self_method(self, expr: MemberExpr, func: FuncItem) -> str | None:
        """``self.name`` inside a method: the method's fullname, "" for an attribute that
        is not a method, None when ``expr`` is not on ``self``."""
        # a plain function's ``info`` is mypy's falsy stand-in, which is a TypeInfo too
        info = getattr(func, "info", None)
        assert isinstance(expr.expr, NameExpr)
        if not (
            isinstance(func, FuncDef)
            and isinstance(info, TypeInfo)
            and info
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

    def _reference(
        self, expr: RefExpr, func: FuncItem | None, module: str | None = None
    ) -> str | None:
        node = expr.node
        if not expr.fullname or (isinstance(node, Var) and node.is_suppressed_import):
            return self.untyped_target(expr, func, module)
        module = self.module_of(expr.fullname)
        if self.is_installed_module(module):
            # an installed package: mypy dropped its bodies; the library reader knows
            # what its functions, aliases and objects lower for
            return expr.fullname
        if isinstance(node, (FuncDef, OverloadedFuncDef)):
            return node.fullname
        if isinstance(node, Decorator):
            return node.fullname if keeps_function(node, self) else None
        if isinstance(node, Var) and node.is_inferred and self.is_user_module(module):
            return expr.fullname  # an alias: its facts follow the assignment
        return None

    def is_library_name(self, fullname: str) -> bool:
        """Whether ``fullname`` belongs to an installed package: one mypy follows (its
        module is in the build, from site-packages) or one it could not (no ``py.typed``:
        the name came from the project's import statements)."""
        if fullname.split(".", 1)[0] in fullnames.NO_KERNEL_PACKAGES:
            return False
        if fullname.startswith("jax.") and not fullname.startswith(fullnames.JAX_READ_PREFIX):
            return False  # jax's framework: entry points are matched by name, not read
        module = self.module_of(fullname)
        if module is None:
            return "." in fullname and fullname.replace(".", "").isidentifier()
        tree = self.modules[module]
        return is_installed_path(tree.path) and not tree.path.endswith(".pyi")

    def untyped_target(
        self, expr: Expression, func: FuncItem | None, module: str | None = None
    ) -> str | None:
        """The dotted name an import of a package mypy could not follow binds
        (``from tokamax import ragged_dot`` -> ``tokamax.ragged_dot``): mypy types such
        names ``Any`` and records no target, so the module's import statements say it."""
        if isinstance(expr, MemberExpr):
            base = self.untyped_target(expr.expr, func, module)
            return (
                _platforms.canonical_fullname(f"{base}.{expr.name}") if base is not None else None
            )
        if not isinstance(expr, NameExpr):
            return None
        node = expr.node
        if not isinstance(node, Var) or not node.is_suppressed_import:
            return None
        owner = node.fullname if "." in node.fullname else (func.fullname if func else "")
        where = self.module_of(owner) if owner else module
        if where is None or where not in self.modules:
            return None
        return self._import_map(where).get(expr.name)

    def _import_map(self, module: str) -> dict[str, str]:
        """Local name -> dotted target of every import in ``module`` (names bound to two
        different targets are left out: which one runs is not known)."""
        cached = self._imports.get(module)
        if cached is not None:
            return cached
        tree = self.modules[module]
        bound: dict[str, str | None] = {}

        def bind(name: str, target: str) -> None:
            bound[name] = target if bound.get(name, target) == target else None

        for node in tree.imports:
            if isinstance(node, Import):
                for target, alias in node.ids:
                    if alias is not None:
                        bind(alias, _platforms.canonical_fullname(target))
                    else:
                        bind(target.split(".", 1)[0], target.split(".", 1)[0])
            elif isinstance(node, ImportFrom):
                base, _ok = correct_relative_import(
                    module, node.relative, node.id, tree.is_package_init_file()
                )
                for name, alias in node.names:
                    bind(alias or name, _platforms.canonical_fullname(f"{base}.{name}"))
        found = {name: target for name, target in bound.items() if target is not None}
        self._imports[module] = found
        return found
