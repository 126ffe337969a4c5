"""typed-pallas next to jax-pyrefly-stubs, installed as a user installs them, in both orders.

jax-pyrefly-stubs 1.4.0 (the pyrefly team's shape-typed stubs) installs
``site-packages/jax-stubs/`` (``__init__.pyi``, ``numpy``, ``lax``, ``nn``, ``random``...,
``py.typed`` = ``partial`` without a newline). typed-pallas installs its ``jax-stubs`` (only
``experimental/pallas/*.pyi``) where pyproject's wheel target puts it: today in its own
``sys.path`` root, ``site-packages/typed_pallas_stubs/`` (added by ``typed_pallas_stubs.pth``),
see docs/stub-layout-notes.md; the tests read the layout from pyproject.

The steps are a user's (pkg_env.user_venv): a fresh venv made with ``python -m venv``,
``pip install <the built wheel>[mypy]`` and ``pip install jax-pyrefly-stubs`` in one order
or the other, each with its dependencies from the index, so that jax, jaxlib and their
``jax-stubs`` all land in the venv's ``site-packages``; then ``pip uninstall`` of one of the
two. After each step the tests ask mypy, pyright, basedpyright, pyrefly and ty which stubs
they see, through a probe file:

* typed-pallas's stubs: "yes" iff the wrong-platform call is an error and the
  right-platform call is not; "right flagged" when both are (JAX's classes without their
  platform: pyrefly and ty see only the first ``jax-stubs``, theirs); "wrong passes" when
  neither is (pyright and basedpyright take their ``jax-stubs``, an ``__init__.pyi`` and no
  ``partial\\n``, for all of ``jax`` in ``site-packages``: ``jax._src`` resolves nowhere, JAX's
  params classes derive from ``Unknown`` and pass for any platform);
* jax-pyrefly-stubs': iff ``jax.jit(f)("not an int")`` is an error (their ``jit`` keeps
  ``f``'s signature; JAX's own returns a wrapper taking anything). Their ``jax.numpy``
  (``jnp.zeros("not a shape")``, which JAX's own ``shape: Any`` accepts) must go with it,
  except under mypy, which the workaround below has skip it.

Every cell must equal tests/packaging/matrix_data.py's EXPECTED, which
docs/support-matrix.md renders. mypy runs with the workaround documented there
(jax-pyrefly-stubs' ``jax/numpy`` stub stops mypy 2.4 with a blocking error: pinned where
their stubs are installed without typed-pallas), pyright and basedpyright with ``stubPath``
at typed-pallas's stubs root, as docs/checkers.md says, pyrefly with ``--preset default``.
With both installed, the links of docs/editors.md are made and checked (all five then see
both; pyright's ``stubPath`` must then be a copy of the stubs, as ``typed-pallas init``
makes: at the stubs root it takes jax's own ``jax.numpy`` from the linked jax), then
removed, as the docs say, before the uninstall. The tests also check, file by file, that
neither install or uninstall removes a file of the other package.

An earlier version installed the two wheels with ``--no-deps --no-index`` into a venv that
saw jax through a ``.pth`` line (pkg_env's mirror of the test environment): jax then sat
in another ``sys.path`` root than their ``jax-stubs``, pyright found ``jax._src`` there, and
the table said "yes / yes" for pyright where a user's pyright passes the wrong call.

Versions: pip resolves from the index, held to the test environment's jax, jaxlib and mypy
and to jax-pyrefly-stubs 1.4.0 (the versions the docs name); the checkers are the test
environment's (pinned by the test extra), named the venv's interpreter. The two orders
reuse one venv path and one mypy cache, so the second order's mypy does not analyse jax
again. Needs Python >= 3.12 (jax-pyrefly-stubs' Requires-Python) and the index (pip's cache
makes a rerun fast); skips with the reason otherwise.
"""

from __future__ import annotations

import re
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from matrix_data import CHECKERS, EXPECTED, SEQUENCES, Ours, Seen
from pkg_env import Checked, Dist, Venv, stubs_in_wheel, user_requirements

pytestmark = [
    pytest.mark.slow,
    pytest.mark.skipif(
        sys.version_info < (3, 12),
        reason="jax-pyrefly-stubs 1.4.0 requires Python >= 3.12 (Requires-Python)",
    ),
]

PROBE = '''\
"""Which stubs each checker sees: typed-pallas's (platform types), jax-pyrefly-stubs' (jit, numpy)."""

from typing import Literal

import jax
import jax.numpy as jnp
import typed_pallas
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def needs_tpu(params: typed_pallas.CompilerParams[Literal["tpu"]]) -> None: ...


def double(x: int) -> int:
    return 2 * x


needs_tpu(pltpu.CompilerParams())
needs_tpu(pltriton.CompilerParams())
jax.jit(double)("not an int")
jnp.zeros("not a shape")
'''

#: the probe once typed-pallas is uninstalled: only jax-pyrefly-stubs' part
THEIRS_ONLY_PROBE = """\
import jax
import jax.numpy as jnp


def double(x: int) -> int:
    return 2 * x


jax.jit(double)("not an int")
jnp.zeros("not a shape")
"""
PROBES = {"probe.py": PROBE, "probe_theirs.py": THEIRS_ONLY_PROBE}
#: the probe lines a checker may report, by what they tell
MARKS = {
    "right": "needs_tpu(pltpu.CompilerParams())",
    "wrong": "needs_tpu(pltriton.CompilerParams())",
    "jit": 'jax.jit(double)("not an int")',
    "jnp": 'jnp.zeros("not a shape")',
}

#: jax-pyrefly-stubs' numpy stub uses pyrefly's shape DSL in type arguments, which mypy
#: rejects with a blocking error; skipping that one stub module lets mypy run.
MYPY_WORKAROUND = """\
[mypy]

[mypy-jax.numpy,jax.numpy.*]
follow_imports = skip
follow_imports_for_stubs = True
"""

#: (typed-pallas's stubs, their jax.jit, their jax.numpy) as a checker reports the probe
Observed = tuple[Ours | None, bool, bool]
_OURS: dict[tuple[bool, bool], Ours] = {
    (False, True): "yes",
    (False, False): "wrong passes",
    (True, True): "right flagged",
}


def _marked_lines(text: str) -> dict[str, int]:
    numbered = {line: number for number, line in enumerate(text.splitlines(), 1)}
    return {mark: numbered[line] for mark, line in MARKS.items() if line in numbered}


def _observe(checked: Checked, probe: str) -> Observed:
    """What ``checked`` (a run on ``probe`` alone) tells; any other error fails the test."""
    marks = _marked_lines(PROBES[probe])
    lines = checked.error_lines(probe)
    unexpected = {entry for entry in checked.errors if entry[0] != probe}
    unexpected |= {(probe, line) for line in lines - set(marks.values())}
    assert not unexpected, f"unexpected errors {sorted(unexpected)}:\n{checked.output[-3000:]}"
    jit, jnp = marks["jit"] in lines, marks["jnp"] in lines
    if "right" not in marks:
        return None, jit, jnp
    right, wrong = marks["right"] in lines, marks["wrong"] in lines
    assert (right, wrong) in _OURS, f"only the right call is an error:\n{checked.output[-3000:]}"
    return _OURS[right, wrong], jit, jnp


def _check(venv: Venv, folder: Path, checker: str, probe: str) -> Checked:
    if checker == "mypy":
        return venv.mypy(folder, [probe], config=MYPY_WORKAROUND)
    if checker in ("pyright", "basedpyright"):
        return venv.pyright(folder, [probe], checker)  # stubPath as docs/checkers.md says
    if checker == "pyrefly":
        return venv.pyrefly(folder, [probe])
    return venv.ty(folder, [probe])


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


def _check_links(venv: Venv, folder: Path, tmp_path: Path) -> None:
    """Both packages installed: the two links of docs/editors.md, made as written there.

    pyright, as ``typed-pallas init`` sets it up (a copy of the stubs in ``.typings``), and
    pyrefly and ty see both packages, mypy is unchanged; pyright with ``stubPath`` at
    typed-pallas's root (docs/checkers.md) loses their ``jax.numpy``: that root now holds
    jax too, and pyright takes ``jax.numpy`` from ``stubPath`` first. Removed afterwards,
    before any uninstall, as the docs say.
    """
    ours = venv.stubs_root()
    if ours is None:  # the wheel shares site-packages/jax-stubs: no link to make
        return
    site = venv.site
    jax_link, experimental = ours / "jax", site / "jax-stubs" / "experimental"
    jax_link.symlink_to("../jax")
    experimental.symlink_to(ours / "jax-stubs" / "experimental")
    try:
        project = tmp_path / "init-project"
        shutil.copytree(ours / "jax-stubs", project / ".typings" / "jax-stubs")
        (project / "pyrightconfig.json").write_text('{"stubPath": ".typings"}\n')
        (project / "probe.py").write_text(PROBE)
        for tool in ("pyright", "basedpyright"):
            checked = venv.pyright(project, ["probe.py"], tool, configure=False)
            assert _observe(checked, "probe.py") == ("yes", True, True), tool
        for checker in ("pyrefly", "ty"):
            checked = _check(venv, folder, checker, "probe.py")
            assert _observe(checked, "probe.py") == ("yes", True, True), checker
        checked = _check(venv, folder, "mypy", "probe.py")
        assert _observe(checked, "probe.py") == ("yes", True, False)
        checked = _check(venv, folder, "pyright", "probe.py")
        assert _observe(checked, "probe.py") == ("yes", True, False)  # their jax.numpy is lost
    finally:
        experimental.unlink()
        jax_link.unlink()


@pytest.mark.parametrize("order", list(SEQUENCES))
def test_both_orders_as_a_user_installs(
    order: str, dist: Dist, make_user_venv: Callable[[], Venv], tmp_path: Path
) -> None:
    venv = make_user_venv()
    folder = tmp_path / "probe"
    folder.mkdir()
    for name, text in PROBES.items():
        (folder / name).write_text(text)
    requirement = user_requirements(dist)
    dist_name = {"ours": "typed-pallas", "theirs": "jax-pyrefly-stubs"}
    observed: dict[str, dict[str, Seen]] = {}
    files: dict[str, set[str]] = {}
    installed: set[str] = set()
    for step in SEQUENCES[order]:
        who = step[1:]
        if step.startswith("+"):
            venv.pip_install(requirement[who])
            installed.add(who)
        else:
            venv.uninstall(dist_name[who])
            installed.discard(who)
        files[step] = _stub_files(venv)
        # a user's layout: jax (a dependency of both) and their jax-stubs in one folder
        assert (venv.site / "jax" / "__init__.py").is_file()
        assert (venv.site / "jax-stubs" / "__init__.pyi").is_file() == ("theirs" in installed)
        if (order, step) not in EXPECTED:
            continue
        probe = "probe.py" if "ours" in installed else "probe_theirs.py"
        row: dict[str, Seen] = {}
        for checker in CHECKERS:
            ours, jit, jnp = _observe(_check(venv, folder, checker, probe), probe)
            assert jnp == (jit and checker != "mypy"), f"{checker}: their jit and jax.numpy differ"
            if "theirs" not in installed:
                assert not jit, f"{checker} sees jax-pyrefly-stubs after uninstalling them"
            row[checker] = (ours, jit if "theirs" in installed else None)
        observed[step] = row
        if installed == {"ours", "theirs"}:
            _check_links(venv, folder, tmp_path)
        if installed == {"theirs"}:
            # why mypy needs the workaround: a blocking error in their numpy stub, with no
            # typed-pallas around (2: nothing was checked)
            plain = venv.mypy(folder, ["probe_theirs.py"])
            assert plain.returncode == 2, plain.output
            assert re.search(
                r"jax-stubs/numpy/__init__\.pyi:\d+: error: Too many arguments", plain.output
            ), plain.output
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
