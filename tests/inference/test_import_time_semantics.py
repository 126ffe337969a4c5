"""What a library module binds when it is imported, as Python runs it.

A module's body runs once at import: ``if TYPE_CHECKING:`` takes its ``else`` (the name is
False outside type checkers), a literal condition takes its one branch, a ``try`` whose
import fails runs its ``except``. The engine reads a library as it runs, so a name bound
only for type checkers is not bound, and a decorator bound in two ways (the typed one
under ``TYPE_CHECKING`` or a ``try``, a no-op fallback beside it) keeps the function when
every way keeps it. This is how docs/library-authors.md tells authors to annotate without
a run-time dependency: each snippet of that page is read here as written, and must give the
same facts as the library with no annotation. Each firing case has a silent twin: a
binding that only type checkers see, a fallback that wraps the function in something the
engine cannot read.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from library_fakes import HEADER, MakeLib, platforms_of, reader_for

TPU = {"tpu"}
DOC = Path(__file__).resolve().parents[2] / "docs" / "library-authors.md"

KERNEL = """
def _k(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1
"""


def _requirement(make_lib: MakeLib, source: str, name: str) -> set[str] | None:
    facts = reader_for(make_lib({"shimlib/__init__.py": source}))
    return platforms_of(facts.requirement(f"shimlib.{name}"))


def _tpu_op(decorator: str, name: str = "op") -> str:
    return f"""
{decorator}
def {name}(x):
    return pl.pallas_call(_k, out_shape=x, compiler_params=pltpu.CompilerParams())(x)
"""


#: the two ways docs/library-authors.md binds the typed decorator beside a no-op one
TYPED_OR_NO_OP = {
    "type-checking": """
from typing import TYPE_CHECKING
if TYPE_CHECKING:
    from typed_pallas import platform
else:
    def platform(name):
        return lambda fn: fn
""",
    "try-import": """
try:
    from typed_pallas import platform
except ImportError:
    def platform(name):
        return lambda fn: fn
""",
}


@pytest.mark.parametrize("binding", sorted(TYPED_OR_NO_OP))
def test_a_typed_decorator_with_a_no_op_fallback_keeps_the_kernel(
    make_lib: MakeLib, binding: str
) -> None:
    source = HEADER + TYPED_OR_NO_OP[binding] + KERNEL + _tpu_op('@platform("tpu")')
    assert _requirement(make_lib, source, "op") == TPU


def test_a_fallback_that_wraps_unreadably_stays_silent(make_lib: MakeLib) -> None:
    source = (
        HEADER
        + """
import somewhere_else
try:
    from typed_pallas import platform
except ImportError:
    def platform(name):
        return lambda fn: somewhere_else.wrap(fn)
"""
        + KERNEL
        + _tpu_op('@platform("tpu")')
    )
    assert _requirement(make_lib, source, "op") is None


def test_identity_decorators_keep_the_function(make_lib: MakeLib) -> None:
    source = (
        HEADER
        + """
def keep(fn):
    return fn

def keep_factory(*args, **kwargs):
    return lambda fn: fn
"""
        + KERNEL
        + _tpu_op("@keep", "kept")
        + _tpu_op("@keep_factory(1, tag='x')", "kept_by_factory")
    )
    assert _requirement(make_lib, source, "kept") == TPU
    assert _requirement(make_lib, source, "kept_by_factory") == TPU


def test_names_bound_only_for_type_checkers_are_not_bound_at_run_time(make_lib: MakeLib) -> None:
    source = (
        "import typing\n"
        + HEADER
        + KERNEL
        + """
if typing.TYPE_CHECKING:
    def op(x):
        return pl.pallas_call(_k, out_shape=x, compiler_params=pltpu.CompilerParams())(x)
else:
    def op(x):
        return x + 1

if not typing.TYPE_CHECKING:
    def runs(x):
        return pl.pallas_call(_k, out_shape=x, compiler_params=pltpu.CompilerParams())(x)

if False:
    def never(x):
        return pl.pallas_call(_k, out_shape=x, compiler_params=pltpu.CompilerParams())(x)
"""
    )
    # silent: the TPU version of op exists for type checkers only; never is never bound
    assert _requirement(make_lib, source, "op") is None
    assert _requirement(make_lib, source, "never") is None
    # firing: the branch that runs at import
    assert _requirement(make_lib, source, "runs") == TPU


def _doc_snippets() -> dict[str, str]:
    """The page's Python blocks that define a library (first line ``# NAME/__init__.py``)."""
    blocks = re.findall(r"```python\n(.*?)```", DOC.read_text(), flags=re.DOTALL)
    named: dict[str, str] = {}
    for block in blocks:
        first = block.splitlines()[0]
        match = re.match(r"# (\w+)/__init__\.py", first)
        if match:
            named[match.group(1)] = block
    return named


def test_every_library_snippet_of_library_authors_md_keeps_its_kernels(make_lib: MakeLib) -> None:
    snippets = _doc_snippets()
    assert {"mykernels", "shimkernels"} <= set(snippets), sorted(snippets)
    for package, source in snippets.items():
        facts = reader_for(make_lib({f"{package}/__init__.py": source}))
        public = re.findall(r"^def ([a-z]\w*)\(", source, flags=re.MULTILINE)
        found = {name: platforms_of(facts.requirement(f"{package}.{name}")) for name in public}
        kernels = {name for name in public if "pallas_call" in _body(source, name)}
        assert kernels, f"{package}: no kernel in the snippet"
        for name in kernels:
            assert found[name], f"{package}.{name}: no facts from the snippet as written ({found})"


def _body(source: str, name: str) -> str:
    start = source.index(f"def {name}(")
    rest = source[start:]
    following = re.search(r"\n(?=\S)", rest[1:])
    return rest if following is None else rest[: following.start() + 1]
