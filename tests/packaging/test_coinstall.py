"""typed-pallas next to jax-pyrefly-stubs: two partial ``jax-stubs`` stub packages in one environment.

jax-pyrefly-stubs 1.4.0 (the pyrefly team's shape-typed stubs) installs
``site-packages/jax-stubs/`` (``__init__.pyi``, ``numpy``, ``lax``, ``nn``, ``random``...,
``py.typed`` = ``partial``). typed-pallas installs its ``jax-stubs`` (only
``experimental/pallas/*.pyi``) where pyproject's wheel target puts it: today in its own
``sys.path`` root, ``site-packages/typed_pallas_stubs/`` (added by ``typed_pallas_stubs.pth``),
see docs/stub-layout-notes.md; the tests read the layout from pyproject, so they keep
working (and keep telling the truth) if it changes.

For each install order these tests install both wheels into a clean venv, then
uninstall one, and after each step ask mypy, pyright, pyrefly and ty which stubs
they see, through a probe file:

* typed-pallas's stubs are seen iff the wrong-platform call is an error and the
  right-platform call is not (without them both are errors: JAX's classes do not
  satisfy ``typed_pallas.CompilerParams[...]``);
* jax-pyrefly-stubs' are seen iff ``jax.jit(f)("not an int")`` is an error (their
  ``jit`` keeps ``f``'s signature; JAX's own returns a wrapper taking anything).

They also check, file by file, that neither install or uninstall removes a file of
the other package.

Every cell must equal tests/packaging/matrix_data.py's EXPECTED, which
docs/support-matrix.md renders. mypy runs with the workaround documented there
(jax-pyrefly-stubs' ``jax/numpy`` stub stops mypy 2.4 with a blocking error); a
separate test pins that failure so the docs learn when it goes away.

Needs Python >= 3.12 (jax-pyrefly-stubs' Requires-Python) and the index (the two
wheels are downloaded once into a cache outside the repository: $TYPED_PALLAS_TEST_CACHE,
default ~/.cache/typed-pallas-tests); skips with the reason otherwise.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from matrix_data import CHECKERS, EXPECTED, JAX_PYREFLY_STUBS, SEQUENCES, SHAPE_EXTENSIONS, Seen
from pkg_env import Checked, Dist, Venv, clean_environ, stubs_in_wheel

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        sys.version_info < (3, 12),
        reason="jax-pyrefly-stubs 1.4.0 requires Python >= 3.12 (Requires-Python)",
    ),
]

PROBE = '''\
"""Which stubs each checker sees: typed-pallas's (platform types) and jax-pyrefly-stubs' (jit)."""

from typing import Literal

import jax
import typed_pallas
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def needs_tpu(params: typed_pallas.CompilerParams[Literal["tpu"]]) -> None: ...


def double(x: int) -> int:
    return 2 * x


needs_tpu(pltpu.CompilerParams())
needs_tpu(pltriton.CompilerParams())
jax.jit(double)("not an int")
'''
RIGHT_LINE, WRONG_LINE, JIT_LINE = 18, 19, 20

#: the probe once typed-pallas is uninstalled: only jax-pyrefly-stubs' part
THEIRS_ONLY_PROBE = """\
import jax


def double(x: int) -> int:
    return 2 * x


jax.jit(double)("not an int")
"""
THEIRS_ONLY_JIT_LINE = 8

#: jax-pyrefly-stubs' numpy stub uses pyrefly's shape DSL in type arguments, which mypy
#: rejects with a blocking error; skipping that one stub module lets mypy run.
MYPY_WORKAROUND = """\
[mypy]

[mypy-jax.numpy,jax.numpy.*]
follow_imports = skip
follow_imports_for_stubs = True
"""


def _cache_dir() -> Path:
    return Path(
        os.environ.get("TYPED_PALLAS_TEST_CACHE") or Path.home() / ".cache" / "typed-pallas-tests"
    )


@pytest.fixture(scope="session")
def their_wheels() -> tuple[Path, Path]:
    """(jax-pyrefly-stubs wheel, pyrefly-shape-extensions wheel), downloaded once."""
    cache = _cache_dir() / "wheels"
    cache.mkdir(parents=True, exist_ok=True)

    def find() -> tuple[Path, Path] | None:
        stubs = sorted(cache.glob("jax_pyrefly_stubs-1.4.0-*.whl"))
        shapes = sorted(cache.glob("pyrefly_shape_extensions-1.4.0-*.whl"))
        return (stubs[0], shapes[0]) if stubs and shapes else None

    found = find()
    if found is None:
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary=:all:",
                "-d",
                str(cache),
                JAX_PYREFLY_STUBS,
                SHAPE_EXTENSIONS,
            ],
            capture_output=True,
            text=True,
            env=clean_environ(),
            timeout=300,
            check=False,
        )
        found = find()
        if found is None:
            pytest.skip(
                f"cannot download {JAX_PYREFLY_STUBS} (is PyPI reachable?):\n{result.stderr[-800:]}"
            )
    return found


def _seen(checked: Checked, probe: str) -> tuple[bool, bool]:
    lines = checked.error_lines(probe)
    if probe == "probe_theirs.py":
        allowed, jit_line = {THEIRS_ONLY_JIT_LINE}, THEIRS_ONLY_JIT_LINE
    else:
        allowed, jit_line = {RIGHT_LINE, WRONG_LINE, JIT_LINE}, JIT_LINE
    unexpected = {entry for entry in checked.errors if entry[0] != probe} | (lines - allowed)
    assert not unexpected, f"unexpected errors {sorted(unexpected)}:\n{checked.output[-3000:]}"
    if probe == "probe_theirs.py":
        return False, jit_line in lines
    assert WRONG_LINE in lines, f"the wrong-platform call passed: {checked.output[-3000:]}"
    return RIGHT_LINE not in lines, jit_line in lines


def _check(venv: Venv, folder: Path, checker: str, probe: str) -> tuple[bool, bool]:
    if checker == "mypy":
        return _seen(venv.mypy(folder, [probe], config=MYPY_WORKAROUND), probe)
    if checker == "pyright":
        return _seen(venv.pyright(folder, [probe]), probe)
    if checker == "pyrefly":
        return _seen(venv.pyrefly(folder, [probe]), probe)
    return _seen(venv.ty(folder, [probe]), probe)


def _stub_files(venv: Venv) -> set[str]:
    """Every file (relative to site-packages) of the shared jax-stubs folder and of ours."""
    folders = {venv.site / "jax-stubs", venv.site / stubs_in_wheel()}
    return {
        p.relative_to(venv.site).as_posix()
        for folder in folders
        if folder.exists()
        for p in folder.rglob("*")
        if p.is_file()
    }


@pytest.mark.parametrize("order", list(SEQUENCES))
def test_both_orders_install_uninstall_repair(
    order: str,
    dist: Dist,
    their_wheels: tuple[Path, Path],
    make_venv: Callable[[str], Venv],
    tmp_path: Path,
) -> None:
    stubs_wheel, shapes_wheel = their_wheels
    venv = make_venv("venv")
    folder = tmp_path / "probe"
    folder.mkdir()
    (folder / "probe.py").write_text(PROBE)
    (folder / "probe_theirs.py").write_text(THEIRS_ONLY_PROBE)
    wheel_of = {"ours": [dist.wheel], "theirs": [shapes_wheel, stubs_wheel]}
    dist_names = {
        "ours": ["typed-pallas"],
        "theirs": ["jax-pyrefly-stubs", "pyrefly-shape-extensions"],
    }
    observed: dict[str, dict[str, Seen]] = {}
    files: dict[str, set[str]] = {}
    installed: set[str] = set()
    for step in SEQUENCES[order]:
        who = step.split()[-1].lstrip("+-")
        if step.startswith("+"):
            venv.install(*wheel_of[who])
            installed.add(who)
        else:
            venv.uninstall(*dist_names[who])
            installed.discard(who)
        files[step] = _stub_files(venv)
        if (order, step) not in EXPECTED:
            continue
        row: dict[str, Seen] = {}
        for checker in CHECKERS:
            ours, theirs = _check(
                venv, folder, checker, "probe.py" if "ours" in installed else "probe_theirs.py"
            )
            row[checker] = (
                ours if "ours" in installed else None,
                theirs if "theirs" in installed else None,
            )
            if "ours" not in installed:
                assert not ours, f"{checker} sees typed-pallas's stubs after uninstalling them"
            if "theirs" not in installed:
                assert not theirs, f"{checker} sees jax-pyrefly-stubs after uninstalling them"
        observed[step] = row
    expected = {step: EXPECTED[(order, step)] for step in observed}
    assert observed == expected, (
        f"co-installation ({order}) changed; update matrix_data.py and the docs:\n{observed}"
    )

    # the file-level facts behind the table: what pip removes from the package that stays
    first, second, removed = SEQUENCES[order]
    shared = {"jax-stubs/py.typed"} if stubs_in_wheel() == "jax-stubs" else set()
    assert files[first] - files[second] <= shared, "the second install removed files of the first"
    assert files[first] - files[removed] == shared, (
        "uninstalling one package removed files of the other"
    )


def test_jax_pyrefly_stubs_alone_stops_mypy(
    their_wheels: tuple[Path, Path], make_venv: Callable[[str], Venv], tmp_path: Path
) -> None:
    """Pins why mypy needs the workaround: a blocking error in their numpy stub, without typed-pallas.

    (test_both_orders... shows that the workaround makes mypy run, with both installed.)
    """
    stubs_wheel, shapes_wheel = their_wheels
    venv = make_venv("theirs-only")
    venv.install(shapes_wheel, stubs_wheel)
    (tmp_path / "uses_jnp.py").write_text("import jax.numpy as jnp\n\nx = jnp.zeros((2, 3))\n")
    plain = venv.mypy(tmp_path, ["uses_jnp.py"])
    assert plain.returncode == 2, plain.output  # 2: a blocking error, nothing was checked
    assert re.search(
        r"jax-stubs/numpy/__init__\.pyi:\d+: error: Too many arguments", plain.output
    ), plain.output


def test_symlink_workaround_lets_pyrefly_and_ty_see_both(
    dist: Dist, their_wheels: tuple[Path, Path], make_venv: Callable[[str], Venv], tmp_path: Path
) -> None:
    """The workaround docs/support-matrix.md gives: link our experimental/ into their jax-stubs/."""
    ours_dir = stubs_in_wheel()
    if ours_dir == "jax-stubs":
        pytest.skip("the wheel shares jax-stubs/ with jax-pyrefly-stubs: no link needed")
    stubs_wheel, shapes_wheel = their_wheels
    venv = make_venv("linked")
    venv.install(dist.wheel)
    venv.install(shapes_wheel, stubs_wheel)
    (tmp_path / "probe.py").write_text(PROBE)
    assert _seen(venv.pyrefly(tmp_path, ["probe.py"]), "probe.py") == (
        False,
        True,
    )  # the problem...
    link = venv.site / "jax-stubs" / "experimental"
    link.symlink_to(venv.site / ours_dir / "experimental")
    for checker in ("pyrefly", "ty"):  # ...and the fix
        assert _check(venv, tmp_path, checker, "probe.py") == (True, True), checker
