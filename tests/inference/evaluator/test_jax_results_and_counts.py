"""What JAX's table says a call returns and how often it calls a function, as the
evaluator runs it (each column proven against JAX in ``tests/inference/test_jax_api.py``):

- a derivative entry point returns its derivative as a callable that lowers the rules
  it deferred (``jax.vjp``'s pullback runs a ``custom_vjp``'s ``bwd``; ``jax.linearize``'s
  function, a ``custom_jvp``'s rule; ``jax.fwd_and_bwd``'s ``bwd``), and a tuple of known
  length (``closure_convert``'s function and constants);
- a jaxpr (``jax.make_jaxpr(f)(x)``) lowers what ``f`` traced when it is evaluated
  (``jaxpr_as_fun``, ``core.eval_jaxpr``), not before;
- a rule (``custom_root``'s ``tangent_solve``, ``custom_linear_solve``'s
  ``transpose_solve``) lowers under the transformation that asks for it only;
- a context manager of the table decorates as it manages: ``@jax.named_scope("n")`` runs
  the function, ``force_tpu_interpret_mode`` interprets every kernel under it;
- a function is called as many times as the arguments say: once per item
  (``jnp.apply_over_axes``), per axis (``jnp.pad``'s ``mode``), when an axis has two
  elements (``lax.associative_scan``), per leaf after the first (``reduce_associative``);
- ``x.at[i].apply(f)`` calls ``f``;
- what ``is_leaf`` runs answers Python only: dead code, dropped from jax 0.12 on.
"""

from __future__ import annotations

import pytest
from evaluator_programs import TPU_FIRES_TRITON_SILENT, fires

OLD = (0, 10, 2)
NEW = (0, 12, 1)


def _guarded(call: str, head: str = "", setup: str = "pass") -> str:
    return f"""
import jax.numpy as jnp
import jax.extend
from jax.experimental.pallas import tpu as pltpu
{head}
def main(x):
    x = jnp.zeros((8, 128), jnp.float32)
    {setup}
    if jax.default_backend() == "gpu":
        return {call}  # here
    return x
"""


CUSTOM_VJP = """
@jax.custom_vjp
def op(x):
    return x * 2.0

def op_fwd(x):
    return x * 2.0, None

def op_bwd(res, g):
    return (lib.kernel(g),)

op.defvjp(op_fwd, op_bwd)
"""

CUSTOM_JVP = """
@jax.custom_jvp
def op(x):
    return x * 2.0

@op.defjvp
def op_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return x * 2.0, t * lib.kernel(x)
"""


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize(
    ("head", "setup", "call"),
    [
        (CUSTOM_VJP, "y, pullback = jax.vjp(op, x)", "pullback(y)"),
        (CUSTOM_JVP, "y, f_jvp = jax.linearize(op, x)", "f_jvp(x)"),
        (CUSTOM_VJP, "fwd, bwd = jax.fwd_and_bwd(op, argnums=0)", "bwd(*fwd(x)[::-1])"),
    ],
    ids=["vjp-pullback", "linearize-function", "fwd-and-bwd"],
)
def test_a_derivative_callable_lowers_the_deferred_rules(
    head: str, setup: str, call: str, params: str, expected: bool
) -> None:
    assert fires(_guarded(call, head, setup), params) is expected


@pytest.mark.parametrize(
    ("head", "setup", "call"),
    [
        (CUSTOM_VJP, "y, pullback = jax.vjp(op, x)", "y"),
        (CUSTOM_JVP, "y, f_jvp = jax.linearize(op, x)", "y"),
        (CUSTOM_VJP, "fwd, bwd = jax.fwd_and_bwd(op, argnums=0)", "fwd(x)"),
    ],
    ids=["vjp-alone", "linearize-alone", "fwd-alone"],
)
def test_a_derivative_callable_not_called_lowers_no_rule(head: str, setup: str, call: str) -> None:
    assert not fires(_guarded(call, head, setup))


@TPU_FIRES_TRITON_SILENT
def test_closure_convert_returns_the_function_and_its_constants(
    params: str, expected: bool
) -> None:
    setup = "fn, consts = jax.closure_convert(lib.kernel, x)"
    assert fires(_guarded("fn(x, *consts)", setup=setup), params) is expected


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize(
    "call",
    [
        "jax.extend.core.jaxpr_as_fun(closed)(x)[0]",
        "jax.core.eval_jaxpr(closed.jaxpr, closed.consts, x)[0]",
    ],
    ids=["jaxpr-as-fun", "eval-jaxpr"],
)
def test_a_jaxpr_evaluated_lowers_what_its_function_traced(
    call: str, params: str, expected: bool
) -> None:
    head = "import jax.core"
    assert fires(_guarded(call, head, "closed = jax.make_jaxpr(lib.kernel)(x)"), params) is expected


def test_a_jaxpr_alone_lowers_nothing() -> None:
    assert not fires(_guarded("(jax.make_jaxpr(lib.kernel)(x), x)[1]"))


SOLVERS = {
    "custom-root": "jax.lax.custom_root(lambda v: v - b, b, lambda f, x0: x0, "
    "lambda g, y: y * lib.kernel(b))",
    "linear-solve": "jax.lax.custom_linear_solve(lambda v: v, b, lambda matvec, r: r, "
    "lambda vecmat, r: r * lib.kernel(b))",
}


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_a_rule_lowers_under_the_transformation_that_asks(
    solver: str, params: str, expected: bool
) -> None:
    head = f"def solve(b):\n    return {SOLVERS[solver]}\n"
    call = "jax.grad(lambda v: solve(v).sum())(x)"
    assert fires(_guarded(call, head), params) is expected


@pytest.mark.parametrize("solver", sorted(SOLVERS))
def test_a_rule_lowers_nothing_called_plainly(solver: str) -> None:
    head = f"def solve(b):\n    return {SOLVERS[solver]}\n"
    assert not fires(_guarded("solve(x)", head))


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        ("@jax.named_scope('op')", True),
        ("@jax.ensure_compile_time_eval()", True),
        ("@jax.disable_jit()", True),
        ("@pltpu.force_tpu_interpret_mode()", False),
    ],
    ids=["named-scope-fires", "compile-time-eval-fires", "disable-jit-fires", "interpret-silent"],
)
def test_a_context_manager_as_a_decorator(head: str, expected: bool) -> None:
    program = f"{head}\ndef op(x):\n    return lib.kernel(x)\n"
    assert fires(_guarded("op(x)", program)) is expected


def test_force_tpu_interpret_mode_interprets_the_kernels_under_it() -> None:
    program = """
from jax.experimental.pallas import tpu as pltpu

def main(x):
    if jax.default_backend() == "gpu":
        with pltpu.force_tpu_interpret_mode():
            return lib.kernel(x)  # here
    return x
"""
    assert not fires(program)
    assert fires(program.replace("pltpu.force_tpu_interpret_mode()", "jax.named_scope('n')"))


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("jnp.apply_over_axes(lambda a, axis: lib.kernel(a), x, [0])", True),
        ("jnp.apply_over_axes(lambda a, axis: lib.kernel(a), x, [])", False),
        ("jnp.pad(x, 1, mode=lambda v, w, i, k: v + lib.kernel(x)[0, 0])", True),
        ("jax.lax.associative_scan(lambda a, b: lib.kernel(a) + b, jnp.stack([x, x]))", True),
        ("jax.lax.associative_scan(lambda a, b: lib.kernel(a) + b, x[None])", False),
        ("jax.tree.reduce_associative(lambda a, b: lib.kernel(a) + b, (x, x))", True),
        ("jax.tree.reduce_associative(lambda a, b: lib.kernel(a) + b, (x,))", False),
        ("x.at[0, 0].apply(lambda v: v + lib.kernel(x)[0, 0])", True),
    ],
    ids=[
        "per-item-fires",
        "no-item-silent",
        "per-axis-fires",
        "two-along-the-axis-fires",
        "one-along-the-axis-silent",
        "two-leaves-fires",
        "one-leaf-silent",
        "index-update-apply-fires",
    ],
)
def test_how_often_jax_calls_a_function(call: str, expected: bool) -> None:
    assert fires(_guarded(call)) is expected


@pytest.mark.parametrize(
    "call",
    [
        "jnp.pad(x, 1, mode=lambda v, w, i, k: v + lib.kernel(x)[0, 0])",
        "x.at[0, 0].apply(lambda v: v + lib.kernel(x)[0, 0])",
    ],
    ids=["per-axis", "index-update-apply"],
)
def test_how_often_jax_calls_a_function_silent_for_the_right_params(call: str) -> None:
    assert not fires(_guarded(call), params="pltriton.CompilerParams()")


@pytest.mark.parametrize(
    ("release", "expected"), [(OLD, True), (NEW, False)], ids=["0.10.2", "0.12.1"]
)
def test_what_is_leaf_runs_is_dead_code_from_jax_0_12(
    release: tuple[int, ...], expected: bool
) -> None:
    call = "jax.tree.map(lambda v: v, x, is_leaf=lambda v: lib.kernel(v) is not None)"
    assert fires(_guarded(call), release=release) is expected


@TPU_FIRES_TRITON_SILENT
def test_a_rule_calling_a_custom_jvp_function_runs_its_body(params: str, expected: bool) -> None:
    """A rule is traced as a jaxpr of its own, not differentiated: a ``custom_jvp``
    function it calls runs its primal body, not its jvp rule."""
    head = """
@jax.custom_jvp
def op(x):
    return lib.kernel(x)

@op.defjvp
def op_jvp(primals, tangents):
    return primals[0], tangents[0]

def solve(b):
    return jax.lax.custom_root(lambda v: v - b, b, lambda f, x0: x0, lambda g, y: y * op(b))
"""
    call = "jax.grad(lambda v: solve(v).sum())(x)"
    assert fires(_guarded(call, head), params) is expected


CUSTOM_VMAP = """
@jax.custom_batching.custom_vmap
def op(x):
    return x * 2.0

@op.def_vmap
def op_rule(axis_size, in_batched, xs):
    return jax.lax.map(lib.kernel, xs), True
"""


@TPU_FIRES_TRITON_SILENT
def test_a_custom_vmap_function_batched_runs_its_rule(params: str, expected: bool) -> None:
    """Under ``jax.vmap`` JAX runs the ``def_vmap`` rule with the batched arguments (one
    row here: ``lax.map`` calls its function once)."""
    assert fires(_guarded("jax.vmap(op)(x[None])[0]", CUSTOM_VMAP), params) is expected


def test_a_custom_vmap_function_called_plainly_runs_its_body() -> None:
    assert not fires(_guarded("op(x)", CUSTOM_VMAP))


@TPU_FIRES_TRITON_SILENT
def test_cond_passes_its_operand_keyword(params: str, expected: bool) -> None:
    call = "jax.lax.cond(x.sum() > 0, lib.kernel, lambda v: v, operand=x)"
    assert fires(_guarded(call), params) is expected


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize(
    "solver",
    [
        "jax.lax.custom_root(lambda v: v - x, x, lambda f, x0: {tree}, lambda g, y: y)",
        "jax.lax.custom_linear_solve(lambda v: v, x, lambda matvec, x0: {tree})",
    ],
    ids=["custom-root", "linear-solve"],
)
def test_a_solver_passes_its_initial_value_to_solve(
    solver: str, params: str, expected: bool
) -> None:
    """JAX calls ``solve(f, b)`` with the call's own ``b`` (``Arg.operands``): a tree
    of it has one leaf, so a ``jax.tree.map`` over it calls its function."""
    call = solver.format(tree="jax.tree.map(lib.kernel, {'a': x0})['a']")
    assert fires(_guarded(call), params) is expected


@pytest.mark.parametrize("release", [OLD, NEW], ids=["0.10.2", "0.12.1"])
def test_a_dead_kernel_in_a_platform_dependent_branch_is_dropped_at_both_ends(
    release: tuple[int, ...],
) -> None:
    """``lax.platform_dependent`` switches on the platform: a kernel whose result nothing
    uses (a predicate's) inside a branch is dropped with it, as inside ``lax.cond``, at
    jax 0.10 as at 0.12 (measured by cross-lowering: the generated programs' one false
    finding of seed 77)."""
    head = "import itertools\ndef pick(v):\n    return jax.lax.platform_dependent(v, cuda=lib.kernel, default=lambda u: u)\n"
    call = "next(itertools.dropwhile(lambda v: pick(v) is None, [x]))"
    assert not fires(_guarded(call, head), release=release)
    assert fires(_guarded("pick(x)", head), release=release)


BOX = """
@jax.tree_util.register_pytree_node_class
class Box:
    def __init__(self, fn):
        self.fn = fn

    def tree_flatten(self):
        return (), self.fn

    @classmethod
    def tree_unflatten(cls, fn, children):
        return cls(fn)
"""


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("jax.tree.leaves([None, lib.tpu_kernel])[0](x)", True),
        ("jax.tree.leaves([None, lib.triton_kernel])[0](x)", False),
        ("jax.tree.leaves({'b': lib.triton_kernel, 'a': lib.tpu_kernel})[0](x)", True),
        ("jax.tree.leaves({'b': lib.tpu_kernel, 'a': lib.triton_kernel})[0](x)", False),
        ("jax.tree.unflatten(jax.tree.structure({'fn': 0}), [lib.tpu_kernel])['fn'](x)", True),
        ("jax.tree.map(lambda f: f, (lib.tpu_kernel,))[0](x)", True),
        ("jax.tree.map(lambda f: lib.triton_kernel, (lib.tpu_kernel,))[0](x)", False),
        ("jax.tree.map(lambda v: v, Box(lib.tpu_kernel)).fn(x)", True),
        ("jax.tree.map(lambda v: v, Box(lib.triton_kernel)).fn(x)", False),
    ],
    ids=[
        "none-has-no-leaf-fires",
        "none-has-no-leaf-silent",
        "sorted-keys-fires",
        "sorted-keys-silent",
        "flatten-unflatten-fires",
        "map-rebuilds-fires",
        "map-results-silent",
        "registered-class-fires",
        "registered-class-silent",
    ],
)
def test_functions_as_leaves_of_pytrees(call: str, expected: bool) -> None:
    assert fires(_guarded(call, BOX)) is expected


@TPU_FIRES_TRITON_SILENT
def test_a_jaxpr_runs_its_function_with_what_it_was_traced_with(
    params: str, expected: bool
) -> None:
    """``make_jaxpr(f)(x)`` traced ``f`` with ``x``: evaluating the jaxpr runs ``f`` on
    it (one leaf here, so ``jax.tree.map`` calls its function)."""
    head = "def f(v):\n    return jax.tree.map(lib.kernel, {'a': v})['a']\n"
    call = "jax.extend.core.jaxpr_as_fun(jax.make_jaxpr(f)(x))(x)[0]"
    assert fires(_guarded(call, head), params) is expected


@pytest.mark.parametrize(
    ("stop", "expected"),
    [("False", True), ("isinstance(v, dict)", False)],
    ids=["reaches-the-array-fires", "stops-at-the-root-silent"],
)
def test_is_leaf_is_called_on_each_node_from_the_root_down(stop: str, expected: bool) -> None:
    # ``is_leaf`` runs the kernel on an array; JAX calls it on the dict, then (when it
    # answered false) on the array. Only Python reads its answer: jax 0.10 keeps the
    # kernel at the top level (a finding), jax 0.12 drops it as dead code
    app = f"""
def is_leaf(v):
    if isinstance(v, jax.Array):
        lib.kernel(v)
    return {stop}

def main(x):
    x = jax.numpy.zeros((8, 128))
    if jax.default_backend() == "gpu":
        return jax.tree.leaves({{"w": x}}, is_leaf=is_leaf)  # here
    return x
"""
    assert fires(app, release=(0, 10, 2)) is expected
    assert fires(app, release=(0, 12, 1)) is False


NODES = """
import dataclasses
import typing

class Pair:
    def __init__(self, value, fn):
        self.value, self.fn = value, fn

jax.tree_util.register_pytree_node(
    Pair, lambda p: ((p.value,), p.fn), lambda fn, children: Pair(children[0], fn)
)

class Keyed:
    def __init__(self, fn):
        self.fn = fn

jax.tree_util.register_pytree_with_keys(
    Keyed,
    lambda k: (((jax.tree_util.GetAttrKey("fn"), k.fn),), None),
    lambda _aux, children: Keyed(*children),
)

@jax.tree_util.register_dataclass
@dataclasses.dataclass
class Op:
    value: typing.Any
    fn: typing.Any = dataclasses.field(default=None, metadata=dict(static=True))

@jax.tree_util.register_static
class Config:
    def __init__(self, fn):
        self.fn = fn
"""


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("jax.tree.map(lambda v: v, Pair(x, lib.tpu_kernel)).fn(x)", True),
        ("jax.tree.map(lambda v: v, Pair(x, lib.triton_kernel)).fn(x)", False),
        ("jax.tree.leaves(Keyed(lib.tpu_kernel))[0](x)", True),
        ("jax.tree.leaves(Keyed(lib.triton_kernel))[0](x)", False),
        ("jax.tree.map(lambda v: v + 1, Op(x, lib.tpu_kernel)).fn(x)", True),
        ("jax.tree.map(lambda v: v + 1, Op(x, lib.triton_kernel)).fn(x)", False),
        ("jax.tree.map(lambda v: lib.triton_kernel, [Config(lib.tpu_kernel)])[0].fn(x)", True),
        ("jax.tree.leaves_with_path({'w': lib.tpu_kernel})[0][1](x)", True),
        (
            "{jax.tree_util.keystr(p): f for p, f in "
            "jax.tree.leaves_with_path({'w': [lib.tpu_kernel]})}[\"['w'][0]\"](x)",
            True,
        ),
        ("(lib.tpu_kernel if jax.tree.all({'a': True}) else lib.triton_kernel)(x)", True),
        ("(lib.tpu_kernel if jax.tree.all([True, 0]) else lib.triton_kernel)(x)", False),
    ],
    ids=[
        "register-pytree-node-fires",
        "register-pytree-node-silent",
        "register-with-keys-fires",
        "register-with-keys-silent",
        "register-dataclass-static-field-kept-fires",
        "register-dataclass-static-field-kept-silent",
        "register-static-has-no-leaf-fires",
        "leaves-with-path-fires",
        "keystr-fires",
        "tree-all-true-fires",
        "tree-all-false-silent",
    ],
)
def test_registered_nodes_and_key_paths(call: str, expected: bool) -> None:
    assert fires(_guarded(call, NODES)) is expected


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("op(x)", True),
        ("jax.jit(op)(x)", True),
        ("fuser.get_fusion_values(lib.tpu_kernel, x)[0]([], x)", True),
        ("fuser.get_fusion_values(lambda: lib.tpu_kernel(x))[0]([])", True),
        ("fuser.get_fusion_values(lib.tpu_kernel, x)[1]", False),
        ("fuser.get_fusion_values(lib.triton_kernel, x)[0]([], x)", False),
    ],
    ids=[
        "fusible-fires",
        "fusible-jitted-fires",
        "fusion-values-replayed-fires",
        "fusion-values-closure-replayed-fires",
        "fusion-values-not-replayed-silent",
        "fusion-values-triton-silent",
    ],
)
def test_fuser_calls(call: str, expected: bool) -> None:
    head = """
from jax.experimental.pallas import fuser

@fuser.fusible
def op(x_fusion, out_fusion):
    y = lib.tpu_kernel(x_fusion())
    return y if out_fusion is None else out_fusion(y)
"""
    assert fires(_guarded(call, head)) is expected


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("compute_on(lib.tpu_kernel, compute_type='device')(x)", True),
        ("compute_on2(lib.tpu_kernel, compute_type='device')(x)", True),
        ("compute_on(lib.tpu_kernel, compute_type='device_host')(x)", False),
        ("compute_on(lib.tpu_kernel, compute_type=kind)(x)", False),
        ("functools.partial(compute_on, compute_type='device')(lib.tpu_kernel)(x)", True),
    ],
    ids=[
        "device-fires",
        "device-old-name-fires",
        "host-silent",
        "not-known-silent",
        "partial-fires",
    ],
)
def test_compute_on_lowers_with_the_program_only_on_the_device(call: str, expected: bool) -> None:
    # jax 0.12's ``compute_on`` is a function of one (jax 0.10's a context manager)
    head = """
import functools
import os
from jax.experimental.compute_on import compute_on, compute_on2

kind = os.environ.get("KIND")
"""
    assert fires(_guarded(call, head)) is expected
