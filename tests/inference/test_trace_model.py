"""The trace model (``inference.program``, docs/inference-model.md), form by form.

Each form has a firing case (the platforms the function lowers for) and a silent twin
(no requirement) in a small fake library. ``pkg/ops.py`` is ``library_fakes.OPS``:
``tpu_op``, ``triton_op``, ``tpu_op_i`` (``interpret=`` from its parameter) and
``plain`` (no kernel). The parity harness (``tests/parity``) checks the same forms end
to end under mypy, in three layouts.
"""

from __future__ import annotations

import pytest
from library_fakes import HEADER, OPS, MakeLib, platforms_of, reader_for

from typed_pallas_mypy.inference import SUMMARIES_ENV, Inference

IMPORTS = HEADER + "from pkg.ops import kernel, plain, tpu_op, tpu_op_i, triton_op\n"


def _library(make_lib: MakeLib, source: str) -> Inference:
    return reader_for(make_lib({"pkg/ops.py": OPS, "pkg/forms.py": IMPORTS + source}))


def _platforms(facts: Inference, name: str) -> set[str] | None:
    return platforms_of(facts.requirement(f"pkg.forms.{name}"))


def test_paths_union_and_intersection(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
def both_tpu(x, c):
    if c:
        return tpu_op(x)
    return tpu_op(x + 1)

def tpu_or_triton(x, c):
    if c:
        return tpu_op(x)
    return triton_op(x)

def tpu_or_nothing(x, c):
    if c:
        return tpu_op(x)
    return x

def raise_or_tpu(x, c):
    if c:
        raise ValueError(c)
    return tpu_op(x)

def tpu_then_unknown(x, fn):
    return fn(tpu_op(x))

def contradiction(x):
    return triton_op(tpu_op(x))
""",
    )
    assert _platforms(facts, "both_tpu") == {"tpu"}
    assert _platforms(facts, "raise_or_tpu") == {"tpu"}
    assert _platforms(facts, "tpu_then_unknown") == {"tpu"}
    assert _platforms(facts, "tpu_or_triton") is None
    assert _platforms(facts, "tpu_or_nothing") is None
    assert _platforms(facts, "contradiction") is None


def test_loops(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
def literal(x):
    for scale in (1, 2):
        x = tpu_op(x * scale)
    return x

def literal_with_break(x, c):
    for scale in (1, 2):
        if c:
            break
        x = tpu_op(x * scale)
    return x

def over_a_parameter(x, blocks):
    for _ in blocks:
        x = tpu_op(x)
    return x

def while_loop(x, n):
    while n:
        x = tpu_op(x)
        n -= 1
    return x
""",
    )
    assert _platforms(facts, "literal") == {"tpu"}
    assert _platforms(facts, "literal_with_break") is None
    assert _platforms(facts, "over_a_parameter") is None
    assert _platforms(facts, "while_loop") is None


def test_jax_control_flow_traces_every_branch_and_body(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
def cond(x):
    return jax.lax.cond(x.sum() > 0, tpu_op, lambda y: y, x)

def cond_two_platforms(x):
    return jax.lax.cond(x.sum() > 0, tpu_op, triton_op, x)

def switch(x, i):
    return jax.lax.switch(i, [plain, tpu_op], x)

def fori(x):
    return jax.lax.fori_loop(0, 2, lambda i, y: tpu_op(y), x)

def fori_no_trips(x):
    return jax.lax.fori_loop(0, 0, lambda i, y: tpu_op(y), x)

def while_body(x):
    return jax.lax.while_loop(lambda y: False, tpu_op, x)

def scan(x):
    return jax.lax.scan(lambda c, y: (c, tpu_op(y)), 0, x)

def plain_branches(x):
    return jax.lax.cond(x.sum() > 0, plain, lambda y: y, x)
""",
    )
    for name in ("cond", "switch", "fori", "while_body", "scan"):
        assert _platforms(facts, name) == {"tpu"}, name
    # a loop whose literal bounds give zero trips lowers nothing of its body (measured)
    assert _platforms(facts, "fori_no_trips") is None
    # both branches are lowered: TPU params and Triton params on one path lower nowhere
    assert _platforms(facts, "cond_two_platforms") is None
    assert _platforms(facts, "plain_branches") is None


def test_platform_dependent_runs_the_branch_of_each_platform(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
def tpu_everywhere(x):
    return jax.lax.platform_dependent(x, tpu=tpu_op, default=tpu_op)

def tpu_for_cuda(x):
    return jax.lax.platform_dependent(x, tpu=tpu_op, cuda=tpu_op, default=plain)

def right(x):
    return jax.lax.platform_dependent(x, tpu=tpu_op, default=triton_op)
""",
    )
    assert _platforms(facts, "tpu_everywhere") == {"tpu"}
    assert _platforms(facts, "tpu_for_cuda") == {"tpu", "rocm"}
    assert _platforms(facts, "right") is None


def test_derivative_rules_run_under_differentiation_only(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
@jax.custom_vjp
def f(x):
    return x * 2

def f_fwd(x):
    return tpu_op(x), None

def f_bwd(res, g):
    return (g,)

f.defvjp(f_fwd, f_bwd)

def primal(x):
    return f(x)

def differentiated(x):
    return jax.grad(f)(x)

def vjp(x):
    return jax.vjp(f, x)

def through_a_caller(x):
    return jax.grad(primal)(x)
""",
    )
    assert _platforms(facts, "primal") is None
    assert _platforms(facts, "differentiated") == {"tpu"}
    assert _platforms(facts, "vjp") == {"tpu"}
    assert _platforms(facts, "through_a_caller") == {"tpu"}


def test_kernels_built_and_run(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
def _shape(x):
    return x

def built_only(x):
    pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())
    return x

def run_through_a_variable(x):
    call = pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())
    return call(x)

def returned_unapplied(x):
    return pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())

def interpreted_context(x):
    with pltpu.force_tpu_interpret_mode():
        return tpu_op(x)
""",
    )
    assert _platforms(facts, "built_only") is None
    assert _platforms(facts, "run_through_a_variable") == {"tpu"}
    assert _platforms(facts, "returned_unapplied") is None
    assert platforms_of(facts.result_requirement("pkg.forms.returned_unapplied")) == {"tpu"}
    assert _platforms(facts, "interpreted_context") is None


def test_objects_factories_and_closures(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
class Op:
    def __call__(self, x):
        return tpu_op(x)

def make_op():
    return Op()

def make_fn():
    def run(y):
        return tpu_op(y)
    return run

def vmap_of_factory(x):
    return jax.vmap(make_op())(x)

def checkpoint_of_object(x):
    return jax.checkpoint(Op())(x)

def closure(x):
    return make_fn()(x)

def factory_only(x):
    make_op()
    make_fn()
    return x

def choice(x, c):
    return (tpu_op if c else triton_op)(x)

TABLE = {"tpu": tpu_op, "gpu": triton_op}

def table_tpu(x):
    return TABLE["tpu"](x)

def table_gpu(x):
    return TABLE["gpu"](x)
""",
    )
    assert _platforms(facts, "vmap_of_factory") == {"tpu"}
    assert _platforms(facts, "checkpoint_of_object") == {"tpu"}
    assert _platforms(facts, "closure") == {"tpu"}
    assert _platforms(facts, "factory_only") is None
    assert _platforms(facts, "choice") is None
    assert _platforms(facts, "table_tpu") == {"tpu"}
    assert _platforms(facts, "table_gpu") == {"cuda", "rocm"}
    assert facts.definition("pkg.forms.TABLE").table == (
        ("tpu", "pkg.ops.tpu_op"),
        ("gpu", "pkg.ops.triton_op"),
    )


def test_interpret_from_defaults_partials_and_config_objects(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
import dataclasses

@dataclasses.dataclass
class Config:
    interpret: bool = False

@dataclasses.dataclass
class Unknown:
    interpret: bool = True

def with_config(x, config: Config):
    return tpu_op_i(x, interpret=config.interpret)

def default_config(x):
    return with_config(x, Config())

def interpreted_config(x):
    return with_config(x, Config(interpret=True))

def positional_config(x):
    return with_config(x, Config(True))

def forwarded(x, config: Config):
    return with_config(x, config)

def partial_off(x):
    return functools.partial(tpu_op_i, interpret=False)(x)

def partial_on(x):
    return functools.partial(tpu_op_i, interpret=True)(x)

def default_off(x):
    return tpu_op_i(x)
""",
    )
    assert _platforms(facts, "default_config") == {"tpu"}
    assert _platforms(facts, "interpreted_config") is None
    assert _platforms(facts, "positional_config") is None  # which field True sets: unknown
    assert _platforms(facts, "partial_off") == {"tpu"}
    assert _platforms(facts, "partial_on") is None
    assert _platforms(facts, "default_off") == {"tpu"}
    # called with a config nobody names, the field may be on: nothing is known
    assert _platforms(facts, "with_config") is None
    assert _platforms(facts, "forwarded") is None


def test_the_rules_name_the_config_field_that_interprets(
    make_lib: MakeLib, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The rules' requirement names the field of a config argument that turns interpret
    mode on (the evaluator reads the argument at each call site instead). Goes with the
    rules (``TYPED_PALLAS_SUMMARIES=0``)."""
    monkeypatch.setenv(SUMMARIES_ENV, "0")
    facts = _library(
        make_lib,
        """
import dataclasses

@dataclasses.dataclass
class Config:
    interpret: bool = False

def with_config(x, config: Config):
    return tpu_op_i(x, interpret=config.interpret)

def forwarded(x, config: Config):
    return with_config(x, config)
""",
    )
    found = facts.requirement("pkg.forms.with_config")
    assert found is not None
    assert found.interpret == ("config", 1)
    assert found.interpret_field == ("interpret", True)
    forwarded = facts.requirement("pkg.forms.forwarded")
    assert forwarded is not None and forwarded.interpret_field == ("interpret", True)


def test_guard_helpers_of_a_library(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
def on_gpu():
    return jax.default_backend() == "gpu"

def not_on_tpu():
    return not jax.devices()[0].platform == "tpu"

def either():
    return on_gpu() or jax.default_backend() in ("tpu",)

def backend():
    return jax.default_backend()

def not_a_helper():
    return 3
""",
    )
    gpu = frozenset({"cuda", "rocm"})
    assert facts.helper("pkg.forms.on_gpu") == ((gpu, frozenset({"tpu", "cpu"})), False)
    assert facts.helper("pkg.forms.not_on_tpu") == (
        (frozenset({"cuda", "rocm", "cpu"}), frozenset({"tpu"})),
        False,
    )
    assert facts.helper("pkg.forms.either") == ((gpu | {"tpu"}, frozenset({"cpu"})), False)
    assert facts.helper("pkg.forms.backend") == (None, True)
    assert facts.helper("pkg.forms.not_a_helper") == (None, False)


def test_decorators_of_the_library_that_keep_the_function(make_lib: MakeLib) -> None:
    """A decorator of the library keeps the function when every value it returns does: a
    ``functools.wraps(fn)`` closure, ``jax.jit(fn)`` (also through a variable), and
    ``functools.partial(itself, ...)`` for its ``@deco(...)`` form (ejkernel's ``ejit``).
    One that may return something else hides what the function runs."""
    facts = _library(
        make_lib,
        """
def ejit(func=None, *, static_argnums=None):
    if func is None:
        return functools.partial(ejit, static_argnums=static_argnums)
    if static_argnums is None:
        jitted = jax.jit(func)
        return jitted
    jitted = jax.jit(func, static_argnums=static_argnums)

    @functools.wraps(func)
    def wrapper(*args, **kwargs):
        return jitted(*args, **kwargs)

    return wrapper

def replaces(func):
    if func is None:
        return None
    return lambda *args: 0

@ejit
def bare(x):
    return tpu_op(x)

@ejit(static_argnums=(1,))
def called(x, n):
    return tpu_op(x)

@replaces
def replaced(x):
    return tpu_op(x)
""",
    )
    assert _platforms(facts, "bare") == {"tpu"}
    assert _platforms(facts, "called") == {"tpu"}
    assert _platforms(facts, "replaced") is None
    assert facts.definition("pkg.forms.ejit").keeping_decorator
    assert not facts.definition("pkg.forms.replaces").keeping_decorator


def test_a_memoized_build_runs_what_fills_its_cache(make_lib: MakeLib) -> None:
    """``fn = CACHE.get(key)``, refilled with ``fn = build()`` and ``CACHE[key] = fn``
    when missing: ``fn(x)`` runs what ``build()`` made when the module fills the cache
    with nothing else and hands it to nobody (tokamax's fused MoE builds its kernel
    and its ``shard_map`` this way)."""
    facts = _library(
        make_lib,
        """
import threading

_BUILT = {}
_BY_INDEX = {}
_LOCK = threading.Lock()
_SHARED = {}
_DEFAULTED = {}
_EXPORTED = dict()

def memoized(x):
    key = x.shape
    fn = _BUILT.get(key)
    if fn is None:
        with _LOCK:
            fn = _BUILT.get(key)
            if fn is None:
                fn = jax.jit(tpu_op)
                _BUILT[key] = fn
                print(len(_BUILT), key in _BUILT)
    return fn(x)

def memoized_by_index(x):
    key = x.shape
    if key in _BY_INDEX:
        fn = _BY_INDEX[key]
    else:
        fn = jax.jit(tpu_op)
        _BY_INDEX[key] = fn
    return fn(x)

def filled_twice(x):
    fn = _SHARED.get(x.shape)
    if fn is None:
        fn = jax.jit(tpu_op)
        _SHARED[x.shape] = fn
    return fn(x)

def fills_with_another(x):
    _SHARED[x.shape] = triton_op
    return x

def with_a_default(x):
    fn = _DEFAULTED.get(x.shape, triton_op)
    if fn is None:
        fn = jax.jit(tpu_op)
        _DEFAULTED[x.shape] = fn
    return fn(x)

def handed_out(x):
    fn = _EXPORTED.get(x.shape)
    if fn is None:
        fn = jax.jit(tpu_op)
        _EXPORTED[x.shape] = fn
    return fn(x)

def exported():
    return _EXPORTED
""",
    )
    assert _platforms(facts, "memoized") == {"tpu"}
    assert _platforms(facts, "memoized_by_index") == {"tpu"}
    assert _platforms(facts, "filled_twice") is None  # the cache may hold triton_op
    # nothing is ever stored (a miss gives ``triton_op``, never None): always triton_op
    assert _platforms(facts, "with_a_default") == {"cuda", "rocm"}
    assert _platforms(facts, "handed_out") is None  # whoever gets the dict may fill it


def test_a_global_another_function_rebinds(make_lib: MakeLib) -> None:
    """A caller may call the module's functions in any order: what a function reads
    of the module's state holds only if it holds after the others ran too (``global``
    rebinds a name; a method sets an attribute of a module-level instance)."""
    facts = _library(
        make_lib,
        """
_IMPL = tpu_op
_KEPT = tpu_op

class Holder:
    def __init__(self):
        self.fn = tpu_op

    def swap(self):
        self.fn = triton_op

HOLDER = Holder()
STEADY = Holder()

def use_impl(x):
    return _IMPL(x)

def use_kept(x):
    return _KEPT(x)

def use_holder(x):
    return HOLDER.fn(x)

def use_steady(x):
    return STEADY.fn(x)

def switch():
    global _IMPL
    _IMPL = triton_op

def swap_holder():
    HOLDER.swap()

def peek():
    return _KEPT, STEADY.fn
""",
    )
    assert _platforms(facts, "use_impl") is None  # ``switch()`` may have run
    assert _platforms(facts, "use_kept") == {"tpu"}  # nothing rebinds it
    assert _platforms(facts, "use_holder") is None  # ``swap_holder()`` may have run
    assert _platforms(facts, "use_steady") == {"tpu"}


def test_a_subscript_or_attribute_store_binds_no_name(make_lib: MakeLib) -> None:
    """``self.calls += 1`` and ``CACHE[key] = ...`` read ``self`` and ``CACHE``: the
    method's ``self`` is still the instance (``self._run(x)`` is its method), the
    global is still the global."""
    facts = _library(
        make_lib,
        """
class Counting:
    def __init__(self):
        self.calls = 0

    def _run(self, x):
        return tpu_op(x)

    def __call__(self, x):
        self.calls += 1
        return self._run(x)

    def rebinds(self, x):
        self = Counting()
        return self._run(x)

def counted(x):
    return Counting()(x)

def rebound(x):
    return Counting().rebinds(x)
""",
    )
    assert _platforms(facts, "counted") == {"tpu"}
    assert _platforms(facts, "rebound") == {"tpu"}  # ``self`` is a new Counting


def test_jax_api_table_decides_what_runs(make_lib: MakeLib) -> None:
    """Calls no shape names, read from ``inference.jax_api``'s rows: a keeper's result
    runs the function, a call that traces now runs it, one that only traces (to shapes)
    or runs it on the host, or for each item of a pytree (maybe none), restricts nothing."""
    facts = _library(
        make_lib,
        """
import jax.numpy as jnp
from jax.experimental import checkify

def vectorized(x):
    return jnp.vectorize(tpu_op)(x)

def checkified(x):
    return checkify.checkify(tpu_op)(x)

def named(x):
    return jax.named_call(triton_op, name="k")(x)

def piecewise(x):
    return jnp.piecewise(x, [x > 0], [tpu_op, tpu_op])

def root(x):
    return jax.lax.custom_root(plain, x, solve=lambda f, y: tpu_op(y), tangent_solve=plain)

def shapes_only(x):
    return jax.eval_shape(tpu_op, x)

def host(x):
    return jax.pure_callback(tpu_op, x, x)

def each_leaf(xs):
    return jax.tree.map(tpu_op, xs)

def vectorized_plain(x):
    return jnp.vectorize(plain)(x)
""",
    )
    assert _platforms(facts, "vectorized") == {"tpu"}
    assert _platforms(facts, "checkified") == {"tpu"}
    assert _platforms(facts, "named") == {"cuda", "rocm"}
    assert _platforms(facts, "piecewise") == {"tpu"}
    assert _platforms(facts, "root") == {"tpu"}
    assert _platforms(facts, "shapes_only") is None
    assert _platforms(facts, "host") is None
    assert _platforms(facts, "each_leaf") is None
    assert _platforms(facts, "vectorized_plain") is None


def test_differentiation_runs_the_rules_instead_of_the_primal(make_lib: MakeLib) -> None:
    """Differentiated, a ``custom_vjp`` / ``custom_jvp`` function runs its rules, not its
    primal; ``jax.vjp`` runs the forward rule now and the backward one when the pullback
    is called; ``jax.linearize`` runs a ``custom_jvp`` rule's tangent part when the linear
    function is applied; ``@f.defjvp`` registers a rule like ``f.defjvp(rule)``."""
    facts = _library(
        make_lib,
        """
@jax.custom_vjp
def kernel_primal(x):
    return tpu_op(x)

def kernel_primal_fwd(x):
    return x * 2, None

def kernel_primal_bwd(res, g):
    return (g,)

kernel_primal.defvjp(kernel_primal_fwd, kernel_primal_bwd)

@jax.custom_vjp
def backward_kernel(x):
    return x * 2

def backward_kernel_fwd(x):
    return x * 2, None

def backward_kernel_bwd(res, g):
    return (tpu_op(g),)

backward_kernel.defvjp(backward_kernel_fwd, backward_kernel_bwd)

@jax.custom_jvp
def tangent_kernel(x):
    return x * 2

@tangent_kernel.defjvp
def tangent_kernel_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return x * 2, tpu_op(t)

def grad_of_kernel_primal(x):
    return jax.grad(kernel_primal)(x)

def primal_alone(x):
    return kernel_primal(x)

def grad_of_backward_kernel(x):
    return jax.grad(backward_kernel)(x)

def pullback_called(x):
    out, pull = jax.vjp(backward_kernel, x)
    return pull(out)

def pullback_not_called(x):
    out, pull = jax.vjp(backward_kernel, x)
    return out

def jvp_of_decorated_rule(x):
    return jax.jvp(tangent_kernel, (x,), (x,))

def decorated_rule_primal_alone(x):
    return tangent_kernel(x)

def linear_function_applied(x):
    y, f_jvp = jax.linearize(tangent_kernel, x)
    return f_jvp(x)

def linear_function_not_applied(x):
    y, f_jvp = jax.linearize(tangent_kernel, x)
    return y
""",
    )
    assert _platforms(facts, "grad_of_kernel_primal") is None
    assert _platforms(facts, "primal_alone") == {"tpu"}
    assert _platforms(facts, "grad_of_backward_kernel") == {"tpu"}
    assert _platforms(facts, "pullback_called") == {"tpu"}
    assert _platforms(facts, "pullback_not_called") is None
    assert _platforms(facts, "jvp_of_decorated_rule") == {"tpu"}
    assert _platforms(facts, "decorated_rule_primal_alone") is None
    assert _platforms(facts, "linear_function_applied") == {"tpu"}
    assert _platforms(facts, "linear_function_not_applied") is None


def test_what_only_python_reads_is_not_lowered_by_the_rules(make_lib: MakeLib) -> None:
    # ``is_leaf`` is called while the tree is flattened, and only Python reads its answer:
    # a kernel it runs is dead code, which jax 0.12 drops before lowering (jax 0.10 keeps
    # it at the top level: the rules say nothing, the evaluator knows which end it is)
    facts = _library(
        make_lib,
        """
def structure_with_leaf_test(x):
    treedef = jax.tree_util.tree_structure(x, lambda v: tpu_op(v) is not None)
    return jax.tree_util.tree_unflatten(treedef, [x])

def leaves_with_leaf_test(x):
    return jax.tree_util.tree_leaves(x, lambda v: tpu_op(v) is not None)[0]

def loop_body(x):
    return jax.lax.while_loop(lambda y: False, tpu_op, x)
""",
    )
    assert _platforms(facts, "structure_with_leaf_test") is None
    assert _platforms(facts, "leaves_with_leaf_test") is None
    assert _platforms(facts, "loop_body") == {"tpu"}


def test_a_function_that_raises_elsewhere_before_its_kernel(make_lib: MakeLib) -> None:
    """A function that raises before any kernel off TPU (``NotImplementedError``) and runs
    a TPU kernel on TPU lowers only for TPU: on every other platform a call fails. Turning
    interpret mode on does not make it run elsewhere; with no kernel, or raising
    everywhere, nothing restricts it."""
    facts = _library(
        make_lib,
        """
def off_tpu_raises(x):
    if jax.default_backend() != "tpu":
        raise NotImplementedError("TPU only")
    return tpu_op(x)

def off_tpu_raises_interpretable(x, interpret=False):
    if jax.default_backend() != "tpu":
        raise NotImplementedError("TPU only")
    return tpu_op_i(x, interpret=interpret)

def off_tpu_raises_plain(x):
    if jax.default_backend() != "tpu":
        raise NotImplementedError("TPU only")
    return plain(x)

def always_raises(x):
    raise NotImplementedError("not yet")
""",
    )
    assert _platforms(facts, "off_tpu_raises") == {"tpu"}
    interpretable = facts.requirement("pkg.forms.off_tpu_raises_interpretable")
    assert interpretable is not None and set(interpretable.platforms) == {"tpu"}
    assert interpretable.interpret is None  # interpreted, it still raises off TPU
    assert _platforms(facts, "off_tpu_raises_plain") is None
    assert _platforms(facts, "always_raises") is None
