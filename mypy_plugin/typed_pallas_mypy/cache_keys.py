"""What makes mypy's cache and daemon forget results the plugin gave.

* ``versioned_name()`` is ``typed_pallas_mypy.__version__``: a hash of the plugin's own
  sources and of ``typed_pallas._platforms`` (mypy hashes only the plugin's top
  module, so an edit to a transformer or a table must show here), plus, inside mypy's
  daemon, the configuration's hash (the daemon has no other way to notice a
  ``[tool.typed-pallas]`` edit; a changed plugin snapshot restarts it);
* ``config_data(config)`` is what ``report_config_data`` answers for the project's
  modules: code hash, JAX version and configuration, so that a change of any of them
  re-checks the project (and not all of jax);
* ``library_uses(cache_dir, module, writing)``: the library files a project module's
  findings may depend on. mypy does not track them for the module (a library upgrade
  changes no interface the module imports; an untyped library, or one an editable
  install's finder maps, is not even in mypy's build), so when mypy writes the module's
  cache, the library files noted so far are kept with the module's name next to mypy's
  cache (``<cache_dir>/typed-pallas/library-uses``), and their size and mtime stamp goes
  into its config data: a changed library file makes the module stale in the next run.
  The files noted (``note_library_files``, ``note_site_folders``) are what the
  inference looked at outside the project: each module file it read (installed, on
  ``PYTHONPATH``, or mapped by an editable install), each path whose absence decided
  where a module was found or that it was not (a missing file or folder: its stamp is
  None until a library is installed there), and the ``.pth`` files of each folder it
  searched (a ``<folder>/*.pth`` entry, stamped by the names, sizes and mtimes of the
  folder's ``.pth`` files: an editable install adds one). So an edit, an install and an
  uninstall all make the module stale. Inside mypy's daemon, the stamp of every file
  noted goes into the plugin's version, which restarts the daemon when one changes. A
  ``LibraryStamps`` memo (one per build, from ``new_library_stamps``) stamps each file
  and each list of files once per build: a warm run of a project whose modules recorded
  the same files stats them once, not once per module; inside the daemon, which
  outlives builds, there is no memo.

Imports nothing of mypy and nothing of the plugin's transformers: mypy reads these on
every run, warm ones included, before any hook fires.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import importlib.util
import json
import os
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any, Final, Protocol

from typing_extensions import override

from typed_pallas import _platforms, _versions

#: Bump when the plugin's behaviour changes without a code change (a cache format).
PLUGIN_BEHAVIOUR_VERSION: Final = 3


class Fingerprinted(Protocol):
    def fingerprint(self) -> dict[str, Any]: ...


def canonical(value: object) -> object:
    """JSON-able and independent of hash randomisation (frozensets become sorted lists)."""
    if isinstance(value, (frozenset, set)):
        return sorted(canonical(v) for v in value)  # type: ignore[type-var]
    if isinstance(value, Mapping):
        return sorted((repr(canonical(k)), canonical(v)) for k, v in value.items())
    if isinstance(value, (tuple, list)):
        return [canonical(v) for v in value]
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return canonical(dataclasses.asdict(value))
    return value


def _digest(value: object) -> str:
    text = json.dumps(canonical(value), default=str)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


#: Subpackages that run outside mypy's build (the command line, the editor server):
#: editing them changes no finding, so they are not in the code hash
OUTSIDE_THE_BUILD: Final = ("cli", "lsp")


#: the files this run reads in place of others (mypy's ``--shadow-file``: an editor's
#: unsaved buffer, ``typed-pallas lsp``), by the absolute path of the file shadowed
_SHADOWS: dict[str, str] = {}


def note_shadows(pairs: Iterable[Sequence[str]]) -> None:
    """The run's ``--shadow-file`` pairs (source, shadow): a recorded file that is
    shadowed is stamped by what the run reads in its place, so a module whose findings
    read another module is checked again when that module's unsaved buffer changes."""
    _SHADOWS.clear()
    _SHADOWS.update((os.path.abspath(pair[0]), pair[1]) for pair in pairs)


def _file_stamp(path: str) -> list[int] | None:
    if _SHADOWS:
        path = _SHADOWS.get(os.path.abspath(path), path)
    try:
        found = os.stat(path)
    except OSError:
        return None
    return [found.st_size, found.st_mtime_ns]


def code_digest(package: Path) -> str:
    """Hash of the plugin's own sources under ``package`` (tables included, the
    subpackages of ``OUTSIDE_THE_BUILD`` left out) and of ``_platforms``: each file's
    path relative to ``package`` and its bytes.

    Runs on every mypy run, warm ones included: the folders are listed with
    ``os.scandir`` (``Path.rglob`` took most of the time), and the folders of
    ``OUTSIDE_THE_BUILD`` and ``__pycache__`` are not entered. As ``rglob``, it does not
    follow a symbolic link to a folder.

    Reading and hashing the sources (720 KB) took a millisecond of every run, so the
    hash is kept in the package's bytecode folder (``_DIGEST_MEMO``, where Python keeps
    the package's ``.pyc`` files, and only where Python writes them), under a stamp of
    the files (path, size and ``st_mtime_ns`` of each): a run that finds the same stamp
    takes the hash without reading a source. A file changed within ``_RACY_NS`` of the
    run may be changed again without its stamp changing (the file system's clock ticks
    coarsely), so such a run leaves no memo; a checkout or an install with new times and
    the same bytes computes the same hash.
    """
    root = str(package)
    relpaths = _source_files(root)
    paths = [os.path.join(root, relpath) for relpath in relpaths]
    platforms = os.path.realpath(_platforms.__file__)
    stamps = [(path, _file_stamp(path)) for path in (*paths, platforms)]
    stamp = hashlib.sha256(json.dumps(stamps).encode()).hexdigest()[:16]
    memo = _digest_memo(root)
    try:
        if memo is None:
            raise FileNotFoundError
        with open(memo, encoding="ascii") as found:
            kept = found.read().split()
        if len(kept) == 2 and kept[0] == stamp:
            return kept[1]
    except (OSError, ValueError):
        pass
    digest = hashlib.sha256()
    for relpath, path in zip(relpaths, paths, strict=True):
        digest.update(relpath.encode())
        digest.update(b"\0")
        _update_with_file(digest, path)
    digest.update(b"\0typed_pallas._platforms\0")
    _update_with_file(digest, platforms)
    code = digest.hexdigest()[:16]
    newest = max((found[1] for _, found in stamps if found is not None), default=0)
    if memo is not None and not sys.dont_write_bytecode and newest < time.time_ns() - _RACY_NS:
        _write_quietly(memo, f"{stamp} {code}\n")
    return code


#: Where ``code_digest`` keeps its memo: the file name inside the package's bytecode folder
_DIGEST_MEMO: Final = "typed-pallas-code-digest.txt"
#: A source changed this recently (2 s) may change again under the same stamp
_RACY_NS: Final = 2_000_000_000


def _digest_memo(root: str) -> str | None:
    """The memo's path: in ``__pycache__`` under ``root``, or under ``sys.pycache_prefix``
    where that is set (``importlib.util.cache_from_source`` says which); None where this
    Python keeps no bytecode files (no cache tag): then there is no memo."""
    try:
        bytecode = importlib.util.cache_from_source(os.path.join(root, "__init__.py"))
    except (NotImplementedError, ValueError):
        return None
    return os.path.join(os.path.dirname(bytecode), _DIGEST_MEMO)


def _write_quietly(path: str, text: str) -> None:
    """Write ``path`` whole (a temporary file, then a rename), or nothing when the folder
    is not writable."""
    temporary = f"{path}.{os.getpid()}.tmp"
    try:
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(temporary, "w", encoding="ascii") as out:
            out.write(text)
        os.replace(temporary, path)
    except OSError:
        with contextlib.suppress(OSError):
            os.remove(temporary)


def _update_with_file(digest: Any, path: str) -> None:
    try:
        with open(path, "rb") as source:
            digest.update(source.read())
    except OSError:
        digest.update(f"unreadable {path}".encode())


def _source_files(root: str) -> list[str]:
    """The ``.py`` files under ``root`` outside ``OUTSIDE_THE_BUILD`` and ``__pycache__``,
    as sorted ``/``-separated paths relative to ``root``."""
    found: list[str] = []
    pending = [""]
    while pending:
        folder = pending.pop()
        try:
            entries = os.scandir(os.path.join(root, folder) if folder else root)
        except OSError:
            continue
        with entries:
            for entry in entries:
                relpath = f"{folder}/{entry.name}" if folder else entry.name
                if entry.is_dir(follow_symlinks=False):
                    if entry.name != "__pycache__" and (
                        folder or entry.name not in OUTSIDE_THE_BUILD
                    ):
                        pending.append(relpath)
                elif entry.name.endswith(".py"):
                    found.append(relpath)
    found.sort()
    return found


CODE_DIGEST: Final = code_digest(Path(os.path.dirname(os.path.realpath(__file__))))

#: The configuration the last plugin instance loaded, and its hash once the daemon asked
#: for it (only the daemon's version names it: plain runs do not hash it)
_config: Fingerprinted | None = None
_config_stamp: str | None = None


def remember_config(config: Fingerprinted) -> None:
    global _config, _config_stamp
    _config, _config_stamp = config, None


def config_stamp() -> str:
    """Hash of the configuration the last plugin instance loaded ("unconfigured": none)."""
    global _config_stamp
    if _config is None:
        return "unconfigured"
    if _config_stamp is None:
        _config_stamp = _digest(_config.fingerprint())
    return _config_stamp


def versioned_name() -> str:
    """``typed_pallas_mypy.__version__``: the code hash, plus, inside mypy's daemon, the
    config hash and which library files read so far changed since they were read.

    A changed plugin snapshot discards the whole cache, jax included, so plain mypy
    runs leave the config out (``config_data`` re-checks just the project's modules);
    the daemon has no other way to notice a config edit or a library upgrade, so there
    they go in. The library part does not grow with the files read: the daemon compares
    the snapshot of each ``dmypy run`` with the one it started with, and a name that
    changed whenever the plugin read one more file restarted it on every run.
    """
    name = f"code.{CODE_DIGEST}"
    if in_daemon():
        name += f".config.{config_stamp()}.libraries.{changed_library_files()}"
    return name


def changed_library_files() -> str:
    """ "same" when every library file noted is as it was when first noted, else a hash
    of the changed ones."""
    changed = sorted(
        (path, now)
        for path, then in _LIBRARY_FILES.items()
        if (now := _library_stamp(path)) != then
    )
    if not changed:
        return "same"
    return hashlib.sha256(json.dumps(changed).encode()).hexdigest()[:16]


def in_daemon() -> bool:
    """Whether this process is mypy's daemon (which keeps one plugin across builds)."""
    return "mypy.dmypy_server" in sys.modules


#: ``TYPED_PALLAS_SUMMARIES=0``: the rules answer what functions lower for, not the
#: evaluator's summaries (``inference.Inference.summaries_answer``): part of the cache key
SUMMARIES_ENV: Final = "TYPED_PALLAS_SUMMARIES"


def summaries_answer() -> bool:
    """Whether the evaluator's summaries answer what functions lower for (the default;
    ``TYPED_PALLAS_SUMMARIES=0`` asks the rules, kept while they are retired)."""
    return os.environ.get(SUMMARIES_ENV, "").strip() != "0"


def config_data(config: Fingerprinted) -> dict[str, Any]:
    """``report_config_data``'s answer for the project's modules (with which engine
    answers what functions lower for: a module checked under the other is checked again)."""
    return {
        "behaviour": PLUGIN_BEHAVIOUR_VERSION,
        "code": CODE_DIGEST,
        "jax": _versions.installed_version("jax"),
        "config": canonical(config.fingerprint()),
        "summaries": summaries_answer(),
    }


# --------------------------------------------------------------------------- libraries

#: Path parts of installed packages and of mypy's typeshed.
THIRD_PARTY_MARKERS: Final = ("site-packages", "dist-packages", "typeshed")
#: ... as path components
_MARKER_PARTS: Final = tuple(f"/{marker}/" for marker in THIRD_PARTY_MARKERS)


def is_installed_path(path: str) -> bool:
    """Whether a module path is an installed package's or typeshed's.

    ``report_config_data`` asks it for every module of every run, warm ones included
    (about a thousand on jax's Pallas ops): a plain loop, no generator.
    """
    if "\\" in path:
        path = path.replace("\\", "/")
    for part in _MARKER_PARTS:  # noqa: SIM110 (any() over a generator: 10x slower)
        if part in path:
            return True
    return False


#: Folder of the plugin's own files inside mypy's cache folder.
PLUGIN_FOLDER: Final = "typed-pallas"

#: Every library file the inference looked at in this process (``note_library_files``,
#: ``note_site_folders``), with its stamp when it was first noted (``_library_stamp``).
_LIBRARY_FILES: dict[str, object] = {}

#: The name that stands for the ``.pth`` files of a folder among the library files
SITE_FILES: Final = "*.pth"
_SITE_SUFFIX: Final = os.sep + SITE_FILES


def _library_stamp(path: str) -> object:
    """A library file's stamp: ``[size, mtime_ns]``, None when it is missing; for
    ``<folder>/*.pth``, the name, size and mtime of each ``.pth`` file of the folder
    (what an install or an uninstall of an editable package changes), None when the
    folder cannot be listed."""
    if not path.endswith(_SITE_SUFFIX):
        return _file_stamp(path)
    folder = path[: -len(_SITE_SUFFIX)]
    try:
        names = sorted(name for name in os.listdir(folder) if name.endswith(".pth"))
    except OSError:
        return None
    return [[name, _file_stamp(os.path.join(folder, name))] for name in names]


class LibraryStamps:
    """One build's memo for ``library_uses``.

    A plain class, not a dataclass: every mypy run creates one, warm ones included, and
    creating a dataclass costs its module's import about half a millisecond.
    """

    __slots__ = ("files", "lists", "records", "stamps")

    def __init__(self) -> None:
        #: stamps of lists of library files (sorted, unique) already stamped in this build
        self.stamps: dict[tuple[str, ...], str] = {}
        #: module -> the names of its recorded lists (``_records``), from one listing of
        #: the library-uses folder on the build's first lookup
        self.records: dict[str, list[str]] | None = None
        #: each library file's stamp (``_library_stamp``), taken once in this build
        self.files: dict[str, object] = {}
        #: the stamp of each recorded list of files (by its name), read once in this build
        self.lists: dict[str, str] = {}

    @override
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LibraryStamps):
            return NotImplemented
        return (self.stamps, self.records, self.files, self.lists) == (
            other.stamps,
            other.records,
            other.files,
            other.lists,
        )

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq

    @override
    def __repr__(self) -> str:
        return (
            f"LibraryStamps(stamps={self.stamps!r}, records={self.records!r}, "
            f"files={self.files!r}, lists={self.lists!r})"
        )


def new_library_stamps() -> LibraryStamps | None:
    """A memo for one build's ``library_uses`` calls; None inside mypy's daemon, whose
    next build must stat the files again."""
    return None if in_daemon() else LibraryStamps()


def plugin_folder(cache_dir: str | None, name: str) -> str | None:
    """``<cache_dir>/typed-pallas/<name>``, or None when mypy writes no cache."""
    if not cache_dir or cache_dir == os.devnull:
        return None
    return os.path.join(cache_dir, PLUGIN_FOLDER, name)


def note_library_files(paths: Iterable[str]) -> None:
    """Note library files looked at (present or not), each with its stamp now."""
    for path in paths:
        if path not in _LIBRARY_FILES:
            _LIBRARY_FILES[path] = _library_stamp(path)


def note_site_folders(folders: Iterable[str]) -> None:
    """Note the ``.pth`` files of the folders the inference searches for modules."""
    note_library_files(os.path.join(folder, SITE_FILES) for folder in folders)


def _stamp(paths: Iterable[str], memo: LibraryStamps | None = None) -> str:
    files = tuple(sorted(set(paths)))
    if memo is not None:
        known = memo.stamps.get(files)
        if known is not None:
            return known
        taken = memo.files
        stamps = []
        for path in files:
            found = taken.get(path, taken)
            if found is taken:
                found = taken[path] = _library_stamp(path)
            stamps.append([path, found])
    else:
        stamps = [[path, _library_stamp(path)] for path in files]
    stamp = _hash_stamps(stamps)
    if memo is not None:
        memo.stamps[files] = stamp
    return stamp


def _hash_stamps(stamps: list[list[object]]) -> str:
    return hashlib.sha256(json.dumps(stamps).encode()).hexdigest()[:16] if stamps else "none"


#: The folder, inside the library-uses folder, of the lists of files modules recorded
LISTS: Final = "lists"
#: The length of a list's name (a hash of the list)
_LIST_NAME: Final = 16


def library_uses(
    cache_dir: str | None,
    module: str,
    writing: bool,
    memo: LibraryStamps | None = None,
    read: Iterable[str] = (),
) -> str | None:
    """The stamp of the library files ``module``'s findings may depend on (None: none).

    ``writing``: mypy is about to write the module's cache: record the files noted so
    far, and ``read``: the project's own files its findings were worked out from where
    the summaries answer (what a caller's finding reads of another project module is
    then not in that module's stored facts, so its source is in the caller's key).
    Otherwise (mypy checks whether the cache is fresh): the recorded files as they
    are now, or as they were when this build first stamped the same list (``memo``).

    The files are kept once per list, in ``lists/<name>.json`` (the name is a hash of
    the list): the modules of a build record a few lists (the files noted grow as the
    build reads libraries). A module's record is an empty file named
    ``<module>.<name>``, so that one listing of the folder tells a build what every
    module recorded: a warm run opens no file per module, and reads and stamps each
    list once.
    """
    folder = plugin_folder(cache_dir, "library-uses")
    if folder is None:
        return None
    if writing:
        return _record_uses(folder, module, memo, read)
    listed = _records(folder, memo).get(module)
    if not listed:
        return None
    if len(listed) > 1:  # an old record left by a writer that failed: check again
        return "unreadable"
    name = listed[0]
    if memo is not None:
        known = memo.lists.get(name)
        if known is not None:
            return known
    try:
        with open(os.path.join(folder, LISTS, f"{name}.json"), encoding="utf-8") as found:
            recorded = json.load(found)
    except (OSError, ValueError):
        return "unreadable"
    if not isinstance(recorded, list) or not all(isinstance(f, str) for f in recorded):
        return "unreadable"
    stamp = _stamp(recorded, memo)
    if memo is not None:
        memo.lists[name] = stamp
    return stamp


def _records(folder: str, memo: LibraryStamps | None) -> dict[str, list[str]]:
    """module -> the names of the lists its records name (one, unless a writer failed),
    from a listing of ``folder`` (once per build with a memo)."""
    if memo is not None and memo.records is not None:
        return memo.records
    records: dict[str, list[str]] = {}
    try:
        names = os.listdir(folder)
    except OSError:
        names = []
    for name in names:
        module, _, listed = name.rpartition(".")
        if module and len(listed) == _LIST_NAME and listed.isalnum():
            records.setdefault(module, []).append(listed)
    if memo is not None:
        memo.records = records
    return records


def _record_uses(
    folder: str, module: str, memo: LibraryStamps | None, read: Iterable[str] = ()
) -> str | None:
    """Record the files noted so far for ``module``, and ``read``; their stamp as they
    were when the inference looked at them (what its answers were worked out from: a
    file changed since then makes the next run check the module again; ``read`` as it
    is now). A record that cannot be written leaves none: the next run checks the
    module again."""
    records = _records(folder, memo)
    stamps = dict(_LIBRARY_FILES)
    for path in read:
        stamps.setdefault(path, _library_stamp(path))
    files = sorted(stamps)
    listed = ""
    stamp: str | None = None
    if files:
        text = json.dumps(files)
        listed = hashlib.sha256(text.encode()).hexdigest()[:_LIST_NAME]
        stamp = _hash_stamps([[path, stamps[path]] for path in files])
    old = records.get(module, [])
    try:
        for name in old:
            if name != listed:
                os.remove(os.path.join(folder, f"{module}.{name}"))
        records.pop(module, None)
        if files:
            kept = os.path.join(folder, LISTS, f"{listed}.json")
            new = not os.path.exists(kept)
            if new:
                os.makedirs(os.path.dirname(kept), exist_ok=True)
                _write_quietly(kept, text)
            if listed not in old:
                with open(os.path.join(folder, f"{module}.{listed}"), "w", encoding="ascii"):
                    pass
            records[module] = [listed]
            if new:
                _prune_lists(os.path.dirname(kept), records)
    except OSError:
        pass  # a missing or extra record: the next run checks the module again
    return stamp


#: Lists no record names are removed once there are this many more lists than named ones
_SPARE_LISTS: Final = 32


def _prune_lists(lists: str, records: dict[str, list[str]]) -> None:
    """Remove the lists no record names (each run that checks modules again may write
    new ones), once there are ``_SPARE_LISTS`` of them. A list another process has just
    written, before its record, may go: that module is then checked again next run."""
    named = {f"{name}.json" for names in records.values() for name in names}
    found = os.listdir(lists)
    if len(found) <= len(named) + _SPARE_LISTS:
        return
    for name in found:
        if name not in named:
            with contextlib.suppress(OSError):
                os.remove(os.path.join(lists, name))
