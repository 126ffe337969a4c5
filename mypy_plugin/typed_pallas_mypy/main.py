"""The mypy plugin entry point: ``plugins = ["typed_pallas_mypy"]``.

``plugin(version)`` returns ``TypedPallasPlugin``, whose hooks only look names up in
tables and hand the call to ``transformers`` (thin dispatcher, as in django-stubs and
returns). It hooks the Pallas entry points (``pl.pallas_call``, ``pl.kernel``,
``plgpu.kernel``, ``pl.core_map``, the ``typed_pallas`` ones) and ``functools.partial``
(to see ``partial(pl.pallas_call, compiler_params=...)``; mypy's own ``partial``
inference runs afterwards, since a plugin hook would otherwise shadow it).

What it does not do: import jax (it reads names, never values), follow kernels into
other modules, or report anything when the platform cannot be known. Because kernels,
helpers, guards and params are read from the calling module only, the plugin declares
no extra dependencies (no ``get_additional_deps``): editing a helper re-checks its own
module, and cold, incremental and daemon runs agree (``tests/test_incremental.py``).
``report_config_data`` answers for user modules only, so a configuration change
re-checks user code and not all of jax.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
import sys
from collections.abc import Callable, Mapping
from importlib import metadata
from pathlib import Path
from typing import Any, Final, final

from mypy.nodes import TypeInfo
from mypy.options import Options
from mypy.plugin import (
    FunctionContext,
    FunctionSigContext,
    MethodContext,
    Plugin,
    ReportConfigContext,
)
from mypy.types import FunctionLike, Instance, Type

from typed_pallas import _platforms
from typed_pallas_mypy import evidence_tables, fullnames
from typed_pallas_mypy.transformers import hooks, platform_facts
from typed_pallas_mypy.transformers.calls import ENTRIES, PlatformConfig
from typed_pallas_mypy.transformers.platform_facts import Facts

#: Bump when the plugin's behaviour changes, so caches made by an older one go stale.
PLUGIN_BEHAVIOUR_VERSION: Final = 2


class _Unconfigured:
    """Stand-in until ``typed_pallas_mypy.config`` exists (or when it cannot load)."""

    def platforms_for(self, module: str) -> frozenset[str] | None:
        return None

    def fingerprint(self) -> dict[str, Any]:
        return {}


def _load_config(options: Options) -> Any:
    try:
        from typed_pallas_mypy import config as config_module
    except ImportError:
        return _Unconfigured()
    load = getattr(config_module, "load_config", None)
    if load is None:
        return _Unconfigured()
    return load(options)  # bad config: load_config exits mypy with its message


def _version(dist: str) -> str | None:
    try:
        return metadata.version(dist)
    except metadata.PackageNotFoundError:
        return None


def _canonical(value: object) -> object:
    """JSON-able and independent of hash randomisation (frozensets become sorted lists)."""
    if isinstance(value, (frozenset, set)):
        return sorted(_canonical(v) for v in value)  # type: ignore[type-var]
    if isinstance(value, Mapping):
        return sorted((repr(_canonical(k)), _canonical(v)) for k, v in value.items())
    if isinstance(value, (tuple, list)):
        return [_canonical(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return _canonical(dataclasses.asdict(value))
    return value


def _tables_digest() -> str:
    """Hash of the evidence tables and the platform table, stable across processes."""
    text = json.dumps(
        _canonical(
            (
                evidence_tables.BODY_EVIDENCE,
                evidence_tables.SCRATCH_EVIDENCE,
                evidence_tables.MESH_EVIDENCE,
                evidence_tables.GRID_SPEC_EVIDENCE,
                _platforms.PARAMS_CLASSES,
                _platforms.MISMATCH_TEMPLATE,
                _platforms.BACKEND_MISMATCH_TEMPLATE,
            )
        ),
        default=str,
    )
    return hashlib.sha256(text.encode()).hexdigest()[:16]


#: Hash of the configuration the last plugin instance loaded. mypy's daemon compares
#: ``typed_pallas_mypy.__version__`` (with the module's hash) between runs to decide
#: whether plugins changed; putting the config in it (daemon only, see
#: ``versioned_name``) makes ``dmypy run`` restart after a ``[tool.typed-pallas]`` edit
#: instead of serving stale results.
_config_stamp = "unconfigured"


def _code_digest() -> str:
    """Hash of the plugin's own sources and of ``typed_pallas._platforms``.

    mypy's cache and daemon only hash the plugin's top module (``__init__.py``); an
    edit to a transformer or a table must invalidate cached results too.
    """
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    files = [*sorted(package.rglob("*.py")), Path(_platforms.__file__).resolve()]
    for path in files:
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(str(path).encode())
    return digest.hexdigest()[:16]


CODE_DIGEST: Final = _code_digest()


def versioned_name() -> str:
    """``typed_pallas_mypy.__version__``: package version and code hash, plus the config
    hash inside mypy's daemon.

    A changed plugin snapshot discards the whole cache, jax included, so plain mypy
    runs leave the config out (``report_config_data`` re-checks just user modules);
    the daemon has no other way to notice a config edit, so there it goes in.
    """
    name = f"{_version('typed-pallas')}+code.{CODE_DIGEST}"
    if "mypy.dmypy_server" in sys.modules:
        name += f".config.{_config_stamp}"
    return name


@final
class TypedPallasPlugin(Plugin):
    """Checks Pallas compiler params against the platform the call can lower for."""

    def __init__(self, options: Options) -> None:
        super().__init__(options)
        self._config = _load_config(options)
        global _config_stamp
        _config_stamp = hashlib.sha256(
            json.dumps(_canonical(self._config.fingerprint()), default=str).encode()
        ).hexdigest()[:16]
        platform_config: PlatformConfig = self._config
        self._platform_config = platform_config
        self._session = hooks.Session()
        session = self._session
        self._entry_hooks: dict[str, Callable[[FunctionContext], Type]] = {
            name: functools.partial(
                hooks.check_entry_call, entry=entry, config=platform_config, session=session
            )
            for name, entry in ENTRIES.items()
        }
        decision_hook = functools.partial(
            hooks.check_decision_call, config=platform_config, session=session
        )
        for name in fullnames.DECISION_CALLS:
            self._entry_hooks.setdefault(name, decision_hook)
        self._partial_hook = functools.partial(
            hooks.check_partial, config=platform_config, session=session
        )
        self._user_hooks: dict[str, Any] = {}
        self._signature_hooks: dict[str, Callable[[FunctionSigContext], FunctionLike]] = {
            name: functools.partial(hooks.widen_proven_mismatch, entry=entry, session=session)
            for name, entry in ENTRIES.items()
        }
        self._config_data: dict[str, Any] | None = None

    def _facts(self) -> Facts | None:
        if self._session.facts is None and self._modules is not None:
            self._session.facts = Facts(self._modules)
        return self._session.facts

    def _user_hook(self, fullname: str) -> Any:
        """The hook for a call of a function of the checked code, or None."""
        hook = self._user_hooks.get(fullname, False)
        if hook is not False:
            return hook
        facts = self._facts()
        hook = None
        try:
            user = facts is not None and facts.is_user_module(facts.module_of(fullname))
        except Exception:  # never let a lookup crash mypy: no hook, mypy's default type
            if hooks.debug_enabled():
                raise
            user = False
        if user:
            hook = functools.partial(
                hooks.check_user_call,
                fullname=fullname,
                config=self._platform_config,
                session=self._session,
            )
        self._user_hooks[fullname] = hook
        return hook

    def get_function_hook(self, fullname: str) -> Callable[[FunctionContext], Type] | None:
        if fullname == fullnames.FUNCTOOLS_PARTIAL:
            return self._partial_hook
        hook = self._entry_hooks.get(fullname)
        if hook is not None:
            return hook
        user: Callable[[FunctionContext], Type] | None = self._user_hook(fullname)
        return user

    def get_function_signature_hook(
        self, fullname: str
    ) -> Callable[[FunctionSigContext], FunctionLike] | None:
        return self._signature_hooks.get(fullname)

    def get_method_hook(self, fullname: str) -> Callable[[MethodContext], Type] | None:
        known = self._user_hooks.get(fullname, False)  # the common case: answered before
        if known is not False:
            method_hook: Callable[[MethodContext], Type] | None = known
            return method_hook
        user: Callable[[MethodContext], Type] | None = self._user_hook(fullname)
        return user

    def report_config_data(self, ctx: ReportConfigContext) -> Any:
        """Config + versions for user modules; None for installed packages.

        Answering for site-packages modules would make a config change re-check all of
        jax (measured: 10-12 s instead of 0.6 s).
        """
        if platform_facts.is_installed_path(ctx.path):
            return None
        if not ctx.is_check:
            self._store_facts(ctx.id)
        if self._config_data is None:
            self._config_data = {
                "behaviour": PLUGIN_BEHAVIOUR_VERSION,
                "code": CODE_DIGEST,
                "tables": _tables_digest(),
                "typed_pallas": _version("typed-pallas"),
                "jax": _version("jax"),
                "config": _canonical(self._config.fingerprint()),
            }
        return self._config_data

    def _store_facts(self, module: str) -> None:
        """Put ``module``'s platform facts in its symbol table just before mypy
        serializes it, so that they are cached and part of its interface hash."""
        try:
            facts = self._facts()
            tree = self._modules.get(module) if self._modules is not None else None
            if facts is None or tree is None or tree.is_cache_skeleton:
                return
            builtins = self._modules.get("builtins") if self._modules is not None else None
            str_node = builtins.names.get("str") if builtins is not None else None
            if str_node is None or not isinstance(str_node.node, TypeInfo):
                return
            platform_facts.store(tree, facts.module_facts(tree), Instance(str_node.node, []))
        except Exception:
            if hooks.debug_enabled():
                raise


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point: the plugin class for this mypy ``version``."""
    from typed_pallas_mypy.jax_range import warn_if_unsupported_jax

    warn_if_unsupported_jax()  # a JAX outside the declared range: one warning, never a crash
    return TypedPallasPlugin
