"""The stubs, the platform table and the runtime registry agree, both ways.

``typed_pallas._platforms.PARAMS_CLASSES`` is the one table; everything here is derived
from it, never from a second copy:

* the table itself: its literal types, tuples and derived mappings say the same;
* the stubs, read with ``ast`` (never imported): each ``CompilerParams`` class in
  ``stubs/jax-stubs/experimental/pallas/*.pyi`` is a row with the same platform (the
  ``typed_pallas.CompilerParams[Literal[...]]`` base and the ``__pallas_platform__``
  property) and derives from JAX's class in the row's defining module; every row has
  its stub class; every stub module belongs to one row, and imports nothing from
  another backend's private package;
* the runtime: ``typed_pallas``'s registry answers each row's platform and backend,
  refuses exactly the lowering platforms the row does not serve, and each row's
  registration module, private package and alias are what JAX and ``typed_pallas``
  really have. A backend module that cannot be imported here (Mosaic GPU without absl)
  skips, with its reason.
"""

from __future__ import annotations

import ast
import importlib
import importlib.util
import inspect
import typing
from dataclasses import dataclass
from pathlib import Path

import pytest
from script_loader import load_script

import typed_pallas
from typed_pallas import _jaxcompat, _platforms, _registry
from typed_pallas._errors import PlatformMismatchError

ROOT = Path(__file__).resolve().parent.parent
STUB_DIR = ROOT / "stubs" / "jax-stubs" / "experimental" / "pallas"
PACKAGE = "jax.experimental.pallas"


@dataclass(frozen=True)
class StubClass:
    module: str  # public module, e.g. jax.experimental.pallas.tpu
    name: str
    base_platforms: tuple[str, ...]  # from typed_pallas.CompilerParams[Literal["..."]] bases
    property_platform: str | None  # from the __pallas_platform__ return annotation
    jax_bases: tuple[
        str, ...
    ]  # fully qualified JAX bases, e.g. jax._src.pallas.mosaic.core.CompilerParams


def _module_of(path: Path) -> str:
    return PACKAGE if path.stem == "__init__" else f"{PACKAGE}.{path.stem}"


def _literal(node: ast.expr) -> str | None:
    """ "tpu" from Literal["tpu"] (or typing.Literal["tpu"])."""
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
                aliases[a.asname or a.name.split(".")[0]] = (
                    a.name if a.asname else a.name.split(".")[0]
                )
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
                jax_bases.append(
                    f"{aliases.get(head, head)}.{rest}" if rest else aliases.get(head, head)
                )
        prop = None
        for item in node.body:
            if (
                isinstance(item, ast.FunctionDef)
                and item.name == "__pallas_platform__"
                and item.returns is not None
            ):
                prop = _literal(item.returns)
        found.append(
            StubClass(_module_of(path), node.name, tuple(platforms), prop, tuple(jax_bases))
        )
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
        assert set(cls.jax_bases) & expected_bases, (
            f"{cls.module}.{cls.name} does not derive from {expected_bases}"
        )


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


def _imports_of(path: Path) -> set[str]:
    """Every module a stub file imports from (``from X import ...`` and ``import X``)."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom) and node.module:
            found.add(node.module)
            found.update(f"{node.module}.{a.name}" for a in node.names)
        elif isinstance(node, ast.Import):
            found.update(a.name for a in node.names)
    return found


def _row_of_module(module: str) -> _platforms.ParamsClass | None:
    for row in _platforms.PARAMS_CLASSES:
        if module in (row.module, *row.other_public_modules):
            return row
    return None


def test_every_backend_stub_module_belongs_to_one_row() -> None:
    """A stub module per public backend module of the table, and no stub module outside it."""
    in_stubs = {_module_of(path) for path in STUB_DIR.glob("*.pyi")} - {PACKAGE}
    in_table = {
        m for row in _platforms.PARAMS_CLASSES for m in (row.module, *row.other_public_modules)
    }
    assert in_stubs == in_table


@pytest.mark.parametrize("path", sorted(STUB_DIR.glob("*.pyi")), ids=lambda p: p.stem)
def test_backend_stubs_import_no_other_backends_private_package(path: Path) -> None:
    row = _row_of_module(_module_of(path))
    if row is None:
        return  # jax.experimental.pallas itself re-exports from every backend
    others = [r.private_package for r in _platforms.PARAMS_CLASSES if r.backend != row.backend]
    crossing = sorted(
        m for m in _imports_of(path) for other in others if m == other or m.startswith(f"{other}.")
    )
    assert not crossing, f"{path.name} ({row.backend}) imports from another backend: {crossing}"


# ----------------------------------------------------------------------------- the table itself


@pytest.mark.parametrize(
    ("literal", "values"),
    [
        (_platforms.Platform, _platforms.PLATFORMS),
        (_platforms.Backend, _platforms.BACKENDS),
        (_platforms.LoweringPlatform, _platforms.LOWERING_PLATFORMS),
        (_platforms.LoweringName, _platforms.LOWERING_NAMES),
        (_platforms.TargetPlatform, _platforms.TARGET_PLATFORMS),
    ],
    ids=["Platform", "Backend", "LoweringPlatform", "LoweringName", "TargetPlatform"],
)
def test_literal_types_are_the_tuples(literal: object, values: tuple[str, ...]) -> None:
    assert typing.get_args(literal) == values


def test_the_table_is_consistent() -> None:
    rows = _platforms.PARAMS_CLASSES
    assert tuple(row.backend for row in rows) == _platforms.BACKENDS
    assert {row.platform for row in rows} == set(_platforms.PLATFORMS)
    assert len({row.alias for row in rows}) == len(rows)
    for row in rows:
        assert row.lowers_on and row.lowers_on <= _platforms.LOWERING_SET, row
        assert {_platforms.PLATFORM_OF_LOWERING[p] for p in row.lowers_on} == {row.platform}, row
        assert row.custom_calls and row.registration_module.startswith(f"{row.private_package}."), (
            row
        )
        assert all(m.startswith(f"{row.private_package}.") for m in row.defining_modules), row
    # every lowering platform belongs to one registry platform, and names cover them all
    assert set(_platforms.LOWERINGS_OF_NAME) == set(_platforms.LOWERING_NAMES)
    assert _platforms.LOWERINGS_OF_NAME["gpu"] == {
        p for p in _platforms.LOWERING_PLATFORMS if _platforms.PLATFORM_OF_LOWERING[p] == "gpu"
    }
    assert frozenset(_platforms.TARGET_PLATFORMS) == _platforms.GUARD_UNIVERSE
    assert frozenset(_platforms.LOWERING_PLATFORMS) == _platforms.LOWERING_SET
    assert set(_platforms.LOWERINGS_OF_GUARD_NAME) == set(_platforms.PLATFORM_NAMES)
    assert set(_platforms.ABSTRACT_DEVICE_KINDS) == set(_platforms.LOWERING_PLATFORMS)
    for lowering, (_kind, device_platform) in _platforms.ABSTRACT_DEVICE_KINDS.items():
        assert device_platform == _platforms.PLATFORM_OF_LOWERING[lowering]


def test_derived_tables_cover_every_row() -> None:
    for row in _platforms.PARAMS_CLASSES:
        assert all(_platforms.KERNEL_OF_CUSTOM_CALL[c] == row.backend for c in row.custom_calls)
        assert (f"{row.private_package}.", row.backend) in _platforms.BACKEND_NAMESPACES
        assert (f"{row.module}.", row.backend) in _platforms.BACKEND_NAMESPACES
        assert _platforms.BACKEND_LABELS[row.backend] == row.kernel_label
        if row.platform == "gpu":
            assert set(row.custom_calls) <= set(_platforms.GPU_CUSTOM_CALLS)
    prefixes = [prefix for prefix, _ in _platforms.BACKEND_NAMESPACES]
    for i, prefix in enumerate(prefixes):  # longest first: no prefix shadows a later one
        assert not any(later.startswith(prefix) for later in prefixes[i + 1 :]), prefix


# ----------------------------------------------------------------------------- runtime registry


def _runtime_class(module: str, name: str) -> type:
    try:
        return getattr(importlib.import_module(module), name)  # type: ignore[no-any-return]
    except ImportError as exc:  # a JAX backend module that needs an optional dependency (absl)
        pytest.skip(f"{module} not importable here: {exc}")


@pytest.mark.parametrize("cls", stub_classes(), ids=lambda c: c.module.rsplit(".", 1)[-1])
def test_stub_platform_matches_runtime_registry(cls: StubClass) -> None:
    runtime = _runtime_class(cls.module, cls.name)
    row = ROWS[(cls.module, cls.name)]
    assert _registry.platform_of(runtime) == cls.property_platform
    assert _registry.backend_of(runtime) == row.backend


@pytest.mark.parametrize("row", _platforms.PARAMS_CLASSES, ids=lambda r: r.backend)
def test_runtime_class_is_the_one_the_stub_names(row: _platforms.ParamsClass) -> None:
    """The public name and the defining module the stub derives from are one class at runtime."""
    public = _runtime_class(row.module, row.name)
    defining = [m for m in row.defining_modules if importlib.util.find_spec(m) is not None]
    assert defining, row
    assert any(getattr(importlib.import_module(m), row.name, None) is public for m in defining)
    assert getattr(typed_pallas, row.alias) is public


@pytest.mark.parametrize("row", _platforms.PARAMS_CLASSES, ids=lambda r: r.backend)
def test_registry_refuses_exactly_what_the_row_does_not_serve(row: _platforms.ParamsClass) -> None:
    cls = _runtime_class(row.module, row.name)
    for lowering in _platforms.LOWERING_PLATFORMS:
        if lowering in row.lowers_on:
            _registry.get_lowering_rule(cls, lowering)  # a rule, or None where JAX has none
            continue
        with pytest.raises(PlatformMismatchError) as info:
            _registry.get_lowering_rule(cls, lowering)
        assert str(info.value) in (
            _platforms.mismatch_message(row.platform, _platforms.PLATFORM_OF_LOWERING[lowering]),
            _platforms.backend_mismatch_message(row.backend, lowering),
        )


@pytest.mark.parametrize("row", _platforms.PARAMS_CLASSES, ids=lambda r: r.backend)
def test_registration_module_registers_the_row_with_jax(row: _platforms.ParamsClass) -> None:
    cls = _runtime_class(row.module, row.name)
    module = _jaxcompat.registration_module(row.backend)
    assert module is not None, f"{row.registration_module} does not import"
    registered = _jaxcompat.jax_registry().get(cls)
    if registered is not None:  # jax 0.12 registers no pl.pallas_call rule for Mosaic GPU
        assert registered[1] == row.platform


def _public_meshes() -> list[tuple[_platforms.ParamsClass, type]]:
    """(row, class) for every mesh class that a row's public modules export."""
    found = []
    for row in _platforms.PARAMS_CLASSES:
        for name in (row.module, *row.other_public_modules):
            try:
                module = importlib.import_module(name)
            except ImportError:  # Mosaic GPU without absl: its meshes are not checked here
                continue
            found += [
                (row, c)
                for n, c in vars(module).items()
                if inspect.isclass(c) and n.endswith("Mesh")
            ]
    return found


def test_public_meshes_come_from_their_rows_private_package() -> None:
    """``_jaxcompat.mesh_backend`` tells a mesh's backend by the row's ``private_package``."""
    meshes = _public_meshes()
    assert meshes, "JAX exports no mesh class at all?"
    for row, mesh_cls in meshes:
        assert mesh_cls.__module__.startswith(f"{row.private_package}."), (row.backend, mesh_cls)
        assert _jaxcompat.mesh_backend(object.__new__(mesh_cls)) == row.backend, mesh_cls
    assert _jaxcompat.mesh_backend(object()) is None


def test_dispatch_keywords_are_the_lowering_names() -> None:
    keywords = [
        name
        for name, p in inspect.signature(typed_pallas.dispatch).parameters.items()
        if p.kind is inspect.Parameter.KEYWORD_ONLY
    ]
    assert keywords == [*_platforms.LOWERING_NAMES, "default"]


# ----------------------------------------------------------------------------- docs/checkers.md


def _support_matrix():  # type: ignore[no-untyped-def]
    return load_script(ROOT / "scripts" / "support_matrix.py")


def test_support_table_in_docs_is_current() -> None:
    """docs/checkers.md's table is what tests/assert_type says (python scripts/support_matrix.py)."""
    sm = _support_matrix()
    doc = sm.DOC.read_text()
    assert sm.splice(doc, sm.render(sm.all_cases())) == doc, (
        "docs/checkers.md drifted: run python scripts/support_matrix.py"
    )


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
