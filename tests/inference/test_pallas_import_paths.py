"""JAX's two spellings of Pallas, read by the engine as one.

From jax 0.12.1 on, ``jax.pallas`` (``jax.pallas.tpu``, ``jax.pallas.mosaic_gpu``,
``jax.pallas.tpu_sc``) is JAX's preferred import path and ``jax.experimental.pallas*`` its
alias. A library written against either path must get the same facts: every way Python
binds the package (``from jax import pallas``, ``import jax.pallas as pl``, ``from
jax.pallas import tpu``, a plain ``import jax`` and the attribute chain, ``from
jax.pallas.tpu import CompilerParams``). Each firing function has a silent twin (no
params). The engine runs the library's imports as this environment would: where the
installed jax has no ``jax.pallas`` (before 0.12.1) the import fails, nothing of the
library runs and nothing is said (mypy reports the import itself).
"""

from __future__ import annotations

import importlib.util

import pytest
from library_fakes import MakeLib, platforms_of, reader_for

from typed_pallas import _platforms

TPU = {"tpu"}
#: Mosaic GPU params: never tpu (whether rocm refuses depends on the JAX release, not
#: known to a bare engine: it says nothing of rocm)
GPU = {"cuda", "rocm"}

#: whether the installed jax has the new path (Python's answer, not the engine's)
NEW_PATH = importlib.util.find_spec("jax.pallas") is not None

KERNEL = """
def body(x_ref, o_ref):
    o_ref[...] = x_ref[...]
"""

SPELLINGS = {
    "from_jax_import": (
        "from jax import pallas as pl\nfrom jax.pallas import tpu as pltpu\n"
        "from jax.pallas import mosaic_gpu as plgpu\n",
        "pl.pallas_call",
        "pltpu.CompilerParams",
        "plgpu.CompilerParams",
    ),
    "import_as": (
        "import jax.pallas as pl\nimport jax.pallas.tpu as pltpu\nimport jax.pallas.mosaic_gpu as plgpu\n",
        "pl.pallas_call",
        "pltpu.CompilerParams",
        "plgpu.CompilerParams",
    ),
    "attribute_chain": (
        "import jax\nimport jax.pallas\n",
        "jax.pallas.pallas_call",
        "jax.pallas.tpu.CompilerParams",
        "jax.pallas.mosaic_gpu.CompilerParams",
    ),
    "names_imported": (
        "from jax.pallas import pallas_call\nfrom jax.pallas.tpu import CompilerParams as TpuParams\n"
        "from jax.pallas.mosaic_gpu import CompilerParams as GpuParams\n",
        "pallas_call",
        "TpuParams",
        "GpuParams",
    ),
}


@pytest.mark.parametrize("spelling", sorted(SPELLINGS))
def test_jax_pallas_spellings_give_the_facts_of_jax_experimental_pallas(
    make_lib: MakeLib, spelling: str
) -> None:
    imports, call, tpu, gpu = SPELLINGS[spelling]
    source = (
        "import jax\n"
        + imports
        + KERNEL
        + f"""
def tpu_op(x):
    return {call}(body, out_shape=x, compiler_params={tpu}())(x)

def gpu_op(x):
    return {call}(body, out_shape=x, compiler_params={gpu}())(x)

def no_params(x):
    return {call}(body, out_shape=x)(x)

def tpu_under_gpu_guard(x):
    if jax.default_backend() == "gpu":
        return tpu_op(x)
    return x
"""
    )
    facts = reader_for(make_lib({"newpath/ops.py": source}))
    assert platforms_of(facts.requirement("newpath.ops.tpu_op")) == (TPU if NEW_PATH else None)
    assert platforms_of(facts.requirement("newpath.ops.gpu_op")) == (GPU if NEW_PATH else None)
    # silent twins: no params lower anywhere; a guard does not make a requirement of
    # its own function
    assert platforms_of(facts.requirement("newpath.ops.no_params")) is None


def test_both_paths_in_one_library_agree(make_lib: MakeLib) -> None:
    source = (
        "from jax import pallas as pl\nfrom jax.experimental.pallas import tpu as old_tpu\n"
        "from jax.pallas import tpu as new_tpu\n"
        + KERNEL
        + """
def old(x):
    return pl.pallas_call(body, out_shape=x, compiler_params=old_tpu.CompilerParams())(x)

def new(x):
    return pl.pallas_call(body, out_shape=x, compiler_params=new_tpu.CompilerParams())(x)
"""
    )
    facts = reader_for(make_lib({"mixed/ops.py": source}))
    assert platforms_of(facts.requirement("mixed.ops.old")) == (TPU if NEW_PATH else None)
    assert platforms_of(facts.requirement("mixed.ops.new")) == (TPU if NEW_PATH else None)


def test_a_package_named_like_jax_pallas_elsewhere_is_not_renamed() -> None:
    assert _platforms.canonical_fullname("jax.pallas.tpu.CompilerParams") == (
        "jax.experimental.pallas.tpu.CompilerParams"
    )
    assert _platforms.canonical_fullname("jax.pallas") == "jax.experimental.pallas"
    # silent: names that merely start with the same letters, and other packages
    assert _platforms.canonical_fullname("jax.pallasx.tpu") == "jax.pallasx.tpu"
    assert _platforms.canonical_fullname("mylib.jax.pallas.tpu") == "mylib.jax.pallas.tpu"
    assert _platforms.canonical_fullname("jax.experimental.pallas.tpu") == (
        "jax.experimental.pallas.tpu"
    )
