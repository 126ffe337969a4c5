"""JAX's API as JAX defines it: ``jax.jit``, ``jax.vmap``, ``jax.checkpoint`` call the
function they wrap when called; ``jax.custom_vjp`` calls its primal (its backward rule
runs only under differentiation); ``lax.cond`` and ``lax.switch`` lower every branch
whatever the predicate; ``lax.fori_loop`` lowers its body; ``lax.platform_dependent``
lowers the branch for the platform it lowers for; ``jax.tree.map`` calls its function on
each leaf; ``jax.eval_shape`` and ``jax.make_jaxpr`` trace without lowering; a kernel in
interpret mode lowers anywhere.
"""

from __future__ import annotations

import pytest
from evaluator_programs import TPU_FIRES_TRITON_SILENT, fires


def _guarded(setup: str, call: str, head: str = "") -> str:
    return f"""
import jax.numpy as jnp
{head}
def main(x):
    {setup}
    if jax.default_backend() == "gpu":
        return {call}  # here
    return x
"""


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize(
    "transform",
    [
        "jax.jit(lib.kernel)",
        "jax.jit(lib.kernel, donate_argnums=0)",
        "jax.vmap(lib.kernel)",
        "jax.vmap(jax.jit(lib.kernel))",
        "jax.checkpoint(lib.kernel)",
        "jax.remat(lib.kernel)",
    ],
)
def test_transformation_calls_the_function(transform: str, params: str, expected: bool) -> None:
    assert fires(_guarded(f"f = {transform}", "f(x)"), params) is expected


@TPU_FIRES_TRITON_SILENT
def test_jit_as_a_decorator(params: str, expected: bool) -> None:
    head = "@jax.jit\ndef step(x):\n    return lib.kernel(x)\n"
    assert fires(_guarded("pass", "step(x)", head), params) is expected


CUSTOM_VJP = """
@jax.custom_vjp
def op(x):
    return lib.{primal}(x)

def op_fwd(x):
    return op(x), None

def op_bwd(res, g):
    return (lib.{backward}(g),)

op.defvjp(op_fwd, op_bwd)
"""


@pytest.mark.parametrize(
    ("primal", "backward", "expected"),
    [
        ("tpu_kernel", "triton_kernel", True),
        ("triton_kernel", "triton_kernel", False),
        ("triton_kernel", "tpu_kernel", False),
    ],
    ids=["primal-tpu-fires", "triton-silent", "backward-only-silent"],
)
def test_custom_vjp_calls_its_primal(primal: str, backward: str, expected: bool) -> None:
    head = CUSTOM_VJP.format(primal=primal, backward=backward)
    assert fires(_guarded("pass", "op(x)", head)) is expected


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize(
    "call",
    [
        "lax.cond(x[0] > 0, lib.kernel, lambda v: v, x)",
        "lax.cond(x[0] > 0, lambda v: v, lib.kernel, x)",
        "lax.cond(True, lambda v: v, lib.kernel, x)",
    ],
    ids=["true-branch", "false-branch", "concrete-predicate"],
)
def test_cond_lowers_both_branches(call: str, params: str, expected: bool) -> None:
    assert fires(_guarded("pass", call), params) is expected


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize("index", ["0", "1", "i"])
def test_switch_lowers_every_branch(index: str, params: str, expected: bool) -> None:
    call = f"lax.switch({index}, [lambda v: v, lib.kernel], x)"
    assert fires(_guarded("i = x.shape[0] % 2", call), params) is expected


@TPU_FIRES_TRITON_SILENT
def test_fori_loop_lowers_its_body(params: str, expected: bool) -> None:
    call = "lax.fori_loop(0, 3, lambda i, v: lib.kernel(v), x)"
    assert fires(_guarded("pass", call), params) is expected


@pytest.mark.parametrize(
    ("branches", "expected"),
    [
        ("tpu=lambda v: v, default=lib.tpu_kernel", True),
        ("cuda=lib.tpu_kernel, rocm=lib.tpu_kernel, default=lambda v: v", True),
        ("tpu=lib.tpu_kernel, default=lambda v: v", False),
        ("tpu=lib.tpu_kernel, default=lib.triton_kernel", False),
    ],
    ids=["default-for-gpu-fires", "gpu-branches-fire", "tpu-branch-silent", "each-right-silent"],
)
def test_platform_dependent_lowers_the_branch_for_the_platform(
    branches: str, expected: bool
) -> None:
    assert fires(_guarded("pass", f"lax.platform_dependent(x, {branches})")) is expected


def test_platform_dependent_unguarded_each_branch_right() -> None:
    program = """
def main(x):
    return lax.platform_dependent(x, tpu=lib.tpu_kernel, default=lib.triton_kernel)  # here
"""
    assert not fires(program)


@TPU_FIRES_TRITON_SILENT
def test_tree_map_over_an_array(params: str, expected: bool) -> None:
    setup = "y = jnp.zeros((8, 128))"
    assert fires(_guarded(setup, "jax.tree.map(lib.kernel, y)"), params) is expected


def test_tree_map_over_an_empty_tree_calls_nothing() -> None:
    assert not fires(_guarded("pass", "jax.tree.map(lib.tpu_kernel, ())"))


@pytest.mark.parametrize(
    ("setup", "expected"),
    [
        ("f = jax.jit(lib.tpu_kernel)", True),
        ("f = functools.partial(jax.eval_shape, lib.tpu_kernel)", False),
        ("f = jax.make_jaxpr(lib.tpu_kernel)", False),
    ],
    ids=["jit-fires", "eval-shape-silent", "make-jaxpr-silent"],
)
def test_tracing_without_lowering(setup: str, expected: bool) -> None:
    assert fires(_guarded(setup, "f(x)", "import functools")) is expected


def test_eval_shape_is_silent() -> None:
    assert not fires(_guarded("pass", "jax.eval_shape(lib.tpu_kernel, x)"))


@pytest.mark.parametrize(
    ("kernel", "expected"),
    [("tpu_kernel", True), ("interpret_kernel", False)],
    ids=["compiled-fires", "interpret-silent"],
)
def test_interpret_mode_lowers_anywhere(kernel: str, expected: bool) -> None:
    assert fires(_guarded("pass", f"lib.{kernel}(x)")) is expected


@TPU_FIRES_TRITON_SILENT
def test_guard_inside_a_jitted_function(params: str, expected: bool) -> None:
    program = """
@jax.jit
def step(x):
    if jax.default_backend() == "gpu":
        return lib.kernel(x)  # here
    return x

def main(x):
    return step(x)
"""
    assert fires(program, params) is expected


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize(
    "call",
    [
        "jax.lax.cond(x.sum() > 0, step, lambda v: v, x)",
        "jax.lax.switch(0, [step, lambda v: v], x)",
        "jax.lax.map(step, x[None])",
        "jax.lax.while_loop(lambda v: False, step, x)",
        "jax.lax.fori_loop(0, 2, lambda i, v: step(v), x)",
        "jax.lax.scan(lambda c, r: (c, step(r)), 0, x[None])",
    ],
)
def test_control_flow_passes_its_operands_so_defaults_apply(
    call: str, params: str, expected: bool
) -> None:
    """JAX calls each function with its operands and nothing more (``lax.cond(p, f, g,
    x)`` calls ``f(x)``), so a parameter after them keeps its default."""
    head = "def step(v, fn=lib.kernel):\n    return fn(v)\n"
    assert fires(_guarded("pass", call, head), params) is expected


@TPU_FIRES_TRITON_SILENT
def test_a_branch_given_the_shape_its_operand_has(params: str, expected: bool) -> None:
    # the operand keeps its shape: a branch that checks it runs the kernel on every path
    head = "def step(v):\n    if v.ndim != 2:\n        return v\n    return lib.kernel(v)\n"
    call = "jax.lax.cond(x.sum() > 0, step, lambda v: v, y)"
    assert fires(_guarded("y = jnp.zeros((8, 128))", call, head), params) is expected


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize(
    "call",
    [
        "jax.tree_util.tree_map_with_path(lambda path, v: lib.kernel(v), y)",
        "jax.tree.map_with_path(lambda path, v: lib.kernel(v), {'a': y})",
        "jax.tree.map(lambda v, w: lib.kernel(w), [y], [y])",
    ],
)
def test_tree_map_passes_each_leaf_after_its_path(call: str, params: str, expected: bool) -> None:
    # the function is called once per leaf: ``f(path, leaf)`` with a path, ``f(leaf,
    # *other_leaves)`` with more trees (``x``, unknown, might have no leaf)
    assert fires(_guarded("y = jnp.zeros((8, 128))", call), params) is expected
    assert not fires(_guarded("pass", call.replace("y", "x")), params)


def test_tree_map_with_path_over_no_leaves_calls_nothing() -> None:
    call = "jax.tree_util.tree_map_with_path(lambda path, v: lib.tpu_kernel(v), {})"
    assert not fires(_guarded("pass", call))


@pytest.mark.parametrize(
    ("bounds", "expected"),
    [("0, 2", True), ("0, 0", False), ("3, 1", False), ("0, n", True)],
    ids=["two-trips-fires", "zero-trips-silent", "upper-below-silent", "unknown-fires"],
)
def test_fori_loop_with_known_empty_bounds_lowers_nothing(bounds: str, expected: bool) -> None:
    # JAX lowers nothing of a body whose loop runs zero times (its known bounds say so)
    call = f"jax.lax.fori_loop({bounds}, lambda i, v: lib.tpu_kernel(v), x)"
    assert fires(_guarded("n = len(x)", call)) is expected


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("jax.vmap(op)(x)", False),
        ("op(x)", True),
        ("jax.vmap(jax.custom_batching.sequential_vmap(lib.tpu_kernel))(x)", True),
    ],
    ids=["batched-rule-runs-silent", "unbatched-body-fires", "sequential-body-fires"],
)
def test_custom_vmap_runs_its_rule_when_batched(call: str, expected: bool) -> None:
    # under jax.vmap, a custom_vmap function's batching rule runs and its body is only
    # traced for its shapes (never lowered); called as is, its body runs
    head = """
@jax.custom_batching.custom_vmap
def op(x):
    return lib.tpu_kernel(x)

@op.def_vmap
def _rule(axis_size, in_batched, xs):
    return xs * 2.0, True
"""
    assert fires(_guarded("pass", call, head)) is expected


_CUSTOM_VJP = """
@jax.custom_vjp
def op(x):
    return x * 2.0

def _fwd(x):
    return $FWD, None

def _bwd(res, g):
    return ($BWD,)

op.defvjp(_fwd, _bwd)
"""


@pytest.mark.parametrize(
    ("fwd", "bwd", "call", "expected"),
    [
        ("lib.tpu_kernel(x)", "g", "jax.grad(lambda v: op(v).sum())(x)", True),
        ("x * 2.0", "lib.tpu_kernel(g)", "jax.grad(lambda v: op(v).sum())(x)", True),
        ("x * 2.0", "lib.tpu_kernel(g)", "jax.value_and_grad(lambda v: op(v).sum())(x)[1]", True),
        ("x * 2.0", "lib.tpu_kernel(g)", "jax.vjp(op, x)[0]", False),
        ("lib.tpu_kernel(x)", "g", "jax.vjp(op, x)[0]", True),
        ("x * 2.0", "lib.tpu_kernel(g)", "op(x)", False),
        (
            "lib.triton_kernel(x)",
            "lib.triton_kernel(g)",
            "jax.grad(lambda v: op(v).sum())(x)",
            False,
        ),
    ],
    ids=[
        "fwd-under-grad-fires",
        "bwd-under-grad-fires",
        "bwd-under-value-and-grad-fires",
        "bwd-under-vjp-without-pullback-silent",
        "fwd-under-vjp-fires",
        "rules-not-run-undifferentiated-silent",
        "triton-rules-silent",
    ],
)
def test_custom_vjp_runs_its_rules_under_differentiation(
    fwd: str, bwd: str, call: str, expected: bool
) -> None:
    head = _CUSTOM_VJP.replace("$FWD", fwd).replace("$BWD", bwd)
    assert fires(_guarded("pass", call, head)) is expected


_CUSTOM_JVP = """
@jax.custom_jvp
def op(x):
    return $PRIMAL

@op.defjvp
def _jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return $RULE, t
"""


@pytest.mark.parametrize(
    ("primal", "rule", "call", "expected"),
    [
        ("x * 2.0", "lib.tpu_kernel(x)", "jax.jvp(op, (x,), (x,))[0]", True),
        ("x * 2.0", "lib.tpu_kernel(x)", "jax.grad(lambda v: op(v).sum())(x)", True),
        ("lib.tpu_kernel(x)", "x * 2.0", "jax.jvp(op, (x,), (x,))[0]", False),
        ("lib.tpu_kernel(x)", "op(x)", "jax.hessian(lambda v: op(v).sum())(x)", True),
        ("lib.tpu_kernel(x)", "x * 2.0", "op(x)", True),
    ],
    ids=[
        "rule-under-jvp-fires",
        "rule-under-grad-fires",
        "primal-under-jvp-silent",
        "rule-calling-the-function-runs-its-body-fires",
        "undifferentiated-body-fires",
    ],
)
def test_custom_jvp_runs_its_rule_under_differentiation(
    primal: str, rule: str, call: str, expected: bool
) -> None:
    head = _CUSTOM_JVP.replace("$PRIMAL", primal).replace("$RULE", rule)
    assert fires(_guarded("pass", call, head)) is expected


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("jax.tree.reduce(lambda a, b: lib.tpu_kernel(b), [y, y])", True),
        ("jax.tree.reduce(lambda a, b: lib.tpu_kernel(b), [y])", False),
        ("jax.tree_util.tree_reduce(lambda a, b: lib.tpu_kernel(b), [y], y)", True),
        ("jax.tree.reduce(lambda a, b: lib.tpu_kernel(b), x)", False),
    ],
    ids=["two-leaves-fires", "one-leaf-silent", "initializer-fires", "unknown-tree-silent"],
)
def test_tree_reduce_folds_the_leaves(call: str, expected: bool) -> None:
    assert fires(_guarded("y = jnp.zeros((8, 128))", call)) is expected


def test_a_jvp_rules_tangent_work_is_deferred_under_linearize() -> None:
    # jax.linearize hands the tangent part to the linear function it returns: unapplied,
    # the kernel on the tangent is not lowered (the primal part runs now)
    head = """
@jax.custom_jvp
def op(x):
    return x * 2.0

@op.defjvp
def _jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return x * 2.0, lib.tpu_kernel(t)
"""
    assert not fires(_guarded("pass", "jax.linearize(op, x)[0]", head))
    assert fires(_guarded("pass", "jax.jvp(op, (x,), (x,))[1]", head))
