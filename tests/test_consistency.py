"""The stubs, the platform table and the runtime registry agree, both ways.

The stubs are read with ``ast`` (never imported): each ``CompilerParams`` class in
``stubs/jax-stubs/experimental/pallas/*.pyi`` must be a row of
``typed_pallas._platforms.PARAMS_CLASSES`` with the same platform (the
``typed_pallas.CompilerParams[Literal[...]]`` base and the ``__pallas_platform__``
property), and derive from JAX's class in the row's defining module; every row must
have its stub class. The runtime half asks ``typed_pallas``'s registry for the
platform and backend of JAX's real class, and is skipped cleanly if that is missing.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from typed_pallas import _platforms

ROOT = Path(__file__).resolve().parent.parent
STUB_DIR = ROOT / "stubs" / "jax-stubs" / "experimental" / "pallas"
PACKAGE = "jax.experimental.pallas"


@dataclass(frozen=True)
class StubClass:
    module: str  # public module, e.g. jax.experimental.pallas.tpu
    name: str
    base_platforms: tuple[str, ...]  # from typed_pallas.CompilerParams[Literal["..."]] bases
    property_platform: str | None  # from the __pallas_platform__ return annotation
    jax_bases: tuple[str, ...]  # fully qualified JAX bases, e.g. jax._src.pallas.mosaic.core.CompilerParams


def _module_of(path: Path) -> str:
    return PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}"


def _literal(node: ast.expr) -> str | None:
    """"tpu" from Literal["tpu"] (or typing.Literal["tpu"])."""
    if isinstance(node, ast.Subscript) and ast.unparse(node.value).split(".")[-1] == "Literal":
        if isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, str):
            return node.slice.value
    return None


def parse_stub(path: Path) -> list[StubClass]:
    tree = ast.parse(path.read_text())
    aliases: dict[str, str] = {}  # local name -> fully qualified module or object
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module:
            for a in node.names:
                aliases[a.asname or a.name] = f"{node.module}.{a.name}"
        elif isinstance(node, ast.Import):
            for a in node.names:
                aliases[a.asname or a.name.split(".")[0]] = a.name if a.asname else a.name.split(".")[0]
    found = []
    for node in tree.body:
        if not (isinstance(node, ast.ClassDef) and node.name == "CompilerParams"):
            continue
        platforms, jax_bases = [], []
        for base in node.bases:
            text = ast.unparse(base)
            if isinstance(base, ast.Subscript) and text.startswith("typed_pallas.CompilerParams["):
                lit = _literal(base.slice)
                platforms.append(lit or "?")
            else:
                head, _, rest = text.partition(".")
                jax_bases.append(f"{aliases.get(head, head)}.{rest}" if rest else aliases.get(head, head))
        prop = None
        for item in node.body:
            if isinstance(item, ast.FunctionDef) and item.name == "__pallas_platform__" and item.returns is not None:
                prop = _literal(item.returns)
        found.append(StubClass(_module_of(path), node.name, tuple(platforms), prop, tuple(jax_bases)))
    return found


def stub_classes() -> list[StubClass]:
    return [c for path in sorted(STUB_DIR.glob("*.pyi")) for c in parse_stub(path)]


ROWS = {(row.module, row.name): row for row in _platforms.PARAMS_CLASSES}


def test_every_stub_params_class_is_a_table_row() -> None:
    classes = stub_classes()
    assert classes, "no CompilerParams class found in the stubs"
    for cls in classes:
        row = ROWS.get((cls.module, cls.name))
        assert row is not None, f"{cls.module}.{cls.name} is in the stubs but not in PARAMS_CLASSES"
        assert cls.base_platforms == (row.platform,), (cls, row.platform)
        assert cls.property_platform == row.platform, (cls, row.platform)
        expected_bases = {f"{m}.{row.name}" for m in row.defining_modules}
        assert set(cls.jax_bases) & expected_bases, f"{cls.module}.{cls.name} does not derive from {expected_bases}"


def test_every_table_row_has_its_stub_class() -> None:
    in_stubs = {(c.module, c.name) for c in stub_classes()}
    missing = [f"{m}.{n}" for (m, n) in ROWS if (m, n) not in in_stubs]
    assert not missing, f"PARAMS_CLASSES rows without a stub class: {missing}"


def test_platforms_in_stubs_are_the_table_platforms() -> None:
    used = {p for c in stub_classes() for p in (*c.base_platforms, c.property_platform)}
    assert used <= set(_platforms.PLATFORMS), used
    assert {row.platform for row in _platforms.PARAMS_CLASSES} <= used


def test_parser_sees_a_wrong_platform(tmp_path: Path) -> None:
    """The check above can fail: a class typed for the wrong platform is reported."""
    bad = tmp_path / "tpu.pyi"
    bad.write_text(
        "from typing import Literal\nimport typed_pallas\nfrom jax._src.pallas.mosaic import core as _c\n"
        'class CompilerParams(_c.CompilerParams, typed_pallas.CompilerParams[Literal["gpu"]]):\n'
        "    @property\n"
        '    def __pallas_platform__(self) -> Literal["gpu"]: ...\n'
    )
    (cls,) = parse_stub(bad)
    row = ROWS[(cls.module, cls.name)]
    assert cls.base_platforms != (row.platform,)
    assert cls.jax_bases == ("jax._src.pallas.mosaic.core.CompilerParams",)


# ----------------------------------------------------------------------------- runtime registry


def _registry():  # type: ignore[no-untyped-def]
    try:
        return importlib.import_module("typed_pallas._registry")
    except ImportError as exc:  # the runtime part is not there (yet)
        pytest.skip(f"typed_pallas._registry not importable: {exc}")


def _runtime_class(module: str, name: str) -> type:
    try:
        return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]
    except ImportError as exc:  # e.g. a JAX backend module that needs an optional dependency
        pytest.skip(f"{module} not importable here: {exc}")


@pytest.mark.parametrize("cls", stub_classes(), ids=lambda c: c.module.rsplit(".", 1)[-1])
def test_stub_platform_matches_runtime_registry(cls: StubClass) -> None:
    registry = _registry()
    runtime = _runtime_class(cls.module, cls.name)
    row = ROWS[(cls.module, cls.name)]
    assert registry.platform_of(runtime) == cls.property_platform
    assert registry.backend_of(runtime) == row.backend


@pytest.mark.parametrize("row", _platforms.PARAMS_CLASSES, ids=lambda r: r.backend)
def test_runtime_class_is_the_one_the_stub_names(row: _platforms.ParamsClass) -> None:
    """The public name and the defining module the stub derives from are one class at runtime."""
    public = _runtime_class(row.module, row.name)
    defining = [m for m in row.defining_modules if importlib.util.find_spec(m) is not None]
    assert defining, row
    assert any(getattr(importlib.import_module(m), row.name, None) is public for m in defining)


# ----------------------------------------------------------------------------- docs/checkers.md


def _support_matrix():  # type: ignore[no-untyped-def]
    spec = importlib.util.spec_from_file_location("support_matrix", ROOT / "scripts" / "support_matrix.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclasses look themselves up there
    spec.loader.exec_module(module)
    return module


def test_support_table_in_docs_is_current() -> None:
    """docs/checkers.md's table is what tests/assert_type says (python scripts/support_matrix.py)."""
    sm = _support_matrix()
    doc = sm.DOC.read_text()
    assert sm.splice(doc, sm.render(sm.all_cases())) == doc, "docs/checkers.md drifted: run python scripts/support_matrix.py"


def test_support_table_reads_caught_missed_and_accepted(tmp_path: Path) -> None:
    sm = _support_matrix()
    sample = tmp_path / "check_sample.py"
    sample.write_text(
        "# case: good: fine\nx = 1\n"
        "# case: bad: caught by all\n"
        "y: int = ''  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]"
        "  # pyrefly: ignore[bad-assignment]  # ty: ignore[invalid-assignment]\n"
        "# case: partial: ty misses it\n# expect-miss: ty (no rule)\n"
        "z: int = ''  # type: ignore[assignment]  # pyright: ignore[reportAssignmentType]  # pyrefly: ignore[bad-assignment]\n"
    )
    good, bad, partial = sm.read_cases(sample)
    assert [good.cell(c) for c in sm.CHECKERS] == [sm.ACCEPTED] * 5
    assert [bad.cell(c) for c in sm.CHECKERS] == [sm.CAUGHT] * 5
    assert partial.cell("ty") == sm.MISSED and partial.cell("mypy") == sm.CAUGHT
    assert partial.misses == {"ty": "no rule"}
