"""Warn when the installed JAX is outside the range this typed-pallas release supports.

The one JAX-range module, for the runtime and the mypy plugin alike. The supported
range is a constant here (``LOWEST_SUPPORTED`` up to, not including,
``FIRST_UNSUPPORTED``: ``jax>=0.10,<0.13``), and ``tests/packaging/test_jax_range.py``
checks that pyproject's ``[project].dependencies`` declare exactly that range for
``jax`` and ``jaxlib``, so the metadata and this module cannot drift. The installed
versions come from :func:`typed_pallas._versions.installed_version` (the installed
metadata, without importing jax); a version outside the range gets one
``UnsupportedJaxWarning`` naming both versions and what to do.

It also says whether the installed jax is one of the releases typed-pallas was checked at
(``typed_pallas._versions.CHECKED_RELEASES``): :func:`jax_check_status` gives the one-line
note (``typed_pallas._platforms.UNCHECKED_JAX_NOTE``) that ``typed-pallas check``,
``typed-pallas --version``, the mypy plugin and ``typed_pallas.jax_check_status()`` show
for a release that was not checked (newer than the newest, between two, older than the
oldest), and nothing for a checked one.

What it does not do: import jax or mypy (the plugin and a bare ``import typed_pallas``
use it), parse specifiers (the constant is the range; comparing release numbers is
enough: pre-release, post-release and local segments are ignored), refuse to run, or
raise. Anything unexpected (no jax installed, an unreadable version) means silence:
the range check must never be the thing that breaks.
"""

from __future__ import annotations

import contextlib
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Final, NamedTuple

from typed_pallas import _platforms, _versions

__all__ = [
    "CHECKED_DISTRIBUTIONS",
    "FIRST_UNSUPPORTED",
    "LOWEST_SUPPORTED",
    "NOTE_SHOWN_ENV",
    "PLUGIN",
    "SUPPORTED_SPECIFIER",
    "JaxCheckStatus",
    "OutOfRange",
    "UnsupportedJaxWarning",
    "check_jax_range",
    "jax_check_status",
    "unsupported_jax_message",
    "version_in_range",
    "warn_if_unsupported_jax",
]

#: the distribution whose range this is (and whose version the message names)
DISTRIBUTION: Final = "typed-pallas"
#: the distributions checked against the range
CHECKED_DISTRIBUTIONS: Final = ("jax", "jaxlib")

#: the oldest supported release, and the first release no longer supported
LOWEST_SUPPORTED: Final[tuple[int, ...]] = (0, 10)
FIRST_UNSUPPORTED: Final[tuple[int, ...]] = (0, 13)


def _dotted(release: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in release)


#: the range as pyproject writes it for jax and jaxlib
SUPPORTED_SPECIFIER: Final = f">={_dotted(LOWEST_SUPPORTED)},<{_dotted(FIRST_UNSUPPORTED)}"

#: what ``who`` is for the mypy plugin's warning
PLUGIN: Final = "typed-pallas mypy plugin"


class UnsupportedJaxWarning(UserWarning):
    """The installed jax (or jaxlib) is outside the range typed-pallas declares."""


class OutOfRange(NamedTuple):
    """One installed distribution outside the supported range.

    A ``NamedTuple``, not a frozen dataclass: the mypy plugin imports this module on
    every run, warm ones included, and creating a dataclass costs about half a
    millisecond there (a named tuple a tenth of it).
    """

    name: str  #: "jax" or "jaxlib"
    installed: str  #: the installed version, e.g. "0.13.1"
    specifier: str  #: the supported range, e.g. ">=0.10,<0.13"


def version_in_range(version: str) -> bool | None:
    """Whether ``version`` is in the supported range; ``None`` when it cannot be read.

    Release numbers only: ``0.13.0.dev1`` is 0.13.0, so it is out of range.
    """
    parts = _versions.release(version)
    if parts is None:
        return None
    return LOWEST_SUPPORTED <= parts < FIRST_UNSUPPORTED


def check_jax_range(
    *, installed: Callable[[str], str | None] | Mapping[str, str] | None = None
) -> list[OutOfRange]:
    """The checked distributions that are installed outside the supported range.

    ``installed`` maps a distribution name to its version (default: the installed
    metadata); a distribution that is not installed, or a version that cannot be
    read, is never reported.
    """
    if installed is None:
        lookup: Callable[[str], str | None] = _versions.installed_version
    elif isinstance(installed, Mapping):
        lookup = installed.get
    else:
        lookup = installed
    found: list[OutOfRange] = []
    for name in CHECKED_DISTRIBUTIONS:
        version = lookup(name)
        if version is not None and version_in_range(version) is False:
            found.append(OutOfRange(name, version, SUPPORTED_SPECIFIER))
    return found


def _own_version() -> str:
    return _versions.installed_version(DISTRIBUTION) or "(unknown version)"


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
    installed: Callable[[str], str | None] | Mapping[str, str] | None = None,
    once: bool = True,
    never_raise: bool = False,
) -> str | None:
    """Warn (``UnsupportedJaxWarning``) if jax/jaxlib are outside the supported range.

    Returns the message, or ``None`` when everything is in range or nothing could be
    determined. With ``once`` (the default) each ``who`` warns at most once per
    process. ``stacklevel`` is ``warnings.warn``'s, counted from the caller of this
    function (1: the line that calls it). Never raises, except when warnings are
    turned into errors (``-W error``) and ``never_raise`` is false, which is the
    caller's choice; with ``never_raise`` (the mypy plugin: it must never be why mypy
    crashes) the message then goes to stderr instead.
    """
    try:
        if once and who in _warned:
            return None
        problems = check_jax_range(installed=installed)
        if not problems:
            return None
        message = unsupported_jax_message(problems, who=who)
        if once:
            _warned.add(who)
        warnings.warn(message, UnsupportedJaxWarning, stacklevel=stacklevel + 1)
        return message
    except Exception as error:
        if not isinstance(error, Warning):
            return None
        if not never_raise:  # warnings turned into errors (-W error) propagate
            raise
        with contextlib.suppress(Exception):
            print(f"warning: {error}", file=sys.stderr)
        return str(error)


#: Set by ``typed-pallas check`` for the mypy it runs, once it has shown the note itself:
#: the plugin then does not repeat it (mypy's stderr may reach the command's output).
NOTE_SHOWN_ENV: Final = "TYPED_PALLAS_JAX_NOTE_SHOWN"


class JaxCheckStatus(NamedTuple):
    """Whether the installed jax is a release typed-pallas was checked at."""

    installed: str | None  #: the installed jax version (None: no jax installed)
    checked_releases: tuple[str, ...]  #: the releases typed-pallas was checked at, oldest first
    #: True: one of them; False: not; None: no jax, or a version that cannot be read
    checked: bool | None
    note: str | None  #: the one-line note when ``checked`` is False, else None


def _position(installed: tuple[int, ...], checked: Sequence[str]) -> str:
    """Where ``installed`` lies among the checked releases, in the note's words."""
    known = sorted((rel, text) for text in checked if (rel := _versions.release(text)) is not None)
    if not known or installed > known[-1][0]:
        return _platforms.UNCHECKED_NEWER.format(newest=known[-1][1] if known else "none")
    if installed < known[0][0]:
        return _platforms.UNCHECKED_OLDER.format(oldest=known[0][1])
    for rel, text in known:
        if rel == installed:
            return _platforms.UNCHECKED_SAME_RELEASE.format(same=text)
    lower = [text for rel, text in known if rel < installed][-1]
    upper = next(text for rel, text in known if rel > installed)
    return _platforms.UNCHECKED_BETWEEN.format(lower=lower, upper=upper)


def jax_check_status(
    *, who: str = "typed-pallas", installed: str | None = None, checked: Sequence[str] | None = None
) -> JaxCheckStatus:
    """Whether the installed jax (or ``installed``) is a checked release, with the note if not.

    ``checked`` defaults to :func:`typed_pallas._versions.checked_releases`. A version is
    checked when it equals one of the checked ones (``0.12.1rc1`` is not 0.12.1). Never
    raises: anything unexpected is ``checked=None`` and no note.
    """
    releases = tuple(checked) if checked is not None else ()
    try:
        if checked is None:
            releases = _versions.checked_releases()
        version = installed if installed is not None else _versions.installed_version("jax")
        if version is None:
            return JaxCheckStatus(None, releases, None, None)
        version = version.strip()
        if version in releases:
            return JaxCheckStatus(version, releases, True, None)
        parts = _versions.release(version)
        if parts is None:
            return JaxCheckStatus(version, releases, None, None)
        note = _platforms.unchecked_jax_note(
            who, version, _own_version(), releases, _position(parts, releases)
        )
        return JaxCheckStatus(version, releases, False, note)
    except Exception:  # the check must never be what breaks a run
        return JaxCheckStatus(installed, releases, None, None)
