"""The standard library's callables as Python defines them: ``functools`` (``partial``,
``reduce``, ``cache``/``lru_cache``), ``operator`` (``call``, ``itemgetter``,
``attrgetter``) and builtins (``map`` and ``filter``, lazy until consumed; ``getattr`` and
``setattr`` with literal names; ``sorted``, whose ``key`` only orders); ``itertools``
(``starmap``, ``accumulate``, ``filterfalse``, ``takewhile``, ``dropwhile``, lazy until
consumed; ``chain``), ``copy.copy``/``deepcopy``, ``types.MethodType``, ``typing.cast``.
"""

from __future__ import annotations

import pytest
from evaluator_programs import PICKS, TPU_FIRES_TRITON_SILENT, fires, guarded_main

PARAMS = pytest.mark.parametrize(
    ("picked", "other", "expected"),
    [("TPU", "TRITON", True), ("TRITON", "TPU", False)],
    ids=["tpu-params-fires", "triton-params-silent"],
)


def _guarded(setup: str, call: str, head: str = "") -> str:
    return guarded_main(setup, call, "import functools\nimport operator\n" + head)


@PARAMS
@pytest.mark.parametrize(
    ("partial", "call"),
    [
        ("functools.partial(lib.run, lib.{})", "run(x)"),
        ("functools.partial(lib.run, params=lib.{})", "run(x=x)"),
    ],
    ids=["positional", "keyword"],
)
def test_functools_partial(
    partial: str, call: str, picked: str, other: str, expected: bool
) -> None:
    setup = "run = " + partial.format(picked)
    assert fires(_guarded(setup, call)) is expected


@PARAMS
def test_partial_keyword_overridden_at_the_call(picked: str, other: str, expected: bool) -> None:
    setup = f"run = functools.partial(lib.run, params=lib.{other})"
    assert fires(_guarded(setup, f"run(x=x, params=lib.{picked})")) is expected


@pytest.mark.parametrize(
    ("kernels", "expected"),
    [
        ("(lib.tpu_kernel,)", True),
        ("(lib.triton_kernel, lib.tpu_kernel)", True),
        ("(lib.triton_kernel,)", False),
    ],
    ids=["tpu-fires", "tpu-second-fires", "triton-silent"],
)
def test_functools_reduce(kernels: str, expected: bool) -> None:
    call = f"functools.reduce(lambda acc, k: k(acc), {kernels}, x)"
    assert fires(_guarded("pass", call)) is expected


@PICKS
@pytest.mark.parametrize(
    "decorator", ["@functools.cache", "@functools.lru_cache(maxsize=None)", "@functools.lru_cache"]
)
def test_cached_function(decorator: str, picked: str, other: str, expected: bool) -> None:
    head = f"{decorator}\ndef pick():\n    return lib.{picked}\n"
    assert fires(_guarded("k = pick()", "k(x)", head)) is expected


@TPU_FIRES_TRITON_SILENT
def test_operator_call(params: str, expected: bool) -> None:
    assert fires(_guarded("pass", "operator.call(lib.kernel, x)"), params) is expected


@pytest.mark.parametrize(
    ("key", "expected"), [("fast", True), ("safe", False)], ids=["fast-fires", "safe-silent"]
)
def test_operator_itemgetter(key: str, expected: bool) -> None:
    setup = (
        'kernels = {"fast": lib.tpu_kernel, "safe": lib.triton_kernel}\n'
        f'    get = operator.itemgetter("{key}")\n'
        "    k = get(kernels)"
    )
    assert fires(_guarded(setup, "k(x)")) is expected


@PICKS
def test_operator_attrgetter(picked: str, other: str, expected: bool) -> None:
    setup = f'get = operator.attrgetter("{picked}")\n    k = get(lib)'
    assert fires(_guarded(setup, "k(x)")) is expected


@TPU_FIRES_TRITON_SILENT
def test_map_consumed_by_list(params: str, expected: bool) -> None:
    assert fires(_guarded("pass", "list(map(lib.kernel, [x]))"), params) is expected


@pytest.mark.parametrize("lazy", ["map", "filter"])
def test_map_and_filter_not_consumed_run_nothing(lazy: str) -> None:
    program = f"""
def main(x):
    if jax.default_backend() == "gpu":
        ys = {lazy}(lib.tpu_kernel, [x])  # here
    return x
"""
    assert not fires(program)


@PICKS
def test_filter(picked: str, other: str, expected: bool) -> None:
    setup = f"ks = list(filter(None, [None, lib.{picked}]))"
    assert fires(_guarded(setup, "ks[0](x)")) is expected


@PICKS
@pytest.mark.parametrize(
    "read", ['getattr(lib, "{}")', 'getattr(lib, "missing", lib.{})'], ids=["present", "default"]
)
def test_getattr_with_a_literal_name(read: str, picked: str, other: str, expected: bool) -> None:
    setup = "k = " + read.format(picked)
    assert fires(_guarded(setup, "k(x)")) is expected


@PICKS
def test_setattr_with_a_literal_name(picked: str, other: str, expected: bool) -> None:
    head = "class Box:\n    pass\n"
    setup = f'box = Box()\n    setattr(box, "k", lib.{picked})'
    assert fires(_guarded(setup, "box.k(x)", head)) is expected


@TPU_FIRES_TRITON_SILENT
def test_sorted_items_are_the_results(params: str, expected: bool) -> None:
    # the kernel's results are what is sorted and returned
    assert fires(_guarded("pass", "sorted(map(lib.kernel, [x]))"), params) is expected


@pytest.mark.parametrize(
    ("release", "expected"),
    [((0, 10, 2), True), ((0, 12, 1), False), (None, False)],
    ids=["0.10.2-lowers-it-fires", "0.12.1-drops-it-silent", "no-release-silent"],
)
@pytest.mark.parametrize(
    "call",
    [
        "sorted([x], key=lib.tpu_kernel)",
        "max([x], key=lambda v: lib.tpu_kernel(v).sum())",
        "min(x, x, key=lib.tpu_kernel)",
    ],
)
def test_a_sort_keys_kernel_only_orders(
    call: str, release: tuple[int, ...] | None, expected: bool
) -> None:
    # the key runs on each item, its result only orders them: dead code that jax 0.12
    # drops before lowering, and 0.10 lowers (and refuses for gpu)
    assert fires(_guarded("pass", call), release=release) is expected


def test_a_sort_key_over_no_items_runs_nothing() -> None:
    assert not fires(_guarded("pass", "sorted([], key=lib.tpu_kernel)"), release=(0, 10, 2))


# -- records and mappings of the standard library: types, collections, typing ----------------


@PICKS
def test_simple_namespace_attributes(picked: str, other: str, expected: bool) -> None:
    app = f"""
import types
ns = types.SimpleNamespace(fn=lib.{picked}, other=lib.{other})

def main(x):
    if jax.default_backend() == "gpu":
        return ns.fn(x)  # here
    return x
"""
    assert fires(app) is expected


@PICKS
@pytest.mark.parametrize(
    "make",
    [
        "collections.namedtuple('K', ['fn', 'other'])",
        "collections.namedtuple('K', 'fn other')",
        "collections.namedtuple('K', 'fn, other')",
        "typing.NamedTuple('K', [('fn', object), ('other', object)])",
    ],
)
def test_functional_named_tuple_fields(make: str, picked: str, other: str, expected: bool) -> None:
    app = f"""
import collections
import typing
K = {make}
k = K(lib.{picked}, other=lib.{other})

def main(x):
    if jax.default_backend() == "gpu":
        return k.fn(x)  # here
    return x
"""
    assert fires(app) is expected
    by_index = app.replace("k.fn(x)", "k[0](x)")
    assert fires(by_index) is expected


@PICKS
def test_functional_named_tuple_defaults_fill_the_rightmost_fields(
    picked: str, other: str, expected: bool
) -> None:
    app = f"""
import collections
K = collections.namedtuple('K', ['first', 'fn'], defaults=[lib.{picked}])
k = K(lib.{other})

def main(x):
    if jax.default_backend() == "gpu":
        return k.fn(x)  # here
    return x
"""
    assert fires(app) is expected


@PICKS
def test_defaultdict_calls_its_factory_for_a_missing_key(
    picked: str, other: str, expected: bool
) -> None:
    app = f"""
import collections
table = collections.defaultdict(lambda: lib.{picked})

def main(x):
    if jax.default_backend() == "gpu":
        return table["missing"](x)  # here
    return x
"""
    assert fires(app) is expected


@PICKS
def test_defaultdict_keeps_a_present_key(picked: str, other: str, expected: bool) -> None:
    app = f"""
import collections
table = collections.defaultdict(lambda: lib.{other}, {{"k": lib.{picked}}})

def main(x):
    if jax.default_backend() == "gpu":
        return table["k"](x)  # here
    return x
"""
    assert fires(app) is expected


@PICKS
def test_chain_map_looks_in_the_first_map_first(picked: str, other: str, expected: bool) -> None:
    app = f"""
import collections
chain = collections.ChainMap({{"k": lib.{picked}}}, {{"k": lib.{other}, "j": lib.{other}}})

def main(x):
    if jax.default_backend() == "gpu":
        return chain["k"](x)  # here
    return x
"""
    assert fires(app) is expected


def test_chain_map_missing_key_is_not_a_dead_end() -> None:
    """A key no map holds now may be added to one later: not a path that ends (which
    could hide the platforms that reach a call)."""
    app = """
import collections
first = {}
chain = collections.ChainMap(first, {"k": lib.triton_kernel})
first["j"] = lib.triton_kernel

def main(x):
    fn = chain["j"]
    if jax.default_backend() == "gpu":
        return lib.tpu_kernel(x)  # here
    return x
"""
    assert fires(app) is True


@pytest.mark.parametrize(
    "traced",
    [
        "jax.lax.cond(v.sum() > 0, lib.tpu_kernel, lambda u: u, v)",
        "jax.lax.map(lib.tpu_kernel, v[None])",
        "jax.jit(lib.tpu_kernel)(v)",
    ],
)
def test_a_sort_keys_kernel_inside_a_traced_function_is_dropped_whole(traced: str) -> None:
    # jax 0.10.2 drops a dead lax.cond, lax.map or jit call whole (measured): its kernel is
    # not lowered; a bare kernel's dead result it lowers
    call = f"max([x], key=lambda v: {traced}.sum())"
    assert not fires(_guarded("pass", call), release=(0, 10, 2))


@pytest.mark.parametrize(
    "wrapped",
    [
        "functools.update_wrapper(lambda v: lib.tpu_kernel(v), lib.tpu_kernel)",
        "functools.partial(lib.tpu_kernel)",
    ],
)
def test_a_sort_keys_kernel_through_the_standard_library_is_still_direct(wrapped: str) -> None:
    # only a function JAX traces for one of its callables is dropped whole; functools'
    # wrappers call the function in place
    call = f"max([x], key=lambda v: ({wrapped})(v).sum())"
    assert fires(_guarded("pass", call), release=(0, 10, 2))


@PICKS
@pytest.mark.parametrize(
    "call",
    [
        "list(itertools.starmap(lib.$P, [(x,)]))[0]",
        "list(itertools.accumulate([x, x], lambda a, b: lib.$P(a) + b))[-1]",
        "list(itertools.accumulate([x], lambda a, b: lib.$P(a), initial=x))[-1]",
        "next(itertools.filterfalse(lambda f: f is None, [lib.$P]))(x)",
        "next(itertools.takewhile(lambda f: f is not None, [lib.$P, None]))(x)",
        "next(itertools.dropwhile(lambda f: f is None, [None, lib.$P]))(x)",
        "[f for f in itertools.chain([None], [lib.$P])][1](x)",
        "list(itertools.chain.from_iterable([[lib.$P]]))[0](x)",
        "copy.copy({'fn': lib.$P})['fn'](x)",
        "copy.deepcopy([lib.$P])[0](x)",
        "copy.copy(Op()).run(x)",
        "types.MethodType(lambda self, v: lib.$P(v), object())(x)",
        "typing.cast(typing.Any, lib.$P)(x)",
    ],
)
def test_more_of_the_standard_library(call: str, picked: str, other: str, expected: bool) -> None:
    head = (
        "import copy\nimport itertools\nimport types\nimport typing\n"
        f"class Op:\n    def run(self, x):\n        return lib.{picked}(x)\n"
    )
    assert fires(_guarded("pass", call.replace("$P", picked).replace("$O", other), head)) is (
        expected
    )


@pytest.mark.parametrize(
    "call",
    [
        "list(itertools.accumulate([x], lambda a, b: lib.tpu_kernel(a)))[-1]",
        "list(itertools.starmap(lib.tpu_kernel, []))",
        "next(itertools.takewhile(lambda f: f is not None, [lib.triton_kernel, lib.tpu_kernel]))(x)",
        "next(itertools.dropwhile(lambda f: f is lib.tpu_kernel, [lib.tpu_kernel, lib.triton_kernel]))(x)",
    ],
    ids=["accumulate-one-item", "starmap-no-item", "takewhile-first", "dropwhile-after"],
)
def test_lazy_iterators_call_only_what_taking_their_items_calls(call: str) -> None:
    head = "import itertools\n"
    assert not fires(_guarded("pass", call, head))


@pytest.mark.parametrize(("release", "expected"), [((0, 10, 2), True), ((0, 12, 1), False)])
def test_a_predicate_of_an_iterator_decides_only_dead_code(
    release: tuple[int, ...], expected: bool
) -> None:
    """What ``filter``'s and ``dropwhile``'s predicates trace only decides which items
    are kept: dead code, dropped from jax 0.12 on."""
    call = "next(itertools.dropwhile(lambda v: lib.tpu_kernel(v) is None, [x]))"
    assert fires(_guarded("pass", call, "import itertools\n"), release=release) is expected


@pytest.mark.parametrize(
    ("test", "expected"),
    [
        ("isinstance(x, jax.Array)", True),
        ("isinstance(x, (int, jax.Array))", True),
        ("isinstance(Plain(), Plain)", True),
        ("not isinstance(Plain(), Other)", True),
        ("isinstance({'a': x}, dict)", True),
        # structural or registered checks: not known, so both ways may run
        ("not isinstance(Plain(), Runs)", False),
        ("not isinstance(Plain(), Abstract)", False),
        ("isinstance(x, int)", False),
    ],
)
def test_isinstance_by_what_is_known(test: str, expected: bool) -> None:
    # the TPU kernel runs when the test is true, the Triton kernel otherwise: a finding
    # when the test is surely true; never when it may be false (a Protocol matches by
    # structure, an ABC by registration: not decided by the classes' MROs)
    app = f"""
import abc
import typing

@typing.runtime_checkable
class Runs(typing.Protocol):
    def run(self): ...

class Abstract(abc.ABC):
    pass

class Plain:
    def run(self):
        return 1

class Other:
    pass

Abstract.register(Plain)

def main(x):
    x = jax.numpy.zeros((8, 128))
    if jax.default_backend() == "gpu":
        return (lib.tpu_kernel if {test} else lib.triton_kernel)(x)  # here
    return x
"""
    assert fires(app) is expected


@pytest.mark.parametrize(
    ("argument", "expected"),
    [("x", True), ("3", False), ("'name'", False), ("unknown", False)],
    ids=["array-base-fires", "int-registered-silent", "str-registered-silent", "not-known-silent"],
)
def test_single_dispatch_runs_what_is_registered_for_the_argument(
    argument: str, expected: bool
) -> None:
    # the base runs the TPU kernel; an int or a str has its own registration (Triton);
    # an argument of no known class may take either
    app = f"""
import functools
import os

@functools.singledispatch
def run(v):
    return lib.tpu_kernel(v)

@run.register
def _(v: int):
    return lib.triton_kernel(v)

@run.register(str)
def _(v):
    return lib.triton_kernel(v)

class Ops:
    @functools.singledispatchmethod
    def run(self, v):
        return lib.tpu_kernel(v)

    @run.register
    def _(self, v: int):
        return lib.triton_kernel(v)

    @run.register(str)
    def _(self, v):
        return lib.triton_kernel(v)

unknown = os.environ.get("VALUE")

def main(x):
    x = jax.numpy.zeros((8, 128))
    if jax.default_backend() == "gpu":
        return run({argument}), Ops().run({argument})  # here
    return x
"""
    assert fires(app) is expected
