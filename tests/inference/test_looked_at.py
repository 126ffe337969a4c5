"""``Inference.looked_at_since``: the files outside the project the engine's answers
depend on, present or absent (what the plugin's cache keys stamp, ``cache_keys``).

Python takes a module from the first search folder that has it, so an answer depends on
the file read and on the module's absence from each folder searched before; a module not
found at all depends on its absence everywhere. Each absence is one path: the first of
the module's package folders missing in that search folder, else its two files
(``mod.py``, ``mod/__init__.py``). The project's own modules (mypy tracks them) are not
listed."""

from __future__ import annotations

from pathlib import Path

from library_fakes import HEADER

from typed_pallas_mypy.inference import Inference
from typed_pallas_mypy.inference.combine import Located

KERNEL = (
    HEADER
    + """\
def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def double(x):
    return pl.pallas_call(_body, out_shape=x, compiler_params=pltpu.CompilerParams())(x)
"""
)


def _package(root: Path, name: str, text: str = KERNEL) -> Path:
    init = root / name / "__init__.py"
    init.parent.mkdir(parents=True)
    init.write_text(text)
    return init


def test_a_module_found_in_a_later_folder_lists_its_absence_from_the_earlier_one(
    tmp_path: Path,
) -> None:
    first, second = tmp_path / "first", tmp_path / "second"
    first.mkdir()
    init = _package(second, "mylib")
    engine = Inference([str(first), str(second)], None)
    found = engine.requirement("mylib.double")
    assert found is not None and found.platforms == frozenset({"tpu"})
    looked_at = engine.looked_at_since(0)
    assert str(init) in looked_at
    # installing mylib into ``first`` would shadow the one read: either file appearing
    assert str(first / "mylib.py") in looked_at
    assert str(first / "mylib" / "__init__.py") in looked_at
    # nothing is listed under ``second`` but the file read
    assert [p for p in looked_at if p.startswith(str(second))] == [str(init)]
    assert engine.looked_at_since(len(looked_at)) == []


def test_a_module_not_found_lists_where_it_would_appear(tmp_path: Path) -> None:
    site = tmp_path / "site"
    site.mkdir()
    engine = Inference([str(site)], None)
    assert engine.requirement("mylib.sub.double") is None
    looked_at = engine.looked_at_since(0)
    # ``mylib.sub``: its package folder ``mylib`` is missing; ``mylib``: its two files
    assert str(site / "mylib") in looked_at
    assert str(site / "mylib.py") in looked_at
    assert str(site / "mylib" / "__init__.py") in looked_at
    assert all(not Path(p).exists() for p in looked_at)
    # once installed, a new engine finds it (the absent paths are what changed)
    _package(site / "mylib", "sub")
    (site / "mylib" / "__init__.py").write_text("")
    assert Inference([str(site)], None).requirement("mylib.sub.double") is not None


def test_a_module_an_editable_finder_maps_lists_the_mapped_file_and_absences(
    tmp_path: Path,
) -> None:
    """A module read through an editable install's finder is listed by its mapped path
    (outside every site folder); a submodule missing there by its two files."""
    pkg = tmp_path / "project" / "src" / "mykernels"
    init = _package(pkg.parent, "mykernels")
    site = tmp_path / "site-packages"
    site.mkdir()
    (site / "__editable__.mykernels-0.1.pth").write_text(
        "import __editable___mykernels_0_1_finder; __editable___mykernels_0_1_finder.install()\n"
    )
    (site / "__editable___mykernels_0_1_finder.py").write_text(
        f"MAPPING = {{'mykernels': {str(pkg)!r}}}\nNAMESPACES = {{}}\n"
    )
    engine = Inference([str(site)], None)
    assert engine.requirement("mykernels.double") is not None
    assert engine.requirement("mykernels.missing.double") is None
    looked_at = engine.looked_at_since(0)
    assert str(init) in looked_at
    assert str(pkg / "missing.py") in looked_at
    assert str(pkg / "missing" / "__init__.py") in looked_at


class _Project:
    """The project's modules as the plugin gives them (mypy's build): ``app``."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def locate(self, module: str) -> Located | None:
        if module != "app":
            return None
        return Located("app", "app.py", str(self.path), False, project=True)


def test_the_projects_own_modules_are_not_listed(tmp_path: Path) -> None:
    site = tmp_path / "site"
    _package(site, "mylib")
    app = tmp_path / "app.py"
    app.write_text("import mylib\n\n\ndef run(x):\n    return mylib.double(x)\n")
    engine = Inference([str(site)], None, _Project(app))
    found = engine.requirement("app.run")
    assert found is not None and found.platforms == frozenset({"tpu"})
    looked_at = engine.looked_at_since(0)
    assert str(site / "mylib" / "__init__.py") in looked_at  # the library: listed
    assert str(app) not in looked_at  # the project: mypy's own cache tracks it
