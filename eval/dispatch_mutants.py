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
  first two branches.

A mutant is *caught* (``eval.corpus`` decides) when a new ``pallas-platform`` error falls
in one of its ``spans``: the guard statement and the region it decides (for a helper,
those of its callers), the table literal and the statement that indexes it, or the
``platform_dependent`` call.

The fourth kind of the evaluation, calls of package wrappers that forward
``compiler_params``, reuses ``eval.mutants``' params swaps at those call sites.

What it does not do: import the packages, run a checker, or know what the plugin infers
(``form`` only says which syntax the guard uses).
"""

from __future__ import annotations

import ast
import os
import warnings
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from eval.mutants import ENTRY_NAMES, SourceFile, Tracer, is_annotated, schedule

#: platform strings a guard or a key may name, and what a mutant replaces each with
SWAP: dict[str, str] = {"tpu": "gpu", "gpu": "tpu", "cuda": "tpu", "rocm": "tpu"}
#: platform_dependent / dispatch keywords and their swap
BRANCH_SWAP: dict[str, str] = {"tpu": "cuda", "cuda": "tpu", "rocm": "tpu", "gpu": "tpu"}
#: decorators that make a function a Pallas kernel entry point (``@pl.kernel``, ``@plgpu.kernel``)
KERNEL_DECORATORS = frozenset({"kernel", "core_map"})
#: how deep ``Reach.reaches`` follows calls
REACH_DEPTH = 6


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


def source_form(node: ast.AST) -> str | None:
    """How a guard reads the platform, or None if ``node`` does not look like a platform source."""
    if isinstance(node, ast.Call):
        f = node.func
        name = f.attr if isinstance(f, ast.Attribute) else f.id if isinstance(f, ast.Name) else None
        if name == "default_backend":
            return "default_backend"
        if name == "lower" and isinstance(f, ast.Attribute):
            inner = source_form(f.value)
            return f"{inner}.lower()" if inner else None
        return "helper-call" if name else None
    if isinstance(node, ast.Attribute) and node.attr == "platform":
        base = node.value
        if isinstance(base, ast.Subscript) and isinstance(base.value, ast.Call):
            f = base.value.func
            if (f.attr if isinstance(f, ast.Attribute) else getattr(f, "id", None)) in (
                "devices",
                "local_devices",
            ):
                return "devices_platform"
        return "attribute_platform"  # device.platform of a parameter, a mesh's device, ...
    if isinstance(node, ast.Attribute):
        return "attribute"  # self.hardware, config.backend, ...
    if isinstance(node, ast.Name):
        return "variable"
    return None


@dataclass
class GuardCompare:
    compare: ast.Compare
    constants: list[ast.Constant]
    form: str
    positive: bool  # the condition being true narrows to the named platforms


def guard_compares(test: ast.AST, negated: bool = False) -> Iterator[tuple[GuardCompare, str]]:
    """Platform comparisons in a condition, with how they combine: 'plain', 'and', 'or'."""
    if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
        for g, how in guard_compares(test.operand, not negated):
            yield g, how
        return
    if isinstance(test, ast.BoolOp):
        op = "and" if isinstance(test.op, ast.And) else "or"
        if negated:
            op = "or" if op == "and" else "and"
        for v in test.values:
            for g, _how in guard_compares(v, negated):
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
        form = source_form(left)
        if form is None:
            return
        positive = isinstance(compare_op, (ast.Eq, ast.In))
        yield GuardCompare(test, consts, form, positive != negated), "plain"


# --------------------------------------------------------------------------- reachability


class Reach:
    """Which package functions reach a Pallas entry point (pallas_call, kernel, core_map,
    or a ``@pl.kernel`` decorator), following calls, ``partial(f)``/``jit(f)`` arguments
    and ``self.method`` within a class, up to ``REACH_DEPTH`` deep."""

    def __init__(self, tracer: Tracer) -> None:
        self.tracer = tracer
        self.memo: dict[tuple[str, int], bool] = {}
        self.resolved: dict[tuple[str, str, str], tuple[SourceFile, ast.FunctionDef] | None] = {}

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

    def reaches(self, src: SourceFile, fn: ast.FunctionDef, depth: int = 0) -> bool:
        key = (src.relpath, id(fn))
        if key in self.memo:
            return self.memo[key]
        self.memo[key] = False  # cycles
        found = False
        for n in ast.walk(fn):
            if self.is_entry(n):
                found = True
                break
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                for d in n.decorator_list:
                    d0 = d.func if isinstance(d, ast.Call) else d
                    if (
                        isinstance(d0, (ast.Attribute, ast.Name))
                        and (d0.attr if isinstance(d0, ast.Attribute) else d0.id)
                        in KERNEL_DECORATORS
                    ):
                        found = True
                    if isinstance(d, ast.Call) and any(
                        isinstance(a, ast.Attribute) and a.attr in KERNEL_DECORATORS for a in d.args
                    ):
                        found = True
                if found:
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
            found = list(guard_compares(body[0].value))
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
        found = list(guard_compares(value))
        if len(found) == 1 and found[0][1] == "and" and found[0][0].positive:
            yield fn, found[0][0]


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


def plan_dispatch(root: Path, package: str, files: list[str] | None = None) -> Plan:
    """Guard, guard-helper, table and platform_dependent mutants of one package."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)  # invalid escapes in some packages' tests
        return _plan(root, package, files)


def _plan(root: Path, package: str, files: list[str] | None) -> Plan:
    tracer = Tracer(root, {})
    reach = Reach(tracer)
    plan = Plan()
    rels = files if files is not None else scan_files(root, package)
    srcs: list[SourceFile] = []
    for rel in rels:
        try:
            text = (root / rel).read_bytes()
        except OSError:
            continue
        if not any(k in text for k in (b"tpu", b"gpu", b"cuda", b"rocm")):
            continue
        s = tracer.file(rel)
        if s is not None:
            srcs.append(s)
    helpers: dict[str, list[tuple[SourceFile, ast.FunctionDef, GuardCompare]]] = {}
    for src in srcs:
        for fn, g in guard_helpers(src):
            helpers.setdefault(fn.name, []).append((src, fn, g))
    helper_uses: dict[str, list[tuple[SourceFile, ast.If, bool]]] = {}
    for src in srcs:
        in_tests: set[int] = set()
        for fn, _g in guard_helpers(src):
            in_tests |= {id(n) for n in ast.walk(fn)}
        for node in ast.walk(src.tree):
            if isinstance(node, ast.If):
                in_tests |= {id(n) for n in ast.walk(node.test)}
        for node in ast.walk(src.tree):
            if isinstance(node, ast.If):
                _guard_mutants(src, node, reach, plan, helpers, helper_uses)
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
                and list(guard_compares(node))
            ):
                plan.skipped.append(
                    Skipped(
                        "guard",
                        f"{src.relpath}:{node.lineno}",
                        "comparison outside an if test (returned or used in an expression)",
                    )
                )
    _helper_mutants(helpers, helper_uses, reach, plan)
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
    for g, how in guard_compares(node.test):
        region = decided_region(src, node, g, how)
        if region is None:
            plan.skipped.append(Skipped("guard", where, "no region narrowed to the named platform"))
            continue
        stmts, last = region
        reaches = reach.region_reaches(src, stmts)
        if not reaches:
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
            )
        )


def _condition_variable(src: SourceFile, node: ast.Assign, reach: Reach, plan: Plan) -> bool:
    """``use_pallas = jax.default_backend() == "tpu" and ...`` read by ``if use_pallas:`` in
    the same scope: a guard through a boolean variable. True if the assignment holds a
    platform comparison (mutated or listed as skipped)."""
    if len(node.targets) != 1 or not isinstance(node.targets[0], ast.Name):
        return False
    found = list(guard_compares(node.value))
    if len(found) != 1:
        return False
    g, how = found[0]
    name = node.targets[0].id
    where = f"{src.relpath}:{node.lineno}"
    scope = src.scope_of(node)
    spans: list[tuple[str, int, int]] = []
    reaches: list[str] = []
    for n in ast.walk(scope):
        if not isinstance(n, ast.If) or n.lineno <= node.lineno or src.scope_of(n) is not scope:
            continue
        test, positive_use = n.test, True
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            test, positive_use = test.operand, False
        if not (isinstance(test, ast.Name) and test.id == name):
            continue
        eff = GuardCompare(g.compare, g.constants, "condition-variable", g.positive == positive_use)
        _add_reached(src, n, eff, how, reach, spans, reaches)
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
) -> None:
    """Record the region an ``if`` decides, when it reaches a Pallas call."""
    region = decided_region(src, node, eff, how)
    if region is None:
        return
    r = reach.region_reaches(src, region[0])
    if r:
        spans.append((src.relpath, node.lineno, region[1]))
        reaches += [x for x in r if x not in reaches]


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
            for usrc, node, positive_use in uses.get(name, []):
                eff = GuardCompare(g.compare, g.constants, g.form, g.positive == positive_use)
                _add_reached(usrc, node, eff, "plain", reach, spans, reaches)
            if not spans:
                plan.skipped.append(
                    Skipped(
                        "guard-helper",
                        where,
                        f"{name}: no caller's decided region reaches a Pallas call",
                    )
                )
                continue
            edits = [_swap_const(src, c) for c in g.constants]
            if any(e is None for e in edits):
                plan.skipped.append(Skipped("guard-helper", where, "string literal spans lines"))
                continue
            plan.mutants.append(
                DispatchMutant(
                    "guard-helper",
                    g.form,
                    src.relpath,
                    g.compare.lineno,
                    f"{name}: {' '.join(repr(c.value) for c in g.constants)} -> "
                    f"{' '.join(repr(_swap(c)) for c in g.constants)}",
                    [e for e in edits if e],
                    spans,
                    typed=True,
                    reaches=tuple(reaches),
                    scope=_scope_of_path(src.relpath),
                )
            )


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


def write_dispatch_mutant(root: Path, m: DispatchMutant, dest: Path) -> dict[str, Path]:
    """Write the mutated files under ``dest``; relpath -> shadow path."""
    out: dict[str, Path] = {}
    by_file: dict[str, list[TextEdit]] = {}
    for e in m.edits:
        by_file.setdefault(e.relpath, []).append(e)
    for rel, edits in by_file.items():
        data = (root / rel).read_bytes()
        new = apply_text_edits(data, edits)
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
