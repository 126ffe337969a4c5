"""Mutants at real dispatch sites: where a corpus package decides the platform, decide it wrong.

What it does: scans a package's source with the stdlib ``ast`` for the places where the
platform is decided away from the kernel, and writes mutants that keep every line where
it was (each edit replaces a token by one of the same line count):

* **guard**: an ``if`` (or ``elif``) whose test compares a platform source with a
  platform string, ``jax.default_backend() == "tpu"``, ``!=``, ``in ("gpu", "cuda")``,
  ``jax.devices()[0].platform``, a variable, a helper call, or an attribute such as
  ``device.platform``; the mutant swaps the string (``"tpu"`` -> ``"gpu"``, ``"gpu"``/
  ``"cuda"``/``"rocm"`` -> ``"tpu"``). A **guard helper** (``def on_tpu(): return
  jax.default_backend() == "tpu"``) is mutated in its ``return``, and counts at the
  ``if`` statements of the package that call it. Only guards whose decided region (the
  body for ``==``/``in``; the ``else`` or, after an early exit, the rest of the block,
  for ``!=``/``not in``) calls a function of the package that reaches a Pallas entry
  point (statically, a few calls deep) are mutated: swapping the platform of code that
  runs no kernel is no platform bug;
* **table**: a dict literal keyed by platform names whose values are callables; the
  mutant swaps two keys (tables whose values are data are listed, not mutated);
* **platform_dependent**: ``lax.platform_dependent(..., tpu=f, cuda=g, default=h)``; one
  mutant renames each platform keyword to another platform, one swaps the values of the
  first two branches;
* **predicate**: a function or method with a device parameter (annotated ``jax.Device``,
  or named ``device``) that returns a platform comparison of it (tokamax's
  ``supported_on``; also the ``if device.platform != "tpu": return False`` shape); the
  mutant swaps its string and counts at the predicate, at the methods of the class it
  speaks for (its own, or one that returns its call) and at the ``if``s that call it;
* **registration**: a registering decorator of ``REGISTRIES`` (ejkernel's
  ``@kernel_registry.register(name, Platform.X, Backend.TPU)``) whose platform member is
  swapped (``Backend.TPU`` <-> ``Backend.GPU``); the run configures the plugin with that
  registry (``RegistrySpec.config``, a ``[[tool.typed-pallas.registries]]`` table) and
  counts an error at the registration.

Guards on a device object's ``.platform`` carry the form ``device:<how the device is
named>`` (``device:mesh``, ``device:default``, ``device:parameter``, ``device:any``,
``device:array``; ``devices_platform`` for ``jax.devices()[0]``).

Each mutant says whether it is a **real bug** (``DispatchMutant.not_a_bug``, from
``verdict``): the region its decision lets run on the other platform reaches a kernel
(``Kernel``) whose params class (traced, or the survey's) or, without params, whose
survey evidence names platforms that exclude it, with interpret mode known off and no
platform guard of its own around the kernel.

A mutant is *caught* (``eval.corpus`` decides) when a new ``pallas-platform`` error falls
in one of its ``spans``: the guard statement and the region it decides (for a helper,
those of its callers), the table literal and the statement that indexes it, or the
``platform_dependent`` call.

The fourth kind of the evaluation, calls of package wrappers that forward
``compiler_params``, reuses ``eval.mutants``' params swaps at those call sites.

What it does not do: import the packages, run a checker, know what the plugin infers
(``form`` only says which syntax the guard uses), or prove a verdict by lowering (a
sample is proven by hand, docs/RESULTS.md).
"""

from __future__ import annotations

import ast
import os
import warnings
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from eval.mutants import (
    BACKEND_MODULES,
    ENTRY_NAMES,
    Site,
    SourceFile,
    Trace,
    Tracer,
    is_annotated,
    schedule,
)

#: platform strings a guard or a key may name, and what a mutant replaces each with
SWAP: dict[str, str] = {"tpu": "gpu", "gpu": "tpu", "cuda": "tpu", "rocm": "tpu"}
#: platform_dependent / dispatch keywords and their swap
BRANCH_SWAP: dict[str, str] = {"tpu": "cuda", "cuda": "tpu", "rocm": "tpu", "gpu": "tpu"}
#: decorators that make a function a Pallas kernel entry point (``@pl.kernel``, ``@plgpu.kernel``)
KERNEL_DECORATORS = frozenset({"kernel", "core_map"})
#: how deep ``Reach.reaches`` follows calls
REACH_DEPTH = 6
#: the lowering platforms a platform string names (``"gpu"``: both GPU platforms)
LOWERING: dict[str, frozenset[str]] = {
    "tpu": frozenset({"tpu"}),
    "gpu": frozenset({"cuda", "rocm"}),
    "cuda": frozenset({"cuda"}),
    "rocm": frozenset({"rocm"}),
}
#: the lowering platforms each params backend lowers for (Mosaic GPU: NVIDIA only)
BACKEND_LOWERS: dict[str, frozenset[str]] = {
    "tpu": frozenset({"tpu"}),
    "triton": frozenset({"cuda", "rocm"}),
    "mosaic_gpu": frozenset({"cuda"}),
}
#: the survey's platform column, for kernels without params whose evidence names a platform
SURVEY_PLATFORM: dict[str, str] = {"tpu": "tpu", "gpu-triton": "triton", "gpu-mosaic": "mosaic_gpu"}
#: names a device parameter goes by when it is not annotated ``jax.Device``
DEVICE_PARAM_NAMES = frozenset({"device", "dev", "d"})


@dataclass(frozen=True)
class RegistrySpec:
    """A package's registering decorator whose argument names the platform, and the
    ``[[tool.typed-pallas.registries]]`` table the eval writes for it."""

    package: str
    #: the dotted name the configuration gives (a method by its class)
    call: str
    #: how the decorator is written in the package: ``@<receiver>.<method>(...)``
    receiver: str
    method: str
    keyword: str
    position: int
    #: the platform argument's spelling -> platform
    values: tuple[tuple[str, str], ...]

    def config(self) -> str:
        """The ``pyproject.toml`` text that declares this registry to the plugin."""
        values = ", ".join(f'"{k}" = "{v}"' for k, v in self.values)
        return (
            "[tool.typed-pallas]\n\n[[tool.typed-pallas.registries]]\n"
            f'call = "{self.call}"\nplatform = "{self.keyword}"\nposition = {self.position}\n'
            f"values = {{ {values} }}\n"
        )


#: the registries of the corpus whose registration names a platform (easydel's
#: ``OperationRegistry.register`` registers classes by name, with no platform: not here)
REGISTRIES: dict[str, RegistrySpec] = {
    "ejkernel": RegistrySpec(
        package="ejkernel",
        call="ejkernel.kernels._registry.KernelRegistry.register",
        receiver="kernel_registry",
        method="register",
        keyword="backend",
        position=2,
        values=(("Backend.TPU", "tpu"), ("Backend.GPU", "gpu")),
    ),
}


@dataclass
class TextEdit:
    """Replace bytes [col, end_col) of one line with ``text`` (never a newline)."""

    relpath: str
    lineno: int
    col: int
    end_col: int
    text: str


@dataclass
class DispatchMutant:
    kind: str  # guard | guard-helper | table | platform_dependent
    form: str  # how the platform is read (default_backend, devices_platform, variable, ...)
    relpath: str
    line: int
    detail: str
    edits: list[TextEdit]
    #: (relpath, first line, last line) where a new error counts as caught
    spans: list[tuple[str, int, int]]
    typed: bool = True
    #: package functions in the decided region that reach a Pallas call
    reaches: tuple[str, ...] = ()
    scope: str = "lib"  # lib | test
    #: the platform the mutated decision lets the decided region run on
    to_platform: str = ""
    #: the kernels the decided region reaches, with what each lowers for
    kernels: tuple[Kernel, ...] = ()
    #: the registry the plugin must be configured with (``REGISTRIES``' key), if any
    registry: str | None = None

    @property
    def not_a_bug(self) -> str | None:
        """None when the mutant is a real bug: the region it lets run on ``to_platform``
        reaches a kernel that cannot lower there; otherwise why it is none."""
        return verdict(self.to_platform, self.kernels)

    @property
    def id(self) -> str:
        return f"{self.kind}:{self.relpath}:{self.line}:{self.detail}"

    @property
    def files(self) -> set[str]:
        return {e.relpath for e in self.edits} | {s[0] for s in self.spans}


@dataclass
class Skipped:
    kind: str
    where: str
    reason: str


@dataclass
class Plan:
    mutants: list[DispatchMutant] = field(default_factory=list)
    skipped: list[Skipped] = field(default_factory=list)

    @property
    def files(self) -> set[str]:
        return {f for m in self.mutants for f in m.files}


# --------------------------------------------------------------------------- syntax


def _plat_strings(node: ast.AST) -> list[ast.Constant] | None:
    """The platform string constants of ``"tpu"`` or ``("gpu", "cuda")``; None otherwise."""
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node] if node.value in SWAP else None
    if isinstance(node, (ast.Tuple, ast.List, ast.Set)):
        if not node.elts or not all(
            isinstance(e, ast.Constant) and isinstance(e.value, str) for e in node.elts
        ):
            return None
        found = [e for e in node.elts if isinstance(e, ast.Constant) and e.value in SWAP]
        return found or None
    return None


def _swap(constant: ast.Constant) -> str:
    """The swapped platform of a constant ``_plat_strings`` found ("tpu" -> "gpu")."""
    return SWAP[str(constant.value)]


def _name_of(node: ast.AST) -> str | None:
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Name):
        return node.id
    return None


def _is_jax_device(annotation: ast.AST | None) -> bool:
    """``jax.Device`` (or ``Device``), alone or in ``X | None`` / ``Optional[X]``."""
    if annotation is None:
        return False
    return any(_name_of(n) == "Device" for n in ast.walk(annotation))


def _device_params(fn: ast.AST) -> dict[str, bool]:
    """A function's parameters that may hold a device: name -> annotated ``jax.Device``."""
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return {}
    a = fn.args
    out: dict[str, bool] = {}
    for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]:
        if _is_jax_device(x.annotation):
            out[x.arg] = True
        elif x.annotation is None and x.arg in DEVICE_PARAM_NAMES:
            out[x.arg] = False
    return out


def device_form(node: ast.AST, src: SourceFile | None = None) -> str | None:
    """How an expression names a device (the object whose ``.platform`` is read), or None:
    ``devices()`` (``jax.devices()[0]``, ``jax.local_devices()[0]``), ``mesh``
    (``mesh.devices.flat[0]``, ``self.mesh.devices[(0,) * n]``, ``.flatten()[0]``),
    ``default`` (``backend.get_default_device()``), ``array`` (``next(iter(x.devices()))``),
    ``parameter`` (a parameter annotated ``jax.Device``, or named ``device``), ``loop``
    (the variable of a loop over devices)."""
    if isinstance(node, ast.Subscript):
        base = node.value
        if isinstance(base, ast.Call):
            name = _name_of(base.func)
            if name in ("devices", "local_devices"):
                return (
                    "devices()"
                    if isinstance(base.func, ast.Name) or _is_jax(base.func)
                    else "array"
                )
            if name == "flatten" and isinstance(base.func, ast.Attribute):
                return "mesh" if _mentions_devices(base.func.value) else None
            if name == "list" and base.args and _is_device_collection(base.args[0]):
                return "array"
            return None
        if isinstance(base, ast.Attribute) and base.attr in ("flat", "devices"):
            return "mesh" if _mentions_devices(base) else None
        if isinstance(base, ast.Name) and src is not None:
            return "devices()" if _assigned_devices(src, base) else None
        return None
    if isinstance(node, ast.Call):
        name = _name_of(node.func)
        if name == "get_default_device":
            return "default"
        if name == "next" and node.args:
            inner = node.args[0]
            if isinstance(inner, ast.Call) and _name_of(inner.func) == "iter" and inner.args:
                inner = inner.args[0]
            if _is_device_collection(inner):
                return "array"
        return None
    if isinstance(node, ast.Name) and src is not None:
        fn = src.scope_of(node)
        params = _device_params(fn)
        if node.id in params:
            return "parameter"
        for n in ast.walk(fn):
            if (
                isinstance(n, (ast.For, ast.comprehension))
                and isinstance(n.target, ast.Name)
                and n.target.id == node.id
                and _is_device_collection(n.iter)
            ):
                return "loop"
    return None


def _is_jax(func: ast.AST) -> bool:
    return isinstance(func, ast.Attribute) and _name_of(func.value) == "jax"


def _mentions_devices(node: ast.AST) -> bool:
    """``<x>.devices`` somewhere in an attribute chain whose owner is named like a mesh."""
    text = ast.unparse(node)
    return ".devices" in text and "mesh" in text.lower()


def _is_device_collection(node: ast.AST) -> bool:
    """``jax.devices()``, ``jax.local_devices()``, ``x.devices()``, ``mesh.devices.flat``."""
    if isinstance(node, ast.Call):
        name = _name_of(node.func)
        if name in ("devices", "local_devices"):
            return True
        if name == "list" and node.args:
            return _is_device_collection(node.args[0])
        return False
    if isinstance(node, ast.Attribute) and node.attr in ("flat", "device_set", "devices"):
        return node.attr == "device_set" or _mentions_devices(node)
    return False


def _assigned_devices(src: SourceFile, name: ast.Name) -> bool:
    """A local variable assigned only a device collection (``devices = jax.devices()``)."""
    scope = src.scope_of(name)
    values = [
        n.value
        for n in ast.walk(scope)
        if isinstance(n, ast.Assign)
        and src.scope_of(n) is scope
        and any(isinstance(t, ast.Name) and t.id == name.id for t in n.targets)
    ]
    return bool(values) and all(_is_device_collection(v) for v in values)


def _variable_source(src: SourceFile, name: ast.Name) -> ast.expr | None:
    """The one value a local variable is assigned in its scope (``target_hardware =
    self.mesh.devices[...].platform``), or None."""
    scope = src.scope_of(name)
    values = [
        n.value
        for n in ast.walk(scope)
        if isinstance(n, ast.Assign)
        and src.scope_of(n) is scope
        and any(isinstance(t, ast.Name) and t.id == name.id for t in n.targets)
    ]
    return values[0] if len(values) == 1 else None


def source_form(node: ast.AST, src: SourceFile | None = None) -> str | None:
    """How a guard reads the platform, or None if ``node`` does not look like a platform
    source. A device's ``.platform`` is ``device:<how the device is named>`` (see
    ``device_form``); ``devices_platform`` and ``attribute_platform`` are the forms of the
    first evaluation (``jax.devices()[0].platform``, any other ``.platform``)."""
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name == "default_backend":
            return "default_backend"
        if name == "lower" and isinstance(f, ast.Attribute):
            inner = source_form(f.value, src)
            return f"{inner}.lower()" if inner else None
        if name == "str" and node.args:
            return source_form(node.args[0], src)
        return "helper-call" if name else None
    if isinstance(node, ast.Attribute) and node.attr == "platform":
        dev = device_form(node.value, src)
        if dev == "devices()":
            return "devices_platform"
        if dev is not None:
            return f"device:{dev}"
        return "attribute_platform"  # config.platform, a parameter not known as a device
    if isinstance(node, ast.Attribute):
        return "attribute"  # self.hardware, config.backend, ...
    if isinstance(node, ast.Name):
        if src is not None:
            value = _variable_source(src, node)
            if (
                isinstance(value, ast.Attribute)
                and value.attr == "platform"
                and device_form(value.value, src) is not None
            ):
                inner = source_form(value, src)
                return f"{inner} (variable)" if inner else "variable"
        return "variable"
    return None


@dataclass
class GuardCompare:
    compare: ast.Compare
    constants: list[ast.Constant]
    form: str
    positive: bool  # the condition being true narrows to the named platforms


def guard_compares(
    test: ast.AST, negated: bool = False, src: SourceFile | None = None
) -> Iterator[tuple[GuardCompare, str]]:
    """Platform comparisons in a condition, with how they combine: 'plain', 'and', 'or'.
    ``any(d.platform == "tpu" for d in jax.devices())`` (and ``all``) is read as the
    comparison of one device (``device:any``)."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        for g, how in guard_compares(test.operand, not negated, src):
            yield g, how
        return
    if (
        isinstance(test, ast.Call)
        and _name_of(test.func) in ("any", "all")
        and len(test.args) == 1
        and isinstance(test.args[0], ast.GeneratorExp)
        and len(test.args[0].generators) == 1
        and _is_device_collection(test.args[0].generators[0].iter)
    ):
        for g, how in guard_compares(test.args[0].elt, negated, src):
            g.form = f"device:{_name_of(test.func)}"
            yield g, how
        return
    if isinstance(test, ast.BoolOp):
        op = "and" if isinstance(test.op, ast.And) else "or"
        if negated:
            op = "or" if op == "and" else "and"
        for v in test.values:
            for g, _how in guard_compares(v, negated, src):
                yield g, op
        return
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        compare_op = test.ops[0]
        left, right = test.left, test.comparators[0]
        if (
            isinstance(compare_op, (ast.Eq, ast.NotEq))
            and _plat_strings(left)
            and not _plat_strings(right)
        ):
            left, right = right, left
        consts = _plat_strings(right)
        if not consts:
            return
        if isinstance(compare_op, (ast.Eq, ast.NotEq)) and not isinstance(right, ast.Constant):
            return
        if isinstance(compare_op, (ast.In, ast.NotIn)) and isinstance(right, ast.Constant):
            return  # "tpu" in kind: a substring test
        form = source_form(left, src)
        if form is None:
            return
        positive = isinstance(compare_op, (ast.Eq, ast.In))
        yield GuardCompare(test, consts, form, positive != negated), "plain"


# --------------------------------------------------------------------------- reachability


@dataclass(frozen=True)
class Kernel:
    """A Pallas call a decided region reaches, and what it can lower for."""

    relpath: str
    line: int
    #: lowering platforms its params (or, without params, its evidence) allow; empty: any
    lowers: frozenset[str]
    #: "params" (a params class traced or known to the survey), "evidence" (the survey's
    #: platform primitives, no params), "generic" (no params, no evidence), "unknown"
    source: str
    #: "off" (absent or literally False), "on" (a truthy literal), "unknown"
    interpret: str
    #: the call sits under a platform guard of its own (an enclosing if, an early exit)
    guarded: bool

    def describe(self) -> str:
        plats = "/".join(sorted(self.lowers)) or "any platform"
        extra = "".join(
            [
                f", interpret {self.interpret}" if self.interpret != "off" else "",
                ", under its own guard" if self.guarded else "",
            ]
        )
        return f"{self.relpath}:{self.line} ({self.source}: {plats}{extra})"


def verdict(to_platform: str, kernels: Sequence[Kernel]) -> str | None:
    """None when the region the mutated decision lets run on ``to_platform`` reaches a
    kernel that cannot lower there (a real bug); otherwise why the mutant is no bug."""
    target = LOWERING.get(to_platform)
    if not target:
        return "the mutant names no platform"
    if not kernels:
        return "no kernel reached"
    reasons: list[str] = []
    for k in kernels:
        if k.source in ("generic", "unknown"):
            reasons.append("kernel's platform unknown (no params class, no evidence)")
        elif k.interpret != "off":
            reasons.append("interpret= not known to be off at the kernel")
        elif k.guarded:
            reasons.append("kernel under a platform guard of its own")
        elif k.lowers & target:
            reasons.append("kernel lowers there")
        else:
            return None
    return "; ".join(sorted(set(reasons)))


def _backend_of_trace(tracer: Tracer, trace: Trace) -> set[str | None]:
    """The params backends of the constructions a trace found (None: not a backend's)."""
    backend_of_module = {m: b for b, m in BACKEND_MODULES.items()}
    out: set[str | None] = set()
    for e in trace.edits:
        esrc = tracer.file(e.relpath)
        if esrc is None:
            out.add(None)
            continue
        ctor = next(
            (n for n in esrc.calls_on_line(e.lineno) if n.col_offset == e.col),
            None,
        )
        f = ctor.func if ctor is not None else None
        mod = (
            tracer._module_alias(esrc, f.value.id)
            if isinstance(f, ast.Attribute) and isinstance(f.value, ast.Name)
            else None
        )
        out.add(backend_of_module.get(mod or ""))
    return out


def _interpret_of(keywords: Sequence[ast.keyword]) -> str:
    kw = next((k for k in keywords if k.arg == "interpret"), None)
    if kw is None:
        return "unknown" if any(k.arg is None for k in keywords) else "off"
    if isinstance(kw.value, ast.Constant):
        return "on" if kw.value.value else "off"
    return "unknown"


class Reach:
    """Which package functions reach a Pallas entry point (pallas_call, kernel, core_map,
    or a ``@pl.kernel`` decorator), following calls, ``partial(f)``/``jit(f)`` arguments
    and ``self.method`` within a class, up to ``REACH_DEPTH`` deep; and which kernels
    (``Kernel``) they reach, with the platform the params or the survey's evidence give."""

    def __init__(self, tracer: Tracer, sites: Sequence[Site] = ()) -> None:
        self.tracer = tracer
        self.memo: dict[tuple[str, int], bool] = {}
        self.kernel_memo: dict[tuple[str, int], tuple[Kernel, ...]] = {}
        self.resolved: dict[tuple[str, str, str], tuple[SourceFile, ast.FunctionDef] | None] = {}
        self.sites = {(s.relpath, s.line): s for s in sites}

    def resolve(
        self, src: SourceFile, func: ast.AST, at: ast.AST
    ) -> tuple[SourceFile, ast.FunctionDef] | None:
        if (
            isinstance(func, ast.Attribute)
            and isinstance(func.value, ast.Name)
            and func.value.id in ("self", "cls")
        ):
            cls = src.parents.get(src.scope_of(at))
            while cls is not None and not isinstance(cls, ast.ClassDef):
                cls = src.parents.get(cls)
            if isinstance(cls, ast.ClassDef):
                for n in cls.body:
                    if isinstance(n, ast.FunctionDef) and n.name == func.attr:
                        return src, n
            return None
        if isinstance(func, ast.Name):
            key = (src.relpath, "", func.id)
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            key = (src.relpath, func.value.id, func.attr)
        else:
            return None
        if key not in self.resolved:
            try:
                self.resolved[key] = self.tracer._resolve_function(src, func)
            except RecursionError:
                self.resolved[key] = None
        return self.resolved[key]

    def callees(
        self, src: SourceFile, nodes: Sequence[ast.AST]
    ) -> Iterator[tuple[SourceFile, ast.FunctionDef, str]]:
        for root in nodes:
            for n in ast.walk(root):
                if not isinstance(n, ast.Call):
                    continue
                cands = [n.func, *[a for a in n.args if isinstance(a, (ast.Name, ast.Attribute))]]
                for c in cands:
                    got = self.resolve(src, c, n)
                    if got is not None:
                        yield got[0], got[1], f"{got[0].module}.{got[1].name}"

    def is_entry(self, node: ast.AST) -> bool:
        if isinstance(node, ast.Call):
            f = node.func
            name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
            return name in ENTRY_NAMES
        return False

    def kernel_decorator(self, fn: ast.AST) -> ast.expr | None:
        """The decorator that makes ``fn`` a Pallas kernel (``@pl.kernel(...)``,
        ``@functools.partial(pl.kernel, ...)``), if any."""
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return None
        for d in fn.decorator_list:
            d0 = d.func if isinstance(d, ast.Call) else d
            if (
                isinstance(d0, (ast.Attribute, ast.Name))
                and (d0.attr if isinstance(d0, ast.Attribute) else d0.id) in KERNEL_DECORATORS
            ):
                return d
            if isinstance(d, ast.Call) and any(
                isinstance(a, ast.Attribute) and a.attr in KERNEL_DECORATORS for a in d.args
            ):
                return d
        return None

    def reaches(self, src: SourceFile, fn: ast.FunctionDef, depth: int = 0) -> bool:
        key = (src.relpath, id(fn))
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = False  # cycles
        found = False
        for n in ast.walk(fn):
            if self.is_entry(n) or self.kernel_decorator(n) is not None:
                found = True
                break
        if not found and depth < REACH_DEPTH:
            for csrc, cfn, _name in self.callees(src, [fn]):
                if cfn is not fn and self.reaches(csrc, cfn, depth + 1):
                    found = True
                    break
        self.memo[key] = found
        return found

    def region_reaches(self, src: SourceFile, nodes: Sequence[ast.AST]) -> list[str]:
        out: list[str] = []
        for csrc, cfn, name in self.callees(src, nodes):
            if name not in out and self.reaches(csrc, cfn):
                out.append(name)
        return out

    # ----------------------------------------------------------------- kernels

    def kernel(self, src: SourceFile, node: ast.AST, stop: frozenset[int] = frozenset()) -> Kernel:
        """What the entry call (or kernel-decorated function) ``node`` lowers for; guards
        above the statements ``stop`` names (a decided region's) are not its own."""
        line = _start(node)
        if isinstance(node, ast.Call):
            keywords = list(node.keywords)
        else:
            d = self.kernel_decorator(node)
            keywords = list(d.keywords) if isinstance(d, ast.Call) else []
        interpret = _interpret_of(keywords)
        guarded = _under_guard(src, node, stop)
        site = self.sites.get((src.relpath, line))
        backend = site.known_class if site is not None else None
        source = "params" if backend else "unknown"
        if backend is None:
            kw = next((k for k in keywords if k.arg == "compiler_params"), None)
            if kw is not None:
                tr = Trace()
                try:
                    self.tracer.trace(src, kw.value, tr)
                except RecursionError:
                    tr = Trace()
                found = _backend_of_trace(self.tracer, tr) if tr.edits else set()
                if len(found) == 1 and None not in found:
                    backend, source = found.pop(), "params"
        if backend is None and site is not None:
            if site.has_evidence and site.platform in SURVEY_PLATFORM:
                backend, source = SURVEY_PLATFORM[site.platform], "evidence"
            elif site.params_class == "absent" and not site.has_evidence:
                source = "generic"
        lowers = BACKEND_LOWERS[backend] if backend else frozenset()
        return Kernel(src.relpath, line, lowers, source, interpret, guarded)

    def kernels_of(self, src: SourceFile, fn: ast.AST, depth: int = 0) -> tuple[Kernel, ...]:
        key = (src.relpath, id(fn))
        if key in self.kernel_memo:
            return self.kernel_memo[key]
        self.kernel_memo[key] = ()  # cycles
        out = self._direct_kernels(src, [fn])
        if depth < REACH_DEPTH:
            for csrc, cfn, _name in self.callees(src, [fn]):
                if cfn is not fn:
                    out += [k for k in self.kernels_of(csrc, cfn, depth + 1) if k not in out]
        self.kernel_memo[key] = tuple(out)
        return self.kernel_memo[key]

    def _direct_kernels(self, src: SourceFile, nodes: Sequence[ast.AST]) -> list[Kernel]:
        out: list[Kernel] = []
        stop = frozenset(id(n) for n in nodes)
        for root in nodes:
            for n in ast.walk(root):
                if self.is_entry(n) or self.kernel_decorator(n) is not None:
                    k = self.kernel(src, n, stop)
                    if k not in out:
                        out.append(k)
        return out

    def region_kernels(self, src: SourceFile, nodes: Sequence[ast.AST]) -> tuple[Kernel, ...]:
        """The kernels a region reaches: its own entry calls and its callees'."""
        out = self._direct_kernels(src, nodes)
        for csrc, cfn, _name in self.callees(src, nodes):
            out += [k for k in self.kernels_of(csrc, cfn) if k not in out]
        return tuple(out)


def _under_guard(src: SourceFile, node: ast.AST, stop: frozenset[int] = frozenset()) -> bool:
    """Whether ``node`` sits under a platform guard in its own function: inside an ``if``
    that compares a platform, or after such an ``if`` that exits; the walk up ends at a
    function or at a statement ``stop`` names."""
    cur: ast.AST | None = node
    while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
        if id(cur) in stop:
            return False
        parent = src.parents.get(cur)
        if (
            isinstance(parent, ast.If)
            and cur is not parent.test
            and list(guard_compares(parent.test))
        ):
            return True
        if isinstance(cur, ast.stmt):
            block = _block_of(src, cur)
            if block is not None:
                for before in block[: block.index(cur)]:
                    if (
                        isinstance(before, ast.If)
                        and _exits(before.body)
                        and list(guard_compares(before.test))
                    ):
                        return True
        cur = parent
    return False


# --------------------------------------------------------------------------- planning


def _exits(body: list[ast.stmt]) -> bool:
    if not body:
        return False
    last = body[-1]
    if isinstance(last, (ast.Return, ast.Raise, ast.Continue, ast.Break)):
        return True
    if isinstance(last, ast.Expr) and isinstance(last.value, ast.Call):
        f = last.value.func
        name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", "")
        return name in ("skip", "skipTest", "fail", "exit")
    return False


def _block_of(src: SourceFile, stmt: ast.stmt) -> list[ast.stmt] | None:
    parent = src.parents.get(stmt)
    if parent is None:
        return None
    for fld in ("body", "orelse", "finalbody", "handlers"):
        block = getattr(parent, fld, None)
        if isinstance(block, list) and stmt in block:
            return block
    return None


def _start(node: ast.AST) -> int:
    line: int = getattr(node, "lineno", 0)
    return line


def _end(node: ast.AST) -> int:
    line: int = getattr(node, "end_lineno", None) or _start(node)
    return line


def _swap_const(src: SourceFile, c: ast.Constant) -> TextEdit | None:
    """Replace a platform string literal by its swap, same quotes, same line."""
    if c.lineno != c.end_lineno:
        return None
    line = src.data.split(b"\n")[c.lineno - 1]
    raw = line[c.col_offset : c.end_col_offset].decode()
    if len(raw) < 2 or raw[0] not in "'\"" or raw[-1] != raw[0]:
        return None
    return TextEdit(
        src.relpath,
        c.lineno,
        c.col_offset,
        c.end_col_offset or 0,
        f"{raw[0]}{_swap(c)}{raw[0]}",
    )


def _scope_of_path(relpath: str) -> str:
    base = os.path.basename(relpath)
    return "test" if ("test" in base or "/tests/" in f"/{relpath}") else "lib"


def decided_region(
    src: SourceFile, node: ast.If, g: GuardCompare, how: str
) -> tuple[list[ast.stmt], int] | None:
    """The statements the swapped guard decides, and the last line of the span."""
    narrowing_true = g.positive and how in ("plain", "and")
    narrowing_false = (not g.positive) and how in ("plain", "or")
    if narrowing_true:
        return list(node.body), _end(node.body[-1])
    if narrowing_false:
        if node.orelse:
            return list(node.orelse), _end(node.orelse[-1])
        if _exits(node.body):
            block = _block_of(src, node)
            if block is not None:
                after = block[block.index(node) + 1 :]
                if after:
                    return after, _end(after[-1])
    return None


def guard_helpers(src: SourceFile) -> Iterator[tuple[ast.FunctionDef, GuardCompare]]:
    """Functions that return a platform comparison: ``return <comparison>`` alone (after a
    docstring), or one ``return`` of a condition that is true only on that platform
    (``use = fits and jax.default_backend() == "gpu"; ...; return use``)."""
    for fn in ast.walk(src.tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        body = [
            s
            for s in fn.body
            if not (isinstance(s, ast.Expr) and isinstance(s.value, ast.Constant))
        ]
        if len(body) == 1 and isinstance(body[0], ast.Return) and body[0].value is not None:
            found = list(guard_compares(body[0].value, src=src))
            if len(found) == 1 and found[0][1] == "plain":
                yield fn, found[0][0]
                continue
        rets = [n for n in ast.walk(fn) if isinstance(n, ast.Return) and src.scope_of(n) is fn]
        if len(rets) != 1 or rets[0] is not body[-1] or rets[0].value is None:
            continue
        value: ast.AST = rets[0].value
        if isinstance(value, ast.Name):
            assigns = [
                n
                for n in ast.walk(fn)
                if isinstance(n, ast.Assign)
                and src.scope_of(n) is fn
                and any(isinstance(t, ast.Name) and t.id == value.id for t in n.targets)
            ]
            if len(assigns) != 1:
                continue
            value = assigns[0].value
        found = list(guard_compares(value, src=src))
        if len(found) == 1 and found[0][1] == "and" and found[0][0].positive:
            yield fn, found[0][0]


def predicates(src: SourceFile) -> Iterator[tuple[ast.FunctionDef, GuardCompare]]:
    """Platform predicates: functions or methods with a device parameter (annotated
    ``jax.Device``, or named ``device``) that return a platform comparison of it, alone or
    joined with ``and`` (``return device.platform == "tpu" and generation >= 5``, also
    inside ``try``). tokamax's ``supported_on`` methods are the corpus's."""
    for fn in ast.walk(src.tree):
        if not isinstance(fn, ast.FunctionDef):
            continue
        params = _device_params(fn)
        if not params:
            continue
        found: list[GuardCompare] = []
        for r in ast.walk(fn):
            if not (isinstance(r, ast.Return) and r.value is not None):
                continue
            if src.scope_of(r) is not fn:
                continue
            for g, how in guard_compares(r.value, src=src):
                base = g.compare.left
                if (
                    how in ("plain", "and")
                    and g.positive
                    and isinstance(base, ast.Attribute)
                    and isinstance(base.value, ast.Name)
                    and base.value.id in params
                ):
                    found.append(g)
        # ``if device.platform != "tpu": return False`` before any other return
        for i, stmt in enumerate(fn.body):
            if any(isinstance(n, ast.Return) for b in fn.body[:i] for n in ast.walk(b)):
                break
            if not (
                isinstance(stmt, ast.If)
                and not stmt.orelse
                and len(stmt.body) == 1
                and isinstance(stmt.body[0], ast.Return)
                and isinstance(stmt.body[0].value, ast.Constant)
                and stmt.body[0].value.value is False
            ):
                continue
            for g, how in guard_compares(stmt.test, src=src):
                base = g.compare.left
                if (
                    how in ("plain", "or")
                    and not g.positive
                    and isinstance(base, ast.Attribute)
                    and isinstance(base.value, ast.Name)
                    and base.value.id in params
                ):
                    found.append(GuardCompare(g.compare, g.constants, g.form, True))
        if len(found) == 1:
            yield fn, found[0]


def _delegates_to(fn: ast.FunctionDef, names: set[str]) -> str | None:
    """The predicate a method returns the call of (``return _supported_on(device)``)."""
    rets = [n for n in ast.walk(fn) if isinstance(n, ast.Return) and n.value is not None]
    if len(rets) != 1 or not isinstance(rets[0].value, ast.Call):
        return None
    name = _name_of(rets[0].value.func)
    return name if name in names else None


def _def_start(fn: ast.FunctionDef | ast.AsyncFunctionDef) -> int:
    return min([fn.lineno, *(d.lineno for d in fn.decorator_list)])


def _predicate_mutants(
    srcs: Sequence[SourceFile],
    preds: dict[str, list[tuple[SourceFile, ast.FunctionDef, GuardCompare]]],
    uses: dict[str, list[tuple[SourceFile, ast.If, bool]]],
    reach: Reach,
    plan: Plan,
) -> None:
    """A predicate's platform string swapped: counted at the predicate, at the class
    methods that are it or return its call (the class's claim: its other methods run where
    it says yes), and at the ``if`` statements that call it."""
    # a method predicate speaks for its own class; a module-level one for the classes
    # whose methods return its call (delegation), and for the ifs that call it
    pred_ids = {id(fn) for defs in preds.values() for _s, fn, _g in defs}
    module_level = {
        name
        for name, defs in preds.items()
        if any(s.scope_of(fn) is s.tree and s.parents.get(fn) is s.tree for s, fn, _g in defs)
    }
    own: dict[int, tuple[SourceFile, ast.ClassDef, ast.FunctionDef]] = {}
    delegating: dict[str, list[tuple[SourceFile, ast.ClassDef, ast.FunctionDef]]] = {}
    for src in srcs:
        for cls in ast.walk(src.tree):
            if not isinstance(cls, ast.ClassDef):
                continue
            for m in cls.body:
                if not isinstance(m, ast.FunctionDef):
                    continue
                if id(m) in pred_ids:
                    own[id(m)] = (src, cls, m)
                    continue
                target = _delegates_to(m, module_level)
                if target is not None:
                    delegating.setdefault(target, []).append((src, cls, m))
    for name, defs in sorted(preds.items()):
        for src, fn, g in defs:
            where = f"{src.relpath}:{fn.lineno}"
            spans = [(src.relpath, _def_start(fn), _end(fn))]
            kernels: list[Kernel] = []
            reaches: list[str] = []
            users = [own[id(fn)]] if id(fn) in own else []
            if name in module_level:
                users += delegating.get(name, [])
            for csrc, cls, m in users:
                span = (csrc.relpath, _def_start(m), _end(m))
                if span not in spans:
                    spans.append(span)
                for meth in cls.body:
                    if isinstance(meth, ast.FunctionDef) and meth is not m:
                        ks = reach.kernels_of(csrc, meth)
                        kernels += [k for k in ks if k not in kernels]
                        if ks:
                            reaches.append(f"{csrc.module}.{cls.name}.{meth.name}")
            if name in module_level:
                for usrc, node, positive_use in uses.get(name, []):
                    eff = GuardCompare(g.compare, g.constants, g.form, g.positive == positive_use)
                    _add_reached(usrc, node, eff, "plain", reach, spans, reaches, kernels)
            if not kernels:
                plan.skipped.append(
                    Skipped(
                        "predicate",
                        where,
                        f"{name}: no class it speaks for, nor if that calls it, reaches a "
                        "Pallas call",
                    )
                )
                continue
            _add_constant_swap(
                plan, "predicate", src, g, name, where, spans, reaches, kernels, is_annotated(fn)
            )


def _add_constant_swap(
    plan: Plan,
    kind: str,
    src: SourceFile,
    g: GuardCompare,
    name: str,
    where: str,
    spans: Sequence[tuple[str, int, int]],
    reaches: Iterable[str],
    kernels: Iterable[Kernel],
    typed: bool = True,
) -> None:
    """A mutant swapping the platform strings a predicate or a guard helper compares
    with (``g``), or a skip when one of them spans lines."""
    edits = [_swap_const(src, c) for c in g.constants]
    if any(e is None for e in edits):
        plan.skipped.append(Skipped(kind, where, "string literal spans lines"))
        return
    plan.mutants.append(
        DispatchMutant(
            kind,
            g.form,
            src.relpath,
            g.compare.lineno,
            f"{name}: {' '.join(repr(c.value) for c in g.constants)} -> "
            f"{' '.join(repr(_swap(c)) for c in g.constants)}",
            [e for e in edits if e],
            list(spans),
            typed=typed,
            reaches=tuple(reaches),
            scope=_scope_of_path(src.relpath),
            to_platform=_swap(g.constants[0]),
            kernels=tuple(kernels),
        )
    )


def _registration_mutants(src: SourceFile, spec: RegistrySpec, reach: Reach, plan: Plan) -> None:
    """``@<receiver>.<method>(..., Backend.TPU)`` with the platform member swapped
    (``Backend.TPU`` <-> ``Backend.GPU``): the registered function then runs where its
    registration says. Caught at the registration (decorator to ``def`` line)."""
    platform_of = dict(spec.values)
    spelling_of = {v: k for k, v in spec.values}
    for fn in ast.walk(src.tree):
        if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        for d in fn.decorator_list:
            if not (
                isinstance(d, ast.Call)
                and isinstance(d.func, ast.Attribute)
                and d.func.attr == spec.method
                and _name_of(d.func.value) == spec.receiver
            ):
                continue
            arg: ast.expr | None = next(
                (k.value for k in d.keywords if k.arg == spec.keyword), None
            )
            if arg is None and len(d.args) > spec.position:
                arg = d.args[spec.position]
            where = f"{src.relpath}:{d.lineno}"
            text = ast.unparse(arg) if arg is not None else ""
            if text not in platform_of:
                plan.skipped.append(
                    Skipped("registration", where, f"platform {text or '?'} not a platform")
                )
                continue
            assert isinstance(arg, ast.Attribute)
            new_platform = "gpu" if platform_of[text] == "tpu" else "tpu"
            new_text = spelling_of[new_platform]
            kernels = reach.kernels_of(src, fn)
            if not kernels:
                plan.skipped.append(
                    Skipped("registration", where, "registered function reaches no Pallas call")
                )
                continue
            new_attr = new_text.rsplit(".", 1)[1]
            end = arg.end_col_offset or 0
            plan.mutants.append(
                DispatchMutant(
                    "registration",
                    f"{spec.receiver}.{spec.method}",
                    src.relpath,
                    d.lineno,
                    f"{fn.name}: {text} -> {new_text}",
                    [TextEdit(src.relpath, arg.lineno, end - len(arg.attr), end, new_attr)],
                    [(src.relpath, _def_start(fn), fn.lineno)],
                    typed=is_annotated(fn),
                    reaches=(f"{src.module}.{fn.name}",),
                    scope=_scope_of_path(src.relpath),
                    to_platform=new_platform,
                    kernels=kernels,
                    registry=spec.package,
                )
            )


def scan_files(root: Path, package: str) -> list[str]:
    """Every ``.py`` file of the package (jax: its ``pallas/ops``), sorted."""
    base = root / "jax/experimental/pallas/ops" if package == "jax" else root
    out = []
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d != "__pycache__"
            and not d.endswith((".dist-info", ".egg-info"))
            and not d.startswith(".")
        )
        for fn in filenames:
            if fn.endswith(".py"):
                out.append((Path(dirpath) / fn).relative_to(root).as_posix())
    return sorted(out)


def plan_dispatch(
    root: Path,
    package: str,
    files: list[str] | None = None,
    sites: Sequence[Site] = (),
    registry: RegistrySpec | None = None,
) -> Plan:
    """Guard, guard-helper, predicate, registration, table and platform_dependent mutants
    of one package. ``sites`` (the survey's rows) tell the platform of the kernels a region
    reaches where the params do not; ``registry`` defaults to ``REGISTRIES[package]``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # invalid escapes in some packages' tests
        return _plan(root, package, files, sites, registry or REGISTRIES.get(package))


def _plan(
    root: Path,
    package: str,
    files: list[str] | None,
    sites: Sequence[Site],
    registry: RegistrySpec | None,
) -> Plan:
    tracer = Tracer(root, {})
    reach = Reach(tracer, sites)
    plan = Plan()
    rels = files if files is not None else scan_files(root, package)
    srcs: list[SourceFile] = []
    for rel in rels:
        try:
            text = (root / rel).read_bytes()
        except OSError:
            continue
        if not any(k in text for k in (b"tpu", b"gpu", b"cuda", b"rocm", b"TPU", b"GPU")):
            continue
        s = tracer.file(rel)
        if s is not None:
            srcs.append(s)
    helpers: dict[str, list[tuple[SourceFile, ast.FunctionDef, GuardCompare]]] = {}
    preds: dict[str, list[tuple[SourceFile, ast.FunctionDef, GuardCompare]]] = {}
    for src in srcs:
        pred_fns = set()
        for fn, g in predicates(src):
            preds.setdefault(fn.name, []).append((src, fn, g))
            pred_fns.add(id(fn))
        for fn, g in guard_helpers(src):
            if id(fn) not in pred_fns:
                helpers.setdefault(fn.name, []).append((src, fn, g))
    helper_uses: dict[str, list[tuple[SourceFile, ast.If, bool]]] = {}
    for src in srcs:
        if registry is not None:
            _registration_mutants(src, registry, reach, plan)
        in_tests: set[int] = set()
        for fn, _g in [*guard_helpers(src), *predicates(src)]:
            in_tests |= {id(n) for n in ast.walk(fn)}
        for node in ast.walk(src.tree):
            if isinstance(node, ast.If):
                in_tests |= {id(n) for n in ast.walk(node.test)}
        for node in ast.walk(src.tree):
            if isinstance(node, ast.If):
                _guard_mutants(src, node, reach, plan, {**helpers, **preds}, helper_uses)
            elif isinstance(node, ast.Assign) and _condition_variable(src, node, reach, plan):
                in_tests |= {id(n) for n in ast.walk(node.value)}
            elif isinstance(node, ast.Dict):
                _table_mutants(src, node, reach, plan)
            elif isinstance(node, ast.Call):
                _pd_mutants(src, node, plan)
        for node in ast.walk(src.tree):
            if (
                isinstance(node, ast.Compare)
                and id(node) not in in_tests
                and list(guard_compares(node, src=src))
            ):
                plan.skipped.append(
                    Skipped(
                        "guard",
                        f"{src.relpath}:{node.lineno}",
                        "comparison outside an if test (returned or used in an expression)",
                    )
                )
    _helper_mutants(helpers, helper_uses, reach, plan)
    _predicate_mutants(srcs, preds, helper_uses, reach, plan)
    return plan


def _guard_mutants(
    src: SourceFile,
    node: ast.If,
    reach: Reach,
    plan: Plan,
    helpers: dict[str, list[tuple[SourceFile, ast.FunctionDef, GuardCompare]]],
    helper_uses: dict[str, list[tuple[SourceFile, ast.If, bool]]],
) -> None:
    where = f"{src.relpath}:{node.lineno}"
    # a call of a guard helper in the test: remember it for the helper's mutant
    for n in ast.walk(node.test):
        if isinstance(n, ast.Call):
            name = n.func.attr if isinstance(n.func, ast.Attribute) else getattr(n.func, "id", None)
            if name in helpers:
                negated = isinstance(node.test, ast.UnaryOp) and isinstance(node.test.op, ast.Not)
                helper_uses.setdefault(name, []).append((src, node, not negated))
    for g, how in guard_compares(node.test, src=src):
        region = decided_region(src, node, g, how)
        if region is None:
            plan.skipped.append(Skipped("guard", where, "no region narrowed to the named platform"))
            continue
        stmts, last = region
        reaches = reach.region_reaches(src, stmts)
        kernels = reach.region_kernels(src, stmts)
        if not reaches and not kernels:
            plan.skipped.append(Skipped("guard", where, "decided region reaches no Pallas call"))
            continue
        edits = [_swap_const(src, c) for c in g.constants]
        if any(e is None for e in edits):
            plan.skipped.append(Skipped("guard", where, "string literal spans lines"))
            continue
        before = ast.get_source_segment(src.data.decode("utf-8", "replace"), g.compare) or "?"
        after = before
        for c in g.constants:
            after = after.replace(repr(c.value), repr(_swap(c))).replace(
                f'"{c.value!s}"', f'"{_swap(c)}"'
            )
        plan.mutants.append(
            DispatchMutant(
                "guard",
                g.form,
                src.relpath,
                g.compare.lineno,
                f"{before} -> {after}",
                [e for e in edits if e],
                [(src.relpath, node.lineno, last)],
                typed=is_annotated(src.enclosing_function(node.lineno)),
                reaches=tuple(reaches),
                scope=_scope_of_path(src.relpath),
                to_platform=_swap(g.constants[0]),
                kernels=kernels,
            )
        )


def _condition_variable(src: SourceFile, node: ast.Assign, reach: Reach, plan: Plan) -> bool:
    """``use_pallas = jax.default_backend() == "tpu" and ...`` read by ``if use_pallas:`` in
    the same scope: a guard through a boolean variable. True if the assignment holds a
    platform comparison (mutated or listed as skipped)."""
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return False
    found = list(guard_compares(node.value, src=src))
    if len(found) != 1:
        return False
    g, how = found[0]
    name = node.targets[0].id
    where = f"{src.relpath}:{node.lineno}"
    scope = src.scope_of(node)
    spans: list[tuple[str, int, int]] = []
    reaches: list[str] = []
    kernels: list[Kernel] = []
    for n in ast.walk(scope):
        if not isinstance(n, ast.If) or n.lineno <= node.lineno or src.scope_of(n) is not scope:
            continue
        test, positive_use = n.test, True
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, positive_use = test.operand, False
        if not (isinstance(test, ast.Name) and test.id == name):
            continue
        eff = GuardCompare(g.compare, g.constants, "condition-variable", g.positive == positive_use)
        _add_reached(src, n, eff, how, reach, spans, reaches, kernels)
    if not spans:
        plan.skipped.append(
            Skipped("guard", where, f"condition variable {name}: no if on it reaches a Pallas call")
        )
        return True
    edits = [_swap_const(src, c) for c in g.constants]
    if any(e is None for e in edits):
        plan.skipped.append(Skipped("guard", where, "string literal spans lines"))
        return True
    spans.insert(0, (src.relpath, node.lineno, _end(node)))
    plan.mutants.append(
        DispatchMutant(
            "guard",
            "condition-variable",
            src.relpath,
            g.compare.lineno,
            f"{name} = ... {' '.join(repr(c.value) for c in g.constants)} -> "
            f"{' '.join(repr(_swap(c)) for c in g.constants)}",
            [e for e in edits if e],
            spans,
            typed=is_annotated(src.enclosing_function(node.lineno)),
            reaches=tuple(reaches),
            scope=_scope_of_path(src.relpath),
            to_platform=_swap(g.constants[0]),
            kernels=tuple(kernels),
        )
    )
    return True


def _add_reached(
    src: SourceFile,
    node: ast.If,
    eff: GuardCompare,
    how: str,
    reach: Reach,
    spans: list[tuple[str, int, int]],
    reaches: list[str],
    kernels: list[Kernel],
) -> None:
    """Record the region an ``if`` decides, when it reaches a Pallas call."""
    region = decided_region(src, node, eff, how)
    if region is None:
        return
    r = reach.region_reaches(src, region[0])
    ks = reach.region_kernels(src, region[0])
    if r or ks:
        spans.append((src.relpath, node.lineno, region[1]))
        reaches += [x for x in r if x not in reaches]
        kernels += [k for k in ks if k not in kernels]


def _helper_mutants(
    helpers: dict[str, list[tuple[SourceFile, ast.FunctionDef, GuardCompare]]],
    uses: dict[str, list[tuple[SourceFile, ast.If, bool]]],
    reach: Reach,
    plan: Plan,
) -> None:
    for name, defs in sorted(helpers.items()):
        for src, fn, g in defs:
            where = f"{src.relpath}:{fn.lineno}"
            spans: list[tuple[str, int, int]] = []
            reaches: list[str] = []
            kernels: list[Kernel] = []
            for usrc, node, positive_use in uses.get(name, []):
                eff = GuardCompare(g.compare, g.constants, g.form, g.positive == positive_use)
                _add_reached(usrc, node, eff, "plain", reach, spans, reaches, kernels)
            if not spans:
                plan.skipped.append(
                    Skipped(
                        "guard-helper",
                        where,
                        f"{name}: no caller's decided region reaches a Pallas call",
                    )
                )
                continue
            _add_constant_swap(plan, "guard-helper", src, g, name, where, spans, reaches, kernels)


def _callable_value(v: ast.AST) -> bool:
    if isinstance(v, (ast.Name, ast.Attribute, ast.Lambda)):
        return True
    return isinstance(v, ast.Call) and (
        (v.func.attr if isinstance(v.func, ast.Attribute) else getattr(v.func, "id", None))
        == "partial"
    )


def _table_mutants(src: SourceFile, node: ast.Dict, reach: Reach, plan: Plan) -> None:
    keys = [
        k
        for k in node.keys
        if isinstance(k, ast.Constant) and isinstance(k.value, str) and k.value in SWAP
    ]
    if len(keys) < 1 or not all(
        isinstance(k, ast.Constant)
        and isinstance(k.value, str)
        and (k.value in SWAP or k.value in ("cpu", "default"))
        for k in node.keys
    ):
        return
    where = f"{src.relpath}:{node.lineno}"
    if len(keys) < 2 and not any(
        isinstance(k, ast.Constant) and k.value in ("cpu", "default") for k in node.keys
    ):
        plan.skipped.append(Skipped("table", where, "one platform key"))
        return
    if not all(_callable_value(v) for v in node.values):
        plan.skipped.append(Skipped("table", where, "values are data, not callables"))
        return
    # swap the first two keys (a platform key with the next key)
    a = keys[0]
    b = next(k for k in node.keys if k is not a)
    assert isinstance(b, ast.Constant)
    edits = []
    for k, other in ((a, b), (b, a)):
        line = src.data.split(b"\n")[k.lineno - 1]
        raw = line[k.col_offset : k.end_col_offset].decode()
        q = raw[0] if raw and raw[0] in "'\"" else '"'
        edits.append(
            TextEdit(
                src.relpath, k.lineno, k.col_offset, k.end_col_offset or 0, f"{q}{other.value!s}{q}"
            )
        )
    stmt: ast.AST = node
    while src.parents.get(stmt) is not None and not isinstance(stmt, ast.stmt):
        stmt = src.parents[stmt]
    lo, hi = _start(stmt), _end(stmt)
    # uses of the table through the variable it is assigned to, in the same scope
    spans = [(src.relpath, lo, hi)]
    if (
        isinstance(stmt, ast.Assign)
        and len(stmt.targets) == 1
        and isinstance(stmt.targets[0], ast.Name)
    ):
        name = stmt.targets[0].id
        scope = src.scope_of(stmt)
        for n in ast.walk(scope):
            if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load):
                s: ast.AST = n
                while src.parents.get(s) is not None and not isinstance(s, ast.stmt):
                    s = src.parents[s]
                spans.append((src.relpath, _start(s), _end(s)))
    plan.mutants.append(
        DispatchMutant(
            "table",
            "dict-literal",
            src.relpath,
            node.lineno,
            f"swap keys {a.value!r} <-> {b.value!r}",
            edits,
            spans,
            typed=is_annotated(src.enclosing_function(node.lineno)),
            reaches=tuple(reach.region_reaches(src, list(node.values))),
            scope=_scope_of_path(src.relpath),
        )
    )


def _pd_mutants(src: SourceFile, call: ast.Call, plan: Plan) -> None:
    f = call.func
    name = f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)
    if name not in ("platform_dependent", "dispatch"):
        return
    if name == "dispatch" and not (
        isinstance(f, ast.Attribute) and getattr(f.value, "id", "") == "typed_pallas"
    ):
        return
    branches = [k for k in call.keywords if k.arg in BRANCH_SWAP or k.arg == "default"]
    plat = [k for k in branches if k.arg in BRANCH_SWAP]
    where = f"{src.relpath}:{call.lineno}"
    if not plat:
        plan.skipped.append(Skipped("platform_dependent", where, "no platform keyword"))
        return
    typed = is_annotated(src.enclosing_function(call.lineno))
    span = [(src.relpath, call.lineno, _end(call))]
    form = "branch-" + (
        "parameter"
        if all(isinstance(k.value, ast.Name) and _is_param(src, k.value) for k in branches)
        else "callable"
    )
    named = {k.arg for k in call.keywords}
    edits = []
    for k in plat:
        if k.arg is None:  # a ** splat: never a platform keyword
            continue
        new = BRANCH_SWAP[k.arg]
        if new in named:
            new = next((x for x in ("tpu", "cuda", "rocm") if x not in named), None) or new
        edits.append(TextEdit(src.relpath, k.lineno, k.col_offset, k.col_offset + len(k.arg), new))
    plan.mutants.append(
        DispatchMutant(
            "platform_dependent",
            form,
            src.relpath,
            call.lineno,
            "rename " + ", ".join(f"{k.arg}= -> {e.text}=" for k, e in zip(plat, edits)),
            edits,
            span,
            typed=typed,
            scope=_scope_of_path(src.relpath),
        )
    )
    if len(branches) >= 2:
        k1, k2 = branches[0], branches[1]
        segs = []
        for k in (k1, k2):
            if k.value.lineno != k.value.end_lineno:
                return
            segs.append(
                src.data.split(b"\n")[k.value.lineno - 1][
                    k.value.col_offset : k.value.end_col_offset
                ].decode()
            )
        plan.mutants.append(
            DispatchMutant(
                "platform_dependent",
                form,
                src.relpath,
                call.lineno,
                f"swap values of {k1.arg}= and {k2.arg}=",
                [
                    TextEdit(
                        src.relpath,
                        k1.value.lineno,
                        k1.value.col_offset,
                        k1.value.end_col_offset or 0,
                        segs[1],
                    ),
                    TextEdit(
                        src.relpath,
                        k2.value.lineno,
                        k2.value.col_offset,
                        k2.value.end_col_offset or 0,
                        segs[0],
                    ),
                ],
                span,
                typed=typed,
                scope=_scope_of_path(src.relpath),
            )
        )


def _is_param(src: SourceFile, name: ast.Name) -> bool:
    fn = src.scope_of(name)
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return False
    a = fn.args
    return name.id in {x.arg for x in [*a.posonlyargs, *a.args, *a.kwonlyargs]}


# --------------------------------------------------------------------------- writing


def apply_text_edits(data: bytes, edits: list[TextEdit]) -> bytes:
    lines = data.split(b"\n")
    for e in sorted(edits, key=lambda e: (e.lineno, e.col), reverse=True):
        line = lines[e.lineno - 1]
        lines[e.lineno - 1] = line[: e.col] + e.text.encode() + line[e.end_col :]
    return b"\n".join(lines)


#: appended to every mutated file (after its last newline): see ``write_dispatch_mutant``
SIZE_PAD = b" "


def write_dispatch_mutant(root: Path, m: DispatchMutant, dest: Path) -> dict[str, Path]:
    """Write the mutated files under ``dest``; relpath -> shadow path.

    Each mutated file ends with ``SIZE_PAD`` after its last newline, so that it never has
    the size of the file it shadows. mypy (2.4) judges a shadowed module by the shadow's
    size and mtime but hashes the *original* file when they do not settle it: a mutant of
    the same size as the original (``"tpu"`` -> ``"gpu"``) checked in a cache warmed on
    the unmodified code is taken as fresh and never read. The pad changes no line."""
    out: dict[str, Path] = {}
    by_file: dict[str, list[TextEdit]] = {}
    for e in m.edits:
        by_file.setdefault(e.relpath, []).append(e)
    for rel, edits in by_file.items():
        data = (root / rel).read_bytes()
        new = apply_text_edits(data, edits) + SIZE_PAD
        ast.parse(new)
        assert new.count(b"\n") == data.count(b"\n"), "mutation moved lines"
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(new)
        out[rel] = path
    return out


def schedule_dispatch(mutants: list[DispatchMutant]) -> Iterator[list[DispatchMutant]]:
    """Rounds whose mutants touch, and are judged in, disjoint files."""
    return schedule(mutants)
