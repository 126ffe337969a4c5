"""``typed-pallas explain CODE``: the documentation of an error code or runtime exception.

What it does: reads ``typed_pallas_mypy/errors/*.md`` (one Markdown file per mypy error
code, e.g. ``pallas-platform``, and per runtime exception, e.g.
``PlatformMismatchError``; ``scripts/gen_docs.py`` joins the same files into
docs/errors.md), finds the one a spelling names (case, ``_`` for ``-`` and a
``typed_pallas.`` prefix do not matter) and prints it.

It also prints the documentation pages that ship in the package (:data:`TOPICS`:
``typed-pallas explain configuration``), which is what the CLI's messages point to:
:func:`doc_link` names that command, and the page's URL when the installed package's
metadata has a ``Documentation`` project URL.

What it does not do: import mypy, jax or the plugin (it works without mypy installed).
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable
from pathlib import Path
from typing import Final, TextIO

__all__ = [
    "TOPICS",
    "doc_link",
    "error_doc",
    "known_error_docs",
    "project_urls",
    "run_explain",
    "topic_doc",
]

PROG: Final = "typed-pallas"
#: Prefixes a spelling may carry (``typed_pallas.PlatformMismatchError``).
IGNORED_PREFIXES: Final = ("typed_pallas.", "typed_pallas._errors.")


#: topic -> page of ``docs/``. The wheel ships that folder in its metadata folder
#: (``typed_pallas-*.dist-info/extra_metadata/docs/``, pyproject's hatch ``extra-metadata``);
#: in a checkout (an editable install) the checkout's own ``docs/`` is read.
TOPICS: Final = {
    "configuration": "configuration.md",
    "editors": "editors.md",
    "lsp": "lsp.md",
    "platforms": "platforms.md",
    "platform-sources": "platform-sources.md",
    "quickstart": "quickstart.md",
    "checkers": "checkers.md",
}
_CHECKOUT: Final = Path(__file__).resolve().parents[3]


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


def topic_doc(topic: str) -> str | None:
    """The text of a documentation page of :data:`TOPICS` (shipped, or the checkout's), or None."""
    page = TOPICS.get(topic.strip().lower())
    if page is None:
        return None
    local = _CHECKOUT / "docs" / page
    if (_CHECKOUT / "pyproject.toml").is_file() and local.is_file():
        return local.read_text(encoding="utf-8")
    from importlib.metadata import PackageNotFoundError, distribution

    try:
        return distribution("typed-pallas").read_text(f"extra_metadata/docs/{page}")
    except PackageNotFoundError:
        return None


def project_urls() -> dict[str, str]:
    """The installed typed-pallas's ``Project-URL`` entries (label -> URL); empty when none."""
    from importlib.metadata import PackageNotFoundError, metadata

    try:
        entries = metadata("typed-pallas").get_all("Project-URL") or []
    except PackageNotFoundError:
        return {}
    urls: dict[str, str] = {}
    for entry in entries:
        label, _, url = str(entry).partition(",")
        if url.strip():
            urls[label.strip()] = url.strip()
    return urls


def doc_link(topic: str) -> str:
    """Where a message sends the reader: ``typed-pallas explain TOPIC`` (and the URL, if known)."""
    where = f"`{PROG} explain {topic}`"
    base = next(
        (url for label, url in project_urls().items() if label.lower() == "documentation"), None
    )
    page = TOPICS.get(topic) or f"errors.md#{topic.lower()}"
    return f"{where} or {base.rstrip('/')}/{page}" if base else where


def run_explain(code: str, stdout: TextIO, stderr: TextIO) -> int:
    """Print the documentation of ``code`` (or of a topic); exit status 0, or 2 when unknown."""
    text = error_doc(code)
    if text is None:
        text = topic_doc(code)
    if text is None:
        known = ", ".join(known_error_docs())
        print(
            f"{PROG}: error: unknown error code {code!r}; known codes: {known}; topics: {', '.join(TOPICS)}",
            file=stderr,
        )
        return 2
    stdout.write(text if text.endswith("\n") else text + "\n")
    return 0
