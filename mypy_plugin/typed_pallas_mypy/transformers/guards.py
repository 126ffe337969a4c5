"""Platform guards: which platforms a condition, an early exit or a dispatch branch allows.

A guard narrows the lowering platform to a subset of ``UNIVERSE`` (``{"tpu", "cuda",
"rocm", "cpu"}``):

* conditions on a platform source: ``jax.default_backend() == "tpu"``,
  ``<device>.platform in ("cuda", "rocm")``, ``pltpu.is_tpu_device()``, a
  variable holding one of those, a guard helper (a function, in any module, that
  returns such a comparison), and ``not`` / ``and`` / ``or`` of them;
* devices, recognised by shape (mypy types ``jax.Device`` as ``Any``): an element of
  ``jax.devices()`` / ``jax.local_devices()`` (no ``backend=``), of ``x.devices()``,
  ``x.sharding.device_set`` or a mesh's ``devices`` (``mesh.devices.flat[i]``,
  ``mesh.devices[(0,) * n]``), ``jax.extend.backend.get_default_device()``, a parameter
  annotated ``jax.Device``, a variable holding one (``for d in jax.devices():`` too);
  ``any(d.platform == "tpu" for d in jax.devices())`` and ``all(...)`` over such
  devices are the comparison itself (the devices of one collection share a platform);
* ``<device>.device_kind`` only where one platform alone can match
  (``_platforms.DEVICE_KIND_MARKERS``: ``"TPU" in kind``, ``"NVIDIA" in kind``...);
* platform predicates: a call of a function or method that returns a platform
  comparison of its ``jax.Device`` parameter (``op.supported_on(device)``), given a
  device (``predicates``);
* early exits: ``if <condition>: raise/return/continue/break/pytest.skip(...)``, and
  ``assert <condition>``, narrow the statements after them;
* the ``tpu=`` / ``cuda=`` / ``rocm=`` / ``gpu=`` / ``default=`` branches of
  ``jax.lax.platform_dependent`` and ``typed_pallas.dispatch``;
* ``@typed_pallas.platform(...)`` tags, and a module's configured platforms
  (``configured_decision``), which hold where no guard decides.

``GuardScope`` is what a condition needs to know beyond the expression itself (which
names hold a platform or a device, which calls are guard helpers or predicates);
``module_index`` implements it.
What it does not do: walk a module (``module_index`` does), or look at params.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Final, Protocol

from mypy.nodes import (
    ARG_POS,
    AssertStmt,
    Block,
    BreakStmt,
    CallExpr,
    ComparisonExpr,
    ContinueStmt,
    Expression,
    ExpressionStmt,
    FuncItem,
    GeneratorExpr,
    IfStmt,
    IndexExpr,
    IntExpr,
    ListComprehension,
    ListExpr,
    MemberExpr,
    NameExpr,
    OpExpr,
    RaiseStmt,
    ReturnStmt,
    SetExpr,
    Statement,
    StrExpr,
    TupleExpr,
    UnaryExpr,
)

from typed_pallas import _platforms
from typed_pallas_mypy import device_kinds, fullnames
from typed_pallas_mypy.transformers.nodes import Pos, ref_fullname

#: Every platform a guard can speak of. "cpu" is there so that ``!= "tpu"`` is not "gpu".
UNIVERSE: Final = _platforms.GUARD_UNIVERSE
#: Platforms Pallas lowers for (cpu needs interpret mode).
LOWERING: Final = _platforms.LOWERING_SET

#: (platforms when a condition is true, platforms when it is false); None = not known.
Sets = tuple[frozenset[str] | None, frozenset[str] | None]


def name_set(name: str) -> frozenset[str]:
    """Lowering platforms a platform string stands for ("gpu" is cuda and rocm)."""
    return frozenset(_platforms.LOWERINGS_OF_GUARD_NAME.get(name, frozenset()))


@dataclass(frozen=True)
class Region:
    """A span of source in which the lowering platform is one of ``platforms``."""

    start: Pos
    end: Pos
    platforms: frozenset[str]
    #: what decided it, for notes ("the if at line 12")
    why: str
    #: a ``@typed_pallas.platform(...)`` tag (the function does not branch itself)
    from_tag: bool = False

    def contains(self, pos: Pos) -> bool:
        return self.start <= pos <= self.end


@dataclass(frozen=True)
class Guard:
    """The platforms a position may lower for, and the regions that say so."""

    platforms: frozenset[str]
    regions: tuple[Region, ...]


class GuardScope(Protocol):
    """What conditions need to know about names and calls (``ModuleIndex``)."""

    def is_platform_variable(self, name: NameExpr, func: FuncItem | None) -> bool:
        """Whether ``name`` (read inside ``func``) holds a platform string."""

    def helper_sets(self, call: CallExpr) -> Sets | None:
        """For a call of a guard helper: its (true, false) platform sets."""

    def is_platform_call(self, call: CallExpr) -> bool:
        """Whether ``call`` calls a helper that returns a platform string."""

    def variable_condition(self, name: NameExpr, func: FuncItem | None) -> Expression | None:
        """The platform condition a variable was assigned once
        (``use_pallas = jax.default_backend() == "tpu" and ...``), if any."""

    def held_value(self, name: NameExpr, func: FuncItem | None) -> str | None:
        """What a variable holds, if it is one of ``HELD_VALUES``: a device (a
        ``jax.Device`` parameter too), a collection of devices, or a device kind."""

    def predicate_sets(self, call: CallExpr, func: FuncItem | None) -> Sets | None:
        """For a call of a platform predicate given a device: its (true, false) sets."""


#: What ``GuardScope.held_value`` can say a variable holds.
DEVICE: Final = "device"
DEVICES: Final = "devices"
DEVICE_KIND: Final = "device_kind"
HELD_VALUES: Final = (DEVICE, DEVICES, DEVICE_KIND)


def configured_decision(
    configured: frozenset[str] | None, module: str
) -> tuple[frozenset[str], str] | None:
    """(lowering platforms, note) of a module configured with ``[tool.typed-pallas]
    platforms``, or None when it is not configured (or names no lowering platform)."""
    if not configured:
        return None
    lowering = frozenset(p for name in configured for p in name_set(name)) & LOWERING
    if not lowering:
        return None
    return lowering, (
        f"module {module} is configured for platforms {', '.join(sorted(lowering))} "
        "([tool.typed-pallas] platforms)"
    )


# --------------------------------------------------------------------------- exits


def exits(block: Block) -> bool:
    """Whether the block always leaves (raise, return, continue, break, a skip call)."""
    if not block.body:
        return False
    last = block.body[-1]
    if isinstance(last, (RaiseStmt, ReturnStmt, ContinueStmt, BreakStmt)):
        return True
    if isinstance(last, ExpressionStmt) and isinstance(last.expr, CallExpr):
        callee = last.expr.callee
        name = ref_fullname(callee)
        if name in fullnames.SKIP_CALLS:
            return True
        if isinstance(callee, MemberExpr) and callee.name in fullnames.SKIP_METHODS:
            return True
    return False


def narrowing_after(
    stmt: Statement, sets: Callable[[Expression], Sets]
) -> tuple[frozenset[str], str] | None:
    """The platforms the statements after ``stmt`` are left with, if it narrows them
    (``sets``: what a condition tests)."""
    if isinstance(stmt, IfStmt) and len(stmt.expr) == 1:
        true_set, false_set = sets(stmt.expr[0])
        body_exits = exits(stmt.body[0])
        else_exits = stmt.else_body is not None and exits(stmt.else_body)
        if body_exits and not else_exits and false_set is not None:
            return (false_set, f"the early exit at line {stmt.line}")
        if else_exits and not body_exits and true_set is not None:
            return (true_set, f"the early exit in the else at line {stmt.line}")
    elif isinstance(stmt, AssertStmt):
        true_set, _ = sets(stmt.expr)
        if true_set is not None:
            return (true_set, f"the assert at line {stmt.line}")
    return None


# --------------------------------------------------------------------------- conditions


def is_platform_source(expr: Expression, scope: GuardScope, func: FuncItem | None) -> bool:
    """``jax.default_backend()``, ``<device>.platform``, a variable holding one, or a
    call of a helper returning one."""
    if isinstance(expr, CallExpr):
        if ref_fullname(expr.callee) in fullnames.DEFAULT_BACKEND:
            return True
        return scope.is_platform_call(expr)
    if isinstance(expr, MemberExpr) and expr.name == "platform":
        return is_device(expr.expr, scope, func)
    if isinstance(expr, NameExpr):
        return scope.is_platform_variable(expr, func)
    return False


# --------------------------------------------------------------------------- devices


def _names_no_backend(call: CallExpr) -> bool:
    """``jax.devices()`` / ``jax.local_devices()`` of the default backend (no
    ``backend=``: ``jax.devices("cpu")`` says nothing about where code lowers)."""
    name = ref_fullname(call.callee) or ""
    if "backend" in call.arg_names:
        return False
    positional = sum(1 for kind in call.arg_kinds if kind == ARG_POS)
    return positional == 0 or (name.endswith("local_devices") and positional == 1)


def _is_zero_index(expr: Expression) -> bool:
    """``(0,) * n``, ``(0, 0)``: an index tuple of a mesh's device array."""
    if isinstance(expr, OpExpr) and expr.op == "*":
        return _is_zero_index(expr.left) or _is_zero_index(expr.right)
    if isinstance(expr, TupleExpr):
        return bool(expr.items) and all(isinstance(i, IntExpr) for i in expr.items)
    return False


def _is_mesh_devices(expr: Expression) -> bool:
    """``mesh.devices`` / ``self.mesh.devices`` / ``physical_mesh.devices``: the device
    array of something named a mesh."""
    if not (isinstance(expr, MemberExpr) and expr.name == "devices"):
        return False
    owner = expr.expr
    if isinstance(owner, CallExpr):
        owner = owner.callee
    name = owner.name if isinstance(owner, (NameExpr, MemberExpr)) else ""
    return "mesh" in name.lower()


def is_device_collection(expr: Expression, scope: GuardScope, func: FuncItem | None) -> bool:
    """Devices of one platform: ``jax.devices()``, ``x.devices()``,
    ``x.sharding.device_set``, ``mesh.devices.flat``, ``list(...)`` of one, a variable
    holding one."""
    if isinstance(expr, CallExpr):
        callee = expr.callee
        name = ref_fullname(callee)
        if name in fullnames.DEVICES:
            return _names_no_backend(expr)
        if name in fullnames.DEVICE_COLLECTION_COPIES and len(expr.args) == 1:
            return is_device_collection(expr.args[0], scope, func)
        if isinstance(callee, MemberExpr) and not expr.args:
            if callee.name == "devices" and not callee.fullname:
                return True  # a value's method: jax.Array.devices()
            if callee.name in ("ravel", "flatten", "tolist"):
                return _is_mesh_devices(callee.expr) or is_device_collection(
                    callee.expr, scope, func
                )
        return False
    if isinstance(expr, MemberExpr):
        if expr.name == "device_set":
            return True
        if expr.name == "flat" and isinstance(expr.expr, MemberExpr):
            return expr.expr.name == "devices"
        return _is_mesh_devices(expr)
    if isinstance(expr, NameExpr):
        return scope.held_value(expr, func) == DEVICES
    return False


def is_device(expr: Expression, scope: GuardScope, func: FuncItem | None) -> bool:
    """A ``jax.Device`` of the platform code here lowers for, recognised by shape."""
    if isinstance(expr, IndexExpr):
        base = expr.base
        if isinstance(base, MemberExpr) and base.name == "devices" and _is_zero_index(expr.index):
            return True  # mesh.devices[(0,) * ndim]
        return is_device_collection(base, scope, func)
    if isinstance(expr, CallExpr):
        name = ref_fullname(expr.callee)
        if name in fullnames.GET_DEFAULT_DEVICE:
            return not expr.args
        if name == fullnames.BUILTIN_NEXT and len(expr.args) == 1:
            inner = expr.args[0]
            return is_device_collection(inner, scope, func)
        return False
    if isinstance(expr, NameExpr):
        return scope.held_value(expr, func) == DEVICE
    return False


def _kind_source(expr: Expression, scope: GuardScope, func: FuncItem | None) -> bool | None:
    """For ``<device>.device_kind``: False; for ``<device>.device_kind.lower()``: True
    (markers compare lowercased); None for anything else."""
    if (
        isinstance(expr, CallExpr)
        and isinstance(expr.callee, MemberExpr)
        and expr.callee.name == "lower"
        and not expr.args
    ):
        return True if _kind_source(expr.callee.expr, scope, func) is False else None
    if isinstance(expr, MemberExpr) and expr.name == "device_kind":
        return False if is_device(expr.expr, scope, func) else None
    if isinstance(expr, NameExpr) and scope.held_value(expr, func) == DEVICE_KIND:
        return False
    return None


def is_device_kind(expr: Expression, scope: GuardScope, func: FuncItem | None) -> bool:
    """``<device>.device_kind`` (or a variable holding one)."""
    return _kind_source(expr, scope, func) is False


def _kind_comparison(expr: ComparisonExpr, scope: GuardScope, func: FuncItem | None) -> Sets:
    op = expr.operators[0]
    left, right = expr.operands
    if op in ("in", "not in") and isinstance(left, StrExpr):
        lowered = _kind_source(right, scope, func)
        if lowered is None:
            return None, None
        true_set, false_set = device_kinds.substring_sets(left.value, lowered)
        return (true_set, false_set) if op == "in" else (false_set, true_set)
    if _kind_source(left, scope, func) is None and op in ("==", "!="):
        left, right = right, left
    lowered = _kind_source(left, scope, func)
    names = strings(right)
    if lowered is None or names is None:
        return None, None
    return device_kinds.comparison_sets(op, names, lowered)


def _startswith_sets(call: CallExpr, scope: GuardScope, func: FuncItem | None) -> Sets:
    """``kind.startswith("TPU")``."""
    callee = call.callee
    if not (isinstance(callee, MemberExpr) and callee.name == "startswith"):
        return None, None
    if len(call.args) != 1 or not isinstance(call.args[0], StrExpr):
        return None, None
    lowered = _kind_source(callee.expr, scope, func)
    if lowered is None:
        return None, None
    return device_kinds.substring_sets(call.args[0].value, lowered)


class _Bound:
    """A scope in which some names are bound to devices (the variable of
    ``any(... for d in jax.devices())``)."""

    def __init__(self, scope: GuardScope, devices: frozenset[str]) -> None:
        self.scope = scope
        self.devices = devices

    def is_platform_variable(self, name: NameExpr, func: FuncItem | None) -> bool:
        return name.name not in self.devices and self.scope.is_platform_variable(name, func)

    def helper_sets(self, call: CallExpr) -> Sets | None:
        return self.scope.helper_sets(call)

    def is_platform_call(self, call: CallExpr) -> bool:
        return self.scope.is_platform_call(call)

    def variable_condition(self, name: NameExpr, func: FuncItem | None) -> Expression | None:
        if name.name in self.devices:
            return None
        return self.scope.variable_condition(name, func)

    def held_value(self, name: NameExpr, func: FuncItem | None) -> str | None:
        if name.name in self.devices:
            return DEVICE
        return self.scope.held_value(name, func)

    def predicate_sets(self, call: CallExpr, func: FuncItem | None) -> Sets | None:
        return self.scope.predicate_sets(call, func)


def _quantified(call: CallExpr, scope: GuardScope, func: FuncItem | None) -> Sets:
    """``any(<condition on d> for d in <devices>)`` / ``all(...)``: the condition on one
    device (they share a platform, and a collection of devices is never empty)."""
    name = ref_fullname(call.callee)
    if name not in (fullnames.BUILTIN_ANY, fullnames.BUILTIN_ALL) or len(call.args) != 1:
        return None, None
    generator = call.args[0]
    if isinstance(generator, ListComprehension):
        generator = generator.generator
    if not isinstance(generator, GeneratorExpr) or len(generator.indices) != 1:
        return None, None
    index = generator.indices[0]
    if not isinstance(index, NameExpr):
        return None, None
    if not is_device_collection(generator.sequences[0], scope, func):
        return None, None
    true_set, false_set = conditions(
        generator.left_expr, _Bound(scope, frozenset({index.name})), func
    )
    if generator.condlists[0]:
        # a filter may leave no device: any() is then False, all() True
        if name == fullnames.BUILTIN_ANY:
            return true_set, None
        return None, false_set
    return true_set, false_set


def strings(expr: Expression) -> list[str] | None:
    """The literal strings of ``"tpu"`` or ``("cuda", "rocm")``; None for anything else."""
    if isinstance(expr, StrExpr):
        return [expr.value]
    if isinstance(expr, (TupleExpr, ListExpr, SetExpr)):
        out: list[str] = []
        for item in expr.items:
            if not isinstance(item, StrExpr):
                return None
            out.append(item.value)
        return out
    return None


def conditions(expr: Expression, scope: GuardScope, func: FuncItem | None) -> Sets:
    """(platforms when ``expr`` is true, platforms when false); None = not known."""
    if isinstance(expr, UnaryExpr) and expr.op == "not":
        true_set, false_set = conditions(expr.expr, scope, func)
        return false_set, true_set
    if isinstance(expr, CallExpr):
        if ref_fullname(expr.callee) in fullnames.IS_TPU_DEVICE:
            return frozenset({"tpu"}), UNIVERSE - {"tpu"}
        helper = scope.helper_sets(expr)
        if helper is not None:
            return helper
        predicate = scope.predicate_sets(expr, func)
        if predicate is not None:
            return predicate
        quantified = _quantified(expr, scope, func)
        if quantified != (None, None):
            return quantified
        return _startswith_sets(expr, scope, func)
    if isinstance(expr, OpExpr) and expr.op in ("and", "or"):
        lt, lf = conditions(expr.left, scope, func)
        rt, rf = conditions(expr.right, scope, func)
        if expr.op == "and":
            t = None if lt is None and rt is None else (lt or UNIVERSE) & (rt or UNIVERSE)
            f = None if lf is None or rf is None else lf | rf
        else:
            t = None if lt is None or rt is None else lt | rt
            f = None if lf is None and rf is None else (lf or UNIVERSE) & (rf or UNIVERSE)
        return t, f
    if isinstance(expr, NameExpr):
        held = scope.variable_condition(expr, func)
        if held is not None and held is not expr:
            return conditions(held, scope, func)
        return None, None
    if isinstance(expr, ComparisonExpr) and len(expr.operators) == 1:
        kind_sets = _kind_comparison(expr, scope, func)
        if kind_sets != (None, None):
            return kind_sets
        op = expr.operators[0]
        left, right = expr.operands
        if is_platform_source(right, scope, func) and op in ("==", "!="):
            left, right = right, left
        if not is_platform_source(left, scope, func):
            return None, None
        names = strings(right)
        if names is None:
            return None, None
        if op in ("==", "!=") and len(names) != 1:
            return None, None
        matched: frozenset[str] = frozenset()
        for name in names:
            matched = matched | name_set(name)
        if op in ("==", "in"):
            return matched, UNIVERSE - matched
        if op in ("!=", "not in"):
            return UNIVERSE - matched, matched
    return None, None


# --------------------------------------------------------------------------- tags


def platform_tag(decorators: list[Expression]) -> tuple[frozenset[str], int] | None:
    """(platforms, line) of a ``@typed_pallas.platform("tpu")`` decorator, if any."""
    for dec in decorators:
        if (
            isinstance(dec, CallExpr)
            and ref_fullname(dec.callee) in fullnames.PLATFORM_TAG
            and dec.args
        ):
            arg = dec.args[0]
            if isinstance(arg, StrExpr) and arg.value in _platforms.LOWERINGS_OF_NAME:
                return name_set(arg.value), dec.line
    return None


# --------------------------------------------------------------------------- branches

#: keyword of a platform_dependent / dispatch branch -> the platforms it runs for
BRANCH_KEYWORDS: Final = _platforms.LOWERINGS_OF_GUARD_NAME


def dispatch_title(call: CallExpr) -> str | None:
    """How notes name a platform dispatch call, or None if ``call`` is not one."""
    callee = ref_fullname(call.callee)
    if callee in fullnames.PLATFORM_DEPENDENT:
        return "jax.lax.platform_dependent"
    if callee in fullnames.TP_DISPATCH:
        return "typed_pallas.dispatch"
    return None


def branches(call: CallExpr) -> list[tuple[Expression, str, frozenset[str]]]:
    """(argument, keyword, platforms it runs for) of each branch of a dispatch call."""
    named: frozenset[str] = frozenset()
    targets: list[tuple[Expression, str]] = []
    for name, arg in zip(call.arg_names, call.args):
        if name is None:
            continue
        if name in BRANCH_KEYWORDS:
            named = named | BRANCH_KEYWORDS[name]
            targets.append((arg, name))
        elif name == "default":
            targets.append((arg, name))
    return [
        (arg, name, UNIVERSE - named if name == "default" else BRANCH_KEYWORDS[name])
        for arg, name in targets
    ]
