"""Reporting, and every access to mypy beyond its plugin interface, in one place.

The plugin needs a few things mypy's plugin API does not offer; each is read here,
defensively (``getattr`` with a fallback), so that a mypy change costs a finding, never
a crash:

* ``report``: ``ctx.api.fail`` around the error watchers mypy installs while it tries
  overload candidates (an error there would be dropped, and would fail the candidate);
* ``reported``: errors already recorded for a file (``Errors.error_info_map``), so that a
  decision finding is not reported twice;
* ``build_epoch``: the same map as an object that changes whenever mypy may have read a
  source again (``Facts.refresh`` looks at files only then); ``current_epoch`` reads it
  again where no hook context is at hand (``module_index.stamp_of``);
* ``checked_tree``: the module the type checker is checking (``TypeChecker.tree``);
* ``build_modules``: mypy's ``dict`` of every module of the build (``TypeChecker.modules``);
* ``declared_type``: the type mypy already inferred for an expression;
* ``str_instance``: ``builtins.str``, for the facts mypy caches.

What it does not do: decide anything.
"""

from __future__ import annotations

from collections.abc import Mapping

from mypy.nodes import CallExpr, Context, Expression, MypyFile
from mypy.plugin import (
    CheckerPluginInterface,
    FunctionContext,
    FunctionSigContext,
    MethodContext,
)
from mypy.types import Instance, Type

from typed_pallas_mypy.errorcodes import PALLAS_PLATFORM


def report(api: CheckerPluginInterface, context: Context, message: str, notes: list[str]) -> None:
    """One ``pallas-platform`` error with its notes, even while mypy tries overloads.

    mypy checks each candidate of an overloaded callee (``typed_pallas.pallas_call``)
    under error watchers and keeps none of those errors; an error there would also make
    the candidate fail. So the report goes around the watchers, once per call (the
    error depends on the call's arguments, not on which overload wins). mypy drops the
    duplicates when a call is checked twice (same line, same message).
    """
    found = getattr(api.msg.errors, "_watchers", None)
    watchers: list[object] = found if isinstance(found, list) else []
    saved = list(watchers)
    watchers.clear()
    try:
        api.fail(message, context, code=PALLAS_PLATFORM)
        for note in notes:
            api.msg.note(note, context, code=PALLAS_PLATFORM)
    finally:
        watchers.extend(saved)


def reported(api: CheckerPluginInterface, path: str) -> set[tuple[int, int, str]]:
    """(line, column, message) of every error mypy recorded for ``path`` so far."""
    errors = getattr(api.msg, "errors", None)
    info_map = getattr(errors, "error_info_map", None)
    if not isinstance(info_map, dict):
        return set()
    return {(info.line, info.column, info.message) for info in info_map.get(path, [])}


#: mypy's ``Errors`` object of the last ``build_epoch`` that found one (one per build
#: manager: the daemon keeps its manager across updates)
_last_errors: list[object] = []


def build_epoch(api: CheckerPluginInterface) -> object | None:
    """An object that changes whenever mypy may have read a source file again: its
    ``Errors.error_info_map``, which ``Errors.reset`` replaces at the start of each
    update of the daemon and of each module an update re-parses (and which nothing
    else replaces). None when mypy has no such map (then nothing can be skipped).

    The ``Errors`` object it is read from is remembered for ``current_epoch``."""
    errors = getattr(api.msg, "errors", None)
    info_map = getattr(errors, "error_info_map", None)
    if not isinstance(info_map, dict):
        return None
    if not _last_errors or _last_errors[0] is not errors:
        _last_errors[:] = [errors]
    return info_map


def current_epoch() -> object | None:
    """``build_epoch`` as it is now, read from the ``Errors`` object the last
    ``build_epoch`` saw (so without a hook context); None before any, or when mypy has
    no such map. A new build manager's epoch is seen from its first ``build_epoch`` on;
    until then its modules are new tree objects, which nothing read by epoch holds."""
    if not _last_errors:
        return None
    info_map = getattr(_last_errors[0], "error_info_map", None)
    return info_map if isinstance(info_map, dict) else None


def checked_tree(ctx: FunctionContext | MethodContext | FunctionSigContext) -> MypyFile | None:
    """The module being type-checked, when ``ctx`` is a call in it."""
    tree = getattr(ctx.api, "tree", None)
    if not isinstance(tree, MypyFile) or not isinstance(ctx.context, CallExpr):
        return None
    return tree


def build_modules(api: CheckerPluginInterface) -> Mapping[str, MypyFile] | None:
    """Every module of the build, by name (mypy's own dict, kept up to date)."""
    modules = getattr(api, "modules", None)
    return modules if isinstance(modules, dict) else None


def declared_type(api: CheckerPluginInterface, expr: Expression) -> Type | None:
    """The type mypy inferred for ``expr`` (the callee's declared signature), if any."""
    lookup = getattr(api, "lookup_type_or_none", None)
    if lookup is None:
        return None
    found = lookup(expr)
    return found if isinstance(found, Type) else None


def str_instance(api: CheckerPluginInterface) -> Instance | None:
    typ = api.named_generic_type("builtins.str", [])
    return typ if isinstance(typ, Instance) else None
