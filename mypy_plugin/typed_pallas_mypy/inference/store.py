"""The on-disk cache of local facts: one JSON file per top-level package.

``<cache_dir>/<top>.json`` holds, for each module of the package ``top`` that was read,
the module's path, size and ``st_mtime_ns`` when it was read, and its local facts
(``model.module_json``). The
whole file is keyed by ``DIGEST``: the reader's version, the Python version (``ast``
differs between versions) and the tables the reader uses; a file with another digest is
ignored (and overwritten on the next write). A module whose path, size or mtime changed
is read again. Writes are atomic (a temporary file in the same folder, then
``os.replace``); a cache that cannot be read, decoded or written is treated as empty,
never as an error.

What it does not do: decide what to cache (``requirements`` does), or lock: two
processes writing at once lose one another's new entries, not correctness.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Final

from typed_pallas import _platforms
from typed_pallas_mypy import entries, evidence_tables, fullnames
from typed_pallas_mypy.inference import reader

#: Bump when the file layout changes.
STORE_FORMAT: Final = 2


def _digest() -> str:
    parts: list[object] = [
        STORE_FORMAT,
        reader.READER_VERSION,
        sys.version_info[:2],
        sorted((name, repr(spec)) for name, spec in entries.ENTRIES.items()),
        sorted(
            (name, row.backend, sorted(row.lowers_on), row.title)
            for name, row in _platforms.PARAMS_BY_FULLNAME.items()
        ),
        _platforms.BACKEND_NAMESPACES,
        sorted((k, sorted(v)) for k, v in evidence_tables.BODY_EVIDENCE.items()),
        sorted((k, sorted(v)) for k, v in evidence_tables.SCRATCH_EVIDENCE.items()),
        sorted((k, sorted(v)) for k, v in evidence_tables.MESH_EVIDENCE.items()),
        sorted(
            (k, v[0], v[1], sorted(v[2])) for k, v in evidence_tables.GRID_SPEC_EVIDENCE.items()
        ),
        sorted(fullnames.KEEPS_FUNCTION | fullnames.CUSTOM_DERIVATIVES),
        sorted(fullnames.METHOD_KEEPERS),
        sorted(fullnames.CLASS_KEEPERS),
        sorted(fullnames.PLATFORM_SOURCES),
        sorted(fullnames.PLATFORM_ATTRIBUTES),
    ]
    return hashlib.sha256(repr(parts).encode()).hexdigest()[:32]


#: What every cache file is keyed by.
DIGEST: Final = _digest()


@dataclass(frozen=True)
class Stamp:
    """What must not change for a module's stored facts to stay valid."""

    path: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class Entry:
    """One module's stored result: its facts JSON (``{"unparsed": true}``: it did not parse)."""

    facts: object


class FactsStore:
    """Local facts on disk (``cache_dir``), or in memory only (``cache_dir=None``)."""

    def __init__(self, cache_dir: str | None) -> None:
        self.cache_dir = cache_dir
        #: top-level package -> module -> its stored JSON entry
        self._files: dict[str, dict[str, dict[str, object]]] = {}
        self._dirty: set[str] = set()

    def _path(self, top: str) -> str | None:
        if self.cache_dir is None:
            return None
        return os.path.join(self.cache_dir, f"{top}.json")

    def _file(self, top: str) -> dict[str, dict[str, object]]:
        loaded = self._files.get(top)
        if loaded is not None:
            return loaded
        modules: dict[str, dict[str, object]] = {}
        path = self._path(top)
        if path is not None:
            try:
                with open(path, "rb") as handle:
                    data = json.loads(handle.read())
            except (OSError, ValueError, UnicodeDecodeError, RecursionError):
                data = None
            if isinstance(data, dict) and data.get("digest") == DIGEST:
                raw = data.get("modules")
                if isinstance(raw, dict):
                    modules = {str(k): v for k, v in raw.items() if isinstance(v, dict)}
        self._files[top] = modules
        return modules

    def get(self, module: str, stamp: Stamp) -> Entry | None:
        """The stored entry of ``module`` if it was stored for this exact file."""
        found = self._file(_top(module)).get(module)
        if found is None:
            return None
        if (
            found.get("path") != stamp.path
            or found.get("size") != stamp.size
            or found.get("mtime_ns") != stamp.mtime_ns
        ):
            return None
        return Entry(found.get("facts"))

    def put(self, module: str, stamp: Stamp, entry: Entry) -> None:
        top = _top(module)
        self._file(top)[module] = {
            "path": stamp.path,
            "size": stamp.size,
            "mtime_ns": stamp.mtime_ns,
            "facts": entry.facts,
        }
        self._dirty.add(top)

    def flush(self) -> None:
        """Write every file that changed since the last flush (atomically)."""
        for top in sorted(self._dirty):
            path = self._path(top)
            if path is not None:
                _write(path, {"digest": DIGEST, "modules": self._files.get(top, {})})
        self._dirty.clear()


def _top(module: str) -> str:
    return module.split(".", 1)[0]


def _write(path: str, data: Mapping[str, object]) -> None:
    folder = os.path.dirname(path) or "."
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=folder)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, separators=(",", ":"), sort_keys=True)
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the cache is plain data
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
