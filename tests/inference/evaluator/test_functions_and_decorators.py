"""Functions as values: lambdas, decorators (a call whose result binds the name),
closures and factories (each call makes a new function with its own cells).

``lib.kernel`` takes TPU params (a finding under a guard for "gpu") or Triton params
(silent) unless the program picks a kernel by name.
"""

from __future__ import annotations

import pytest
from evaluator_programs import TPU_FIRES_TRITON_SILENT, fires

GUARDED_MAIN = """
def main(x):
    if jax.default_backend() == "gpu":
        return step(x)  # here
    return x
"""


@TPU_FIRES_TRITON_SILENT
def test_lambda(params: str, expected: bool) -> None:
    assert fires("step = lambda y: lib.kernel(y)\n" + GUARDED_MAIN, params) is expected


@TPU_FIRES_TRITON_SILENT
def test_pass_through_decorator(params: str, expected: bool) -> None:
    program = """
def passthrough(f):
    return f

@passthrough
def step(x):
    return lib.kernel(x)
"""
    assert fires(program + GUARDED_MAIN, params) is expected


@TPU_FIRES_TRITON_SILENT
def test_functools_wraps_wrapper(params: str, expected: bool) -> None:
    program = """
import functools

def logged(f):
    @functools.wraps(f)
    def wrapper(*args, **kwargs):
        return f(*args, **kwargs)
    return wrapper

@logged
def step(x):
    return lib.kernel(x)
"""
    assert fires(program + GUARDED_MAIN, params) is expected


# ``functools.wraps(g)(w)`` is ``w`` itself, given ``g``'s name and ``__wrapped__ = g``:
# calling it runs the wrapper (which may run something else than ``g``), and
# ``f.__wrapped__`` is ``g`` (not the wrapper).
SWAPPING_WRAPPER = """
import functools

def swapped(f):
    @functools.wraps(f)
    def wrapper(x):
        return lib.triton_kernel(x)
    return wrapper

@swapped
def step(x):
    return lib.tpu_kernel(x)
"""


@pytest.mark.parametrize(
    ("call", "expected"),
    [("step.__wrapped__(x)", True), ("step(x)", False)],
    ids=["wrapped-function-fires", "wrapper-itself-silent"],
)
def test_functools_wraps_sets_wrapped_and_calls_the_wrapper(call: str, expected: bool) -> None:
    main = GUARDED_MAIN.replace("step(x)", call)
    assert fires(SWAPPING_WRAPPER + main) is expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [("step", True), ("wrapper", False)],
    ids=["copied-name-fires", "own-name-silent"],
)
def test_functools_wraps_copies_the_name(name: str, expected: bool) -> None:
    main = GUARDED_MAIN.replace(
        "step(x)", f'(lib.tpu_kernel if step.__name__ == "{name}" else lib.triton_kernel)(x)'
    )
    assert fires(SWAPPING_WRAPPER + main) is expected


@pytest.mark.parametrize(
    ("call", "expected"),
    [("step.__wrapped__(x)", True), ("step(x)", False), ("step.tag(x)", True)],
    ids=["wrapped-fires", "wrapper-silent", "copied-attribute-fires"],
)
def test_functools_update_wrapper(call: str, expected: bool) -> None:
    program = """
import functools

def tpu_step(x):
    return lib.tpu_kernel(x)

tpu_step.tag = lib.tpu_kernel

def wrapper(x):
    return lib.triton_kernel(x)

step = functools.update_wrapper(wrapper, tpu_step)
"""
    assert fires(program + GUARDED_MAIN.replace("step(x)", call)) is expected


@TPU_FIRES_TRITON_SILENT
def test_decorator_with_arguments(params: str, expected: bool) -> None:
    program = """
def repeat(times):
    def decorate(f):
        def wrapper(x):
            for _ in range(times):
                x = x + 1
            return f(x)
        return wrapper
    return decorate

@repeat(2)
def step(x):
    return lib.kernel(x)
"""
    assert fires(program + GUARDED_MAIN, params) is expected


@pytest.mark.parametrize(
    ("decorator", "expected"),
    [("@keep", True), ("@replace", False)],
    ids=["kept-fires", "replaced-silent"],
)
def test_decorator_result_binds_the_name(decorator: str, expected: bool) -> None:
    program = f"""
def keep(f):
    return f

def replace(f):
    return lib.triton_kernel

{decorator}
def step(x):
    return lib.tpu_kernel(x)
"""
    assert fires(program + GUARDED_MAIN) is expected


@pytest.mark.parametrize(
    ("name", "expected"), [("fast", True), ("safe", False)], ids=["fast-fires", "safe-silent"]
)
def test_decorator_registering_into_a_dict(name: str, expected: bool) -> None:
    assert (
        fires(f"""
        REGISTRY = {{}}

        def register(name):
            def decorate(f):
                REGISTRY[name] = f
                return f
            return decorate

        @register("fast")
        def fast(x):
            return lib.tpu_kernel(x)

        @register("safe")
        def safe(x):
            return lib.triton_kernel(x)

        def main(x):
            if jax.default_backend() == "gpu":
                return REGISTRY["{name}"](x)  # here
            return x
        """)
        is expected
    )


@pytest.mark.parametrize(
    ("made", "expected"), [("fast", True), ("safe", False)], ids=["fast-fires", "safe-silent"]
)
def test_factory_closures_keep_their_own_cells(made: str, expected: bool) -> None:
    assert (
        fires(f"""
        def make(k):
            def run(x):
                return k(x)
            return run

        fast = make(lib.tpu_kernel)
        safe = make(lib.triton_kernel)

        def main(x):
            if jax.default_backend() == "gpu":
                return {made}(x)  # here
            return x
        """)
        is expected
    )


@TPU_FIRES_TRITON_SILENT
def test_factory_returning_a_lambda(params: str, expected: bool) -> None:
    program = """
def make():
    return lambda y: lib.kernel(y)

step = make()
"""
    assert fires(program + GUARDED_MAIN, params) is expected


@TPU_FIRES_TRITON_SILENT
def test_function_passed_and_returned(params: str, expected: bool) -> None:
    program = """
def identity(f):
    return f

def apply(f, x):
    return f(x)

def step(x):
    return apply(identity(lib.kernel), x)
"""
    assert fires(program + GUARDED_MAIN, params) is expected


@pytest.mark.parametrize(
    "decorator",
    ["jax.jit", "functools.cache", "typing_extensions.override"],
)
@TPU_FIRES_TRITON_SILENT
def test_a_kept_method_is_bound_to_its_instance(
    decorator: str, params: str, expected: bool
) -> None:
    # what these decorators return binds like a function (``ApiRow.result_binds``)
    app = f"""
import functools
import typing_extensions

class Ops:
    @{decorator}
    def run(self, x):
        return lib.kernel(x)

def main(x):
    if jax.default_backend() == "gpu":
        return Ops().run(x)  # here
    return x
"""
    assert fires(app, params) is expected


def test_a_custom_vjp_method_is_not_bound() -> None:
    # ``jax.custom_vjp``'s object has no ``__get__``: ``Ops().run(x)`` calls it with ``x``
    # alone, which its ``(self, x)`` does not take: nothing is lowered
    app = """
class Ops:
    @jax.custom_vjp
    def run(self, x):
        return lib.kernel(x)

def main(x):
    if jax.default_backend() == "gpu":
        return Ops().run(x)  # here
    return x
"""
    assert not fires(app)


@TPU_FIRES_TRITON_SILENT
def test_a_partialmethod_binds_the_instance_then_its_arguments(params: str, expected: bool) -> None:
    # ``partialmethod(_apply, lib.kernel)``: ``Ops().run(x)`` is ``_apply(ops, lib.kernel, x)``
    app = """
import functools

class Ops:
    def _apply(self, fn, x):
        return fn(x)

    run = functools.partialmethod(_apply, lib.kernel)

def main(x):
    if jax.default_backend() == "gpu":
        return Ops().run(x)  # here
    return x
"""
    assert fires(app, params) is expected
