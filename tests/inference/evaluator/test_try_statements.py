"""``try``: a handler runs when the body raises an exception of its class (a subclass
too), ``except E as e`` binds the exception, ``else`` runs when nothing was raised,
``finally`` runs on every way out; an import in ``try`` whose module is there succeeds.
An exception no handler catches ends the path: what follows never runs.
"""

from __future__ import annotations

import pytest
from evaluator_programs import fires


def _after(block: str) -> str:
    """``block`` (which binds ``k``), then ``k`` called under a guard for "gpu"."""
    return f"""
def main(x):
    k = lib.triton_kernel
{block}
    if jax.default_backend() == "gpu":
        return k(x)  # here
    return x
"""


@pytest.mark.parametrize(
    ("raised", "expected"),
    [("KeyError", True), ("IndexError", True), ("ValueError", False)],
    ids=["subclass-caught-fires", "other-subclass-caught-fires", "uncaught-silent"],
)
def test_handler_taken_for_a_subclass(raised: str, expected: bool) -> None:
    block = f"""
    try:
        raise {raised}("no")
    except LookupError:
        k = lib.tpu_kernel
"""
    assert fires(_after(block)) is expected


@pytest.mark.parametrize(
    ("handlers", "expected"),
    [
        (
            "except ValueError:\n        k = lib.tpu_kernel\n    except Exception:\n        k = lib.triton_kernel",
            True,
        ),
        (
            "except TypeError:\n        k = lib.tpu_kernel\n    except Exception:\n        k = lib.triton_kernel",
            False,
        ),
    ],
    ids=["first-matching-handler-fires", "later-handler-silent"],
)
def test_first_matching_handler_runs(handlers: str, expected: bool) -> None:
    block = f"""
    try:
        raise ValueError("no")
    {handlers}
"""
    assert fires(_after(block)) is expected


@pytest.mark.parametrize(
    ("carried", "expected"),
    [("lib.tpu_kernel", True), ("lib.triton_kernel", False)],
    ids=["tpu-fires", "triton-silent"],
)
def test_except_as_binds_the_exception(carried: str, expected: bool) -> None:
    assert (
        fires(f"""
        class KernelError(Exception):
            def __init__(self, k):
                super().__init__("no kernel")
                self.k = k

        def main(x):
            try:
                raise KernelError({carried})
            except KernelError as e:
                if jax.default_backend() == "gpu":
                    return e.k(x)  # here
            return x
        """)
        is expected
    )


@pytest.mark.parametrize(
    ("carried", "expected"),
    [("lib.tpu_kernel", True), ("lib.triton_kernel", False)],
    ids=["tpu-fires", "triton-silent"],
)
def test_exception_args(carried: str, expected: bool) -> None:
    assert (
        fires(f"""
        def main(x):
            try:
                raise ValueError({carried})
            except ValueError as e:
                k = e.args[0]
            if jax.default_backend() == "gpu":
                return k(x)  # here
            return x
        """)
        is expected
    )


@pytest.mark.parametrize(
    ("body", "expected"),
    [("pass", True), ('raise ValueError("no")', False)],
    ids=["nothing-raised-else-fires", "raised-handler-silent"],
)
def test_else_runs_when_nothing_was_raised(body: str, expected: bool) -> None:
    block = f"""
    try:
        {body}
    except ValueError:
        k = lib.triton_kernel
    else:
        k = lib.tpu_kernel
"""
    assert fires(_after(block)) is expected


@pytest.mark.parametrize(
    ("last", "before", "expected"),
    [("tpu_kernel", "triton_kernel", True), ("triton_kernel", "tpu_kernel", False)],
    ids=["finally-tpu-fires", "finally-triton-silent"],
)
@pytest.mark.parametrize("body", ["y = x + 1", 'raise ValueError("no")'], ids=["no-raise", "raise"])
def test_finally_runs_last(body: str, last: str, before: str, expected: bool) -> None:
    block = f"""
    try:
        k = lib.{before}
        {body}
    except ValueError:
        k = lib.{before}
    finally:
        k = lib.{last}
"""
    assert fires(_after(block)) is expected


@pytest.mark.parametrize(
    ("primary", "fallback", "expected"),
    [("tpu_kernel", "triton_kernel", True), ("triton_kernel", "tpu_kernel", False)],
    ids=["module-there-fires", "module-there-triton-silent"],
)
def test_fallback_import_when_the_module_is_there(
    primary: str, fallback: str, expected: bool
) -> None:
    # ``fast_ops`` is there: its import succeeds and the handler does not run
    app = f"""
try:
    from fast_ops import kernel
except ImportError:
    kernel = lib.{fallback}

def main(x):
    if jax.default_backend() == "gpu":
        return kernel(x)  # here
    return x
"""
    files = {"fast_ops.py": f"import lib\nkernel = lib.{primary}\n"}
    assert fires(app, files=files) is expected


@pytest.mark.parametrize(
    ("fallback", "expected"),
    [("tpu_kernel", True), ("triton_kernel", False)],
    ids=["handler-tpu-fires", "handler-triton-silent"],
)
def test_fallback_import_when_the_module_is_missing(fallback: str, expected: bool) -> None:
    # ``fast_ops`` is not there: its import raises ImportError and the handler binds ``kernel``
    app = f"""
try:
    from fast_ops import kernel
except ImportError:
    kernel = lib.{fallback}

def main(x):
    if jax.default_backend() == "gpu":
        return kernel(x)  # here
    return x
"""
    assert fires(app) is expected


@pytest.mark.parametrize(
    ("in_finally", "expected"),
    [("tpu_kernel", True), ("triton_kernel", False)],
    ids=["finally-tpu-fires", "finally-triton-silent"],
)
def test_finally_runs_on_the_way_out_of_a_return(in_finally: str, expected: bool) -> None:
    # ``x.ndim`` is not known: one path returns from inside the ``try``, the other falls
    # through; the ``finally`` block runs its kernel on both before ``step`` returns
    app = f"""
def step(x):
    try:
        if x.ndim > 5:
            return x
    finally:
        lib.{in_finally}(x)
    return x

def main(x):
    if jax.default_backend() == "gpu":
        return step(x)  # here
    return x
"""
    assert fires(app) is expected


# -- a kernel's refusal raised inside a ``try`` --------------------------------------------
# Measured at jax 0.10.2 and 0.12.1: run eagerly, a kernel is lowered when it is called,
# and its refusal (a ``ValueError``, or jax 0.12's empty ``AssertionError`` on GPU) is
# raised inside the ``try``: a handler that catches it leaves the caller nothing to see.


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        ("except ImportError:", True),
        ("except KeyError:", True),
        ("except ValueError:", False),
        ("except AssertionError:", False),
        ("except (KeyError, AssertionError):", False),
        ("except Exception:", False),
        ("except:", False),
    ],
    ids=[
        "import-error-fires",
        "key-error-fires",
        "value-error",
        "assertion-error",
        "tuple",
        "exception",
        "bare",
    ],
)
def test_a_kernel_whose_refusal_a_handler_catches(handler: str, expected: bool) -> None:
    direct = f"""
def main(x):
    if jax.default_backend() == "gpu":
        try:
            return lib.tpu_kernel(x)  # here
        {handler}
            return x
    return x
"""
    through = f"""
def run(x):
    try:
        return lib.tpu_kernel(x)
    {handler}
        return x

def main(x):
    if jax.default_backend() == "gpu":
        return run(x)  # here
    return x
"""
    assert fires(direct) is expected
    assert fires(through) is expected


def test_the_same_function_outside_a_handler_still_fires() -> None:
    program = """
def main(x):
    try:
        lib.tpu_kernel(x)
    except Exception:
        pass
    if jax.default_backend() == "gpu":
        return lib.tpu_kernel(x)  # here
    return x
"""
    assert fires(program) is True


# Run eagerly, the refusal goes to the handler; traced by ``jax.jit``, it comes at
# lowering, outside the ``try``, and the body's kernel is what lowers. The call is refused
# when both ways are: the handler runs a kernel refused alike, or raises again.


@pytest.mark.parametrize(
    ("handler", "expected"),
    [
        ("return lib.tpu_kernel(x + 1)", True),
        ("raise", True),
        ('raise RuntimeError("no kernel")', True),
        ("return lib.triton_kernel(x)", False),
        ("return x", False),
    ],
    ids=[
        "other-tpu-kernel-fires",
        "reraise-fires",
        "new-error-fires",
        "triton-silent",
        "nothing-silent",
    ],
)
def test_a_handler_of_a_refusal_decides_with_the_body(handler: str, expected: bool) -> None:
    program = f"""
def run(x):
    try:
        return lib.tpu_kernel(x)
    except ValueError:
        {handler}

def main(x):
    if jax.default_backend() == "gpu":
        return run(x)  # here
    return x
"""
    assert fires(program) is expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [
        ("y = lib.tpu_kernel(x)", True),
        ("op = lib.triton_kernel\n        y = lib.tpu_kernel(x)", False),
    ],
    ids=["name-kept-fires", "name-rebound-in-the-body-silent"],
)
def test_a_handler_sees_the_names_the_body_bound_as_unknown(body: str, expected: bool) -> None:
    # the refusal may come before or after the body's assignments
    program = f"""
def run(x):
    op = lib.tpu_kernel
    try:
        {body}
    except (ValueError, AssertionError):
        return op(x + 1)
    return y

def main(x):
    if jax.default_backend() == "gpu":
        return run(x)  # here
    return x
"""
    assert fires(program) is expected
