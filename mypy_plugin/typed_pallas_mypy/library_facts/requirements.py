"""Requirements of library functions across modules, computed lazily from local facts.

``Resolver`` finds a module's file under the search paths, gets its local facts (from
``store`` when the file is unchanged, else from ``reader``), and combines them the way
``platform_facts`` combines the project's own functions:

* a function's requirement is the intersection of what its unconditional entry calls
  (params and evidence) and its unconditional calls of other functions, methods of the
  same instance, classes' instances and factories give; none if it reads the platform
  (itself, or through a platform helper or variable of another module), calls a
  parameter or an unknown callable, or its sources contradict each other;
* aliases (``f = g``, ``functools.partial``, ``jax.jit``, ``jax.custom_vjp``) and
  re-exports (``from .ops import gmm``) have their target's requirement;
* a class's instances (``C(...)(x)``) have the requirement of its ``__call__`` (through
  its bases of the same library); a function that returns ``C(...)`` on every path
  (a factory) has it too;
* interpret mode: a requirement whose kernels take ``interpret=`` from a parameter
  records it (``Marker``); a caller passing a truthy or unknown value for it gets no
  requirement from that call, one passing its own parameter forwards the marker.

Modules of jax's framework (all of ``jax`` but ``jax.experimental.pallas.ops``) are
never read: calls there are entry points (handled by the reader) or opaque. A module
whose source mentions neither Pallas nor the platform is not parsed: its functions have
no requirement, and it is read only for a name it re-exports.

What it does not do: import what it reads, or raise (``LibraryFacts`` turns any
failure into silence).
"""

from __future__ import annotations

import os
import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Final

from typed_pallas import _platforms
from typed_pallas_mypy import evidence_tables
from typed_pallas_mypy.entries import ENTRIES
from typed_pallas_mypy.fullnames import JAX_READ_PREFIX, NO_KERNEL_PACKAGES
from typed_pallas_mypy.library_facts import model, reader
from typed_pallas_mypy.library_facts.model import (
    FALSE,
    TRUE,
    UNKNOWN,
    Alias,
    ArgSum,
    CallArgs,
    CallEvent,
    ClassSummary,
    EntryEvent,
    Evidence,
    FactsFormatError,
    FunctionSummary,
    ModuleFacts,
)
from typed_pallas_mypy.library_facts.store import Entry, FactsStore, Stamp

#: How many calls deep a requirement chain is followed (as ``platform_facts.MAX_DEPTH``).
MAX_DEPTH: Final = 8
#: How many aliases, re-exports and base classes deep a name is followed.
_NAME_DEPTH: Final = 8
LOWERING: Final = _platforms.LOWERING_SET

#: How interpret mode reaches a requirement's kernels:
#: None: never (the requirement always holds);
#: ("p", name, position or -1, default): the function's parameter ``name``;
#: ("o", name): a parameter ``name`` of an enclosing function (a closure);
#: ("a", attr): the instance attribute ``self.attr``;
#: ("k", attr, key, fallback): the key ``key`` of a ``**self.attr`` splat, with the
#: ``fallback`` argument summary when the key is absent.
Marker = tuple[str, ...] | None


@dataclass(frozen=True)
class Req:
    """A requirement while it is being combined (``LibraryRequirement`` plus a marker)."""

    platforms: frozenset[str]
    cause: tuple[str, str, str]
    chain: tuple[str, ...]
    marker: Marker


class _Drop:
    """A call that gives no requirement (interpret on, or not known)."""


DROP: Final = _Drop()


class _Unknown:
    """A call of something unknown: the caller has no requirement at all."""


UNKNOWN_CALL: Final = _Unknown()


@dataclass(frozen=True)
class Located:
    """A module found under a search root."""

    module: str
    root: str
    path: str
    is_package: bool

    @property
    def relpath(self) -> str:
        return os.path.relpath(self.path, self.root).replace(os.sep, "/")


@dataclass(frozen=True)
class Target:
    """What a fullname names in a read module."""

    located: Located
    facts: ModuleFacts
    #: "function", "class", "alias"
    kind: str
    name: str
    function: FunctionSummary | None = None
    cls: ClassSummary | None = None
    alias: Alias | None = None

    @property
    def fullname(self) -> str:
        return f"{self.facts.module}.{self.name}"


class Resolver:
    """Local facts of modules under ``search_paths``, and requirements from them."""

    def __init__(self, search_paths: Sequence[str], store: FactsStore) -> None:
        self.search_paths = [os.path.abspath(p) for p in search_paths]
        self.store = store
        self._located: dict[str, Located | None] = {}
        self._facts: dict[str, ModuleFacts | None] = {}
        self._worth: dict[str, bool] = {}
        self._sources: dict[str, bytes | None] = {}
        #: module -> path of every module whose facts were consulted
        self.read: dict[str, str] = {}
        self._reqs: dict[str, Req | _Unknown | None] = {}
        self._in_progress: set[str] = set()
        self._helpers: dict[str, bool] = {}

    # ------------------------------------------------------------------ modules

    def locate(self, module: str) -> Located | None:
        if module in self._located:
            return self._located[module]
        found: Located | None = None
        if module and all(part.isidentifier() for part in module.split(".")):
            parts = module.split(".")
            for root in self.search_paths:
                base = os.path.join(root, *parts)
                init = os.path.join(base, "__init__.py")
                if os.path.isfile(base + ".py"):
                    found = Located(module, root, base + ".py", False)
                    break
                if os.path.isfile(init):
                    found = Located(module, root, init, True)
                    break
        self._located[module] = found
        return found

    def is_framework(self, module: str) -> bool:
        """jax's own modules and the packages that define no kernel, never read
        (``jax.experimental.pallas.ops`` is read)."""
        if module.split(".", 1)[0] in NO_KERNEL_PACKAGES:
            return True
        return (module == "jax" or module.startswith("jax.")) and not (module + ".").startswith(
            JAX_READ_PREFIX
        )

    def _stamp(self, located: Located) -> Stamp | None:
        try:
            stat = os.stat(located.path)
        except OSError:
            return None
        return Stamp(located.path, stat.st_size, stat.st_mtime_ns)

    def _source(self, located: Located) -> bytes | None:
        if located.module not in self._sources:
            try:
                with open(located.path, "rb") as handle:
                    self._sources[located.module] = handle.read()
            except OSError:
                self._sources[located.module] = None
        return self._sources[located.module]

    def module_facts(self, module: str, *, for_name: str | None = None) -> ModuleFacts | None:
        """The local facts of ``module``; for a module not worth reading, only when
        ``for_name`` may be a name it re-exports (not defined there)."""
        if module in self._facts:
            return self._facts[module]
        if self.is_framework(module):
            return None
        located = self.locate(module)
        if located is None:
            return None
        stamp = self._stamp(located)
        if stamp is None:
            return None
        stored = self.store.get(module, stamp)
        if stored is not None and stored.facts is not None:
            try:
                facts = model.module_from(module, stored.facts)
            except (FactsFormatError, TypeError, ValueError):
                facts = None
            if facts is not None:
                self._remember(located, facts)
                return facts
        worth = stored.worth if stored is not None else None
        source: bytes | None = None
        if worth is None:
            source = self._source(located)
            if source is None:
                return None
            worth = reader.worth_reading(source)
            if not worth:
                self.store.put(module, stamp, Entry(False, None))
        if not worth:
            if for_name is None:
                return None
            source = source if source is not None else self._source(located)
            if source is None or _defines(source, for_name):
                return None
        source = source if source is not None else self._source(located)
        if source is None:
            return None
        parsed = reader.read_module(source, module, is_package=located.is_package)
        self.store.put(
            module,
            stamp,
            Entry(worth, model.module_json(parsed) if parsed is not None else {"unparsed": True}),
        )
        if parsed is None:
            self._facts[module] = None
            self.read[module] = located.path
            return None
        self._remember(located, parsed)
        return parsed

    def _remember(self, located: Located, facts: ModuleFacts) -> None:
        self._facts[located.module] = facts
        self.read[located.module] = located.path

    # ------------------------------------------------------------------ names

    def resolve(self, fullname: str, depth: int = 0) -> Target | None:
        """What ``fullname`` names, following re-exports; None: nothing readable."""
        if depth > _NAME_DEPTH:
            return None
        parts = fullname.split(".")
        for i in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:i])
            if self.is_framework(module):
                return None
            located = self.locate(module)
            if located is None:
                continue
            rest = parts[i:]
            facts = self.module_facts(module, for_name=rest[0])
            if facts is None:
                return None
            return self._in_module(located, facts, rest, depth)
        return None

    def _in_module(
        self, located: Located, facts: ModuleFacts, rest: list[str], depth: int
    ) -> Target | None:
        joined = ".".join(rest)
        function = facts.functions.get(joined)
        if function is not None:
            return Target(located, facts, "function", joined, function=function)
        binding = facts.bindings.get(rest[0])
        if binding is None:
            return None
        if binding.kind == model.IMPORT:
            return self.resolve(".".join([binding.target, *rest[1:]]), depth + 1)
        if binding.kind == model.CLASS:
            cls = facts.classes.get(rest[0])
            if cls is None:
                return None
            if len(rest) == 1:
                return Target(located, facts, "class", rest[0], cls=cls)
            if len(rest) == 2:
                found = self.method(located, facts, cls, rest[1], depth + 1)
                return found
            return None
        if binding.kind == model.ALIAS and len(rest) == 1:
            alias = facts.aliases.get(rest[0])
            if alias is not None:
                return Target(located, facts, "alias", rest[0], alias=alias)
        return None

    def method(
        self, located: Located, facts: ModuleFacts, cls: ClassSummary, name: str, depth: int
    ) -> Target | None:
        """The method ``name`` of ``cls`` or of its bases (depth first)."""
        for found in self._mro(located, facts, cls, depth):
            for method_name, qualname in found[2].methods:
                if method_name == name:
                    function = found[1].functions.get(qualname)
                    if function is None:
                        return None
                    return Target(found[0], found[1], "function", qualname, function=function)
        return None

    def has_unknown_base(self, located: Located, facts: ModuleFacts, cls: ClassSummary) -> bool:
        """Whether some base of ``cls`` is not read (its methods are not known)."""
        for base_facts in self._mro(located, facts, cls, 0):
            for base in base_facts[2].bases:
                if base in ("builtins.object", "typing.Generic", "abc.ABC"):
                    continue
                target = self.resolve(base) if base != UNKNOWN else None
                if target is None or target.kind != "class":
                    return True
        return False

    def _mro(
        self, located: Located, facts: ModuleFacts, cls: ClassSummary, depth: int
    ) -> Iterator[tuple[Located, ModuleFacts, ClassSummary]]:
        seen: set[str] = set()
        stack: list[tuple[Located, ModuleFacts, ClassSummary, int]] = [(located, facts, cls, depth)]
        while stack:
            here, here_facts, here_cls, here_depth = stack.pop(0)
            key = f"{here_facts.module}.{here_cls.qualname}"
            if key in seen or here_depth > _NAME_DEPTH:
                continue
            seen.add(key)
            yield here, here_facts, here_cls
            for base in here_cls.bases:
                if base == UNKNOWN:
                    continue
                target = self.resolve(base, here_depth + 1)
                if target is not None and target.kind == "class" and target.cls is not None:
                    stack.append((target.located, target.facts, target.cls, here_depth + 1))

    # ------------------------------------------------------------------ requirements

    def requirement(self, fullname: str) -> Req | None:
        """The requirement of calling ``fullname`` (marker in the caller's terms)."""
        found = self._callable_req(fullname, 0)
        return found if isinstance(found, Req) else None

    def _callable_req(self, fullname: str, depth: int) -> Req | _Unknown | None:
        if depth > _NAME_DEPTH:
            return None
        target = self.resolve(fullname)
        if target is None:
            return None
        if target.kind == "function" and target.function is not None:
            return self._function_req(target)
        if target.kind == "class" and target.cls is not None:
            found = self._instance(target, None, None, None)
            return found if isinstance(found, Req) else None
        if target.kind == "alias" and target.alias is not None:
            return self._alias_req(target, depth)
        return None

    def _function_req(self, target: Target) -> Req | _Unknown | None:
        key = target.fullname
        if key in self._reqs:
            return self._reqs[key]
        if key in self._in_progress or len(self._in_progress) > MAX_DEPTH * 4:
            return None  # recursion: no requirement from the cycle
        self._in_progress.add(key)
        try:
            result = self._compute(target)
        finally:
            self._in_progress.discard(key)
        self._reqs[key] = result
        return result

    def _compute(self, target: Target) -> Req | _Unknown | None:
        fn = target.function
        assert fn is not None
        if fn.opaque or not target.facts.pallas or fn.blocked is not None:
            return None
        if self._reads_platform(fn):
            return None
        sources: list[Req] = []
        for event in fn.events:
            found: Req | _Drop | _Unknown | None
            if isinstance(event, EntryEvent):
                found = self._entry_source(target, event)
            else:
                found = self._call_source(target, event)
            if isinstance(found, _Unknown):
                return None
            if isinstance(found, Req):
                sources.append(found)
        if fn.returns is not None:
            made = self._returned_instance(target, fn.returns)
            if isinstance(made, Req):
                sources.append(made)
        if fn.returns_closure is not None:
            made = self._returned_closure(target, fn.returns_closure)
            if isinstance(made, Req):
                sources.append(made)
        return _combine(sources)

    def _reads_platform(self, fn: FunctionSummary) -> bool:
        """Whether ``fn`` references a platform helper or platform variable elsewhere."""
        return any(self._is_platform_ref(name) for name in fn.refs)

    def _is_platform_ref(self, name: str) -> bool:
        if name in self._helpers:
            return self._helpers[name]
        self._helpers[name] = False
        result = False
        parts = name.split(".")
        for i in range(len(parts) - 1, 0, -1):
            module = ".".join(parts[:i])
            if self.is_framework(module):
                break
            located = self.locate(module)
            if located is None:
                continue
            facts = self.module_facts(module, for_name=parts[i])
            if facts is None:
                break
            rest = parts[i:]
            binding = facts.bindings.get(rest[0])
            function = facts.functions.get(".".join(rest))
            if function is not None:
                result = function.helper == "platform" or (
                    function.helper == "return"
                    and any(self._is_platform_ref(ref) for ref in function.refs)
                )
            elif binding is not None and binding.kind == model.PLATFORM_VALUE:
                result = True
            elif binding is not None and binding.kind == model.IMPORT:
                result = self._is_platform_ref(".".join([binding.target, *rest[1:]]))
            break
        self._helpers[name] = result
        return result

    # ------------------------------------------------------------------ sources

    def _where(self, target: Target, line: int) -> str:
        return f"{target.located.relpath}:{line}"

    def _short(self, target: Target) -> str:
        return target.name.rsplit(".", 1)[-1]

    def _entry_source(
        self, target: Target, event: EntryEvent, through: str | None = None
    ) -> Req | _Drop:
        """The requirement one entry call gives (``through``: how notes name the call
        when it goes through a wrapper)."""
        fn = target.function
        assert fn is not None
        marker = _lift(event.interpret, fn)
        if isinstance(marker, _Drop):
            return DROP
        platforms: frozenset[str] = LOWERING
        cause: tuple[str, str, str] | None = None
        detail = ""
        row = evidence_tables.ROW_OF_BACKEND.get(event.params)
        if row is not None:
            platforms = platforms & frozenset(row.lowers_on)
            cause = ("params", row.platform, row.backend)
            detail = f"takes {row.title} params"
        evidence: list[Evidence] = list(event.evidence)
        if event.kernel is not None:
            evidence.extend(self._kernel_evidence(event.kernel, event.line))
        for ev in evidence:
            ev_platforms = frozenset(
                p for b in ev.backends for p in evidence_tables.ROW_OF_BACKEND[b].lowers_on
            )
            if not (platforms & ev_platforms):
                return DROP  # params against evidence: a contradiction, not a requirement
            platforms = platforms & ev_platforms
            if cause is None:
                backend = sorted(ev.backends)[0]
                cause = ("evidence", backend, backend)
                label = evidence_tables.BACKEND_LABEL[backend]
                detail = f"uses {ev.what} (line {ev.line}), {label}-only"
        if cause is None or platforms == LOWERING:
            return DROP
        title = ENTRIES[event.entry].title
        what = through or f"its {title} at {self._where(target, event.line)}"
        note = (
            f"{self._short(target)} ({self._where(target, fn.line)}) lowers only for "
            f"{', '.join(sorted(platforms))}: {what} {detail}"
        )
        return Req(platforms, cause, (note,), marker)

    def _kernel_evidence(self, kernel: str, line: int) -> list[Evidence]:
        target = self.resolve(kernel)
        if target is None or target.function is None:
            return []
        fn = target.function
        short = kernel.rsplit(".", 1)[-1]
        return [
            Evidence(ev.backends, f"{ev.what} (in {short}, {self._where(target, ev.line)})", line)
            for ev in fn.body_evidence
        ]

    def _call_source(self, caller: Target, event: CallEvent) -> Req | _Drop | _Unknown | None:
        found: list[Req] = []
        for name in event.targets:
            one = self._one_call(caller, event, name)
            if isinstance(one, _Unknown):
                return UNKNOWN_CALL
            if not isinstance(one, Req):
                return DROP
            found.append(one)
        if not found:
            return DROP
        platforms = frozenset.intersection(*(f.platforms for f in found))
        if not platforms or any(f.marker != found[0].marker for f in found):
            return DROP
        first = found[0]
        return Req(platforms, first.cause, first.chain, first.marker)

    def _one_call(self, caller: Target, event: CallEvent, name: str) -> Req | _Drop | _Unknown:
        fn = caller.function
        assert fn is not None
        bound = event.bound
        if name.startswith("self:"):
            callee = self._self_method(caller, name[len("self:") :])
            if callee is None:
                return DROP
            if isinstance(callee, _Unknown):
                return UNKNOWN_CALL
            target: Target | None = callee
        else:
            target = self.resolve(name)
        if target is None:
            return DROP  # not read: known library code, or nothing found
        short = name.rsplit(".", 1)[-1] if not name.startswith("self:") else name[5:]
        at = self._where(caller, event.line)
        if event.as_entry is not None:
            through = self._through_wrapper(target, event)
            if through is not None:
                where = self._where(caller, event.as_entry.line)
                return self._entry_source(
                    caller, event.as_entry, f"its call of {short} at {where} ({through})"
                )
        plats_prefix = f"{self._short(caller)} ({self._where(caller, fn.line)}) lowers only for "
        if target.kind == "class" and target.cls is not None:
            if event.mode != model.RESULT:
                return DROP  # a constructor call runs no kernel
            made = self._instance(target, event.args, event.then, fn)
            if not isinstance(made, Req):
                return made if isinstance(made, _Unknown) else DROP
            plats = ", ".join(sorted(made.platforms))
            link = (
                f"{plats_prefix}{plats}: it calls a {target.name} at {at}, "
                f"whose __call__ lowers only for {plats}"
            )
            return _linked(made, link)
        if target.kind == "function" and target.function is not None:
            callee_req = self._function_req(target)
        elif target.kind == "alias":
            callee_req = self._callable_req(target.fullname, 1)
        else:
            return DROP
        if isinstance(callee_req, _Unknown) or callee_req is None:
            return UNKNOWN_CALL if event.mode == model.RESULT else DROP
        if target.kind == "function" and target.function is not None:
            if target.function.is_method and not bound and callee_req.marker is not None:
                return DROP  # an unbound method call: positions shift
        marker = _translate(callee_req.marker, event.args, bound, caller, target)
        if isinstance(marker, _Drop):
            return DROP
        plats = ", ".join(sorted(callee_req.platforms))
        link = f"{plats_prefix}{plats}: it calls {short} at {at}"
        return _linked(Req(callee_req.platforms, callee_req.cause, callee_req.chain, marker), link)

    def _through_wrapper(self, target: Target, event: CallEvent) -> str | None:
        """How notes name the wrapper ``target`` is, when ``event`` calls it the way
        its ``as_entry`` reading assumes: a wrapper of ``pl.pallas_call`` that passes its
        parameters on under the same names and positions (or its ``**kwargs``), called
        (or its result called) where the kernel runs."""
        found = self._wrapper_target(target, 0)
        if found is None or found.function is None or found.function.wrapper is None:
            return None
        wrapper = found.function.wrapper
        spec = ENTRIES.get(wrapper.entry)
        if spec is None or spec.positional != ("kernel", "out_shape") or spec.body is None:
            return None
        if wrapper.deferred != (event.mode == model.RESULT):
            return None
        forwarded = set()
        for formal, param, position in wrapper.forwards:
            expected = spec.positional.index(formal) if formal in spec.positional else -1
            if formal != param or position != expected:
                return None
            forwarded.add(formal)
        if spec.body not in forwarded:
            return None
        if "compiler_params" not in forwarded and wrapper.kwargs is None:
            return None
        where = f"{found.located.relpath}:{found.function.line}"
        return f"a wrapper of {spec.title}, {where}"

    def _wrapper_target(self, target: Target, depth: int) -> Target | None:
        if depth > _NAME_DEPTH:
            return None
        if target.kind == "function":
            fn = target.function
            return target if fn is not None and not fn.opaque and fn.wrapper else None
        if target.kind == "alias" and target.alias is not None:
            alias = target.alias
            if alias.kind in (model.REF, model.KEEP) and len(alias.targets) == 1:
                inner = self.resolve(alias.targets[0])
                return self._wrapper_target(inner, depth + 1) if inner is not None else None
        return None

    def _self_method(self, caller: Target, name: str) -> Target | _Unknown | None:
        fn = caller.function
        assert fn is not None
        if not fn.is_method or "." not in fn.qualname:
            return UNKNOWN_CALL
        class_name = fn.qualname.rsplit(".", 1)[0]
        cls = caller.facts.classes.get(class_name)
        if cls is None:
            return UNKNOWN_CALL
        found = self.method(caller.located, caller.facts, cls, name, 0)
        if found is not None:
            if self._overridden_below(caller, class_name, name):
                return None  # an instance of a subclass runs another method
            return found
        if self.has_unknown_base(caller.located, caller.facts, cls):
            return None  # a method of a base that is not read: library code
        return UNKNOWN_CALL  # an instance attribute holding a callable

    def _overridden_below(self, caller: Target, class_name: str, name: str) -> bool:
        """Whether a class of the caller's module that derives from ``class_name``
        defines ``name`` itself."""
        base = f"{caller.facts.module}.{class_name}"
        for cls in caller.facts.classes.values():
            if cls.qualname == class_name or name not in dict(cls.methods):
                continue
            for _, _, ancestor in self._mro(caller.located, caller.facts, cls, 0):
                if f"{caller.facts.module}.{ancestor.qualname}" == base:
                    return True
        return False

    def _instance(
        self,
        target: Target,
        ctor: CallArgs | None,
        then: CallArgs | None,
        caller: FunctionSummary | None,
    ) -> Req | _Drop | _Unknown:
        """The requirement of calling an instance of ``target``'s class, built with
        ``ctor`` arguments (None: as the class itself, for its API entry) and called
        with ``then`` (None: by someone else)."""
        cls = target.cls
        assert cls is not None
        if cls.opaque:
            return DROP
        call = self.method(target.located, target.facts, cls, "__call__", 0)
        if call is None or call.function is None:
            return DROP
        found = self._function_req(call)
        if not isinstance(found, Req):
            return DROP
        marker = found.marker
        result: Marker | _Drop
        if marker is None:
            result = None
        elif marker[0] == "p":
            if then is None or caller is None:
                return DROP
            result = _lift(_evaluate(then, marker), caller)
        elif marker[0] == "a":
            result = self._from_constructor(target, cls, marker[1], ctor, caller)
        elif marker[0] == "k":
            result = self._from_constructor_kwargs(target, cls, marker, ctor, caller)
        else:
            result = DROP
        if isinstance(result, _Drop):
            return DROP
        return Req(found.platforms, found.cause, found.chain, result)

    def _init_of(self, target: Target, cls: ClassSummary) -> Target | None:
        return self.method(target.located, target.facts, cls, "__init__", 0)

    def _constructor_param(
        self, target: Target, cls: ClassSummary, attr: str
    ) -> tuple[str, int, str] | None:
        """(parameter, position, default) of the constructor that ``self.attr`` holds."""
        if cls.fields is not None and self._init_of(target, cls) is None:
            for i, param in enumerate(cls.fields):
                if param.name == attr:
                    return (param.name, i, param.default)
            return None
        init = self._init_of(target, cls)
        if init is None or init.function is None:
            return None
        source = dict(init.function.self_attrs).get(attr)
        if source is None or not source.startswith("p:"):
            return None
        return _param_marker(init.function, source[2:])

    def _from_constructor(
        self,
        target: Target,
        cls: ClassSummary,
        attr: str,
        ctor: CallArgs | None,
        caller: FunctionSummary | None,
    ) -> Marker | _Drop:
        param = self._constructor_param(target, cls, attr)
        if param is None:
            return DROP
        name, position, default = param
        if default not in (FALSE, model.REQUIRED):
            return DROP
        marker = ("p", name, str(position), default)
        if ctor is None:
            return marker  # the class itself: its constructor's parameter
        if caller is None:
            value = _evaluate(ctor, marker)
            return None if value == FALSE else DROP
        return _lift(_evaluate(ctor, marker), caller)

    def _from_constructor_kwargs(
        self,
        target: Target,
        cls: ClassSummary,
        marker: tuple[str, ...],
        ctor: CallArgs | None,
        caller: FunctionSummary | None,
    ) -> Marker | _Drop:
        _, attr, key, fallback = marker
        init = self._init_of(target, cls)
        if init is None or init.function is None or ctor is None:
            return DROP
        if dict(init.function.self_attrs).get(attr) != "kwargs":
            return DROP
        named = {p.name for p in init.function.params if p.kind != model.DSTAR}
        value: ArgSum | tuple[str, ...]
        given = ctor.keyword(key)
        if key in named:
            value = fallback
        elif given is not None:
            value = given
        elif ctor.star_kwargs:
            return DROP
        else:
            value = fallback
        if caller is None:
            return None if value == FALSE else DROP
        return _lift(value, caller)

    def _returned_instance(
        self, target: Target, returned: tuple[str, CallArgs, int]
    ) -> Req | _Drop | _Unknown:
        name, args, line = returned
        made_target = self.resolve(name)
        if made_target is None or made_target.kind != "class" or made_target.cls is None:
            return DROP
        fn = target.function
        assert fn is not None
        made = self._instance(made_target, args, None, fn)
        if not isinstance(made, Req):
            return DROP
        plats = ", ".join(sorted(made.platforms))
        link = (
            f"{self._short(target)} ({self._where(target, fn.line)}) lowers only for {plats}: "
            f"it returns a {made_target.name} at {self._where(target, line)}, "
            f"whose __call__ lowers only for {plats}"
        )
        return _linked(made, link)

    def _returned_closure(self, target: Target, closure: tuple[str, int]) -> Req | _Drop:
        name, line = closure
        inner = self.resolve(name)
        if inner is None or inner.function is None:
            return DROP
        found = self._function_req(inner)
        if not isinstance(found, Req):
            return DROP
        fn = target.function
        assert fn is not None
        marker = found.marker
        lifted: Marker | _Drop
        if marker is None:
            lifted = None
        elif marker[0] == "o":
            lifted = _lift(f"p:{marker[1]}", fn)
        else:
            lifted = DROP
        if isinstance(lifted, _Drop):
            return DROP
        plats = ", ".join(sorted(found.platforms))
        link = (
            f"{self._short(target)} ({self._where(target, fn.line)}) lowers only for {plats}: "
            f"it returns {inner.name.rsplit('.', 1)[-1]} at {self._where(target, line)}"
        )
        return _linked(Req(found.platforms, found.cause, found.chain, lifted), link)

    def _alias_req(self, target: Target, depth: int) -> Req | _Unknown | None:
        alias = target.alias
        assert alias is not None
        found: list[Req] = []
        for name in alias.targets:
            if alias.kind == model.INSTANCE:
                made_target = self.resolve(name)
                if made_target is None:
                    return None
                if made_target.kind == "class" and made_target.cls is not None:
                    made = self._instance(made_target, alias.args, None, None)
                    if not isinstance(made, Req):
                        return None
                    found.append(made)
                    continue
                return None
            one = self._callable_req(name, depth + 1)
            if not isinstance(one, Req):
                return None
            if alias.kind == model.PARTIAL:
                shifted = _bind_partial(one.marker, alias.args)
                if isinstance(shifted, _Drop):
                    return None
                one = Req(one.platforms, one.cause, one.chain, shifted)
            found.append(one)
        if not found:
            return None
        platforms = frozenset.intersection(*(f.platforms for f in found))
        if not platforms or any(f.marker != found[0].marker for f in found):
            return None
        return Req(platforms, found[0].cause, found[0].chain, found[0].marker)


# --------------------------------------------------------------------------- helpers


def _defines(source: bytes, name: str) -> bool:
    """Whether ``source`` defines ``name`` at the start of a line (a def, a class or an
    assignment): then it is not a re-export, and an unread module's name is opaque."""
    pattern = (
        rb"^(?:async\s+def|def|class)\s+"
        + re.escape(name.encode())
        + rb"\b|^"
        + re.escape(name.encode())
        + rb"\s*(?::[^=\n]*)?="
    )
    return re.search(pattern, source, re.MULTILINE) is not None


def _linked(req: Req, link: str) -> Req:
    return Req(req.platforms, req.cause, (link, *req.chain)[:MAX_DEPTH], req.marker)


def _combine(sources: list[Req]) -> Req | None:
    """The requirement of a function from its sources (each with its marker)."""
    if not sources:
        return None
    platforms = frozenset.intersection(*(s.platforms for s in sources))
    if not platforms:
        return None  # a contradiction: the local check reports it, no requirement
    markers = {s.marker for s in sources}
    if len(markers) == 1:
        first = sources[0]
        return Req(platforms, first.cause, first.chain, first.marker)
    always = [s for s in sources if s.marker is None]
    if always and frozenset.intersection(*(s.platforms for s in always)) == platforms:
        first = always[0]
        return Req(platforms, first.cause, first.chain, None)
    return None


def _param_marker(fn: FunctionSummary, name: str) -> tuple[str, int, str] | None:
    """(name, position as callers pass it or -1, default) of a parameter of ``fn``."""
    index = 0
    params = fn.params[1:] if fn.is_method else fn.params
    for param in params:
        if param.kind in (model.POSONLY, model.POS):
            if param.name == name:
                return (name, index, param.default)
            index += 1
        elif param.name == name:
            if param.kind in (model.STAR, model.DSTAR):
                return None
            return (name, -1, param.default)
    return None


def _lift(value: ArgSum | tuple[str, ...], caller: FunctionSummary) -> Marker | _Drop:
    """What an argument summary (in ``caller``) means for interpret mode."""
    if isinstance(value, tuple):
        return value  # ("k", ...): from a ``**self.attr`` splat
    if value == FALSE:
        return None
    if value in (TRUE, UNKNOWN):
        return DROP
    kind, _, name = value.partition(":")
    if kind == "p":
        found = _param_marker(caller, name)
        if found is None or found[2] not in (FALSE, model.REQUIRED):
            return DROP
        return ("p", found[0], str(found[1]), found[2])
    if kind == "o":
        return ("o", name)
    if kind == "a":
        return ("a", name) if caller.is_method else DROP
    return DROP


def _evaluate(args: CallArgs, marker: tuple[str, ...]) -> ArgSum | tuple[str, ...]:
    """What ``args`` pass for the parameter a ``("p", name, position, default)`` marker
    names."""
    _, name, position_text, default = marker
    position = int(position_text)
    given = args.keyword(name)
    if given is not None:
        return given
    if position >= 0:
        if position < len(args.positional):
            return args.positional[position]
        if args.star:
            return UNKNOWN
    self_splats = [s[2:] for s in args.star_kwargs if s.startswith("a:")]
    others = [s for s in args.star_kwargs if not s.startswith("a:")]
    absent = FALSE if default == FALSE else UNKNOWN
    if self_splats:
        if len(self_splats) != 1:
            return UNKNOWN
        fallback = UNKNOWN if others or (args.star and position >= 0) else absent
        return ("k", self_splats[0], name, fallback)
    if others:
        return UNKNOWN
    return absent


def _translate(
    marker: Marker, args: CallArgs, bound: bool, caller: Target, callee: Target
) -> Marker | _Drop:
    """A callee's marker, seen from a call of it in ``caller``."""
    fn = caller.function
    assert fn is not None
    if marker is None:
        return None
    kind = marker[0]
    if kind == "p":
        return _lift(_evaluate(args, marker), fn)
    if kind == "o":
        parent = callee.name.rsplit(".<locals>.", 1)[0] if ".<locals>." in callee.name else None
        if parent != caller.name or callee.facts.module != caller.facts.module:
            return DROP
        return _lift(f"p:{marker[1]}", fn) if _param_marker(fn, marker[1]) else ("o", marker[1])
    if kind in ("a", "k"):
        return marker if bound else DROP
    return DROP


def _bind_partial(marker: Marker, bound: CallArgs) -> Marker | _Drop:
    """The marker of ``functools.partial(f, *bound)`` from ``f``'s marker."""
    if marker is None:
        return None
    if marker[0] != "p":
        return DROP
    _, name, position_text, default = marker
    position = int(position_text)
    given = bound.keyword(name)
    if given is not None:
        return None if given == FALSE else DROP
    if bound.star or bound.star_kwargs:
        return DROP
    if position >= 0:
        if position < len(bound.positional):
            return None if bound.positional[position] == FALSE else DROP
        position -= len(bound.positional)
    return ("p", name, str(position), default)
