"""The on-disk cache of local facts (``inference.store``): one file per module.

A second ``Inference`` over the same cache reads the JSON and parses nothing; a
module whose file changed (size, or mtime alone) is parsed again; a cache file that is
corrupt, from another reader version, or cannot be written is ignored without an error.
Parses are counted by the ``parses`` fixture (``conftest``: one per reader built).
This store is the rules' machinery: every test here goes with the rules (``rules_answer``).
"""

from __future__ import annotations

import ast
import json
import os
from pathlib import Path

import pytest
from library_fakes import OPS, MakeLib, platforms_of, reader_for

from typed_pallas_mypy.inference import combine, store

pytestmark = pytest.mark.usefixtures("rules_answer")

USE = OPS + "\ndef outer(x):\n    return tpu_op(x)\n"


def test_second_instance_reads_the_cache(
    make_lib: MakeLib, tmp_path: Path, parses: list[str]
) -> None:
    root = make_lib({"pkg/ops.py": USE})
    cache = tmp_path / "cache"
    first = reader_for(root, cache).requirement("pkg.ops.outer")
    assert parses == ["pkg.ops"]
    data = json.loads((cache / "pkg.ops.json").read_text())
    assert data["digest"] == store.DIGEST
    assert data["path"] == str(root / "pkg" / "ops.py")
    second_facts = reader_for(root, cache)
    second = second_facts.requirement("pkg.ops.outer")
    assert parses == ["pkg.ops"]  # nothing parsed the second time
    assert second == first
    assert platforms_of(second) == {"tpu"}
    assert second_facts.modules_read() == {"pkg.ops": str(root / "pkg" / "ops.py")}


def test_changed_file_is_read_again(make_lib: MakeLib, tmp_path: Path, parses: list[str]) -> None:
    root = make_lib({"pkg/ops.py": USE})
    cache = tmp_path / "cache"
    assert platforms_of(reader_for(root, cache).requirement("pkg.ops.outer")) == {"tpu"}
    path = root / "pkg" / "ops.py"
    path.write_text(USE.replace("pltpu.CompilerParams()", "pltriton.CompilerParams()"))
    assert platforms_of(reader_for(root, cache).requirement("pkg.ops.outer")) == {"cuda", "rocm"}
    assert parses == ["pkg.ops", "pkg.ops"]
    # same size, another mtime: read again too
    stat = path.stat()
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
    assert platforms_of(reader_for(root, cache).requirement("pkg.ops.outer")) == {"cuda", "rocm"}
    assert parses == ["pkg.ops", "pkg.ops", "pkg.ops"]
    # unchanged: from the cache
    reader_for(root, cache).requirement("pkg.ops.outer")
    assert parses == ["pkg.ops", "pkg.ops", "pkg.ops"]


@pytest.mark.parametrize(
    "content",
    [b"{not json", b"[]", b'{"digest": "other", "facts": {}}', b"\xff\xfe"],
    ids=["corrupt", "not-an-object", "other-digest", "not-utf8"],
)
def test_bad_cache_file_is_ignored_and_rewritten(
    make_lib: MakeLib, tmp_path: Path, parses: list[str], content: bytes
) -> None:
    root = make_lib({"pkg/ops.py": USE})
    cache = tmp_path / "cache"
    cache.mkdir()
    (cache / "pkg.ops.json").write_bytes(content)
    assert platforms_of(reader_for(root, cache).requirement("pkg.ops.outer")) == {"tpu"}
    assert parses == ["pkg.ops"]
    assert json.loads((cache / "pkg.ops.json").read_text())["digest"] == store.DIGEST


def test_bad_entry_in_the_cache_is_read_again(
    make_lib: MakeLib, tmp_path: Path, parses: list[str]
) -> None:
    root = make_lib({"pkg/ops.py": USE})
    cache = tmp_path / "cache"
    reader_for(root, cache).requirement("pkg.ops.outer")
    path = cache / "pkg.ops.json"
    data = json.loads(path.read_text())
    data["facts"]["functions"] = ["not", "a", "mapping"]
    path.write_text(json.dumps(data))
    assert platforms_of(reader_for(root, cache).requirement("pkg.ops.outer")) == {"tpu"}
    assert parses == ["pkg.ops", "pkg.ops"]


def test_stored_functions_decode_when_asked_and_a_bad_one_reads_as_unknown(
    make_lib: MakeLib, tmp_path: Path, parses: list[str]
) -> None:
    """A stored module's functions are decoded one by one, as they are asked for; one
    whose entry does not decode reads as unknown (no requirement: nothing reported),
    and the others keep theirs."""
    root = make_lib({"pkg/ops.py": USE})
    cache = tmp_path / "cache"
    reader_for(root, cache).requirement("pkg.ops.outer")
    path = cache / "pkg.ops.json"
    data = json.loads(path.read_text())
    data["facts"]["functions"]["triton_op"]["steps"] = "not a list"
    path.write_text(json.dumps(data))
    facts = reader_for(root, cache)
    assert platforms_of(facts.requirement("pkg.ops.tpu_op")) == {"tpu"}
    assert facts.requirement("pkg.ops.triton_op") is None
    assert platforms_of(facts.requirement("pkg.ops.outer")) == {"tpu"}
    assert parses == ["pkg.ops"]  # read from the cache, not parsed again


def test_writes_are_atomic_and_leave_no_temporary_files(make_lib: MakeLib, tmp_path: Path) -> None:
    root = make_lib({"pkg/ops.py": USE, "other/ops.py": OPS})
    cache = tmp_path / "cache"
    facts = reader_for(root, cache)
    facts.requirement("pkg.ops.outer")
    facts.requirement("other.ops.tpu_op")
    assert sorted(p.name for p in cache.iterdir()) == ["other.ops.json", "pkg.ops.json"]


def test_memory_only_and_unwritable_cache(make_lib: MakeLib, tmp_path: Path) -> None:
    root = make_lib({"pkg/ops.py": USE})
    assert platforms_of(reader_for(root, None).requirement("pkg.ops.outer")) == {"tpu"}
    blocked = tmp_path / "a-file"
    blocked.write_text("not a folder")
    assert platforms_of(reader_for(root, blocked).requirement("pkg.ops.outer")) == {"tpu"}
    assert blocked.read_text() == "not a folder"


def test_module_without_pallas_is_stored_too(
    make_lib: MakeLib, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    root = make_lib({"pkg/util.py": "def helper(x):\n    return x\n"})
    cache = tmp_path / "cache"
    assert reader_for(root, cache).requirement("pkg.util.helper") is None
    entry = json.loads((cache / "pkg.util.json").read_text())
    assert "helper" in entry["facts"]["functions"]
    assert "worth" not in entry


@pytest.mark.parametrize(
    ("package", "read"),
    [("kernels", True), ("pytest", False), ("_pytest", False), ("pluggy", False)],
)
def test_test_frameworks_are_never_read(
    make_lib: MakeLib, tmp_path: Path, parses: list[str], package: str, read: bool
) -> None:
    """A test framework defines no Pallas kernel (``fullnames.NO_KERNEL_PACKAGES``): a
    project's tests import dozens of its modules, which are never read; a package of
    the same shape under another name is."""
    use = f"from {package}.ops import tpu_op\n\ndef outer(x):\n    return tpu_op(x)\n"
    root = make_lib({f"{package}/ops.py": OPS, "app/use.py": use})
    found = reader_for(root, tmp_path / "cache").requirement("app.use.outer")
    assert (f"{package}.ops" in parses) == read, parses
    assert platforms_of(found) == ({"tpu"} if read else None)


def _span_of_call(source: str, callee: str) -> tuple[int, int, int, int]:
    """Where the first call of ``callee`` is written in ``source``."""
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            if node.func.id == callee:
                assert node.end_lineno is not None and node.end_col_offset is not None
                return (node.lineno, node.col_offset, node.end_lineno, node.end_col_offset)
    raise AssertionError(callee)


def test_a_module_read_for_its_facts_gives_its_calls_without_a_second_parse(
    make_lib: MakeLib, parses: list[str]
) -> None:
    """An installed module mypy checks is read for its facts first (a call of one of
    its functions), then asked about by position (its own calls): one parse."""
    root = make_lib({"pkg/ops.py": USE})
    facts = reader_for(root)
    assert platforms_of(facts.requirement("pkg.ops.outer")) == {"tpu"}
    where = _span_of_call(USE, "tpu_op")
    assert platforms_of(facts.call_requirement("pkg.ops", where)) == {"tpu"}
    assert parses == ["pkg.ops"]


def test_a_reading_kept_for_its_calls_is_dropped_after_other_modules(
    make_lib: MakeLib, parses: list[str]
) -> None:
    """Only the last few readings are kept (each holds a syntax tree): a module asked
    about by position after more modules were read is parsed again, same answer."""
    others = {f"pkg/other{i}.py": OPS for i in range(combine._KEPT_READINGS)}
    root = make_lib({"pkg/ops.py": USE, **others})
    facts = reader_for(root)
    assert platforms_of(facts.requirement("pkg.ops.outer")) == {"tpu"}
    for i in range(combine._KEPT_READINGS):
        assert platforms_of(facts.requirement(f"pkg.other{i}.tpu_op")) == {"tpu"}
    where = _span_of_call(USE, "tpu_op")
    assert platforms_of(facts.call_requirement("pkg.ops", where)) == {"tpu"}
    assert parses.count("pkg.ops") == 2
