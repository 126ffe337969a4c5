"""Guards: under each assumed platform, ``jax.default_backend()`` ("tpu" or "gpu"), a
device's ``platform`` and ``pltpu.is_tpu_device()`` are constants, so each way of
testing them (a comparison, an early exit, a variable, ``any`` over the devices, a
helper with or without a parameter, ``match``) is a plain condition. A device's
``device_kind`` is a model name: only some substrings belong to one platform ("TPU" is in
every TPU kind and in no other, "NVIDIA" only in CUDA kinds but not in all of them, since
"Tesla T4" is one too), so a test of it decides only what those markers decide.

Under a guard that lets only GPUs through, a kernel with TPU params is a finding and one
with Triton params is silent; under a guard for the TPU, the reverse. A condition that
does not test the platform guards nothing: TPU params there lower on the TPU.
"""

from __future__ import annotations

import pytest
from evaluator_programs import TPU, TRITON, fires, loader_of, marked, program

from typed_pallas_mypy.inference.evaluator.questions import module_findings

ONLY_GPU = [
    pytest.param(
        """
def main(x):
    if jax.default_backend() == "gpu":
        return lib.kernel(x)  # here
    return x
""",
        id="default-backend-equals",
    ),
    pytest.param(
        """
def main(x):
    if jax.default_backend() != "tpu":
        return lib.kernel(x)  # here
    return x
""",
        id="default-backend-not-equal",
    ),
    pytest.param(
        """
def main(x):
    if jax.default_backend() == "tpu":
        return x
    return lib.kernel(x)  # here
""",
        id="early-exit",
    ),
    pytest.param(
        """
def main(x):
    if jax.default_backend() not in ("gpu", "cuda", "rocm"):
        raise RuntimeError("GPU only")
    return lib.kernel(x)  # here
""",
        id="raise-unless-gpu",
    ),
    pytest.param(
        """
def main(x):
    backend = jax.default_backend()
    on_gpu = backend == "gpu"
    if on_gpu:
        return lib.kernel(x)  # here
    return x
""",
        id="variable-holding-the-backend",
    ),
    pytest.param(
        """
BACKEND = jax.default_backend()

def main(x):
    if BACKEND == "gpu":
        return lib.kernel(x)  # here
    return x
""",
        id="module-constant",
    ),
    pytest.param(
        """
def main(x):
    if jax.devices()[0].platform == "gpu":
        return lib.kernel(x)  # here
    return x
""",
        id="first-device-platform",
    ),
    pytest.param(
        """
def main(x):
    if any(d.platform == "gpu" for d in jax.devices()):
        return lib.kernel(x)  # here
    return x
""",
        id="any-device",
    ),
    pytest.param(
        """
def on_gpu():
    return jax.default_backend() == "gpu"

def main(x):
    if on_gpu():
        return lib.kernel(x)  # here
    return x
""",
        id="helper-without-parameter",
    ),
    pytest.param(
        """
def running_on(name):
    return jax.default_backend() == name

def main(x):
    if running_on("gpu"):
        return lib.kernel(x)  # here
    return x
""",
        id="helper-with-parameter",
    ),
    pytest.param(
        """
def main(x):
    match jax.default_backend():
        case "gpu":
            return lib.kernel(x)  # here
        case _:
            return x
""",
        id="match-on-the-backend",
    ),
    pytest.param(
        """
from jax.experimental.pallas import tpu as pltpu

def main(x):
    if not pltpu.is_tpu_device():
        return lib.kernel(x)  # here
    return x
""",
        id="not-is-tpu-device",
    ),
    pytest.param(
        """
def main(x):
    if jax.default_backend() == "tpu" or x is None:
        return x
    return lib.kernel(x)  # here
""",
        id="early-exit-on-a-disjunction",
    ),
    pytest.param(
        """
def main(x):
    if "TPU" not in jax.devices()[0].device_kind:
        return lib.kernel(x)  # here
    return x
""",
        id="device-kind-without-tpu",
    ),
    pytest.param(
        """
def main(x):
    kind = jax.devices()[0].device_kind.lower()
    if kind.startswith("nvidia"):
        return lib.kernel(x)  # here
    return x
""",
        id="device-kind-lowered-starts-with-nvidia",
    ),
]

ONLY_TPU = [
    pytest.param(
        """
def main(x):
    if jax.default_backend() == "tpu":
        return lib.kernel(x)  # here
    return x
""",
        id="default-backend-equals",
    ),
    pytest.param(
        """
from jax.experimental.pallas import tpu as pltpu

def main(x):
    if pltpu.is_tpu_device():
        return lib.kernel(x)  # here
    return x
""",
        id="is-tpu-device",
    ),
    pytest.param(
        """
def main(x):
    if jax.devices()[0].platform != "tpu":
        return x
    return lib.kernel(x)  # here
""",
        id="early-exit-on-device",
    ),
    pytest.param(
        """
def on_tpu_kind():
    return "TPU" in jax.devices()[0].device_kind

def main(x):
    if on_tpu_kind():
        return lib.kernel(x)  # here
    return x
""",
        id="device-kind-helper",
    ),
    pytest.param(
        """
def main(x):
    if jax.devices()[0].device_kind in ("TPU v4", "TPU v5 lite"):
        return lib.kernel(x)  # here
    return x
""",
        id="device-kind-among-tpu-names",
    ),
]

NO_GUARD = [
    pytest.param(
        """
def main(x):
    return lib.kernel(x)  # here
""",
        id="unguarded",
    ),
    pytest.param(
        """
def main(x):
    if x.shape[0] > 4:
        return lib.kernel(x)  # here
    return x
""",
        id="unknown-condition",
    ),
    pytest.param(
        """
def main(x, backend="gpu"):
    if backend == "gpu":
        return lib.kernel(x)  # here
    return x
""",
        id="parameter-not-the-platform",
    ),
    pytest.param(
        """
import os

def main(x):
    if os.environ.get("BACKEND") == "gpu":
        return lib.kernel(x)  # here
    return x
""",
        id="environment-variable",
    ),
    pytest.param(
        """
def main(x):
    if jax.default_backend() == "gpu" or x is None:
        return lib.kernel(x)  # here
    return x
""",
        id="disjunction-with-an-unknown",
    ),
    pytest.param(
        """
def main(x):
    if "NVIDIA" not in jax.devices()[0].device_kind:
        return lib.kernel(x)  # here
    return x
""",
        id="device-kind-not-nvidia-may-still-be-cuda",
    ),
    pytest.param(
        """
def main(x):
    if "v5" in jax.devices()[0].device_kind:
        return lib.kernel(x)  # here
    return x
""",
        id="device-kind-generation-only",
    ),
]


@pytest.mark.parametrize("program", ONLY_GPU)
@pytest.mark.parametrize(
    ("params", "expected"), [(TPU, True), (TRITON, False)], ids=["tpu-fires", "triton-silent"]
)
def test_gpu_guard(program: str, params: str, expected: bool) -> None:
    assert fires(program, params) is expected


@pytest.mark.parametrize("program", ONLY_TPU)
@pytest.mark.parametrize(
    ("params", "expected"), [(TRITON, True), (TPU, False)], ids=["triton-fires", "tpu-silent"]
)
def test_tpu_guard(program: str, params: str, expected: bool) -> None:
    assert fires(program, params) is expected


@pytest.mark.parametrize("program", NO_GUARD)
@pytest.mark.parametrize("params", [TPU, TRITON], ids=["tpu", "triton"])
def test_no_platform_guard_is_silent(program: str, params: str) -> None:
    assert not fires(program, params)


@pytest.mark.parametrize(
    ("params", "expected"), [(TPU, True), (TRITON, False)], ids=["tpu-fires", "triton-silent"]
)
def test_module_findings_give_the_guarded_line(params: str, expected: bool) -> None:
    # the plugin's question: every function of the module, called with unknown arguments
    files = program(str(ONLY_GPU[0].values[0]), params)
    _, line = marked(files)
    findings, read = module_findings(loader_of(files), "app", None)
    assert [f.line for f in findings] == ([line] if expected else [])
    assert {"app", "lib"} <= read
