"""``with``: the value ``__enter__`` returns binds the ``as`` target; a
``contextlib.contextmanager`` generator gives what it yields; the body runs; an
``__exit__`` that returns true (``contextlib.suppress`` of the raised type) swallows the
exception and the code after the block runs, otherwise the exception goes on.
"""

from __future__ import annotations

import pytest
from evaluator_programs import fires

PICKS = pytest.mark.parametrize(
    ("picked", "expected"),
    [("tpu_kernel", True), ("triton_kernel", False)],
    ids=["tpu-fires", "triton-silent"],
)


@PICKS
def test_class_context_manager_enter_value(picked: str, expected: bool) -> None:
    assert (
        fires(f"""
        class Using:
            def __init__(self, k):
                self.k = k
            def __enter__(self):
                return self.k
            def __exit__(self, *exc):
                return False

        def main(x):
            with Using(lib.{picked}) as k:
                if jax.default_backend() == "gpu":
                    return k(x)  # here
            return x
        """)
        is expected
    )


@PICKS
def test_enter_returning_self(picked: str, expected: bool) -> None:
    assert (
        fires(f"""
        class Session:
            def __init__(self, k):
                self.k = k
            def __enter__(self):
                return self
            def __exit__(self, *exc):
                return None
            def run(self, x):
                return self.k(x)

        def main(x):
            with Session(lib.{picked}) as s:
                if jax.default_backend() == "gpu":
                    return s.run(x)  # here
            return x
        """)
        is expected
    )


@PICKS
def test_contextlib_contextmanager(picked: str, expected: bool) -> None:
    assert (
        fires(f"""
        import contextlib

        @contextlib.contextmanager
        def using(k):
            yield k

        def main(x):
            with using(lib.{picked}) as k:
                if jax.default_backend() == "gpu":
                    return k(x)  # here
            return x
        """)
        is expected
    )


@pytest.mark.parametrize(
    ("name", "expected"), [("b", True), ("a", False)], ids=["second-item-fires", "first-silent"]
)
def test_several_items(name: str, expected: bool) -> None:
    assert (
        fires(f"""
        import contextlib

        @contextlib.contextmanager
        def using(k):
            yield k

        def main(x):
            with using(lib.triton_kernel) as a, using(lib.tpu_kernel) as b:
                if jax.default_backend() == "gpu":
                    return {name}(x)  # here
            return x
        """)
        is expected
    )


@pytest.mark.parametrize(
    ("suppressed", "expected"),
    [("ValueError", True), ("KeyError", False)],
    ids=["suppressed-fires", "propagates-silent"],
)
def test_contextlib_suppress(suppressed: str, expected: bool) -> None:
    # the call after the block runs only when the exception was swallowed
    assert (
        fires(f"""
        import contextlib

        def main(x):
            with contextlib.suppress({suppressed}):
                raise ValueError("no")
            if jax.default_backend() == "gpu":
                return lib.tpu_kernel(x)  # here
            return x
        """)
        is expected
    )


@pytest.mark.parametrize(
    ("swallows", "expected"),
    [("True", True), ("False", False)],
    ids=["exit-swallows-fires", "exit-lets-go-silent"],
)
def test_exit_return_value_decides(swallows: str, expected: bool) -> None:
    assert (
        fires(f"""
        class Guarded:
            def __enter__(self):
                return self
            def __exit__(self, *exc):
                return {swallows}

        def main(x):
            with Guarded():
                raise RuntimeError("no")
            if jax.default_backend() == "gpu":
                return lib.tpu_kernel(x)  # here
            return x
        """)
        is expected
    )
