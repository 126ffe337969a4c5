"""The hook callbacks: turn a mypy context into a ``CallView`` and validate it.

Each callback returns the type mypy would have inferred anyway
(``ctx.default_return_type``, or mypy's own ``functools.partial`` inference), and
never lets an exception escape: any failure inside the plugin falls back to that
type. Set ``TYPED_PALLAS_MYPY_DEBUG=1`` to let the exception through instead.
"""

from __future__ import annotations

import os
from typing import Final

from mypy.nodes import CallExpr, MypyFile
from mypy.plugin import FunctionContext
from mypy.plugins.functools import partial_new_callback
from mypy.types import Type

from typed_pallas_mypy.transformers.calls import (
    ENTRIES,
    EntrySpec,
    PlatformConfig,
    view_of_call,
    validate_compiler_params,
)
from typed_pallas_mypy.transformers.module_index import ModuleIndex, index_of
from typed_pallas_mypy.transformers.nodes import ref_fullname

DEBUG_ENV: Final = "TYPED_PALLAS_MYPY_DEBUG"


def _index(ctx: FunctionContext) -> ModuleIndex | None:
    tree = getattr(ctx.api, "tree", None)  # TypeChecker.tree; not in the plugin interface
    if not isinstance(tree, MypyFile) or not isinstance(ctx.context, CallExpr):
        return None
    return index_of(tree)


def _debug() -> bool:
    return os.environ.get(DEBUG_ENV, "") not in ("", "0")


def check_entry_call(ctx: FunctionContext, *, entry: EntrySpec, config: PlatformConfig) -> Type:
    """Hook for a direct call of a Pallas entry point."""
    try:
        index = _index(ctx)
        if index is not None:
            assert isinstance(ctx.context, CallExpr)
            view = view_of_call(
                entry,
                ctx.context,
                ctx.callee_arg_names,
                ctx.args,
                ctx.arg_kinds,
                ctx.arg_types,
            )
            validate_compiler_params(view, ctx.api, index, config)
    except Exception:
        if _debug():
            raise
    return ctx.default_return_type


def check_partial(ctx: FunctionContext, *, config: PlatformConfig) -> Type:
    """Hook for ``functools.partial(entry_point, ...)``; then mypy's own inference.

    A plugin hook for ``functools.partial`` shadows mypy's default one, so this always
    ends by delegating to ``mypy.plugins.functools.partial_new_callback``.
    """
    try:
        _check_partial(ctx, config)
    except Exception:
        if _debug():
            raise
    return partial_new_callback(ctx)


def _check_partial(ctx: FunctionContext, config: PlatformConfig) -> None:
    if len(ctx.args) < 3 or len(ctx.args[0]) != 1:
        return
    name = ref_fullname(ctx.args[0][0])
    entry = ENTRIES.get(name) if name is not None else None
    if entry is None:
        return
    index = _index(ctx)
    if index is None:
        return
    assert isinstance(ctx.context, CallExpr)
    positional_names: list[str | None] = []
    positional = list(ctx.args[1])
    for i in range(len(positional)):
        positional_names.append(entry.positional[i] if i < len(entry.positional) else None)
    keyword_names = list(ctx.arg_names[2])
    view = view_of_call(
        entry,
        ctx.context,
        [*positional_names, *keyword_names],
        [[expr] for expr in [*positional, *ctx.args[2]]],
        [[kind] for kind in [*ctx.arg_kinds[1], *ctx.arg_kinds[2]]],
        [[typ] for typ in [*ctx.arg_types[1], *ctx.arg_types[2]]],
    )
    view.callee = ctx.args[0][0]
    view.callee = ctx.args[0][0]
    validate_compiler_params(view, ctx.api, index, config)
