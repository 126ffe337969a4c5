"""Loops: ``for`` over a literal sequence runs its body once per item, in order, and
``range`` as many times as it counts; a loop that runs zero times runs nothing; ``while``
runs while its condition holds (a countdown); ``break`` leaves early; ``else`` runs when
no ``break`` did; the target keeps the last item.
"""

from __future__ import annotations

import pytest
from evaluator_programs import TPU_FIRES_TRITON_SILENT, fires


def _main(body: str) -> str:
    return f"""
def main(x):
{body}
    return x
"""


@pytest.mark.parametrize(
    ("kernels", "expected"),
    [("(lib.triton_kernel, lib.tpu_kernel)", True), ("(lib.tpu_kernel, lib.triton_kernel)", False)],
    ids=["last-tpu-fires", "last-triton-silent"],
)
def test_target_keeps_the_last_item(kernels: str, expected: bool) -> None:
    body = f"""
    for k in {kernels}:
        pass
    if jax.default_backend() == "gpu":
        return k(x)  # here
"""
    assert fires(_main(body)) is expected


@pytest.mark.parametrize(
    ("kernels", "expected"),
    [
        ("(lib.tpu_kernel,)", True),
        ("[lib.triton_kernel, lib.tpu_kernel]", True),
        ("(lib.tpu_kernel, lib.tpu_kernel)", True),
        ("(lib.triton_kernel, lib.triton_kernel)", False),
    ],
    ids=["one-item-fires", "second-item-fires", "same-item-twice-fires", "triton-items-silent"],
)
def test_body_runs_once_per_item(kernels: str, expected: bool) -> None:
    # each run of the call is lowered: one refused is enough
    body = f"""
    if jax.default_backend() == "gpu":
        for k in {kernels}:
            x = k(x)  # here
"""
    assert fires(_main(body)) is expected


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize("count", ["1", "3", "2, 8, 3"])
def test_range(count: str, params: str, expected: bool) -> None:
    body = f"""
    if jax.default_backend() == "gpu":
        for _ in range({count}):
            x = lib.kernel(x)  # here
"""
    assert fires(_main(body), params) is expected


@pytest.mark.parametrize(
    ("index", "expected"),
    [("i == 1", True), ("i == 5", False)],
    ids=["reached-index-fires", "unreached-index-silent"],
)
def test_range_index_picks_the_item(index: str, expected: bool) -> None:
    body = f"""
    ks = [lib.triton_kernel, lib.tpu_kernel]
    for i in range(len(ks)):
        if {index}:
            k = ks[i]
            break
    else:
        k = lib.triton_kernel
    if jax.default_backend() == "gpu":
        return k(x)  # here
"""
    assert fires(_main(body)) is expected


@pytest.mark.parametrize(
    ("loop", "expected"),
    [
        ("for _ in range(1):", True),
        ("for _ in range(0):", False),
        ("for _ in range(5, 5):", False),
        ("for _ in ():", False),
        ("for _ in []:", False),
    ],
)
def test_zero_trip_loop_runs_nothing(loop: str, expected: bool) -> None:
    body = f"""
    if jax.default_backend() == "gpu":
        {loop}
            x = lib.tpu_kernel(x)  # here
"""
    assert fires(_main(body)) is expected


@pytest.mark.parametrize(
    ("start", "expected"), [(3, True), (1, True), (0, False)], ids=["three", "one", "zero-silent"]
)
def test_while_countdown(start: int, expected: bool) -> None:
    body = f"""
    n = {start}
    if jax.default_backend() == "gpu":
        while n > 0:
            n -= 1
            x = lib.tpu_kernel(x)  # here
"""
    assert fires(_main(body)) is expected


@pytest.mark.parametrize(
    ("start", "expected"), [(2, True), (0, False)], ids=["counted-down-fires", "zero-trip-silent"]
)
def test_while_countdown_then_call(start: int, expected: bool) -> None:
    # the variable the loop binds is what the call after it uses
    body = f"""
    n = {start}
    k = lib.triton_kernel
    while n > 0:
        n = n - 1
        k = lib.tpu_kernel
    if jax.default_backend() == "gpu":
        return k(x)  # here
"""
    assert fires(_main(body)) is expected


@pytest.mark.parametrize(
    ("kernels", "expected"),
    [("(lib.tpu_kernel, lib.triton_kernel)", True), ("(lib.triton_kernel, lib.tpu_kernel)", False)],
    ids=["first-tpu-fires", "first-triton-silent"],
)
def test_break_leaves_after_the_first_item(kernels: str, expected: bool) -> None:
    body = f"""
    for k in {kernels}:
        break
    if jax.default_backend() == "gpu":
        return k(x)  # here
"""
    assert fires(_main(body)) is expected


@pytest.mark.parametrize(
    ("items", "expected"),
    [("()", True), ("(1,)", False)],
    ids=["no-break-else-fires", "break-skips-else-silent"],
)
def test_for_else(items: str, expected: bool) -> None:
    body = f"""
    k = lib.triton_kernel
    for _ in {items}:
        break
    else:
        k = lib.tpu_kernel
    if jax.default_backend() == "gpu":
        return k(x)  # here
"""
    assert fires(_main(body)) is expected


@pytest.mark.parametrize(
    ("kernel", "expected"),
    [("tpu_kernel", True), ("triton_kernel", False)],
    ids=["tpu-fires", "triton-silent"],
)
def test_while_true_with_break(kernel: str, expected: bool) -> None:
    body = f"""
    while True:
        k = lib.{kernel}
        break
    if jax.default_backend() == "gpu":
        return k(x)  # here
"""
    assert fires(_main(body)) is expected


@pytest.mark.parametrize(
    ("made", "expected"),
    [
        (
            "lib.pl.pallas_call(lib._body, out_shape=x, compiler_params=lib.pltpu.CompilerParams())",
            True,
        ),
        (
            "lib.pl.pallas_call(lib._body, out_shape=x, compiler_params=lib.pltriton.CompilerParams())",
            False,
        ),
    ],
    ids=["tpu-kernel-fires", "triton-kernel-silent"],
)
def test_a_kernel_transformed_an_unknown_number_of_times_still_runs(
    made: str, expected: bool
) -> None:
    # ``jax.vmap(f)`` applied zero or more times: whichever ``f`` is after the loop,
    # calling it runs the kernel (JAX lowers a vmapped kernel as the kernel)
    body = f"""
    f = {made}
    for _ in range(x.ndim - 1):
        f = jax.vmap(f)
    if jax.default_backend() == "gpu":
        return f(x)  # here
"""
    assert fires(_main(body)) is expected
