"""``typed-pallas explain CODE``: the documentation of an error code or runtime exception.

What it does: reads ``typed_pallas_mypy/errors/*.md`` (one Markdown file per mypy error
code, e.g. ``pallas-platform``, and per runtime exception, e.g.
``PlatformMismatchError``; ``scripts/gen_docs.py`` joins the same files into
docs/errors.md), finds the one a spelling names (case, ``_`` for ``-`` and a
``typed_pallas.`` prefix do not matter) and prints it.

What it does not do: import mypy, jax or the plugin (it works without mypy installed).
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from typing import Final, TextIO

__all__ = ["error_doc", "known_error_docs", "run_explain"]

PROG: Final = "typed-pallas"
#: Prefixes a spelling may carry (``typed_pallas.PlatformMismatchError``).
IGNORED_PREFIXES: Final = ("typed_pallas.", "typed_pallas._errors.")


def _errors_dir() -> Traversable:
    return resources.files("typed_pallas_mypy").joinpath("errors")


def known_error_docs() -> dict[str, str]:
    """code -> Markdown text, from ``typed_pallas_mypy/errors/*.md``."""
    out: dict[str, str] = {}
    for entry in _errors_dir().iterdir():
        if entry.name.endswith(".md") and entry.name.upper() != "README.MD":
            out[entry.name[:-3]] = entry.read_text(encoding="utf-8")
    return dict(sorted(out.items()))


def _folded(name: str) -> str:
    return name.lower().replace("_", "-")


def error_doc(code: str) -> str | None:
    """The documentation of ``code`` in any accepted spelling, or None when unknown."""
    docs = known_error_docs()
    wanted = code.strip()
    for prefix in IGNORED_PREFIXES:
        if wanted.startswith(prefix):
            wanted = wanted[len(prefix) :]
    folded = {_folded(k): k for k in docs}
    key = folded.get(_folded(wanted))
    return docs[key] if key else None


def run_explain(code: str, stdout: TextIO, stderr: TextIO) -> int:
    """Print the documentation of ``code``; exit status 0, or 2 for an unknown code."""
    text = error_doc(code)
    if text is None:
        known = ", ".join(known_error_docs())
        print(f"{PROG}: error: unknown error code {code!r}; known codes: {known}", file=stderr)
        return 2
    stdout.write(text if text.endswith("\n") else text + "\n")
    return 0
