"""The mypy plugin entry point: ``plugins = ["typed_pallas_mypy"]``.

``plugin(version)`` returns ``TypedPallasPlugin``, whose hooks only look names up in
tables and hand the call to ``transformers.hooks`` (thin dispatcher, as in django-stubs
and returns). It hooks:

* the Pallas entry points (``entries.ENTRIES``: ``pl.pallas_call``, ``pl.kernel``,
  ``plgpu.kernel``, ``pl.core_map``, the ``typed_pallas`` ones), as functions (the check)
  and as signatures (one error per mistake, ``transformers.signatures``);
* ``functools.partial`` (to see ``partial(pl.pallas_call, compiler_params=...)``; mypy's
  own ``partial`` inference runs afterwards, since a plugin hook would shadow it);
* the places where a platform is decided (``fullnames.DECISION_CALLS``) and every call
  of a function or method of the project: the platform a function requires, inferred
  across functions and modules, is checked where the platform is decided
  (``transformers.decisions``), and package wrappers are checked as the entry point
  they forward to;
* ``report_config_data``: for the project's modules, the code hash, JAX version and
  configuration (``cache_keys``), and, just before mypy writes a module's cache, its
  platform facts (``transformers.platform_facts``), so that incremental runs and the
  daemon re-check callers when a callee's platform changes;
* ``get_additional_deps``: inside mypy's daemon, marks each project module's source as
  it is parsed, so that an edit re-checks the callers that read its facts.

The transformers are imported on the first hook that needs them: a warm run, where
mypy checks nothing, loads only this module, ``cache_keys``, ``config`` and
``errorcodes``. The error code is registered when this module is imported, so that
``disable_error_code``, ``--disable-error-code``, per-module sections and inline
``# mypy:`` comments may name it (mypy checks them before any hook runs).

What it does not do: import jax (it reads names, never values), or report anything
when the platform cannot be known. Installed packages get no ``report_config_data``
(a configuration change would otherwise re-check all of jax).
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Final, Generic, TypeVar, final

from mypy.nodes import MypyFile
from mypy.options import Options
from mypy.plugin import (
    FunctionContext,
    FunctionSigContext,
    MethodContext,
    Plugin,
    ReportConfigContext,
)
from mypy.types import FunctionLike, Type
from typing_extensions import override

from typed_pallas_mypy import cache_keys, config, errorcodes

FunctionHook = Callable[[FunctionContext], Type]
MethodHook = Callable[[MethodContext], Type]
SignatureHook = Callable[[FunctionSigContext], FunctionLike]

#: The plugin's error codes, registered with mypy by importing ``errorcodes`` (creating an
#: ``ErrorCode`` registers it). mypy checks the codes its options name
#: (``disable_error_code``, ``--enable-error-code``, a per-module section) right after
#: loading the plugins, and a module's ``# mypy:`` comment when it parses the module,
#: before any hook runs: the codes must exist once this entry module is loaded.
ERROR_CODES: Final = (errorcodes.PALLAS_PLATFORM,)


_Hook = TypeVar("_Hook")


class _HookMemo(dict[str, "_Hook | None"], Generic[_Hook]):
    """fullname -> the hook (None: none), found on the first lookup. mypy asks for every
    call, method call and operator it checks (about 3,700 method lookups per body edit
    of a jax ops file under the daemon); a name seen before is then a dict lookup, with
    no Python frame. The answers never change for a plugin instance: project functions'
    hooks are kept for the life of the plugin (the daemon's included) as before."""

    def __init__(self, find: Callable[[str], _Hook | None]) -> None:
        super().__init__()
        self._find = find

    def __missing__(self, fullname: str) -> _Hook | None:
        hook = self[fullname] = self._find(fullname)
        return hook


@final
class TypedPallasPlugin(Plugin):
    """Checks Pallas compiler params against the platform the call can lower for."""

    def __init__(self, options: Options) -> None:
        super().__init__(options)
        self._config = config.load_config(options)  # bad config: exits with its message
        cache_keys.remember_config(self._config)
        cache_keys.note_shadows(options.shadow_file or ())
        self._config_data: dict[str, Any] | None = None
        self._hook_tables: _HookTables | None = None
        self._library_stamps = cache_keys.new_library_stamps()
        self._function_hooks = _HookMemo[FunctionHook](self._find_function_hook)
        self._method_hooks = _HookMemo[MethodHook](self._find_method_hook)
        self._signature_hooks = _HookMemo[SignatureHook](self._find_signature_hook)
        # the lookups themselves, not methods calling them (``_HookMemo``)
        setattr(self, "get_function_hook", self._function_hooks.__getitem__)  # noqa: B010
        setattr(self, "get_method_hook", self._method_hooks.__getitem__)  # noqa: B010
        setattr(  # noqa: B010
            self, "get_function_signature_hook", self._signature_hooks.__getitem__
        )

    def _tables(self) -> _HookTables:
        if self._hook_tables is None:
            self._hook_tables = _HookTables(self._config, lambda: self._modules, self.options)
        return self._hook_tables

    @override
    def get_function_hook(self, fullname: str) -> FunctionHook | None:
        return self._function_hooks[fullname]

    def _find_function_hook(self, fullname: str) -> FunctionHook | None:
        hook = self._tables().function_hooks.get(fullname)
        if hook is not None:
            return hook
        user: FunctionHook | None = self._user_hook(fullname)
        return user

    @override
    def get_function_signature_hook(self, fullname: str) -> SignatureHook | None:
        return self._signature_hooks[fullname]

    def _find_signature_hook(self, fullname: str) -> SignatureHook | None:
        return self._tables().signature_hooks.get(fullname)

    @override
    def get_method_hook(self, fullname: str) -> MethodHook | None:
        return self._method_hooks[fullname]

    def _find_method_hook(self, fullname: str) -> MethodHook | None:
        hook = self._tables().method_hooks.get(fullname)
        if hook is not None:
            return hook
        user: MethodHook | None = self._user_hook(fullname)
        return user

    def _user_hook(self, fullname: str) -> Any:
        """The hook for a call of a function of the project or of a library kernel, or
        None (memoized by the lookups above)."""
        return self._tables().user_hook(fullname)

    @override
    def get_additional_deps(self, file: MypyFile) -> list[tuple[int, str, int]]:
        """No extra dependencies. Inside mypy's daemon, a project module it has just
        parsed gets its source marked (``transformers.hooks.mark_parsed_source``)."""
        if cache_keys.in_daemon() and not cache_keys.is_installed_path(file.path):
            self._tables().mark_parsed_source(file)
        return []

    @override
    def report_config_data(self, ctx: ReportConfigContext) -> Any:
        """Code hash, JAX version, configuration and the library files used, for the
        project's modules; None for installed packages. When mypy is about to write a
        module's cache (``is_check=False``), its platform facts go into its symbol table
        first (a project module's), and the engine stores what it worked out so far
        (any module's: a checked module may be an installed one)."""
        installed = cache_keys.is_installed_path(ctx.path)
        if not ctx.is_check:
            self._tables().store_facts(ctx.id, installed=installed)
        if installed:
            return None
        if self._config_data is None:
            self._config_data = cache_keys.config_data(self._config)
        read = () if ctx.is_check else self._tables().project_files_read(ctx.id)
        uses = cache_keys.library_uses(
            self.options.cache_dir,
            ctx.id,
            writing=not ctx.is_check,
            memo=self._library_stamps,
            read=read,
        )
        if uses is None:
            return self._config_data
        return {**self._config_data, "libraries": uses}


class _HookTables:
    """The hook callbacks, built on the first hook mypy asks for."""

    def __init__(
        self,
        platform_config: config.PluginConfig,
        modules: Callable[[], dict[str, MypyFile] | None],
        options: Options,
    ) -> None:
        from typed_pallas_mypy import fullnames
        from typed_pallas_mypy.entries import ENTRIES
        from typed_pallas_mypy.transformers import hooks

        self.hooks = hooks
        self.session = hooks.Session(
            modules=modules,
            cache_dir=options.cache_dir,
            python_executable=options.python_executable,
            options=options,
        )
        self.platform_config = platform_config
        session = self.session
        self.function_hooks: dict[str, FunctionHook] = {
            name: functools.partial(
                hooks.check_entry_call, entry=entry, config=platform_config, session=session
            )
            for name, entry in ENTRIES.items()
        }
        decision_hook = functools.partial(
            hooks.check_decision_call, config=platform_config, session=session
        )
        for name in fullnames.DECISION_CALLS:
            self.function_hooks.setdefault(name, decision_hook)
        self.function_hooks[fullnames.FUNCTOOLS_PARTIAL] = functools.partial(
            hooks.check_partial, config=platform_config, session=session
        )
        library_call = functools.partial(
            hooks.check_library_call, config=platform_config, session=session
        )
        self.method_hooks: dict[str, MethodHook] = dict.fromkeys(
            fullnames.CALLABLE_OBJECT_CALLS, library_call
        )
        for registry in platform_config.registries:  # [tool.typed-pallas] registries
            self.function_hooks.setdefault(registry.call, decision_hook)
            self.method_hooks.setdefault(registry.call, library_call)
        self.method_hooks[fullnames.PARTIAL_CALL] = functools.partial(
            hooks.check_partial_call, config=platform_config, session=session
        )
        self.signature_hooks: dict[str, SignatureHook] = {
            name: functools.partial(hooks.widen_proven_mismatch, entry=entry, session=session)
            for name, entry in ENTRIES.items()
        }
        for name in fullnames.TP_DISPATCH:
            self.signature_hooks[name] = hooks.accept_untagged_branches

    def user_hook(self, fullname: str) -> Any:
        kind = self.hooks.function_kind(fullname, self.session)
        if kind == "project":
            return functools.partial(
                self.hooks.check_user_call,
                fullname=fullname,
                config=self.platform_config,
                session=self.session,
            )
        if kind == "library kernel":
            return functools.partial(
                self.hooks.check_library_call, config=self.platform_config, session=self.session
            )
        return None

    def store_facts(self, module: str, *, installed: bool) -> None:
        if installed:
            self.hooks.save_inference(self.session)
        else:
            self.hooks.store_facts(module, self.session, self.platform_config)

    def project_files_read(self, module: str) -> list[str]:
        return self.hooks.project_files_read(module, self.session)

    def mark_parsed_source(self, tree: MypyFile) -> None:
        self.hooks.mark_parsed_source(tree, self.session)


def plugin(version: str) -> type[Plugin]:
    """mypy's entry point: the plugin class for this mypy ``version``."""
    from typed_pallas_mypy.jax_range import note_unchecked_jax, warn_if_unsupported_jax

    if warn_if_unsupported_jax() is None:  # a JAX outside the declared range: one warning
        note_unchecked_jax()  # else a JAX release not checked: one note line; never a crash
    return TypedPallasPlugin
