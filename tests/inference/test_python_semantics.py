"""Python's semantics as the engine evaluates them: classes and their method resolution
order, instances and the values they keep, containers indexed by literals.

Each case is a Python rule, not a library's shape: a method found through the class of
the instance that runs it (a subclass's override wins, ``super()`` skips the class it
is written in), a method called on an instance held in a variable (module-level or
local) or built inline, an attribute ``__init__`` (or the class body) sets once to a
callable, and an element of a literal tuple, list or dict under a literal index. Each
has a firing case (the platforms the function lowers for) and a silent twin (no
requirement): the other backend, a value the engine cannot know (a container mutated
after it is built, an attribute set twice, a receiver whose class is not known), or
code that builds but never runs. ``pkg/ops.py`` is ``library_fakes.OPS``.
"""

from __future__ import annotations

from library_fakes import HEADER, OPS, MakeLib, platforms_of, reader_for

from typed_pallas_mypy.inference import Inference

IMPORTS = HEADER + "from pkg.ops import kernel, plain, tpu_op, tpu_op_i, triton_op\n"

TPU = {"tpu"}
GPU = {"cuda", "rocm"}


def _library(make_lib: MakeLib, source: str) -> Inference:
    return reader_for(make_lib({"pkg/ops.py": OPS, "pkg/forms.py": IMPORTS + source}))


def _platforms(facts: Inference, name: str) -> set[str] | None:
    return platforms_of(facts.requirement(f"pkg.forms.{name}"))


HIERARCHY = """
class Op:
    def __call__(self, x):
        return self.forward(x)

    def forward(self, x):
        return plain(x)

    def run(self, x):
        return self.forward(x)

class TpuOp(Op):
    def forward(self, x):
        return tpu_op(x)

class TritonOp(Op):
    def forward(self, x):
        return triton_op(x)

class TunedTpuOp(TpuOp):
    def forward(self, x):
        return super().forward(x) + 1

class PlainChild(TpuOp):
    def forward(self, x):
        return plain(x)
"""


def test_a_method_is_found_through_the_class_of_the_instance(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        HIERARCHY
        + """
def tpu_called(x):
    return TpuOp()(x)

def triton_called(x):
    return TritonOp()(x)

def base_called(x):
    return Op()(x)

def tpu_run_inline(x):
    return TpuOp().run(x)

def tpu_run_local(x):
    op = TpuOp()
    return op.run(x)

def triton_run_local(x):
    op = TritonOp()
    return op.run(x)

def tuned(x):
    return TunedTpuOp()(x)

def plain_child(x):
    return PlainChild()(x)

def built_only(x):
    op = TpuOp()
    return x
""",
    )
    assert _platforms(facts, "tpu_called") == TPU
    assert _platforms(facts, "triton_called") == GPU
    assert _platforms(facts, "base_called") is None
    assert _platforms(facts, "tpu_run_inline") == TPU
    assert _platforms(facts, "tpu_run_local") == TPU
    assert _platforms(facts, "triton_run_local") == GPU
    # super() skips the class it is written in: TunedTpuOp.forward runs TpuOp.forward
    assert _platforms(facts, "tuned") == TPU
    # the override wins over the base's method
    assert _platforms(facts, "plain_child") is None
    assert _platforms(facts, "built_only") is None


def test_a_method_of_a_module_level_instance(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        HIERARCHY
        + """
TPU_OP = TpuOp()
TRITON_OP = TritonOp()

def tpu_module_op(x):
    return TPU_OP.run(x)

def triton_module_op(x):
    return TRITON_OP.forward(x)

def unknown_op(x, op):
    return op.run(x)
""",
    )
    assert _platforms(facts, "tpu_module_op") == TPU
    assert _platforms(facts, "triton_module_op") == GPU
    assert _platforms(facts, "unknown_op") is None


def test_a_method_of_an_instance_of_another_module(make_lib: MakeLib) -> None:
    root = make_lib(
        {
            "pkg/ops.py": OPS,
            "pkg/classes.py": IMPORTS + HIERARCHY,
            "pkg/forms.py": HEADER
            + """
from pkg.classes import TpuOp, TritonOp, Op

def tpu_run(x):
    return TpuOp().run(x)

def triton_called(x):
    op = TritonOp()
    return op(x)

def base_run(x):
    return Op().run(x)
""",
        }
    )
    facts = reader_for(root)
    assert _platforms(facts, "tpu_run") == TPU
    assert _platforms(facts, "triton_called") == GPU
    assert _platforms(facts, "base_run") is None


def test_a_callable_an_instance_keeps(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        HIERARCHY
        + """
class Keeps:
    def __init__(self, block=128):
        self.block = block
        self.fn = tpu_op
        self.jitted = jax.jit(triton_op)
        self.partial = functools.partial(tpu_op_i, interpret=False)
        self.op = TpuOp()

    def run_fn(self, x):
        return self.fn(x)

    def run_jitted(self, x):
        return self.jitted(x)

    def run_partial(self, x):
        return self.partial(x)

    def run_op(self, x):
        return self.op.run(x)

class SetTwice:
    def __init__(self, c):
        self.fn = tpu_op
        if c:
            self.fn = plain

    def run(self, x):
        return self.fn(x)

class FromCaller:
    def __init__(self, fn):
        self.fn = fn

    def run(self, x):
        return self.fn(x)

class ClassLevel:
    kernel_fn = staticmethod(tpu_op)

    def run(self, x):
        return self.kernel_fn(x)

class ClassLevelReplaced:
    kernel_fn = staticmethod(tpu_op)

    def configure(this):
        this.kernel_fn = plain

    def run(self, x):
        return self.kernel_fn(x)

def keeps_fn(x):
    return Keeps().run_fn(x)

def keeps_jitted(x):
    return Keeps().run_jitted(x)

def keeps_partial(x):
    return Keeps().run_partial(x)

def keeps_op(x):
    return Keeps().run_op(x)

def set_twice(x):
    return SetTwice(True).run(x)

def from_caller(x):
    return FromCaller(plain).run(x)

def class_level(x):
    return ClassLevel().run(x)

def class_level_replaced(x):
    return ClassLevelReplaced().run(x)
""",
    )
    assert _platforms(facts, "keeps_fn") == TPU
    assert _platforms(facts, "keeps_jitted") == GPU
    assert _platforms(facts, "keeps_partial") == TPU
    assert _platforms(facts, "keeps_op") == TPU
    assert _platforms(facts, "set_twice") is None
    assert _platforms(facts, "from_caller") is None
    assert _platforms(facts, "class_level") == TPU
    # ``configure`` sets the attribute on an instance it is given; the instance made
    # here is not configured: its class's kernel runs
    assert _platforms(facts, "class_level_replaced") == TPU


def test_an_element_of_a_literal_container(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
KERNELS = (tpu_op, triton_op)
BY_NAME = {"fast": tpu_op, "portable": triton_op, 3: plain}
MUTATED = [tpu_op, triton_op]
MUTATED[0] = plain

def first(x):
    return KERNELS[0](x)

def second(x):
    return KERNELS[1](x)

def by_name(x):
    return BY_NAME["fast"](x)

def by_int_key(x):
    return BY_NAME[3](x)

def by_unknown_key(x, key):
    return BY_NAME[key](x)

def mutated(x):
    return MUTATED[0](x)

def local_tuple(x):
    fns = (plain, tpu_op)
    return fns[1](x)

def local_tuple_plain(x):
    fns = (plain, tpu_op)
    return fns[0](x)

def negative_index(x):
    return KERNELS[-1](x)

def by_get(x):
    return BY_NAME.get("fast")(x)

def by_get_with_default(x):
    return BY_NAME.get("fast", plain)(x)
""",
    )
    assert _platforms(facts, "first") == TPU
    assert _platforms(facts, "second") == GPU
    assert _platforms(facts, "by_name") == TPU
    assert _platforms(facts, "by_int_key") is None
    assert _platforms(facts, "by_unknown_key") is None
    assert _platforms(facts, "mutated") is None
    assert _platforms(facts, "local_tuple") == TPU
    assert _platforms(facts, "local_tuple_plain") is None
    assert _platforms(facts, "negative_index") == GPU
    assert _platforms(facts, "by_get") == TPU
    # the key is there: the default is not what ``get`` gives
    assert _platforms(facts, "by_get_with_default") == TPU


def test_a_callee_evaluated_from_a_variable_a_container_or_getattr(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        HIERARCHY
        + """
IMPLEMENTATIONS = {"mosaic": TpuOp, "triton": TritonOp}

def registry_instance(x):
    return IMPLEMENTATIONS["mosaic"]()(x)

def registry_instance_triton(x):
    return IMPLEMENTATIONS["triton"]()(x)

def registry_chain(x):
    cls = IMPLEMENTATIONS["mosaic"]
    op = cls()
    return op.run(x)

def registry_unknown(x, name):
    cls = IMPLEMENTATIONS[name]
    return cls()(x)

def by_getattr(x):
    return getattr(TpuOp(), "run")(x)

def by_getattr_unknown(x, name):
    return getattr(TpuOp(), name)(x)

def unpacked(x):
    fwd, bwd = tpu_op, triton_op
    return fwd(x)

def unpacked_second(x):
    fwd, bwd = tpu_op, plain
    return bwd(x)

def unpacked_swapped(x):
    a, b = tpu_op, plain
    a, b = b, a
    return a(x)
""",
    )
    assert _platforms(facts, "registry_instance") == TPU
    assert _platforms(facts, "registry_instance_triton") == GPU
    assert _platforms(facts, "registry_chain") == TPU
    assert _platforms(facts, "registry_unknown") is None
    assert _platforms(facts, "by_getattr") == TPU
    assert _platforms(facts, "by_getattr_unknown") is None
    assert _platforms(facts, "unpacked") == TPU
    assert _platforms(facts, "unpacked_second") is None
    assert _platforms(facts, "unpacked_swapped") is None


def test_params_an_instance_keeps(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
class Kernel:
    def __init__(self, block=128):
        self.block = block
        self.params = pltpu.CompilerParams()

    def __call__(self, x):
        return pl.pallas_call(kernel, out_shape=x, compiler_params=self.params)(x)

class ClassLevelParams:
    params = pltriton.CompilerParams()

    def __call__(self, x):
        return pl.pallas_call(kernel, out_shape=x, compiler_params=self.params)(x)

class Configurable:
    def __init__(self, params):
        self.params = params

    def __call__(self, x):
        return pl.pallas_call(kernel, out_shape=x, compiler_params=self.params)(x)

class Base:
    def __init__(self):
        self.params = pltpu.CompilerParams()

    def __call__(self, x):
        return pl.pallas_call(kernel, out_shape=x, compiler_params=self.params)(x)

class Child(Base):
    def __init__(self):
        super().__init__()
        self.params = pltriton.CompilerParams()

def kept(x):
    return Kernel()(x)

def class_level(x):
    return ClassLevelParams()(x)

def from_caller(x):
    return Configurable(pltpu.CompilerParams())(x)

def base_replaced_below(x):
    return Base()(x)

def child(x):
    return Child()(x)
""",
    )
    assert _platforms(facts, "kept") == TPU
    assert _platforms(facts, "class_level") == GPU
    # the caller passes TPU params: what the instance keeps
    assert _platforms(facts, "from_caller") == TPU
    # a subclass replaces the params of its own instances, not of the base's
    assert _platforms(facts, "base_replaced_below") == TPU
    assert _platforms(facts, "child") == GPU


def test_class_methods_and_properties(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
class TpuBuilder:
    @staticmethod
    def build(x):
        return pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())

    @classmethod
    def run(cls, x):
        return cls.build(x)(x)

class TritonBuilder(TpuBuilder):
    @staticmethod
    def build(x):
        return pl.pallas_call(kernel, out_shape=x, compiler_params=pltriton.CompilerParams())

class Holder:
    @property
    def kernel(self):
        return tpu_op

    @property
    def portable(self):
        return triton_op

    def run(self, x):
        return self.kernel(x)

def class_method(x):
    return TpuBuilder.run(x)

def class_method_of_subclass(x):
    return TritonBuilder.run(x)

def property_called(x):
    return Holder().kernel(x)

def property_from_a_method(x):
    return Holder().run(x)

def property_read_only(x):
    kernel = Holder().kernel
    return x

def property_portable(x):
    return Holder().portable(x)
""",
    )
    assert _platforms(facts, "class_method") == TPU
    assert _platforms(facts, "class_method_of_subclass") == GPU
    assert _platforms(facts, "property_called") == TPU
    assert _platforms(facts, "property_from_a_method") == TPU
    assert _platforms(facts, "property_read_only") is None
    assert _platforms(facts, "property_portable") == GPU


def test_a_dataclass_field_default(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
import dataclasses

@dataclasses.dataclass(frozen=True)
class KernelChoice:
    block: int = 128
    kernel: object = tpu_op

    def __call__(self, x):
        return self.kernel(x)

def default_kernel(x):
    return KernelChoice().kernel(x)

def replaced_by_keyword(x):
    return KernelChoice(kernel=triton_op).kernel(x)

def replaced_by_position(x):
    return KernelChoice(64, plain).kernel(x)

def block_only(x):
    return KernelChoice(64).kernel(x)

def through_a_method(x):
    return KernelChoice(kernel=plain)(x)
""",
    )
    assert _platforms(facts, "default_kernel") == TPU
    assert _platforms(facts, "replaced_by_keyword") == GPU
    assert _platforms(facts, "replaced_by_position") is None
    assert _platforms(facts, "block_only") == TPU
    assert _platforms(facts, "through_a_method") is None


def test_an_item_of_a_returned_tuple_and_finally_blocks(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
def make_pair():
    return tpu_op, triton_op

def make_either(c):
    if c:
        return tpu_op, plain
    return plain

def first_of_pair(x):
    fwd, bwd = make_pair()
    return fwd(x)

def second_of_pair(x):
    fwd, bwd = make_pair()
    return bwd(x)

def subscripted(x):
    return make_pair()[0](x)

def not_always_a_tuple(x, c):
    fwd, bwd = make_either(c)
    return fwd(x)

def finally_after_return(x):
    try:
        if x.ndim > 5:
            return x
    finally:
        x = tpu_op(x)
    return x

def finally_portable(x):
    try:
        if x.ndim > 5:
            return x
    finally:
        x = triton_op(x)
    return x
""",
    )
    assert _platforms(facts, "first_of_pair") == TPU
    assert _platforms(facts, "second_of_pair") == GPU
    assert _platforms(facts, "subscripted") == TPU
    assert _platforms(facts, "not_always_a_tuple") is None
    # the finally runs on the early return's path too
    assert _platforms(facts, "finally_after_return") == TPU
    assert _platforms(facts, "finally_portable") == GPU


def test_attributes_replaced_from_outside_the_class(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
class Holder:
    def __init__(self):
        self.kernel_fn = tpu_op
        self.params = pltpu.CompilerParams()

    def __call__(self, x):
        return self.kernel_fn(x)

    def direct(self, x):
        return pl.pallas_call(kernel, out_shape=x, compiler_params=self.params)(x)

class Patched:
    def __init__(self):
        self.kernel = tpu_op

    def __call__(self, x):
        return self.kernel(x)

PATCHED = Patched()
PATCHED.kernel = triton_op

def kept(x):
    return Holder()(x)

def kept_params(x):
    return Holder().direct(x)

def patched(x):
    return Patched()(x)

def patched_instance(x):
    return PATCHED(x)

def patched_then_run(x):
    holder = Holder()
    patch_params(holder)
    return holder.direct(x)

def given_holder(x, holder):
    return holder.direct(x)

def patch_params(holder):
    setattr(holder, "params", pltriton.CompilerParams())
""",
    )
    # an attribute name the module sets from outside a class's methods (on any object:
    # which one is not known) is not trusted in any class of the module
    assert _platforms(facts, "kept") == TPU
    # setattr(holder, "params", ...) replaces the params of a holder it is given; the
    # one made here is given to nobody
    assert _platforms(facts, "kept_params") == TPU
    # PATCHED.kernel = ... replaces what the module's instance holds; a new one's
    # ``__init__`` sets its own
    assert _platforms(facts, "patched") == TPU
    assert _platforms(facts, "patched_instance") == GPU
    assert _platforms(facts, "patched_then_run") == GPU
    assert _platforms(facts, "given_holder") is None  # any object


def test_a_base_the_engine_does_not_read_may_define_the_method(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
import threading

class Known:
    def run(self, x):
        return tpu_op(x)

class Mixed(threading.Thread, Known):
    pass

class Single(Known, threading.Thread):
    pass

def mixed(x):
    # Thread (a class of the standard library the engine does not read) comes first in
    # the order and may define run (it does)
    return Mixed().run(x)

def single(x):
    return Single().run(x)
""",
    )
    assert _platforms(facts, "mixed") is None
    assert _platforms(facts, "single") == TPU


def test_a_loop_variable_over_a_literal_sequence(make_lib: MakeLib) -> None:
    facts = _library(
        make_lib,
        """
def each_tpu(x):
    for fn in (tpu_op, tpu_op):
        x = fn(x)
    return x

def mixed(x):
    for fn in [tpu_op, triton_op]:
        x = fn(x)
    return x

def rebound(x, other):
    for fn in (tpu_op,):
        x = fn(x)
    with other as fn:
        return fn(x)

def over_unknown(x, fns):
    for fn in fns:
        x = fn(x)
    return x
""",
    )
    assert _platforms(facts, "each_tpu") == TPU
    # each iteration runs one of them: the call restricts only to what both allow
    assert _platforms(facts, "mixed") is None
    # the loop ran tpu_op before ``fn`` is bound again
    assert _platforms(facts, "rebound") == TPU
    assert _platforms(facts, "over_unknown") is None
