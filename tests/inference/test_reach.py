"""Which modules can reach Pallas (``inference.reach``): a module runs its parents, then
what it imports, anywhere in its text, and so on; a module touches Pallas when its text
says ``pallas``. A function of a module that reaches none runs no kernel.

Each case is a small tree of modules; ``app`` is asked about.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest
from library_fakes import count_module_imports

from typed_pallas_mypy.inference import Inference
from typed_pallas_mypy.inference.evaluator.machine import files_loader
from typed_pallas_mypy.inference.reach import PallasReach, absolute_module, imported_modules

KERNELS = "from jax.experimental import pallas as pl\n\ndef op(x):\n    return x\n"
PLAIN = "import jax\n\ndef op(x):\n    return jax.numpy.sin(x)\n"


def _reaches(files: dict[str, str], module: str = "app") -> bool:
    return PallasReach(files_loader(files)).may_reach(module)


@pytest.mark.parametrize(
    ("app", "expected"),
    [
        ("from jax.experimental import pallas as pl\n", True),
        ("import jax.pallas as pl\n", True),
        ("import jax\nimport numpy as np\n", False),
        ("x = 1\n", False),
    ],
    ids=["pallas-import-fires", "jax-pallas-fires", "jax-only-silent", "no-import-silent"],
)
def test_a_module_that_says_pallas(app: str, expected: bool) -> None:
    assert _reaches({"app.py": app}) is expected


@pytest.mark.parametrize(
    ("kernels", "expected"), [(KERNELS, True), (PLAIN, False)], ids=["fires", "silent"]
)
@pytest.mark.parametrize(
    "app",
    [
        "import kernels\n",
        "from kernels import op\n",
        "import kernels as k, os\n",
        "def f(x):\n    from kernels import op\n    return op(x)\n",
        "try:\n    import kernels\nexcept ImportError:\n    kernels = None\n",
        "import importlib\nK = importlib.import_module('kernels')\n",
        "K = __import__('kernels')\n",
        "from kernels import (\n    other,\n    op as kernel_op,\n)\n",
        "x = 1; import kernels\n",
        "import middle\n",
    ],
    ids=[
        "import",
        "from-import",
        "import-as-list",
        "in-a-function",
        "under-a-guard",
        "import-module",
        "dunder-import",
        "bracketed",
        "after-semicolon",
        "through-another-module",
    ],
)
def test_what_a_module_imports(app: str, kernels: str, expected: bool) -> None:
    files = {"app.py": app, "kernels.py": kernels, "middle.py": "from kernels import op\n"}
    assert _reaches(files) is expected


@pytest.mark.parametrize(
    ("init", "expected"),
    [("from . import kernels\n", True), ("", False)],
    ids=["parent-imports-kernels-fires", "empty-parent-silent"],
)
def test_a_module_runs_its_parents_first(init: str, expected: bool) -> None:
    files = {
        "pkg/__init__.py": init,
        "pkg/sub/__init__.py": "",
        "pkg/sub/app.py": "x = 1\n",
        "pkg/kernels.py": KERNELS,
    }
    assert _reaches(files, "pkg.sub.app") is expected


@pytest.mark.parametrize(
    ("app", "expected"),
    [
        ("from . import kernels\n", True),
        ("from .kernels import op\n", True),
        ("from .. import top_kernels\n", True),
        ("from pkg.sub import kernels\n", True),  # ``kernels`` is a submodule
        ("import importlib\nK = importlib.import_module('.kernels', __package__)\n", True),
        ("from . import plain\n", False),
        ("from .plain import op\n", False),
    ],
    ids=[
        "relative-submodule-fires",
        "relative-from-fires",
        "two-dots-fires",
        "absolute-submodule-fires",
        "relative-import-module-fires",
        "relative-plain-silent",
        "relative-from-plain-silent",
    ],
)
def test_relative_and_submodule_imports(app: str, expected: bool) -> None:
    files = {
        "pkg/__init__.py": "",
        "pkg/top_kernels.py": KERNELS,
        "pkg/sub/__init__.py": "",
        "pkg/sub/app.py": app,
        "pkg/sub/kernels.py": KERNELS,
        "pkg/sub/plain.py": PLAIN,
    }
    assert _reaches(files, "pkg.sub.app") is expected


def test_a_dotted_import_runs_each_package_on_the_way() -> None:
    files = {"a/__init__.py": "from . import kernels\n", "a/kernels.py": KERNELS}
    files |= {"a/b/__init__.py": "", "a/b/c.py": "x = 1\n", "app.py": "import a.b.c\n"}
    assert _reaches(files) is True
    files["a/__init__.py"] = ""
    assert _reaches(files) is False


@pytest.mark.parametrize(
    ("app", "expected"),
    [("import importlib\nK = importlib.import_module(NAME)\n", True), ("NAME = 'x'\n", False)],
    ids=["name-not-written-fires", "no-import-silent"],
)
def test_an_import_whose_name_is_not_written_reaches_anything(app: str, expected: bool) -> None:
    assert _reaches({"app.py": app}) is expected


def test_a_circle_of_imports_ends() -> None:
    files = {"app.py": "import b\n", "b.py": "import app\nimport c\n", "c.py": "import b\n"}
    assert _reaches(files) is False
    files["c.py"] = "import b\nfrom jax.experimental import pallas\n"
    assert _reaches(files) is True


def test_a_module_that_is_not_found_reaches_nothing() -> None:
    assert _reaches({"app.py": "import missing\n"}) is False
    assert _reaches({}, "missing") is False


def test_forget_reads_changed_and_missing_modules_again() -> None:
    files = {"app.py": "import kernels\nimport later\n", "kernels.py": PLAIN}
    reach = PallasReach(files_loader(files))
    assert reach.may_reach("app") is False
    files["kernels.py"] = KERNELS
    assert reach.may_reach("app") is False  # read once
    reach.forget(frozenset({"kernels"}))
    assert reach.may_reach("app") is True
    files["kernels.py"] = PLAIN
    reach.forget(frozenset({"kernels"}))
    assert reach.may_reach("app") is False
    files["later.py"] = KERNELS  # installed since: it was not found
    reach.forget(frozenset({"unrelated"}))
    assert reach.may_reach("app") is True


@pytest.mark.parametrize(
    ("level", "name", "package", "expected"),
    [
        (0, "a.b", "pkg", "a.b"),
        (1, "", "pkg.sub", "pkg.sub"),
        (1, "m", "pkg.sub", "pkg.sub.m"),
        (2, "m", "pkg.sub", "pkg.m"),
        (3, "m", "pkg.sub", "m"),
        (4, "m", "pkg.sub", None),
    ],
)
def test_absolute_module(level: int, name: str, package: str, expected: str | None) -> None:
    assert absolute_module(level, name, package) == expected


def test_imported_modules_of_a_package_are_relative_to_itself() -> None:
    names, dynamic = imported_modules("pkg", True, "from . import a\nfrom .b import c\n")
    assert names == {"pkg", "pkg.a", "pkg.b", "pkg.b.c"}
    assert dynamic is False


OPS = """
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...]

def tpu_op(x):
    return pl.pallas_call(_body, out_shape=x, compiler_params=pltpu.CompilerParams())(x)
"""


def test_a_function_that_reaches_no_pallas_is_summarised_without_a_run(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "ops.py").write_text(OPS)
    (tmp_path / "plain.py").write_text(textwrap.dedent(PLAIN))
    asked = count_module_imports(monkeypatch)
    engine = Inference([str(tmp_path)], None)
    assert engine.may_lower("ops.tpu_op") is True
    assert engine.may_lower("plain.op") is False
    assert engine.may_lower("missing.op") is False
    assert engine.summary("plain.op") is None
    summary = engine.summary("ops.tpu_op")
    assert summary is not None and summary.platforms == {"tpu"}
    assert asked == ["ops"]
    assert engine.modules_of_summary("plain.op") == {"plain"}


def test_every_entry_point_and_params_class_is_named_pallas() -> None:
    # a module touches Pallas when its text says so: the names a source uses to make a
    # kernel must all say it
    from typed_pallas import _platforms
    from typed_pallas_mypy.entries import ENTRIES

    names = [*ENTRIES, *_platforms.PARAMS_BY_FULLNAME]
    assert names
    assert [name for name in names if "pallas" not in name] == []


GUARDED_APP = """
import jax
import {kernels}

def main(x):
    if jax.default_backend() == "gpu":
        return {kernels}.tpu_op(x)
    return x
"""


@pytest.mark.parametrize(
    ("kernels", "expected"), [("ops", 1), ("plain", 0)], ids=["fires", "silent"]
)
def test_a_module_that_reaches_no_pallas_is_not_run_for_findings(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, kernels: str, expected: int
) -> None:
    (tmp_path / "ops.py").write_text(OPS)
    (tmp_path / "plain.py").write_text("def tpu_op(x):\n    return x\n")
    (tmp_path / "app.py").write_text(GUARDED_APP.format(kernels=kernels))
    import typed_pallas_mypy.inference as inference

    asked: list[str] = []
    real = inference.module_findings

    def counting(loader: object, module: str, *rest: object) -> object:
        asked.append(module)
        return real(loader, module, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(inference, "module_findings", counting)
    found, read = Inference([str(tmp_path)], None).evaluated_findings("app", None)
    assert len(found) == expected
    assert asked == (["app"] if expected else [])
    assert {"app", kernels} <= read
