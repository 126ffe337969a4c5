"""Running mypy with the typed-pallas preset, and turning its JSON output into findings.

What it does: writes the preset mypy configuration (:func:`preset_config`: the plugin,
``follow_imports = silent``, ``ignore_missing_imports``, ``check_untyped_defs``, and
what the project's own mypy configuration silences) to a temporary file, runs ``python -m mypy -O json`` in a subprocess (:func:`run_mypy`),
parses mypy's JSON lines into :class:`MypyMessage` objects (:func:`parse_mypy_json`), and
the blocking errors mypy prints as text on stderr even then (:func:`parse_mypy_text`: a
file it cannot read or decode, a module it cannot find, which name no line), and
decides which of them are typed-pallas findings (:func:`select`). mypy's own errors are
not, also the syntax errors it went on after (an annotation it could not read):
:func:`unread_code` picks those out for ``check``'s warning.

The preset and the parser are shared: ``eval/`` and ``benchmarks/`` run mypy through
:func:`preset_config`, :func:`mypy_command` and :func:`parse_mypy_json` too, so the
corpus figures are measured with what ``typed-pallas check`` runs.

The cache: :func:`environment_cache` is one mypy cache folder per environment under
``.mypy_cache/typed-pallas/`` (its name holds the Python, jax and mypy versions), so two
environments on one project (a pre-commit environment and the project's venv) never
invalidate each other's cache; :func:`cache_is_warm` says whether a run will have to
analyse jax first (about half a minute).

What it does not do: read the typed-pallas configuration (``typed_pallas_mypy.config``),
print anything (``formats``), or import mypy or jax at import time (the plugin's error
codes are read lazily, and only when mypy is installed).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Final

from typed_pallas._versions import installed_version
from typed_pallas_mypy.cli.project import PLUGIN_MODULE, Silencing

__all__ = [
    "BLOCKING_CODES",
    "DEFAULT_CACHE",
    "OWN_MODULE_SETTINGS",
    "PLUGIN_MODULE",
    "PRESET",
    "PRESET_SETTINGS",
    "MypyMessage",
    "MypyRun",
    "cache_is_warm",
    "environment_cache",
    "environment_tag",
    "is_typed_pallas_finding",
    "mypy_command",
    "parse_mypy_json",
    "parse_mypy_text",
    "parse_mypy_text_line",
    "plugin_error_codes",
    "preset_config",
    "run_mypy",
    "select",
    "unread_code",
]

#: The preset's mypy settings besides ``plugins``, as ``[mypy]`` ini keys and values.
PRESET_SETTINGS: Final[tuple[tuple[str, str], ...]] = (
    ("follow_imports", "silent"),  # imported modules are analysed, only the named paths reported
    ("ignore_missing_imports", "True"),
    ("check_untyped_defs", "True"),  # kernels are rarely annotated
    ("show_error_codes", "True"),
)
#: The folder of the per-environment caches (:func:`environment_cache`).
DEFAULT_CACHE: Final = os.path.join(".mypy_cache", "typed-pallas")
#: What mypy prints (exit status 2) when a folder it was given has no Python file left.
NO_FILES_MESSAGE: Final = "There are no .py[i] files in directory"

#: Codes shown without ``--all-errors`` when the plugin's errorcodes module is absent.
FALLBACK_CODES: Final = frozenset({"pallas-platform"})
#: mypy's codes of errors that can stop checking (a parse error). A run that stopped is
#: shown whole (``MypyRun.blocked``); in a run that went on, an error with one of these
#: codes did not stop it (an annotation mypy could not read: ``-> (A, B)``, an invalid
#: ``type: ignore`` comment, ``async for`` outside an async function): it is no
#: finding, and :func:`unread_code` picks it out for a warning.
BLOCKING_CODES: Final = frozenset({"syntax"})
#: How mypy names a ``**`` argument in ``has incompatible type "**dict[str, Mesh]"``: a
#: splat's value type is checked against every keyword, params or not, so such an
#: error is not about the params.
SPLAT_MARKER: Final = 'incompatible type "**'
#: mypy's codes for the stubs' platform mismatches, and what marks them as such.
STUB_CODES: Final = frozenset({"arg-type", "call-overload"})
STUB_MARKERS: Final = (
    "CompilerParams[Literal['",
    "PlatformFn[Literal['",
    "__pallas_platform__",
)
#: any wrong type for the params themselves, e.g. legacy dict params, which JAX accepts
#: when building the call and rejects only when lowering: a ``compiler_params`` argument
#: where params are expected (another function's ``compiler_params``, expecting a dict
#: or an int, is mypy's own error)
PARAMS_ARGUMENT: Final = re.compile(
    r'^Argument "compiler_params" to .*; expected "[^"]*CompilerParams'
)


# --------------------------------------------------------------------------- the preset


#: Installed packages whose missing modules the preset reports (``import-not-found``) for
#: ``check`` to turn into a warning: a module JAX removed in a release (jax 0.12.1 removed
#: ``jax.experimental.pallas.ops.gpu.attention`` and the other Triton ops) is ``Any`` to
#: mypy, so calls into it are not checked; the user is told so instead of nothing.
#: Imports are still followed silently: errors inside the package stay hidden.
REPORTED_MISSING_PACKAGES: Final = ("jax",)

#: The preset's settings for the project's own modules (see :func:`preset_config`).
OWN_MODULE_SETTINGS: Final[tuple[tuple[str, str], ...]] = (
    ("ignore_missing_imports", "False"),
    ("follow_imports", "normal"),
)


def preset_config(
    plugin: str | None = PLUGIN_MODULE,
    *,
    check_untyped_defs: bool = True,
    mypy_path: Sequence[str] = (),
    explicit_package_bases: bool = False,
    own_modules: Sequence[str] = (),
    silencing: Silencing | None = None,
    report_missing: Sequence[str] = (),
) -> str:
    """The text of the preset ``mypy.ini``.

    ``plugin=None`` leaves the plugin out (plain mypy with the same settings, the
    benchmarks' baseline); ``check_untyped_defs=False`` keeps mypy's default there.
    ``mypy_path`` and ``explicit_package_bases`` are the project's layout
    (``cli.project.find_layout``); for the top-level modules ``own_modules`` (the
    project's own), mypy reports ``import-not-found`` although the preset ignores
    missing imports elsewhere, so that ``check`` can warn about them, and follows
    imports normally: mypy drops the function bodies of silently followed modules,
    and the plugin reads the project's other modules (kernels, helpers, what a
    function reaches) from them. ``check`` shows only findings in the named paths.

    ``report_missing``: installed packages (``REPORTED_MISSING_PACKAGES``, what ``check``
    passes) whose modules mypy reports as ``import-not-found`` when an import names one
    the installed release lacks.

    ``silencing`` is what the project's own mypy configuration silences
    (``cli.project.read_silencing``): its ``[mypy]`` settings are added to the preset's,
    and its per-module ones become sections of their own; a pattern that is also one of
    the own modules' (``pkg.*``) gets both, in one section (mypy keeps only the last
    section of a pattern).
    """
    lines = ["[mypy]"]
    if plugin is not None:
        lines.append(f"plugins = {plugin}")
    for key, value in PRESET_SETTINGS:
        if key == "check_untyped_defs" and not check_untyped_defs:
            continue
        lines.append(f"{key} = {value}")
    if mypy_path:
        lines.append(f"mypy_path = {','.join(mypy_path)}")
    if explicit_package_bases:
        lines.append("explicit_package_bases = True")
    if silencing is not None:
        lines += [f"{key} = {value}" for key, value in silencing.settings]
    modules = dict(silencing.modules) if silencing is not None else {}
    for package in report_missing:
        if f"{package}.*" not in modules and package not in own_modules:
            lines += ["", f"[mypy-{package}.*]", "ignore_missing_imports = False"]
    own = [f"{name}.*" for name in own_modules]
    if shared := [pattern for pattern in own if pattern not in modules]:
        lines += ["", f"[mypy-{','.join(shared)}]"]
        lines += [f"{key} = {value}" for key, value in OWN_MODULE_SETTINGS]
    for pattern, settings in modules.items():
        lines += ["", f"[mypy-{pattern}]"]
        if pattern in own:
            lines += [f"{key} = {value}" for key, value in OWN_MODULE_SETTINGS]
        lines += [f"{key} = {value}" for key, value in settings]
    return "\n".join(lines) + "\n"


#: What ``typed-pallas check`` runs mypy with.
PRESET: Final = preset_config()


def mypy_command(
    config_file: str, cache_dir: str, arguments: Sequence[str], *, python: str = sys.executable
) -> list[str]:
    """``python -m mypy`` with ``config_file``, ``cache_dir`` and JSON output, then ``arguments``."""
    return [
        python, "-m", "mypy",
        "--config-file", config_file,
        "--cache-dir", cache_dir,
        "-O", "json",
        *arguments,
    ]  # fmt: skip


# --------------------------------------------------------------------------- the cache


def environment_tag() -> str:
    """``py3.12-jax0.12.0-mypy2.4.1``: what makes mypy's cache of jax differ between environments."""
    py = f"{sys.version_info[0]}.{sys.version_info[1]}"
    jax, mypy = (installed_version(dist) or "none" for dist in ("jax", "mypy"))
    tag = f"py{py}-jax{jax}-mypy{mypy}"
    return re.sub(r"[^A-Za-z0-9._+-]", "_", tag)


def environment_cache(base: str = DEFAULT_CACHE) -> str:
    """This environment's own mypy cache folder under ``base``."""
    return os.path.join(base, environment_tag())


def cache_is_warm(cache_dir: str) -> bool:
    """Whether mypy has written a cache in ``cache_dir`` (else the run analyses jax first)."""
    try:
        entries = [e for e in os.scandir(cache_dir) if e.is_dir()]
    except OSError:
        return False
    for entry in entries:  # mypy writes one folder per target Python version
        try:
            if any(os.scandir(entry.path)):
                return True
        except OSError:
            continue
    return False


# --------------------------------------------------------------------------- findings


@dataclass
class MypyMessage:
    """One message of mypy's output (an error with its notes, or a standalone note), parsed.

    Not the plugin's own record of a decision (``transformers.decisions``): this is what
    mypy printed, whatever its code; :func:`select` says which are typed-pallas findings.
    """

    file: str
    line: int
    column: int  # 1-based, as mypy prints it
    severity: str
    message: str
    code: str | None
    notes: list[str] = field(default_factory=list)
    end_line: int | None = None
    end_column: int | None = None

    @classmethod
    def from_mypy_json(cls, data: Mapping[str, object]) -> MypyMessage:
        """One line of mypy's ``-O json`` output, already decoded."""

        def number(key: str) -> int | None:
            value = data.get(key)
            return value if isinstance(value, int) and value >= 0 else None

        column, end_column, hint = number("column"), number("end_column"), data.get("hint")
        return cls(
            file=str(data.get("file", "")),
            line=number("line") or 0,
            column=column + 1 if column is not None else 1,  # mypy's JSON is 0-based
            severity=str(data.get("severity", "error")),
            message=str(data.get("message", "")),
            code=str(data["code"]) if data.get("code") else None,
            notes=str(hint).split("\n") if hint else [],
            end_line=number("end_line"),
            end_column=end_column + 1 if end_column is not None else None,
        )


def parse_mypy_json(stdout: str) -> tuple[list[MypyMessage], list[str]]:
    """mypy ``-O json`` lines -> findings; other lines are returned as they are.

    Notes that mypy could not attach to an error at the same place are attached to the
    error just before them in the same file (typed-pallas puts its evidence there).
    """
    findings: list[MypyMessage] = []
    other: list[str] = []
    for line in stdout.splitlines():
        if not line.startswith("{"):
            if line.strip():
                other.append(line)
            continue
        try:
            data = json.loads(line)
        except ValueError:
            other.append(line)
            continue
        finding = MypyMessage.from_mypy_json(data)
        prev = findings[-1] if findings else None
        if (
            finding.severity == "note"
            and prev is not None
            and prev.severity == "error"
            and prev.file == finding.file
            and finding.code in (None, prev.code)
        ):
            prev.notes.append(finding.message)
            prev.notes.extend(finding.notes)
            continue
        findings.append(finding)
    return findings, other


#: mypy's text shape, as it prints a blocking error on stderr (``-O json`` or not) and in a
#: ``CompileError``: ``file:line[:column]: error: message  [code]``, ``file: error: message``
#: (a file it cannot read or decode), ``mypy: error: message`` (no file: a module it cannot find)
_TEXT_LINE: Final = re.compile(
    r"^(?P<file>.+?)(?::(?P<line>\d+)(?::(?P<column>\d+))?)?: (?P<severity>error|note): "
    r"(?P<message>.*?)(?:  \[(?P<code>[\w-]+)\])?$"
)
#: what mypy calls itself where a message is about no file
NO_FILE: Final = "mypy"
#: mypy's last line, which ``check``'s formats replace with their own
MYPY_SUMMARY: Final = re.compile(r"^(Found \d+ errors? in \d+ files?\b|Success: no issues found\b)")


def parse_mypy_text_line(line: str) -> MypyMessage | None:
    """One line of mypy's text output as a message (file ``""`` and line 0 when it names none)."""
    m = _TEXT_LINE.match(line.rstrip("\r\n"))
    if m is None:
        return None
    file = "" if m["file"] == NO_FILE else m["file"]
    return MypyMessage(
        file=file,
        line=int(m["line"]) if m["line"] else 0,
        column=int(m["column"]) if m["column"] else 1,
        severity=m["severity"],
        message=m["message"],
        code=m["code"],
    )


def parse_mypy_text(text: str) -> tuple[list[MypyMessage], list[str]]:
    """mypy's text lines -> messages (a note joins the error just before it); other lines as
    they are, without mypy's usage block (``usage: mypy ...`` and its indented lines), which
    comes with an error about mypy's own command line."""
    messages: list[MypyMessage] = []
    other: list[str] = []
    in_usage = False
    for line in text.splitlines():
        in_usage = line.startswith("usage: mypy") or (in_usage and line[:1].isspace())
        found = parse_mypy_text_line(line)
        if found is None:
            if line.strip() and not in_usage:
                other.append(line)
        elif found.severity == "note" and messages and messages[-1].file == found.file:
            messages[-1].notes.append(found.message)
        else:
            messages.append(found)
    return messages, other


def plugin_error_codes() -> frozenset[str]:
    """The error codes the plugin defines (its ``errorcodes`` module), or the fallback."""
    try:
        from mypy.errorcodes import ErrorCode

        from typed_pallas_mypy import errorcodes
    except Exception:
        return FALLBACK_CODES
    codes = {v.code for v in vars(errorcodes).values() if isinstance(v, ErrorCode)}
    return frozenset(codes) or FALLBACK_CODES


def is_typed_pallas_finding(finding: MypyMessage, codes: frozenset[str]) -> bool:
    """A plugin error, or a platform mismatch the stubs found.

    The stubs type params by platform, so some mismatches (``plgpu.kernel`` or
    ``pl.kernel`` with a mesh given other params, the ``typed_pallas`` entry points,
    ``typed_pallas.dispatch``) are mypy's own ``arg-type``/``call-overload`` errors, and
    the plugin does not repeat them. They are recognised by the platform types they name; any wrong type for
    ``compiler_params`` where params are expected (legacy dict params) is shown too.

    mypy's other errors are not findings, syntax errors included: a run they stopped is
    shown whole (``MypyRun.blocked``), and one they did not stop is a warning
    (:func:`unread_code`).
    """
    if finding.severity != "error":
        return False
    if finding.code in codes:
        return True
    if finding.code in STUB_CODES:
        if SPLAT_MARKER in finding.message:
            return False  # mypy checks a ``**`` splat's value type against every keyword
        if PARAMS_ARGUMENT.match(finding.message):
            return True
        text = "\n".join([finding.message, *finding.notes])
        return any(marker in text for marker in STUB_MARKERS)
    return False


def unread_code(findings: Iterable[MypyMessage]) -> list[MypyMessage]:
    """The syntax errors of a run that mypy went on after (it did not stop: not
    ``MypyRun.blocked``): an annotation it could not read (``-> (A, B)``: it takes it as
    Any, so findings that depend on it may be missed), an invalid ``type: ignore``
    comment, ``async for`` outside an async function. Not findings; ``check`` warns."""
    return [f for f in findings if f.severity == "error" and f.code in BLOCKING_CODES]


def select(
    findings: Iterable[MypyMessage], codes: frozenset[str], all_errors: bool
) -> list[MypyMessage]:
    """The findings to show: all of them with ``all_errors``, else the typed-pallas ones."""
    if all_errors:
        return list(findings)
    return [f for f in findings if is_typed_pallas_finding(f, codes)]


# --------------------------------------------------------------------------- running mypy


@dataclass
class MypyRun:
    """What one mypy subprocess gave: its findings, its other output, its exit status."""

    command: list[str]
    returncode: int
    #: mypy's messages: its JSON lines on stdout, and the blocking errors it prints as text
    #: on stderr (a file it cannot read or decode, a module it cannot find)
    findings: list[MypyMessage]
    #: stdout lines that are not JSON findings (a summary, a crash's text)
    other_output: list[str]
    #: what is left of stderr (a crash's traceback) without the errors in ``findings``
    stderr: str

    @property
    def blocked(self) -> bool:
        """mypy did not check everything: a crash, a blocking error, or it did not start.

        mypy exits 1 only with at least one error line, so exit status 1 without one
        means it did not run (no mypy, a broken environment): never report success then.
        """
        return self.returncode not in (0, 1) or (
            self.returncode == 1 and not any(f.severity == "error" for f in self.findings)
        )


def run_mypy(
    paths: Sequence[str],
    mypy_arguments: Sequence[str],
    *,
    cache_dir: str,
    env: Mapping[str, str],
    verbose: bool = False,
    preset: str = PRESET,
) -> MypyRun:
    """Run this interpreter's mypy with ``preset`` on ``paths``; ``mypy_arguments`` go first.

    With ``verbose`` the command and the preset are printed to stderr before it runs.
    """
    with tempfile.TemporaryDirectory(prefix="typed-pallas-") as tmp:
        ini = os.path.join(tmp, "mypy.ini")
        with open(ini, "w", encoding="utf-8") as f:
            f.write(preset)
        cmd = mypy_command(ini, cache_dir, [*mypy_arguments, *paths])
        if verbose:
            print("+ " + " ".join(cmd), file=sys.stderr)
            print(
                f"  ({ini}:)\n" + "".join(f"  {line}\n" for line in preset.splitlines()),
                end="",
                file=sys.stderr,
            )
        proc = subprocess.run(cmd, env=dict(env), capture_output=True, text=True)
    findings, other = parse_mypy_json(proc.stdout)
    from_stderr, rest = parse_mypy_text(proc.stderr)
    leftover = "".join(line + "\n" for line in rest)
    return MypyRun(cmd, proc.returncode, findings + from_stderr, other, leftover)
