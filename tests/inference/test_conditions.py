"""``Inference.condition_sets`` / ``is_platform_source``: a condition at a position, read
as the inference reads every condition (the plugin's guard regions ask it), and guard
helpers that read a variable or another helper. Each form fires (its platforms) and has
a silent twin (nothing known)."""

from __future__ import annotations

import ast

from library_fakes import HEADER, MakeLib, reader_for

from typed_pallas_mypy.inference import Inference
from typed_pallas_mypy.inference.combine import Ask

TPU = frozenset({"tpu"})
NOT_TPU = frozenset({"cuda", "rocm", "cpu"})
GPU = frozenset({"cuda", "rocm"})
NOT_GPU = frozenset({"tpu", "cpu"})

GUARDS = (
    HEADER
    + """\
from typing import Optional
from gpkg.util import backend, on_tpu

IS_TPU = jax.default_backend() == "tpu"
MAYBE = len(jax.devices()) > 1

def local_source():
    b = jax.default_backend()
    if b == "tpu":
        pass

def local_condition():
    use_tpu = jax.devices()[0].platform == "tpu"
    if use_tpu:
        pass

def global_condition():
    if IS_TPU:
        pass

def not_a_condition():
    if MAYBE:
        pass

def local_device():
    dev = jax.devices()[0]
    if dev.platform in ("cuda", "rocm"):
        pass

def cpu_device():
    dev = jax.devices("cpu")[0]
    if dev.platform == "cpu":
        pass

def loop_device():
    for d in jax.devices():
        if d.platform == "tpu":
            pass

def loop_not_devices(items):
    for d in items:
        if d.platform == "tpu":
            pass

def annotated(device: jax.Device, other: Optional[jax.Device], plain):
    if device.platform == "tpu":
        pass
    if other.platform == "tpu":
        pass
    if plain.platform == "tpu":
        pass

def kind_variable():
    kind = jax.devices()[0].device_kind
    if "TPU" in kind:
        pass

def platform_helper():
    if backend() == "tpu":
        pass

def guard_helper():
    if not on_tpu():
        pass

def predicate(op):
    if op.supported_on(jax.devices()[0]) and jax.default_backend() != "cpu":
        pass
"""
)

UTIL = """\
import jax

_TPU = jax.default_backend() == "tpu"

def backend():
    return jax.default_backend()

def on_tpu():
    return _TPU

def on_gpu():
    return backend() in ("cuda", "rocm")

def not_a_helper():
    return len(jax.devices()) > 1
"""


def _tests(source: str) -> dict[str, list[tuple[int, int, int, int]]]:
    """The span of each ``if`` test, by the function it is in."""
    out: dict[str, list[tuple[int, int, int, int]]] = {}
    for func in ast.parse(source).body:
        if isinstance(func, ast.FunctionDef):
            out[func.name] = [
                (
                    n.test.lineno,
                    n.test.col_offset,
                    n.test.end_lineno or 0,
                    n.test.end_col_offset or 0,
                )
                for n in ast.walk(func)
                if isinstance(n, ast.If)
            ]
    return out


def _engine(make_lib: MakeLib) -> Inference:
    root = make_lib({"gpkg/guards.py": GUARDS, "gpkg/util.py": UTIL})
    return reader_for(root)


def test_variables_devices_and_helpers_in_a_condition(make_lib: MakeLib) -> None:
    facts = _engine(make_lib)
    tests = _tests(GUARDS)

    def sets(name: str, i: int = 0) -> object:
        return facts.condition_sets("gpkg.guards", tests[name][i])[0]

    assert sets("local_source") == (TPU, NOT_TPU)
    assert sets("local_condition") == (TPU, NOT_TPU)
    assert sets("global_condition") == (TPU, NOT_TPU)
    assert sets("local_device") == (GPU, NOT_GPU)
    assert sets("loop_device") == (TPU, NOT_TPU)
    assert sets("annotated", 0) == (TPU, NOT_TPU)
    assert sets("annotated", 1) == (TPU, NOT_TPU)
    assert sets("kind_variable") == (TPU, NOT_TPU)
    assert sets("platform_helper") == (TPU, NOT_TPU)
    assert sets("guard_helper") == (NOT_TPU, TPU)
    # silent: not a platform condition, devices of a named backend, a loop over
    # anything, a parameter without the annotation
    assert sets("not_a_condition") == (None, None)
    assert sets("cpu_device") == (None, None)
    assert sets("loop_not_devices") == (None, None)
    assert sets("annotated", 2) == (None, None)


def test_helpers_a_condition_calls_are_named(make_lib: MakeLib) -> None:
    facts = _engine(make_lib)
    tests = _tests(GUARDS)
    assert facts.condition_sets("gpkg.guards", tests["guard_helper"][0])[1] == ("gpkg.util.on_tpu",)
    assert facts.condition_sets("gpkg.guards", tests["local_source"][0])[1] == ()


def test_a_call_it_cannot_read_is_asked_with_its_device_arguments(make_lib: MakeLib) -> None:
    """``op.supported_on(jax.devices()[0])``: left to the plugin (``ask``), told which
    arguments are devices; without an answer, only the part it reads holds."""
    facts = _engine(make_lib)
    where = _tests(GUARDS)["predicate"][0]
    asked: list[tuple[tuple[int, int, int, int], tuple[int, ...], tuple[str, ...]]] = []

    def ask(
        span: tuple[int, int, int, int], positions: tuple[int, ...], keywords: tuple[str, ...]
    ) -> tuple[frozenset[str], frozenset[str]]:
        asked.append((span, positions, keywords))
        return GPU, NOT_GPU

    # GPU and not CPU: true on GPU; false where either part is false
    assert facts.condition_sets("gpkg.guards", where, ask)[0] == (GPU, NOT_GPU)
    (span, positions, keywords) = asked[0]
    assert span[0] == where[0] and positions == (0,) and keywords == ()
    not_cpu = frozenset({"tpu", "cuda", "rocm"})
    assert facts.condition_sets("gpkg.guards", where)[0] == (not_cpu, None)


def test_the_platform_itself(make_lib: MakeLib) -> None:
    facts = _engine(make_lib)
    source = GUARDS.splitlines()
    line = next(i for i, text in enumerate(source, 1) if "if backend() ==" in text)
    column = source[line - 1].index("backend()")
    call = (line, column, line, column + len("backend()"))
    assert facts.is_platform_source("gpkg.guards", call) == (True, ("gpkg.util.backend",))
    line = next(i for i, text in enumerate(source, 1) if "b = jax.default_backend()" in text)
    column = source[line - 1].index("jax.default")
    value = (line, column, line, column + len("jax.default_backend()"))
    assert facts.is_platform_source("gpkg.guards", value) == (True, ())
    line = next(i for i, text in enumerate(source, 1) if "if MAYBE:" in text)
    column = source[line - 1].index("MAYBE")
    assert facts.is_platform_source("gpkg.guards", (line, column, line, column + 5)) == (False, ())


def test_guard_helpers_through_a_variable_or_a_platform_helper(make_lib: MakeLib) -> None:
    """A library's guard helper returning a module variable holding a condition, or a
    platform helper compared with literals: read (both were silent for libraries)."""
    facts = _engine(make_lib)
    assert facts.helper("gpkg.util.on_tpu") == ((TPU, NOT_TPU), False)
    assert facts.helper("gpkg.util.on_gpu") == ((GPU, NOT_GPU), False)
    assert facts.helper("gpkg.util.backend") == (None, True)
    assert facts.helper("gpkg.util.not_a_helper") == (None, False)


PREDICATES = (
    HEADER
    + """\
class Op:
    def supported_on(self, device: jax.Device) -> bool:
        return device.platform == "gpu" and device.compute_capability >= "9.0"

    def tried(self, device) -> bool:
        try:
            return device.platform == "tpu"
        except AttributeError:
            return False

    def early(self, device) -> bool:
        if device.platform != "tpu":
            return False
        log("checked")
        return len(device.coords) == 3

    def rebinds(self, device) -> bool:
        if device.platform != "tpu":
            return False
        device = jax.devices("cpu")[0]
        return True

    def nested(self, device) -> bool:
        return self.supported_on(device)

    def anything(self, device) -> bool:
        return device.id > 0
"""
)


def test_a_predicate_body_read_for_its_device_parameter(make_lib: MakeLib) -> None:
    """One ``return`` (both sides), ``try: return`` with ``return False`` handlers and
    early ``return False`` exits (the true side only); silent when the device is bound
    again or the body tests something else; a predicate it calls is asked."""
    facts = reader_for(make_lib({"ppkg/ops.py": PREDICATES}))
    lines = PREDICATES.splitlines()

    def sets(name: str, ask: Ask | None = None) -> object:
        line = next(i for i, text in enumerate(lines, 1) if f"def {name}(" in text)
        return facts.predicate_sets("ppkg.ops", line, name, "device", ask)[0]

    assert sets("supported_on") == (GPU, None)  # a GPU may be older than 9.0: false says nothing
    assert sets("tried") == (TPU, None)
    assert sets("early") == (TPU, None)
    assert sets("rebinds") == (None, None)
    assert sets("anything") == (None, None)
    assert sets("nested") == (None, None)
    assert sets("nested", lambda where, positions, keywords: (TPU, NOT_TPU)) == (TPU, NOT_TPU)
    assert facts.predicate_sets("ppkg.ops", 1, "supported_on", "device")[0] == (None, None)
