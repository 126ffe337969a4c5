"""``typed-pallas``: the command line. Runs mypy with the plugin preset; explains errors.

Commands::

    typed-pallas check [PATHS...] [--platform P ...] [--output text|json|github|sarif]
                       [--all-errors] [--check-opted-out] [--expect] [--config FILE]
                       [--cache-dir DIR] [-- MYPY ARGS...]
    typed-pallas init [PATH] [--dry-run]  # set up mypy, pyright, Pylance, pyrefly, ty (docs/editors.md)
    typed-pallas platforms PATHS... [--platform P ...] [--output text|json|mermaid]  # the map
    typed-pallas explain CODE        # e.g. pallas-platform, PlatformMismatchError
    typed-pallas lsp [PATHS...]      # the language server (stdio; the lsp extra; docs/lsp.md)
    typed-pallas --version

``check`` runs mypy with a preset (the plugin, ``follow_imports = silent``,
``ignore_missing_imports``, ``check_untyped_defs``), so a project needs no mypy setup;
it finds the project's typed-pallas settings with the plugin's own search and shows only
typed-pallas findings unless ``--all-errors``. Exit status, like mypy: 0 nothing found,
1 findings, 2 usage, configuration or blocking errors (a syntax error, a crash).
Every error of the command line, of the configuration or of the input is one line on
stderr (``typed-pallas: error: ...``) that says what is wrong and what to do; none ends
in a traceback (docs/cli-errors.md has the table).

The package: this module parses the command line and dispatches; ``check`` runs the
``check`` command; ``findings`` runs mypy and parses its JSON output (its preset and
parser are shared with ``eval/`` and ``benchmarks/``) and chooses what to show;
``formats`` is the table of output formats; ``opted_out`` gives mypy shadow copies of
the files that opt out of it (``--check-opted-out``); ``blocking`` tells an error that stopped
mypy in one line; ``expect`` is ``--expect``; ``project`` finds the project's layout;
``init`` is ``typed-pallas init``; ``platforms`` is ``typed-pallas platforms``;
``explain`` is ``typed-pallas explain``; ``_metadata`` reads installed versions.
``python -m typed_pallas_mypy.cli`` is the console script.

What it does not do: read or change the project's ``[tool.mypy]`` settings (pass mypy
options after ``--``), or import jax (or mypy: ``check`` runs it in a subprocess,
``platforms`` imports it when it runs).
"""

from __future__ import annotations

import argparse
import os
import sys
from collections.abc import Sequence
from typing import Final, NoReturn

if sys.version_info >= (3, 12):
    from typing import override
else:  # typing_extensions costs the command ~10 ms to import
    from typing_extensions import override

from typed_pallas._jax_range import NOTE_SHOWN_ENV, jax_check_status
from typed_pallas._versions import installed_version
from typed_pallas_mypy import config, lsp
from typed_pallas_mypy.cli import init, platforms
from typed_pallas_mypy.cli.check import fail, run_check
from typed_pallas_mypy.cli.explain import error_doc, known_error_docs, run_explain
from typed_pallas_mypy.cli.findings import DEFAULT_CACHE, MypyMessage, plugin_error_codes
from typed_pallas_mypy.cli.formats import OUTPUTS

__all__ = [
    "MypyMessage",
    "build_parser",
    "error_doc",
    "known_error_docs",
    "main",
    "plugin_error_codes",
]

PROG: Final = "typed-pallas"


def _version_text() -> str:
    """The first line; a second, the note, when the installed jax is not a checked release."""
    mypy_version = installed_version("mypy") or "not installed"
    py = ".".join(map(str, sys.version_info[:3]))
    text = f"{PROG} {config.package_version()} (mypy {mypy_version}, Python {py})"
    note = jax_check_status(who=PROG).note
    return text if note is None else f"{text}\n{note}"


class _Parser(argparse.ArgumentParser):
    """argparse's parser, with a usage error told in one line that says where help is."""

    @override
    def error(self, message: str) -> NoReturn:
        self.exit(2, f"{PROG}: error: {message}; see `{self.prog} --help`\n")


def build_parser() -> argparse.ArgumentParser:
    """The ``typed-pallas`` argument parser, with its ``check``, ``init``, ``platforms`` and
    ``explain`` commands (each one's subparser is a :class:`_Parser` too)."""
    parser = _Parser(
        prog=PROG,
        description="Check that JAX Pallas compiler params match the platforms the code lowers for.",
        formatter_class=argparse.RawDescriptionHelpFormatter,  # --version's lines as they are
    )
    parser.add_argument("--version", action="version", version=_version_text())
    sub = parser.add_subparsers(dest="command", metavar="{check,init,platforms,explain,lsp}")

    check = sub.add_parser(
        "check",
        help="run mypy with the typed-pallas plugin on PATHS",
        description=(
            "Run mypy with the typed-pallas plugin preset on PATHS (default: the current folder).\n"
            "Shows typed-pallas findings only, unless --all-errors. Arguments after -- go to mypy.\n"
            "Exit status: 0 clean, 1 findings, 2 usage or blocking error.\n"
            "A folder of PATHS with no Python file, or a file that is not Python: an error,\n"
            "exit status 2 (nothing was checked).\n"
            "The mypy cache is one folder per environment (Python, jax and mypy versions)."
        ),
        epilog=(
            "examples:\n"
            "  typed-pallas check src/\n"
            "  typed-pallas check --platform tpu src/kernels/\n"
            "  typed-pallas check --output github . -- --python-version 3.12\n"
            "configuration: [tool.typed-pallas] in pyproject.toml (`typed-pallas explain configuration`)"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to check")
    check.add_argument(
        "--platform",
        action="append",
        metavar="P",
        help="a platform the code may lower for: "
        f"{', '.join(config.CONFIG_PLATFORM_NAMES)} (repeat, or a comma list); "
        f"replaces the configured top-level platforms (sets {config.PLATFORMS_ENV})",
    )
    check.add_argument(
        "--output", "-o", choices=OUTPUTS, default=OUTPUTS[0], help="output format (default: text)"
    )
    check.add_argument(
        "--all-errors",
        action="store_true",
        help="show every mypy error, not only typed-pallas findings",
    )
    check.add_argument(
        "--check-opted-out",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="also check the files that opt out of mypy with '# mypy: ignore-errors', for "
        "pallas-platform only (through mypy's --shadow-file; their other errors stay hidden); "
        "default: check_opted_out in [tool.typed-pallas], else off",
    )
    check.add_argument(
        "--config",
        metavar="FILE",
        help="read [tool.typed-pallas] / [mypy.plugins.typed-pallas] from FILE",
    )
    check.add_argument(
        "--cache-dir",
        metavar="DIR",
        help=f"mypy cache folder (default: one per environment under {DEFAULT_CACHE})",
    )
    check.add_argument(
        "--expect",
        action="store_true",
        help="compare findings with the '# expect[CODE]: MESSAGE' comments in PATHS; "
        "exit 0 only when they are exactly the expected ones",
    )
    check.add_argument(
        "--verbose", "-v", action="store_true", help="print the mypy command and its other output"
    )

    init.add_parser(sub)

    platforms.add_parser(sub)

    explain_parser = sub.add_parser(
        "explain", help="print the documentation of an error code or exception"
    )
    explain_parser.add_argument(
        "code", metavar="CODE", help="e.g. pallas-platform or PlatformMismatchError"
    )

    lsp.add_parser(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """The ``typed-pallas`` console script; returns the exit status (argparse exits 2 itself)."""
    args_list = list(sys.argv[1:] if argv is None else argv)
    passthrough: list[str] = []
    if "--" in args_list:
        i = args_list.index("--")
        args_list, passthrough = args_list[:i], args_list[i + 1 :]
    parser = build_parser()
    args, unknown = parser.parse_known_args(args_list)  # exits 2 on usage errors, in one line
    if unknown:
        command = f"{PROG} {args.command}" if args.command else PROG
        return fail(f"unrecognized arguments: {' '.join(unknown)}; see `{command} --help`")
    if args.command != "check" and passthrough:
        return fail(
            "arguments after -- are mypy's, for `typed-pallas check`: "
            "typed-pallas check [PATHS...] -- MYPY ARGS"
        )
    for value in getattr(args, "platform", None) or ():  # check, platforms
        try:
            config.parse_platforms(
                [n for n in value.split(",") if n.strip()] or [value], f"--platform {value!r}"
            )
        except config.ConfigError as e:
            return fail(str(e))
    if args.command == "check":
        if (unchecked := jax_check_status(who=PROG).note) is not None:
            print(unchecked, file=sys.stderr)  # a jax not checked: one line, same exit status
            os.environ[NOTE_SHOWN_ENV] = "1"  # the plugin, under this mypy, need not repeat it
        if (coinstalled := init.coinstall_warning()) is not None:
            print(coinstalled, file=sys.stderr)
        return run_check(args, passthrough)
    if args.command == "init":
        return init.run_init(args)
    if args.command == "platforms":
        return platforms.run_platforms(args)
    if args.command == "explain":
        return run_explain(args.code, sys.stdout, sys.stderr)
    if args.command == "lsp":
        return lsp.run_lsp(args)
    parser.print_help()
    return 2
