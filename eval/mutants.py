"""Corpus call sites and their wrong-platform mutants, found with the stdlib ``ast``.

What it does: reads the survey table (``corpus-sites.tsv``), finds each call site's
call expression in the installed source, follows its ``compiler_params=`` argument
back to the ``X.CompilerParams(...)`` constructions that reach it (inline, a local
variable, a conditional expression, or a factory function in the same package), and
writes mutants that swap those constructions for another backend's argument-free
constructor::

    compiler_params=pltpu.CompilerParams(dimension_semantics=...)
    ->  compiler_params=_tp_mut.CompilerParams(
        )
    ...
    import jax.experimental.pallas.triton as _tp_mut      # appended at the very end

Line numbers never move: a construction spanning n lines is replaced by a call that
spans the same n lines, and the import goes after the last line.

What it does not do: run any checker, import jax, or decide whether a mutant was
caught (``eval.corpus`` does).
"""

from __future__ import annotations

import ast
import csv
import os
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol, TypeVar

#: backend name -> public module that exports its CompilerParams (see typed_pallas._platforms)
BACKEND_MODULES: dict[str, str] = {
    "tpu": "jax.experimental.pallas.tpu",
    "triton": "jax.experimental.pallas.triton",
    "mosaic_gpu": "jax.experimental.pallas.mosaic_gpu",
}
#: registry platform of each backend (JAX's error text names platforms)
PLATFORM_OF: dict[str, str] = {"tpu": "tpu", "triton": "gpu", "mosaic_gpu": "gpu"}

MUT_ALIAS = "_tp_mut"
CTOR_NAMES = frozenset(
    {
        "CompilerParams",
        "TPUCompilerParams",
        "TritonCompilerParams",
        "GPUCompilerParams",
        "MosaicGPUCompilerParams",
    }
)
ENTRY_NAMES = frozenset({"pallas_call", "kernel", "core_map"})
SITES_TSV = Path(__file__).with_name("corpus-sites.tsv")


@dataclass(frozen=True)
class Site:
    """One call site of the survey (a row with site_kind=call outside jax/_src)."""

    package: str
    version: str
    relpath: str
    line: int
    entry_point: str
    params_class: str
    passing_pattern: str
    platform: str
    body_prims: str
    arg_prims: str
    interpret_kw: str
    enclosing_func: str
    scope: str

    @property
    def key(self) -> str:
        return f"{self.relpath}:{self.line}"

    @property
    def evidence_kind(self) -> str:
        """'body' (platform primitives in the kernel body), 'args' (only in the call's
        arguments, e.g. PrefetchScalarGridSpec, which is not always proof) or 'none'."""
        if self.body_prims != "-":
            return "body"
        return "args" if self.arg_prims != "-" else "none"

    @property
    def has_evidence(self) -> bool:
        """Body or call-argument evidence of the platform (survey columns)."""
        return self.body_prims != "-" or self.arg_prims != "-"

    @property
    def known_class(self) -> str | None:
        """The params backend when the survey knows it for sure, else None."""
        pc = self.params_class
        if any(w in pc for w in ("param", "getattr", "replace", "dict", "absent", "attr:")):
            return None
        found = {
            b
            for b in BACKEND_MODULES
            if b in pc.replace("(", " ").replace(")", " ").replace("|", " ").split()
        }
        return found.pop() if len(found) == 1 else None


def load_sites(path: Path = SITES_TSV) -> list[Site]:
    """The 371 call sites (jax-internal rows and stand-alone constructions left out)."""
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f, delimiter="\t"))
    return [
        Site(
            package=r["package"],
            version=r["version"],
            relpath=r["relpath"],
            line=int(r["line"]),
            entry_point=r["entry_point"],
            params_class=r["params_class"],
            passing_pattern=r["passing_pattern"],
            platform=r["platform"],
            body_prims=r["body_platform_prims"],
            arg_prims=r["arg_platform_prims"],
            interpret_kw=r["interpret_kw"],
            enclosing_func=r["enclosing_func"],
            scope=r["scope"],
        )
        for r in rows
        if r["site_kind"] == "call" and r["scope"] != "jax-internal"
    ]


# --------------------------------------------------------------------------- source model


class SourceFile:
    """A parsed file: its text as byte lines, its tree, parent links, and module name."""

    def __init__(self, root: Path, relpath: str) -> None:
        self.root = root
        self.relpath = relpath
        self.path = root / relpath
        self.data = self.path.read_bytes()
        self.tree = ast.parse(self.data, filename=str(self.path))
        self.parents: dict[ast.AST, ast.AST] = {}
        for node in ast.walk(self.tree):
            for child in ast.iter_child_nodes(node):
                self.parents[child] = node
        parts = relpath[:-3].split("/")
        if parts[-1] == "__init__":
            parts = parts[:-1]
        self.module = ".".join(parts)
        self.is_package = relpath.endswith("__init__.py")

    def calls_on_line(self, line: int) -> list[ast.Call]:
        return [n for n in ast.walk(self.tree) if isinstance(n, ast.Call) and n.lineno == line]

    def enclosing_function(self, line: int) -> ast.FunctionDef | ast.AsyncFunctionDef | None:
        """Innermost function whose *body* holds ``line`` (decorators and defaults excluded)."""
        best: ast.FunctionDef | ast.AsyncFunctionDef | None = None
        for n in ast.walk(self.tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)) and n.body:
                if n.body[0].lineno <= line <= (n.end_lineno or n.lineno):
                    if best is None or n.body[0].lineno >= best.body[0].lineno:
                        best = n
        return best

    def scope_of(self, node: ast.AST) -> ast.AST:
        """The innermost function (or the module) that holds ``node``."""
        cur = self.parents.get(node)
        while cur is not None and not isinstance(cur, (ast.FunctionDef, ast.AsyncFunctionDef)):
            cur = self.parents.get(cur)
        return cur if cur is not None else self.tree


def is_annotated(fn: ast.FunctionDef | ast.AsyncFunctionDef | None) -> bool:
    """mypy checks a body by default only when the function has some annotation."""
    if fn is None:
        return True  # module level is always checked
    a = fn.args
    args = [
        *a.posonlyargs,
        *a.args,
        *a.kwonlyargs,
        *([a.vararg] if a.vararg else []),
        *([a.kwarg] if a.kwarg else []),
    ]
    return fn.returns is not None or any(x.annotation is not None for x in args)


def _callee_name(call: ast.Call) -> str | None:
    f = call.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return None


def _is_ctor(node: ast.AST) -> bool:
    return isinstance(node, ast.Call) and _callee_name(node) in CTOR_NAMES


def find_call(src: SourceFile, site: Site) -> ast.Call | None:
    """The call expression of a site: the call on its line that takes ``compiler_params``,
    else the innermost call of an entry point (or wrapper) on that line."""
    calls = src.calls_on_line(site.line)
    with_kw = [c for c in calls if any(k.arg == "compiler_params" for k in c.keywords)]
    if with_kw:
        return min(with_kw, key=lambda c: (c.end_lineno or 0) - c.lineno)
    named = [c for c in calls if _callee_name(c) in ENTRY_NAMES]
    if named:
        return min(named, key=lambda c: (c.end_lineno or 0) - c.lineno)
    return calls[0] if calls else None


# --------------------------------------------------------------------------- tracing constructions


@dataclass
class Edit:
    """Replace one constructor call in one file."""

    relpath: str
    lineno: int
    col: int
    end_lineno: int
    end_col: int


@dataclass
class Trace:
    edits: list[Edit] = field(default_factory=list)
    how: set[str] = field(default_factory=set)
    problem: str | None = None


class Tracer:
    """Follows an expression back to the constructions that reach it (depth-limited)."""

    def __init__(self, root: Path, files: dict[str, SourceFile]) -> None:
        self.root = root
        self.files = files

    def file(self, relpath: str) -> SourceFile | None:
        if relpath not in self.files:
            try:
                self.files[relpath] = SourceFile(self.root, relpath)
            except (OSError, SyntaxError):
                return None
        return self.files[relpath]

    def trace(self, src: SourceFile, expr: ast.AST, out: Trace, depth: int = 0) -> None:
        if depth > 4:
            out.problem = "trace too deep"
            return
        if _is_ctor(expr):
            assert isinstance(expr, ast.Call)
            out.how.add("ctor")
            out.edits.append(
                Edit(
                    src.relpath,
                    expr.lineno,
                    expr.col_offset,
                    expr.end_lineno or expr.lineno,
                    expr.end_col_offset or 0,
                )
            )
        elif isinstance(expr, ast.IfExp):
            out.how.add("conditional")
            for branch in (expr.body, expr.orelse):
                if not (isinstance(branch, ast.Constant) and branch.value is None):
                    self.trace(src, branch, out, depth + 1)
        elif isinstance(expr, ast.Name):
            self._trace_name(src, expr, out, depth)
        elif isinstance(expr, ast.Call) and not expr.args and not expr.keywords:
            self._trace_factory(src, expr, out, depth)
        else:
            out.problem = f"unsupported expression {type(expr).__name__}"

    def _trace_name(self, src: SourceFile, name: ast.Name, out: Trace, depth: int) -> None:
        scope = src.scope_of(name)
        values: list[ast.AST] = []
        for n in ast.walk(scope):
            if src.scope_of(n) is not scope and n is not scope:
                continue
            value: ast.expr | None = None
            if (
                isinstance(n, ast.Assign)
                and any(isinstance(t, ast.Name) and t.id == name.id for t in n.targets)
            ) or (
                isinstance(n, ast.AnnAssign)
                and isinstance(n.target, ast.Name)
                and n.target.id == name.id
            ):
                value = n.value
            if value is not None:
                values.append(value)
        if not values:
            out.problem = f"no assignment to {name.id}"
            return
        out.how.add("local-var")
        for v in values:
            if not (isinstance(v, ast.Constant) and v.value is None):
                self.trace(src, v, out, depth + 1)

    def _trace_factory(self, src: SourceFile, call: ast.Call, out: Trace, depth: int) -> None:
        target = self._resolve_function(src, call.func)
        if target is None:
            out.problem = "factory not found"
            return
        fsrc, fdef = target
        out.how.add("factory")
        rets = [
            n.value for n in ast.walk(fdef) if isinstance(n, ast.Return) and n.value is not None
        ]
        if not rets:
            out.problem = "factory has no return"
        for r in rets:
            if not (isinstance(r, ast.Constant) and r.value is None):
                self.trace(fsrc, r, out, depth + 1)

    def _resolve_function(
        self, src: SourceFile, func: ast.AST
    ) -> tuple[SourceFile, ast.FunctionDef] | None:
        if isinstance(func, ast.Name):
            for n in ast.walk(src.tree):
                if isinstance(n, ast.FunctionDef) and n.name == func.id:
                    return src, n
            imported = self._imported_from(src, func.id)
            if imported is not None:
                other = self._module_file(imported[0])
                if other is not None:
                    return self._resolve_function(other, ast.Name(id=imported[1]))
        elif isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
            module = self._module_alias(src, func.value.id)
            if module is not None:
                other = self._module_file(module)
                if other is not None:
                    return self._resolve_function(other, ast.Name(id=func.attr))
        return None

    def _absolute(self, src: SourceFile, node: ast.ImportFrom) -> str:
        if not node.level:
            return node.module or ""
        base = src.module.split(".")
        if not src.is_package:
            base = base[:-1]
        base = base[: len(base) - (node.level - 1)] if node.level > 1 else base
        return ".".join([*base, *([node.module] if node.module else [])])

    def _imported_from(self, src: SourceFile, name: str) -> tuple[str, str] | None:
        for n in ast.walk(src.tree):
            if isinstance(n, ast.ImportFrom):
                for a in n.names:
                    if (a.asname or a.name) == name:
                        return self._absolute(src, n), a.name
        return None

    def _module_alias(self, src: SourceFile, name: str) -> str | None:
        for n in ast.walk(src.tree):
            if isinstance(n, ast.Import):
                for a in n.names:
                    if a.asname == name:
                        return a.name
            elif isinstance(n, ast.ImportFrom):
                for a in n.names:
                    if (a.asname or a.name) == name:
                        return f"{self._absolute(src, n)}.{a.name}"
        return None

    def _module_file(self, module: str) -> SourceFile | None:
        rel = module.replace(".", "/")
        for cand in (f"{rel}.py", f"{rel}/__init__.py"):
            if (self.root / cand).is_file():
                return self.file(cand)
        return None


# --------------------------------------------------------------------------- mutants


@dataclass
class Mutant:
    """One site with its constructions swapped for ``to_backend``'s."""

    site: Site
    from_backend: str
    to_backend: str
    edits: list[Edit]
    call_span: tuple[int, int]
    typed: bool  # enclosing function annotated: checked by mypy's default flags
    how: str
    #: what the call itself carries that may keep a careful checker silent:
    #: "**kwargs" (could hold interpret=True), "interpret" (interpret= not literally False)
    call_flags: tuple[str, ...] = ()

    @property
    def kind(self) -> str:
        """'platform' when tpu<->gpu (JAX's ValueError), 'backend' for triton<->mosaic_gpu."""
        same = PLATFORM_OF[self.from_backend] == PLATFORM_OF[self.to_backend]
        return "backend" if same else "platform"

    @property
    def files(self) -> set[str]:
        return {e.relpath for e in self.edits} | {self.site.relpath}

    @property
    def id(self) -> str:
        return f"{self.site.key}:{self.from_backend}->{self.to_backend}"


@dataclass
class Unmutable:
    site: Site
    reason: str


def plan_mutants(
    root: Path, sites: Iterable[Site]
) -> tuple[list[Mutant], list[Unmutable], dict[str, bool]]:
    """Mutants for every site with a known params class; the rest, with the reason.

    Also returns, for every site, whether mypy's default flags check its body
    (its innermost enclosing function has an annotation)."""
    files: dict[str, SourceFile] = {}
    tracer = Tracer(root, files)
    mutants: list[Mutant] = []
    skipped: list[Unmutable] = []
    typed_of: dict[str, bool] = {}
    for site in sites:
        src = tracer.file(site.relpath)
        if src is None:
            skipped.append(Unmutable(site, "file missing or unparsable"))
            continue
        typed = is_annotated(src.enclosing_function(site.line))
        typed_of[site.key] = typed
        frm = site.known_class
        if frm is None:
            skipped.append(Unmutable(site, f"params class not known ({site.params_class})"))
            continue
        call = find_call(src, site)
        if call is None:
            skipped.append(Unmutable(site, "call not found on its line"))
            continue
        kw = next((k for k in call.keywords if k.arg == "compiler_params"), None)
        if kw is None:
            skipped.append(Unmutable(site, "no compiler_params keyword"))
            continue
        tr = Trace()
        tracer.trace(src, kw.value, tr)
        if not tr.edits:
            skipped.append(Unmutable(site, tr.problem or "no construction found"))
            continue
        span = (call.lineno, call.end_lineno or call.lineno)
        flags = tuple(
            f
            for f, present in (
                ("**kwargs", any(k.arg is None for k in call.keywords)),
                (
                    "interpret",
                    any(
                        k.arg == "interpret"
                        and not (isinstance(k.value, ast.Constant) and not k.value.value)
                        for k in call.keywords
                    ),
                ),
            )
            if present
        )
        for to in BACKEND_MODULES:
            if to != frm:
                mutants.append(
                    Mutant(
                        site, frm, to, list(tr.edits), span, typed, "+".join(sorted(tr.how)), flags
                    )
                )
    return mutants, skipped, typed_of


def discover_sites(root: Path, relpath: str, package: str = "-", version: str = "-") -> list[Site]:
    """Call sites found in a file without the survey table: every call that passes
    ``compiler_params=`` a construction (inline, local variable, factory) whose class is
    one backend's, read off the import alias of the constructor (``pltpu.CompilerParams``).
    The evidence columns are unknown here and left as '-'."""
    tracer = Tracer(root, {})
    src = tracer.file(relpath)
    if src is None:
        return []
    backend_of_module = {m: b for b, m in BACKEND_MODULES.items()}
    out: list[Site] = []
    for call in ast.walk(src.tree):
        if not isinstance(call, ast.Call):
            continue
        kw = next((k for k in call.keywords if k.arg == "compiler_params"), None)
        if kw is None or _is_ctor(call):
            continue
        tr = Trace()
        tracer.trace(src, kw.value, tr)
        backends = set()
        for e in tr.edits:
            esrc = tracer.file(e.relpath)
            ctor = (
                next(
                    (
                        n
                        for n in esrc.calls_on_line(e.lineno)
                        if _is_ctor(n) and n.col_offset == e.col
                    ),
                    None,
                )
                if esrc
                else None
            )
            f = ctor.func if ctor is not None else None
            mod = (
                tracer._module_alias(esrc, f.value.id)
                if esrc is not None
                and isinstance(f, ast.Attribute)
                and isinstance(f.value, ast.Name)
                else None
            )
            backends.add(backend_of_module.get(mod or ""))
        if len(backends) != 1:
            continue
        (backend,) = backends
        if backend is None:
            continue
        out.append(
            Site(
                package,
                version,
                relpath,
                call.lineno,
                _callee_name(call) or "?",
                backend,
                "discovered",
                "-",
                "-",
                "-",
                "-",
                "-",
                "lib",
            )
        )
    return out


def apply_edits(data: bytes, edits: Iterable[Edit], to_backend: str) -> bytes:
    """The mutated file text: same line count for the original lines, one import appended."""
    lines = data.split(b"\n")
    repl = f"{MUT_ALIAS}.CompilerParams(".encode()
    for e in sorted(edits, key=lambda e: (e.lineno, e.col), reverse=True):
        first, last = lines[e.lineno - 1], lines[e.end_lineno - 1]
        new = first[: e.col] + repl + b"\n" * (e.end_lineno - e.lineno) + b")" + last[e.end_col :]
        lines[e.lineno - 1 : e.end_lineno] = new.split(b"\n")
    out = b"\n".join(lines)
    if not out.endswith(b"\n"):
        out += b"\n"
    return out + f"import {BACKEND_MODULES[to_backend]} as {MUT_ALIAS}\n".encode()


def write_mutant(root: Path, mutant: Mutant, dest: Path) -> dict[str, Path]:
    """Write the mutated files under ``dest``; returns relpath -> shadow path."""
    out: dict[str, Path] = {}
    by_file: dict[str, list[Edit]] = {}
    for e in mutant.edits:
        by_file.setdefault(e.relpath, []).append(e)
    for rel, edits in by_file.items():
        data = (root / rel).read_bytes()
        new = apply_edits(data, edits, mutant.to_backend)
        ast.parse(new)  # a mutant must stay valid Python
        n_old = data.rstrip(b"\n").count(b"\n")
        assert new.count(b"\n") >= n_old + 1, "mutation moved lines"
        path = dest / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(new)
        out[rel] = path
    return out


class _TouchesFiles(Protocol):
    @property
    def files(self) -> frozenset[str] | set[str]: ...


_M = TypeVar("_M", bound=_TouchesFiles)


def schedule(mutants: list[_M]) -> Iterator[list[_M]]:
    """Rounds of mutants that touch disjoint files, so one checker run can take a round
    (any mutant kind with a ``files`` set: params swaps, dispatch-site mutants)."""
    pending = list(mutants)
    while pending:
        used: set[str] = set()
        batch: list[_M] = []
        rest: list[_M] = []
        for m in pending:
            if m.files & used:
                rest.append(m)
            else:
                batch.append(m)
                used |= m.files
        yield batch
        pending = rest


def package_files(root: Path, package: str, site_files: Iterable[str]) -> list[str]:
    """Files to check: every file that imports Pallas, plus every file with a site.

    For jax itself, only ``jax/experimental/pallas/ops`` (the survey's scope)."""
    found: set[str] = set(site_files)
    base = root / "jax/experimental/pallas/ops" if package == "jax" else root
    for dirpath, dirnames, filenames in os.walk(base):
        dirnames[:] = [d for d in dirnames if d != "__pycache__" and not d.endswith(".dist-info")]
        for fn in filenames:
            if not fn.endswith(".py"):
                continue
            p = Path(dirpath) / fn
            rel = p.relative_to(root).as_posix()
            if package == "jax":
                found.add(rel)
                continue
            try:
                text = p.read_text(errors="replace")
            except OSError:
                continue
            if "jax.experimental.pallas" in text or "jax.experimental import pallas" in text:
                found.add(rel)
    return sorted(found)
