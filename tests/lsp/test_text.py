"""The language server's plain parts, without a server: the places notes name, the ignore
edit, the shadow files' sizes, and ``typed-pallas lsp`` without the lsp extra."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

from typed_pallas_mypy.lsp import install_command, missing_extra_message
from typed_pallas_mypy.lsp.runner import Shadows
from typed_pallas_mypy.lsp.text import NoteLocation, ignore_edit, note_locations, word_end


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    project, site = tmp_path / "proj", tmp_path / "site-packages"
    (project / "pkg").mkdir(parents=True)
    (project / "pkg" / "ops.py").write_text("a = 1\nb = 2\nc = 3\n")
    (project / "main.py").write_text("x = 1\nif y:\n    z = 2\n")
    (site / "lib" / "kern").mkdir(parents=True)
    (site / "lib" / "kern" / "k.py").write_text("\n" * 9 + "def k(): ...\n")
    return project, site


def test_note_locations_resolve_project_and_library_paths(tmp_path: Path) -> None:
    project, site = _tree(tmp_path)
    roots = [str(project), str(site)]
    note = "f (pkg/ops.py:2) lowers only for tpu: it calls k at lib/kern/k.py:10"
    assert note_locations(note, "main.py", roots) == [
        NoteLocation(str(project / "pkg" / "ops.py"), 2, "b = 2"),
        NoteLocation(str(site / "lib" / "kern" / "k.py"), 10, "def k(): ..."),
    ]
    absolute = f"f ({project / 'pkg' / 'ops.py'}:3) lowers only for tpu"
    assert note_locations(absolute, "main.py", roots) == [
        NoteLocation(str(project / "pkg" / "ops.py"), 3, "c = 3")
    ]


def test_note_locations_at_line_is_the_findings_own_file(tmp_path: Path) -> None:
    project, _ = _tree(tmp_path)
    found = note_locations(
        "the if at line 2 lets this lower only for tpu", "main.py", [str(project)]
    )
    assert found == [NoteLocation(str(project / "main.py"), 2, "if y:")]


def test_note_locations_leave_out_what_is_not_a_real_line(tmp_path: Path) -> None:
    project, site = _tree(tmp_path)
    roots = [str(project), str(site)]
    assert note_locations("f (missing/mod.py:3) lowers only for tpu", "main.py", roots) == []
    assert note_locations("f (pkg/ops.py:99) lowers only for tpu", "main.py", roots) == []
    assert note_locations("the if at line 40 lets this lower", "main.py", roots) == []
    assert note_locations("Mosaic TPU params lower only for tpu", "main.py", roots) == []
    # "at line N" in a note that names another file is not taken for the finding's file
    assert note_locations("g (missing.py:1) registers it at line 2", "main.py", roots) == []


def test_word_end_spans_the_dotted_name() -> None:
    line = "        return tpu_ops.add_one_tpu(x)"
    assert word_end(line, 15) == 34
    assert word_end(line, 34) == 35  # "(": one character


def test_ignore_edit_appends_or_merges() -> None:
    code = "pallas-platform"
    src = "a = f(x)   \nb = 2\n"
    assert ignore_edit(src, 1, code) == (8, 11, "  # type: ignore[pallas-platform]")
    assert ignore_edit("a = f(x)  # keep\n", 1, code) == (
        10,
        10,
        "# type: ignore[pallas-platform]  ",
    )
    assert ignore_edit("a = f('#')  # type: ignore[arg-type]\n", 1, code) == (
        35, 35, ", pallas-platform"
    )  # fmt: skip


def test_ignore_edit_none_where_no_comment_belongs() -> None:
    code = "pallas-platform"
    assert ignore_edit("a = f(x)  # type: ignore\n", 1, code) is None
    assert ignore_edit("a = f(x)  # type: ignore[pallas-platform]\n", 1, code) is None
    assert ignore_edit('a = f("""\nstill a string\n""")\n', 1, code) is None
    assert ignore_edit("a = 1\n", 5, code) is None


def test_shadow_sizes_differ_from_the_file_and_the_last_shadow(tmp_path: Path) -> None:
    source = tmp_path / "m.py"
    source.write_text("x = 'gpu'\n")
    shadows = Shadows(str(tmp_path / "shadows"))
    mtimes = []
    for text, written in (
        ("x = 'tpu'\n", b"x = 'tpu'\n\n"),  # the file's size: padded
        ("x = 'gpu'\n", b"x = 'gpu'\n\n\n"),  # the file's and the last shadow's sizes
        ("x = 'tpu' \n", b"x = 'tpu' \n"),
    ):
        shadow = Path(shadows.write(str(source), text))
        assert shadow.read_bytes() == written
        mtimes.append(os.stat(shadow).st_mtime)
    # modification times of their own: growing, and none an edited file has (1970-2001)
    assert mtimes == sorted(set(mtimes)) and mtimes[-1] < 10**9
    shadows.remove_all()
    assert not (tmp_path / "shadows").exists()


def test_lsp_without_the_extra_says_how_to_install_it() -> None:
    hide = (
        "import sys; sys.modules['pygls'] = None; from typed_pallas_mypy.cli import main; "
        "sys.exit(main(['lsp']))"
    )
    done = subprocess.run(
        [sys.executable, "-c", hide],
        capture_output=True,
        text=True,
        timeout=60,
        stdin=subprocess.DEVNULL,
    )
    assert done.returncode == 2
    # this checkout is installed in editable mode: the extra comes from it, as it did
    root = Path(__file__).resolve().parents[2]
    assert done.stderr == (
        "typed-pallas: error: the language server needs pygls, which is not installed here; "
        "install the lsp extra into this environment from where typed-pallas came from: "
        f'pip install -e "{root}[lsp]"; typed-pallas is on no package index, so do not '
        "install it by name (see `typed-pallas explain lsp`)\n"
    )


def test_the_install_command_names_where_typed_pallas_came_from(tmp_path: Path) -> None:
    """pip's record (direct_url.json) of a local source gives that source; anything else
    the clone's placeholder: never the package's name alone, which an index would resolve."""
    clone, wheel = tmp_path / "typed pallas", tmp_path / "typed_pallas-0.1.0-py3-none-any.whl"
    clone.mkdir()
    wheel.write_bytes(b"")
    clone_url, wheel_url = clone.as_uri(), wheel.as_uri()  # the space is %20 there
    editable = f'{{"url": "{clone_url}", "dir_info": {{"editable": true}}}}'
    assert install_command(editable) == f'pip install -e "{clone}[lsp]"'
    assert install_command(f'{{"url": "{clone_url}", "dir_info": {{}}}}') == (
        f'pip install "{clone}[lsp]"'
    )
    assert install_command(f'{{"url": "{wheel_url}", "archive_info": {{}}}}') == (
        f'pip install "{wheel}[lsp]"'
    )
    placeholder = 'pip install "/path/to/typed-pallas[lsp]"'
    for record in (
        f'{{"url": "{(tmp_path / "gone").as_uri()}", "dir_info": {{}}}}',  # moved or deleted
        '{"url": "https://example.org/typed_pallas-0.1.0.whl", "archive_info": {}}',
        "not json",
        "",  # no record: installed from an index (or by a tool that keeps none)
    ):
        assert install_command(record) == placeholder, record
    message = missing_extra_message(["pygls", "lsprotocol"], "")
    assert message == (
        "the language server needs pygls and lsprotocol, which are not installed here; "
        "install the lsp extra into this environment from where typed-pallas came from: "
        'pip install "/path/to/typed-pallas[lsp]" (the path of your clone of typed-pallas, '
        "or of a wheel built from it); typed-pallas is on no package index, so do not "
        "install it by name (see `typed-pallas explain lsp`)"
    )
