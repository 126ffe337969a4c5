"""Modules an editable install maps through an import hook (``install_finders``), read as
text: setuptools' ``MAPPING``, ``editables``' ``map_module`` calls, scikit-build-core's
``install({...})``, ``.pth`` path lines; a finder that is not a literal is left out."""

from __future__ import annotations

from pathlib import Path

from typed_pallas_mypy.inference import Inference
from typed_pallas_mypy.inference.install_finders import finders_of

KERNEL = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def double(x):
    return pl.pallas_call(_body, out_shape=x, compiler_params=pltpu.CompilerParams())(x)
"""


def _project(tmp_path: Path) -> Path:
    """A project outside every site folder: ``src/mykernels/{__init__,ops}.py``."""
    pkg = tmp_path / "project" / "src" / "mykernels"
    pkg.mkdir(parents=True)
    (pkg / "__init__.py").write_text("from mykernels.ops import double\n")
    (pkg / "ops.py").write_text(KERNEL)
    return pkg


def _site(tmp_path: Path, files: dict[str, str]) -> Path:
    site = tmp_path / "site-packages"
    site.mkdir()
    for name, text in files.items():
        (site / name).write_text(text)
    return site


def _map(
    site: Path, tmp_path: Path, prefix: str = "mykernels"
) -> dict[str, tuple[str, ...] | None]:
    engine = Inference([str(site)], str(tmp_path / "cache"))
    return {
        name: tuple(sorted(req.platforms)) if req is not None else None
        for name, req in engine.module_map(prefix)
    }


def _setuptools(pkg: Path, mapping: str | None = None) -> dict[str, str]:
    literal = mapping if mapping is not None else repr({"mykernels": str(pkg)})
    return {
        "__editable__.mykernels-0.1.pth": (
            "import __editable___mykernels_0_1_finder; "
            "__editable___mykernels_0_1_finder.install()\n"
        ),
        "__editable___mykernels_0_1_finder.py": (
            "import sys\n"
            f"MAPPING: dict[str, str] = {literal}\n"
            "NAMESPACES: dict[str, list[str]] = {}\n"
            "def install():\n    sys.meta_path.append(object())\n"
        ),
    }


def test_setuptools_finder_mapping(tmp_path: Path) -> None:
    pkg = _project(tmp_path)
    site = _site(tmp_path, _setuptools(pkg))
    assert finders_of(str(site)).modules == {"mykernels": str(pkg)}
    assert _map(site, tmp_path)["mykernels.ops.double"] == ("tpu",)


def test_editables_map_module(tmp_path: Path) -> None:
    pkg = _project(tmp_path)
    site = _site(
        tmp_path,
        {
            "_editable_impl_mykernels.pth": "import _editable_impl_mykernels\n",
            "_editable_impl_mykernels.py": (
                "from editables.redirector import RedirectingFinder as F\n"
                "F.install()\n"
                f"F.map_module('mykernels', {str(pkg / '__init__.py')!r})"
            ),
        },
    )
    assert _map(site, tmp_path)["mykernels.ops.double"] == ("tpu",)


def test_scikit_build_core_install_call(tmp_path: Path) -> None:
    pkg = _project(tmp_path)
    known = {"mykernels": str(pkg / "__init__.py"), "mykernels.ops": str(pkg / "ops.py")}
    site = _site(
        tmp_path,
        {
            "_editable_skbc_mykernels.pth": "import _editable_skbc_mykernels\n",
            "_editable_skbc_mykernels.py": (
                "class ScikitBuildRedirectingFinder: ...\n"
                "def install(known_source_files, known_wheel_files, *args): ...\n"
                f"install({known!r}, {{}}, {{'mykernels': [{str(pkg)!r}]}}, ['mykernels'], "
                "None, False, True, [], [], '')\n"
            ),
        },
    )
    assert finders_of(str(site)).modules == known
    assert _map(site, tmp_path)["mykernels.ops.double"] == ("tpu",)


def test_setuptools_namespaces(tmp_path: Path) -> None:
    """A namespace package's folders (``NAMESPACES``) hold its subpackages."""
    pkg = _project(tmp_path)
    (pkg / "__init__.py").unlink()
    site = _site(tmp_path, _setuptools(pkg, mapping="{}"))
    finder = site / "__editable___mykernels_0_1_finder.py"
    finder.write_text(
        finder.read_text().replace(
            "NAMESPACES: dict[str, list[str]] = {}", f"NAMESPACES = {{'mykernels': [{str(pkg)!r}]}}"
        )
    )
    assert _map(site, tmp_path, "mykernels.ops")["mykernels.ops.double"] == ("tpu",)


def test_pth_path_line(tmp_path: Path) -> None:
    pkg = _project(tmp_path)
    site = _site(tmp_path, {"mykernels.pth": f"# a comment\n{pkg.parent}\n"})
    assert finders_of(str(site)).paths == (str(pkg.parent),)
    assert _map(site, tmp_path)["mykernels.ops.double"] == ("tpu",)


def test_no_finder_no_module(tmp_path: Path) -> None:
    _project(tmp_path)
    site = _site(tmp_path, {})
    assert _map(site, tmp_path) == {}


def test_non_literal_mapping_is_ignored(tmp_path: Path) -> None:
    pkg = _project(tmp_path)
    site = _site(tmp_path, _setuptools(pkg, mapping=f"dict(mykernels={str(pkg)!r})"))
    assert finders_of(str(site)).modules == {}
    assert _map(site, tmp_path) == {}


def test_broken_finder_files_do_not_crash(tmp_path: Path) -> None:
    pkg = _project(tmp_path)
    site = _site(
        tmp_path,
        {
            "a.pth": "import broken_finder\nimport missing_finder\nimport os.path\n",
            "broken_finder.py": "MAPPING = {'mykernels': \n",
            "b.pth": "import relative_finder\n",
            "relative_finder.py": f"MAPPING = {{'mykernels': 'src/mykernels', 1: {str(pkg)!r}}}\n",
            "c.pth": "/no/such/folder\n",
        },
    )
    found = finders_of(str(site))
    assert found.modules == {} and found.paths == ()
    assert _map(site, tmp_path) == {}


def test_cache_follows_the_folder(tmp_path: Path) -> None:
    """A finder installed after a first look is seen (the folder's stamp changed)."""
    pkg = _project(tmp_path)
    site = _site(tmp_path, {})
    assert finders_of(str(site)).modules == {}
    for name, text in _setuptools(pkg).items():
        (site / name).write_text(text)
    assert finders_of(str(site)).modules == {"mykernels": str(pkg)}
