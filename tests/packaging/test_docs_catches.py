"""README.md and docs/quickstart.md say which tool catches which mistake, in one table
each, and the two tables agree: a user must not read that ``typed-pallas init`` plus
pyright catches an unmodified ``pl.pallas_call`` under a platform guard (only the
plugin does: ``typed-pallas check``, ``typed-pallas lsp``, mypy with the plugin)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
DOCS = (REPO / "README.md", REPO / "docs" / "quickstart.md")

#: the mistakes each table has a row for (how each row starts), and what each column says
#: (the stubs in pyright and the other checkers; the plugin)
MISTAKES = {
    "wrong params on the typed API": ("yes", "yes"),
    "an unmodified `pl.pallas_call` under a platform guard": ("no", "yes"),
    "a library's kernel used where the platform is decided otherwise": ("no", "yes"),
    "a kernel body's evidence": ("no", "yes"),
}


def catches_table(text: str) -> dict[str, tuple[str, str]]:
    """The rows of the table whose header starts ``| mistake |``: mistake -> the first word
    of each checker column (``yes`` / ``no``)."""
    lines = text.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith("| mistake |"))
    header = [c.strip() for c in lines[start].strip("|").split("|")]
    assert "pyright" in header[1] and "plugin" in header[2], header
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        mistake, stubs, plugin = (c.strip() for c in line.strip("|").split(" | "))
        name = re.split(r":", mistake, maxsplit=1)[0]
        rows[name] = (re.split(r"\W", stubs)[0], re.split(r"\W", plugin)[0])
    return rows


@pytest.mark.parametrize("doc", DOCS, ids=lambda p: p.name)
def test_the_table_says_which_tool_catches_which_mistake(doc: Path) -> None:
    assert catches_table(doc.read_text(encoding="utf-8")) == MISTAKES


def test_the_editor_bullet_does_not_promise_the_headline_to_pyright() -> None:
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    bullet = readme[readme.index("- **In the editor**") :]
    bullet = bullet[: bullet.index("\n- **")]
    assert "only the plugin sees that" in bullet
    assert "`typed-pallas lsp`" in bullet and "not" in bullet


def test_the_table_reader_fires_on_a_wrong_verdict() -> None:
    """Meta-check: a table that gives the guarded ``pl.pallas_call`` to pyright is caught."""
    table = "\n".join(
        [
            "| mistake | pyright, ty | the plugin |",
            "|---|---|---|",
            "| wrong params on the typed API: x | yes | yes |",
            "| an unmodified `pl.pallas_call` under a platform guard: y | yes | yes |",
            "| a library's kernel used where the platform is decided otherwise: z | no | yes |",
            "| a kernel body's evidence: w | no | yes: it reads the body |",
        ]
    )
    rows = catches_table(table)
    assert rows != MISTAKES
    assert rows["an unmodified `pl.pallas_call` under a platform guard"] == ("yes", "yes")
    assert rows["a kernel body's evidence"] == ("no", "yes")
