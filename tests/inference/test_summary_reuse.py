"""Summaries a module's next reading takes from its previous one (``inference.reuse``).

The daemon reads an edited module again; a summary whose reuse key is the same is taken
from the previous reading. Each taken summary must be the one a fresh reading works out:
checked on every module of jax's Pallas ops (real code) after edits of each top-level
function that keep every line where it was, and on the forms a key could miss (a
kernel's callee, a guard helper, a cache dictionary filled elsewhere, ``global``)."""

from __future__ import annotations

import ast
import os
from pathlib import Path
from typing import Any

import pytest
from library_fakes import HEADER, jax_ops_modules

from typed_pallas_mypy.inference import Inference, Located, reader
from typed_pallas_mypy.inference.model import EntryEvent, FunctionSummary
from typed_pallas_mypy.inference.parsing import parse_module


def _read(
    source: bytes, reuse: reader.Reusable | None, module: str = "m", package: bool = False
) -> tuple[dict[str, FunctionSummary], reader.Reusable]:
    """Every summary of a reading of ``source``, and what it hands to the next one."""
    facts, sites = reader.read_module_and_sites(
        source, module, is_package=package, lazy=True, reuse=reuse
    )
    assert facts is not None and sites is not None
    summaries = {name: facts.functions[name] for name in facts.functions}
    return summaries, sites.summarised


def _edited(source: bytes, stmt: ast.FunctionDef | ast.AsyncFunctionDef, body: str) -> bytes:
    """``source`` with ``stmt``'s body replaced by the one line ``body``, padded with
    blank lines: every line of the module stays where it was."""
    lines = source.splitlines(keepends=True)
    first_stmt = stmt.body[0]
    first = min([first_stmt.lineno, *(d.lineno for d in getattr(first_stmt, "decorator_list", ()))])
    last = stmt.end_lineno or stmt.lineno
    indent = lines[first_stmt.lineno - 1][: first_stmt.col_offset].decode()
    replaced = [f"{indent}{body}\n".encode()] + [b"\n"] * (last - first)
    return b"".join(lines[: first - 1] + replaced + lines[last:])


def _editable(source: bytes) -> list[ast.FunctionDef | ast.AsyncFunctionDef]:
    """The module's top-level functions whose body starts on a line of its own."""
    return [
        stmt
        for stmt in parse_module(source).body
        if isinstance(stmt, (ast.FunctionDef, ast.AsyncFunctionDef))
        and stmt.body[0].lineno > stmt.lineno
        and not getattr(stmt.body[0], "decorator_list", None)
    ]


#: What an edited function becomes: a function that runs nothing, one that reads the
#: platform (a guard helper), one that runs a TPU-only op
_BODIES = ("return None", "return jax.default_backend() == 'tpu'", "return pltpu.sync_copy")


def test_reused_summaries_are_what_a_fresh_reading_gives_on_jax_ops() -> None:
    checked = reused = 0
    for module, source, package in jax_ops_modules():
        _, kept = _read(source, {}, module, package)
        for number, stmt in enumerate(_editable(source)):
            edited = _edited(source, stmt, _BODIES[number % len(_BODIES)])
            fresh, _ = _read(edited, None, module, package)
            taken, handed = _read(edited, kept, module, package)
            assert taken == fresh, (module, stmt.name)
            checked += len(fresh)
            reused += sum(1 for key, summary in handed.items() if kept.get(key) is summary)
    assert checked > 1000
    assert reused > checked // 3  # many functions do not reach the edited one


def _summaries_after(before: str, after: str) -> tuple[dict[str, FunctionSummary], set[str]]:
    """The summaries of ``after`` read after ``before`` (checked against a fresh
    reading), and the names of those taken from the reading of ``before``."""
    _, kept = _read((HEADER + before).encode(), {})
    taken, handed = _read((HEADER + after).encode(), kept)
    fresh, _ = _read((HEADER + after).encode(), None)
    assert taken == fresh
    return taken, {name for (name, _), summary in handed.items() if kept.get((name, _)) is summary}


def test_an_edit_keeps_the_summaries_of_functions_that_do_not_reach_it() -> None:
    before = "def a(x):\n    return x\n\ndef b(x):\n    return x + 1\n"
    after = "def a(x):\n    return x\n\ndef b(x):\n    return x + 2\n"
    _, taken = _summaries_after(before, after)
    assert taken == {"a"}


def test_a_kernel_is_read_again_when_a_function_it_calls_changes() -> None:
    before = "def helper(ref):\n    return ref\n\ndef kernel(x_ref, o_ref):\n    helper(x_ref)\n"
    after = (
        "def helper(ref):\n    pltpu.sync_copy(ref, ref)\n\n"
        "def kernel(x_ref, o_ref):\n    helper(x_ref)\n"
    )
    summaries, taken = _summaries_after(before, after)
    assert taken == set()
    assert [e.what for e in summaries["kernel"].body_evidence] == ["pltpu.sync_copy"]


def test_a_guard_helper_changed_changes_its_callers() -> None:
    before = "def on_tpu():\n    return True\n\ndef f(x):\n    return on_tpu()\n"
    after = "def on_tpu():\n    return jax.default_backend() == 'tpu'\n\ndef f(x):\n    return on_tpu()\n"
    _, taken = _summaries_after(before, after)
    assert "f" not in taken


def test_every_use_of_a_cache_dictionary_counts() -> None:
    """A memoized build reads every use of its cache: one filled elsewhere changes it."""
    template = (
        "_CACHE = {{}}\n\n"
        "def build():\n    return pl.pallas_call(lambda x_ref, o_ref: None, out_shape=None)\n\n"
        "def fill(key):\n    {fill}\n\n"
        "def run(key, x):\n    fn = build()\n    _CACHE[key] = fn\n    fn = _CACHE[key]\n    return fn(x)\n"
    )
    before = template.format(fill="return None")
    after = template.format(fill="_CACHE.pop(key)")
    _, taken = _summaries_after(before, after)
    assert "run" not in taken and "build" in taken


@pytest.mark.parametrize(
    "extra",
    ["", "# a global word\n", "def g():\n    global X\n    X = 2\n"],
    ids=["plain", "word", "global"],
)
def test_a_module_writing_global_keeps_no_keys(extra: str) -> None:
    before = "X = 1\n\ndef f():\n    return X\n\n" + extra + "def h():\n    return 1\n"
    after = "X = 1\n\ndef f():\n    return X\n\n" + extra + "def h():\n    return 2\n"
    _, taken = _summaries_after(before, after)
    assert taken == (set() if "global X" in extra else {"f"})


def test_a_function_that_moved_is_read_again() -> None:
    before = "def a(x):\n    return x\n\ndef b(x):\n    return x\n"
    after = "def a(x):\n    y = x\n    return y\n\ndef b(x):\n    return x\n"
    summaries, taken = _summaries_after(before, after)
    assert taken == set()
    assert summaries["b"].line == 11


@pytest.mark.parametrize("alias", ["functools.partial(_kern)", "_kern"])
def test_a_kernel_named_through_a_module_level_alias_is_followed(alias: str) -> None:
    """``kern = functools.partial(_kern)`` at the top level: a call passing ``kern`` to
    ``pl.pallas_call`` reads ``_kern``'s body, which ``run`` does not name."""
    template = (
        "def _kern(x_ref, o_ref):\n    {body}\n\n"
        f"kern = {alias}\n\n"
        "def run(x):\n    return pl.pallas_call(kern, out_shape=x)(x)\n"
    )
    before = template.format(body="o_ref[...] = x_ref[...]")
    after = template.format(body="pltpu.sync_copy(x_ref, o_ref)")
    summaries, taken = _summaries_after(before, after)
    assert "run" not in taken
    entry = summaries["run"].steps[0]
    assert isinstance(entry, EntryEvent)
    assert [e.what for e in entry.evidence] == ["pltpu.sync_copy"]


class _Project:
    """One project module, ``app.py`` in ``folder`` (the plugin's view of mypy's build)."""

    def __init__(self, folder: Path) -> None:
        self.path = folder / "app.py"

    def locate(self, module: str) -> Located | None:
        if module != "app":
            return None
        return Located("app", "app.py", str(self.path), False, project=True)


@pytest.mark.usefixtures("rules_answer")
@pytest.mark.parametrize("keep_keys", [True, False], ids=["daemon", "other"])
def test_the_daemon_reuses_from_a_modules_first_reading(tmp_path: Path, keep_keys: bool) -> None:
    """In the daemon (``keep_keys``) the first reading of a project module keeps reuse
    keys, so the first edit already reuses; elsewhere only from the second reading on
    (a cold or warm run reads a module once and keeps none). The reuse between readings
    is the rules' reader's: this goes with the rules (``rules_answer``)."""
    project = _Project(tmp_path)
    source = HEADER + "def kernel(x_ref, o_ref):\n    pltpu.sync_copy(x_ref, o_ref)\n\n"
    source += "def other(x):\n    return {}\n"
    project.path.write_text(source.format(1))
    engine = Inference([], None, project, lazy=True, keep_keys=keep_keys)
    summarised: list[str] = []
    original = reader._ModuleReader._summarize

    def counting(self: reader._ModuleReader, node: Any, scope: Any) -> FunctionSummary:
        summarised.append(scope.qualname)
        return original(self, node, scope)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(reader._ModuleReader, "_summarize", counting)
        for value in (1, 2):
            project.path.write_text(source.format(value))
            os.utime(project.path, ns=(value * 10**9, value * 10**9))
            engine.forget(frozenset({"app"}))
            assert engine.requirement("app.kernel") is None  # called by nobody: a kernel body
            assert engine.requirement("app.other") is None
    assert summarised == (["kernel", "other", "other"] if keep_keys else ["kernel", "other"] * 2)


def test_a_module_that_is_not_ascii_keeps_no_keys() -> None:
    """Python reads an identifier in the NFKC form: ``ｈelper`` (a full-width h) is
    ``helper``, which a search for the word ``helper`` in the source does not find."""
    template = (
        "def helper(ref):\n    {body}\n\n"
        "def kernel(x_ref, o_ref):\n    \uff48elper(x_ref)\n\n"
        "def other(x):\n    return {value}\n"
    )
    before = template.format(body="return ref", value=1)
    after = template.format(body="pltpu.sync_copy(ref, ref)", value=2)
    summaries, taken = _summaries_after(before, after)
    assert taken == set()
    assert [e.what for e in summaries["kernel"].body_evidence] == ["pltpu.sync_copy"]
