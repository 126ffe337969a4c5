"""``typed-pallas check``: from the parsed arguments to the exit status.

What it does, in order: refuses missing paths; sets ``TYPED_PALLAS_PLATFORMS`` from
``--platform`` and ``TYPED_PALLAS_CONFIG`` from ``--config``, the caller's own
``TYPED_PALLAS_CONFIG``, or the project's file (found by
:func:`typed_pallas_mypy.config.find_config_file`, the search the plugin itself runs);
validates that configuration before mypy starts; runs mypy (``findings.run_mypy``);
shows the typed-pallas findings (or all, with ``--all-errors``) in the chosen format
(``formats``); with ``--expect`` compares them with the ``# expect`` comments
(``expect``); and returns mypy's kind of exit status: 0 nothing found, 1 findings, 2
usage, configuration or blocking errors.

What it does not do: parse the command line (``typed_pallas_mypy.cli``), or read the
project's ``[tool.mypy]`` settings (mypy options go after ``--``).
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import sys
from typing import Final

from typed_pallas_mypy import config
from typed_pallas_mypy.cli.expect import report_expectations
from typed_pallas_mypy.cli.findings import DEFAULT_CACHE, plugin_error_codes, run_mypy, select
from typed_pallas_mypy.cli.formats import emit

__all__ = ["fail", "run_check"]

PROG: Final = "typed-pallas"


def fail(parser: argparse.ArgumentParser, message: str) -> int:
    """A usage error: the usage line and ``typed-pallas: error: message`` on stderr; status 2."""
    parser.print_usage(sys.stderr)
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def _environment(args: argparse.Namespace) -> dict[str, str]:
    """The mypy subprocess's environment; raises ConfigError for a bad project file.

    ``--config`` wins, then the caller's ``TYPED_PALLAS_CONFIG``, then the project's
    file found from the current folder as the plugin would find it.
    """
    env = dict(os.environ)
    if args.platform:
        names = [n.strip() for value in args.platform for n in value.split(",") if n.strip()]
        env[config.PLATFORMS_ENV] = ",".join(names)
    config_path = args.config
    if not config_path and not env.get(config.CONFIG_ENV, "").strip():
        config_path = config.find_config_file(None)
    if config_path:
        env[config.CONFIG_ENV] = os.path.abspath(config_path)
    return env


def run_check(args: argparse.Namespace, passthrough: list[str], parser: argparse.ArgumentParser) -> int:
    """Run ``typed-pallas check`` with parsed ``args``; ``passthrough`` goes to mypy."""
    paths = args.paths or ["."]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        return fail(parser, f"no such file or directory: {', '.join(missing)}")
    if args.config and not os.path.isfile(args.config):
        return fail(parser, f"--config {args.config}: no such file")
    try:
        env = _environment(args)
        config.resolve_config(None, environ=env)
    except config.ConfigError as e:
        return fail(parser, f"{e}\n(see docs/configuration.md, or `typed-pallas check --help`)")

    if importlib.util.find_spec("mypy") is None:
        return fail(parser, "mypy is not installed here; install it with: pip install 'typed-pallas[mypy]'")

    run = run_mypy(paths, passthrough, cache_dir=args.cache_dir or DEFAULT_CACHE, env=env, verbose=args.verbose)
    blocked = run.blocked
    shown = run.findings if blocked else select(run.findings, plugin_error_codes(), args.all_errors)
    shown.sort(key=lambda f: (f.file, f.line, f.column))
    emit(shown, args.output, args.all_errors, sys.stdout, summary=not blocked)
    expect_ok = None
    if args.expect and not blocked:
        stream = sys.stderr if args.output == "json" else sys.stdout
        expect_ok = report_expectations(shown, paths, stream)
    if blocked or args.verbose:
        for line in run.other_output:
            print(line, file=sys.stderr)
        if run.stderr:
            sys.stderr.write(run.stderr)
    if blocked:
        print(f"{PROG}: mypy stopped with exit status {run.returncode}; nothing was checked fully", file=sys.stderr)
        return 2
    if expect_ok is not None:
        return 0 if expect_ok else 1
    return 1 if any(f.severity == "error" for f in shown) else 0
