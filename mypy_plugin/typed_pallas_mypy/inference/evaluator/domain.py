"""The evaluator's values: what an expression may evaluate to, as Python would hold it.

Two kinds of value. **Plain values** are frozen records compared by what they hold: a
constant, a name in a library read as a table (``External``: jax, the standard library),
a JAX array, a bound method, a ``functools.partial``, a JAX transformation's result, a
Pallas kernel (an entry point's result), a params object, a device. **Heap objects** are
compared by identity, as Python compares objects: a module, a function (its definition,
the module it was defined in, the frame it closes over, its defaults), a class (its
namespace, its bases and method resolution order), an instance, a container, a
generator. An object's attributes (``attrs``) change where the program changes them.

A place holds a ``VSet``: the values it may hold (``frozenset``). ``UNKNOWN`` in a set
means "anything": it restricts nothing. A set larger than ``WIDEST`` becomes
``{UNKNOWN}``.

What it does not do: evaluate anything (``expressions``, ``calls`` and ``statements``
do), or know which library callable does what (``library``).
"""

from __future__ import annotations

import ast
import itertools
from dataclasses import dataclass, field
from typing import Final, TypeAlias

from typing_extensions import override


class Value:
    """Anything a place may hold."""

    __slots__ = ()


VSet: TypeAlias = frozenset[Value]

#: The most values a place keeps before it is "anything".
WIDEST: Final = 12


@dataclass(frozen=True, slots=True)
class Unknown(Value):
    """Anything: a value the evaluator does not know. It restricts nothing."""


UNKNOWN: Final = Unknown()
ANYTHING: Final[VSet] = frozenset({UNKNOWN})
NOTHING: Final[VSet] = frozenset()


@dataclass(frozen=True, slots=True)
class Const(Value):
    """A literal: a string, number, bool, ``None``, bytes, or a tuple of them."""

    value: object


NONE: Final = Const(None)
TRUE: Final = Const(True)
FALSE: Final = Const(False)


@dataclass(frozen=True, slots=True)
class External(Value):
    """A name of a module the evaluator does not read (jax, the standard library), by
    its fully qualified name: ``jax.jit``, ``functools.partial``, ``builtins.map``."""

    fullname: str


@dataclass(frozen=True, slots=True)
class Array(Value):
    """A JAX array or tracer: a leaf of a pytree; its shape when known
    (``jnp.zeros((8, 128))``)."""

    shape: tuple[int, ...] | None = None


ARRAY: Final = Array()


@dataclass(frozen=True, slots=True)
class Device(Value):
    """A device of the lowering platform the evaluation assumes (``jax.devices()[0]``)."""


DEVICE: Final = Device()


@dataclass(frozen=True, slots=True)
class DeviceKind(Value):
    """A device's ``device_kind`` under the assumed lowering ``platform`` (a model name
    such as "TPU v5 lite": only its markers are known, ``device_kinds``); ``lowered``:
    after ``.lower()``. ``method``: one of its string methods, unbound (``kind.startswith``)."""

    platform: str
    lowered: bool = False
    method: str = ""


@dataclass(frozen=True, slots=True)
class Devices(Value):
    """``jax.devices()``: at least one device, each of the assumed platform."""


@dataclass(frozen=True, slots=True)
class Params(Value):
    """A compiler-params object: its backend (``"mosaic_tpu"``, ``"triton"``...)."""

    backend: str


@dataclass(frozen=True, slots=True)
class Proof:
    """A piece of evidence of a kernel's backend (``evidence``): the backends it allows,
    what it is as written, and where (the module, line, and the function of the body it
    is in, "" for the kernel itself or the entry call; ``definition``: the function whose
    body it is in, the kernel's own too, "" for the entry call)."""

    backends: frozenset[str]
    what: str
    module: str
    line: int
    function: str = ""
    definition: str = ""


@dataclass(frozen=True, slots=True)
class Made(Value):
    """What a library constructor of evidence made (``pltpu.VMEM(...)``, a mesh, a grid
    spec): its fullname, its literal keywords, and its scratch keywords' values."""

    fullname: str
    literals: tuple[tuple[str, object], ...] = ()
    nested: tuple[tuple[str, VSet], ...] = ()


@dataclass(frozen=True, slots=True)
class Kernel(Value):
    """An entry point's result (``pl.pallas_call(...)``): calling it runs the kernel.

    ``backend``: of its params; "" for none, "?" for params not known. ``interpret``:
    True, False, or None when not known. ``backends``: what the entry point itself allows
    (``plgpu.kernel``: Mosaic GPU only), None for any. ``awaits_body``: the entry point
    was called without its body (``pl.kernel(out_shape=..., mesh=...)`` as a
    decorator): applied to a function, it gives the kernel itself. ``result_unused``: this
    run's result only orders items (a sort key's), so JAX may drop it as dead code.
    ``nested``: run inside a function JAX traces for one of its callables (``lax.cond``,
    ``jax.jit``, ``jax.vmap``...), which JAX drops whole when nothing uses its result.
    ``proofs``: what its body and its entry call's arguments prove (``evidence``)."""

    entry: str
    backend: str
    interpret: bool | None
    module: str
    line: int
    backends: frozenset[str] | None = None
    awaits_body: bool = False
    result_unused: bool = False
    nested: bool = False
    #: what its body and arguments prove about its backend (``evidence``)
    proofs: tuple[Proof, ...] = ()


@dataclass(frozen=True, slots=True)
class BoundMethod(Value):
    """A function bound to its first argument (an instance, or a class for a class
    method): calling it passes ``receiver`` first."""

    function: Value
    receiver: Value


@dataclass(frozen=True, slots=True)
class Partial(Value):
    """``functools.partial(func, *args, **keywords)``."""

    func: VSet
    args: tuple[VSet, ...]
    keywords: tuple[tuple[str, VSet], ...]


@dataclass(frozen=True, slots=True)
class Transformed(Value):
    """The result of a library callable that keeps a function (``jax.jit(f)``,
    ``jax.custom_vjp(f)``, ``functools.cache(f)``): calling it calls ``func``."""

    keeper: str
    func: VSet


@dataclass(frozen=True, slots=True)
class Derivative(Value):
    """The callable a derivative entry point returns (``jax.vjp``'s pullback,
    ``jax.linearize``'s linear function, ``jax.fwd_and_bwd``'s ``bwd``): calling it
    lowers ``func``'s derivative, the rules the call deferred (a ``custom_vjp``'s ``bwd``
    rule when ``transposes``, a ``custom_jvp``'s rule)."""

    keeper: str
    func: VSet
    transposes: bool


@dataclass(frozen=True, slots=True)
class Jaxpr(Value):
    """A jaxpr traced from ``func`` (``jax.make_jaxpr(f)(x)``, its ``.jaxpr``): evaluating
    it (``jaxpr_as_fun``, ``core.eval_jaxpr``) lowers what ``func`` traced with ``args``
    (None: not known)."""

    func: VSet
    args: tuple[VSet, ...] | None = None


@dataclass(frozen=True, slots=True)
class Fusion(Value):
    """A callable giving ``value`` (``fuser.fusible``'s inputs: a trivial ``Fusion``)."""

    value: VSet


@dataclass(frozen=True, slots=True)
class Context(Value):
    """A context manager of JAX's table (``jax.named_scope("n")``,
    ``pltpu.force_tpu_interpret_mode()``): ``interprets`` when every Pallas kernel traced
    under it runs in interpret mode. As a decorator it runs the function under it."""

    fullname: str
    interprets: bool


@dataclass(frozen=True, slots=True)
class Keeper(Value):
    """A decorator that keeps the function it is given (``jax.jit(static_argnames=...)``,
    ``functools.wraps(g)``, ``functools.lru_cache(maxsize=None)``)."""

    keeper: str


@dataclass(frozen=True, slots=True)
class Registrar(Value):
    """A method that registers a rule on ``owner`` and returns its argument
    (``f.defvjp``, ``f.defjvp``): nothing runs now; the machine keeps the rule
    (``Machine.rules``) for when ``owner`` is called under differentiation."""

    owner: Value
    method: str


@dataclass(frozen=True, slots=True)
class Descriptor(Value):
    """``staticmethod(f)``, ``classmethod(f)``, ``property(f)`` or ``partialmethod(f, *args)``
    (``func`` a ``Partial`` of them) in a class body."""

    kind: str  # "staticmethod", "classmethod", "property", "partialmethod"
    func: VSet


@dataclass(frozen=True, slots=True)
class ClassDecorator(Value):
    """A class decorator that returns the class (``dataclasses.dataclass(frozen=True)``);
    ``dataclass``: it makes the class a dataclass."""

    dataclass: bool


@dataclass(frozen=True, slots=True)
class ContainerMethod(Value):
    """A method of a container (``ops.append``, ``table.get``)."""

    container: Container
    name: str


@dataclass(frozen=True, slots=True)
class Super(Value):
    """``super()`` in a method of ``owner`` called on ``receiver``."""

    owner: ClassObj
    receiver: Value


@dataclass(frozen=True, slots=True)
class ContextManagerFactory(Value):
    """``contextlib.contextmanager(f)``: calling it gives a context manager whose
    ``__enter__`` runs ``f``'s generator to its first ``yield``."""

    func: VSet


@dataclass(frozen=True, slots=True)
class Namespace(Value):
    """A module's or a class's namespace as a mapping, seen live: ``vars(module)``,
    ``vars(cls)``, ``cls.__dict__`` (a class's values as its body bound them: a
    ``staticmethod`` object, not its function)."""

    owner: ModuleObj | ClassObj


# -- heap objects: compared by identity ------------------------------------------------


#: numbers heap objects and frames in the order they are made (``journal``: what existed
#: before a question began)
_SERIALS: Final = itertools.count()


def next_serial() -> int:
    """The serial the next heap object or frame will have (``journal``)."""
    return next(_SERIALS)


class Obj(Value):
    """A heap object: compared by identity; ``attrs`` change where the program sets them."""

    __slots__ = ("__weakref__", "attrs", "serial")

    def __init__(self) -> None:
        self.attrs: dict[str, VSet] = {}
        self.serial = next(_SERIALS)

    @override
    def __eq__(self, other: object) -> bool:
        return self is other

    @override
    def __hash__(self) -> int:
        return id(self)


class ModuleObj(Obj):
    """A module the evaluator reads: its namespace is what running its body binds."""

    __slots__ = ("done", "is_package", "name", "path", "tree")

    def __init__(self, name: str, path: str, is_package: bool, tree: ast.Module) -> None:
        super().__init__()
        self.name = name
        self.path = path
        self.is_package = is_package
        self.tree = tree
        #: its body has run to the end (a module still running is partly initialised)
        self.done = False

    @override
    def __repr__(self) -> str:
        return f"<module {self.name}>"


class FunctionObj(Obj):
    """A function (or lambda): its definition, where it was defined, the frame it closes
    over, its defaults, and the class whose body defined it (for ``super()``)."""

    __slots__ = (
        "_generator",
        "closure",
        "defaults",
        "kw_defaults",
        "module",
        "node",
        "owner",
        "qualname",
    )

    def __init__(
        self,
        node: ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda,
        module: ModuleObj,
        qualname: str,
        closure: Frame | None,
        defaults: tuple[VSet, ...],
        kw_defaults: dict[str, VSet],
    ) -> None:
        super().__init__()
        self.node = node
        self.module = module
        self.qualname = qualname
        self.closure = closure
        self.defaults = defaults
        self.kw_defaults = kw_defaults
        self.owner: ClassObj | None = None
        self._generator: bool | None = None

    @property
    def is_generator(self) -> bool:
        if self._generator is None:
            self._generator = not isinstance(self.node, ast.Lambda) and _yields(self.node)
        return self._generator

    @override
    def __repr__(self) -> str:
        return f"<function {self.module.name}.{self.qualname}>"


class ClassObj(Obj):
    """A class: its namespace (``attrs``), its bases as values and its method
    resolution order (project classes only; a library base ends it as ``External``)."""

    __slots__ = (
        "bases",
        "fields",
        "flags",
        "meta",
        "module",
        "mro",
        "name",
        "own_fields",
        "pytree",
        "qualname",
    )

    def __init__(self, name: str, module: ModuleObj, qualname: str, bases: tuple[Value, ...]):
        super().__init__()
        self.name = name
        self.module = module
        self.qualname = qualname
        self.bases = bases
        self.mro: tuple[Value, ...] = (self,)
        #: a dataclass's or NamedTuple's fields in order: (name, default or None)
        self.fields: list[tuple[str, VSet | None]] | None = None
        #: the fields its own body annotates (a dataclass decorator makes them fields)
        self.own_fields: list[tuple[str, VSet | None]] = []
        #: "enum", "namedtuple", "exception" ...
        self.flags: set[str] = set()
        #: its metaclass when the program defines it (``metaclass=Meta``, or a base's)
        self.meta: ClassObj | None = None
        #: how JAX flattens its instances, when it is registered as a pytree node
        #: (``pytrees.Registration``)
        self.pytree: object | None = None

    @override
    def __repr__(self) -> str:
        return f"<class {self.module.name}.{self.qualname}>"


class InstanceObj(Obj):
    """An instance of a class (a project class, or a library class as ``External``).
    An instance of a subclass of ``dict``, ``list`` or ``set`` is also that container:
    ``store`` holds its items (None for any other class). ``made_at``: where a class of
    the program was called to make it, for the notes (the call site's module and line,
    and the function that called it), or None."""

    __slots__ = ("cls", "made_at", "store")

    def __init__(self, cls: Value) -> None:
        super().__init__()
        self.cls = cls
        self.store: Container | None = None
        self.made_at: tuple[str, int, FunctionObj] | None = None

    @override
    def __repr__(self) -> str:
        return f"<{self.cls!r} instance>"


class Container(Obj):
    """A tuple, list, dict or set. ``items`` (a sequence's items in order, or a set's) or
    ``entries`` (a dict's keys and values) when every item is known (``exact``); a
    container changed in a way the evaluator cannot follow is not exact, and its items
    are then only what it may hold (``loose``)."""

    __slots__ = ("entries", "exact", "factory", "items", "kind", "loose", "values_known")

    def __init__(self, kind: str) -> None:
        super().__init__()
        self.kind = kind
        self.items: list[VSet] = []
        self.entries: list[tuple[Value, VSet]] = []
        self.exact = True
        #: what any item may be, once not exact
        self.loose: VSet = NOTHING
        #: not exact only in where its items are (stored under a key or index not known),
        #: not in what they are: every item is one of ``items``, ``entries`` or ``loose``
        self.values_known = False
        #: a ``collections.defaultdict``'s factory: called for a missing key
        self.factory: VSet | None = None

    def all_items(self) -> VSet:
        """Every value an item may be (a dict: its values)."""
        found: set[Value] = set(self.loose)
        for item in self.items:
            found |= item
        for _, value in self.entries:
            found |= value
        if not self.exact and not self.values_known:
            found.add(UNKNOWN)
        return frozenset(found)

    @override
    def __repr__(self) -> str:
        return f"<{self.kind} {self.items or self.entries}{'' if self.exact else ' ~'}>"


class GeneratorObj(Obj):
    """An iterator that runs code as it is consumed: a generator function's body bound
    to its arguments, a generator expression and the frame it reads (``gen_expr``), or
    an iterator of a library callable calling a function over items (``lazy``: the
    ``jax_api.ApiRow.iterator`` kind, "map", "filter"...; ``func``, ``source``, and
    ``initial`` for "accumulate"; ``read_by_python``: the function's results only decide
    which items are kept). ``position``: how many items were taken (``next``)."""

    __slots__ = (
        "bound",
        "frame",
        "func",
        "function",
        "gen_expr",
        "initial",
        "lazy",
        "position",
        "read_by_python",
        "source",
        "taking",
        "total",
    )

    def __init__(
        self,
        function: FunctionObj | None,
        bound: dict[str, VSet] | None,
        gen_expr: ast.GeneratorExp | None = None,
        frame: Frame | None = None,
        *,
        lazy: str = "",
        func: VSet = frozenset(),
        source: list[VSet] | None = None,
    ) -> None:
        super().__init__()
        self.function = function
        self.bound = bound
        self.gen_expr = gen_expr
        self.frame = frame
        self.lazy = lazy
        self.func = func
        self.source = source
        self.position = 0
        self.read_by_python = False
        self.initial: VSet | None = None
        #: "accumulate": the running total; "dropwhile": whether dropping has stopped
        self.total: VSet | None = None
        self.taking = False


class Frame:
    """Where names are bound while a body runs: a module's (its namespace), a
    function's, a class body's or a comprehension's. ``parent``: the frame of the
    enclosing function (closures); class bodies are skipped when a name is looked up."""

    __slots__ = (
        "function",
        "globals",
        "is_class",
        "module",
        "nonlocals",
        "parent",
        "qualname",
        "receiver",
        "serial",
        "vars",
    )

    def __init__(
        self,
        vars: dict[str, VSet],
        module: ModuleObj,
        parent: Frame | None,
        *,
        is_class: bool = False,
        function: FunctionObj | None = None,
        receiver: VSet = NOTHING,
        qualname: str = "",
    ) -> None:
        self.vars = vars
        self.module = module
        self.parent = parent
        self.is_class = is_class
        self.globals: set[str] = set()
        self.nonlocals: set[str] = set()
        self.function = function
        #: the first argument of the method this frame runs (``super()``)
        self.receiver = receiver
        self.qualname = qualname
        #: tells frames apart (call sites keep what they ran per frame)
        self.serial = next(_SERIALS)


@dataclass
class Flow:
    """The state of the path being run: whether it is still live (no ``return``,
    ``raise`` or ``break`` ended it) and the kernels it has run on every way here."""

    live: bool = True
    ran: frozenset[Kernel] = frozenset()
    #: kernels run on some way here
    may_ran: frozenset[Kernel] = frozenset()


@dataclass
class Outcome:
    """What a call does: the values it may return, the kernels it runs on every path
    that returns (``ran``) and on some path (``may_ran``), whether some path returns
    (``live``), and what it may raise."""

    returns: VSet = NOTHING
    ran: frozenset[Kernel] = frozenset()
    may_ran: frozenset[Kernel] = frozenset()
    live: bool = True
    raised: VSet = NOTHING
    yields: VSet = NOTHING
    #: kernels run before the first ``yield`` on every path that yields
    yield_ran: frozenset[Kernel] | None = None
    extra: dict[str, object] = field(default_factory=dict)


def _lowers_alike(kernel: Kernel) -> tuple[object, ...]:
    """What decides where a kernel may lower, not where it was made."""
    return (
        kernel.entry,
        kernel.backend,
        kernel.interpret,
        kernel.backends,
        kernel.awaits_body,
        kernel.result_unused,
        kernel.nested and kernel.result_unused,  # only a dead kernel's place decides
    )


def both_ran(a: frozenset[Kernel], b: frozenset[Kernel]) -> frozenset[Kernel]:
    """The kernels two paths both run: those of ``a`` that ``b`` runs too, or for which
    ``b`` runs one that lowers alike (a TPU kernel on each branch: every path runs a TPU
    kernel), ``a``'s standing for both."""
    if a == b or not a:
        return a
    alike = {_lowers_alike(k) for k in b}
    return frozenset(k for k in a if k in b or _lowers_alike(k) in alike)


def plain_class(cls: ClassObj) -> bool:
    """Whether ``cls``'s MRO is the program's classes alone (and ``object``), with no
    metaclass of the program's: ``isinstance`` and ``==`` are then decided by it alone
    (no ``typing.Protocol``, ``abc.ABC`` registration or library base)."""
    return cls.meta is None and all(
        isinstance(k, ClassObj) or k == External("builtins.object") for k in cls.mro
    )


def string_items(value: Value | None) -> list[str] | None:
    """The strings an exact tuple or list holds, every item one known string; None else."""
    if not (isinstance(value, Container) and value.exact and value.kind in ("tuple", "list")):
        return None
    out: list[str] = []
    for item in value.items:
        one = only(item)
        if not (isinstance(one, Const) and isinstance(one.value, str)):
            return None
        out.append(one.value)
    return out


def has_array(values: VSet) -> bool:
    return any(isinstance(v, Array) for v in values)


def shape_of(values: VSet) -> tuple[int, ...] | None:
    """The shape of the one array ``values`` holds, when known."""
    one = only(values)
    return one.shape if isinstance(one, Array) else None


def vset(*values: Value) -> VSet:
    return frozenset(values)


def join(*sets: VSet) -> VSet:
    """The values any of ``sets`` may hold."""
    found: set[Value] = set()
    for s in sets:
        found |= s
    if len(found) > WIDEST:
        return ANYTHING
    return frozenset(found)


def known(values: VSet) -> bool:
    """``values`` holds no ``UNKNOWN`` and at least one value."""
    return bool(values) and UNKNOWN not in values


def only(values: VSet) -> Value | None:
    """The one value ``values`` holds, if exactly one and known."""
    if len(values) == 1:
        (value,) = values
        if value is not UNKNOWN:
            return value
    return None


def _yields(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """``node`` is a generator function: a ``yield`` in its body, not in a nested scope."""
    stack: list[ast.AST] = list(node.body)
    while stack:
        current = stack.pop()
        if isinstance(current, (ast.Yield, ast.YieldFrom)):
            return True
        if isinstance(current, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            continue
        stack.extend(ast.iter_child_nodes(current))
    return False
