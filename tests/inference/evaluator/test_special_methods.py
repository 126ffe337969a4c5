"""The data model's special methods, called by syntax (the language reference, 3.3):
``obj.name`` falls back to ``__getattr__`` only when the normal lookup fails (3.3.2),
``obj[key]`` calls ``__getitem__`` and ``for x in obj`` iterates what ``__iter__``
returns (3.3.7), ``a + b`` calls ``a.__add__`` or else ``b.__radd__``, and ``a += b``
the same (3.3.8).

Each program calls, under a guard for "gpu", what the special method gives: a finding
when it is ``lib.tpu_kernel``, silent for the Triton twin.
"""

from __future__ import annotations

import pytest
from evaluator_programs import PICKS, fires


def _guarded(classes: str, call: str) -> str:
    return (
        classes
        + f"""
def main(x):
    if jax.default_backend() == "gpu":
        return {call}  # here
    return x
"""
    )


@PICKS
def test_getattr_is_called_when_the_lookup_fails(picked: str, other: str, expected: bool) -> None:
    classes = f"""
class Lazy:
    def __getattr__(self, name):
        return lib.{picked}
"""
    assert fires(_guarded(classes, "Lazy().anything(x)")) is expected


@PICKS
def test_getattr_is_not_called_when_the_class_has_the_name(
    picked: str, other: str, expected: bool
) -> None:
    classes = f"""
class Lazy:
    fn = staticmethod(lib.{picked})
    def __getattr__(self, name):
        return lib.{other}
"""
    assert fires(_guarded(classes, "Lazy().fn(x)")) is expected


@PICKS
def test_getattr_is_not_called_for_an_attribute_init_set(
    picked: str, other: str, expected: bool
) -> None:
    classes = f"""
class Lazy:
    def __init__(self):
        self.fn = lib.{picked}
    def __getattr__(self, name):
        return lib.{other}
"""
    assert fires(_guarded(classes, "Lazy().fn(x)")) is expected


@PICKS
def test_getitem(picked: str, other: str, expected: bool) -> None:
    classes = f"""
class Table:
    def __getitem__(self, key):
        return lib.{picked} if key == "k" else lib.{other}
"""
    assert fires(_guarded(classes, "Table()['k'](x)")) is expected


@PICKS
def test_iter_returning_an_iterable(picked: str, other: str, expected: bool) -> None:
    classes = f"""
class Ops:
    def __iter__(self):
        return iter([lib.{picked}])

def first(x):
    for fn in Ops():
        return fn(x)
    return x
"""
    assert fires(_guarded(classes, "first(x)")) is expected


@PICKS
def test_iter_as_a_generator(picked: str, other: str, expected: bool) -> None:
    classes = f"""
class Ops:
    def __iter__(self):
        yield lib.{picked}

def first(x):
    for fn in Ops():
        x = fn(x)
    return x
"""
    assert fires(_guarded(classes, "first(x)")) is expected


def test_an_iterator_of_its_own_is_not_followed() -> None:
    """``__iter__`` returning ``self`` hands iteration to ``__next__``, whose stop is not
    known: what the loop runs is not known, so nothing is said."""
    classes = """
class Once:
    def __iter__(self):
        return self
    def __next__(self):
        return lib.tpu_kernel

def first(x):
    for fn in Once():
        return fn(x)
    return x
"""
    assert fires(_guarded(classes, "first(x)")) is False


@PICKS
def test_binary_operator_calls_the_left_operands_method(
    picked: str, other: str, expected: bool
) -> None:
    classes = f"""
class Op:
    def __add__(self, other):
        return lib.{picked}(other)
    def __radd__(self, other):
        return lib.{other}(other)

def add(x):
    return Op() + x
"""
    assert fires(_guarded(classes, "add(x)")) is expected


@PICKS
def test_reflected_operator_when_the_left_operand_has_none(
    picked: str, other: str, expected: bool
) -> None:
    classes = f"""
class Op:
    def __mul__(self, other):
        return lib.{other}(other)
    def __rmul__(self, other):
        return lib.{picked}(other)

def double():
    return 2 * Op()
"""
    assert fires(_guarded(classes, "double()")) is expected


@PICKS
def test_augmented_assignment_calls_the_operator(picked: str, other: str, expected: bool) -> None:
    classes = f"""
class Acc:
    def __add__(self, other):
        return lib.{picked}(other)

def add(x):
    acc = Acc()
    acc += x
    return acc
"""
    assert fires(_guarded(classes, "add(x)")) is expected


# -- class creation: metaclasses, __new__, __class_getitem__ (the data model, 3.3.3) ---------


@PICKS
def test_metaclass_call_decides_what_calling_the_class_does(
    picked: str, other: str, expected: bool
) -> None:
    classes = f"""
class Meta(type):
    def __call__(cls, x):
        return lib.{picked}(x)

class Op(metaclass=Meta):
    def __init__(self, x):
        self.x = lib.{other}(x)

class Sub(Op):
    pass
"""
    assert fires(_guarded(classes, "Op(x)")) is expected
    assert fires(_guarded(classes, "Sub(x)")) is expected  # a base's metaclass


@PICKS
def test_new_returning_another_object_skips_init(picked: str, other: str, expected: bool) -> None:
    classes = f"""
class Op:
    def __new__(cls, x):
        return lib.{picked}(x)
    def __init__(self, x):
        lib.{other}(x)
"""
    assert fires(_guarded(classes, "Op(x)")) is expected


@PICKS
def test_new_returning_an_instance_runs_init(picked: str, other: str, expected: bool) -> None:
    classes = f"""
class Op:
    def __new__(cls, x):
        return super().__new__(cls)
    def __init__(self, x):
        self.fn = lib.{picked}

def run(x):
    return Op(x).fn(x)
"""
    assert fires(_guarded(classes, "run(x)")) is expected
    with_object = classes.replace("super().__new__(cls)", "object.__new__(cls)")
    assert fires(_guarded(with_object, "run(x)")) is expected


@PICKS
def test_class_getitem(picked: str, other: str, expected: bool) -> None:
    classes = f"""
class Ops:
    def __class_getitem__(cls, key):
        return lib.{picked} if key == "k" else lib.{other}
"""
    assert fires(_guarded(classes, "Ops['k'](x)")) is expected


@pytest.mark.parametrize(
    ("call", "expected"),
    [
        ("max(Op(1, lib.triton_kernel), Op(2, lib.tpu_kernel)).fn(x)", True),
        ("max(Op(2, lib.tpu_kernel), Op(1, lib.triton_kernel)).fn(x)", True),
        ("min(Op(1, lib.tpu_kernel), Op(2, lib.triton_kernel)).fn(x)", True),
        ("max(Op(1, lib.tpu_kernel), Op(2, lib.triton_kernel)).fn(x)", False),
        ("(lib.tpu_kernel if Op(1, None) < Op(2, None) else lib.triton_kernel)(x)", True),
        ("(lib.tpu_kernel if Op(3, None) >= Op(2, None) else lib.triton_kernel)(x)", True),
        ("(lib.tpu_kernel if Op(2, None) <= Op(1, None) else lib.triton_kernel)(x)", False),
        ("(lib.tpu_kernel if Plain() == Plain() else lib.triton_kernel)(x)", False),
    ],
)
def test_comparisons_of_instances_call_their_special_methods(call: str, expected: bool) -> None:
    # ``max`` keeps the first item and takes each next one that compares greater; a class
    # ``functools.total_ordering`` decorates gets ``>``, ``<=`` and ``>=`` from its ``<``;
    # without ``__eq__``, two instances are equal only when they are one
    app = f"""
import functools

@functools.total_ordering
class Op:
    def __init__(self, rank, fn):
        self.rank, self.fn = rank, fn

    def __eq__(self, other):
        return self.rank == other.rank

    def __lt__(self, other):
        return self.rank < other.rank

class Plain:
    pass

def main(x):
    if jax.default_backend() == "gpu":
        return {call}  # here
    return x
"""
    assert fires(app) is expected
