"""``validate_compiler_params``: the check behind every Pallas entry-point hook.

For one call of ``pl.pallas_call``, ``pl.kernel``, ``plgpu.kernel``, ``pl.core_map`` or
a ``typed_pallas`` entry point (direct, or bound by ``functools.partial``):

1. a truthy literal ``interpret=``: nothing to check, JAX ignores params in interpret
   mode; an unknown one (or a ``**kwargs`` splat that may hold one): only
   contradictions with the kernel's own evidence are checked;
2. the params class (``params.resolve``); unknown or absent: nothing to check;
3. evidence (entry point, mesh, scratch allocations, grid spec, kernel body) that the
   kernel can only lower with another backend: error. The arguments and a kernel body
   of this module are read by the inference's reader (``index.cross``: the one reading,
   for the project and for libraries; this module only says which argument is which,
   by its index in the call); a mesh by its declared type is read here
   (``evidence.declared_mesh``). Without ``index.cross``: the entry point's own and the
   declared mesh only;
4. the enclosing platform guard, if any: params that cannot lower on any platform the
   guard lets through: error. A guarded call is not held to the configuration;
5. otherwise the module's configured platforms (``[tool.typed-pallas] platforms``):
   params that lower on none of them: error.

One error per call, code ``pallas-platform``, with JAX's runtime text as the message;
notes say what the evidence is and where, and what to use instead. ``CallView`` is one
call's arguments by parameter name, read from mypy's hook context or from the source
alone (``view_of_syntax``, for calls the requirement inference reads).

What it does not do: read evidence from source (``inference.reader``), follow the
platform across functions (``inference``, ``decisions``), or touch mypy's internals
(``reporting``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Literal, Protocol

from mypy.nodes import (
    ARG_NAMED,
    ARG_POS,
    ArgKind,
    CallExpr,
    ConditionalExpr,
    Expression,
    IntExpr,
    NameExpr,
    StrExpr,
)
from mypy.plugin import CheckerPluginInterface
from mypy.subtypes import is_subtype
from mypy.types import CallableType, Overloaded, ProperType, Type, get_proper_type

from typed_pallas import _platforms, _versions
from typed_pallas_mypy import evidence_tables
from typed_pallas_mypy.entries import EntrySpec, entry_evidence
from typed_pallas_mypy.inference.model import Evidence
from typed_pallas_mypy.transformers import evidence as evidence_mod
from typed_pallas_mypy.transformers import guards
from typed_pallas_mypy.transformers import params as params_mod
from typed_pallas_mypy.transformers.facts_store import Wrapper
from typed_pallas_mypy.transformers.guards import LOWERING
from typed_pallas_mypy.transformers.module_index import ModuleIndex
from typed_pallas_mypy.transformers.nodes import passed, ref_fullname, spelling, start_of
from typed_pallas_mypy.transformers.reporting import declared_type, report


class PlatformConfig(Protocol):
    """What the plugin needs of ``typed_pallas_mypy.config.PluginConfig``."""

    def platforms_for(self, module: str) -> frozenset[str] | None: ...

    @property
    def registries(self) -> Sequence[Registration]: ...


class Registration(Protocol):
    """A configured registry (``typed_pallas_mypy.config.Registry``)."""

    @property
    def call(self) -> str: ...
    @property
    def platform(self) -> str | None: ...
    @property
    def position(self) -> int | None: ...
    @property
    def function(self) -> str | None: ...
    @property
    def function_position(self) -> int | None: ...
    @property
    def origin(self) -> str: ...

    def platforms_of(self, value: str) -> frozenset[str] | None: ...


@dataclass
class CallView:
    """One call's arguments by parameter name, however they were passed."""

    entry: EntrySpec
    #: the call expression (``pl.pallas_call(...)`` or ``functools.partial(...)``)
    context: CallExpr
    args: dict[str, Expression] = field(default_factory=dict)
    types: dict[str, Type] = field(default_factory=dict)
    #: a ``*args`` / ``**kwargs`` splat may hold any parameter not passed by name
    has_splat: bool = False
    #: the expression naming the entry point (``pl.pallas_call``), for its declared type
    callee: Expression | None = None
    #: for a call of a package wrapper: a note saying where the params go
    wrapper: str | None = None
    #: the signature hook widened the params/mesh formals for this call (the plugin,
    #: not the stubs, reports its mismatch)
    widened: bool = False

    def add(self, name: str | None, kind: ArgKind, expr: Expression, typ: Type | None) -> None:
        if kind not in (ARG_POS, ARG_NAMED) or name is None:
            self.has_splat = True
            return
        self.args[name] = expr
        if typ is not None:
            self.types[name] = typ


def view_of_call(
    entry: EntrySpec,
    context: CallExpr,
    callee_arg_names: Sequence[str | None],
    args: Sequence[Sequence[Expression]],
    kinds: Sequence[Sequence[ArgKind]],
    types: Sequence[Sequence[Type]],
) -> CallView:
    view = CallView(entry, context, callee=context.callee)
    for formal, actuals, actual_kinds, actual_types in zip(callee_arg_names, args, kinds, types):
        for i, (expr, kind) in enumerate(zip(actuals, actual_kinds)):
            typ = actual_types[i] if i < len(actual_types) else None
            view.add(formal, kind, expr, typ)
            if len(actuals) > 1:
                view.has_splat = True
    if any(k not in (ARG_POS, ARG_NAMED) for k in context.arg_kinds):
        view.has_splat = True
    return view


def view_of_syntax(entry: EntrySpec, call: CallExpr) -> CallView:
    """A call's arguments by parameter name, read from the source alone (no types):
    for calls in modules other than the one being checked."""
    view = CallView(entry, call, callee=None)
    for i, (name, kind, expr) in enumerate(zip(call.arg_names, call.arg_kinds, call.args)):
        if kind == ARG_POS:
            formal = entry.positional[i] if i < len(entry.positional) else None
            if formal is None:
                continue
            view.add(formal, kind, expr, None)
        else:
            view.add(name, kind, expr, None)
    return view


def view_through_wrapper(entry: EntrySpec, call: CallExpr, wrapper: Wrapper) -> CallView:
    """The entry point's view of a call of a wrapper (``facts_store.Wrapper``): the
    caller's arguments the wrapper forwards, by name, position, ``**kwargs`` (keywords
    the wrapper does not name reach the entry point under their own name) or ``*args``
    (positional arguments past the wrapper's own become the entry's leading ones)."""
    view = CallView(entry, call, callee=None)
    by_position = {pos: formal for formal, _own, pos in wrapper.forwards if pos >= 0}
    by_name = {own: formal for formal, own, _pos in wrapper.forwards}
    positional = 0
    for kind, name, expr in zip(call.arg_kinds, call.arg_names, call.args):
        if kind == ARG_POS:
            if positional in by_position:
                view.add(by_position[positional], ARG_POS, expr, None)
            elif wrapper.args is not None and positional >= wrapper.args[1]:
                at = positional - wrapper.args[1]
                if at < len(entry.positional):
                    view.add(entry.positional[at], ARG_POS, expr, None)
            positional += 1
        elif kind == ARG_NAMED and name is not None:
            if name in by_name:
                view.add(by_name[name], ARG_NAMED, expr, None)
            elif wrapper.kwargs is not None:
                view.add(name, ARG_NAMED, expr, None)
        else:
            view.has_splat = True
    return view


# --------------------------------------------------------------------------- checks


def is_false(expr: Expression) -> bool:
    """``False``, ``None`` or ``0``: interpret mode off."""
    if isinstance(expr, NameExpr) and expr.fullname in ("builtins.False", "builtins.None"):
        return True
    return isinstance(expr, IntExpr) and expr.value == 0


def is_true(expr: Expression) -> bool:
    """A literal that turns interpret mode on: ``True``, a non-zero int, or an
    interpret-params constructor (``pltpu.InterpretParams()``)."""
    if isinstance(expr, NameExpr) and expr.fullname == "builtins.True":
        return True
    if isinstance(expr, IntExpr):
        return expr.value != 0
    if isinstance(expr, CallExpr):
        name = ref_fullname(expr.callee)
        return name is not None and name.rsplit(".", 1)[-1] == "InterpretParams"
    return False


Interpret = Literal["off", "on", "unknown"]


def interpret_mode(view: CallView) -> Interpret:
    """ "off" (absent, ``False``, ``None``, ``0``), "on" (a truthy literal), or
    "unknown" (anything else, or a ``**kwargs`` splat that may hold it)."""
    expr = view.args.get("interpret")
    if expr is None:
        return "unknown" if view.has_splat else "off"
    return _literal_mode(expr)


def _literal_mode(expr: Expression) -> Interpret:
    if is_false(expr):
        return "off"
    return "on" if is_true(expr) else "unknown"


def interpret_argument(
    node: Expression, parameter: tuple[str, int], field: tuple[str, bool] | None = None
) -> Interpret:
    """How ``node`` passes a callee's ``interpret`` parameter (``(name, position)``):
    in a call ``f(x, interpret=True)``, a partial ``functools.partial(f, interpret=True)``
    or a call of one; a bare reference ``f`` passes nothing ("off", the default). With
    ``field`` (the parameter holds a config object whose field decides: (name, declared
    off)), the argument must be that object's construction: ``f(Config())`` is off when
    the field's default is, ``f(Config(interpret=True))`` on, anything else unknown."""
    if field is not None:
        return _config_argument(node, parameter, field)
    if not isinstance(node, CallExpr):
        return "off"
    found = passed(node, *parameter)
    if found.expr is not None:
        return _literal_mode(found.expr)
    return "unknown" if found.splat else "off"


def _config_argument(
    node: Expression, parameter: tuple[str, int], field: tuple[str, bool]
) -> Interpret:
    if not isinstance(node, CallExpr):
        return "unknown"
    field_name, default_off = field
    given = passed(node, *parameter).expr
    if not isinstance(given, CallExpr) or any(kind != ARG_NAMED for kind in given.arg_kinds):
        return "unknown"  # given positional arguments, which field each sets is not known
    field_value = passed(given, field_name, None).expr
    if field_value is not None:
        return _literal_mode(field_value)
    return "off" if default_off else "unknown"


def stubs_reject(api: CheckerPluginInterface, view: CallView) -> bool:
    """True when the callee's own signature (the stubs, or typed-pallas' overloads)
    already rejects this call's ``compiler_params`` / ``mesh``: mypy then reports an
    ``arg-type`` or ``call-overload`` error, and the plugin says nothing more, so one
    mistake gives one error. (``plgpu.kernel`` with Triton params passes the stubs,
    whose types say only "gpu": that one is the plugin's.)"""
    if view.callee is None or view.widened:
        return False
    typ = declared_type(api, view.callee)
    if typ is None:
        return False
    proper: ProperType = get_proper_type(typ)
    items = proper.items if isinstance(proper, Overloaded) else [proper]
    for item in items:
        if not isinstance(item, CallableType):
            return False
        accepted = True
        for name in ("compiler_params", "mesh"):
            actual = view.types.get(name)
            if actual is None or name not in item.arg_names:
                continue
            formal = item.arg_types[item.arg_names.index(name)]
            if not is_subtype(actual, formal):
                accepted = False
        if accepted:
            return False
    return True


#: The entry parameters whose arguments the reader reads as evidence, with their role
#: (``inference.reader.Argument``); the mesh's is the entry's own (``EntrySpec.mesh``).
_EVIDENCE_ARGUMENTS = (
    ("scratch", "scratch_shapes"),
    ("scratch", "scratch_types"),
    ("grid_spec", "grid_spec"),
)


def _own_argument(view: CallView, role: str, name: str) -> tuple[str, int, str | None] | None:
    """(role, index in ``view.context.args``, keyword or None) of the argument ``name``
    of the entry call, for the reader to find in its own tree; None when the call does
    not pass it itself (by position or keyword)."""
    expr = view.args.get(name)
    if expr is None:
        return None
    at = next((i for i, arg in enumerate(view.context.args) if arg is expr), None)
    if at is None:
        return None
    kind = view.context.arg_kinds[at]
    if kind == ARG_NAMED:
        return (role, at, view.context.arg_names[at])
    return (role, at, None) if kind == ARG_POS else None


def _kernel_evidence(view: CallView, index: ModuleIndex) -> list[Evidence]:
    """What the kernel body proves, read by the inference's reader as it reads a
    library's entry calls (``Facts.kernel_evidence``): the kernel passed to the
    call, else the function the call decorates, else (but for ``pl.kernel``, whose body
    is an argument) the first argument of the call applying its result."""
    if index.cross is None:
        return []
    body = view.entry.body
    kernel_passed = body is not None and body in view.args
    argument = _own_argument(view, "kernel", body) if kernel_passed and body is not None else None
    if kernel_passed and argument is None:
        return []
    local, other, path = index.cross.kernel_evidence(
        index.tree.fullname,
        view.context,
        argument,
        decorated=not kernel_passed,
        applied=not kernel_passed and body != "kernel",
    )
    found = list(local)
    if other and body is not None:
        named = spelling(view.args[body])
        found.extend(
            Evidence(e.backends, f"{e.what} (in {named}, {path}:{e.line})", view.context.line)
            for e in other
        )
    return found


def _evidence_arguments(view: CallView) -> list[tuple[str, int, str | None]]:
    """(role, index in ``view.context.args``, keyword or None) of the call's mesh,
    scratch and grid spec arguments, for the reader to find in its own tree. An
    argument that is not one of the call's own (none is, today) is left out."""
    named = [*_EVIDENCE_ARGUMENTS]
    if view.entry.mesh is not None:
        named.insert(0, ("mesh", view.entry.mesh))
    found = (_own_argument(view, role, name) for role, name in named)
    return [argument for argument in found if argument is not None]


def _argument_evidence(view: CallView, index: ModuleIndex) -> list[Evidence]:
    """What the call's mesh, scratch and grid spec arguments prove: read by the
    inference's reader (``Facts.argument_evidence``), as it reads a library's
    calls; a mesh whose constructor it does not see, by its declared type."""
    found: list[Evidence] = []
    arguments = _evidence_arguments(view)
    read = (
        index.cross.argument_evidence(index.tree.fullname, view.context, arguments)
        if arguments and index.cross is not None
        else []
    )
    mesh = [evidence for kind, evidence in read if kind == "mesh"]
    name = view.entry.mesh
    if not mesh and name is not None and name in view.args:
        mesh = evidence_mod.declared_mesh(view.args[name], view.types.get(name))
    found.extend(mesh)
    found.extend(evidence for kind, evidence in read if kind != "mesh")
    return found


def evidence_of(view: CallView, index: ModuleIndex) -> list[Evidence]:
    """What the entry point, mesh, scratch and kernel body prove about the backend."""
    entry = view.entry
    declared = view.args.get(entry.platform_keyword) if entry.platform_keyword else None
    literal = declared.value if isinstance(declared, StrExpr) else None
    found = [
        Evidence(backends, what, view.context.line)
        for backends, what in entry_evidence(entry, literal)
    ]
    found.extend(_argument_evidence(view, index))
    found.extend(_kernel_evidence(view, index))
    return found


def accepts(backends: Sequence[str], params: params_mod.Params) -> bool:
    if params.backend is not None:
        return params.backend in backends
    return any(evidence_tables.ROW_OF_BACKEND[b].platform == params.platform for b in backends)


def _message_for_backend(params: params_mod.Params, backend: str) -> tuple[str, str]:
    """(message, fix note) when the kernel needs ``backend``."""
    needed = evidence_tables.ROW_OF_BACKEND[backend]
    if needed.platform != params.platform:
        message = _platforms.mismatch_message(params.platform, needed.platform)
    else:
        message = _platforms.backend_mismatch_message(params.backend or params.platform, backend)
    fix = f"this kernel lowers only with {needed.title}: use {needed.public_fullname}(...)"
    if params.row is not None and needed.platform != params.platform:
        fix = _platforms.fix_hint(params.row.backend, needed.platform)
    return message, fix


def _message_for_platforms(
    params: params_mod.Params, platforms: frozenset[str]
) -> tuple[str, str | None]:
    """(message, fix note) when the call lowers only for ``platforms``."""
    registry = sorted({_platforms.PLATFORM_OF_LOWERING[p] for p in platforms})
    if params.platform in registry:
        # Same registry platform, wrong backend: Mosaic GPU params on ROCm.
        lowering = sorted(platforms)[0]
        message = _platforms.backend_mismatch_message(params.backend or params.platform, lowering)
        return message, _platforms.ROCM_MOSAIC_GPU_NOTE if lowering == "rocm" else None
    expected = registry[0]
    fix = _platforms.fix_hint(params.row.backend, expected) if params.row is not None else None
    return _platforms.mismatch_message(params.platform, expected), fix


def installed_jax() -> tuple[int, ...]:
    """The installed jax's release, read from its metadata (jax is never imported)."""
    text = _versions.installed_version("jax")
    return (_versions.release(text) or ()) if text is not None else ()


def _mosaic_gpu_through_pallas_call(view: CallView, params: params_mod.Params) -> bool:
    """``pl.pallas_call`` with Mosaic GPU params on a JAX that cannot lower it."""
    if not view.entry.is_pallas_call:
        return False
    if params.backend != "mosaic_gpu":
        return False
    installed = installed_jax()
    return bool(installed) and installed[:2] >= _platforms.NO_MOSAIC_GPU_PALLAS_CALL_FROM


def _wrapper_note(view: CallView) -> list[str]:
    return [view.wrapper] if view.wrapper is not None else []


Problem = tuple[str, list[str]]


def validate_compiler_params(
    view: CallView,
    api: CheckerPluginInterface,
    index: ModuleIndex,
    config: PlatformConfig,
) -> None:
    """Report one ``pallas-platform`` error if the call's params cannot lower
    (``problem_of``)."""
    problem = problem_of(view, index, config.platforms_for(index.tree.fullname), api)
    if problem is not None:
        message, notes = problem
        report(api, view.context, message, notes)


def problem_of(
    view: CallView,
    index: ModuleIndex,
    configured: frozenset[str] | None,
    api: CheckerPluginInterface | None = None,
) -> Problem | None:
    """The error (message, notes) the call's params give, if they cannot lower.

    With ``interpret=`` on (a truthy literal) nothing is checked. When it is unknown,
    only contradictions with the kernel's own evidence are: they fail whenever
    interpret is false, while guard and configuration findings could be deliberate
    (TPU kernels run interpreted off TPU on purpose). Params chosen by a conditional
    expression (``A() if cond else B()``) are reported when every branch fails.
    Without ``api`` (a call read from the source alone) params come from the syntax,
    and the callee's declared signature is not consulted."""
    interpret = interpret_mode(view)
    if interpret == "on":
        return None
    default = _default_off(view, index) if interpret == "unknown" else None
    if default is not None:
        interpret = "off"  # judged as it runs by default, compiled (note below)
    compiled = _compiled_on(view, index) if interpret == "unknown" else None
    if compiled is not None and not compiled[0]:
        return None  # interpreted wherever Pallas lowers
    if "compiler_params" not in view.args:
        if view.has_splat or interpret != "off":
            return None  # inside a splat, or maybe interpreted: unknown
        problem = _evidence_only(view, index, configured)
        return _with_default_note(problem, default)
    pos = start_of(view.context)
    func = index.function_at(pos)
    expr = view.args["compiler_params"]
    options: list[params_mod.Params] = []
    factory: str | None = None
    if isinstance(expr, ConditionalExpr):
        for branch in (expr.if_expr, expr.else_expr):
            found = params_mod.from_syntax(branch, index, func, pos, 0)
            if not isinstance(found, params_mod.Params):
                return None
            options.append(found)
    else:
        declared = view.types.get("compiler_params")
        params = params_mod.resolve(expr, declared, index, func, pos)
        if not isinstance(params, params_mod.Params):
            return None
        options.append(params)
        factory = params_mod.factory_note(expr, declared, index)
    if api is not None and stubs_reject(api, view):
        return None
    evidence = evidence_of(view, index)
    problems: list[Problem] = []
    for params in options:
        problem = _problem(view, params, evidence, interpret, index, configured)
        if problem is None and compiled is not None:
            problem = _compiled_problem(view, params, compiled, index)
        if problem is None:
            return None  # one branch lowers: nothing proven
        problems.append(problem)
    message, notes = problems[0]
    if factory is not None:
        notes = [factory, *notes]
    if len(options) > 1:
        notes = [
            *notes,
            f"every branch of the conditional expression at line {expr.line} fails; the first is shown",
        ]
    return _with_default_note((message, [*notes, *_wrapper_note(view)]), default)


def _with_default_note(problem: Problem | None, default: str | None) -> Problem | None:
    if problem is None or default is None:
        return problem
    message, notes = problem
    return message, [*notes, default]


def _compiled_on(view: CallView, index: ModuleIndex) -> tuple[frozenset[str], str] | None:
    """(the lowering platforms, the argument as written) where a platform condition
    passed as ``interpret=`` is false: ``interpret=jax.default_backend() != "tpu"``, or
    a variable holding it (``or`` anything: interpreted whenever either holds), runs
    compiled only on TPU. None when ``interpret=`` is no such condition."""
    expr = view.args.get("interpret")
    if expr is None or view.has_splat:
        return None
    _, false_set = index.sets(expr)
    if false_set is None or false_set == guards.UNIVERSE:
        return None
    what = f" ({expr.name})" if isinstance(expr, NameExpr) else ""
    return false_set & LOWERING, what


def _compiled_problem(
    view: CallView,
    params: params_mod.Params,
    compiled: tuple[frozenset[str], str],
    index: ModuleIndex,
) -> Problem | None:
    """Params that cannot lower on any platform where the call runs compiled (its
    ``interpret=`` condition is false there, and a guard around it allows it)."""
    lowering, what = compiled
    guard = index.guard_at(start_of(view.context))
    if guard is not None:
        lowering = lowering & guard.platforms
    if not lowering or params.lowers_on & lowering:
        return None
    message, maybe_fix = _message_for_platforms(params, lowering)
    note = _platforms.INTERPRET_CONDITION_NOTE.format(
        what=what, platforms=", ".join(sorted(lowering))
    )
    return message, [note, *([maybe_fix] if maybe_fix else [])]


def _default_off(view: CallView, index: ModuleIndex) -> str | None:
    """The note for a call whose ``interpret=`` is a parameter of the enclosing function
    that this module keeps off (the engine's ``interpret_uses``): then the call runs
    compiled unless a caller elsewhere turns it on. None otherwise."""
    expr = view.args.get("interpret")
    if not isinstance(expr, NameExpr) or index.cross is None:
        return None
    found = index.cross.interpret_kept_off(index.tree.fullname, expr)
    if found is None:
        return None
    how, name, function = found
    if how == "default":
        return _platforms.INTERPRET_DEFAULT_NOTE.format(name=name)
    return _platforms.INTERPRET_PASSED_OFF_NOTE.format(name=name, function=function)


def _evidence_only(
    view: CallView, index: ModuleIndex, configured: frozenset[str] | None
) -> Problem | None:
    """A call without params (the platform's default backend) whose kernel's own
    evidence cannot lower where the platform is decided: ``pl.pallas_call(tpu_body, ...)``
    on the GPU path."""
    pos = start_of(view.context)
    evidence = evidence_of(view, index)
    if not evidence:
        return None
    platforms: frozenset[str] = LOWERING
    for ev in evidence:
        platforms = platforms & frozenset(
            p for b in ev.backends for p in evidence_tables.ROW_OF_BACKEND[b].lowers_on
        )
    if not platforms or platforms == LOWERING:
        return None  # a contradiction inside the kernel, or no restriction
    decided = index.decision_at(pos, configured, "this call")
    if decided is None or decided[0] & platforms:
        return None
    lowering, why = decided
    registry = sorted({_platforms.PLATFORM_OF_LOWERING[p] for p in lowering})
    message = _platforms.REQUIREMENT_TEMPLATE.format(
        name=f"The kernel of this {view.entry.title}",
        required=", ".join(sorted(platforms)),
        platform=", ".join(registry),
    )
    notes = [evidence_mod.describe(e) for e in evidence[:3]]
    return message, [*notes, why, *_wrapper_note(view)]


def _problem(
    view: CallView,
    params: params_mod.Params,
    found: list[Evidence],
    interpret: Interpret,
    index: ModuleIndex,
    configured: frozenset[str] | None,
) -> Problem | None:
    """The error (message, notes) these params give at this call, if any."""
    against = [e for e in found if not accepts(e.backends, params)]
    if against:
        backend = sorted(against[0].backends)[0]
        message, fix = _message_for_backend(params, backend)
        notes = [evidence_mod.describe(e) for e in against[:3] if e.backends == against[0].backends]
        if interpret == "unknown":
            notes.append(_platforms.INTERPRET_UNKNOWN_NOTE)
        return message, [*notes, fix]
    if interpret == "unknown":
        return None
    guard = index.guard_at(start_of(view.context))
    gpu_path = guard is None or bool(params.lowers_on & guard.platforms)
    if gpu_path and _mosaic_gpu_through_pallas_call(view, params):
        note = (
            f"jax {'.'.join(map(str, installed_jax()))} is installed; pl.pallas_call has no "
            f"Mosaic GPU lowering from jax "
            f"{'.'.join(map(str, _platforms.NO_MOSAIC_GPU_PALLAS_CALL_FROM))} on"
        )
        return _platforms.MOSAIC_GPU_PALLAS_CALL_MESSAGE, [note]

    decided = index.decision_at(start_of(view.context), configured, "this call")
    if decided is None or params.lowers_on & decided[0]:
        return None
    message, maybe_fix = _message_for_platforms(params, decided[0])
    return message, [decided[1], *([maybe_fix] if maybe_fix else [])]
