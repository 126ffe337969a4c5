"""Under mypy's daemon, a module's file is looked at once per build epoch
(``module_index.stamp_of``), and a module's own facts do not make its index look stale.

A unit check of the stamp memo (kept while the epoch stays, read again when mypy starts
a new one), and a daemon round trip that would keep a stale finding if an index were
never built again: a guard helper of the checked module reads a helper of another
module, and only that other module is edited (the checked module's own facts symbol is
no longer among what its index records as read)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest
from mypy.errors import Errors
from mypy.nodes import MypyFile
from mypy.options import Options
from mypy_seeds import MypySeeds

from tests.test_incremental import Project
from typed_pallas_mypy.transformers import module_index, reporting


def _api(errors: object) -> Any:
    return cast(Any, SimpleNamespace(msg=SimpleNamespace(errors=errors)))


@pytest.fixture
def fresh_epochs(monkeypatch: pytest.MonkeyPatch) -> None:
    """No ``Errors`` object or stamp left over from another test of this process."""
    monkeypatch.setattr(reporting, "_last_errors", [])
    monkeypatch.setattr(module_index, "_STAMPS_EPOCH", [])
    monkeypatch.setattr(module_index, "_STAMPS", {})


def _tree(path: Path) -> MypyFile:
    tree = MypyFile([], [])
    tree._fullname = "pkg.mod"
    tree.path = str(path)
    return tree


@pytest.mark.usefixtures("fresh_epochs")
def test_a_stamp_is_read_once_an_epoch(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_text("x = 1\n")
    tree = _tree(path)
    errors = Errors(Options())
    reporting.build_epoch(_api(errors))
    first = module_index.stamp_of(tree)
    path.write_text("x = 100\n")  # another size: another stamp, once looked at
    assert module_index.stamp_of(tree) == first  # the same epoch: not looked at
    errors.reset()  # what the daemon does before it re-reads a changed module
    second = module_index.stamp_of(tree)
    assert second != first
    assert module_index.stamp_of(tree) == second


@pytest.mark.usefixtures("fresh_epochs")
def test_without_an_epoch_every_stamp_is_read(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_text("x = 1\n")
    tree = _tree(path)
    first = module_index.stamp_of(tree)
    path.write_text("x = 100\n")
    assert module_index.stamp_of(tree) != first


@pytest.mark.usefixtures("fresh_epochs")
def test_another_tree_object_is_not_served_the_old_stamp(tmp_path: Path) -> None:
    path = tmp_path / "mod.py"
    path.write_text("x = 1\n")
    reporting.build_epoch(_api(Errors(Options())))
    old = _tree(path)
    new = _tree(path)  # a module parsed again as a new object (a cache load)
    assert module_index.stamp_of(old) != module_index.stamp_of(new)


PLATFORM_HELPER = """\
import jax


def on_x() -> bool:
    return jax.default_backend() == "PLATFORM"
"""

KERNELS = """\
from typing import Any
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _body(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + 1


def add_one(x: jax.Array) -> jax.Array:
    return pl.pallas_call(_body, out_shape=x, compiler_params=pltpu.CompilerParams())(x)
"""

#: a guard helper of the user's own module that reads ``platform_helper``
USER = """\
import jax
import kernels
import platform_helper


def on_gpu() -> bool:
    return platform_helper.on_x()


def run(x: jax.Array) -> jax.Array:
    if on_gpu():
        return kernels.add_one(x)
    return x
"""


def _user_error(name: str) -> str:
    return (
        f"{name}:12: error: Compiler params for platform tpu cannot be used for gpu lowering."
        "  [pallas-platform]"
    )


@pytest.fixture
def project(tmp_path: Path, mypy_seeds: MypySeeds) -> Iterator[Project]:
    proj = Project(tmp_path, mypy_seeds)  # jax comes analysed; the daemon analyses it
    yield proj
    proj.dmypy("kill")


@pytest.mark.slow
def test_an_own_guard_helper_reading_another_module(project: Project) -> None:
    """``if on_gpu():`` where ``on_gpu``, defined next to it, returns
    ``platform_helper.on_x()``: an edit of ``platform_helper`` alone must move the
    finding (gpu: an error, tpu: none) under the daemon as in a cold run, in a user
    mypy re-checks only for the plugin's dependencies (``a_user``) and in one it
    re-checks anyway for an unrelated error (``b_user``)."""
    project.files = ("platform_helper.py", "kernels.py", "a_user.py", "b_user.py")
    project.lines_of = ("a_user.py", "b_user.py", "Success", "Found")
    unrelated = 'unrelated: int = "not an int"  # a mypy error of its own\n'

    def write(platform: str) -> None:
        project.write_files(
            {
                "platform_helper.py": PLATFORM_HELPER.replace("PLATFORM", platform),
                "kernels.py": KERNELS,
                "a_user.py": USER,
                "b_user.py": USER + unrelated,
                "mypy.ini": "[mypy]\nplugins = typed_pallas_mypy\n",
            }
        )

    both = [_user_error("a_user.py"), _user_error("b_user.py")]
    write("gpu")
    cold = project.mypy("warm")
    assert sorted(line for line in cold if "pallas-platform" in line) == both, cold
    assert project.daemon() == cold

    for platform, expected in (("tpu", []), ("gpu", both), ("tpu", [])):
        write(platform)
        cold = project.cold()
        assert sorted(line for line in cold if "pallas-platform" in line) == expected, cold
        assert project.daemon() == cold


#: a guard helper and an entry call in one module; the module-level entry call comes
#: first, so its hooks are the first of the module's re-check, and build its index
OWN_HELPER = """\
from typing import Any
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _body(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + 1


SHAPE = jax.ShapeDtypeStruct((8,), jnp.float32)
UNGUARDED = pl.pallas_call(_body, out_shape=SHAPE, compiler_params=pltpu.CompilerParams())


def run(x: jax.Array) -> jax.Array:
    if on_gpu():
        return pl.pallas_call(_body, out_shape=x, compiler_params=pltpu.CompilerParams())(x)
    return x


def on_gpu() -> bool:
    return jax.default_backend() == "PLATFORM"
"""

OWN_ERROR = (
    "own.py:18: error: Compiler params for platform tpu cannot be used for gpu lowering."
    "  [pallas-platform]"
)


@pytest.mark.slow
def test_an_edit_of_a_guard_helper_in_the_same_module(project: Project) -> None:
    """The module's own helper changes its platform string: the index built by the
    first hook of the re-check must not read the helper's answer of before the edit
    (the facts are refreshed at a hook's start, not only when findings are computed)."""
    project.files = ("own.py",)
    project.lines_of = ("own.py", "Success", "Found")

    def write(platform: str) -> None:
        project.write_files(
            {
                "own.py": OWN_HELPER.replace("PLATFORM", platform),
                "mypy.ini": "[mypy]\nplugins = typed_pallas_mypy\n",
            }
        )

    write("gpu")
    cold = project.mypy("warm")
    assert [line for line in cold if "pallas-platform" in line] == [OWN_ERROR], cold
    assert project.daemon() == cold

    for platform, expected in (("tpu", []), ("gpu", [OWN_ERROR]), ("tpu", [])):
        write(platform)
        cold = project.cold()
        assert [line for line in cold if "pallas-platform" in line] == expected, cold
        assert project.daemon() == cold
