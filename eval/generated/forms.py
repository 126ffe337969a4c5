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
standard library (functools, operator, builtins, contextlib, dataclasses, enum, typing) and
JAX's documented API, not from what the checker knows: a form the checker does not follow
stays here, and the runner reports it as a miss. Adding a form is adding one ``Form``.
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

FORMS: Final[tuple[Form, ...]] = tuple(_F)
BY_NAME: Final[dict[str, Form]] = {f.name: f for f in FORMS}

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
