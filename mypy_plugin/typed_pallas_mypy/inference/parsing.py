"""Python source to syntax trees, as every reader of the engine parses it.

``parse_module`` and ``parse_expression`` are ``ast.parse`` without the compiler's
warnings: an invalid escape sequence in a library's string (``"a\\+b"``) must not print
a ``SyntaxWarning`` in the user's mypy run, nor fail the read where warnings are errors
(``-W error``).

What it does not do: catch ``SyntaxError`` (an unparsable module is its caller's to
treat as unknown).
"""

from __future__ import annotations

import ast
import warnings


def parse_module(source: str | bytes, filename: str = "<unknown>") -> ast.Module:
    """A module's syntax tree, without compiler warnings."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(source, filename=filename)


def parse_expression(text: str) -> ast.expr:
    """An expression written in a string (a quoted annotation), read as
    ``parse_module`` reads a module."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return ast.parse(text, mode="eval").body
