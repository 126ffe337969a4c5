"""Warn when the installed JAX is outside the range this typed-pallas release supports.

The supported range is declared once, in the package metadata
(``[project].dependencies`` in pyproject.toml: ``jax>=0.10,<0.13``); this module
reads it back with ``importlib.metadata.requires("typed-pallas")`` and compares it
with the installed ``jax`` and ``jaxlib`` distributions. A version outside the
range gets one ``UnsupportedJaxWarning`` naming both versions and what to do.

What it does not do: import jax (the installed version comes from
``importlib.metadata``, so the mypy plugin can use it too), import ``packaging``
(a small comparison of release numbers is enough here: pre-release, post-release
and local segments are ignored), refuse to run, or raise. Anything unexpected
(no metadata because typed-pallas runs from a source tree, an odd specifier, no
jax installed) means silence: the range check must never be the thing that breaks.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from importlib import metadata
from typing import Final

__all__ = [
    "CHECKED_DISTRIBUTIONS",
    "OutOfRange",
    "UnsupportedJaxWarning",
    "check_jax_range",
    "declared_ranges",
    "unsupported_jax_message",
    "version_in_range",
    "warn_if_unsupported_jax",
]

#: the distribution whose metadata declares the range
DISTRIBUTION: Final = "typed-pallas"
#: the requirements of DISTRIBUTION that are checked against what is installed
CHECKED_DISTRIBUTIONS: Final = ("jax", "jaxlib")


class UnsupportedJaxWarning(UserWarning):
    """The installed jax (or jaxlib) is outside the range typed-pallas declares."""


@dataclass(frozen=True)
class OutOfRange:
    """One installed distribution outside its declared range."""

    name: str  #: "jax" or "jaxlib"
    installed: str  #: the installed version, e.g. "0.13.1"
    specifier: str  #: the declared specifier, e.g. ">=0.10,<0.13"


_REQUIREMENT = re.compile(
    r"^\s*(?P<name>[A-Za-z0-9][A-Za-z0-9._-]*)\s*(?:\[[^\]]*\])?\s*(?:\((?P<paren>[^)]*)\)|(?P<spec>[^;]*))\s*(?:;(?P<marker>.*))?$"
)
_CLAUSE = re.compile(r"^\s*(?P<op>~=|==|!=|<=|>=|<|>)\s*(?P<version>[^\s,]+)\s*$")
_RELEASE = re.compile(r"^\s*v?(?P<release>\d+(?:\.\d+)*)")


def _normalize(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def _release(version: str) -> tuple[int, ...] | None:
    """``"0.12.0.1"`` -> ``(0, 12, 0, 1)``; suffixes (rc, dev, post, +local) are dropped."""
    match = _RELEASE.match(version)
    if match is None:
        return None
    return tuple(int(part) for part in match.group("release").split("."))


def _pad(a: tuple[int, ...], b: tuple[int, ...]) -> tuple[tuple[int, ...], tuple[int, ...]]:
    width = max(len(a), len(b))
    return a + (0,) * (width - len(a)), b + (0,) * (width - len(b))


def _clause_holds(op: str, bound_text: str, installed: tuple[int, ...]) -> bool | None:
    wildcard = bound_text.endswith(".*")
    bound = _release(bound_text[:-2] if wildcard else bound_text)
    if bound is None:
        return None
    if wildcard and op in ("==", "!="):
        same = installed[: len(bound)] == bound
        return same if op == "==" else not same
    left, right = _pad(installed, bound)
    if op == ">=":
        return left >= right
    if op == ">":
        return left > right
    if op == "<=":
        return left <= right
    if op == "<":
        return left < right
    if op == "==":
        return left == right
    if op == "!=":
        return left != right
    if op == "~=":  # ~=X.Y.Z means >=X.Y.Z, ==X.Y.*
        if len(bound) < 2:
            return None
        prefix = bound[:-1]
        return left >= right and installed[: len(prefix)] == prefix
    return None


def version_in_range(version: str, specifier: str) -> bool | None:
    """Whether ``version`` satisfies every clause of ``specifier`` (``">=0.10,<0.13"``).

    ``None`` when either cannot be read (the caller then stays silent). An empty
    specifier accepts everything.
    """
    installed = _release(version)
    if installed is None:
        return None
    for clause in filter(None, (part.strip() for part in specifier.split(","))):
        match = _CLAUSE.match(clause)
        if match is None:
            return None
        holds = _clause_holds(match.group("op"), match.group("version"), installed)
        if holds is None:
            return None
        if not holds:
            return False
    return True


_OP_ORDER: Final = (">=", ">", "~=", "==", "!=", "<=", "<")


def _canonical(specifier: str) -> str:
    """Lower bounds first (metadata writers reorder clauses: ``<0.13,>=0.10``)."""
    clauses = [part for part in "".join(specifier.split()).split(",") if part]

    def rank(clause: str) -> int:
        for index, op in enumerate(_OP_ORDER):
            if clause.startswith(op):
                return index
        return len(_OP_ORDER)

    return ",".join(sorted(clauses, key=rank))


def declared_ranges(requirements: Iterable[str] | None = None) -> dict[str, str]:
    """``{"jax": ">=0.10,<0.13", "jaxlib": ...}`` from typed-pallas's installed metadata.

    ``requirements`` defaults to ``importlib.metadata.requires("typed-pallas")``.
    Requirements under an environment marker (``; extra == "test"``...) are left
    out: only the unconditional dependencies declare the supported range.
    """
    if requirements is None:
        try:
            requirements = metadata.requires(DISTRIBUTION) or []
        except metadata.PackageNotFoundError:
            return {}
    ranges: dict[str, str] = {}
    for requirement in requirements:
        match = _REQUIREMENT.match(requirement)
        if match is None or (match.group("marker") or "").strip():
            continue
        name = _normalize(match.group("name"))
        if name in CHECKED_DISTRIBUTIONS:
            spec = match.group("paren") if match.group("paren") is not None else match.group("spec")
            ranges[name] = _canonical(spec or "")
    return ranges


def _installed_version(name: str) -> str | None:
    try:
        return metadata.version(name)
    except metadata.PackageNotFoundError:
        return None


def check_jax_range(
    *,
    requirements: Iterable[str] | None = None,
    installed: Callable[[str], str | None] | Mapping[str, str] | None = None,
) -> list[OutOfRange]:
    """The checked distributions that are installed outside their declared range.

    ``installed`` maps a distribution name to its version (default: the installed
    metadata); a distribution that is not installed, or a version or specifier that
    cannot be read, is never reported.
    """
    ranges = declared_ranges(requirements)
    if installed is None:
        lookup: Callable[[str], str | None] = _installed_version
    elif isinstance(installed, Mapping):
        lookup = installed.get
    else:
        lookup = installed
    found: list[OutOfRange] = []
    for name in CHECKED_DISTRIBUTIONS:
        specifier = ranges.get(name)
        version = lookup(name)
        if specifier is None or version is None:
            continue
        if version_in_range(version, specifier) is False:
            found.append(OutOfRange(name, version, specifier))
    return found


def _own_version() -> str:
    try:
        return metadata.version(DISTRIBUTION)
    except metadata.PackageNotFoundError:
        return "(unknown version)"


def unsupported_jax_message(problems: Iterable[OutOfRange], *, who: str = "typed-pallas") -> str:
    """One sentence per problem, then what to do. ``who`` names the part that checks."""
    problems = list(problems)
    version = _own_version()
    lines = [
        f"{who}: {p.name} {p.installed} is installed, but typed-pallas {version} supports "
        f"{p.name}{p.specifier}."
        for p in problems
    ]
    pins = " ".join(f"'{p.name}{p.specifier}'" for p in problems)
    lines.append(
        "Platform checks may be incomplete or wrong for this JAX. Install a supported JAX "
        f"(pip install {pins}) or a typed-pallas release that supports "
        + ", ".join(f"{p.name} {p.installed}" for p in problems)
        + ". Silence with: warnings.filterwarnings('ignore', category=typed_pallas._jax_range.UnsupportedJaxWarning)."
    )
    return "\n".join(lines)


_warned: set[str] = set()


def warn_if_unsupported_jax(
    *,
    who: str = "typed-pallas",
    stacklevel: int = 1,
    requirements: Iterable[str] | None = None,
    installed: Callable[[str], str | None] | Mapping[str, str] | None = None,
    once: bool = True,
) -> str | None:
    """Warn (``UnsupportedJaxWarning``) if jax/jaxlib are outside the declared range.

    Returns the message, or ``None`` when everything is in range or nothing could be
    determined. With ``once`` (the default) each ``who`` warns at most once per
    process. ``stacklevel`` is ``warnings.warn``'s, counted from the caller of this
    function (1: the line that calls it). Never raises, except when warnings are
    turned into errors (``-W error``), which is the caller's choice.
    """
    try:
        if once and who in _warned:
            return None
        problems = check_jax_range(requirements=requirements, installed=installed)
        if not problems:
            return None
        message = unsupported_jax_message(problems, who=who)
        if once:
            _warned.add(who)
        warnings.warn(message, UnsupportedJaxWarning, stacklevel=stacklevel + 1)
        return message
    except Exception as error:  # noqa: BLE001 - a version check must never break an import
        if isinstance(error, Warning):  # warnings turned into errors (-W error) propagate
            raise
        return None
