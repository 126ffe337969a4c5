"""What a module holds when a caller calls one of its functions: the state its import
left, or that state changed by its other functions, called before in any order.

The module's questions (``questions.module_findings``) run every function of the module
from the import's state; when a function of the module may change what a module holds
(a ``global`` rebinding, a store into a subscript or an attribute) or hands a module's
container out to its caller, they run again from the state the first round left, and a
finding in a function stands only when both rounds find it. The module's own body runs
once, at import: its findings stand as found.
"""

from __future__ import annotations

import pytest
from evaluator_programs import loader_of, marked, program

from typed_pallas_mypy.inference.evaluator.questions import module_findings


def _module_fires(app: str) -> bool:
    """Whether the module's questions find the line marked ``# here``."""
    files = program(app)
    _, line = marked(files)
    found, _ = module_findings(loader_of(files), "app", None)
    return any(f.line == line and f.verdict.finding for f in found)


WRITERS = {
    "global-rebound": (
        "KERNEL = lib.tpu_kernel",
        "KERNEL(x)",
        "def configure():\n    global KERNEL\n    KERNEL = {other}",
    ),
    "dict-filled": (
        "TABLE = {}",
        "TABLE.get('k', lib.tpu_kernel)(x)",
        "def register():\n    TABLE['k'] = {other}",
    ),
    "attribute-set": (
        "class Config:\n    def __init__(self):\n        self.kernel = lib.tpu_kernel\nCFG = Config()",
        "CFG.kernel(x)",
        "def use_other():\n    CFG.kernel = {other}",
    ),
}


def _app(head: str, call: str, writer: str, other: str) -> str:
    return f"""
{head}

def main(x):
    if jax.default_backend() == "gpu":
        return {call}  # here
    return x

{writer.format(other=other)}
"""


@pytest.mark.parametrize("form", sorted(WRITERS))
def test_a_function_defined_later_may_change_what_the_call_reads(form: str) -> None:
    head, call, writer = WRITERS[form]
    # silent: configure() may run before main(), and then main runs a Triton kernel
    assert not _module_fires(_app(head, call, writer, "lib.triton_kernel"))
    # fires: whichever runs first, main runs a TPU kernel
    assert _module_fires(_app(head, call, writer, "lib.tpu_kernel"))


@pytest.mark.parametrize("form", sorted(WRITERS))
def test_with_no_writer_the_imports_state_decides(form: str) -> None:
    head, call, _ = WRITERS[form]
    assert _module_fires(_app(head, call, "def unrelated():\n    return 1", "lib.triton_kernel"))


@pytest.mark.parametrize(
    ("built", "expected"), [("lib.tpu_kernel", True), ("lib.triton_kernel", False)]
)
def test_a_cache_the_function_fills_itself_holds_what_it_built(built: str, expected: bool) -> None:
    # stored under a key not known: which key is not known, what it holds is
    app = f"""
_BUILT = {{}}

def main(x):
    fn = _BUILT.get(x.shape)
    if fn is None:
        fn = jax.jit({built})
        _BUILT[x.shape] = fn
    if jax.default_backend() == "gpu":
        return fn(x)  # here
    return x
"""
    assert _module_fires(app) is expected


@pytest.mark.parametrize(
    ("getter", "expected"),
    [
        ("def exported():\n    return _CACHE", False),
        ("def exported():\n    return dict(_CACHE)", True),
    ],
    ids=["the-cache-handed-out-silent", "a-copy-handed-out-fires"],
)
def test_a_cache_handed_out_may_hold_anything(getter: str, expected: bool) -> None:
    app = f"""
_CACHE = {{}}

def main(x):
    fn = _CACHE.get(x.shape, lib.tpu_kernel)
    if jax.default_backend() == "gpu":
        return fn(x)  # here
    return x

{getter}
"""
    assert _module_fires(app) is expected


def test_the_modules_own_body_runs_once_from_the_import() -> None:
    app = """
KERNEL = lib.tpu_kernel
if jax.default_backend() == "gpu":
    KERNEL(1)  # here

def configure():
    global KERNEL
    KERNEL = lib.triton_kernel
"""
    assert _module_fires(app)
