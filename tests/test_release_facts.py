"""The stubs against what each checked JAX release has (stubs/releases/jax-VERSION.json).

The facts files are written by ``scripts/jax_release_facts.py``, one per release of
``typed_pallas._versions.CHECKED_RELEASES``. Stubs cannot branch on jax's version, so they
type the union of the releases, and every name (and params field and constructor
parameter) that some release lacks carries a mark saying which releases have it
(``# jax >= 0.12.1 only``). This test reads the stubs' text and the facts, with no jax:

* a name the stubs type must exist at some checked release;
* its mark (or no mark: every release) must name exactly the releases that have it;
* a public name of a release that no stub types must be listed in ``UNTYPED`` with why
  (a name behind JAX's deprecation ``__getattr__`` need not be typed);
* the facts file of the installed jax matches the installed jax (regenerated, not edited).

The meta-tests feed ``release_facts.problems`` wrong stubs and facts, to show each check fails.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
import release_facts as rf

from typed_pallas import _versions

#: the runtime names the stubs leave out on purpose: (module, name) -> why. None today.
UNTYPED: dict[tuple[str, str], str] = {}
#: the Pallas modules of the facts that have no stub at all (the stub package is partial:
#: checkers read these from the jax wheel)
UNSTUBBED = {
    "jax.experimental.pallas.fuser": "not stubbed: no params, no platform to type",
    **dict.fromkeys(
        ("jax.pallas", "jax.pallas.tpu", "jax.pallas.tpu_sc", "jax.pallas.mosaic_gpu"),
        "not stubbed on purpose: a jax-stubs/pallas/ folder makes pyright (stubPath) take "
        "jax-stubs for all of jax; checkers read JAX's own jax.pallas (docs/checkers.md)",
    ),
    "jax.pallas.fuser": "not stubbed: jax.experimental.pallas.fuser's alias",
}


def test_there_is_a_facts_file_per_checked_release() -> None:
    assert sorted(rf.load_facts()) == sorted(_versions.CHECKED_RELEASES)


def test_every_module_of_the_facts_is_stubbed_or_listed() -> None:
    stubbed = set(rf.stub_modules())
    assert not stubbed & set(UNSTUBBED), "stubbed now: take it out of UNSTUBBED"
    for version, facts in rf.load_facts().items():
        for module in facts["modules"]:
            assert module in stubbed or module in UNSTUBBED, (
                f"jax {version} has {module}: stub it (stubs/jax-stubs/) or list it in UNSTUBBED"
            )


@pytest.mark.parametrize("module", sorted(rf.stub_modules()))
def test_the_stub_follows_the_facts(module: str) -> None:
    path = rf.stub_modules()[module]
    problems = rf.problems(module, path, rf.load_facts(), UNTYPED)
    assert not problems, "\n".join(problems)


@pytest.mark.slow
def test_the_facts_file_of_this_jax_is_current() -> None:
    proc = subprocess.run(
        [sys.executable, str(rf.ROOT / "scripts" / "jax_release_facts.py"), "--check"],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr


# ----------------------------------------------------------------------------- markers


@pytest.mark.parametrize(
    ("marker", "expected"),
    [
        ("jax >= 0.12 only", {"0.12.0.1", "0.12.1"}),
        ("jax >= 0.12.1 only", {"0.12.1"}),
        ("jax < 0.12 only", {"0.10.2"}),
        ("jax < 0.12.1 only", {"0.10.2", "0.12.0.1"}),
        ("jax >= 0.12, < 0.12.1 only", {"0.12.0.1"}),
    ],
)
def test_releases_of_marker(marker: str, expected: set[str]) -> None:
    assert rf.releases_of_marker(marker, ("0.10.2", "0.12.0.1", "0.12.1")) == expected


# ----------------------------------------------------------------------------- meta-tests

MODULE = "jax.experimental.pallas.demo"


def _facts(**names: list[str]) -> dict[str, dict[str, Any]]:
    """Facts for three releases; ``names["r0_10_2"]`` are the public names at 0.10.2..."""
    out = {}
    for version in ("0.10.2", "0.12.0.1", "0.12.1"):
        public = names["r" + version.replace(".", "_")]
        out[version] = {
            "jax": version,
            "modules": {MODULE: {"public": public, "modules": [], "deprecated": {}, "removed": {}}},
            "params": {
                f"{MODULE}.CompilerParams": {
                    "fields": ["a", "b"] if version == "0.12.1" else ["a"],
                    "constructor": [{"name": "a"}, {"name": "b"}]
                    if version == "0.12.1"
                    else [{"name": "a"}],
                }
            },
        }
    return out


FACTS = _facts(
    r0_10_2=["CompilerParams", "old", "everywhere"],
    r0_12_0_1=["CompilerParams", "old", "everywhere"],
    r0_12_1=["CompilerParams", "new", "everywhere"],
)
GOOD = """\
from x import everywhere as everywhere
from x import old as old  # type: ignore[attr-defined]  # jax < 0.12.1 only
from x import new as new  # jax >= 0.12.1 only

class CompilerParams:
    a: int = 0
    b: int = 0  # jax >= 0.12.1 only
    def __init__(
        self,
        a: int = 0,
        b: int = 0,  # jax >= 0.12.1 only
    ) -> None: ...
"""


def _problems(tmp_path: Path, text: str, facts: dict[str, dict[str, Any]] = FACTS) -> list[str]:
    path = tmp_path / "demo.pyi"
    path.write_text(text)
    return rf.problems(MODULE, path, facts, {})


def test_meta_the_right_stub_passes(tmp_path: Path) -> None:
    assert _problems(tmp_path, GOOD) == []


def test_meta_a_name_at_no_release_fails(tmp_path: Path) -> None:
    text = GOOD + "from x import gone as gone\n"
    assert _problems(tmp_path, text) == [
        "demo.pyi:13: jax.experimental.pallas.demo.gone exists at no checked release "
        "(0.10.2, 0.12.0.1, 0.12.1)"
    ]


def test_meta_an_unmarked_or_wrongly_marked_name_fails(tmp_path: Path) -> None:
    unmarked = GOOD.replace("  # jax >= 0.12.1 only\n\nclass", "\n\nclass")
    assert _problems(tmp_path, unmarked) == [
        "demo.pyi:3: jax.experimental.pallas.demo.new exists at 0.12.1 but is not marked"
    ]
    wrong = GOOD.replace("# jax < 0.12.1 only", "# jax < 0.12 only")
    assert _problems(tmp_path, wrong) == [
        "demo.pyi:2: jax.experimental.pallas.demo.old exists at 0.10.2, 0.12.0.1 but is "
        "marked 'jax < 0.12 only'"
    ]


def test_meta_a_runtime_name_missing_from_the_stub_fails(tmp_path: Path) -> None:
    text = GOOD.replace("from x import everywhere as everywhere\n", "")
    assert _problems(tmp_path, text) == [
        f"{MODULE}.everywhere (jax {v}) is neither in the stub nor in UNTYPED"
        for v in ("0.10.2", "0.12.0.1", "0.12.1")
    ]
    path = tmp_path / "demo.pyi"
    assert rf.problems(MODULE, path, FACTS, {(MODULE, "everywhere"): "why"}) == []


def test_meta_a_deprecated_name_need_not_be_typed(tmp_path: Path) -> None:
    facts = json.loads(json.dumps(FACTS))
    facts["0.12.1"]["modules"][MODULE]["deprecated"] = {"legacy": "use new"}
    assert _problems(tmp_path, GOOD, facts) == []


def test_meta_params_fields_and_parameters_are_checked(tmp_path: Path) -> None:
    unmarked_field = GOOD.replace("    b: int = 0  # jax >= 0.12.1 only\n", "    b: int = 0\n")
    assert _problems(tmp_path, unmarked_field) == [
        f"demo.pyi:7: {MODULE}.CompilerParams fields b exists at 0.12.1 but is not marked"
    ]
    missing = GOOD.replace("        b: int = 0,  # jax >= 0.12.1 only\n", "")
    assert _problems(tmp_path, missing) == [
        f"{MODULE}.CompilerParams constructor b (jax 0.12.1) is missing from the stub"
    ]
