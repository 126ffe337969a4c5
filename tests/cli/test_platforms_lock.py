"""``typed-pallas platforms --lock FILE`` / ``--check FILE``: a library's platform
contract. Lock then check passes; a body-only edit (lines move, the kernel's body changes)
passes; an edit that makes a public function TPU-only fails naming it with its old and new
platforms; a dropped restriction fails the same way; a broken or foreign lock exits 2 with
one line."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from typed_pallas_mypy import platform_map
from typed_pallas_mypy.cli import main

OPS = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def _kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


def tpu_add(x):
    return pl.pallas_call(_kernel, out_shape=x, compiler_params=pltpu.CompilerParams())(x)


def gpu_add(x):
    return pl.pallas_call(_kernel, out_shape=x, compiler_params=pltriton.CompilerParams())(x)


def portable_add(x):
    return pl.pallas_call(_kernel, out_shape=x)(x)


def _private_tpu(x):
    return pl.pallas_call(_kernel, out_shape=x, compiler_params=pltpu.CompilerParams())(x)
"""

#: the same platforms: a docstring and a comment move every line, the kernel body changes
BODY_EDIT = OPS.replace("import jax\n", '"""Ops."""\n\n# moved\nimport jax\n', 1).replace(
    "x_ref[...] + 1", "x_ref[...] * 2 + 1"
)

#: portable_add takes TPU params now
TPU_ONLY = OPS.replace(
    "return pl.pallas_call(_kernel, out_shape=x)(x)",
    "return pl.pallas_call(_kernel, out_shape=x, compiler_params=pltpu.CompilerParams())(x)",
)


@pytest.fixture
def lib(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[Path]:
    """An installed library ``lockedops`` (its ``ops.py`` written by the test), the
    current folder an empty one."""
    site = tmp_path / "site-packages"
    (site / "lockedops").mkdir(parents=True)
    (site / "lockedops" / "__init__.py").write_text("")
    monkeypatch.syspath_prepend(str(site))
    work = tmp_path / "work"
    work.mkdir()
    monkeypatch.chdir(work)
    yield site / "lockedops" / "ops.py"


LIBRARY = ["platforms", "--library", "lockedops"]


def test_lock_then_check(lib: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lib.write_text(OPS)
    assert main([*LIBRARY, "--lock", "platforms.lock"]) == 0
    text = Path("platforms.lock").read_text()
    assert text.splitlines()[4:] == [
        "lockedops.ops.gpu_add: cuda, rocm",
        "    its pl.pallas_call at lockedops/ops.py takes Triton params",
        "lockedops.ops.tpu_add: tpu",
        "    its pl.pallas_call at lockedops/ops.py takes Mosaic TPU params",
    ]
    assert str(lib.parent.parent) not in text and ":1" not in text
    assert capsys.readouterr().out == ""  # the lock goes to the file, not the map to stdout

    assert main([*LIBRARY, "--check", "platforms.lock"]) == 0
    assert "platforms unchanged since platforms.lock" in capsys.readouterr().err

    lib.write_text(BODY_EDIT)
    assert main([*LIBRARY, "--check", "platforms.lock"]) == 0
    captured = capsys.readouterr()
    assert captured.out == "" and "another reason" not in captured.err


def test_a_function_made_tpu_only_fails_the_check(
    lib: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lib.write_text(OPS)
    assert main([*LIBRARY, "--lock", "platforms.lock"]) == 0
    capsys.readouterr()
    lib.write_text(TPU_ONLY)
    assert main([*LIBRARY, "--check", "platforms.lock"]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out == [
        "typed-pallas: the platforms of 1 public name(s) changed since platforms.lock:",
        "  lockedops.ops.portable_add: every platform -> tpu "
        "(its pl.pallas_call at lockedops/ops.py takes Mosaic TPU params)",
        "If that is intended, write the lock again: "
        "typed-pallas platforms --library lockedops --lock platforms.lock",
    ]


def test_a_dropped_restriction_fails_the_check(
    lib: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    lib.write_text(TPU_ONLY)
    assert main([*LIBRARY, "--lock", "platforms.lock"]) == 0
    lib.write_text(OPS.replace("compiler_params=pltriton.CompilerParams()", "interpret=False"))
    capsys.readouterr()
    assert main([*LIBRARY, "--check", "platforms.lock"]) == 1
    out = capsys.readouterr().out
    assert "  lockedops.ops.portable_add: tpu -> every platform (" in out
    assert "  lockedops.ops.gpu_add: cuda, rocm -> every platform (" in out
    assert "tpu_add" not in out


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", "not a typed-pallas platform lock"),
        ('{"modules": []}\n', "not a typed-pallas platform lock"),
        ("# typed-pallas platform lock, format 9: ...\n", "a platform lock of format 9"),
        (
            "# typed-pallas platform lock, format 1: ...\nlockedops.ops.tpu_add tpu\n",
            "platforms.lock:2: not a lock line",
        ),
        (
            "# typed-pallas platform lock, format 1: ...\nlockedops.ops.tpu_add: TPU!\n",
            "platforms.lock:2: not a lock line",
        ),
        (
            "# typed-pallas platform lock, format 1: ...\n    a reason first\n",
            "platforms.lock:2: a reason line that follows no name",
        ),
        (
            "# typed-pallas platform lock, format 1: ...\na.b: tpu\na.b: tpu\n",
            "platforms.lock:3: a.b is listed twice",
        ),
    ],
)
def test_a_broken_or_foreign_lock_exits_2(
    lib: Path, capsys: pytest.CaptureFixture[str], text: str, message: str
) -> None:
    lib.write_text(OPS)
    Path("platforms.lock").write_text(text)
    assert main([*LIBRARY, "--check", "platforms.lock"]) == 2
    captured = capsys.readouterr()
    (line,) = captured.err.splitlines()
    assert line.startswith("typed-pallas: error: platforms.lock") and message in line
    assert "Traceback" not in captured.err and captured.out == ""


def test_an_unreadable_lock_exits_2(lib: Path, capsys: pytest.CaptureFixture[str]) -> None:
    lib.write_text(OPS)
    assert main([*LIBRARY, "--check", "missing.lock"]) == 2
    assert capsys.readouterr().err == (
        "typed-pallas: error: missing.lock: no such lock file; make it with --lock missing.lock\n"
    )
    Path("binary.lock").write_bytes(b"\xff\xfe\x00garbage")
    assert main([*LIBRARY, "--check", "binary.lock"]) == 2
    assert "cannot read the lock file" in capsys.readouterr().err


def test_lock_and_check_exclude_each_other(lib: Path) -> None:
    with pytest.raises(SystemExit) as exited:
        main([*LIBRARY, "--lock", "a.lock", "--check", "a.lock"])
    assert exited.value.code == 2


def test_a_lock_round_trips() -> None:
    entries = {
        "pkg.b": platform_map.LockEntry(("tpu",), "it calls pkg._k at pkg/__init__.py"),
        "pkg.a": platform_map.LockEntry(("cuda", "rocm")),
    }
    text = platform_map.render_lock(entries, "typed-pallas platforms --library pkg")
    assert platform_map.parse_lock(text) == entries
    assert text.index("pkg.a: cuda, rocm") < text.index("pkg.b: tpu")


def test_reasons_lose_line_numbers_and_heads() -> None:
    note = (
        "tpu_add (lockedops/ops.py:11) lowers only for tpu: "
        "its pl.pallas_call at lockedops/ops.py:12 takes Mosaic TPU params"
    )
    assert platform_map._stable_reason(note) == (
        "its pl.pallas_call at lockedops/ops.py takes Mosaic TPU params"
    )
    other = "make (k.py:3) returns a kernel that lowers only for tpu: its call at k.py:4:2"
    assert platform_map._stable_reason(other) == (
        "returns a kernel that lowers only for tpu: its call at k.py"
    )


@pytest.fixture(scope="module")
def map_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("map-cache"))  # jax analysed once for the module


def _project_package(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, map_cache: str, files: dict[str, str]
) -> Path:
    """A repository in ``tmp_path`` (the current folder) with the package ``mypkg`` made
    of ``files`` (name to source); its folder."""
    (tmp_path / ".git").mkdir()
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(platform_map, "DEFAULT_MAP_CACHE", map_cache)
    pkg = tmp_path / "mypkg"
    pkg.mkdir()
    for name, source in files.items():
        (pkg / name).write_text(source)
    return pkg


@pytest.mark.slow
def test_a_projects_own_package_by_path(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    map_cache: str,
) -> None:
    files = {"__init__.py": "", "ops.py": OPS}
    pkg = _project_package(tmp_path, monkeypatch, map_cache, files)
    assert main(["platforms", "mypkg", "--lock", "platforms.lock"]) == 0
    text = Path("platforms.lock").read_text()
    assert "mypkg.ops.tpu_add: tpu\n    its pl.pallas_call at mypkg/ops.py takes" in text
    assert "_private_tpu" not in text and str(tmp_path) not in text
    assert "# Made by: typed-pallas platforms mypkg --lock FILE" in text

    (pkg / "ops.py").write_text(BODY_EDIT)
    assert main(["platforms", "mypkg", "--check", "platforms.lock"]) == 0
    (pkg / "ops.py").write_text(TPU_ONLY)
    capsys.readouterr()
    assert main(["platforms", "mypkg", "--check", "platforms.lock"]) == 1
    assert "  mypkg.ops.portable_add: every platform -> tpu (" in capsys.readouterr().out
    Path("platforms.lock").write_text("nonsense\n")
    assert main(["platforms", "mypkg", "--check", "platforms.lock"]) == 2


#: a package that keeps its kernels in a private module and re-exports some of them
REEXPORTING_INIT = "from ._ops import tpu_add, gpu_add\nfrom ._ops import portable_add as _hidden\n"


def test_a_kernel_re_exported_from_a_private_module_is_locked_by_its_public_name(
    lib: Path,
) -> None:
    (lib.parent / "_ops.py").write_text(OPS)
    (lib.parent / "__init__.py").write_text(REEXPORTING_INIT)
    lib.write_text("")
    assert main([*LIBRARY, "--lock", "platforms.lock"]) == 0
    assert Path("platforms.lock").read_text().splitlines()[4:] == [
        "lockedops.gpu_add: cuda, rocm",
        "    its pl.pallas_call at lockedops/_ops.py takes Triton params",
        "lockedops.tpu_add: tpu",
        "    its pl.pallas_call at lockedops/_ops.py takes Mosaic TPU params",
    ]


@pytest.mark.slow
def test_a_projects_re_exported_kernel_is_locked_by_its_public_name(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, map_cache: str
) -> None:
    files = {"__init__.py": REEXPORTING_INIT, "_ops.py": OPS}
    _project_package(tmp_path, monkeypatch, map_cache, files)
    assert main(["platforms", "mypkg", "--lock", "platforms.lock"]) == 0
    text = Path("platforms.lock").read_text()
    assert "mypkg.tpu_add: tpu\n" in text and "mypkg.gpu_add: cuda, rocm\n" in text
    assert "_ops." not in text.replace("mypkg/_ops.py", "") and "_hidden" not in text
