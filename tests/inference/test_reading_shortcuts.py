"""What the reader does not walk: stretches of source without ``def``, ``lambda`` or
``:=`` (``scopes.SourceText``), and values written with constants only (a tuned table:
``reader._literal_platform_strings``). Each shortcut must give what the walk gives:
checked on every module of jax's Pallas ops (real code) against a reader that walks
everything, and on the forms that could fool it."""

from __future__ import annotations

import ast

import pytest
from library_fakes import HEADER, MakeLib, jax_ops_modules, reader_for

from typed_pallas_mypy.inference import reader
from typed_pallas_mypy.inference.parsing import parse_module
from typed_pallas_mypy.inference.scopes import SourceText


def _nodes_on(source: bytes, line: int) -> list[ast.stmt]:
    """The statements of ``source`` (a module) starting on ``line``."""
    return [stmt for stmt in parse_module(source).body if stmt.lineno == line]


@pytest.mark.parametrize("word", ["lambda: 1", "(y := 2)", "def"])
def test_a_stretch_with_a_defining_word_may_define(word: str) -> None:
    source = f"x = 1\ny = {word!s}\n".encode() if word != "def" else b"x = 1\ndef f(): pass\n"
    text = SourceText(source)
    assert not text.may_define(_nodes_on(source, 1))
    assert text.may_define(_nodes_on(source, 2))


def test_words_inside_other_words_do_not_count_but_strings_do() -> None:
    source = b"default = undef = 1\nname = 'a lambda in a string'\n"
    text = SourceText(source)
    assert not text.may_define(_nodes_on(source, 1))  # ``default``, ``undef``
    assert text.may_define(_nodes_on(source, 2))  # only costs the walk


@pytest.mark.parametrize("newline", [b"\n", b"\r\n", b"\r"])
def test_lines_are_counted_as_ast_counts_them(newline: bytes) -> None:
    source = newline.join([b"a = 1", b"b = 2", b"c = lambda: 3", b"d = 4", b""])
    text = SourceText(source)
    assert [text.may_define(_nodes_on(source, line)) for line in (1, 2, 3, 4)] == [
        False,
        False,
        True,
        False,
    ]


def test_characters_str_would_split_on_do_not_end_a_line() -> None:
    """A form feed, ``\\x0b`` or ``\\x1c`` ends no line for Python's tokenizer (nor for
    ``bytes.splitlines``; ``str.splitlines`` would count one)."""
    source = b"x = 1\x0c\ny = lambda: 2\n# \x0b\x1c\nz = 3\n"
    body = parse_module(source).body
    assert [stmt.lineno for stmt in body] == [1, 2, 4]
    assert [SourceText(source).may_define([stmt]) for stmt in body] == [False, True, False]


def test_a_decorated_definition_starts_at_its_first_decorator() -> None:
    source = b"@deco(lambda: 1)\nclass C:\n    pass\n"
    (cls,) = parse_module(source).body
    assert cls.lineno == 2
    assert SourceText(source).may_define([cls])
    assert not SourceText(b"@deco(1)\nclass C:\n    pass\n").may_define(
        parse_module(b"@deco(1)\nclass C:\n    pass\n").body
    )


def test_nothing_or_no_place_is_answered_safely() -> None:
    text = SourceText(b"x = 1\n")
    assert not text.may_define([])
    assert text.may_define([ast.Pass()])  # no place: walk


class _WalksEverything(SourceText):
    def may_define(self, nodes: object) -> bool:  # type: ignore[override]
        return True


TRICKY = b"""\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

TABLE = {"v5e": (1, 2), "v6e": (-3, 4.0)}
BACKENDS = {"tpu": 1, "gpu": 2}
MIXED = {**TABLE, "x": (jax.default_backend(),)}

def outer(x):
    def kernel(x_ref, o_ref):
        o_ref[...] = x_ref[...]
    y = [(n := 1) for _ in range(2)]
    return pl.pallas_call(kernel, out_shape=x, grid=(n,))(x)

def leaf(x):
    return x + 1

@jax.jit
def decorated(x, f=lambda v: v):
    return f(x)

class Box:
    def method(self, x):
        return (lambda: x)()

def uses_tables(key):
    if key in TABLE:
        pltpu.semaphore_signal(key)
    if key in BACKENDS:
        pltpu.semaphore_signal(key)
"""


def _read(source: bytes, module: str, package: bool, text: type[SourceText]) -> reader.ModuleFacts:
    tree = parse_module(source)
    found = reader._ModuleReader(tree, module, package, source)
    found.text = text(source)
    return found.facts()


def _modules() -> list[tuple[str, bytes, bool]]:
    return [("tricky", TRICKY, False), *jax_ops_modules()]


def test_the_text_shortcut_reads_what_the_walk_reads() -> None:
    modules = _modules()
    assert len(modules) >= 30  # jax's ops are there to read
    compared = 0
    for module, source, package in modules:
        short = _read(source, module, package, SourceText)
        walked = _read(source, module, package, _WalksEverything)
        assert list(short.functions) == list(walked.functions), module
        for qualname in walked.functions:
            assert short.functions[qualname] == walked.functions[qualname], (module, qualname)
            compared += 1
        assert short.classes == walked.classes, module
        assert short.aliases == walked.aliases, module
        assert short.bindings == walked.bindings, module
    assert compared >= 500
    tricky = _read(TRICKY, "tricky", False, SourceText)
    # the definitions only the walk finds are found: a kernel, a lambda default, a
    # lambda in a method (``:=`` binds ``n``: ``outer`` reads it as a local)
    assert "outer.<locals>.kernel" in tricky.functions
    assert any(name.startswith("<lambda:") for name in tricky.functions)
    assert any(name.startswith("Box.method.<locals>.<lambda:") for name in tricky.functions)


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        ('{"v5e": (1, 2), "v6e": (-3, 4.0)}', False),
        ('{"TPU": 1}', True),
        ('[1, {"x"}, ("gpu",)]', True),
        ("3", False),
        ("{**other}", None),
        ("[f(x)]", None),
        ("(1, name)", None),
    ],
)
def test_a_value_of_constants_only_says_whether_it_names_a_platform(
    value: str, expected: bool | None
) -> None:
    assert reader._literal_platform_strings(ast.parse(value, mode="eval").body) is expected


def test_a_table_naming_a_platform_guards_a_kernel_body_and_one_of_numbers_does_not(
    make_lib: MakeLib,
) -> None:
    body = HEADER + (
        'SIZES = {"v5e": (128, 256), "v6e": (-1, 512)}\n'
        'BY_BACKEND = {"tpu": 1, "gpu": 2}\n'
        "def sized(x_ref, key):\n"
        "    if key in SIZES:\n"
        "        pltpu.make_async_copy(x_ref, x_ref, x_ref)\n"
        "def by_backend(x_ref, key):\n"
        "    if key in BY_BACKEND:\n"
        "        pltpu.make_async_copy(x_ref, x_ref, x_ref)\n"
    )
    root = make_lib({"tpkg/__init__.py": "", "tpkg/bodies.py": body})
    facts = reader_for(root)
    assert [e.backends for e in facts.definition("tpkg.bodies.sized").body_evidence] == [
        ("mosaic_tpu",)
    ]
    assert facts.definition("tpkg.bodies.by_backend").body_evidence == ()


def test_a_statement_test_is_found_as_going_down_finds_it() -> None:
    """``Sites._find`` takes an ``if``, ``while`` or ``assert`` test from the statements'
    index (``_statement_tests``): the same expression and parent as going down from the
    module, for every such test of jax's ops and of the forms below."""
    nested = b"""\
def f(x):
    while x:
        try:
            assert x, "no"
        except* ValueError:
            if (x and
                    x.y):
                pass
        else:
            match x:
                case 1:
                    if x: pass
    for i in x:
        if i: pass
    else:
        if not x: pass
    return [y for y in x if y]
"""
    compared = 0
    for module, source, package in [("nested", nested, False), *_modules()]:
        sites = reader.sites(source, module, package)
        assert sites is not None, module
        tests = reader._statement_tests(sites.reader.tree.body)
        for where, found in tests.items():
            assert sites._descend(where, False) == found, (module, where)
            compared += 1
        if module == "nested":
            assert len(tests) == 6  # the comprehension's ``if`` is not a statement's
    assert compared >= 800


def test_a_statement_may_mention_a_word_only_where_its_lines_write_it() -> None:
    source = b"x = f(1)\ny = g.f\nz = ff + f_2\n@f\ndef h():\n    pass\n"
    text = SourceText(source)
    statements = parse_module(source).body
    assert [text.may_mention(stmt, b"f") for stmt in statements] == [True, True, False, True]
    assert not text.may_mention(statements[0], b"g")  # the next line writes it, not this one
