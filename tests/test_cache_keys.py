"""``typed_pallas_mypy.cache_keys.library_uses``: the stamp of the library files a project
module's findings read, and its per-build memo (a warm run stats each list of files once,
a new build or mypy's daemon stats them again)."""

from __future__ import annotations

import json
import os
import sys
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
