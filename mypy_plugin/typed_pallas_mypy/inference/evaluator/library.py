"""What library callables do, as tables: JAX's (``jax_api``: every role read), Pallas's
entry points and params classes (``entries``, ``typed_pallas._platforms``), the platform
sources (``fullnames``), and the standard library's (builtins, ``functools``,
``operator``, ``contextlib``, ``dataclasses``, ``enum``, ``typing``, ``importlib``,
``sys``). Nothing of a library is parsed: a name the tables do not have gives an
unknown result and runs nothing the evaluator can see.

Also the small rules of the data model that need the standard library's classes: which
exception a handler catches, which ``match`` patterns a value matches, what a class
derives from (enum, ``NamedTuple``, exception).

What it does not do: import jax (names only), or evaluate project code (the machine).
"""

from __future__ import annotations

import ast
import builtins
import dataclasses
import importlib.machinery
import os
import sys
from collections.abc import Callable
from typing import TYPE_CHECKING, Final

from typed_pallas import _platforms
from typed_pallas_mypy import fullnames
from typed_pallas_mypy.entries import ENTRIES
from typed_pallas_mypy.inference import jax_api
from typed_pallas_mypy.inference.evaluator import (
    dispatch,
    evidence,
    journal,
    pytrees,
    stdlib_models,
)
from typed_pallas_mypy.inference.evaluator.domain import (
    ANYTHING,
    ARRAY,
    FALSE,
    NOTHING,
    UNKNOWN,
    Array,
    BoundMethod,
    ClassDecorator,
    ClassObj,
    Const,
    Container,
    ContainerMethod,
    Context,
    ContextManagerFactory,
    Derivative,
    Descriptor,
    Devices,
    External,
    Flow,
    Frame,
    FunctionObj,
    GeneratorObj,
    InstanceObj,
    Jaxpr,
    Keeper,
    Kernel,
    ModuleObj,
    Namespace,
    Outcome,
    Params,
    Partial,
    Super,
    Transformed,
    Value,
    VSet,
    join,
    only,
    plain_class,
    shape_of,
    string_items,
    vset,
)

if TYPE_CHECKING:
    from typed_pallas_mypy.inference.evaluator.machine import Machine

_ITEMGETTER: Final = "operator.itemgetter()"
_ATTRGETTER: Final = "operator.attrgetter()"
#: modules whose functions return arrays (a pytree leaf)
_ARRAY_MODULES: Final = (
    "jax.numpy.",
    "jax.lax.",
    "jax.random.",
    "jax.nn.",
    "jax.scipy.",
    "jax._src.numpy.array_methods._IndexUpdateRef.",  # ``x.at[i].set(v)``
)
#: ``jnp.zeros(shape, ...)`` and its kin: an array of that shape
_FILLED: Final = frozenset(f"jax.numpy.{n}" for n in ("zeros", "ones", "empty", "full"))
#: ``jnp.zeros_like(x)`` and its kin: an array of ``x``'s shape
_LIKE: Final = frozenset(f"jax.numpy.{n}_like" for n in ("zeros", "ones", "empty", "full"))
#: configured decorators that also take the function itself (``@functools.lru_cache``)
_BARE_DECORATORS: Final = frozenset({"functools.lru_cache"})
#: container methods that change nothing (``container_method``)
_READING_METHODS: Final = frozenset(
    {"get", "__getitem__", "values", "keys", "items", "copy", "index", "count"}
)
_ENUM_BASES: Final = frozenset(
    {"enum.Enum", "enum.IntEnum", "enum.StrEnum", "enum.Flag", "enum.IntFlag"}
)
_NAMEDTUPLE_BASES: Final = frozenset({"typing.NamedTuple", "typing_extensions.NamedTuple"})


def _shape_argument(value: VSet) -> tuple[int, ...] | None:
    """A shape given as a literal: an int, or a tuple of ints."""
    one = only(value)
    if isinstance(one, Const):
        if isinstance(one.value, int) and not isinstance(one.value, bool):
            return (one.value,)
        if isinstance(one.value, tuple) and all(isinstance(v, int) for v in one.value):
            return one.value
        return None
    if isinstance(one, Container) and one.exact and one.kind in ("tuple", "list"):
        dims: list[int] = []
        for item in one.items:
            dim = only(item)
            if not (isinstance(dim, Const) and isinstance(dim.value, int)):
                return None
            dims.append(dim.value)
        return tuple(dims)
    return None


def _stacked_shape(arrays: VSet) -> tuple[int, ...] | None:
    """``jnp.stack(arrays)``'s shape: the arrays' count, then their one shape."""
    items = _items_of(arrays)
    if not items:
        return None
    shapes = {shape_of(item) for item in items}
    if len(shapes) != 1 or None in shapes:
        return None
    (shape,) = shapes
    return None if shape is None else (len(items), *shape)


def canonical(name: str) -> str:
    return _platforms.canonical_fullname(name)


# -- names, attributes, subscripts -----------------------------------------------------


def external_attribute(m: Machine, value: External, name: str) -> VSet:
    full = canonical(f"{value.fullname}.{name}")
    if full == "sys.version_info":
        return vset(Const(tuple(sys.version_info[:3])))
    if full == "sys.platform":
        return vset(Const(sys.platform))
    if value.fullname in stdlib_models.MODELS and full not in _SPECIAL:
        model = m.module(stdlib_models.MODEL_PREFIX + value.fullname)
        if model is not None and name in model.attrs:
            return model.attrs[name]
    return vset(External(full))


def external_class_attribute(m: Machine, base: External, name: str, instance: Value | None) -> VSet:
    """An attribute a library base class gives (``object.__init__``, ``Exception``'s)."""
    return vset(External(f"{base.fullname}.{name}"))


def external_subscript(m: Machine, value: External, key: VSet) -> VSet:
    if value.fullname == "sys.modules":
        one = only(key)
        if isinstance(one, Const) and isinstance(one.value, str):
            module = m.modules.get(one.value)
            return vset(module) if module is not None else ANYTHING
    return vset(value)  # ``typing.Callable[...]`` and the like: the same kind of thing


def importable(name: str) -> bool:
    """Whether a module the evaluator does not read exists (without importing it)."""
    parts = name.split(".")
    top = parts[0]
    if top in sys.builtin_module_names or top in getattr(sys, "stdlib_module_names", ()):
        return True
    spec = importlib.machinery.PathFinder.find_spec(top)
    if spec is None:
        return False
    locations = list(spec.submodule_search_locations or [])
    for part in parts[1:]:
        found: list[str] = []
        for folder in locations:
            if os.path.isdir(os.path.join(folder, part)):
                found.append(os.path.join(folder, part))
            elif any(
                entry.startswith(part + ".") and entry.endswith((".py", ".so", ".pyd", ".pyi"))
                for entry in _listdir(folder)
            ):
                return True
        if not found:
            return False
        locations = found
    return True


def _listdir(folder: str) -> list[str]:
    try:
        return os.listdir(folder)
    except OSError:
        return []


# -- classes ---------------------------------------------------------------------------


def classify(cls: ClassObj) -> None:
    """What a class derives from: an enum, a ``NamedTuple``, an exception."""
    for base in cls.mro[1:]:
        if isinstance(base, ClassObj):
            cls.flags |= base.flags & {"enum", "namedtuple", "exception", "dataclass"}
        elif isinstance(base, External):
            if base.fullname in _ENUM_BASES:
                cls.flags.add("enum")
            elif base.fullname in _NAMEDTUPLE_BASES:
                cls.flags.add("namedtuple")
            elif _is_builtin_exception(base.fullname):
                cls.flags.add("exception")


#: the built-in containers a class may derive from, by the kind of their items
_BUILTIN_STORES: Final = {
    "builtins.dict": "dict",
    "builtins.list": "list",
    "builtins.set": "set",
    "collections.OrderedDict": "dict",
}


def builtin_store(cls: ClassObj, *, given: bool) -> Container | None:
    """The items of a new instance of ``cls`` when it derives from ``dict``, ``list`` or
    ``set``: empty when it was made with no argument by the built-in ``__new__`` and
    ``__init__``, else not known; None for any other class."""
    kind = next(
        (
            _BUILTIN_STORES[k.fullname]
            for k in cls.mro
            if isinstance(k, External) and k.fullname in _BUILTIN_STORES
        ),
        None,
    )
    if kind is None:
        return None
    store = Container(kind)
    own = any(
        isinstance(k, ClassObj) and ("__init__" in k.attrs or "__new__" in k.attrs) for k in cls.mro
    )
    if given or own:
        store.exact = False
        store.loose = ANYTHING
    return store


def make_dataclass(cls: ClassObj) -> None:
    journal.touch(cls)
    cls.flags.add("dataclass")
    own = cls.own_fields
    inherited: list[tuple[str, VSet | None]] = []
    for base in reversed(cls.mro[1:]):
        if isinstance(base, ClassObj) and base.fields is not None:
            inherited.extend(base.fields)
    names = {n for n, _ in own}
    cls.fields = [f for f in inherited if f[0] not in names] + list(own)


def field_default(m: Machine, default: VSet) -> VSet:
    """A field's default as an instance holds it (``dataclasses.field(default=...)``; a
    ``default_factory`` / ``factory`` is called)."""
    out: list[VSet] = []
    for value in default:
        if isinstance(value, InstanceObj) and value.cls == External("dataclasses.Field"):
            factory = value.attrs.get("factory")
            if factory is not None:
                out.append(m.calls.call(factory, [], {}, Flow()))
            else:
                out.append(value.attrs.get("default", ANYTHING))
        else:
            out.append(vset(value))
    return join(*out)


def enum_member(cls: ClassObj, args: list[VSet]) -> Outcome:
    """``Kind(value)``: the member with that value."""
    wanted = only(args[0]) if len(args) == 1 else None
    members = [
        v
        for values in cls.attrs.values()
        for v in values
        if isinstance(v, InstanceObj) and v.cls is cls
    ]
    if isinstance(wanted, Const):
        for member in members:
            if member.attrs.get("value") == vset(wanted):
                return Outcome(returns=vset(member))
        return Outcome(live=False, raised=vset(External("builtins.ValueError")))
    if isinstance(wanted, InstanceObj) and wanted in members:
        return Outcome(returns=vset(wanted))
    return Outcome(returns=frozenset(members) | ANYTHING)


def _is_builtin_exception(fullname: str) -> bool:
    if not fullname.startswith("builtins."):
        return False
    found = getattr(builtins, fullname.removeprefix("builtins."), None)
    return isinstance(found, type) and issubclass(found, BaseException)


def exception_matches(raised: VSet, kinds: VSet) -> bool | None:
    """Whether a handler for ``kinds`` catches ``raised``: True, False, or None when not
    known for every value."""
    wanted = _exception_classes(kinds)
    if wanted is None:
        return None
    seen: set[bool] = set()
    for value in raised:
        cls: Value = value
        if isinstance(value, InstanceObj):
            cls = value.cls
        one = _catches(cls, wanted)
        if one is None:
            return None
        seen.add(one)
    return seen.pop() if len(seen) == 1 else None


def _exception_classes(kinds: VSet) -> list[Value] | None:
    out: list[Value] = []
    for kind in kinds:
        if isinstance(kind, Container) and kind.kind == "tuple" and kind.exact:
            for item in kind.items:
                more = _exception_classes(item)
                if more is None:
                    return None
                out.extend(more)
        elif isinstance(kind, (ClassObj, External)):
            out.append(kind)
        else:
            return None
    return out


def _catches(cls: Value, wanted: list[Value]) -> bool | None:
    if isinstance(cls, ClassObj):
        if any(w in cls.mro for w in wanted):
            return True
        externals = [b for b in cls.mro if isinstance(b, External)]
        for base in externals:
            for w in wanted:
                if isinstance(w, External) and _builtin_subclass(base.fullname, w.fullname):
                    return True
        if not externals or all(_is_builtin_exception(b.fullname) for b in externals):
            return False
        return None
    if isinstance(cls, External):
        if not _is_builtin_exception(cls.fullname):
            return None
        verdicts = []
        for w in wanted:
            if isinstance(w, External):
                verdicts.append(_builtin_subclass(cls.fullname, w.fullname))
            else:
                verdicts.append(False)  # a project class is not a base of a builtin one
        return any(v is True for v in verdicts)
    return None


def _builtin_subclass(name: str, base: str) -> bool:
    a = getattr(builtins, name.removeprefix("builtins."), None)
    b = getattr(builtins, base.removeprefix("builtins."), None)
    return isinstance(a, type) and isinstance(b, type) and issubclass(a, b)


def pattern_matches(
    m: Machine, pattern: ast.pattern, subject: VSet, frame: Frame | None = None
) -> bool | None:
    """Whether ``subject`` matches ``pattern``: True, False, or None when not known."""
    if isinstance(pattern, ast.MatchClass):
        return _class_pattern_matches(m, pattern, subject, frame)
    if isinstance(pattern, ast.MatchAs):
        return (
            True if pattern.pattern is None else pattern_matches(m, pattern.pattern, subject, frame)
        )
    if isinstance(pattern, ast.MatchOr):
        results = [pattern_matches(m, p, subject, frame) for p in pattern.patterns]
        if any(r is True for r in results):
            return True
        return False if all(r is False for r in results) else None
    one = only(subject)
    if isinstance(pattern, (ast.MatchValue, ast.MatchSingleton)):
        try:
            wanted = (
                ast.literal_eval(pattern.value)
                if isinstance(pattern, ast.MatchValue)
                else pattern.value
            )
        except ValueError:
            return None
        if isinstance(one, Const):
            return (
                bool(one.value == wanted)
                if isinstance(pattern, ast.MatchValue)
                else one.value is wanted
            )
        if one is not None and not isinstance(one, (Array, InstanceObj)) and wanted is None:
            return False
        return None
    if isinstance(pattern, ast.MatchSequence):
        if isinstance(one, Container) and one.kind in ("list", "tuple") and one.exact:
            if any(isinstance(p, ast.MatchStar) for p in pattern.patterns):
                return None
            if len(one.items) != len(pattern.patterns):
                return False
            results = [
                pattern_matches(m, p, item, frame)
                for p, item in zip(pattern.patterns, one.items, strict=True)
            ]
            if all(r is True for r in results):
                return True
            return False if any(r is False for r in results) else None
        if isinstance(one, Const) and not isinstance(one.value, (tuple, list)):
            return False
        return None
    if isinstance(pattern, ast.MatchMapping):
        if isinstance(one, Container) and one.kind == "dict" and one.exact and pattern.rest is None:
            found_results: list[bool | None] = []
            for key_node, sub in zip(pattern.keys, pattern.patterns, strict=True):
                try:
                    key = ast.literal_eval(key_node)
                except ValueError:
                    return None
                found = [v for k, v in one.entries if k == Const(key)]
                if not found:
                    return False
                found_results.append(pattern_matches(m, sub, found[0], frame))
            if all(r is True for r in found_results):
                return True
            return False if any(r is False for r in found_results) else None
        return None
    return None


def class_pattern_fields(
    m: Machine, pattern: ast.MatchClass, subject: VSet
) -> list[tuple[ast.pattern, VSet]]:
    """Each sub-pattern of a class pattern with the attribute of ``subject`` it reads
    (positional ones through the class's ``__match_args__``)."""
    one = only(subject)
    out: list[tuple[ast.pattern, VSet]] = []
    names: list[str | None] = [None] * len(pattern.patterns)
    if isinstance(one, InstanceObj) and isinstance(one.cls, ClassObj):
        flow = Flow()
        order = m.expressions.class_attribute(
            one.cls, one.cls, "__match_args__", flow, instance=None
        )
        fields = string_items(only(order))
        if fields is None and one.cls.fields is not None:
            fields = [name for name, _ in one.cls.fields]  # dataclasses and NamedTuples
        if fields is not None:
            names = [fields[i] if i < len(fields) else None for i in range(len(pattern.patterns))]
    for sub, name in zip(pattern.patterns, names, strict=True):
        value = m.expressions.attribute(subject, name, Flow()) if name is not None else ANYTHING
        out.append((sub, value))
    for key, sub in zip(pattern.kwd_attrs, pattern.kwd_patterns, strict=True):
        out.append((sub, m.expressions.attribute(subject, key, Flow())))
    return out


def _class_pattern_matches(
    m: Machine, pattern: ast.MatchClass, subject: VSet, frame: Frame | None
) -> bool | None:
    """``case Cls(...)``: the subject is an instance of ``Cls`` (by its class's method
    resolution order) and its sub-patterns match the attributes they read."""
    if frame is None:
        return None
    wanted = only(m.expressions.evaluate(pattern.cls, frame, Flow()))
    one = only(subject)
    if not isinstance(wanted, ClassObj) or not isinstance(one, InstanceObj):
        return None
    if not isinstance(one.cls, ClassObj):
        return None
    if wanted not in one.cls.mro:
        externals = [b for b in one.cls.mro if not isinstance(b, ClassObj)]
        return False if not externals else None
    results = [
        pattern_matches(m, sub, value, frame)
        for sub, value in class_pattern_fields(m, pattern, subject)
    ]
    if all(r is True for r in results):
        return True
    return False if any(r is False for r in results) else None


# -- calls -----------------------------------------------------------------------------


def call_external(
    m: Machine,
    fullname: str,
    args: list[VSet],
    keywords: dict[str, VSet],
    star_unknown: bool,
    kw_unknown: bool,
    site: ast.Call | None,
    frame: Frame | None,
) -> Outcome:
    """Calling the library callable ``fullname``."""
    name = canonical(fullname)
    if name in fullnames.DEFAULT_BACKEND:
        return Outcome(returns=vset(Const(m.backend_name)))
    if name in fullnames.DEVICES:
        if args or keywords:
            return Outcome(returns=ANYTHING)  # ``jax.devices("cpu")``: a backend named
        return Outcome(returns=vset(Devices()))
    if name in fullnames.IS_TPU_DEVICE:
        return Outcome(returns=vset(Const(m.platform == "tpu")))
    if name in ENTRIES:
        return _entry_call(m, name, args, keywords, site, frame)
    params = _platforms.PARAMS_BY_FULLNAME.get(name)
    if params is not None:
        return Outcome(returns=vset(Params(params.backend)))
    allocation = evidence.made(name, keywords)
    if allocation is not None:
        return Outcome(returns=vset(allocation))
    special = _SPECIAL.get(name)
    if special is not None:
        return special(m, args, keywords, frame)
    context = jax_api.context(name)
    if context is not None and args and _callable(args[0]) is True and jax_api.row(name):
        context = None  # a name one end has as a context, the other as a function of one
    if context is not None:
        interprets = context.effect is jax_api.Effect.INTERPRETS
        return Outcome(returns=vset(Context(name, interprets)))
    decorator = jax_api.class_decorator(name)
    if decorator is not None:
        if args:
            for cls in args[0]:
                if isinstance(cls, ClassObj) and decorator.makes_dataclass:
                    make_dataclass(cls)
                if isinstance(cls, ClassObj) and decorator.registers_node is not None:
                    pytrees.register_class(cls, decorator.registers_node, keywords)
                if isinstance(cls, ClassObj) and decorator.orders:
                    from typed_pallas_mypy.inference.evaluator.operators import TOTAL_ORDERING

                    journal.touch(cls)
                    cls.flags.add(TOTAL_ORDERING)
            return Outcome(returns=args[0])
        return Outcome(returns=vset(ClassDecorator(decorator.makes_dataclass)))
    row = jax_api.row(name)
    if row is not None:
        return _api_call(m, name, row, args, keywords, star_unknown, kw_unknown)
    if _is_builtin_exception(name):
        instance = InstanceObj(External(name))
        holder = Container("tuple")
        holder.items = list(args)
        instance.attrs["args"] = vset(holder)
        return Outcome(returns=vset(instance))
    if name in _FILLED:
        return Outcome(returns=vset(Array(_shape_argument(args[0]) if args else None)))
    if name in _LIKE and args:
        return Outcome(returns=vset(Array(shape_of(args[0]))))
    if name == "jax.numpy.stack" and len(args) == 1 and not keywords:
        return Outcome(returns=vset(Array(_stacked_shape(args[0]))))
    if name.startswith(_ARRAY_MODULES) or name in ("jax.device_put", "jax.block_until_ready"):
        return Outcome(returns=vset(ARRAY))
    return Outcome(returns=ANYTHING)


def _entry_call(
    m: Machine,
    name: str,
    args: list[VSet],
    keywords: dict[str, VSet],
    site: ast.Call | None,
    frame: Frame | None,
) -> Outcome:
    """A Pallas entry point called: a kernel (or, without its body, a decorator giving one)."""
    spec = ENTRIES[name]
    backend = ""
    if "compiler_params" in keywords:
        backend = _backend_of(keywords["compiler_params"])
    interpret: bool | None = False
    if "interpret" in keywords:
        value = only(keywords["interpret"])
        interpret = (
            bool(value.value)
            if isinstance(value, Const) and isinstance(value.value, bool | None)
            else None
        )
    if spec.platform_keyword is not None and spec.platform_keyword in keywords:
        declared = only(keywords[spec.platform_keyword])
        if isinstance(declared, Const) and backend == "":
            rows = [p.backend for p in _platforms.PARAMS_CLASSES if p.platform == declared.value]
            backend = rows[0] if len(rows) == 1 else "?"
    module = frame.module.name if frame is not None else ""
    line = site.lineno if site is not None else 0
    given = dict(zip(spec.positional, args, strict=False)) | keywords
    mesh = given.get(spec.mesh) if spec.mesh is not None else None
    proofs = evidence.argument_proofs(keywords, mesh, module, line)
    body = given.get(spec.body) if spec.body is not None else None
    if body is not None:
        proofs += evidence.body_proofs(m, body)
    kernel = Kernel(name, backend, interpret, module, line, spec.backends, proofs=proofs)
    if spec.body is None or body is not None:
        return Outcome(returns=vset(kernel))
    return Outcome(returns=vset(dataclasses.replace(kernel, awaits_body=True)))


def _backend_of(params: VSet) -> str:
    backends: set[str] = set()
    for value in params:
        if isinstance(value, Params):
            backends.add(value.backend)
        elif isinstance(value, Const) and value.value is None:
            backends.add("")
        else:
            return "?"
    return backends.pop() if len(backends) == 1 else "?"


def _argument(args: list[VSet], keywords: dict[str, VSet], arg: jax_api.Arg) -> VSet | None:
    if arg.keyword is not None and arg.keyword in keywords:
        return keywords[arg.keyword]
    if arg.position is not None and arg.position < len(args):
        return args[arg.position]
    return None


def _api_call(
    m: Machine,
    name: str,
    row: jax_api.ApiRow,
    args: list[VSet],
    keywords: dict[str, VSet],
    star_unknown: bool,
    kw_unknown: bool,
) -> Outcome:
    """A row of JAX's table (and the standard library's rows in it) called."""
    if row.kind is jax_api.Kind.DESCRIPTOR:
        kind = name.rsplit(".", 1)[1]
        func = args[0] if args else ANYTHING
        if kind == "partialmethod" and args:
            # ``partialmethod(f, *args)``: on an instance, ``partial(f, instance, *args)``
            func = vset(Partial(func, tuple(args[1:]), tuple(keywords.items())))
        return Outcome(returns=vset(Descriptor(kind, func)))
    if row.binds:
        if not args:
            return Outcome(returns=ANYTHING)
        return Outcome(returns=vset(Partial(args[0], tuple(args[1:]), tuple(keywords.items()))))
    if row.configured:
        if name in _BARE_DECORATORS and args and _callable(args[0]) is True:
            return Outcome(returns=vset(Transformed(name, args[0])))  # ``@lru_cache`` bare
        return Outcome(returns=vset(Keeper(name)))
    function_args = [a for a in row.args if a.role is not jax_api.Role.HOOK]
    if (
        row.optional_function
        and not args
        and not any(a.keyword in keywords for a in function_args if a.keyword)
    ):
        return Outcome(returns=vset(Keeper(name)))
    flow = Flow()
    returns: VSet | None = None
    calls = m.calls
    for arg in row.args:
        if arg.role is jax_api.Role.PER_PLATFORM:
            continue
        value = _argument(args, keywords, arg)
        if value is None:
            continue
        role = arg.role
        if role is jax_api.Role.KEEPS and arg.placed_by is not None:
            placed = only(keywords.get(arg.placed_by, ANYTHING))
            if placed != Const("device"):
                continue  # run on other cores, lowered for them (as Role.HOST)
        if role is jax_api.Role.KEEPS:
            kept = vset(Transformed(name, value))
            if row.result_index is not None and row.result_items is None:
                made = Container("tuple")
                made.items = [ANYTHING] * row.result_index + [kept]
                made.exact = False
                made.loose = ANYTHING
                returns = vset(made)
            else:
                returns = kept
        elif role is jax_api.Role.CALLS_NOW:
            if _no_trips(args, arg):
                continue  # a loop that runs zero times: nothing it does is lowered
            targets = _items_of(value) if arg.sequence else [value]
            # ``jax.vjp`` / ``jax.linearize``: the derivative's part is deferred to the
            # callable they return (a ``jvp`` rule's tangent work, a ``bwd`` rule)
            deferring = int(row.differentiates and name in jax_api.DEFERRED_DERIVATIVES)
            if row.differentiates:
                m.differentiating += 1
            m.deferring += deferring
            try:
                called = _call_each_now(m, name, args, keywords, arg, targets, flow, star_unknown)
            finally:
                if row.differentiates:
                    m.differentiating -= 1
                m.deferring -= deferring
            if called is not None:
                returns = called
        elif role is jax_api.Role.CALLS_EACH:
            returns = _calls_each(m, name, row, arg, value, args, keywords, flow)
        elif role is jax_api.Role.TRACES_ONLY and row.returns_jaxpr:
            returns = vset(Transformed(name, value))  # called, it gives a jaxpr
        elif role is jax_api.Role.TRACES_ONLY and row.replays:
            # its callable evaluates what the function traced with the other arguments
            given = None if star_unknown or kw_unknown or keywords else tuple(args[1:])
            returns = vset(Jaxpr(value, given))
        elif role is jax_api.Role.RULE:
            _rule(m, arg, value, flow)
    if name in ("builtins.sorted", "builtins.min", "builtins.max") and args and returns is None:
        items = _sorted_items(m, name, args, flow)  # takes the items (a lazy map runs)
        if items:
            made = Container("list")
            made.items = list(items)
            if len(items) > 1:
                made.exact, made.loose = False, join(*items)
            returns = vset(made) if name == "builtins.sorted" else join(*items)
            if name != "builtins.sorted" and "key" not in keywords and len(items) > 1:
                returns = _extreme(m, name, items, flow)
    per_platform = [a for a in row.args if a.role is jax_api.Role.PER_PLATFORM]
    if per_platform:
        chosen = _platform_branch(m, keywords)
        if chosen is not None:  # called with the operands given to platform_dependent
            # the branches are those of a switch on the platform: inside its primitive
            branch = Flow()
            calls.call(chosen, list(args), {}, branch, star_unknown=star_unknown)
            flow.ran = flow.ran | _nest(branch.ran)
            flow.may_ran = flow.may_ran | _nest(branch.may_ran)
            flow.live = flow.live and branch.live
    tree_result = pytrees.RESULTS.get(name)
    if tree_result is not None:
        returns = tree_result(m, args, keywords) or returns
    if row.result_items is not None:
        returns = _result_tuple(name, row, args, keywords, returns)
    if returns is None:
        returns = vset(ARRAY) if name.startswith("jax.") else ANYTHING
    return Outcome(returns=returns, ran=flow.ran, may_ran=flow.may_ran, live=flow.live)


def _result_tuple(
    name: str,
    row: jax_api.ApiRow,
    args: list[VSet],
    keywords: dict[str, VSet],
    kept: VSet | None,
) -> VSet:
    """The tuple a row returns (``ApiRow.result_items``): its kept callable at
    ``result_index``, its derivative callable at ``derivative_index``, unknown items
    elsewhere; one more item when ``has_aux`` is true, not exact when that is not known."""
    aux = keywords.get("has_aux", vset(FALSE))
    with_aux = only(aux)
    count = row.result_items or 0
    made = Container("tuple")
    if isinstance(with_aux, Const):
        count += int(bool(with_aux.value))
    else:
        made.exact, made.loose = False, ANYTHING
    items: list[VSet] = [ANYTHING] * count
    function = next((a for a in row.args if a.position == 0), None)
    value = _argument(args, keywords, function) if function is not None else None
    if row.result_index is not None and kept is not None:
        items[row.result_index] = kept
    if row.derivative_index is not None and value is not None:
        items[row.derivative_index] = vset(Derivative(name, value, row.derivative_transposes))
    made.items = items
    return vset(made)


def _rule(m: Machine, arg: jax_api.Arg, value: VSet, flow: Flow) -> None:
    """A ``Role.RULE`` argument: lowered under the transformation that asks for it (a
    differentiation not deferred to a returned derivative callable, a transposition),
    with what JAX passes it (not known); it may be lowered under a deferred one."""
    when = arg.when
    asked = (
        when is jax_api.When.DIFFERENTIATION and m.differentiating > 0 and not m.deferring
    ) or (when is jax_api.When.TRANSPOSITION and m.transposing > 0)
    if asked:
        # traced as a jaxpr of its own, one differentiation down: a custom_jvp function
        # it calls runs its body (as ``Calls._derivative_rules`` runs a rule)
        inner = Flow()
        m.differentiating -= 1
        try:
            m.calls.call(value, [], {}, inner, star_unknown=True, kw_unknown=True)
        finally:
            m.differentiating += 1
        flow.ran = flow.ran | _nest(inner.ran)
        flow.may_ran = flow.may_ran | _nest(inner.may_ran)
    elif when is jax_api.When.DIFFERENTIATION and m.differentiating > 0:
        m.statements.maybe_detached(
            flow, lambda f: m.calls.call(value, [], {}, f, star_unknown=True, kw_unknown=True)
        )


def _no_trips(args: list[VSet], arg: jax_api.Arg) -> bool:
    """The loop's known bounds say it runs zero times (``Arg.bounds``)."""
    if arg.bounds is None or max(arg.bounds) >= len(args):
        return False
    lower, upper = (only(args[i]) for i in arg.bounds)
    return (
        isinstance(lower, Const)
        and isinstance(upper, Const)
        and type(lower.value) is int
        and type(upper.value) is int
        and upper.value <= lower.value
    )


def _call_each_now(
    m: Machine,
    name: str,
    args: list[VSet],
    keywords: dict[str, VSet],
    arg: jax_api.Arg,
    targets: list[VSet] | None,
    flow: Flow,
    star_unknown: bool,
) -> VSet | None:
    """Call each function a ``CALLS_NOW`` argument holds, with what the row says JAX
    passes it (``Arg.operands``; any arguments where it says nothing); what the call
    gives back where the standard library's callable returns it (``operator.call``)."""
    returns: VSet | None = None
    if arg.each_node_of is not None and arg.each_node_of < len(args):
        for target in targets or []:
            _each_node(m, target, args[arg.each_node_of], flow, 0)
        return None
    operands, unknown = _operands(name, args, arg, star_unknown, keywords)
    for target in targets or []:
        inner = Flow()
        result = m.calls.call(target, operands, {}, inner, star_unknown=unknown)
        ran, may_ran = inner.ran, inner.may_ran
        if arg.read_by_python:
            # called by Python in the caller's trace (``is_leaf``); what it traces is dead
            ran, may_ran = unused(ran), unused(may_ran)
        elif name.startswith("jax."):  # the function runs inside a primitive of JAX's
            ran, may_ran = _nest(ran), _nest(may_ran)
        flow.ran = flow.ran | ran
        flow.may_ran = flow.may_ran | may_ran
        if not inner.live:
            flow.live = False
        if name.startswith(("operator.", "builtins.", "functools.")):
            returns = result
    return returns


def _each_node(m: Machine, target: VSet, node: VSet, flow: Flow, depth: int) -> None:
    """JAX flattening a tree with ``is_leaf`` (``Arg.each_node_of``): called on ``node``,
    then, where it answers false, on each of the node's children in turn, from the root
    down. What it traces only Python reads (dead code). A call that surely happens adds
    its kernels to ``flow.ran``; below an answer not known they may run."""
    from typed_pallas_mypy.inference.evaluator.expressions import truth

    inner = Flow()
    result = m.calls.call(target, [node], {}, inner)
    flow.ran = flow.ran | unused(inner.ran)
    flow.may_ran = flow.may_ran | unused(inner.ran | inner.may_ran)
    if not inner.live:
        flow.live = False
        return
    answer = truth(result)
    one = only(node)
    children = pytrees.children(m, one) if one is not None else None
    if answer is True or not children or depth >= 8:
        return
    if answer is False:
        for child in children:
            _each_node(m, target, child, flow, depth + 1)
            if not flow.live:
                return
        return
    maybe = Flow()
    for child in children:
        _each_node(m, target, child, maybe, depth + 1)
    flow.may_ran = flow.may_ran | maybe.ran | maybe.may_ran


def _nest(kernels: frozenset[Kernel]) -> frozenset[Kernel]:
    return frozenset(k if k.nested else dataclasses.replace(k, nested=True) for k in kernels)


def nested(outcome: Outcome) -> Outcome:
    """``outcome`` of a function JAX traces for one of its callables: its kernels run
    nested (``Kernel.nested``)."""
    return dataclasses.replace(
        outcome,
        ran=_nest(outcome.ran),
        may_ran=_nest(outcome.may_ran),
        yield_ran=None if outcome.yield_ran is None else _nest(outcome.yield_ran),
    )


def _operands(
    name: str,
    args: list[VSet],
    arg: jax_api.Arg,
    star_unknown: bool,
    keywords: dict[str, VSet] | None = None,
) -> tuple[list[VSet], bool]:
    """The arguments a ``CALLS_NOW`` function is called with, and whether more may follow."""
    if name == "operator.call":
        return list(args[1:]), star_unknown
    if arg.operands is None:
        return [], True
    out: list[VSet] = []
    for spec in arg.operands:
        if spec.startswith("="):
            if keywords is not None and spec[1:] in keywords:
                out.append(keywords[spec[1:]])
        elif spec == "?":
            out.append(ANYTHING)
        elif spec.startswith("*"):
            start = int(spec[1:].removesuffix("."))
            if star_unknown or len(args) < start:  # the functions passed by keyword
                return out, True
            rest = args[start:]
            out.extend([_leaf_of(a) for a in rest] if spec.endswith(".") else rest)
        else:
            index = int(spec.removesuffix("[]").removesuffix("."))
            if index >= len(args):
                if star_unknown:
                    return out, True
                out.append(ANYTHING)  # passed by keyword, or not at all
            elif spec.endswith("[]"):
                out.append(_leading_slice(args[index]))
            elif spec.endswith("."):
                out.append(_leaf_of(args[index]))
            else:
                out.append(args[index])
    return out, False


def _call_count(arg: jax_api.Arg, args: list[VSet], keywords: dict[str, VSet]) -> int | None:
    """How many times the arguments say a ``Role.CALLS_EACH`` function is called, at
    least (0: never), by ``Arg.each_item_of``, ``each_axis_of`` or ``combines_along``;
    None when not known."""
    if arg.each_item_of is not None:
        given = args[arg.each_item_of] if arg.each_item_of < len(args) else None
        items = _items_of(given) if given is not None else None
        return None if items is None else len(items)
    if arg.each_axis_of is not None:
        given = args[arg.each_axis_of] if arg.each_axis_of < len(args) else None
        shape = shape_of(given) if given is not None else None
        return None if shape is None else len(shape)
    if arg.combines_along is not None:
        axis = only(keywords.get("axis", vset(Const(0))))
        given = args[arg.combines_along] if arg.combines_along < len(args) else None
        shape = shape_of(given) if given is not None else None
        if not (isinstance(axis, Const) and axis.value == 0) or not shape:
            return None
        return int(shape[0] >= 2)
    return None


def _leaf_of(tree: VSet) -> VSet:
    """A leaf of a pytree: the array itself when the tree is one, else an array."""
    one = only(tree)
    return tree if isinstance(one, Array) else vset(ARRAY)


def _leading_slice(value: VSet) -> VSet:
    """One slice of an array along its leading axis (``lax.map``'s ``xs``)."""
    one = only(value)
    if isinstance(one, Array) and one.shape:
        return vset(Array(one.shape[1:]))
    return ANYTHING


def _items_of(value: VSet) -> list[VSet] | None:
    one = only(value)
    if isinstance(one, Container) and one.exact and one.kind in ("list", "tuple"):
        return list(one.items)
    return None


def _platform_branch(m: Machine, keywords: dict[str, VSet]) -> VSet | None:
    """``lax.platform_dependent``'s branch for the assumed platform."""
    for key in _platforms.BRANCH_KEYWORDS_OF_LOWERING.get(m.platform, (m.platform,)):
        if key in keywords:
            return keywords[key]
    return keywords.get("default")


def _leaf_operands(
    m: Machine, arg: jax_api.Arg, args: list[VSet], leaf: int, value: VSet
) -> list[VSet]:
    """What a per-leaf function gets for its ``leaf``-th leaf (``Arg.operands``: ``"N."``
    that leaf of argument N, ``value`` for the tree itself; ``"*N."`` that leaf of each
    argument from N on; ``"?"`` a value JAX makes, such as the leaf's path)."""
    out: list[VSet] = []
    for spec in arg.operands or (f"{arg.each_leaf_of}.",):
        if spec == "?":
            out.append(ANYTHING)
            continue
        start = int(spec.lstrip("*").removesuffix("."))
        positions = range(start, len(args)) if spec.startswith("*") else [start]
        for position in positions:
            if position == arg.each_leaf_of:
                out.append(value)
                continue
            others = pytrees.leaves(m, args[position]) if position < len(args) else None
            out.append(others[leaf] if others is not None and leaf < len(others) else ANYTHING)
    return out


def _leaves(m: Machine, value: VSet) -> int | None:
    """How many leaves a pytree has, when known (an array is one)."""
    found = pytrees.leaves(m, value)
    return None if found is None else len(found)


def _calls_each(
    m: Machine,
    name: str,
    row: jax_api.ApiRow,
    arg: jax_api.Arg,
    value: VSet,
    args: list[VSet],
    keywords: dict[str, VSet],
    flow: Flow,
) -> VSet | None:
    """A function called once per leaf or item: on every path when there is at least one."""
    calls = m.calls
    if arg.reduces and arg.each_leaf_of is not None:
        # folds the tree's leaves as functools.reduce does
        index = arg.each_leaf_of
        tree = args[index] if len(args) > index else keywords.get("tree")
        count = _leaves(m, tree) if tree is not None else None
        start = args[index + 1] if len(args) > index + 1 else keywords.get("initializer")
        if count is None:
            m.statements.maybe_detached(
                flow, lambda f: calls.call(value, [], {}, f, star_unknown=True)
            )
            return None
        accumulator = start if start is not None else (vset(ARRAY) if count else None)
        for _ in range(count if start is not None else max(count - 1, 0)):
            accumulator = calls.call(value, [accumulator or ANYTHING, vset(ARRAY)], {}, flow)
        return accumulator
    if arg.each_leaf_of is not None:
        # once per leaf of a pytree (``jax.tree.map``): on every path when it has leaves;
        # the result is the tree rebuilt from what each call returned
        index = arg.each_leaf_of
        tree = args[index] if len(args) > index else keywords.get("tree")
        found = pytrees.leaves(m, tree) if tree is not None else None
        if found is not None and tree is not None:
            results = [
                calls.call(value, _leaf_operands(m, arg, args, i, leaf), {}, flow)
                for i, leaf in enumerate(found)
            ]
            return pytrees.rebuild(m, tree, results)
        operands, _ = _operands(name, args, arg, star_unknown=False)
        m.statements.maybe_detached(
            flow, lambda f: calls.call(value, operands, {}, f, star_unknown=True)
        )
        return None
    if row.iterator is not None and arg.each_item_of is not None:
        # lazy: what it calls runs when its items are taken (``ApiRow.iterator``)
        given = args[arg.each_item_of] if arg.each_item_of < len(args) else None
        source = m.iteration.iterate(given, flow) if given is not None else None
        iterator = GeneratorObj(None, None, lazy=row.iterator, func=value, source=source)
        iterator.read_by_python = arg.read_by_python
        iterator.initial = keywords.get("initial")
        return vset(iterator)
    counted = _call_count(arg, args, keywords)
    if (arg.each_item_of, arg.each_axis_of, arg.combines_along) != (None, None, None):
        # called a number of times the arguments decide (``Arg.each_item_of``...)
        if counted:
            calls.call(value, [], {}, flow, star_unknown=True)
        elif counted is None:
            m.statements.maybe_detached(
                flow, lambda f: calls.call(value, [], {}, f, star_unknown=True)
            )
        return None
    items = (
        _iterable_items(m, args[1] if len(args) > 1 else None, flow)
        if name == "functools.reduce"
        else None
    )
    if name == "functools.reduce" and items is not None:
        accumulator = args[2] if len(args) > 2 else (items.pop(0) if items else ANYTHING)
        for item in items:
            accumulator = calls.call(value, [accumulator, item], {}, flow)
        return accumulator
    if name in ("builtins.sorted", "builtins.min", "builtins.max") and args:
        # the key is called on each item; its results only order them
        # (``Arg.read_by_python``): the kernels it runs are marked so
        # (``Kernel.result_unused``), since JAX drops them as dead code before lowering
        # from some release on (``verdict.lowers_on``)
        items = _sorted_items(m, name, args, flow)
        if items:
            keyed = Flow()
            for item in items:
                calls.call(value, [item], {}, keyed)
            ran, may_ran = keyed.ran, keyed.ran | keyed.may_ran
            if arg.read_by_python:
                ran, may_ran = unused(ran), unused(may_ran)
            flow.ran = flow.ran | ran
            flow.may_ran = flow.may_ran | may_ran
            if not keyed.live:
                flow.live = False
            if name == "builtins.sorted":
                made = Container("list")
                made.items = list(items)
                made.exact = False
                made.loose = join(*items)
                return vset(made)
            return join(*items)
        return None
    m.statements.maybe_detached(flow, lambda f: calls.call(value, [], {}, f, star_unknown=True))
    return None


def _extreme(m: Machine, name: str, items: list[VSet], flow: Flow) -> VSet:
    """``max(items)`` / ``min(items)`` as CPython takes it: the first item, then each next
    one that compares greater (less); where a comparison is not known, either."""
    from typed_pallas_mypy.inference.evaluator import operators
    from typed_pallas_mypy.inference.evaluator.expressions import compare

    op: ast.cmpop = ast.Gt() if name == "builtins.max" else ast.Lt()
    best = items[0]
    for item in items[1:]:
        answer = compare(op, item, best)
        if answer is None:
            answer = operators.rich_compare(m, op, item, best, flow)
        best = item if answer is True else best if answer is False else join(best, item)
    return best


def _sorted_items(m: Machine, name: str, args: list[VSet], flow: Flow) -> list[VSet] | None:
    """The items ``sorted``, ``min`` or ``max`` orders: its one iterable's, or its
    positional arguments (``max(a, b)``)."""
    if name != "builtins.sorted" and len(args) > 1:
        return list(args)
    return m.iteration.iterate(args[0], flow)


def unused(kernels: frozenset[Kernel]) -> frozenset[Kernel]:
    """The kernels, as runs whose results nothing uses."""
    return frozenset(dataclasses.replace(k, result_unused=True) for k in kernels)


def _is_builtin(value: VSet, name: str) -> bool:
    return value == vset(External(f"builtins.{name}"))


def kept_by_filter(func: VSet, item: VSet, result: VSet) -> bool | None:
    """Whether ``filter(func, ...)`` keeps ``item``, given what ``func(item)`` returned
    (``filter(None, ...)`` keeps the true items)."""
    from typed_pallas_mypy.inference.evaluator.expressions import truth

    if func == vset(Const(None)):
        return truth(item)
    if _is_builtin(func, "callable"):
        return _callable(item)
    return truth(result)


def _iterable_items(m: Machine, value: VSet | None, flow: Flow) -> list[VSet] | None:
    if value is None:
        return None
    return m.iteration.iterate(value, flow)


def _callable(values: VSet) -> bool | None:
    seen: set[bool] = set()
    for value in values:
        if isinstance(
            value, (FunctionObj, ClassObj, BoundMethod, Partial, Transformed, Kernel, Keeper)
        ):
            seen.add(True)
        elif isinstance(value, (Const, Container, Array)):
            seen.add(False)
        else:
            return None
    return seen.pop() if len(seen) == 1 else None


def transformed_returns(value: Transformed) -> VSet | None:
    """What calling a transformation's result returns, when not the function's result."""
    if value.keeper in ("jax.vmap", "jax.pmap", "jax.grad", "jax.value_and_grad"):
        return vset(ARRAY)
    return None


def container_method(
    m: Machine, method: ContainerMethod, args: list[VSet], keywords: dict[str, VSet]
) -> Outcome:
    """``list.append``, ``dict.get`` and the other container methods."""
    container, name = method.container, method.name
    if name not in _READING_METHODS:
        journal.touch(container)
    if name == "append" and container.kind == "list" and args:
        container.items.append(args[0])
        return Outcome(returns=vset(Const(None)))
    if name == "extend" and container.kind == "list" and args:
        items = m.iteration.iterate(args[0], Flow())
        if items is None or not container.exact:
            container.exact = False
            container.loose = join(container.loose, ANYTHING if items is None else join(*items))
        else:
            container.items.extend(items)
        return Outcome(returns=vset(Const(None)))
    if name in ("get", "__getitem__") and container.kind == "dict" and args:
        from typed_pallas_mypy.inference.evaluator.expressions import container_item

        found = container_item(container, args[0])
        default = args[1] if len(args) > 1 else vset(Const(None))
        if not found:
            return Outcome(returns=default)
        key = only(args[0])
        present = key is not None and any(k == key for k, _ in container.entries)
        return Outcome(returns=found if present else join(found, default))
    if name == "update" and container.kind == "dict" and len(args) <= 1:
        from typed_pallas_mypy.inference.evaluator.expressions import set_entry

        given = only(args[0]) if args else None
        if args and not (isinstance(given, Container) and given.kind == "dict" and given.exact):
            container.exact = False
            container.loose = join(container.loose, ANYTHING)
            return Outcome(returns=vset(Const(None)))
        for key, value in given.entries if isinstance(given, Container) else []:
            set_entry(container, key, value)
        for key_name, value in keywords.items():
            set_entry(container, Const(key_name), value)
        return Outcome(returns=vset(Const(None)))
    if name == "setdefault" and container.kind == "dict" and args:
        from typed_pallas_mypy.inference.evaluator.expressions import (
            container_item,
            hashable_key,
            set_entry,
        )

        key = only(args[0])
        default = args[1] if len(args) > 1 else vset(Const(None))
        present = key is not None and any(k == key for k, _ in container.entries)
        if present:
            return Outcome(returns=container_item(container, args[0]))
        if key is not None and container.exact and hashable_key(key):
            set_entry(container, key, default)  # absent from an exact dict: stored now
            return Outcome(returns=default)
    if name in ("update", "setdefault", "insert", "add", "pop", "remove", "clear"):
        container.exact = False
        container.loose = join(container.loose, *args, *keywords.values())
        return Outcome(returns=ANYTHING)
    if name in ("values", "keys", "items", "copy"):
        made = Container("list")
        if name == "values":
            made.items = [v for _, v in container.entries]
        elif name == "keys":
            made.items = [vset(k) for k, _ in container.entries]
        elif name == "copy":
            made.kind = container.kind
            made.items = list(container.items)
            made.entries = list(container.entries)
        else:
            for k, v in container.entries:
                pair = Container("tuple")
                pair.items = [vset(k), v]
                made.items.append(vset(pair))
        made.exact = container.exact
        made.loose = container.loose
        return Outcome(returns=vset(made))
    return Outcome(returns=ANYTHING)


# -- the standard library's special cases ------------------------------------------------

_Special = Callable[["Machine", list[VSet], dict[str, VSet], Frame | None], Outcome]


def _getattr(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    if len(args) >= 2:
        name = only(args[1])
        if isinstance(name, Const) and isinstance(name.value, str):
            target = only(args[0])
            if (
                len(args) > 2
                and isinstance(target, ModuleObj)
                and target.done
                and name.value not in target.attrs
                and "__getattr__" not in target.attrs
                and not (target.is_package and m.module(f"{target.name}.{name.value}"))
            ):
                return Outcome(returns=args[2])  # AttributeError caught: the default
            found = m.expressions.attribute(args[0], name.value, Flow())
            if len(args) > 2 and UNKNOWN in found:
                found = join(found, args[2])
            return Outcome(returns=found)
    return Outcome(returns=ANYTHING)


def _setattr(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    if len(args) == 3:
        name = only(args[1])
        if isinstance(name, Const) and isinstance(name.value, str):
            m.statements.set_attribute(args[0], name.value, args[2], Flow())
    return Outcome(returns=vset(Const(None)))


#: what ``functools.update_wrapper`` copies from the wrapped function by default
#: (``WRAPPER_ASSIGNMENTS``); its ``__dict__`` is merged too (``WRAPPER_UPDATES``)
_WRAPPER_ASSIGNMENTS: Final = ("__module__", "__name__", "__qualname__", "__doc__")


def _update_wrapper(
    m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None
) -> Outcome:
    """``functools.update_wrapper(wrapper, wrapped)``: the wrapper itself, given the
    wrapped function's name, attributes and ``__wrapped__`` (calling it still runs the
    wrapper, not what it wraps)."""
    wrapper = args[0] if args else kw.get("wrapper")
    wrapped = args[1] if len(args) > 1 else kw.get("wrapped")
    if wrapper is None or wrapped is None or len(args) > 2 or set(kw) - {"wrapper", "wrapped"}:
        return Outcome(returns=wrapper if wrapper is not None else ANYTHING)  # other fields
    flow = Flow()
    source = only(wrapped)
    if isinstance(source, FunctionObj):
        for name, value in source.attrs.items():  # ``wrapper.__dict__.update(...)``
            m.statements.set_attribute(wrapper, name, value, flow)
    for name in _WRAPPER_ASSIGNMENTS:
        m.statements.set_attribute(
            wrapper, name, m.expressions.attribute(wrapped, name, flow), flow
        )
    m.statements.set_attribute(wrapper, "__wrapped__", wrapped, flow)
    return Outcome(returns=wrapper)


def _wraps(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    """``functools.wraps(wrapped)``: ``partial(update_wrapper, wrapped=wrapped)``."""
    wrapped = args[0] if args else kw.get("wrapped")
    if wrapped is None or len(args) > 1 or set(kw) - {"wrapped"}:
        return Outcome(returns=vset(Keeper("functools.wraps")))  # other fields: keeps f
    updater = vset(External("functools.update_wrapper"))
    return Outcome(returns=vset(Partial(updater, (), (("wrapped", wrapped),))))


def _callable_builtin(
    m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None
) -> Outcome:
    verdict = _callable(args[0]) if args else None
    return Outcome(returns=ANYTHING if verdict is None else vset(Const(verdict)))


def _next(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    if not args:
        return Outcome(returns=ANYTHING)
    flow = Flow()
    one = only(args[0])
    if isinstance(one, GeneratorObj):
        items = m.iteration.produce(one, flow, 1)
    else:
        found = m.iteration.iterate(args[0], flow)
        items = found[:1] if found is not None else None
    if items:
        return Outcome(returns=items[0], ran=flow.ran, may_ran=flow.may_ran)
    if items == [] and len(args) > 1:
        return Outcome(returns=args[1], ran=flow.ran, may_ran=flow.may_ran)
    if items == []:
        return Outcome(live=False, raised=vset(External("builtins.StopIteration")))
    return Outcome(returns=ANYTHING, may_ran=flow.may_ran)


def _iter(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    return Outcome(returns=args[0] if len(args) == 1 else ANYTHING)


def _sequence_of(kind: str) -> _Special:
    def make(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
        made = Container(kind)
        if not args:
            if kind == "dict":
                made.entries = [(Const(k), v) for k, v in kw.items()]
            return Outcome(returns=vset(made))
        given = only(args[0])
        if kind == "dict" and isinstance(given, Container) and given.kind == "dict":
            # ``dict(mapping, **kw)``: a copy of the mapping, the keywords on top
            from typed_pallas_mypy.inference.evaluator.expressions import set_entry

            made.entries = list(given.entries)
            made.exact, made.loose = given.exact, given.loose
            for keyword, value in kw.items():
                set_entry(made, Const(keyword), value)
            return Outcome(returns=vset(made))
        flow = Flow()
        items = m.iteration.iterate(args[0], flow)
        if items is None:
            made.exact = False
            made.loose = ANYTHING
        elif kind == "dict":
            for item in items:
                pair = only(item)
                if isinstance(pair, Container) and pair.exact and len(pair.items) == 2:
                    key = only(pair.items[0])
                    if key is not None:
                        made.entries.append((key, pair.items[1]))
                        continue
                made.exact = False
                made.loose = ANYTHING
        else:
            made.items = items
        return Outcome(returns=vset(made), ran=flow.ran, may_ran=flow.may_ran)

    return make


def _range(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    bounds = [only(a) for a in args]
    if bounds and all(isinstance(b, Const) and isinstance(b.value, int) for b in bounds):
        values = range(
            *[b.value for b in bounds if isinstance(b, Const) and isinstance(b.value, int)]
        )
        if len(values) <= 64:
            made = Container("tuple")
            made.items = [vset(Const(v)) for v in values]
            return Outcome(returns=vset(made))
    made = Container("tuple")
    made.exact = False
    made.loose = ANYTHING
    return Outcome(returns=vset(made))


def _any_all(is_any: bool) -> _Special:
    def decide(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
        from typed_pallas_mypy.inference.evaluator.expressions import truth

        if not args:
            return Outcome(returns=ANYTHING)
        flow = Flow()
        items = m.iteration.iterate(args[0], flow)
        if items is None:
            return Outcome(returns=ANYTHING, may_ran=flow.may_ran)
        verdicts = [truth(item) for item in items]
        if is_any:
            result = (
                True
                if any(v is True for v in verdicts)
                else (False if all(v is False for v in verdicts) else None)
            )
        else:
            result = (
                False
                if any(v is False for v in verdicts)
                else (True if all(v is True for v in verdicts) else None)
            )
        return Outcome(
            returns=ANYTHING if result is None else vset(Const(result)),
            ran=flow.ran,
            may_ran=flow.may_ran,
        )

    return decide


def _vars(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    one = only(args[0]) if args else None
    if isinstance(one, ModuleObj | ClassObj):
        return Outcome(returns=vset(Namespace(one)))  # ``vars(cls)`` is ``cls.__dict__``
    return Outcome(returns=ANYTHING)


def _super(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    if args or frame is None or frame.function is None or frame.function.owner is None:
        return Outcome(returns=ANYTHING)
    receiver = only(frame.receiver)
    if receiver is None:
        return Outcome(returns=ANYTHING)
    return Outcome(returns=vset(Super(frame.function.owner, receiver)))


def _property(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    return Outcome(returns=vset(Descriptor("property", args[0] if args else ANYTHING)))


def _type(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    one = only(args[0]) if len(args) == 1 else None
    if isinstance(one, InstanceObj):
        return Outcome(returns=vset(one.cls))
    return Outcome(returns=ANYTHING)


def _import_module(
    m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None
) -> Outcome:
    name = only(args[0]) if args else None
    package = only(args[1]) if len(args) > 1 else None
    if isinstance(name, Const) and isinstance(name.value, str) and name.value.startswith("."):
        if not (isinstance(package, Const) and isinstance(package.value, str)):
            return Outcome(returns=ANYTHING, raised=vset(External("builtins.ImportError")))
        level = len(name.value) - len(name.value.lstrip("."))
        parts = package.value.split(".")
        base = parts[: len(parts) - (level - 1)] if level > 1 else parts
        rest = name.value[level:]
        name = Const(".".join([*base, rest] if rest else base))
    if isinstance(name, Const) and isinstance(name.value, str):
        found = m.statements.import_module(name.value)
        if found == NOTHING:
            return Outcome(live=False, raised=vset(External("builtins.ImportError")))
        return Outcome(returns=found)
    return Outcome(returns=ANYTHING, raised=vset(External("builtins.ImportError")))


def _contextmanager(
    m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None
) -> Outcome:
    return Outcome(returns=vset(ContextManagerFactory(args[0] if args else ANYTHING)))


def _suppress(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    made = InstanceObj(External("contextlib.suppress"))
    kinds = Container("tuple")
    kinds.items = list(args)
    made.attrs["kinds"] = vset(kinds)
    return Outcome(returns=vset(made))


def _field(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    """``dataclasses.field(default=..., default_factory=...)``, ``attrs.field`` and
    ``attr.ib`` (``factory=``): a field's marker, its default or the factory of one."""
    made = InstanceObj(External("dataclasses.Field"))
    factory = kw.get("default_factory", kw.get("factory"))
    if factory is not None:
        made.attrs["factory"] = factory
    made.attrs["default"] = kw.get("default", ANYTHING)
    if "metadata" in kw:
        made.attrs["metadata"] = kw["metadata"]
    return Outcome(returns=vset(made))


def is_field_marker(value: VSet) -> bool:
    """Whether ``value`` is what ``_field`` makes (a class body's ``x = attr.ib()``)."""
    one = only(value)
    return isinstance(one, InstanceObj) and one.cls == External("dataclasses.Field")


def _evolve(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    """``attrs.evolve(obj, **changes)``, ``dataclasses.replace(obj, **changes)``: a new
    instance of the same class with those fields changed."""
    one = only(args[0]) if args else None
    if not isinstance(one, InstanceObj):
        return Outcome(returns=ANYTHING)
    made = InstanceObj(one.cls)
    made.attrs.update(one.attrs)
    made.attrs.update(kw)
    return Outcome(returns=vset(made))


def _itemgetter(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    if len(args) != 1:
        return Outcome(returns=ANYTHING)
    return Outcome(returns=vset(Partial(vset(External(_ITEMGETTER)), (args[0],), ())))


def _attrgetter(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    if len(args) != 1:
        return Outcome(returns=ANYTHING)
    return Outcome(returns=vset(Partial(vset(External(_ATTRGETTER)), (args[0],), ())))


def _get_item(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    if len(args) != 2:
        return Outcome(returns=ANYTHING)
    return Outcome(returns=m.expressions.subscript(args[1], args[0], Flow()))


def _get_attribute(
    m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None
) -> Outcome:
    if len(args) != 2:
        return Outcome(returns=ANYTHING)
    return _getattr(m, [args[1], args[0]], {}, frame)


def _object_new(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    """``object.__new__(cls)`` (``super().__new__(cls)``): a new instance, not initialised."""
    cls = only(args[0]) if args else None
    if isinstance(cls, ClassObj):
        return Outcome(returns=vset(InstanceObj(cls)))
    return Outcome(returns=ANYTHING)


def _object(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    return Outcome(returns=vset(InstanceObj(External("builtins.object"))))


def _nothing(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    return Outcome(returns=vset(Const(None)))


def _enumerate(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    flow = Flow()
    items = m.iteration.iterate(args[0], flow) if args else None
    made = Container("list")
    if items is None:
        made.exact = False
        made.loose = ANYTHING
    else:
        for i, item in enumerate(items):
            pair = Container("tuple")
            pair.items = [vset(Const(i)), item]
            made.items.append(vset(pair))
    return Outcome(returns=vset(made), ran=flow.ran, may_ran=flow.may_ran)


def _zip(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    flow = Flow()
    columns = [m.iteration.iterate(a, flow) for a in args]
    made = Container("list")
    if any(c is None for c in columns) or not columns:
        made.exact = False
        made.loose = ANYTHING
    else:
        for row in zip(*[c for c in columns if c is not None], strict=False):
            pair = Container("tuple")
            pair.items = list(row)
            made.items.append(vset(pair))
    return Outcome(returns=vset(made), ran=flow.ran, may_ran=flow.may_ran)


def _chain(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    """``itertools.chain(*iterables)``: their items, in order."""
    return _chained(m, args)


def _chain_from_iterable(
    m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None
) -> Outcome:
    """``itertools.chain.from_iterable(iterables)``: the items of each, in order."""
    flow = Flow()
    iterables = m.iteration.iterate(args[0], flow) if len(args) == 1 else None
    if iterables is None:
        return Outcome(returns=ANYTHING, may_ran=flow.may_ran)
    return _chained(m, iterables, flow)


def _chained(m: Machine, iterables: list[VSet], flow: Flow | None = None) -> Outcome:
    flow = flow or Flow()
    made = Container("list")
    for iterable in iterables:
        items = m.iteration.iterate(iterable, flow)
        if items is None:
            made.exact, made.loose = False, ANYTHING
            break
        made.items.extend(items)
    return Outcome(returns=vset(made), ran=flow.ran, may_ran=flow.may_ran)


def _copy(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    """``copy.copy(x)`` and ``copy.deepcopy(x)``: a new container or instance holding
    what ``x`` holds (functions, classes and modules are their own copies)."""
    if len(args) != 1:
        return Outcome(returns=ANYTHING)
    out: list[Value] = []
    for value in args[0]:
        if isinstance(value, Container):
            made = Container(value.kind)
            made.items, made.entries = list(value.items), list(value.entries)
            made.exact, made.loose, made.factory = value.exact, value.loose, value.factory
            out.append(made)
        elif isinstance(value, InstanceObj):
            copied = InstanceObj(value.cls)
            copied.attrs.update(value.attrs)
            out.append(copied)
        else:
            out.append(value)
    return Outcome(returns=frozenset(out))


def _method_type(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    """``types.MethodType(function, obj)``: the function bound to ``obj``."""
    if len(args) != 2:
        return Outcome(returns=ANYTHING)
    return Outcome(
        returns=frozenset(
            BoundMethod(function, receiver) for function in args[0] for receiver in args[1]
        )
    )


def _cast(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    """``typing.cast(type, value)``: the value, unchanged."""
    return Outcome(returns=args[1] if len(args) == 2 else ANYTHING)


#: the classes whose instances are JAX arrays (and tracers of them)
_ARRAY_CLASSES: Final = frozenset({"jax.Array", "jax.numpy.ndarray", "jax._src.basearray.Array"})
#: Python's classes of constants and containers, by the evaluator's kind of value
_BUILTIN_CLASSES: Final[dict[str, tuple[type, ...] | str]] = {
    "builtins.int": (int,),
    "builtins.float": (float,),
    "builtins.complex": (complex,),
    "builtins.bool": (bool,),
    "builtins.str": (str,),
    "builtins.bytes": (bytes,),
    "builtins.tuple": "tuple",
    "builtins.list": "list",
    "builtins.dict": "dict",
    "builtins.set": "set",
}


def _isinstance(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    """``isinstance(obj, cls)`` where both are known well enough: an array against JAX's
    array class or a builtin one, a constant or container against a builtin class, an
    instance of a class the program defines against a class (its MRO); ``cls`` may be a
    tuple of classes."""
    if len(args) != 2 or kw:
        return Outcome(returns=ANYTHING)
    obj, spec = only(args[0]), only(args[1])
    if obj is None or spec is None:
        return Outcome(returns=ANYTHING)
    classes: list[Value] = []
    if isinstance(spec, Container) and spec.kind == "tuple" and spec.exact:
        for item in spec.items:
            one = only(item)
            if one is None:
                return Outcome(returns=ANYTHING)
            classes.append(one)
    else:
        classes.append(spec)
    answers = [instance_of(obj, cls) for cls in classes]
    if any(a is True for a in answers):
        return Outcome(returns=vset(Const(True)))
    if all(a is False for a in answers):
        return Outcome(returns=vset(Const(False)))
    return Outcome(returns=ANYTHING)


def instance_of(obj: Value, cls: Value) -> bool | None:
    """``isinstance(obj, cls)`` for one value and one class; None where not known."""
    if isinstance(cls, External):
        name = cls.fullname
        if name == "builtins.object":
            return True
        if name in _ARRAY_CLASSES:
            if isinstance(obj, Array):
                return True
            return False if isinstance(obj, (Const, Container)) else None
        kind = _BUILTIN_CLASSES.get(name)
        if kind is None:
            return None
        if isinstance(obj, Array):
            return False
        if isinstance(obj, Const) and isinstance(kind, tuple):
            return isinstance(obj.value, kind)
        if isinstance(obj, Const):
            return False
        if isinstance(obj, Container):
            return obj.kind == kind if isinstance(kind, str) else False
        return None
    if isinstance(cls, ClassObj):
        if isinstance(obj, InstanceObj) and isinstance(obj.cls, ClassObj):
            if cls in obj.cls.mro:
                return True
            return False if plain_class(obj.cls) and plain_class(cls) else None
        if isinstance(obj, (Array, Const, Container)) and plain_class(cls):
            return False
    return None


def _single_dispatch(method: bool) -> _Special:
    def make(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
        """``functools.singledispatch(f)`` / ``singledispatchmethod(f)``."""
        if len(args) != 1 or kw:
            return Outcome(returns=ANYTHING)
        return Outcome(returns=vset(dispatch.Dispatcher(args[0], method)))

    return make


def _len(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    one = only(args[0]) if args else None
    if isinstance(one, Container) and one.exact:
        return Outcome(returns=vset(Const(len(one.items) + len(one.entries))))
    return Outcome(returns=ANYTHING)


def _simple_namespace(
    m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None
) -> Outcome:
    """``types.SimpleNamespace(a=1)``: an instance whose attributes are the keywords."""
    instance = InstanceObj(External("types.SimpleNamespace"))
    mapping = only(args[0]) if args else None
    if isinstance(mapping, Container) and mapping.kind == "dict" and mapping.exact:
        for key, value in mapping.entries:
            if isinstance(key, Const) and isinstance(key.value, str):
                instance.attrs[key.value] = value
    instance.attrs.update(kw)
    return Outcome(returns=vset(instance))


def _field_names(value: VSet | None, pairs: bool) -> list[str] | None:
    """A named tuple's field names: ``"a b"``, ``"a, b"``, ``["a", "b"]``, or with
    ``pairs`` ``[("a", int), ...]`` (``typing.NamedTuple``'s functional form)."""
    one = only(value) if value is not None else None
    if isinstance(one, Const) and isinstance(one.value, str) and not pairs:
        return one.value.replace(",", " ").split()
    items = exact_items_of(one)
    if items is None:
        return None
    names: list[str] = []
    for item in items:
        field = only(item)
        if pairs:
            pair = exact_items_of(field)
            field = only(pair[0]) if pair is not None and len(pair) == 2 else None
        if not (isinstance(field, Const) and isinstance(field.value, str)):
            return None
        names.append(field.value)
    return names


def exact_items_of(value: Value | None) -> list[VSet] | None:
    if isinstance(value, Container) and value.exact and value.kind in ("list", "tuple"):
        return list(value.items)
    if isinstance(value, Const) and isinstance(value.value, tuple):
        return [vset(Const(v)) for v in value.value]
    return None


def _namedtuple(pairs: bool) -> _Special:
    """``collections.namedtuple("K", ["a", "b"], defaults=...)`` and
    ``typing.NamedTuple("K", [("a", T)])``: a class of tuples with those fields."""

    def make(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
        typename = only(args[0]) if args else None
        fields_arg = args[1] if len(args) > 1 else kw.get("fields" if pairs else "field_names")
        names = _field_names(fields_arg, pairs)
        if frame is None or names is None or not isinstance(typename, Const):
            return Outcome(returns=ANYTHING)
        defaults: list[VSet] = []
        if "defaults" in kw:
            given = exact_items_of(only(kw["defaults"]))
            if given is None:
                return Outcome(returns=ANYTHING)
            defaults = given
        name = str(typename.value)
        cls = ClassObj(name, frame.module, name, (External("builtins.tuple"),))
        cls.mro = (cls, External("builtins.tuple"))
        cls.flags.add("namedtuple")
        start = len(names) - len(defaults)
        cls.fields = [
            (field, defaults[i - start] if i >= start else None) for i, field in enumerate(names)
        ]
        return Outcome(returns=vset(cls))

    return make


def _defaultdict(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    """``collections.defaultdict(factory, ...)``: a dict whose missing keys the factory
    fills (``Container.factory``)."""
    made = only(_sequence_of("dict")(m, args[1:], kw, frame).returns)
    if not isinstance(made, Container):
        return Outcome(returns=ANYTHING)
    made.factory = args[0] if args else vset(Const(None))
    return Outcome(returns=vset(made))


def _chain_map(m: Machine, args: list[VSet], kw: dict[str, VSet], frame: Frame | None) -> Outcome:
    """``collections.ChainMap(*maps)``: a key is looked up in each map in turn. Read as
    their merge, not exact: a later change of a map may add a key."""
    made = Container("dict")
    made.exact = False
    for mapping in args:
        one = only(mapping)
        if not (isinstance(one, Container) and one.kind == "dict"):
            made.loose = ANYTHING
            continue
        known = {k for k, _ in made.entries}
        made.entries.extend((k, v) for k, v in one.entries if k not in known)
        made.loose = join(made.loose, one.loose) if not one.exact else made.loose
    return Outcome(returns=vset(made))


_SPECIAL: Final[dict[str, _Special]] = {
    "builtins.getattr": _getattr,
    "builtins.setattr": _setattr,
    "builtins.callable": _callable_builtin,
    "builtins.next": _next,
    "builtins.iter": _iter,
    "builtins.list": _sequence_of("list"),
    "builtins.tuple": _sequence_of("tuple"),
    "builtins.set": _sequence_of("set"),
    "builtins.dict": _sequence_of("dict"),
    "builtins.range": _range,
    "builtins.any": _any_all(True),
    "builtins.all": _any_all(False),
    "builtins.vars": _vars,
    "builtins.super": _super,
    "builtins.property": _property,
    "builtins.type": _type,
    "builtins.object": _object,
    "builtins.object.__new__": _object_new,
    "builtins.print": _nothing,
    "builtins.enumerate": _enumerate,
    "builtins.zip": _zip,
    "builtins.len": _len,
    "builtins.isinstance": _isinstance,
    "functools.wraps": _wraps,
    "functools.update_wrapper": _update_wrapper,
    "functools.singledispatch": _single_dispatch(method=False),
    "functools.singledispatchmethod": _single_dispatch(method=True),
    "types.SimpleNamespace": _simple_namespace,
    "types.MethodType": _method_type,
    "typing.cast": _cast,
    "typing_extensions.cast": _cast,
    "copy.copy": _copy,
    "copy.deepcopy": _copy,
    "itertools.chain": _chain,
    **dict.fromkeys(pytrees.UNFLATTEN, pytrees.tree_unflatten),
    **dict.fromkeys(pytrees.KEYSTR, pytrees.keystr),
    **{name: pytrees.register_functions(kind) for name, kind in pytrees.REGISTER_FUNCTIONS.items()},
    "itertools.chain.from_iterable": _chain_from_iterable,
    "collections.namedtuple": _namedtuple(pairs=False),
    "typing.NamedTuple": _namedtuple(pairs=True),
    "collections.defaultdict": _defaultdict,
    "collections.ChainMap": _chain_map,
    "importlib.import_module": _import_module,
    "contextlib.contextmanager": _contextmanager,
    "dataclasses.field": _field,
    "attrs.field": _field,
    "attr.ib": _field,
    "attr.attrib": _field,
    "attr.field": _field,
    "attrs.evolve": _evolve,
    "attr.evolve": _evolve,
    "dataclasses.replace": _evolve,
    "contextlib.suppress": _suppress,
    "operator.itemgetter": _itemgetter,
    "operator.attrgetter": _attrgetter,
    _ITEMGETTER: _get_item,
    _ATTRGETTER: _get_attribute,
}
