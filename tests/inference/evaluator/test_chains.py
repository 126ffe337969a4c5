"""The way from a finding's call to the kernel JAX refuses (``CallVerdict.chain``).

Each step is a function the call entered (itself, or through what it called for it:
``lax.cond`` runs its branches), with the line of that function's own call that ran the
kernel; the last step is the function whose call ran the kernel itself, at the kernel's
entry call when the kernel was made there. Functions nested in a step that did not run
the kernel (the other branch of a ``cond``) are not steps, and a call that is the
kernel's own entry call has no way to show. The plugin words each step as a note.
"""

from __future__ import annotations

import textwrap

from typed_pallas_mypy.inference.evaluator import call_verdict, run_function
from typed_pallas_mypy.inference.evaluator.machine import files_loader
from typed_pallas_mypy.inference.evaluator.verdict import CallVerdict, Link

OPS = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


def tpu_op(x):
    return pl.pallas_call(
        _body, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype), compiler_params=pltpu.CompilerParams()
    )(x)


def make():
    return pl.pallas_call(
        _body, out_shape=jax.ShapeDtypeStruct((8,), "float32"), compiler_params=pltpu.CompilerParams()
    )
"""

APP = """\
import functools
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
import ops


def helper(x):
    return ops.tpu_op(x)


def through_cond(x):
    return jax.lax.cond(x.sum() > 0, ops.tpu_op, lambda y: y + 1, x)


def nested(x):
    @functools.partial(pl.pallas_call, out_shape=x, compiler_params=pltpu.CompilerParams())
    def k(x_ref, o_ref):
        o_ref[...] = x_ref[...] + 1

    return k(x)


def run_it(kernel, x):
    return kernel(x)


def main(x):
    if jax.default_backend() == "gpu":
        a = helper(x)
        b = through_cond(x)
        c = nested(x)
        d = run_it(ops.make(), x)
        e = pl.pallas_call(ops._body, out_shape=x, compiler_params=pltpu.CompilerParams())(x)
        return a + b + c + d + e
    return x
"""


def _verdict(line: int) -> CallVerdict:
    files = {"ops.py": OPS, "app.py": textwrap.dedent(APP)}
    machines = run_function(files_loader(files), "app", "main")
    verdict = call_verdict(machines, "app", line)
    assert verdict is not None and verdict.finding
    return verdict


def _app_verdict(app: str, line: int) -> CallVerdict:
    """The verdict on the call at ``line`` of ``app.py`` (``app``, with ``OPS`` beside
    it), run from its ``main``; it must be a finding."""
    files = {"ops.py": OPS, "app.py": app}
    verdict = call_verdict(run_function(files_loader(files), "app", "main"), "app", line)
    assert verdict is not None and verdict.finding
    return verdict


def test_through_a_helper_to_the_entry_call() -> None:
    assert _verdict(30).chain == (
        Link("app", "helper", 8, 9, "tpu_op"),
        Link("ops", "tpu_op", 10, 11, None),
    )


def test_through_a_branch_jax_runs_but_not_the_other_branch() -> None:
    assert _verdict(31).chain == (
        Link("app", "through_cond", 12, 13, "tpu_op"),
        Link("ops", "tpu_op", 10, 11, None),
    )


def test_a_kernel_made_by_a_decorator_is_made_where_the_decorator_is_written() -> None:
    verdict = _verdict(32)
    assert verdict.chain == (Link("app", "nested", 16, 17, None),)
    assert (verdict.kernels[0].module, verdict.kernels[0].line) == ("app", 17)


def test_a_kernel_given_to_a_function_ends_where_it_is_run() -> None:
    verdict = _verdict(33)
    assert verdict.chain == (Link("app", "run_it", 24, 25, None),)
    assert (verdict.kernels[0].module, verdict.kernels[0].line) == ("ops", 17)


def test_the_entry_call_itself_has_no_way_to_show() -> None:
    assert _verdict(34).chain == ()


TRY_APP = """\
import jax
import ops


def guarded(x):
    try:
        return ops.tpu_op(x)
    except ValueError:
        raise RuntimeError("no TPU")


def main(x):
    if jax.default_backend() == "gpu":
        return guarded(x)
    return x
"""


def test_through_a_call_in_a_try_body_whose_handler_raises() -> None:
    # the call in the try body only may run its kernel (run eagerly, the refusal is
    # caught there); the way still goes through it
    verdict = _app_verdict(TRY_APP, 14)
    assert verdict.chain == (
        Link("app", "guarded", 5, 7, "tpu_op"),
        Link("ops", "tpu_op", 10, 11, None),
    )


NESTED_APP = """\
import jax
import ops


def outer(x):
    def inner(y):
        return ops.tpu_op(y)

    return inner(x)


def main(x):
    if jax.default_backend() == "gpu":
        return outer(x)
    return x
"""


def test_through_a_nested_function() -> None:
    from typed_pallas_mypy.inference.evaluator.notes import chain_notes

    verdict = _app_verdict(NESTED_APP, 14)
    assert verdict.chain == (
        Link("app", "outer", 5, 9, "inner", nested=True),
        Link("app", "inner", 6, 7, "tpu_op"),
        Link("ops", "tpu_op", 10, 11, None),
    )
    notes = chain_notes(verdict.chain, verdict.kernels[0], "ops.py", ["tpu"])
    assert notes[0].endswith("it calls its nested inner at :9")
    assert notes[1].endswith("it calls tpu_op at :7")


ARGUMENT_APP = """\
import jax
import ops


def apply(x, fn):
    return fn(ops.tpu_op(x))


def main(x, fn):
    if jax.default_backend() == "gpu":
        return apply(x, fn)
    return x
"""


def test_through_the_call_in_an_argument_when_the_outer_callee_is_unknown() -> None:
    # ``fn(ops.tpu_op(x))``: the outer call ran the kernel only by evaluating its
    # argument; the way goes on through ``tpu_op``, not ends at ``fn``
    verdict = _app_verdict(ARGUMENT_APP, 11)
    assert verdict.chain == (
        Link("app", "apply", 5, 6, "tpu_op"),
        Link("ops", "tpu_op", 10, 11, None),
    )


RESULT_APP = """\
import jax
import ops


def run_made(x):
    return ops.make()(x)


def main(x):
    if jax.default_backend() == "gpu":
        return run_made(x)
    return x
"""


def test_the_outer_call_that_runs_what_the_inner_one_made() -> None:
    # ``ops.make()(x)``: ``make`` runs nothing, the outer call runs its kernel
    verdict = _app_verdict(RESULT_APP, 11)
    assert verdict.chain == (Link("app", "run_made", 5, 6, None),)


FACTORY_APP = """\
import jax
import ops


class Runner:
    def __call__(self, x):
        return ops.tpu_op(x)


def make_runner():
    return Runner()


def main(x):
    if jax.default_backend() == "gpu":
        made_there = make_runner()
        made_here = Runner()
        return made_there(x) + made_here(x)
    return x
"""


def _factory_chain(call: str) -> tuple[Link, ...]:
    app = FACTORY_APP.replace("made_there(x) + made_here(x)", call)
    verdict = _app_verdict(app, 18)
    return verdict.chain


def test_an_instance_made_by_a_factory_starts_the_way_where_it_is_made() -> None:
    assert _factory_chain("made_there(x)") == (
        Link("app", "make_runner", 10, 11, None, made="Runner"),
        Link("app", "__call__", 6, 7, "tpu_op", owner="Runner"),
        Link("ops", "tpu_op", 10, 11, None),
    )


def test_an_instance_made_where_it_is_called_has_no_such_step() -> None:
    assert _factory_chain("made_here(x)") == (
        Link("app", "__call__", 6, 7, "tpu_op", owner="Runner"),
        Link("ops", "tpu_op", 10, 11, None),
    )


def test_the_factory_step_is_worded_as_what_it_returns() -> None:
    from typed_pallas_mypy.inference.evaluator.notes import chain_notes

    app = FACTORY_APP.replace("made_there(x) + made_here(x)", "made_there(x)")
    verdict = _app_verdict(app, 18)
    notes = chain_notes(verdict.chain, verdict.kernels[0], "ops.py", ["tpu"])
    assert notes[0] == "make_runner (:10) returns a Runner at :11, which lowers only for tpu"


RULES_APP = """\
import jax
import ops


@jax.custom_vjp
def scaled(x):
    return x * 2


def scaled_fwd(x):
    return ops.tpu_op(x), x


def scaled_bwd(res, g):
    return (g,)


scaled.defvjp(scaled_fwd, scaled_bwd)


def main(x):
    if jax.default_backend() == "gpu":
        return jax.grad(scaled)(x)
    return x
"""


def test_a_derivative_rule_run_in_place_of_its_function_starts_at_the_function() -> None:
    from typed_pallas_mypy.inference.evaluator.notes import chain_notes

    verdict = _app_verdict(RULES_APP, 23)
    assert verdict.chain == (
        Link("app", "scaled", 6, 18, "scaled_fwd", rule=True),
        Link("app", "scaled_fwd", 10, 11, "tpu_op"),
        Link("ops", "tpu_op", 10, 11, None),
    )
    notes = chain_notes(verdict.chain, verdict.kernels[0], "ops.py", ["tpu"])
    assert notes[0] == (
        "scaled (:6) lowers only for tpu: its derivative rule scaled_fwd at :18 does"
    )


def test_a_custom_vjp_function_called_plainly_has_no_rule_step() -> None:
    # not differentiated, the function's own body runs: the way goes through it
    app = RULES_APP.replace("return x * 2", "return ops.tpu_op(x)").replace(
        "jax.grad(scaled)(x)", "scaled(x)"
    )
    verdict = _app_verdict(app, 23)
    assert verdict.chain == (
        Link("app", "scaled", 6, 7, "tpu_op"),
        Link("ops", "tpu_op", 10, 11, None),
    )


WRAPS_APP = """\
import functools
import jax
import ops


def logged(fn):
    @functools.wraps(fn)
    def wrapper(*args):
        return fn(*args)

    return wrapper


def plain(fn):
    def wrapper(*args):
        return fn(*args)

    return wrapper


@logged
def through_wraps(x):
    return ops.tpu_op(x)


@plain
def through_plain(x):
    return ops.tpu_op(x)


def main(x):
    if jax.default_backend() == "gpu":
        return CALL
    return x
"""


def _wraps_chain(call: str) -> tuple[Link, ...]:
    verdict = _app_verdict(WRAPS_APP.replace("CALL", call), 33)
    return verdict.chain


def test_a_functools_wraps_wrapper_presents_itself_as_what_it_wraps() -> None:
    assert _wraps_chain("through_wraps(x)") == (
        Link("app", "through_wraps", 22, 23, "tpu_op"),
        Link("ops", "tpu_op", 10, 11, None),
    )


def test_a_wrapper_without_wraps_is_a_step_of_its_own() -> None:
    assert _wraps_chain("through_plain(x)") == (
        Link("app", "wrapper", 15, 16, "through_plain"),
        Link("app", "through_plain", 27, 28, "tpu_op"),
        Link("ops", "tpu_op", 10, 11, None),
    )
