"""``typed-pallas lsp``: a language server that shows ``typed-pallas check``'s findings in
the editor, and nothing else of mypy's output (``docs/lsp.md``).

The package: ``server`` is the server (pygls): when to check, diagnostics, code actions,
shutdown; ``session`` is what one check runs and reports, with ``typed-pallas check``'s
own functions; ``runner`` runs mypy in a long-lived worker that keeps mypy's
fine-grained state, or in workers started ahead of time, and writes the shadow files of
unsaved buffers; ``worker`` is such a worker; ``finegrained`` keeps mypy's state between
checks (the one module that uses mypy's internals); ``text`` reads the plugin's notes
and the source (places notes name, the ignore comment).

This module holds the command line (:func:`add_parser`, :func:`run_lsp`) and imports
neither pygls nor mypy: pygls and lsprotocol come with the ``lsp`` extra
(``pip install 'typed-pallas[lsp]'``); without them ``typed-pallas lsp`` says how to
install them (exit status 2) and the other commands work as before.
"""

from __future__ import annotations

import argparse
import importlib.util
import sys
from typing import Any, Final

__all__ = ["LSP_REQUIREMENTS", "add_parser", "missing_requirements", "run_lsp"]

#: the modules the server needs, and the extra that brings them
LSP_REQUIREMENTS: Final = ("pygls", "lsprotocol")
EXTRA: Final = "typed-pallas[lsp]"


def missing_requirements() -> list[str]:
    """The modules of :data:`LSP_REQUIREMENTS` that cannot be imported here."""
    missing = []
    for name in LSP_REQUIREMENTS:
        try:
            found = importlib.util.find_spec(name)
        except ValueError:  # a module set to None in sys.modules
            found = None
        if found is None:
            missing.append(name)
    return missing


def add_parser(sub: Any) -> None:
    """The ``lsp`` subcommand, for :func:`typed_pallas_mypy.cli.build_parser`."""
    from typed_pallas_mypy import config

    p = sub.add_parser(
        "lsp",
        help="a language server (stdio) that shows typed-pallas check's findings in the editor",
        description=(
            "Serve the Language Server Protocol over stdio: the findings typed-pallas check "
            "reports for PATHS (default: the workspace's root folder), as diagnostics, on "
            "open, on save and while a buffer is edited; nothing else of mypy's output. "
            "PATHS are relative to the workspace's root. Needs the lsp extra: "
            f"pip install '{EXTRA}'."
        ),
    )
    p.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to check")
    p.add_argument(
        "--platform",
        action="append",
        metavar="P",
        help="as for check: a platform the code may lower for: "
        f"{', '.join(config.CONFIG_PLATFORM_NAMES)} (repeat, or a comma list)",
    )
    p.add_argument(
        "--check-opted-out",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="as for check: also check the files that opt out of mypy with "
        "'# mypy: ignore-errors', for pallas-platform only; default: check_opted_out in "
        "[tool.typed-pallas], else off",
    )
    p.add_argument(
        "--config", metavar="FILE", help="as for check: read the typed-pallas settings from FILE"
    )
    p.add_argument(
        "--cache-dir",
        metavar="DIR",
        help="as for check: the mypy cache folder (default: shared with check)",
    )
    p.add_argument(
        "--stdio",
        action="store_true",
        help="accepted for editors that pass it (stdio is the only transport)",
    )


def run_lsp(args: argparse.Namespace) -> int:
    """``typed-pallas lsp``: serve until the editor disconnects; 2 without the lsp extra."""
    missing = missing_requirements()
    if missing:
        print(
            f"typed-pallas: error: the language server needs {' and '.join(missing)}, which "
            f"{'are' if len(missing) > 1 else 'is'} not installed here; install the lsp extra "
            f"into this environment: pip install '{EXTRA}'",
            file=sys.stderr,
        )
        return 2
    from typed_pallas_mypy.lsp import session
    from typed_pallas_mypy.lsp.server import serve

    options = session.Options(
        paths=tuple(args.paths or ()),
        platforms=tuple(args.platform or ()),
        config_file=args.config,
        cache_dir=args.cache_dir,
        check_opted_out=args.check_opted_out,
    )
    return serve(options)
