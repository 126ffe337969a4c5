"""JAX's API table (``typed_pallas_mypy.inference.jax_api``) against the installed JAX.

Run at both ends of the supported range (``scripts/test-one`` and ``scripts/test-one --jax
old``), each test proves the table at the end it runs under: every row marked as existing
here resolves, under every spelling, to one object whose real signature has each function
argument at the row's position and keyword; a row marked absent here is absent (or means
something else here); every name of the engine's older lists (``fullnames``,
``program``) is in the table with a compatible meaning; the lookups fire on JAX's names
and stay silent on others; importing the table imports no jax.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import importlib
import importlib.util
import inspect
import subprocess
import sys
import types
import warnings
from collections.abc import Iterator
from typing import Any, Final

import jax
import jax.numpy as jnp
import pytest

from typed_pallas_mypy import fullnames
from typed_pallas_mypy.inference import jax_api, program
from typed_pallas_mypy.inference.jax_api import (
    ApiRow,
    Arg,
    ClassDecoratorRow,
    ContextRow,
    Kind,
    Role,
    When,
)

_RELEASE = tuple(int(part) for part in jax.__version__.split(".") if part.isdigit())
#: The end of the range this run checks ("0.10" or "0.12").
END = jax_api.end_of(_RELEASE)

_EMPTY = inspect.Parameter.empty
_POSITIONAL = (inspect.Parameter.POSITIONAL_ONLY, inspect.Parameter.POSITIONAL_OR_KEYWORD)

#: Rows whose callable has no signature ``inspect`` can read (C functions and types
#: without a text signature): hand-checked against their documentation.
NO_SIGNATURE = frozenset(
    {
        "builtins.map",
        "builtins.filter",
        "builtins.min",
        "builtins.max",
        "builtins.iter",
        "builtins.staticmethod",
        "builtins.classmethod",
        "functools.partial",
        "functools.reduce",
        "functools._lru_cache_wrapper",
    }
)

#: Names of the engine's older lists that the table leaves out: none of them is the
#: callable the list took it for, at either end (checked below, at the end this runs).
# The lists the engine matched before the table (fullnames.py and program.py at the
# commit before jax_api was wired in), kept as literals: the table must keep covering them.

OLD_KEEPS_FUNCTION: Final = frozenset(
    {
        "beartype._decor.decorcache.beartype",
        "beartype._decor.decormain.beartype",
        "beartype.beartype",
        "functools._lru_cache_wrapper",
        "functools.cache",
        "functools.lru_cache",
        "functools.wraps",
        "jax._src.ad_checkpoint.checkpoint",
        "jax._src.api.grad",
        "jax._src.api.hessian",
        "jax._src.api.jacfwd",
        "jax._src.api.jacrev",
        "jax._src.api.jit",
        "jax._src.api.named_call",
        "jax._src.api.pmap",
        "jax._src.api.value_and_grad",
        "jax._src.api.vmap",
        "jax._src.pjit.jit",
        "jax._src.shard_map.shard_map",
        "jax.checkpoint",
        "jax.experimental.shard_map.shard_map",
        "jax.grad",
        "jax.hessian",
        "jax.jacfwd",
        "jax.jacrev",
        "jax.jit",
        "jax.named_call",
        "jax.named_scope",
        "jax.pmap",
        "jax.remat",
        "jax.shard_map",
        "jax.value_and_grad",
        "jax.vmap",
        "jaxtyping._decorator.jaxtyped",
        "jaxtyping.jaxtyped",
        "typed_pallas._tagged.platform",
        "typed_pallas.platform",
        "typing.override",
        "typing_extensions.override",
    }
)

OLD_CONFIGURED_KEEPERS: Final = frozenset(
    {
        "functools.lru_cache",
        "functools.wraps",
        "jax.named_scope",
        "typed_pallas._tagged.platform",
        "typed_pallas.platform",
    }
)

OLD_CUSTOM_DERIVATIVES: Final = frozenset(
    {
        "jax._src.custom_derivatives.custom_jvp",
        "jax._src.custom_derivatives.custom_vjp",
        "jax.custom_jvp",
        "jax.custom_vjp",
    }
)

OLD_DERIVATIVE_RULES: Final = frozenset(
    {
        "defjvp",
        "defvjp",
    }
)

OLD_DIFFERENTIATING: Final = frozenset(
    {
        "jax._src.api.grad",
        "jax._src.api.hessian",
        "jax._src.api.jacfwd",
        "jax._src.api.jacrev",
        "jax._src.api.value_and_grad",
        "jax.grad",
        "jax.hessian",
        "jax.jacfwd",
        "jax.jacrev",
        "jax.value_and_grad",
    }
)

OLD_DIFFERENTIATING_CALLS: Final = frozenset(
    {
        "jax._src.api.jvp",
        "jax._src.api.linearize",
        "jax._src.api.vjp",
        "jax.jvp",
        "jax.linearize",
        "jax.vjp",
    }
)

OLD_METHOD_KEEPERS: Final = frozenset(
    {
        "builtins.classmethod",
        "builtins.staticmethod",
    }
)

OLD_CLASS_KEEPERS: Final = frozenset(
    {
        "chex.dataclass",
        "dataclasses.dataclass",
        "flax.struct.dataclass",
        "functools.total_ordering",
        "jax.tree_util.register_dataclass",
        "jax.tree_util.register_pytree_node_class",
        "jax.tree_util.register_static",
        "typing.final",
    }
)

OLD_DATACLASS_DECORATORS: Final = frozenset(
    {
        "chex.dataclass",
        "dataclasses.dataclass",
        "flax.struct.dataclass",
    }
)

OLD_INTERPRET_CONTEXTS: Final = frozenset(
    {
        "jax._src.pallas.mosaic.interpret.force_tpu_interpret_mode",
        "jax._src.pallas.mosaic.interpret.interpret_pallas_call.force_tpu_interpret_mode",
        "jax.experimental.pallas.tpu.force_tpu_interpret_mode",
    }
)

OLD_TRACED_ARGUMENTS: Final[dict[str, tuple[tuple[int, str], ...]]] = {
    "jax._src.api.jvp": ((0, "fun"),),
    "jax._src.api.linearize": ((0, "fun"),),
    "jax._src.api.vjp": ((0, "fun"),),
    "jax._src.lax.control_flow.associative_scan": ((0, "fn"),),
    "jax._src.lax.control_flow.cond": ((1, "true_fun"), (2, "false_fun")),
    "jax._src.lax.control_flow.conditionals.associative_scan": ((0, "fn"),),
    "jax._src.lax.control_flow.conditionals.cond": ((1, "true_fun"), (2, "false_fun")),
    "jax._src.lax.control_flow.conditionals.fori_loop": ((2, "body_fun"),),
    "jax._src.lax.control_flow.conditionals.map": ((0, "f"),),
    "jax._src.lax.control_flow.conditionals.scan": ((0, "f"),),
    "jax._src.lax.control_flow.conditionals.switch": ((1, "branches"),),
    "jax._src.lax.control_flow.conditionals.while_loop": ((0, "cond_fun"), (1, "body_fun")),
    "jax._src.lax.control_flow.fori_loop": ((2, "body_fun"),),
    "jax._src.lax.control_flow.loops.associative_scan": ((0, "fn"),),
    "jax._src.lax.control_flow.loops.cond": ((1, "true_fun"), (2, "false_fun")),
    "jax._src.lax.control_flow.loops.fori_loop": ((2, "body_fun"),),
    "jax._src.lax.control_flow.loops.map": ((0, "f"),),
    "jax._src.lax.control_flow.loops.scan": ((0, "f"),),
    "jax._src.lax.control_flow.loops.switch": ((1, "branches"),),
    "jax._src.lax.control_flow.loops.while_loop": ((0, "cond_fun"), (1, "body_fun")),
    "jax._src.lax.control_flow.map": ((0, "f"),),
    "jax._src.lax.control_flow.scan": ((0, "f"),),
    "jax._src.lax.control_flow.switch": ((1, "branches"),),
    "jax._src.lax.control_flow.while_loop": ((0, "cond_fun"), (1, "body_fun")),
    "jax.jvp": ((0, "fun"),),
    "jax.lax.associative_scan": ((0, "fn"),),
    "jax.lax.cond": ((1, "true_fun"), (2, "false_fun")),
    "jax.lax.fori_loop": ((2, "body_fun"),),
    "jax.lax.map": ((0, "f"),),
    "jax.lax.scan": ((0, "f"),),
    "jax.lax.switch": ((1, "branches"),),
    "jax.lax.while_loop": ((0, "cond_fun"), (1, "body_fun")),
    "jax.linearize": ((0, "fun"),),
    "jax.vjp": ((0, "fun"),),
}

STALE_OLD_NAMES = {
    # jax.pmap is defined in jax._src.pmap, and jax.jit in jax._src.api, at both ends
    "jax._src.api.pmap": "jax.pmap",
    "jax._src.pjit.jit": "jax.jit",
    # the package re-exports nothing: the context manager is in interpret_pallas_call
    "jax._src.pallas.mosaic.interpret.force_tpu_interpret_mode": (
        "jax.experimental.pallas.tpu.force_tpu_interpret_mode"
    ),
    # program.TRACED_ARGUMENTS spelled every control-flow name in every module:
    "jax._src.lax.control_flow.conditionals.associative_scan": "jax.lax.associative_scan",
    "jax._src.lax.control_flow.conditionals.fori_loop": "jax.lax.fori_loop",
    "jax._src.lax.control_flow.conditionals.map": "jax.lax.map",  # jaxlib's safe_map
    "jax._src.lax.control_flow.conditionals.scan": "jax.lax.scan",
    "jax._src.lax.control_flow.conditionals.while_loop": "jax.lax.while_loop",
    "jax._src.lax.control_flow.loops.cond": "jax.lax.cond",
    "jax._src.lax.control_flow.loops.switch": "jax.lax.switch",
}

_JAX_TOP = ("jax", "jaxlib")


def _is_jax(name: str) -> bool:
    return name.split(".")[0] in _JAX_TOP


def _walk(root: object, path: str, attrs: list[str]) -> object | None:
    obj = root
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # deprecated names warn when read
        for attr in attrs:
            path = f"{path}.{attr}"
            try:
                obj = getattr(obj, attr)
                continue
            except AttributeError:
                if not isinstance(obj, types.ModuleType):
                    return None
            try:
                obj = importlib.import_module(path)
            except ImportError:
                return None
    return obj


def resolve(fullname: str) -> object | None:
    """The object ``fullname`` names in this interpreter, or None: attribute by attribute
    from its top package (a package attribute wins over a submodule of the same name, as
    the function ``jax.experimental.roofline.roofline`` does), else from the longest
    module prefix (``jax.experimental.roofline.roofline.roofline``, the module's)."""
    parts = fullname.split(".")
    try:
        top = importlib.import_module(parts[0])
    except ImportError:
        return None
    found = _walk(top, parts[0], parts[1:])
    if found is not None:
        return found
    for cut in range(len(parts) - 1, 1, -1):
        try:
            module = importlib.import_module(".".join(parts[:cut]))
        except ImportError:
            continue
        return _walk(module, ".".join(parts[:cut]), parts[cut:])
    return None


def _available(names: tuple[str, ...], since_python: tuple[int, int] | None = None) -> bool:
    """Whether a row that does not depend on JAX can be checked here (its package is
    installed, its Python is this one or older)."""
    if since_python is not None and sys.version_info < since_python:
        return False
    return importlib.util.find_spec(names[0].split(".")[0]) is not None


def _here(entry: ApiRow | ContextRow | ClassDecoratorRow) -> tuple[str, ...] | None:
    """The spellings of ``entry`` at this end, or None when it is not checked here."""
    if not _is_jax(entry.names[0]):
        since = entry.since_python if isinstance(entry, ApiRow) else None
        return entry.names if _available(entry.names, since) else None
    if END not in entry.ends:
        return None
    return entry.names + tuple(name for end, name in entry.end_names if end == END)


def _every_entry() -> Iterator[ApiRow | ContextRow | ClassDecoratorRow]:
    yield from jax_api.ROWS
    yield from jax_api.CONTEXTS
    yield from jax_api.CLASS_DECORATORS


def _parameters(row: ApiRow, obj: object) -> list[inspect.Parameter]:
    assert callable(obj), row.names[0]
    params = list(inspect.signature(obj).parameters.values())
    if row.kind is Kind.METHOD:
        params = params[1:]  # self
    return params


def signature_problems(row: ApiRow, obj: object) -> list[str]:
    """What in ``row``'s arguments the real signature of ``obj`` contradicts."""
    if row.configured:
        return []  # the arguments are the result's: nothing to read before calling it
    try:
        params = _parameters(row, obj)
    except (ValueError, TypeError):
        if row.names[0] in NO_SIGNATURE:
            return []
        return [f"{row.names[0]} has no signature inspect can read"]
    by_name = {p.name: p for p in params}
    positional = [p for p in params if p.kind in _POSITIONAL]
    star = next((p for p in params if p.kind is inspect.Parameter.VAR_POSITIONAL), None)
    problems: list[str] = []
    for arg in row.args:
        where = f"{row.names[0]}: {arg}"
        if arg.variadic == "**":
            param = by_name.get(arg.keyword or "")
            if param is None or param.kind is not inspect.Parameter.VAR_KEYWORD:
                problems.append(f"{where}: no **{arg.keyword}")
            continue
        if arg.variadic == "*":
            if star is None or star.name != arg.keyword or len(positional) != arg.position:
                problems.append(f"{where}: no *{arg.keyword} at {arg.position}")
            continue
        if arg.position is None:
            param = by_name.get(arg.keyword or "")
            if param is None or param.kind is not inspect.Parameter.KEYWORD_ONLY:
                problems.append(f"{where}: no keyword-only parameter {arg.keyword}")
            continue
        if arg.position >= len(positional):
            problems.append(f"{where}: only {len(positional)} positional parameters")
            continue
        param = positional[arg.position]
        if arg.keyword is not None and (
            param.name != arg.keyword or param.kind is not inspect.Parameter.POSITIONAL_OR_KEYWORD
        ):
            problems.append(f"{where}: the parameter there is {param}")
        if arg.position == 0 and (param.default is not _EMPTY) != row.optional_function:
            problems.append(f"{where}: optional_function is {row.optional_function}, {param}")
    return problems


# --------------------------------------------------------------------------- the end


def test_this_jax_is_an_end_the_table_was_checked_at() -> None:
    assert END is not None, (
        f"jax {jax.__version__} is at neither end the table was checked at "
        f"({jax_api.CHECKED_AT}): check the table against it and add its end"
    )
    assert jax.__version__.startswith(END)


# --------------------------------------------------------------------------- resolution


def test_every_row_here_resolves_to_one_object_under_every_spelling() -> None:
    problems: list[str] = []
    checked = 0
    for entry in _every_entry():
        names = _here(entry)
        if names is None:
            continue
        checked += 1
        objects = {name: resolve(name) for name in names}
        missing = [name for name, obj in objects.items() if obj is None]
        if missing:
            problems.append(f"{entry.names[0]}: {missing} do not resolve")
            continue
        first = objects[names[0]]
        others = [name for name, obj in objects.items() if obj is not first]
        if others:
            problems.append(f"{entry.names[0]}: {others} are other objects")
    assert not problems, "\n".join(problems)
    assert checked > 150  # the rows of this end, not an empty walk


def test_every_row_here_matches_the_real_signature() -> None:
    problems: list[str] = []
    for row in jax_api.ROWS:
        names = _here(row)
        if names is None:
            continue
        obj = resolve(names[0])
        assert obj is not None, names[0]
        problems.extend(signature_problems(row, obj))
    assert not problems, "\n".join(problems)


def test_no_signature_rows_have_none_or_match_the_one_python_now_gives() -> None:
    """Up to Python 3.12 none of them has a signature ``inspect`` reads; 3.13 gives some a
    text signature (``map``, ``filter``, ``functools.partial``): there the row must match
    it, as every other row does."""
    readable = []
    for name in NO_SIGNATURE:
        found = jax_api.row(name)
        assert found is not None, name
        try:
            _parameters(found, resolve(name))
        except (ValueError, TypeError):
            continue
        readable.append(name)
        assert not signature_problems(found, resolve(name)), name
    if sys.version_info < (3, 13):
        assert readable == [], readable


def test_rows_absent_here_are_absent_or_mean_something_else() -> None:
    absent = [row for row in jax_api.ROWS if _is_jax(row.names[0]) and END not in row.ends]
    assert absent  # each end lacks something the other has
    for row in absent:
        obj = resolve(row.names[0])
        assert obj is None or signature_problems(row, obj), f"{row.names[0]} is here"
    for entry in [*jax_api.CONTEXTS, *jax_api.CLASS_DECORATORS]:
        if _is_jax(entry.names[0]) and END not in entry.ends:
            obj = resolve(entry.names[0])
            # jax 0.12's compute_on is a decorator taking f (a row), not a context manager
            assert obj is None or jax_api.row(entry.names[0], END) is not None, entry.names[0]


def test_the_signature_check_can_fail() -> None:
    cond = jax_api.row("jax.lax.cond")
    assert cond is not None
    assert not signature_problems(cond, resolve("jax.lax.cond"))
    shifted = ApiRow(cond.names, (Arg(0, "true_fun", Role.CALLS_NOW),))
    renamed = ApiRow(cond.names, (Arg(1, "then_fun", Role.CALLS_NOW),))
    keyword_only = ApiRow(cond.names, (Arg(None, "true_fun", Role.CALLS_NOW),))
    for wrong in (shifted, renamed, keyword_only):
        assert signature_problems(wrong, resolve("jax.lax.cond"))
    jit = jax_api.row("jax.jit")
    assert jit is not None and jit.optional_function
    required = ApiRow(jit.names, jit.args)
    assert signature_problems(required, resolve("jax.jit"))


def test_a_spelling_names_one_row_at_each_end() -> None:
    for table in (jax_api.ROWS, jax_api.CONTEXTS, jax_api.CLASS_DECORATORS):
        seen: dict[tuple[str, str], str] = {}
        for entry in table:
            for end in entry.ends:
                for name in entry.names + tuple(n for e, n in entry.end_names if e == end):
                    assert (end, name) not in seen, f"{name} at {end}: two rows"
                    seen[(end, name)] = entry.names[0]
    for entry in _every_entry():
        assert set(entry.ends) <= set(jax_api.ENDS)
        assert all(end in entry.ends for end, _ in entry.end_names), entry.names[0]


def test_rows_are_well_formed() -> None:
    for row in jax_api.ROWS:
        assert row.args, row.names[0]
        for arg in row.args:
            assert (arg.role is Role.RULE) == (arg.when is not None), row.names[0]
            assert arg.variadic in ("", "*", "**"), row.names[0]
            assert arg.position is not None or arg.keyword is not None, row.names[0]
        if row.rule_methods:
            for method in row.rule_methods:
                rules = jax_api.row(f"{row.names[0]}.{method}")
                assert rules is not None and rules.kind is Kind.METHOD, f"{row.names[0]}.{method}"
        assert (row.platforms_argument is not None) == any(
            a.role is Role.LOWERS for a in row.args
        ), row.names[0]


# --------------------------------------------------------------------------- old lists


def _keeps(name: str) -> bool:
    found = jax_api.row(name)
    if found is not None:
        return any(a.role is Role.KEEPS and a.position == 0 for a in found.args)
    entry = jax_api.context(name)
    return entry is not None and entry.decorates


def test_the_old_lists_are_in_the_table() -> None:
    stale = set(STALE_OLD_NAMES)
    old_keepers = OLD_KEEPS_FUNCTION - stale
    assert old_keepers <= jax_api.KEEPS_FUNCTION
    assert all(_keeps(name) for name in old_keepers)
    assert OLD_CONFIGURED_KEEPERS <= jax_api.CONFIGURED_KEEPERS
    for name in OLD_CONFIGURED_KEEPERS:
        found = jax_api.row(name)
        assert (found is not None and found.configured) or jax_api.context(name) is not None
    assert fullnames.PLATFORM_TAG <= jax_api.CONFIGURED_KEEPERS
    assert OLD_CUSTOM_DERIVATIVES <= jax_api.CUSTOM_DERIVATIVES
    assert OLD_DERIVATIVE_RULES <= jax_api.DERIVATIVE_RULES
    assert OLD_DIFFERENTIATING <= jax_api.DIFFERENTIATING
    assert OLD_DIFFERENTIATING_CALLS <= jax_api.DIFFERENTIATING_CALLS
    assert OLD_METHOD_KEEPERS <= jax_api.METHOD_KEEPERS
    assert OLD_CLASS_KEEPERS <= jax_api.CLASS_KEEPERS
    assert OLD_DATACLASS_DECORATORS <= jax_api.DATACLASS_DECORATORS
    assert OLD_INTERPRET_CONTEXTS - stale <= jax_api.INTERPRET_CONTEXTS
    assert fullnames.PLATFORM_DEPENDENT.issubset(jax_api.names_with(Role.PER_PLATFORM))
    partial = jax_api.row(fullnames.FUNCTOOLS_PARTIAL)
    assert partial is not None and partial.binds


def test_the_engine_reads_its_lists_from_the_table() -> None:
    """One source of truth: the engine's views are the table's."""
    assert program.TRACED_ARGUMENTS is jax_api.TRACED_ARGUMENTS
    assert program.INTERPRET_CONTEXTS is jax_api.INTERPRET_CONTEXTS
    assert not hasattr(fullnames, "KEEPS_FUNCTION")


def test_the_old_traced_arguments_are_in_the_table() -> None:
    """Every (position, keyword) of the old ``program.TRACED_ARGUMENTS`` is a function
    argument the call runs right away: traced (``CALLS_NOW``), or called for each item
    (``CALLS_EACH``: ``associative_scan`` calls nothing under two elements)."""
    for name, traced in OLD_TRACED_ARGUMENTS.items():
        if name in STALE_OLD_NAMES:
            continue
        args = {(a.position, a.keyword): a.role for a in jax_api.function_arguments(name)}
        for where in traced:
            assert args.get(where) in (Role.CALLS_NOW, Role.CALLS_EACH), (name, where)


def test_stale_old_names_are_not_what_the_lists_took_them_for() -> None:
    for stale, meant in STALE_OLD_NAMES.items():
        assert jax_api.row(stale) is None and jax_api.context(stale) is None, stale
        obj = resolve(meant)
        assert obj is not None, meant
        assert resolve(stale) is not obj, f"{stale} is {meant} here: add it to its row"


# --------------------------------------------------------------------------- lookups


def test_lookups_fire_on_jax_names() -> None:
    cond = jax_api.row("jax._src.lax.control_flow.conditionals.cond")
    assert cond is not None and cond is jax_api.row("jax.lax.cond")
    assert [(a.position, a.keyword) for a in cond.args] == [(1, "true_fun"), (2, "false_fun")]
    assert jax_api.function_arguments("jax.tree.map", Role.CALLS_EACH) == (
        Arg(0, "f", Role.CALLS_EACH, operands=("1.", "*2."), each_leaf_of=1),
    )
    assert jax_api.function_arguments("jax.vmap", Role.KEEPS, end=END) == (
        Arg(0, "fun", Role.KEEPS),
    )
    defvjp = jax_api.row("jax._src.custom_derivatives.custom_vjp.defvjp")
    assert defvjp is not None and {a.when for a in defvjp.args} == {When.DIFFERENTIATION}
    grad = jax_api.row("jax.grad")
    assert grad is not None and grad.differentiates
    named_scope = jax_api.context("jax.named_scope")
    assert named_scope is not None and named_scope.decorates
    interpret = jax_api.context("jax.experimental.pallas.tpu.force_tpu_interpret_mode")
    assert interpret is not None and interpret.effect is jax_api.Effect.INTERPRETS
    dataclass = jax_api.class_decorator("dataclasses.dataclass")
    assert dataclass is not None and dataclass.makes_dataclass
    assert "jax.lax.scan" in jax_api.TRACED_ARGUMENTS
    assert "jax.tree.map" in jax_api.names_with(Role.CALLS_EACH)
    assert "jax.eval_shape" in jax_api.names_with(Role.TRACES_ONLY)


def test_a_name_at_one_end_is_found_only_there() -> None:
    prefetch = "jax.experimental.pallas.tpu.emit_pipeline_with_async_prefetch"
    assert jax_api.row(prefetch, jax_api.NEW) is not None
    assert jax_api.row(prefetch, jax_api.OLD) is None
    compute_on = "jax.experimental.compute_on.compute_on"
    assert jax_api.row(compute_on, jax_api.NEW) is not None
    assert jax_api.context(compute_on, jax_api.OLD) is not None
    assert jax_api.row(compute_on, jax_api.OLD) is None


@pytest.mark.parametrize(
    "name",
    ["numpy.sum", "jax.numpy.sum", "jax.lax.add", "jax.devices", "mylib.jit", "cond", ""],
)
def test_lookups_stay_silent_on_other_names(name: str) -> None:
    assert jax_api.row(name) is None
    assert jax_api.function_arguments(name) == ()
    assert jax_api.context(name) is None
    assert jax_api.class_decorator(name) is None
    assert name not in jax_api.KEEPS_FUNCTION
    assert name not in jax_api.TRACED_ARGUMENTS


def test_end_of() -> None:
    assert jax_api.end_of((0, 10, 2)) == jax_api.OLD
    assert jax_api.end_of((0, 12, 0, 1)) == jax_api.NEW
    assert jax_api.end_of((0, 11, 0)) is None
    assert jax_api.end_of((0, 13)) is None


# --------------------------------------------------------------------------- imports


def test_importing_the_table_imports_no_jax() -> None:
    code = (
        "import sys\n"
        "import typed_pallas_mypy.inference.jax_api\n"
        "print(sorted(m for m in sys.modules if m.split('.')[0] in ('jax', 'jaxlib', 'mypy')))\n"
    )
    completed = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True
    )
    assert completed.stdout.strip() == "[]", completed.stdout


# --------------------------------------------------------------------------- operands


_A = jnp.zeros((2, 3))
_B = jnp.zeros((4,))
_XS = jnp.zeros((5, 4))


def _recorder(seen: list[tuple[object, ...]], result: object = None) -> object:
    """A function that records the shapes of what it is called with; it returns its first
    argument (``result`` when given)."""

    def record(*args: object) -> object:
        seen.append(tuple(jnp.shape(a) for a in args))  # type: ignore[arg-type]
        return args[0] if result is None else result

    return record


def _scan_step(seen: list[tuple[object, ...]]) -> object:
    def step(carry: object, x: object) -> object:
        seen.append((jnp.shape(carry), jnp.shape(x)))  # type: ignore[arg-type]
        return carry, x

    return step


#: a call of each row whose function arguments say their operands: (the call's
#: positional arguments, with the recorded functions in place, built from a list that
#: collects what they were called with)
OPERAND_CALLS: Final = {
    "jax.lax.cond": lambda seen: (True, _recorder(seen), _recorder(seen), _A, _B),
    "jax.lax.switch": lambda seen: (0, [_recorder(seen), _recorder(seen)], _A, _B),
    "jax.lax.fori_loop": lambda seen: (0, 1, lambda i, v: _recorder(seen, v)(i, v), _A),
    "jax.lax.while_loop": lambda seen: (_recorder(seen, False), _recorder(seen), _A),
    "jax.lax.scan": lambda seen: (_scan_step(seen), _A, _XS),
    "jax.lax.map": lambda seen: (_recorder(seen), _XS),
    "jax.tree.map": lambda seen: (_recorder(seen), {"a": _A, "b": _B}, {"a": _A, "b": _B}),
    "jax.tree_util.tree_map": lambda seen: (_recorder(seen), [_A, _B]),
    "jax.tree.map_with_path": lambda seen: (_path_recorder(seen), {"a": _A, "b": _B}),
    "jax.tree_util.tree_map_with_path": lambda seen: (_path_recorder(seen), [_A, _B], [_A, _B]),
    "jax.lax.custom_root": lambda seen: (lambda v: v - _B, _B, _solver(seen), lambda g, y: y),
    "jax.lax.custom_linear_solve": lambda seen: (
        lambda v: v,
        _B,
        _solver(seen),
        lambda vecmat, r: r,
    ),
}


def _solver(seen: list[tuple[object, ...]]) -> object:
    """A solver's ``solve(f, b)``: it records the shapes (None for the function JAX
    makes) and returns ``b``."""

    def solve(f: object, b: jax.Array) -> jax.Array:
        seen.append((None if callable(f) else jnp.shape(f), jnp.shape(b)))  # type: ignore[arg-type]
        return b

    return solve


def _path_recorder(seen: list[tuple[object, ...]]) -> object:
    def record(path: object, *leaves: object) -> object:
        assert isinstance(path, tuple)  # a key path
        seen.append((None, *(jnp.shape(a) for a in leaves)))  # type: ignore[arg-type]
        return leaves[0]

    return record


def _leaf_calls(spec: tuple[str, ...], call: tuple[object, ...], each: int) -> list[object]:
    """The shapes of each call ``Arg.operands`` says a per-leaf function gets from ``call``,
    one per leaf of ``call[each]``, in order (None: "?")."""
    per_tree = {i: jax.tree_util.tree_leaves(a) for i, a in enumerate(call) if i >= each}
    out: list[object] = []
    for leaf in range(len(per_tree[each])):
        shapes: list[object] = []
        for part in spec:
            if part == "?":
                shapes.append(None)
            elif part.startswith("*"):
                start = int(part[1:-1])
                shapes.extend(jnp.shape(per_tree[i][leaf]) for i in per_tree if i >= start)
            else:
                shapes.append(jnp.shape(per_tree[int(part[:-1])][leaf]))
        out.append(tuple(shapes))
    return out


def _expected_shapes(spec: tuple[str, ...], call: tuple[object, ...]) -> tuple[object, ...] | None:
    """The shapes ``Arg.operands`` says the function gets from ``call`` (None: "?")."""
    shapes: list[object] = []
    for part in spec:
        if part.startswith("="):
            continue  # a keyword argument: these calls pass none
        if part == "?":
            shapes.append(None)
        elif part.startswith("*"):
            shapes.extend(jnp.shape(a) for a in call[int(part[1:]) :])  # type: ignore[arg-type]
        elif part.endswith("[]"):
            shapes.append(jnp.shape(call[int(part[:-2])])[1:])  # type: ignore[arg-type]
        else:
            shapes.append(jnp.shape(call[int(part)]))  # type: ignore[arg-type]
    return tuple(shapes)


def _agree(expected: tuple[object, ...] | None, shapes: tuple[object, ...]) -> bool:
    return (
        expected is not None
        and len(expected) == len(shapes)
        and all(want is None or want == got for want, got in zip(expected, shapes, strict=True))
    )


def test_every_row_that_says_its_operands_is_proven_by_a_call() -> None:
    said = {row.names[0] for row in jax_api.ROWS for a in row.args if a.operands is not None}
    assert said == set(OPERAND_CALLS)


@pytest.mark.parametrize("name", sorted(OPERAND_CALLS))
def test_operands_are_what_jax_passes(name: str) -> None:
    """Each function the row's call is given is called (traced) by JAX with what its
    ``Arg.operands`` says, argument by argument: same count, same shapes."""
    row = jax_api.row(name)
    assert row is not None
    seen: list[tuple[object, ...]] = []
    call = OPERAND_CALLS[name](seen)
    jax.jit(lambda: resolve(name)(*call)).lower()  # type: ignore[misc]
    assert seen, f"{name} called nothing"
    per_leaf = [a for a in row.args if a.each_leaf_of is not None]
    if per_leaf:
        arg = per_leaf[0]
        assert arg.operands is not None and arg.each_leaf_of is not None
        expected = _leaf_calls(arg.operands, call, arg.each_leaf_of)
        assert sorted(map(repr, seen)) == sorted(map(repr, expected)), (name, seen, expected)
        return
    specs = [a.operands for a in row.args if a.operands is not None]
    for shapes in seen:
        assert any(_agree(_expected_shapes(spec, call), shapes) for spec in specs), (
            f"{name}: called with shapes {shapes}, the row says {specs}"
        )


def test_the_operands_check_can_fail() -> None:
    seen: list[tuple[object, ...]] = []
    call = OPERAND_CALLS["jax.lax.scan"](seen)
    jax.jit(lambda: jax.lax.scan(*call)).lower()  # type: ignore[misc]
    assert seen and not _agree(_expected_shapes(("1", "2"), call), seen[0])  # whole xs: wrong
    assert not _agree(_expected_shapes(("1",), call), seen[0])  # one argument: wrong


def test_a_loop_whose_bounds_are_empty_lowers_nothing_of_its_body() -> None:
    """``Arg.bounds``: ``lax.fori_loop(lower, upper, ...)`` with ``upper <= lower`` known
    lowers nothing its body does (JAX may still trace it, for its types)."""
    row = jax_api.row("jax.lax.fori_loop")
    assert row is not None and [a.bounds for a in row.args] == [(0, 1)]

    def body(i: object, v: jax.Array) -> jax.Array:
        return jnp.sin(v)

    def lowered(lower: int, upper: int) -> str:
        return jax.jit(lambda x: jax.lax.fori_loop(lower, upper, body, x)).lower(_A).as_text()

    assert "sine" in lowered(0, 1)
    assert "sine" not in lowered(0, 0)
    assert "sine" not in lowered(3, 1)


@pytest.mark.parametrize("name", ["jax.tree.reduce", "jax.tree_util.tree_reduce"])
def test_a_tree_reduction_folds_its_leaves_as_functools_reduce(name: str) -> None:
    """``Arg.reduces``: once per leaf after the first; once per leaf with an initializer."""
    row = jax_api.row(name)
    assert row is not None and [a.reduces for a in row.args if a.each_leaf_of] == [True]
    reduce = resolve(name)
    assert reduce is not None
    seen: list[object] = []

    def fold(a: object, b: object) -> object:
        seen.append(b)
        return b

    reduce(fold, [_A, _B, _A])  # type: ignore[operator]
    assert len(seen) == 2
    seen.clear()
    reduce(fold, [_A])  # type: ignore[operator]
    assert seen == []
    seen.clear()
    reduce(fold, [_A], _B)  # type: ignore[operator]
    assert len(seen) == 1


# --------------------------------------------------------------------------- counts and results


def _counter(seen: list[object], result: object = None) -> object:
    """A function that records that it was called; it returns its first argument (or
    ``result``)."""

    def record(*args: object, **kwargs: object) -> object:
        seen.append(args)
        return args[0] if result is None else result

    return record


def test_a_function_called_once_per_item_of_a_sequence() -> None:
    """``Arg.each_item_of``: ``jnp.apply_over_axes`` calls its function once per axis
    listed, never for an empty list."""
    row = jax_api.row("jax.numpy.apply_over_axes")
    assert row is not None and [a.each_item_of for a in row.args] == [2]
    seen: list[object] = []
    jnp.apply_over_axes(_counter(seen), _A, [0, 1])  # type: ignore[arg-type]
    assert len(seen) == 2
    seen.clear()
    jnp.apply_over_axes(_counter(seen), _A, [])  # type: ignore[arg-type]
    assert seen == []


def test_a_function_called_once_per_axis_of_an_array() -> None:
    """``Arg.each_axis_of``: ``jnp.pad`` with a callable ``mode`` calls it once per axis."""
    row = jax_api.row("jax.numpy.pad")
    assert row is not None and [a.each_axis_of for a in row.args] == [0]
    seen: list[object] = []

    def mode(vector: jax.Array, pad_width: object, iaxis: int, kwargs: object) -> jax.Array:
        seen.append(iaxis)
        return vector

    jnp.pad(_A, 1, mode=mode)  # type: ignore[arg-type]
    assert sorted(seen) == [0, 1]  # type: ignore[type-var]


def test_a_function_that_combines_along_the_leading_axis() -> None:
    """``Arg.combines_along``: ``lax.associative_scan`` calls its function when the
    scanned axis has two or more elements, never with fewer."""
    row = jax_api.row("jax.lax.associative_scan")
    assert row is not None and [a.combines_along for a in row.args] == [1]
    seen: list[object] = []
    jax.lax.associative_scan(lambda a, b: _counter(seen)(a + b), jnp.zeros((2, 3)))
    assert seen
    seen.clear()
    jax.lax.associative_scan(lambda a, b: _counter(seen)(a + b), jnp.zeros((1, 3)))
    assert seen == []


def test_a_tree_reduction_in_pairs_calls_once_per_leaf_after_the_first() -> None:
    for name in ("jax.tree.reduce_associative", "jax.tree_util.tree_reduce_associative"):
        row = jax_api.row(name)
        assert row is not None and [a.reduces for a in row.args if a.each_leaf_of] == [True]
        reduce = resolve(name)
        assert reduce is not None
        seen: list[object] = []
        reduce(lambda a, b: _counter(seen)(a + b), (_A, _A, _A))  # type: ignore[operator]
        assert len(seen) == 2
        seen.clear()
        reduce(lambda a, b: _counter(seen)(a + b), (_A,))  # type: ignore[operator]
        assert seen == []


def _is_leaf_rows() -> list[tuple[str, Arg]]:
    return [
        (row.names[0], arg)
        for row in jax_api.ROWS
        for arg in row.args
        if arg.keyword == "is_leaf" and row.names[0] in _IS_LEAF_CALLS
    ]


#: a call of each row taking ``is_leaf``, given ``is_leaf`` (a one-array tree: ``_A``)
_IS_LEAF_CALLS: Final = {
    "jax.tree.map": lambda f: jax.tree.map(lambda v: v, _A, is_leaf=f),
    "jax.tree.map_with_path": lambda f: jax.tree.map_with_path(lambda p, v: v, _A, is_leaf=f),
    "jax.tree_util.tree_map": lambda f: jax.tree_util.tree_map(lambda v: v, _A, is_leaf=f),
    "jax.tree_util.tree_map_with_path": lambda f: jax.tree_util.tree_map_with_path(
        lambda p, v: v, _A, is_leaf=f
    ),
    "jax.tree.reduce": lambda f: jax.tree.reduce(lambda a, b: a, _A, is_leaf=f),
    "jax.tree_util.tree_reduce": lambda f: jax.tree_util.tree_reduce(lambda a, b: a, _A, is_leaf=f),
    "jax.tree.reduce_associative": lambda f: jax.tree.reduce_associative(
        lambda a, b: a, _A, is_leaf=f
    ),
    "jax.tree_util.tree_reduce_associative": lambda f: jax.tree_util.tree_reduce_associative(
        lambda a, b: a, _A, is_leaf=f
    ),
    "jax.tree.all": lambda f: jax.tree.all((True,), is_leaf=f),
    "jax.tree_util.tree_all": lambda f: jax.tree_util.tree_all((True,), is_leaf=f),
    "jax.tree.flatten": lambda f: jax.tree.flatten(_A, f),
    "jax.tree_util.tree_flatten": lambda f: jax.tree_util.tree_flatten(_A, f),
    "jax.tree.flatten_with_path": lambda f: jax.tree.flatten_with_path(_A, f),
    "jax.tree_util.tree_flatten_with_path": lambda f: jax.tree_util.tree_flatten_with_path(_A, f),
    "jax.tree.leaves": lambda f: jax.tree.leaves(_A, f),
    "jax.tree_util.tree_leaves": lambda f: jax.tree_util.tree_leaves(_A, f),
    "jax.tree.leaves_with_path": lambda f: jax.tree.leaves_with_path(_A, f),
    "jax.tree_util.tree_leaves_with_path": lambda f: jax.tree_util.tree_leaves_with_path(_A, f),
    "jax.tree.structure": lambda f: jax.tree.structure(_A, f),
    "jax.tree_util.tree_structure": lambda f: jax.tree_util.tree_structure(_A, f),
    "jax.tree.broadcast": lambda f: jax.tree.broadcast(_A, _A, f),
    "jax.tree_util.tree_broadcast": lambda f: jax.tree_util.tree_broadcast(_A, _A, f),
    "jax.tree_util.all_leaves": lambda f: jax.tree_util.all_leaves([_A], f),
}


def test_every_is_leaf_called_now_is_proven_by_a_call() -> None:
    said = {
        row.names[0]
        for row in jax_api.ROWS
        for arg in row.args
        if arg.keyword == "is_leaf" and arg.role is Role.CALLS_NOW
    }
    assert said == {name for name in _IS_LEAF_CALLS if END in jax_api.row(name).ends}  # type: ignore[union-attr]


@pytest.mark.parametrize("name", sorted(_IS_LEAF_CALLS))
def test_is_leaf_is_called_on_the_root_while_tracing(name: str) -> None:
    """Flattening calls ``is_leaf`` on the tree's root, with what the traced function
    holds (a tracer under ``jax.jit``): what it does is traced (``Role.CALLS_NOW``)."""
    row = jax_api.row(name)
    if row is None:
        pytest.skip(f"{name} is not at this end")
    seen: list[object] = []

    def is_leaf(node: object) -> bool:
        seen.append(node)
        return False

    jax.jit(lambda x: (_IS_LEAF_CALLS[name](is_leaf), x)[1]).lower(_A)
    assert seen, name


def test_is_leaf_is_called_on_each_node_from_the_root_down(monkeypatch: pytest.MonkeyPatch) -> None:
    """``Arg.each_node_of``: flattening calls ``is_leaf`` on the tree at that position,
    then on each child of a node it answered false for, depth first, leaves included;
    a node answered true is not looked into."""
    tree = {"a": [_A, _A], "b": (_A,)}
    rows = [
        (row, arg)
        for row in jax_api.ROWS
        if END in row.ends
        for arg in row.args
        if arg.each_node_of is not None
    ]
    assert {row.names[0] for row, _ in rows} == {
        name
        for name in _IS_LEAF_CALLS
        if END in jax_api.row(name).ends  # type: ignore[union-attr]
    }
    for row, _arg in rows:
        for stop_at_lists, expected in (
            (False, ["dict", "list", "Array", "Array", "tuple", "Array"]),
            (True, ["dict", "list", "tuple", "Array"]),
        ):
            seen: list[str] = []

            def is_leaf(node: object, stop: bool = stop_at_lists, seen: list[str] = seen) -> bool:
                seen.append("Array" if isinstance(node, jax.Array) else type(node).__name__)
                return stop and isinstance(node, list)

            monkeypatch.setattr(sys.modules[__name__], "_A", tree)
            call = {
                **_IS_LEAF_CALLS,
                "jax.tree.all": lambda f: jax.tree.all(_A, is_leaf=f),
                "jax.tree_util.tree_all": lambda f: jax.tree_util.tree_all(_A, is_leaf=f),
            }[row.names[0]]
            # what the row does with the leaves after flattening is not asked here
            with contextlib.suppress(Exception):
                call(is_leaf)
            if row.names[0] == "jax.tree_util.all_leaves":
                # the list made of the iterable is the root (a list: answered true, it stops)
                expected = ["list"] if stop_at_lists else ["list", *expected]
            assert seen[: len(expected)] == expected, row.names[0]


def _lowers_cosine(f: object, *args: object) -> bool:
    """Whether ``f`` jitted and lowered for ``args`` lowers a cosine (a marker op)."""
    return "cosine" in jax.jit(f).lower(*args).as_text()  # type: ignore[arg-type]


@jax.custom_vjp
def _vjp_op(x: jax.Array) -> jax.Array:
    return x * 2.0


def _vjp_fwd(x: jax.Array) -> tuple[jax.Array, None]:
    return x * 2.0, None


def _vjp_bwd(res: None, g: jax.Array) -> tuple[jax.Array]:
    return (jnp.cos(g),)


_vjp_op.defvjp(_vjp_fwd, _vjp_bwd)


@jax.custom_jvp
def _jvp_op(x: jax.Array) -> jax.Array:
    return x * 2.0


@_jvp_op.defjvp
def _jvp_rule(primals: tuple[jax.Array], tangents: tuple[jax.Array]) -> tuple[jax.Array, jax.Array]:
    return primals[0] * 2.0, tangents[0] * jnp.cos(primals[0])


def test_a_derivative_call_returns_a_tuple_with_its_derivative_callable() -> None:
    """``ApiRow.result_items`` / ``derivative_index`` / ``derivative_transposes``: the
    returned tuple's length (one more with ``has_aux``); what the derivative rules do is
    lowered when the item at ``derivative_index`` is called, not by the call alone: a
    ``custom_vjp``'s ``bwd`` rule where the row says it transposes, a ``custom_jvp``'s
    tangent work where it does not."""
    x = jnp.ones(3)
    cases = {"jax.vjp": _vjp_op, "jax.linearize": _jvp_op, "jax.fwd_and_bwd": _vjp_op}
    for name, op in cases.items():
        row = jax_api.row(name)
        assert row is not None and row.result_items == 2 and row.derivative_index == 1
        assert row.derivative_transposes == (op is _vjp_op), name
        call = resolve(name)
        assert callable(call)
        if name == "jax.fwd_and_bwd":
            assert len(call(op, argnums=0)) == row.result_items

            def alone(v: jax.Array, call: object = call, op: object = op) -> object:
                return call(op, argnums=0)[0](v)[0]  # type: ignore[operator]

            def derived(v: jax.Array, call: object = call, op: object = op) -> object:
                fwd, bwd = call(op, argnums=0)  # type: ignore[operator]
                out, res = fwd(v)
                return bwd(res, out)

        else:
            assert len(call(op, x)) == row.result_items

            def alone(v: jax.Array, call: object = call, op: object = op) -> object:
                return call(op, v)[0]  # type: ignore[operator]

            def derived(v: jax.Array, call: object = call, op: object = op) -> object:
                return call(op, v)[1](v)  # type: ignore[operator]

        assert not _lowers_cosine(alone, x), name
        assert _lowers_cosine(derived, x), name
    assert len(jax.vjp(lambda v: (v, v), x, has_aux=True)) == 3


def test_a_closure_conversion_returns_the_function_and_its_constants() -> None:
    row = jax_api.row("jax.closure_convert")
    assert row is not None and row.result_items == 2 and row.result_index == 0
    made = jax.closure_convert(jnp.cos, _A)
    assert len(made) == 2 and callable(made[0])
    assert _lowers_cosine(lambda x: made[0](x, *made[1]), _A)


def test_a_jaxpr_runs_what_its_function_traced_when_evaluated() -> None:
    """``ApiRow.returns_jaxpr``: ``make_jaxpr(f)(x)`` is a jaxpr of ``f``; evaluating it
    (``jaxpr_as_fun``, ``core.eval_jaxpr`` of its ``.jaxpr``) lowers what ``f`` traced."""
    import jax.core
    import jax.extend.core

    row = jax_api.row("jax.make_jaxpr")
    assert row is not None and row.returns_jaxpr
    closed = jax.make_jaxpr(jnp.cos)(_A)
    as_fun = jax_api.row("jax.extend.core.jaxpr_as_fun")
    assert as_fun is not None and as_fun.binds
    assert _lowers_cosine(lambda x: jax.extend.core.jaxpr_as_fun(closed)(x)[0], _A)
    evaluate = jax_api.row("jax.core.eval_jaxpr")
    assert evaluate is not None
    assert _lowers_cosine(lambda x: jax.core.eval_jaxpr(closed.jaxpr, closed.consts, x)[0], _A)
    assert not _lowers_cosine(lambda x: (jax.make_jaxpr(jnp.cos)(x), x)[1], _A)


def test_an_index_update_applies_its_function_now() -> None:
    row = jax_api.row("jax._src.numpy.array_methods._IndexUpdateRef.apply")
    assert row is not None and row.kind is Kind.METHOD
    assert _lowers_cosine(lambda x: x.at[0, 0].apply(jnp.cos), _A)


@pytest.mark.parametrize(
    ("name", "rule", "when"),
    [
        ("jax.lax.custom_root", "tangent_solve", When.DIFFERENTIATION),
        ("jax.lax.custom_linear_solve", "transpose_solve", When.TRANSPOSITION),
    ],
)
def test_a_rule_is_lowered_under_the_transformation_that_asks_for_it(
    name: str, rule: str, when: When
) -> None:
    """``Role.RULE``: JAX may trace the rule at once (both of these do), but lowers what
    it does only under the transformation (``jax.grad`` differentiates and transposes)."""
    row = jax_api.row(name)
    assert row is not None
    assert [a.when for a in row.args if a.keyword == rule] == [when]

    def run(b: jax.Array) -> jax.Array:
        if name == "jax.lax.custom_root":
            return jax.lax.custom_root(
                lambda v: v - b, b, lambda f, x0: x0, lambda g, y: y * jnp.cos(b)
            )
        return jax.lax.custom_linear_solve(
            lambda v: v, b, lambda matvec, r: r, lambda vecmat, r: r * jnp.cos(b)
        )

    assert not _lowers_cosine(run, _B)
    assert _lowers_cosine(jax.grad(lambda v: run(v).sum()), _B)


def test_what_a_function_read_by_python_traces_is_dead_code() -> None:
    """``Arg.read_by_python``: ``is_leaf`` (and a sort key) answer Python, not the
    program: what they trace is not lowered (JAX drops it; a Pallas kernel from
    ``_platforms.DEAD_KERNELS_DROPPED_FROM`` on, ``test_platforms`` proves that end)."""
    marked = {
        (row.names[0], arg.keyword)
        for row in jax_api.ROWS
        for arg in row.args
        if arg.read_by_python
    }
    assert {name for name, _ in marked} >= set(_IS_LEAF_CALLS) - {
        name for name in _IS_LEAF_CALLS if jax_api.row(name) is None
    }
    assert {("builtins.sorted", "key"), ("builtins.min", "key"), ("builtins.max", "key")} <= marked
    assert not _lowers_cosine(
        lambda x: jax.tree.map(lambda v: v + 1, x, is_leaf=lambda v: jnp.cos(v) is not None), _A
    )
    assert _lowers_cosine(lambda x: jax.tree.map(jnp.cos, x, is_leaf=lambda v: v is not None), _A)


#: what each ``ApiRow.iterator`` kind gives for the items ``[3, 0, 2]`` (``starmap``: for
#: ``[(1, 2), (3, 4)]``), with ``f`` doubling (``map``), the identity (the filters),
#: multiplying (``starmap``) and adding (``accumulate``), from the documentation
_ITERATOR_RESULTS: Final = {
    "map": [6, 0, 4],
    "filter": [3, 2],
    "filterfalse": [0],
    "takewhile": [3],
    "dropwhile": [0, 2],
    "starmap": [2, 12],
    "accumulate": [3, 3, 5],
}
_ITERATOR_FUNCTIONS: Final = {
    "map": lambda v: v * 2,
    "starmap": lambda a, b: a * b,
    "accumulate": lambda a, b: a + b,
}


def test_an_iterator_row_calls_its_function_as_its_items_are_taken() -> None:
    """``ApiRow.iterator``: nothing is called until the items are taken; then they are
    what the kind says."""
    rows = [row for row in jax_api.ROWS if row.iterator is not None]
    assert {row.iterator for row in rows} == set(_ITERATOR_RESULTS)
    for row in rows:
        kind = row.iterator
        assert kind is not None
        (arg,) = [a for a in row.args if a.each_item_of is not None]
        items: list[object] = [(1, 2), (3, 4)] if kind == "starmap" else [3, 0, 2]
        seen: list[object] = []
        function = _ITERATOR_FUNCTIONS.get(kind, lambda v: v)

        def record(*args: object, function: object = function, seen: list[object] = seen) -> object:
            seen.append(args)
            return function(*args)  # type: ignore[operator]

        call_args: list[object] = [None, None]
        call_args[arg.each_item_of] = items  # type: ignore[index]
        call_args[arg.position] = record  # type: ignore[index]
        made = resolve(row.names[0])(*call_args)  # type: ignore[operator]
        assert seen == [], row.names[0]
        assert list(made) == _ITERATOR_RESULTS[kind], row.names[0]
        assert seen, row.names[0]


def test_an_operand_passed_by_keyword_is_what_jax_passes() -> None:
    """``Arg.operands``' ``"=NAME"``: ``lax.cond(p, f, g, operand=x)`` calls ``f(x)``."""
    row = jax_api.row("jax.lax.cond")
    assert row is not None and all("=operand" in (a.operands or ()) for a in row.args)
    seen: list[tuple[object, ...]] = []
    jax.jit(lambda x: jax.lax.cond(True, _recorder(seen), _recorder(seen), operand=x)).lower(_A)
    assert seen and all(shapes == (jnp.shape(_A),) for shapes in seen)


def test_pytrees_are_what_the_evaluator_takes_them_for() -> None:
    """``evaluator.pytrees``' model of JAX's pytrees: ``None`` has no leaf, a dict's
    children come in the order of its sorted keys, a function is a leaf, and a class
    registered by ``register_pytree_node_class`` (``ClassDecoratorRow.registers_node``) is
    flattened by its ``tree_flatten`` and rebuilt by its ``tree_unflatten``."""
    assert jax.tree.leaves([None, 1]) == [1]
    assert jax.tree.leaves({"b": 2, "a": 1}) == [1, 2]
    assert jax.tree.leaves([jnp.sin]) == [jnp.sin]
    row = jax_api.class_decorator("jax.tree_util.register_pytree_node_class")
    assert row is not None and row.registers_node

    @jax.tree_util.register_pytree_node_class
    class Box:
        def __init__(self, fn: object, value: object) -> None:
            self.fn, self.value = fn, value

        def tree_flatten(self) -> tuple[tuple[object, ...], object]:
            return (self.value,), self.fn

        @classmethod
        def tree_unflatten(cls, fn: object, children: tuple[object, ...]) -> Box:
            return cls(fn, *children)

    assert jax.tree.leaves(Box(jnp.sin, 3)) == [3]
    assert jax.tree.map(lambda v: v + 1, Box(jnp.sin, 3)).fn is jnp.sin
    leaves, treedef = jax.tree.flatten({"fn": jnp.sin})
    assert jax.tree.unflatten(treedef, leaves)["fn"] is jnp.sin


def test_registered_nodes_flatten_and_rebuild_as_the_evaluator_takes_them() -> None:
    """``evaluator.pytrees.Registration``: ``register_pytree_node`` and
    ``register_pytree_with_keys`` flatten by the functions given; ``register_dataclass``
    (decorator: static fields by their metadata; call: the fields named) keeps its meta
    fields through a rebuild; ``register_static`` has no leaf; a node's registration is
    its exact class's; key paths are written by ``keystr`` as the evaluator writes them."""
    for kind, row_name in (
        (jax_api.NODE_METHODS_WITH_KEYS, "jax.tree_util.register_pytree_with_keys_class"),
        (jax_api.NODE_FIELDS, "jax.tree_util.register_dataclass"),
        (jax_api.NODE_STATIC, "jax.tree_util.register_static"),
    ):
        row = jax_api.class_decorator(row_name)
        assert row is not None and row.registers_node == kind

    class Box:
        def __init__(self, fn: object, value: object) -> None:
            self.fn, self.value = fn, value

    class Sub(Box):
        pass

    jax.tree_util.register_pytree_node(
        Box, lambda b: ((b.value,), b.fn), lambda fn, children: Box(fn, *children)
    )
    assert jax.tree.leaves(Box(jnp.sin, 3)) == [3]
    assert jax.tree.map(lambda v: v + 1, Box(jnp.sin, 3)).fn is jnp.sin
    sub = Sub(jnp.sin, 3)  # a subclass is not registered with its base: a leaf
    assert jax.tree.leaves(sub) == [sub]

    class Keyed:
        def __init__(self, value: object) -> None:
            self.value = value

    jax.tree_util.register_pytree_with_keys(
        Keyed,
        lambda k: (((jax.tree_util.GetAttrKey("value"), k.value),), None),
        lambda _aux, children: Keyed(*children),
    )
    [(path, leaf)] = jax.tree_util.tree_leaves_with_path(Keyed(4))
    assert (jax.tree_util.keystr(path), leaf) == (".value", 4)

    @jax.tree_util.register_dataclass
    @dataclasses.dataclass
    class Op:
        value: object
        fn: object = dataclasses.field(default=None, metadata=dict(static=True))

    assert jax.tree.leaves(Op(5, jnp.sin)) == [5]
    assert jax.tree.map(lambda v: v + 1, Op(5, jnp.sin)).fn is jnp.sin

    @jax.tree_util.register_static
    class Config:
        pass

    config = Config()
    assert jax.tree.leaves([config]) == []
    assert jax.tree.map(lambda v: v, [config])[0] is config
    paths = [jax.tree_util.keystr(p) for p, _ in jax.tree_util.tree_leaves_with_path({"w": [1]})]
    assert paths == ["['w'][0]"]
    assert jax.tree.all({"a": True, "b": [1]}) and not jax.tree.all([True, 0])


@pytest.mark.parametrize(
    ("name", "make"),
    [
        ("jax.jit", lambda f: jax.jit(f)),
        ("jax.vmap", lambda f: jax.vmap(f)),
        ("jax.checkpoint", lambda f: jax.checkpoint(f)),
        ("jax.named_call", lambda f: jax.named_call(f)),
        ("jax.grad", lambda f: jax.grad(f)),
        ("jax.numpy.vectorize", lambda f: jnp.vectorize(f)),
        ("jax.custom_vjp", lambda f: jax.custom_vjp(f)),
        ("jax.custom_jvp", lambda f: jax.custom_jvp(f)),
        ("jax.custom_batching.custom_vmap", lambda f: jax.custom_batching.custom_vmap(f)),
        ("jax.tree_util.Partial", lambda f: jax.tree_util.Partial(f)),
        ("functools.cache", lambda f: functools.cache(f)),
        ("functools._lru_cache_wrapper", lambda f: functools.lru_cache(f)),
    ],
)
def test_what_a_row_keeps_binds_as_a_method_when_it_has_get(name: str, make: object) -> None:
    """``ApiRow.result_binds``: a function (or an object whose class has ``__get__``)
    looked up on an instance is bound to it; ``jax.custom_vjp``'s object is not."""
    row = jax_api.row(name)
    assert row is not None, name
    made = make(lambda x: x)  # type: ignore[operator]
    assert row.binds_as_method == hasattr(type(made), "__get__"), name


def test_fusible_calls_its_function_with_fusions_and_no_output_fusion() -> None:
    """``ApiRow.fusion_operands``: ``fuser.fusible(f)(x)`` outside ``fuser.fuse`` calls
    ``f(x_fusion, None)``, where ``x_fusion()`` gives ``x``."""
    from jax.experimental.pallas import fuser

    row = jax_api.row("jax.experimental.pallas.fuser.fusible")
    assert row is not None and row.fusion_operands
    seen: list[object] = []

    @fuser.fusible
    def op(x_fusion: Any, out_fusion: Any) -> Any:
        seen.append(out_fusion)
        return jnp.cos(x_fusion())

    assert "cosine" in jax.jit(op).lower(_A).as_text()
    assert seen == [None]


@pytest.mark.parametrize(
    ("name", "items"),
    [
        ("jax.experimental.pallas.fuser.get_fusion_values", 3),
        ("jax.experimental.pallas.fuser.get_stateful_input_fusion_values", 3),
        ("jax.experimental.pallas.fuser.get_stateful_output_fusion_values", 4),
    ],
)
def test_fusion_values_give_a_callable_that_evaluates_the_traced_function(
    name: str, items: int
) -> None:
    """``ApiRow.replays``: the first item evaluates what the function traced with the
    call's other arguments, given the closed-over values (the second item)."""
    row = jax_api.row(name)
    assert row is not None and row.replays and (row.result_index, row.result_items) == (0, items)
    getter = getattr(
        importlib.import_module("jax.experimental.pallas.fuser"), name.rsplit(".", 1)[1]
    )

    def replayed(x: jax.Array) -> object:
        found = getter(jnp.cos, x)
        assert len(found) == items
        return found[0](found[1], x)

    assert _lowers_cosine(replayed, _A)


def test_compute_on_the_device_lowers_the_function_with_the_program() -> None:
    """``Arg.placed_by``: ``compute_on(f, compute_type="device")`` (``compute_on2`` at jax
    0.10) lowers ``f`` with the rest of the program, like ``Role.KEEPS``; other cores are
    taken as ``Role.HOST`` (the engine says nothing there)."""
    from jax.experimental import compute_on as module

    name = "compute_on" if END == jax_api.NEW else "compute_on2"
    row = jax_api.row(f"jax.experimental.compute_on.{name}", END)
    assert row is not None and [a.placed_by for a in row.args] == ["compute_type"]
    placed = getattr(module, name)(
        jnp.cos, compute_type="device", out_memory_spaces=jax.memory.Space.Device
    )
    assert _lowers_cosine(placed, _A)
