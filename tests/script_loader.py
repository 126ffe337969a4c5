"""Load a script of the repository (``benchmarks/``, ``scripts/``) as a module, for the
tests of its pure functions: the scripts are not packages and are run by path."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path
from types import ModuleType


def load_script(path: Path) -> ModuleType:
    """The script at ``path`` as a module named after its file, registered in
    ``sys.modules`` (its dataclasses look their module up there)."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module
