"""``typed-pallas platforms PATHS``: from the parsed arguments to the exit status.

What it does, in order, with ``check``'s own checks and one-line errors
(``typed-pallas: error: ...``, exit status 2): refuses missing PATHS; validates the
typed-pallas configuration (the project's file, ``TYPED_PALLAS_CONFIG``,
``TYPED_PALLAS_PLATFORMS``, which ``--platform`` sets as for ``check``); handles an empty selection as ``check`` does (one line on
stderr, the format's empty output, exit status 0); needs mypy installed; builds the map
(:func:`typed_pallas_mypy.platform_map.build_map`) and prints it. When mypy cannot
analyse PATHS (a syntax error, a file it cannot read or decode, two files with one
module name) it prints the one line that names the first such error and what to do
(``blocking``), and no map: a map of the other files would read as complete.

``--lock FILE`` writes the map's public names that lower only for some platforms, each
with its reason (``platform_map.render_lock``) instead of printing the map; ``--check FILE``
compares them with FILE: 0 unchanged, 1 the names whose platforms changed (old -> new) on
stdout, 2 a missing, unreadable or foreign FILE (one line, checked before anything is read).

What it does not do: infer anything (``platform_map``), or report mypy's other errors.
"""

from __future__ import annotations

import os
import sys
from typing import Any, Final

from typed_pallas_mypy import config, platform_map
from typed_pallas_mypy.cli import project
from typed_pallas_mypy.cli.blocking import blocking_line, stopped_message
from typed_pallas_mypy.cli.check import (
    config_problem,
    configured_environment,
    fail,
    missing_paths,
    mypy_missing,
)
from typed_pallas_mypy.cli.findings import NO_FILES_MESSAGE, parse_mypy_text
from typed_pallas_mypy.platform_map import OUTPUTS, render

__all__ = ["add_parser", "run_platforms"]

PROG: Final = "typed-pallas"


def add_parser(sub: Any) -> None:
    """The ``platforms`` subcommand, for :func:`typed_pallas_mypy.cli.build_parser`."""
    p = sub.add_parser(
        "platforms",
        help="show the inferred platform map of PATHS (`typed-pallas explain platforms`)",
        description=(
            "Show what the plugin infers for the files under PATHS: each function's platform "
            "requirement and why, and where the platform is decided against one. "
            "With --lock FILE, write the public names' platforms to FILE instead; with --check "
            "FILE, compare them with it (a library's CI: a change that makes a public function "
            "lower for fewer platforms, or drops a restriction, fails). "
            "Exit status: 0 shown (or no Python file in PATHS; or --check: unchanged), 1 "
            "--check: a public name's platforms changed, 2 usage, configuration or "
            "input error (mypy cannot analyse a file; a broken lock file)."
        ),
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to map")
    p.add_argument(
        "--library",
        metavar="MODULE",
        help="instead, map an installed library: every public function under MODULE that "
        "lowers only for some platforms, and why (e.g. jax.experimental.pallas.ops)",
    )
    p.add_argument(
        "--platform",
        action="append",
        metavar="P",
        help="a platform the code may lower for, as for `typed-pallas check` (repeat, or a "
        f"comma list); replaces the configured top-level platforms (sets {config.PLATFORMS_ENV})",
    )
    p.add_argument(
        "--output", "-o", choices=OUTPUTS, default=OUTPUTS[0], help="output format (default: text)"
    )
    contract = p.add_mutually_exclusive_group()
    contract.add_argument(
        "--lock",
        metavar="FILE",
        help="instead of showing the map, write FILE: each public name that lowers only for "
        "some platforms, its platforms and why, sorted, with no line numbers (commit it)",
    )
    contract.add_argument(
        "--check",
        metavar="FILE",
        help="compare with the lock FILE: exit 0 when every public name's platforms are the "
        "same, 1 naming each one whose platforms changed (old -> new), 2 when FILE is not a "
        "readable lock",
    )


def run_platforms(args: Any) -> int:
    """Run ``typed-pallas platforms`` with parsed ``args``."""
    paths: list[str] = args.paths
    if args.library is not None:
        return _library(args.library, paths, args)
    if args.check is not None:
        try:
            platform_map.read_lock(args.check)  # a broken lock fails before mypy runs
        except platform_map.LockError as e:
            return fail(str(e))
    if not paths:
        return fail(
            "name the files or folders to map, or --library MODULE; see `typed-pallas platforms --help`"
        )
    if (missing := missing_paths(paths)) is not None:
        return fail(missing)
    try:
        env = configured_environment(args.platform)
        config.resolve_config(None, environ=env)
    except config.ConfigError as e:
        return fail(config_problem(e))
    if not project.python_files_in(paths):
        if args.lock is not None or args.check is not None:
            print(f"{PROG}: no Python files in {' '.join(paths)}; nothing to lock", file=sys.stderr)
            return 2
        return _nothing_to_map(paths, args.output)
    if (no_mypy := mypy_missing()) is not None:
        return fail(no_mypy)

    saved = os.environ.get(config.PLATFORMS_ENV)
    if args.platform:  # build_map reads the configuration as the plugin does: from the environment
        os.environ[config.PLATFORMS_ENV] = env[config.PLATFORMS_ENV]
    try:
        maps = platform_map.build_map(paths)
    except config.ConfigError as e:  # pragma: no cover - validated above
        return fail(config_problem(e))
    except platform_map.MapError as e:
        if any(NO_FILES_MESSAGE in line for line in e.lines):
            return _nothing_to_map(paths, args.output)
        messages, other = parse_mypy_text("\n".join(e.lines))
        errors = [m for m in messages if m.severity == "error"]
        if not errors:
            errors = [stopped_message(2, "\n".join(other))[0]]
        print(blocking_line(errors), file=sys.stderr)
        return 2
    finally:
        if saved is None:
            os.environ.pop(config.PLATFORMS_ENV, None)
        else:
            os.environ[config.PLATFORMS_ENV] = saved
    return _emit(maps, args, f"{PROG} platforms {' '.join(paths)}")


def _emit(maps: list[platform_map.ModuleMap], args: Any, made_by: str) -> int:
    """Show ``maps``, or write them as a lock (``--lock``), or compare them with one
    (``--check``)."""
    if args.lock is not None:
        entries = platform_map.lock_entries(maps)
        try:
            with open(args.lock, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(platform_map.render_lock(entries, made_by))
        except OSError as e:
            return fail(f"{args.lock}: cannot write the lock file ({e.strerror or e})")
        print(
            f"{PROG}: wrote {args.lock}: {len(entries)} public name(s) that lower only for "
            "some platforms",
            file=sys.stderr,
        )
        return 0
    if args.check is not None:
        try:
            old = platform_map.read_lock(args.check)
        except platform_map.LockError as e:
            return fail(str(e))
        changed, reasons = platform_map.compare_locks(old, platform_map.lock_entries(maps))
        if reasons:
            print(
                f"{PROG}: {len(reasons)} public name(s) lower for the same platforms for "
                f"another reason than {args.check} says (refresh it with --lock):",
                file=sys.stderr,
            )
            for line in reasons:
                print(f"  {line}", file=sys.stderr)
        if not changed:
            print(f"{PROG}: platforms unchanged since {args.check}", file=sys.stderr)
            return 0
        print(f"{PROG}: the platforms of {len(changed)} public name(s) changed since {args.check}:")
        for line in changed:
            print(f"  {line}")
        print(f"If that is intended, write the lock again: {made_by} --lock {args.check}")
        return 1
    sys.stdout.write(render(maps, args.output))
    return 0


def _library(module: str, paths: list[str], args: Any) -> int:
    """``--library MODULE``: the map of an installed library."""
    if paths:
        return fail(
            "--library maps an installed library, not PATHS; run it without "
            f"{' '.join(paths)}, or leave --library out"
        )
    if args.check is not None:
        try:
            platform_map.read_lock(args.check)  # a broken lock fails before the library is read
        except platform_map.LockError as e:
            return fail(str(e))
    try:
        maps = platform_map.library_map(module)
    except platform_map.MapError as e:
        return fail(f"{e.lines[0]}; name an installed module, e.g. jax.experimental.pallas.ops")
    return _emit(maps, args, f"{PROG} platforms --library {module}")


def _nothing_to_map(paths: list[str], output: str) -> int:
    print(f"{PROG}: no Python files in {' '.join(paths)}; nothing to map", file=sys.stderr)
    if output != "text":  # json, mermaid: still a valid (empty) document; text: nothing, as check
        sys.stdout.write(render([], output))
    return 0
