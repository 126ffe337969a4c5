"""The on-disk cache of local facts: one JSON file per module.

``<cache_dir>/<module>.json`` holds the module's path, size and ``st_mtime_ns`` when it
was read, and its local facts (``model.module_json``). Every file is keyed by ``DIGEST``:
the reader's own source (``reader``, ``program``, ``model``: an upgrade or an edit of
the reader never reads facts an older reader wrote), the Python version (``ast`` differs between versions) and the
tables the reader uses; a file with another digest is ignored (and overwritten on the
next write). A module whose path, size or mtime changed is read again. A module is
written when it is read, or, when its functions are summarised as questions reach them
(``Inference(lazy=True)``, the plugin), each time ``save`` finds new summaries: its
entry then lists every function's name and holds the summaries worked out so far (a
later run summarises the others from the source). Writes are atomic (a temporary file
in the same folder, then ``os.replace``); a cache that cannot be read, decoded or
written is treated as empty, never as an error.

What it does not do: decide what to cache (``combine`` does), or lock: two processes
writing the same module at once write the same facts.
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
from typed_pallas_mypy import device_kinds, entries, evidence_tables, fullnames
from typed_pallas_mypy.inference import (
    callables,
    conditions,
    jax_api,
    model,
    program,
    reader,
    scopes,
    values,
)

#: Bump when the file layout changes.
STORE_FORMAT: Final = 4


def _source_digest() -> str:
    """Hash of the modules that decide what a module's facts are."""
    digest = hashlib.sha256()
    for module in (
        reader,
        conditions,
        values,
        scopes,
        callables,
        program,
        model,
        jax_api,
        device_kinds,
    ):
        try:
            with open(module.__file__ or "", "rb") as handle:
                digest.update(handle.read())
        except OSError:
            digest.update(module.__name__.encode())
    return digest.hexdigest()


def _digest() -> str:
    parts: list[object] = [
        STORE_FORMAT,
        _source_digest(),
        sys.version_info[:2],
        sorted((name, repr(spec)) for name, spec in entries.ENTRIES.items()),
        sorted(
            (name, row.backend, sorted(row.lowers_on), row.title)
            for name, row in _platforms.PARAMS_BY_FULLNAME.items()
        ),
        _platforms.BACKEND_NAMESPACES,
        sorted(_platforms.PALLAS_PACKAGE_ALIASES.items()),
        sorted(_platforms.DEVICE_KIND_MARKERS.items()),
        sorted(_platforms.DEVICE_KIND_EXHAUSTIVE_MARKERS),
        sorted((k, sorted(v)) for k, v in evidence_tables.BODY_EVIDENCE.items()),
        sorted((k, v[0], sorted(v[1])) for k, v in evidence_tables.KEYWORD_EVIDENCE.items()),
        sorted((k, sorted(v)) for k, v in evidence_tables.SCRATCH_EVIDENCE.items()),
        sorted((k, sorted(v)) for k, v in evidence_tables.MESH_EVIDENCE.items()),
        sorted(
            (k, v[0], v[1], sorted(v[2])) for k, v in evidence_tables.GRID_SPEC_EVIDENCE.items()
        ),
        sorted(jax_api.KEEPS_FUNCTION | jax_api.CUSTOM_DERIVATIVES),
        sorted(jax_api.METHOD_KEEPERS),
        sorted(jax_api.CLASS_KEEPERS),
        sorted((k, v) for k, v in jax_api.TRACED_ARGUMENTS.items()),
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

    def _path(self, module: str) -> str | None:
        if self.cache_dir is None:
            return None
        return os.path.join(self.cache_dir, f"{module}.json")

    def get(self, module: str, stamp: Stamp) -> Entry | None:
        """The stored entry of ``module`` if it was stored for this exact file."""
        path = self._path(module)
        if path is None:
            return None
        try:
            with open(path, "rb") as handle:
                found = json.loads(handle.read())
        except (OSError, ValueError, UnicodeDecodeError, RecursionError):
            return None
        if (
            not isinstance(found, dict)
            or found.get("digest") != DIGEST
            or found.get("path") != stamp.path
            or found.get("size") != stamp.size
            or found.get("mtime_ns") != stamp.mtime_ns
        ):
            return None
        return Entry(found.get("facts"))

    def put(self, module: str, stamp: Stamp, entry: Entry) -> None:
        path = self._path(module)
        if path is None:
            return
        write_json(
            path,
            {
                "digest": DIGEST,
                "path": stamp.path,
                "size": stamp.size,
                "mtime_ns": stamp.mtime_ns,
                "facts": entry.facts,
            },
        )

    def flush(self) -> None:
        """Nothing is kept back (each ``put`` writes its file)."""


def write_json(path: str, data: Mapping[str, object]) -> None:
    """Write ``data`` to ``path`` atomically (a temporary file, then ``os.replace``);
    nothing on a failure (a cache that cannot be written is no error)."""
    folder = os.path.dirname(path) or "."
    try:
        os.makedirs(folder, exist_ok=True)
        fd, tmp = tempfile.mkstemp(prefix=".tmp-", suffix=".json", dir=folder)
    except OSError:
        return
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            # one string from the C encoder: ``json.dump`` to a file encodes in Python
            handle.write(json.dumps(data, separators=(",", ":"), sort_keys=True))
        os.chmod(tmp, 0o644)  # mkstemp makes it private; the cache is plain data
        os.replace(tmp, path)
    except (OSError, TypeError, ValueError):
        with contextlib.suppress(OSError):
            os.unlink(tmp)
