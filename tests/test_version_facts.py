"""JAX-version facts the plugin knows from the installed metadata (never importing jax).

From jax 0.12 on, ``pl.pallas_call`` has no Mosaic GPU lowering: a call with Mosaic GPU
params fails on every platform, and the plugin says so in the runtime guard's words.
On jax 0.10 the same call lowers, and the plugin is silent. From jax 0.12 on, a kernel
whose result only orders items (a sort key's) is dropped as dead code before lowering:
under a guard for "gpu", TPU params there are a finding at 0.10 only. The suite runs in
both environments, so each one exercises its side.
"""

from __future__ import annotations

import os
import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from mypy_seeds import MypySeeds

from typed_pallas import _platforms

pytestmark = pytest.mark.slow

INI = "[mypy]\nplugins = typed_pallas_mypy\n"

SOURCE = """\
from typing import Any
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu


def body(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...]


def f(x: jax.Array) -> object:
    return pl.pallas_call(body, out_shape=x, compiler_params=plgpu.CompilerParams())(x)


def g(x: jax.Array) -> object:
    return pl.pallas_call(body, out_shape=x, compiler_params=plgpu.CompilerParams(), interpret=True)(x)
"""


def _installed_jax() -> tuple[int, int]:
    major, minor = metadata.version("jax").split(".")[:2]
    return int(major), int(minor)


SORT_KEY_SOURCE = """\
from typing import Any
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def body(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...]


def kernel(x: jax.Array) -> jax.Array:
    return pl.pallas_call(body, out_shape=x, compiler_params=pltpu.CompilerParams())(x)


def largest(x: jax.Array) -> jax.Array:
    return max([x], key=lambda v: kernel(v).sum())


def main(x: jax.Array) -> jax.Array:
    if jax.default_backend() == "gpu":
        return largest(x)
    return x
"""


def _mypy(tmp_path: Path, seeds: MypySeeds, source: str = SOURCE) -> str:
    (tmp_path / "mod.py").write_text(source)
    (tmp_path / "mypy.ini").write_text(INI)
    seeds.into(tmp_path / "cache", INI)  # jax already analysed; mod.py is checked
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MYPY", "TYPED_PALLAS"))}
    env["TYPED_PALLAS_MYPY_DEBUG"] = "1"
    completed = subprocess.run(
        [sys.executable, "-m", "mypy", "--cache-dir", str(tmp_path / "cache"), "mod.py"],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert "Traceback" not in completed.stdout + completed.stderr, completed.stderr
    return completed.stdout


def test_mosaic_gpu_params_through_pallas_call(tmp_path: Path, mypy_seeds: MypySeeds) -> None:
    out = _mypy(tmp_path, mypy_seeds)
    lines = [line for line in out.splitlines() if line.startswith("mod.py")]
    if _installed_jax() >= _platforms.NO_MOSAIC_GPU_PALLAS_CALL_FROM:
        assert lines[0] == (
            "mod.py:12: error: This JAX does not lower Mosaic GPU params through pl.pallas_call; "
            "use plgpu.kernel (typed_pallas.mosaic_gpu_kernel) instead.  [pallas-platform]"
        ), out
        assert lines[1].startswith("mod.py:12: note: jax 0.12"), out
        assert not any(line.startswith("mod.py:16") for line in lines), out  # interpreted
    else:
        assert lines == [], out


def test_a_sort_keys_kernel_is_lowered_before_jax_0_12(
    tmp_path: Path, mypy_seeds: MypySeeds
) -> None:
    out = _mypy(tmp_path, mypy_seeds, SORT_KEY_SOURCE)
    errors = [line for line in out.splitlines() if ": error:" in line]
    if _installed_jax() >= _platforms.DEAD_KERNELS_DROPPED_FROM:
        assert errors == [], out  # dead code: JAX drops it before lowering
    else:
        assert len(errors) == 1 and errors[0].startswith("mod.py:21: error:"), out
