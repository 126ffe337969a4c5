"""``typed-pallas platforms``: the inferred map (text, JSON, Mermaid) of a small project."""

from __future__ import annotations

import importlib.util
import json
import os
from collections.abc import Iterator
from pathlib import Path

import pytest
from fixtures import kernops_site

from typed_pallas import _platforms, _versions
from typed_pallas_mypy import platform_map
from typed_pallas_mypy.cli import main

TPU_OPS = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


def add_one_tpu(x):
    return pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())(x)
"""

MODEL = """\
import jax
import tpu_ops


def run(x):
    if jax.default_backend() == "gpu":
        return tpu_ops.add_one_tpu(x)
    return x
"""


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("map-cache"))  # jax analysed once for the module


@pytest.fixture
def project(tmp_path: Path) -> Iterator[Path]:
    old = os.getcwd()
    os.chdir(tmp_path)
    try:
        yield tmp_path
    finally:
        os.chdir(old)


def test_map_of_a_guarded_cross_module_call(project: Path, cache: str) -> None:
    (project / "tpu_ops.py").write_text(TPU_OPS)
    (project / "model.py").write_text(MODEL)
    maps = platform_map.build_map(["tpu_ops.py", "model.py"], cache_dir=cache)

    data = json.loads(platform_map.render(maps, "json"))
    by_module = {m["module"]: m for m in data["modules"]}
    (fn,) = by_module["tpu_ops"]["functions"]
    assert fn["name"] == "tpu_ops.add_one_tpu" and fn["platforms"] == ["tpu"]
    assert "pl.pallas_call at tpu_ops.py:11 takes Mosaic TPU params" in fn["chain"][0]
    (site,) = by_module["model"]["decisions"]
    assert (site["line"], site["column"], site["function"]) == (7, 16, "model.run")
    assert site["message"] == "Compiler params for platform tpu cannot be used for gpu lowering."
    assert site["requires"] == ["tpu_ops.add_one_tpu"]
    assert platform_map.render(maps, "json") == platform_map.render(list(reversed(maps)), "json")

    text = platform_map.render(maps, "text")
    assert "add_one_tpu (tpu_ops.py:10): lowers only for tpu" in text
    assert "decided at model.py:7 in run: Compiler params for platform tpu" in text

    mermaid = platform_map.render(maps, "mermaid")
    assert mermaid.startswith("graph LR\n")
    assert 'f_tpu_ops_add_one_tpu["tpu_ops.add_one_tpu<br/>tpu"]' in mermaid
    assert "d_model_7_16_0 -.->|fails| f_tpu_ops_add_one_tpu" in mermaid


OPS_CLASS = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


class Ops:
    def add_one(self, x):
        return pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())(x)
"""

#: an edit above both functions that changes neither: every line below moves by 8
UNRELATED = '''"""Ops, with a helper above them."""

import os


def unrelated():
    return os.sep

'''


def _functions(maps: list[platform_map.ModuleMap]) -> dict[str, dict[str, object]]:
    data = json.loads(platform_map.render(maps, "json"))
    return {f["name"]: f for m in data["modules"] for f in m["functions"]}


def test_json_identity_fields_stay_while_an_unrelated_edit_moves_where(
    project: Path, cache: str
) -> None:
    """``module``, ``qualname``, ``path`` (from the package root) and ``reason`` name an
    entry whatever is edited around it; ``where`` and ``chain`` hold line numbers."""
    (project / "pkg").mkdir()
    (project / "pkg" / "__init__.py").write_text("")
    (project / "pkg" / "ops.py").write_text(TPU_OPS)
    (project / "pkg" / "cls.py").write_text(OPS_CLASS)
    before = _functions(platform_map.build_map(["pkg"], cache_dir=cache))
    (project / "pkg" / "ops.py").write_text(UNRELATED + TPU_OPS)
    (project / "pkg" / "cls.py").write_text(UNRELATED + OPS_CLASS)
    after = _functions(platform_map.build_map(["pkg"], cache_dir=cache))

    identity = ("name", "module", "qualname", "path", "reason", "platforms")
    expected = {
        "pkg.ops.add_one_tpu": (
            "pkg.ops.add_one_tpu",
            "pkg.ops",
            "add_one_tpu",
            "pkg/ops.py",
            "its pl.pallas_call at pkg/ops.py takes Mosaic TPU params",
            ["tpu"],
        ),
        "pkg.cls.Ops.add_one": (
            "pkg.cls.Ops.add_one",
            "pkg.cls",
            "Ops.add_one",
            "pkg/cls.py",
            "its pl.pallas_call at pkg/cls.py takes Mosaic TPU params",
            ["tpu"],
        ),
    }
    for found in (before, after):
        assert {name: tuple(f[key] for key in identity) for name, f in found.items()} == expected
    assert before["pkg.ops.add_one_tpu"]["where"] == "pkg/ops.py:10"
    assert after["pkg.ops.add_one_tpu"]["where"] == "pkg/ops.py:18"
    assert before["pkg.cls.Ops.add_one"]["where"] == "pkg/cls.py:11"
    assert after["pkg.cls.Ops.add_one"]["where"] == "pkg/cls.py:19"
    assert before["pkg.ops.add_one_tpu"]["chain"] != after["pkg.ops.add_one_tpu"]["chain"]


def test_no_pallas_code_gives_an_empty_map(
    project: Path, cache: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    (project / "plain.py").write_text("def f(x):\n    return x + 1\n")
    maps = platform_map.build_map(["plain.py"], cache_dir=cache)
    assert all(not m.functions and not m.decisions for m in maps)
    assert platform_map.render(maps, "mermaid") == "graph LR\n"
    assert "No platform facts" in platform_map.render(maps, "text")

    monkeypatch.setattr(platform_map, "DEFAULT_MAP_CACHE", cache)
    assert main(["platforms", "--output", "json", "plain.py"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [m["functions"] + m["decisions"] for m in data["modules"]] == [[]]


UNGUARDED = """\
import tpu_ops


def run(x):
    return tpu_ops.add_one_tpu(x)
"""


@pytest.mark.slow  # a configuration change makes mypy analyse jax again
def test_platform_option_sets_the_configured_platforms(
    project: Path, cache: str, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """``--platform gpu``: the unguarded call of a TPU-only function is decided against the
    configured platforms (a decision site); without it nothing is configured, nothing decided."""
    from typed_pallas_mypy import config

    monkeypatch.delenv(config.PLATFORMS_ENV, raising=False)
    monkeypatch.delenv(config.CONFIG_ENV, raising=False)
    monkeypatch.setattr(platform_map, "DEFAULT_MAP_CACHE", cache)
    (project / ".git").mkdir()
    (project / "tpu_ops.py").write_text(TPU_OPS)
    (project / "app.py").write_text(UNGUARDED)
    argv = ["platforms", "--output", "json", "app.py", "tpu_ops.py"]
    assert main(argv) == 0  # unconfigured first: the cache the other tests left serves it
    app = json.loads(capsys.readouterr().out)["modules"][0]
    assert app["module"] == "app" and app["decisions"] == []
    assert main([*argv, "--platform", "gpu"]) == 0
    app = json.loads(capsys.readouterr().out)["modules"][0]
    assert [(d["line"], d["function"], d["message"]) for d in app["decisions"]] == [
        (5, "app.run", "Compiler params for platform tpu cannot be used for gpu lowering.")
    ]
    assert config.PLATFORMS_ENV not in os.environ  # the option does not outlive the command


# jax's own ops that every supported release ships (jax 0.12.1 removed the Triton ones)
ATTEND = """\
import jax
from jax.experimental.pallas.ops.gpu.hopper_matmul_mgpu import matmul
from jax.experimental.pallas.ops.tpu.flash_attention import flash_attention


def attend(q, k, v, config):
    if jax.default_backend() == "tpu":
        return flash_attention(q, k, v)
    return matmul(q, k, None, config)
"""

FLASH = "jax.experimental.pallas.ops.tpu.flash_attention.flash_attention"
MATMUL = "jax.experimental.pallas.ops.gpu.hopper_matmul_mgpu.matmul"


def test_the_map_lists_the_library_kernels_a_module_uses(project: Path, cache: str) -> None:
    (project / "attend.py").write_text(ATTEND)
    (maps,) = platform_map.build_map(["attend.py"], cache_dir=cache)
    # Mosaic GPU params never lower for tpu; rocm refuses them from JAX 0.12 (before
    # it, JAX's answer depends on what was lowered before: nothing is said of rocm)
    release = _versions.release(_versions.installed_version("jax") or "") or (0,)
    matmul = (
        ("cuda",) if release[:2] >= _platforms.MOSAIC_GPU_ROCM_REFUSED_FROM else ("cuda", "rocm")
    )
    assert [(f.name, f.platforms) for f in maps.libraries] == [(MATMUL, matmul), (FLASH, ("tpu",))]
    assert maps.libraries[1].where == "jax/experimental/pallas/ops/tpu/flash_attention.py:140"
    assert maps.decisions == []  # each kernel on its own platform's path
    data = platform_map.to_json([maps])
    assert [lib["name"] for lib in data["modules"][0]["libraries"]] == [MATMUL, FLASH]  # type: ignore[index]
    flash = data["modules"][0]["libraries"][1]  # type: ignore[index]
    assert (flash["module"], flash["qualname"], flash["path"], flash["reason"]) == (
        "jax.experimental.pallas.ops.tpu.flash_attention",
        "flash_attention",
        "jax/experimental/pallas/ops/tpu/flash_attention.py",
        "it calls _flash_attention at jax/experimental/pallas/ops/tpu/flash_attention.py",
    )
    text = platform_map.render([maps], "text")
    assert (
        f"  uses {FLASH} (jax/experimental/pallas/ops/tpu/flash_attention.py:140): lowers only for tpu"
        in text
    )
    mermaid = platform_map.render([maps], "mermaid")
    assert (
        '[("jax.experimental.pallas.ops.tpu.flash_attention.flash_attention<br/>tpu")]' in mermaid
    )


def test_library_option_maps_an_installed_library(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.syspath_prepend(str(kernops_site.SITE))  # installed like a third party
    assert main(["platforms", "--library", "kernops.gpu.softmax"]) == 0
    out = capsys.readouterr().out.splitlines()
    assert out[0] == "kernops.gpu.softmax (kernops/gpu/softmax.py)"
    assert out[1].startswith("  softmax (kernops/gpu/softmax.py:")
    assert out[1].endswith("): lowers only for cuda, rocm")
    assert main(["platforms", "--library", "jax.experimental.pallas.ops.tpu", "-o", "json"]) == 0
    data = json.loads(capsys.readouterr().out)
    by_name = {f["name"]: f["platforms"] for m in data["modules"] for f in m["functions"]}
    assert by_name[FLASH] == ["tpu"]
    (gmm,) = [f for m in data["modules"] for f in m["functions"] if f["name"].endswith("ops.gmm")]
    assert (gmm["module"], gmm["qualname"], gmm["path"]) == (
        "jax.experimental.pallas.ops.tpu.megablox.ops",
        "gmm",
        "jax/experimental/pallas/ops/tpu/megablox/ops.py",
    )
    assert by_name["jax.experimental.pallas.ops.tpu.megablox.ops.gmm"] == ["tpu"]
    modules = {m["module"]: m["path"] for m in data["modules"]}
    assert modules["jax.experimental.pallas.ops.tpu.megablox.ops"] == (
        "jax/experimental/pallas/ops/tpu/megablox/ops.py"
    )
    assert MATMUL not in by_name  # only what is under the module named


def test_library_option_on_a_module_the_release_does_not_ship(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """jax 0.12.1 removed its Triton ops: naming one is the usage error of a module not
    installed, no crash; at a release that ships it, its map."""
    module = "jax.experimental.pallas.ops.gpu.softmax"
    shipped = importlib.util.find_spec(module) is not None
    assert main(["platforms", "--library", module]) == (0 if shipped else 2)
    captured = capsys.readouterr()
    if shipped:
        assert captured.out.splitlines()[1].endswith("): lowers only for cuda, rocm")
    else:
        assert captured.out == ""
        assert captured.err.startswith(f"typed-pallas: error: {module}: no installed module")


def test_library_option_errors(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["platforms", "--library", "no_such_library.ops"]) == 2
    assert capsys.readouterr().err == (
        "typed-pallas: error: no_such_library.ops: no installed module of that name (or it "
        "could not be read); name an installed module, e.g. jax.experimental.pallas.ops\n"
    )
    assert main(["platforms", "--library", "jax.experimental.pallas.ops", str(tmp_path)]) == 2
    assert "--library maps an installed library, not PATHS" in capsys.readouterr().err
    assert main(["platforms"]) == 2
    assert capsys.readouterr().err == (
        "typed-pallas: error: name the files or folders to map, or --library MODULE; "
        "see `typed-pallas platforms --help`\n"
    )
