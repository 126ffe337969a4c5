"""The support matrix as data: what the packaging tests assert, and what docs/support-matrix.md shows.

One table, two readers: tests/packaging/test_coinstall.py checks every cell against
real installs, and tests/packaging/test_docs.py checks that the generated
Markdown below is, byte for byte, what docs/support-matrix.md contains between its
``<!-- BEGIN generated:... -->`` / ``<!-- END generated:... -->`` markers.
Regenerate after changing a cell::

    python tests/packaging/matrix_data.py --write

What it does not do: run anything. Observed facts live in the tests that check them.
"""

from __future__ import annotations

import re
import sys
from pathlib import Path
from typing import Final, Literal

REPO: Final = Path(__file__).resolve().parents[2]
DOC: Final = REPO / "docs" / "support-matrix.md"

JAX_PYREFLY_STUBS: Final = "jax-pyrefly-stubs==1.4.0"
SHAPE_EXTENSIONS: Final = "pyrefly-shape-extensions==1.4.0"  # its dependency

#: the environments scripts/test runs (scripts/_venv.sh), as (Python, jax) pairs: the
#: ends of the supported JAX range first and last, then Python 3.13 (a smoke subset);
#: test_docs checks them against scripts/_venv.sh and that the running venv is one of them
TESTED_ENVIRONMENTS: Final = (("3.11", "0.10.2"), ("3.12", "0.12.1"), ("3.13", "0.12.0.1"))
#: what each Python runs
ENVIRONMENT_RUNS: Final = {
    "3.11": "the whole test suite but the incremental, daemon and editor cases (`ONCE_TESTS` in `scripts/test`)",
    "3.12": "the whole test suite but the cases that depend on neither Python nor jax run on 3.11 (`ONCE_311_TESTS` in `scripts/test`)",
    "3.13": "a smoke subset (`SMOKE_TESTS` in `scripts/test`: runtime, CLI, plugin cases)",
}
#: the oldest mypy of the declared range (pyproject: mypy>=2.4,<2.5), run on the plugin and
#: CLI slice (`MYPY_OLDEST_TESTS` in scripts/test) over .venv312; the newest is the test pin
MYPY_OLDEST: Final = "2.4.0"

CHECKERS: Final = ("mypy", "pyright", "basedpyright", "pyrefly", "ty")
Checker = Literal["mypy", "pyright", "basedpyright", "pyrefly", "ty"]

#: install sequences: (label, steps); a step is "+ours", "+theirs" (``pip install`` of
#: typed-pallas's wheel / of jax-pyrefly-stubs, with their dependencies) or "-ours",
#: "-theirs" (``pip uninstall -y`` of that package)
SEQUENCES: Final = {
    "typed-pallas first": ("+ours", "+theirs", "-theirs"),
    "jax-pyrefly-stubs first": ("+theirs", "+ours", "-ours"),
}

#: what a checker makes of typed-pallas's stubs, read off a wrong-platform call and a
#: right-platform call of JAX's params classes: "yes" (the wrong call is an error and the
#: right one is not), "wrong passes" (neither is an error: no platform types, the mistake
#: goes unreported), "right flagged" (both are: JAX's classes without their platform)
Ours = Literal["yes", "wrong passes", "right flagged"]
#: what each checker sees after each step that is checked: (typed-pallas's stubs, sees
#: jax-pyrefly-stubs'). None = that package is not installed at that point.
#: mypy runs with the jax.numpy workaround, pyright and basedpyright with stubPath
#: (docs/support-matrix.md).
Seen = tuple[Ours | None, bool | None]
_BOTH: Final[dict[str, Seen]] = {
    "mypy": ("yes", True),
    # take their jax-stubs (an __init__.pyi, no "partial\n") for all of jax in site-packages:
    # jax._src resolves nowhere, JAX's params classes derive from Unknown and fit anything
    "pyright": ("wrong passes", True),
    "basedpyright": ("wrong passes", True),
    # take the first jax-stubs on the path (theirs, in site-packages) and no second one
    "pyrefly": ("right flagged", True),
    "ty": ("right flagged", True),
}
EXPECTED: Final[dict[tuple[str, str], dict[str, Seen]]] = {
    ("typed-pallas first", "+theirs"): _BOTH,
    ("typed-pallas first", "-theirs"): dict.fromkeys(CHECKERS, ("yes", None)),
    ("jax-pyrefly-stubs first", "+ours"): _BOTH,
    ("jax-pyrefly-stubs first", "-ours"): dict.fromkeys(CHECKERS, (None, True)),
}

_STEP_TEXT: Final = {
    "+ours": "install typed-pallas",
    "+theirs": "install jax-pyrefly-stubs",
    "-ours": "uninstall typed-pallas",
    "-theirs": "uninstall jax-pyrefly-stubs",
}


_OURS_TEXT: Final[dict[Ours | None, str]] = {
    "yes": "yes",
    "wrong passes": "**no** (the wrong call passes)",
    "right flagged": "**no** (the right call is an error)",
    None: "–",
}


def _cell(seen: Seen) -> str:
    ours, theirs = seen
    return f"{_OURS_TEXT[ours]} / {'–' if theirs is None else ('yes' if theirs else '**no**')}"


def render_coinstall() -> str:
    """The co-installation table (Markdown)."""
    lines = [
        "| install order | step | " + " | ".join(CHECKERS) + " |",
        "|---|---|" + "---|" * len(CHECKERS),
    ]
    for label, steps in SEQUENCES.items():
        for step in steps:
            row = EXPECTED.get((label, step))
            if row is None:
                continue
            cells = " | ".join(_cell(row[checker]) for checker in CHECKERS)
            lines.append(f"| {label} | then {_STEP_TEXT[step]} | {cells} |")
    return "\n".join(lines) + "\n"


def render_environments() -> str:
    lines = ["| Python | jax | runs |", "|---|---|---|"]
    for python, jax in TESTED_ENVIRONMENTS:
        lines.append(f"| {python} | {jax} | {ENVIRONMENT_RUNS[python]} |")
    return "\n".join(lines) + "\n"


#: checker -> how the test suite runs it (the versions come from pyproject's "test" extra)
CHECKER_USE: Final = {
    "mypy": 'stubs + plugin (`plugins = ["typed_pallas_mypy"]`, or `typed-pallas check`)',
    "pyright": "stubs (also Pylance, which bundles pyright)",
    "basedpyright": "stubs",
    "pyrefly": "stubs (`--preset default` or a config; the unconfigured `basic` preset misses argument errors)",
    "ty": "stubs",
}


def pinned_checkers() -> dict[str, str]:
    """checker -> version pinned in pyproject's [project.optional-dependencies].test."""
    import tomllib

    extra = tomllib.loads((REPO / "pyproject.toml").read_text())["project"][
        "optional-dependencies"
    ]["test"]
    pins = {}
    for requirement in extra:
        name, _, version = requirement.partition("==")
        if name.strip() in CHECKER_USE and version:
            pins[name.strip()] = version.strip()
    return pins


def render_checkers() -> str:
    pins = pinned_checkers()
    lines = ["| checker | tested version | what typed-pallas gives it |", "|---|---|---|"]
    for checker, use in CHECKER_USE.items():
        version = pins.get(checker, "not pinned")
        if checker == "mypy":
            version += f"; {MYPY_OLDEST} (the oldest of the declared range: plugin, CLI and language server tests)"
        lines.append(f"| {checker} | {version} | {use} |")
    return "\n".join(lines) + "\n"


SECTIONS: Final = {
    "coinstall": render_coinstall,
    "environments": render_environments,
    "checkers": render_checkers,
}


def generated_sections(text: str) -> dict[str, str]:
    """name -> content between ``<!-- BEGIN generated:name -->`` and its END marker."""
    found = {}
    for match in re.finditer(
        r"<!-- BEGIN generated:(\w+) -->\n(.*?)<!-- END generated:\1 -->", text, re.S
    ):
        found[match.group(1)] = match.group(2)
    return found


def rewrite(text: str) -> str:
    for name, render in SECTIONS.items():
        text = re.sub(
            rf"(<!-- BEGIN generated:{name} -->\n)(.*?)(<!-- END generated:{name} -->)",
            lambda m, r=render: m.group(1) + r() + m.group(3),  # type: ignore[misc]
            text,
            flags=re.S,
        )
    return text


if __name__ == "__main__":
    if sys.argv[1:] == ["--write"]:
        DOC.write_text(rewrite(DOC.read_text()))
    else:
        for section, render in SECTIONS.items():
            print(f"<!-- {section} -->\n{render()}")
