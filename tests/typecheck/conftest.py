"""Settings for the plugin's pytest-mypy-plugins cases in this folder.

* the base config is ``mypy.ini`` here (the plugin enabled), for these cases only;
* one mypy cache per interpreter (and JAX version), kept between runs in the temp
  folder, so each case re-checks its own module and not all of jax;
* ``mypy`` is run from the interpreter running pytest, whatever ``PATH`` says;
* the plugin's debug switch (``TYPED_PALLAS_MYPY_DEBUG=1``) is on for every case, so an
  exception inside a hook fails the case instead of becoming silence;
* ``TYPED_PALLAS_KERNOPS_SITE`` is the site-packages-like folder of the tests' own kernel
  library (``tests/fixtures``' ``kernops``, no ``py.typed``): a case that uses it as an
  installed package puts it on its ``PYTHONPATH`` (``env:``, where variables are
  expanded here).
"""

from __future__ import annotations

import hashlib
import os
import sys
import tempfile
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parent
BIN = Path(sys.executable).parent

# pytest-mypy-plugins runs shutil.which("mypy"): make that this interpreter's mypy.
if (BIN / "mypy").exists() and not os.environ.get("PATH", "").startswith(str(BIN)):
    os.environ["PATH"] = f"{BIN}{os.pathsep}{os.environ.get('PATH', '')}"


# Every case runs with the debug switch: a hook's exception reaches mypy (INTERNAL ERROR).
os.environ["TYPED_PALLAS_MYPY_DEBUG"] = "1"

# The tests' kernel library, installed like a third-party package (expanded in ``env:``).
os.environ["TYPED_PALLAS_KERNOPS_SITE"] = str(HERE.parent / "fixtures" / "site-packages")


def _base_dir() -> str:
    key = hashlib.sha256(f"{sys.prefix}|{HERE}".encode()).hexdigest()[:12]
    base = Path(tempfile.gettempdir()) / f"typed-pallas-typecheck-{sys.version_info[0]}{sys.version_info[1]}-{key}"
    base.mkdir(parents=True, exist_ok=True)
    return str(base)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    base = _base_dir()
    for item in items:
        path = Path(str(getattr(item, "path", "")))
        if path.parent != HERE or path.suffix not in (".yml", ".yaml"):
            continue
        if not hasattr(item, "incremental_cache_dir"):
            continue
        if not hasattr(item, "funcargs"):
            # pytest-lsp's run hook (tests/lsp) returns before its yield for an item
            # without funcargs, which fails every YAML case: give them none
            item.funcargs = {}  # type: ignore[attr-defined]
        item.base_ini_fpath = str(HERE / "mypy.ini")  # type: ignore[attr-defined]
        item.root_directory = base  # type: ignore[attr-defined]
        item.incremental_cache_dir = os.path.join(base, ".mypy_cache")  # type: ignore[attr-defined]
        item.add_marker(pytest.mark.slow)
        env = getattr(item, "environment_variables", None)
        if isinstance(env, dict):
            # mypy runs in a subprocess whose environment is the case's env: alone (and the
            # paths): the debug switch, and any other of the project's variables this
            # process has (TYPED_PALLAS_SUMMARIES when measuring), must be passed on
            for name, value in os.environ.items():
                if name.startswith("TYPED_PALLAS_"):
                    env.setdefault(name, value)
        if isinstance(env, dict) and "PYTHONPATH" in env:
            # pytest-mypy-plugins passes a case's env: as written; expand the folders named
            # by variable (TYPED_PALLAS_KERNOPS_SITE)
            env["PYTHONPATH"] = os.path.expandvars(env["PYTHONPATH"])
