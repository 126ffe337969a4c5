"""Real calls of library kernels, and mutants that put each call on the other platform's path.

What it does, over the source of one package (stdlib ``ast``, nothing imported):

* **finds the library calls** (``find_library_calls``): every call whose callee, resolved
  through the file's import statements (module level and inside the enclosing
  functions, plus module-level aliases ``name = module.attr``), names a function of an
  installed library that carries a platform requirement. The requirement is asked of
  ``typed_pallas_mypy.inference.Inference`` over the installed libraries (the
  same reader the plugin uses), never of a list. A call of a library *wrapper* that
  forwards ``compiler_params`` to a Pallas entry point (qwix's ``pallas_call``) counts
  too, with the platform of the params construction the call passes. Only callees
  under the library prefixes given are looked up (the package's own modules are no
  library);
* **plans three mutant forms** per call (``plan_library_mutants``), each keeping every
  line where it was:

  - ``guard``: the statement holding the call is put under
    ``if jax.default_backend() == "<other>":`` written on the statement's own first line
    (``return f(x)`` -> ``if jax.default_backend() == "gpu": return f(x)``); a module
    without ``import jax`` gets ``import jax as _tp_jax`` appended after its last line;
  - ``swap``: where the call already sits in the region a platform guard decides (an
    ``if``, an ``elif``, an early exit, any form ``eval.dispatch_mutants`` recognises),
    or the function holding it is called in such a region in the same file (one call
    level up: ``if target_hardware == "tpu": self.tpu_attention(...)``), the guard's
    platform string is swapped;
  - ``config``: the call's module is configured for the other platform
    (``[[tool.typed-pallas.overrides]] module = [...]; platforms = ["<other>"]``);

* says which mutants are **real bugs**: the library function's platforms (its
  requirement, or the wrapper call's params) exclude the mutant's platform, interpret
  mode is off at the call (the function takes no ``interpret`` from its caller, or the
  call leaves it out or passes a literal false), and no platform guard keeps the call
  on its own platform (one around the call, or one around every same-file call of the
  function holding it): such a path never runs. Only real bugs count in ``score``
  (by default only those whose callee's platform ``prove`` confirmed by lowering); the
  others are listed with the reason.

A mutant is *caught* (``eval.corpus`` runs mypy) when a new ``pallas-platform`` error
falls in its ``span``: the statement holding the call (for a call in a compound
statement's header, the lines from the header to the call's end); for a swap of a guard
one call level up, also the statement that calls the function holding the call.

What it does not do: run a checker, import jax or the libraries, or prove a library
function's platform by lowering it (``eval.library_proofs`` does, for a sample).
"""

from __future__ import annotations

import ast
import os
import warnings
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from eval.dispatch_mutants import SWAP, TextEdit, apply_text_edits, decided_region, guard_compares
from eval.mutants import BACKEND_MODULES, SourceFile, Trace, Tracer, is_annotated, schedule
from typed_pallas._platforms import LOWERINGS_OF_NAME
from typed_pallas_mypy.inference import Inference, Requirement, WrapperFacts

#: the alias of the ``import jax`` a guard mutant appends when the module has none
GUARD_ALIAS = "_tp_jax"
#: the three mutant forms, in report order
FORMS: tuple[str, ...] = ("guard", "swap", "config")
#: lowering platforms of each params backend (a wrapper call's platform)
LOWERINGS_OF_BACKEND: dict[str, frozenset[str]] = {
    "tpu": LOWERINGS_OF_NAME["tpu"],
    "triton": LOWERINGS_OF_NAME["gpu"],
    "mosaic_gpu": LOWERINGS_OF_NAME["cuda"],
}
#: statements a guard can be written in front of, on their first line
SIMPLE_STATEMENTS = (ast.Expr, ast.Assign, ast.AnnAssign, ast.AugAssign, ast.Return)
#: folders never scanned for calls
SKIPPED_DIRS = frozenset({"__pycache__", "build", "dist"})


# --------------------------------------------------------------------------- calls


@dataclass(frozen=True)
class LibraryCall:
    """One call of a library function (or wrapper) that carries a platform requirement."""

    package: str
    relpath: str
    module: str
    line: int
    col: int
    #: the callee's fully qualified name, as the import statements give it
    callee: str
    #: the library's top-level package ("jax" for ``jax.experimental.pallas.ops``)
    library: str
    #: "function" (the callee's own requirement) or "wrapper" (the params it is passed)
    kind: str
    #: lowering platforms the callee can lower for
    platforms: frozenset[str]
    #: interpret mode at the call: "none" (the callee takes no interpret from its caller),
    #: "absent" (left out), "false", "true", "unknown"
    interpret: str
    #: (first, last) line where a new error counts as on this call
    span: tuple[int, int]
    #: the enclosing function is annotated (mypy's default flags check its body)
    typed: bool
    #: "lib" or "test"
    scope: str
    #: the chain the reader gives (the function itself first), or the wrapper's site
    chain: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return f"{self.relpath}:{self.line}:{self.col}"

    @property
    def where(self) -> str:
        return f"{self.relpath}:{self.line}"

    @property
    def interpret_off(self) -> bool:
        """Interpret mode is off at the call, so the kernel lowers for real."""
        return self.interpret in ("none", "absent", "false")


def library_of(fullname: str) -> str:
    """The top-level package of a library name; jax's ops are "jax"."""
    return fullname.split(".", 1)[0]


def module_of_relpath(relpath: str) -> str:
    parts = relpath[:-3].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def scope_of_relpath(relpath: str) -> str:
    base = os.path.basename(relpath)
    return "test" if ("test" in base or "/tests/" in f"/{relpath}") else "lib"


def source_files(root: Path) -> list[str]:
    """Every ``.py`` file under ``root`` (relative paths, sorted), metadata folders left out."""
    out: list[str] = []
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(
            d
            for d in dirnames
            if d not in SKIPPED_DIRS
            and not d.startswith(".")
            and not d.endswith((".dist-info", ".egg-info"))
        )
        for name in filenames:
            if name.endswith(".py"):
                out.append((Path(dirpath) / name).relative_to(root).as_posix())
    return sorted(out)


def top_level_modules(root: Path) -> set[str]:
    """The importable top-level names installed under ``root`` (packages and modules)."""
    names: set[str] = set()
    for entry in root.iterdir():
        if entry.name.startswith((".", "_")) or entry.name.endswith((".dist-info", ".egg-info")):
            continue
        if entry.is_dir() and (entry / "__init__.py").is_file():
            names.add(entry.name)
        elif entry.suffix == ".py" and entry.stem.isidentifier():
            names.add(entry.stem)
    return names


class ImportScopes:
    """What each name means in each scope of one file, from its import statements."""

    def __init__(self, src: SourceFile) -> None:
        self.src = src
        self.bindings: dict[ast.AST, dict[str, str | None]] = {}
        for node in ast.walk(src.tree):
            if isinstance(node, (ast.Import, ast.ImportFrom)):
                for name, target in self._targets(node):
                    self._bind(src.scope_of(node), name, target)
        # names rebound by anything else in a function scope are not the import's
        for node in ast.walk(src.tree):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                scope = src.scope_of(node)
                if scope is not src.tree and node.id in self.bindings.get(scope, {}):
                    self.bindings[scope][node.id] = None
        self._module_aliases()

    def _bind(self, scope: ast.AST, name: str, target: str) -> None:
        here = self.bindings.setdefault(scope, {})
        here[name] = target if here.get(name, target) == target else None

    def _targets(self, node: ast.Import | ast.ImportFrom) -> Iterator[tuple[str, str]]:
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.asname:
                    yield alias.asname, alias.name
                else:
                    top = alias.name.split(".", 1)[0]
                    yield top, top
            return
        base = self._absolute(node)
        for alias in node.names:
            if alias.name != "*":
                yield alias.asname or alias.name, f"{base}.{alias.name}"

    def _absolute(self, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        parts = self.src.module.split(".")
        if not self.src.is_package:
            parts = parts[:-1]
        if node.level > 1:
            parts = parts[: len(parts) - (node.level - 1)]
        return ".".join([*parts, *([node.module] if node.module else [])])

    def _module_aliases(self) -> None:
        """``gmm = megablox.gmm`` at module level, bound once: an alias of the import."""
        module = self.src.tree
        counts: dict[str, int] = {}
        for node in ast.walk(module):
            if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                if self.src.scope_of(node) is module:
                    counts[node.id] = counts.get(node.id, 0) + 1
        here = self.bindings.setdefault(module, {})
        for stmt in module.body if isinstance(module, ast.Module) else []:
            if (
                isinstance(stmt, ast.Assign)
                and len(stmt.targets) == 1
                and isinstance(stmt.targets[0], ast.Name)
                and counts.get(stmt.targets[0].id) == 1
                and stmt.targets[0].id not in here
            ):
                target = self.dotted(stmt.value, stmt)
                if target is not None:
                    here[stmt.targets[0].id] = target

    def lookup(self, name: str, at: ast.AST) -> str | None:
        scope: ast.AST | None = self.src.scope_of(at)
        while scope is not None:
            found = self.bindings.get(scope, {})
            if name in found:
                return found[name]
            if scope is self.src.tree:
                return None
            scope = self.src.scope_of(scope)
        return None

    def dotted(self, expr: ast.AST, at: ast.AST) -> str | None:
        """The fully qualified name ``expr`` refers to, if the imports say it."""
        if isinstance(expr, ast.Name):
            return self.lookup(expr.id, at)
        if isinstance(expr, ast.Attribute):
            base = self.dotted(expr.value, at)
            return f"{base}.{expr.attr}" if base is not None else None
        return None


def _truth(value: ast.AST) -> str:
    if isinstance(value, ast.Constant):
        return "true" if value.value else "false"
    return "unknown"


def interpret_at_call(call: ast.Call, interpret: tuple[str, int] | None) -> str:
    """How a call sets the callee's interpret parameter (``Requirement.interpret``)."""
    if interpret is None:
        return "none"
    name, position = interpret
    keyword = next((k for k in call.keywords if k.arg == name), None)
    if keyword is not None:
        return _truth(keyword.value)
    if position >= 0:
        for i, arg in enumerate(call.args):
            if isinstance(arg, ast.Starred):
                return "unknown"
            if i == position:
                return _truth(arg)
    if any(k.arg is None for k in call.keywords):
        return "unknown"
    return "absent"


def _statement_of(src: SourceFile, node: ast.AST) -> ast.stmt | None:
    cur: ast.AST | None = node
    while cur is not None and not isinstance(cur, ast.stmt):
        cur = src.parents.get(cur)
    return cur


def call_span(src: SourceFile, call: ast.Call) -> tuple[int, int]:
    """The statement holding the call; for a compound statement's header, the header
    lines up to the call's end."""
    outer: ast.AST = call
    parent = src.parents.get(outer)
    while isinstance(parent, ast.Call) and parent.func is outer:
        outer, parent = parent, src.parents.get(parent)  # ``f(a)(b)``: the whole chain
    stmt = _statement_of(src, call)
    end = getattr(outer, "end_lineno", None) or call.lineno
    if stmt is None:
        return call.lineno, end
    if isinstance(stmt, SIMPLE_STATEMENTS):
        return stmt.lineno, stmt.end_lineno or end
    return stmt.lineno, end


@dataclass
class CallSearch:
    """What ``find_library_calls`` found: the calls, and the library calls without a
    requirement (counted per library, not mutated)."""

    calls: list[LibraryCall] = field(default_factory=list)
    without_requirement: dict[str, int] = field(default_factory=dict)
    files_read: int = 0


def _wrapper_platforms(tracer: Tracer, src: SourceFile, call: ast.Call) -> frozenset[str] | None:
    """The platforms of the params a wrapper call passes (one known backend), else None."""
    keyword = next((k for k in call.keywords if k.arg == "compiler_params"), None)
    if keyword is None:
        return None
    trace = Trace()
    tracer.trace(src, keyword.value, trace)
    backends: set[str | None] = set()
    module_backend = {module: backend for backend, module in BACKEND_MODULES.items()}
    for edit in trace.edits:
        esrc = tracer.file(edit.relpath)
        if esrc is None:
            return None
        ctor = next(
            (
                n
                for n in esrc.calls_on_line(edit.lineno)
                if n.col_offset == edit.col and isinstance(n.func, ast.Attribute)
            ),
            None,
        )
        func = ctor.func if ctor is not None else None
        if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)):
            return None
        backends.add(module_backend.get(tracer._module_alias(esrc, func.value.id) or ""))
    if len(backends) != 1:
        return None
    (backend,) = backends
    return LOWERINGS_OF_BACKEND.get(backend) if backend is not None else None


def find_library_calls(
    root: Path,
    package: str,
    facts: Inference,
    libraries: Iterable[str],
    files: Sequence[str] | None = None,
) -> CallSearch:
    """Every call under ``root`` of a library function with a requirement (``facts``),
    or of a library wrapper given params of one backend. ``libraries``: the dotted
    prefixes of the libraries evaluated (``tokamax``, ``jax.experimental.pallas.ops``);
    calls of anything else are not looked up."""
    prefixes = tuple(f"{p}." for p in libraries)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SyntaxWarning)
        return _find(root, package, facts, prefixes, files)


def _find(
    root: Path,
    package: str,
    facts: Inference,
    prefixes: tuple[str, ...],
    files: Sequence[str] | None,
) -> CallSearch:
    found = CallSearch()
    tracer = Tracer(root, {})
    asked: dict[str, tuple[Requirement | None, WrapperFacts | None]] = {}
    for rel in files if files is not None else source_files(root):
        src = tracer.file(rel)
        if src is None:
            continue
        found.files_read += 1
        scopes = ImportScopes(src)
        for node in ast.walk(src.tree):
            if not isinstance(node, ast.Call):
                continue
            callee = scopes.dotted(node.func, node)
            if callee is None or not callee.startswith(prefixes):
                continue
            if callee not in asked:
                asked[callee] = (facts.requirement(callee), facts.wrapper(callee))
            requirement, wrapper = asked[callee]
            if requirement is not None:
                kind, chain = "function", requirement.chain
                platforms = requirement.platforms
                interpret = interpret_at_call(node, requirement.interpret)
            elif wrapper is not None and (wrapped := _wrapper_platforms(tracer, src, node)):
                kind, chain = "wrapper", (f"{callee} forwards its params ({wrapper.where})",)
                platforms = wrapped
                interpret = interpret_at_call(node, ("interpret", -1))
            else:
                lib = library_of(callee)
                found.without_requirement[lib] = found.without_requirement.get(lib, 0) + 1
                continue
            found.calls.append(
                LibraryCall(
                    package=package,
                    relpath=rel,
                    module=src.module,
                    line=node.lineno,
                    col=node.col_offset,
                    callee=callee,
                    library=library_of(callee),
                    kind=kind,
                    platforms=frozenset(platforms),
                    interpret=interpret,
                    span=call_span(src, node),
                    typed=is_annotated(src.enclosing_function(node.lineno)),
                    scope=scope_of_relpath(rel),
                    chain=tuple(chain),
                )
            )
    found.calls.sort(key=lambda c: (c.relpath, c.line, c.col))
    return found


# --------------------------------------------------------------------------- guards


@dataclass(frozen=True)
class EnclosingGuard:
    """A platform guard whose decided region holds a call."""

    node: ast.If
    constants: tuple[ast.Constant, ...]
    form: str
    #: lowering platforms the region is narrowed to
    platforms: frozenset[str]
    #: for a guard around a call of the function that holds the library call (one
    #: level up, same file): that call's name and span
    via: tuple[str, int, int] | None = None


def _lowerings(names: Iterable[str]) -> frozenset[str]:
    out: set[str] = set()
    for name in names:
        out |= LOWERINGS_OF_NAME.get(name, frozenset())
    return frozenset(out)


def _block_holding(src: SourceFile, stmt: ast.stmt) -> list[ast.stmt] | None:
    parent = src.parents.get(stmt)
    for name in ("body", "orelse", "finalbody"):
        block = getattr(parent, name, None)
        if isinstance(block, list) and stmt in block:
            return block
    return None


def enclosing_guards(src: SourceFile, call: ast.Call) -> list[EnclosingGuard]:
    """The platform guards (innermost first) whose decided region holds the call: an
    ``if``/``elif`` it sits in, or an early exit before it in an enclosing block."""
    out: list[EnclosingGuard] = []
    stmt = _statement_of(src, call)
    while stmt is not None:
        candidates: list[ast.If] = []
        block = _block_holding(src, stmt)
        if block is not None:
            candidates += [s for s in reversed(block[: block.index(stmt)]) if isinstance(s, ast.If)]
        parent = src.parents.get(stmt)
        if isinstance(parent, ast.If):
            candidates.append(parent)
        for node in candidates:
            for compare, how in guard_compares(node.test):
                region = decided_region(src, node, compare, how)
                if region is not None and stmt in region[0]:
                    named = [str(c.value) for c in compare.constants]
                    out.append(
                        EnclosingGuard(
                            node, tuple(compare.constants), compare.form, _lowerings(named)
                        )
                    )
        if isinstance(parent, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Module)):
            break
        stmt = parent if isinstance(parent, ast.stmt) else None
    return out


def caller_guards(src: SourceFile, call: ast.Call) -> list[list[EnclosingGuard]]:
    """Guards one call level up: for each call, in the same file, of the outermost
    function (or method) that holds the library call (``name(...)``, or
    ``self.name(...)`` for a method), the guards whose decided region holds it."""
    holder: ast.AST | None = None
    cur: ast.AST | None = src.parents.get(call)
    while cur is not None:
        if isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
            holder = cur
        cur = src.parents.get(cur)
    if not isinstance(holder, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    is_method = isinstance(src.parents.get(holder), ast.ClassDef)
    inside = {id(n) for n in ast.walk(holder)}
    out: list[list[EnclosingGuard]] = []
    for node in ast.walk(src.tree):
        if not isinstance(node, ast.Call) or id(node) in inside:
            continue
        func = node.func
        if is_method:
            named = (
                isinstance(func, ast.Attribute)
                and func.attr == holder.name
                and isinstance(func.value, ast.Name)
                and func.value.id in ("self", "cls")
            )
        else:
            named = isinstance(func, ast.Name) and func.id == holder.name
        if not named:
            continue
        lo, hi = call_span(src, node)
        out.append(
            [
                EnclosingGuard(g.node, g.constants, g.form, g.platforms, (holder.name, lo, hi))
                for g in enclosing_guards(src, node)
            ]
        )
    return out


# --------------------------------------------------------------------------- mutants


@dataclass
class LibraryMutant:
    """One library call put on another platform's path."""

    form: str  # guard | swap | config
    call: LibraryCall
    #: the platform name the mutant runs the call on ("gpu", "tpu", "cuda", ...)
    platform: str
    detail: str
    edits: list[TextEdit] = field(default_factory=list)
    #: append ``import jax as _tp_jax`` to the mutated file (guard form)
    append_import: bool = False
    #: the module configured for ``platform`` (config form)
    override: str | None = None
    #: a real bug: the callee cannot lower for ``platform`` and runs there
    real_bug: bool = True
    #: why it is not a real bug
    why_not: str | None = None
    #: more lines of the call's file where a new error counts (a swap mutant of a guard
    #: around a call of the function holding the library call: that call)
    extra_spans: tuple[tuple[int, int], ...] = ()
    #: the lowering platforms the mutant runs the call on
    runs_on: frozenset[str] = frozenset()

    @property
    def id(self) -> str:
        return f"{self.form}:{self.call.key}:{self.platform}:{self.detail}"

    @property
    def files(self) -> set[str]:
        return {e.relpath for e in self.edits} | {self.call.relpath}


@dataclass(frozen=True)
class NotMutated:
    call: LibraryCall
    form: str
    reason: str


def _jax_alias(src: SourceFile) -> str | None:
    """The module-level name bound to ``jax`` by an ``import jax [as x]``, if any."""
    if not isinstance(src.tree, ast.Module):
        return None
    for stmt in src.tree.body:
        if isinstance(stmt, ast.Import):
            for alias in stmt.names:
                if alias.name == "jax":
                    return alias.asname or "jax"
    return None


def _other_platform(platforms: frozenset[str]) -> str | None:
    """The guard name of a platform the callee cannot lower for, or None if it lowers
    for both platforms."""
    if not platforms & LOWERINGS_OF_NAME["gpu"]:
        return "gpu"
    if "tpu" not in platforms:
        return "tpu"
    return None


def _verdict(
    call: LibraryCall,
    runs_on: frozenset[str],
    guards: Sequence[EnclosingGuard],
    callers: Sequence[Sequence[EnclosingGuard]] = (),
) -> tuple[bool, str | None]:
    """Whether a mutant that runs the call on ``runs_on`` is a real bug: the callee
    cannot lower there, interpret mode is off, and neither a guard around the call nor
    guards around every same-file call of the function holding it (``callers``) keep
    the call on its own platform."""
    if runs_on & call.platforms:
        return False, f"{call.callee} lowers for {', '.join(sorted(runs_on & call.platforms))}"
    if not call.interpret_off:
        return False, f"interpret mode at the call is {call.interpret}"
    for guard in guards:
        if not guard.platforms & runs_on:
            return False, (
                f"under the guard at line {guard.node.lineno}, which keeps it on "
                f"{', '.join(sorted(guard.platforms))}: that path never runs there"
            )
    keeping = [next((g for g in gs if not g.platforms & runs_on), None) for gs in callers]
    if callers and all(g is not None for g in keeping):
        lines = ", ".join(sorted({str(g.node.lineno) for g in keeping if g is not None}))
        return False, (
            f"reached only under the guards at line {lines}, which keep it on its own "
            "platform: that path never runs there"
        )
    return True, None


def plan_library_mutants(
    root: Path, calls: Sequence[LibraryCall]
) -> tuple[list[LibraryMutant], list[NotMutated]]:
    """The guard, swap and config mutants of each call, and the calls a form skips."""
    tracer = Tracer(root, {})
    mutants: list[LibraryMutant] = []
    skipped: list[NotMutated] = []
    for call in calls:
        src = tracer.file(call.relpath)
        node = None if src is None else _call_node(src, call)
        if src is None or node is None:
            skipped += [NotMutated(call, form, "call not found again") for form in FORMS]
            continue
        other = _other_platform(call.platforms)
        if other is None:
            skipped += [
                NotMutated(call, form, "callee lowers for every platform") for form in FORMS
            ]
            continue
        guards = enclosing_guards(src, node)
        callers = caller_guards(src, node)
        runs_on = LOWERINGS_OF_NAME[other]
        # guard: an if in front of the statement, on its own first line
        stmt = _statement_of(src, node)
        line_text = src.data.split(b"\n")[stmt.lineno - 1] if stmt is not None else b""
        if stmt is None or not isinstance(stmt, SIMPLE_STATEMENTS):
            skipped.append(NotMutated(call, "guard", "call outside a simple statement"))
        elif line_text[: stmt.col_offset].strip():
            skipped.append(NotMutated(call, "guard", "statement does not start its line"))
        else:
            alias = _jax_alias(src)
            guard_text = f'if {alias or GUARD_ALIAS}.default_backend() == "{other}": '
            edit = TextEdit(call.relpath, stmt.lineno, stmt.col_offset, stmt.col_offset, guard_text)
            real, why = _verdict(call, runs_on, guards, callers)
            mutants.append(
                LibraryMutant(
                    "guard",
                    call,
                    other,
                    f"{guard_text.strip()} {call.callee.rsplit('.', 1)[-1]}(...)",
                    [edit],
                    append_import=alias is None,
                    real_bug=real,
                    why_not=why,
                    runs_on=runs_on,
                )
            )
        # swap: the string of each guard that decides the call, here or one call up
        up = [g for gs in callers for g in gs]
        if not guards and not up:
            skipped.append(NotMutated(call, "swap", "no platform guard decides the call"))
        for guard in [*guards, *up]:
            edits = [_swap_literal(src, c) for c in guard.constants]
            if any(e is None for e in edits):
                skipped.append(NotMutated(call, "swap", "platform string spans lines"))
                continue
            swapped = [SWAP[str(c.value)] for c in guard.constants]
            others = [g for g in guards if g is not guard]
            real, why = _verdict(call, _lowerings(swapped), others)
            before = " ".join(repr(c.value) for c in guard.constants)
            through = f" (around {guard.via[0]}() at line {guard.via[1]})" if guard.via else ""
            mutants.append(
                LibraryMutant(
                    "swap",
                    call,
                    "/".join(swapped),
                    f"{guard.form} guard at line {guard.node.lineno}{through}: {before} -> "
                    + " ".join(repr(s) for s in swapped),
                    [e for e in edits if e is not None],
                    real_bug=real,
                    why_not=why,
                    extra_spans=((guard.via[1], guard.via[2]),) if guard.via else (),
                    runs_on=_lowerings(swapped),
                )
            )
        # config: the call's module configured for the other platform
        real, why = _verdict(call, runs_on, guards, callers)
        mutants.append(
            LibraryMutant(
                "config",
                call,
                other,
                f'module {call.module} configured platforms = ["{other}"]',
                override=call.module,
                real_bug=real,
                why_not=why,
                runs_on=runs_on,
            )
        )
    return mutants, skipped


def _call_node(src: SourceFile, call: LibraryCall) -> ast.Call | None:
    return next(
        (n for n in src.calls_on_line(call.line) if n.col_offset == call.col),
        None,
    )


def _swap_literal(src: SourceFile, constant: ast.Constant) -> TextEdit | None:
    """The platform string literal replaced by its swap, same quotes, same line."""
    if constant.lineno != constant.end_lineno:
        return None
    raw = src.data.split(b"\n")[constant.lineno - 1][
        constant.col_offset : constant.end_col_offset
    ].decode()
    if len(raw) < 2 or raw[0] not in "'\"" or raw[-1] != raw[0]:
        return None
    return TextEdit(
        src.relpath,
        constant.lineno,
        constant.col_offset,
        constant.end_col_offset or 0,
        f"{raw[0]}{SWAP[str(constant.value)]}{raw[0]}",
    )


# --------------------------------------------------------------------------- writing


def write_library_mutant(root: Path, mutant: LibraryMutant, dest: Path) -> dict[str, Path]:
    """Write the files a guard or swap mutant changes under ``dest``: relpath -> copy.
    Every original line stays where it was (the guard's import goes after the last)."""
    out: dict[str, Path] = {}
    by_file: dict[str, list[TextEdit]] = {}
    for edit in mutant.edits:
        by_file.setdefault(edit.relpath, []).append(edit)
    for rel, edits in by_file.items():
        data = (root / rel).read_bytes()
        new = apply_text_edits(data, edits)
        lines = data.count(b"\n")
        if mutant.append_import and rel == mutant.call.relpath:
            if not new.endswith(b"\n"):
                new += b"\n"
                lines += 1
            new += f"import jax as {GUARD_ALIAS}\n".encode()
            lines += 1
        ast.parse(new)  # a mutant stays valid Python
        assert new.count(b"\n") == lines, "mutation moved lines"
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(new)
        out[rel] = path
    return out


def config_text(overrides: Iterable[tuple[str, str]]) -> str:
    """A ``pyproject.toml`` whose overrides configure each module for one platform."""
    lines = ["[tool.typed-pallas]", ""]
    for module, platform in sorted(overrides):
        lines += [
            "[[tool.typed-pallas.overrides]]",
            f'module = ["{module}"]',
            f'platforms = ["{platform}"]',
            "",
        ]
    return "\n".join(lines)


def schedule_library(mutants: Sequence[LibraryMutant]) -> Iterator[list[LibraryMutant]]:
    """Rounds for one checker run each: guard and swap mutants touching disjoint files;
    then config mutants, each module configured for one platform per round (the
    mutants of one module and platform share it)."""
    yield from schedule([m for m in mutants if m.form != "config"])
    pending = [m for m in mutants if m.form == "config"]
    while pending:
        chosen: dict[str, str] = {}
        batch: list[LibraryMutant] = []
        rest: list[LibraryMutant] = []
        for m in pending:
            assert m.override is not None
            if chosen.setdefault(m.override, m.platform) == m.platform:
                batch.append(m)
            else:
                rest.append(m)
        yield batch
        pending = rest


# --------------------------------------------------------------------------- scoring


@dataclass
class LibraryResult:
    mutant: LibraryMutant
    caught: bool = False
    messages: list[str] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)
    crashed: bool = False
    #: the callee's platform proven by lowering to exclude ``runs_on`` (True), proven
    #: not to (False), or not lowered (None)
    proven: bool | None = None


def judge(
    mutant: LibraryMutant, new_errors: Iterable[tuple[str, int, str]], crashed: bool = False
) -> LibraryResult:
    """Caught when a new ``pallas-platform`` error (relpath, line, message) is in the
    call's span; new errors elsewhere in the mutated file are kept for the record."""
    result = LibraryResult(mutant, crashed=crashed)
    spans = [mutant.call.span, *mutant.extra_spans]
    for relpath, line, message in new_errors:
        if relpath == mutant.call.relpath and any(lo <= line <= hi for lo, hi in spans):
            result.caught = True
            result.messages.append(f"{relpath}:{line}: {message}")
        elif relpath in mutant.files:
            result.elsewhere.append(f"{relpath}:{line}: {message}")
    return result


def prove(results: Iterable[LibraryResult], lowers_for: Mapping[str, Iterable[str]]) -> None:
    """Set ``proven`` from lowering outcomes: callee -> the platforms it lowered for
    (``eval.library_proofs``: its own platform, and only that, lowered)."""
    for r in results:
        lowered = lowers_for.get(r.mutant.call.callee)
        r.proven = None if lowered is None else not (set(lowered) & r.mutant.runs_on)


def score(
    results: Sequence[LibraryResult], require_proof: bool = True
) -> dict[str, dict[str, dict[str, int]]]:
    """Real bugs only (with ``require_proof``, only those whose callee's platform was
    proven by lowering): caught/mutants per form x library, with "all" rows and columns."""
    table: dict[str, dict[str, dict[str, int]]] = {}
    for r in results:
        if not r.mutant.real_bug or (require_proof and r.proven is not True):
            continue
        for form in (r.mutant.form, "all"):
            for library in (r.mutant.call.library, "all"):
                cell = table.setdefault(form, {}).setdefault(library, {"caught": 0, "mutants": 0})
                cell["mutants"] += 1
                cell["caught"] += int(r.caught)
    return table
