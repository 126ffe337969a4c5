"""What makes mypy's cache and daemon forget results the plugin gave.

* ``versioned_name()`` is ``typed_pallas_mypy.__version__``: a hash of the plugin's own
  sources and of ``typed_pallas._platforms`` (mypy hashes only the plugin's top
  module, so an edit to a transformer or a table must show here), plus, inside mypy's
  daemon, the configuration's hash (the daemon has no other way to notice a
  ``[tool.typed-pallas]`` edit; a changed plugin snapshot restarts it);
* ``config_data(config)`` is what ``report_config_data`` answers for the project's
  modules: code hash, JAX version and configuration, so that a change of any of them
  re-checks the project (and not all of jax);
* ``library_uses(cache_dir, module, writing)``: the installed library files a project
  module's findings may depend on. mypy does not track them for the module (a library
  upgrade changes no interface the module imports), so when mypy writes the module's
  cache, the library files read so far are kept with the module's name next to mypy's
  cache (``<cache_dir>/typed-pallas/library-uses``), and their size and mtime stamp goes
  into its config data: a changed library file makes the module stale in the next run.
  Inside mypy's daemon, the stamp of every library file read goes into the plugin's
  version, which restarts the daemon when a library changes. A ``LibraryStamps`` memo
  (one per build, from ``new_library_stamps``) stamps each list of files once per build:
  a warm run of a project whose modules recorded the same files stats them once, not
  once per module; inside the daemon, which outlives builds, there is no memo.

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
from collections.abc import Iterable, Mapping
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


def _file_stamp(path: str) -> list[int] | None:
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
    """ "same" when every library file read is as it was when first read, else a hash of
    the changed ones."""
    changed = sorted(
        (path, now) for path, then in _LIBRARY_FILES.items() if (now := _file_stamp(path)) != then
    )
    if not changed:
        return "same"
    return hashlib.sha256(json.dumps(changed).encode()).hexdigest()[:16]


def in_daemon() -> bool:
    """Whether this process is mypy's daemon (which keeps one plugin across builds)."""
    return "mypy.dmypy_server" in sys.modules


def config_data(config: Fingerprinted) -> dict[str, Any]:
    """``report_config_data``'s answer for the project's modules."""
    return {
        "behaviour": PLUGIN_BEHAVIOUR_VERSION,
        "code": CODE_DIGEST,
        "jax": _versions.installed_version("jax"),
        "config": canonical(config.fingerprint()),
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

#: Every installed library file the inference read in this process, with its stamp
#: ([size, mtime_ns], None when gone) when it was first noted.
_LIBRARY_FILES: dict[str, list[int] | None] = {}


class LibraryStamps:
    """One build's memo for ``library_uses``.

    A plain class, not a dataclass: every mypy run creates one, warm ones included, and
    creating a dataclass costs its module's import about half a millisecond.
    """

    __slots__ = ("recorded", "stamps")

    def __init__(
        self,
        stamps: dict[tuple[str, ...], str] | None = None,
        recorded: set[str] | None = None,
    ) -> None:
        #: stamps of lists of library files (sorted, unique) already stamped in this build
        self.stamps: dict[tuple[str, ...], str] = {} if stamps is None else stamps
        #: the files of the library-uses folder, listed on the first lookup (a warm run
        #: of a project of many modules, few of which use a library, opens only theirs)
        self.recorded: set[str] | None = recorded

    @override
    def __eq__(self, other: object) -> bool:
        if not isinstance(other, LibraryStamps):
            return NotImplemented
        return (self.stamps, self.recorded) == (other.stamps, other.recorded)

    __hash__ = None  # type: ignore[assignment]  # mutable, as a dataclass with eq

    @override
    def __repr__(self) -> str:
        return f"LibraryStamps(stamps={self.stamps!r}, recorded={self.recorded!r})"


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
    for path in paths:
        if path not in _LIBRARY_FILES:
            _LIBRARY_FILES[path] = _file_stamp(path)


def _stamp(paths: Iterable[str], memo: LibraryStamps | None = None) -> str:
    files = tuple(sorted(set(paths)))
    if memo is not None:
        known = memo.stamps.get(files)
        if known is not None:
            return known
    stamps = [[path, _file_stamp(path)] for path in files]
    stamp = hashlib.sha256(json.dumps(stamps).encode()).hexdigest()[:16] if stamps else "none"
    if memo is not None:
        memo.stamps[files] = stamp
    return stamp


def library_uses(
    cache_dir: str | None, module: str, writing: bool, memo: LibraryStamps | None = None
) -> str | None:
    """The stamp of the library files ``module``'s findings may depend on (None: none).

    ``writing``: mypy is about to write the module's cache: record the files read so far.
    Otherwise (mypy checks whether the cache is fresh): the recorded files as they are now,
    or as they were when this build first stamped the same list (``memo``).
    """
    folder = plugin_folder(cache_dir, "library-uses")
    if folder is None:
        return None
    name = f"{module}.json"
    target = os.path.join(folder, name)
    if writing:
        files = sorted(_LIBRARY_FILES)
        if not files:
            if os.path.exists(target):
                os.remove(target)
            return None
        os.makedirs(folder, exist_ok=True)
        temporary = f"{target}.{os.getpid()}.tmp"
        with open(temporary, "w", encoding="utf-8") as out:
            out.write(json.dumps(files))
        os.replace(temporary, target)
        if memo is not None and memo.recorded is not None:
            memo.recorded.add(name)
        return _stamp(files, memo)
    if memo is not None:
        if memo.recorded is None:
            try:
                memo.recorded = set(os.listdir(folder))
            except OSError:
                memo.recorded = set()
        if name not in memo.recorded:
            return None
    try:
        with open(target, encoding="utf-8") as found:
            recorded = json.load(found)
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return "unreadable"
    if not isinstance(recorded, list) or not all(isinstance(f, str) for f in recorded):
        return "unreadable"
    return _stamp(recorded, memo)
