"""Whether a parameter passed as ``interpret=`` is kept off wherever its module runs the
function (``inference.interpret_uses``), read by the engine from source alone: the rule
the params check uses for ``pl.pallas_call(..., interpret=interpret)`` inside
``def f(x, interpret=False)``. Each form fires (kept off) and has a silent twin; the
plugin's cases are in ``tests/typecheck/test_interpret.yml``."""

from __future__ import annotations

import ast
import textwrap

import pytest

from typed_pallas_mypy.inference import reader

HEADER = """\
import functools
import jax
from jax.experimental import pallas as pl

def body(x_ref, o_ref):
    o_ref[...] = x_ref[...]

"""


def kept_off(source: str) -> tuple[str, str, str] | None:
    """What the engine answers for the ``interpret=`` name of the module's one entry call
    written ``interpret=interpret`` (the function named ``target``'s)."""
    text = HEADER + textwrap.dedent(source)
    sites = reader.sites(text.encode(), "m", False)
    assert sites is not None
    names = [
        keyword.value
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.FunctionDef) and node.name == "target"
        for call in ast.walk(node)
        if isinstance(call, ast.Call)
        for keyword in call.keywords
        if keyword.arg == "interpret" and isinstance(keyword.value, ast.Name)
    ]
    assert len(names) == 1, "the case must have one interpret= name in target"
    name = names[0]
    assert name.end_lineno is not None and name.end_col_offset is not None
    where = (name.lineno, name.col_offset, name.end_lineno, name.end_col_offset)
    return sites.interpret_kept_off(where)


KERNEL = "pl.pallas_call(body, out_shape=x, interpret=interpret)(x)"


def test_a_default_off_no_use_turns_on() -> None:
    source = f"""
        def target(x, interpret=False):
            return {KERNEL}

        def caller(x):
            return target(x) + target(x, interpret=False) + target(x, None)
        """
    assert kept_off(source) == ("default", "interpret", "target")


@pytest.mark.parametrize(
    "use",
    [
        "target(x, interpret=True)",
        "target(x, True)",
        "target(x, **options)",  # a splat may hold it
        "target(x, interpret=x.ndim > 3)",
        "functools.partial(target, interpret=True)(x)",
    ],
)
def test_a_default_off_turned_on_or_unknown_by_a_use_is_silent(use: str) -> None:
    source = f"""
        def target(x, interpret=False):
            return {KERNEL}

        def caller(x, **options):
            return {use}
        """
    assert kept_off(source) is None


@pytest.mark.parametrize(
    "header",
    [
        "def target(x, interpret=True):",  # on by default
        "def target(x, interpret=jax.config.interpret):",  # not known
        "def target(x, *interpret):",
    ],
)
def test_a_default_not_off_is_silent(header: str) -> None:
    source = f"""
        {header}
            return {KERNEL}
        """
    assert kept_off(source) is None


def test_a_rebound_parameter_is_silent() -> None:
    source = f"""
        def target(x, interpret=False):
            interpret = interpret or x.ndim > 3
            return {KERNEL}
        """
    assert kept_off(source) is None


def test_no_default_every_use_passes_off_through_callers_and_partials() -> None:
    source = f"""
        def target(x, interpret):
            return {KERNEL}

        def outer(x, *, interpret=False):
            return jax.vmap(functools.partial(target, interpret=interpret))(x)

        def direct(x):
            return target(x, False)
        """
    assert kept_off(source) == ("passed", "interpret", "target")


@pytest.mark.parametrize(
    "uses",
    [
        "mapped = jax.vmap(target)",  # a use not followed
        "bound = functools.partial(target)",  # the partial's calls pass it
        "def outer(x, interpret=True):\n    return target(x, interpret)",
    ],
)
def test_no_default_with_a_use_not_passing_off_is_silent(uses: str) -> None:
    source = f"""
        def target(x, interpret):
            return {KERNEL}

        def direct(x):
            return target(x, False)
        """
    assert kept_off(textwrap.dedent(source) + "\n" + uses + "\n") is None


def test_no_default_and_no_use_is_silent() -> None:
    source = f"""
        def target(x, interpret):
            return {KERNEL}
        """
    assert kept_off(source) is None  # a caller elsewhere decides


def test_keyword_only_parameters_are_not_matched_by_position() -> None:
    source = f"""
        def target(x, *, interpret=False):
            return {KERNEL}

        def caller(x):
            return target(x, True)  # not the parameter: a TypeError at run time
        """
    assert kept_off(source) == ("default", "interpret", "target")


def test_a_method_is_found_by_its_class() -> None:
    fires = f"""
        class Op:
            def target(self, x, interpret=False):
                return {KERNEL}

        def caller(op, x):
            return Op.target(op, x, interpret=False)
        """
    assert kept_off(fires) == ("default", "interpret", "target")
    assert kept_off(fires.replace("interpret=False)\n", "interpret=True)\n")) is None


def test_a_backward_rule_receives_the_primals_nondiff_arguments() -> None:
    source = f"""
        @functools.partial(jax.custom_vjp, nondiff_argnums=(1,))
        def primal(x, interpret=False):
            return x

        def primal_fwd(x, interpret):
            return x, None

        def target(interpret, res, x):
            return ({KERNEL},)

        primal.defvjp(primal_fwd, target)
        """
    assert kept_off(source) == ("passed", "interpret", "target")
    turned_on = textwrap.dedent(source) + "\ndef test(x):\n    return primal(x, True)\n"
    assert kept_off(turned_on) is None
    not_literal = source.replace("nondiff_argnums=(1,)", "nondiff_argnums=NONDIFF")
    assert kept_off("NONDIFF = (1,)\n" + textwrap.dedent(not_literal)) is None


def test_a_circle_of_uses_is_off_and_a_shadowed_name_is_silent() -> None:
    circle = f"""
        def target(x, interpret=False):
            if x.ndim > 3:
                return target(x[0], interpret)
            return {KERNEL}
        """
    assert kept_off(circle) == ("default", "interpret", "target")
    shadowed = textwrap.dedent(circle) + textwrap.dedent(
        """
        def other(x):
            target = make()
            return target(x, True)
        """
    )
    assert kept_off(shadowed) is None


def test_a_name_that_is_not_a_parameter_is_silent() -> None:
    source = f"""
        interpret = False

        def target(x):
            return {KERNEL}
        """
    assert kept_off(source) is None
