"""The kernels the shapes reach: one per backend, an interpret switch, a TPU-only body
(``copy_body``: ``pltpu.sync_copy``), and a guard helper the application decides with."""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def add_one(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


def copy_body(x_ref, o_ref):
    pltpu.sync_copy(x_ref, o_ref)


def tpu_op(x):
    return pl.pallas_call(
        add_one,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltpu.CompilerParams(),
    )(x)


def tpu_op_2(x):
    return pl.pallas_call(
        add_one,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltpu.CompilerParams(),
    )(x)


def triton_op(x):
    return pl.pallas_call(
        add_one,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltriton.CompilerParams(),
    )(x)


def tpu_op_i(x, interpret=False):
    return pl.pallas_call(
        add_one,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltpu.CompilerParams(),
        interpret=interpret,
    )(x)


def on_gpu():
    return jax.default_backend() == "gpu"


def on_tpu_kind():
    """A guard helper on the device's kind: only TPU kinds contain "TPU"."""
    return "TPU" in jax.devices()[0].device_kind


def any_gpu():
    """A guard helper over every device (the devices of one backend share a platform)."""
    return any(d.platform == "gpu" for d in jax.devices())


_ON_TPU = jax.default_backend() == "tpu"


def on_tpu_flag():
    """A guard helper returning a module variable that holds the condition."""
    return _ON_TPU


def backend():
    """A platform helper: returns the platform string itself."""
    return jax.default_backend()


def on_gpu_backend():
    """A guard helper comparing a platform helper's result with a literal."""
    return backend() == "gpu"
