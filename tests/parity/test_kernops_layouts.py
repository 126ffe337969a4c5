"""The tests' own kernel library (``tests/fixtures``' ``kernops``) used from an application,
installed as a third-party package without ``py.typed`` and with it: each kernel called on
another platform's path is one finding with the chain into the library, the same in both
layouts (TPU params given to the library's ``pallas_call`` wrapper on the GPU path too);
on its own platform, interpreted, or with no params, it is silent.

What the engine infers for each entry, and JAX's own lowering of it, are in
tests/inference/test_library_lowering.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from fixtures import kernops_site

from typed_pallas import _platforms, _versions

#: where Mosaic GPU params lower for the installed JAX: never tpu; rocm refuses them from
#: 0.12, and before it JAX's answer depends on what was lowered before (nothing is said)
MOSAIC_GPU_LOWERS_FOR = (
    "cuda"
    if (_versions.release(_versions.installed_version("jax") or "") or (0,))[:2]
    >= _platforms.MOSAIC_GPU_ROCM_REFUSED_FROM
    else "cuda, rocm"
)

pytestmark = pytest.mark.slow

MYPY_INI = """\
[mypy]
plugins = typed_pallas_mypy
ignore_missing_imports = True
check_untyped_defs = True
"""

APP = """\
import jax
from jax.experimental.pallas import tpu as pltpu
from kernops import wrappers
from kernops.gpu import attention, multiply_mgpu, softmax
from kernops.tpu import double, flash, matmul


def fire_triton_on_tpu(q):
    if jax.default_backend() == "tpu":
        return attention.mha(q, q, q)  # fire triton
    return q


def fire_mosaic_gpu_on_tpu(a):
    if jax.default_backend() == "tpu":
        return multiply_mgpu.multiply(a, a)  # fire mosaic_gpu
    return a


def fire_tpu_on_gpu(q):
    if jax.default_backend() == "gpu":
        return flash.flash(q, q, q)  # fire tpu
    return q


def fire_kernel_object_on_gpu(q):
    if jax.default_backend() == "gpu":
        return wrappers.make_flash()(q, q, q)  # fire object
    return q


def body(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def fire_params_through_the_wrapper_on_gpu(x):
    if jax.default_backend() == "gpu":
        return wrappers.pallas_call(body, x, compiler_params=pltpu.CompilerParams())(x)  # fire wrapper
    return x


def silent_wrapper_on_its_own_path(x):
    if jax.default_backend() == "tpu":
        return wrappers.pallas_call(body, x, compiler_params=pltpu.CompilerParams())(x)
    return x


def silent_each_on_its_own_path(q, a):
    if jax.default_backend() == "tpu":
        return flash.flash(q, q, q), matmul.matmul(a, a), wrappers.make_flash()(q, q, q)
    if jax.default_backend() == "gpu":
        return attention.mha(q, q, q), softmax.softmax(a), multiply_mgpu.multiply(a, a)
    return q


def silent_interpreted_or_neutral(q, a):
    if jax.default_backend() == "gpu":
        return matmul.matmul(a, a, interpret=True), double.double(a)
    if wrappers.on_tpu():
        return attention.mha(q, q, q, interpret=True)
    return q
"""

#: the ``# fire`` mark of each finding's line -> (message, notes), word for word;
#: ``{guard}`` is the line of the ``if`` above it
EXPECTED: dict[str, tuple[str, tuple[str, ...]]] = {
    "triton": (
        "Compiler params for platform gpu cannot be used for tpu lowering.",
        (
            "mha (kernops/gpu/attention.py:36) lowers only for cuda, rocm: it calls "
            "_mha_forward at kernops/gpu/attention.py:40",
            "_mha_forward (kernops/gpu/attention.py:22) lowers only for cuda, rocm: its "
            "pl.pallas_call at kernops/gpu/attention.py:25 takes Triton params",
            "the if at line {guard} lets this lower only for tpu",
        ),
    ),
    "mosaic_gpu": (
        "Compiler params for platform gpu cannot be used for tpu lowering.",
        (
            "multiply (kernops/gpu/multiply_mgpu.py:19) lowers only for {mosaic_gpu}: its "
            "plgpu.kernel at kernops/gpu/multiply_mgpu.py:21 takes Mosaic GPU params",
            "the if at line {guard} lets this lower only for tpu",
        ),
    ),
    "tpu": (
        "Compiler params for platform tpu cannot be used for gpu lowering.",
        (
            "flash (kernops/tpu/flash.py:41) lowers only for tpu: it calls _flash at "
            "kernops/tpu/flash.py:43",
            "_flash (kernops/tpu/flash.py:37) lowers only for tpu: it calls _flash_impl at "
            "kernops/tpu/flash.py:38",
            "_flash_impl (kernops/tpu/flash.py:21) lowers only for tpu: its pl.pallas_call "
            "at kernops/tpu/flash.py:25 takes Mosaic TPU params",
            "the if at line {guard} lets this lower only for cuda, rocm",
        ),
    ),
    "object": (
        "Compiler params for platform tpu cannot be used for gpu lowering.",
        (
            "make_flash (kernops/wrappers.py:21) returns a FlashKernel at "
            "kernops/wrappers.py:23, which lowers only for tpu",
            "__call__ (kernops/wrappers.py:17) lowers only for tpu: it calls flash at "
            "kernops/wrappers.py:18",
            "flash (kernops/tpu/flash.py:41) lowers only for tpu: it calls _flash at "
            "kernops/tpu/flash.py:43",
            "_flash (kernops/tpu/flash.py:37) lowers only for tpu: it calls _flash_impl at "
            "kernops/tpu/flash.py:38",
            "_flash_impl (kernops/tpu/flash.py:21) lowers only for tpu: its pl.pallas_call "
            "at kernops/tpu/flash.py:25 takes Mosaic TPU params",
            "the if at line {guard} lets this lower only for cuda, rocm",
        ),
    ),
    "wrapper": (
        "Compiler params for platform tpu cannot be used for gpu lowering.",
        (
            "the if at line {guard} lets this call lower only for cuda, rocm",
            "Mosaic TPU params lower only for tpu; for gpu lowering use "
            "jax.experimental.pallas.triton.CompilerParams or "
            "jax.experimental.pallas.mosaic_gpu.CompilerParams, or guard the call with "
            "jax.default_backend() == 'tpu' (or typed_pallas.dispatch).",
            "pallas_call (kernops/wrappers.py:26) forwards its kernel and compiler_params to "
            "pl.pallas_call",
        ),
    ),
}

_LINE = re.compile(r"^app\.py:(\d+): (error|note): (.*?)(?:  \[[a-z-]+\])?$")


def _findings(output: str) -> dict[int, tuple[str, tuple[str, ...]]]:
    found: dict[int, tuple[str, tuple[str, ...]]] = {}
    for raw in output.splitlines():
        m = _LINE.match(raw)
        if m is None:
            continue
        line, kind, text = int(m[1]), m[2], m[3]
        if kind == "error":
            assert line not in found, raw
            found[line] = (text, ())
        else:
            message, notes = found[line]
            found[line] = (message, (*notes, text))
    return found


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("kernops-cache")


def _expected() -> dict[int, tuple[str, tuple[str, ...]]]:
    """EXPECTED by line of APP (the guard is the line above each mark)."""
    out: dict[int, tuple[str, tuple[str, ...]]] = {}
    for number, line in enumerate(APP.splitlines(), 1):
        if "# fire " in line:
            message, notes = EXPECTED[line.split("# fire ")[1]]
            out[number] = (
                message,
                tuple(n.format(guard=number - 1, mosaic_gpu=MOSAIC_GPU_LOWERS_FOR) for n in notes),
            )
    return out


def test_every_mark_has_its_expectation() -> None:
    marks = [line.split("# fire ")[1] for line in APP.splitlines() if "# fire " in line]
    assert sorted(marks) == sorted(EXPECTED)


@pytest.mark.parametrize("typed", [False, True], ids=["untyped", "typed"])
def test_kernops_installed(tmp_path: Path, cache: Path, typed: bool) -> None:
    site = kernops_site.install(tmp_path, typed=typed)
    assert (site / "kernops" / "py.typed").exists() == typed
    project = tmp_path / "project"
    project.mkdir()
    (project / "app.py").write_text(APP)
    (project / "mypy.ini").write_text(MYPY_INI)
    env = {**os.environ, "TYPED_PALLAS_MYPY_DEBUG": "1", "PYTHONPATH": str(site)}
    done = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(cache), "app.py"],
        cwd=project,
        env=env,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
    )
    assert "INTERNAL ERROR" not in done.stdout + done.stderr, done.stdout + done.stderr
    assert done.returncode in (0, 1), done.stdout + done.stderr
    assert _findings(done.stdout) == _expected(), done.stdout
