"""One mistake, one error: the signature hook of the Pallas entry points.

The stubs reject some mismatches by type alone (``plgpu.kernel`` with TPU params,
``pl.kernel`` with a TPU mesh and Triton params, ``typed_pallas.pallas_call`` with
``platform="tpu"`` and Triton params). Under mypy those would come out as
``[arg-type]`` / ``[call-overload]`` in mypy's words (five long overloads), and the
plugin's ``[pallas-platform]`` would stay silent. For exactly the calls where the
plugin proves the mismatch itself (the params contradict the entry point, the mesh,
``platform=`` or the kernel body), this hook widens the ``compiler_params`` and ``mesh``
formals to ``Any``, so mypy reports nothing there and the function hook reports JAX's
text with its notes. Every other call keeps the declared signature (a legacy dict of
params stays mypy's ``arg-type``). Other checkers keep the stubs' errors.

What it does not do: report anything (``calls`` does, in the function hook).
"""

from __future__ import annotations

from mypy.nodes import CallExpr, Expression, RefExpr, TypeInfo
from mypy.plugin import FunctionSigContext
from mypy.subtypes import is_subtype
from mypy.types import (
    AnyType,
    CallableType,
    FunctionLike,
    Instance,
    Overloaded,
    Type,
    TypeOfAny,
    get_proper_type,
)

from typed_pallas import _platforms
from typed_pallas_mypy import fullnames
from typed_pallas_mypy.entries import EntrySpec
from typed_pallas_mypy.transformers import params as params_mod
from typed_pallas_mypy.transformers.calls import (
    CallView,
    accepts,
    evidence_of,
    interpret_mode,
)
from typed_pallas_mypy.transformers.module_index import ModuleIndex

#: the formals this hook may widen
WIDENED = ("compiler_params", "mesh")


def _view(ctx: FunctionSigContext, entry: EntrySpec, signature: CallableType) -> CallView | None:
    if not isinstance(ctx.context, CallExpr):
        return None
    view = CallView(entry, ctx.context, callee=None)
    for name, exprs in zip(signature.arg_names, ctx.args):
        if name is None or len(exprs) != 1:
            continue
        view.args[name] = exprs[0]
    if any(kind.is_star() for kind in ctx.context.arg_kinds):
        view.has_splat = True
    return view


def _type_of(ctx: FunctionSigContext, expr: Expression) -> Type | None:
    constructed = _constructed_params(expr)
    if constructed is not None:
        return constructed
    try:
        return ctx.api.get_expression_type(expr)
    except Exception:
        return None


def _constructed_params(expr: Expression) -> Instance | None:
    """The type of ``pltpu.CompilerParams(...)``, a call of a params class (none is
    generic): an instance of it, read off the callee. Asking mypy to infer the call
    (``get_expression_type``) gives the same and costs about 2 ms a call under the daemon,
    where every target with an error is checked again on each edit."""
    if not (isinstance(expr, CallExpr) and isinstance(expr.callee, RefExpr)):
        return None
    info = expr.callee.node
    if not isinstance(info, TypeInfo) or info.type_vars:
        return None
    if info.fullname not in _platforms.PARAMS_BY_FULLNAME:
        return None
    return Instance(info, [])


def rejected_but_proven(
    ctx: FunctionSigContext, entry: EntrySpec, index: ModuleIndex, signature: CallableType
) -> CallView | None:
    """The call's view when the declared signature rejects its params or mesh and the
    plugin proves the mismatch from evidence (its own error replaces the type error)."""
    view = _view(ctx, entry, signature)
    if view is None or "compiler_params" not in view.args:
        return None
    if interpret_mode(view) == "on":
        return None
    rejected = False
    for name in WIDENED:
        if name not in view.args or name not in signature.arg_names:
            continue
        actual = _type_of(ctx, view.args[name])
        if actual is None:
            return None
        view.types[name] = actual
        formal = signature.arg_types[signature.arg_names.index(name)]
        if not is_subtype(actual, formal):
            rejected = True
    if not rejected:
        return None
    params = params_mod.from_type(view.types["compiler_params"])
    if not isinstance(params, params_mod.Params):
        return None
    if any(not accepts(e.backends, params) for e in evidence_of(view, index)):
        view.widened = True
        return view
    return None


def widen(signature: FunctionLike) -> FunctionLike:
    """``signature`` with the ``compiler_params`` and ``mesh`` formals typed ``Any``."""
    if isinstance(signature, CallableType):
        types = [
            AnyType(TypeOfAny.special_form) if name in WIDENED else typ
            for name, typ in zip(signature.arg_names, signature.arg_types)
        ]
        return signature.copy_modified(arg_types=types)
    return signature


# --------------------------------------------------------------------------- dispatch slots

#: the platform slots of ``typed_pallas.dispatch``
DISPATCH_SLOTS = ("tpu", "gpu", "cuda", "rocm")


def _is_tagged(typ: Type) -> bool:
    proper = get_proper_type(typ)
    return isinstance(proper, Instance) and proper.type.fullname == fullnames.PLATFORM_FN


def _is_callable(typ: Type) -> bool:
    proper = get_proper_type(typ)
    if isinstance(proper, (CallableType, Overloaded)):
        return True
    return isinstance(proper, Instance) and proper.type.get("__call__") is not None


def accept_untagged_branches(ctx: FunctionSigContext) -> FunctionLike:
    """``typed_pallas.dispatch``'s platform slots take a ``PlatformFn`` of their platform
    (what every checker checks). Under mypy with the plugin, an untagged callable is
    accepted too (its slot typed as ``default=``'s): the plugin infers what it lowers
    for and reports a contradiction where the branch is passed (``decisions``)."""
    signature = ctx.default_signature
    if not isinstance(signature, CallableType) or "default" not in signature.arg_names:
        return signature
    untyped = signature.arg_types[signature.arg_names.index("default")]
    types = list(signature.arg_types)
    changed = False
    for i, (name, exprs) in enumerate(zip(signature.arg_names, ctx.args)):
        if name not in DISPATCH_SLOTS or len(exprs) != 1:
            continue
        actual = _type_of(ctx, exprs[0])
        if actual is None or _is_tagged(actual) or not _is_callable(actual):
            continue
        types[i] = untyped
        changed = True
    return signature.copy_modified(arg_types=types) if changed else signature
