"""How the reader evaluates values: what a callee expression holds when it is not a plain
name of a function.

``ValueReading`` is the part of ``reader._ModuleReader`` that follows Python's semantics
for values (docs/inference-model.md, "Values"): an element of a literal tuple, list or
dict under a literal index (a module-level container only read by index, a local tuple),
``d.get(KEY)``, an item of a call's result (``fwd, bwd = make()``, ``jax.vjp``'s
pullback), ``getattr(obj, "name")``, a method of an instance a call builds
(``Op().run``), ``super().NAME``, a method of an instance ``self`` keeps, a loop
variable over a literal sequence, and the values a class keeps: what ``__init__`` sets
once on every path, what its class body sets (``staticmethod(f)``, an instance, params),
a dataclass field's default; ``alias_of`` says what a name bound once to a value holds
(``model.Alias``). A value it cannot know (an attribute set twice or from outside its
class, a container changed after it is built, a key that is not a literal) is unknown.

What it does not do: look anything up in another module or through a class's bases
(``combine`` does, with the records this reads), or read conditions (``conditions``).
"""

from __future__ import annotations

import ast
from typing import Final

from typing_extensions import override

from typed_pallas_mypy.inference import jax_api, model
from typed_pallas_mypy.inference.callables import (
    KNOWN,
    Callee,
    CallResult,
    Choice,
    FunctionRef,
    ItemOf,
    MethodOf,
    UnknownCallable,
)
from typed_pallas_mypy.inference.model import Alias, CallArgs, Param
from typed_pallas_mypy.inference.scopes import (
    ChildIndex,
    FunctionNode,
    GlobalName,
    LocalName,
    Lookup,
    Pos,
    Scope,
    is_opaque_name,
    position_of,
    spelling,
)

#: What the reader lets through as a function-keeping decorator or wrapper call.
KEEPERS: Final = jax_api.KEEPS_FUNCTION | jax_api.CUSTOM_DERIVATIVES


class ValueReading:
    """The value-reading methods of ``reader._ModuleReader`` (one of its base classes)."""

    # What the reader provides (set in ``_ModuleReader.__init__``):
    module: str
    tree: ast.Module
    module_scope: Scope
    raw: dict[str, list[tuple[str, object]]]
    nodes: ChildIndex
    class_nodes: dict[str, ast.ClassDef]
    function_nodes: dict[str, tuple[FunctionNode, Scope]]
    _names_used: dict[str, list[ast.Name]]
    #: ``_foreign_attribute_stores``, once asked
    _foreign_stores: frozenset[str] | None
    #: the module's source
    _source: bytes

    def ref(self, expr: ast.AST, scope: Scope) -> str | None:
        """``_ModuleReader.ref``."""
        raise NotImplementedError

    def lookup(self, name: str, scope: Scope) -> Lookup:
        """``_ModuleReader.lookup``."""
        raise NotImplementedError

    def value_at(self, found: LocalName, pos: Pos) -> ast.expr | None:
        """``_ModuleReader.value_at``."""
        raise NotImplementedError

    def callable_of(self, expr: ast.expr, scope: Scope, depth: int = 0) -> Callee:
        """``_ModuleReader.callable_of``."""
        raise NotImplementedError

    def _callable_call(self, call: ast.Call, scope: Scope, depth: int) -> Callee:
        """``_ModuleReader._callable_call``."""
        raise NotImplementedError

    def self_attribute(self, expr: ast.AST, scope: Scope) -> str | None:
        """``_ModuleReader.self_attribute``."""
        raise NotImplementedError

    def scope_around(self, found: ast.AST) -> Scope:
        """``_ModuleReader.scope_around``."""
        raise NotImplementedError

    def _parents(self) -> dict[int, ast.AST]:
        """``_ModuleReader._parents``."""
        raise NotImplementedError

    def _every_path_roots(self, node: FunctionNode) -> list[ast.AST]:
        """The statements that run on every path of ``node`` (``unconditional_roots``)."""
        raise NotImplementedError

    def _is_keeper_factory(self, call: ast.Call, scope: Scope) -> bool:
        """``_ModuleReader._is_keeper_factory``."""
        raise NotImplementedError

    def _fields(self, cls: ast.ClassDef) -> tuple[Param, ...] | None:
        """``_ModuleReader._fields``."""
        raise NotImplementedError

    def _methods_of(self, cls: ast.ClassDef) -> list[FunctionNode]:
        """The methods of a class body (``reader._class_functions``)."""
        raise NotImplementedError

    def _derivative_of(self, call: ast.Call, key: str, scope: Scope, depth: int) -> Callee:
        """``jax.vjp(f, x)[1]`` (``out, pullback = jax.vjp(f, x)``): the callable that
        runs ``f``'s derivative (its custom rules) when called. What it is passed is not
        ``f``'s arguments: interpret mode read from them is not known."""
        index = jax_api.DEFERRED_DERIVATIVES.get(self.ref(call.func, scope) or "")
        if index is None and key.startswith("#") and key[1:].isdigit():
            made = self._callable_call(call, scope, depth + 1)
            if isinstance(made, CallResult):
                return ItemOf(made, int(key[1:]))
            return UnknownCallable(f"{spelling(call)}(...)[...]")
        if index is None or key != f"#{index}" or not call.args:
            return UnknownCallable(f"{spelling(call)}(...)[...]")
        if isinstance(call.args[0], ast.Starred):
            return UnknownCallable(f"{spelling(call)}(...)[...]")
        function = self.callable_of(call.args[0], scope, depth + 1)
        if isinstance(function, FunctionRef) and not function.self_bound:
            bound = model.UNKNOWN_ARGS
            return FunctionRef(function.targets, bound, differentiated=True)
        return UnknownCallable(f"{spelling(call)}(...)[...]")

    def _literal_getattr(self, call: ast.Call, scope: Scope) -> ast.Attribute | None:
        """``getattr(obj, "name")`` (no default): the attribute ``obj.name`` it reads."""
        if (
            len(call.args) == 2
            and not call.keywords
            and isinstance(call.args[1], ast.Constant)
            and isinstance(call.args[1].value, str)
            and call.args[1].value.isidentifier()
            and not isinstance(call.args[0], ast.Starred)
            and self.ref(call.func, scope) == "builtins.getattr"
        ):
            found = ast.Attribute(call.args[0], call.args[1].value, ast.Load())
            return ast.copy_location(found, call)
        return None

    def _method_of_value(self, expr: ast.Attribute, scope: Scope, depth: int) -> Callee:
        """``VALUE.NAME`` where ``VALUE`` is no global: ``super().NAME`` in a method, a
        method of an instance ``self`` keeps (``self.op.run``), or of an instance a call
        builds (``Op().run``, ``op.run`` with ``op = Op()``); else a method of a value
        the engine does not follow (an array's, a string's): library code."""
        value = expr.value
        if (
            isinstance(value, ast.Call)
            and isinstance(value.func, ast.Name)
            and value.func.id == "super"
            and not value.args
            and not value.keywords
            and self.ref(value.func, scope) == "builtins.super"
            and scope.self_name is not None
        ):
            return FunctionRef((f"super:{expr.attr}",), None, self_bound=True)
        kept = self.self_attribute(value, scope)
        if kept is not None:
            return FunctionRef((f"self:{kept}.{expr.attr}",), None, self_bound=True)
        if isinstance(value, (ast.Name, ast.Call)):
            made = self.callable_of(value, scope, depth + 1)
            if isinstance(made, CallResult):
                return MethodOf(made, expr.attr)
            if isinstance(made, UnknownCallable):
                return made
        return KNOWN

    def _table_entry(self, expr: ast.Subscript, scope: Scope, depth: int = 0) -> Callee:
        """``KERNELS["tpu"]``, ``KERNELS[0]``: the entry of a module-level platform table
        or literal container (of this module or another one: ``combine`` looks it up)
        under a literal index, or the element of a local literal tuple."""
        key = index_key(expr.slice)
        if key is None:
            return UnknownCallable(spelling(expr))
        if isinstance(expr.value, ast.Call):
            return self._derivative_of(expr.value, key, scope, depth)
        if isinstance(expr.value, ast.Name):
            found = self.lookup(expr.value.id, scope)
            if isinstance(found, LocalName):
                held = self.value_at(found, position_of(expr))
                element = element_at(held, key) if isinstance(held, ast.Tuple) else None
                if element is None:
                    return UnknownCallable(spelling(expr))
                return self.callable_of(element, found.scope, depth + 1)
        table = self.ref(expr.value, scope)
        if table is None or is_opaque_name(table):
            return UnknownCallable(spelling(expr))
        return FunctionRef((f"{table}[{key}]",))

    def _loop_items(self, found: LocalName) -> list[ast.expr] | None:
        """The elements a local variable takes when its only bindings are ``for`` loops
        over literal tuples or lists (no ``*``) of its own function; None otherwise."""
        iterables = found.scope.loops.get(found.name)
        if not iterables or found.name in found.scope.assigns or found.name in found.scope.defs:
            return None
        if not all(
            isinstance(i, (ast.Tuple, ast.List))
            and i.elts
            and not any(isinstance(e, ast.Starred) for e in i.elts)
            for i in iterables
        ):
            return None
        node = found.scope.node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        parents = self._parents()
        for use in self._names_used.get(found.name, ()):
            if not isinstance(use.ctx, ast.Store) or self.scope_around(use) is not found.scope:
                continue
            loop = parents.get(id(use))
            if not (isinstance(loop, (ast.For, ast.AsyncFor)) and loop.target is use):
                return None  # bound some other way too (``with ... as``, a tuple target)
        return [e for i in iterables if isinstance(i, (ast.Tuple, ast.List)) for e in i.elts]

    def _is_plain_dataclass(self, cls: ast.ClassDef) -> bool:
        """A dataclass whose constructor's parameters are its own fields, in order (no
        bases, no keyword-only fields): ``ClassSummary.fields``."""
        if cls.bases or cls.keywords:
            return False
        for decorator in cls.decorator_list:
            target = decorator.func if isinstance(decorator, ast.Call) else decorator
            if self.ref(target, self.module_scope) in jax_api.DATACLASS_DECORATORS:
                return not (
                    isinstance(decorator, ast.Call)
                    and any(k.arg == "kw_only" for k in decorator.keywords)
                )
        return False

    def _held_by_self(self, attr: str, scope: Scope) -> tuple[ast.expr, Scope] | None:
        """What ``self.ATTR`` holds in a method of a class of this module (or a function
        nested in one): the value the class sets it to once, in ``__init__`` on every
        path or in its class body, when no class of this module deriving from it sets
        it again; None otherwise."""
        method: Scope | None = scope
        while method is not None and not method.is_method:
            method = method.parent
        qualname = method.class_qualname if method is not None else None
        cls = self.class_nodes.get(qualname) if qualname is not None else None
        if cls is None or qualname is None:
            return None
        counts = self._self_assignments(cls, qualname)
        class_level = [
            item.value
            for item in cls.body
            if isinstance(item, (ast.Assign, ast.AnnAssign))
            and item.value is not None
            and any(
                isinstance(t, ast.Name) and t.id == attr
                for t in (item.targets if isinstance(item, ast.Assign) else [item.target])
            )
        ]
        found: tuple[ast.expr, Scope] | None = None
        init = self.function_nodes.get(f"{qualname}.__init__")
        if counts.get(attr) == 1 and not class_level and init is not None:
            node, init_scope = init
            for root in self._every_path_roots(node):
                if (
                    isinstance(root, ast.Assign)
                    and len(root.targets) == 1
                    and self.self_attribute(root.targets[0], init_scope) == attr
                ):
                    found = (root.value, init_scope)
        elif attr not in counts and len(class_level) == 1:
            found = (class_level[0], self.module_scope)
        if found is None or attr in self._foreign_attribute_stores():
            return None
        for other_name, other in self.class_nodes.items():
            if other is cls or not self._derives_from(other, qualname):
                continue
            if self._self_assignments(other, other_name).get(attr) or any(
                isinstance(t, ast.Name) and t.id == attr
                for item in other.body
                if isinstance(item, (ast.Assign, ast.AnnAssign))
                for t in (item.targets if isinstance(item, ast.Assign) else [item.target])
            ):
                return None  # a subclass of this module sets it otherwise
        return found

    def _foreign_attribute_stores(self) -> frozenset[str]:
        """Attribute names this module assigns on anything but a method's own ``self``
        (``OP.kernel = f``, ``Op.kernel = f``, ``obj.kernel = f`` in a function, a
        ``setattr``): what a class sets for them may be replaced. Read once per module,
        statement by statement, knowing each method's ``self``."""
        if self._foreign_stores is None:
            found: set[str] = set()
            _attribute_stores(self.tree.body, None, found)
            if b"setattr" in self._source:
                for node in ast.walk(self.tree):
                    if isinstance(node, ast.Call) and self._is_setattr(node):
                        name = node.args[1]
                        if isinstance(name, ast.Constant) and isinstance(name.value, str):
                            found.add(name.value)
                        else:
                            found.add("*")
            self._foreign_stores = frozenset(found)
        if "*" in self._foreign_stores:
            return _EVERY_NAME
        return self._foreign_stores

    def _is_setattr(self, call: ast.Call) -> bool:
        return (
            len(call.args) >= 2
            and isinstance(call.func, ast.Name)
            and call.func.id == "setattr"
            and self.ref(call.func, self.scope_around(call)) == "builtins.setattr"
        )

    def _derives_from(self, cls: ast.ClassDef, base: str, depth: int = 0) -> bool:
        """Whether the class ``cls`` of this module derives from its class ``base``."""
        if depth > 8:
            return True  # too deep to tell: assume it may
        for expr in cls.bases:
            name = self.ref(expr, self.module_scope)
            if name is None:
                continue
            local = name[len(self.module) + 1 :] if name.startswith(f"{self.module}.") else ""
            if local == base:
                return True
            parent = self.class_nodes.get(local) if local else None
            if parent is not None and self._derives_from(parent, base, depth + 1):
                return True
        return False

    def _self_assignments(self, cls: ast.ClassDef, qualname: str) -> dict[str, int]:
        """Instance attribute -> how many assignments to ``self.ATTR`` the methods of the
        class ``qualname`` make (each method's first parameter is its ``self``)."""
        counts: dict[str, int] = {}
        for stmt in self._methods_of(cls):
            found = self.function_nodes.get(f"{qualname}.{stmt.name}")
            self_name = found[1].self_name if found is not None else None
            if self_name is None:
                continue
            for sub in self.nodes.walk(stmt):
                targets: list[ast.expr] = []
                if isinstance(sub, ast.Assign):
                    targets = list(sub.targets)
                elif isinstance(sub, (ast.AugAssign, ast.AnnAssign)):
                    targets = [sub.target]
                for target in targets:
                    for t in self.nodes.walk(target):
                        if (
                            isinstance(t, ast.Attribute)
                            and isinstance(t.value, ast.Name)
                            and t.value.id == self_name
                        ):
                            counts[t.attr] = counts.get(t.attr, 0) + 1
        return counts

    def _attribute_aliases(self, qualname: str, cls: ast.ClassDef) -> dict[str, Alias]:
        """``CLASS.ATTR`` -> the callable an instance's attribute holds, when the class
        sets it once: in ``__init__``, on every path (``self.fn = jax.jit(f)``, ``self.op
        = Op()``), from no parameter; or in the class body (``fn = staticmethod(f)``,
        ``op = Op()``) and nowhere on instances. ``combine`` looks an attribute up
        through the instance's class and its bases, instance attributes first."""
        out: dict[str, Alias] = {}
        found = self.function_nodes.get(f"{qualname}.__init__")
        counts: dict[str, int] = {}
        self_name = found[1].self_name if found is not None else None
        if found is not None and self_name is not None:
            node, scope = found
            held: dict[str, Alias] = {}
            for root in self._every_path_roots(node):
                if not isinstance(root, ast.Assign) or len(root.targets) != 1:
                    continue
                target = root.targets[0]
                if not (
                    isinstance(target, ast.Attribute)
                    and isinstance(target.value, ast.Name)
                    and target.value.id == self_name
                    and isinstance(root.value, (ast.Name, ast.Attribute, ast.Call, ast.IfExp))
                ):
                    continue
                alias = self.alias_of(root.value, scope)
                if alias is not None and not _uses_parameters(alias.args):
                    held[target.attr] = alias
            if held:  # kept only when no other assignment of the class changes it
                counts = self._self_assignments(cls, qualname)
                foreign = self._foreign_attribute_stores()
                for attr, alias in held.items():
                    if counts.get(attr) == 1 and attr not in foreign:
                        out[f"{qualname}.{attr}"] = alias
        methods = {stmt.name for stmt in self._methods_of(cls)}
        assigned: dict[str, list[ast.expr]] = {}
        for item in cls.body:
            if isinstance(item, ast.Assign) and len(item.targets) == 1:
                name_target, value = item.targets[0], item.value
            elif isinstance(item, ast.AnnAssign) and item.value is not None:
                name_target, value = item.target, item.value
            else:
                continue
            if isinstance(name_target, ast.Name):
                assigned.setdefault(name_target.id, []).append(value)
        if assigned and not counts:
            counts = self._self_assignments(cls, qualname)
        dataclass_fields = self._fields(cls) if self._is_plain_dataclass(cls) else None
        field_names = {p.name for p in dataclass_fields or ()}
        class_names = set(assigned) | methods
        for name, values in assigned.items():
            if len(values) != 1 or name in counts or name in methods:
                continue
            if name in self._foreign_attribute_stores():
                continue  # set on an instance or the class from outside its methods
            value = values[0]
            if any(isinstance(n, ast.Name) and n.id in class_names for n in ast.walk(value)):
                continue  # names of the class body: not the module's
            if name in field_names:
                # a dataclass field's default: the instance's unless the constructor is
                # given another (``combine`` checks the constructor's arguments)
                alias = self.alias_of(value, self.module_scope)
                if alias is not None and alias.kind != model.KEEPER:
                    out[f"{qualname}.{name}"] = alias
                continue
            if (
                isinstance(value, ast.Call)
                and self.ref(value.func, self.module_scope) == "builtins.staticmethod"
                and len(value.args) == 1
            ):
                alias = self.alias_of(value.args[0], self.module_scope)
            elif isinstance(value, ast.Call):
                alias = self.alias_of(value, self.module_scope)
                if alias is not None and alias.kind != model.INSTANCE:
                    alias = None  # a function built here would be bound to the instance
            else:
                alias = None
            if alias is not None and alias.kind != model.KEEPER:
                out[f"{qualname}.{name}"] = alias
        return out

    def _element_aliases(self, name: str) -> dict[str, Alias]:
        """``NAME[KEY]`` -> what the element under a literal index of the module-level
        literal container ``NAME`` holds: a tuple's always, a list's or a dict's when the
        module only ever reads it by index (``NAME[k]``, ``len(NAME)``, ``k in NAME``),
        so no element is replaced or added after it is built."""
        value = self.raw[name][0][1]
        if not isinstance(value, (ast.Tuple, ast.List, ast.Dict)):
            return {}
        items = container_items(value)
        out: dict[str, Alias] = {}
        for key, element in items or ():
            alias = self.alias_of(element, self.module_scope)
            if alias is not None and alias.kind != model.KEEPER:
                out[f"{name}[{key}]"] = alias
        if out and not isinstance(value, ast.Tuple) and not self._only_indexed(name):
            return {}
        return out

    def _only_indexed(self, name: str) -> bool:
        """Whether every use of the module-level ``name`` reads it by index, takes its
        ``len`` or tests membership (nothing can change what it holds)."""
        parents = self._parents()
        for use in self._names_used.get(name, ()):
            if isinstance(use.ctx, ast.Store):
                continue  # the definition (bound once: an alias)
            if not isinstance(self.lookup(name, self.scope_around(use)), GlobalName):
                continue  # a local of the same name
            parent = parents.get(id(use))
            if isinstance(parent, ast.Subscript) and parent.value is use:
                if isinstance(parent.ctx, ast.Load):
                    continue
                return False
            if isinstance(parent, ast.Attribute) and parent.attr in _READING_METHODS:
                called = parents.get(id(parent))
                if isinstance(called, ast.Call) and called.func is parent:
                    continue
            if isinstance(parent, ast.Compare) and use is not parent.left:
                continue
            if (
                isinstance(parent, ast.Call)
                and parent.args == [use]
                and self.ref(parent.func, self.scope_around(parent)) == "builtins.len"
            ):
                continue
            return False
        return True

    def alias_of(self, value: ast.expr, scope: Scope) -> Alias | None:
        """What a name bound once to ``value`` (in ``scope``) holds, when it is a callable
        built from other names: a function, a partial or a keeper of one, an instance, a
        choice between functions, a keeping decorator."""
        if isinstance(value, ast.Call) and self._is_keeper_factory(value, scope):
            return Alias(value.lineno, model.KEEPER, ())
        if not isinstance(value, ast.Call) and self.ref(value, scope) in KEEPERS:
            return Alias(value.lineno, model.KEEPER, ())
        what = self.callable_of(value, scope)
        if isinstance(what, FunctionRef) and not what.self_bound:
            if len(what.targets) > 1:
                return Alias(value.lineno, model.CHOICE, what.targets)
            if what.bound is not None:
                return Alias(value.lineno, model.PARTIAL, what.targets, what.bound)
            keeps = isinstance(value, ast.Call)
            return Alias(value.lineno, model.KEEP if keeps else model.REF, what.targets)
        if isinstance(what, CallResult) and isinstance(value, ast.Call):
            return Alias(value.lineno, model.INSTANCE, (what.target,), what.args)
        if isinstance(what, Choice):
            targets = [
                option.targets[0]
                for option in what.options
                if isinstance(option, FunctionRef)
                and len(option.targets) == 1
                and option.bound is None
                and not option.self_bound
            ]
            if len(targets) == len(what.options):
                return Alias(value.lineno, model.CHOICE, tuple(targets))
        return None


#: Every attribute name (a ``setattr`` with a name that is not a literal may set any).
class _EveryName(frozenset[str]):
    @override
    def __contains__(self, item: object) -> bool:
        return True


_EVERY_NAME: Final = _EveryName()


def _parameter_names(args: ast.arguments) -> set[str]:
    every = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
    return {a.arg for a in every if a is not None}


def _attribute_stores(stmts: list[ast.stmt], self_name: str | None, found: set[str]) -> None:
    """Add to ``found`` the attributes ``stmts`` assign on anything but ``self_name`` (the
    ``self`` of the method they are in; a nested function keeps it unless a parameter of
    its own has that name)."""
    for stmt in stmts:
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef)):
            shadowed = self_name is not None and self_name in _parameter_names(stmt.args)
            _attribute_stores(stmt.body, None if shadowed else self_name, found)
            continue
        if isinstance(stmt, ast.ClassDef):
            for item in stmt.body:
                if isinstance(item, (ast.FunctionDef, ast.AsyncFunctionDef)):
                    positional = [*item.args.posonlyargs, *item.args.args]
                    static = any(
                        isinstance(d, ast.Name) and d.id == "staticmethod"
                        for d in item.decorator_list
                    )
                    own = positional[0].arg if positional and not static else None
                    _attribute_stores(item.body, own, found)
                else:
                    _attribute_stores([item], None, found)
            continue
        targets: list[ast.expr] = []
        if isinstance(stmt, ast.Assign):
            targets = list(stmt.targets)
        elif isinstance(stmt, (ast.AugAssign, ast.AnnAssign, ast.For, ast.AsyncFor)):
            targets = [stmt.target]
        elif isinstance(stmt, (ast.With, ast.AsyncWith)):
            targets = [i.optional_vars for i in stmt.items if i.optional_vars is not None]
        for target in targets:
            for t in ast.walk(target):
                if isinstance(t, ast.Attribute) and isinstance(t.ctx, ast.Store):
                    if not (isinstance(t.value, ast.Name) and t.value.id == self_name):
                        found.add(t.attr)
        for field in ("body", "orelse", "finalbody"):
            inner = getattr(stmt, field, None)
            if isinstance(inner, list) and inner and isinstance(inner[0], ast.stmt):
                _attribute_stores(inner, self_name, found)
        for handler in getattr(stmt, "handlers", ()):
            _attribute_stores(handler.body, self_name, found)
        for case in getattr(stmt, "cases", ()):
            _attribute_stores(case.body, self_name, found)


def _uses_parameters(args: CallArgs) -> bool:
    """Whether arguments summarised in a function pass any of its parameters on (what
    they hold depends on each call of that function)."""
    values = [*args.positional, *(v for _, v in args.keywords), *args.star_kwargs]
    return args.star or any(v.startswith(("p:", "o:")) for v in values)


#: Methods of a dict or sequence that read it and change nothing.


#: Methods of a dict or sequence that read it and change nothing.
_READING_METHODS: Final = frozenset({"get", "keys", "values", "items", "index", "count"})


def literal_get(call: ast.Call) -> ast.Subscript | None:
    """``d.get(KEY)`` or ``d.get(KEY, None)`` with a literal key: ``d[KEY]`` (on the
    paths where the result is called: calling None raises)."""
    func = call.func
    if not (isinstance(func, ast.Attribute) and func.attr == "get") or call.keywords:
        return None
    if not 1 <= len(call.args) <= 2 or index_key(call.args[0]) is None:
        return None
    if len(call.args) == 2:
        default = call.args[1]
        if not (isinstance(default, ast.Constant) and default.value is None):
            return None
    found = ast.Subscript(func.value, call.args[0], ast.Load())
    return ast.copy_location(found, call)


def unpacked(target: ast.expr, value: ast.expr) -> list[tuple[str, ast.expr]] | None:
    """``a, b = x, y``: (name, element) for each name of a tuple or list target unpacking
    a literal tuple or list of the same length (no ``*``); ``a, b = f(...)``: (name,
    ``f(...)[i]``), the item of the call's result; None for any other target."""
    if not isinstance(target, (ast.Tuple, ast.List)) or not all(
        isinstance(t, ast.Name) for t in target.elts
    ):
        return None
    names = [t.id for t in target.elts if isinstance(t, ast.Name)]
    if isinstance(value, ast.Call):
        items: list[ast.expr] = []
        for i in range(len(names)):
            item = ast.Subscript(value, ast.Constant(i), ast.Load())
            items.append(ast.copy_location(item, value))
        return list(zip(names, items))
    if not isinstance(value, (ast.Tuple, ast.List)) or len(names) != len(value.elts):
        return None
    if any(isinstance(e, ast.Starred) for e in value.elts):
        return None
    return list(zip(names, value.elts))


def index_key(index: ast.expr) -> str | None:
    """How a literal index is written in a ``TABLE[KEY]`` target: a string as itself, an
    integer as ``#N`` (negative ones too); None for any other index."""
    if isinstance(index, ast.Constant) and isinstance(index.value, str):
        return index.value
    if isinstance(index, ast.Constant) and type(index.value) is int:
        return f"#{index.value}"
    if (
        isinstance(index, ast.UnaryOp)
        and isinstance(index.op, ast.USub)
        and isinstance(index.operand, ast.Constant)
        and type(index.operand.value) is int
    ):
        return f"#{-index.operand.value}"
    return None


def container_items(value: ast.expr) -> list[tuple[str, ast.expr]] | None:
    """(key, element) of a literal tuple, list or dict (a sequence's elements under
    their index and their negative index); None when an element's place is not known
    (a ``*`` splat, a ``**`` merge, a key that is not a literal)."""
    if isinstance(value, (ast.Tuple, ast.List)):
        if any(isinstance(e, ast.Starred) for e in value.elts):
            return None
        size = len(value.elts)
        return [
            *((f"#{i}", e) for i, e in enumerate(value.elts)),
            *((f"#{i - size}", e) for i, e in enumerate(value.elts)),
        ]
    if isinstance(value, ast.Dict):
        out: list[tuple[str, ast.expr]] = []
        for key, item in zip(value.keys, value.values):
            found = index_key(key) if key is not None else None
            if found is None:
                return None
            out.append((found, item))
        return out
    return None


def element_at(value: ast.expr | None, key: str) -> ast.expr | None:
    """The element of a literal container under ``key`` (the last one, as a dict keeps)."""
    items = container_items(value) if value is not None else None
    found = [item for item_key, item in items or () if item_key == key]
    return found[-1] if found else None
