"""The guard index's line maps (``module_index.ModuleIndex._lines``): while an index is
built its regions and functions are only appended, and the maps add only what is new;
every lookup then answers as an index holding everything from the start would."""

from __future__ import annotations

from mypy.nodes import Block, FuncDef, MypyFile

from typed_pallas_mypy.transformers.guards import Region
from typed_pallas_mypy.transformers.module_index import ModuleIndex

REGIONS = [
    Region((2, 4), (9, 0), frozenset({"tpu", "cuda"}), "the if at line 1"),
    Region((4, 8), (6, 0), frozenset({"cuda", "rocm"}), "the if at line 3"),
    Region((12, 0), (14, 0), frozenset({"cuda"}), "the else of the if at line 10"),
]

OUTER, INNER, OTHER = (
    FuncDef("outer", [], Block([])),
    FuncDef("inner", [], Block([])),
    FuncDef("other", [], Block([])),
)
#: in the order the walk appends them: a function before the ones nested in it
FUNCTIONS = [((1, 0), (9, 0), OUTER), ((3, 4), (6, 8), INNER), ((11, 0), (15, 0), OTHER)]

PLACES = [(line, column) for line in range(0, 17) for column in (0, 6)]


def _answers(index: ModuleIndex) -> list[object]:
    return [
        (index.guard_at(pos), index.function_at(pos), index.outermost_function_at(pos))
        for pos in PLACES
    ]


def test_maps_grown_while_built_answer_as_maps_built_at_once() -> None:
    whole = ModuleIndex(MypyFile([], []), regions=list(REGIONS), functions=list(FUNCTIONS))
    grown = ModuleIndex(MypyFile([], []))
    for region, function in zip(REGIONS, FUNCTIONS):
        grown.regions.append(region)
        grown.functions.append(function)
        grown.guard_at((1, 0))  # a lookup between appends builds the maps so far
    assert _answers(grown) == _answers(whole)
    inside_both = grown.guard_at((5, 0))
    assert inside_both is not None and inside_both.platforms == frozenset({"cuda"})
    assert [r.why for r in inside_both.regions] == ["the if at line 1", "the if at line 3"]
    only_outer = grown.guard_at((4, 0))  # before the inner region starts
    assert only_outer is not None and only_outer.platforms == frozenset({"tpu", "cuda"})
    assert grown.function_at((4, 0)) is INNER
    assert grown.outermost_function_at((4, 0)) is OUTER
    assert grown.owns(OTHER)


def test_maps_start_again_when_the_lists_are_replaced() -> None:
    index = ModuleIndex(MypyFile([], []), regions=list(REGIONS), functions=list(FUNCTIONS))
    assert index.function_at((12, 0)) is OTHER
    index.functions = FUNCTIONS[:2]  # fewer: the maps cannot have grown into this
    index.regions = REGIONS[:1]
    assert index.function_at((12, 0)) is None
    assert not index.owns(OTHER)
    assert index.guard_at((13, 0)) is None
