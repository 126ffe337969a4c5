"""What one check of the language server runs and reports: ``typed-pallas check``'s steps.

:func:`plan` takes the steps ``typed-pallas check`` takes before mypy starts, with the
CLI's own functions: the paths must exist, the configuration is found and validated
as the plugin reads it (``check.configured_environment``, ``config.resolve_config``),
an empty selection checks nothing, mypy must be installed, the project's layout gives
the preset (``project.find_layout``, ``findings.preset_config``) and the cache is this
environment's (``findings.environment_cache``, shared with ``typed-pallas check``). It
gives the mypy command (``findings.mypy_command``, plus one ``--shadow-file`` per
unsaved buffer), or a :class:`Stop`: the one line ``typed-pallas check`` would print on
stderr, for the editor to show, and nothing run.

:func:`outcome` reads a run as ``check`` does: an excluded selection is no finding; a run
mypy did not complete (a syntax error while a line is being typed, a crash) keeps the
findings shown before and gives ``check``'s blocking line for the log; the project's own
unresolved imports are a warning; mypy's syntax errors that it went on after are
``check``'s warning lines, for the log; the findings shown are ``findings.select``'s, in
the checked paths.

What it does not do: run mypy (``runner``) or talk to the editor (``server``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Final, Literal

from typed_pallas_mypy import config
from typed_pallas_mypy.cli import project
from typed_pallas_mypy.cli.blocking import blocking_line, stopped_message
from typed_pallas_mypy.cli.check import (
    SLOW_NOTICE,
    _in_paths,
    _unresolved_own_imports,
    config_problem,
    configured_environment,
    missing_paths,
    mypy_missing,
    unread_warnings,
)
from typed_pallas_mypy.cli.findings import (
    NO_FILES_MESSAGE,
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

__all__ = ["Options", "Outcome", "Plan", "Stop", "outcome", "plan"]

PROG: Final = "typed-pallas"
Severity = Literal["error", "warning", "info"]


@dataclass(frozen=True)
class Options:
    """The server's command line: what ``typed-pallas check`` would be given."""

    paths: tuple[str, ...] = ()
    platforms: tuple[str, ...] = ()
    config_file: str | None = None
    cache_dir: str | None = None


@dataclass
class Plan:
    """One check to run."""

    command: list[str]
    env: dict[str, str]
    paths: list[str]
    cache_dir: str
    #: no cache yet: the run analyses jax first (about half a minute)
    cold: bool
    layout: project.Layout

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
        config.resolve_config(None, environ=env)
    except config.ConfigError as e:
        return Stop(config_problem(e), "error")
    if not project.python_files_in(paths):
        return Stop(f"no Python files in {' '.join(paths)}; nothing to check", "info", [])
    if (no_mypy := mypy_missing()) is not None:
        return Stop(no_mypy, "error")
    layout = project.find_layout(paths)
    preset = preset_config(
        mypy_path=layout.mypy_path,
        explicit_package_bases=layout.explicit_package_bases,
        own_modules=layout.own_modules,
    )
    ini = os.path.join(workdir, "mypy.ini")
    with open(ini, "w", encoding="utf-8") as f:
        f.write(preset)
    cache_dir = options.cache_dir or environment_cache()
    shadow_args = [arg for pair in shadows for arg in ("--shadow-file", *pair)]
    command = mypy_command(ini, cache_dir, [*shadow_args, *paths])
    return Plan(command, env, paths, cache_dir, not cache_is_warm(cache_dir), layout)


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
    shown = select(run.findings, plugin_error_codes(), all_errors=False)
    shown = [f for f in shown if _in_paths(f.file, checked.paths)]
    shown.sort(key=lambda f: (f.file, f.line, f.column))
    return Outcome(shown, log, warning)
