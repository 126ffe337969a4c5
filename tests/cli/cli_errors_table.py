"""Bad input for every ``typed-pallas`` subcommand and output format: the inputs, and what
each gives (exit status, the first line on stderr, a summary of stdout), written out by
hand from a real run. ``test_errors.py`` runs every case and compares; docs/cli-errors.md
is this table rendered (``python tests/cli/cli_errors_table.py`` writes it; the test
checks it is up to date).

Placeholders: ``{project}`` is the project folder (the current folder of the run). An
expected line that ends with `` ...`` is compared as a prefix (the rest lists things that
change as the project grows: the known error codes, the number of stub files).
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
DOC = ROOT / "docs" / "cli-errors.md"
#: how ``{project}`` is shown in the documentation
DOC_PROJECT = "/home/me/proj"
#: a correct Python file, for the inputs that are about something else
OK_PY = b"x = 1\n"


@dataclass(frozen=True)
class Command:
    name: str
    #: its --output formats (none: the command has no --output)
    outputs: tuple[str | None, ...]


COMMANDS = (
    Command("check", ("text", "json", "github", "sarif")),
    Command("platforms", ("text", "json", "mermaid")),
    Command("init", (None,)),
    Command("explain", (None,)),
)


@dataclass(frozen=True)
class Input:
    """One kind of bad input: the files of the project, and the arguments of each subcommand."""

    name: str
    files: dict[str, bytes]
    args: dict[str, tuple[str, ...]]
    #: whether the run is repeated in each output format (not for a bad --output itself)
    with_formats: bool = True
    #: whether mypy runs (the slow cases)
    runs_mypy: tuple[str, ...] = field(default=())


INPUTS = (
    Input(
        "a missing path",
        {},
        {
            "check": ("nope.py",),
            "platforms": ("nope.py",),
            "init": ("nope",),
            "explain": ("nope.py",),
        },
    ),
    Input(
        "a folder with no Python file",
        {"docs/notes.md": b"# notes\n"},
        {"check": ("docs",), "platforms": ("docs",), "init": ("docs",), "explain": ("docs",)},
    ),
    Input(
        "a syntax error",
        {"broken.py": b"def f(:\n"},
        {
            "check": ("broken.py",),
            "platforms": ("broken.py",),
            "init": ("broken.py",),
            "explain": ("broken.py",),
        },
        runs_mypy=("check", "platforms"),
    ),
    Input(
        "a file that is not UTF-8",
        {"latin1.py": b'name = "\xe9t\xe9"\n'},
        {
            "check": ("latin1.py",),
            "platforms": ("latin1.py",),
            "init": ("latin1.py",),
            "explain": ("latin1.py",),
        },
        runs_mypy=("check", "platforms"),
    ),
    Input(
        "an empty file",
        {"empty.py": b""},
        {
            "check": ("empty.py",),
            "platforms": ("empty.py",),
            "init": ("empty.py",),
            "explain": ("empty.py",),
        },
        runs_mypy=("check", "platforms"),
    ),
    Input(
        "an annotation mypy cannot read",
        {"bench.py": b"def sample() -> (int, str):\n    return 1, ''\n"},
        {
            "check": ("bench.py",),
            "platforms": ("bench.py",),
            "init": ("bench.py",),
            "explain": ("bench.py",),
        },
        runs_mypy=("check", "platforms"),
    ),
    Input(
        "invalid TOML (pyproject.toml)",
        {"pyproject.toml": b"[tool.typed-pallas\n", "k.py": OK_PY},
        {"check": ("k.py",), "platforms": ("k.py",), "init": (), "explain": ("pallas-platform",)},
    ),
    Input(
        "pyproject.toml not UTF-8",
        {
            "pyproject.toml": b'[tool.typed-pallas]\nplatforms = ["tpu"]  # \xe9t\xe9\n',
            "k.py": OK_PY,
        },
        {"check": ("k.py",), "platforms": ("k.py",), "init": (), "explain": ("pallas-platform",)},
    ),
    Input(
        "an unknown configuration key",
        {"pyproject.toml": b'[tool.typed-pallas]\ntarget = ["tpu"]\n', "k.py": OK_PY},
        {"check": ("k.py",), "platforms": ("k.py",), "init": (), "explain": ("pallas-platform",)},
    ),
    Input(
        "an unknown platform in the configuration",
        {"pyproject.toml": b'[tool.typed-pallas]\nplatforms = ["npu"]\n', "k.py": OK_PY},
        {"check": ("k.py",), "platforms": ("k.py",), "init": (), "explain": ("pallas-platform",)},
    ),
    Input(
        "an unknown platform in --platform",
        {"k.py": OK_PY},
        {
            "check": ("--platform", "npu", "k.py"),
            "platforms": ("--platform", "npu", "k.py"),
            "init": ("--platform", "npu"),
            "explain": ("--platform", "npu", "pallas-platform"),
        },
    ),
    Input(
        "an unknown --output",
        {"k.py": OK_PY},
        {
            "check": ("--output", "xml", "k.py"),
            "platforms": ("--output", "xml", "k.py"),
            "init": ("--output", "xml"),
            "explain": ("--output", "xml", "pallas-platform"),
        },
        with_formats=False,
    ),
)


@dataclass(frozen=True)
class Expected:
    """What one (input, subcommand) gives, the same in every output format but stdout."""

    status: int
    #: the one line on stderr ("" for none; the cold-cache line of a first mypy run aside)
    stderr: str
    #: output format (None for a command without --output) -> :func:`stdout_summary`; "" if absent
    stdout: dict[str | None, str] = field(default_factory=dict)


EXPECTED: dict[tuple[str, str], Expected] = {
    ("a missing path", "check"): Expected(
        2,
        "typed-pallas: error: no such file or directory: nope.py; name files or folders that exist",
    ),
    ("a missing path", "platforms"): Expected(
        2,
        "typed-pallas: error: no such file or directory: nope.py; name files or folders that exist",
    ),
    ("a missing path", "init"): Expected(
        2,
        "typed-pallas: error: nope: no such folder; name the project's root folder (default: the current folder)",
    ),
    ("a missing path", "explain"): Expected(
        2,
        "typed-pallas: error: unknown error code 'nope.py'; known codes: ...",
    ),
    ("a folder with no Python file", "check"): Expected(
        2,
        "typed-pallas: error: there are no .py[i] files in docs; nothing was checked: name files or folders that hold Python code",
    ),
    ("a folder with no Python file", "platforms"): Expected(
        0,
        "typed-pallas: no Python files in docs; nothing to map",
        {
            "json": "modules=[]",
            "mermaid": "graph LR",
        },
    ),
    ("a folder with no Python file", "init"): Expected(
        0,
        "",
        {
            None: "typed-pallas init: set up {project}/docs ( ...",
        },
    ),
    ("a folder with no Python file", "explain"): Expected(
        2,
        "typed-pallas: error: unknown error code 'docs'; known codes: ...",
    ),
    ("a syntax error", "check"): Expected(
        2,
        "typed-pallas: error: broken.py:1: Expected a parameter or the end of the parameter list; nothing was checked: fix the syntax error and rerun (1 more error of this kind)",
        {
            "text": "broken.py:1:8: error: Expected a parameter or the end of the parameter list  [syntax]",
            "json": '[["broken.py", 1, "syntax"], ["broken.py", 2, "syntax"]]',
            "github": "::error file=broken.py,line=1,col=8,endLine=1,endColumn=9,title=syntax::Expected a parameter or the end of the parameter list",
            "sarif": "executionSuccessful=false, results=[syntax at broken.py:1, syntax at broken.py:2]",
        },
    ),
    ("a syntax error", "platforms"): Expected(
        2,
        "typed-pallas: error: broken.py:1: Expected a parameter or the end of the parameter list; nothing was checked: fix the syntax error and rerun (1 more error of this kind)",
    ),
    ("a syntax error", "init"): Expected(
        2,
        "typed-pallas: error: broken.py: not a folder; name the project's root folder (default: the current folder)",
    ),
    ("a syntax error", "explain"): Expected(
        2,
        "typed-pallas: error: unknown error code 'broken.py'; known codes: ...",
    ),
    ("a file that is not UTF-8", "check"): Expected(
        2,
        "typed-pallas: error: latin1.py: Cannot decode file: 'utf-8' codec can't decode byte 0xe9 in position 8: invalid continuation byte; nothing was checked: save the file as UTF-8, or declare its encoding on its first line (# -*- coding: latin-1 -*-), and rerun",
        {
            "text": "latin1.py: error: Cannot decode file: 'utf-8' codec can't decode byte 0xe9 in position 8: invalid continuation byte",
            "json": '[["latin1.py", null, null]]',
            "github": "::error file=latin1.py::Cannot decode file: 'utf-8' codec can't decode byte 0xe9 in position 8: invalid continuation byte",
            "sarif": "executionSuccessful=false, results=[mypy-error at latin1.py:1]",
        },
    ),
    ("a file that is not UTF-8", "platforms"): Expected(
        2,
        "typed-pallas: error: latin1.py: Cannot decode file: 'utf-8' codec can't decode byte 0xe9 in position 8: invalid continuation byte; nothing was checked: save the file as UTF-8, or declare its encoding on its first line (# -*- coding: latin-1 -*-), and rerun",
    ),
    ("a file that is not UTF-8", "init"): Expected(
        2,
        "typed-pallas: error: latin1.py: not a folder; name the project's root folder (default: the current folder)",
    ),
    ("a file that is not UTF-8", "explain"): Expected(
        2,
        "typed-pallas: error: unknown error code 'latin1.py'; known codes: ...",
    ),
    ("an empty file", "check"): Expected(
        0,
        "",
        {
            "text": "Success: no typed-pallas issues found",
            "json": "[]",
            "github": "Success: no typed-pallas issues found",
            "sarif": "executionSuccessful=true, results=[]",
        },
    ),
    ("an empty file", "platforms"): Expected(
        0,
        "",
        {
            "text": "No platform facts: no function here has a platform requirement or decides one.",
            "json": 'modules=["empty"]',
            "mermaid": "graph LR",
        },
    ),
    ("an empty file", "init"): Expected(
        2,
        "typed-pallas: error: empty.py: not a folder; name the project's root folder (default: the current folder)",
    ),
    ("an empty file", "explain"): Expected(
        2,
        "typed-pallas: error: unknown error code 'empty.py'; known codes: ...",
    ),
    ("an annotation mypy cannot read", "check"): Expected(
        0,
        "typed-pallas: warning: cannot read the type annotation at bench.py:1:17 (Syntax error in type annotation; Suggestion: Use Tuple[T1, ..., Tn] instead of (T1, ..., Tn)): mypy takes it as Any, so findings that depend on it may be missed; fix it, or see mypy's message with --all-errors",
        {
            "text": "Success: no typed-pallas issues found",
            "json": "[]",
            "github": "Success: no typed-pallas issues found",
            "sarif": "executionSuccessful=true, results=[]",
        },
    ),
    ("an annotation mypy cannot read", "platforms"): Expected(
        0,
        "",
        {
            "text": "No platform facts: no function here has a platform requirement or decides one.",
            "json": 'modules=["bench"]',
            "mermaid": "graph LR",
        },
    ),
    ("an annotation mypy cannot read", "init"): Expected(
        2,
        "typed-pallas: error: bench.py: not a folder; name the project's root folder (default: the current folder)",
    ),
    ("an annotation mypy cannot read", "explain"): Expected(
        2,
        "typed-pallas: error: unknown error code 'bench.py'; known codes: ...",
    ),
    ("invalid TOML (pyproject.toml)", "check"): Expected(
        2,
        "typed-pallas: error: {project}/pyproject.toml: not valid TOML: Expected ']' at the end of a table declaration (at line 1, column 19); fix it and rerun (see `typed-pallas explain configuration`)",
    ),
    ("invalid TOML (pyproject.toml)", "platforms"): Expected(
        2,
        "typed-pallas: error: {project}/pyproject.toml: not valid TOML: Expected ']' at the end of a table declaration (at line 1, column 19); fix it and rerun (see `typed-pallas explain configuration`)",
    ),
    ("invalid TOML (pyproject.toml)", "init"): Expected(
        2,
        "typed-pallas: error: {project}/pyproject.toml: not valid TOML: Expected ']' at the end of a table declaration (at line 1, column 19); fix it and rerun (see `typed-pallas explain configuration`); nothing was written",
    ),
    ("invalid TOML (pyproject.toml)", "explain"): Expected(
        0,
        "",
        {
            None: "# pallas-platform",
        },
    ),
    ("pyproject.toml not UTF-8", "check"): Expected(
        2,
        "typed-pallas: error: {project}/pyproject.toml: not UTF-8 text (invalid continuation byte at byte 43); save it as UTF-8 (see `typed-pallas explain configuration`)",
    ),
    ("pyproject.toml not UTF-8", "platforms"): Expected(
        2,
        "typed-pallas: error: {project}/pyproject.toml: not UTF-8 text (invalid continuation byte at byte 43); save it as UTF-8 (see `typed-pallas explain configuration`)",
    ),
    ("pyproject.toml not UTF-8", "init"): Expected(
        2,
        "typed-pallas: error: {project}/pyproject.toml: not UTF-8 text (invalid continuation byte at byte 43); save it as UTF-8 (see `typed-pallas explain configuration`); nothing was written",
    ),
    ("pyproject.toml not UTF-8", "explain"): Expected(
        0,
        "",
        {
            None: "# pallas-platform",
        },
    ),
    ("an unknown configuration key", "check"): Expected(
        2,
        "typed-pallas: error: {project}/pyproject.toml: [tool.typed-pallas]: unknown key 'target'; known keys are platforms, overrides, registries, check_opted_out (see `typed-pallas explain configuration`)",
    ),
    ("an unknown configuration key", "platforms"): Expected(
        2,
        "typed-pallas: error: {project}/pyproject.toml: [tool.typed-pallas]: unknown key 'target'; known keys are platforms, overrides, registries, check_opted_out (see `typed-pallas explain configuration`)",
    ),
    ("an unknown configuration key", "init"): Expected(
        2,
        "typed-pallas: error: {project}/pyproject.toml: [tool.typed-pallas]: unknown key 'target'; known keys are platforms, overrides, registries, check_opted_out (see `typed-pallas explain configuration`); nothing was written",
    ),
    ("an unknown configuration key", "explain"): Expected(
        0,
        "",
        {
            None: "# pallas-platform",
        },
    ),
    ("an unknown platform in the configuration", "check"): Expected(
        2,
        "typed-pallas: error: {project}/pyproject.toml: [tool.typed-pallas] platforms: unknown platform 'npu'; valid platforms are tpu, gpu, cuda, rocm (gpu means cuda and rocm) (see `typed-pallas explain configuration`)",
    ),
    ("an unknown platform in the configuration", "platforms"): Expected(
        2,
        "typed-pallas: error: {project}/pyproject.toml: [tool.typed-pallas] platforms: unknown platform 'npu'; valid platforms are tpu, gpu, cuda, rocm (gpu means cuda and rocm) (see `typed-pallas explain configuration`)",
    ),
    ("an unknown platform in the configuration", "init"): Expected(
        2,
        "typed-pallas: error: {project}/pyproject.toml: [tool.typed-pallas] platforms: unknown platform 'npu'; valid platforms are tpu, gpu, cuda, rocm (gpu means cuda and rocm) (see `typed-pallas explain configuration`); nothing was written",
    ),
    ("an unknown platform in the configuration", "explain"): Expected(
        0,
        "",
        {
            None: "# pallas-platform",
        },
    ),
    ("an unknown platform in --platform", "check"): Expected(
        2,
        "typed-pallas: error: --platform 'npu': unknown platform 'npu'; valid platforms are tpu, gpu, cuda, rocm (gpu means cuda and rocm)",
    ),
    ("an unknown platform in --platform", "platforms"): Expected(
        2,
        "typed-pallas: error: --platform 'npu': unknown platform 'npu'; valid platforms are tpu, gpu, cuda, rocm (gpu means cuda and rocm)",
    ),
    ("an unknown platform in --platform", "init"): Expected(
        2,
        "typed-pallas: error: unrecognized arguments: --platform; see `typed-pallas init --help`",
    ),
    ("an unknown platform in --platform", "explain"): Expected(
        2,
        "typed-pallas: error: unrecognized arguments: --platform pallas-platform; see `typed-pallas explain --help`",
    ),
    ("an unknown --output", "check"): Expected(
        2,
        "typed-pallas: error: argument --output/-o: invalid choice: 'xml' ...",
    ),
    ("an unknown --output", "platforms"): Expected(
        2,
        "typed-pallas: error: argument --output/-o: invalid choice: 'xml' ...",
    ),
    ("an unknown --output", "init"): Expected(
        2,
        "typed-pallas: error: unrecognized arguments: --output; see `typed-pallas init --help`",
    ),
    ("an unknown --output", "explain"): Expected(
        2,
        "typed-pallas: error: unrecognized arguments: --output pallas-platform; see `typed-pallas explain --help`",
    ),
}


def argv_for(inp: Input, command: str, output: str | None, cache: str) -> list[str]:
    """The command line of one case (``check`` gets the session's mypy cache)."""
    argv = [command]
    if command == "check":
        argv += ["--cache-dir", cache]
    if output is not None:
        argv += ["--output", output]
    return argv + list(inp.args[command])


def stdout_summary(command: str, output: str | None, text: str) -> str:
    """What a case printed on stdout, in one line: the first line, or for JSON and SARIF the
    entries that matter (file, line and code of each finding; whether SARIF's run completed);
    ``""`` for nothing."""
    if not text:
        return ""
    if command == "check" and output == "json":
        return json.dumps([[f["file"], f["line"], f["code"]] for f in json.loads(text)])
    if command == "check" and output == "sarif":
        run = json.loads(text)["runs"][0]
        results = [
            f"{r['ruleId']} at "
            f"{r['locations'][0]['physicalLocation']['artifactLocation']['uri']}:"
            f"{r['locations'][0]['physicalLocation']['region']['startLine']}"
            for r in run["results"]
        ]
        done = run["invocations"][0]["executionSuccessful"]
        return f"executionSuccessful={str(done).lower()}, results=[{', '.join(results)}]"
    if command == "platforms" and output == "json":
        return "modules=" + json.dumps([m["module"] for m in json.loads(text)["modules"]])
    return text.split("\n", 1)[0]


def matches(expected: str, actual: str, project: str) -> bool:
    """``actual`` is ``expected`` (``{project}`` filled in; a trailing `` ...``: a prefix)."""
    want = expected.replace("{project}", project)
    if want.endswith(" ..."):
        return actual.startswith(want[: -len(" ...")])
    return actual == want


def _cell(text: str) -> str:
    """A code span that may hold backticks (the messages quote commands in them)."""
    return "`` " + text.replace("{project}", DOC_PROJECT).replace("|", "\\|") + " ``"


def render_markdown() -> str:
    """docs/cli-errors.md: the table of :data:`EXPECTED`, and what each format prints."""
    names = [c.name for c in COMMANDS]
    out = [
        "# Bad input: what each command says",
        "",
        "<!-- Generated by tests/cli/cli_errors_table.py from the table tests/cli/test_errors.py",
        "     checks against real runs. Do not edit. -->",
        "",
        "Every error of the command line, of the configuration or of the input is one line on",
        "stderr, `typed-pallas: error: ...`, that says what is wrong and what to do, with exit",
        "status 2; no input ends in a traceback, and `typed-pallas init` writes nothing then.",
        "The same in every output format (`--output`): only stdout differs (second table).",
        "",
        "Each cell: the exit status, then the first line printed: on stderr, or, when stderr",
        "says nothing, on stdout (marked *stdout*). `...` stands for a list that grows with the",
        f"project (the known error codes, the files written); `{DOC_PROJECT}` is the project folder.",
        "",
        "| input | " + " | ".join(f"`{n}`" for n in names) + " |",
        "|---|" + "---|" * len(names),
    ]
    for inp in INPUTS:
        cells = []
        for name in names:
            exp = EXPECTED[(inp.name, name)]
            if exp.stderr:
                cells.append(f"{exp.status}: {_cell(exp.stderr)}")
            else:
                first = next(iter(exp.stdout.values()), "")
                cells.append(f"{exp.status}: *stdout* {_cell(first)}")
        out.append(f"| {inp.name} | " + " | ".join(cells) + " |")
    out += [
        "",
        "## What stdout holds, per output format",
        "",
        "When mypy stops before checking everything (a syntax error, a file it cannot read or",
        "decode), `check` shows every error it gave in the chosen format: an error without a",
        "line is `file: error: message` in text, `line: null` in JSON, an annotation with the",
        "file only for GitHub, and a SARIF result at the file's first line with the run's",
        "`invocations[0].executionSuccessful` false. `platforms` prints no map then: a map of",
        "the other files would read as complete. JSON below is `[file, line, code]` per",
        "finding; SARIF is the invocation's status and `ruleId at file:line` per result.",
        "",
        "| input | command | format | stdout |",
        "|---|---|---|---|",
    ]
    for inp in INPUTS:
        for command in COMMANDS:
            exp = EXPECTED[(inp.name, command.name)]
            for output in command.outputs if inp.with_formats else (None,):
                text = exp.stdout.get(output, "")
                if text and output is not None:
                    out.append(f"| {inp.name} | `{command.name}` | {output} | {_cell(text)} |")
    return "\n".join(out) + "\n"


if __name__ == "__main__":
    DOC.write_text(render_markdown(), encoding="utf-8")
    print(f"wrote {DOC}")
