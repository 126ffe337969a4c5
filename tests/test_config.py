"""typed_pallas_mypy.config: every key, default, precedence rule, source and bad-config message.

No mypy run here: ``resolve_config`` (raising ``ConfigError``) and ``load_config`` (exiting
like mypy) are called directly on files written to a temporary project. Each project
folder holds a ``.git`` marker, so the upward search for config files stops there.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path
from types import SimpleNamespace

import pytest

from typed_pallas_mypy.config import (
    CONFIG_ENV,
    CONFIG_FILE_NAMES,
    CONFIG_PLATFORM_NAMES,
    PLATFORMS_ENV,
    ConfigError,
    PluginConfig,
    candidate_files,
    find_config_file,
    load_config,
    read_config,
    resolve_config,
)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    (tmp_path / ".git").mkdir()
    return tmp_path


def write(folder: Path, name: str, text: str) -> str:
    path = folder / name
    path.write_text(textwrap.dedent(text).lstrip(), encoding="utf-8")
    return str(path)


def resolve(project: Path, config_file: str | None = None, **env: str) -> PluginConfig:
    return resolve_config(config_file, environ=env, cwd=str(project))


# --------------------------------------------------------------------------- defaults


def test_config_platform_names_are_the_lowering_names_without_the_host(project: Path) -> None:
    """What ``platforms = [...]`` accepts: not the runtime's PLATFORM_NAMES, which holds ``cpu``."""
    from typed_pallas import _platforms

    assert CONFIG_PLATFORM_NAMES == ("tpu", "gpu", "cuda", "rocm")
    assert "cpu" in _platforms.PLATFORM_NAMES and "cpu" not in CONFIG_PLATFORM_NAMES
    with pytest.raises(
        ConfigError, match="unknown platform 'cpu'; valid platforms are tpu, gpu, cuda, rocm"
    ):
        resolve(project, **{PLATFORMS_ENV: "cpu"})


def test_defaults_without_any_config(project: Path) -> None:
    cfg = resolve(project)
    assert cfg.platforms is None
    assert cfg.overrides == ()
    assert cfg.source is None
    assert not cfg.configured
    assert cfg.platforms_for("pkg.mod") is None


def test_pyproject_without_our_table_is_unconfigured(project: Path) -> None:
    write(project, "pyproject.toml", "[tool.mypy]\nstrict = true\n")
    assert resolve(project, str(project / "pyproject.toml")) == PluginConfig()


@pytest.mark.parametrize(
    ("names", "expected"),
    [
        pytest.param(["tpu"], {"tpu"}, id="tpu"),
        pytest.param(["gpu"], {"cuda", "rocm"}, id="gpu-is-cuda-and-rocm"),
        pytest.param(["cuda"], {"cuda"}, id="cuda"),
        pytest.param(["rocm"], {"rocm"}, id="rocm"),
        pytest.param(["tpu", "cuda"], {"tpu", "cuda"}, id="tpu-and-cuda"),
        pytest.param(["gpu", "cuda"], {"cuda", "rocm"}, id="overlap"),
    ],
)
def test_top_level_platforms(project: Path, names: list[str], expected: set[str]) -> None:
    write(project, "pyproject.toml", f"[tool.typed-pallas]\nplatforms = {json.dumps(names)}\n")
    cfg = resolve(project)
    assert cfg.platforms == frozenset(expected)
    assert cfg.platforms_for("anything.at.all") == frozenset(expected)
    assert cfg.source == str(project / "pyproject.toml")
    assert cfg.configured


# --------------------------------------------------------------------------- overrides

PRECEDENCE = """
[tool.typed-pallas]
platforms = ["tpu"]

[[tool.typed-pallas.overrides]]
module = ["pkg.*"]
platforms = ["cuda"]

[[tool.typed-pallas.overrides]]
module = ["pkg.gpu.*", "pkg.exact"]
platforms = ["gpu"]

[[tool.typed-pallas.overrides]]
module = "pkg.*.rocm_only"
platforms = ["rocm"]

[[tool.typed-pallas.overrides]]
module = ["pkg.*.tpu_only"]
platforms = ["tpu"]

[[tool.typed-pallas.overrides]]
module = ["pkg.gpu.exact"]
platforms = ["tpu", "rocm"]

[[tool.typed-pallas.overrides]]
module = ["pkg.*.both"]
platforms = ["cuda"]

[[tool.typed-pallas.overrides]]
module = ["pkg.gpu.*.both"]
platforms = ["rocm"]
"""


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        pytest.param("other", {"tpu"}, id="no-match-uses-top-level"),
        pytest.param("pkgx", {"tpu"}, id="prefix-is-not-a-package-match"),
        pytest.param("pkg", {"cuda"}, id="structured-matches-the-package-itself"),
        pytest.param("pkg.mod", {"cuda"}, id="structured-matches-submodule"),
        pytest.param("pkg.gpu.mod", {"cuda", "rocm"}, id="most-specific-structured-wins"),
        pytest.param("pkg.gpu", {"cuda", "rocm"}, id="structured-matches-its-package"),
        pytest.param("pkg.exact", {"cuda", "rocm"}, id="concrete-name"),
        pytest.param("pkg.exact.sub", {"cuda"}, id="concrete-does-not-cover-submodules"),
        pytest.param("pkg.a.rocm_only", {"rocm"}, id="unstructured-beats-structured"),
        pytest.param("pkg.rocm_only", {"rocm"}, id="star-matches-zero-components"),
        pytest.param("pkg.a.b.rocm_only", {"rocm"}, id="star-matches-several-components"),
        pytest.param("pkg.gpu.tpu_only", {"tpu"}, id="unstructured-beats-more-specific-structured"),
        pytest.param("pkg.gpu.exact", {"tpu", "rocm"}, id="concrete-beats-everything"),
        pytest.param("pkg.gpu.x.both", {"rocm"}, id="later-unstructured-wins"),
        pytest.param("pkg.x.both", {"cuda"}, id="unstructured-only-where-it-matches"),
    ],
)
def test_override_precedence_is_mypys(project: Path, module: str, expected: set[str]) -> None:
    write(project, "pyproject.toml", PRECEDENCE)
    cfg = resolve(project)
    assert cfg.platforms_for(module) == frozenset(expected)
    assert cfg.platforms_for(module) == frozenset(expected)  # cached answer is the same


def test_overrides_without_top_level(project: Path) -> None:
    write(
        project,
        "pyproject.toml",
        """
        [[tool.typed-pallas.overrides]]
        module = "kernels.tpu.*"
        platforms = ["tpu"]
        """,
    )
    cfg = resolve(project)
    assert cfg.platforms is None
    assert cfg.configured
    assert cfg.platforms_for("kernels.tpu.flash") == {"tpu"}
    assert cfg.platforms_for("kernels.gpu.flash") is None


def test_same_concrete_module_twice_later_wins(project: Path) -> None:
    write(
        project,
        "pyproject.toml",
        """
        [[tool.typed-pallas.overrides]]
        module = "m"
        platforms = ["tpu"]
        [[tool.typed-pallas.overrides]]
        module = "m"
        platforms = ["cuda"]
        """,
    )
    assert resolve(project).platforms_for("m") == {"cuda"}


def test_star_alone_matches_every_module(project: Path) -> None:
    write(
        project,
        "pyproject.toml",
        '[[tool.typed-pallas.overrides]]\nmodule = "*"\nplatforms = ["tpu"]\n',
    )
    assert resolve(project).platforms_for("any.module") == {"tpu"}


# --------------------------------------------------------------------------- ini files


@pytest.mark.parametrize("name", ["mypy.ini", ".mypy.ini", "setup.cfg"])
def test_ini_files(project: Path, name: str) -> None:
    path = write(
        project,
        name,
        """
        [mypy]
        strict = True

        [mypy.plugins.typed-pallas]
        platforms = tpu, cuda

        [mypy.plugins.typed-pallas.overrides.pkg.gpu.*,pkg.other]
        platforms = gpu

        [mypy.plugins.typed-pallas.overrides.pkg.*.tpu]
        platforms = tpu
        """,
    )
    cfg = resolve(project, path)
    assert cfg.source == path
    assert cfg.platforms == {"tpu", "cuda"}
    assert cfg.platforms_for("pkg.gpu.k") == {"cuda", "rocm"}
    assert cfg.platforms_for("pkg.other") == {"cuda", "rocm"}
    assert cfg.platforms_for("pkg.gpu.tpu") == {"tpu"}
    assert cfg.platforms_for("elsewhere") == {"tpu", "cuda"}


def test_ini_without_our_section_falls_back_to_pyproject(project: Path) -> None:
    ini = write(project, "mypy.ini", "[mypy]\nstrict = True\n")
    write(project, "pyproject.toml", '[tool.typed-pallas]\nplatforms = ["rocm"]\n')
    cfg = resolve(project, ini)
    assert cfg.platforms == {"rocm"}
    assert cfg.source == str(project / "pyproject.toml")


def test_mypy_config_file_wins_over_pyproject(project: Path) -> None:
    ini = write(project, "mypy.ini", "[mypy]\n[mypy.plugins.typed-pallas]\nplatforms = tpu\n")
    write(project, "pyproject.toml", '[tool.typed-pallas]\nplatforms = ["gpu"]\n')
    assert resolve(project, ini).platforms == {"tpu"}


def test_pyproject_found_in_a_parent_folder(project: Path) -> None:
    write(project, "pyproject.toml", '[tool.typed-pallas]\nplatforms = ["tpu"]\n')
    sub = project / "src" / "pkg"
    sub.mkdir(parents=True)
    assert resolve_config(None, environ={}, cwd=str(sub)).platforms == {"tpu"}


def test_search_stops_at_the_repository_root(tmp_path: Path) -> None:
    write(tmp_path, "pyproject.toml", '[tool.typed-pallas]\nplatforms = ["tpu"]\n')
    repo = tmp_path / "repo"
    (repo / ".git").mkdir(parents=True)
    assert resolve_config(None, environ={}, cwd=str(repo)).platforms is None


def test_pyproject_next_to_the_mypy_config(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("cwd")
    (elsewhere / ".git").mkdir()
    ini = write(project, "mypy.ini", "[mypy]\n")
    write(project, "pyproject.toml", '[tool.typed-pallas]\nplatforms = ["cuda"]\n')
    assert resolve_config(ini, environ={}, cwd=str(elsewhere)).platforms == {"cuda"}


# --------------------------------------------------------------------------- the one search (plugin and CLI)


def test_candidate_files_are_mypys_names_in_mypys_order(project: Path) -> None:
    assert CONFIG_FILE_NAMES == ("mypy.ini", ".mypy.ini", "pyproject.toml", "setup.cfg")
    sub = project / "src"
    sub.mkdir()
    ci = project / "ci"
    ci.mkdir()
    mypy_config = str(ci / "mypy.ini")
    assert candidate_files(mypy_config, cwd=str(sub)) == [
        mypy_config,
        *(str(ci / name) for name in CONFIG_FILE_NAMES[1:]),
        *(str(sub / name) for name in CONFIG_FILE_NAMES),
        *(str(project / name) for name in CONFIG_FILE_NAMES),
    ]
    assert candidate_files(None, cwd=str(project)) == [
        str(project / name) for name in CONFIG_FILE_NAMES
    ]


@pytest.mark.parametrize(
    ("present", "found"),
    [
        pytest.param(
            ["mypy.ini", ".mypy.ini", "pyproject.toml", "setup.cfg"],
            "mypy.ini",
            id="mypy.ini-first",
        ),
        pytest.param(
            [".mypy.ini", "pyproject.toml", "setup.cfg"], ".mypy.ini", id="dot-mypy.ini-second"
        ),
        pytest.param(["pyproject.toml", "setup.cfg"], "pyproject.toml", id="pyproject-third"),
        pytest.param(["setup.cfg"], "setup.cfg", id="setup.cfg-last"),
    ],
)
def test_search_takes_names_in_mypys_order(project: Path, present: list[str], found: str) -> None:
    for name in present:
        if name.endswith(".toml"):
            write(project, name, '[tool.typed-pallas]\nplatforms = ["tpu"]\n')
        else:
            write(project, name, "[mypy.plugins.typed-pallas]\nplatforms = tpu\n")
    assert find_config_file(None, cwd=str(project)) == str(project / found)
    assert resolve(project).source == str(project / found)


def test_search_nearest_folder_first_and_files_without_a_section_skipped(project: Path) -> None:
    sub = project / "a" / "b"
    sub.mkdir(parents=True)
    assert find_config_file(None, cwd=str(sub)) is None
    write(project, "pyproject.toml", '[tool.typed-pallas]\nplatforms = ["tpu"]\n')
    assert find_config_file(None, cwd=str(sub)) == str(project / "pyproject.toml")
    write(project / "a", "mypy.ini", "[mypy]\n")  # no typed-pallas section: skipped
    write(project / "a" / "b", "pyproject.toml", "[tool.mypy]\nstrict = true\n")  # neither
    assert find_config_file(None, cwd=str(sub)) == str(project / "pyproject.toml")
    write(project / "a", "setup.cfg", "[mypy.plugins.typed-pallas]\nplatforms = gpu\n")
    assert find_config_file(None, cwd=str(sub)) == str(project / "a" / "setup.cfg")
    assert resolve_config(None, environ={}, cwd=str(sub)).platforms == {"cuda", "rocm"}


def test_search_starts_with_mypys_config_file_and_its_folder(
    project: Path, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("cfg")
    write(project, "pyproject.toml", '[tool.typed-pallas]\nplatforms = ["tpu"]\n')
    ini = write(elsewhere, "mypy.ini", "[mypy]\n")
    assert find_config_file(ini, cwd=str(project)) == str(project / "pyproject.toml")
    write(elsewhere, "setup.cfg", "[mypy.plugins.typed-pallas]\nplatforms = rocm\n")
    assert find_config_file(ini, cwd=str(project)) == str(elsewhere / "setup.cfg")
    write(elsewhere, "mypy.ini", "[mypy]\n[mypy.plugins.typed-pallas]\nplatforms = cuda\n")
    assert find_config_file(ini, cwd=str(project)) == ini
    assert resolve_config(ini, environ={}, cwd=str(project)).platforms == {"cuda"}


def test_search_stops_at_a_broken_file(project: Path) -> None:
    sub = project / "sub"
    sub.mkdir()
    write(project, "pyproject.toml", '[tool.typed-pallas]\nplatforms = ["tpu"]\n')
    write(sub, "setup.cfg", "[mypy.plugins.typed-pallas]\nplatforms = npu\n")
    with pytest.raises(
        ConfigError,
        match=r"setup\.cfg: \[mypy\.plugins\.typed-pallas\] platforms: unknown platform 'npu'",
    ):
        find_config_file(None, cwd=str(sub))
    with pytest.raises(ConfigError, match="unknown platform 'npu'"):
        resolve_config(None, environ={}, cwd=str(sub))


# --------------------------------------------------------------------------- environment


def test_platforms_env_replaces_top_level_and_keeps_overrides(project: Path) -> None:
    write(project, "pyproject.toml", PRECEDENCE)
    cfg = resolve(project, **{PLATFORMS_ENV: "rocm, tpu"})
    assert cfg.platforms == {"rocm", "tpu"}
    assert cfg.platforms_for("other") == {"rocm", "tpu"}
    assert cfg.platforms_for("pkg.gpu.mod") == {"cuda", "rocm"}


@pytest.mark.parametrize("value", ["", "  "], ids=["empty", "blank"])
def test_empty_platforms_env_is_ignored(project: Path, value: str) -> None:
    write(project, "pyproject.toml", '[tool.typed-pallas]\nplatforms = ["tpu"]\n')
    assert resolve(project, **{PLATFORMS_ENV: value}).platforms == {"tpu"}


def test_platforms_env_without_any_file(project: Path) -> None:
    assert resolve(project, **{PLATFORMS_ENV: "gpu"}).platforms == {"cuda", "rocm"}


def test_config_env_names_the_file(project: Path, tmp_path_factory: pytest.TempPathFactory) -> None:
    write(project, "pyproject.toml", '[tool.typed-pallas]\nplatforms = ["tpu"]\n')
    other = tmp_path_factory.mktemp("other")
    path = write(other, "custom.ini", "[mypy.plugins.typed-pallas]\nplatforms = rocm\n")
    cfg = resolve(project, **{CONFIG_ENV: path})
    assert cfg.platforms == {"rocm"}
    assert cfg.source == path


# --------------------------------------------------------------------------- fingerprint


def test_fingerprint_follows_the_config(project: Path) -> None:
    write(project, "pyproject.toml", PRECEDENCE)
    a = resolve(project).fingerprint()
    assert json.loads(json.dumps(a)) == a  # mypy stores it as JSON
    assert a["typed_pallas"] and a["platforms"] == ["tpu"]
    assert resolve(project).fingerprint() == a
    assert resolve(project, **{PLATFORMS_ENV: "gpu"}).fingerprint() != a
    write(
        project, "pyproject.toml", PRECEDENCE.replace('module = ["pkg.*"]', 'module = ["pkg2.*"]')
    )
    assert resolve(project).fingerprint() != a
    assert PluginConfig().fingerprint()["platforms"] is None


# --------------------------------------------------------------------------- bad config

TOML_BAD = [
    pytest.param(
        'platforms = ["xpu"]',
        ["platforms", "unknown platform 'xpu'", "tpu, gpu, cuda, rocm"],
        id="unknown-platform",
    ),
    pytest.param(
        'platforms = ["TPU"]',
        ["unknown platform 'TPU'", "lower case: 'tpu'"],
        id="upper-case-platform",
    ),
    pytest.param(
        "platforms = []", ["platform list is empty", '["tpu", "gpu"]'], id="empty-platforms"
    ),
    pytest.param(
        'platforms = "tpu"',
        ["must be a list of strings", 'platforms = ["tpu"]'],
        id="platforms-string",
    ),
    pytest.param("platforms = 3", ["must be a list of strings", "int"], id="platforms-int"),
    pytest.param('platforms = ["tpu", 1]', ["is a int, not a string"], id="platform-not-a-string"),
    pytest.param(
        'platform = ["tpu"]',
        ["unknown key 'platform'", "known keys are platforms, overrides"],
        id="unknown-key",
    ),
    pytest.param(
        'module = ["a.*"]',
        ["unknown key 'module'", "[[tool.typed-pallas.overrides]]"],
        id="module-at-top-level",
    ),
    pytest.param(
        'overrides = "a.*"', ["'overrides' must be an array of tables"], id="overrides-not-tables"
    ),
    pytest.param(
        '[[tool.typed-pallas.overrides]]\nmodule = ["a.*"]\nplatforms = ["tpu"]\nstrict = true',
        ["overrides #1", "unknown key 'strict'", "only module, platforms"],
        id="override-unknown-key",
    ),
    pytest.param(
        '[[tool.typed-pallas.overrides]]\nplatforms = ["tpu"]',
        ["overrides #1", "missing 'module'"],
        id="override-missing-module",
    ),
    pytest.param(
        '[[tool.typed-pallas.overrides]]\nmodule = "a"',
        ["overrides #1", "missing 'platforms'"],
        id="override-missing-platforms",
    ),
    pytest.param(
        '[[tool.typed-pallas.overrides]]\nmodule = ["a.*"]\nplatforms = ["tpu"]\n'
        '[[tool.typed-pallas.overrides]]\nmodule = ["pkg.tp*"]\nplatforms = ["tpu"]',
        ["overrides #2", "bad module pattern 'pkg.tp*'", "'*' as whole components"],
        id="override-bad-pattern",
    ),
    pytest.param(
        '[[tool.typed-pallas.overrides]]\nmodule = ["pkg/tpu"]\nplatforms = ["tpu"]',
        ["bad module pattern 'pkg/tpu'"],
        id="override-path-not-module",
    ),
    pytest.param(
        '[[tool.typed-pallas.overrides]]\nmodule = [3]\nplatforms = ["tpu"]',
        ["module pattern 3 is a int"],
        id="override-pattern-int",
    ),
    pytest.param(
        '[[tool.typed-pallas.overrides]]\nmodule = []\nplatforms = ["tpu"]',
        ["non-empty list"],
        id="override-module-empty",
    ),
    pytest.param(
        '[[tool.typed-pallas.overrides]]\nmodule = "a"\nplatforms = "gpu"',
        ["overrides #1", "must be a list"],
        id="override-platforms-string",
    ),
    pytest.param(
        '[[tool.typed-pallas.overrides]]\nmodule = "a"\nplatforms = ["vulkan"]',
        ["overrides #1 platforms", "unknown platform 'vulkan'"],
        id="override-unknown-platform",
    ),
]


@pytest.mark.parametrize(("body", "fragments"), TOML_BAD)
def test_bad_pyproject(project: Path, body: str, fragments: list[str]) -> None:
    path = write(project, "pyproject.toml", "[tool.typed-pallas]\n" + body + "\n")
    with pytest.raises(ConfigError) as info:
        resolve(project)
    message = str(info.value)
    assert message.startswith(path)
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize(
    ("text", "fragments"),
    [
        pytest.param(
            "[tool.typed_pallas]\nplatforms = ['tpu']\n",
            ["found [tool.typed_pallas]", "[tool.typed-pallas]"],
            id="misspelled-table",
        ),
        pytest.param("[tool]\ntyped-pallas = 1\n", ["must be a table"], id="table-not-a-table"),
        pytest.param("[tool.typed-pallas\n", ["not valid TOML"], id="invalid-toml"),
    ],
)
def test_bad_pyproject_file(project: Path, text: str, fragments: list[str]) -> None:
    write(project, "pyproject.toml", text)
    with pytest.raises(ConfigError) as info:
        resolve(project)
    for fragment in fragments:
        assert fragment in str(info.value)


@pytest.mark.parametrize(
    ("name", "body", "expected"),
    [
        pytest.param(
            "pyproject.toml",
            b'[tool.typed-pallas]\nplatforms = ["tpu"]  # \xe9t\xe9\n',
            "pyproject.toml: not UTF-8 text (invalid continuation byte at byte 43); save it as UTF-8",
            id="toml",
        ),
        pytest.param(
            "setup.cfg",
            b"[mypy.plugins.typed-pallas]\nplatforms = tpu  ; \xe9t\xe9\n",
            "setup.cfg: not UTF-8 text (invalid continuation byte at byte 47); save it as UTF-8",
            id="ini",
        ),
        pytest.param(
            "setup.cfg",
            b"platforms = tpu\n[mypy.plugins.typed-pallas]\n",
            "setup.cfg: not a valid ini file: File contains no section headers.; "
            "file: '{path}', line: 1; 'platforms = tpu\\n'; fix it and rerun",
            id="ini-without-section",
        ),
    ],
)
def test_unreadable_config_file_is_one_line(
    project: Path, name: str, body: bytes, expected: str
) -> None:
    """A file that is not UTF-8 text, or not ini at all: a ConfigError of one line (no traceback)."""
    path = project / name
    path.write_bytes(body)
    with pytest.raises(ConfigError) as info:
        resolve(project)
    assert str(info.value) == f"{path}: " + expected.split(": ", 1)[1].format(path=path)


INI_BAD = [
    pytest.param(
        "[mypy.plugins.typed-pallas]\nplatforms = tpu, xla\n",
        ["platforms", "unknown platform 'xla'"],
        id="unknown-platform",
    ),
    pytest.param(
        "[mypy.plugins.typed-pallas]\nplatforms =\n",
        ["platform list is empty"],
        id="empty-platforms",
    ),
    pytest.param(
        "[mypy.plugins.typed-pallas]\ntarget = tpu\n", ["unknown key 'target'"], id="unknown-key"
    ),
    pytest.param(
        "[mypy.plugins.typed-pallas]\noverrides = a.*\n",
        ["unknown key 'overrides' in an ini file", "one section per override"],
        id="overrides-key-in-ini",
    ),
    pytest.param(
        "[mypy.plugins.typed-pallas.pkg.*]\nplatforms = tpu\n",
        [
            "unknown section [mypy.plugins.typed-pallas.pkg.*]",
            "[mypy.plugins.typed-pallas.overrides.mypkg.gpu.*]",
        ],
        id="override-section-misspelled",
    ),
    pytest.param(
        "[mypy.plugins.typed-pallas.overrides.a.*]\nplatform = tpu\n",
        ["[mypy.plugins.typed-pallas.overrides.a.*]", "unknown key 'platform'"],
        id="override-unknown-key",
    ),
    pytest.param(
        "[mypy.plugins.typed-pallas.overrides.a.*]\n",
        ["missing 'platforms'"],
        id="override-missing-platforms",
    ),
    pytest.param(
        "[mypy.plugins.typed-pallas.overrides.a.b?]\nplatforms = tpu\n",
        ["bad module pattern 'a.b?'"],
        id="override-bad-pattern",
    ),
    pytest.param(
        "[mypy-plugins.typed-pallas]\nplatforms = tpu\n",
        ["found [mypy-plugins.typed-pallas]"],
        id="misspelled-section",
    ),
    pytest.param("[mypy\n", ["not a valid ini file"], id="invalid-ini"),
]


@pytest.mark.parametrize(("text", "fragments"), INI_BAD)
def test_bad_ini(project: Path, text: str, fragments: list[str]) -> None:
    path = write(project, "mypy.ini", "[mypy]\n" + text if not text.startswith("[mypy\n") else text)
    with pytest.raises(ConfigError) as info:
        resolve(project, path)
    message = str(info.value)
    assert message.startswith(path)
    for fragment in fragments:
        assert fragment in message


@pytest.mark.parametrize(
    ("env", "fragments"),
    [
        pytest.param(
            {PLATFORMS_ENV: "tpu,metal"},
            [PLATFORMS_ENV, "unknown platform 'metal'"],
            id="platforms-env",
        ),
        pytest.param(
            {CONFIG_ENV: "/nonexistent/typed-pallas.toml"},
            [CONFIG_ENV, "no such file"],
            id="config-env-missing",
        ),
    ],
)
def test_bad_environment(project: Path, env: dict[str, str], fragments: list[str]) -> None:
    with pytest.raises(ConfigError) as info:
        resolve(project, **env)
    for fragment in fragments:
        assert fragment in str(info.value)


def test_load_config_stops_like_mypy(
    project: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.chdir(project)
    monkeypatch.delenv(PLATFORMS_ENV, raising=False)
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    write(project, "pyproject.toml", '[tool.typed-pallas]\nplatforms = ["xpu"]\n')
    with pytest.raises(SystemExit) as info:
        load_config(SimpleNamespace(config_file=None))  # type: ignore[arg-type]
    assert info.value.code == 2
    err = capsys.readouterr().err
    assert "usage:" in err and "[tool.typed-pallas]" in err  # the usage block shows the right shape
    last = err.strip().splitlines()[-1]
    assert last.startswith("(typed-pallas) mypy: error: ")
    assert "pyproject.toml: [tool.typed-pallas] platforms: unknown platform 'xpu'" in last


def test_load_config_good(project: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(project)
    monkeypatch.delenv(PLATFORMS_ENV, raising=False)
    monkeypatch.delenv(CONFIG_ENV, raising=False)
    ini = write(project, "mypy.ini", "[mypy]\n[mypy.plugins.typed-pallas]\nplatforms = gpu\n")
    assert load_config(SimpleNamespace(config_file=ini)).platforms == {"cuda", "rocm"}  # type: ignore[arg-type]


@pytest.mark.slow
def test_config_and_cli_import_no_jax() -> None:
    code = (
        "import sys, typed_pallas_mypy.config, typed_pallas_mypy.cli; "
        "bad = sorted(m for m in sys.modules if m == 'jax' or m.startswith('jax.')); "
        "assert not bad, bad"
    )
    subprocess.run(
        [sys.executable, "-c", code], check=True, env={**os.environ, "PYTHONWARNINGS": "ignore"}
    )


def test_origin_says_where_each_module_was_configured(project: Path) -> None:
    write(project, "pyproject.toml", PRECEDENCE)
    cfg = resolve(project)
    assert cfg.origin_for("other") == "[tool.typed-pallas] platforms in pyproject.toml"
    assert cfg.origin_for("pkg.gpu.mod") == (
        "[[tool.typed-pallas.overrides]] #2 (module = 'pkg.gpu.*') in pyproject.toml"
    )
    assert cfg.override_for("pkg.gpu.mod") == cfg.overrides[1]
    assert cfg.override_for("other") is None
    env = resolve(project, **{PLATFORMS_ENV: "gpu"})
    assert env.origin_for("other") == f"{PLATFORMS_ENV}=gpu"
    ini = write(
        project,
        "mypy.ini",
        "[mypy]\n[mypy.plugins.typed-pallas.overrides.a.*,b]\nplatforms = tpu\n",
    )
    icfg = resolve(project, ini)
    assert icfg.origin_for("b") == "[mypy.plugins.typed-pallas.overrides.a.*,b] in mypy.ini"
    assert icfg.origin_for("c") is None
    assert PluginConfig().origin_for("x") is None


@pytest.mark.slow
def test_fingerprint_is_the_same_in_every_process(project: Path) -> None:
    """mypy compares report_config_data across runs: no set order may leak into it."""
    write(project, "pyproject.toml", PRECEDENCE)
    code = (
        "import json, sys; from typed_pallas_mypy.config import resolve_config; "
        "print(json.dumps(resolve_config(None, environ={'TYPED_PALLAS_PLATFORMS': 'tpu,gpu'}, "
        "cwd=sys.argv[1]).fingerprint()))"
    )
    outs = {
        subprocess.run(
            [sys.executable, "-c", code, str(project)],
            env={**os.environ, "PYTHONHASHSEED": seed},
            capture_output=True,
            text=True,
            check=True,
        ).stdout
        for seed in ("1", "2", "3", "4")
    }
    assert len(outs) == 1


# --------------------------------------------------------------------------- registries


def test_platforms_env_keeps_the_registries(project: Path) -> None:
    """``typed-pallas check --platform`` sets the variable: the registries must stay."""
    write(
        project,
        "pyproject.toml",
        """
        [tool.typed-pallas]
        platforms = ["tpu"]
        check_opted_out = true

        [[tool.typed-pallas.registries]]
        call = "pkg.registry.register"
        platform = "backend"
        position = 1
        values = { "Backend.TPU" = "tpu" }
        """,
    )
    config = resolve(project, **{PLATFORMS_ENV: "gpu"})
    assert config.platforms == {"cuda", "rocm"}
    assert [registry.call for registry in config.registries] == ["pkg.registry.register"]
    assert config.check_opted_out


def test_registries_are_read_with_their_values(project: Path) -> None:
    path = write(
        project,
        "pyproject.toml",
        """
        [[tool.typed-pallas.registries]]
        call = "ejkernel.kernels._registry.KernelRegistry.register"
        platform = "backend"
        position = 2
        values = { "Backend.TPU" = "tpu", "Backend.GPU" = "gpu" }
        """,
    )
    config = read_config(path)
    assert config is not None
    (registry,) = config.registries
    assert registry.call == "ejkernel.kernels._registry.KernelRegistry.register"
    assert (registry.platform, registry.position) == ("backend", 2)
    assert registry.platforms_of("ejkernel.kernels._registry.Backend.TPU") == {"tpu"}
    assert registry.platforms_of("Backend.GPU") == {"cuda", "rocm"}
    assert registry.platforms_of("rocm") == {"rocm"}  # a platform string names itself
    assert registry.platforms_of("Backend.MPS") is None
    assert config.fingerprint()["registries"] == [
        [
            "ejkernel.kernels._registry.KernelRegistry.register",
            "backend",
            2,
            [["Backend.TPU", ["tpu"]], ["Backend.GPU", ["cuda", "rocm"]]],
            None,
            None,
        ]
    ]


@pytest.mark.parametrize(
    ("entry", "message"),
    [
        (
            'call = "register"\nplatform = "backend"',
            "registries #1: 'call' must be the dotted name of the registering decorator or "
            "call, got 'register'; write call = \"mypkg.registry.register\"",
        ),
        (
            'call = "pkg.register"',
            'registries #1: say which argument names the platform: platform = "backend" '
            "(its keyword) and/or position = 2 (its position)",
        ),
        (
            'call = "pkg.register"\nposition = -1',
            "registries #1: 'position' must be an argument position (0, 1, ...), got -1",
        ),
        (
            'call = "pkg.register"\nposition = 1\nvalues = { "Backend.NPU" = "npu" }',
            "registries #1 values['Backend.NPU']: unknown platform 'npu'",
        ),
        (
            'call = "pkg.register"\nposition = 1\nregistry = "x"',
            "registries #1: unknown key 'registry'; a registry takes call, platform, position, "
            "values, function, function_position",
        ),
    ],
)
def test_bad_registries_say_what_to_write(project: Path, entry: str, message: str) -> None:
    path = write(project, "pyproject.toml", "[[tool.typed-pallas.registries]]\n" + entry + "\n")
    with pytest.raises(ConfigError) as caught:
        read_config(path)
    assert message in str(caught.value)


def test_registries_in_an_ini_file_point_to_pyproject(project: Path) -> None:
    path = write(project, "mypy.ini", "[mypy.plugins.typed-pallas]\nregistries = pkg.register\n")
    with pytest.raises(ConfigError, match=r"'registries' can be set in pyproject\.toml only"):
        read_config(path)
