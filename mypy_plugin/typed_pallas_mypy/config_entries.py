"""The entries of a typed-pallas configuration: ``Override`` and ``Registry``.

``config`` imports this module only when a configuration has overrides or registries:
the plugin loads its configuration on every mypy run, warm ones included, and creating
these two frozen dataclasses costs about a millisecond. ``config.PluginConfig`` holds
them; see ``config`` for the file format.

What it does not do: read files or check values (``config`` parses and validates).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from typed_pallas._platforms import LOWERINGS_OF_NAME

__all__ = ["Override", "Registry"]


@dataclass(frozen=True)
class Override:
    """One ``[[tool.typed-pallas.overrides]]`` entry, split per pattern.

    ``pattern`` is a mypy module pattern (``pkg.mod``, ``pkg.sub.*`` or ``pkg.*.mod``);
    ``order`` is its position in the file (later wins among unstructured patterns).
    """

    pattern: str
    platforms: frozenset[str]
    order: int = 0
    #: where it was written, for notes (e.g. ``[[tool.typed-pallas.overrides]] #2 in pyproject.toml``)
    origin: str = field(default="", compare=False)

    @property
    def is_concrete(self) -> bool:
        return "*" not in self.pattern

    @property
    def is_structured(self) -> bool:
        """``a.b.*``: a star only as the last component."""
        return (self.pattern.endswith(".*") and "*" not in self.pattern[:-2]) or self.pattern == "*"

    def matches(self, module: str) -> bool:
        return _compile_glob(self.pattern).match(module) is not None


@dataclass(frozen=True)
class Registry:
    """One ``[[tool.typed-pallas.registries]]`` entry: a decorator or call that registers
    a function for a platform (``@kernel_registry.register("flash", Platform.PALLAS,
    Backend.TPU)``). The registered function must lower for the platform it names."""

    #: the fully qualified name of the registering callable (a function, a method by its
    #: class, or a method of a module-level registry object: ``pkg.mod.registry.register``)
    call: str
    #: the keyword of the argument naming the platform, and its position
    platform: str | None
    position: int | None
    #: how the argument's values name platforms: a string literal or the dotted end of a
    #: name (``Backend.TPU``) -> lowering platforms; platform strings map to themselves
    values: tuple[tuple[str, frozenset[str]], ...] = ()
    #: for plain calls: the keyword / position of the registered function (a decorator
    #: registers the function it decorates)
    function: str | None = None
    function_position: int | None = None
    origin: str = field(default="", compare=False)

    def platforms_of(self, value: str) -> frozenset[str] | None:
        """The lowering platforms a value of the platform argument names, if known."""
        for key, platforms in self.values:
            if value == key or value.endswith("." + key):
                return platforms
        return LOWERINGS_OF_NAME.get(value) if value in LOWERINGS_OF_NAME else None


def _compile_glob(pattern: str) -> re.Pattern[str]:
    # mypy's rule: "*" as a component matches zero or more components.
    parts = pattern.split(".")
    expr = re.escape(parts[0]) if parts[0] != "*" else ".*"
    for part in parts[1:]:
        expr += re.escape("." + part) if part != "*" else r"(\..*)?"
    return re.compile(expr + r"\Z")
