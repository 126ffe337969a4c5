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
neither pygls nor mypy: pygls and lsprotocol come with the ``lsp`` extra; without them
``typed-pallas lsp`` says how to install them (exit status 2) and the other commands
work as before. typed-pallas is on no package index, so the command it gives
(:func:`install_command`) installs the extra from where this typed-pallas came from
(its clone, or a wheel built from it, as pip recorded it: ``direct_url.json``), never
by name: a package of that name on an index would be someone else's.
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import sys
from typing import Any, Final
from urllib.parse import unquote, urlparse

__all__ = [
    "LSP_REQUIREMENTS",
    "add_parser",
    "install_command",
    "missing_extra_message",
    "missing_requirements",
    "run_lsp",
]

#: the modules the server needs, and the extra that brings them
LSP_REQUIREMENTS: Final = ("pygls", "lsprotocol")
EXTRA: Final = "lsp"
#: where the extra comes from when pip recorded no local source: the clone's path
CLONE_PLACEHOLDER: Final = "/path/to/typed-pallas"


def _direct_url() -> str | None:
    """pip's record of where the installed typed-pallas came from (PEP 610), or None."""
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        return distribution("typed-pallas").read_text("direct_url.json")
    except PackageNotFoundError:
        return None


def install_command(direct_url: str | None = None, extra: str = EXTRA) -> str:
    """The pip command that adds ``extra`` to this typed-pallas from its own source.

    ``direct_url`` is pip's ``direct_url.json`` (default: the installed one's): a local
    folder installed in editable mode gives ``pip install -e "FOLDER[lsp]"``, a local
    folder or wheel that still exists ``pip install "PATH[lsp]"``; anything else (no
    record, a URL, a file that is gone) the clone's placeholder path."""
    text = _direct_url() if direct_url is None else direct_url
    try:
        record = json.loads(text) if text else {}
    except ValueError:
        record = {}
    url = urlparse(str(record.get("url", ""))) if isinstance(record, dict) else urlparse("")
    path = unquote(url.path) if url.scheme == "file" and not url.netloc else ""
    if path and os.path.exists(path):
        dir_info = record.get("dir_info") if isinstance(record, dict) else None
        editable = isinstance(dir_info, dict) and dir_info.get("editable") is True
        return f'pip install {"-e " if editable else ""}"{path}[{extra}]"'
    return f'pip install "{CLONE_PLACEHOLDER}[{extra}]"'


def missing_extra_message(missing: list[str], direct_url: str | None = None) -> str:
    """``typed-pallas lsp``'s error when ``missing`` (modules of the extra) cannot be imported."""
    command = install_command(direct_url)
    where = (
        " (the path of your clone of typed-pallas, or of a wheel built from it)"
        if CLONE_PLACEHOLDER in command
        else ""
    )
    return (
        f"the language server needs {' and '.join(missing)}, which "
        f"{'are' if len(missing) > 1 else 'is'} not installed here; install the lsp extra "
        f"into this environment from where typed-pallas came from: {command}{where}; "
        "typed-pallas is on no package index, so do not install it by name "
        "(see `typed-pallas explain lsp`)"
    )


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
            "PATHS are relative to the workspace's root. Needs the lsp extra, installed "
            "from your clone of typed-pallas (it is on no package index): "
            f'pip install "{CLONE_PLACEHOLDER}[{EXTRA}]".'
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
        print(f"typed-pallas: error: {missing_extra_message(missing)}", file=sys.stderr)
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
