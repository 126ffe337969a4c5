"""The standard library's holders and runners written as Python (``stdlib_models``):
``contextvars`` (a variable gives what was set last, else its default; a context runs a
callable), ``weakref`` (a reference gives its object back, a proxy stands for it, the weak
dicts hold what a dict holds), ``types.MappingProxyType`` (a live view of its mapping);
and three cases of the data model they lean on: an instance of a ``dict``, ``list`` or
``set`` subclass holds items like the built-in (``__missing__`` called for a key a dict
does not hold), a class's ``__dict__`` (and ``vars(cls)``) maps the names its body bound to
the objects bound (a ``staticmethod`` object, whose ``__func__`` is the function), and a
``property``'s ``fget``.

Each program calls, under a guard for "gpu", what the form gives: a finding when that is
``lib.tpu_kernel``, silent when it is ``lib.triton_kernel``; and the models' module names
never appear in a chain of notes.
"""

from __future__ import annotations

import pytest
from evaluator_programs import PICKS, fires, guarded_main, loader_of, program

from typed_pallas_mypy.inference.evaluator import stdlib_models
from typed_pallas_mypy.inference.evaluator.questions import module_findings


def _guarded(setup: str, call: str, head: str = "") -> str:
    return guarded_main(setup, call, "import contextvars\nimport types\nimport weakref\n" + head)


# -- contextvars -----------------------------------------------------------------------


@PICKS
def test_context_variable_default(picked: str, other: str, expected: bool) -> None:
    head = f"CURRENT = contextvars.ContextVar('kernel', default=lib.{picked})\n"
    assert fires(_guarded("pass", "CURRENT.get()(x)", head)) is expected


@PICKS
def test_context_variable_set_wins_over_the_default(
    picked: str, other: str, expected: bool
) -> None:
    head = f"CURRENT = contextvars.ContextVar('kernel', default=lib.{other})\n"
    setup = f"CURRENT.set(lib.{picked})"
    assert fires(_guarded(setup, "CURRENT.get()(x)", head)) is expected


@PICKS
def test_context_variable_reset_gives_the_value_before(
    picked: str, other: str, expected: bool
) -> None:
    head = "CURRENT = contextvars.ContextVar('kernel')\n"
    setup = (
        f"CURRENT.set(lib.{picked})\n    token = CURRENT.set(lib.{other})\n    CURRENT.reset(token)"
    )
    assert fires(_guarded(setup, "CURRENT.get()(x)", head)) is expected


@PICKS
def test_context_variable_get_default_argument(picked: str, other: str, expected: bool) -> None:
    head = "CURRENT = contextvars.ContextVar('kernel')\n"
    assert fires(_guarded("pass", f"CURRENT.get(lib.{picked})(x)", head)) is expected


@PICKS
def test_context_run_calls_with_the_arguments(picked: str, other: str, expected: bool) -> None:
    call = f"contextvars.copy_context().run(lib.{picked}, x)"
    assert fires(_guarded("pass", call)) is expected


def test_context_variable_without_a_value_raises_lookup_error() -> None:
    # ``get()`` with no value and no default raises: the call after it never runs
    head = "CURRENT = contextvars.ContextVar('kernel')\n"
    setup = "CURRENT.get()"
    assert fires(_guarded(setup, "lib.tpu_kernel(x)", head)) is False


def test_from_import_of_a_modelled_name() -> None:
    head = "from contextvars import ContextVar\nCURRENT = ContextVar('k', default=lib.tpu_kernel)\n"
    assert fires(_guarded("pass", "CURRENT.get()(x)", head)) is True


# -- weakref ---------------------------------------------------------------------------


@PICKS
@pytest.mark.parametrize(
    ("setup", "call"),
    [
        ("ref = weakref.ref(lib.{})", "ref()(x)"),
        ("ref = weakref.proxy(lib.{})", "ref(x)"),
        ("table = weakref.WeakValueDictionary()\n    table['k'] = lib.{}", "table['k'](x)"),
        ("table = weakref.WeakValueDictionary()\n    table['k'] = lib.{}", "table.get('k')(x)"),
    ],
    ids=["ref", "proxy", "weak-value-dict", "weak-value-dict-get"],
)
def test_weak_references(setup: str, call: str, picked: str, other: str, expected: bool) -> None:
    assert fires(_guarded(setup.format(picked), call)) is expected


# -- views and the data model ----------------------------------------------------------


@PICKS
def test_mapping_proxy_is_a_live_view(picked: str, other: str, expected: bool) -> None:
    setup = (
        f"table = {{'k': lib.{other}}}\n    view = types.MappingProxyType(table)\n"
        f"    table['k'] = lib.{picked}"
    )
    assert fires(_guarded(setup, "view['k'](x)")) is expected


MISSING = """
class Registry(dict):
    def __missing__(self, key):
        return lib.{}
"""


@PICKS
def test_dict_subclass_missing_key_calls_missing(picked: str, other: str, expected: bool) -> None:
    head = MISSING.format(picked)
    assert fires(_guarded("pass", "Registry()['k'](x)", head)) is expected


@PICKS
def test_dict_subclass_held_key_is_not_missing(picked: str, other: str, expected: bool) -> None:
    head = MISSING.format(other)
    setup = f"registry = Registry()\n    registry['k'] = lib.{picked}"
    assert fires(_guarded(setup, "registry['k'](x)", head)) is expected


def test_dict_subclass_made_with_arguments_is_not_known() -> None:
    # the items the constructor was given are not followed: either key may be held
    head = MISSING.format("tpu_kernel")
    assert fires(_guarded("pass", "Registry(k=lib.triton_kernel)['k'](x)", head)) is False


@PICKS
def test_dict_subclass_with_own_getitem_uses_it(picked: str, other: str, expected: bool) -> None:
    head = f"""
class Table(dict):
    def __getitem__(self, key):
        return lib.{picked}
"""
    setup = f"table = Table()\n    table['k'] = lib.{other}"
    assert fires(_guarded(setup, "table['k'](x)", head)) is expected


@PICKS
def test_list_subclass_holds_appended_items(picked: str, other: str, expected: bool) -> None:
    head = "class Steps(list):\n    pass\n"
    setup = f"steps = Steps()\n    steps.append(lib.{picked})"
    assert fires(_guarded(setup, "[s(x) for s in steps][0]", head)) is expected


@PICKS
@pytest.mark.parametrize(
    "read",
    ["Ops.__dict__['run'].__func__(x)", "vars(Ops)['run'].__func__(x)"],
    ids=["dunder-dict", "vars"],
)
def test_class_namespace_holds_the_staticmethod_object(
    read: str, picked: str, other: str, expected: bool
) -> None:
    head = f"class Ops:\n    run = staticmethod(lib.{picked})\n"
    assert fires(_guarded("pass", read, head)) is expected


@PICKS
def test_property_fget(picked: str, other: str, expected: bool) -> None:
    head = f"class Ops:\n    @property\n    def run(self):\n        return lib.{picked}\n"
    assert fires(_guarded("pass", "Ops.__dict__['run'].fget(None)(x)", head)) is expected


def test_models_do_not_show_in_the_chain() -> None:
    files = program(_guarded("pass", "contextvars.copy_context().run(lib.tpu_kernel, x)"))
    found, _ = module_findings(loader_of(files), "app", (0, 12, 1))
    assert len(found) == 1
    chain = found[0].verdict.chain
    assert chain, "the way to the kernel is known"
    assert not any(stdlib_models.is_model(link.module) for link in chain), chain
