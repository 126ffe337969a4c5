"""Requirements of library functions (``library_facts.requirements``), rule by rule.

Each rule has a firing case (a requirement, with its platforms, and its notes where the
wording matters) and a silent case (None) in a small fake library. ``pkg/ops.py`` is
``library_fakes.OPS``: ``tpu_op`` (line 10, its ``pl.pallas_call`` on line 11),
``triton_op`` (13/14), ``tpu_op_i`` (16/17, ``interpret=`` from its parameter) and
``plain`` (no kernel).
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from library_fakes import HEADER, OPS, MakeLib, count_module_imports, platforms_of, reader_for

from typed_pallas_mypy.inference import SUMMARIES_ENV, Inference, Requirement

IMPORTS = HEADER + "from pkg.ops import kernel, plain, tpu_op, tpu_op_i, triton_op\n"

TPU_OP_NOTE = (
    "tpu_op (pkg/ops.py:10) lowers only for tpu: its pl.pallas_call at pkg/ops.py:11 "
    "takes Mosaic TPU params"
)


def _library(make_lib: MakeLib, **modules: str) -> Inference:
    files = {"pkg/ops.py": OPS}
    for name, source in modules.items():
        files[f"pkg/{name}.py"] = IMPORTS + source
    return reader_for(make_lib(files))


def _req(facts: Inference, name: str) -> Requirement:
    found = facts.requirement(name)
    assert found is not None, name
    return found


# --------------------------------------------------------------------------- entry calls


def test_params_give_the_platforms_and_the_note(make_lib: MakeLib) -> None:
    facts = _library(make_lib)
    found = _req(facts, "pkg.ops.tpu_op")
    assert found == Requirement(
        frozenset({"tpu"}), ("params", "tpu", "mosaic_tpu"), (TPU_OP_NOTE,), None
    )
    triton = _req(facts, "pkg.ops.triton_op")
    assert triton.platforms == frozenset({"cuda", "rocm"})
    assert triton.cause == ("params", "gpu", "triton")
    assert facts.requirement("pkg.ops.plain") is None


def test_evidence_without_params(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        ev="""
def dma_kernel(x_ref, o_ref):
    pltpu.sync_copy(x_ref, o_ref)

def by_body(x):
    return pl.pallas_call(dma_kernel, out_shape=x)(x)

def by_scratch(x):
    return pl.pallas_call(kernel, out_shape=x, scratch_shapes=[pltpu.VMEM((8,), None)])(x)

def by_entry(x):
    return plgpu.kernel(kernel, out_shape=x)(x)

def by_block_spec_only(x):
    spec = pl.BlockSpec(memory_space=pltpu.SMEM)
    return pl.pallas_call(kernel, out_shape=x, in_specs=[spec])(x)

def no_evidence(x):
    return pl.pallas_call(kernel, out_shape=x)(x)

def legacy_dict_params(x):
    return pl.pallas_call(dma_kernel, out_shape=x, compiler_params=dict(mosaic=dict()))(x)

def legacy_dict_params_plain(x):
    return pl.pallas_call(kernel, out_shape=x, compiler_params={"mosaic": {}})(x)
""",
    )
    body = _req(facts, "pkg.ev.by_body")
    assert body.platforms == frozenset({"tpu"})
    assert body.cause == ("evidence", "mosaic_tpu", "mosaic_tpu")
    assert body.chain == (
        "by_body (pkg/ev.py:12) lowers only for tpu: its pl.pallas_call at pkg/ev.py:13 "
        "uses pltpu.sync_copy (line 10), TPU-only",
    )
    assert platforms_of(facts.requirement("pkg.ev.by_scratch")) == {"tpu"}
    # plgpu.kernel lowers with Mosaic GPU, never for tpu; whether rocm refuses it depends
    # on the JAX release (``_platforms.MOSAIC_GPU_ROCM_REFUSED_FROM``), not given here
    assert platforms_of(facts.requirement("pkg.ev.by_entry")) == {"cuda", "rocm"}
    assert facts.requirement("pkg.ev.by_block_spec_only") is None
    assert facts.requirement("pkg.ev.no_evidence") is None
    # legacy dict params are unknown params: only evidence can say anything
    assert _req(facts, "pkg.ev.legacy_dict_params").cause == (
        "evidence",
        "mosaic_tpu",
        "mosaic_tpu",
    )
    assert facts.requirement("pkg.ev.legacy_dict_params_plain") is None


def test_kernel_of_another_module_gives_its_body_evidence(make_lib: MakeLib) -> None:
    facts = reader_for(
        make_lib(
            {
                "pkg/kernels.py": HEADER + "def dma_kernel(x_ref, o_ref):\n"
                "    pltpu.sync_copy(x_ref, o_ref)\n"
                "def copy_kernel(x_ref, o_ref):\n"
                "    o_ref[...] = x_ref[...]\n",
                "pkg/use.py": HEADER + "from pkg.kernels import dma_kernel, copy_kernel\n"
                "def op(x):\n"
                "    return pl.pallas_call(dma_kernel, out_shape=x)(x)\n"
                "def plain_op(x):\n"
                "    return pl.pallas_call(copy_kernel, out_shape=x)(x)\n",
            }
        )
    )
    assert _req(facts, "pkg.use.op").chain == (
        "op (pkg/use.py:8) lowers only for tpu: its pl.pallas_call at pkg/use.py:9 uses "
        "pltpu.sync_copy (in dma_kernel of pkg.kernels, line 8), TPU-only",
    )
    assert facts.requirement("pkg.use.plain_op") is None


def test_contradictions_give_none(make_lib: MakeLib) -> None:
    """Kernels of two platforms on one path: none lowers it, no requirement. Params
    against their body's evidence: the params decide where JAX refuses it."""
    facts = _library(
        make_lib,
        mix="""
def both(x):
    return triton_op(tpu_op(x))

def twice(x):
    return tpu_op(tpu_op(x))

def atomic_kernel(x_ref, o_ref):
    o_ref[...] = pltriton.atomic_add(x_ref, 0, 1)

def params_against_body(x):
    return pl.pallas_call(
        atomic_kernel, out_shape=x, compiler_params=pltpu.CompilerParams()
    )(x)
""",
    )
    assert facts.requirement("pkg.mix.both") is None
    assert platforms_of(facts.requirement("pkg.mix.twice")) == {"tpu"}
    # JAX refuses Mosaic TPU params on cuda and rocm whatever the body; the body's Triton
    # atomic makes tpu refuse too: it lowers nowhere, never outside tpu, and a call on
    # cuda or rocm fails as the params say
    assert platforms_of(facts.requirement("pkg.mix.params_against_body")) == {"tpu"}


def test_entry_runs_only_when_its_kernel_runs(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        run="""
def assigned_then_called(x):
    call = pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())
    return call(x)

def rewrapped_in_a_loop(x):
    call = pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())
    for _ in range(2):
        call = jax.vmap(call)
    return call(x)

def named(x):
    call = jax.named_scope("k")(
        pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())
    )
    return call(x)

def decorated(x):
    @functools.partial(pl.pallas_call, out_shape=x, compiler_params=pltpu.CompilerParams())
    def body(x_ref, o_ref):
        o_ref[...] = x_ref[...]
    return body(x)

def in_with(x):
    with jax.named_scope("k"):
        return tpu_op(x)

def assigned_never_called(x):
    call = pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())
    return x

def called_conditionally(x, flag):
    call = pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())
    if flag:
        return call(x)
    return x

def decorated_never_called(x):
    @functools.partial(pl.pallas_call, out_shape=x, compiler_params=pltpu.CompilerParams())
    def body(x_ref, o_ref):
        o_ref[...] = x_ref[...]
    return x
""",
    )
    for name in ("assigned_then_called", "rewrapped_in_a_loop", "named", "decorated", "in_with"):
        assert platforms_of(facts.requirement(f"pkg.run.{name}")) == {"tpu"}, name
    for name in ("assigned_never_called", "called_conditionally", "decorated_never_called"):
        assert facts.requirement(f"pkg.run.{name}") is None, name


# --------------------------------------------------------------------------- names


def test_aliases_and_reexports(make_lib: MakeLib) -> None:
    root = make_lib(
        {
            "pkg/ops.py": OPS + "alias = tpu_op\n",
            "pkg/__init__.py": "from pkg.ops import tpu_op as tpu_op\n"
            "from .ops import tpu_op as relative_op\n"
            "from pkg.ops import plain\n",
            "pkg/sub/__init__.py": "from .. import ops\n",
        }
    )
    facts = reader_for(root)
    for name in ("pkg.tpu_op", "pkg.relative_op", "pkg.ops.alias", "pkg.sub.ops.tpu_op"):
        found = _req(facts, name)
        assert found.chain == (TPU_OP_NOTE,), name
    assert facts.requirement("pkg.plain") is None
    assert facts.requirement("pkg.missing") is None


def test_partial(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        part="""
scaled = functools.partial(tpu_op_i)
bound_off = functools.partial(tpu_op_i, interpret=False)
bound_on = functools.partial(tpu_op_i, interpret=True)
positional = functools.partial(tpu_op_i, 1)
of_plain = functools.partial(plain, 2)

def local_partial(x):
    run = functools.partial(tpu_op, x)
    return run()
""",
    )
    assert _req(facts, "pkg.part.scaled").interpret == ("interpret", 1)
    assert _req(facts, "pkg.part.bound_off").interpret is None
    assert _req(facts, "pkg.part.positional").interpret == ("interpret", 0)
    assert platforms_of(facts.requirement("pkg.part.local_partial")) == {"tpu"}
    assert facts.requirement("pkg.part.bound_on") is None
    assert facts.requirement("pkg.part.of_plain") is None


def test_jit_and_decorators(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        jit="""
@jax.jit
def jitted(x):
    return tpu_op(x)

@functools.partial(jax.jit, static_argnames=["n"])
def jitted_static(x, n=1):
    return tpu_op(x)

@jax.jit(static_argnames=["n"])
def jitted_call(x, n=1):
    return tpu_op(x)

wrapped = jax.jit(tpu_op)

def uses_jit_inline(x):
    return jax.jit(tpu_op)(x)

def identity_decorator(f):
    return f

@identity_decorator
def decorated(x):
    return tpu_op(x)

def unknown_decorator(f):
    return f.__wrapped_by_something_unknown__

@unknown_decorator
def unknown_decorated(x):
    return tpu_op(x)
""",
    )
    assert _req(facts, "pkg.jit.jitted").chain == (
        "jitted (pkg/jit.py:10) lowers only for tpu: it calls tpu_op at pkg/jit.py:11",
        TPU_OP_NOTE,
    )
    for name in ("jitted_static", "jitted_call", "wrapped", "uses_jit_inline"):
        assert platforms_of(facts.requirement(f"pkg.jit.{name}")) == {"tpu"}, name
    # a decorator that returns the function itself keeps it (Python: the name is bound to
    # what the decorator returns); one that returns something unknown says nothing
    assert platforms_of(facts.requirement("pkg.jit.decorated")) == {"tpu"}
    assert facts.requirement("pkg.jit.unknown_decorated") is None


def test_custom_vjp(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        vjp="""
@jax.custom_vjp
def primal(x):
    return tpu_op(x)

@functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
def primal_nondiff(x, n):
    return tpu_op(x)

vjp_alias = jax.custom_vjp(tpu_op_i, nondiff_argnums=(1,))
jvp_alias = jax.custom_jvp(tpu_op)
vjp_plain = jax.custom_vjp(plain)
""",
    )
    for name in ("primal", "primal_nondiff", "jvp_alias"):
        assert platforms_of(facts.requirement(f"pkg.vjp.{name}")) == {"tpu"}, name
    assert _req(facts, "pkg.vjp.vjp_alias").interpret == ("interpret", 1)
    assert facts.requirement("pkg.vjp.vjp_plain") is None


def test_overloaded_function_uses_its_implementation(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        over="""
from typing import overload

@overload
def op(x: int) -> int: ...
@overload
def op(x: str) -> str: ...
def op(x):
    return tpu_op(x)
""",
    )
    assert platforms_of(facts.requirement("pkg.over.op")) == {"tpu"}


# --------------------------------------------------------------------------- classes


def test_methods_through_self_and_bases(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        meth="""
class Runner:
    def __init__(self, fn):
        self.fn = fn

    def run(self, x):
        return self._kernel(x)

    def _kernel(self, x):
        return tpu_op(x)

    def run_attribute(self, x):
        return self.fn(x)

class Child(Runner):
    def go(self, x):
        return self._kernel(x)

class Base:
    def run(self, x):
        return self._impl(x)

    def _impl(self, x):
        return tpu_op(x)

class GpuBase(Base):
    def _impl(self, x):
        return triton_op(x)
""",
    )
    assert _req(facts, "pkg.meth.Runner.run").chain == (
        "run (pkg/meth.py:13) lowers only for tpu: it calls _kernel at pkg/meth.py:14",
        "_kernel (pkg/meth.py:16) lowers only for tpu: it calls tpu_op at pkg/meth.py:17",
        TPU_OP_NOTE,
    )
    assert platforms_of(facts.requirement("pkg.meth.Child.go")) == {"tpu"}
    assert facts.requirement("pkg.meth.Runner.run_attribute") is None
    # a subclass overrides _impl: Base.run may run either
    assert facts.requirement("pkg.meth.Base.run") is None
    assert platforms_of(facts.requirement("pkg.meth.Base._impl")) == {"tpu"}


def test_instances_and_factories(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        fac="""
class K:
    def __call__(self, x):
        return tpu_op(x)

class Plain:
    def __call__(self, x):
        return plain(x)

def make_k():
    return K()

def make_plain():
    return Plain()

def use_instance(x):
    return K()(x)

def use_variable(x):
    k = K()
    return k(x)

def construct_only(x):
    K()
    return x
""",
    )
    # a factory builds a kernel object: calling it runs nothing; calling what it
    # returns runs K.__call__
    assert facts.requirement("pkg.fac.make_k") is None
    result = facts.result_requirement("pkg.fac.make_k")
    assert result is not None
    assert result.chain == (
        "make_k (pkg/fac.py:17) returns a K at pkg/fac.py:18, which lowers only for tpu",
        "__call__ (pkg/fac.py:10) lowers only for tpu: it calls tpu_op at pkg/fac.py:11",
        TPU_OP_NOTE,
    )
    assert _req(facts, "pkg.fac.use_instance").chain[0] == (
        "use_instance (pkg/fac.py:23) lowers only for tpu: it calls a K at pkg/fac.py:24, "
        "whose __call__ lowers only for tpu"
    )
    assert platforms_of(facts.requirement("pkg.fac.use_variable")) == {"tpu"}
    assert platforms_of(facts.requirement("pkg.fac.K")) == {"tpu"}
    assert facts.requirement("pkg.fac.make_plain") is None
    assert facts.result_requirement("pkg.fac.make_plain") is None
    assert facts.requirement("pkg.fac.Plain") is None
    assert facts.requirement("pkg.fac.construct_only") is None


def test_interpret_through_the_constructor(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        ctor="""
class KI:
    def __init__(self, interpret=False):
        self.interpret = interpret

    def __call__(self, x):
        return tpu_op_i(x, interpret=self.interpret)

def make_ki(interpret=False):
    return KI(interpret=interpret)

def make_ki_on():
    return KI(interpret=True)

def _impl(x, *, interpret):
    return tpu_op_i(x, interpret=interpret)

class KK:
    def __init__(self, info, **kwargs):
        self.info = info
        self.kwargs = kwargs

    def __call__(self, *args, **kwargs):
        return _impl(*args, **kwargs, **self.kwargs)

def make_kk(*, interpret=False):
    return KK(1, interpret=interpret)

def make_kk_without():
    return KK(1)

import dataclasses

@dataclasses.dataclass(frozen=True)
class KD:
    block: int
    interpret: bool = False

    def __call__(self, x):
        return tpu_op_i(x, interpret=self.interpret)

@dataclasses.dataclass(frozen=True)
class KDInitVar:
    block: dataclasses.InitVar[int]
    interpret: bool = False

    def __call__(self, x):
        return tpu_op_i(x, interpret=self.interpret)
""",
    )
    assert _req(facts, "pkg.ctor.KI").interpret == ("interpret", 0)
    # what a factory returns, called with the factory's default (interpret off)
    assert platforms_of(facts.result_requirement("pkg.ctor.make_ki")) == {"tpu"}
    assert platforms_of(facts.result_requirement("pkg.ctor.make_kk")) == {"tpu"}
    assert facts.result_requirement("pkg.ctor.make_ki_on") is None
    # interpret may come at call time through **kwargs: nothing a caller can say
    assert facts.requirement("pkg.ctor.KK") is None
    assert facts.result_requirement("pkg.ctor.make_kk_without") is None
    assert _req(facts, "pkg.ctor.KD").interpret == ("interpret", 1)
    # an ``InitVar`` is a parameter of the generated ``__init__`` in field order, not a
    # field: ``interpret`` is its second parameter, stored as for ``KD``
    initvar = _req(facts, "pkg.ctor.KDInitVar")
    assert initvar.platforms == frozenset({"tpu"})
    assert initvar.interpret == ("interpret", 1)


# --------------------------------------------------------------------------- interpret


def test_interpret_forwarded_through_parameters(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        interp="""
def caller_absent(x):
    return tpu_op_i(x)

def caller_false(x):
    return tpu_op_i(x, interpret=False)

def caller_true(x):
    return tpu_op_i(x, interpret=True)

def caller_forward(x, interpret=False):
    return tpu_op_i(x, interpret=interpret)

def caller_keyword_only(x, *, debug=None, interpret=None):
    return tpu_op_i(x, interpret=interpret)

def caller_positional(x, interpret=False):
    return tpu_op_i(x, interpret)

def caller_default_on(x, interpret=True):
    return tpu_op_i(x, interpret=interpret)

def caller_local(x):
    flag = x is None
    return tpu_op_i(x, interpret=flag)

def caller_rebinds(x, interpret=False):
    interpret = not interpret
    return tpu_op_i(x, interpret=interpret)

def caller_splat(x, **options):
    return tpu_op_i(x, **options)

def caller_mixed(x, interpret=False):
    return tpu_op(tpu_op_i(x, interpret=interpret))

def caller_closure(x, interpret=False):
    def inner(y):
        return tpu_op_i(y, interpret=interpret)
    return inner(x)

def caller_closure_shadowing(x, interpret=False):
    run = functools.partial(tpu_op_i, interpret=interpret)
    def inner(y, interpret=False):
        return run(y)
    return inner(x)

def literal_on(x):
    return pl.pallas_call(
        kernel, out_shape=x, compiler_params=pltpu.CompilerParams(), interpret=True
    )(x)
""",
    )
    assert _req(facts, "pkg.ops.tpu_op_i").interpret == ("interpret", 1)
    assert _req(facts, "pkg.interp.caller_absent").interpret is None
    assert _req(facts, "pkg.interp.caller_false").interpret is None
    assert _req(facts, "pkg.interp.caller_forward").interpret == ("interpret", 1)
    assert _req(facts, "pkg.interp.caller_keyword_only").interpret == ("interpret", -1)
    assert _req(facts, "pkg.interp.caller_positional").interpret == ("interpret", 1)
    # tpu_op runs whatever interpret is: the requirement holds without a parameter
    assert _req(facts, "pkg.interp.caller_mixed").interpret is None
    assert _req(facts, "pkg.interp.caller_closure").interpret == ("interpret", 1)
    # inner's own interpret is not the one the partial took from caller_closure_shadowing
    assert _req(facts, "pkg.interp.caller_closure_shadowing").interpret == ("interpret", 1)
    for name in (
        "caller_true",
        "caller_default_on",
        "caller_local",
        "caller_rebinds",
        "caller_splat",
        "literal_on",
    ):
        assert facts.requirement(f"pkg.interp.{name}") is None, name


# --------------------------------------------------------------------------- silence


def test_platform_reads_give_none(make_lib: MakeLib) -> None:
    """A read of the platform gives none where it decides which kernel runs; where every
    path runs the same kernel whatever it read, that kernel restricts the function."""
    root = make_lib(
        {
            "pkg/ops.py": OPS,
            "pkg/env.py": "import jax\n"
            "def on_tpu():\n"
            "    return jax.default_backend() == 'tpu'\n"
            "def on_gpu():\n"
            "    return not on_tpu()\n"
            "ON_TPU = jax.devices()[0].platform == 'tpu'\n",
            "pkg/plat.py": IMPORTS
            + """
from pkg import env
from pkg.env import ON_TPU

def by_backend(x):
    if jax.default_backend() == "tpu":
        x = x + 1
    return tpu_op(x)

def by_device(x, mesh):
    if mesh.devices.flat[0].platform != "tpu":
        x = x + 1
    return tpu_op(x)

def by_helper(x):
    if env.on_tpu():
        x = x + 1
    return tpu_op(x)

def by_constant(x):
    if ON_TPU:
        x = x + 1
    return tpu_op(x)

def by_helper_of_helper(x):
    if env.on_gpu():
        x = x + 1
    return tpu_op(x)

def by_flag(x, flag):
    if flag:
        x = x + 1
    return tpu_op(x)

def dispatch_by_backend(x):
    if jax.default_backend() == "tpu":
        return tpu_op(x)
    return triton_op(x)

def dispatch_by_device(x, mesh):
    if mesh.devices.flat[0].platform == "tpu":
        return tpu_op(x)
    return triton_op(x)

def dispatch_by_helper(x):
    if env.on_tpu():
        return tpu_op(x)
    return triton_op(x)

def dispatch_by_constant(x):
    if ON_TPU:
        return tpu_op(x)
    return triton_op(x)

def dispatch_by_helper_of_helper(x):
    if env.on_gpu():
        return triton_op(x)
    return tpu_op(x)
""",
        }
    )
    facts = reader_for(root)
    reads = ("by_backend", "by_device", "by_helper", "by_constant", "by_helper_of_helper")
    for name in reads:
        # the read only changes ``x``: both branches go on to ``tpu_op``, so Python runs
        # the TPU kernel on every platform
        assert platforms_of(facts.requirement(f"pkg.plat.{name}")) == {"tpu"}, name
        # the read picks the kernel: tpu runs the TPU one, cuda and rocm the Triton one
        assert facts.requirement(f"pkg.plat.dispatch_{name}") is None, name
    assert platforms_of(facts.requirement("pkg.plat.by_flag")) == {"tpu"}


def test_unknown_callables_restrict_nothing(make_lib: MakeLib) -> None:
    """A call of something unknown may run anything, but the kernels that run around it
    still lower only for their platform: they restrict the function."""
    facts = _library(
        make_lib,
        unk="""
import jax.numpy as jnp
TABLE = {"a": tpu_op}

def calls_parameter(fn, x):
    return fn(tpu_op(x))

def calls_table_entry(x):
    return TABLE["a"](tpu_op(x))

def calls_result_of_parameter(make, x):
    return make()(tpu_op(x))

def calls_library_code(x):
    return jnp.sum(tpu_op(x))

def only_unknown(fn, make, x, key):
    fn(x)
    return make()(TABLE[key](x))

def table_entry_alone(x):
    return TABLE["a"](x)

def unknown_alone(fn, make, x):
    fn(x)
    return make()(x)

def unknown_table(fn, make, x, table, key):
    fn(x)
    return make()(table[key](x))
""",
    )
    for name in ("calls_parameter", "calls_table_entry", "calls_result_of_parameter"):
        assert platforms_of(facts.requirement(f"pkg.unk.{name}")) == {"tpu"}, name
    assert platforms_of(facts.requirement("pkg.unk.calls_library_code")) == {"tpu"}
    # ``TABLE`` is never written: ``TABLE[key]`` is ``tpu_op`` or raises ``KeyError``
    # (a path that raises lowers nothing), so the TPU kernel runs before ``make()(...)``
    assert platforms_of(facts.requirement("pkg.unk.only_unknown")) == {"tpu"}
    # nothing but unknown callables (a table passed in may hold anything)
    assert facts.requirement("pkg.unk.unknown_alone") is None
    assert facts.requirement("pkg.unk.unknown_table") is None
    # a dict only ever read by index holds what it was built with
    assert platforms_of(facts.requirement("pkg.unk.table_entry_alone")) == {"tpu"}


def test_conditional_calls_give_none(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        cond="""
def under_if(x, flag):
    if flag:
        return tpu_op(x)
    return x

def after_early_return(x, flag):
    if not flag:
        return x
    return tpu_op(x)

def in_try(x):
    try:
        return tpu_op(x)
    except ValueError:
        return x

def in_ternary(x, flag):
    return tpu_op(x) if flag else x

def in_loop(x, n):
    for _ in range(n):
        x = tpu_op(x)
    return x

def after_check(x, flag):
    if flag:
        raise ValueError("no")
    return tpu_op(x)
""",
    )
    for name in ("under_if", "after_early_return", "in_try", "in_ternary", "in_loop"):
        assert facts.requirement(f"pkg.cond.{name}") is None, name
    assert platforms_of(facts.requirement("pkg.cond.after_check")) == {"tpu"}


@pytest.mark.parametrize(
    "content",
    [
        b"def broken(:\n",
        b"import jax\x00\n",
        b"x = '\xff\xfe pallas'\n",
    ],
    ids=["syntax-error", "null-byte", "not-utf8"],
)
def test_unparsable_module_gives_none(make_lib: MakeLib, content: bytes) -> None:
    root = make_lib({"pkg/ops.py": OPS, "pkg/bad.py": ""})
    (root / "pkg" / "bad.py").write_bytes(content)
    facts = reader_for(root)
    assert facts.requirement("pkg.bad.broken") is None
    assert platforms_of(facts.requirement("pkg.ops.tpu_op")) == {"tpu"}


def test_jax_framework_is_not_read(make_lib: MakeLib) -> None:
    root = make_lib(
        {
            "jax/_src/fake.py": OPS,
            "jax/experimental/pallas/__init__.py": OPS,
            "jax/experimental/pallas/ops/tpu/fake.py": OPS,
        }
    )
    facts = reader_for(root)
    assert facts.requirement("jax._src.fake.tpu_op") is None
    assert facts.requirement("jax.experimental.pallas.tpu_op") is None
    assert platforms_of(facts.requirement("jax.experimental.pallas.ops.tpu.fake.tpu_op")) == {"tpu"}
    # importing the module runs its packages' ``__init__`` first (Python's import
    # system): those under ``jax.experimental.pallas.ops`` are read, jax's framework
    # packages above them are not
    assert sorted(facts.modules_read()) == [
        "jax.experimental.pallas.ops",
        "jax.experimental.pallas.ops.tpu",
        "jax.experimental.pallas.ops.tpu.fake",
    ]


def test_module_without_pallas_passes_on_what_it_calls(make_lib: MakeLib) -> None:
    """A module that never mentions Pallas (tokamax's ``ops/op.py``) still runs the
    kernels of the functions it calls."""
    root = make_lib(
        {
            "pkg/ops.py": OPS,
            "pkg/util.py": "from pkg.ops import tpu_op, plain\n\n"
            "def helper(x):\n    return tpu_op(x)\n\n"
            "def plain_helper(x):\n    return plain(x)\n",
            "pkg/use.py": IMPORTS + "from pkg.util import helper\n"
            "def op(x):\n"
            "    return helper(x)\n",
        }
    )
    facts = reader_for(root)
    assert platforms_of(facts.requirement("pkg.util.helper")) == {"tpu"}
    assert platforms_of(facts.requirement("pkg.use.op")) == {"tpu"}
    assert facts.requirement("pkg.util.plain_helper") is None
    assert "pkg.util" in facts.modules_read()
    assert platforms_of(facts.requirement("pkg.util.tpu_op")) == {"tpu"}


# ------------------------------------------------------------ the evaluator's summary


def test_the_evaluators_summary_of_a_library_function(make_lib: MakeLib) -> None:
    """``Inference.summary``: what the evaluator says a function lowers for, as a caller
    passing only what it must sees it, with the same words as a finding's notes."""
    facts = _library(
        make_lib,
        wrap="""
def forwards(x, interpret=False):
    return tpu_op_i(x, interpret=interpret)

def both(x):
    return triton_op(tpu_op(x))

def per_backend(x):
    if jax.default_backend() == "tpu":
        return tpu_op(x)
    return triton_op(x)

class K:
    def __call__(self, x):
        return tpu_op(x)

def uses_instance(x):
    return K()(x)
""",
    )
    assert facts.summary("pkg.ops.tpu_op") == Requirement(
        frozenset({"tpu"}), ("params", "tpu", "mosaic_tpu"), (TPU_OP_NOTE,), None
    )
    forwards = facts.summary("pkg.wrap.forwards")
    assert forwards is not None and forwards.platforms == frozenset({"tpu"})
    assert forwards.interpret == ("interpret", 1)
    assert forwards.chain[0].startswith(
        "forwards (pkg/wrap.py:9) lowers only for tpu: it calls tpu_op_i at pkg/wrap.py:10"
    )
    triton = facts.summary("pkg.ops.triton_op")
    assert triton is not None and triton.cause == ("params", "gpu", "triton")
    assert facts.summary("pkg.wrap.both") is None  # lowers nowhere: contradicting kernels
    assert facts.summary("pkg.wrap.per_backend") is None  # each platform its own kernel
    assert facts.summary("pkg.ops.plain") is None
    assert facts.summary("pkg.missing.name") is None
    instance = facts.summary("pkg.wrap.uses_instance")
    assert instance is not None and instance.chain[0] == (
        "uses_instance (pkg/wrap.py:24) lowers only for tpu: it calls a K at pkg/wrap.py:25, "
        "whose __call__ lowers only for tpu"
    )


def test_the_evaluators_summary_of_a_factorys_result(make_lib: MakeLib) -> None:
    """``Inference.summary(result=True)``: ``make(...)(...)`` runs both calls, the
    second on whatever the first returns (a closure, an instance's ``__call__``)."""
    facts = _library(
        make_lib,
        fac="""
class K:
    def __call__(self, x):
        return tpu_op(x)

def make_k():
    return K()

def make_closure(block):
    def run(x):
        return triton_op(x)
    return run

def make_plain():
    return plain
""",
    )
    assert platforms_of(facts.summary("pkg.fac.make_k", result=True)) == {"tpu"}
    assert platforms_of(facts.summary("pkg.fac.make_closure", result=True)) == {"cuda", "rocm"}
    assert facts.summary("pkg.fac.make_plain", result=True) is None
    # the factory's own call runs no kernel
    assert facts.summary("pkg.fac.make_k") is None
    assert facts.summary("pkg.fac.make_closure") is None


@pytest.mark.parametrize(
    ("release", "expected"),
    [((0, 12, 1), {"cuda"}), ((0, 10, 2), {"cuda", "rocm"}), (None, {"cuda", "rocm"})],
    ids=["jax-0.12-refuses-rocm", "jax-0.10-may-lower-on-rocm", "any-release"],
)
def test_the_evaluators_summary_answers_for_the_release_it_is_given(
    make_lib: MakeLib, release: tuple[int, ...] | None, expected: set[str]
) -> None:
    """A Mosaic GPU kernel on rocm: refused in a fresh process before jax 0.12, but
    lowered silently after some other lowering (so nothing is said), refused from 0.12."""
    files = {
        "pkg/ops.py": OPS,
        "pkg/mg.py": IMPORTS
        + """
def mosaic_op(x):
    return plgpu.kernel(kernel, out_shape=x)(x)
""",
    }
    facts = Inference([str(make_lib(files))], None, release=release)
    assert platforms_of(facts.summary("pkg.mg.mosaic_op")) == expected


def test_the_evaluators_summary_notes_what_it_read_and_forgets_it(make_lib: MakeLib) -> None:
    facts = _library(make_lib, use="def op(x):\n    return tpu_op(x)\n")
    assert platforms_of(facts.summary("pkg.use.op")) == {"tpu"}
    assert {"pkg.use", "pkg.ops"} <= facts.modules_of_summary("pkg.use.op")
    assert facts.modules_of_summary("pkg.use.unasked") == frozenset()
    # the files it read are the installed files its answers depend on (cache keys)
    assert any(path.endswith("pkg/ops.py") for path in facts.looked_at_since(0))
    facts.forget(frozenset({"pkg.ops"}))
    assert facts.modules_of_summary("pkg.use.op") == frozenset()  # asked again when needed
    assert platforms_of(facts.summary("pkg.use.op")) == {"tpu"}


def test_calling_a_result_that_runs_nothing_is_not_run_again(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # ``f(x)(y)`` of a function that returns an array runs what ``f(x)`` runs: its
    # summary answers for both; a factory's result is run
    (tmp_path / "ops.py").write_text(
        textwrap.dedent(
            """
            import functools
            from jax.experimental import pallas as pl
            from jax.experimental.pallas import tpu as pltpu

            def _body(x_ref, o_ref):
                o_ref[...] = x_ref[...]

            def tpu_op(x):
                return pl.pallas_call(_body, out_shape=x, compiler_params=pltpu.CompilerParams())(x)

            def make():
                return tpu_op
            """
        )
    )
    from typed_pallas_mypy.inference.evaluator import summaries

    runs: list[tuple[str, bool]] = []
    real = summaries.ModuleRuns.summary

    def counting(
        self: summaries.ModuleRuns, qualname: str, release: object, *, result: bool = False
    ) -> object:
        runs.append((qualname, result))
        return real(self, qualname, release, result=result)  # type: ignore[arg-type]

    monkeypatch.setattr(summaries.ModuleRuns, "summary", counting)
    engine = Inference([str(tmp_path)], None)
    for name in ("ops.tpu_op", "ops.make"):
        assert platforms_of(engine.summary(name, result=True)) == {"tpu"}
    assert platforms_of(engine.summary("ops.tpu_op")) == {"tpu"}
    assert platforms_of(engine.summary("ops.make")) is None
    assert ("tpu_op", False) in runs and ("make", True) in runs
    assert ("tpu_op", True) not in runs  # its array result: the same answer, not run
    assert len(runs) == len(set(runs))  # and nothing asked twice


BATCHED = """
import functools
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton

CALLS = []

def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...]

def tpu_op(x):
    CALLS.append(tpu_op)  # a write to the module's state: undone after each summary
    return pl.pallas_call(_body, out_shape=x, compiler_params=pltpu.CompilerParams())(x)

def triton_op(x):
    return pl.pallas_call(_body, out_shape=x, compiler_params=pltriton.CompilerParams())(x)

def last_called(x):
    return CALLS[-1](x)  # nothing was called before: not known what runs

def make():
    return tpu_op

class Op:
    def __call__(self, x):
        return tpu_op(x)
"""


def test_a_module_asked_together_gives_what_each_question_gives(tmp_path: Path) -> None:
    (tmp_path / "ops.py").write_text(BATCHED)
    names = ["ops.tpu_op", "ops.triton_op", "ops.last_called", "ops.make", "ops.Op", "ops.gone"]
    together = Inference([str(tmp_path)], None)
    together.ask_summaries(names, result=True)
    expected = {
        "ops.tpu_op": ({"tpu"}, {"tpu"}),
        "ops.triton_op": ({"cuda", "rocm"}, {"cuda", "rocm"}),
        "ops.last_called": (None, None),
        "ops.make": (None, {"tpu"}),
        "ops.Op": ({"tpu"}, {"tpu"}),
        "ops.gone": (None, None),
    }
    for name in reversed(names):  # each asked alone, in another order
        alone = Inference([str(tmp_path)], None)
        pair = (platforms_of(alone.summary(name)), platforms_of(alone.summary(name, result=True)))
        assert pair == expected[name], name
    for name in names:
        pair = (
            platforms_of(together.summary(name)),
            platforms_of(together.summary(name, result=True)),
        )
        assert pair == expected[name], name


DEFINED_AT = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton

REGISTRY = {}

def register(name):
    def deco(f):
        REGISTRY[name] = f
        return None
    return deco

def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...]

@register("gpu")
def registered(x):
    return pl.pallas_call(_body, out_shape=x, compiler_params=pltpu.CompilerParams())(x)

class Op:
    def run(self, x):
        return pl.pallas_call(_body, out_shape=x, compiler_params=pltriton.CompilerParams())(x)

def outer(block):
    def inner(x):
        return pl.pallas_call(_body, out_shape=x, compiler_params=pltpu.CompilerParams())(x)
    if block:
        def deeper(y):
            def deepest(z):
                return inner(z)
            return deepest
    return inner
"""


@pytest.mark.parametrize(
    ("line", "expected", "first_note"),
    [
        (17, {"tpu"}, "registered (ops.py:17) lowers only for tpu"),  # its decorator returns None
        (21, {"cuda", "rocm"}, "run (ops.py:21) lowers only for cuda, rocm"),  # a method
        (25, {"tpu"}, "inner (ops.py:25) lowers only for tpu"),  # made by outer's run
        (29, {"tpu"}, "deepest (ops.py:29) lowers only for tpu: it calls inner at ops.py:30"),
        (24, None, None),  # outer returns inner: calling outer runs no kernel
        (28, None, None),
        (7, None, None),
        (12, None, None),  # not a def
    ],
)
def test_the_function_defined_at_a_line(
    tmp_path: Path, line: int, expected: set[str] | None, first_note: str | None
) -> None:
    (tmp_path / "ops.py").write_text(DEFINED_AT)
    found = Inference([str(tmp_path)], None).summary_at("ops", line)
    assert platforms_of(found) == expected
    if first_note is not None:
        assert found is not None and found.chain[0].startswith(first_note)


@pytest.mark.parametrize("setting", [None, "1", " 1 ", ""])
def test_summaries_answer_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, setting: str | None
) -> None:
    (tmp_path / "ops.py").write_text(DEFINED_AT)
    monkeypatch.setenv(SUMMARIES_ENV, "0")
    rules = Inference([str(tmp_path)], None)
    assert rules.summaries_answer is False
    if setting is None:
        monkeypatch.delenv(SUMMARIES_ENV)
    else:
        monkeypatch.setenv(SUMMARIES_ENV, setting)
    engine = Inference([str(tmp_path)], None)
    assert engine.summaries_answer is True
    assert engine.requirement("ops.registered") == engine.summary("ops.registered")
    assert engine.requirement_at("ops", 25) == engine.summary_at("ops", 25)
    assert platforms_of(engine.requirement_at("ops", 25)) == {"tpu"}
    assert engine.result_requirement("ops.outer") == engine.summary("ops.outer", result=True)
    assert platforms_of(engine.result_requirement("ops.outer")) == {"tpu"}
    assert engine.call_requirement("ops", (18, 11, 18, 90)) is None
    assert engine.modules_of("ops.registered") == {"ops"}


def test_a_module_asked_together_is_imported_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ops.py").write_text(BATCHED)
    imports = count_module_imports(monkeypatch)
    names = ["ops.triton_op", "ops.tpu_op", "ops.Op.__call__"]
    together = Inference([str(tmp_path)], None)
    together.ask_summaries(names)
    assert imports == ["ops"]
    alone = Inference([str(tmp_path)], None)
    for name in names:
        assert alone.summary(name) == together.summary(name)
    assert imports == ["ops"] * 4  # asked alone: one question each
