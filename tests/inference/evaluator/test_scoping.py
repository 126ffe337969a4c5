"""Names resolved as Python resolves them: the local scope, the enclosing functions'
(not class bodies'), the module's, then the builtins; ``global`` and ``nonlocal``; a
closure reads a variable when it runs, not when it is made.

Each program binds ``lib.tpu_kernel`` to the name the rule picks and ``lib.triton_kernel``
to the one it does not (a finding under a guard for "gpu"), and its twin swaps them.
"""

from __future__ import annotations

import pytest
from evaluator_programs import PICKS, fires

#: (the kernel the rule picks, the one it passes over, finding)


@PICKS
def test_local_shadows_global(picked: str, other: str, expected: bool) -> None:
    assert (
        fires(f"""
        k = lib.{other}
        def main(x):
            k = lib.{picked}
            if jax.default_backend() == "gpu":
                return k(x)  # here
            return x
        """)
        is expected
    )


@PICKS
def test_enclosing_function_before_global(picked: str, other: str, expected: bool) -> None:
    assert (
        fires(f"""
        k = lib.{other}
        def main(x):
            k = lib.{picked}
            def inner():
                if jax.default_backend() == "gpu":
                    return k(x)  # here
                return x
            return inner()
        """)
        is expected
    )


@PICKS
def test_global_read_in_function(picked: str, other: str, expected: bool) -> None:
    assert (
        fires(f"""
        def other(x):
            k = lib.{other}
            return k(x)
        k = lib.{picked}
        def main(x):
            if jax.default_backend() == "gpu":
                return k(x)  # here
            return x
        """)
        is expected
    )


GLOBAL_ABS = """
def abs(y):
    return lib.tpu_kernel(y)
"""
NESTED_ABS = """
def helper():
    def abs(y):
        return lib.tpu_kernel(y)
    return abs
"""


@pytest.mark.parametrize(
    ("definition", "expected"),
    [(GLOBAL_ABS, True), (NESTED_ABS, False)],
    ids=["global-shadows-builtin-fires", "builtin-silent"],
)
def test_builtins_come_last(definition: str, expected: bool) -> None:
    # a global ``abs`` hides the builtin; one local to another function does not
    main = """
def main(x):
    if jax.default_backend() == "gpu":
        return abs(x)  # here
    return x
"""
    assert fires(definition + main) is expected


@PICKS
def test_class_body_is_not_an_enclosing_scope(picked: str, other: str, expected: bool) -> None:
    # a method's free name skips its class's body and reads the module's
    assert (
        fires(f"""
        k = lib.{picked}
        class Holder:
            k = lib.{other}
            def run(self, x):
                return k(x)
        def main(x):
            holder = Holder()
            if jax.default_backend() == "gpu":
                return holder.run(x)  # here
            return x
        """)
        is expected
    )


@pytest.mark.parametrize(
    ("declaration", "expected"),
    [("global k", True), ("pass", False)],
    ids=["global-rebinds-fires", "local-binding-silent"],
)
def test_global_statement(declaration: str, expected: bool) -> None:
    assert (
        fires(f"""
        k = lib.triton_kernel
        def setup():
            {declaration}
            k = lib.tpu_kernel
        def main(x):
            setup()
            if jax.default_backend() == "gpu":
                return k(x)  # here
            return x
        """)
        is expected
    )


@pytest.mark.parametrize(
    ("declaration", "expected"),
    [("nonlocal k", True), ("pass", False)],
    ids=["nonlocal-rebinds-fires", "local-binding-silent"],
)
def test_nonlocal_statement(declaration: str, expected: bool) -> None:
    assert (
        fires(f"""
        def main(x):
            k = lib.triton_kernel
            def setup():
                {declaration}
                k = lib.tpu_kernel
            setup()
            if jax.default_backend() == "gpu":
                return k(x)  # here
            return x
        """)
        is expected
    )


@PICKS
def test_closure_reads_the_latest_binding(picked: str, other: str, expected: bool) -> None:
    assert (
        fires(f"""
        def main(x):
            k = lib.{other}
            def call():
                return k(x)
            k = lib.{picked}
            if jax.default_backend() == "gpu":
                return call()  # here
            return x
        """)
        is expected
    )


@pytest.mark.parametrize(
    ("lam", "expected"),
    [("lambda: k(x)", True), ("lambda k=k: k(x)", False)],
    ids=["late-binding-fires", "default-captures-silent"],
)
def test_lambdas_made_in_a_loop_share_the_variable(lam: str, expected: bool) -> None:
    # every lambda sees the comprehension's last ``k`` unless a default captured it
    assert (
        fires(f"""
        def main(x):
            calls = [{lam} for k in (lib.triton_kernel, lib.tpu_kernel)]
            if jax.default_backend() == "gpu":
                return calls[0]()  # here
            return x
        """)
        is expected
    )
