"""`typed-pallas check` telling the user what it does: the cache per environment and the slow-run
line, the project's layout (src layouts, `mypy_path`) and the warning for its unresolved own
imports, the empty selection, SARIF output, and links to documentation that ships with it.

All of these run without mypy: the mypy subprocess is replaced by a fake that returns
mypy's JSON lines (the end-to-end runs are in test_cli.py, which shares one mypy cache).
"""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest

from typed_pallas_mypy import cli, config
from typed_pallas_mypy.cli import check, explain, findings, formats, project


@pytest.fixture
def proj(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty project (a repository root) as the current folder, with no typed-pallas settings."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(config.CONFIG_ENV, raising=False)
    monkeypatch.delenv(config.PLATFORMS_ENV, raising=False)
    monkeypatch.delenv("MYPYPATH", raising=False)
    return tmp_path


class FakeMypy:
    """Stands in for the mypy subprocess: records each command and the preset it was given."""

    def __init__(self, stdout: str = "", returncode: int = 0, stderr: str = "") -> None:
        self.stdout, self.returncode, self.stderr = stdout, returncode, stderr
        self.commands: list[list[str]] = []
        self.presets: list[str] = []

    def __call__(self, cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
        self.commands.append(cmd)
        self.presets.append(Path(cmd[cmd.index("--config-file") + 1]).read_text())
        cache = cmd[cmd.index("--cache-dir") + 1]
        os.makedirs(os.path.join(cache, "3.12"), exist_ok=True)  # as mypy would write it
        Path(cache, "3.12", "cache.db").write_text("")
        return subprocess.CompletedProcess(cmd, self.returncode, self.stdout, self.stderr)


def _mypy_line(**kw: object) -> str:
    base: dict[str, object] = {
        "file": "a.py", "line": 3, "column": 4, "end_line": 3, "end_column": 9,
        "message": "m", "hint": None, "code": "pallas-platform", "severity": "error",
    }  # fmt: skip
    base.update(kw)
    return json.dumps(base)


def _fake(monkeypatch: pytest.MonkeyPatch, **kw: object) -> FakeMypy:
    fake = FakeMypy(**kw)  # type: ignore[arg-type]
    monkeypatch.setattr(findings.subprocess, "run", fake)
    return fake


# --------------------------------------------------------------------------- cache per environment


def test_cache_folder_names_python_jax_and_mypy_versions(monkeypatch: pytest.MonkeyPatch) -> None:
    tag = findings.environment_tag()
    assert tag.startswith("py3.") and "-jax" in tag and "-mypy" in tag
    versions = {"jax": "0.10.2", "mypy": "2.4.1"}
    monkeypatch.setattr(findings, "_installed_version", lambda name: versions[name])
    first = findings.environment_cache()
    versions["jax"] = "0.12.0"
    second = findings.environment_cache()
    assert first != second, "two environments on one project must not share a cache"
    assert os.path.dirname(first) == os.path.dirname(second) == findings.DEFAULT_CACHE
    assert first.endswith("-jax0.10.2-mypy2.4.1") and second.endswith("-jax0.12.0-mypy2.4.1")


def test_slow_run_line_only_while_the_cache_is_cold(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / "a.py").write_text("x = 1\n")
    fake = _fake(monkeypatch)
    assert cli.main(["check", "a.py"]) == 0
    err = capsys.readouterr().err
    assert "first analysis of jax" in err and "about half a minute" in err
    cache = fake.commands[0][fake.commands[0].index("--cache-dir") + 1]
    assert cache == findings.environment_cache() and findings.environment_tag() in err
    assert cli.main(["check", "a.py"]) == 0
    assert "first analysis" not in capsys.readouterr().err  # the cache exists now
    assert cli.main(["check", "--cache-dir", str(proj / "elsewhere"), "a.py"]) == 0
    assert "first analysis" in capsys.readouterr().err  # an explicit --cache-dir is used as given
    assert fake.commands[-1][fake.commands[-1].index("--cache-dir") + 1] == str(proj / "elsewhere")


# --------------------------------------------------------------------------- layout


def _src_project(root: Path, *, init: bool) -> None:
    pkg = root / "src" / "pkg"
    pkg.mkdir(parents=True)
    if init:
        (pkg / "__init__.py").write_text("")
    (pkg / "kernels.py").write_text("def body(x_ref, o_ref): ...\n")
    (pkg / "dispatch.py").write_text("from pkg.kernels import body\n")
    (root / "tests").mkdir()
    (root / "tests" / "test_pkg.py").write_text("import pkg\n")
    (root / "tool.py").write_text("")


@pytest.mark.parametrize("init", [True, False], ids=["package", "namespace-package"])
def test_src_layout_is_added_to_mypy_path(proj: Path, init: bool) -> None:
    _src_project(proj, init=init)
    for paths in (["src/pkg/dispatch.py"], ["src/pkg"], ["src"], ["src/pkg", "tests"]):
        layout = project.find_layout(paths)
        assert layout.mypy_path == (str(proj / "src"),), paths
        assert layout.explicit_package_bases and layout.origins == (f"src layout (src{os.sep})",)
        assert {"pkg", "tests", "tool"} <= set(layout.own_modules), layout.own_modules
    flat = project.find_layout(["tests", "tool.py"])
    assert flat.mypy_path == () and not flat.explicit_package_bases  # nothing under src/
    assert "pkg" not in flat.own_modules and {"tests", "tool"} <= set(flat.own_modules)


def test_src_without_packages_is_not_a_src_layout(proj: Path) -> None:
    (proj / "src").mkdir()
    (proj / "src" / "script.py").write_text("")
    assert project.find_layout(["src/script.py"]).mypy_path == ()


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("mypy.ini", "[mypy]\nmypy_path = lib, $MYPY_CONFIG_FILE_DIR/vendor\n"),
        ("pyproject.toml", '[tool.mypy]\nmypy_path = ["lib", "$MYPY_CONFIG_FILE_DIR/vendor"]\n'),
        ("setup.cfg", "[mypy]\nmypy_path = lib:vendor\n"),
    ],
)
def test_projects_own_mypy_path_is_used(proj: Path, name: str, text: str) -> None:
    (proj / name).write_text(text)
    for folder in ("lib/libpkg", "vendor/vend"):
        (proj / folder).mkdir(parents=True)
        (proj / folder / "__init__.py").write_text("")
    layout = project.find_layout(["."])
    assert layout.mypy_path == (str(proj / "lib"), str(proj / "vendor"))
    assert layout.origins == (f"{name}: mypy_path",) * 2
    assert not layout.explicit_package_bases  # the project's own settings, no more
    assert {"libpkg", "vend"} <= set(layout.own_modules)


def test_preset_carries_the_layout(proj: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    _src_project(proj, init=False)
    fake = _fake(monkeypatch)
    assert cli.main(["check", "src/pkg"]) == 0
    (preset,) = fake.presets
    assert f"mypy_path = {proj / 'src'}\n" in preset and "explicit_package_bases = True\n" in preset
    own = next(line for line in preset.splitlines() if line.startswith("[mypy-"))
    assert {"pkg.*", "tests.*", "tool.*"} <= set(own[len("[mypy-") : -1].split(","))
    assert preset.endswith(f"{own}\nignore_missing_imports = False\nfollow_imports = normal\n")
    assert findings.PRESET in preset.replace(
        f"mypy_path = {proj / 'src'}\nexplicit_package_bases = True\n", ""
    )
    # what eval/ and benchmarks/ run is unchanged
    assert findings.preset_config() == findings.PRESET and "[mypy-" not in findings.PRESET


def test_unresolved_own_import_is_a_warning(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / "pkg").mkdir()
    (proj / "pkg" / "a.py").write_text("from pkg.gone import f\n")
    missing = _mypy_line(
        file="pkg/a.py", line=1, code="import-not-found",
        message='Cannot find implementation or library stub for module named "pkg.gone"',
    )  # fmt: skip
    _fake(monkeypatch, stdout=missing, returncode=1)
    assert cli.main(["check", "pkg/a.py"]) == 0  # a warning, not a finding
    captured = capsys.readouterr()
    assert "warning: cannot resolve the project's own import pkg.gone (pkg/a.py:1)" in captured.err
    assert "findings that depend on it are missed" in captured.err and "MYPYPATH" in captured.err
    assert captured.out.strip() == "Success: no typed-pallas issues found"
    _fake(monkeypatch, stdout=_mypy_line(file="pkg/a.py", code="arg-type"), returncode=1)
    assert cli.main(["check", "pkg/a.py"]) == 0
    assert "warning" not in capsys.readouterr().err


# --------------------------------------------------------------------------- empty selection


@pytest.mark.parametrize("output", formats.OUTPUTS)
def test_empty_selection_exits_0_with_one_line(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], output: str
) -> None:
    (proj / "docs").mkdir()
    (proj / "docs" / "notes.md").write_text("# no Python here\n")
    (proj / "assets" / ".cache").mkdir(parents=True)
    (proj / "assets" / ".cache" / "hidden.py").write_text("")  # mypy skips hidden folders too
    fake = _fake(monkeypatch)
    assert cli.main(["check", "--output", output, "docs", "assets"]) == 0
    captured = capsys.readouterr()
    assert captured.err == "typed-pallas: no Python files in docs assets; nothing to check\n"
    assert fake.commands == [], "mypy must not run"
    if output == "json":
        assert json.loads(captured.out) == []
    elif output == "sarif":
        assert json.loads(captured.out)["runs"][0]["results"] == []
    else:
        assert captured.out == ""


def test_everything_excluded_is_the_empty_selection(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / "a.py").write_text("")
    _fake(monkeypatch, returncode=2, stderr="There are no .py[i] files in directory '.'\n")
    assert cli.main(["check", ".", "--", "--exclude", "a"]) == 0
    assert "nothing to check" in capsys.readouterr().err


def test_empty_selection_is_documented() -> None:
    help_text = cli.build_parser()._subparsers._group_actions[0].choices["check"].format_help()  # type: ignore[union-attr]
    assert "No Python file in PATHS" in help_text and "exit status 0" in help_text
    doc = (Path(__file__).resolve().parents[1] / "docs" / "configuration.md").read_text()
    assert "no Python files in" in doc and "sarif" in doc


# --------------------------------------------------------------------------- SARIF


def _validate_sarif(log: dict[str, object]) -> None:
    """The SARIF 2.1.0 structure code-scanning upload needs (the schema's required keys and types)."""
    assert log["version"] == "2.1.0" and str(log["$schema"]).endswith("sarif-2.1.0.json")
    runs = log["runs"]
    assert isinstance(runs, list) and len(runs) == 1
    run = runs[0]
    driver = run["tool"]["driver"]
    assert driver["name"] == "typed-pallas" and isinstance(driver["version"], str)
    rules = driver["rules"]
    ids = [rule["id"] for rule in rules]
    assert len(ids) == len(set(ids)), "one rule per error code"
    for rule in rules:
        assert (
            isinstance(rule["shortDescription"]["text"], str) and rule["shortDescription"]["text"]
        )
        if "help" in rule:
            assert isinstance(rule["help"]["text"], str)
    assert run["columnKind"] in ("utf16CodeUnits", "unicodeCodePoints")
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].startswith("file:///")
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"].endswith("/")
    for result in run["results"]:
        assert set(result) <= {"ruleId", "ruleIndex", "level", "message", "locations"}
        assert result["level"] in ("none", "note", "warning", "error")
        assert rules[result["ruleIndex"]]["id"] == result["ruleId"]
        assert isinstance(result["message"]["text"], str) and result["message"]["text"]
        (location,) = result["locations"]
        physical = location["physicalLocation"]
        artifact = physical["artifactLocation"]
        assert "://" in artifact["uri"] or artifact["uriBaseId"] == "%SRCROOT%"
        assert not artifact["uri"].startswith("/") and "\\" not in artifact["uri"]
        region = physical["region"]
        assert all(isinstance(v, int) and v >= 1 for v in region.values())
        if "endLine" in region:
            assert region["endLine"] >= region["startLine"]
            if region["endLine"] == region["startLine"] and "endColumn" in region:
                assert region["endColumn"] >= region["startColumn"]


def test_sarif_log_structure() -> None:
    shown = [
        findings.Finding(
            "pkg/a.py",
            12,
            16,
            "error",
            "Compiler params for platform tpu ...",
            "pallas-platform",
            ["the if at line 11 ..."],
            12,
            40,
        ),
        findings.Finding("pkg/a.py", 20, 5, "error", "Argument 1 ...", "arg-type", [], 20, 9),
        findings.Finding("b.py", 0, 1, "error", "file-level", "pallas-platform"),
        findings.Finding("b.py", 3, 1, "note", "a standalone note", None),
        findings.Finding(
            os.path.abspath("c.py"), 2, 3, "error", "absolute path", "syntax", [], 4, 1
        ),
    ]
    log = formats.sarif_log(shown, cwd="/work/proj")
    _validate_sarif(log)
    run = log["runs"][0]  # type: ignore[index]
    assert [r["id"] for r in run["tool"]["driver"]["rules"]] == [
        "pallas-platform",
        "arg-type",
        "note",
        "syntax",
    ]
    first = run["results"][0]
    assert first["message"]["text"] == "Compiler params for platform tpu ...\nthe if at line 11 ..."
    assert first["locations"][0]["physicalLocation"]["region"] == {
        "startLine": 12, "startColumn": 16, "endLine": 12, "endColumn": 40,
    }  # fmt: skip
    assert first["locations"][0]["physicalLocation"]["artifactLocation"] == {
        "uri": "pkg/a.py",
        "uriBaseId": "%SRCROOT%",
    }
    assert run["results"][2]["locations"][0]["physicalLocation"]["region"]["startLine"] == 1
    assert run["results"][3]["level"] == "note"
    assert run["results"][4]["locations"][0]["physicalLocation"]["artifactLocation"][
        "uri"
    ].startswith("file:///")
    assert run["originalUriBaseIds"]["%SRCROOT%"]["uri"] == "file:///work/proj/"
    rule = run["tool"]["driver"]["rules"][0]
    assert "typed-pallas explain pallas-platform" in rule["help"]["text"]
    assert rule["help"]["markdown"] == explain.error_doc("pallas-platform")


def test_sarif_output_from_check(
    proj: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / "a.py").write_text("x = 1\n")
    _fake(monkeypatch, stdout=_mypy_line(), returncode=1)
    assert cli.main(["check", "--output", "sarif", "a.py"]) == 1
    log = json.loads(capsys.readouterr().out)
    _validate_sarif(log)
    (result,) = log["runs"][0]["results"]
    assert result["ruleId"] == "pallas-platform" and result["level"] == "error"


# --------------------------------------------------------------------------- links


def test_messages_link_documentation_that_ships(
    proj: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    (proj / "pyproject.toml").write_text('[tool.typed-pallas]\nplatforms = ["npu"]\n')
    assert cli.main(["check", "."]) == 2
    err = capsys.readouterr().err
    assert "docs/" not in err and "`typed-pallas explain configuration`" in err
    for topic in explain.TOPICS:
        assert cli.main(["explain", topic]) == 0
        assert capsys.readouterr().out.startswith("# ")
    assert "docs/configuration.md" not in config.USAGE


def test_doc_link_uses_the_metadata_url(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(explain, "project_urls", lambda: {})
    assert explain.doc_link("configuration") == "`typed-pallas explain configuration`"
    monkeypatch.setattr(
        explain, "project_urls", lambda: {"Documentation": "https://example.org/docs/"}
    )
    assert explain.doc_link("configuration") == (
        "`typed-pallas explain configuration` or https://example.org/docs/configuration.md"
    )
    assert explain.doc_link("pallas-platform").endswith(
        "https://example.org/docs/errors.md#pallas-platform"
    )


def test_check_help_has_no_checkout_paths() -> None:
    parser = cli.build_parser()
    check_help = parser._subparsers._group_actions[0].choices["check"].format_help()  # type: ignore[union-attr]
    assert "docs/" not in check_help and "sarif" in check_help
    assert check.SLOW_NOTICE.startswith("{prog}: first analysis of jax")


# --------------------------------------------------------------------------- pre-commit


def test_pre_commit_examples_work_without_a_tag() -> None:
    """docs/configuration.md's `repo: local` hook runs what .pre-commit-hooks.yaml runs, and no
    example pins a `rev` that does not exist (a tag-less repository: a commit or a local hook)."""
    yaml = pytest.importorskip("yaml")
    root = Path(__file__).resolve().parents[1]
    (hook,) = yaml.safe_load((root / ".pre-commit-hooks.yaml").read_text())
    doc = (root / "docs" / "configuration.md").read_text()
    section = doc[doc.index("## pre-commit") :]
    blocks = [
        yaml.safe_load(b) for b in section.split("```yaml\n")[1:] for b in [b.split("```")[0]]
    ]
    local = next(b for b in blocks if b["repos"][0]["repo"] == "local")["repos"][0]["hooks"][0]
    for key in ("id", "entry", "types_or", "require_serial"):
        assert local[key] == hook[key], key
    assert local["language"] == "system"  # the project's own environment: its jax, mypy and cache
    remote = next(b for b in blocks if b["repos"][0]["repo"] != "local")["repos"][0]
    assert "commit" in section[: section.index(str(remote["rev"]))] or "tag" in str(remote["rev"])
    assert remote["hooks"][0]["id"] == hook["id"]
    assert remote["hooks"][0]["additional_dependencies"][0] == hook["additional_dependencies"][0]


# --------------------------------------------------------------------------- version


def test_version_is_declared_once() -> None:
    """pyproject's version is the only one: the runtime, the plugin and the CLI read the metadata."""
    import importlib.metadata
    import tomllib

    import typed_pallas
    from typed_pallas_mypy import config as plugin_config

    root = Path(__file__).resolve().parents[1]
    declared = tomllib.loads((root / "pyproject.toml").read_text())["project"]["version"]
    assert typed_pallas.__version__ == importlib.metadata.version("typed-pallas") == declared
    assert plugin_config.package_version() == declared
    assert f'"{declared}"' not in (root / "src" / "typed_pallas" / "__init__.py").read_text()
