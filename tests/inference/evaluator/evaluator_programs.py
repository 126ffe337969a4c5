"""Tiny programs for the evaluator's tests, laid out in memory, and their verdicts.

``fires(app)`` runs ``app.main`` (called with an unknown ``x``) under each lowering
platform and answers whether the call on the line marked ``# here`` is a finding: JAX
refuses it wherever the program's guards let it run. Every ``app`` starts with::

    import jax
    from jax import lax
    import lib

and ``lib`` is ``LIB``: ``kernel`` (its params chosen per test: ``params``), a kernel
per params class (``tpu_kernel``, ``triton_kernel``, ``mosaic_gpu_kernel``, ``bare_kernel``
without params, ``interpret_kernel``), the params objects themselves (``TPU``,
``TRITON``) and ``run(params, x)``, a kernel taking its params from its caller. Other
modules are given as ``files`` (a path such as ``"pkg/__init__.py"`` to its source).

A finding is a call whose verdict says so; a run that did not finish says nothing, as
it does for the plugin.
"""

from __future__ import annotations

import textwrap
from typing import Final

import pytest

from typed_pallas_mypy.inference.evaluator import Loader, call_verdict, run_function
from typed_pallas_mypy.inference.evaluator.machine import files_loader

TPU: Final = "pltpu.CompilerParams()"
TRITON: Final = "pltriton.CompilerParams()"
MOSAIC_GPU: Final = "plgpu.CompilerParams()"

PRELUDE: Final = "import jax\nfrom jax import lax\nimport lib\n"
MARK: Final = "# here"

LIB: Final = """
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import mosaic_gpu as plgpu
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton

TPU = pltpu.CompilerParams()
TRITON = pltriton.CompilerParams()


def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


def kernel(x):
    return pl.pallas_call(_body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype)$PARAMS)(x)


def tpu_kernel(x):
    return pl.pallas_call(
        _body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), compiler_params=pltpu.CompilerParams()
    )(x)


def triton_kernel(x):
    return pl.pallas_call(
        _body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), compiler_params=pltriton.CompilerParams()
    )(x)


def mosaic_gpu_kernel(x):
    return pl.pallas_call(
        _body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), compiler_params=plgpu.CompilerParams()
    )(x)


def bare_kernel(x):
    return pl.pallas_call(_body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)


def interpret_kernel(x):
    return pl.pallas_call(
        _body,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltpu.CompilerParams(),
        interpret=True,
    )(x)


def run(params, x):
    return pl.pallas_call(
        _body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), compiler_params=params
    )(x)
"""


def guarded_main(setup: str, call: str, head: str = "") -> str:
    """``head``, then ``main(x)``: ``setup``, then ``call`` under a guard for "gpu" on the
    line marked ``# here``."""
    return f"""{head}
def main(x):
    {setup}
    if jax.default_backend() == "gpu":
        return {call}  # here
    return x
"""


#: (the kernel the rule picks, the one it passes over, whether calling it under a guard
#: for "gpu" is a finding)
PICKS = pytest.mark.parametrize(
    ("picked", "other", "expected"),
    [("tpu_kernel", "triton_kernel", True), ("triton_kernel", "tpu_kernel", False)],
    ids=["tpu-picked-fires", "triton-picked-silent"],
)

#: ``params`` and whether ``lib.kernel`` called under a guard for "gpu" is a finding
TPU_FIRES_TRITON_SILENT: Final = pytest.mark.parametrize(
    ("params", "expected"), [(TPU, True), (TRITON, False)], ids=["tpu-fires", "triton-silent"]
)


def lib(params: str | None = TPU) -> str:
    """``LIB`` with ``kernel`` taking ``params`` (None: no ``compiler_params``)."""
    return LIB.replace("$PARAMS", "" if params is None else f", compiler_params={params}")


def loader_of(files: dict[str, str]) -> Loader:
    """A ``Loader`` over ``files`` (paths to sources); None for anything else (jax,
    the standard library, a missing module)."""
    return files_loader(files)


def program(
    app: str, params: str | None = TPU, files: dict[str, str] | None = None
) -> dict[str, str]:
    """The program's files: ``app.py`` (the prelude, then ``app``), ``lib.py``, ``files``."""
    out = {"app.py": PRELUDE + textwrap.dedent(app), "lib.py": lib(params)}
    out.update({path: textwrap.dedent(source) for path, source in (files or {}).items()})
    return out


def marked(files: dict[str, str]) -> tuple[str, int]:
    """The module and line of the one line marked ``# here``."""
    found = [
        (path, number)
        for path, source in files.items()
        for number, line in enumerate(source.splitlines(), start=1)
        if line.rstrip().endswith(MARK)
    ]
    assert len(found) == 1, f"one line must end with {MARK!r}, found {found}"
    path, line = found[0]
    return path.removesuffix(".py").removesuffix("/__init__").replace("/", "."), line


def fires(
    app: str,
    params: str | None = TPU,
    *,
    files: dict[str, str] | None = None,
    release: tuple[int, ...] | None = None,
) -> bool:
    """Whether the marked call of the program is a finding at the JAX ``release`` (None:
    no fact that depends on the release)."""
    laid_out = program(app, params, files)
    module, line = marked(laid_out)
    machines = run_function(loader_of(laid_out), "app", "main")
    verdict = call_verdict(machines, module, line, release)
    return verdict is not None and verdict.finding
