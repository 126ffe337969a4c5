"""``typed-pallas``: the command line. Runs mypy with the plugin preset; explains errors.

Commands::

    typed-pallas check [PATHS...] [--platform P ...] [--output text|json|github]
                       [--all-errors] [--expect] [--config FILE] [--cache-dir DIR]
                       [-- MYPY ARGS...]
    typed-pallas explain CODE        # e.g. pallas-platform, PlatformMismatchError
    typed-pallas --version

``check`` runs mypy (a subprocess of this interpreter) with a preset configuration, so
a project needs no mypy setup: the ``typed_pallas_mypy`` plugin, ``follow_imports =
silent`` (imported modules are analysed, only the named paths are reported),
``ignore_missing_imports``, ``check_untyped_defs`` (kernels are rarely annotated) and a
cache under ``.mypy_cache/typed-pallas``. The project's own ``[tool.typed-pallas]`` /
``[mypy.plugins.typed-pallas]`` settings are found as mypy finds its config (current
folder, then parents up to the repository root) and passed on through
``TYPED_PALLAS_CONFIG``; ``--platform`` goes through ``TYPED_PALLAS_PLATFORMS``.

By default only typed-pallas findings are shown: the plugin's errors
(``pallas-platform``), the platform mismatches the stubs turn into mypy's own
``arg-type``/``call-overload`` errors (recognised by the platform types they name, or by the `compiler_params` argument), and
blocking errors. mypy's other errors are type errors, not platform errors, and a
platform checker should not fail a build on them. ``--all-errors`` shows everything mypy says.

``--expect`` compares the findings with ``# expect[CODE]: MESSAGE`` comments in the
checked files (see examples/README.md) and exits 0 only when they are exactly the
expected ones; ``scripts/check`` uses it on ``examples/``.

Exit status, like mypy: 0 nothing found, 1 findings, 2 usage, configuration or
blocking errors (a syntax error, a crash).

What it does not do: read or change the project's ``[tool.mypy]`` settings (pass mypy
options after ``--``), or import jax.
"""

from __future__ import annotations

import argparse
import ast
import importlib.util
import json
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from importlib import resources
from typing import Final, TextIO

from typed_pallas_mypy import config as _config

__all__ = ["Finding", "main", "known_error_docs", "error_doc", "plugin_error_codes"]

PROG: Final = "typed-pallas"
OUTPUTS: Final = ("text", "json", "github")
DEFAULT_CACHE: Final = os.path.join(".mypy_cache", "typed-pallas")
#: Codes shown without ``--all-errors`` when the plugin's errorcodes module is absent.
FALLBACK_CODES: Final = frozenset({"pallas-platform"})
#: mypy's own codes that stop checking; always shown.
BLOCKING_CODES: Final = frozenset({"syntax"})
#: mypy's codes for the stubs' platform mismatches, and what marks them as such.
STUB_CODES: Final = frozenset({"arg-type", "call-overload"})
STUB_MARKERS: Final = (
    "CompilerParams[Literal['",
    "PlatformFn[Literal['",
    "__pallas_platform__",
    # any wrong type for the params themselves, e.g. legacy dict params, which JAX
    # accepts when building the call and rejects only when lowering
    'Argument "compiler_params" to ',
)
#: Names mypy searches for its config, in its order, per folder.
CONFIG_NAMES: Final = ("mypy.ini", ".mypy.ini", "pyproject.toml", "setup.cfg")

PRESET: Final = """\
[mypy]
plugins = typed_pallas_mypy
follow_imports = silent
ignore_missing_imports = True
check_untyped_defs = True
show_error_codes = True
"""


# --------------------------------------------------------------------------- findings


@dataclass
class Finding:
    """One mypy message (an error with its notes, or a standalone note)."""

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
    def from_mypy_json(cls, data: Mapping[str, object]) -> Finding:
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

    def as_json(self) -> dict[str, object]:
        return {
            "file": self.file,
            "line": self.line,
            "column": self.column,
            "end_line": self.end_line,
            "end_column": self.end_column,
            "severity": self.severity,
            "code": self.code,
            "message": self.message,
            "notes": list(self.notes),
        }

    def text_lines(self) -> list[str]:
        where = f"{self.file}:{self.line}:{self.column}"
        code = f"  [{self.code}]" if self.code and self.severity == "error" else ""
        out = [f"{where}: {self.severity}: {self.message}{code}"]
        out += [f"{where}: note: {note}" for note in self.notes]
        return out

    def github_line(self) -> str:
        kind = "error" if self.severity == "error" else "notice"
        props = [f"file={_gh_prop(self.file)}", f"line={self.line}", f"col={self.column}"]
        if self.end_line is not None:
            props.append(f"endLine={self.end_line}")
        if self.end_column is not None and self.end_line == self.line:
            props.append(f"endColumn={self.end_column}")
        if self.code:
            props.append(f"title={_gh_prop(self.code)}")
        body = "\n".join([self.message, *self.notes])
        return f"::{kind} {','.join(props)}::{_gh_data(body)}"


def _gh_data(text: str) -> str:
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def _gh_prop(text: str) -> str:
    return _gh_data(text).replace(":", "%3A").replace(",", "%2C")


def parse_mypy_json(stdout: str) -> tuple[list[Finding], list[str]]:
    """mypy ``-O json`` lines -> findings; other lines are returned as they are.

    Notes that mypy could not attach to an error at the same place are attached to the
    error just before them in the same file (typed-pallas puts its evidence there).
    """
    findings: list[Finding] = []
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
        finding = Finding.from_mypy_json(data)
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


def plugin_error_codes() -> frozenset[str]:
    """The error codes the plugin defines (its ``errorcodes`` module), or the fallback."""
    try:
        from mypy.errorcodes import ErrorCode

        from typed_pallas_mypy import errorcodes
    except Exception:
        return FALLBACK_CODES
    codes = {v.code for v in vars(errorcodes).values() if isinstance(v, ErrorCode)}
    return frozenset(codes) or FALLBACK_CODES


def is_typed_pallas_finding(finding: Finding, codes: frozenset[str]) -> bool:
    """A plugin error, a blocking error, or a platform mismatch the stubs found.

    The stubs type params by platform, so some mismatches (``plgpu.kernel`` or
    ``pl.kernel`` with a mesh given other params, the ``typed_pallas`` entry points,
    ``typed_pallas.dispatch``) are mypy's own ``arg-type``/``call-overload`` errors, and
    the plugin does not repeat them. They are recognised by the platform types they name; any wrong type for
    ``compiler_params`` (legacy dict params) is shown too.
    """
    if finding.severity != "error":
        return False
    if finding.code in codes or finding.code in BLOCKING_CODES:
        return True
    if finding.code in STUB_CODES:
        text = "\n".join([finding.message, *finding.notes])
        return any(marker in text for marker in STUB_MARKERS)
    return False


def select(findings: Iterable[Finding], codes: frozenset[str], all_errors: bool) -> list[Finding]:
    if all_errors:
        return list(findings)
    return [f for f in findings if is_typed_pallas_finding(f, codes)]


# --------------------------------------------------------------------------- expectations

EXPECT_RE: Final = re.compile(r"#\s*expect\[(?P<code>[\w-]+)\](?::\s*(?P<message>.*?))?\s*$")


@dataclass
class Expectation:
    """A ``# expect[CODE]: MESSAGE`` comment, and the spans of the code around it."""

    file: str
    line: int
    code: str
    message: str | None
    #: (first line, last line) of each call and the innermost statement holding the comment
    spans: list[tuple[int, int]] = field(default_factory=list)

    def distance(self, finding: Finding) -> int | None:
        """Size of the smallest span holding ``finding`` (None: no match)."""
        if finding.code != self.code or os.path.normpath(finding.file) != os.path.normpath(self.file):
            return None
        if self.message is not None and finding.message.strip() != self.message:
            return None
        sizes = [b - a for a, b in self.spans if a <= finding.line <= b]
        if finding.line == self.line:
            sizes.append(0)
        return min(sizes) if sizes else None


def python_files(paths: Iterable[str]) -> list[str]:
    """The .py files under ``paths``, skipping hidden folders and caches, as mypy does."""
    out: list[str] = []
    for path in paths:
        if os.path.isfile(path):
            if path.endswith((".py", ".pyi")):
                out.append(path)
            continue
        for root, dirs, files in os.walk(path):
            dirs[:] = sorted(
                d for d in dirs if not d.startswith(".") and d not in ("__pycache__", "site-packages", "node_modules")
            )
            out += [os.path.join(root, f) for f in sorted(files) if f.endswith((".py", ".pyi"))]
    return out


def read_expectations(path: str) -> list[Expectation]:
    with open(path, encoding="utf-8") as f:
        source = f.read()
    found = []
    for lineno, text in enumerate(source.splitlines(), 1):
        if "expect[" not in text:
            continue
        m = EXPECT_RE.search(text)
        if m:
            found.append(Expectation(path, lineno, m["code"], m["message"] or None))
    if not found:
        return found
    try:
        tree = ast.parse(source, path)
    except SyntaxError:
        return found
    nodes = [n for n in ast.walk(tree) if isinstance(n, (ast.Call, ast.stmt))]
    for exp in found:
        holding = [n for n in nodes if n.lineno <= exp.line <= (n.end_lineno or n.lineno)]
        stmts = [n for n in holding if isinstance(n, ast.stmt)]
        inner = min(stmts, key=lambda n: (n.end_lineno or n.lineno) - n.lineno) if stmts else None
        exp.spans = [(n.lineno, n.end_lineno or n.lineno) for n in holding if isinstance(n, ast.Call) or n is inner]
    return found


def compare_expectations(
    findings: Sequence[Finding], expectations: Sequence[Expectation]
) -> tuple[list[tuple[Finding, Expectation]], list[Finding], list[Expectation]]:
    """Pair findings with expectations (nearest first): matched, unexpected, missing."""
    errors = [f for f in findings if f.severity == "error"]
    pairs = []
    for i, finding in enumerate(errors):
        for j, exp in enumerate(expectations):
            d = exp.distance(finding)
            if d is not None:
                pairs.append((d, i, j))
    used_f: set[int] = set()
    used_e: set[int] = set()
    matched = []
    for _, i, j in sorted(pairs):
        if i not in used_f and j not in used_e:
            used_f.add(i)
            used_e.add(j)
            matched.append((errors[i], expectations[j]))
    unexpected = [f for i, f in enumerate(errors) if i not in used_f]
    missing = [e for j, e in enumerate(expectations) if j not in used_e]
    return matched, unexpected, missing


def report_expectations(findings: Sequence[Finding], paths: Sequence[str], stream: TextIO) -> bool:
    """Print how findings compare to ``# expect[...]`` comments; True when exactly equal."""
    write = stream.write
    expectations = [e for path in python_files(paths) for e in read_expectations(path)]
    matched, unexpected, missing = compare_expectations(findings, expectations)
    for f in unexpected:
        write(f"unexpected: {f.file}:{f.line}:{f.column}: {f.message}  [{f.code}]\n")
    for e in missing:
        msg = f": {e.message}" if e.message else ""
        write(f"missing:    {e.file}:{e.line}: expect[{e.code}]{msg}\n")
    files = sorted({os.path.normpath(e.file) for e in expectations})
    ok = not unexpected and not missing
    if ok:
        where = f" (in {', '.join(sorted({os.path.dirname(f) or '.' for f in files}))})" if files else ""
        write(
            f"Expectations met: {len(matched)} finding{'s' if len(matched) != 1 else ''}, "
            f"exactly the {len(expectations)} expected{where}; no other finding.\n"
        )
    else:
        write(
            f"Expectations NOT met: {len(matched)} of {len(expectations)} expected findings reported, "
            f"{len(missing)} missing, {len(unexpected)} unexpected.\n"
        )
    return ok


# --------------------------------------------------------------------------- explain


def _errors_dir() -> resources.abc.Traversable:
    return resources.files("typed_pallas_mypy").joinpath("errors")


def known_error_docs() -> dict[str, str]:
    """code -> Markdown text, from ``typed_pallas_mypy/errors/*.md``."""
    out: dict[str, str] = {}
    for entry in _errors_dir().iterdir():
        if entry.name.endswith(".md") and entry.name.upper() != "README.MD":
            out[entry.name[:-3]] = entry.read_text(encoding="utf-8")
    return dict(sorted(out.items()))


def error_doc(code: str) -> str | None:
    docs = known_error_docs()
    wanted = code.strip()
    for prefix in ("typed_pallas.", "typed_pallas._errors."):
        if wanted.startswith(prefix):
            wanted = wanted[len(prefix):]
    folded = {k.lower().replace("_", "-"): k for k in docs}
    key = folded.get(wanted.lower().replace("_", "-"))
    return docs[key] if key else None


# --------------------------------------------------------------------------- check


def find_project_config(start: str) -> str | None:
    """The first file with a typed-pallas section, searched as mypy searches its config."""
    for folder in _config._search_upwards(start):
        for name in CONFIG_NAMES:
            path = os.path.join(folder, name)
            if os.path.isfile(path):
                try:
                    if _config.read_config(path) is not None:
                        return path
                except _config.ConfigError:
                    return path  # let the validation below report it
    return None


def _fail(parser: argparse.ArgumentParser, message: str) -> int:
    parser.print_usage(sys.stderr)
    print(f"{PROG}: error: {message}", file=sys.stderr)
    return 2


def _summary(shown: Sequence[Finding], all_errors: bool) -> str:
    errors = [f for f in shown if f.severity == "error"]
    what = "" if all_errors else " typed-pallas"
    if not errors:
        return f"Success: no{what} issues found"
    files = len({f.file for f in errors})
    s = "" if len(errors) == 1 else "s"
    fs = "" if files == 1 else "s"
    return f"Found {len(errors)}{what} error{s} in {files} file{fs}"


def run_check(args: argparse.Namespace, passthrough: list[str], parser: argparse.ArgumentParser) -> int:
    paths = args.paths or ["."]
    missing = [p for p in paths if not os.path.exists(p)]
    if missing:
        return _fail(parser, f"no such file or directory: {', '.join(missing)}")

    env = dict(os.environ)
    if args.platform:
        names = [n.strip() for value in args.platform for n in value.split(",") if n.strip()]
        env[_config.PLATFORMS_ENV] = ",".join(names)
    # --config, else the user's TYPED_PALLAS_CONFIG, else the project's file found as mypy would
    config_path = args.config or (None if env.get(_config.CONFIG_ENV, "").strip() else find_project_config(os.getcwd()))
    if args.config and not os.path.isfile(args.config):
        return _fail(parser, f"--config {args.config}: no such file")
    if config_path:
        env[_config.CONFIG_ENV] = os.path.abspath(config_path)
    try:
        _config.resolve_config(None, environ=env)
    except _config.ConfigError as e:
        return _fail(parser, f"{e}\n(see docs/configuration.md, or `typed-pallas check --help`)")

    if importlib.util.find_spec("mypy") is None:
        return _fail(parser, "mypy is not installed here; install it with: pip install 'typed-pallas[mypy]'")

    cache_dir = args.cache_dir or DEFAULT_CACHE
    with tempfile.TemporaryDirectory(prefix="typed-pallas-") as tmp:
        ini = os.path.join(tmp, "mypy.ini")
        with open(ini, "w", encoding="utf-8") as f:
            f.write(PRESET)
        cmd = [
            sys.executable, "-m", "mypy",
            "--config-file", ini,
            "--cache-dir", cache_dir,
            "-O", "json",
            *passthrough,
            *paths,
        ]  # fmt: skip
        if args.verbose:
            print("+ " + " ".join(cmd), file=sys.stderr)
        proc = subprocess.run(cmd, env=env, capture_output=True, text=True)

    findings, other = parse_mypy_json(proc.stdout)
    # mypy exits 1 only with at least one error line; anything else means it did not run
    # (no mypy, a broken environment): never report success then.
    blocking = proc.returncode not in (0, 1) or (
        proc.returncode == 1 and not any(f.severity == "error" for f in findings)
    )
    shown = findings if blocking else select(findings, plugin_error_codes(), args.all_errors)
    shown.sort(key=lambda f: (f.file, f.line, f.column))
    emit(shown, args.output, args.all_errors, sys.stdout, summary=not blocking)
    expect_ok = None
    if args.expect and not blocking:
        stream = sys.stderr if args.output == "json" else sys.stdout
        expect_ok = report_expectations(shown, paths, stream)
    if blocking or args.verbose:
        for line in other:
            print(line, file=sys.stderr)
        if proc.stderr:
            sys.stderr.write(proc.stderr)
    if blocking:
        print(f"{PROG}: mypy stopped with exit status {proc.returncode}; nothing was checked fully", file=sys.stderr)
        return 2
    if expect_ok is not None:
        return 0 if expect_ok else 1
    return 1 if any(f.severity == "error" for f in shown) else 0


def emit(shown: Sequence[Finding], output: str, all_errors: bool, stream: TextIO, *, summary: bool = True) -> None:
    write = stream.write
    if output == "json":
        write(json.dumps([f.as_json() for f in shown], indent=2) + "\n")
    elif output == "github":
        for f in shown:
            write(f.github_line() + "\n")
        if summary:
            write(_summary(shown, all_errors) + "\n")
    else:
        for f in shown:
            for line in f.text_lines():
                write(line + "\n")
        if summary:
            write(_summary(shown, all_errors) + "\n")


# --------------------------------------------------------------------------- main


def _version_text() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        mypy_version = version("mypy")
    except PackageNotFoundError:  # pragma: no cover
        mypy_version = "not installed"
    py = ".".join(map(str, sys.version_info[:3]))
    return f"{PROG} {_config._version()} (mypy {mypy_version}, Python {py})"


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Check that JAX Pallas compiler params match the platforms the code lowers for.",
    )
    parser.add_argument("--version", action="version", version=_version_text())
    sub = parser.add_subparsers(dest="command", metavar="{check,explain}")

    check = sub.add_parser(
        "check",
        help="run mypy with the typed-pallas plugin on PATHS",
        description=(
            "Run mypy with the typed-pallas plugin preset on PATHS (default: the current folder).\n"
            "Shows typed-pallas findings only, unless --all-errors. Arguments after -- go to mypy.\n"
            "Exit status: 0 clean, 1 findings, 2 usage or blocking error."
        ),
        epilog=(
            "examples:\n"
            "  typed-pallas check src/\n"
            "  typed-pallas check --platform tpu src/kernels/\n"
            "  typed-pallas check --output github . -- --python-version 3.12\n"
            "configuration: [tool.typed-pallas] in pyproject.toml (see docs/configuration.md)"
        ),
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    check.add_argument("paths", nargs="*", metavar="PATH", help="files or folders to check")
    check.add_argument(
        "--platform",
        action="append",
        metavar="P",
        help="a platform the code may lower for: tpu, gpu, cuda or rocm (repeat, or a comma list); "
        f"replaces the configured top-level platforms (sets {_config.PLATFORMS_ENV})",
    )
    check.add_argument("--output", "-o", choices=OUTPUTS, default="text", help="output format (default: text)")
    check.add_argument("--all-errors", action="store_true", help="show every mypy error, not only typed-pallas findings")
    check.add_argument("--config", metavar="FILE", help="read [tool.typed-pallas] / [mypy.plugins.typed-pallas] from FILE")
    check.add_argument("--cache-dir", metavar="DIR", help=f"mypy cache folder (default: {DEFAULT_CACHE})")
    check.add_argument(
        "--expect",
        action="store_true",
        help="compare findings with the '# expect[CODE]: MESSAGE' comments in PATHS; "
        "exit 0 only when they are exactly the expected ones",
    )
    check.add_argument("--verbose", "-v", action="store_true", help="print the mypy command and its other output")

    explain = sub.add_parser("explain", help="print the documentation of an error code or exception")
    explain.add_argument("code", metavar="CODE", help="e.g. pallas-platform or PlatformMismatchError")
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    args_list = list(sys.argv[1:] if argv is None else argv)
    passthrough: list[str] = []
    if "--" in args_list:
        i = args_list.index("--")
        args_list, passthrough = args_list[:i], args_list[i + 1 :]
    parser = build_parser()
    args = parser.parse_args(args_list)  # exits 2 on usage errors
    if args.command == "check":
        if args.platform:
            for value in args.platform:
                try:
                    _config.parse_platforms(
                        [n for n in value.split(",") if n.strip()] or [value], f"--platform {value!r}"
                    )
                except _config.ConfigError as e:
                    return _fail(parser, str(e))
        return run_check(args, passthrough, parser)
    if args.command == "explain":
        text = error_doc(args.code)
        if text is None:
            known = ", ".join(known_error_docs())
            print(f"{PROG}: error: unknown error code {args.code!r}; known codes: {known}", file=sys.stderr)
            return 2
        sys.stdout.write(text if text.endswith("\n") else text + "\n")
        return 0
    if passthrough:
        return _fail(parser, "arguments after -- need a command (typed-pallas check ... -- MYPY ARGS)")
    parser.print_help()
    return 2


if __name__ == "__main__":  # pragma: no cover
    raise SystemExit(main())
