"""``typed-pallas init``: what it writes, that it merges and never overwrites, and what the
five checkers then report on a correct and a wrong file (they are in this venv).

Projects are made in ``tmp_path`` (a ``.git`` marker stops the checkers' config searches
there). Each checker runs with no option but the interpreter (``--pythonpath``,
``--python``...), from the project's root, so it reads only what ``init`` wrote.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

from typed_pallas_mypy.cli import init, main

BIN = Path(sys.executable).parent

OK = """\
from typing import Literal

import typed_pallas
from jax.experimental.pallas import tpu as pltpu


def takes_tpu(p: typed_pallas.CompilerParams[Literal["tpu"]]) -> None: ...


takes_tpu(pltpu.CompilerParams(vmem_limit_bytes=1 << 20))
takes_tpu(typed_pallas.TPUCompilerParams())
"""

WRONG = """\
from typing import Literal

import typed_pallas
from jax.experimental.pallas import triton as pltriton


def takes_tpu(p: typed_pallas.CompilerParams[Literal["tpu"]]) -> None: ...


takes_tpu(pltriton.CompilerParams())
"""
WRONG_LINE = 10

#: only typed-pallas's own names: no checker may report it, before or after init
OWN_NAMES = """\
from typing import Literal

import typed_pallas


def takes_tpu(p: typed_pallas.CompilerParams[Literal["tpu"]]) -> None: ...


def takes_gpu(p: typed_pallas.CompilerParams[typed_pallas.GPU]) -> None: ...


takes_tpu(typed_pallas.TPUCompilerParams())
takes_tpu(typed_pallas.TPUCompilerParams(vmem_limit_bytes=1 << 20))
takes_gpu(typed_pallas.TritonCompilerParams(num_warps=4))
takes_gpu(typed_pallas.MosaicGPUCompilerParams())
"""


def _project(tmp_path: Path, pyproject: str | None = None) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    if pyproject is not None:
        (root / "pyproject.toml").write_text(pyproject)
    return root


def _init(root: Path, *extra: str, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    rc = main(["init", str(root), *extra])
    out, err = capsys.readouterr()
    return rc, out, err


def _snapshot(root: Path) -> dict[str, str]:
    return {
        p.relative_to(root).as_posix(): p.read_text()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".git" not in p.parts
    }


# --------------------------------------------------------------------------- what it writes


def test_fresh_project(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path)
    rc, out, err = _init(root, capsys=capsys)
    assert rc == 0, err
    data = tomllib.loads((root / "pyproject.toml").read_text())
    assert data["tool"]["mypy"] == {"plugins": ["typed_pallas_mypy"], "check_untyped_defs": True}
    assert data["tool"]["pyright"] == {"stubPath": ".typings"}
    assert data["tool"]["pyrefly"] == {"preset": "default"}
    source = init.find_installed_stubs()
    assert source is not None
    copied = root / ".typings" / "jax-stubs"
    for src in source.rglob("*.pyi"):
        text = (copied / src.relative_to(source)).read_text()
        assert text.startswith("# Copied by `typed-pallas init`") and text.endswith(src.read_text())
    assert (copied / "py.typed").read_text() == (source / "py.typed").read_text()
    assert (root / ".typings" / ".ignore").read_text().splitlines()[-1] == "*"
    for what in (
        "plugins += typed_pallas_mypy",
        "check_untyped_defs = true",
        'stubPath = ".typings"',
        'preset = "default"',
        ".typings/jax-stubs/",
    ):
        assert what in out, out
    assert "warning" not in err


USER_PYPROJECT = """\
[project]
name = "mine"  # a comment that must stay

[tool.mypy]
strict = true
plugins = [
    "pydantic.mypy",  # theirs
]
check_untyped_defs = false

[tool.pyright]
typeCheckingMode = "strict"
stubPath = "stubs"

[tool.pyrefly]
preset = "basic"

[tool.other]
key = 1
"""


def test_existing_pyproject_is_merged_not_clobbered(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path, USER_PYPROJECT)
    rc, _out, err = _init(root, capsys=capsys)
    assert rc == 0, err
    text = (root / "pyproject.toml").read_text()
    data = tomllib.loads(text)
    # merged: our plugin added next to theirs; every other line kept as it was
    assert data["tool"]["mypy"]["plugins"] == ["typed_pallas_mypy", "pydantic.mypy"]
    # every line of the user's file is kept, in order; ours are added
    assert [
        line for line in text.splitlines() if line in USER_PYPROJECT.splitlines()
    ] == USER_PYPROJECT.splitlines()
    # settings present with another value: left as they are, with a warning each
    assert data["tool"]["mypy"]["check_untyped_defs"] is False
    assert data["tool"]["pyright"] == {"typeCheckingMode": "strict", "stubPath": "stubs"}
    assert data["tool"]["pyrefly"] == {"preset": "basic"}
    assert data["tool"]["other"] == {"key": 1}
    assert "check_untyped_defs = False: left as it is" in err
    assert "preset = 'basic': left as it is" in err
    assert "stubPath = 'stubs': left as it is" in err
    # the stubs go where the user's stubPath points
    assert (root / "stubs" / "jax-stubs" / "experimental" / "pallas" / "tpu.pyi").is_file()
    assert not (root / ".typings").exists()


def test_mypy_ini_is_the_file_mypy_reads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path, '[project]\nname = "mine"\n')
    (root / "mypy.ini").write_text(
        "[mypy]\nplugins = numpy.typing.mypy_plugin\nwarn_unused_ignores = True\n"
    )
    rc, _, err = _init(root, capsys=capsys)
    assert rc == 0, err
    ini = (root / "mypy.ini").read_text()
    assert "plugins = typed_pallas_mypy, numpy.typing.mypy_plugin\n" in ini
    assert "check_untyped_defs = True\n" in ini and "warn_unused_ignores = True\n" in ini
    assert "mypy" not in tomllib.loads((root / "pyproject.toml").read_text()).get("tool", {})


def test_pyrightconfig_json_gets_stub_path(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path)
    (root / "pyrightconfig.json").write_text('{"typeCheckingMode": "basic"}\n')
    rc, _, err = _init(root, capsys=capsys)
    assert rc == 0, err
    assert json.loads((root / "pyrightconfig.json").read_text()) == {
        "typeCheckingMode": "basic",
        "stubPath": ".typings",
    }
    assert "pyright" not in tomllib.loads((root / "pyproject.toml").read_text())["tool"]


def test_second_run_changes_nothing_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path, USER_PYPROJECT)
    assert _init(root, capsys=capsys)[0] == 0
    before = _snapshot(root)
    rc, out, _ = _init(root, capsys=capsys)
    assert rc == 0
    assert _snapshot(root) == before
    assert "already set up; nothing changed" in out


def _commands_named(text: str) -> list[list[str]]:
    """The ``typed-pallas ...`` commands quoted in backticks in ``text``, as argv lists."""
    return [m.split()[1:] for m in re.findall(r"`(typed-pallas [^`]*)`", text)]


def test_closing_lines_name_commands_an_installed_user_has(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """init's last lines pointed to docs/editors.md, a file of the checkout an installed
    user does not have: they name commands, each of which parses and (explain) has its page."""
    root = _project(tmp_path, USER_PYPROJECT)
    rc, out, err = _init(root, capsys=capsys)
    assert rc == 0, err
    assert "docs/" not in out and ".md" not in out
    closing = out.splitlines()[-len(init.NEXT_STEPS) :]
    assert closing == [f"  {line}" for line in init.NEXT_STEPS]
    named = _commands_named("\n".join(closing))
    assert ["check"] in named and ["explain", "editors"] in named and ["lsp"] in named
    for argv in named:
        if argv[0] == "explain":
            assert main(argv) == 0 and "# " in capsys.readouterr().out
        else:
            assert argv[0] in ("check", "lsp")
    # what init writes into the project names no checkout path either
    assert "docs/" not in init.SKIP_COMMENT
    assert _commands_named(init.SKIP_COMMENT) == [["explain", "checkers"]]
    assert main(["explain", "checkers"]) == 0 and "jax-pyrefly-stubs" in capsys.readouterr().out


def test_dry_run_prints_the_diff_and_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path, USER_PYPROJECT)
    before = _snapshot(root)
    rc, out, _ = _init(root, "--dry-run", capsys=capsys)
    assert rc == 0
    assert _snapshot(root) == before
    assert "--- a/pyproject.toml\n+++ b/pyproject.toml\n" in out
    assert ' plugins = [\n+    "typed_pallas_mypy",\n     "pydantic.mypy",  # theirs\n' in out, out
    assert "new file stubs/jax-stubs/experimental/pallas/tpu.pyi" in out
    assert "nothing written" in out
    # and the real run then writes exactly what the dry run announced
    assert _init(root, capsys=capsys)[0] == 0
    assert _snapshot(root) != before


def test_stale_copy_is_refreshed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    root = _project(tmp_path)
    assert _init(root, capsys=capsys)[0] == 0
    tpu = root / ".typings" / "jax-stubs" / "experimental" / "pallas" / "tpu.pyi"
    fresh = tpu.read_text()
    tpu.write_text("# an older typed-pallas\n")
    rc, out, _ = _init(root, capsys=capsys)
    assert rc == 0 and tpu.read_text() == fresh
    assert "updated file" not in out and ".typings/jax-stubs/" in out


def test_unreadable_pyproject_writes_nothing(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path, "[tool.mypy\n")
    rc, _, err = _init(root, capsys=capsys)
    assert rc == 2 and "not valid TOML" in err and "nothing was written" in err
    assert not (root / ".typings").exists()


COMMENTED_PYPROJECT = """\
# The project's own header comment.
[project]
name = "mine"   # aligned   comments stay
version   =   "1.0"

# --- tools ---------------------------------------------------------------

[tool.mypy]
# strict, always
strict = true
plugins = ["pydantic.mypy"]  # theirs, on one line

[tool.black]
line-length = 100  # keep
"""


def test_comments_and_layout_survive(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """tomlkit edits the user's pyproject.toml: every comment, spacing and blank line stays;
    our keys go at the end of their tables, our plugin first in theirs."""
    root = _project(tmp_path, COMMENTED_PYPROJECT)
    assert _init(root, capsys=capsys)[0] == 0
    assert (root / "pyproject.toml").read_text() == (
        "# The project's own header comment.\n"
        "[project]\n"
        'name = "mine"   # aligned   comments stay\n'
        'version   =   "1.0"\n'
        "\n"
        "# --- tools ---------------------------------------------------------------\n"
        "\n"
        "[tool.mypy]\n"
        "# strict, always\n"
        "strict = true\n"
        'plugins = ["typed_pallas_mypy", "pydantic.mypy"]  # theirs, on one line\n'
        "check_untyped_defs = true\n"
        "\n"
        "[tool.black]\n"
        "line-length = 100  # keep\n"
        "\n"
        "[tool.pyright]\n"
        'stubPath = ".typings"\n'
        "\n"
        "[tool.pyrefly]\n"
        'preset = "default"\n'
    )


def test_inline_and_dotted_tables_are_edited_in_place(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``[tool.mypy]`` written as an inline table, and dotted ``pyright.*`` keys: edited
    where they are (the text editor before tomlkit could only warn)."""
    root = _project(
        tmp_path,
        '[tool]\nmypy = { strict = true }  # inline\npyright.typeCheckingMode = "basic"\n',
    )
    rc, _, err = _init(root, capsys=capsys)
    assert rc == 0 and "warning" not in err, err
    first, *rest = (root / "pyproject.toml").read_text().splitlines(keepends=True)
    assert first == "[tool]\n"
    inline = rest.pop(0)  # tomlkit < 0.15 writes no space after the comma it adds
    assert inline.startswith('mypy = { strict = true, plugins = ["typed_pallas_mypy"],'), inline
    assert inline.endswith("check_untyped_defs = true}  # inline\n"), inline
    assert rest == [
        'pyright.typeCheckingMode = "basic"\n',
        'pyright.stubPath = ".typings"\n',
        "\n",
        "[tool.pyrefly]\n",
        'preset = "default"\n',
    ]


def test_pyrefly_toml_gets_its_preset_before_its_tables(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    root = _project(tmp_path)
    (root / "pyrefly.toml").write_text(
        '# pyrefly settings\nproject-includes = ["src"]  # ours\n\n[errors]\nbad-return = false\n'
    )
    assert _init(root, capsys=capsys)[0] == 0
    assert (root / "pyrefly.toml").read_text() == (
        "# pyrefly settings\n"
        'project-includes = ["src"]  # ours\n'
        'preset = "default"\n'
        "\n"
        "[errors]\n"
        "bad-return = false\n"
    )
    assert "pyrefly" not in tomllib.loads((root / "pyproject.toml").read_text())["tool"]


@pytest.mark.parametrize(
    ("name", "body", "told"),
    [
        pytest.param(
            "mypy.ini",
            b"[mypy]\nstrict = True  ; \xe9t\xe9\n",
            "{root}/mypy.ini: not UTF-8 text (invalid continuation byte at byte 24); save it as "
            "UTF-8 (see `typed-pallas explain configuration`); nothing was written",
            id="ini-not-utf8",
        ),
        pytest.param(
            "setup.cfg",
            b"strict = True\n[mypy]\n",
            "{root}/setup.cfg: not a valid ini file: File contains no section headers.; file: "
            "'{root}/setup.cfg', line: 1; 'strict = True\\n'; fix it and rerun (see "
            "`typed-pallas explain configuration`); nothing was written",
            id="setup-cfg-without-section",
        ),
        pytest.param(
            "pyrightconfig.json",
            b'{"typeCheckingMode": "\xe9"}\n',
            "{root}/pyrightconfig.json: not UTF-8 text (invalid continuation byte at byte 22); save "
            "it as UTF-8 and rerun typed-pallas init; nothing was written",
            id="pyrightconfig-not-utf8",
        ),
    ],
)
def test_a_file_init_cannot_read_is_one_line_and_nothing_is_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, body: bytes, told: str
) -> None:
    """The files the plugin reads its configuration from are checked as the plugin would
    (``config``'s message); the others (pyrightconfig.json, pyrefly.toml) by ``init``."""
    root = _project(tmp_path)
    (root / name).write_bytes(body)
    before = _snapshot_bytes(root)
    rc, out, err = _init(root, capsys=capsys)
    assert (rc, out, err) == (2, "", "typed-pallas: error: " + told.format(root=root) + "\n")
    assert _snapshot_bytes(root) == before


def test_a_file_init_cannot_write_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    root = _project(tmp_path)
    real = Path.write_text

    def refuse(self: Path, *args: object, **kwargs: object) -> int:
        if self.name == "pyproject.toml":
            raise PermissionError(13, "Permission denied")
        return real(self, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(Path, "write_text", refuse)
    rc, out, err = _init(root, capsys=capsys)
    assert (rc, out) == (2, "")
    assert re.fullmatch(
        rf"typed-pallas: error: {re.escape(str(root))}/pyproject.toml: cannot write it \(Permission "
        r"denied\); \d+ other file\(s\) were written before it; make it writable and rerun "
        r"typed-pallas init \(it completes them\)\n",
        err,
    ), err


def _snapshot_bytes(root: Path) -> dict[str, bytes]:
    return {p.relative_to(root).as_posix(): p.read_bytes() for p in root.rglob("*") if p.is_file()}


def test_jax_pyrefly_stubs_detected(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Next to jax-pyrefly-stubs: the mypy override that lets mypy run."""
    root = _project(tmp_path)
    plan = init.make_plan(root, coinstalled=True, environment=_fake_environment(tmp_path))
    after = plan.files[root / "pyproject.toml"][1]
    override = tomllib.loads(after)["tool"]["mypy"]["overrides"]
    assert override == [
        {
            "module": ["jax.numpy", "jax.numpy.*"],
            "follow_imports": "skip",
            "follow_imports_for_stubs": True,
        }
    ]
    # idempotent there too
    (root / "pyproject.toml").write_text(after)
    again = init.make_plan(root, coinstalled=True, environment=_fake_environment(tmp_path))
    assert root / "pyproject.toml" not in again.files


# --------------------------------------------------------------------------- next to jax-pyrefly-stubs

#: a jax package as the environment has it (files are empty: only the names count)
REAL_JAX = (
    "__init__.py",
    "py.typed",
    "__pycache__/__init__.cpython-312.pyc",
    "_src/__init__.py",
    "_src/pallas/core.py",
    "experimental/__init__.py",
    "experimental/pallas/__init__.py",
    "lax/__init__.py",
    "lax/linalg.py",
    "numpy/__init__.py",
    "numpy/__init__.pyi",
    "numpy/fft.py",
    "random.py",
    "sharding.py",
    "version.py",
)
#: jax-pyrefly-stubs' complete stub package: jax, lax (with linalg), numpy (without fft), random
THEIR_STUBS = (
    "__init__.pyi",
    "py.typed",
    "lax/__init__.pyi",
    "lax/linalg.pyi",
    "numpy/__init__.pyi",
    "random.pyi",
)
#: what the project's overlay must link: every module of jax their stubs lack, and only those
OVERLAY = {"_src", "experimental", "numpy/fft.py", "sharding.py", "version.py"}


def _tree(base: Path, files: tuple[str, ...]) -> Path:
    for name in files:
        (base / name).parent.mkdir(parents=True, exist_ok=True)
        (base / name).write_text("")
    return base


def _fake_environment(tmp_path: Path, jax_name: str = "jax") -> init.Environment:
    site = tmp_path / "site"
    if not (site / "jax-stubs").is_dir():
        _tree(site / "jax-stubs", THEIR_STUBS)
    if not (site / jax_name).is_dir():
        _tree(site / jax_name, REAL_JAX)
    ours = init.find_installed_stubs()
    assert ours is not None
    return init.Environment(jax=site / jax_name, theirs=site / "jax-stubs", ours=ours)


def _links(folder: Path) -> dict[str, str]:
    return {
        p.relative_to(folder).as_posix(): str(p.readlink())
        for p in sorted(folder.rglob("*"))
        if p.is_symlink()
    }


def test_overlay_links_what_their_stubs_lack(tmp_path: Path) -> None:
    env = _fake_environment(tmp_path)
    assert env.theirs is not None and env.jax is not None
    links = init.overlay_links(env.theirs, env.jax)
    assert {rel.as_posix() for rel in links} == OVERLAY
    assert links[init.PurePosixPath("numpy/fft.py")] == env.jax / "numpy" / "fft.py"
    # without their stubs' folder there is nothing to overlay
    assert init.overlay_links(tmp_path / "nowhere", env.jax) == {}


def test_coinstalled_project_is_set_up_for_every_checker(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The overlay in the stub folder, pyrefly's search-path and ty's extra-paths: all in the
    project, nothing in the environment, and a second run changes nothing."""
    root = _project(tmp_path)
    env = _fake_environment(tmp_path)
    assert env.jax is not None
    monkeypatch.setattr(init.Environment, "discover", classmethod(lambda cls: env))
    monkeypatch.setattr(init, "installed_version", lambda dist: "1.4.0")
    site_before = _links(tmp_path / "site")
    rc, out, err = _init(root, capsys=capsys)
    assert rc == 0, err
    assert "warning" not in err, err
    overlay = root / ".typings" / "jax"
    assert _links(overlay) == {name: str(env.jax / name) for name in OVERLAY}
    assert (overlay / ".gitignore").read_text().splitlines()[-1] == "*"
    data = tomllib.loads((root / "pyproject.toml").read_text())["tool"]
    assert data["pyrefly"] == {"preset": "default", "search-path": [".typings"]}
    assert data["ty"] == {"environment": {"extra-paths": [".typings"]}}
    assert "search-path += '.typings'" in out and "extra-paths += '.typings'" in out, out
    assert f"links to the {len(OVERLAY)} jax modules" in out, out
    assert _links(tmp_path / "site") == site_before  # the environment is untouched
    rc, out, err = _init(root, capsys=capsys)
    assert rc == 0 and "nothing changed" in out, out + err
    assert "already has '.typings' in search-path" in out


def test_overlay_follows_the_environment(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Rerun with another jax: links updated, the ones no longer needed removed."""
    root = _project(tmp_path)
    monkeypatch.setattr(init, "installed_version", lambda dist: "1.4.0")
    first = _fake_environment(tmp_path)
    monkeypatch.setattr(init.Environment, "discover", classmethod(lambda cls: first))
    assert _init(root, capsys=capsys)[0] == 0
    overlay = root / ".typings" / "jax"
    (overlay / "gone.py").symlink_to(tmp_path / "site" / "jax" / "version.py")  # an old link
    second = _fake_environment(tmp_path, jax_name="jax2")
    assert second.jax is not None
    monkeypatch.setattr(init.Environment, "discover", classmethod(lambda cls: second))
    rc, out, err = _init(root, "--dry-run", capsys=capsys)
    assert rc == 0, err
    assert f"updated link .typings/jax/_src -> {second.jax / '_src'}" in out, out
    assert "removed link .typings/jax/gone.py" in out, out
    assert (overlay / "gone.py").is_symlink()  # a dry run writes nothing
    assert _init(root, capsys=capsys)[0] == 0
    assert _links(overlay) == {name: str(second.jax / name) for name in OVERLAY}


def test_overlay_links_are_relative_inside_the_project(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A venv inside the project: the links stay right when the project moves."""
    root = _project(tmp_path)
    env = _fake_environment(root / ".venv")
    assert env.jax is not None
    monkeypatch.setattr(init, "installed_version", lambda dist: "1.4.0")
    plan = init.make_plan(root, coinstalled=True, environment=env)
    link = root / ".typings" / "jax" / "_src"
    assert plan.links[link] == (None, "../../.venv/site/jax/_src")


def test_coinstall_settings_go_to_the_checkers_own_files(tmp_path: Path) -> None:
    root = _project(tmp_path)
    (root / "pyrefly.toml").write_text('search-path = ["src"]\n')
    (root / "ty.toml").write_text('[environment]\npython-version = "3.12"\n')
    plan = init.make_plan(root, coinstalled=True, environment=_fake_environment(tmp_path))
    pyrefly = tomllib.loads(plan.files[root / "pyrefly.toml"][1])
    assert pyrefly["search-path"] == ["src", ".typings"]
    ty = tomllib.loads(plan.files[root / "ty.toml"][1])
    assert ty["environment"] == {"python-version": "3.12", "extra-paths": [".typings"]}
    assert "ty" not in tomllib.loads(plan.files[root / "pyproject.toml"][1]).get("tool", {})
    assert plan.env_links == []


def test_no_overlay_without_jax_pyrefly_stubs(tmp_path: Path) -> None:
    root = _project(tmp_path)
    plan = init.make_plan(root, coinstalled=False, environment=_fake_environment(tmp_path))
    assert plan.links == {} and plan.env_links == []
    tool = tomllib.loads(plan.files[root / "pyproject.toml"][1])["tool"]
    assert "search-path" not in tool["pyrefly"] and "ty" not in tool


def test_environment_link_only_when_asked(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A pyrefly setting init cannot edit: the link in the environment, made with --yes only,
    with how to undo it; without --yes, a sentence that says what and how to allow it."""
    root = _project(tmp_path, '[tool.pyrefly]\nsearch-path = "src"\n')
    env = _fake_environment(tmp_path)
    assert env.ours is not None and env.theirs is not None
    monkeypatch.setattr(init.Environment, "discover", classmethod(lambda cls: env))
    monkeypatch.setattr(init, "installed_version", lambda dist: "1.4.0")
    link = env.theirs / "experimental"
    rc, out, err = _init(root, capsys=capsys)
    assert rc == 0 and not link.exists()
    assert "pyrefly: could not edit search-path in pyproject.toml [tool.pyrefly]" in err, err
    assert (
        "pyrefly, ty need a link in this environment, which init makes only when asked: rerun "
        f"`typed-pallas init --yes` to make it (ln -s {env.ours.resolve() / 'experimental'} {link}; "
        f"undo: rm {link})"
    ) in err, err
    rc, out, err = _init(root, "--yes", capsys=capsys)
    assert rc == 0, err
    assert link.is_symlink() and link.resolve() == env.ours.resolve() / "experimental"
    assert f"made the link {link} -> " in out and f"undo with `rm {link}`" in out, out
    # once it is there, nothing more is asked
    rc, out, err = _init(root, capsys=capsys)
    assert "need a link" not in err, err


# --------------------------------------------------------------------------- what the checkers then say


def _exe(name: str) -> str:
    found = BIN / name
    if not found.exists():
        pytest.skip(f"{name} is not installed")
    return str(found)


def _errors(checker: str, root: Path, files: list[str]) -> dict[str, set[int]]:
    """file name -> lines with an error, for ``checker`` run from ``root`` with its defaults."""
    py = sys.executable
    if checker == "mypy":
        cmd = [
            py,
            "-m",
            "mypy",
            "--cache-dir",
            str(root.parent / "mypy-cache"),
            "-O",
            "json",
            *files,
        ]
    elif checker in ("pyright", "basedpyright"):
        cmd = [_exe(checker), "--pythonpath", py, "--outputjson", *files]
    elif checker == "pyrefly":
        cmd = [
            _exe(checker),
            "check",
            "--python-interpreter-path",
            py,
            "--output-format",
            "json",
            *files,
        ]
    else:
        cmd = [
            _exe(checker),
            "check",
            "--python",
            py,
            "--output-format",
            "concise",
            "--color",
            "never",
            *files,
        ]
    proc = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=900, check=False)
    out = proc.stdout
    assert proc.returncode in (0, 1), (
        f"{checker} rc={proc.returncode}\n{out[-3000:]}\n{proc.stderr[-3000:]}"
    )
    found: dict[str, set[int]] = {f: set() for f in files}

    def add(path: str, line: int) -> None:
        found.setdefault(Path(path).name, set()).add(line)

    if checker == "mypy":
        for raw in out.splitlines():
            if raw.startswith("{"):
                item = json.loads(raw)
                if item["severity"] == "error":
                    add(item["file"], item["line"])
    elif checker in ("pyright", "basedpyright"):
        for item in json.loads(out[out.index("{") :])["generalDiagnostics"]:
            if item["severity"] == "error":
                add(item["file"], item["range"]["start"]["line"] + 1)
    elif checker == "pyrefly":
        for item in json.loads(out[out.index("{") :])["errors"]:
            if item.get("severity", "error") == "error":
                add(item["path"], item["line"])
    else:
        for raw in out.splitlines():
            head, _, rest = raw.partition(": error[")
            if rest:
                path, line, _col = head.rsplit(":", 2)
                add(path, int(line))
    return found


CHECKERS = ("mypy", "pyright", "basedpyright", "pyrefly", "ty")


@pytest.fixture(scope="module")
def initialised(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("initialised") / "proj"
    root.mkdir()
    (root / ".git").mkdir()
    (root / "ok.py").write_text(OK)
    (root / "wrong.py").write_text(WRONG)
    (root / "own_names.py").write_text(OWN_NAMES)
    assert main(["init", str(root)]) == 0
    return root


@pytest.mark.slow
@pytest.mark.parametrize("checker", CHECKERS)
def test_after_init_each_checker_sees_the_platform(checker: str, initialised: Path) -> None:
    """The wrong call is an error, the correct ones are not; also with the whole folder checked
    (``.typings/`` is not checked as project files)."""
    errors = _errors(checker, initialised, ["ok.py", "wrong.py", "own_names.py"])
    assert errors == {"ok.py": set(), "wrong.py": {WRONG_LINE}, "own_names.py": set()}, errors
    if checker != "pyrefly":  # pyrefly checks its project's files with no path given
        whole = _errors(checker, initialised, ["."])
    else:
        whole = _errors(checker, initialised, [])
    assert {name: lines for name, lines in whole.items() if lines} == {"wrong.py": {WRONG_LINE}}, (
        whole
    )


@pytest.mark.slow
@pytest.mark.parametrize("checker", CHECKERS)
def test_before_init_typed_pallas_names_give_no_false_error(checker: str, tmp_path: Path) -> None:
    """No setting at all: typed-pallas's own names and annotations are accepted by every checker."""
    root = _project(tmp_path)
    (root / "own_names.py").write_text(OWN_NAMES)
    assert _errors(checker, root, ["own_names.py"]) == {"own_names.py": set()}


def test_check_says_what_to_do_next_to_jax_pyrefly_stubs(monkeypatch: pytest.MonkeyPatch) -> None:
    real = init.installed_version
    monkeypatch.setattr(
        init,
        "installed_version",
        lambda dist: "1.4.0" if dist == init.JAX_PYREFLY_STUBS else real(dist),
    )
    line = init.coinstall_warning()
    assert line is not None and line.startswith(
        "typed-pallas: jax-pyrefly-stubs 1.4.0 is installed"
    )
    assert "run `typed-pallas init`" in line and "\n" not in line
    assert "pyright, basedpyright, Pylance, pyrefly and ty" in line


def test_no_coinstall_warning_without_jax_pyrefly_stubs() -> None:
    if shutil.which("true") is None:  # pragma: no cover
        pytest.skip("no shell")
    from importlib import metadata

    try:
        metadata.version(init.JAX_PYREFLY_STUBS)
    except metadata.PackageNotFoundError:
        assert init.coinstall_warning() is None
    else:  # pragma: no cover
        pytest.skip("jax-pyrefly-stubs is installed here")
