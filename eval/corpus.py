"""Evaluate the typed-pallas mypy plugin on real Pallas code from PyPI.

Usage (from the repository root, with a venv that has typed-pallas and mypy)::

    .venv312/bin/python -m eval.corpus                 # all 19 packages
    .venv312/bin/python -m eval.corpus -p jax -p tokamax --json out.json
    .venv312/bin/python -m eval.corpus --only-library-calls --checkout jax-tests=../jax

What it does, per package of the survey (``eval/corpus-sites.tsv``, pinned versions):

1. installs it with ``pip install --no-deps --target`` into a cache directory outside
   the repository (``--cache-dir``, default ``~/.cache/typed-pallas-eval``); jax's own
   ops are read from the checking venv's jax, which must be the surveyed version;
2. runs mypy + plugin with the preset of ``typed-pallas check`` (no typed-pallas
   configuration; ``check_untyped_defs`` unless ``--default-flags``) over every file
   that imports Pallas, cold cache, and lists every
   ``pallas-platform`` error on the unmodified code (false positives unless explained)
   and every crash;
3. for every call site whose params class the survey knows, mutants that swap the
   construction for each other backend's (``eval.mutants``), checked in rounds (one
   mypy run per round, warm cache, mutated files passed with ``--shadow-file``; a round
   never holds two mutants that touch the same file), and counts a mutant as caught when
   a new ``pallas-platform`` error falls inside its call expression's lines;
4. mutants at the package's dispatch sites (``eval.dispatch_mutants``: a guard's
   platform string, a device object's, a guard helper's, a platform predicate's, a
   registration's platform member, a platform table's keys, a ``platform_dependent``
   branch), checked the same way over the files that import Pallas plus the files that
   hold those sites (a second, cold cache: its unmodified run is part of the
   false-positive count), caught when a new ``pallas-platform`` error falls in the
   guard statement and the region it decides (or the predicate and its class, the
   registration, the table and its use, or the call), and scored only when the mutant
   is a real bug (``DispatchMutant.not_a_bug``). A package with a registry in
   ``REGISTRIES`` (ejkernel) runs with it configured (``TYPED_PALLAS_CONFIG``). Calls
   of package wrappers that forward ``compiler_params`` are scored from step 3's params
   swaps at those sites. ``--no-dispatch`` skips step 4;
5. library calls (``eval.library_mutants``): every call, in the package, of a function
   of jax's ``pallas.ops`` or of another corpus package that carries a platform
   requirement (asked of ``Inference``, the reader the plugin uses), mutated three
   ways (an inserted ``jax.default_backend()`` guard on the call's line, the swapped
   string of a guard that decides it, its module configured for the other platform
   through ``TYPED_PALLAS_CONFIG``), checked like step 4 in a third cold cache whose
   unmodified run lists every ``pallas-platform`` error ("findings"). A mutant counts
   in the score when it is a real bug: the callee cannot lower there (its platform
   proven by ``eval.library_proofs``' lowering), interpret mode is off at the call, and
   no guard keeps the path on the callee's platform. ``--checkout NAME=PATH`` adds the
   sources of ``library-sources.tsv`` that are not on PyPI (jax's own tests, maxdiffusion,
   simply, ...); ``--only-library-calls`` runs this step alone, ``--no-library-calls``
   skips it.

Libraries next to a package: the corpus packages a package imports (tokamax, qwix and
tpu-inference for maxtext) are installed with ``pip install --no-deps --target`` into
``<cache>/libs/<package>/site-packages`` with the checking venv's ``jax`` linked in
(a venv holds them next to jax), and that folder is on mypy's PYTHONPATH in every step
(``--no-libraries``: each package alone, as before).

Scores are split by evidence (the survey's body/argument platform primitives), by
swap kind (platform tpu<->gpu, or backend triton<->mosaic_gpu), and by what mypy's
default flags would show (bodies of unannotated functions are not checked then, so a
site there is never reported; this is derived, not a second run).

What it does not do: configure the plugin outside step 5's config mutants, run anything
on an accelerator, or judge whether an error on unmodified code is a real bug (it lists
them).
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import csv
import json
import os
import platform as _platform
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from eval.dispatch_mutants import (
    REGISTRIES,
    DispatchMutant,
    plan_dispatch,
    schedule_dispatch,
    write_dispatch_mutant,
)
from eval.library_mutants import (
    LibraryCall,
    LibraryMutant,
    LibraryResult,
    NotMutated,
    config_text,
    find_library_calls,
    judge,
    plan_library_mutants,
    schedule_library,
    source_files,
    top_level_modules,
    write_library_mutant,
)
from eval.library_mutants import prove as apply_proofs
from eval.library_mutants import score as library_score
from eval.mutants import (
    PLATFORM_OF,
    Mutant,
    Site,
    SourceFile,
    is_annotated,
    load_sites,
    package_files,
    plan_mutants,
    schedule,
    write_mutant,
)
from eval.mypyrun import (
    PLUGIN,
    RunResult,
    clean_env,
    preset_flags,
    run_mypy,
    source_of,
    write_config,
)
from typed_pallas_mypy.cli.opted_out import opted_out_files, shadow_copies
from typed_pallas_mypy.inference import Inference
from typed_pallas_mypy.inference.parsing import parse_module

DEFAULT_CACHE = Path(os.environ.get("XDG_CACHE_HOME", Path.home() / ".cache")) / "typed-pallas-eval"
RESULTS = Path(__file__).with_name("results")


# --------------------------------------------------------------------------- install


def install(package: str, version: str, cache: Path, python: str) -> tuple[Path, float]:
    """Install ``package==version`` (no deps) under ``cache/pkgs``; returns (root, seconds)."""
    root = cache / "pkgs" / f"{package}-{version}"
    if (root / ".complete").exists():
        return root, 0.0
    tmp = Path(tempfile.mkdtemp(prefix=f"{package}-", dir=cache))
    t0 = time.perf_counter()
    subprocess.run(
        [
            python,
            "-m",
            "pip",
            "install",
            "-q",
            "--no-deps",
            "--no-compile",
            "--disable-pip-version-check",
            "--ignore-requires-python",  # read, never imported: any Python's source will do
            "--target",
            str(tmp),
            f"{package}=={version}",
        ],
        check=True,
    )
    seconds = time.perf_counter() - t0
    if root.exists():
        shutil.rmtree(root)
    root.parent.mkdir(parents=True, exist_ok=True)
    tmp.rename(root)
    (root / ".complete").write_text(f"{package}=={version}\n")
    return root, seconds


def venv_jax(python: str) -> tuple[str, Path]:
    out = subprocess.run(
        [
            python,
            "-c",
            "import jax, os; print(jax.__version__); "
            "print(os.path.dirname(os.path.dirname(jax.__file__)))",
        ],
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split("\n")
    return out[0], Path(out[1])


def module_of(relpath: str) -> str:
    parts = relpath[:-3].split("/")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


# --------------------------------------------------------------------------- evaluation


@dataclass
class MutantResult:
    mutant: Mutant
    caught: bool = False
    message_ok: bool = False
    messages: list[str] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)
    crashed: bool = False
    caught_by: set[str] = field(default_factory=set)
    #: the site's file opts out of mypy (``# mypy: ignore-errors``): mypy drops its
    #: function bodies and hides its errors, so no plugin can report there
    opted_out: bool = False
    #: (opted-out files only) caught through ``typed-pallas check --check-opted-out``'s
    #: route: the files given to mypy as shadow copies with the opt-out turned off, a
    #: new ``pallas-platform`` error inside the call (:func:`evaluate_opted_out`)
    caught_with_check_opted_out: bool = False


def opts_out_of_mypy(path: Path) -> bool:
    """Whether the file carries ``# mypy: ignore-errors`` as mypy reads it (mypy strips
    its function bodies when parsing and reports nothing in it: plugin hooks never run
    there). The reading of ``typed-pallas check`` (``cli.opted_out``)."""
    return bool(opted_out_files([str(path)]))


def expected_messages(m: Mutant) -> set[str]:
    """The texts the plugin may give for a mutant (JAX's platform text or its backend twin)."""
    got, want = m.to_backend, m.from_backend
    backend = {"tpu": "mosaic_tpu"}.get(got, got)
    want_b = {"tpu": "mosaic_tpu"}.get(want, want)
    out = {
        f"Compiler params for platform {PLATFORM_OF[got]} cannot be used for {PLATFORM_OF[want]} lowering."
    }
    for w in (want_b, want, PLATFORM_OF[want], "cuda", "rocm", "tpu"):
        out.add(f"Compiler params for backend {backend} cannot be used for {w} lowering.")
    return out


@dataclass
class DispatchResult:
    mutant: DispatchMutant
    caught: bool = False
    messages: list[str] = field(default_factory=list)
    elsewhere: list[str] = field(default_factory=list)
    crashed: bool = False


@dataclass
class PackageEval:
    package: str
    version: str
    files: int = 0
    sites: int = 0
    install_s: float = 0.0
    baseline: RunResult | None = None
    false_positives: list[dict[str, Any]] = field(default_factory=list)
    results: list[MutantResult] = field(default_factory=list)
    unmutable: list[dict[str, str]] = field(default_factory=list)
    rounds: list[dict[str, Any]] = field(default_factory=list)
    unattributed: list[str] = field(default_factory=list)
    skipped: str | None = None
    cli: dict[str, Any] | None = None
    dispatch: list[DispatchResult] = field(default_factory=list)
    dispatch_skipped: list[dict[str, str]] = field(default_factory=list)
    dispatch_false_positives: list[dict[str, Any]] = field(default_factory=list)
    dispatch_runs: list[RunResult] = field(default_factory=list)
    #: the files that opt out of mypy, checked through ``--check-opted-out``'s route
    opted_out_files: list[str] = field(default_factory=list)
    #: ``pallas-platform`` errors in those files, unmodified, through that route
    opted_out_false_positives: list[str] = field(default_factory=list)
    #: that route's runs: the unmodified code, then the rounds of mutants there
    opted_out_runs: list[RunResult] = field(default_factory=list)
    #: the registry configuration the dispatch step ran with ("" if none)
    dispatch_registry_config: str = ""
    #: installed next to the package (``name==version``), on PYTHONPATH for every step
    libraries: list[str] = field(default_factory=list)
    pythonpath: list[str] = field(default_factory=list)
    library: LibraryEval | None = None

    def all_runs(self) -> list[RunResult]:
        """Steps 1 and 2, with the route of ``--check-opted-out`` (:func:`evaluate_opted_out`)."""
        runs = ([self.baseline] if self.baseline else []) + [r["result"] for r in self.rounds]
        return runs + self.opted_out_runs

    @property
    def crashes(self) -> int:
        return sum(1 for r in self.all_runs() if r.crashed)

    @property
    def dispatch_crashes(self) -> int:
        return sum(1 for r in self.dispatch_runs if r.crashed or r.blocked)

    @property
    def blocked(self) -> int:
        return sum(1 for r in self.all_runs() if r.blocked)


def evaluate_package(
    pkg: str, version: str, sites: list[Site], args: argparse.Namespace, config: Path
) -> PackageEval:
    ev = PackageEval(pkg, version, sites=len(sites))
    cache: Path = args.cache_dir
    if pkg == "jax":
        have, site_packages = venv_jax(args.python)
        if have != version:
            ev.skipped = f"checking venv has jax {have}; the survey's lines are for jax {version}"
            return ev
        root, cwd = site_packages, cache / "work" / "jax-cwd"
        cwd.mkdir(parents=True, exist_ok=True)
    else:
        root, ev.install_s = install(pkg, version, cache, args.python)
        cwd = root
    files = package_files(root, pkg, {s.relpath for s in sites})
    ev.files = len(files)
    ev.pythonpath = list(args.pythonpath)
    site: Path | None = None
    if pkg != "jax" and not args.no_libraries:
        ev.libraries, site = libraries_next_to(pkg, version, root, args)
        if site is not None:
            ev.pythonpath.append(str(site))
    if args.only_library_calls:
        if pkg != "jax":
            ev.library = evaluate_library_calls(
                pkg, version, "PyPI", root, files, site, args, config
            )
        return ev
    if pkg == "jax":
        targets = [a for f in files for a in ("-m", module_of(f))]
    else:
        targets = ["--explicit-package-bases", *files]
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}-{args.label}"
    mcache = cache / "mypy" / tag  # shared by the packages of one run (jax is analysed once)
    common = dict(
        cwd=cwd,
        root=root,
        cache_dir=mcache,
        config=config,
        python=args.python,
        extra_pythonpath=ev.pythonpath,
    )

    mutants, unmutable, _typed_of = plan_mutants(root, sites)
    if args.site:
        mutants = [m for m in mutants if m.site.key in args.site]
    ev.unmutable = [{"site": u.site.key, "reason": u.reason} for u in unmutable]

    # 1. unmodified code, cold cache
    ev.baseline = base = run_mypy(targets, **common)
    srcs: dict[str, SourceFile] = {}
    site_at = {(s.relpath, s.line): s for s in sites}
    for d in base.typed_pallas_errors:
        if d.relpath not in srcs:
            with contextlib.suppress(OSError, SyntaxError):
                srcs[d.relpath] = SourceFile(root, d.relpath)
        typed = (
            is_annotated(srcs[d.relpath].enclosing_function(d.line)) if d.relpath in srcs else None
        )
        s = site_at.get((d.relpath, d.line))
        ev.false_positives.append(
            {
                "where": f"{d.relpath}:{d.line}",
                "message": d.message,
                "source": source_of(d),
                "typed": typed,
                "site": None
                if s is None
                else {
                    "params_class": s.params_class,
                    "platform": s.platform,
                    "entry_point": s.entry_point,
                    "evidence": s.has_evidence,
                    "interpret_kw": s.interpret_kw,
                },
            }
        )
    known = {d.key for d in base.typed_pallas_errors}
    if args.cli and pkg != "jax":
        ev.cli = run_cli(files, root, cache / "cli" / tag, args, ev.pythonpath)
        ev.cli["agrees_with_mypy"] = sorted(ev.cli.get("findings", [])) == sorted(
            f"{d.relpath}:{d.line}: {d.message}" for d in base.platform_errors
        )

    # 2. mutants, in rounds of disjoint files, warm cache
    if args.no_mutants:
        return ev
    work = cache / "work" / tag / f"{pkg}-{version}"
    for i, batch in enumerate(schedule(mutants)):
        shutil.rmtree(work, ignore_errors=True)
        shadows: dict[str, Path] = {}
        for j, m in enumerate(batch):
            shadows.update(write_mutant(root, m, work / f"m{j}"))
        stamp_round(root, shadows, i)
        res = run_mypy(targets, shadows=shadows, **common)
        ev.rounds.append({"round": i, "mutants": len(batch), "result": res})
        new = [d for d in res.typed_pallas_errors if d.key not in known]
        claimed: set[tuple[str, int, str]] = set()
        for m in batch:
            r = MutantResult(
                m, crashed=res.crashed, opted_out=opts_out_of_mypy(root / m.site.relpath)
            )
            lo, hi = m.call_span
            for d in new:
                if d.relpath == m.site.relpath and lo <= d.line <= hi:
                    r.caught = True
                    r.caught_by.add(source_of(d) or "?")
                    r.messages.append(d.message)
                    claimed.add(d.key)
                elif d.relpath in m.files:
                    r.elsewhere.append(f"{d.relpath}:{d.line}: {d.message}")
                    claimed.add(d.key)
            r.message_ok = r.caught and any(t in expected_messages(m) for t in r.messages)
            ev.results.append(r)
        ev.unattributed += [
            f"{d.relpath}:{d.line}: {d.message}" for d in new if d.key not in claimed
        ]
    evaluate_opted_out(ev, root, files, targets, common, work)
    shutil.rmtree(work, ignore_errors=True)
    if not args.no_dispatch:
        evaluate_dispatch(ev, pkg, version, root, cwd, files, args, config, sites)
    if pkg != "jax" and not args.no_library_calls:
        ev.library = evaluate_library_calls(pkg, version, "PyPI", root, files, site, args, config)
    return ev


def evaluate_opted_out(
    ev: PackageEval,
    root: Path,
    files: Sequence[str],
    targets: Sequence[str],
    common: dict[str, Any],
    work: Path,
) -> None:
    """The files that opt out of mypy through ``typed-pallas check --check-opted-out``'s
    route: each given to mypy as the shadow copy ``cli.opted_out.shadow_copies`` writes
    (the opt-out turned off), once unmodified (every ``pallas-platform`` error in them is
    listed: the route's false positives), then the mutants at their sites only, in
    rounds of disjoint files, each mutated file's copy written from the mutant. A mutant
    is caught when a ``pallas-platform`` error not in the unmodified run falls inside
    its call (``check`` shows nothing else in these files). Same cache as step 2."""
    opted = [f for f in files if opts_out_of_mypy(root / f)]
    ev.opted_out_files = opted
    results = [r for r in ev.results if r.opted_out]
    if not opted:
        return
    neutral_dir = work / "opted-out"
    shutil.rmtree(neutral_dir, ignore_errors=True)
    copies = shadow_copies([str(root / f) for f in opted], str(neutral_dir))
    neutral = {rel: Path(copies[str(root / rel)]) for rel in opted if str(root / rel) in copies}
    base = run_mypy(targets, shadows=neutral, **common)
    ev.opted_out_runs.append(base)
    in_opted = [d for d in base.platform_errors if d.relpath in neutral]
    ev.opted_out_false_positives = [f"{d.relpath}:{d.line}: {d.message}" for d in in_opted]
    known = {d.key for d in base.platform_errors}
    first = len(ev.rounds) + 1  # a stamp no round of step 2 gave these files
    for i, batch in enumerate(schedule([r.mutant for r in results])):
        mutated: dict[str, Path] = {}
        for j, m in enumerate(batch):
            mutated.update(write_mutant(root, m, work / f"o{i}-{j}"))
        stamp_round(root, mutated, first + i)
        shadows = dict(neutral)
        for rel, path in mutated.items():
            copy = shadow_copies([str(path)], str(work / f"o{i}-copies" / rel))
            shadows[rel] = Path(copy[str(path)]) if copy else path
        res = run_mypy(targets, shadows=shadows, **common)
        ev.opted_out_runs.append(res)
        new = [d for d in res.platform_errors if d.key not in known]
        in_batch = {id(m) for m in batch}
        for r in results:
            if id(r.mutant) in in_batch:
                lo, hi = r.mutant.call_span
                r.caught_with_check_opted_out = any(
                    d.relpath == r.mutant.site.relpath and lo <= d.line <= hi for d in new
                )


def stamp_round(root: Path, shadows: dict[str, Path], round_index: int) -> None:
    """Give every shadow file of a round its own mtime. mypy takes a file whose size and
    whole-second mtime match its cache as unchanged (it hashes only when they differ), so
    two mutants of one file of the same size written within a second (a swapped platform
    string) would both be checked as the first."""
    for rel, shadow in shadows.items():
        stamp = int((root / rel).stat().st_mtime) + 10 * (round_index + 1)
        os.utime(shadow, (stamp, stamp))


def evaluate_dispatch(
    ev: PackageEval,
    pkg: str,
    version: str,
    root: Path,
    cwd: Path,
    files: list[str],
    args: argparse.Namespace,
    config: Path,
    sites: Sequence[Site] = (),
) -> None:
    """Step 4: mutants at dispatch sites, over the Pallas files plus the sites' files.
    The survey's ``sites`` tell the platform of the kernels a decided region reaches
    (which mutants are real bugs). A package with a registry in ``REGISTRIES`` (ejkernel)
    is checked, unmodified code included, with that registry configured through
    ``TYPED_PALLAS_CONFIG`` (a ``[[tool.typed-pallas.registries]]`` table the eval writes)."""
    plan = plan_dispatch(root, pkg, sites=sites)
    ev.dispatch_skipped = [
        {"kind": k.kind, "where": k.where, "reason": k.reason} for k in plan.skipped
    ]
    if not plan.mutants:
        return
    extra = sorted(plan.files - set(files))
    if pkg == "jax":
        targets = [a for f in [*files, *extra] for a in ("-m", module_of(f))]
    else:
        targets = ["--explicit-package-bases", *files, *extra]
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}-{args.label}-dispatch"
    work = args.cache_dir / "work" / tag / f"{pkg}-{version}"
    if pkg != "jax":
        # the package's own modules followed normally, as `typed-pallas check` follows a
        # project's: a dispatch decides in one module what a function of another runs,
        # and mypy keeps no function body of a silently followed module
        own = sorted({Path(f).parts[0].removesuffix(".py") for f in [*files, *extra]})
        config = write_config(
            args.cache_dir / "work" / tag / f"{pkg}-mypy.ini",
            args.plugin,
            check_untyped_defs=not args.default_flags,
            own_modules=own,
        )
    env: dict[str, str] = {}
    if any(m.registry for m in plan.mutants):
        registry_config = args.cache_dir / "work" / tag / f"{pkg}-registry" / "pyproject.toml"
        registry_config.parent.mkdir(parents=True, exist_ok=True)
        registry_config.write_text(REGISTRIES[pkg].config())
        env["TYPED_PALLAS_CONFIG"] = str(registry_config)
        ev.dispatch_registry_config = REGISTRIES[pkg].config()
    common = dict(
        cwd=cwd,
        root=root,
        cache_dir=args.cache_dir / "mypy" / tag,
        config=config,
        python=args.python,
        extra_pythonpath=ev.pythonpath,
        extra_env=env,
    )
    base = run_mypy(targets, **common)
    ev.dispatch_runs.append(base)
    main_known = {d.key for d in ev.baseline.typed_pallas_errors} if ev.baseline else set()
    for d in base.typed_pallas_errors:
        if d.key not in main_known:
            ev.dispatch_false_positives.append(
                {"where": f"{d.relpath}:{d.line}", "message": d.message, "source": source_of(d)}
            )
    known = {d.key for d in base.typed_pallas_errors}
    for i, batch in enumerate(schedule_dispatch(plan.mutants)):
        shutil.rmtree(work, ignore_errors=True)
        shadows: dict[str, Path] = {}
        for j, m in enumerate(batch):
            shadows.update(write_dispatch_mutant(root, m, work / f"m{j}"))
        stamp_round(root, shadows, i)
        res = run_mypy(targets, shadows=shadows, **common)
        ev.dispatch_runs.append(res)
        new = [d for d in res.platform_errors if d.key not in known]
        for m in batch:
            r = DispatchResult(m, crashed=res.crashed)
            for d in new:
                if any(d.relpath == rel and lo <= d.line <= hi for rel, lo, hi in m.spans):
                    r.caught = True
                    r.messages.append(f"{d.relpath}:{d.line}: {d.message}")
                elif d.relpath in m.files:
                    r.elsewhere.append(f"{d.relpath}:{d.line}: {d.message}")
            ev.dispatch.append(r)
    shutil.rmtree(work, ignore_errors=True)


def is_wrapper_site(r: MutantResult) -> bool:
    """A params swap at a call of a package wrapper that forwards ``compiler_params``."""
    return "wrapper:" in r.mutant.site.entry_point


#: the rows of the dispatch-site table, in order
DISPATCH_ROWS = (
    "guard",
    "device-guard",
    "guard-helper",
    "predicate",
    "registration",
    "table",
    "platform_dependent",
)


def dispatch_row(m: DispatchMutant) -> str:
    """The table row of a mutant: its kind, with the guards that read a device object's
    ``.platform`` (``jax.devices()[0]``, a mesh's devices, ``get_default_device()``, a
    ``jax.Device`` parameter, ``any(...)`` over devices) in a row of their own."""
    if m.kind == "guard" and (m.form.startswith("device:") or m.form == "devices_platform"):
        return "device-guard"
    return m.kind


def summarize_dispatch(evals: list[PackageEval]) -> dict[str, Any]:
    allr = [r for e in evals for r in e.dispatch]
    wr = [r for e in evals for r in e.results if is_wrapper_site(r)]

    def sc(sel: list[Any]) -> dict[str, int]:
        return {"caught": sum(1 for r in sel if r.caught), "mutants": len(sel)}

    def bugs(sel: list[DispatchResult]) -> dict[str, int]:
        real = [r for r in sel if r.mutant.not_a_bug is None]
        return {
            "mutants": len(sel),
            "real_bugs": len(real),
            "caught": sum(1 for r in real if r.caught),
            "caught_not_bugs": sum(1 for r in sel if r.caught and r.mutant.not_a_bug),
        }

    by_kind = {
        k: sc([r for r in allr if r.mutant.kind == k])
        for k in (
            "guard",
            "guard-helper",
            "predicate",
            "registration",
            "table",
            "platform_dependent",
        )
    }
    by_kind["wrapper"] = sc(wr)
    by_row = {k: bugs([r for r in allr if dispatch_row(r.mutant) == k]) for k in DISPATCH_ROWS}
    by_form = {
        f"{k}/{f}": sc([r for r in allr if (r.mutant.kind, r.mutant.form) == (k, f)])
        for k, f in sorted({(r.mutant.kind, r.mutant.form) for r in allr})
    }
    not_bugs: Counter[str] = Counter(
        f"{dispatch_row(r.mutant)}: {r.mutant.not_a_bug}" for r in allr if r.mutant.not_a_bug
    )
    skipped: Counter[str] = Counter()
    for e in evals:
        for k in e.dispatch_skipped:
            reason = (
                k["reason"].split(": ", 1)[-1]
                if k["kind"] in ("guard-helper", "predicate")
                else k["reason"]
            )
            if reason.startswith("condition variable"):
                reason = "condition variable: no if on it reaches a Pallas call"
            skipped[f"{k['kind']}: {reason}"] += 1
    return {
        "by_kind": by_kind,
        "by_row": by_row,
        "by_form": by_form,
        "not_bugs": dict(sorted(not_bugs.items(), key=lambda kv: -kv[1])),
        "all": sc(allr),
        "real_bugs": bugs(allr),
        "wrapper_platform_swaps": sc([r for r in wr if r.mutant.kind == "platform"]),
        "false_positives": sum(len(e.dispatch_false_positives) for e in evals),
        "crashes": sum(e.dispatch_crashes for e in evals),
        "runs": sum(len(e.dispatch_runs) for e in evals),
        "mypy_seconds": round(sum(r.seconds for e in evals for r in e.dispatch_runs), 1),
        "sites_skipped": dict(sorted(skipped.items(), key=lambda kv: -kv[1])),
    }


def run_cli(
    files: list[str], root: Path, cache: Path, args: argparse.Namespace, pythonpath: list[str]
) -> dict[str, Any]:
    """``typed-pallas check --output json`` on the same files (what a user would run)."""
    exe = Path(args.python).parent / "typed-pallas"
    cmd = [
        str(exe),
        "check",
        "--output",
        "json",
        "--cache-dir",
        str(cache),
        *files,
        "--",
        "--explicit-package-bases",
    ]
    t0 = time.perf_counter()
    p = subprocess.run(cmd, cwd=root, capture_output=True, text=True, env=clean_env(pythonpath))
    out: dict[str, Any] = {"rc": p.returncode, "seconds": round(time.perf_counter() - t0, 1)}
    try:
        found = json.loads(p.stdout)
        out["findings"] = [
            f"{f['file']}:{f['line']}: {f['message']}"
            for f in found
            if f.get("code") == "pallas-platform"
        ]
    except (ValueError, TypeError, KeyError):
        out["error"] = (p.stdout + p.stderr)[-2000:]
    return out


# --------------------------------------------------------------------------- library calls

#: top-level folders some wheels install that are no library (tpu-inference ships ``tests``)
NOT_LIBRARIES = frozenset({"tests", "test", "tools", "benchmarks", "examples", "scripts", "docs"})
#: jax's library kernels (the checking venv's jax)
JAX_OPS = "jax.experimental.pallas.ops"
#: sources of library calls that are not on PyPI (checked out by the user: ``--checkout``)
LIBRARY_SOURCES = Path(__file__).with_name("library-sources.tsv")


@dataclass
class LibraryEval:
    """Step 5 for one source: its library calls, the unmodified check, the mutants."""

    source: str
    version: str
    origin: str
    libraries: list[str] = field(default_factory=list)
    files_scanned: int = 0
    files_checked: int = 0
    calls: list[LibraryCall] = field(default_factory=list)
    without_requirement: dict[str, int] = field(default_factory=dict)
    findings: list[dict[str, Any]] = field(default_factory=list)
    results: list[LibraryResult] = field(default_factory=list)
    not_mutated: list[NotMutated] = field(default_factory=list)
    runs: list[RunResult] = field(default_factory=list)
    skipped: str | None = None

    @property
    def crashes(self) -> int:
        return sum(1 for r in self.runs if r.crashed or r.blocked)


def corpus_versions(sites: Sequence[Site]) -> dict[str, str]:
    return {s.package: s.version for s in sites}


def imported_tops(root: Path, files: Sequence[str]) -> set[str]:
    """The top-level names of every absolute import in ``files``."""
    found: set[str] = set()
    for rel in files:
        try:
            tree = parse_module((root / rel).read_bytes(), rel)  # no SyntaxWarning printed
        except (OSError, SyntaxError, ValueError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                found |= {a.name.split(".", 1)[0] for a in node.names}
            elif isinstance(node, ast.ImportFrom) and not node.level and node.module:
                found.add(node.module.split(".", 1)[0])
    return found


def corpus_libraries(
    pkg: str, root: Path, args: argparse.Namespace
) -> list[tuple[str, str, set[str]]]:
    """The corpus packages (name, version, top-level modules) that ``root``'s files
    import, each installed (cached) to read its top-level names."""
    imported = imported_tops(root, source_files(root))
    out = []
    for other, version in sorted(args.corpus_versions.items()):
        if other in (pkg, "jax"):
            continue
        other_root, _ = install(other, version, args.cache_dir, args.python)
        tops = top_level_modules(other_root) - NOT_LIBRARIES
        if tops & imported and not tops & top_level_modules(root):
            out.append((other, version, tops))
    return out


def install_libraries(
    label: str, libraries: Sequence[tuple[str, str]], args: argparse.Namespace
) -> Path:
    """``pip install --no-deps --target`` the libraries into ``<cache>/libs/<label>/site-packages``
    with the checking venv's ``jax`` linked in, as a venv holds them next to jax (the
    plugin reads untyped libraries from the site-packages folders of the modules mypy
    loads, jax's among them)."""
    _, jax_site = venv_jax(args.python)
    cache: Path = args.cache_dir
    site = cache / "libs" / label / "site-packages"
    stamp = "\n".join([*(f"{n}=={v}" for n, v in libraries), f"jax -> {jax_site / 'jax'}", ""])
    if (site / ".complete").is_file() and (site / ".complete").read_text() == stamp:
        return site
    shutil.rmtree(site.parent, ignore_errors=True)
    site.mkdir(parents=True)
    if libraries:
        subprocess.run(
            [
                args.python,
                "-m",
                "pip",
                "install",
                "-q",
                "--no-deps",
                "--no-compile",
                "--disable-pip-version-check",
                "--ignore-requires-python",
                "--target",
                str(site),
                *(f"{n}=={v}" for n, v in libraries),
            ],
            check=True,
        )
    (site / "jax").symlink_to(jax_site / "jax", target_is_directory=True)
    (site / ".complete").write_text(stamp)
    return site


def libraries_next_to(
    pkg: str, version: str, root: Path, args: argparse.Namespace
) -> tuple[list[str], Path | None]:
    """Install the corpus packages ``pkg`` imports next to it; (their pins, the folder)."""
    found = corpus_libraries(pkg, root, args)
    if not found:
        return [], None
    pins = [(n, v) for n, v, _ in found]
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}"
    site = install_libraries(f"{pkg}-{version}-{tag}", pins, args)
    return [f"{n}=={v}" for n, v in pins], site


def evaluate_library_calls(
    source: str,
    version: str,
    origin: str,
    root: Path,
    pallas_files: Sequence[str],
    site: Path | None,
    args: argparse.Namespace,
    config: Path,
) -> LibraryEval:
    """Step 5: the source's calls of library kernels (jax's ops and the corpus packages
    installed next to it), checked unmodified, then the guard, swap and config mutants."""
    ev = LibraryEval(source, version, origin)
    if site is not None:
        ev.libraries = sorted(
            "==".join(p.name.removesuffix(".dist-info").rsplit("-", 1))
            for p in site.glob("*.dist-info")
        )
    _, jax_site = venv_jax(args.python)
    roots = [str(site)] if site is not None else []
    facts = Inference([*roots, str(jax_site)], None)
    prefixes = [JAX_OPS]
    if site is not None:
        prefixes += sorted(top_level_modules(site) - NOT_LIBRARIES - {"jax"})
    own = top_level_modules(root)
    prefixes = [p for p in prefixes if p.split(".", 1)[0] not in own]
    scan = source_files(root)
    found = find_library_calls(root, source, facts, prefixes, scan)
    ev.files_scanned = found.files_read
    ev.calls, ev.without_requirement = found.calls, found.without_requirement
    if not ev.calls:
        ev.skipped = "no call of a library function with a requirement"
        return ev
    files = sorted(set(pallas_files) | {c.relpath for c in ev.calls})
    ev.files_checked = len(files)
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}-{args.label}-library"
    work = args.cache_dir / "work" / tag / f"{source}-{version}"
    pythonpath = [*args.pythonpath, *roots]
    common: dict[str, Any] = dict(
        cwd=root,
        root=root,
        cache_dir=args.cache_dir / "mypy" / tag,
        config=config,
        python=args.python,
        extra_pythonpath=pythonpath,
    )
    mutants, ev.not_mutated = plan_library_mutants(root, ev.calls)
    base, ev.results, ev.runs = check_library_mutants(files, mutants, work, **common)
    for d in base.platform_errors:
        ev.findings.append(
            {
                "where": f"{d.relpath}:{d.line}",
                "message": d.message,
                "calls": [c.callee for c in ev.calls if c.relpath == d.relpath and _in(c, d.line)],
            }
        )
    return ev


def check_library_mutants(
    files: Sequence[str],
    mutants: Sequence[LibraryMutant],
    work: Path,
    *,
    extra_env: dict[str, str] | None = None,
    **common: Any,
) -> tuple[RunResult, list[LibraryResult], list[RunResult]]:
    """mypy + plugin over ``files`` unmodified, then once per round of mutants (guard and
    swap mutants as shadow files, config mutants through a ``pyproject.toml`` named by
    ``TYPED_PALLAS_CONFIG``); each mutant judged on the new ``pallas-platform`` errors.
    ``common``: ``run_mypy``'s keywords (cwd, root, cache_dir, config, ...).
    Returns (the unmodified run, the results, every run)."""
    targets = ["--explicit-package-bases", *files]
    base = run_mypy(targets, extra_env=extra_env, **common)
    runs = [base]
    results: list[LibraryResult] = []
    known = {d.key for d in base.platform_errors}
    for i, batch in enumerate(schedule_library(mutants)):
        shutil.rmtree(work, ignore_errors=True)
        shadows: dict[str, Path] = {}
        env = dict(extra_env or {})
        for j, m in enumerate(batch):
            shadows.update(write_library_mutant(common["root"], m, work / f"m{j}"))
        stamp_round(common["root"], shadows, i)
        overrides = {(m.override, m.platform) for m in batch if m.override is not None}
        if overrides:
            work.mkdir(parents=True, exist_ok=True)
            (work / "pyproject.toml").write_text(config_text(overrides))
            env["TYPED_PALLAS_CONFIG"] = str(work / "pyproject.toml")
        res = run_mypy(targets, shadows=shadows, extra_env=env, **common)
        runs.append(res)
        new = [(d.relpath, d.line, d.message) for d in res.platform_errors if d.key not in known]
        results += [judge(m, new, crashed=res.crashed) for m in batch]
    shutil.rmtree(work, ignore_errors=True)
    return base, results, runs


def _in(call: LibraryCall, line: int) -> bool:
    return call.span[0] <= line <= call.span[1]


@dataclass(frozen=True)
class CheckoutSource:
    """A row of ``library-sources.tsv``: a repository at a commit, read from a checkout."""

    name: str
    repository: str
    commit: str
    #: the folder of the checkout that is the import root ("." or "src")
    base: str
    #: folders under ``base`` copied for the evaluation
    folders: tuple[str, ...]
    #: the jax versions (prefix) the row is for ("-": any)
    jax: str
    note: str


def load_checkout_sources(path: Path = LIBRARY_SOURCES) -> list[CheckoutSource]:
    with open(path, newline="") as f:
        rows = list(
            csv.DictReader((line for line in f if not line.startswith("#")), delimiter="\t")
        )
    return [
        CheckoutSource(
            r["name"],
            r["repository"],
            r["commit"],
            r["base"],
            tuple(r["folders"].split(",")),
            r["jax"],
            r["note"],
        )
        for r in rows
    ]


def evaluate_checkout(
    row: CheckoutSource, checkout: Path, args: argparse.Namespace, config: Path
) -> LibraryEval:
    """Step 5 on a checkout: its folders copied under the cache (nothing else of the
    repository is importable from there), corpus libraries installed next to it."""
    origin = f"{row.repository}@{row.commit[:12]}"
    root = args.cache_dir / "checkouts" / f"{row.name}-{row.commit[:12]}"
    shutil.rmtree(root, ignore_errors=True)
    for folder in row.folders:
        src = checkout / row.base / folder
        if not src.is_dir():
            ev = LibraryEval(row.name, row.commit[:12], origin)
            ev.skipped = f"{src} is not a folder (check out {origin})"
            return ev
        shutil.copytree(src, root / folder, ignore=shutil.ignore_patterns("*.pyc", "__pycache__"))
    site: Path | None = None
    if not args.no_libraries:
        _, site = libraries_next_to(row.name, row.commit[:12], root, args)
    return evaluate_library_calls(row.name, row.commit[:12], origin, root, [], site, args, config)


def load_proofs(paths: Sequence[Path]) -> dict[str, list[str]]:
    """callee -> the platforms it lowered for, from ``eval.library_proofs``'s JSON files
    (only functions whose platform was proved; the first file that proves one wins);
    aliases included. Missing files are skipped."""
    out: dict[str, list[str]] = {}
    for path in paths:
        if not path.is_file():
            continue
        data = json.loads(path.read_text())
        for row in data["functions"]:
            if row.get("proven"):
                out.setdefault(row["function"], list(row["lowers_for"]))
        for alias, target in data.get("aliases", {}).items():
            if target in out:
                out.setdefault(alias, out[target])
    return out


def summarize_library(evals: Sequence[LibraryEval], proofs: dict[str, list[str]]) -> dict[str, Any]:
    results = [r for e in evals for r in e.results]
    apply_proofs(results, proofs)
    not_real: Counter[str] = Counter()
    for r in results:
        if not r.mutant.real_bug and r.mutant.why_not:
            reason = r.mutant.why_not
            if " lowers for " in reason:
                reason = "the callee lowers for that platform"
            elif reason.startswith("under the guard"):
                reason = "under a guard that keeps it on its own platform"
            not_real[f"{r.mutant.form}: {reason}"] += 1
    skipped: Counter[str] = Counter(f"{n.form}: {n.reason}" for e in evals for n in e.not_mutated)
    calls = [c for e in evals for c in e.calls]
    return {
        "sources": len(evals),
        "calls": len(calls),
        "calls_by_library": dict(Counter(c.library for c in calls)),
        "calls_without_requirement": dict(
            sum((Counter(e.without_requirement) for e in evals), Counter())
        ),
        "mutants": len(results),
        "real_bugs": sum(r.mutant.real_bug for r in results),
        "real_bugs_proven": sum(r.mutant.real_bug and r.proven is True for r in results),
        "score": library_score(results),
        "score_unproven_too": library_score(results, require_proof=False),
        "real_bugs_not_lowered": sorted(
            {r.mutant.call.callee for r in results if r.mutant.real_bug and r.proven is None}
        ),
        "real_bugs_disproven": sorted(
            {r.mutant.id for r in results if r.mutant.real_bug and r.proven is False}
        ),
        "caught_not_real": sum(r.caught for r in results if not r.mutant.real_bug),
        "not_real": dict(not_real),
        "not_mutated": dict(skipped),
        "findings_on_unmodified": sum(len(e.findings) for e in evals),
        "crashes": sum(e.crashes for e in evals),
        "runs": sum(len(e.runs) for e in evals),
        "mypy_seconds": round(sum(r.seconds for e in evals for r in e.runs), 1),
    }


def library_row(e: LibraryEval) -> dict[str, Any]:
    return {
        "source": e.source,
        "version": e.version,
        "origin": e.origin,
        "libraries": e.libraries,
        "skipped": e.skipped,
        "files_scanned": e.files_scanned,
        "files_checked": e.files_checked,
        "calls": [
            {
                "where": c.where,
                "callee": c.callee,
                "library": c.library,
                "kind": c.kind,
                "platforms": sorted(c.platforms),
                "interpret": c.interpret,
                "span": list(c.span),
                "typed": c.typed,
                "scope": c.scope,
                "chain": list(c.chain),
            }
            for c in e.calls
        ],
        "calls_without_requirement": e.without_requirement,
        "findings_on_unmodified": e.findings,
        "crashes": e.crashes,
        "crash_output": [r.tail for r in e.runs if r.crashed or r.blocked],
        "run_seconds": [round(r.seconds, 1) for r in e.runs],
        "not_mutated": [
            {"where": n.call.where, "form": n.form, "reason": n.reason} for n in e.not_mutated
        ],
        "mutants": [
            {
                "id": r.mutant.id,
                "form": r.mutant.form,
                "where": r.mutant.call.where,
                "callee": r.mutant.call.callee,
                "library": r.mutant.call.library,
                "platform": r.mutant.platform,
                "detail": r.mutant.detail,
                "real_bug": r.mutant.real_bug,
                "why_not": r.mutant.why_not,
                "proven": r.proven,
                "caught": r.caught,
                "messages": r.messages,
                "elsewhere": r.elsewhere,
                "crashed": r.crashed,
            }
            for r in e.results
        ],
    }


def print_library(evals: Sequence[LibraryEval], summary: dict[str, Any]) -> None:
    print(
        "\nlibrary calls (real bugs proven by lowering; caught: a new pallas-platform error "
        "on the call):"
    )
    for e in evals:
        state = e.skipped or (
            f"{len(e.calls)} calls, {len(e.results)} mutants, {len(e.findings)} findings on "
            f"unmodified code, {e.crashes} crashes"
        )
        libs = f" [{', '.join(e.libraries)}]" if e.libraries else ""
        print(f"  {e.source} {e.version} ({e.origin}){libs}: {state}")
    for form, by_library in summary["score"].items():
        print(
            f"  {form:8s}",
            ", ".join(f"{lib} {ratio(c['caught'], c['mutants'])}" for lib, c in by_library.items()),
        )
    print(f"  real bugs not lowered: {summary['real_bugs_not_lowered']}")
    print(f"  not real bugs: {summary['not_real']}")
    print(f"  not mutated: {summary['not_mutated']}")
    for e in evals:
        for f in e.findings:
            print(f"    FINDING {e.source}: {f['where']}: {f['message']}")
        for r in e.results:
            if r.mutant.real_bug and not r.caught:
                print(f"    missed {r.mutant.form} {r.mutant.call.where} {r.mutant.detail}")


# --------------------------------------------------------------------------- reporting


def ratio(n: int, d: int) -> str:
    return f"{n}/{d} ({100 * n / d:.0f}%)" if d else "-"


#: which mutant results a score counts
Selection = Callable[[MutantResult], bool]


def _every(result: MutantResult) -> bool:
    return True


def score(
    results: list[MutantResult], pred: Selection = _every, default_flags: bool = False
) -> tuple[int, int]:
    sel = [r for r in results if pred(r)]
    hit = [r for r in sel if r.caught and (r.mutant.typed or not default_flags)]
    return len(hit), len(sel)


def opted_out_score(results: list[MutantResult]) -> dict[str, int]:
    """The mutants in files that opt out of mypy, and how many ``--check-opted-out``'s
    route catches (:func:`evaluate_opted_out`)."""
    sel = [r for r in results if r.opted_out]
    return {"caught": sum(r.caught_with_check_opted_out for r in sel), "mutants": len(sel)}


def _pair(result: MutantResult) -> str:
    return f"{result.mutant.from_backend}->{result.mutant.to_backend}"


def summarize(evals: list[PackageEval]) -> dict[str, Any]:
    allr = [r for e in evals for r in e.results]

    def ev_(r: MutantResult) -> bool:
        return r.mutant.site.has_evidence

    def sc(pred: Selection = _every, *, default_flags: bool = False) -> dict[str, int]:
        caught, mutants = score(allr, pred, default_flags)
        return {"caught": caught, "mutants": mutants}

    def of_pair(pair: str) -> Selection:
        return lambda r: _pair(r) == pair

    def passed_as(how: str) -> Selection:
        return lambda r: r.mutant.how == how

    by_pair = {pair: sc(of_pair(pair)) for pair in sorted({_pair(r) for r in allr})}
    by_how = {how: sc(passed_as(how)) for how in sorted({r.mutant.how for r in allr})}
    sites: Counter[tuple[str, str]] = Counter()
    for r in allr:
        sites[(r.mutant.site.package, r.mutant.site.key)] += 1
    return {
        "packages": len(evals),
        "files": sum(e.files for e in evals),
        "call_sites": sum(e.sites for e in evals),
        "mutated_sites": len(sites),
        "crashes": sum(e.crashes for e in evals),
        "blocked_runs": sum(e.blocked for e in evals),
        "false_positives": sum(len(e.false_positives) for e in evals),
        "false_positives_default_flags": sum(
            1 for e in evals for f in e.false_positives if f["typed"] is not False
        ),
        "false_positives_plugin": sum(
            1 for e in evals for f in e.false_positives if f["source"] == "plugin"
        ),
        "files_that_opt_out_of_mypy": sum(len(e.opted_out_files) for e in evals),
        "false_positives_with_check_opted_out": sum(
            len(e.opted_out_false_positives) for e in evals
        ),
        "mutation": {
            "all": sc(),
            "with_evidence": sc(ev_),
            "without_evidence": sc(lambda r: not ev_(r)),
            "with_evidence_in_files_mypy_checks": sc(lambda r: ev_(r) and not r.opted_out),
            "in_files_that_opt_out_of_mypy": sc(lambda r: r.opted_out),
            "in_files_that_opt_out_of_mypy_caught_with_check_opted_out": opted_out_score(allr),
            "in_files_that_opt_out_of_mypy_with_evidence_caught_with_check_opted_out": (
                opted_out_score([r for r in allr if ev_(r)])
            ),
            "body_evidence": sc(lambda r: r.mutant.site.evidence_kind == "body"),
            "args_only_evidence": sc(lambda r: r.mutant.site.evidence_kind == "args"),
            "call_without_kwargs_or_interpret": sc(lambda r: not r.mutant.call_flags),
            "call_with_kwargs": sc(lambda r: "**kwargs" in r.mutant.call_flags),
            "call_with_interpret": sc(lambda r: "interpret" in r.mutant.call_flags),
            "plain_call_body_evidence": sc(
                lambda r: (
                    not r.mutant.call_flags
                    and r.mutant.how in ("ctor", "ctor+local-var")
                    and r.mutant.site.evidence_kind == "body"
                )
            ),
            "platform_swaps": sc(lambda r: r.mutant.kind == "platform"),
            "platform_swaps_with_evidence": sc(lambda r: r.mutant.kind == "platform" and ev_(r)),
            "platform_swaps_without_evidence": sc(
                lambda r: r.mutant.kind == "platform" and not ev_(r)
            ),
            "backend_swaps": sc(lambda r: r.mutant.kind == "backend"),
            "right_message": dict(caught=sum(r.message_ok for r in allr), mutants=len(allr)),
            "caught_by_plugin": dict(
                caught=sum("plugin" in r.caught_by for r in allr), mutants=len(allr)
            ),
            "caught_by_stubs_only": dict(
                caught=sum(r.caught_by == {"stubs"} for r in allr), mutants=len(allr)
            ),
            "default_flags": {
                "all": sc(default_flags=True),
                "with_evidence": sc(ev_, default_flags=True),
                "without_evidence": sc(lambda r: not ev_(r), default_flags=True),
            },
            "by_pair": by_pair,
            "by_how": by_how,
        },
        "mypy_seconds": {
            "baseline_cold": round(sum(e.baseline.seconds for e in evals if e.baseline), 1),
            "mutant_rounds": round(sum(r["result"].seconds for e in evals for r in e.rounds), 1),
            "check_opted_out": round(sum(r.seconds for e in evals for r in e.opted_out_runs), 1),
            "rounds": sum(len(e.rounds) for e in evals),
        },
    }


def package_row(e: PackageEval) -> dict[str, Any]:
    evid = score(e.results, lambda r: r.mutant.site.has_evidence)
    noev = score(e.results, lambda r: not r.mutant.site.has_evidence)
    return {
        "package": f"{e.package}=={e.version}",
        "skipped": e.skipped,
        "libraries_next_to_it": e.libraries,
        "files": e.files,
        "call_sites": e.sites,
        "mutated_sites": len({r.mutant.site.key for r in e.results}),
        "crashes": e.crashes,
        "blocked_runs": e.blocked,
        "false_positives": e.false_positives,
        "mutants": len(e.results),
        "caught": sum(r.caught for r in e.results),
        "caught_with_evidence": list(evid),
        "caught_without_evidence": list(noev),
        "caught_default_flags": list(score(e.results, default_flags=True)),
        "install_seconds": round(e.install_s, 1),
        "baseline_seconds": round(e.baseline.seconds, 1) if e.baseline else None,
        "round_seconds": [round(r["result"].seconds, 1) for r in e.rounds],
        "crash_output": [r.tail for r in e.all_runs() if r.crashed or r.blocked],
        "files_that_opt_out_of_mypy": e.opted_out_files,
        "false_positives_with_check_opted_out": e.opted_out_false_positives,
        "opted_out_seconds": [round(r.seconds, 1) for r in e.opted_out_runs],
        "unmutable": e.unmutable,
        "cli": e.cli,
        "unattributed_new_errors": e.unattributed,
        "dispatch_false_positives": e.dispatch_false_positives,
        "dispatch_skipped": e.dispatch_skipped,
        "dispatch_seconds": [round(r.seconds, 1) for r in e.dispatch_runs],
        "dispatch_crash_output": [r.tail for r in e.dispatch_runs if r.crashed or r.blocked],
        "dispatch_mutants": [
            {
                "id": r.mutant.id,
                "kind": r.mutant.kind,
                "form": r.mutant.form,
                "scope": r.mutant.scope,
                "where": f"{r.mutant.relpath}:{r.mutant.line}",
                "detail": r.mutant.detail,
                "spans": [f"{a}:{b}-{c}" for a, b, c in r.mutant.spans],
                "reaches": list(r.mutant.reaches),
                "typed": r.mutant.typed,
                "row": dispatch_row(r.mutant),
                "to_platform": r.mutant.to_platform,
                "kernels": [k.describe() for k in r.mutant.kernels],
                "real_bug": r.mutant.not_a_bug is None,
                "not_a_bug": r.mutant.not_a_bug,
                "registry": r.mutant.registry,
                "caught": r.caught,
                "messages": r.messages,
                "elsewhere": r.elsewhere,
                "crashed": r.crashed,
            }
            for r in e.dispatch
        ],
        "dispatch_registry_config": e.dispatch_registry_config,
        "mutants_detail": [
            {
                "id": r.mutant.id,
                "kind": r.mutant.kind,
                "how": r.mutant.how,
                "evidence": r.mutant.site.evidence_kind,
                "call_flags": list(r.mutant.call_flags),
                "entry_point": r.mutant.site.entry_point,
                "typed": r.mutant.typed,
                "caught": r.caught,
                "caught_by": sorted(r.caught_by),
                "message_ok": r.message_ok,
                "messages": r.messages,
                "elsewhere": r.elsewhere,
                "crashed": r.crashed,
                "opted_out": r.opted_out,
                "caught_with_check_opted_out": r.caught_with_check_opted_out,
            }
            for r in e.results
        ],
    }


def print_table(evals: list[PackageEval], summary: dict[str, Any]) -> None:
    hdr = (
        "package",
        "files",
        "sites",
        "crash",
        "FP",
        "mutants",
        "caught",
        "evidence",
        "no evidence",
        "time s",
    )
    rows = []
    for e in evals:
        if e.skipped:
            rows.append((e.package, "-", str(e.sites), "-", "-", "-", "-", "-", "-", "skipped"))
            continue
        rows.append(
            (
                e.package,
                str(e.files),
                str(e.sites),
                str(e.crashes + e.blocked),
                str(len(e.false_positives)),
                str(len(e.results)),
                ratio(*score(e.results)),
                ratio(*score(e.results, lambda r: r.mutant.site.has_evidence)),
                ratio(*score(e.results, lambda r: not r.mutant.site.has_evidence)),
                f"{e.baseline.seconds if e.baseline else 0:.0f}+{sum(r['result'].seconds for r in e.rounds):.0f}",
            )
        )
    m = summary["mutation"]
    rows.append(
        (
            "TOTAL",
            str(summary["files"]),
            str(summary["call_sites"]),
            str(summary["crashes"] + summary["blocked_runs"]),
            str(summary["false_positives"]),
            str(m["all"]["mutants"]),
            ratio(m["all"]["caught"], m["all"]["mutants"]),
            ratio(m["with_evidence"]["caught"], m["with_evidence"]["mutants"]),
            ratio(m["without_evidence"]["caught"], m["without_evidence"]["mutants"]),
            f"{summary['mypy_seconds']['baseline_cold']:.0f}+{summary['mypy_seconds']['mutant_rounds']:.0f}",
        )
    )
    widths = [max(len(r[i]) for r in [hdr, *rows]) for i in range(len(hdr))]

    def line(r: Sequence[str]) -> str:
        return "  ".join(
            c.ljust(w) if i == 0 else c.rjust(w) for i, (c, w) in enumerate(zip(r, widths))
        )

    print(line(hdr))
    for r in rows:
        print(line(r))
    print()
    for k in (
        "with_evidence_in_files_mypy_checks",
        "in_files_that_opt_out_of_mypy",
        "in_files_that_opt_out_of_mypy_caught_with_check_opted_out",
        "in_files_that_opt_out_of_mypy_with_evidence_caught_with_check_opted_out",
        "body_evidence",
        "args_only_evidence",
        "call_without_kwargs_or_interpret",
        "call_with_kwargs",
        "call_with_interpret",
        "plain_call_body_evidence",
        "platform_swaps",
        "platform_swaps_with_evidence",
        "platform_swaps_without_evidence",
        "backend_swaps",
        "right_message",
        "caught_by_plugin",
        "caught_by_stubs_only",
    ):
        print(f"  {k:40s} {ratio(m[k]['caught'], m[k]['mutants'])}")
    for k, v in m["default_flags"].items():
        print(f"  {'default mypy flags, ' + k:40s} {ratio(v['caught'], v['mutants'])}")
    print(
        "  by swap:",
        ", ".join(f"{p} {ratio(v['caught'], v['mutants'])}" for p, v in m["by_pair"].items()),
    )
    print(
        "  by passing:",
        ", ".join(f"{p} {ratio(v['caught'], v['mutants'])}" for p, v in m["by_how"].items()),
    )
    clis = [(e.package, e.cli) for e in evals if e.cli is not None]
    if clis:
        bad = [package for package, cli in clis if not cli.get("agrees_with_mypy")]
        print(
            f"  typed-pallas check (CLI) agrees with mypy+plugin on {len(clis) - len(bad)}/{len(clis)} packages"
            + (f"; differs: {', '.join(bad)}" if bad else "")
        )
    d = summary.get("dispatch")
    if d is not None:
        print("\ndispatch-site mutants (a new pallas-platform error in the decided region counts):")
        for k, v in d["by_row"].items():
            print(
                f"  {k:20s} {v['mutants']:4d} mutants, {v['real_bugs']:4d} real bugs, caught "
                f"{ratio(v['caught'], v['real_bugs'])}; not bugs caught: {v['caught_not_bugs']}"
            )
        w = d["by_kind"]["wrapper"]
        print(
            f"  {'wrapper':20s} {ratio(w['caught'], w['mutants'])} (params swaps at wrapper calls)"
        )
        print("  not bugs:", "; ".join(f"{k} {n}" for k, n in d["not_bugs"].items()))
        print(
            "  by form:",
            ", ".join(f"{k} {ratio(v['caught'], v['mutants'])}" for k, v in d["by_form"].items()),
        )
        print(
            f"  errors on unmodified dispatch files: {d['false_positives']}; crashes: {d['crashes']} "
            f"({d['runs']} runs, {d['mypy_seconds']:.0f} s)"
        )
        print("  sites not mutated:", "; ".join(f"{k} {n}" for k, n in d["sites_skipped"].items()))
        for e in evals:
            for d_result in e.dispatch:
                dm = d_result.mutant
                print(
                    f"    {'CAUGHT' if d_result.caught else 'missed'} {dm.kind}/{dm.form} {dm.relpath}:{dm.line} {dm.detail}"
                    + (f"  [not a bug: {dm.not_a_bug}]" if dm.not_a_bug else "")
                )
            for f in e.dispatch_false_positives:
                print(f"    FP {e.package}: {f['where']}: [{f['source']}] {f['message']}")
    fps = [(e.package, f) for e in evals for f in e.false_positives]
    if fps:
        print(f"\npallas-platform errors on unmodified code ({len(fps)}):")
        for pkg, f in fps:
            print(
                f"  {pkg}: {f['where']}: [{f['source']}] {f['message']}"
                + ("" if f["typed"] is not False else "  (untyped def)")
            )
    opted_fps = [(e.package, f) for e in evals for f in e.opted_out_false_positives]
    print(
        f"\npallas-platform errors on the unmodified files that opt out of mypy, with "
        f"--check-opted-out ({summary['files_that_opt_out_of_mypy']} files): {len(opted_fps)}"
    )
    for pkg, where in opted_fps:
        print(f"  {pkg}: {where}")
    for e in evals:
        for run in e.all_runs():
            if run.crashed or run.blocked:
                print(
                    f"\n{e.package}: mypy {'crashed' if run.crashed else 'stopped'} (rc={run.rc}):\n{run.tail[-1500:]}"
                )


def public_argv(argv: list[str] | None) -> list[str]:
    """The command line as recorded in the JSON: checkout paths (machine-specific) become
    ``NAME=<checkout>``."""
    out: list[str] = []
    for item in argv if argv is not None else sys.argv[1:]:
        if item.startswith("--checkout="):
            item = "--checkout=" + item.split("=", 2)[1] + "=<checkout>"
        elif out and out[-1] == "--checkout":
            item = item.partition("=")[0] + "=<checkout>"
        out.append(item)
    return out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m eval.corpus", description=__doc__.split("\n\n")[0])
    ap.add_argument("-p", "--package", action="append", help="only these packages (repeatable)")
    ap.add_argument(
        "--cache-dir",
        type=Path,
        default=DEFAULT_CACHE,
        help="installs and mypy caches (outside the repo)",
    )
    ap.add_argument(
        "--python", default=sys.executable, help="interpreter whose mypy and jax are used"
    )
    ap.add_argument("--plugin", default=PLUGIN, help="mypy plugin module (default: %(default)s)")
    ap.add_argument(
        "--pythonpath", action="append", default=[], help="extra PYTHONPATH entry for mypy"
    )
    ap.add_argument("--label", default="plugin", help="names the mypy cache (default: %(default)s)")
    ap.add_argument("--default-flags", action="store_true", help="no --check-untyped-defs")
    ap.add_argument("--no-mutants", action="store_true", help="unmodified code only")
    ap.add_argument(
        "--no-dispatch", action="store_true", help="no mutants at dispatch sites (step 4)"
    )
    ap.add_argument(
        "--site", action="append", help="only mutate these sites (relpath:line, repeatable)"
    )
    ap.add_argument(
        "--no-libraries",
        action="store_true",
        help="install no corpus package next to the packages that import it (each alone)",
    )
    ap.add_argument(
        "--no-library-calls", action="store_true", help="no library-call mutants (step 5)"
    )
    ap.add_argument(
        "--only-library-calls",
        action="store_true",
        help="step 5 only (library calls), no unmodified run of the Pallas files, no other mutants",
    )
    ap.add_argument(
        "--proofs",
        type=Path,
        action="append",
        default=[],
        help="eval.library_proofs's JSON (repeatable; default eval/results/"
        "library-proofs-pyXY.json and library-proofs-h200.json)",
    )
    ap.add_argument(
        "--checkout",
        action="append",
        default=[],
        metavar="NAME=PATH",
        help="a checkout of a library-sources.tsv row (step 5 on it; repeatable)",
    )
    ap.add_argument(
        "--cli",
        action="store_true",
        help="also run `typed-pallas check --output json` on the unmodified code and compare",
    )
    ap.add_argument(
        "--json",
        type=Path,
        default=None,
        help="where to write the JSON (default eval/results/corpus-pyXY.json, or "
        "library-calls-pyXY.json with --only-library-calls)",
    )
    ap.add_argument(
        "--sites", type=Path, default=None, help="survey table (default eval/corpus-sites.tsv)"
    )
    args = ap.parse_args(argv)
    args.cache_dir = args.cache_dir.expanduser().resolve()
    repo = Path(__file__).resolve().parent.parent
    if str(args.cache_dir).startswith(str(repo)):
        ap.error("--cache-dir must be outside the repository")
    sites = load_sites(args.sites) if args.sites else load_sites()
    args.corpus_versions = corpus_versions(sites)
    checkouts: dict[str, Path] = {}
    for item in args.checkout:
        name, sep, path = item.partition("=")
        if not sep or not Path(path).expanduser().is_dir():
            ap.error(f"--checkout {item!r}: expected NAME=PATH of a folder")
        checkouts[name] = Path(path).expanduser().resolve()
    by_pkg: dict[tuple[str, str], list[Site]] = defaultdict(list)
    for s in sites:
        by_pkg[(s.package, s.version)].append(s)
    chosen = sorted(by_pkg)
    if args.package:
        chosen = [k for k in chosen if k[0] in args.package]
    config = write_config(
        args.cache_dir / "work" / f"mypy-{args.label}.ini",
        args.plugin,
        check_untyped_defs=not args.default_flags,
    )
    tag = f"py{sys.version_info[0]}{sys.version_info[1]}-{args.label}"
    shutil.rmtree(args.cache_dir / "mypy" / tag, ignore_errors=True)  # every run starts cold
    shutil.rmtree(args.cache_dir / "mypy" / f"{tag}-dispatch", ignore_errors=True)
    shutil.rmtree(args.cache_dir / "mypy" / f"{tag}-library", ignore_errors=True)
    t0 = time.perf_counter()
    evals = []
    for pkg, ver in chosen:
        print(f"... {pkg}=={ver}", file=sys.stderr, flush=True)
        evals.append(evaluate_package(pkg, ver, by_pkg[(pkg, ver)], args, config))
    library_evals = [e.library for e in evals if e.library is not None]
    if checkouts:
        jax_version, _ = venv_jax(args.python)
        for row in load_checkout_sources():
            if row.name in checkouts and (row.jax == "-" or jax_version.startswith(row.jax)):
                print(f"... {row.name} ({row.repository}@{row.commit[:12]})", file=sys.stderr)
                library_evals.append(evaluate_checkout(row, checkouts[row.name], args, config))
    wall = time.perf_counter() - t0
    done = [e for e in evals if not e.skipped]
    summary = summarize(done)
    if not args.no_dispatch:
        summary["dispatch"] = summarize_dispatch(done)
    if library_evals:
        proofs = load_proofs(
            args.proofs
            or [
                RESULTS / f"library-proofs-py{sys.version_info[0]}{sys.version_info[1]}.json",
                RESULTS / "library-proofs-h200.json",
            ]
        )
        summary["library_calls"] = summarize_library(library_evals, proofs)
    summary["wall_seconds"] = round(wall, 1)
    if not args.only_library_calls:
        print_table(evals, summary)
    if library_evals:
        print_library(library_evals, summary["library_calls"])
    print(
        f"\nwall time {wall:.0f} s for {len(done)} packages "
        f"({summary['mypy_seconds']['rounds']} mutant rounds)"
    )
    py = subprocess.run(
        [
            args.python,
            "-c",
            "import sys, jax, mypy.version; "
            "print(sys.version.split()[0], jax.__version__, mypy.version.__version__)",
        ],
        capture_output=True,
        text=True,
    ).stdout.split()
    out = {
        "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "command": "python -m eval.corpus " + " ".join(public_argv(argv)),
        "python": py[0] if py else None,
        "jax": py[1] if len(py) > 1 else None,
        "mypy": py[2] if len(py) > 2 else None,
        "plugin": args.plugin,
        "mypy_flags": preset_flags(check_untyped_defs=not args.default_flags),
        "host": f"{_platform.machine()} {os.cpu_count()} cpu",
        "only_library_calls": args.only_library_calls,
        "summary": summary,
        "packages": [package_row(e) for e in evals],
        "library_sources": [library_row(e) for e in library_evals],
    }
    stem = "library-calls" if args.only_library_calls else "corpus"
    dest = args.json or RESULTS / f"{stem}-py{sys.version_info[0]}{sys.version_info[1]}.json"
    dest.parent.mkdir(parents=True, exist_ok=True)
    dest.write_text(json.dumps(out, indent=1) + "\n")
    print(f"JSON: {dest}")
    crashed = (
        summary["crashes"]
        or summary.get("dispatch", {}).get("crashes")
        or summary.get("library_calls", {}).get("crashes")
    )
    return 1 if crashed else 0


if __name__ == "__main__":
    sys.exit(main())
