"""Containers: items read by literal and computed keys, unpacking (nested, starred),
lists grown by ``append``, dicts changed by item assignment and ``update``, ``dict.get``.

Each program calls, under a guard for "gpu", the item the rule picks: a finding when it
is ``lib.tpu_kernel``, silent when it is ``lib.triton_kernel``.
"""

from __future__ import annotations

import pytest
from evaluator_programs import fires


def _guarded(setup: str, call: str) -> str:
    return f"""
def main(x):
    {setup}
    if jax.default_backend() == "gpu":
        return {call}  # here
    return x
"""


KERNELS = 'KERNELS = {"fast": lib.tpu_kernel, "safe": lib.triton_kernel}\n'
FAST_SAFE = pytest.mark.parametrize(
    ("key", "expected"), [("fast", True), ("safe", False)], ids=["fast-fires", "safe-silent"]
)


@FAST_SAFE
def test_dict_literal_key(key: str, expected: bool) -> None:
    assert fires(KERNELS + _guarded("pass", f'KERNELS["{key}"](x)')) is expected


@FAST_SAFE
def test_dict_computed_key(key: str, expected: bool) -> None:
    setup = f'name = "{key[:2]}" + "{key[2:]}"'
    assert fires(KERNELS + _guarded(setup, "KERNELS[name](x)")) is expected


@FAST_SAFE
def test_dict_key_from_f_string(key: str, expected: bool) -> None:
    program = 'KERNELS = {"fast_v1": lib.tpu_kernel, "safe_v1": lib.triton_kernel}\n'
    setup = f'mode = "{key}"'
    assert fires(program + _guarded(setup, 'KERNELS[f"{mode}_v1"](x)')) is expected


@pytest.mark.parametrize(("index", "expected"), [("1", True), ("0", False), ("-1", True)])
def test_tuple_index(index: str, expected: bool) -> None:
    call = f"(lib.triton_kernel, lib.tpu_kernel)[{index}](x)"
    assert fires(_guarded("pass", call)) is expected


@pytest.mark.parametrize(
    ("name", "expected"), [("fast", True), ("safe", False)], ids=["fast-fires", "safe-silent"]
)
def test_tuple_unpacking(name: str, expected: bool) -> None:
    setup = "fast, safe = lib.tpu_kernel, lib.triton_kernel"
    assert fires(_guarded(setup, f"{name}(x)")) is expected


@pytest.mark.parametrize(
    ("name", "expected"), [("c", True), ("b", False)], ids=["c-fires", "b-silent"]
)
def test_nested_unpacking(name: str, expected: bool) -> None:
    setup = "a, (b, c) = lib.triton_kernel, [lib.triton_kernel, lib.tpu_kernel]"
    assert fires(_guarded(setup, f"{name}(x)")) is expected


@pytest.mark.parametrize(
    ("read", "expected"),
    [("rest[1]", True), ("last", True), ("rest[0]", False), ("first", False)],
)
def test_starred_unpacking(read: str, expected: bool) -> None:
    setup = (
        "first, *rest = (lib.triton_kernel, lib.triton_kernel, lib.tpu_kernel)\n    *_, last = rest"
    )
    assert fires(_guarded(setup, f"{read}(x)")) is expected


@pytest.mark.parametrize(
    ("index", "expected"),
    [("1", True), ("0", False)],
    ids=["appended-second-fires", "first-silent"],
)
def test_list_append(index: str, expected: bool) -> None:
    setup = "ops = []\n    ops.append(lib.triton_kernel)\n    ops.append(lib.tpu_kernel)"
    assert fires(_guarded(setup, f"ops[{index}](x)")) is expected


@FAST_SAFE
def test_dict_item_assignment_and_update(key: str, expected: bool) -> None:
    setup = 'ops = {}\n    ops["fast"] = lib.tpu_kernel\n    ops.update(safe=lib.triton_kernel)'
    assert fires(_guarded(setup, f'ops["{key}"](x)')) is expected


@FAST_SAFE
def test_dict_update_with_a_dict(key: str, expected: bool) -> None:
    setup = 'ops = {"fast": lib.triton_kernel}\n    ops.update({"fast": lib.tpu_kernel, "safe": lib.triton_kernel})'
    assert fires(_guarded(setup, f'ops["{key}"](x)')) is expected


@pytest.mark.parametrize(
    ("last", "expected"),
    [("lib.tpu_kernel", True), ("lib.triton_kernel", False)],
    ids=["overwritten-with-tpu-fires", "overwritten-with-triton-silent"],
)
def test_dict_item_overwritten(last: str, expected: bool) -> None:
    first = "lib.triton_kernel" if last == "lib.tpu_kernel" else "lib.tpu_kernel"
    setup = f'ops = {{"k": {first}}}\n    ops["k"] = {last}'
    assert fires(_guarded(setup, 'ops["k"](x)')) is expected


@pytest.mark.parametrize(
    ("key", "expected"),
    [("fast", True), ("missing", False)],
    ids=["present-fires", "default-silent"],
)
def test_dict_get_with_default(key: str, expected: bool) -> None:
    setup = f'k = KERNELS.get("{key}", lib.triton_kernel)'
    assert fires(KERNELS + _guarded(setup, "k(x)")) is expected


@FAST_SAFE
def test_module_level_registry_filled_by_a_function(key: str, expected: bool) -> None:
    program = """
OPS = {}

def install():
    OPS["fast"] = lib.tpu_kernel
    OPS["safe"] = lib.triton_kernel

install()
"""
    assert fires(program + _guarded("pass", f'OPS["{key}"](x)')) is expected


@pytest.mark.parametrize(
    ("picked", "other", "expected"),
    [("tpu_kernel", "triton_kernel", True), ("triton_kernel", "tpu_kernel", False)],
    ids=["tpu-picked-fires", "triton-picked-silent"],
)
@pytest.mark.parametrize(
    "setup",
    [
        "table = {}\ntable.setdefault('fn', lib.$P)\ntable.setdefault('fn', lib.$O)",
        "table = {'fn': lib.$O} | {'fn': lib.$P}",
        "table = {'fn': lib.$O}\ntable |= {'fn': lib.$P}",
        "table = {'fn': lib.$O, **{'fn': lib.$P}}",
    ],
    ids=["setdefault-keeps-the-first", "or-right-wins", "in-place-or", "unpacked-last-wins"],
)
def test_dict_operations(setup: str, picked: str, other: str, expected: bool) -> None:
    made = setup.replace("$P", picked).replace("$O", other)
    app = (
        made
        + """

def main(x):
    if jax.default_backend() == "gpu":
        return table["fn"](x)  # here
    return x
"""
    )
    assert fires(app) is expected


def test_setdefault_returns_what_the_dict_holds() -> None:
    app = """
table = {"fn": lib.tpu_kernel}

def main(x):
    fn = table.setdefault("fn", lib.triton_kernel)
    if jax.default_backend() == "gpu":
        return fn(x)  # here
    return x
"""
    assert fires(app) is True


@pytest.mark.parametrize(
    ("display", "expected"),
    [
        ("{True: lib.triton_kernel, 1: lib.tpu_kernel}", True),
        ("{1: lib.tpu_kernel, True: lib.triton_kernel}", False),
        ("{**{True: lib.triton_kernel}, 1: lib.tpu_kernel}", True),
        ("{k: v for k, v in ((True, lib.triton_kernel), (1, lib.tpu_kernel))}", True),
        ("{k: v for k, v in ((1, lib.tpu_kernel), (True, lib.triton_kernel))}", False),
    ],
    ids=[
        "display-later-tpu-fires",
        "display-later-triton-silent",
        "spread-later-tpu-fires",
        "comprehension-later-tpu-fires",
        "comprehension-later-triton-silent",
    ],
)
def test_equal_keys_take_the_later_value(display: str, expected: bool) -> None:
    # True == 1 and hash(True) == hash(1): one key, the value written last
    setup = f"ops = {display}"
    assert fires(_guarded(setup, "ops[1](x)")) is expected


@pytest.mark.parametrize(
    ("display", "expected"),
    [("{True: 0, 1: 0}", True), ("{1: 0, True: 0}", False)],
    ids=["first-key-true-fires", "first-key-one-silent"],
)
def test_equal_keys_keep_the_first_key(display: str, expected: bool) -> None:
    # {True: 0, 1: 0} is {True: 0}: the key written first stays
    setup = f"ops = {display}\n    (key,) = ops\n    op = lib.tpu_kernel if key is True else lib.triton_kernel"
    assert fires(_guarded(setup, "op(x)")) is expected


@pytest.mark.parametrize(
    ("assigned", "expected"),
    [("True", True), ("1", False)],
    ids=["kept-true-fires", "assigned-over-one-silent"],
)
def test_item_assignment_keeps_the_first_key(assigned: str, expected: bool) -> None:
    setup = (
        f"ops = {{{assigned}: 0}}\n    ops[1 if {assigned} is True else True] = 0\n"
        "    (key,) = ops\n    op = lib.tpu_kernel if key is True else lib.triton_kernel"
    )
    assert fires(_guarded(setup, "op(x)")) is expected


# -- large displays of constants (built once per node: ``evaluator.literals``) ---------
# Each display below is far above the size from which its value is kept, so the second
# evaluation of the same display takes the kept value: it must still be what Python gives
# (a new list, dict or set each time the display runs).

_NUMBERS = ", ".join(str(n) for n in range(80))
_MODES = ", ".join(f'"m{n}": "safe"' for n in range(79)) + ', "m79": "fast"'


def _twice(display: str, setup: str) -> str:
    return f"def table():\n    return {display}\n\n" + setup.replace("\n", "\n    ")


@pytest.mark.parametrize(
    ("read", "expected"), [("first", True), ("second", False)], ids=["first-fires", "second-silent"]
)
def test_each_run_of_a_large_list_display_is_a_new_list(read: str, expected: bool) -> None:
    setup = (
        "first = table()\nsecond = table()\n"
        "first[0] = lib.tpu_kernel\nsecond[0] = lib.triton_kernel"
    )
    program = _twice(f"[{_NUMBERS}]", "") + _guarded(setup.replace("\n", "\n    "), f"{read}[0](x)")
    assert fires(program) is expected


@pytest.mark.parametrize(
    ("read", "expected"), [("first", True), ("second", False)], ids=["first-fires", "second-silent"]
)
def test_each_run_of_a_large_dict_display_is_a_new_dict_inside_too(
    read: str, expected: bool
) -> None:
    display = "{" + f'"inner": {{{_MODES}}}' + "}"
    setup = (
        "first = table()\nsecond = table()\n"
        'first["inner"]["m0"] = lib.tpu_kernel\nsecond["inner"]["m0"] = lib.triton_kernel'
    )
    program = _twice(display, "") + _guarded(
        setup.replace("\n", "\n    "), f'{read}["inner"]["m0"](x)'
    )
    assert fires(program) is expected


@pytest.mark.parametrize(
    ("read", "expected"), [("first", True), ("second", False)], ids=["first-fires", "second-silent"]
)
def test_a_list_inside_a_large_tuple_display_is_new_each_run(read: str, expected: bool) -> None:
    # the tuple is immutable, the list in it is not: ``second[0]`` stays empty
    setup = "first = table()\nsecond = table()\nfirst[0].append(lib.tpu_kernel)"
    program = _twice(f"([], {_NUMBERS})", "") + _guarded(
        setup.replace("\n", "\n    "), f"{read}[0][0](x)"
    )
    assert fires(program) is expected


@pytest.mark.parametrize(
    ("mode", "expected"), [("m79", True), ("m0", False)], ids=["fast-fires", "safe-silent"]
)
def test_a_large_dict_display_read_in_every_call(mode: str, expected: bool) -> None:
    program = (
        KERNELS
        + f"def kernel_for(mode):\n    return KERNELS[{{{_MODES}}}[mode]]\n\n"
        + _guarded('kernel_for("m1")', f'kernel_for("{mode}")(x)')
    )
    assert fires(program) is expected


# -- each call makes new objects: a call's outcome is not kept when it returns one ------


@pytest.mark.parametrize(
    ("read", "expected"), [("first", True), ("second", False)], ids=["first-fires", "second-silent"]
)
def test_each_call_of_a_list_factory_makes_a_new_list(read: str, expected: bool) -> None:
    setup = (
        "first = table()\n    second = table()\n"
        "    first.append(lib.tpu_kernel)\n    second.append(lib.triton_kernel)"
    )
    program = "def table():\n    return []\n\n" + _guarded(setup, f"{read}[0](x)")
    assert fires(program) is expected


@pytest.mark.parametrize(
    ("read", "expected"), [("first", True), ("second", False)], ids=["first-fires", "second-silent"]
)
def test_each_call_of_a_factory_makes_a_new_instance(read: str, expected: bool) -> None:
    head = (
        "class Config:\n    def __init__(self):\n        self.kernel = lib.triton_kernel\n\n"
        "def make():\n    return Config()\n\n"
    )
    setup = "first = make()\n    second = make()\n    first.kernel = lib.tpu_kernel"
    assert fires(head + _guarded(setup, f"{read}.kernel(x)")) is expected


@pytest.mark.parametrize(
    ("read", "expected"), [("first", True), ("second", False)], ids=["first-fires", "second-silent"]
)
def test_a_list_in_a_returned_tuple_is_new_each_call(read: str, expected: bool) -> None:
    setup = "first = pair()\n    second = pair()\n    first[0].append(lib.tpu_kernel)"
    program = "def pair():\n    return ([], 0)\n\n" + _guarded(setup, f"{read}[0][0](x)")
    assert fires(program) is expected
