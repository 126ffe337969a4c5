"""The evaluator's summaries on disk: what a function lowers for, kept between runs.

``<cache_dir>/summaries/<module>.json`` holds the summaries asked of the functions of one
module, each keyed by the JAX release it answers for and, to stay valid, by what its
runs read: a digest of the source of every module read (as the evaluator's loader gives
it: an editor's unsaved buffer is its source) and the modules looked for and not found.
A summary is taken from disk only when every one of those is as it was: an edit of any
module read, a module installed where none was found, or a module removed, and it is
worked out again. Every file is keyed by ``DIGEST`` (the evaluator's own source and the
tables it reads, the Python version): an upgrade never reads what an older one wrote.
A summary is kept only when its runs finished.
Writes are atomic; a file that cannot be read, decoded or written is treated as empty,
never as an error.

What it does not do: know what a summary is (its answer is JSON the caller encodes), or
see a module the evaluator does not read appear (one it asks only whether it exists:
a compiled extension, a module outside the search paths).
"""

from __future__ import annotations

import hashlib
import json
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Final

from typed_pallas import _platforms
from typed_pallas_mypy import entries, evidence_tables
from typed_pallas_mypy.inference.store import write_json

#: Bump when the file layout changes.
SUMMARY_FORMAT: Final = 1

#: a module's source as the engine gives it: (where it is, is a package, text)
Loader = Callable[[str], "tuple[str, bool, str] | None"]


def _evaluator_digest() -> str:
    """Hash of what decides a summary: the engine's modules (the evaluator's, and those
    that find modules and word the answer), its tables, Python."""
    digest = hashlib.sha256()
    digest.update(repr((SUMMARY_FORMAT, sys.version_info[:2])).encode())
    inference = Path(__file__).resolve().parent
    sources = [*sorted(inference.glob("*.py")), *sorted((inference / "evaluator").glob("*.py"))]
    for module in (_platforms, evidence_tables, entries):
        if module.__file__:
            sources.append(Path(module.__file__))
    for path in sources:
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(str(path).encode())
    return digest.hexdigest()[:32]


#: What every summaries file is keyed by.
DIGEST: Final = _evaluator_digest()


def source_digest(loader: Loader, module: str) -> str | None:
    """The digest of ``module``'s source as ``loader`` gives it, with the file's path and
    how the notes name it (the loader's first item: an answer's notes name files); None
    when not found."""
    found = loader(module)
    if found is None:
        return None
    text = f"{found[0]}\0{found[1]}\0{found[2]}"
    return hashlib.sha256(text.encode("utf-8", "surrogatepass")).hexdigest()[:24]


@dataclass(frozen=True)
class Stored:
    """One summary as kept: its answer (JSON), the modules read with their sources'
    digests, and the modules looked for and not found."""

    answer: object
    read: Mapping[str, str]
    absent: frozenset[str]


class SummaryStore:
    """Summaries on disk under ``cache_dir`` (None: nothing is kept)."""

    def __init__(self, cache_dir: str | None, loader: Loader) -> None:
        self.folder = os.path.join(cache_dir, "summaries") if cache_dir is not None else None
        self._loader = loader
        #: each module's file as read (or written) this run
        self._files: dict[str, dict[str, object]] = {}
        #: the digests of the sources checked this run (a module is read once)
        self._digests: dict[str, str | None] = {}
        #: the modules whose files changed since the last ``flush``
        self._dirty: set[str] = set()

    @staticmethod
    def key(qualname: str, result: bool, release: tuple[int, ...] | None) -> str:
        """The entry of a summary in its module's file."""
        version = ".".join(map(str, release)) if release is not None else "any"
        return f"{qualname}|{int(result)}|{version}"

    def _digest(self, module: str) -> str | None:
        if module not in self._digests:
            self._digests[module] = source_digest(self._loader, module)
        return self._digests[module]

    def _file(self, module: str) -> dict[str, object]:
        if module not in self._files:
            entries: dict[str, object] = {}
            if self.folder is not None:
                try:
                    found = json.loads(Path(self.folder, f"{module}.json").read_bytes())
                except (OSError, ValueError, UnicodeDecodeError, RecursionError):
                    found = None
                if (
                    isinstance(found, dict)
                    and found.get("digest") == DIGEST
                    and isinstance(found.get("entries"), dict)
                ):
                    entries = found["entries"]
            self._files[module] = entries
        return self._files[module]

    def get(self, module: str, key: str) -> Stored | None:
        """The summary kept under ``key`` in ``module``'s file, when everything it read
        is as it was; None otherwise."""
        if self.folder is None:
            return None
        entry = self._file(module).get(key)
        if not isinstance(entry, dict):
            return None
        read, absent = entry.get("read"), entry.get("absent")
        if not isinstance(read, dict) or not isinstance(absent, list):
            return None
        for name, digest in read.items():
            if not isinstance(name, str) or self._digest(name) != digest:
                return None
        for name in absent:
            if not isinstance(name, str) or self._digest(name) is not None:
                return None
        return Stored(entry.get("answer"), read, frozenset(absent))

    def put(
        self, module: str, key: str, answer: object, read: Iterable[str], absent: Iterable[str]
    ) -> None:
        """Keep ``answer`` under ``key``, valid while the modules ``read`` keep their
        sources and the ``absent`` ones stay absent (written by ``flush``)."""
        if self.folder is None:
            return
        digests: dict[str, str] = {}
        for name in sorted(read):
            digest = self._digest(name)
            if digest is None:
                return  # read, and gone now: nothing to key it by
            digests[name] = digest
        gone: list[str] = []
        for name in sorted(absent):
            digest = self._digest(name)
            if digest is None:
                gone.append(name)
            else:  # found but not run (it does not parse): its source keys it too
                digests[name] = digest
        self._file(module)[key] = {"answer": answer, "read": digests, "absent": gone}
        self._dirty.add(module)

    def flush(self) -> None:
        """Write the files changed since the last flush."""
        if self.folder is None:
            return
        for module in sorted(self._dirty):
            write_json(
                os.path.join(self.folder, f"{module}.json"),
                {"digest": DIGEST, "entries": self._files[module]},
            )
        self._dirty.clear()

    def forget(self) -> None:
        """Forget the sources' digests (a module may have changed since)."""
        self._digests.clear()
        self._files.clear()
        self._dirty.clear()
