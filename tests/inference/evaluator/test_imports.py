"""Imports as Python runs them: ``import a.b as c`` binds the submodule, ``from``
imports bind its names, relative imports resolve against the package, ``*`` takes
``__all__`` (or the public names), ``importlib.import_module`` gives the module, a module
``__getattr__`` answers names the module lacks, ``sys.modules[__name__]`` is the module
itself.

``pkg/ops.py`` holds ``kernel``: ``lib.kernel`` with TPU params (a finding under a guard
for "gpu") or Triton params (silent).
"""

from __future__ import annotations

import pytest
from evaluator_programs import TPU_FIRES_TRITON_SILENT, fires

PACKAGE = {"pkg/__init__.py": "", "pkg/ops.py": "from lib import kernel\n"}


def _guarded(imports: str, call: str) -> str:
    return f"""
{imports}

def main(x):
    if jax.default_backend() == "gpu":
        return {call}  # here
    return x
"""


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize(
    ("imports", "call"),
    [
        ("import pkg.ops as ops", "ops.kernel(x)"),
        ("import pkg.ops", "pkg.ops.kernel(x)"),
        ("from pkg.ops import kernel", "kernel(x)"),
        ("from pkg.ops import kernel as k", "k(x)"),
        ("from pkg import ops", "ops.kernel(x)"),
    ],
)
def test_absolute_imports(imports: str, call: str, params: str, expected: bool) -> None:
    assert fires(_guarded(imports, call), params, files=PACKAGE) is expected


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize(
    "relative",
    [
        "from .impl import kernel",
        "from . import impl\nkernel = impl.kernel",
        "from .. import lib\nkernel = lib.kernel",
    ],
    ids=["from-sibling", "sibling-module", "parent-package"],
)
def test_relative_imports(relative: str, params: str, expected: bool) -> None:
    files = {
        "top/__init__.py": "",
        "top/lib.py": "from lib import kernel\n",
        "top/pkg/__init__.py": "",
        "top/pkg/impl.py": "from top.lib import kernel\n",
        "top/pkg/ops.py": relative + "\n",
    }
    assert (
        fires(_guarded("from top.pkg.ops import kernel", "kernel(x)"), params, files=files)
        is expected
    )


@TPU_FIRES_TRITON_SILENT
def test_package_init_reexports(params: str, expected: bool) -> None:
    files = {
        "pkg/__init__.py": "from .ops import kernel\n",
        "pkg/ops.py": "from lib import kernel\n",
    }
    assert fires(_guarded("import pkg", "pkg.kernel(x)"), params, files=files) is expected


@pytest.mark.parametrize(
    ("exported", "expected"),
    [('"kernel"', True), ('"other"', False)],
    ids=["in-all-fires", "not-in-all-silent"],
)
def test_star_import_takes_all(exported: str, expected: bool) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/ops.py": f"from lib import tpu_kernel as kernel, triton_kernel as other\n__all__ = [{exported}]\n",
    }
    app = _guarded("kernel = lib.triton_kernel\nfrom pkg.ops import *", "kernel(x)")
    assert fires(app, files=files) is expected


@pytest.mark.parametrize(
    ("name", "expected"),
    [("kernel", True), ("_kernel", False)],
    ids=["public-fires", "underscore-not-imported-silent"],
)
def test_star_import_without_all_skips_private_names(name: str, expected: bool) -> None:
    files = {"pkg/__init__.py": "", "pkg/ops.py": f"from lib import tpu_kernel as {name}\n"}
    app = _guarded(f"{name} = lib.triton_kernel\nfrom pkg.ops import *", f"{name}(x)")
    assert fires(app, files=files) is expected


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize(
    "load", ['importlib.import_module("pkg.ops")', 'importlib.import_module(".ops", "pkg")']
)
def test_importlib_import_module(load: str, params: str, expected: bool) -> None:
    app = _guarded(f"import importlib\nops = {load}", "ops.kernel(x)")
    assert fires(app, params, files=PACKAGE) is expected


@pytest.mark.parametrize(
    ("name", "expected"), [("fast", True), ("safe", False)], ids=["fast-fires", "safe-silent"]
)
def test_module_getattr(name: str, expected: bool) -> None:
    files = {
        "pkg/__init__.py": """
import lib

def __getattr__(name):
    if name == "fast":
        return lib.tpu_kernel
    return lib.triton_kernel
"""
    }
    assert fires(_guarded("import pkg", f"pkg.{name}(x)"), files=files) is expected


@TPU_FIRES_TRITON_SILENT
@pytest.mark.parametrize(
    "read", ["this.KERNEL", 'getattr(this, "KERNEL")'], ids=["attribute", "getattr"]
)
def test_sys_modules_of_the_module_itself(read: str, params: str, expected: bool) -> None:
    app = f"""
import sys

KERNEL = lib.kernel

def main(x):
    this = sys.modules[__name__]
    k = {read}
    if jax.default_backend() == "gpu":
        return k(x)  # here
    return x
"""
    assert fires(app, params) is expected


@pytest.mark.parametrize(
    ("patched", "expected"),
    [("lib.tpu_kernel", True), ("lib.triton_kernel", False)],
    ids=["patched-tpu-fires", "patched-triton-silent"],
)
def test_module_attribute_assigned_from_outside(patched: str, expected: bool) -> None:
    first = "triton_kernel" if patched == "lib.tpu_kernel" else "tpu_kernel"
    files = {"pkg/__init__.py": "", "pkg/ops.py": f"import lib\nkernel = lib.{first}\n"}
    app = _guarded(f"import pkg.ops\npkg.ops.kernel = {patched}", "pkg.ops.kernel(x)")
    assert fires(app, files=files) is expected


@pytest.mark.parametrize(
    ("picked", "expected"), [("tpu_kernel", True), ("triton_kernel", False)], ids=["tpu", "triton"]
)
def test_a_submodule_import_runs_its_package_first(picked: str, expected: bool) -> None:
    """``import pkg.sub`` runs ``pkg/__init__.py`` first; when that body imports ``pkg.sub``
    itself, the submodule is run there, whole, before the package's body goes on."""
    files = {
        "pkg/__init__.py": "from pkg.sub import fn\nTABLE = {'k': fn}\n",
        "pkg/sub.py": f"import lib\nfn = lib.{picked}\n",
    }
    app = """
import pkg.sub

def main(x):
    if jax.default_backend() == "gpu":
        return pkg.TABLE["k"](x)  # here
    return x
"""
    assert fires(app, files=files) is expected
