"""Classes as the data model makes them: attributes an instance's ``__init__`` sets
(before its class's), class attributes, ``staticmethod``/``classmethod``/``property``,
``__call__``, the method resolution order and ``super()``, descriptors (``__get__``,
``__set_name__``), ``__init_subclass__``, dataclass and ``NamedTuple`` fields with their
defaults, enum members and ``Kind(value)``.

Each program calls, under a guard for "gpu", the kernel the rule picks: a finding when it
is ``lib.tpu_kernel`` (or ``lib.run`` with ``lib.TPU``), silent for the Triton twin.
"""

from __future__ import annotations

import pytest
from evaluator_programs import PICKS, TPU_FIRES_TRITON_SILENT, fires

#: (the kernel the rule picks, the one it passes over, finding)
#: (the params the rule picks, the ones it passes over, finding)
PARAMS = pytest.mark.parametrize(
    ("picked", "other", "expected"),
    [("TPU", "TRITON", True), ("TRITON", "TPU", False)],
    ids=["tpu-picked-fires", "triton-picked-silent"],
)


def _guarded(classes: str, call: str, setup: str = "") -> str:
    """``classes``, then a ``main`` that runs ``setup`` and calls ``call`` under a guard."""
    return (
        classes
        + f"""
def main(x):
    {setup}
    if jax.default_backend() == "gpu":
        return {call}  # here
    return x
"""
    )


@PICKS
def test_instance_attribute_from_init(picked: str, other: str, expected: bool) -> None:
    classes = """
class Runner:
    def __init__(self, k):
        self.k = k
    def run(self, x):
        return self.k(x)
"""
    assert fires(_guarded(classes, "r.run(x)", f"r = Runner(lib.{picked})")) is expected


@PARAMS
def test_instance_attribute_before_class_attribute(picked: str, other: str, expected: bool) -> None:
    classes = f"""
class Runner:
    params = lib.{other}
    def __init__(self):
        self.params = lib.{picked}
    def run(self, x):
        return lib.run(self.params, x)
"""
    assert fires(_guarded(classes, "r.run(x)", "r = Runner()")) is expected


@TPU_FIRES_TRITON_SILENT
def test_class_attribute_wrapped_by_staticmethod(params: str, expected: bool) -> None:
    classes = """
class Runner:
    kernel = staticmethod(lib.kernel)
"""
    assert fires(_guarded(classes, "Runner.kernel(x)"), params) is expected


@PARAMS
def test_class_attribute_read_through_self(picked: str, other: str, expected: bool) -> None:
    classes = f"""
class Runner:
    params = lib.{picked}
    def run(self, x):
        return lib.run(self.params, x)
"""
    assert fires(_guarded(classes, "r.run(x)", "r = Runner()")) is expected


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize("receiver", ["Ops", "ops"])
def test_staticmethod(receiver: str, params: str, expected: bool) -> None:
    classes = """
class Ops:
    @staticmethod
    def go(x):
        return lib.kernel(x)
"""
    assert fires(_guarded(classes, f"{receiver}.go(x)", "ops = Ops()"), params) is expected


@PARAMS
def test_classmethod_binds_the_class_it_is_called_on(
    picked: str, other: str, expected: bool
) -> None:
    classes = f"""
class Base:
    params = lib.{other}
    @classmethod
    def go(cls, x):
        return lib.run(cls.params, x)

class Child(Base):
    params = lib.{picked}
"""
    assert fires(_guarded(classes, "Child.go(x)")) is expected


@PICKS
def test_property_getter_is_called(picked: str, other: str, expected: bool) -> None:
    classes = f"""
class Ops:
    @property
    def kernel(self):
        return lib.{picked}
"""
    assert fires(_guarded(classes, "ops.kernel(x)", "ops = Ops()")) is expected


@TPU_FIRES_TRITON_SILENT
def test_dunder_call(params: str, expected: bool) -> None:
    classes = """
class Op:
    def __call__(self, x):
        return lib.kernel(x)
"""
    assert fires(_guarded(classes, "op(x)", "op = Op()"), params) is expected


@PICKS
def test_override_in_subclass(picked: str, other: str, expected: bool) -> None:
    classes = f"""
class Base:
    def run(self, x):
        return lib.{other}(x)

class Child(Base):
    def run(self, x):
        return lib.{picked}(x)
"""
    assert fires(_guarded(classes, "op.run(x)", "op = Child()")) is expected


@pytest.mark.parametrize(
    ("body", "expected"),
    [("super().run(x)", True), ("lib.triton_kernel(x)", False)],
    ids=["super-fires", "override-silent"],
)
def test_super_calls_the_base_method(body: str, expected: bool) -> None:
    classes = f"""
class Base:
    def run(self, x):
        return lib.tpu_kernel(x)

class Child(Base):
    def run(self, x):
        return {body}
"""
    assert fires(_guarded(classes, "op.run(x)", "op = Child()")) is expected


@PARAMS
def test_method_resolution_order_of_a_diamond(picked: str, other: str, expected: bool) -> None:
    # Both's MRO: Both, Left, Right, Base: Right's attribute before Base's
    classes = f"""
class Base:
    params = lib.{other}

class Left(Base):
    pass

class Right(Base):
    params = lib.{picked}

class Both(Left, Right):
    pass
"""
    assert fires(_guarded(classes, "lib.run(Both.params, x)")) is expected


@PICKS
def test_descriptor_get(picked: str, other: str, expected: bool) -> None:
    classes = f"""
class KernelField:
    def __init__(self, k):
        self.k = k
    def __get__(self, obj, owner=None):
        return self.k

class Ops:
    fast = KernelField(lib.{picked})
    safe = KernelField(lib.{other})
"""
    assert fires(_guarded(classes, "ops.fast(x)", "ops = Ops()")) is expected


@pytest.mark.parametrize(
    ("attribute", "expected"),
    [("tpu_kernel", True), ("triton_kernel", False)],
    ids=["tpu-name-fires", "triton-name-silent"],
)
def test_set_name_gives_the_attribute_name(attribute: str, expected: bool) -> None:
    classes = """
class FromLib:
    def __set_name__(self, owner, name):
        self.name = name
    def __get__(self, obj, owner=None):
        return getattr(lib, self.name)

class Ops:
    tpu_kernel = FromLib()
    triton_kernel = FromLib()
"""
    assert fires(_guarded(classes, f"ops.{attribute}(x)", "ops = Ops()")) is expected


INIT_SUBCLASS_BY_KEYWORD = """
REGISTRY = {}

class Op:
    def __init_subclass__(cls, key, **kwargs):
        super().__init_subclass__(**kwargs)
        REGISTRY[key] = cls

class Fast(Op, key="fast"):
    def __call__(self, x):
        return lib.tpu_kernel(x)

class Safe(Op, key="safe"):
    def __call__(self, x):
        return lib.triton_kernel(x)
"""
INIT_SUBCLASS_BY_ATTRIBUTE = """
REGISTRY = {}

class Op:
    def __init_subclass__(cls, **kwargs):
        super().__init_subclass__(**kwargs)
        REGISTRY[cls.key] = cls

class Fast(Op):
    key = "fast"
    def __call__(self, x):
        return lib.tpu_kernel(x)

class Safe(Op):
    key = "safe"
    def __call__(self, x):
        return lib.triton_kernel(x)
"""


@pytest.mark.parametrize(
    ("key", "expected"), [("fast", True), ("safe", False)], ids=["fast-fires", "safe-silent"]
)
@pytest.mark.parametrize(
    "classes",
    [INIT_SUBCLASS_BY_KEYWORD, INIT_SUBCLASS_BY_ATTRIBUTE],
    ids=["class-keyword", "class-attribute"],
)
def test_init_subclass_registers_subclasses(classes: str, key: str, expected: bool) -> None:
    assert fires(_guarded(classes, "op(x)", f'op = REGISTRY["{key}"]()')) is expected


DATACLASS = """
import dataclasses

@dataclasses.dataclass
class Config:
    scale: int
    params: object = lib.TRITON
    other: object = dataclasses.field(default=lib.TPU)
"""


@pytest.mark.parametrize(
    ("config", "field", "expected"),
    [
        ("Config(1, lib.TPU)", "params", True),
        ("Config(1, params=lib.TPU)", "params", True),
        ("Config(1)", "other", True),
        ("Config(1)", "params", False),
        ("Config(1, lib.TRITON, lib.TRITON)", "other", False),
    ],
    ids=[
        "positional-fires",
        "keyword-fires",
        "field-default-fires",
        "default-silent",
        "given-silent",
    ],
)
def test_dataclass_fields(config: str, field: str, expected: bool) -> None:
    call = f"lib.run(cfg.{field}, x)"
    assert fires(_guarded(DATACLASS, call, f"cfg = {config}")) is expected


NAMED_TUPLE = """
from typing import NamedTuple

class Config(NamedTuple):
    scale: int
    params: object = lib.TRITON
"""


@pytest.mark.parametrize(
    ("config", "read", "expected"),
    [
        ("Config(1, lib.TPU)", "cfg.params", True),
        ("Config(1, params=lib.TPU)", "cfg[1]", True),
        ("Config(1)", "cfg.params", False),
        ("Config(1, lib.TPU)", "lib.TRITON", False),
    ],
    ids=["field-fires", "index-fires", "default-silent", "unused-silent"],
)
def test_named_tuple_fields(config: str, read: str, expected: bool) -> None:
    call = f"lib.run({read}, x)"
    assert fires(_guarded(NAMED_TUPLE, call, f"cfg = {config}")) is expected


ENUM = """
import enum

class Kind(enum.Enum):
    FAST = "fast"
    SAFE = "safe"

KERNELS = {Kind.FAST: lib.tpu_kernel, Kind.SAFE: lib.triton_kernel}
"""


@pytest.mark.parametrize(
    ("member", "expected"),
    [
        ("Kind.FAST", True),
        ('Kind("fast")', True),
        ('Kind["FAST"]', True),
        ("Kind.SAFE", False),
        ('Kind("safe")', False),
    ],
)
def test_enum_members(member: str, expected: bool) -> None:
    assert fires(_guarded(ENUM, "KERNELS[kind](x)", f"kind = {member}")) is expected


@pytest.mark.parametrize(
    ("value", "expected"), [('"fast"', True), ('"safe"', False)], ids=["fast-fires", "safe-silent"]
)
def test_enum_member_value(value: str, expected: bool) -> None:
    program = ENUM + 'BY_VALUE = {"fast": lib.tpu_kernel, "safe": lib.triton_kernel}\n'
    call = "BY_VALUE[kind.value](x)"
    assert fires(_guarded(program, call, f"kind = Kind({value})")) is expected


# -- attrs classes: fields as constructor parameters, as dataclasses -------------------------


@PICKS
@pytest.mark.parametrize(
    ("classes", "make"),
    [
        ("import attrs\n@attrs.define\nclass Cfg:\n    fn: object = lib.$P", "Cfg()"),
        ("import attrs\n@attrs.frozen\nclass Cfg:\n    fn: object", "Cfg(lib.$P)"),
        (
            "import attrs\n@attrs.define\nclass Cfg:\n    fn: object = attrs.field(default=lib.$P)",
            "Cfg()",
        ),
        ("import attr\n@attr.s\nclass Cfg:\n    fn = attr.ib(default=lib.$P)", "Cfg()"),
        (
            "import attr\n@attr.s\nclass Cfg:\n    other = attr.ib()\n    fn = attr.ib()",
            "Cfg(lib.$O, lib.$P)",
        ),
        (
            "import attr\n@attr.s(auto_attribs=True, frozen=True)\nclass Cfg:\n    fn: object = lib.$P",
            "Cfg()",
        ),
        (
            "import attrs\n@attrs.define\nclass Cfg:\n    fns: list = attrs.field(factory=lambda: [lib.$P])\n    @property\n    def fn(self):\n        return self.fns[0]",
            "Cfg()",
        ),
        (
            "import dataclasses\n@dataclasses.dataclass\nclass Cfg:\n    fns: list = dataclasses.field(default_factory=lambda: [lib.$P])\n    @property\n    def fn(self):\n        return self.fns[0]",
            "Cfg()",
        ),
        (
            "import attrs\n@attrs.frozen\nclass Cfg:\n    fn: object = lib.$O",
            "attrs.evolve(Cfg(), fn=lib.$P)",
        ),
        (
            "import dataclasses\n@dataclasses.dataclass\nclass Cfg:\n    fn: object = lib.$O",
            "dataclasses.replace(Cfg(), fn=lib.$P)",
        ),
        (
            "import attrs\n@attrs.define\nclass Cfg:\n    fn: object = None\n    def __attrs_post_init__(self):\n        self.fn = lib.$P",
            "Cfg()",
        ),
        (
            "import dataclasses\n@dataclasses.dataclass\nclass Cfg:\n    fn: object = None\n    def __post_init__(self):\n        self.fn = lib.$P",
            "Cfg()",
        ),
    ],
    ids=[
        "define-default",
        "frozen-positional",
        "field-default",
        "attr-ib-default",
        "attr-ib-positional-order",
        "attr-s-configured",
        "field-factory",
        "dataclass-default-factory",
        "evolve",
        "dataclasses-replace",
        "attrs-post-init",
        "dataclass-post-init",
    ],
)
def test_attrs_and_dataclass_fields(
    classes: str, make: str, picked: str, other: str, expected: bool
) -> None:
    made = classes.replace("$P", picked).replace("$O", other) + "\n"
    program = _guarded(
        made, "cfg.fn(x)", f"cfg = {make.replace('$P', picked).replace('$O', other)}"
    )
    assert fires(program) is expected


#: an installed attrs whose source the evaluator could read: what it does is the table's
_ATTRS_SOURCE = {
    "attrs/__init__.py": "def define(cls=None, **kw):\n    raise RuntimeError('not run')\n"
    "def field(**kw):\n    raise RuntimeError('not run')\n",
}


@PICKS
def test_attrs_is_read_as_a_table_even_where_its_source_is_found(
    picked: str, other: str, expected: bool
) -> None:
    classes = f"import attrs\n@attrs.define\nclass Cfg:\n    fn: object = attrs.field(default=lib.{picked})\n"
    program = _guarded(classes, "Cfg().fn(x)")
    assert fires(program, files=_ATTRS_SOURCE) is expected
