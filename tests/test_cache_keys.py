"""``typed_pallas_mypy.cache_keys.library_uses``: the stamp of the library files a project
module's findings read, and its per-build memo (a warm run stats each list of files once,
a new build or mypy's daemon stats them again)."""

from __future__ import annotations

import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import pytest

from typed_pallas_mypy import cache_keys


def _record(cache: Path, module: str, files: list[Path]) -> None:
    """What a build left for ``module``: the library files its findings read."""
    folder = cache / "typed-pallas" / "library-uses"
    folder.mkdir(parents=True, exist_ok=True)
    (folder / f"{module}.json").write_text(json.dumps([str(f) for f in files]))


@pytest.fixture
def library(tmp_path: Path) -> list[Path]:
    files = [tmp_path / "site-packages" / "lib" / name for name in ("a.py", "b.py")]
    files[0].parent.mkdir(parents=True)
    for path in files:
        path.write_text("x = 1\n")
    return files


@pytest.fixture
def stats(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every library file ``cache_keys`` stats, in order."""
    seen: list[str] = []
    real = cache_keys._file_stamp

    def counting(path: str) -> list[int] | None:
        seen.append(path)
        return real(path)

    monkeypatch.setattr(cache_keys, "_file_stamp", counting)
    return seen


def _change(path: Path) -> None:
    path.write_text("x = 22\n")  # another size: a new stamp whatever the mtime resolution
    os.utime(path, ns=(1, 1))


def test_one_build_stats_a_list_of_files_once(
    tmp_path: Path, library: list[Path], stats: list[str]
) -> None:
    cache = tmp_path / "cache"
    _record(cache, "pkg.one", library)
    _record(cache, "pkg.two", library[::-1])
    memo = cache_keys.new_library_stamps()
    one = cache_keys.library_uses(str(cache), "pkg.one", writing=False, memo=memo)
    two = cache_keys.library_uses(str(cache), "pkg.two", writing=False, memo=memo)
    assert one == two
    assert len(stats) == 2


def test_without_a_memo_every_module_stats_its_files(
    tmp_path: Path, library: list[Path], stats: list[str]
) -> None:
    cache = tmp_path / "cache"
    _record(cache, "pkg.one", library)
    _record(cache, "pkg.two", library)
    cache_keys.library_uses(str(cache), "pkg.one", writing=False)
    cache_keys.library_uses(str(cache), "pkg.two", writing=False)
    assert len(stats) == 4


def test_a_new_build_sees_a_changed_library_file(tmp_path: Path, library: list[Path]) -> None:
    cache = tmp_path / "cache"
    _record(cache, "pkg.one", library)
    before = cache_keys.library_uses(
        str(cache), "pkg.one", writing=False, memo=cache_keys.new_library_stamps()
    )
    _change(library[1])
    after = cache_keys.library_uses(
        str(cache), "pkg.one", writing=False, memo=cache_keys.new_library_stamps()
    )
    assert before is not None
    assert after is not None
    assert before != after


def test_one_build_keeps_the_stamp_it_first_gave(tmp_path: Path, library: list[Path]) -> None:
    # the memo's one visible effect: within a build, a list of files keeps its first stamp
    cache = tmp_path / "cache"
    _record(cache, "pkg.one", library)
    memo = cache_keys.new_library_stamps()
    before = cache_keys.library_uses(str(cache), "pkg.one", writing=False, memo=memo)
    _change(library[1])
    assert cache_keys.library_uses(str(cache), "pkg.one", writing=False, memo=memo) == before


def test_the_daemon_gets_no_memo(monkeypatch: pytest.MonkeyPatch) -> None:
    assert cache_keys.new_library_stamps() == cache_keys.LibraryStamps()
    monkeypatch.setitem(sys.modules, "mypy.dmypy_server", sys.modules[__name__])
    assert cache_keys.new_library_stamps() is None


def test_a_module_that_recorded_nothing_has_no_stamp(tmp_path: Path) -> None:
    memo = cache_keys.new_library_stamps()
    assert cache_keys.library_uses(str(tmp_path), "pkg.none", writing=False, memo=memo) is None


def test_one_build_lists_the_recorded_modules_once(
    tmp_path: Path, library: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A build opens the record of the modules that have one only: the folder is listed on
    the first lookup, and a module written in the build is added to that list."""
    cache = tmp_path / "cache"
    _record(cache, "pkg.one", library)
    memo = cache_keys.new_library_stamps()
    listings: list[str] = []
    real = os.listdir

    def listing(path: str) -> list[str]:
        listings.append(path)
        return real(path)

    monkeypatch.setattr(cache_keys.os, "listdir", listing)
    assert cache_keys.library_uses(str(cache), "pkg.one", writing=False, memo=memo) is not None
    assert cache_keys.library_uses(str(cache), "pkg.other", writing=False, memo=memo) is None
    assert len(listings) == 1
    monkeypatch.setattr(
        cache_keys, "_LIBRARY_FILES", {str(library[0]): cache_keys._file_stamp(str(library[0]))}
    )
    written = cache_keys.library_uses(str(cache), "pkg.other", writing=True, memo=memo)
    assert written is not None
    assert cache_keys.library_uses(str(cache), "pkg.other", writing=False, memo=memo) == written
    assert len(listings) == 1


def test_the_daemon_version_does_not_grow_with_the_files_read(
    monkeypatch: pytest.MonkeyPatch, library: list[Path]
) -> None:
    """Inside mypy's daemon the plugin's version names library files that changed since
    they were read, not the files read: reading one more file must not change it (the
    daemon restarts, cold, whenever the version of a ``dmypy run`` differs from the one
    it started with), while an upgrade of a file read must."""
    monkeypatch.setattr(cache_keys, "_LIBRARY_FILES", {})
    monkeypatch.setitem(sys.modules, "mypy.dmypy_server", sys.modules[__name__])
    started = cache_keys.versioned_name()
    assert started.endswith(".libraries.same")
    cache_keys.note_library_files([str(library[0])])
    assert cache_keys.versioned_name() == started
    cache_keys.note_library_files([str(library[1])])
    assert cache_keys.versioned_name() == started
    library[0].write_text("x = 2  # upgraded\n")
    assert cache_keys.versioned_name() != started
    monkeypatch.delitem(sys.modules, "mypy.dmypy_server")
    assert ".libraries." not in cache_keys.versioned_name()


def test_the_code_hash_leaves_out_what_runs_outside_the_build(tmp_path: Path) -> None:
    """Editing the command line or the editor server keeps users' caches; editing the
    plugin's hooks or its inference discards them."""
    package = tmp_path / "typed_pallas_mypy"
    for relpath in ("main.py", "transformers/hooks.py", "cli/check.py", "lsp/server.py"):
        (package / relpath).parent.mkdir(parents=True, exist_ok=True)
        (package / relpath).write_text("x = 1\n")
    first = cache_keys.code_digest(package)
    for outside in ("cli/check.py", "lsp/server.py"):
        (package / outside).write_text("x = 2\n")
    assert cache_keys.code_digest(package) == first
    (package / "transformers" / "hooks.py").write_text("x = 2\n")
    assert cache_keys.code_digest(package) != first


# ------------------------------------------------------------------ the code hash's memo

_HOUR_AGO_NS = 3600 * 10**9


def _plugin_package(root: Path, *, age_ns: int = _HOUR_AGO_NS) -> Path:
    """A small plugin package whose files were last written ``age_ns`` ago."""
    package = root / "typed_pallas_mypy"
    for relpath, text in (("main.py", "x = 1\n"), ("inference/reader.py", "y = 1\n")):
        (package / relpath).parent.mkdir(parents=True, exist_ok=True)
        (package / relpath).write_text(text)
    _age(package, age_ns)
    return package


def _age(package: Path, age_ns: int) -> None:
    then = time.time_ns() - age_ns
    for path in package.rglob("*.py"):
        os.utime(path, ns=(then, then))


def _memo(package: Path) -> Path:
    found = cache_keys._digest_memo(str(package))
    assert found is not None
    return Path(found)


def _no_reading(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(digest: object, path: str) -> None:
        raise AssertionError(f"read {path}: the memo should have answered")

    monkeypatch.setattr(cache_keys, "_update_with_file", refuse)


@pytest.fixture
def bytecode_written(monkeypatch: pytest.MonkeyPatch) -> None:
    """As after ``pip install`` (Python writes bytecode), whatever this shell says."""
    monkeypatch.setattr(sys, "dont_write_bytecode", False)


@pytest.mark.usefixtures("bytecode_written")
def test_a_run_with_the_same_files_takes_the_hash_from_the_memo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    package = _plugin_package(tmp_path)
    first = cache_keys.code_digest(package)
    assert _memo(package).is_file()
    _no_reading(monkeypatch)
    assert cache_keys.code_digest(package) == first


@pytest.mark.usefixtures("bytecode_written")
def test_an_edit_of_the_same_size_changes_the_hash_despite_the_memo(tmp_path: Path) -> None:
    package = _plugin_package(tmp_path)
    first = cache_keys.code_digest(package)
    (package / "inference" / "reader.py").write_text("y = 2\n")
    _age(package, _HOUR_AGO_NS // 2)
    assert cache_keys.code_digest(package) != first


@pytest.mark.usefixtures("bytecode_written")
def test_new_times_and_the_same_bytes_keep_the_hash(tmp_path: Path) -> None:
    """A fresh checkout or a reinstall of the same plugin keeps users' caches."""
    package = _plugin_package(tmp_path)
    first = cache_keys.code_digest(package)
    _age(package, _HOUR_AGO_NS // 3)
    assert cache_keys.code_digest(package) == first


@pytest.mark.usefixtures("bytecode_written")
def test_files_changed_a_moment_ago_leave_no_memo(tmp_path: Path) -> None:
    """Within the clock's tick a second edit keeps the stamp: the hash is computed again."""
    package = _plugin_package(tmp_path, age_ns=0)
    first = cache_keys.code_digest(package)
    assert not _memo(package).exists()
    (package / "main.py").write_text("x = 2\n")
    assert cache_keys.code_digest(package) != first


def test_no_memo_where_python_writes_no_bytecode(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(sys, "dont_write_bytecode", True)
    package = _plugin_package(tmp_path)
    cache_keys.code_digest(package)
    assert not _memo(package).exists()


@pytest.mark.usefixtures("bytecode_written")
def test_a_memo_of_other_files_or_garbage_is_not_taken(tmp_path: Path) -> None:
    package = _plugin_package(tmp_path)
    first = cache_keys.code_digest(package)
    memo = _memo(package)
    for text in ("", "garbage", "0123456789abcdef feedfeedfeedfeed\n"):
        memo.write_text(text)
        assert cache_keys.code_digest(package) == first


@pytest.mark.usefixtures("bytecode_written")
def test_a_python_without_bytecode_files_computes_the_hash_and_keeps_no_memo(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``cache_from_source`` raises where ``sys.implementation.cache_tag`` is None: the
    plugin still loads (an error here would stop mypy before any check)."""
    package = _plugin_package(tmp_path)
    first = cache_keys.code_digest(package)

    def no_cache_tag(path: str) -> str:
        raise NotImplementedError("sys.implementation.cache_tag is None")

    monkeypatch.setattr(importlib.util, "cache_from_source", no_cache_tag)
    assert cache_keys._digest_memo(str(package)) is None
    assert cache_keys.code_digest(package) == first
