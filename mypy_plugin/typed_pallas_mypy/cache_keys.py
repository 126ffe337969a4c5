"""What makes mypy's cache and daemon forget results the plugin gave.

* ``versioned_name()`` is ``typed_pallas_mypy.__version__``: a hash of the plugin's own
  sources and of ``typed_pallas._platforms`` (mypy hashes only the plugin's top
  module, so an edit to a transformer or a table must show here), plus, inside mypy's
  daemon, the configuration's hash (the daemon has no other way to notice a
  ``[tool.typed-pallas]`` edit; a changed plugin snapshot restarts it);
* ``config_data(config)`` is what ``report_config_data`` answers for the project's
  modules: code hash, JAX version and configuration, so that a change of any of them
  re-checks the project (and not all of jax).

Imports nothing of mypy and nothing of the plugin's transformers: mypy reads these on
every run, warm ones included, before any hook fires.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import sys
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final, Protocol

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


def _code_digest() -> str:
    """Hash of the plugin's own sources (tables included) and of ``_platforms``."""
    digest = hashlib.sha256()
    package = Path(__file__).resolve().parent
    files = [*sorted(package.rglob("*.py")), Path(_platforms.__file__).resolve()]
    for path in files:
        try:
            digest.update(path.read_bytes())
        except OSError:
            digest.update(str(path).encode())
    return digest.hexdigest()[:16]


CODE_DIGEST: Final = _code_digest()

#: Hash of the configuration the last plugin instance loaded (for the daemon).
_config_stamp = "unconfigured"


def remember_config(config: Fingerprinted) -> None:
    global _config_stamp
    _config_stamp = _digest(config.fingerprint())


def versioned_name() -> str:
    """``typed_pallas_mypy.__version__``: the code hash, plus the config hash inside
    mypy's daemon.

    A changed plugin snapshot discards the whole cache, jax included, so plain mypy
    runs leave the config out (``config_data`` re-checks just the project's modules);
    the daemon has no other way to notice a config edit, so there it goes in.
    """
    name = f"code.{CODE_DIGEST}"
    if "mypy.dmypy_server" in sys.modules:
        name += f".config.{_config_stamp}"
    return name


def config_data(config: Fingerprinted) -> dict[str, Any]:
    """``report_config_data``'s answer for the project's modules."""
    return {
        "behaviour": PLUGIN_BEHAVIOUR_VERSION,
        "code": CODE_DIGEST,
        "jax": _versions.installed_version("jax"),
        "config": canonical(config.fingerprint()),
    }
