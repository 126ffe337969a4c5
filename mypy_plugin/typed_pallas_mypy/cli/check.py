"""``typed-pallas check``: from the parsed arguments to the exit status.

What it does, in order: refuses missing paths; sets ``TYPED_PALLAS_PLATFORMS`` from
``--platform`` and ``TYPED_PALLAS_CONFIG`` from ``--config``, the caller's own
``TYPED_PALLAS_CONFIG``, or the project's file (found by
:func:`typed_pallas_mypy.config.find_config_file`, the search the plugin itself runs);
validates that configuration before mypy starts; refuses a file named in PATHS that is
not Python (``notes.txt``: mypy would read it as Python) and an empty selection (PATHS
with no Python file, or every one excluded: mypy's "There are no .py[i] files"), each
with exit status 2, so that a CI step that checked nothing fails; finds the project's layout
(``project.find_layout``: ``mypy_path``, a src layout, the project's own module names,
``explicit_package_bases`` where files share a module name, or one mypy run per group
of files where that is not enough, said in one note line)
and what the project's mypy configuration silences (``project.read_silencing``:
``disable_error_code``, ``enable_error_code``, ``ignore_errors``, globally and per
module, and ``exclude``; a setting there that mypy cannot use is an error, before mypy
starts), which the preset then carries, so that ``check`` is silent where mypy run with
that configuration is;
picks this environment's cache folder (``findings.environment_cache``) and says on
stderr when the run will be slow (no cache yet: jax is analysed first); runs mypy
(``findings.run_mypy``); warns when the project's own imports could not be resolved,
and when mypy went on after a syntax error (an annotation it could not read, such as
``-> (A, B)``: mypy's own error, not a finding, but findings that depend on it may be
missed; ``findings.unread_code``); shows the typed-pallas findings (or all, with
``--all-errors``) in the chosen format (``formats``); gives mypy a shadow copy of each
selected file that opts out of it (``# mypy: ignore-errors``, ``opted_out``) with
``--check-opted-out`` or ``check_opted_out = true``, and keeps only ``pallas-platform``
errors there, or else says on stderr how many such files were not checked; with ``--expect`` compares them
with the ``# expect`` comments (``expect``); and returns mypy's kind of exit status: 0
nothing found, 1 findings, 2 usage, configuration or blocking errors.

Bad input never ends in a traceback: each error is one line on stderr,
``typed-pallas: error: ...``, that says what is wrong and what to do (:func:`fail`). When
mypy stops before checking everything (a syntax error, a file it cannot read or decode,
a module it cannot find), every error it gave is shown in the chosen format (SARIF's
invocation says the run did not complete) and the line names the first one
(``blocking``). The checks before mypy (:func:`missing_paths`,
:func:`configured_environment`, :func:`mypy_missing`) are shared with
``typed-pallas platforms``.

What it does not do: parse the command line (``typed_pallas_mypy.cli``), or read the
project's other mypy settings (its ``plugins``, ``follow_imports``, ``strict``...: mypy
options go after ``--``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import sys
from collections.abc import Mapping, Sequence
from typing import Final

from typed_pallas_mypy import config
from typed_pallas_mypy.cli import opted_out, project
from typed_pallas_mypy.cli.blocking import blocking_line, stopped_message
from typed_pallas_mypy.cli.expect import report_expectations
from typed_pallas_mypy.cli.explain import doc_link
from typed_pallas_mypy.cli.findings import (
    MYPY_SUMMARY,
    NO_FILES_MESSAGE,
    REPORTED_MISSING_PACKAGES,
    MypyMessage,
    MypyRun,
    cache_is_warm,
    environment_cache,
    plugin_error_codes,
    preset_config,
    run_mypy,
    select,
    unread_code,
)
from typed_pallas_mypy.cli.formats import emit

__all__ = [
    "config_problem",
    "configured_environment",
    "fail",
    "missing_paths",
    "mypy_config_problem",
    "mypy_missing",
    "not_python_paths",
    "nothing_to_check",
    "only_platform_findings",
    "opted_out_note",
    "run_check",
    "unread_warnings",
]

#: the line for a cold cache (what the first run in an environment costs)
SLOW_NOTICE: Final = (
    "{prog}: first analysis of jax in this environment (no cache yet in {cache}); "
    "about half a minute, later runs take a few seconds"
)

PROG: Final = "typed-pallas"

#: the one error code shown in a file that opts out of mypy (``--check-opted-out``)
PLATFORM_CODE: Final = "pallas-platform"

#: mypy's error for a folder without a file to check, and the folder
_NO_FILES_IN: Final = re.compile(re.escape(NO_FILES_MESSAGE) + r" '([^']*)'")

#: how mypy's message starts for a type annotation or type comment it cannot read
UNREADABLE_ANNOTATION: Final = "Syntax error in type"


def fail(message: str) -> int:
    """A usage or input error: the one line ``typed-pallas: error: message`` on stderr; status 2."""
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def missing_paths(paths: Sequence[str]) -> str | None:
    """The error for PATHS that do not exist, or None."""
    missing = [p for p in paths if not os.path.exists(p)]
    if not missing:
        return None
    return f"no such file or directory: {', '.join(missing)}; name files or folders that exist"


def config_problem(error: config.ConfigError) -> str:
    """The error line for a bad configuration: what is wrong, where, and the page that explains it."""
    return f"{error} (see {doc_link('configuration')})"


def mypy_config_problem(error: project.MypyConfigError) -> str:
    """The error line for a silencing setting of the project's mypy configuration that
    mypy cannot use, and the page that explains which settings ``check`` reads."""
    return f"{error} (see {doc_link('configuration')})"


def configured_environment(
    platforms: Sequence[str] | None = None, config_file: str | None = None
) -> dict[str, str]:
    """The environment mypy runs with; raises ConfigError for a bad project file.

    ``platforms`` are ``--platform`` values; ``config_file`` (``--config``) wins, then
    the caller's ``TYPED_PALLAS_CONFIG``, then the project's file found from the current
    folder as the plugin would find it.
    """
    env = dict(os.environ)
    if platforms:
        names = [n.strip() for value in platforms for n in value.split(",") if n.strip()]
        env[config.PLATFORMS_ENV] = ",".join(names)
    config_path = config_file
    if not config_path and not env.get(config.CONFIG_ENV, "").strip():
        config_path = config.find_config_file(None)
    if config_path:
        env[config.CONFIG_ENV] = os.path.abspath(config_path)
    return env


def run_check(args: argparse.Namespace, passthrough: list[str]) -> int:
    """Run ``typed-pallas check`` with parsed ``args``; ``passthrough`` goes to mypy."""
    paths = args.paths or ["."]
    if (missing := missing_paths(paths)) is not None:
        return fail(missing)
    if args.config and not os.path.isfile(args.config):
        return fail(
            f"--config {args.config}: no such file; name a pyproject.toml, mypy.ini, "
            ".mypy.ini or setup.cfg that exists"
        )
    try:
        env = configured_environment(args.platform, args.config)
        configured = config.resolve_config(None, environ=env)
    except config.ConfigError as e:
        return fail(config_problem(e))
    check_opted_out = getattr(args, "check_opted_out", None)
    if check_opted_out is None:
        check_opted_out = configured.check_opted_out

    if (not_python := not_python_paths(paths)) is not None:
        return fail(not_python)
    if empty := [p for p in paths if not project.python_files_in([p])]:
        return fail(nothing_to_check(empty))

    if (no_mypy := mypy_missing()) is not None:
        return fail(no_mypy)

    try:
        silencing = project.read_silencing()
    except project.MypyConfigError as e:
        return fail(mypy_config_problem(e))
    for line in silencing.warnings:
        print(f"{PROG}: warning: {line}", file=sys.stderr)
    layout = project.find_layout(paths, exclude=silencing.exclude)
    if (note := layout.note()) is not None:
        print(f"{PROG}: note: {note}", file=sys.stderr)
    preset = preset_config(
        mypy_path=layout.mypy_path,
        explicit_package_bases=layout.explicit_package_bases,
        own_modules=layout.own_modules,
        report_missing=REPORTED_MISSING_PACKAGES,
        silencing=silencing,
    )
    if args.verbose:
        for folder, origin in zip(layout.mypy_path, layout.origins, strict=True):
            print(f"{PROG}: mypy_path += {folder} ({origin})", file=sys.stderr)
        for line in silencing.describe():
            print(f"{PROG}: {line}", file=sys.stderr)
    cache_dir = args.cache_dir or environment_cache()
    if not cache_is_warm(cache_dir):
        print(SLOW_NOTICE.format(prog=PROG, cache=cache_dir), file=sys.stderr, flush=True)
    opted = opted_out.opted_out_files(project.python_files(paths))
    with opted_out.shadow_folder() as folder:
        copies = opted_out.shadow_copies(opted, folder) if check_opted_out else {}
        run = _run_groups(
            layout.groups or (paths,),
            project.group_aliases(
                layout.groups, project.package_bases(layout.mypy_path, os.getcwd())
            ),
            [*opted_out.shadow_arguments(copies), *silencing.arguments(), *passthrough],
            cache_dir=cache_dir,
            env=env,
            verbose=args.verbose,
            preset=preset,
        )
    if copies:  # the author opted out of mypy's other errors there
        had_errors = _errors(run.findings)
        run.findings = only_platform_findings(run.findings, copies)
        if run.returncode == 1 and had_errors and not _errors(run.findings):
            run.returncode = 0  # mypy's status had they stayed hidden: not a run that failed
    said = run.stderr + "\n".join(run.other_output)
    if run.returncode == 2 and not run.findings and NO_FILES_MESSAGE in said:
        # mypy's exclude patterns left a folder of PATHS without a file
        found = _NO_FILES_IN.search(said)
        return fail(nothing_to_check([found[1]] if found else paths, excluded=True))
    if run.blocked:
        return _report_blocked(run, args)
    unresolved = _unresolved_own_imports(run.findings)
    missing_installed = [(m, f) for m, f in unresolved if _in_reported_package(m)]
    unresolved = [(m, f) for m, f in unresolved if not _in_reported_package(m)]
    if missing_installed:
        _warn_missing_installed(missing_installed)
    if unresolved:
        _warn_unresolved(unresolved, layout)
    unread = unread_code(run.findings)
    if unread and not args.all_errors:  # --all-errors shows them as mypy's errors
        _warn_unread(unread)
    if opted and not check_opted_out:
        print(opted_out_note(opted), file=sys.stderr)
    shown = select(run.findings, plugin_error_codes(), args.all_errors)
    shown = [f for f in shown if _in_paths(f.file, paths)]
    shown.sort(key=lambda f: (f.file, f.line, f.column))
    emit(shown, args.output, args.all_errors, sys.stdout)
    expect_ok = None
    if args.expect:
        stream = sys.stderr if args.output == "json" else sys.stdout
        expect_ok = report_expectations(shown, paths, stream)
    if args.verbose:
        for line in run.other_output:
            print(line, file=sys.stderr)
        if run.stderr:
            sys.stderr.write(run.stderr)
    if expect_ok is not None:
        return 0 if expect_ok else 1
    return 1 if any(f.severity == "error" for f in shown) else 0


def opted_out_note(opted: Sequence[str], option: str = "--check-opted-out") -> str:
    """The line for the files that were not checked because they opt out of mypy
    (``option``: how to check them)."""
    one = len(opted) == 1
    names = ", ".join(opted[:3]) + (", ..." if len(opted) > 3 else "")
    return (
        f"{PROG}: note: {len(opted)} file{'' if one else 's'} not checked ({names}): "
        f"{'it opts' if one else 'they opt'} out of mypy with '# mypy: ignore-errors', "
        f"which hides every error there; {option} checks "
        f"{'it' if one else 'them'} for pallas-platform only"
    )


def only_platform_findings(
    found: Sequence[MypyMessage], copies: Mapping[str, str]
) -> list[MypyMessage]:
    """``found`` without what mypy said in the files given as shadow copies (``copies``)
    other than ``pallas-platform`` errors (with their notes): those files opt out of
    mypy's errors, also under ``--all-errors``."""
    shadowed = {os.path.abspath(path) for path in copies}
    return [
        f
        for f in found
        if not f.file
        or os.path.abspath(f.file) not in shadowed
        or (f.severity == "error" and f.code == PLATFORM_CODE)
    ]


def _run_groups(
    groups: Sequence[Sequence[str]],
    aliases: Sequence[Mapping[str, str]],
    mypy_arguments: Sequence[str],
    *,
    cache_dir: str,
    env: Mapping[str, str],
    verbose: bool,
    preset: str,
) -> MypyRun:
    """mypy over each group of paths in turn (one group: PATHS; several: the files of
    ``project.Layout.groups``, in which no two share a module name), as one run: the
    findings of all (each once: a module two groups import is analysed in both; a
    finding mypy's cache repeats under another group's file of the same module name,
    ``aliases``, is this group's file's), the worst exit status; a run that did not check
    everything stops there and is the result."""
    merged: MypyRun | None = None
    seen: set[tuple[object, ...]] = set()
    for index, group in enumerate(groups):
        run = run_mypy(
            group, mypy_arguments, cache_dir=cache_dir, env=env, verbose=verbose, preset=preset
        )
        if run.blocked:
            return run
        fresh = []
        renamed = aliases[index] if index < len(aliases) else {}
        for f in run.findings:
            if f.file and (alias := renamed.get(os.path.normpath(f.file))) is not None:
                f.file = alias
            key = (f.file, f.line, f.column, f.severity, f.code, f.message, tuple(f.notes))
            if key not in seen:
                seen.add(key)
                fresh.append(f)
        if merged is None:
            run.findings = fresh
            merged = run
        else:
            merged.findings += fresh
            merged.other_output += run.other_output
            merged.stderr += run.stderr
            merged.returncode = max(merged.returncode, run.returncode)
    assert merged is not None, "at least one group"
    return merged


def _errors(found: Sequence[MypyMessage]) -> bool:
    return any(f.severity == "error" for f in found)


def _report_blocked(run: MypyRun, args: argparse.Namespace) -> int:
    """mypy did not check everything: every error it gave, in the chosen format (a run that
    stopped without one is shown with :func:`blocking.stopped_message`), one line on
    stderr that says which error stopped it and what to do, then mypy's other output
    (a crash's traceback); exit status 2.

    All of mypy's errors are shown, not only typed-pallas findings and not only those in
    PATHS: a blocking error in a module PATHS import stops the run too.
    """
    shown = list(run.findings)  # in mypy's order: the first is the one that stopped it
    leftover = run.stderr
    if not any(f.severity == "error" for f in shown):
        stopped, leftover = stopped_message(run.returncode, run.stderr)
        shown.append(stopped)
    emit(shown, args.output, args.all_errors, sys.stdout, summary=False, complete=False)
    print(blocking_line([f for f in shown if f.severity == "error"]), file=sys.stderr)
    for line in run.other_output:
        if not MYPY_SUMMARY.match(line):  # the summary is the formats' own
            print(line, file=sys.stderr)
    if leftover:
        sys.stderr.write(leftover)
    return 2


def mypy_missing() -> str | None:
    """The error for an environment without mypy (the ``mypy`` extra), or None."""
    if importlib.util.find_spec("mypy") is not None:
        return None
    return (
        f"mypy is not installed here; install it with: pip install '{_mypy_requirement()}' "
        "(typed-pallas[mypy])"
    )


def _in_paths(file: str, paths: Sequence[str]) -> bool:
    """Whether a finding's file is one of the checked paths or inside one (the
    project's other modules are analysed too, for what the plugin reads there)."""
    if not file:
        return True
    target = os.path.abspath(file)
    for path in paths:
        root = os.path.abspath(path)
        if target == root or target.startswith(root.rstrip(os.sep) + os.sep):
            return True
    return False


def not_python_paths(paths: Sequence[str]) -> str | None:
    """The error for files named in PATHS that are not Python (``project.is_python_file``), or None."""
    named = [p for p in paths if os.path.isfile(p) and not project.is_python_file(p)]
    if not named:
        return None
    one = len(named) == 1
    return (
        f"{', '.join(named)}: not {'a Python file' if one else 'Python files'} (no .py or .pyi "
        "suffix, no python #! line); nothing was checked: name Python files, or folders that "
        "hold them"
    )


def nothing_to_check(paths: Sequence[str], *, excluded: bool = False) -> str:
    """The error for an empty selection (mypy's "There are no .py[i] files"): PATHS hold no
    Python file, or (``excluded``) mypy's exclude patterns left none."""
    where = " ".join(paths)
    if excluded:
        return (
            f"there are no .py[i] files left in {where} once mypy's exclude patterns are "
            "applied; nothing was checked: name files or folders that are not excluded"
        )
    return (
        f"there are no .py[i] files in {where}; nothing was checked: name files or folders "
        "that hold Python code"
    )


def _unresolved_own_imports(found: list[MypyMessage]) -> list[tuple[str, MypyMessage]]:
    """(module, the error) for each import of the project's own modules mypy could not resolve."""
    out = []
    for finding in found:
        module = project.unresolved_module(finding.code, finding.message)
        if module is not None and finding.severity == "error":
            out.append((module, finding))
    return out


def _in_reported_package(module: str) -> bool:
    return any(module == p or module.startswith(p + ".") for p in REPORTED_MISSING_PACKAGES)


def _warn_missing_installed(missing: list[tuple[str, MypyMessage]]) -> None:
    """One warning per module of an installed package (jax) that the installed release
    does not have: calls into it cannot be checked."""
    from typed_pallas._versions import installed_version

    by_module: dict[str, list[MypyMessage]] = {}
    for module, finding in missing:
        by_module.setdefault(module, []).append(finding)
    for module, findings in sorted(by_module.items()):
        package = module.split(".", 1)[0]
        version = installed_version(package) or "not installed"
        where = ", ".join(f"{f.file}:{f.line}" for f in findings[:3]) + (
            ", ..." if len(findings) > 3 else ""
        )
        print(
            f"{PROG}: warning: {module} ({where}) is not in the installed {package} "
            f"({version}): calls into it are not checked; a module that a {package} release "
            "removed (jax 0.12.1 removed jax.experimental.pallas.ops.gpu's Triton ops) fails "
            "at import too",
            file=sys.stderr,
        )


def _warn_unresolved(unresolved: list[tuple[str, MypyMessage]], layout: project.Layout) -> None:
    modules = sorted({module for module, _ in unresolved})
    where = ", ".join(f"{f.file}:{f.line}" for _, f in unresolved[:3]) + (
        ", ..." if len(unresolved) > 3 else ""
    )
    searched = ", ".join(layout.mypy_path) if layout.mypy_path else "the checked files' own folders"
    print(
        f"{PROG}: warning: cannot resolve the project's own import{'s' if len(modules) > 1 else ''} "
        f"{', '.join(modules)} ({where}): what {'they define' if len(modules) > 1 else 'it defines'} is Any, "
        f"so findings that depend on {'them' if len(modules) > 1 else 'it'} are missed.\n"
        f"{PROG}: searched the installed packages and {searched}; add the folder that holds "
        "the package to MYPYPATH, check the package's folder (`typed-pallas check src/`), or "
        "silence a deliberate one with `# type: ignore[import-not-found]`",
        file=sys.stderr,
    )


def _warn_unread(unread: list[MypyMessage]) -> None:
    for line in unread_warnings(unread):
        print(f"{PROG}: warning: {line}", file=sys.stderr)


def unread_warnings(unread: list[MypyMessage]) -> list[str]:
    """One warning for the annotations mypy could not read, one for its other syntax
    errors that it went on after: where, mypy's message (the first one's), what it means
    (``check`` prints them on stderr, ``typed-pallas lsp`` logs them)."""
    annotations = [f for f in unread if f.message.startswith(UNREADABLE_ANNOTATION)]
    others = [f for f in unread if not f.message.startswith(UNREADABLE_ANNOTATION)]
    lines = []
    if annotations:
        one = len(annotations) == 1
        what = "the type annotation" if one else f"{len(annotations)} type annotations,"
        it = "it" if one else "them"
        lines.append(
            f"cannot read {what} at {_unread_where(annotations)}: mypy "
            f"takes {it} as Any, so findings that depend on {it} may be missed; fix {it}, or "
            f"see mypy's message{'' if one else 's'} with --all-errors"
        )
    if others:
        one = len(others) == 1
        what = "a syntax error" if one else f"{len(others)} syntax errors,"
        they = (
            "it is mypy's own error, not a typed-pallas finding"
            if one
            else "they are mypy's own errors, not typed-pallas findings"
        )
        lines.append(
            f"mypy went on after {what} at {_unread_where(others)}: {they}, "
            "but findings that depend on that code may be missed; "
            f"fix {'it' if one else 'them'}, or see mypy's message{'' if one else 's'} with "
            "--all-errors"
        )
    return lines


def _unread_where(unread: list[MypyMessage]) -> str:
    """``a.py:9:21 (message; note)``, or ``a.py:9:21, b.py:3:4, ... (the first: message)``."""
    first = unread[0]
    said = "; ".join([first.message.rstrip("."), *first.notes])
    where = ", ".join(f"{f.file}:{f.line}:{f.column}" for f in unread[:3])
    if len(unread) == 1:
        return f"{where} ({said})"
    more = ", ..." if len(unread) > 3 else ""
    return f"{where}{more} (the first: {said})"


def _mypy_requirement() -> str:
    """The mypy requirement of the installed typed-pallas's ``mypy`` extra (``mypy>=2.4,<2.5``)."""
    from importlib.metadata import PackageNotFoundError, requires

    try:
        found = requires("typed-pallas") or []
    except PackageNotFoundError:
        found = []
    for requirement in found:
        spec, _, marker = requirement.partition(";")
        if spec.strip().startswith("mypy") and "mypy" in marker.split("==")[-1]:
            return spec.replace(" ", "")
    return "mypy"
