"""A project pinned to a JAX older than typed-pallas supports, checked from an environment of
its own (the README's "Projects pinned to an older JAX").

axlearn pins jax 0.8.3 and JetStream jax 0.4.33; typed-pallas needs jax >= 0.10, so it cannot
be installed next to them. The checker does not need the project's JAX: it reads the
sources. Here each project is a folder with a ``requirements.txt`` that pins an old jax and a
small source tree with one real mistake and correct kernels; ``typed-pallas check`` runs from
this test environment (its own jax, never the pinned one, which nothing installs), as a
separate virtualenv or the pre-commit hook would run it. Each gives exactly its real
finding, and no false one; the correct site written with the JAX of the checker's range
fires once its params are swapped (so it is silent because it is right, not unseen).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from mypy_seeds import MypySeeds

from typed_pallas import _jax_range

pytestmark = pytest.mark.slow

#: console script of the environment running the tests: the checker's own environment
TYPED_PALLAS = Path(sys.executable).parent / "typed-pallas"

AXLEARN_LIKE = {
    "requirements.txt": "jax==0.8.3\njaxlib==0.8.3\n",
    "axlike/__init__.py": "",
    "axlike/ops.py": '''\
"""Written for jax 0.8.3, as axlearn pins it: jax.default_backend() picks the kernel."""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def double_kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2


def double(x):
    backend_name = jax.default_backend()
    if backend_name == "gpu":
        return pl.pallas_call(
            double_kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            compiler_params=pltriton.CompilerParams(num_warps=4),
        )(x)
    if backend_name == "tpu":
        return pl.pallas_call(
            double_kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            compiler_params=pltpu.CompilerParams(dimension_semantics=("parallel",)),
        )(x)
    return x * 2


def scale(x):
    if jax.default_backend() == "gpu":
        return pl.pallas_call(
            double_kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            compiler_params=pltpu.CompilerParams(),  # TPU params on the GPU path
        )(x)
    return x * 2
''',
}

JETSTREAM_LIKE = {
    "requirements.txt": "jax==0.4.33\njaxlib==0.4.33\n",
    "src/jetlike/__init__.py": "",
    "src/jetlike/attention.py": '''\
"""Written for jax 0.4.33, as JetStream pins it: pltpu.TPUCompilerParams, pltpu.ANY."""

import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def copy_kernel(x_hbm, o_ref, buf, sem):
    copy = pltpu.make_async_copy(x_hbm, buf, sem)
    copy.start()
    copy.wait()
    o_ref[...] = buf[...] + 1


def tpu_copy(x):
    return pl.pallas_call(
        copy_kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        in_specs=[pl.BlockSpec(memory_space=pltpu.ANY)],
        scratch_shapes=[pltpu.VMEM(x.shape, x.dtype), pltpu.SemaphoreType.DMA],
        compiler_params=pltpu.TPUCompilerParams(dimension_semantics=("parallel",)),
    )(x)


def attention(x, accelerator="tpu"):
    if accelerator == "tpu":
        return tpu_copy(x)
    raise NotImplementedError(accelerator)


def attention_on_this_backend(x):
    if jax.default_backend() == "tpu":
        return tpu_copy(x)
    return x + 1


def broken(x):
    if jax.default_backend() == "gpu":
        return tpu_copy(x)  # a TPU DMA kernel on the GPU path
    return x + 1
''',
}

#: project -> (files, paths to check, the one real finding as (file, line, code, message))
PROJECTS = {
    "axlearn-like, jax==0.8.3": (
        AXLEARN_LIKE,
        ["axlike/"],
        (
            "axlike/ops.py",
            32,
            "pallas-platform",
            "Compiler params for platform tpu cannot be used for gpu lowering.",
        ),
    ),
    "JetStream-like, jax==0.4.33": (
        JETSTREAM_LIKE,
        ["src/"],
        (
            "src/jetlike/attention.py",
            39,
            "pallas-platform",
            "tpu_copy lowers only for tpu; it cannot be used for gpu lowering.",
        ),
    ),
}


@pytest.fixture(scope="module")
def checker_cache(tmp_path_factory: pytest.TempPathFactory, mypy_seeds: MypySeeds) -> str:
    """The checker's mypy cache, with jax already analysed (the projects' modules are not)."""
    cache = tmp_path_factory.mktemp("mypy-cache") / "cache"
    mypy_seeds.check_into(cache)
    return str(cache)


def _write(root: Path, files: dict[str, str]) -> None:
    for name, text in files.items():
        (root / name).parent.mkdir(parents=True, exist_ok=True)
        (root / name).write_text(text)


def _check(root: Path, cache: str, paths: list[str]) -> tuple[int, list[tuple[str, int, str, str]]]:
    environ = {
        k: v
        for k, v in os.environ.items()
        if k not in ("PYTHONPATH", "MYPYPATH", "VIRTUAL_ENV") and not k.startswith("TYPED_PALLAS_")
    }
    proc = subprocess.run(
        [str(TYPED_PALLAS), "check", "--output", "json", "--cache-dir", cache, *paths],
        cwd=root,
        env=environ,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode in (0, 1), proc.stdout + proc.stderr
    found = [(f["file"], f["line"], f["code"], f["message"]) for f in json.loads(proc.stdout)]
    return proc.returncode, found


def test_the_checker_environment_is_not_the_projects() -> None:
    """The point of the setup: the pinned versions are outside the range, the checker's jax inside."""
    assert _jax_range.version_in_range("0.8.3") is False
    assert _jax_range.version_in_range("0.4.33") is False
    assert _jax_range.version_in_range(metadata.version("jax")) is True
    assert TYPED_PALLAS.exists(), TYPED_PALLAS


@pytest.mark.parametrize("project", sorted(PROJECTS))
def test_a_pinned_project_gets_its_finding_and_no_false_one(
    project: str, tmp_path: Path, checker_cache: str
) -> None:
    files, paths, real_finding = PROJECTS[project]
    _write(tmp_path, files)
    status, found = _check(tmp_path, checker_cache, paths)
    assert found == [real_finding]
    assert status == 1
    assert not (tmp_path / "jax").exists()  # nothing was installed into the project


def test_the_correct_sites_are_read_not_skipped(tmp_path: Path, checker_cache: str) -> None:
    """The axlearn-like project's correct GPU kernel, given TPU params, is a second finding."""
    swapped = dict(AXLEARN_LIKE)
    swapped["axlike/ops.py"] = swapped["axlike/ops.py"].replace(
        "pltriton.CompilerParams(num_warps=4)", "pltpu.CompilerParams()"
    )
    _write(tmp_path, swapped)
    status, found = _check(tmp_path, checker_cache, ["axlike/"])
    assert [(file, line) for file, line, _, _ in found] == [
        ("axlike/ops.py", 16),
        ("axlike/ops.py", 32),
    ]
    assert status == 1
