"""The parity harness's cases: every function of ``kernlib.shapes`` and how it is called.

A *form* is one way a kernel is reached. Each has a ``fire_*`` function (a TPU-only
kernel runs: wrong on a GPU) and usually a ``silent_*`` twin (right on a GPU); a few
forms are silent only (``silent_built_never_run``: nothing runs) or have a silent twin
only through what the caller passes. ``INPUTS`` gives the array each is called with
(both in the cross-lowering proof and, as a shape, in the application code).
"""

from __future__ import annotations

from pathlib import Path
from typing import NamedTuple

HERE = Path(__file__).resolve().parent
LIBRARY = HERE / "kernlib"

#: (form, fire function or None, silent function or None)
FORMS: tuple[tuple[str, str | None, str | None], ...] = (
    ("a direct call", "fire_direct", "silent_direct"),
    (
        "a module of an optional import (None where it failed)",
        "fire_optional_import",
        "silent_optional_import",
    ),
    ("every alternative of an if/else", "fire_if_else", "silent_if_else"),
    ("every case of a match", "fire_match", "silent_match"),
    ("a conditional expression as callee", "fire_choice", "silent_choice"),
    ("a raise before the kernel / an early return", "fire_early_exit", "silent_early_exit"),
    ("try and its handler", "fire_try", "silent_try"),
    ("a for over a literal / over a range", "fire_for_literal", "silent_for_unknown"),
    ("a return inside a with block", "fire_with_return", "silent_with_return"),
    ("lax.cond (every branch is lowered)", "fire_cond", "silent_cond"),
    ("lax.switch", "fire_switch", "silent_switch"),
    ("lax.fori_loop", "fire_fori_loop", "silent_fori_loop"),
    ("lax.while_loop", "fire_while_loop", "silent_while_loop"),
    ("lax.scan", "fire_scan", "silent_scan"),
    ("lax.platform_dependent", "fire_platform_dependent", "silent_platform_dependent"),
    ("jax.jit of a function", "fire_jit", "silent_jit"),
    ("defvjp rules under jax.grad / the primal alone", "fire_grad_rules", "silent_primal_only"),
    ("a variable holding a keeping decorator", "fire_keeper_variable", "silent_keeper_variable"),
    (
        "the library's own functools.wraps decorator",
        "fire_wraps_decorator",
        "silent_wraps_decorator",
    ),
    ("an op object called", "fire_op_object", "silent_op_object"),
    ("an op object in a variable / built only", "fire_op_variable", "silent_op_built_only"),
    (
        "an op object updating its own attributes",
        "fire_op_updating_itself",
        "silent_op_updating_itself",
    ),
    ("a memoized build (a module cache filled only with it)", "fire_memoized", "silent_memoized"),
    ("a factory's result called", "fire_factory", "silent_factory"),
    ("jax.vmap of a factory's result", "fire_vmap_of_factory", "silent_vmap_of_factory"),
    ("jax.checkpoint of an object", "fire_checkpoint_of_object", "silent_checkpoint_of_object"),
    ("a returned closure called", "fire_returned_closure", "silent_returned_closure"),
    ("a local variable holding a function", "fire_local_callable", "silent_local_callable"),
    ("a nested def under partial(pl.pallas_call)", "fire_nested_entry", "silent_nested_entry"),
    ("a kernel built and run / built never run", "fire_built_and_run", "silent_built_never_run"),
    ("a wrapper's result called", "fire_wrapper_result", "silent_wrapper_result"),
    ("interpret= left at its default / turned on", "fire_interpret_default", "silent_interpret_on"),
    (
        "functools.partial deciding interpret=",
        "fire_partial_interpret_off",
        "silent_partial_interpret_on",
    ),
    ("a literal key into a platform table", "fire_table_literal_key", "silent_table_literal_key"),
    ("a config object's interpret field", "fire_config_default", "silent_config_interpret"),
    ("a config object's field set by position", None, "silent_config_positional"),
    (
        "interpret= by position before / after a *args splat",
        "fire_interpret_before_a_splat",
        "silent_interpret_after_a_splat",
    ),
    ("a path ended by pytest.skip()", "fire_pytest_skip", "silent_pytest_skip"),
    ("a path ended by sys.exit()", "fire_sys_exit", "silent_sys_exit"),
    (
        "try / finally (the finally runs after a return too)",
        "fire_try_finally",
        "silent_try_finally",
    ),
    ("x and f() (the right operand may not run)", "fire_and_call", "silent_and_call"),
    ("lax.map / a Python loop over the rows (may not run)", "fire_lax_map", "silent_lax_map"),
    (
        "custom_jvp rules under jax.jvp / the primal alone",
        "fire_jvp_rules",
        "silent_jvp_primal_only",
    ),
    (
        "a custom_jvp rule registered by @f.defjvp under jax.jvp / the primal alone",
        "fire_jvp_rule_decorator",
        "silent_jvp_rule_decorator_primal_only",
    ),
    (
        "a custom_jvp primal alone / under jax.jvp (the rule replaces it)",
        "fire_custom_jvp_primal",
        "silent_custom_jvp_under_jvp",
    ),
    (
        "jax.linearize: its linear function applied / never applied",
        "fire_linearize",
        "silent_linearize_unapplied",
    ),
    ("jax.vjp: its pullback called / never called", "fire_vjp", "silent_vjp_unpulled"),
    (
        "jax.value_and_grad of custom_jvp rules / of a primal the rule replaces",
        "fire_value_and_grad",
        "silent_value_and_grad",
    ),
    ("jax.jacfwd applied / built, never applied", "fire_jacfwd", "silent_jacfwd"),
    (
        "jax.jacrev of custom_jvp rules / of a primal the rule replaces",
        "fire_jacrev",
        "silent_jacrev",
    ),
    (
        "jax.hessian of custom_jvp rules / of a primal the rule replaces",
        "fire_hessian",
        "silent_hessian",
    ),
    (
        "a base class's method calling the subclass's override",
        "fire_inherited_method",
        "silent_inherited_method",
    ),
    ("super().__call__(x)", "fire_super_call", "silent_super_call"),
    ("a classmethod building and running through cls", "fire_classmethod", "silent_classmethod"),
    ("a staticmethod's kernel called / built only", "fire_staticmethod", "silent_staticmethod"),
    (
        "a property returning a kernel function: called / only read",
        "fire_property",
        "silent_property",
    ),
    (
        "params kept on the instance in __init__",
        "fire_params_on_instance",
        "silent_params_on_instance",
    ),
    (
        "a kernel function kept on the instance in __init__",
        "fire_kernel_on_instance",
        "silent_kernel_on_instance",
    ),
    (
        "a dataclass field default holding a kernel / replaced by the caller",
        "fire_dataclass_default",
        "silent_dataclass_default",
    ),
    (
        "a module-level list under a literal index",
        "fire_list_literal_index",
        "silent_list_literal_index",
    ),
    (
        "a module-level tuple under a literal (negative) index",
        "fire_tuple_literal_index",
        "silent_tuple_literal_index",
    ),
    ("a module-level dict under a literal name key", "fire_dict_name_key", "silent_dict_name_key"),
    ("tuple unpacking of a factory's result", "fire_unpacked_factory", "silent_unpacked_factory"),
    ("jax.tree.map over a leaf / over a tree with none", "fire_tree_map", "silent_tree_map"),
    ("jax.named_call: called / never called", "fire_named_call", "silent_named_call"),
    ("jnp.vectorize", "fire_vectorize", "silent_vectorize"),
)

#: function -> the shape of the array it is called with (default (8, 128))
INPUTS: dict[str, tuple[int, ...]] = {
    "silent_if_else": (128,),
    "silent_choice": (128,),
    "fire_vmap_of_factory": (2, 8, 128),
    "silent_vmap_of_factory": (2, 8, 128),
    "fire_scan": (2, 8, 128),
    "silent_scan": (2, 8, 128),
    "fire_lax_map": (2, 8, 128),
    "silent_lax_map": (0, 8, 128),  # no rows: the Python loop never runs
    "fire_vectorize": (2, 8, 128),
    "silent_vectorize": (2, 8, 128),
}
DEFAULT_INPUT = (8, 128)
TPU_ON_GPU = "Compiler params for platform tpu cannot be used for gpu lowering."


def fire_functions() -> list[str]:
    return [fire for _, fire, _ in FORMS if fire is not None]


def silent_functions() -> list[str]:
    return [silent for _, _, silent in FORMS if silent is not None]


def input_of(name: str) -> tuple[int, ...]:
    return INPUTS.get(name, DEFAULT_INPUT)


def every_function_has_a_form() -> set[str]:
    """Names of ``kernlib.shapes``'s ``fire_*`` / ``silent_*`` functions no form lists."""
    source = (LIBRARY / "shapes.py").read_text()
    defined = {
        line.split("(")[0][len("def ") :]
        for line in source.splitlines()
        if line.startswith(("def fire_", "def silent_"))
    }
    return defined - set(fire_functions()) - set(silent_functions())


#: Forms decided in the application itself, with the library's pieces: (form, the
#: application's body for the firing case, for the silent one). ``{x}`` is the array.
APPLICATION_FORMS: tuple[tuple[str, str, str], ...] = (
    (
        "a guard helper of the library",
        "if kernlib.kernels.on_gpu():\n        return kernlib.fire_direct({x})",
        "if kernlib.kernels.on_gpu():\n        return kernlib.silent_direct({x})",
    ),
    (
        "a device-kind guard helper of the library",
        "if not kernlib.kernels.on_tpu_kind():\n        return kernlib.fire_direct({x})",
        "if kernlib.kernels.on_tpu_kind():\n        return kernlib.fire_direct({x})",
    ),
    (
        "a guard helper of the library over every device",
        "if kernlib.kernels.any_gpu():\n        return kernlib.fire_direct({x})",
        "if kernlib.kernels.any_gpu():\n        return kernlib.silent_direct({x})",
    ),
    (
        "a guard helper of the library returning a variable that holds the condition",
        "if not kernlib.kernels.on_tpu_flag():\n        return kernlib.fire_direct({x})",
        "if kernlib.kernels.on_tpu_flag():\n        return kernlib.fire_direct({x})",
    ),
    (
        "a guard helper of the library comparing its platform helper",
        "if kernlib.kernels.on_gpu_backend():\n        return kernlib.fire_direct({x})",
        "if not kernlib.kernels.on_gpu_backend():\n        return kernlib.fire_direct({x})",
    ),
    (
        "the caller's config object deciding interpret=",
        'if jax.default_backend() == "gpu":\n'
        "        return kernlib.kernel_with_config({x}, kernlib.Config(block=8))",
        'if jax.default_backend() == "gpu":\n'
        "        return kernlib.kernel_with_config({x}, kernlib.Config(interpret=True))",
    ),
    (
        "a TPU-only kernel body of the library in the caller's pl.pallas_call",
        'if jax.default_backend() == "gpu":\n'
        "        return pl.pallas_call(kernlib.kernels.copy_body, out_shape=jax.ShapeDtypeStruct("
        "{x}.shape, {x}.dtype))({x})",
        'if jax.default_backend() == "gpu":\n'
        "        return pl.pallas_call(kernlib.kernels.add_one, out_shape=jax.ShapeDtypeStruct("
        "{x}.shape, {x}.dtype))({x})",
    ),
)

#: what the firing case of each application form reports
APPLICATION_MESSAGES: dict[str, str] = {
    "a guard helper of the library": TPU_ON_GPU,
    "a device-kind guard helper of the library": TPU_ON_GPU,
    "a guard helper of the library over every device": TPU_ON_GPU,
    "a guard helper of the library returning a variable that holds the condition": TPU_ON_GPU,
    "a guard helper of the library comparing its platform helper": TPU_ON_GPU,
    "the caller's config object deciding interpret=": TPU_ON_GPU,
    "a TPU-only kernel body of the library in the caller's pl.pallas_call": (
        "The kernel of this pl.pallas_call lowers only for tpu; it cannot be used for gpu lowering."
    ),
}


class Case(NamedTuple):
    """Where the application calls one case, and what must be reported there."""

    #: the line of the call in the application
    line: int
    #: the finding's message; ``None`` where nothing may be reported
    message: str | None


def application_case(kind: str, form: str) -> str:
    """The case name of an application form's firing (``kind="fire"``) or silent body."""
    return f"application {kind}: {form}"


def application() -> tuple[str, dict[str, Case]]:
    """The application's source (every function called under a GPU guard) and each case:
    a function of ``kernlib.shapes`` by its name, an application form by
    ``application_case``."""
    lines = [
        '"""Calls every shape of kernlib where the platform is decided: on the GPU path."""',
        "",
        "import jax",
        "import jax.numpy as jnp",
        "from jax.experimental import pallas as pl",
        "",
        "import kernlib",
        "import kernlib.kernels",
        "",
    ]
    cases: dict[str, Case] = {}
    for name in [*fire_functions(), *silent_functions()]:
        shape = input_of(name)
        lines += [
            "",
            f"def call_{name}() -> object:",
            f"    x = jnp.zeros({shape}, jnp.float32)",
            '    if jax.default_backend() == "gpu":',
            f"        return kernlib.{name}(x)",
            "    return x",
        ]
        cases[name] = Case(len(lines) - 1, TPU_ON_GPU if name.startswith("fire_") else None)
    for index, (form, fire, silent) in enumerate(APPLICATION_FORMS):
        for kind, body in (("fire", fire), ("silent", silent)):
            lines += [
                "",
                f"def call_{kind}_application_{index}() -> object:",
                f"    x = jnp.zeros({DEFAULT_INPUT}, jnp.float32)",
                *f"    {body.format(x='x')}".split("\n"),
                "    return x",
            ]
            message = APPLICATION_MESSAGES[form] if kind == "fire" else None
            cases[application_case(kind, form)] = Case(len(lines) - 1, message)
    return "\n".join(lines) + "\n", cases
