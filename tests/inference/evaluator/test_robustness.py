"""What the evaluator cannot follow ends in silence, never in a crash or a guess: a
recursive function (its recursive call's result is unknown), a huge loop, a callee it
cannot read, a module with a syntax error, a missing module. Where Python would still
reach the guarded call with a kernel that is plainly refused, the finding stays.
"""

from __future__ import annotations

import time

import pytest
from evaluator_programs import TPU_FIRES_TRITON_SILENT, fires, lib, loader_of, program

from typed_pallas_mypy.inference.evaluator.questions import module_findings


@TPU_FIRES_TRITON_SILENT
def test_recursive_function_before_the_call(params: str, expected: bool) -> None:
    app = """
def depth(n):
    return 0 if n == 0 else 1 + depth(n - 1)

def main(x):
    depth(5)
    if jax.default_backend() == "gpu":
        return lib.kernel(x)  # here
    return x
"""
    assert fires(app, params) is expected


def test_kernel_reached_only_through_mutual_recursion_is_no_crash() -> None:
    app = """
def even(n, x):
    return lib.tpu_kernel(x) if n == 0 else odd(n - 1, x)

def odd(n, x):
    return x if n == 0 else even(n - 1, x)

def main(x):
    if jax.default_backend() == "tpu":
        return even(4, x)  # here
    return x
"""
    assert not fires(app)


@TPU_FIRES_TRITON_SILENT
def test_huge_loop_before_the_call(params: str, expected: bool) -> None:
    app = """
def main(x):
    total = 0
    for i in range(10 ** 9):
        total += i
    if jax.default_backend() == "gpu":
        return lib.kernel(x)  # here
    return x
"""
    began = time.monotonic()
    assert fires(app, params) is expected
    assert time.monotonic() - began < 5


def test_infinite_loop_never_reaches_the_call() -> None:
    app = """
def main(x):
    while True:
        x = x + 1
    if jax.default_backend() == "gpu":
        return lib.tpu_kernel(x)  # here
    return x
"""
    assert not fires(app)


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("transform(lib.tpu_kernel, x)", False),
        ("x.apply(lib.tpu_kernel)", False),
        ("lib.tpu_kernel(transform(x))", True),
    ],
    ids=[
        "kernel-given-to-a-parameter-silent",
        "kernel-given-to-a-method-silent",
        "its-result-used-fires",
    ],
)
def test_unknown_callee(call: str, expected: bool) -> None:
    # ``transform`` and ``x`` are main's unknown arguments: what they do with a kernel is not known
    app = f"""
def main(x, transform):
    if jax.default_backend() == "gpu":
        return {call}  # here
    return x
"""
    assert fires(app) is expected


@pytest.mark.parametrize(
    ("kernels", "expected"),
    [(lib(None) + "\ndef broken(:\n", False), (lib(None), True)],
    ids=["syntax-error-silent", "readable-fires"],
)
def test_syntax_error_in_the_kernel_module(kernels: str, expected: bool) -> None:
    app = """
import ops

def main(x):
    if jax.default_backend() == "gpu":
        return ops.tpu_kernel(x)  # here
    return x
"""
    assert fires(app, files={"ops.py": kernels}) is expected


@pytest.mark.parametrize(
    ("caught", "expected"),
    [("SyntaxError", True), ("ImportError", False)],
    ids=["syntax-error-caught-fires", "not-an-import-error-silent"],
)
def test_syntax_error_in_a_module_imported_under_try(caught: str, expected: bool) -> None:
    # importing a module with a syntax error raises SyntaxError, which is no ImportError
    app = f"""
try:
    import broken
except {caught}:
    broken = None

def main(x):
    if jax.default_backend() == "gpu":
        return lib.tpu_kernel(x)  # here
    return x
"""
    assert fires(app, files={"broken.py": "def f(:\n"}) is expected


@pytest.mark.parametrize(
    ("imports", "expected"),
    [("from missing_ops import kernel", False), ("from lib import tpu_kernel as kernel", True)],
    ids=["missing-module-silent", "present-module-fires"],
)
def test_missing_module(imports: str, expected: bool) -> None:
    # importing a module that is not there raises ImportError: main is never defined
    app = f"""
{imports}

def main(x):
    if jax.default_backend() == "gpu":
        return kernel(x)  # here
    return x
"""
    assert fires(app) is expected


@pytest.mark.parametrize(
    "files",
    [
        {"app.py": "def main(:\n"},
        {"app.py": "import missing\nmissing.run()\n"},
        {"app.py": "def f():\n    return f()\nf()\n"},
        {"app.py": "x = 0\nwhile True:\n    x += 1\n"},
    ],
    ids=["syntax-error", "missing-module", "recursion-at-import", "endless-loop-at-import"],
)
def test_module_findings_never_crash(files: dict[str, str]) -> None:
    laid_out = program("") | files
    findings, _ = module_findings(loader_of(laid_out), "app", (0, 12, 1))
    assert findings == []


@pytest.mark.parametrize(("kernel", "expected"), [("tpu_kernel", True), ("triton_kernel", False)])
def test_an_invalid_escape_in_a_module_read_warns_nothing(kernel: str, expected: bool) -> None:
    """``"a\\+b"`` makes the compiler warn (Python >= 3.12: ``SyntaxWarning``): the
    evaluator's read must print nothing in the user's mypy run, and still work where
    warnings are errors."""
    import warnings

    files = {"ops.py": f'import lib\nPATTERN = "a\\+b"\nop = lib.{kernel}\n'}
    app = """
import ops

def main(x):
    if jax.default_backend() == "gpu":
        return ops.op(x)  # here
"""
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert fires(app, files=files) is expected
