"""``cli/explain.py``: ``typed-pallas explain``, the error documentation it prints (one page
per error, each showing what its code gives), docs/errors.md generated from the same
pages, and the links the CLI's messages give."""

from __future__ import annotations

import importlib.util
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import ERRORS_SRC, ROOT, error_docs, first_block, smallest_code

from typed_pallas_mypy import cli, config
from typed_pallas_mypy.cli import explain, findings


def test_every_error_has_documentation() -> None:
    from typed_pallas import _errors

    docs = set(error_docs())
    assert findings.plugin_error_codes() <= docs
    runtime = {
        n for n, v in vars(_errors).items() if isinstance(v, type) and issubclass(v, Exception)
    }
    assert runtime and runtime <= docs
    assert set(explain.known_error_docs()) == docs


@pytest.mark.parametrize("code", error_docs())
def test_explain_prints_each_doc(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["explain", code]) == 0
    out = capsys.readouterr().out
    assert out == (ERRORS_SRC / f"{code}.md").read_text(encoding="utf-8")
    assert out.startswith(f"# {code}\n")
    for section in (
        "## What it means",
        "## Smallest code that triggers it",
        "## Before / after",
        "## How to silence it",
    ):
        assert section in out


RUN_SNIPPETS = """
import json, sys, traceback
out = {}
for name, source in json.loads(sys.argv[1]).items():
    try:
        exec(compile(source, name + ".py", "exec"), {"__name__": "__main__"})
        out[name] = None
    except Exception as e:
        out[name] = [type(e).__module__ + "." + type(e).__name__, str(e), list(getattr(e, "__notes__", []))]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_runtime_error_docs_show_what_their_code_raises() -> None:
    """Each runtime error's 'smallest code' raises it, with the message the doc shows."""
    names = [c for c in error_docs() if c != c.lower()]
    snippets = {name: smallest_code(name) for name in names}
    proc = subprocess.run(
        [sys.executable, "-c", RUN_SNIPPETS, json.dumps(snippets)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    raised = json.loads(proc.stdout.strip().splitlines()[-1])
    for name in names:
        assert raised[name] is not None, f"{name}: its smallest code raised nothing"
        kind, message, notes = raised[name]
        assert kind == f"typed_pallas.{name}"
        shown = first_block(name).splitlines()
        assert shown[0] == f"{kind}: {message}"
        assert shown[1:] == notes[: len(shown) - 1]


@pytest.mark.parametrize(
    ("spelling", "code"),
    [
        pytest.param("PALLAS-PLATFORM", "pallas-platform", id="case"),
        pytest.param("pallas_platform", "pallas-platform", id="underscore"),
        pytest.param("typed_pallas.PlatformMismatchError", "PlatformMismatchError", id="dotted"),
        pytest.param("platformmismatcherror", "PlatformMismatchError", id="lower"),
    ],
)
def test_explain_accepts_spellings(spelling: str, code: str) -> None:
    assert explain.error_doc(spelling) == explain.known_error_docs()[code]


def test_explain_unknown_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["explain", "pallas-platfrom"]) == 2
    err = capsys.readouterr().err
    assert "unknown error code 'pallas-platfrom'" in err
    for code in error_docs():
        assert code in err


def test_docs_errors_md_is_generated_from_the_source() -> None:
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec and spec.loader
    gen_docs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_docs)
    text = gen_docs.render()
    assert (ROOT / "docs" / "errors.md").read_text(encoding="utf-8") == text, (
        "run scripts/gen_docs.py"
    )
    for code in error_docs():
        assert f"\n## {code}\n" in text


# --------------------------------------------------------------------------- links


def test_messages_link_documentation_that_ships(
    proj: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / "pyproject.toml").write_text('[tool.typed-pallas]\nplatforms = ["npu"]\n')
    assert cli.main(["check", "."]) == 2
    err = capsys.readouterr().err
    assert "docs/" not in err and "`typed-pallas explain configuration`" in err
    for topic in explain.TOPICS:
        assert cli.main(["explain", topic]) == 0
        assert capsys.readouterr().out.startswith("# ")
    assert "docs/configuration.md" not in config.USAGE


#: a pointer to a page of the checkout's docs/ folder, which an installed user lacks
CHECKOUT_PAGE = re.compile(r"\bdocs/[\w-]+\.md")


def test_error_pages_point_to_commands_not_to_the_checkout(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """What ``typed-pallas explain CODE`` prints names ``typed-pallas explain TOPIC`` for
    more, never ``docs/....md`` (an installed user has no checkout); each topic it names
    is one explain knows."""
    named: set[str] = set()
    for code, text in explain.known_error_docs().items():
        assert not CHECKOUT_PAGE.search(text), f"{code}: {CHECKOUT_PAGE.search(text)}"
        named |= set(re.findall(r"`typed-pallas explain\s+([\w-]+)`", text))
    assert {"configuration", "platform-sources"} <= named
    for topic in named:
        assert cli.main(["explain", topic]) == 0, topic
        assert capsys.readouterr().out.startswith("# ")
    # the pattern finds what it must (a meta-check)
    assert CHECKOUT_PAGE.search("(see docs/configuration.md)")
    assert not CHECKOUT_PAGE.search("(see `typed-pallas explain configuration`)")


def test_doc_link_uses_the_metadata_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(explain, "project_urls", lambda: {})
    assert explain.doc_link("configuration") == "`typed-pallas explain configuration`"
    monkeypatch.setattr(
        explain, "project_urls", lambda: {"Documentation": "https://example.org/docs/"}
    )
    assert explain.doc_link("configuration") == (
        "`typed-pallas explain configuration` or https://example.org/docs/configuration.md"
    )
    assert explain.doc_link("pallas-platform").endswith(
        "https://example.org/docs/errors.md#pallas-platform"
    )


def test_explain_lsp_prints_the_editor_integration_page(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``typed-pallas explain lsp``: the page the missing-extra hint points to."""
    assert cli.main(["explain", "lsp"]) == 0
    out = capsys.readouterr().out
    assert out == (ROOT / "docs" / "lsp.md").read_text(encoding="utf-8")
    assert out.startswith("# Editor integration: ")
    assert cli.main(["explain", "no-such-topic"]) == 2
    assert "topics: configuration, editors, lsp," in capsys.readouterr().err
