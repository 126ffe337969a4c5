"""What one check of the language server runs and reports: ``typed-pallas check``'s steps.

:func:`plan` takes the steps ``typed-pallas check`` takes before mypy starts, with the
CLI's own functions: the paths must exist, the configuration is found and validated
as the plugin reads it (``check.configured_environment``, ``config.resolve_config``),
an empty selection checks nothing, mypy must be installed, the project's layout and
what its mypy configuration silences give the preset and mypy's ``--exclude`` options
(``project.find_layout``, ``project.read_silencing``, ``findings.preset_config``;
read again for every check, so an edit of the configuration is seen) and the cache is this
environment's (``findings.environment_cache``, shared with ``typed-pallas check``). It
gives the mypy command (``findings.mypy_command``), or a :class:`Stop`: the one line
``typed-pallas check`` would print on stderr, for the editor to show, and nothing run.
:func:`with_buffers` gives a plan its shadow files (a fresh process gets them as
``--shadow-file``: ``Plan.fresh_command``): the unsaved buffers', and, as with ``check
--check-opted-out``, a copy with the setting off of each file that opts out of mypy
(``# mypy: ignore-errors``; ``cli.opted_out``).

:func:`outcome` reads a run as ``check`` does: an excluded selection is no finding; a run
mypy did not complete (a syntax error while a line is being typed, a crash) keeps the
findings shown before and gives ``check``'s blocking line for the log; the project's own
unresolved imports are a warning; mypy's syntax errors that it went on after are
``check``'s warning lines, for the log; the findings shown are ``findings.select``'s, in
the checked paths (only ``pallas-platform`` ones in a file that opts out of mypy); files
that opt out and are not checked give ``check``'s note, for the log.

What it does not do: run mypy (``runner``) or talk to the editor (``server``).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from typed_pallas_mypy import config
from typed_pallas_mypy.cli import opted_out, project
from typed_pallas_mypy.cli.blocking import blocking_line, stopped_message
from typed_pallas_mypy.cli.check import (
    SLOW_NOTICE,
    _in_paths,
    _unresolved_own_imports,
    config_problem,
    configured_environment,
    missing_paths,
    mypy_config_problem,
    mypy_missing,
    only_platform_findings,
    opted_out_note,
    unread_warnings,
)
from typed_pallas_mypy.cli.findings import (
    NO_FILES_MESSAGE,
    REPORTED_MISSING_PACKAGES,
    MypyMessage,
    MypyRun,
    cache_is_warm,
    environment_cache,
    mypy_command,
    plugin_error_codes,
    preset_config,
    select,
    unread_code,
)

__all__ = ["Options", "Outcome", "Plan", "Stop", "outcome", "plan", "with_buffers"]

PROG: Final = "typed-pallas"
Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Options:
    """The server's command line: what ``typed-pallas check`` would be given."""

    paths: tuple[str, ...] = ()
    platforms: tuple[str, ...] = ()
    config_file: str | None = None
    cache_dir: str | None = None
    #: ``--check-opted-out`` / ``--no-check-opted-out`` (None: the configuration's)
    check_opted_out: bool | None = None


@dataclass
class Plan:
    """One check to run."""

    #: ``typed-pallas check``'s mypy command (no shadow files)
    command: list[str]
    #: (file, shadow file) for each unsaved buffer
    shadows: list[tuple[str, str]]
    env: dict[str, str]
    paths: list[str]
    cache_dir: str
    #: no cache yet: the run analyses jax first (about half a minute)
    cold: bool
    layout: project.Layout
    #: the preset (the server's own mypy.ini)
    config_file: str
    #: the plugin's configuration as it reads it (``PluginConfig.fingerprint``): mypy's
    #: fine-grained state keeps the plugin, so another configuration needs another state
    plugin_config: str = ""
    #: ``check_opted_out`` of the project's configuration
    check_opted_out: bool = False
    #: the files that opt out of mypy (``# mypy: ignore-errors``; their buffer's text
    #: where one is open), set by :func:`with_buffers`: given to mypy as copies with the
    #: setting off when ``check_opted_out``, else not checked (a note in the log)
    opted_out: list[str] = field(default_factory=list)
    #: mypy's options besides the preset file's (the project's ``exclude``), before the paths
    arguments: list[str] = field(default_factory=list)
    #: ``check``'s warnings about the project's mypy configuration, for the log
    warnings: list[str] = field(default_factory=list)

    @property
    def fresh_command(self) -> list[str]:
        """The command of a fresh mypy process: the shadow files before the paths."""
        shadow_args = [arg for pair in self.shadows for arg in ("--shadow-file", *pair)]
        return mypy_command(
            self.config_file, self.cache_dir, [*shadow_args, *self.arguments, *self.paths]
        )

    @property
    def slow_notice(self) -> str:
        """``check``'s line for a cold cache, without its ``typed-pallas:``."""
        return SLOW_NOTICE.format(prog=PROG, cache=self.cache_dir).removeprefix(f"{PROG}: ")


@dataclass
class Stop:
    """A check that does not run mypy: why, and what to show meanwhile."""

    message: str
    severity: Severity
    #: the findings to show now (None: keep those shown)
    findings: list[MypyMessage] | None = None


@dataclass
class Outcome:
    """What a run gives the editor."""

    #: the findings to show (None: keep those shown, the run did not complete)
    findings: list[MypyMessage] | None
    #: lines for the editor's log
    log: list[str] = field(default_factory=list)
    #: a warning to show the user (None: nothing to show)
    warning: str | None = None
    #: files not checked because they opt out of mypy (``check``'s note; for the log,
    #: once while it stays the same)
    opted_out_note: str | None = None


def plan(options: Options, workdir: str, shadows: Sequence[tuple[str, str]] = ()) -> Plan | Stop:
    """The check to run from the current folder (the project's root), or why not.

    ``workdir`` is the server's own folder (the preset file goes there); ``shadows``
    are (file, shadow file) pairs for the unsaved buffers.
    """
    paths = list(options.paths) or ["."]
    if (missing := missing_paths(paths)) is not None:
        return Stop(missing, "error")
    if options.config_file and not os.path.isfile(options.config_file):
        return Stop(
            f"--config {options.config_file}: no such file; name a pyproject.toml, mypy.ini, "
            ".mypy.ini or setup.cfg that exists",
            "error",
        )
    try:
        env = configured_environment(options.platforms or None, options.config_file)
        resolved = config.resolve_config(None, environ=env)
    except config.ConfigError as e:
        return Stop(config_problem(e), "error")
    if not project.python_files_in(paths):
        return Stop(f"no Python files in {' '.join(paths)}; nothing to check", "info", [])
    if (no_mypy := mypy_missing()) is not None:
        return Stop(no_mypy, "error")
    try:
        silencing = project.read_silencing()
    except project.MypyConfigError as e:
        return Stop(mypy_config_problem(e), "error")
    layout = project.find_layout(paths)
    preset = preset_config(
        mypy_path=layout.mypy_path,
        explicit_package_bases=layout.explicit_package_bases,
        own_modules=layout.own_modules,
        silencing=silencing,
        report_missing=REPORTED_MISSING_PACKAGES,  # the same mypy run as check's (warm cache)
    )
    ini = os.path.join(workdir, "mypy.ini")
    with open(ini, "w", encoding="utf-8") as f:
        f.write(preset)
    cache_dir = options.cache_dir or environment_cache()
    arguments = silencing.arguments()
    command = mypy_command(ini, cache_dir, [*arguments, *paths])
    cold = not cache_is_warm(cache_dir)
    stamp = json.dumps(resolved.fingerprint(), sort_keys=True, default=str)
    return Plan(
        command, list(shadows), env, paths, cache_dir, cold, layout, ini, stamp,
        resolved.check_opted_out if options.check_opted_out is None else options.check_opted_out,
        arguments=arguments, warnings=list(silencing.warnings),
    )  # fmt: skip


def with_buffers(
    planned: Plan, buffers: Mapping[str, str], write: Callable[[str, str], str]
) -> None:
    """Give ``planned`` its shadow files: one for each unsaved buffer (``buffers``: file
    -> text), and, with ``check_opted_out``, one with mypy's ``ignore_errors`` inline
    setting turned off (``opted_out.neutralised``) for each file of the checked paths
    that opts out, open or not (the buffer's text where one is open, as
    ``typed-pallas check --check-opted-out`` gives mypy the file's). ``write(file,
    text)`` writes a shadow and returns its path (``runner.Shadows.write``)."""
    texts = {os.path.abspath(path): text for path, text in buffers.items()}
    opted: list[str] = []
    for path in project.python_files(planned.paths):
        source = os.path.abspath(path)
        text = texts.get(source)
        if text is None:
            text = _inline_text(source)
        if not text or not opted_out.opts_out(text):
            continue
        opted.append(source)
        if planned.check_opted_out:
            neutral = opted_out.neutralised(text)
            if neutral is not None:
                texts[source] = neutral
    planned.opted_out = opted
    planned.shadows = [(path, write(path, text)) for path, text in texts.items()]


def _inline_text(path: str) -> str:
    """The file's text when it may hold mypy's inline settings, else "" (read as the
    server reads a buffer: UTF-8, line endings kept; "" when it cannot be read)."""
    try:
        with open(path, "rb") as f:
            data = f.read()
    except OSError:
        return ""
    if opted_out.INLINE_PREFIX.encode("ascii") not in data:
        return ""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return ""


def outcome(checked: Plan, run: MypyRun) -> Outcome:
    """What ``typed-pallas check`` would make of ``run``."""
    if (
        run.returncode == 2
        and not run.findings
        and NO_FILES_MESSAGE in (run.stderr + "\n".join(run.other_output))
    ):
        return Outcome([], [f"no Python files left in {' '.join(checked.paths)}; nothing to check"])
    if run.blocked:
        errors = [f for f in run.findings if f.severity == "error"]
        if not errors:
            stopped, _ = stopped_message(run.returncode, run.stderr)
            errors = [stopped]
        log = [blocking_line(errors), *run.other_output]
        if run.stderr:
            log.append(run.stderr.rstrip("\n"))
        return Outcome(None, log)
    warning = None
    unresolved = _unresolved_own_imports(run.findings)
    if unresolved:
        modules = sorted({module for module, _ in unresolved})
        where = ", ".join(f"{f.file}:{f.line}" for _, f in unresolved[:3])
        warning = (
            f"cannot resolve the project's own import(s) {', '.join(modules)} ({where}): "
            "findings that depend on them are missed; add the folder that holds them to "
            "MYPYPATH or to mypy_path"
        )
    # mypy's own syntax errors it went on after: check's warning lines, for the log
    log = [f"warning: {line}" for line in unread_warnings(unread_code(run.findings))]
    log += [f"warning: {line}" for line in checked.warnings]  # the mypy configuration's
    note = None
    if checked.opted_out and not checked.check_opted_out:
        note = opted_out_note(
            [os.path.relpath(path) for path in checked.opted_out],
            "--check-opted-out (or check_opted_out = true in [tool.typed-pallas])",
        ).removeprefix(f"{PROG}: ")
    found = run.findings
    if checked.check_opted_out and checked.opted_out:
        # the author opted out of mypy's other errors there
        found = only_platform_findings(found, dict.fromkeys(checked.opted_out, ""))
    shown = select(found, plugin_error_codes(), all_errors=False)
    shown = [f for f in shown if _in_paths(f.file, checked.paths)]
    shown.sort(key=lambda f: (f.file, f.line, f.column))
    return Outcome(shown, log, warning, note)
