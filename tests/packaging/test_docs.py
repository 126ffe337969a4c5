"""The docs I own say what the code does: quickstart snippets run and type-check, links resolve,
the support matrix matches the tests.

* docs/quickstart.md: every ```python block whose first line is ``# <name>.py`` is
  written to a folder under that name and used from the venv where the built wheel is
  installed (tests/packaging/pkg_env.py), as a reader would: ``tpu_add.py`` runs on CPU,
  the ``test_*.py`` blocks pass under pytest (through the pytest plugin's entry point),
  and mypy (with the plugin), pyright (with ``stubPath``), pyrefly and ty report errors
  exactly on the lines marked ``# error`` (none in the other files).
* docs/support-matrix.md: the generated sections equal tests/packaging/matrix_data.py's
  rendering; the tested environments are the ones scripts/_venv.sh builds and the ends
  of the range pyproject declares; the checker versions are the installed ones.
* Relative links in the docs written for packaging resolve to files in the repository.
"""

from __future__ import annotations

import re
import sys
import tomllib
from importlib import metadata
from pathlib import Path

import pytest
from matrix_data import (
    CHECKER_USE,
    DOC,
    ENVIRONMENT_RUNS,
    MYPY_OLDEST,
    SECTIONS,
    TESTED_ENVIRONMENTS,
    generated_sections,
    pinned_checkers,
)
from pkg_env import MYPY_CONFIG, REPO, Checked, Venv, _run, clean_environ

QUICKSTART = REPO / "docs" / "quickstart.md"
MY_DOCS = [
    "quickstart.md",
    "support-matrix.md",
    "stub-layout-notes.md",
    "index.md",
    "library-authors.md",
    "results-history.md",
]


def _snippets() -> dict[str, str]:
    blocks = re.findall(r"```python\n(.*?)```", QUICKSTART.read_text(), re.S)
    named = {}
    for block in blocks:
        first = block.splitlines()[0]
        match = re.fullmatch(r"# (\w+\.py)", first.strip())
        if match:
            assert match.group(1) not in named, f"two quickstart blocks named {match.group(1)}"
            named[match.group(1)] = block
    return named


def _marked_error_lines(text: str) -> set[int]:
    return {
        number
        for number, line in enumerate(text.splitlines(), 1)
        if line.rstrip().endswith("# error")
    }


@pytest.fixture(scope="module")
def snippets(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("quickstart")
    named = _snippets()
    assert {"tpu_add.py", "mistakes.py", "test_tpu_add.py"} <= set(named), sorted(named)
    for name, text in named.items():
        (folder / name).write_text(text)
    return folder


def test_quickstart_names_its_blocks() -> None:
    named = _snippets()
    assert _marked_error_lines(named["mistakes.py"]), "mistakes.py marks no '# error' line"
    assert all(
        not _marked_error_lines(text) for name, text in named.items() if name != "mistakes.py"
    )


@pytest.mark.slow
def test_quickstart_module_runs_on_cpu(snippets: Path, installed: Venv) -> None:
    result = _run([installed.python, "tpu_add.py"], cwd=snippets, env=clean_environ())
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.split() == ["[1.", "2.", "3.", "4.]"] * 2, result.stdout


@pytest.mark.slow
def test_quickstart_tests_pass(snippets: Path, installed: Venv) -> None:
    result = _run(
        [installed.python, "-m", "pytest", "-q", "-p", "no:cacheprovider", "test_tpu_add.py"],
        cwd=snippets,
        env=clean_environ(),
    )
    assert result.returncode == 0 and "3 passed" in result.stdout, (
        result.stdout[-3000:] + result.stderr[-2000:]
    )


def _check(venv: Venv, checker: str, folder: Path, files: list[str]) -> Checked:
    if checker == "mypy":
        return venv.mypy(
            folder, files, config=MYPY_CONFIG
        )  # the config (and cache) of the wheel test
    if checker == "pyright":
        return venv.pyright(folder, files)  # with stubPath, as docs/checkers.md says
    if checker == "pyrefly":
        return venv.pyrefly(folder, files)
    return venv.ty(folder, files)


@pytest.mark.slow
@pytest.mark.parametrize("checker", ["mypy", "pyright", "pyrefly", "ty"])
def test_quickstart_type_checks(snippets: Path, installed: Venv, checker: str) -> None:
    files = ["tpu_add.py", "mistakes.py"]
    checked = _check(installed, checker, snippets, files)
    expected = {
        ("mistakes.py", line)
        for line in _marked_error_lines((snippets / "mistakes.py").read_text())
    }
    assert set(checked.errors) == expected, f"{checker}:\n{checked.output[-4000:]}"


# --- the support matrix ---------------------------------------------------------------------


def test_support_matrix_is_generated_from_the_tested_data() -> None:
    found = generated_sections(DOC.read_text())
    assert set(found) == set(SECTIONS), f"generated sections in {DOC.name}: {sorted(found)}"
    for name, render in SECTIONS.items():
        assert found[name] == render(), (
            f"{DOC.name}: section {name!r} is stale; run `python tests/packaging/matrix_data.py --write`"
        )


def test_tested_environments_are_the_ends_of_the_declared_range() -> None:
    venv_script = (REPO / "scripts" / "_venv.sh").read_text()
    lines = [
        line for line in venv_script.splitlines() if line.strip().startswith("ensure_venv .venv")
    ]
    pythons = [line.split()[2] for line in lines]
    assert pythons == [python for python, _ in TESTED_ENVIRONMENTS], lines
    oldest, newest = TESTED_ENVIRONMENTS[0][1], TESTED_ENVIRONMENTS[1][1]
    assert f"jax=={oldest}" in lines[0], lines[0]
    assert set(ENVIRONMENT_RUNS) == set(pythons)
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    jax_requirement = next(r for r in project["dependencies"] if re.match(r"jax\s*[<>=!~]", r))
    lower = re.search(r">=\s*([\d.]+)", jax_requirement)
    upper = re.search(r"<\s*([\d.]+)", jax_requirement)
    assert lower and upper, jax_requirement
    assert oldest.split(".")[:2] == lower.group(1).split(".")[:2], (
        "the oldest tested JAX is not the range's lower end"
    )
    newest_minor = int(newest.split(".")[1])
    assert int(upper.group(1).split(".")[1]) == newest_minor + 1, (
        "the newest tested JAX is not the range's upper end"
    )
    # the environments are exactly the releases the project says it was checked at
    from typed_pallas._versions import CHECKED_RELEASES

    assert sorted({jax for _, jax in TESTED_ENVIRONMENTS}) == sorted(CHECKED_RELEASES)
    # and this run is one of them
    here = (f"{sys.version_info.major}.{sys.version_info.minor}", metadata.version("jax"))
    assert here in TESTED_ENVIRONMENTS, f"running on {here}, not in the support matrix"


def test_oldest_mypy_is_the_lower_end_of_the_declared_range() -> None:
    """CI runs the oldest and the newest mypy of pyproject's range; the hook declares the same range."""
    venv_script = (REPO / "scripts" / "_venv.sh").read_text()
    assert f'MYPY_OLDEST="{MYPY_OLDEST}"' in venv_script
    project = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]
    (declared,) = project["optional-dependencies"]["mypy"]
    lower = re.search(r">=\s*([\d.]+)", declared)
    upper = re.search(r"<\s*([\d.]+)", declared)
    assert lower and upper, declared
    assert MYPY_OLDEST.split(".")[:2] == lower.group(1).split(".")[:2], (MYPY_OLDEST, declared)
    from packaging.specifiers import SpecifierSet

    allowed = SpecifierSet(declared.removeprefix("mypy"))
    newest = pinned_checkers()["mypy"]
    assert MYPY_OLDEST in allowed and newest in allowed, (MYPY_OLDEST, newest, declared)
    assert declared in project["optional-dependencies"]["checkers"]
    hooks = (REPO / ".pre-commit-hooks.yaml").read_text()
    assert f'additional_dependencies: ["{declared}"]' in hooks
    test_script = (REPO / "scripts" / "test").read_text()
    # scripts/test runs each slice with its own list (in one of its two queues)
    assert (
        'run_pytest .venv312-mypy-oldest "the oldest mypy of the declared range" "${MYPY_OLDEST_TESTS[@]}"'
        in test_script
    )
    assert 'run_pytest .venv313 "smoke subset" "${SMOKE_TESTS[@]}"' in test_script


def test_checker_versions_are_the_installed_ones() -> None:
    pins = pinned_checkers()
    assert set(pins) == set(CHECKER_USE), pins
    for checker, version in pins.items():
        assert metadata.version(checker) == version, (
            f"{checker}: tested {metadata.version(checker)}, matrix says {version}"
        )


# --- links ----------------------------------------------------------------------------------


@pytest.mark.parametrize("doc", MY_DOCS)
def test_relative_links_resolve(doc: str) -> None:
    path = REPO / "docs" / doc
    text = re.sub(r"```.*?```", "", path.read_text(), flags=re.S)
    broken = []
    for target in re.findall(r"\]\(([^)\s]+)\)", text):
        if re.match(r"[a-z]+:", target) or target.startswith("#"):
            continue
        file_part, _, anchor = target.partition("#")
        resolved = (path.parent / file_part).resolve()
        if not resolved.exists():
            broken.append(target)
        elif anchor and resolved.suffix == ".md":
            headings = re.findall(r"^#+ (.+)$", resolved.read_text(), re.M)
            slugs = {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}
            if anchor not in slugs:
                broken.append(target)
    assert broken == [], f"{doc}: broken links {broken}"


def test_every_test_list_of_the_test_script_names_tests_that_exist() -> None:
    """A misspelt entry in ``scripts/test``'s lists would run a case twice, or at neither
    end (an ignored path that does not exist ignores nothing, a node id nothing): each
    names a file of the suite, and a node id a test function in it."""
    import re

    script = (REPO / "scripts" / "test").read_text()
    lists = re.findall(r"^([A-Z_0-9]+_TESTS)=\(([^)]*)\)", script, flags=re.M)
    assert {name for name, _ in lists} >= {
        "SMOKE_TESTS",
        "MYPY_OLDEST_TESTS",
        "ONCE_TESTS",
        "ONCE_311_TESTS",
    }
    for name, body in lists:
        for entry in body.split():
            path, _, test = entry.partition("::")
            assert (REPO / path).exists(), (name, entry)
            if test:
                assert re.search(rf"^def {re.escape(test)}\(", (REPO / path).read_text(), re.M), (
                    name,
                    entry,
                )
