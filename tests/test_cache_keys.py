"""``typed_pallas_mypy.cache_keys.library_uses``: the stamp of the library files a project
module's findings read or looked for (an edit, an install and an uninstall each change
it; a site folder's ``.pth`` files count as one entry), and its per-build memo (a warm
run stats each file and each list of files once, a new build or mypy's daemon stats them
again); the daemon's version; the code hash."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import sys
import time
from pathlib import Path

import pytest

from typed_pallas_mypy import cache_keys


def _record(cache: Path, module: str, files: list[Path]) -> None:
    """What a build left for ``module``: the library files its findings read (a list
    kept once under its hash, which the module's record names)."""
    folder = cache / "typed-pallas" / "library-uses"
    listed = json.dumps([str(f) for f in files])
    name = hashlib.sha256(listed.encode()).hexdigest()[:16]
    (folder / cache_keys.LISTS).mkdir(parents=True, exist_ok=True)
    (folder / cache_keys.LISTS / f"{name}.json").write_text(listed)
    (folder / f"{module}.{name}").write_text("")


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
        if os.path.basename(path) != cache_keys.LISTS:  # the records' folder only
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


def test_the_daemon_version_changes_on_an_install(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """A path the inference found missing appears, or a site folder gets a ``.pth`` file:
    the daemon restarts, as for an edit."""
    monkeypatch.setattr(cache_keys, "_LIBRARY_FILES", {})
    monkeypatch.setitem(sys.modules, "mypy.dmypy_server", sys.modules[__name__])
    site = tmp_path / "site-packages"
    site.mkdir()
    cache_keys.note_library_files([str(site / "mylib.py")])
    cache_keys.note_site_folders([str(site)])
    started = cache_keys.versioned_name()
    assert started.endswith(".libraries.same")
    (site / "unrelated.txt").write_text("")
    assert cache_keys.versioned_name() == started
    (site / "mylib.py").write_text("x = 1\n")
    installed = cache_keys.versioned_name()
    assert installed != started
    (site / "mylib.pth").write_text("/somewhere\n")
    assert cache_keys.versioned_name() not in (started, installed)


def test_one_build_stats_a_file_once_across_lists(
    tmp_path: Path, library: list[Path], stats: list[str]
) -> None:
    """Modules written at different points of a cold run recorded different lists (the
    files noted so far): a warm run stats a file they share once."""
    cache = tmp_path / "cache"
    _record(cache, "pkg.one", library[:1])
    _record(cache, "pkg.two", library)
    memo = cache_keys.new_library_stamps()
    cache_keys.library_uses(str(cache), "pkg.one", writing=False, memo=memo)
    cache_keys.library_uses(str(cache), "pkg.two", writing=False, memo=memo)
    assert sorted(stats) == sorted(map(str, library))


def test_a_missing_file_that_appears_makes_the_module_stale(tmp_path: Path) -> None:
    """Where the inference looked for a module and found none (an install after a run),
    and where a module it read was (an uninstall)."""
    cache = tmp_path / "cache"
    site = tmp_path / "site-packages"
    site.mkdir()
    absent = site / "mylib" / "__init__.py"
    _record(cache, "app", [absent])

    def stamp() -> str | None:
        memo = cache_keys.new_library_stamps()
        return cache_keys.library_uses(str(cache), "app", writing=False, memo=memo)

    before = stamp()
    assert stamp() == before  # nothing installed: the same
    absent.parent.mkdir()
    absent.write_text("x = 1\n")
    installed = stamp()
    assert installed != before
    absent.unlink()
    assert stamp() == before


def test_a_site_folders_pth_files_stamp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``<folder>/*.pth`` stands for the folder's ``.pth`` files (an editable install
    adds one, with the finder that maps its modules): adding, editing or removing one
    changes its stamp; installing a package folder does not."""
    monkeypatch.setattr(cache_keys, "_LIBRARY_FILES", {})
    site = tmp_path / "site-packages"
    site.mkdir()
    cache_keys.note_site_folders([str(site)])
    key = os.path.join(str(site), cache_keys.SITE_FILES)
    assert list(cache_keys._LIBRARY_FILES) == [key]
    empty = cache_keys._library_stamp(key)
    assert empty == []
    (site / "otherlib").mkdir()
    (site / "otherlib" / "__init__.py").write_text("")
    (site / "otherlib-1.0.dist-info").mkdir()
    assert cache_keys._library_stamp(key) == empty
    pth = site / "__editable__.mylib-0.1.pth"
    pth.write_text("import __editable___mylib_0_1_finder\n")
    added = cache_keys._library_stamp(key)
    assert added != empty
    pth.write_text("import __editable___mylib_0_2_finder\n")
    assert cache_keys._library_stamp(key) not in (empty, added)
    pth.unlink()
    assert cache_keys._library_stamp(key) == empty
    assert cache_keys._library_stamp(os.path.join(str(tmp_path / "gone"), "*.pth")) is None


def test_a_module_written_keeps_the_stamps_the_files_had_when_read(
    tmp_path: Path, library: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A library file edited after the inference read it and before mypy wrote the
    module's cache: the next run finds the module stale (its findings came from the old
    file); with no edit, the same stamp."""
    cache = tmp_path / "cache"
    monkeypatch.setattr(cache_keys, "_LIBRARY_FILES", {})
    cache_keys.note_library_files(map(str, library))
    same = cache_keys.library_uses(str(cache), "pkg.same", writing=True)
    assert cache_keys.library_uses(str(cache), "pkg.same", writing=False) == same
    _change(library[0])
    edited = cache_keys.library_uses(str(cache), "pkg.edited", writing=True)
    assert edited == same  # as read
    assert cache_keys.library_uses(str(cache), "pkg.edited", writing=False) != edited


def test_modules_that_noted_the_same_files_share_one_list(
    tmp_path: Path, library: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A cold run writes each list of files once, whatever the number of modules written
    with it; a warm run reads it once (a module's record only names it)."""
    cache = tmp_path / "cache"
    monkeypatch.setattr(cache_keys, "_LIBRARY_FILES", {})
    cache_keys.note_library_files([str(library[0])])
    first = cache_keys.library_uses(str(cache), "pkg.one", writing=True)
    assert cache_keys.library_uses(str(cache), "pkg.two", writing=True) == first
    cache_keys.note_library_files([str(library[1])])
    later = cache_keys.library_uses(str(cache), "pkg.three", writing=True)
    assert later != first
    lists = cache / "typed-pallas" / "library-uses" / cache_keys.LISTS
    assert sorted(json.loads(p.read_text()) for p in lists.iterdir()) == [
        [str(library[0])],
        sorted(map(str, library)),
    ]
    memo = cache_keys.new_library_stamps()
    opened: list[str] = []
    real = open

    def opening(path: str, *args: object, **kwargs: object) -> object:
        opened.append(os.path.basename(os.path.dirname(path)))
        return real(path, *args, **kwargs)  # type: ignore[call-overload]

    monkeypatch.setattr("builtins.open", opening)
    for module, stamp in (("pkg.one", first), ("pkg.two", first), ("pkg.three", later)):
        assert cache_keys.library_uses(str(cache), module, writing=False, memo=memo) == stamp
    assert opened.count(cache_keys.LISTS) == 2


def test_a_record_without_its_list_or_with_another_is_stale_not_an_error(
    tmp_path: Path, library: list[Path]
) -> None:
    cache = tmp_path / "cache"
    folder = cache / "typed-pallas" / "library-uses"
    _record(cache, "pkg.two", library)
    (folder / "pkg.one.0123456789abcdef").write_text("")  # its list is gone
    (folder / "pkg.two.0123456789abcdef").write_text("")  # a second record (a failed write)
    (folder / cache_keys.LISTS / "fedcba9876543210.json").write_text("not json")
    (folder / "pkg.three.fedcba9876543210").write_text("")
    for module in ("pkg.one", "pkg.two", "pkg.three"):
        assert cache_keys.library_uses(str(cache), module, writing=False) == "unreadable"
    assert cache_keys.library_uses(str(cache), "pkg", writing=False) is None


def test_writing_again_replaces_the_record(
    tmp_path: Path, library: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A module checked again records the files noted now (one record, the old one
    removed, also when the build started before it was written: the daemon); with
    nothing noted, no record."""
    cache = tmp_path / "cache"
    folder = cache / "typed-pallas" / "library-uses"
    monkeypatch.setattr(cache_keys, "_LIBRARY_FILES", {})
    cache_keys.note_library_files([str(library[0])])
    first = cache_keys.library_uses(str(cache), "pkg.one", writing=True)
    cache_keys.note_library_files([str(library[1])])
    second = cache_keys.library_uses(str(cache), "pkg.one", writing=True)
    assert second != first
    assert len([p for p in folder.iterdir() if p.name.startswith("pkg.one.")]) == 1
    assert cache_keys.library_uses(str(cache), "pkg.one", writing=False) == second
    monkeypatch.setattr(cache_keys, "_LIBRARY_FILES", {})
    assert cache_keys.library_uses(str(cache), "pkg.one", writing=True) is None
    assert [p for p in folder.iterdir() if p.name.startswith("pkg.one.")] == []
    assert cache_keys.library_uses(str(cache), "pkg.one", writing=False) is None


def test_a_cache_that_cannot_be_written_leaves_no_record(
    tmp_path: Path, library: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """mypy goes on (its hooks never raise); the next run checks the module again."""
    cache = tmp_path / "cache"
    (cache / "typed-pallas").mkdir(parents=True)
    (cache / "typed-pallas" / "library-uses").write_text("a file where a folder should be")
    monkeypatch.setattr(cache_keys, "_LIBRARY_FILES", {})
    cache_keys.note_library_files(map(str, library))
    assert cache_keys.library_uses(str(cache), "pkg.one", writing=True) is not None
    assert cache_keys.library_uses(str(cache), "pkg.one", writing=False) in (None, "unreadable")


def test_lists_no_module_names_are_removed_in_the_end(
    tmp_path: Path, library: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each run that checks a module again may record a new list: the folder of lists
    does not grow without end, and the lists modules name stay."""
    cache = tmp_path / "cache"
    lists = cache / "typed-pallas" / "library-uses" / cache_keys.LISTS
    monkeypatch.setattr(cache_keys, "_LIBRARY_FILES", {})
    cache_keys.note_library_files([str(library[0])])
    kept = cache_keys.library_uses(str(cache), "pkg.kept", writing=True)
    for i in range(cache_keys._SPARE_LISTS + 5):
        cache_keys.note_library_files([str(tmp_path / f"absent{i}.py")])
        cache_keys.library_uses(str(cache), "pkg.edited", writing=True)
        assert len(list(lists.iterdir())) <= cache_keys._SPARE_LISTS + 2
    assert cache_keys.library_uses(str(cache), "pkg.kept", writing=False) == kept
    edited = cache_keys.library_uses(str(cache), "pkg.edited", writing=False)
    assert edited not in (None, "unreadable")


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


def test_project_files_read_are_in_the_record(
    tmp_path: Path, library: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # where the summaries answer, the project modules a module's findings read are part
    # of its key: an edit of one (a body-only edit too) checks the module again
    monkeypatch.setattr(cache_keys, "_LIBRARY_FILES", {})
    cache = tmp_path / "cache"
    project = tmp_path / "proj" / "kernels.py"
    project.parent.mkdir()
    project.write_text("x = 1\n")
    written = cache_keys.library_uses(str(cache), "app", writing=True, read=[str(project)])
    memo = cache_keys.new_library_stamps()
    assert cache_keys.library_uses(str(cache), "app", writing=False, memo=memo) == written
    _change(project)
    after = cache_keys.library_uses(
        str(cache), "app", writing=False, memo=cache_keys.new_library_stamps()
    )
    assert written is not None
    assert after not in (None, written)


def test_a_module_that_read_no_file_records_none(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(cache_keys, "_LIBRARY_FILES", {})
    cache = tmp_path / "cache"
    assert cache_keys.library_uses(str(cache), "app", writing=True, read=[]) is None
    assert cache_keys.library_uses(str(cache), "app", writing=False) is None


def test_a_shadowed_file_is_stamped_by_what_the_run_reads_in_its_place(
    tmp_path: Path, library: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    # an editor's unsaved buffer (mypy's --shadow-file): a module whose findings read
    # the shadowed file is checked again, though the file on disk is unchanged
    monkeypatch.setattr(cache_keys, "_SHADOWS", {})
    cache = tmp_path / "cache"
    _record(cache, "pkg.one", library)
    plain = cache_keys.library_uses(str(cache), "pkg.one", writing=False)
    buffer = tmp_path / "buffer.py"
    buffer.write_text("x = 333\n")
    cache_keys.note_shadows([[str(library[0]), str(buffer)]])
    shadowed = cache_keys.library_uses(str(cache), "pkg.one", writing=False)
    cache_keys.note_shadows([])
    assert cache_keys.library_uses(str(cache), "pkg.one", writing=False) == plain
    assert shadowed not in (None, plain)
