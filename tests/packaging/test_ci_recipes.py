"""examples/ci/: the CI recipes run as pasted.

Both files are parsed as YAML, and their shell commands (GitHub's ``run:`` steps, GitLab's
``before_script:`` and ``script:`` lines) run against a sample project in a temporary
folder, with this environment's ``typed-pallas`` and ``python`` first on ``PATH``: GitHub's
steps under ``bash -eo pipefail`` (its default shell), GitLab's lines under ``sh -e`` (a
POSIX shell: the job's image decides which one GitLab uses).

Two things cannot run here, and each is stood in for in one marked place:

* **Fetching typed-pallas** (GitHub's ``actions/checkout`` of it, GitLab's ``git clone``):
  the sample's ``.typed-pallas`` is a one-commit git repository (``STAND_IN_CLONE``).
* **Installing** (the ``pip install`` step, typed-pallas already being installed here):
  it runs with a ``python`` on ``PATH`` that records its arguments instead
  (``STAND_IN_PIP``), and the test checks what pip is asked for, per project layout.

The GitHub-only actions (``uses:``) are not run; their inputs are checked against what
the commands wrote: the cached folder holds mypy's cache and the library facts after a
check, and the uploaded SARIF file is the one the check wrote.
"""

from __future__ import annotations

import json
import os
import re
import shlex
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
GITHUB = REPO / "examples" / "ci" / "github-actions.yml"
GITLAB = REPO / "examples" / "ci" / "gitlab-ci.yml"
VENV_BIN = Path(sys.executable).parent

#: where both recipes put their copy of typed-pallas (a hidden folder: `check .` skips it)
CLONE = ".typed-pallas"

OPS = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _add_one(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


def add_one(x):
    if jax.default_backend() == "gpu":
        return pl.pallas_call(
            _add_one,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            compiler_params=pltpu.CompilerParams(),  # TPU params on the GPU path
        )(x)
    return x + 1
"""
GOOD = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _add_one(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


def add_one(x):
    if jax.default_backend() == "tpu":
        return pl.pallas_call(
            _add_one,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            compiler_params=pltpu.CompilerParams(),
        )(x)
    return x + 1
"""
#: the one finding in the sample project: the `return pl.pallas_call(` line of OPS
FINDING = ("kernels/ops.py", 12, 16)
MESSAGE = "Compiler params for platform tpu cannot be used for gpu lowering."


# --- reading the recipes ---------------------------------------------------------------------


def _github_steps() -> list[dict[str, Any]]:
    workflow = yaml.safe_load(GITHUB.read_text())
    (job,) = workflow["jobs"].values()
    steps: list[dict[str, Any]] = job["steps"]
    return steps


def _gitlab_job() -> dict[str, Any]:
    (job,) = yaml.safe_load(GITLAB.read_text()).values()
    assert isinstance(job, dict)
    return job


def _step(steps: list[dict[str, Any]], action: str) -> dict[str, Any]:
    (found,) = [s for s in steps if s.get("uses", "").startswith(action + "@")]
    return found


def _install_command_of_github() -> str:
    (install,) = [s for s in _github_steps() if s.get("id") == "install"]
    command: str = install["run"]
    return command


def _install_command_of_gitlab() -> str:
    (install,) = [line for line in _gitlab_job()["before_script"] if "pip install" in line]
    assert isinstance(install, str)
    return install


# --- stand-ins (the only commands of the recipes that do not run as written) ------------------

STAND_IN_PIP = """#!/bin/sh
# stands in for the recipes' `python -m pip install ...`: records what pip is asked for
printf '%s\\n' "$@" > "$PIP_ARGUMENTS"
"""


def STAND_IN_CLONE(project: Path) -> None:
    """What the recipes' checkout or `git clone` of typed-pallas leaves: a git repository."""
    clone = project / CLONE
    clone.mkdir()
    git = ["git", "-c", "user.name=ci", "-c", "user.email=ci@example.invalid"]
    git += ["-c", "commit.gpgsign=false", "-C", str(clone)]
    subprocess.run([*git, "init", "-q"], check=True)
    subprocess.run([*git, "commit", "-q", "--allow-empty", "-m", "typed-pallas"], check=True)


def _environ(**extra: str) -> dict[str, str]:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in ("TYPED_PALLAS_PLATFORMS", "TYPED_PALLAS_CONFIG", "VIRTUAL_ENV")
    }
    env["PATH"] = f"{VENV_BIN}{os.pathsep}{env.get('PATH', '')}"
    env["TYPED_PALLAS_MYPY_DEBUG"] = "1"  # a plugin bug raises instead of going quiet
    env.update(extra)
    return env


def _bash(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["bash", "--noprofile", "--norc", "-eo", "pipefail", "-c", command],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=900,
    )  # fmt: skip


def _sh(command: str, cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        ["sh", "-e", "-c", command], cwd=cwd, env=env, capture_output=True, text=True, timeout=900
    )


# --- the sample project ------------------------------------------------------------------------


def _write_project(root: Path, *, requirements: bool, pyproject: str | None) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    (root / ".git").mkdir()  # the configuration search stops here, as in a real checkout
    (root / "kernels").mkdir()
    (root / "kernels" / "__init__.py").write_text("")
    (root / "kernels" / "ops.py").write_text(OPS)
    (root / "kernels" / "good.py").write_text(GOOD)
    if requirements:
        (root / "requirements.txt").write_text("numpy\n")
    if pyproject is not None:
        (root / "pyproject.toml").write_text(pyproject)
    return root


PACKAGE = '[project]\nname = "kernels"\nversion = "0.1"\n'
TOOLS_ONLY = "[tool.ruff]\nline-length = 100\n"


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One sample project for both recipes: the second one finds mypy's cache warm."""
    root = _write_project(
        tmp_path_factory.mktemp("ci") / "app", requirements=True, pyproject=PACKAGE
    )
    STAND_IN_CLONE(root)
    return root


# --- what the recipes say ----------------------------------------------------------------------


def test_the_github_workflow_checks_out_both_and_wires_its_actions() -> None:
    steps = _github_steps()
    checkouts = [s for s in steps if s.get("uses", "").startswith("actions/checkout@")]
    assert len(checkouts) == 2, "the project and typed-pallas"
    assert "with" not in checkouts[0] or "repository" not in checkouts[0]["with"]
    assert checkouts[1]["with"]["path"] == CLONE
    assert checkouts[1]["with"]["repository"] == "${{ env.TYPED_PALLAS_REPOSITORY }}"
    cache = _step(steps, "actions/cache")["with"]
    assert cache["path"] == ".mypy_cache/typed-pallas"
    assert "steps.environment.outputs.key" in cache["key"]
    upload = _step(steps, "github/codeql-action/upload-sarif")
    assert upload["if"].startswith("always()")
    sarif_runs = [s["run"] for s in steps if "--output sarif" in s.get("run", "")]
    assert sarif_runs == [
        f"typed-pallas check . --output sarif > {upload['with']['sarif_file']} || [ $? -eq 1 ]"
    ]
    assert any(s.get("run") == "typed-pallas check . --output github" for s in steps)
    workflow = yaml.safe_load(GITHUB.read_text())
    assert workflow["permissions"]["security-events"] == "write"
    for step in steps:  # the commands must run in any shell: no expression GitHub expands
        assert "${{" not in step.get("run", ""), step


def test_the_gitlab_job_clones_into_the_same_folder_and_reports_code_quality() -> None:
    job = _gitlab_job()
    (clone,) = [line for line in job["before_script"] if "git clone" in line]
    words = shlex.split(clone)
    assert words[-1] == CLONE and '"$TYPED_PALLAS_GIT"' in clone, clone
    assert job["cache"]["paths"] == [".mypy_cache/typed-pallas/"]
    assert job["artifacts"]["when"] == "always"
    report = job["artifacts"]["reports"]["codequality"]
    assert any(f'open("{report}", "w"' in line for line in job["script"]), report


def test_no_recipe_installs_typed_pallas_from_a_package_index() -> None:
    """typed-pallas is on no index: a `pip install typed-pallas` would fetch whatever holds the name."""
    for recipe in (GITHUB, GITLAB):
        for line in recipe.read_text().splitlines():
            if "pip install" in line and not line.lstrip().startswith("#"):
                assert not re.search(
                    r"(?<![/.\w-])typed-pallas\b", line.split("pip install", 1)[1]
                ), line
        assert f'"./{CLONE}[mypy]"' in recipe.read_text()


def test_both_recipes_install_the_same_way() -> None:
    assert _install_command_of_github().strip() == _install_command_of_gitlab().strip()


@pytest.mark.parametrize(
    ("requirements", "pyproject", "asked"),
    [
        (True, PACKAGE, [f"./{CLONE}[mypy]", "-r", "requirements.txt", "-e", "."]),
        (False, PACKAGE, [f"./{CLONE}[mypy]", "-e", "."]),
        (True, TOOLS_ONLY, [f"./{CLONE}[mypy]", "-r", "requirements.txt"]),
        (False, None, [f"./{CLONE}[mypy]"]),
    ],
    ids=["requirements-and-package", "package", "requirements-and-tool-config", "neither"],
)
def test_the_install_step_asks_pip_for_typed_pallas_and_the_projects_dependencies(
    tmp_path: Path, requirements: bool, pyproject: str | None, asked: list[str]
) -> None:
    """One pip command (one resolver for jax), the project installed only where it is a package."""
    root = _write_project(tmp_path / "app", requirements=requirements, pyproject=pyproject)
    shims = tmp_path / "shims"
    shims.mkdir()
    (shims / "python").write_text(STAND_IN_PIP)
    (shims / "python").chmod(0o755)
    record = tmp_path / "pip-arguments"
    env = _environ(PIP_ARGUMENTS=str(record))
    env["PATH"] = f"{shims}{os.pathsep}{env['PATH']}"
    for run, command in (
        (_bash, _install_command_of_github()),
        (_sh, _install_command_of_gitlab()),
    ):
        record.unlink(missing_ok=True)
        done = run(command, root, env)
        assert done.returncode == 0, done.stderr
        assert record.read_text().splitlines() == ["-m", "pip", "install", *asked]


# --- the recipes run ---------------------------------------------------------------------------


def _assert_cache_holds_mypy_and_the_facts(project: Path) -> None:
    (environment,) = (project / ".mypy_cache" / "typed-pallas").iterdir()
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    assert any((environment / version).iterdir()), "mypy's cache is not where the recipe caches"
    assert any((environment / "typed-pallas" / "libraries").iterdir()), "no library facts"


@pytest.mark.slow
def test_the_github_workflow_runs(project: Path, tmp_path: Path) -> None:
    outputs = tmp_path / "github-output"
    env = _environ(GITHUB_OUTPUT=str(outputs))
    runs = [s for s in _github_steps() if "run" in s and s.get("id") != "install"]
    done = [_bash(step["run"], project, env) for step in runs]
    *quiet, last = done
    for step, result in zip(runs, quiet, strict=False):
        assert result.returncode == 0, (step["name"], result.stdout, result.stderr)
    assert re.fullmatch(r"key=[0-9a-f]{16}\n", outputs.read_text()), outputs.read_text()

    # the SARIF file the upload step names: the one finding, where it is
    upload = _step(_github_steps(), "github/codeql-action/upload-sarif")
    sarif = json.loads((project / upload["with"]["sarif_file"]).read_text())
    (result,) = sarif["runs"][0]["results"]
    assert result["ruleId"] == "pallas-platform"
    assert result["message"]["text"].startswith(MESSAGE)
    location = result["locations"][0]["physicalLocation"]
    assert location["artifactLocation"]["uri"] == FINDING[0]
    assert location["region"]["startLine"] == FINDING[1]

    # the annotations step fails the job with the one finding
    assert last.returncode == 1, last.stdout + last.stderr
    annotations = [line for line in last.stdout.splitlines() if line.startswith("::error ")]
    assert len(annotations) == 1, last.stdout
    assert annotations[0].startswith(
        f"::error file={FINDING[0]},line={FINDING[1]},col={FINDING[2]},"
    ), annotations
    assert f"title=pallas-platform::{MESSAGE}" in annotations[0]

    _assert_cache_holds_mypy_and_the_facts(project)


@pytest.mark.slow
def test_the_gitlab_job_runs(project: Path) -> None:
    job = _gitlab_job()
    env = _environ()
    done = [_sh(line, project, env) for line in job["script"]]
    *quiet, last = done
    for line, result in zip(job["script"], quiet, strict=False):
        assert result.returncode == 0, (line, result.stdout, result.stderr)

    report = json.loads((project / job["artifacts"]["reports"]["codequality"]).read_text())
    (issue,) = report
    assert issue["check_name"] == "pallas-platform"
    assert issue["description"].startswith(MESSAGE)
    assert issue["location"] == {"path": FINDING[0], "lines": {"begin": FINDING[1]}}
    assert issue["severity"] == "major"
    assert re.fullmatch(r"[0-9a-f]{64}", issue["fingerprint"])

    assert last.returncode == 1, last.stdout + last.stderr
    path, line, column = FINDING
    assert f"{path}:{line}:{column}: error: {MESSAGE}  [pallas-platform]" in last.stdout
    assert "Found 1 typed-pallas error in 1 file" in last.stdout, last.stdout

    _assert_cache_holds_mypy_and_the_facts(project)
