"""Ways a TPU-only kernel is reached (``fire_*``), each with a twin that is right on a
GPU (``silent_*``). Every ``fire_*`` fails to lower for cuda and rocm and lowers for
tpu; every ``silent_*`` lowers for cuda and rocm (``tests/parity/test_ground_truth.py``
proves both by cross-lowering). The argument each takes is in ``tests/parity/parity_cases.py``.
"""

import dataclasses
import functools

import jax
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
    return tpu_op(x), None


def _with_rules_bwd(res, g):
    return (g * 2,)


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
