"""The ``typed-pallas`` command line, its error docs, examples and generated docs.

Fast tests call the CLI's functions (parsing mypy's JSON, the three output formats,
``# expect`` matching, ``explain``, usage errors that stop before mypy). The slow ones run
``typed-pallas check`` (mypy with the plugin) on a small temporary project and on
``examples/``; they share one mypy cache, so jax is analysed once per session.
"""

from __future__ import annotations

import importlib.util
import io
import json
import os
import re
import runpy
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from typed_pallas_mypy import cli, config
from typed_pallas_mypy.cli import expect, explain, findings, formats

ROOT = Path(__file__).resolve().parent.parent
EXAMPLES = ROOT / "examples"
ERRORS_SRC = ROOT / "mypy_plugin" / "typed_pallas_mypy" / "errors"


# --------------------------------------------------------------------------- mypy JSON -> findings


def _mypy_line(**kw: object) -> str:
    base: dict[str, object] = {
        "file": "a.py", "line": 3, "column": 4, "end_line": 3, "end_column": 9,
        "message": "m", "hint": None, "code": "pallas-platform", "severity": "error",
    }  # fmt: skip
    base.update(kw)
    return json.dumps(base)


def test_parse_mypy_json_attaches_notes_and_makes_columns_one_based() -> None:
    out = "\n".join(
        [
            _mypy_line(hint="first\nsecond"),
            _mypy_line(severity="note", line=7, message="evidence elsewhere", code=None),
            _mypy_line(file="b.py", severity="note", message="alone", code="misc"),
            "Found 1 error in 1 file (errors prevented further checking)",
        ]
    )
    parsed, other = findings.parse_mypy_json(out)
    assert [f.file for f in parsed] == ["a.py", "b.py"]
    first = parsed[0]
    assert (first.line, first.column, first.end_column) == (3, 5, 10)
    assert first.notes == ["first", "second", "evidence elsewhere"]
    assert parsed[1].severity == "note" and parsed[1].notes == []
    assert other == ["Found 1 error in 1 file (errors prevented further checking)"]


def test_select_keeps_plugin_and_blocking_codes_unless_all_errors() -> None:
    parsed, _ = findings.parse_mypy_json(
        "\n".join(
            [
                _mypy_line(code="pallas-platform"),
                _mypy_line(code="arg-type", message="type error"),
                _mypy_line(code="syntax", message="bad syntax"),
                _mypy_line(code="misc", severity="note", message="Revealed type", line=9),
                _mypy_line(
                    code="arg-type",
                    line=11,
                    message='Argument "compiler_params" to "kernel" has incompatible type "tpu.CompilerParams"; '
                    "expected \"typed_pallas._params.CompilerParams[Literal['gpu']] | None\"",
                ),
                _mypy_line(
                    code="call-overload",
                    line=12,
                    message='No overload variant of "pallas_call" matches',
                    hint="Possible overload variants:\n    def pallas_call(...) -> PlatformFn[Literal['tpu'], ...]",
                ),
                _mypy_line(
                    code="call-overload",
                    line=13,
                    message='No overload variant of "f" matches',
                    hint="x",
                ),
            ]
        )
    )
    codes = findings.plugin_error_codes()
    assert "pallas-platform" in codes
    kept = findings.select(parsed, codes, all_errors=False)
    assert [(f.code, f.line) for f in kept] == [
        ("pallas-platform", 3),
        ("syntax", 3),
        ("arg-type", 11),
        ("call-overload", 12),
    ]
    assert len(findings.select(parsed, codes, all_errors=True)) == 7


def test_output_formats() -> None:
    finding = findings.Finding(
        file="pkg/k.py", line=12, column=5, severity="error", code="pallas-platform",
        message="Compiler params for platform tpu cannot be used for gpu lowering.",
        notes=["evidence: a, b", "100% sure"], end_line=12, end_column=20,
    )  # fmt: skip
    assert formats.text_lines(finding) == [
        "pkg/k.py:12:5: error: Compiler params for platform tpu cannot be used for gpu lowering.  [pallas-platform]",
        "pkg/k.py:12:5: note: evidence: a, b",
        "pkg/k.py:12:5: note: 100% sure",
    ]
    assert formats.github_line(finding) == (
        "::error file=pkg/k.py,line=12,col=5,endLine=12,endColumn=20,title=pallas-platform::"
        "Compiler params for platform tpu cannot be used for gpu lowering.%0Aevidence: a, b%0A100%25 sure"
    )
    odd = findings.Finding(
        file="a,b:c.py", line=1, column=1, severity="note", code=None, message="x"
    )
    assert formats.github_line(odd) == "::notice file=a%2Cb%3Ac.py,line=1,col=1::x"
    stream = io.StringIO()
    formats.emit([finding], "json", False, stream)
    data = json.loads(stream.getvalue())
    assert data == [
        {
            "file": "pkg/k.py", "line": 12, "column": 5, "end_line": 12, "end_column": 20,
            "severity": "error", "code": "pallas-platform", "message": finding.message,
            "notes": ["evidence: a, b", "100% sure"],
        }
    ]  # fmt: skip
    stream = io.StringIO()
    formats.emit([], "text", False, stream)
    assert stream.getvalue() == "Success: no typed-pallas issues found\n"
    stream = io.StringIO()
    formats.emit([finding, finding], "text", False, stream)
    assert stream.getvalue().splitlines()[-1] == "Found 2 typed-pallas errors in 1 file"


# --------------------------------------------------------------------------- expectations


def test_expectations_pair_findings_with_comments(tmp_path: Path) -> None:
    src = tmp_path / "k.py"
    src.write_text(
        textwrap.dedent(
            """\
            f(
                a=1,  # expect[pallas-platform]: message one
            )
            g(b=2)  # expect[pallas-platform]
            h(c=3)  # expect[other-code]
            """
        )
    )
    exps = expect.read_expectations(str(src))
    assert [(e.line, e.code, e.message) for e in exps] == [
        (2, "pallas-platform", "message one"),
        (4, "pallas-platform", None),
        (5, "other-code", None),
    ]

    def finding(line: int, message: str, code: str = "pallas-platform") -> findings.Finding:
        return findings.Finding(
            file=str(src), line=line, column=1, severity="error", message=message, code=code
        )

    matched, unexpected, missing = expect.compare_expectations(
        [
            finding(1, "message one"),
            finding(4, "anything"),
            finding(4, "extra"),
            finding(5, "x", "pallas-platform"),
        ],
        exps,
    )
    assert sorted((f.line, e.line) for f, e in matched) == [(1, 2), (4, 4)]
    assert [(f.line, f.message) for f in unexpected] == [(4, "extra"), (5, "x")]
    assert [e.line for e in missing] == [5]
    # a wrong message does not match
    _, unexpected, missing = expect.compare_expectations([finding(1, "message two")], exps[:1])
    assert len(unexpected) == 1 and len(missing) == 1


def test_every_mistake_example_has_an_expectation_and_correct_ones_none() -> None:
    files = expect.python_files([str(EXAMPLES)])
    mistakes = [f for f in files if "mistakes" in f]
    assert len(mistakes) >= 5
    for path in mistakes:
        assert expect.read_expectations(path), path
    for path in files:
        if "correct" in path:
            assert not expect.read_expectations(path), path
    names = [os.path.basename(f) for f in files]
    assert len(names) == len(set(names)), "mypy names scripts by file name: keep them unique"


# --------------------------------------------------------------------------- explain / version / usage


def error_docs() -> list[str]:
    return sorted(p.stem for p in ERRORS_SRC.glob("*.md"))


def test_every_error_has_documentation() -> None:
    from typed_pallas import _errors

    docs = set(error_docs())
    assert findings.plugin_error_codes() <= docs
    runtime = {
        n for n, v in vars(_errors).items() if isinstance(v, type) and issubclass(v, Exception)
    }
    assert runtime and runtime <= docs
    assert set(explain.known_error_docs()) == docs


@pytest.mark.parametrize("code", error_docs())
def test_explain_prints_each_doc(code: str, capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["explain", code]) == 0
    out = capsys.readouterr().out
    assert out == (ERRORS_SRC / f"{code}.md").read_text(encoding="utf-8")
    assert out.startswith(f"# {code}\n")
    for section in (
        "## What it means",
        "## Smallest code that triggers it",
        "## Before / after",
        "## How to silence it",
    ):
        assert section in out


def smallest_code(code: str) -> str:
    """The first python block under '## Smallest code that triggers it'."""
    text = (ERRORS_SRC / f"{code}.md").read_text(encoding="utf-8")
    m = re.search(r"## Smallest code that triggers it\s+```python\n(.*?)```", text, re.S)
    assert m, code
    return m.group(1)


def first_block(code: str) -> str:
    text = (ERRORS_SRC / f"{code}.md").read_text(encoding="utf-8")
    m = re.search(r"```\n(.*?)```", text, re.S)
    assert m, code
    return m.group(1)


def first_block_after(code: str, marker: str) -> str:
    text = (ERRORS_SRC / f"{code}.md").read_text(encoding="utf-8")
    m = re.search(re.escape(marker) + r".*?```\n(.*?)```", text, re.S)
    assert m, (code, marker)
    return m.group(1)


RUN_SNIPPETS = """
import json, sys, traceback
out = {}
for name, source in json.loads(sys.argv[1]).items():
    try:
        exec(compile(source, name + ".py", "exec"), {"__name__": "__main__"})
        out[name] = None
    except Exception as e:
        out[name] = [type(e).__module__ + "." + type(e).__name__, str(e), list(getattr(e, "__notes__", []))]
print(json.dumps(out))
"""


@pytest.mark.slow
def test_runtime_error_docs_show_what_their_code_raises() -> None:
    """Each runtime error's 'smallest code' raises it, with the message the doc shows."""
    names = [c for c in error_docs() if c != c.lower()]
    snippets = {name: smallest_code(name) for name in names}
    proc = subprocess.run(
        [sys.executable, "-c", RUN_SNIPPETS, json.dumps(snippets)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    raised = json.loads(proc.stdout.strip().splitlines()[-1])
    for name in names:
        assert raised[name] is not None, f"{name}: its smallest code raised nothing"
        kind, message, notes = raised[name]
        assert kind == f"typed_pallas.{name}"
        shown = first_block(name).splitlines()
        assert shown[0] == f"{kind}: {message}"
        assert shown[1:] == notes[: len(shown) - 1]


@pytest.mark.parametrize(
    ("spelling", "code"),
    [
        pytest.param("PALLAS-PLATFORM", "pallas-platform", id="case"),
        pytest.param("pallas_platform", "pallas-platform", id="underscore"),
        pytest.param("typed_pallas.PlatformMismatchError", "PlatformMismatchError", id="dotted"),
        pytest.param("platformmismatcherror", "PlatformMismatchError", id="lower"),
    ],
)
def test_explain_accepts_spellings(spelling: str, code: str) -> None:
    assert explain.error_doc(spelling) == explain.known_error_docs()[code]


def test_explain_unknown_code(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["explain", "pallas-platfrom"]) == 2
    err = capsys.readouterr().err
    assert "unknown error code 'pallas-platfrom'" in err
    for code in error_docs():
        assert code in err


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as info:
        cli.main(["--version"])
    assert info.value.code == 0
    assert re.match(
        r"typed-pallas \S+ \(mypy \S+, Python 3\.\d+\.\d+\)$", capsys.readouterr().out.strip()
    )


@pytest.mark.parametrize(
    ("argv", "fragment"),
    [
        pytest.param(
            ["check", "--platform", "xpu", "."], "unknown platform 'xpu'", id="bad-platform"
        ),
        pytest.param(["check", "--output", "xml", "."], "invalid choice: 'xml'", id="bad-output"),
        pytest.param(
            ["check", "no/such/dir"], "no such file or directory: no/such/dir", id="missing-path"
        ),
        pytest.param(
            ["check", "--config", "no-such.toml", "."],
            "no-such.toml: no such file",
            id="missing-config",
        ),
        pytest.param(["--", "--strict"], "need a command", id="passthrough-without-command"),
    ],
)
def test_usage_errors_exit_2_before_mypy(
    argv: list[str], fragment: str, capsys: pytest.CaptureFixture[str]
) -> None:
    try:
        rc = cli.main(argv)
    except SystemExit as e:  # argparse's own usage errors
        rc = e.code  # type: ignore[assignment]
    assert rc == 2
    assert fragment in capsys.readouterr().err


def test_bad_project_config_exits_2_before_mypy(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "setup.cfg").write_text("[mypy.plugins.typed-pallas]\nplatforms = tpu, npu\n")
    (tmp_path / "k.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(config.CONFIG_ENV, raising=False)
    monkeypatch.delenv(config.PLATFORMS_ENV, raising=False)
    assert cli.main(["check", "k.py"]) == 2
    err = capsys.readouterr().err
    assert "setup.cfg: [mypy.plugins.typed-pallas] platforms: unknown platform 'npu'" in err


@pytest.mark.parametrize(
    ("returncode", "stdout", "stderr", "expected"),
    [
        pytest.param(1, "", "No module named mypy\n", 2, id="rc1-without-errors-is-not-success"),
        pytest.param(2, "", "Traceback ... INTERNAL ERROR\n", 2, id="crash"),
        pytest.param(0, "", "", 0, id="clean"),
        pytest.param(1, _mypy_line(code="arg-type"), "", 0, id="only-other-codes"),
        pytest.param(1, _mypy_line(), "", 1, id="finding"),
    ],
)
def test_exit_status_from_mypy_result(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    returncode: int,
    stdout: str,
    stderr: str,
    expected: int,
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(config.CONFIG_ENV, raising=False)
    monkeypatch.delenv(config.PLATFORMS_ENV, raising=False)

    def fake_run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
        assert cmd[1:3] == ["-m", "mypy"] and "-O" in cmd and cmd[-1] == "a.py"
        return subprocess.CompletedProcess(cmd, returncode, stdout, stderr)

    monkeypatch.setattr(findings.subprocess, "run", fake_run)
    assert cli.main(["check", "a.py"]) == expected
    captured = capsys.readouterr()
    if expected == 2:
        assert stderr in captured.err
        assert "Success" not in captured.out


def test_config_env_is_respected_and_config_option_wins(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.typed-pallas]\nplatforms = ["tpu"]\n')
    other = tmp_path / "other.ini"
    other.write_text("[mypy.plugins.typed-pallas]\nplatforms = rocm\n")
    third = tmp_path / "third.toml"
    third.write_text('[tool.typed-pallas]\nplatforms = ["cuda"]\n')
    (tmp_path / "a.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv(config.PLATFORMS_ENV, raising=False)
    seen: list[str] = []

    def fake_run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
        env = kw["env"]
        assert isinstance(env, dict)
        seen.append(env[config.CONFIG_ENV])
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(findings.subprocess, "run", fake_run)
    monkeypatch.delenv(config.CONFIG_ENV, raising=False)
    assert cli.main(["check", "a.py"]) == 0
    monkeypatch.setenv(config.CONFIG_ENV, str(other))
    assert cli.main(["check", "a.py"]) == 0
    assert cli.main(["check", "--config", str(third), "a.py"]) == 0
    assert seen == [str(tmp_path / "pyproject.toml"), str(other), str(third)]


def test_missing_mypy_is_a_usage_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    (tmp_path / ".git").mkdir()
    (tmp_path / "a.py").write_text("x = 1\n")
    monkeypatch.chdir(tmp_path)
    real = importlib.util.find_spec
    monkeypatch.setattr(
        importlib.util, "find_spec", lambda name, *a: None if name == "mypy" else real(name, *a)
    )
    assert cli.main(["check", "."]) == 2
    err = capsys.readouterr().err
    assert "pip install 'mypy" in err and "(typed-pallas[mypy])" in err


def test_check_finds_the_config_with_the_plugins_search(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """`check` passes on the file `config.find_config_file` finds (the plugin's own search)."""
    (tmp_path / ".git").mkdir()
    sub = tmp_path / "a" / "b"
    sub.mkdir(parents=True)
    (sub / "k.py").write_text("x = 1\n")
    (tmp_path / "pyproject.toml").write_text('[tool.typed-pallas]\nplatforms = ["tpu"]\n')
    (tmp_path / "a" / "mypy.ini").write_text("[mypy]\n")  # no section: skipped
    (tmp_path / "a" / "setup.cfg").write_text("[mypy.plugins.typed-pallas]\nplatforms = gpu\n")
    monkeypatch.chdir(sub)
    monkeypatch.delenv(config.CONFIG_ENV, raising=False)
    monkeypatch.delenv(config.PLATFORMS_ENV, raising=False)
    seen: list[str | None] = []

    def fake_run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
        env = kw["env"]
        assert isinstance(env, dict)
        seen.append(env.get(config.CONFIG_ENV))
        return subprocess.CompletedProcess(cmd, 0, "", "")

    monkeypatch.setattr(findings.subprocess, "run", fake_run)
    assert cli.main(["check", "k.py"]) == 0
    assert seen == [str(tmp_path / "a" / "setup.cfg")] == [config.find_config_file(None)]
    (tmp_path / "a" / "setup.cfg").unlink()
    assert cli.main(["check", "k.py"]) == 0
    assert seen[-1] == str(tmp_path / "pyproject.toml")


# --------------------------------------------------------------------------- docs, hook, examples


def test_docs_errors_md_is_generated_from_the_source() -> None:
    spec = importlib.util.spec_from_file_location("gen_docs", ROOT / "scripts" / "gen_docs.py")
    assert spec and spec.loader
    gen_docs = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(gen_docs)
    text = gen_docs.render()
    assert (ROOT / "docs" / "errors.md").read_text(encoding="utf-8") == text, (
        "run scripts/gen_docs.py"
    )
    for code in error_docs():
        assert f"\n## {code}\n" in text


def test_configuration_doc_covers_every_key() -> None:
    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    names = [
        *config.TOP_LEVEL_KEYS, *config.OVERRIDE_KEYS, *config.PLATFORM_NAMES,
        config.PLATFORMS_ENV, config.CONFIG_ENV, f"[{config.TOML_TABLE}]", f"[{config.INI_SECTION}]",
        config.INI_OVERRIDE_PREFIX, "--platform", "--all-errors", "--output", "--expect",
    ]  # fmt: skip
    for name in names:
        assert name in doc, name


def test_pre_commit_hook_definition() -> None:
    yaml = pytest.importorskip("yaml")
    hooks = yaml.safe_load((ROOT / ".pre-commit-hooks.yaml").read_text())
    (hook,) = hooks
    assert hook["id"] == "typed-pallas"
    assert hook["entry"] == "typed-pallas check"
    assert hook["language"] == "python"
    assert "python" in hook["types_or"]


def _mosaic_gpu_importable() -> bool:
    try:
        import jax.experimental.pallas.mosaic_gpu  # noqa: F401
    except ImportError:
        return False
    return True


@pytest.mark.parametrize("path", expect.python_files([str(EXAMPLES)]), ids=os.path.basename)
def test_examples_import(path: str) -> None:
    if "mosaic_gpu" in Path(path).read_text() and not _mosaic_gpu_importable():
        pytest.skip("jax.experimental.pallas.mosaic_gpu does not import here (needs absl)")
    runpy.run_path(path)  # defines kernels; runs nothing


@pytest.mark.slow
def test_interpret_example_runs_on_cpu() -> None:
    proc = subprocess.run(
        [sys.executable, str(EXAMPLES / "correct" / "interpret_on_cpu.py")],
        capture_output=True, text=True, timeout=300,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "ok"


LOWER_SCRIPT = """
import json, runpy, sys
import jax, jax.numpy as jnp
out = {}
for path, fn, nargs in json.loads(sys.argv[1]):
    x = jnp.ones((256, 256), jnp.float32)
    try:
        jax.jit(runpy.run_path(path)[fn]).trace(*[x] * nargs).lower(lowering_platforms=("tpu",))
        out[fn] = "lowered"
    except Exception as e:  # JAX's own failure: an empty AssertionError or its ValueError
        out[fn] = type(e).__name__
print(json.dumps(out))
"""


@pytest.mark.slow
def test_examples_lower_for_tpu_as_labelled() -> None:
    """The examples are real: correct TPU code lowers for TPU, the TPU-side mistakes do not.

    Cross-lowering for TPU works on a CPU-only machine; GPU lowering needs a GPU.
    """
    cases = [
        (str(EXAMPLES / "correct" / "tpu_matmul.py"), "matmul", 2),
        (str(EXAMPLES / "correct" / "multi_platform_dispatch.py"), "scale", 1),
        (str(EXAMPLES / "mistakes" / "tpu_dma_kernel_triton_params.py"), "hbm_copy", 1),
        (str(EXAMPLES / "mistakes" / "swapped_platform_dependent.py"), "square", 1),
    ]
    proc = subprocess.run(
        [sys.executable, "-c", LOWER_SCRIPT, json.dumps(cases)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    assert proc.returncode == 0, proc.stderr
    result = json.loads(proc.stdout.strip().splitlines()[-1])
    assert result["matmul"] == result["scale"] == "lowered"
    assert result["hbm_copy"] in ("AssertionError", "ValueError", "PlatformMismatchError")
    assert result["square"] in ("AssertionError", "ValueError", "PlatformMismatchError")


# --------------------------------------------------------------------------- end to end (mypy)

BAD = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as pltriton


def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def run(x):
    if jax.default_backend() == "tpu":
        return pl.pallas_call(
            kernel,
            out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
            compiler_params=pltriton.CompilerParams(num_warps=4),
        )(x)
    return x
"""

GOOD = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]


def run(x):
    return pl.pallas_call(
        kernel,
        out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype),
        compiler_params=pltpu.CompilerParams(),
    )(x)
"""

TYPO = 'x: int = "not an int"\n'


@pytest.fixture(scope="module")
def mypy_cache(tmp_path_factory: pytest.TempPathFactory) -> str:
    return str(tmp_path_factory.mktemp("mypy-cache"))


@pytest.fixture(scope="module")
def proj(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("proj")
    (root / ".git").mkdir()
    (root / "bad_call.py").write_text(BAD)
    (root / "good_call.py").write_text(GOOD)
    (root / "typo.py").write_text(TYPO)
    (root / "broken.py").write_text("def f(:\n")
    return root


def run_cli(cwd: Path, cache: str, *args: str) -> subprocess.CompletedProcess[str]:
    env = {
        k: v for k, v in os.environ.items() if k not in (config.PLATFORMS_ENV, config.CONFIG_ENV)
    }
    return subprocess.run(
        [sys.executable, "-m", "typed_pallas_mypy.cli", "check", "--cache-dir", cache, *args],
        cwd=cwd, env=env, capture_output=True, text=True, timeout=600,
    )  # fmt: skip


BAD_LINE = 12  # the pl.pallas_call line in BAD
MESSAGE = "Compiler params for platform gpu cannot be used for tpu lowering."


@pytest.mark.slow
def test_check_text_output(proj: Path, mypy_cache: str) -> None:
    proc = run_cli(proj, mypy_cache, "bad_call.py", "good_call.py", "typo.py")
    assert proc.returncode == 1, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].startswith(f"bad_call.py:{BAD_LINE}:")
    assert lines[0].endswith(f"error: {MESSAGE}  [pallas-platform]")
    assert any(
        line.startswith(f"bad_call.py:{BAD_LINE}:") and ": note: " in line for line in lines[1:]
    )
    assert "typo.py" not in proc.stdout  # mypy's own errors are not shown by default
    assert lines[-1] == "Found 1 typed-pallas error in 1 file"


@pytest.mark.slow
def test_check_json_and_github_outputs(proj: Path, mypy_cache: str) -> None:
    proc = run_cli(proj, mypy_cache, "--output", "json", "bad_call.py", "good_call.py")
    assert proc.returncode == 1, proc.stderr
    (item,) = json.loads(proc.stdout)
    assert item["file"] == "bad_call.py" and item["line"] == BAD_LINE and item["column"] >= 1
    assert (item["severity"], item["code"], item["message"]) == (
        "error",
        "pallas-platform",
        MESSAGE,
    )
    assert item["notes"] and all(isinstance(n, str) for n in item["notes"])

    proc = run_cli(proj, mypy_cache, "--output", "github", "bad_call.py", "good_call.py")
    assert proc.returncode == 1, proc.stderr
    first = proc.stdout.splitlines()[0]
    assert re.match(
        rf"::error file=bad_call\.py,line={BAD_LINE},col=\d+,.*title=pallas-platform::", first
    )
    assert MESSAGE + "%0A" in first


@pytest.mark.slow
def test_check_clean_all_errors_passthrough_and_blocking(proj: Path, mypy_cache: str) -> None:
    clean = run_cli(proj, mypy_cache, "good_call.py")
    assert (clean.returncode, clean.stdout.strip()) == (
        0,
        "Success: no typed-pallas issues found",
    ), clean.stderr

    everything = run_cli(proj, mypy_cache, "--all-errors", "good_call.py", "typo.py")
    assert everything.returncode == 1
    assert "typo.py:1:" in everything.stdout and "[assignment]" in everything.stdout

    # arguments after -- reach mypy (an option that leaves mypy's cache valid)
    excluded = run_cli(proj, mypy_cache, ".", "--", "--exclude", r"(bad_call|broken)\.py$")
    assert (excluded.returncode, excluded.stdout.strip()) == (
        0,
        "Success: no typed-pallas issues found",
    ), excluded.stdout + excluded.stderr

    broken = run_cli(proj, mypy_cache, "broken.py", "good_call.py")
    assert broken.returncode == 2
    assert "broken.py:1:" in broken.stdout and "[syntax]" in broken.stdout
    assert "Success" not in broken.stdout


@pytest.mark.slow
def test_examples_give_exactly_the_expected_findings(mypy_cache: str) -> None:
    """What scripts/check runs (there on jax 0.10.2; here on this venv's jax)."""
    proc = run_cli(ROOT, mypy_cache, "examples", "--expect")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "Expectations met:" in proc.stdout


SRC_KERNELS = """\
from typing import Any
from jax.experimental.pallas import tpu as pltpu


def body(x_ref: Any, o_ref: Any) -> None:
    pltpu.sync_copy(x_ref, o_ref)
"""
SRC_DISPATCH = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as pltriton
from pkg.kernels import body


def f(x: jax.Array) -> object:
    return pl.pallas_call(body, out_shape=x, compiler_params=pltriton.CompilerParams())(x)
"""


@pytest.mark.slow
def test_src_layout_and_unresolved_own_imports(tmp_path: Path, mypy_cache: str) -> None:
    """A src layout with a namespace package (no __init__.py): without src/ on mypy_path the
    import of pkg.kernels would be Any and the finding lost; an import of a module the project
    does not have is a warning on stderr."""
    (tmp_path / ".git").mkdir()
    pkg = tmp_path / "src" / "pkg"
    pkg.mkdir(parents=True)
    (pkg / "kernels.py").write_text(SRC_KERNELS)
    (pkg / "dispatch.py").write_text(SRC_DISPATCH)
    found = run_cli(tmp_path, mypy_cache, "src/pkg")
    assert found.returncode == 1, found.stdout + found.stderr
    assert found.stdout.splitlines()[0].startswith("src/pkg/dispatch.py:8:"), found.stdout
    assert "sync_copy (in body, src/pkg/kernels.py:6)" in found.stdout
    assert "warning" not in found.stderr, found.stderr

    # a new size as well as a new text: mypy takes a file of the same size and mtime second
    # as unchanged, and a warm run can finish within that second
    (pkg / "dispatch.py").write_text(SRC_DISPATCH.replace("pkg.kernels", "pkg.missing_kernels"))
    missed = run_cli(tmp_path, mypy_cache, "src/pkg")
    assert missed.returncode == 0, missed.stdout + missed.stderr
    assert (
        "warning: cannot resolve the project's own import pkg.missing_kernels (src/pkg/dispatch.py:4)"
        in missed.stderr
    )


# The configured runs come last and share one configuration (platforms = gpu, from
# --platform or from the project file), so whatever a configuration change costs mypy's
# cache is paid once.


@pytest.mark.slow
def test_check_platform_option_and_project_config(
    tmp_path: Path, proj: Path, mypy_cache: str
) -> None:
    # --platform sets the top-level platforms: unguarded TPU params now contradict them
    gpu = run_cli(proj, mypy_cache, "--platform", "gpu", "good_call.py")
    assert gpu.returncode == 1, gpu.stderr
    assert "good_call.py:11:" in gpu.stdout
    assert (
        "Compiler params for platform tpu cannot be used for gpu lowering.  [pallas-platform]"
        in gpu.stdout
    )

    # the project's own [tool.typed-pallas] is found from the current folder
    (tmp_path / ".git").mkdir()
    (tmp_path / "pyproject.toml").write_text('[tool.typed-pallas]\nplatforms = ["gpu"]\n')
    (tmp_path / "k.py").write_text(GOOD)
    configured = run_cli(tmp_path, mypy_cache, "k.py")
    assert configured.returncode == 1, configured.stderr
    assert "k.py:11:" in configured.stdout
    assert "Compiler params for platform tpu cannot be used for gpu lowering." in configured.stdout

    # the pallas-platform doc shows what its smallest code really gives
    (tmp_path / "add.py").write_text(smallest_code("pallas-platform"))
    doc = run_cli(tmp_path, mypy_cache, "--config", str(tmp_path / "pyproject.toml"), "add.py")
    shown = [
        line
        for line in first_block_after("pallas-platform", "`typed-pallas check add.py`").splitlines()
        if ": error: " in line
    ]
    assert doc.returncode == 1, doc.stderr
    assert [line for line in doc.stdout.splitlines() if ": error: " in line] == shown, (
        "update errors/pallas-platform.md"
    )


def test_check_of_one_file_reads_the_projects_other_modules(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """``check dispatch.py`` alone: the kernel module it imports is analysed with its
    function bodies (mypy drops them for silently followed modules), and only
    dispatch.py's findings are shown."""
    (tmp_path / ".git").mkdir()
    (tmp_path / "tpu_ops.py").write_text(
        "import jax\n"
        "from jax.experimental import pallas as pl\n"
        "from jax.experimental.pallas import tpu as pltpu\n"
        "\n"
        "def kernel(x_ref, o_ref):\n"
        "    o_ref[...] = x_ref[...]\n"
        "\n"
        "def add_one_tpu(x):\n"
        "    return pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())(x)\n"
        "\n"
        "def unrelated(x: int) -> str:\n"
        "    return x  # a type error outside the checked path: not shown\n"
    )
    (tmp_path / "dispatch.py").write_text(
        "import jax\nimport tpu_ops\n\ndef run(x):\n"
        "    if jax.default_backend() == 'gpu':\n"
        "        return tpu_ops.add_one_tpu(x)\n"
        "    return x\n"
    )
    monkeypatch.chdir(tmp_path)
    code = cli.main(
        ["check", "--output", "json", "--cache-dir", str(tmp_path / "cache"), "dispatch.py"]
    )
    out = capsys.readouterr().out
    found = json.loads(out)
    assert code == 1, out
    assert [(f["file"], f["line"], f["code"]) for f in found] == [
        ("dispatch.py", 6, "pallas-platform")
    ], out
