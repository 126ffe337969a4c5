"""Ways a TPU-only kernel is reached (``fire_*``), each with a twin that is right on a
GPU (``silent_*``). Every ``fire_*`` fails to lower for cuda and rocm and lowers for
tpu; every ``silent_*`` lowers for cuda and rocm (``tests/parity/test_ground_truth.py``
proves both by cross-lowering). The argument each takes is in ``tests/parity/parity_cases.py``.
"""

import dataclasses
import functools
import sys

import jax
import jax.numpy as jnp
import pytest
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton

from kernlib.kernels import add_one, tpu_op, tpu_op_2, tpu_op_i, triton_op

try:  # an optional import: a use of None raises, so what runs is the module
    from kernlib import kernels as optional_kernels
except ImportError:
    optional_kernels = None


def _shape(x):
    return jax.ShapeDtypeStruct(x.shape, x.dtype)


# -- a direct call ---------------------------------------------------------------------


def fire_direct(x):
    return tpu_op(x)


def silent_direct(x):
    return triton_op(x)


def fire_optional_import(x):
    return optional_kernels.tpu_op(x)


def silent_optional_import(x):
    return optional_kernels.triton_op(x)


# -- every alternative of an if / match, a conditional expression ------------------------


def fire_if_else(x):
    if x.ndim > 1:
        y = tpu_op(x)
    else:
        y = tpu_op_2(x)
    return y


def silent_if_else(x):
    if x.ndim > 1:
        return tpu_op(x)
    return triton_op(x)


def fire_match(x, mode="a"):
    match mode:
        case "a":
            return tpu_op(x)
        case _:
            return tpu_op_2(x)


def silent_match(x, mode="b"):
    match mode:
        case "a":
            return tpu_op(x)
        case _:
            return triton_op(x)


def fire_choice(x):
    return (tpu_op if x.ndim > 1 else tpu_op_2)(x)


def silent_choice(x):
    return (tpu_op if x.ndim > 1 else triton_op)(x)


def fire_early_exit(x, skip=False):
    if skip:
        raise ValueError("not supported")
    return tpu_op(x)


def silent_early_exit(x, skip=True):
    if skip:
        return x
    return tpu_op(x)


def fire_try(x):
    try:
        y = tpu_op(x)
    except ValueError:
        y = tpu_op_2(x)
    return y


def silent_try(x):
    try:
        y = triton_op(x)
    except ValueError:
        y = tpu_op(x)
    return y


# -- loops -----------------------------------------------------------------------------


def fire_for_literal(x):
    for scale in (1, 2):
        x = tpu_op(x * scale)
    return x


def silent_for_unknown(x, n=0):
    for _ in range(n):
        x = tpu_op(x)
    return x


# -- with blocks -------------------------------------------------------------------------


def fire_with_return(x):
    with jax.named_scope("kernel"):
        return tpu_op(x)


def silent_with_return(x):
    with jax.named_scope("kernel"):
        return triton_op(x)


# -- JAX's control flow: every branch, every body ----------------------------------------


def fire_cond(x):
    return jax.lax.cond(x.sum() > 0, tpu_op, lambda y: y + 1, x)


def silent_cond(x):
    return jax.lax.cond(x.sum() > 0, triton_op, lambda y: y + 1, x)


def fire_switch(x):
    return jax.lax.switch(0, [lambda y: y + 1, tpu_op], x)


def silent_switch(x):
    return jax.lax.switch(0, [lambda y: y + 1, triton_op], x)


def fire_fori_loop(x):
    return jax.lax.fori_loop(0, 2, lambda i, y: tpu_op(y), x)


def silent_fori_loop(x):
    return jax.lax.fori_loop(0, 2, lambda i, y: triton_op(y), x)


def fire_while_loop(x):
    return jax.lax.while_loop(lambda y: y.sum() < 0, tpu_op, x)


def silent_while_loop(x):
    return jax.lax.while_loop(lambda y: y.sum() < 0, triton_op, x)


def fire_scan(x):
    return jax.lax.scan(lambda c, y: (c, tpu_op(y)), 0, x)[1]


def silent_scan(x):
    return jax.lax.scan(lambda c, y: (c, triton_op(y)), 0, x)[1]


def fire_platform_dependent(x):
    return jax.lax.platform_dependent(x, tpu=tpu_op, default=tpu_op_2)


def silent_platform_dependent(x):
    return jax.lax.platform_dependent(x, tpu=tpu_op, default=triton_op)


# -- transformations ---------------------------------------------------------------------


def fire_jit(x):
    return jax.jit(tpu_op)(x)


def silent_jit(x):
    return jax.jit(triton_op)(x)


@jax.custom_vjp
def _with_rules(x):
    return x * 2


def _with_rules_fwd(x):
    y = tpu_op(x)
    return y, y  # the kernel's output is the residual: the gradient needs it


def _with_rules_bwd(res, g):
    return (g * res,)


_with_rules.defvjp(_with_rules_fwd, _with_rules_bwd)


def fire_grad_rules(x):
    return jax.grad(lambda y: _with_rules(y).sum())(x)


def silent_primal_only(x):
    return _with_rules(x)


# -- decorators that keep the function ---------------------------------------------------

jit_static = functools.partial(jax.jit, static_argnames=("n",))


@jit_static
def fire_keeper_variable(x, n=1):
    return tpu_op(x)


@jit_static
def silent_keeper_variable(x, n=1):
    return triton_op(x)


def traced(fn):
    @functools.wraps(fn)
    def wrapper(*args, **kwargs):
        return fn(*args, **kwargs)

    return wrapper


@traced
def fire_wraps_decorator(x):
    return tpu_op(x)


@traced
def silent_wraps_decorator(x):
    return triton_op(x)


# -- objects, factories, closures --------------------------------------------------------


class TpuOp:
    def __call__(self, x):
        return tpu_op(x)


class TritonOp:
    def __call__(self, x):
        return triton_op(x)


def make_tpu_op():
    return TpuOp()


def make_triton_op():
    return TritonOp()


def make_tpu_fn():
    def run(y):
        return tpu_op(y)

    return run


def make_triton_fn():
    def run(y):
        return triton_op(y)

    return run


def fire_op_object(x):
    return TpuOp()(x)


def silent_op_object(x):
    return TritonOp()(x)


def fire_op_variable(x):
    op = TpuOp()
    return op(x)


def silent_op_built_only(x):
    TpuOp()
    return x


class CountingTpuOp:
    """An op object that updates its own attributes: ``self`` stays the instance."""

    def __init__(self):
        self.calls = 0

    def _run(self, x):
        return tpu_op(x)

    def __call__(self, x):
        self.calls += 1
        return self._run(x)


class CountingTritonOp:
    def __init__(self):
        self.calls = 0

    def _run(self, x):
        return triton_op(x)

    def __call__(self, x):
        self.calls += 1
        return self._run(x)


def fire_op_updating_itself(x):
    return CountingTpuOp()(x)


def silent_op_updating_itself(x):
    return CountingTritonOp()(x)


# -- a memoized build (a module cache filled only with it) ------------------------------

_TPU_BUILT = {}
_TRITON_BUILT = {}


def fire_memoized(x):
    fn = _TPU_BUILT.get(x.shape)
    if fn is None:
        fn = jax.jit(tpu_op)
        _TPU_BUILT[x.shape] = fn
    return fn(x)


def silent_memoized(x):
    fn = _TRITON_BUILT.get(x.shape)
    if fn is None:
        fn = jax.jit(triton_op)
        _TRITON_BUILT[x.shape] = fn
    return fn(x)


def fire_factory(x):
    return make_tpu_op()(x)


def silent_factory(x):
    return make_triton_op()(x)


def fire_vmap_of_factory(x):
    return jax.vmap(make_tpu_op())(x)


def silent_vmap_of_factory(x):
    return jax.vmap(make_triton_op())(x)


def fire_checkpoint_of_object(x):
    return jax.checkpoint(TpuOp())(x)


def silent_checkpoint_of_object(x):
    return jax.checkpoint(TritonOp())(x)


def fire_returned_closure(x):
    return make_tpu_fn()(x)


def silent_returned_closure(x):
    return make_triton_fn()(x)


def fire_local_callable(x):
    run = tpu_op
    return run(x)


def silent_local_callable(x):
    run = triton_op
    return run(x)


# -- kernels built in the function -------------------------------------------------------


def fire_nested_entry(x):
    @functools.partial(pl.pallas_call, out_shape=_shape(x), compiler_params=pltpu.CompilerParams())
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1

    return kernel(x)


def silent_nested_entry(x):
    @functools.partial(
        pl.pallas_call, out_shape=_shape(x), compiler_params=pltriton.CompilerParams()
    )
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1

    return kernel(x)


def fire_built_and_run(x):
    call = pl.pallas_call(add_one, out_shape=_shape(x), compiler_params=pltpu.CompilerParams())
    return call(x)


def silent_built_never_run(x):
    pl.pallas_call(add_one, out_shape=_shape(x), compiler_params=pltpu.CompilerParams())
    return x


def my_pallas_call(kernel, out_shape, compiler_params):
    return pl.pallas_call(kernel, out_shape=out_shape, compiler_params=compiler_params)


def fire_wrapper_result(x):
    return my_pallas_call(add_one, _shape(x), pltpu.CompilerParams())(x)


def silent_wrapper_result(x):
    return my_pallas_call(add_one, _shape(x), pltriton.CompilerParams())(x)


# -- interpret mode decided by the caller ------------------------------------------------


def fire_interpret_default(x):
    return tpu_op_i(x)


def silent_interpret_on(x):
    return tpu_op_i(x, interpret=True)


def fire_partial_interpret_off(x):
    return functools.partial(tpu_op_i, interpret=False)(x)


def silent_partial_interpret_on(x):
    return functools.partial(tpu_op_i, interpret=True)(x)


@dataclasses.dataclass(frozen=True)
class Config:
    block: int = 128
    interpret: bool = False


def kernel_with_config(x, config: Config):
    return pl.pallas_call(
        add_one,
        out_shape=_shape(x),
        compiler_params=pltpu.CompilerParams(),
        interpret=config.interpret,
    )(x)


def fire_config_default(x):
    return kernel_with_config(x, Config())


def silent_config_interpret(x):
    return kernel_with_config(x, Config(interpret=True))


def silent_config_positional(x):
    # the field is set by position: which one is not read, so interpret mode is unknown
    return kernel_with_config(x, Config(128, True))


def kernel_interpret_first(interpret, pipelined, x):
    del pipelined
    return pl.pallas_call(
        add_one,
        out_shape=_shape(x),
        compiler_params=pltpu.CompilerParams(),
        interpret=interpret,
    )(x)


def fire_interpret_before_a_splat(x):
    rest = (True,)
    return kernel_interpret_first(False, *rest, x)


def silent_interpret_after_a_splat(x):
    # the splat fills the first parameter: the False is ``pipelined``
    flags = (True,)
    return kernel_interpret_first(*flags, False, x)


# -- platform tables ---------------------------------------------------------------------

KERNELS = {"tpu": tpu_op, "gpu": triton_op}


def fire_table_literal_key(x):
    return KERNELS["tpu"](x)


def silent_table_literal_key(x):
    return KERNELS["gpu"](x)


# -- paths ended by a call that does not return --------------------------------------------


def fire_pytest_skip(x, on_tpu=True):
    if not on_tpu:
        pytest.skip("needs a TPU")
    return tpu_op(x)


def silent_pytest_skip(x, compare=False):
    # the TPU kernel is only on the path the skip ends: the path that returns runs Triton
    if compare:
        tpu_op(x)
        pytest.skip("compared on a TPU only")
    return triton_op(x)


def fire_sys_exit(x):
    if x.size == 0:
        sys.exit("nothing to do")
    return tpu_op(x)


def silent_sys_exit(x, strict=False):
    # the exit ends the path that runs the TPU kernel; the other returns without a kernel
    if strict:
        tpu_op(x)
        sys.exit("strict mode runs on a TPU only")
    return x


# -- try / finally, and / or ------------------------------------------------------------------


def fire_try_finally(x):
    try:
        if x.ndim > 5:
            return x  # the finally still runs the kernel on this path
    finally:
        x = tpu_op(x)
    return x


def silent_try_finally(x):
    # the finally runs on every path, the early return's too: here it runs Triton
    try:
        if x.ndim > 5:
            return x
    finally:
        x = triton_op(x)
    return x


def fire_and_call(x):
    # the left operand always runs, the right one when the left is true
    return tpu_op(x).ndim > 1 and tpu_op_2(x)


def silent_and_call(x, fused=False):
    # the right operand may not run
    out = fused and tpu_op(x)
    return x if out is False else out


# -- lax.map: its body is traced whatever the length -------------------------------------


def fire_lax_map(x):
    return jax.lax.map(tpu_op, x)


def silent_lax_map(x):
    # a Python loop over the rows may not run its body (here there are no rows)
    for row in x:
        x = x.at[0].set(tpu_op(row))
    return x


# -- derivatives: jvp, linearize, vjp and the transformations built on them ---------------


@jax.custom_jvp
def _scaled(x):
    return x * 2


def _scaled_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return x * 2, t * tpu_op(x)  # the rule runs the kernel; the tangent needs it


_scaled.defjvp(_scaled_jvp)


@jax.custom_jvp
def _scaled_by_decorator(x):
    return x * 2


@_scaled_by_decorator.defjvp
def _scaled_by_decorator_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return x * 2, t * tpu_op(x)


@jax.custom_jvp
def _curved(x):
    return x * x


def _curved_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    # the kernel runs on a value the rule does not differentiate; the second derivative
    # (a hessian) needs its output too
    return x * x, t * x * tpu_op(jax.lax.stop_gradient(x))


_curved.defjvp(_curved_jvp)


@jax.custom_jvp
def _kernel_primal(x):
    return tpu_op(x)


@_kernel_primal.defjvp
def _kernel_primal_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return x + 1, t  # differentiated, the rule replaces the primal: no kernel runs


def fire_jvp_rules(x):
    return jax.jvp(_scaled, (x,), (x,))[1]


def silent_jvp_primal_only(x):
    return _scaled(x)


def fire_jvp_rule_decorator(x):
    return jax.jvp(_scaled_by_decorator, (x,), (x,))[1]


def silent_jvp_rule_decorator_primal_only(x):
    return _scaled_by_decorator(x)


def fire_custom_jvp_primal(x):
    return _kernel_primal(x)


def silent_custom_jvp_under_jvp(x):
    return jax.jvp(_kernel_primal, (x,), (x,))[1]


@jax.custom_jvp
def _tangent_kernel(x):
    return x * 2


def _tangent_kernel_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return x * 2, tpu_op(t)  # the kernel runs on the tangent


_tangent_kernel.defjvp(_tangent_kernel_jvp)


def fire_linearize(x):
    _, f_jvp = jax.linearize(_tangent_kernel, x)
    return f_jvp(x)


def silent_linearize_unapplied(x):
    # the kernel on the tangent goes to the linear function, which is never applied
    y, _ = jax.linearize(_tangent_kernel, x)
    return y


@jax.custom_vjp
def _backward_kernel(x):
    return x * 2


def _backward_kernel_fwd(x):
    return x * 2, None


def _backward_kernel_bwd(res, g):
    return (tpu_op(g),)


_backward_kernel.defvjp(_backward_kernel_fwd, _backward_kernel_bwd)


def fire_vjp(x):
    out, pull = jax.vjp(_backward_kernel, x)
    return pull(out)[0]


def silent_vjp_unpulled(x):
    # the backward rule (the kernel) runs only when the pullback is called
    out, _ = jax.vjp(_backward_kernel, x)
    return out


def fire_value_and_grad(x):
    return jax.value_and_grad(lambda y: _scaled(y).sum())(x)[1]


def silent_value_and_grad(x):
    # _kernel_primal's rule replaces its primal: the kernel never runs
    return jax.value_and_grad(lambda y: _kernel_primal(y).sum())(x)[1]


def fire_jacfwd(x):
    return jax.jacfwd(lambda y: _scaled(y).sum())(x)


def silent_jacfwd(x):
    # built, never applied
    jax.jacfwd(lambda y: _scaled(y).sum())
    return x


def fire_jacrev(x):
    return jax.jacrev(lambda y: _scaled(y).sum())(x)


def silent_jacrev(x):
    return jax.jacrev(lambda y: _kernel_primal(y).sum())(x)


def fire_hessian(x):
    return jax.hessian(lambda y: _curved(y).sum())(x)


def silent_hessian(x):
    return jax.hessian(lambda y: _kernel_primal(y).sum())(x)


# -- classes: inheritance, super(), class and static methods, properties, attributes -------


class TritonByDefault:
    def kernel(self, x):
        return triton_op(x)

    def run(self, x):
        return self.kernel(x)


class TpuOverride(TritonByDefault):
    def kernel(self, x):
        return tpu_op(x)


class TpuByDefault:
    def kernel(self, x):
        return tpu_op(x)

    def run(self, x):
        return self.kernel(x)


class TritonOverride(TpuByDefault):
    def kernel(self, x):
        return triton_op(x)


def fire_inherited_method(x):
    # run() is the base's; the kernel it calls is the subclass's override (TPU)
    return TpuOverride().run(x)


def silent_inherited_method(x):
    # the base's kernel is TPU, the subclass's override (what runs) is Triton
    return TritonOverride().run(x)


class LoggedTpuOp(TpuOp):
    def __call__(self, x):
        return super().__call__(x)


class LoggedTritonOp(TritonOp):
    def __call__(self, x):
        return super().__call__(x)


def fire_super_call(x):
    return LoggedTpuOp()(x)


def silent_super_call(x):
    return LoggedTritonOp()(x)


class TpuBuilder:
    @staticmethod
    def build(x):
        return pl.pallas_call(add_one, out_shape=_shape(x), compiler_params=pltpu.CompilerParams())

    @classmethod
    def run(cls, x):
        return cls.build(x)(x)


class TritonBuilder(TpuBuilder):
    @staticmethod
    def build(x):
        return pl.pallas_call(
            add_one, out_shape=_shape(x), compiler_params=pltriton.CompilerParams()
        )


def fire_classmethod(x):
    return TpuBuilder.run(x)


def silent_classmethod(x):
    # cls is TritonBuilder: its own build runs, not the base's
    return TritonBuilder.run(x)


def fire_staticmethod(x):
    return TpuBuilder.build(x)(x)


def silent_staticmethod(x):
    # built, never called
    TpuBuilder.build(x)
    return x


class TpuKernelProperty:
    @property
    def kernel(self):
        return tpu_op


def fire_property(x):
    return TpuKernelProperty().kernel(x)


def silent_property(x):
    # the getter hands the kernel out; nothing calls it
    kernel = TpuKernelProperty().kernel
    del kernel
    return x


class TpuParamsOp:
    def __init__(self):
        self.params = pltpu.CompilerParams()

    def __call__(self, x):
        return pl.pallas_call(add_one, out_shape=_shape(x), compiler_params=self.params)(x)


class TritonParamsOp:
    def __init__(self):
        self.params = pltriton.CompilerParams()

    def __call__(self, x):
        return pl.pallas_call(add_one, out_shape=_shape(x), compiler_params=self.params)(x)


def fire_params_on_instance(x):
    return TpuParamsOp()(x)


def silent_params_on_instance(x):
    return TritonParamsOp()(x)


class TpuKernelHolder:
    def __init__(self):
        self.kernel = tpu_op

    def __call__(self, x):
        return self.kernel(x)


class TritonKernelHolder:
    def __init__(self):
        self.kernel = triton_op

    def __call__(self, x):
        return self.kernel(x)


def fire_kernel_on_instance(x):
    return TpuKernelHolder()(x)


def silent_kernel_on_instance(x):
    return TritonKernelHolder()(x)


@dataclasses.dataclass(frozen=True)
class KernelChoice:
    kernel: object = tpu_op


def fire_dataclass_default(x):
    return KernelChoice().kernel(x)


def silent_dataclass_default(x):
    # the caller replaces the default
    return KernelChoice(kernel=triton_op).kernel(x)


# -- kernels kept in module-level containers, factories returning several --------------------

KERNEL_LIST = [tpu_op, triton_op]
KERNEL_TUPLE = (triton_op, tpu_op)
KERNELS_BY_NAME = {"fast": tpu_op, "portable": triton_op}


def fire_list_literal_index(x):
    return KERNEL_LIST[0](x)


def silent_list_literal_index(x):
    return KERNEL_LIST[1](x)


def fire_tuple_literal_index(x):
    return KERNEL_TUPLE[-1](x)


def silent_tuple_literal_index(x):
    return KERNEL_TUPLE[0](x)


def fire_dict_name_key(x):
    return KERNELS_BY_NAME["fast"](x)


def silent_dict_name_key(x):
    return KERNELS_BY_NAME["portable"](x)


def make_pair():
    return tpu_op, triton_op


def fire_unpacked_factory(x):
    fwd, _ = make_pair()
    return fwd(x)


def silent_unpacked_factory(x):
    _, bwd = make_pair()
    return bwd(x)


# -- JAX's tree and naming helpers, jnp.vectorize -----------------------------------------------


def fire_tree_map(x):
    return jax.tree.map(tpu_op, [x])[0]


def silent_tree_map(x, extra=None):
    # a tree with no leaves: the function is never called
    jax.tree.map(tpu_op, extra)
    return x


def fire_named_call(x):
    return jax.named_call(tpu_op, name="tpu_add_one")(x)


def silent_named_call(x):
    # named, never called
    jax.named_call(tpu_op, name="tpu_add_one")
    return x


def fire_vectorize(x):
    return jnp.vectorize(tpu_op, signature="(m,n)->(m,n)")(x)


def silent_vectorize(x):
    return jnp.vectorize(triton_op, signature="(m,n)->(m,n)")(x)
