"""The evaluator's summaries kept on disk (``inference.summary_store``): a later engine
with the same cache folder takes a summary from disk, without running the module, while
every module its runs read has the same source and every module they did not find is
still absent; otherwise it works the summary out again, and gives what a cold engine
gives. A file that cannot be read is ignored."""

from __future__ import annotations

from pathlib import Path

import pytest
from library_fakes import HEADER, OPS, MakeLib, count_module_imports, platforms_of, reader_for

from typed_pallas_mypy.inference import Inference

#: ``pkg.api.run`` calls what ``pkg.impl`` picks; ``pkg.api.fallback`` imports an
#: optional module and falls back to the TPU op without it
API = (
    HEADER
    + """\
from pkg.impl import chosen
from pkg.ops import tpu_op

try:
    from pkg.fast import fast_op
except ImportError:
    fast_op = tpu_op

def run(x):
    return chosen(x)

def fallback(x):
    return fast_op(x)
"""
)

IMPL_TPU = "from pkg.ops import tpu_op as chosen\n"
IMPL_TRITON = "from pkg.ops import triton_op as chosen\n"


def _lib(make_lib: MakeLib) -> Path:
    return make_lib({"pkg/ops.py": OPS, "pkg/impl.py": IMPL_TPU, "pkg/api.py": API})


def _ask(
    root: Path, cache: Path, name: str, release: tuple[int, ...] | None = None
) -> set[str] | None:
    engine = Inference([str(root)], str(cache), release=release)
    engine.ask_summaries([f"pkg.api.{name}"])
    return platforms_of(engine.requirement(f"pkg.api.{name}"))


def test_a_later_engine_takes_the_summary_from_disk(
    make_lib: MakeLib, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _lib(make_lib)
    imports = count_module_imports(monkeypatch)
    assert _ask(root, tmp_path, "run") == {"tpu"}
    assert imports == ["pkg.api"]
    assert _ask(root, tmp_path, "run") == {"tpu"}
    assert imports == ["pkg.api"]  # not run again
    assert (tmp_path / "summaries" / "pkg.api.json").is_file()
    # another release is another question
    assert _ask(root, tmp_path, "run", release=(0, 12, 1)) == {"tpu"}
    assert imports == ["pkg.api", "pkg.api"]


def test_an_edit_of_a_module_it_read_works_it_out_again(
    make_lib: MakeLib, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _lib(make_lib)
    assert _ask(root, tmp_path, "run") == {"tpu"}
    (root / "pkg" / "impl.py").write_text(IMPL_TRITON)  # not the asked module's file
    imports = count_module_imports(monkeypatch)
    assert _ask(root, tmp_path, "run") == {"cuda", "rocm"}
    assert imports == ["pkg.api"]
    assert _ask(root, tmp_path, "run") == {"cuda", "rocm"}  # and keeps the new answer
    assert imports == ["pkg.api"]


def test_a_module_installed_where_none_was_found_works_it_out_again(
    make_lib: MakeLib, tmp_path: Path
) -> None:
    root = _lib(make_lib)
    assert _ask(root, tmp_path, "fallback") == {"tpu"}
    (root / "pkg" / "fast.py").write_text("from pkg.ops import triton_op as fast_op\n")
    assert _ask(root, tmp_path, "fallback") == {"cuda", "rocm"}
    (root / "pkg" / "fast.py").unlink()  # and removed again
    assert _ask(root, tmp_path, "fallback") == {"tpu"}


@pytest.mark.parametrize(
    "content", [b"{not json", b"[]", b'{"digest": "other", "entries": {}}', b"\xff\xfe"]
)
def test_a_file_that_cannot_be_used_is_ignored(
    make_lib: MakeLib, tmp_path: Path, content: bytes
) -> None:
    root = _lib(make_lib)
    assert _ask(root, tmp_path, "run") == {"tpu"}
    stored = tmp_path / "summaries" / "pkg.api.json"
    stored.write_bytes(content)
    (root / "pkg" / "impl.py").write_text(IMPL_TRITON)
    assert _ask(root, tmp_path, "run") == {"cuda", "rocm"}  # not the old answer


def test_an_entry_of_another_shape_is_worked_out_again(
    make_lib: MakeLib, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _lib(make_lib)
    assert _ask(root, tmp_path, "run") == {"tpu"}
    stored = tmp_path / "summaries" / "pkg.api.json"
    text = stored.read_text()
    assert '"platforms":["tpu"]' in text
    stored.write_text(text.replace('"platforms":["tpu"]', '"platforms":"tpu"'))
    imports = count_module_imports(monkeypatch)
    assert _ask(root, tmp_path, "run") == {"tpu"}
    assert imports == ["pkg.api"]


def test_without_a_cache_folder_nothing_is_kept(make_lib: MakeLib, tmp_path: Path) -> None:
    root = _lib(make_lib)
    engine = reader_for(root)
    engine.ask_summaries(["pkg.api.run"])
    assert platforms_of(engine.requirement("pkg.api.run")) == {"tpu"}
    assert not any(tmp_path.iterdir())
