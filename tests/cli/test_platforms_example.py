"""examples/kernel-library: a kernel library's committed platform lock and the CI step
that checks it.

The committed ``platforms.lock`` says what the example's public names lower for (written
here by hand from the example's code), holds no absolute path and no line number, and is
what ``typed-pallas platforms src/addkernels --lock`` writes. ``--check`` on the example as
committed exits 0; on a copy, an edit that makes a public function TPU-only exits 1
naming that function with its old and new platforms, and an edit that changes no platform
(a comment, a constant, lines moved) exits 0. The CI recipes
(examples/ci/platform-lock-*.yml) run their check step as written on a copy of the
example: 0 as committed, 1 after such an edit.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

from typed_pallas_mypy import config, platform_map
from typed_pallas_mypy.cli import main

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "examples" / "kernel-library"
PACKAGE = "src/addkernels"
SOURCE = Path(PACKAGE) / "__init__.py"
GITHUB = ROOT / "examples" / "ci" / "platform-lock-github-actions.yml"
GITLAB = ROOT / "examples" / "ci" / "platform-lock-gitlab-ci.yml"
VENV_BIN = Path(sys.executable).parent

#: the lock's entries, written by hand from src/addkernels/__init__.py: the TPU kernel,
#: the Triton kernel; the dispatcher add_one lowers everywhere, so it is not listed
LOCKED = [
    "addkernels.add_one_gpu: cuda, rocm",
    "    its pl.pallas_call at src/addkernels/__init__.py takes Triton params",
    "addkernels.add_one_tpu: tpu",
    "    its pl.pallas_call at src/addkernels/__init__.py takes Mosaic TPU params",
]
AGAIN = "If that is intended, write the lock again: typed-pallas platforms src/addkernels --lock platforms.lock"

#: (edit, the --check output it gives): each edit makes public functions TPU-only (with
#: TPU params in the GPU kernel, the dispatcher's gpu branch is refused too: it lowers
#: only where its tpu branch runs)
TPU_ONLY = {
    "triton-params-swapped-for-tpu-params": (
        ("compiler_params=pltriton.CompilerParams(num_warps=4)", "compiler_params=pltpu.CompilerParams()"),
        ["  addkernels.add_one: every platform -> tpu "
         "(it calls add_one_gpu at src/addkernels/__init__.py)",
         "  addkernels.add_one_gpu: cuda, rocm -> tpu "
         "(its pl.pallas_call at src/addkernels/__init__.py takes Mosaic TPU params)"],
    ),
    "dispatcher-calls-the-tpu-kernel-unguarded": (
        ('    backend = jax.default_backend()\n    if backend == "tpu":\n        return add_one_tpu(x)\n',
         "    return add_one_tpu(x)\n"),
        ["  addkernels.add_one: every platform -> tpu "
         "(it calls add_one_tpu at src/addkernels/__init__.py)"],
    ),
}  # fmt: skip

#: no platform changes: a comment and a docstring line move every line below, the kernel
#: adds another constant, the Triton kernel runs with more warps
BODY_ONLY = [
    ("from __future__ import annotations\n", "from __future__ import annotations\n\n# edited\n"),
    ('"""addkernels:', '"""Edited.\n\naddkernels:'),
    ("o_ref[...] = x_ref[...] + 1", "o_ref[...] = x_ref[...] + 2 - 1"),
    ("num_warps=4", "num_warps=8"),
]


def _edit(folder: Path, edits: list[tuple[str, str]]) -> None:
    source = folder / SOURCE
    text = source.read_text()
    for old, new in edits:
        assert text.count(old) == 1, f"the example no longer has {old!r}"
        text = text.replace(old, new)
    source.write_text(text)


# --- the committed lock, read as text ----------------------------------------------------------


def test_the_committed_lock_lists_the_examples_kernels() -> None:
    lines = (EXAMPLE / "platforms.lock").read_text().splitlines()
    assert lines[0].startswith("# typed-pallas platform lock, format 1: ")
    assert lines[2:4] == [
        "# Made by: typed-pallas platforms src/addkernels --lock FILE",
        "# Checked by: typed-pallas platforms src/addkernels --check FILE",
    ]
    assert [line for line in lines if not line.startswith("#")] == LOCKED


#: an absolute path (POSIX, home, Windows) and a line number (``file.py:12``, ``line 12``)
ABSOLUTE_PATH = re.compile(r"(?:^|[\s(])(?:/|~|[A-Za-z]:\\)", re.M)
LINE_NUMBER = re.compile(r"\.pyi?:\d|\bline \d")


def test_the_committed_lock_has_no_absolute_path_and_no_line_number() -> None:
    text = (EXAMPLE / "platforms.lock").read_text()
    assert str(ROOT) not in text
    assert ABSOLUTE_PATH.search(text) is None
    assert LINE_NUMBER.search(text) is None


@pytest.mark.parametrize(
    ("reason", "pattern"),
    [
        ("its pl.pallas_call at /home/u/src/addkernels/__init__.py", ABSOLUTE_PATH),
        ("its pl.pallas_call at C:\\lib\\addkernels\\__init__.py", ABSOLUTE_PATH),
        ("its pl.pallas_call at src/addkernels/__init__.py:36 takes", LINE_NUMBER),
        ("the if at line 12 lets this lower only for tpu", LINE_NUMBER),
    ],
)
def test_the_path_and_line_patterns_fire(reason: str, pattern: re.Pattern[str]) -> None:
    """The checks above are not vacuous: each pattern fires on what it looks for, and
    neither on the lock's own kind of reason."""
    assert pattern.search(f"addkernels.add_one_tpu: tpu\n    {reason}\n")
    assert pattern.search("\n".join(LOCKED)) is None


def test_the_example_has_no_run_time_dependency_on_typed_pallas() -> None:
    source = (EXAMPLE / SOURCE).read_text()
    imports = re.findall(r"^(\s*)(?:from|import) typed_pallas\b", source, re.M)
    assert imports == ["    "], "typed_pallas imported other than under TYPE_CHECKING"
    assert "if TYPE_CHECKING:\n    from typed_pallas import platform\n" in source
    assert "typed-pallas" not in (EXAMPLE / "pyproject.toml").read_text().split("dependencies")[1]
    assert (EXAMPLE / "src" / "addkernels" / "py.typed").is_file()


# --- the check, run as CI runs it ----------------------------------------------------------------


@pytest.fixture(scope="module")
def map_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("map-cache"))  # jax analysed once for the module


@pytest.fixture
def clean_env(monkeypatch: pytest.MonkeyPatch, map_cache: str) -> None:
    monkeypatch.delenv(config.PLATFORMS_ENV, raising=False)
    monkeypatch.delenv(config.CONFIG_ENV, raising=False)
    monkeypatch.setattr(platform_map, "DEFAULT_MAP_CACHE", map_cache)


@pytest.fixture
def copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, clean_env: None) -> Iterator[Path]:
    """The example copied into a library checkout of its own, the current folder."""
    folder = tmp_path / "kernel-library"
    shutil.copytree(EXAMPLE, folder, ignore=shutil.ignore_patterns(".mypy_cache", "__pycache__"))
    (folder / ".git").mkdir()  # the configuration search stops here, as in a checkout
    monkeypatch.chdir(folder)
    yield folder


CHECK = ["platforms", PACKAGE, "--check", "platforms.lock"]


@pytest.mark.slow
def test_the_committed_lock_checks_clean(
    monkeypatch: pytest.MonkeyPatch, clean_env: None, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(EXAMPLE)  # the example as committed, where its README runs the check
    assert main(CHECK) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "typed-pallas: platforms unchanged since platforms.lock\n"


@pytest.mark.slow
def test_the_lock_is_what_the_command_writes(copy: Path) -> None:
    committed = (copy / "platforms.lock").read_bytes()
    (copy / "platforms.lock").unlink()
    assert main(["platforms", PACKAGE, "--lock", "platforms.lock"]) == 0
    assert (copy / "platforms.lock").read_bytes() == committed


@pytest.mark.slow
@pytest.mark.parametrize("case", sorted(TPU_ONLY))
def test_a_function_made_tpu_only_fails_the_check(
    copy: Path, capsys: pytest.CaptureFixture[str], case: str
) -> None:
    edit, changed = TPU_ONLY[case]
    _edit(copy, [edit])
    assert main(CHECK) == 1
    assert capsys.readouterr().out.splitlines() == [
        f"typed-pallas: the platforms of {len(changed)} public name(s) changed since platforms.lock:",
        *changed,
        AGAIN,
    ]


@pytest.mark.slow
def test_a_body_only_edit_passes_the_check(copy: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _edit(copy, BODY_ONLY)
    assert main(CHECK) == 0
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == "typed-pallas: platforms unchanged since platforms.lock\n"


# --- the CI recipes ------------------------------------------------------------------------------


def _github_check_step() -> str:
    workflow = yaml.safe_load(GITHUB.read_text())
    (job,) = workflow["jobs"].values()
    runs = [step["run"] for step in job["steps"] if "typed-pallas platforms" in step.get("run", "")]
    (command,) = runs
    assert isinstance(command, str)
    return command


def _gitlab_job() -> dict[str, Any]:
    (job,) = yaml.safe_load(GITLAB.read_text()).values()
    assert isinstance(job, dict)
    return job


def _install(steps: list[Any]) -> str:
    (install,) = [
        s for s in steps if "pip install" in (s if isinstance(s, str) else s.get("run", ""))
    ]
    return (install if isinstance(install, str) else install["run"]).strip()


def test_the_recipes_check_the_lock_and_install_as_the_check_recipes_do() -> None:
    check = "typed-pallas platforms src/addkernels --check platforms.lock"
    assert _github_check_step().strip() == check
    assert _gitlab_job()["script"] == [check]
    github = yaml.safe_load(GITHUB.read_text())
    (job,) = github["jobs"].values()
    (checks,) = yaml.safe_load((ROOT / "examples" / "ci" / "github-actions.yml").read_text())[
        "jobs"
    ].values()
    assert _install(job["steps"]) == _install(checks["steps"])
    (gitlab_check,) = yaml.safe_load(
        (ROOT / "examples" / "ci" / "gitlab-ci.yml").read_text()
    ).values()
    assert _install(_gitlab_job()["before_script"]) == _install(gitlab_check["before_script"])


def _environ() -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in (config.PLATFORMS_ENV, config.CONFIG_ENV, "VIRTUAL_ENV")
    }
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    return env


@pytest.mark.slow
def test_the_recipes_check_steps_run(copy: Path, map_cache: str) -> None:
    """GitHub's step under ``bash -eo pipefail`` on the example as committed: 0; GitLab's
    script under ``sh -e`` after an edit that makes add_one_gpu TPU-only: 1, naming it.
    Both start from the cache the tests above filled (jax analysed once)."""
    shutil.copytree(map_cache, copy / ".mypy_cache" / "typed-pallas-map")
    github = subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", _github_check_step()],
        cwd=copy, env=_environ(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert github.returncode == 0, github.stdout + github.stderr
    assert github.stderr == "typed-pallas: platforms unchanged since platforms.lock\n"

    _edit(copy, [TPU_ONLY["triton-params-swapped-for-tpu-params"][0]])
    (line,) = _gitlab_job()["script"]
    gitlab = subprocess.run(
        ["sh", "-e", "-c", line],
        cwd=copy, env=_environ(), capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert gitlab.returncode == 1, gitlab.stdout + gitlab.stderr
    changed = TPU_ONLY["triton-params-swapped-for-tpu-params"][1]
    assert gitlab.stdout.splitlines()[1 : 1 + len(changed)] == changed
