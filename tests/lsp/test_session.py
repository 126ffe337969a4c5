"""``session.with_buffers``: the shadow files of one check, for unsaved buffers and for
files that opt out of mypy (``# mypy: ignore-errors``), and ``session.outcome``'s view
of those files. No mypy runs here (``test_server.py`` runs the server end to end)."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from typed_pallas_mypy.cli.findings import MypyMessage, MypyRun
from typed_pallas_mypy.lsp import session

OPTED = "# mypy: ignore-errors\nimport jax\n\nx: int = 'no'\n"
PLAIN = "import jax\n\ny = 1\n"


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    (tmp_path / ".git").mkdir()
    (tmp_path / "opted.py").write_text(OPTED, encoding="utf-8")
    (tmp_path / "plain.py").write_text(PLAIN, encoding="utf-8")
    monkeypatch.chdir(tmp_path)
    return tmp_path


def _plan(project: Path, check_opted_out: bool | None) -> session.Plan:
    planned = session.plan(
        session.Options(check_opted_out=check_opted_out), str(project / ".server")
    )
    assert isinstance(planned, session.Plan), planned
    return planned


class _Writer:
    """Records what ``with_buffers`` writes, as ``runner.Shadows.write`` would."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self.texts: dict[str, str] = {}

    def __call__(self, source: str, text: str) -> str:
        self.texts[source] = text
        shadow = self.folder / f"{len(self.texts)}-{os.path.basename(source)}"
        shadow.write_text(text, encoding="utf-8")
        return str(shadow)


def test_with_the_option_a_file_that_opts_out_gets_a_copy_with_the_setting_off(
    project: Path,
) -> None:
    (project / ".server").mkdir()
    planned = _plan(project, True)
    write = _Writer(project / ".server")
    session.with_buffers(planned, {}, write)
    opted = str(project / "opted.py")
    assert planned.opted_out == [opted]
    assert [source for source, _ in planned.shadows] == [opted]
    assert write.texts[opted] == "#\n" + OPTED.split("\n", 1)[1]  # no line moves
    assert "--shadow-file" in planned.fresh_command


def test_without_the_option_nothing_is_shadowed_and_the_file_is_noted(project: Path) -> None:
    (project / ".server").mkdir()
    planned = _plan(project, None)  # the configuration's default: off
    write = _Writer(project / ".server")
    session.with_buffers(planned, {}, write)
    assert planned.opted_out == [str(project / "opted.py")]
    assert planned.shadows == []
    result = session.outcome(planned, MypyRun([], 0, [], [], ""))
    assert result.opted_out_note is not None
    assert result.opted_out_note.startswith("note: 1 file not checked (opted.py): it opts out")
    assert "check_opted_out = true" in result.opted_out_note


def test_a_buffer_is_read_in_place_of_its_file(project: Path) -> None:
    """The unsaved text decides: a buffer that adds the comment opts out (its copy has
    the setting off), one that removes it does not (its copy is the buffer's text)."""
    (project / ".server").mkdir()
    planned = _plan(project, True)
    write = _Writer(project / ".server")
    plain, opted = str(project / "plain.py"), str(project / "opted.py")
    edited = OPTED.split("\n", 1)[1]
    session.with_buffers(planned, {plain: "# mypy: ignore-errors\n" + PLAIN, opted: edited}, write)
    assert planned.opted_out == [plain]
    assert write.texts == {plain: "#\n" + PLAIN, opted: edited}


def test_only_platform_findings_are_shown_in_a_file_checked_through_its_copy(
    project: Path,
) -> None:
    (project / ".server").mkdir()
    planned = _plan(project, True)
    session.with_buffers(planned, {}, _Writer(project / ".server"))

    def message(file: str, code: str, severity: str = "error") -> MypyMessage:
        return MypyMessage(file, 4, 1, severity, f"a {code} error", code)

    run = MypyRun(
        [],
        1,
        [
            message("opted.py", "assignment"),
            message("opted.py", "pallas-platform"),
            message("plain.py", "pallas-platform"),
        ],
        [],
        "",
    )
    result = session.outcome(planned, run)
    assert result.findings is not None
    assert [(f.file, f.code) for f in result.findings] == [
        ("opted.py", "pallas-platform"),
        ("plain.py", "pallas-platform"),
    ]
    assert result.opted_out_note is None
