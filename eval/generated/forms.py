"""The grammar of generated programs: kernels at the bottom, guards at the top, forms between.

A **form** is one way Python or JAX lets a value reach a call: a name bound by an import,
a method of a class, an item of a container, a JAX transformation that traces its function.
Each form is one ``Form`` in ``FORMS``: a name, the family of the specification it comes
from, one or more variant templates, and what it can wrap (``accepts``). A template is the
text of one module of the kernel library (``string.Template``):

* ``$imp`` is the standard import of the thing below (``from PKG.mK import fK as inner``);
  a form that spells its own import uses ``$mod`` (the module below) and ``$name`` (the
  name it exports) instead;
* ``$out`` is the name this module must export: a callable taking the (8, 128) float32
  array ``x`` and returning one of the same shape;
* ``$pkg`` is the program's package, ``$level`` this module's level (for helper modules).

A line ``#>> path.py`` starts a helper file (relative to the package's folder): the text
after it, up to the next such line, is that file.

The forms come from the language reference (naming and binding, the data model), the
standard library (functools, operator, builtins, contextlib, dataclasses, enum, typing,
itertools, copy, types, abc), the
attrs package, and JAX's documented API (the rows of the JAX API table, jax_api.ROWS: what
calls, traces, keeps or only shape-evaluates a function, and the derivative and batching
rules, run under the transformation that runs them), not from what the checker knows: a
form the checker does not follow stays here, and the runner reports it as a miss. Adding a
form is adding one ``Form``.

Every row of that table (``ROWS``, ``CONTEXTS``, ``CLASS_DECORATORS``) is used by some
variant, or is in ``NOT_FORMS`` with the reason no program can use it to wrap a kernel call
that JAX judges on the CPU host (a kernel's body or index map, a hook JAX calls outside any
trace, hardware or a package the host does not have, a lowering JAX refuses at the kernel's
own platform); ``SPELLED_AS`` names the rows no code spells by name.
``tests/eval/test_generated.py`` checks both.
"""

from __future__ import annotations

import string
from collections.abc import Callable
from dataclasses import dataclass
from typing import Final


@dataclass(frozen=True)
class Below:
    """What a form would wrap: the kernel kind at the bottom and the forms on the way."""

    kernel: str
    forms: tuple[str, ...]


def _anything(below: Below) -> bool:
    return True


@dataclass(frozen=True)
class Form:
    """One way of reaching the thing below; each variant is a module template."""

    name: str
    family: str
    variants: tuple[str, ...]
    accepts: Callable[[Below], bool] = _anything

    def render(self, variant: int, *, pkg: str, level: int) -> dict[str, str]:
        """The files of this level: ``m{level}.py`` and any helper files, by relative path."""
        text = string.Template(self.variants[variant]).substitute(
            imp=f"from {pkg}.m{level - 1} import f{level - 1} as inner",
            mod=f"{pkg}.m{level - 1}",
            name=f"f{level - 1}",
            out=f"f{level}",
            pkg=pkg,
            level=level,
        )
        files: dict[str, str] = {}
        current = f"m{level}.py"
        lines: list[str] = []
        for line in text.splitlines():
            if line.startswith("#>> "):
                files[current] = "\n".join(lines).strip() + "\n"
                current, lines = line[4:].strip(), []
            else:
                lines.append(line)
        files[current] = "\n".join(lines).strip() + "\n"
        files[f"m{level}.py"] = HEADER + "\n" + files[f"m{level}.py"]
        return files


HEADER: Final = """\
import contextlib
import dataclasses
import enum
import functools
import operator
import sys
import typing

import jax
import jax.numpy as jnp
"""

_F: list[Form] = []


def form(
    name: str, family: str, *variants: str, accepts: Callable[[Below], bool] = _anything
) -> None:
    _F.append(Form(name, family, tuple(variants), accepts))


# -- naming and binding (the language reference, 4.2) -----------------------------------

form(
    "assignment",
    "binding",
    "$imp\n$out = inner\n",
    "$imp\n_fn = inner\n_alias = _fn\n$out = _alias\n",
    "$imp\n_a, _b = inner, None\n$out = _a\n",
    "$imp\n_fns = []\n_fns += [inner]\n$out = _fns[0]\n",
    "$imp\n(_walrus := inner)\n$out = _walrus\n",
)
form(
    "import spelling",
    "binding",
    "import $mod as _m\n\n\ndef $out(x):\n    return _m.$name(x)\n",
    "import $mod\n\n\ndef $out(x):\n    return $mod.$name(x)\n",
    "from $mod import $name\n\n\ndef $out(x):\n    return $name(x)\n",
    "def $out(x):\n    from $mod import $name as fn\n\n    return fn(x)\n",
    "import importlib\n\n_m = importlib.import_module('$mod')\n$out = _m.$name\n",
)
form(
    "conditional / fallback import",
    "binding",
    "try:\n    from $mod import $name as inner\nexcept ImportError:\n    inner = None\n\n\n"
    "def $out(x):\n    return inner(x)\n",
    "try:\n    import not_a_module_$level as _m  # type: ignore\nexcept ImportError:\n"
    "    import $mod as _m\n\n\ndef $out(x):\n    return _m.$name(x)\n",
    "if sys.version_info >= (3, 8):\n    from $mod import $name as inner\nelse:\n"
    "    inner = None\n\n\ndef $out(x):\n    return inner(x)\n",
)
form(
    "star import / __all__",
    "binding",
    "from $mod import *\n\n\ndef $out(x):\n    return $name(x)\n",
    "from $pkg.reexport$level import *\n\n\ndef $out(x):\n    return $name(x)\n"
    "#>> reexport$level.py\nfrom $mod import $name\n\n__all__ = ['$name']\n",
)
form(
    "def / lambda",
    "binding",
    "$imp\n\n\ndef $out(x):\n    return inner(x)\n",
    "$imp\n\n$out = lambda x: inner(x)\n",
    "$imp\n\n\ndef $out(x):\n    y = inner(x)\n    return y\n",
)
form(
    "parameter and default",
    "binding",
    "$imp\n\n\ndef $out(x, fn=inner):\n    return fn(x)\n",
    "$imp\n\n\ndef _apply(fn, x):\n    return fn(x)\n\n\ndef $out(x):\n    return _apply(inner, x)\n",
    "$imp\n\n\ndef _apply(x, *, fn):\n    return fn(x)\n\n\ndef $out(x):\n"
    "    return _apply(x, fn=inner)\n",
)
form(
    "for target",
    "binding",
    "$imp\n\n\ndef $out(x):\n    for fn in [inner]:\n        x = fn(x)\n    return x\n",
    "$imp\n\n\ndef $out(x):\n    for fn in (inner,):\n        return fn(x)\n    return x\n",
)
form(
    "with ... as",
    "binding",
    "$imp\n\n\nclass _Use:\n    def __enter__(self):\n        return inner\n\n"
    "    def __exit__(self, *exc):\n        return False\n\n\n"
    "def $out(x):\n    with _Use() as fn:\n        return fn(x)\n",
    "$imp\n\n\n@contextlib.contextmanager\ndef _use():\n    yield inner\n\n\n"
    "def $out(x):\n    with _use() as fn:\n        y = fn(x)\n    return y\n",
)
form(
    "except ... as",
    "binding",
    "$imp\n\n\nclass _Carry(Exception):\n    def __init__(self, fn):\n"
    "        super().__init__()\n        self.fn = fn\n\n\n"
    "def $out(x):\n    try:\n        raise _Carry(inner)\n    except _Carry as e:\n"
    "        return e.fn(x)\n",
)
form(
    "match capture",
    "binding",
    "$imp\n\n\ndef $out(x):\n    match (inner,):\n        case (fn,):\n            return fn(x)\n"
    "    return x\n",
    "$imp\n\n\ndef $out(x):\n    match {'op': inner}:\n        case {'op': fn}:\n"
    "            return fn(x)\n    return x\n",
    "$imp\n\n\ndef $out(x):\n    match inner:\n        case fn if callable(fn):\n"
    "            return fn(x)\n    return x\n",
)
form(
    "comprehension target",
    "binding",
    "$imp\n\n\ndef $out(x):\n    return [fn(x) for fn in [inner]][0]\n",
    "$imp\n\n\ndef $out(x):\n    return {k: fn for k, fn in [('a', inner)]}['a'](x)\n",
    "$imp\n\n\ndef $out(x):\n    return next(fn(x) for fn in (inner,))\n",
)
form(
    "global / nonlocal",
    "binding",
    "$imp\n\n_fn = None\n\n\ndef _install():\n    global _fn\n    _fn = inner\n\n\n"
    "_install()\n\n\ndef $out(x):\n    return _fn(x)\n",
    "$imp\n\n\ndef _make():\n    fn = None\n\n    def install():\n        nonlocal fn\n"
    "        fn = inner\n\n    install()\n\n    def run(x):\n        return fn(x)\n\n"
    "    return run\n\n\n$out = _make()\n",
)

# -- attributes of classes and instances (the data model, 3.3) ---------------------------

form(
    "methods: static / class / instance",
    "attribute",
    "$imp\n\n\nclass _Ops:\n    @staticmethod\n    def run(x):\n        return inner(x)\n\n\n"
    "def $out(x):\n    return _Ops.run(x)\n",
    "$imp\n\n\nclass _Ops:\n    @classmethod\n    def run(cls, x):\n        return inner(x)\n\n\n"
    "def $out(x):\n    return _Ops.run(x)\n",
    "$imp\n\n\nclass _Ops:\n    def run(self, x):\n        return inner(x)\n\n\n"
    "$out = _Ops().run\n",
    "$imp\n\n\nclass _Ops:\n    run = staticmethod(inner)\n\n\n$out = _Ops.run\n",
)
form(
    "inheritance / super()",
    "attribute",
    "$imp\n\n\nclass _Base:\n    def run(self, x):\n        return self.impl(x)\n\n"
    "    def impl(self, x):\n        return x\n\n\nclass _Sub(_Base):\n"
    "    def impl(self, x):\n        return inner(x)\n\n\ndef $out(x):\n    return _Sub().run(x)\n",
    "$imp\n\n\nclass _Base:\n    def run(self, x):\n        return inner(x)\n\n\n"
    "class _Sub(_Base):\n    def run(self, x):\n        return super().run(x)\n\n\n"
    "def $out(x):\n    return _Sub().run(x)\n",
)
form(
    "property / __init__ attribute / __call__",
    "attribute",
    "$imp\n\n\nclass _Holder:\n    @property\n    def fn(self):\n        return inner\n\n\n"
    "def $out(x):\n    return _Holder().fn(x)\n",
    "$imp\n\n\nclass _Op:\n    def __init__(self):\n        self.fn = inner\n\n"
    "    def __call__(self, x):\n        return self.fn(x)\n\n\n$out = _Op()\n",
    "$imp\n\n\nclass _Op:\n    def __init__(self, fn):\n        self._fn = fn\n\n"
    "    def apply(self, x):\n        return self._fn(x)\n\n\ndef $out(x):\n"
    "    return _Op(inner).apply(x)\n",
)
form(
    "dataclass / NamedTuple field",
    "attribute",
    "$imp\n\n\n@dataclasses.dataclass(frozen=True)\nclass _Cfg:\n"
    "    fn: typing.Callable = inner\n\n\ndef $out(x):\n    return _Cfg().fn(x)\n",
    "$imp\n\n\n@dataclasses.dataclass\nclass _Cfg:\n    fn: typing.Callable\n\n\n"
    "def $out(x):\n    return _Cfg(inner).fn(x)\n",
    "$imp\n\n\nclass _Pair(typing.NamedTuple):\n    fn: typing.Callable\n\n\n"
    "def $out(x):\n    return _Pair(inner).fn(x)\n",
)
form(
    "values changed after creation",
    "attribute",
    "$imp\n\n\nclass _Slot:\n    fn = None\n\n\n_Slot.fn = staticmethod(inner)\n\n\n"
    "def $out(x):\n    return _Slot.fn(x)\n",
    "$imp\n\n_table = {}\n_table['k'] = inner\n\n\ndef $out(x):\n    return _table['k'](x)\n",
    "$imp\n\n\nclass _Obj:\n    pass\n\n\n_o = _Obj()\nsetattr(_o, 'fn', inner)\n\n\n"
    "def $out(x):\n    return _o.fn(x)\n",
)

# -- containers, items, unpacking --------------------------------------------------------

form(
    "container item",
    "container",
    "$imp\n\n_OPS = {'add': inner}\n\n\ndef $out(x):\n    return _OPS['add'](x)\n",
    "$imp\n\n_OPS = [None, inner]\n\n\ndef $out(x):\n    return _OPS[1](x)\n",
    "$imp\n\n_OPS = (inner,)\n\n\ndef $out(x):\n    return _OPS[-1](x)\n",
    "$imp\n\n_OPS = {'a' + 'dd': inner}\n\n\ndef $out(x):\n    return _OPS['ad' + 'd'](x)\n",
    "$imp\n\n_first, *_rest = [inner, None]\n$out = _first\n",
)
form(
    "*args / **kwargs",
    "container",
    "$imp\n\n\ndef _call(fn, *args):\n    return fn(*args)\n\n\ndef $out(x):\n"
    "    return _call(inner, x)\n",
    "$imp\n\n\ndef _call(x, **kwargs):\n    return kwargs['fn'](x)\n\n\ndef $out(x):\n"
    "    return _call(x, fn=inner)\n",
    "$imp\n\n\ndef _call(*args, **kwargs):\n    return kwargs['fn'](*args)\n\n\n"
    "def $out(x):\n    return _call(*[x], **{'fn': inner})\n",
)

# -- closures, factories, decorators -------------------------------------------------------

form(
    "closure / factory",
    "function",
    "$imp\n\n\ndef _make():\n    def run(x):\n        return inner(x)\n\n    return run\n\n\n"
    "$out = _make()\n",
    "$imp\n\n\ndef _make(fn):\n    return lambda x: fn(x)\n\n\ndef $out(x):\n"
    "    return _make(inner)(x)\n",
    "$imp\n\n\ndef _make(fn):\n    def run(x):\n        return fn(x)\n\n    return run\n\n\n"
    "_built = _make(inner)\n\n\ndef $out(x):\n    return _built(x)\n",
)
form(
    "decorator",
    "function",
    "$imp\n\n\ndef _keep(fn):\n    return fn\n\n\n@_keep\ndef $out(x):\n    return inner(x)\n",
    "$imp\n\n\ndef _wrap(fn):\n    @functools.wraps(fn)\n    def wrapper(*args, **kwargs):\n"
    "        return fn(*args, **kwargs)\n\n    return wrapper\n\n\n@_wrap\ndef $out(x):\n"
    "    return inner(x)\n",
    "$imp\n\n_REGISTRY = {}\n\n\ndef _register(name):\n    def deco(fn):\n"
    "        _REGISTRY[name] = fn\n        return fn\n\n    return deco\n\n\n"
    "@_register('op')\ndef _impl(x):\n    return inner(x)\n\n\ndef $out(x):\n"
    "    return _REGISTRY['op'](x)\n",
    "$imp\n\n\ndef _with_arg(flag):\n    def deco(fn):\n        return fn\n\n    return deco\n\n\n"
    "@_with_arg(True)\ndef $out(x):\n    return inner(x)\n",
)

# -- class creation (the data model, 3.3.3) ----------------------------------------------

form(
    "class creation hooks",
    "class creation",
    "$imp\n\n\nclass _Base:\n    table = {}\n\n    def __init_subclass__(cls, **kwargs):\n"
    "        super().__init_subclass__(**kwargs)\n        _Base.table[cls.__name__] = cls\n\n\n"
    "class _Impl(_Base):\n    @staticmethod\n    def run(x):\n        return inner(x)\n\n\n"
    "def $out(x):\n    return _Base.table['_Impl'].run(x)\n",
    "$imp\n\n\nclass _Field:\n    def __set_name__(self, owner, name):\n"
    "        self.name = name\n\n    def __get__(self, obj, objtype=None):\n        return inner\n\n\n"
    "class _Owner:\n    fn = _Field()\n\n\ndef $out(x):\n    return _Owner().fn(x)\n",
    "$imp\n\n\nclass _Owner:\n    fn = staticmethod(inner)\n    alias = fn\n\n\n"
    "def $out(x):\n    return _Owner.alias(x)\n",
)
form(
    "enum member",
    "class creation",
    "$imp\n\n\nclass _Kind(enum.Enum):\n    ADD = 'add'\n\n    def run(self, x):\n"
    "        return inner(x)\n\n\ndef $out(x):\n    return _Kind.ADD.run(x)\n",
    "$imp\n\n\nclass _Kind(enum.Enum):\n    ADD = 'add'\n\n\n_BY_KIND = {_Kind.ADD: inner}\n\n\n"
    "def $out(x):\n    return _BY_KIND[_Kind('add')](x)\n",
)

# -- functools, operator, builtins that call their arguments -------------------------------

form(
    "functools",
    "functools",
    "$imp\n\n$out = functools.partial(inner)\n",
    "$imp\n\n\ndef _apply(fn, x):\n    return fn(x)\n\n\n$out = functools.partial(_apply, inner)\n",
    "$imp\n\n\ndef $out(x):\n    return functools.reduce(lambda acc, fn: fn(acc), [inner], x)\n",
    "$imp\n\n\n@functools.cache\ndef _get():\n    return inner\n\n\ndef $out(x):\n"
    "    return _get()(x)\n",
    "$imp\n\n\n@functools.lru_cache(maxsize=None)\ndef _get():\n    return inner\n\n\n"
    "def $out(x):\n    return _get()(x)\n",
    "$imp\n\n\n@functools.singledispatch\ndef $out(x):\n    return inner(x)\n",
    "$imp\n\n\ndef _wrapper(x):\n    return inner(x)\n\n\n"
    "$out = functools.update_wrapper(_wrapper, inner)\n",
)
form(
    "module attribute",
    "attribute",
    "import $pkg.dyn$level as _dyn\n\n\ndef $out(x):\n    return _dyn.kernel(x)\n"
    "#>> dyn$level.py\n$imp\n\n\ndef __getattr__(name):\n    return inner\n",
    "import $pkg.dyn$level as _dyn\n\n\ndef $out(x):\n    return _dyn.kernel(x)\n"
    "#>> dyn$level.py\nimport sys\n\n$imp\n\nsetattr(sys.modules[__name__], 'kernel', inner)\n",
    "import $mod as _m\n\n$out = vars(_m)['$name']\n",
)
form(
    "operator",
    "operator",
    "$imp\n\n\ndef $out(x):\n    return operator.call(inner, x)\n",
    "$imp\n\n\ndef $out(x):\n    return operator.itemgetter(0)([inner])(x)\n",
    "$imp\n\n\nclass _Box:\n    fn = staticmethod(inner)\n\n\ndef $out(x):\n"
    "    return operator.attrgetter('fn')(_Box)(x)\n",
)
form(
    "builtins calling their arguments",
    "builtins",
    "$imp\n\n\ndef $out(x):\n    return list(map(inner, [x]))[0]\n",
    "import $mod as _m\n\n\ndef $out(x):\n    return getattr(_m, '$name')(x)\n",
    "$imp\n\n\ndef $out(x):\n    return [y for y in map(inner, [x]) if y is not None][0]\n",
    "$imp\n\n\ndef $out(x):\n    return next(iter(filter(callable, [inner])))(x)\n",
    "$imp\n\n\ndef $out(x):\n    return sorted([inner(x)], key=lambda v: 0)[0]\n",
    "$imp\n\n\ndef $out(x):\n    return max([x], key=lambda v: inner(v).sum())\n",
)
form(
    "generator",
    "builtins",
    "$imp\n\n\ndef _gen():\n    yield inner\n\n\ndef $out(x):\n    return next(_gen())(x)\n",
    "$imp\n\n\ndef _gen(x):\n    yield inner(x)\n\n\ndef $out(x):\n    for y in _gen(x):\n"
    "        return y\n    return x\n",
)

# -- forms added after the evaluator was built, with no rule written for them ---------------
# The data model's special methods (3.3.2 attribute access, 3.3.7 containers, 3.3.8 numbers),
# the standard library's record and mapping types, and JAX's wrappers that keep a function.

form(
    "special methods: [], getattr, iter, +",
    "attribute",
    "$imp\n\n\nclass _Table:\n    def __getitem__(self, key):\n        return inner\n\n\n"
    "def $out(x):\n    return _Table()['fn'](x)\n",
    "$imp\n\n\nclass _Lazy:\n    def __getattr__(self, name):\n        return inner\n\n\n"
    "def $out(x):\n    return _Lazy().fn(x)\n",
    "$imp\n\n\nclass _Ops:\n    def __iter__(self):\n        return iter([inner])\n\n\n"
    "def $out(x):\n    for fn in _Ops():\n        x = fn(x)\n    return x\n",
    "$imp\n\n\nclass _Op:\n    def __add__(self, other):\n        return inner(other)\n\n\n"
    "def $out(x):\n    return _Op() + x\n",
)
form(
    "standard library records and mappings",
    "container",
    "import types\n\n$imp\n\n_ns = types.SimpleNamespace(fn=inner)\n\n\ndef $out(x):\n"
    "    return _ns.fn(x)\n",
    "import collections\n\n$imp\n\n_K = collections.namedtuple('_K', ['fn'])\n"
    "_k = _K(inner)\n\n\ndef $out(x):\n    return _k.fn(x)\n",
    "import collections\n\n$imp\n\n_table = collections.defaultdict(lambda: inner)\n\n\n"
    "def $out(x):\n    return _table['any'](x)\n",
    "$imp\n\n_fns = dict(fn=inner)\n\n\ndef $out(x):\n    return _fns['fn'](x)\n",
    "import collections\n\n$imp\n\n_chain = collections.ChainMap({}, {'fn': inner})\n\n\n"
    "def $out(x):\n    return _chain['fn'](x)\n",
)
form(
    "jax: Partial, named_scope, vectorize",
    "jax",
    "$imp\n\n$out = jax.tree_util.Partial(inner)\n",
    "$imp\n\n\ndef $out(x):\n    with jax.named_scope('op'):\n        return inner(x)\n",
    "$imp\n\n$out = jnp.vectorize(inner, signature='(m,n)->(m,n)')\n",
)

form(
    "metaclass / __new__ / __class_getitem__",
    "class creation",
    "$imp\n\n\nclass _Meta(type):\n    def __call__(cls, x):\n        return inner(x)\n\n\n"
    "class $out(metaclass=_Meta):\n    pass\n",
    "$imp\n\n\nclass $out:\n    def __new__(cls, x):\n        return inner(x)\n",
    "$imp\n\n\nclass _Ops:\n    def __class_getitem__(cls, key):\n        return inner\n\n\n"
    "def $out(x):\n    return _Ops['fn'](x)\n",
)
form(
    "dict and list methods",
    "container",
    "$imp\n\n_table = {}\n_table.setdefault('fn', inner)\n\n\ndef $out(x):\n"
    "    return _table['fn'](x)\n",
    "$imp\n\n_table = {'other': None}\n_table.update(fn=inner)\n\n\ndef $out(x):\n"
    "    return _table['fn'](x)\n",
    "$imp\n\n_table = {'other': None} | {'fn': inner}\n\n\ndef $out(x):\n"
    "    return _table['fn'](x)\n",
    "$imp\n\n_base = {'fn': inner}\n_table = {'other': None, **_base}\n\n\ndef $out(x):\n"
    "    return _table['fn'](x)\n",
    "$imp\n\n_ops = []\n_ops.extend([inner])\n\n\ndef $out(x):\n    return _ops[-1](x)\n",
)
form(
    "jax: tree_map_with_path, stop_gradient, custom_vmap",
    "jax",
    "$imp\n\n\ndef $out(x):\n"
    "    return jax.tree_util.tree_map_with_path(lambda path, v: inner(v), x)\n",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.stop_gradient(inner(x))\n",
    "$imp\n\n\n@jax.custom_batching.custom_vmap\ndef $out(x):\n    return inner(x)\n\n\n"
    "@$out.def_vmap\ndef _rule(axis_size, in_batched, x):\n    return inner(x), in_batched[0]\n",
)

# -- JAX's API (rows of mypy_plugin/typed_pallas_mypy/inference/jax_api.py) ---------------

form(
    "jax.jit",
    "jax",
    "$imp\n\n$out = jax.jit(inner)\n",
    "$imp\n\n\n@jax.jit\ndef $out(x):\n    return inner(x)\n",
)
form(
    "jax.vmap",
    "jax",
    "$imp\n\n\ndef $out(x):\n    return jax.vmap(inner)(x[None])[0]\n",
)
form(
    "jax.checkpoint / named_call",
    "jax",
    "$imp\n\n$out = jax.checkpoint(inner)\n",
    "$imp\n\n$out = jax.named_call(inner, name='op')\n",
)
form(
    "jax.custom_vjp / custom_jvp primal",
    "jax",
    "$imp\n\n\n@jax.custom_vjp\ndef $out(x):\n    return inner(x)\n\n\ndef _fwd(x):\n"
    "    return x, None\n\n\ndef _bwd(res, g):\n    return (g,)\n\n\n$out.defvjp(_fwd, _bwd)\n",
    "$imp\n\n\n@jax.custom_jvp\ndef $out(x):\n    return inner(x)\n\n\n@$out.defjvp\n"
    "def _jvp(primals, tangents):\n    return primals[0], tangents[0]\n",
)
form(
    "lax control flow",
    "jax",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.cond(x.sum() > 0, inner, lambda v: v, x)\n",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.switch(0, [inner, lambda v: v], x)\n",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.map(inner, x[None])[0]\n",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.scan(lambda c, r: (c, inner(r)), 0, x[None])[1][0]\n",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.fori_loop(0, 2, lambda i, v: inner(v), x)\n",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.while_loop(\n"
    "        lambda c: c[0] < 1, lambda c: (c[0] + 1, inner(c[1])), (0, x)\n    )[1]\n",
)
form(
    "jax.tree.map",
    "jax",
    "$imp\n\n\ndef $out(x):\n    return jax.tree.map(inner, x)\n",
    "$imp\n\n\ndef $out(x):\n    return jax.tree_util.tree_map(inner, [x])[0]\n",
    "$imp\n\n\ndef $out(x):\n    return jax.tree.map(inner, {'a': x})['a']\n",
)
form(
    "lax.platform_dependent",
    "jax",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.platform_dependent(x, tpu=inner, default=inner)\n",
    "$imp\n\n\ndef $out(x):\n"
    "    return jax.lax.platform_dependent(x, tpu=inner, default=lambda v: v)\n",
    "$imp\n\n\ndef $out(x):\n"
    "    return jax.lax.platform_dependent(x, cuda=inner, rocm=inner, default=lambda v: v)\n",
)
form(
    "jax.eval_shape (shape only)",
    "jax",
    "$imp\n\n\ndef $out(x):\n    jax.eval_shape(inner, x)\n    return x\n",
)

# -- control flow around the call ------------------------------------------------------------

form(
    "branch on a literal / configuration",
    "control flow",
    "$imp\n\n\ndef $out(x):\n    if True:\n        return inner(x)\n    return x\n",
    "$imp\n\n\ndef $out(x):\n    if False:\n        return inner(x)\n    return x\n",
    "$imp\n\n_CONFIG = {'use_kernel': True}\n\n\ndef $out(x):\n    if _CONFIG['use_kernel']:\n"
    "        return inner(x)\n    return x\n",
    "$imp\n\nUSE_KERNEL = False\n\n\ndef $out(x):\n    if USE_KERNEL:\n"
    "        return inner(x)\n    return x\n",
    "$imp\n\n\ndef $out(x, fast=True):\n    return inner(x) if fast else x\n",
)
form(
    "loop that may run zero times",
    "control flow",
    "$imp\n\n\ndef $out(x):\n    for _ in range(2):\n        x = inner(x)\n    return x\n",
    "$imp\n\n\ndef $out(x):\n    for _ in range(0):\n        x = inner(x)\n    return x\n",
    "$imp\n\n\ndef $out(x, steps=1):\n    while steps:\n        x = inner(x)\n"
    "        steps -= 1\n    return x\n",
)
form(
    "early return / raise / assert",
    "control flow",
    "$imp\n\n\ndef $out(x):\n    if x.ndim != 2:\n        return x\n    return inner(x)\n",
    "$imp\n\n\ndef $out(x):\n    if x.ndim > 4:\n        raise ValueError('rank')\n    return inner(x)\n",
    "$imp\n\n\ndef $out(x):\n    assert x.ndim == 2, 'rank'\n    return inner(x)\n",
    "$imp\n\n\ndef $out(x):\n    if x.ndim == 2:\n        return x\n    return inner(x)\n",
)
form(
    "try / except / finally",
    "control flow",
    "$imp\n\n\ndef $out(x):\n    try:\n        return inner(x)\n    except ImportError:\n"
    "        return x\n",
    "$imp\n\n\ndef $out(x):\n    try:\n        y = x\n    finally:\n        y = inner(x)\n"
    "    return y\n",
    "$imp\n\n\ndef $out(x):\n    try:\n        raise KeyError('k')\n    except KeyError:\n"
    "        return inner(x)\n",
)

# -- attrs (the attrs package: classes whose methods and fields attrs writes) --------------

form(
    "attrs: field holding the function",
    "attrs",
    "import attrs\n\n$imp\n\n\n@attrs.define\nclass _Cfg:\n    fn: typing.Callable = inner\n\n\n"
    "def $out(x):\n    return _Cfg().fn(x)\n",
    "import attrs\n\n$imp\n\n\n@attrs.define\nclass _Cfg:\n    fn: typing.Callable\n\n\n"
    "def $out(x):\n    return _Cfg(fn=inner).fn(x)\n",
    "import attr\n\n$imp\n\n\n@attr.s\nclass _Cfg:\n    fn = attr.ib(default=inner)\n\n\n"
    "def $out(x):\n    return _Cfg().fn(x)\n",
    "import attrs\n\n$imp\n\n\n@attrs.define\nclass _Cfg:\n    scale: int = 1\n"
    "    fn: typing.Callable = attrs.field(default=inner)\n\n\n"
    "def $out(x):\n    return _Cfg().fn(x)\n",
    "import attrs\n\n$imp\n\n\n@attrs.frozen\nclass _Cfg:\n    fn: typing.Callable\n\n\n"
    "_CFG = _Cfg(inner)\n\n\ndef $out(x):\n    return _CFG.fn(x)\n",
    "import attrs\n\n$imp\n\n\n@attrs.define\nclass _Cfg:\n"
    "    fns: list = attrs.field(factory=lambda: [inner])\n\n\n"
    "def $out(x):\n    return _Cfg().fns[0](x)\n",
    "import attrs\n\n$imp\n\n\n@attrs.frozen\nclass _Cfg:\n    fn: typing.Any = None\n\n\n"
    "def $out(x):\n    return attrs.evolve(_Cfg(), fn=inner).fn(x)\n",
    "import attr\n\n$imp\n\n\n@attr.s(auto_attribs=True, frozen=True)\nclass _Cfg:\n"
    "    fn: typing.Callable = attr.ib(default=inner)\n\n\n"
    "def $out(x):\n    return _Cfg().fn(x)\n",
)
form(
    "attrs: method calling the function",
    "attrs",
    "import attrs\n\n$imp\n\n\n@attrs.define\nclass _Op:\n    scale: float = 1.0\n\n"
    "    def run(self, x):\n        return inner(x)\n\n\ndef $out(x):\n    return _Op().run(x)\n",
    "import attrs\n\n$imp\n\n\n@attrs.frozen\nclass _Op:\n    name: str = 'op'\n\n"
    "    def __call__(self, x):\n        return inner(x)\n\n\n$out = _Op()\n",
    "import attr\n\n$imp\n\n\n@attr.s\nclass _Op:\n    fn = attr.ib()\n\n"
    "    def apply(self, x):\n        return self.fn(x)\n\n\ndef $out(x):\n"
    "    return _Op(inner).apply(x)\n",
    "import attrs\n\n$imp\n\n\n@attrs.define\nclass _Op:\n    fn: typing.Any = None\n\n"
    "    def __attrs_post_init__(self):\n        self.fn = inner\n\n\n"
    "def $out(x):\n    return _Op().fn(x)\n",
    "import attrs\n\n$imp\n\n\n@attrs.frozen\nclass _Op:\n    fn: typing.Callable\n\n"
    "    @classmethod\n    def make(cls):\n        return cls(inner)\n\n"
    "    def __call__(self, x):\n        return self.fn(x)\n\n\n$out = _Op.make()\n",
)

# -- JAX's derivative and batching rules (jax_api ROWS: Role.RULE, When.DIFFERENTIATION /
# BATCHING / TRANSPOSITION, and the transformations that run them). pallas_call has no JVP
# rule of its own: differentiation reaches the kernel through custom_vjp / custom_jvp rules.

_CVJP_FWD = (
    "$imp\n\n\n@jax.custom_vjp\ndef _op(x):\n    return x * 2.0\n\n\ndef _fwd(x):\n"
    "    y = inner(x)\n    return y, y\n\n\ndef _bwd(res, g):\n    return (g * res,)\n\n\n"
    "_op.defvjp(_fwd, _bwd)\n\n\n"
)
_CVJP_BWD = (
    "$imp\n\n\n@jax.custom_vjp\ndef _op(x):\n    return x * 2.0\n\n\ndef _fwd(x):\n"
    "    return x * 2.0, None\n\n\ndef _bwd(res, g):\n    return (inner(g),)\n\n\n"
    "_op.defvjp(_fwd, _bwd)\n\n\n"
)
form(
    "jax: custom_vjp rules under differentiation",
    "jax: differentiation rules",
    _CVJP_FWD + "def $out(x):\n    return jax.grad(lambda v: _op(v).sum())(x)\n",
    _CVJP_BWD + "def $out(x):\n    value, grad = jax.value_and_grad(lambda v: _op(v).sum())(x)\n"
    "    return grad + value\n",
    _CVJP_BWD + "def $out(x):\n    y, pullback = jax.vjp(_op, x)\n    return pullback(y)[0]\n",
    _CVJP_BWD + "def $out(x):\n    y, _pullback = jax.vjp(_op, x)\n    return y\n",
    _CVJP_FWD + "def $out(x):\n    return jax.jacrev(lambda v: _op(v).sum())(x)\n",
    _CVJP_BWD + "def $out(x):\n    return _op(x)\n",
    "$imp\n\n\n@functools.partial(jax.custom_vjp, nondiff_argnums=(0,))\n"
    "def _apply(fn, x):\n    return fn(x)\n\n\ndef _fwd(fn, x):\n    y = fn(x)\n    return y, y\n\n\n"
    "def _bwd(fn, res, g):\n    return (g * res,)\n\n\n_apply.defvjp(_fwd, _bwd)\n\n\n"
    "def $out(x):\n    return jax.grad(lambda v: _apply(inner, v).sum())(x)\n",
    "$imp\n\n\n@jax.custom_gradient\ndef _op(x):\n    y = inner(x)\n    return y, lambda g: g * y\n\n\n"
    "def $out(x):\n    return jax.grad(lambda v: _op(v).sum())(x)\n",
    _CVJP_FWD + "def $out(x):\n    return jax.jacobian(lambda v: _op(v).sum())(x)\n",
)
_CJVP_RULE = (
    "$imp\n\n\n@jax.custom_jvp\ndef _op(x):\n    return x * 2.0\n\n\n@_op.defjvp\n"
    "def _op_jvp(primals, tangents):\n    (x,), (t,) = primals, tangents\n    y = inner(x)\n"
    "    return y, t * y\n\n\n"
)
form(
    "jax: custom_jvp rules under differentiation",
    "jax: differentiation rules",
    _CJVP_RULE + "def $out(x):\n    y, t = jax.jvp(_op, (x,), (x,))\n    return y + t\n",
    _CJVP_RULE + "def $out(x):\n    y, f_jvp = jax.linearize(_op, x)\n    return y + f_jvp(x)\n",
    _CJVP_RULE + "def $out(x):\n    return jax.jacfwd(lambda v: _op(v).sum())(x)\n",
    _CJVP_RULE + "def $out(x):\n    return jax.grad(lambda v: _op(v).sum())(x)\n",
    "$imp\n\n\n@jax.custom_jvp\ndef _op(x):\n    return inner(x)\n\n\n@_op.defjvp\n"
    "def _op_jvp(primals, tangents):\n    (x,), (t,) = primals, tangents\n    y = _op(x)\n"
    "    return y, t * y\n\n\n"
    "def $out(x):\n    return jax.hessian(lambda v: _op(v).sum())(x).sum((0, 1))\n",
    "$imp\n\n\n@jax.custom_jvp\ndef _op(x):\n    return x * 2.0\n\n\n"
    "_op.defjvps(lambda t, ans, x: t * inner(x))\n\n\n"
    "def $out(x):\n    y, t = jax.jvp(_op, (x,), (x,))\n    return y + t\n",
    _CJVP_RULE + "def $out(x):\n    return _op(x)\n",
    "$imp\n\n\n@jax.custom_jvp\ndef _op(x):\n    return inner(x)\n\n\n@_op.defjvp\n"
    "def _op_jvp(primals, tangents):\n    (x,), (t,) = primals, tangents\n"
    "    return x * 2.0, t * 2.0\n\n\n"
    "def $out(x):\n    y, t = jax.jvp(_op, (x,), (x,))\n    return y + t\n",
)
form(
    "jax: solvers, linear_call and odeint",
    "jax: differentiation rules",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.custom_root(\n"
    "        lambda v: v - x, x, lambda f, x0: inner(x0), lambda g, y: y\n    )\n",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.custom_root(\n"
    "        lambda v: v - x, x, lambda f, x0: x0, lambda g, y: inner(y)\n    )\n",
    "$imp\n\n\ndef _solve(b):\n    return jax.lax.custom_root(\n"
    "        lambda v: v - b, b, lambda f, x0: x0, lambda g, y: y * inner(b)\n    )\n\n\n"
    "def $out(x):\n    return jax.grad(lambda v: _solve(v).sum())(x)\n",
    "$imp\n\n\ndef $out(x):\n"
    "    return jax.lax.custom_linear_solve(lambda v: v, x, lambda matvec, b: inner(b))\n",
    "$imp\n\n\ndef _solve(b):\n    return jax.lax.custom_linear_solve(\n"
    "        lambda v: v, b, lambda matvec, r: r, lambda vecmat, r: r * inner(b)\n    )\n\n\n"
    "def $out(x):\n    return jax.grad(lambda v: _solve(v).sum())(x)\n",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.custom_linear_solve(\n"
    "        lambda v: v, x, lambda matvec, r: r, lambda vecmat, r: inner(r)\n    )\n",
    "$imp\n\n\ndef $out(x):\n    return jax.custom_derivatives.linear_call(\n"
    "        lambda res, v: inner(v), lambda res, ct: ct, (), x\n    )\n",
    "import jax.experimental.ode\n\n$imp\n\n\ndef $out(x):\n"
    "    ts = jnp.array([0.0, 0.1], jnp.float32)\n"
    "    return jax.experimental.ode.odeint(lambda y, t: inner(y), x, ts)[-1]\n",
)
form(
    "jax: more differentiation entry points",
    "jax: differentiation rules",
    _CVJP_BWD + "def $out(x):\n    fwd, bwd = jax.fwd_and_bwd(_op, argnums=0)\n"
    "    y, res = fwd(x)\n    return bwd(res, y)\n",
    _CVJP_BWD + "def $out(x):\n    fwd, _bwd = jax.fwd_and_bwd(_op, argnums=0)\n"
    "    y, _res = fwd(x)\n    return y\n",
    "from jax.experimental import sparse\n\n"
    + _CVJP_FWD
    + "def $out(x):\n    return sparse.grad(lambda v: _op(v).sum())(x)\n",
    "import jax.scipy.optimize\n\n" + _CVJP_FWD + "def $out(x):\n"
    "    found = jax.scipy.optimize.minimize(\n"
    "        lambda v: _op(v.reshape(8, 128)).sum(), x.ravel(), method='BFGS',"
    " options={'maxiter': 1}\n    )\n    return found.x.reshape(8, 128)\n",
    _CVJP_FWD + "def $out(x):\n    return jax.grad(jax.checkpoint(lambda v: _op(v).sum()))(x)\n",
    "$imp\n\n\ndef _loss(v):\n    return (v * v).sum(), inner(jax.lax.stop_gradient(v))\n\n\n"
    "def $out(x):\n    grad, aux = jax.grad(_loss, has_aux=True)(x)\n    return grad + aux\n",
)
form(
    "jax: batching rules",
    "jax: batching",
    "$imp\n\n\n@jax.custom_batching.custom_vmap\ndef _op(x):\n    return x * 2.0\n\n\n"
    "@_op.def_vmap\ndef _rule(axis_size, in_batched, xs):\n"
    "    return jax.lax.map(inner, xs), True\n\n\n"
    "def $out(x):\n    return jax.vmap(_op)(x[None])[0]\n",
    "$imp\n\n\n@jax.custom_batching.custom_vmap\ndef _op(x):\n    return x * 2.0\n\n\n"
    "@_op.def_vmap\ndef _rule(axis_size, in_batched, xs):\n"
    "    return jax.lax.map(inner, xs), True\n\n\n"
    "def $out(x):\n    return _op(x)\n",
    "$imp\n\n\n@jax.custom_batching.custom_vmap\ndef _op(x):\n    return inner(x)\n\n\n"
    "@_op.def_vmap\ndef _rule(axis_size, in_batched, xs):\n    return xs * 2.0, True\n\n\n"
    "def $out(x):\n    return jax.vmap(_op)(x[None])[0]\n",
    "$imp\n\n_seq = jax.custom_batching.sequential_vmap(inner)\n\n\n"
    "def $out(x):\n    return jax.vmap(_seq)(x[None])[0]\n",
    "$imp\n\n\ndef $out(x):\n    return jax.vmap(inner, in_axes=1, out_axes=1)(x[:, None])[:, 0]\n",
    "$imp\n\n\ndef $out(x):\n    return jax.vmap(jax.vmap(inner))(x[None, None])[0, 0]\n",
    "$imp\n\n\ndef $out(x):\n    return jax.vmap(lambda v: inner(x) + v)(x[None])[0]\n",
    "$imp\n\n\ndef $out(x):\n"
    "    return jax.vmap(inner, axis_name='batch', axis_size=1)(x[None])[0]\n",
)

# -- JAX: tracing without lowering, host callbacks, contexts --------------------------------

form(
    "jax: trace only (make_jaxpr, eval_shape...)",
    "jax: more control flow and tracing",
    "$imp\n\n\ndef $out(x):\n    jax.make_jaxpr(inner)(x)\n    return x\n",
    "$imp\n\n\ndef $out(x):\n    shape = jax.eval_shape(inner, x)\n"
    "    return jnp.zeros(shape.shape, shape.dtype) + x\n",
    "$imp\n\n\ndef $out(x):\n    jax.linear_transpose(inner, x)\n    return x\n",
    "from jax.experimental import pallas as pl\n\n$imp\n\n\ndef $out(x):\n"
    "    pl.estimate_cost(inner, x)\n    return x\n",
    "import io\n\nimport jax.ad_checkpoint\n\n$imp\n\n\n@jax.custom_vjp\ndef _op(x):\n    return inner(x)\n\n\n"
    "_op.defvjp(lambda x: (inner(x), None), lambda res, g: (g,))\n\n\n"
    "def $out(x):\n    with contextlib.redirect_stdout(io.StringIO()):\n"
    "        jax.ad_checkpoint.print_saved_residuals(_op, x)\n    return x\n",
    "import jax.extend\n\n$imp\n\n\ndef $out(x):\n    closed = jax.make_jaxpr(inner)(x)\n"
    "    return jax.extend.core.jaxpr_as_fun(closed)(x)[0]\n",
    "$imp\n\n\ndef $out(x):\n    fn, consts = jax.closure_convert(inner, x)\n"
    "    return fn(x, *consts)\n",
    "$imp\n\n\ndef $out(x):\n    _jaxpr, shape = jax.make_jaxpr(inner, return_shape=True)(x)\n"
    "    return jnp.zeros(shape.shape, shape.dtype) + x\n",
)
form(
    "jax: host callbacks",
    "jax: more control flow and tracing",
    "$imp\n\n\ndef _on_host(v):\n    return jax.pure_callback(\n"
    "        inner, jax.ShapeDtypeStruct(v.shape, v.dtype), v, vmap_method='sequential'\n    )\n\n\n"
    "def $out(x):\n    return jax.lax.platform_dependent(x, cpu=_on_host, default=lambda v: v * 2.0)\n",
    "from jax.experimental import io_callback\n\n$imp\n\n\ndef _on_host(v):\n"
    "    return io_callback(inner, jax.ShapeDtypeStruct(v.shape, v.dtype), v)\n\n\n"
    "def $out(x):\n    return jax.lax.platform_dependent(x, cpu=_on_host, default=lambda v: v * 2.0)\n",
    "$imp\n\n\ndef _on_host(v):\n    jax.debug.callback(lambda a: inner(a), v)\n    return v\n\n\n"
    "def $out(x):\n    return jax.lax.platform_dependent(x, cpu=_on_host, default=inner)\n",
    "$imp\n\n\ndef $out(x):\n    shape = jax.ShapeDtypeStruct(x.shape, x.dtype)\n"
    "    jax.eval_shape(lambda v: jax.pure_callback(inner, shape, v), x)\n    return inner(x)\n",
    "$imp\n\n\ndef $out(x):\n    shape = jax.ShapeDtypeStruct(x.shape, x.dtype)\n"
    "    jax.make_jaxpr(lambda v: jax.pure_callback(inner, shape, v))(x)\n    return x\n",
)
form(
    "jax: contexts and scopes",
    "jax: more control flow and tracing",
    "$imp\n\n\ndef $out(x):\n    with jax.ensure_compile_time_eval():\n        return inner(x)\n",
    "$imp\n\n\n@jax.ensure_compile_time_eval()\ndef $out(x):\n    return inner(x)\n",
    "$imp\n\n\ndef $out(x):\n    with jax.disable_jit():\n        return inner(x)\n",
    "$imp\n\n\ndef $out(x):\n    with jax.default_device(jax.devices('cpu')[0]):\n"
    "        return inner(x)\n",
    "$imp\n\n\n@jax.disable_jit()\ndef $out(x):\n    return inner(x)\n",
    "$imp\n\n\n@jax.named_scope('op')\ndef $out(x):\n    return inner(x)\n",
    "$imp\n\n\ndef $out(x):\n    with jax.named_scope('outer'), jax.named_scope('inner'):\n"
    "        y = inner(x)\n    return y\n",
)

# -- JAX: more lax control flow ----------------------------------------------------------

form(
    "lax: cond, switch and loops, other spellings",
    "jax: more control flow and tracing",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.cond(x.sum() > 0, inner, lambda v: v, operand=x)\n",
    "$imp\n\n\ndef $out(x):\n"
    "    return jax.lax.cond(x.sum() > 0, true_fun=lambda v: v, false_fun=inner, operand=x)\n",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.cond(False, inner, lambda v: v, x)\n",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.switch(5, (lambda v: v, inner), x)\n",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.fori_loop(0, 0, lambda i, v: inner(v), x)\n",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.while_loop(\n"
    "        lambda c: (c[0] < 1) & (inner(c[1]).sum() > -1.0),\n"
    "        lambda c: (c[0] + 1, c[1]),\n        (0, x),\n    )[1]\n",
    "$imp\n\n\ndef $out(x):\n"
    "    return jax.lax.scan(lambda c, _: (inner(c), None), x, None, length=2)[0]\n",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.map(inner, x[None], batch_size=1)[0]\n",
)
form(
    "lax: associative_scan, reduce and scatter_apply",
    "jax: more control flow and tracing",
    "$imp\n\n\ndef $out(x):\n    return jax.lax.associative_scan(\n"
    "        lambda a, b: jax.lax.map(inner, a) + b, jnp.stack([x, x])\n    )[-1]\n",
    "$imp\n\n\ndef $out(x):\n"
    "    return jax.lax.associative_scan(lambda a, b: jax.lax.map(inner, a) + b, x[None])[0]\n",
    "$imp\n\n\ndef _add(a, b):\n    return a + b + inner(jnp.zeros((8, 128), jnp.float32))[0, 0]\n\n\n"
    "def $out(x):\n    return x + jax.lax.reduce(x, jnp.float32(0), _add, (0,))\n",
    "$imp\n\n\ndef _add(a, b):\n    return a + b + inner(jnp.zeros((8, 128), jnp.float32))[0, 0]\n\n\n"
    "def $out(x):\n"
    "    return jax.lax.reduce_window(x, jnp.float32(0), _add, (1, 1), (1, 1), 'VALID')\n",
    "$imp\n\n\ndef _bump(v):\n    return v + inner(jnp.zeros((8, 128), jnp.float32))[0, 0]\n\n\n"
    "def $out(x):\n    return x.at[0, 0].apply(_bump)\n",
    "$imp\n\n\ndef _bump(v):\n    return v + inner(jnp.zeros((8, 128), jnp.float32))[0, 0]\n\n\n"
    "def $out(x):\n    dnums = jax.lax.ScatterDimensionNumbers(\n"
    "        update_window_dims=(), inserted_window_dims=(0, 1),"
    " scatter_dims_to_operand_dims=(0, 1)\n    )\n"
    "    return jax.lax.scatter_apply(x, jnp.array([0, 0]), _bump, dnums)\n",
)

# -- jax.numpy functions that call the function they are given ------------------------------

form(
    "jax.numpy functions calling a function",
    "jax: more control flow and tracing",
    "$imp\n\n\ndef $out(x):\n"
    "    return jnp.piecewise(x, [x > 0], [lambda v: v + inner(x)[0, 0], lambda v: v])\n",
    "$imp\n\n\ndef $out(x):\n    return jnp.apply_along_axis(\n"
    "        lambda col: inner(col.reshape(8, 128)).ravel(), 0, x.reshape(-1, 1)\n"
    "    ).reshape(8, 128)\n",
    "$imp\n\n\ndef $out(x):\n    return jnp.apply_over_axes(lambda a, axis: inner(a), x, [0])\n",
    "$imp\n\n\ndef $out(x):\n    return jnp.apply_over_axes(lambda a, axis: inner(a), x, [])\n",
    "$imp\n\n\ndef $out(x):\n"
    "    return jnp.fromfunction(lambda i: inner(x + i), (1,), dtype=jnp.float32)[0]\n",
    "$imp\n\n\ndef $out(x):\n    def mode(vector, pad_width, iaxis, kwargs):\n"
    "        return vector + inner(x)[0, 0]\n\n    return jnp.pad(x, 1, mode=mode)[1:-1, 1:-1]\n",
    "$imp\n\n\ndef $out(x):\n    return jnp.frompyfunc(lambda v: v + inner(x)[0, 0], 1, 1)(x)\n",
    "$imp\n\n\ndef $out(x):\n    return jnp.ufunc(lambda v: v + inner(x)[0, 0], 1, 1)(x)\n",
    "$imp\n\n\ndef $out(x):\n    return jnp.vectorize(\n"
    "        lambda v, n: inner(v), excluded={1}, signature='(m,n)->(m,n)'\n    )(x, 0)\n",
)

# -- JAX: more wrappers that keep a function --------------------------------------------

form(
    "jax: more wrappers that keep a function",
    "jax",
    "$imp\n\n$out = jax.checkpoint(inner, policy=jax.checkpoint_policies.nothing_saveable)\n",
    "$imp\n\n\n@functools.partial(jax.checkpoint, policy=jax.checkpoint_policies.dots_saveable)\n"
    "def $out(x):\n    return inner(x)\n",
    "$imp\n\n$out = jax.remat(inner, prevent_cse=False)\n",
    "$imp\n\n$out = jax.profiler.annotate_function(inner, name='op')\n",
    "$imp\n\n$out = jax.lax.composite(lambda v: inner(v), name='generated.op')\n",
    "from jax.experimental import checkify\n\n$imp\n\n\ndef $out(x):\n"
    "    _err, y = checkify.checkify(inner)(x)\n    return y\n",
    "from jax.experimental.pjit import pjit\n\n$imp\n\n$out = pjit(inner)\n",
    "from jax.experimental import sparse\n\n$imp\n\n$out = sparse.sparsify(inner)\n",
    "from jax.experimental import scheduling_groups\n\n$imp\n\n"
    "$out = scheduling_groups.scheduling_group('g')(inner)\n",
    "from jax.experimental import scheduling_groups\n\n$imp\n\n"
    "$out = scheduling_groups.xla_metadata_call(inner, tag='op')\n",
    "from jax.sharding import PartitionSpec as P\n\n$imp\n\n\ndef $out(x):\n"
    "    return jax.shard_map(inner, in_specs=P(), out_specs=P(), check_vma=False)(x)\n",
)

# -- jax.tree: reductions and hooks ------------------------------------------------------

form(
    "jax.tree: reduce, several trees, is_leaf",
    "jax",
    "$imp\n\n\ndef $out(x):\n    return jax.tree.reduce(lambda a, b: inner(a + b), [x, x])\n",
    "$imp\n\n\ndef $out(x):\n    return jax.tree.reduce(lambda a, b: inner(b), [x])\n",
    "$imp\n\n\ndef $out(x):\n    return jax.tree_util.tree_reduce(lambda a, b: inner(b), [x], x)\n",
    "$imp\n\n\ndef $out(x):\n"
    "    return jax.tree.reduce_associative(lambda a, b: inner(a) + b, (x, x))\n",
    "$imp\n\n\ndef $out(x):\n    return jax.tree.map(lambda a, b: inner(a) + b, x, x)\n",
    "$imp\n\n\ndef $out(x):\n    return jax.tree.map(lambda v: v, x, is_leaf=lambda v: inner(v) is not None)\n",
    "$imp\n\n\ndef $out(x):\n    return jax.tree.map_with_path(lambda path, v: inner(v), {'a': x})['a']\n",
)

# -- forms added to measure generality: written from the standard library's documentation
# (itertools; copy and types; typing and abc), measured before the checker was touched -------

form(
    "itertools calling or holding the function",
    "standard library",
    "import itertools\n\n$imp\n\n\ndef $out(x):\n    return list(itertools.starmap(inner, [(x,)]))[0]\n",
    "import itertools\n\n$imp\n\n\ndef $out(x):\n"
    "    return list(itertools.accumulate([x, x], lambda a, b: inner(a) + b))[-1]\n",
    "import itertools\n\n$imp\n\n\ndef $out(x):\n"
    "    return next(itertools.dropwhile(lambda v: inner(v) is None, [x]))\n",
    "import itertools\n\n$imp\n\n\ndef $out(x):\n"
    "    return [f for f in itertools.chain([inner], [])][0](x)\n",
    "import itertools\n\n$imp\n\n\ndef $out(x):\n"
    "    return next(itertools.filterfalse(lambda f: f is None, [inner]))(x)\n",
)
form(
    "copy and types",
    "standard library",
    "import copy\n\n$imp\n\n\nclass _Op:\n    def run(self, x):\n        return inner(x)\n\n\n"
    "def $out(x):\n    return copy.copy(_Op()).run(x)\n",
    "import copy\n\n$imp\n\n\ndef $out(x):\n    return copy.copy({'fn': inner})['fn'](x)\n",
    "import types\n\n$imp\n\n\ndef $out(x):\n"
    "    return types.MethodType(lambda self, v: inner(v), object())(x)\n",
    "import copy\n\n$imp\n\n\ndef $out(x):\n    return copy.copy(functools.partial(inner))(x)\n",
)
form(
    "typing and abc",
    "standard library",
    "$imp\n\n\ndef $out(x):\n    return typing.cast(typing.Callable[..., typing.Any], inner)(x)\n",
    "$imp\n\nif typing.TYPE_CHECKING:\n    _fn = None\nelse:\n    _fn = inner\n\n\n"
    "def $out(x):\n    return _fn(x)\n",
    "import abc\n\n$imp\n\n\nclass _Base(abc.ABC):\n    @abc.abstractmethod\n"
    "    def run(self, x): ...\n\n    def __call__(self, x):\n        return self.run(x)\n\n\n"
    "class _Impl(_Base):\n    def run(self, x):\n        return inner(x)\n\n\n$out = _Impl()\n",
    "$imp\n\n\nclass _Runs(typing.Protocol):\n    def __call__(self, x): ...\n\n\n"
    "_fn: _Runs = inner\n$out = _fn\n",
    "$imp\n\n\n@typing.overload\ndef $out(x: int) -> int: ...\n\n\n@typing.overload\n"
    "def $out(x: object) -> object: ...\n\n\ndef $out(x):\n    return inner(x)\n",
)

form(
    "jax.tree: functions as leaves, flatten and registration",
    "jax",
    "$imp\n\n\ndef $out(x):\n    return jax.tree.leaves([inner])[0](x)\n",
    "$imp\n\n\ndef $out(x):\n    leaves, treedef = jax.tree.flatten({'fn': inner})\n"
    "    return jax.tree.unflatten(treedef, leaves)['fn'](x)\n",
    "$imp\n\n\ndef $out(x):\n    return jax.tree.map(lambda f: f, (inner,))[0](x)\n",
    "$imp\n\n\n@jax.tree_util.register_pytree_node_class\nclass _Box:\n"
    "    def __init__(self, fn):\n        self.fn = fn\n\n    def tree_flatten(self):\n"
    "        return (), self.fn\n\n    @classmethod\n    def tree_unflatten(cls, fn, children):\n"
    "        return cls(fn)\n\n\ndef $out(x):\n    return jax.tree.map(lambda v: v, _Box(inner)).fn(x)\n",
)

# -- forms written to cover the rows of JAX's table (jax_api.ROWS, CONTEXTS,
# CLASS_DECORATORS) that no form used yet, from JAX's and Python's documentation; the rows
# no program can use to wrap a kernel call are in NOT_FORMS, each with its reason ----------

form(
    "jax.tree: paths, structure and broadcast",
    "jax",
    "$imp\n\n\ndef $out(x):\n    pairs, treedef = jax.tree.flatten_with_path({'w': x})\n"
    "    return jax.tree.unflatten(treedef, [inner(v) for _path, v in pairs])['w']\n",
    "$imp\n\n\ndef $out(x):\n    named = {\n        jax.tree_util.keystr(path): inner(v)\n"
    "        for path, v in jax.tree_util.tree_leaves_with_path({'w': x})\n    }\n"
    "    return named[\"['w']\"]\n",
    "$imp\n\n\ndef $out(x):\n    treedef = jax.tree.structure({'w': x})\n"
    "    return jax.tree.unflatten(treedef, [inner(x)])['w']\n",
    "$imp\n\n\ndef $out(x):\n    tree = {'w': x}\n    scales = jax.tree.broadcast(2.0, tree)\n"
    "    return jax.tree.map(lambda s, v: inner(v) * s, scales, tree)['w']\n",
    "$imp\n\n\ndef $out(x):\n    if jax.tree.all(jax.tree.map(lambda v: v.ndim == 2, {'w': x})):\n"
    "        return inner(x)\n    return x\n",
    "$imp\n\n\ndef $out(x):\n    leaves, treedef = jax.tree_util.tree_flatten({'fn': inner})\n"
    "    return jax.tree_util.tree_unflatten(treedef, leaves)['fn'](x)\n",
)
form(
    "jax.tree: is_leaf and reductions",
    "jax",
    "$imp\n\n\ndef _is_array(v):\n    return isinstance(v, jax.Array) and inner(v) is not None\n\n\n"
    "def $out(x):\n    pairs, _treedef = jax.tree_util.tree_flatten_with_path({'w': x}, _is_array)\n"
    "    return pairs[0][1]\n",
    "$imp\n\n\ndef $out(x):\n    found = jax.tree.leaves_with_path(\n"
    "        {'w': x}, is_leaf=lambda v: isinstance(v, jax.Array) and inner(v) is not None\n"
    "    )\n    return found[0][1]\n",
    "$imp\n\n\ndef $out(x):\n    leaves = jax.tree_util.tree_leaves(\n"
    "        [x], lambda v: isinstance(v, jax.Array) and inner(v) is not None\n    )\n"
    "    return leaves[0]\n",
    "$imp\n\n\ndef $out(x):\n"
    "    treedef = jax.tree_util.tree_structure(x, is_leaf=lambda v: inner(v) is not None)\n"
    "    return jax.tree_util.tree_unflatten(treedef, [x])\n",
    "$imp\n\n\ndef $out(x):\n    full = jax.tree_util.tree_broadcast(\n"
    "        [x], [[x, x]], is_leaf=lambda v: isinstance(v, jax.Array) and inner(v) is not None\n"
    "    )\n    return full[0][1]\n",
    "$imp\n\n\ndef $out(x):\n"
    "    ok = jax.tree_util.tree_all([x.ndim == 2], is_leaf=lambda node: inner(x) is None)\n"
    "    return x if ok else -x\n",
    "$imp\n\n\ndef $out(x):\n    if jax.tree_util.all_leaves(\n"
    "        [x], is_leaf=lambda v: isinstance(v, jax.Array) and inner(v) is not None\n    ):\n"
    "        return x\n    return -x\n",
    "$imp\n\n\ndef $out(x):\n"
    "    return jax.tree_util.tree_reduce_associative(lambda a, b: inner(a) + b, (x, x))\n",
)
form(
    "jax.tree_util: registering node classes",
    "jax",
    "$imp\n\n\nclass _Box:\n    def __init__(self, fn):\n        self.fn = fn\n\n\n"
    "jax.tree_util.register_pytree_node(\n"
    "    _Box, lambda b: ((), b.fn), lambda fn, _children: _Box(fn)\n)\n\n\n"
    "def $out(x):\n    return jax.tree.map(lambda v: v, _Box(inner)).fn(x)\n",
    "$imp\n\n\nclass _Op:\n    def __init__(self, value, fn):\n        self.value = value\n"
    "        self.fn = fn\n\n\ndef _flatten(op):\n    return (op.value,), op.fn\n\n\n"
    "def _unflatten(fn, children):\n    return _Op(children[0], fn)\n\n\n"
    "jax.tree_util.register_pytree_node(_Op, _flatten, _unflatten)\n\n\n"
    "def $out(x):\n    op = jax.tree.map(lambda v: v * 1.0, _Op(x, inner))\n"
    "    return op.fn(op.value)\n",
    "$imp\n\n\nclass _Op:\n    def __init__(self, value, fn):\n        self.value = value\n"
    "        self.fn = fn\n\n\njax.tree_util.register_pytree_with_keys(\n    _Op,\n"
    "    lambda op: (((jax.tree_util.GetAttrKey('value'), op.value),), op.fn),\n"
    "    lambda fn, children: _Op(children[0], fn),\n)\n\n\n"
    "def $out(x):\n    op = jax.tree_util.tree_map_with_path(lambda path, v: v, _Op(x, inner))\n"
    "    return op.fn(op.value)\n",
    "$imp\n\n\n@jax.tree_util.register_pytree_with_keys_class\nclass _Op:\n"
    "    def __init__(self, value, fn):\n        self.value = value\n        self.fn = fn\n\n"
    "    def tree_flatten_with_keys(self):\n"
    "        return ((jax.tree_util.GetAttrKey('value'), self.value),), self.fn\n\n"
    "    @classmethod\n    def tree_unflatten(cls, fn, children):\n"
    "        return cls(children[0], fn)\n\n    def __call__(self):\n"
    "        return self.fn(self.value)\n\n\n"
    "def $out(x):\n    return jax.tree.map(lambda v: v, _Op(x, inner))()\n",
    "$imp\n\n\n@jax.tree_util.register_dataclass\n@dataclasses.dataclass(frozen=True)\n"
    "class _Op:\n    value: jax.Array\n"
    "    fn: typing.Callable = dataclasses.field(metadata=dict(static=True))\n\n\n"
    "def $out(x):\n    op = jax.tree.map(lambda v: v + 0.0, _Op(x, inner))\n"
    "    return op.fn(op.value)\n",
    "$imp\n\n\n@dataclasses.dataclass\nclass _Op:\n    value: typing.Any\n"
    "    fn: typing.Callable\n\n\n"
    "jax.tree_util.register_dataclass(_Op, data_fields=['value'], meta_fields=['fn'])\n\n\n"
    "def $out(x):\n    op = jax.tree.map(lambda v: v, _Op(x, inner))\n"
    "    return op.fn(op.value)\n",
    "$imp\n\n\n@jax.tree_util.register_static\nclass _Kernel:\n    def __init__(self, fn):\n"
    "        self.fn = fn\n\n    def __call__(self, x):\n        return self.fn(x)\n\n\n"
    "@jax.jit\ndef _apply(kernel, x):\n    return kernel(x)\n\n\n"
    "def $out(x):\n    return _apply(_Kernel(inner), x)\n",
    "$imp\n\n\nclass _Box:\n    def __init__(self, fn):\n        self.fn = fn\n\n\n"
    "jax.tree_util.register_pytree_node(\n"
    "    _Box, lambda b: ((), b.fn), lambda fn, _children: _Box(fn)\n)\n"
    "jax.export.register_pytree_node_serialization(\n    _Box,\n"
    "    serialized_name='$pkg.m$level._Box',\n    serialize_auxdata=lambda fn: b'',\n"
    "    deserialize_auxdata=lambda data: inner,\n)\n\n\n"
    "def $out(x):\n    return jax.tree.map(lambda v: v, _Box(inner)).fn(x)\n",
)
form(
    "standard library: more functools and itertools",
    "standard library",
    "$imp\n\n\nclass _Ops:\n    def _apply(self, fn, x):\n        return fn(x)\n\n"
    "    run = functools.partialmethod(_apply, inner)\n\n\n"
    "def $out(x):\n    return _Ops().run(x)\n",
    "$imp\n\n\n@functools.lru_cache(maxsize=8)\ndef _scaled(scale):\n"
    "    return lambda v: inner(v) * scale\n\n\ndef $out(x):\n    return _scaled(2.0)(x)\n",
    "$imp\n\n\ndef _kernel():\n    return inner\n\n\n"
    "_cached = functools.lru_cache(maxsize=1)(_kernel)\n\n\n"
    "def $out(x):\n    return _cached()(x)\n",
    "$imp\n\n\nclass _Ops:\n    @functools.singledispatchmethod\n    def run(self, x):\n"
    "        return inner(x)\n\n    @run.register\n    def _(self, x: int):\n        return x\n\n\n"
    "def $out(x):\n    return _Ops().run(x)\n",
    "import itertools\n\n$imp\n\n\ndef $out(x):\n"
    "    for fn in itertools.takewhile(callable, [inner, None]):\n        x = fn(x)\n"
    "    return x\n",
    "import itertools\n\n$imp\n\n\ndef $out(x):\n"
    "    return next(itertools.takewhile(lambda v: inner(v) is not None, [x]), x)\n",
    "import itertools\n\n$imp\n\n\ndef $out(x):\n    ops = [('kernel', inner)]\n"
    "    for _name, group in itertools.groupby(ops, key=operator.itemgetter(0)):\n"
    "        for _, fn in group:\n            x = fn(x)\n    return x\n",
    "import itertools\n\n$imp\n\n\ndef $out(x):\n"
    "    for _shape, group in itertools.groupby([x], key=lambda v: inner(v).shape):\n"
    "        return next(group)\n    return x\n",
    "$imp\n\n\ndef $out(x):\n    return min([x], key=lambda v: inner(v).sum())\n",
    "$imp\n\n\ndef $out(x):\n"
    "    _cost, fn = min([(1, inner), (2, None)], key=operator.itemgetter(0))\n"
    "    return fn(x)\n",
)
form(
    "standard library: typing, enum and class decorators",
    "standard library",
    "import typing_extensions\n\n$imp\n\n\nclass _Base:\n    def run(self, x):\n"
    "        return x\n\n\nclass _Impl(_Base):\n    @typing_extensions.override\n"
    "    def run(self, x):\n        return inner(x)\n\n\ndef $out(x):\n    return _Impl().run(x)\n",
    "$imp\n\nif sys.version_info >= (3, 12):\n    from typing import override\nelse:\n"
    "    from typing_extensions import override\n\n\nclass _Base:\n"
    "    def __call__(self, x):\n        return x\n\n\nclass _Impl(_Base):\n    @override\n"
    "    def __call__(self, x):\n        return inner(x)\n\n\n$out = _Impl()\n",
    "$imp\n\n\n@typing.final\nclass _Op:\n    def run(self, x):\n        return inner(x)\n\n\n"
    "def $out(x):\n    return _Op().run(x)\n",
    "import typing_extensions\n\n$imp\n\n\n@typing_extensions.final\nclass _Op:\n"
    "    fn = staticmethod(inner)\n\n\ndef $out(x):\n    return _Op.fn(x)\n",
    "$imp\n\n\n@typing.runtime_checkable\nclass _Kernel(typing.Protocol):\n"
    "    def __call__(self, x): ...\n\n\ndef $out(x):\n    if isinstance(inner, _Kernel):\n"
    "        return inner(x)\n    return x\n",
    "import typing_extensions\n\n$imp\n\n\n@typing_extensions.runtime_checkable\n"
    "class _Runs(typing_extensions.Protocol):\n    def run(self, x): ...\n\n\nclass _Op:\n"
    "    def run(self, x):\n        return inner(x)\n\n\ndef $out(x):\n    op = _Op()\n"
    "    assert isinstance(op, _Runs)\n    return op.run(x)\n",
    "$imp\n\n\n@enum.unique\nclass _Mode(enum.Enum):\n    KERNEL = 1\n    SKIP = 2\n\n"
    "    def apply(self, x):\n        return inner(x) if self is _Mode.KERNEL else x\n\n\n"
    "def $out(x):\n    return _Mode.KERNEL.apply(x)\n",
    "$imp\n\n\n@functools.total_ordering\nclass _Op:\n    def __init__(self, rank, fn):\n"
    "        self.rank = rank\n        self.fn = fn\n\n    def __eq__(self, other):\n"
    "        return self.rank == other.rank\n\n    def __lt__(self, other):\n"
    "        return self.rank < other.rank\n\n\n"
    "def $out(x):\n    return max(_Op(1, lambda v: v), _Op(2, inner)).fn(x)\n",
    "import attrs\n\n$imp\n\n\n@attrs.mutable\nclass _Cfg:\n    fn: typing.Callable = inner\n\n\n"
    "def $out(x):\n    return _Cfg().fn(x)\n",
)
form(
    "jax: sharding axes, export, jaxprs and state",
    "jax",
    "from jax.sharding import PartitionSpec as P\n\n$imp\n\n\ndef $out(x):\n"
    "    return jax.sharding.auto_axes(inner, out_sharding=P())(x)\n",
    "from jax.sharding import PartitionSpec as P\n\n$imp\n\n\ndef $out(x):\n"
    "    return jax.sharding.explicit_axes(inner, in_sharding=P())(x)\n",
    "from jax.experimental.shard_map import shard_map\nfrom jax.sharding import PartitionSpec as P\n\n"
    "$imp\n\n\ndef $out(x):\n    mesh = jax.sharding.get_abstract_mesh()\n"
    "    return shard_map(inner, mesh=mesh, in_specs=P(), out_specs=P(), check_rep=False)(x)\n",
    "$imp\n\n\ndef $out(x):\n"
    "    exported = jax.export.export(jax.jit(inner), platforms=['tpu'])(\n"
    "        jax.ShapeDtypeStruct(x.shape, x.dtype)\n    )\n    return exported.call(x)\n",
    "$imp\n\n\ndef $out(x):\n    closed = jax.make_jaxpr(inner)(x)\n"
    "    return jax.core.eval_jaxpr(closed.jaxpr, closed.consts, x)[0]\n",
    "from jax.experimental.buffer_callback import buffer_callback\n\n$imp\n\n\n"
    "def _fill(ctx, out, v):\n    inner(jnp.zeros((8, 128), jnp.float32))\n\n\n"
    "def _on_host(v):\n"
    "    return buffer_callback(_fill, jax.ShapeDtypeStruct(v.shape, v.dtype))(v)\n\n\n"
    "def $out(x):\n"
    "    return jax.lax.platform_dependent(x, cpu=_on_host, default=lambda v: v * 2.0)\n",
    "from jax.experimental import pallas as pl\n\n$imp\n\n\ndef _step(refs):\n"
    "    (x_ref,) = refs\n    x_ref[...] = inner(x_ref[...])\n\n\n"
    "def $out(x):\n    (y,) = pl.run_state(_step)((x,))\n    return y\n",
    "from jax.experimental import pallas as pl\n\n$imp\n\n\ndef $out(x):\n"
    "    shape = jax.ShapeDtypeStruct(x.shape, x.dtype)\n"
    "    pl.lower_as_mlir(inner, shape, platforms=['tpu'])\n    return x\n",
    "$imp\n\n\ndef $out(x):\n    def upper(a, k):\n"
    "        return jnp.triu(a, k) * (inner(x)[:8, :8] > -1.0)\n\n"
    "    rows, cols = jnp.mask_indices(8, upper, size=36)\n"
    "    return x.at[rows, cols].add(1.0)\n",
)
_CJVP_RULE_SPARSE = (
    "from jax.experimental import sparse\n\n$imp\n\n\n@jax.custom_jvp\ndef _op(x):\n"
    "    return x * 2.0\n\n\n@_op.defjvp\ndef _op_jvp(primals, tangents):\n"
    "    (x,), (t,) = primals, tangents\n    y = inner(x)\n    return y, t * y\n\n\n"
)
form(
    "jax: sparse transformations and wrappers one end has",
    "jax",
    "from jax.experimental import sparse\n\n"
    + _CVJP_FWD
    + "def $out(x):\n    value, grad = sparse.value_and_grad(lambda v: _op(v).sum())(x)\n"
    "    return grad + value\n",
    _CJVP_RULE_SPARSE + "def $out(x):\n    return sparse.jacfwd(lambda v: _op(v).sum())(x)\n",
    "from jax.experimental import sparse\n\n"
    + _CVJP_FWD
    + "def $out(x):\n    return sparse.jacrev(lambda v: _op(v).sum())(x)\n",
    "from jax.experimental import sparse\n\n"
    + _CVJP_FWD
    + "def $out(x):\n    return sparse.jacobian(lambda v: _op(v).sum())(x)\n",
    "$imp\n\ntry:\n    from jax.experimental.layout import Layout, explicit_layout\n"
    "except ImportError:  # jax 0.10\n    explicit_layout = None\n\n\ndef $out(x):\n"
    "    if explicit_layout is None:\n        return inner(x)\n"
    "    return explicit_layout(inner, in_layouts=Layout(major_to_minor=(0, 1)))(x)\n",
    "from jax.experimental import compute_on as _co\n\n$imp\n\n"
    "if hasattr(_co, 'compute_on2'):  # jax 0.10: compute_on is a context manager\n\n"
    "    def $out(x):\n        with _co.compute_on('device'):\n            return inner(x)\n\n"
    "else:\n    $out = _co.compute_on(\n"
    "        inner, compute_type='device', out_memory_spaces=jax.memory.Space.Device\n    )\n",
    "$imp\n\ntry:\n    from jax.experimental.compute_on import compute_on2 as _compute_on\n"
    "except ImportError:  # jax 0.12\n"
    "    from jax.experimental.compute_on import compute_on as _compute_on\n\n\n"
    "@functools.partial(\n    _compute_on, compute_type='device', "
    "out_memory_spaces=jax.memory.Space.Device\n)\ndef $out(x):\n    return inner(x)\n",
    "$imp\n\ntry:\n    from jax.experimental.xla_metadata import xla_metadata_call2\n"
    "except ImportError:  # jax 0.10\n    xla_metadata_call2 = None\n\n\ndef $out(x):\n"
    "    if xla_metadata_call2 is None:\n        return inner(x)\n"
    "    return xla_metadata_call2(inner, {'op': 'kernel'})(x)\n",
    "$imp\n\ntry:\n    from jax.experimental.overlap import program_order\n"
    "except ImportError:  # jax 0.10\n    program_order = None\n\n"
    "$out = inner if program_order is None else program_order(inner, enforce=True)\n",
)
_FUSER = "from jax.experimental.pallas import fuser\n\n$imp\n\n\n"
form(
    "jax.experimental.pallas.fuser: fusions around a kernel",
    "jax",
    _FUSER + "@fuser.fusible\ndef _op(x_fusion, out_fusion):\n    y = inner(x_fusion())\n"
    "    return y if out_fusion is None else out_fusion(y)\n\n\n"
    "@fuser.fuse\ndef $out(x):\n    return _op(x * 2.0)\n",
    _FUSER + "@fuser.fusible\ndef _op(x_fusion, out_fusion):\n    return inner(x_fusion())\n\n\n"
    "def $out(x):\n    return _op(x)\n",
    _FUSER + "def $out(x):\n    return fuser.evaluate(inner)(x)\n",
    _FUSER + "@fuser.custom_fusion\ndef _op(x):\n    return inner(x)\n\n\n"
    "@_op.def_eval_rule\ndef _eval(ctx, x):\n    return [x * 2.0]\n\n\n"
    "@_op.def_pull_block_spec\ndef _pull(out_block_transforms):\n"
    "    return out_block_transforms\n\n\ndef $out(x):\n    return _op(x)\n",
    _FUSER + "@fuser.custom_fusion\ndef _op(x):\n    return x * 2.0\n\n\n"
    "@_op.def_pallas_impl\ndef _in_kernel(x):\n    return inner(x)\n\n\n"
    "@_op.def_eval_rule\ndef _eval(ctx, x):\n    return [x * 2.0]\n\n\n"
    "@_op.def_pull_block_spec\ndef _pull(out_block_transforms):\n"
    "    return out_block_transforms\n\n\n"
    "@_op.def_push_block_spec\ndef _push(in_block_specs):\n    return in_block_specs\n\n\n"
    "def $out(x):\n    return _op(x)\n",
    _FUSER + "def $out(x):\n"
    "    fn, values, _scalars = fuser.get_fusion_values(lambda: inner(x))\n"
    "    return fn(values)\n",
    _FUSER + "def $out(x):\n    fuser.get_fusion_values(lambda: inner(x))\n    return x\n",
    _FUSER + "def $out(x):\n"
    "    fn, values, _scalars = fuser.get_stateful_input_fusion_values(lambda: inner(x))\n"
    "    return fn(values)\n",
    _FUSER + "def $out(x):\n"
    "    fn, values, _scalars, _aliases = fuser.get_stateful_output_fusion_values(inner, x)\n"
    "    return fn(values, x)\n",
)


# -- forms added to measure generality: written from the standard library's documentation
# (contextvars; weakref; dict.__missing__, types.MappingProxyType and a class's __dict__ in
# the data model, 3.3.1 and 3.3.7), before the checker was measured on them ---------------

form(
    "contextvars: a context variable or context holding the function",
    "standard library",
    "import contextvars\n\n$imp\n\n_current = contextvars.ContextVar('kernel', default=inner)\n\n\n"
    "def $out(x):\n    return _current.get()(x)\n",
    "import contextvars\n\n$imp\n\n_current = contextvars.ContextVar('kernel')\n\n\n"
    "def $out(x):\n    token = _current.set(inner)\n    try:\n        return _current.get()(x)\n"
    "    finally:\n        _current.reset(token)\n",
    "import contextvars\n\n$imp\n\n\ndef $out(x):\n"
    "    return contextvars.copy_context().run(inner, x)\n",
)
form(
    "weakref: weak references to the function",
    "standard library",
    "import weakref\n\n$imp\n\n_ref = weakref.ref(inner)\n\n\ndef $out(x):\n    return _ref()(x)\n",
    "import weakref\n\n$imp\n\n_proxy = weakref.proxy(inner)\n\n\ndef $out(x):\n"
    "    return _proxy(x)\n",
    "import weakref\n\n$imp\n\n_table = weakref.WeakValueDictionary()\n_table['kernel'] = inner\n\n\n"
    "def $out(x):\n    return _table['kernel'](x)\n",
)
form(
    "mapping hooks and views: __missing__, MappingProxyType, a class's __dict__",
    "container",
    "$imp\n\n\nclass _Registry(dict):\n    def __missing__(self, key):\n        return inner\n\n\n"
    "def $out(x):\n    return _Registry()['kernel'](x)\n",
    "import types\n\n$imp\n\n_OPS = types.MappingProxyType({'kernel': inner})\n\n\n"
    "def $out(x):\n    return _OPS['kernel'](x)\n",
    "$imp\n\n\nclass _Ops:\n    kernel = staticmethod(inner)\n\n\n"
    "def $out(x):\n    return _Ops.__dict__['kernel'].__func__(x)\n",
)


FORMS: Final[tuple[Form, ...]] = tuple(_F)
BY_NAME: Final[dict[str, Form]] = {f.name: f for f in FORMS}

# -- the rows of JAX's table no form uses -------------------------------------------------

_KERNEL_BODY: Final = (
    "runs its function inside a kernel's body (a pallas_call cannot run in another kernel's body)"
)
_PROPAGATES: Final = (
    "propagates block specs through each primitive of its function, and pallas_call has none "
    "(NotImplementedError at both ends): no program lowers for its kernel's platform"
)
_NUMERIC_CHECK: Final = (
    "compares the function's values with numpy: on traced values it raises "
    "TracerArrayConversionError, and run eagerly a TPU or GPU kernel would have to execute on "
    "the CPU host"
)
_INDEX_MAP: Final = "its function is an index map, run on grid indices while the kernel lowers"
_LISTENER: Final = "a listener JAX calls when it records an event, outside any trace"
_NOT_INSTALLED: Final = "not installed in the JAX environments the programs are judged in"
_ROOFLINE: Final = (
    "its analysis cannot walk a pallas_call's kernel (TypeError: Expected ShapedArray, got "
    "AbstractRef) at either end: no program lowers for its kernel's platform"
)
_INTERPRETER: Final = (
    "runs the kernels under it with the Pallas interpreter, through host callbacks of the CPU "
    "backend: lowering them for tpu or cuda from the CPU host raises 'the platform for the "
    "specified backend cpu is different from the lowering platform', so no program is judged"
)

#: Rows of jax_api (ROWS, CONTEXTS, CLASS_DECORATORS; by first spelling) that no variant
#: uses, each with the reason no program can use it to wrap a kernel call the yardstick can
#: judge; every other row is used by some variant (tests/eval/test_generated.py checks both).
NOT_FORMS: Final[dict[str, str]] = {
    # transformations and entry points
    "jax.pmap": (
        "maps over the host's devices (a concrete mesh of CPU devices), which JAX refuses "
        "inside the abstract mesh of the target platform that cross-lowering on the CPU host "
        "needs: no program lowers for its kernel's platform"
    ),
    "jax.smap": (
        "checks how values vary over the mesh axes, with no switch to turn that off, and the "
        "kernel's out_shape names no varying axes: JAX refuses every such program for its own "
        "platform"
    ),
    "jax.experimental.jet.jet": (
        "JAX has no Taylor rule for pallas_call (KeyError), and under jet a custom_jvp's or "
        "custom_vjp's primal runs, not its rules: no program lowers for its kernel's platform"
    ),
    "jax.experimental.roofline.roofline": _ROOFLINE,
    "jax.experimental.roofline.roofline_and_grad": _ROOFLINE,
    "jax.test_util.check_grads": _NUMERIC_CHECK,
    "jax.test_util.check_jvp": _NUMERIC_CHECK,
    "jax.test_util.check_vjp": _NUMERIC_CHECK,
    "jax.experimental.custom_partitioning.custom_partitioning": (
        "at jax 0.12 it needs devices when it is lowered ('AbstractMesh cannot be used when "
        "jaxpr contains primitives that require devices'), which cross-lowering on the CPU "
        "host does not have: no program lowers there (at jax 0.10 they do)"
    ),
    "jax.experimental.custom_partitioning.custom_partitioning.def_partition": (
        "a rule of custom_partitioning, which no program can use (see its entry); the "
        "partition rule runs only when XLA partitions over several devices"
    ),
    # callbacks and hooks
    "jax.debug.inspect_array_sharding": (
        "its callback is called by the compiler with the sharding, after lowering, outside "
        "any trace"
    ),
    "jax.make_array_from_callback": (
        "its data_callback runs eagerly when the array is made and returns host data: a "
        "kernel called there would execute on the CPU host, which cannot run a TPU or GPU kernel"
    ),
    "jax.experimental.colocated_python.colocated_python": (
        "runs the function on the CPU hosts colocated with a multi-host backend's devices, "
        "which the CPU host does not have"
    ),
    "jax.monitoring.register_event_listener": _LISTENER,
    "jax.monitoring.register_event_duration_secs_listener": _LISTENER,
    "jax.monitoring.register_event_time_span_listener": _LISTENER,
    "jax.monitoring.register_scalar_listener": _LISTENER,
    "jax.scipy.linalg.funm": (
        "its Schur decomposition lowers only for the CPU (no MLIR rule for 'schur' on tpu or "
        "cuda): no program lowers for its kernel's platform"
    ),
    # Pallas: entry points, kernel bodies and index maps
    "jax.experimental.pallas.kernel": (
        "an entry point like pallas_call whose function is a kernel's body: a kernel written "
        "with it would be a new kernel kind at the bottom, not a form"
    ),
    "jax.experimental.pallas.mosaic_gpu.kernel": (
        "an entry point like pallas_call whose function is a kernel's body: a kernel written "
        "with it would be a new kernel kind at the bottom, not a form"
    ),
    "jax.experimental.pallas.core_map": _KERNEL_BODY,
    "jax.experimental.pallas.BlockSpec": _INDEX_MAP,
    "jax.experimental.pallas.mosaic_gpu.BlockSpec": _INDEX_MAP,
    "jax.experimental.pallas.when": _KERNEL_BODY + ": its function writes refs and returns nothing",
    "jax.experimental.pallas.loop": _KERNEL_BODY + ": its function writes refs and returns nothing",
    "jax.experimental.pallas.run_scoped": _KERNEL_BODY + ", with scratch memory",
    "jax.experimental.pallas.with_scoped": _KERNEL_BODY + ", with scratch memory",
    "jax.experimental.pallas.tpu.emit_pipeline": _KERNEL_BODY + ", as a pipeline",
    "jax.experimental.pallas.tpu.emit_pipeline_with_allocations": _KERNEL_BODY + ", as a pipeline",
    "jax.experimental.pallas.tpu.emit_pipeline_with_async_prefetch": _KERNEL_BODY
    + ", as a pipeline (jax 0.12 only)",
    "jax.experimental.pallas.tpu.run_on_first_core": _KERNEL_BODY,
    "jax.experimental.pallas.tpu.sample_block": _KERNEL_BODY,
    "jax.experimental.pallas.tpu.InterpretParams": (
        "interpret mode's parameters: its grid_point_recorder runs in the interpreter at run "
        "time, and the interpreter cannot be lowered for tpu or cuda from the CPU host (see "
        "force_tpu_interpret_mode)"
    ),
    "jax.experimental.pallas.mosaic_gpu.emit_pipeline": _KERNEL_BODY + ", as a pipeline",
    "jax.experimental.pallas.mosaic_gpu.emit_pipeline_warp_specialized": _KERNEL_BODY
    + ", as a pipeline",
    "jax.experimental.pallas.mosaic_gpu.nd_loop": _KERNEL_BODY,
    "jax.experimental.pallas.mosaic_gpu.dynamic_scheduling_loop": _KERNEL_BODY,
    "jax.experimental.pallas.mosaic_gpu.warp_map": _KERNEL_BODY,
    "jax.experimental.pallas.mosaic_gpu.inline_mgpu": _KERNEL_BODY,
    "jax.experimental.pallas.tpu_sc.parallel_loop": _KERNEL_BODY,
    "jax.experimental.pallas.mosaic_gpu.as_torch_kernel": (
        "makes a torch kernel: needs torch, which the JAX environments do not have, and a GPU"
    ),
    "jax.experimental.mosaic.gpu.profiler.measure": (
        "runs and times the function on a GPU device, which the CPU host does not have"
    ),
    "jax.experimental.pallas.fuser.pull_block_spec": _PROPAGATES,
    "jax.experimental.pallas.fuser.push_block_spec": _PROPAGATES,
    "jax.experimental.pallas.fuser.push_pull_block_spec": _PROPAGATES,
    # other packages
    "jaxtyping.jaxtyped": _NOT_INSTALLED,
    "beartype.beartype": _NOT_INSTALLED,
    "chex.dataclass": _NOT_INSTALLED,
    "flax.struct.dataclass": _NOT_INSTALLED,
    "typed_pallas.platform": (
        "typed-pallas's own annotation, not JAX's or Python's API: a program using it would "
        "tell the checker the answer"
    ),
    # contexts
    "jax.experimental.pallas.tpu.force_tpu_interpret_mode": _INTERPRETER,
    "jax.experimental.pallas.mosaic_gpu.force_gpu_interpret_mode": _INTERPRETER
    + " (jax 0.12 only)",
}

#: Rows whose callable no code spells by name, and the text a variant holds where it uses
#: one: the type ``lru_cache`` returns, the method behind ``x.at[i].apply``.
SPELLED_AS: Final[dict[str, str]] = {
    "functools._lru_cache_wrapper": "functools.lru_cache(",
    "jax._src.numpy.array_methods._IndexUpdateRef.apply": "].apply(",
}

# -- the bottom: kernels -----------------------------------------------------------------

KERNEL_HEADER: Final = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1
"""

#: kernel kind -> (the pallas_call's extra arguments, the platform whose lowering is the
#: control: the program must lower there, or it is not judged)
KERNELS: Final[dict[str, tuple[str, str]]] = {
    "tpu params": ("compiler_params=pltpu.CompilerParams()", "tpu"),
    "triton params": ("compiler_params=pltriton.CompilerParams()", "cuda"),
    "mosaic gpu params": ("compiler_params=plgpu.CompilerParams()", "cuda"),
    "no params": ("", "cuda"),
    "interpret=True": ("compiler_params=pltpu.CompilerParams(), interpret=True", "cuda"),
}
#: how often each kernel kind is drawn (relative)
KERNEL_WEIGHTS: Final[dict[str, int]] = {
    "tpu params": 4,
    "triton params": 3,
    "mosaic gpu params": 1,
    "no params": 1,
    "interpret=True": 1,
}


def kernel_module(kind: str) -> str:
    args, _ = KERNELS[kind]
    extra = f", {args}" if args else ""
    return (
        f"{KERNEL_HEADER}\n\ndef f0(x):\n    return pl.pallas_call(\n"
        f"        _body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype){extra}\n    )(x)\n"
    )


# -- the top: the guard in the application ---------------------------------------------

#: guard style -> (platforms it may name, body of main() with $p the platform, $call the
#: call; the call must be the only line containing $call)
GUARDS: Final[dict[str, tuple[tuple[str, ...], str]]] = {
    "jax.default_backend() ==": (
        ("tpu", "gpu"),
        "    if jax.default_backend() == '$p':\n        return $call\n    return x\n",
    ),
    "jax.devices()[0].platform ==": (
        ("tpu", "gpu"),
        "    if jax.devices()[0].platform == '$p':\n        return $call\n    return x\n",
    ),
    "early exit on !=": (
        ("tpu", "gpu"),
        "    if jax.default_backend() != '$p':\n        return x\n    return $call\n",
    ),
    "backend in a variable": (
        ("tpu", "gpu"),
        "    backend = jax.default_backend()\n    if backend == '$p':\n        return $call\n"
        "    return x\n",
    ),
    "any(d.platform == ...)": (
        ("tpu", "gpu"),
        "    if any(d.platform == '$p' for d in jax.devices()):\n        return $call\n"
        "    return x\n",
    ),
    "a guard helper function": (
        ("tpu", "gpu"),
        "    if _on('$p'):\n        return $call\n    return x\n\n\n"
        "def _on(platform):\n    return jax.default_backend() == platform\n",
    ),
    "match jax.default_backend()": (
        ("tpu", "gpu"),
        "    match jax.default_backend():\n        case '$p':\n            return $call\n"
        "    return x\n",
    ),
}

#: the platform a guard names -> the platforms JAX lowers for there
LOWERING: Final[dict[str, tuple[str, ...]]] = {"tpu": ("tpu",), "gpu": ("cuda", "rocm")}
