"""The fine-grained route (``lsp/finegrained.py`` in ``worker --incremental``): after each
edit, on disk or in an unsaved buffer, it reports what a fresh mypy process with the
same command reports (the findings ``typed-pallas check`` shows, notes included), while
mypy is given only the changed modules; and it says when it cannot check: another
mypy's internals, a command line mypy refuses, a file added.

The worker runs in a process of its own (it switches the plugin to its long-lived mode,
which must not leak into the test process), on the module's project and cache.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from mypy_seeds import MypySeeds

from tests.lsp.conftest import CALLER, DISPATCH, TPU_OPS, server_env, write_project
from typed_pallas_mypy.cli.findings import MypyRun, parse_mypy_json, parse_mypy_text
from typed_pallas_mypy.lsp import finegrained, session
from typed_pallas_mypy.lsp.runner import Shadows

MESSAGE = "Compiler params for platform tpu cannot be used for gpu lowering."
TPU_PARAMS = "pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())(x)"
NO_PARAMS = "pl.pallas_call(kernel, out_shape=x)(x)"


class Worker:
    """``python -m typed_pallas_mypy.lsp.worker --incremental`` in the project."""

    def __init__(self, root: Path, env: dict[str, str], prelude: str | None = None) -> None:
        if prelude is None:
            command = [sys.executable, "-m", "typed_pallas_mypy.lsp.worker", "--incremental"]
        else:  # the worker after ``prelude`` (a mypy made incompatible)
            main = "from typed_pallas_mypy.lsp.worker import main; main()"
            command = [sys.executable, "-c", f"{prelude}\n{main}", "--incremental"]
        self.proc = subprocess.Popen(
            command,
            cwd=root,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
        )

    def ask(self, command: Sequence[str], shadows: dict[str, str]) -> dict[str, Any]:
        assert self.proc.stdin is not None and self.proc.stdout is not None
        request = {"command": list(command), "shadows": [list(p) for p in shadows.items()]}
        self.proc.stdin.write(json.dumps(request) + "\n")
        self.proc.stdin.flush()
        reply: dict[str, Any] = json.loads(self.proc.stdout.readline())
        return reply

    def close(self) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.close()
        self.proc.wait(timeout=60)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_project(tmp_path_factory.mktemp("fine-grained-project"))


@pytest.fixture(scope="module")
def planned(project: Path, tmp_path_factory: pytest.TempPathFactory) -> session.Plan:
    """The server's plan for the project, its cache warmed by a first check."""
    before = os.getcwd()
    os.chdir(project)
    try:
        found = session.plan(session.Options(), str(tmp_path_factory.mktemp("work")))
    finally:
        os.chdir(before)
    assert isinstance(found, session.Plan)
    subprocess.run(found.command, cwd=project, env=_env(found), capture_output=True, check=False)
    return found


@pytest.fixture
def worker(project: Path, planned: session.Plan) -> Iterator[Worker]:
    each = Worker(project, _env(planned))
    yield each
    each.close()


def _env(planned: session.Plan) -> dict[str, str]:
    return {**server_env(), **planned.env}


def _shown(planned: session.Plan, run: MypyRun) -> list[tuple[object, ...]] | None:
    """What the server publishes for a run (None: it keeps what it showed)."""
    found = session.outcome(planned, run).findings
    if found is None:
        return None
    return [(os.path.normpath(f.file), f.line, f.column, f.message, *f.notes) for f in found]


def _fresh(project: Path, planned: session.Plan, shadows: dict[str, str]) -> MypyRun:
    """A fresh mypy process with the same command and shadow files."""
    fresh = session.Plan(**{**vars(planned), "shadows": list(shadows.items())})
    done = subprocess.run(
        fresh.fresh_command, cwd=project, env=_env(planned), capture_output=True, text=True
    )
    findings, other = parse_mypy_json(done.stdout)
    from_stderr, rest = parse_mypy_text(done.stderr)
    return MypyRun(
        fresh.fresh_command, done.returncode, findings + from_stderr, other, "\n".join(rest)
    )


def _run(planned: session.Plan, reply: dict[str, Any]) -> MypyRun:
    assert "stdout" in reply, reply
    findings, other = parse_mypy_json(reply["stdout"])
    return MypyRun(planned.command, reply["status"], findings, other, reply["stderr"])


def test_unsupported_is_none_with_this_mypy() -> None:
    assert finegrained.unsupported() is None


@pytest.mark.parametrize(
    ("module", "name"), [("mypy.build", "DEPS_META_FILE"), ("mypy.main", "process_options")]
)
def test_unsupported_names_what_another_mypy_lacks(
    monkeypatch: pytest.MonkeyPatch, module: str, name: str
) -> None:
    monkeypatch.delattr(f"{module}.{name}")
    assert finegrained.unsupported() == f"{module} has no {name}"


@pytest.mark.slow
def test_each_edit_reports_what_a_fresh_mypy_reports(
    worker: Worker, project: Path, planned: session.Plan, tmp_path: Path
) -> None:
    shadows = Shadows(str(tmp_path / "shadows"))
    buffers: dict[str, str] = {}
    disk = {p.name: p.read_text(encoding="utf-8") for p in project.glob("*.py")}
    tpu_callee = TPU_OPS.replace(NO_PARAMS, TPU_PARAMS)
    steps: list[tuple[str, str | None, str | None, set[str], set[str] | None]] = [
        # (what, file, its text in the buffer or on disk, the modules given to mypy as
        # changed, the files with findings (None: the server keeps what it showed))
        ("open", None, None, {"tpu_ops", "dispatch", "caller", "untyped"}, {"dispatch.py"}),
        ("buffer", "dispatch.py", DISPATCH.replace("'gpu'", "'tpu'"), {"dispatch"}, set()),
        ("buffer", "tpu_ops.py", tpu_callee, {"tpu_ops"}, {"caller.py"}),
        ("disk", "dispatch.py", DISPATCH.replace("'gpu'", "'tpu'"), {"dispatch"}, {"caller.py"}),
        ("close", "dispatch.py", None, set(), {"caller.py"}),
        ("close", "tpu_ops.py", None, {"tpu_ops"}, set()),
        ("buffer", "caller.py", CALLER.replace("def run(x):", "def run(x:"), {"caller"}, None),
        ("buffer", "caller.py", CALLER + "\n# edited\n", {"caller"}, set()),
        ("disk", "dispatch.py", DISPATCH, {"dispatch"}, {"dispatch.py"}),
        ("disk", "tpu_ops.py", tpu_callee, {"tpu_ops"}, {"dispatch.py", "caller.py"}),
    ]
    try:
        for what, name, text, given, files in steps:
            if what == "buffer":
                assert name is not None and text is not None
                buffers[name] = text
            elif what == "close":
                buffers.pop(str(name))
            elif what == "disk":
                assert name is not None and text is not None
                (project / name).write_text(text, encoding="utf-8")
            pairs = {  # as the server: a shadow for each buffer that differs from its file
                str(project / n): shadows.write(str(project / n), t)
                for n, t in buffers.items()
                if t != (project / n).read_text(encoding="utf-8")
            }
            reply = worker.ask(planned.command, pairs)
            assert set(reply["updated"]) == given, (what, name, reply["updated"])
            shown = _shown(planned, _run(planned, reply))
            assert shown == _shown(planned, _fresh(project, planned, pairs)), (what, name)
            assert (None if shown is None else {f[0] for f in shown}) == files, (what, name)
            if files == {"dispatch.py"}:
                assert shown is not None and shown[0][:4] == ("dispatch.py", 6, 16, MESSAGE)
    finally:
        for name, text in disk.items():
            (project / name).write_text(text, encoding="utf-8")


#: ``dispatch.py`` calling ``tpu_ops.kernel`` with Triton params (no guard): wrong when the
#: kernel's body is TPU-only, which is read from ``tpu_ops`` at the entry call
KERNEL_CALLER = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as pltriton
import tpu_ops

def run(x):
    return pl.pallas_call(tpu_ops.kernel, out_shape=x, compiler_params=pltriton.CompilerParams())(x)
"""
PLAIN_BODY = "    o_ref[...] = x_ref[...]"
TPU_BODY = "    pltpu.sync_copy(x_ref, o_ref)"


@pytest.mark.slow
def test_a_kernel_body_edited_in_another_module_rechecks_the_entry_call(
    worker: Worker, project: Path, planned: session.Plan
) -> None:
    """The kernel of ``dispatch.py``'s entry call is in ``tpu_ops.py``; only its body is
    edited (TPU-only, plain, TPU-only): each step reports what a fresh mypy reports, and
    the entry call's finding comes, goes and comes back."""
    disk = {p.name: p.read_text(encoding="utf-8") for p in project.glob("*.py")}
    ops = project / "tpu_ops.py"
    (project / "dispatch.py").write_text(KERNEL_CALLER, encoding="utf-8")
    try:
        for body, fires in ((TPU_BODY, True), (PLAIN_BODY, False), (TPU_BODY, True)):
            ops.write_text(TPU_OPS.replace(PLAIN_BODY, body), encoding="utf-8")
            shown = _shown(planned, _run(planned, worker.ask(planned.command, {})))
            assert shown == _shown(planned, _fresh(project, planned, {})), body
            assert shown is not None
            at_call = [f for f in shown if f[0] == "dispatch.py" and f[1] == 7]
            assert bool(at_call) == fires, (body, shown)
    finally:
        for name, text in disk.items():
            (project / name).write_text(text, encoding="utf-8")


@pytest.mark.slow
def test_a_file_added_restarts_the_worker(
    worker: Worker, project: Path, planned: session.Plan
) -> None:
    assert "stdout" in worker.ask(planned.command, {})
    added = project / "added.py"
    added.write_text("import tpu_ops\n", encoding="utf-8")
    try:
        reply = worker.ask(planned.command, {})
    finally:
        added.unlink()
    assert reply == {"restart": "a file of the project was added or removed"}


@pytest.mark.slow
def test_a_module_added_that_the_project_imports_restarts_the_worker(
    project: Path, planned: session.Plan, tmp_path: Path
) -> None:
    """A file outside the checked paths that an import could not find until now (a new
    module of a package of the project): mypy's state would keep the import missing."""
    package = project / "helpers"
    package.mkdir()
    (package / "__init__.py").write_text("", encoding="utf-8")
    dispatch = project / "dispatch.py"
    before = os.getcwd()
    os.chdir(project)
    try:
        narrow = session.plan(session.Options(paths=("dispatch.py",)), str(tmp_path))
    finally:
        os.chdir(before)
    assert isinstance(narrow, session.Plan)
    worker = Worker(project, _env(narrow))
    try:
        dispatch.write_text(DISPATCH + "import helpers.extra\n", encoding="utf-8")
        missing = _run(narrow, worker.ask(narrow.command, {}))
        assert [f.code for f in missing.findings if f.code != "pallas-platform"] == [
            "import-not-found"
        ]
        (package / "extra.py").write_text("X = 1\n", encoding="utf-8")
        reply = worker.ask(narrow.command, {})
        assert reply == {"restart": "helpers.extra, which the project imports, was added"}
    finally:
        worker.close()
        dispatch.write_text(DISPATCH, encoding="utf-8")
        for each in (package / "extra.py", package / "__init__.py"):
            each.unlink(missing_ok=True)
        package.rmdir()


@pytest.mark.slow
def test_a_command_mypy_refuses_is_checked_by_a_fresh_process(
    worker: Worker, planned: session.Plan
) -> None:
    reply = worker.ask([*planned.command, "--no-such-option"], {})
    assert set(reply) == {"fresh"}
    assert "unrecognized arguments: --no-such-option" in reply["fresh"]


@pytest.mark.slow
def test_another_mypys_internals_make_it_unavailable(project: Path, planned: session.Plan) -> None:
    worker = Worker(
        project, _env(planned), prelude="import mypy.build\ndel mypy.build.DEPS_META_FILE"
    )
    try:
        assert worker.ask(planned.command, {}) == {
            "unavailable": "mypy.build has no DEPS_META_FILE"
        }
    finally:
        worker.close()


LIBRARY = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton

def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]

def add_one(x):
    return pl.pallas_call(kernel, out_shape=x, compiler_params=PARAMS)(x)
"""

LIBRARY_CALLER = """\
import jax
import mylib

def run(x):
    if jax.default_backend() == 'gpu':
        return mylib.add_one(x)
    return x
"""


@pytest.mark.slow
def test_a_library_edited_restarts_the_worker(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, mypy_seeds: MypySeeds
) -> None:
    """An untyped library on ``PYTHONPATH`` is in no state of mypy's, only in what the
    plugin read: its edit makes the worker ask for a restart (the server then checks in
    a fresh process, from the cache, whose keys hold the library's files), which gives
    the cold answer; with nothing edited the worker answers itself."""
    root = tmp_path / "project"
    (root / ".git").mkdir(parents=True)
    (root / "app.py").write_text(LIBRARY_CALLER, encoding="utf-8")
    vendor = tmp_path / "vendor"
    init = vendor / "mylib" / "__init__.py"
    init.parent.mkdir(parents=True)
    init.write_text(LIBRARY.replace("PARAMS", "pltpu.CompilerParams()"), encoding="utf-8")
    monkeypatch.setenv("PYTHONPATH", str(vendor))
    cache = tmp_path / "cache"
    mypy_seeds.check_into(cache)
    monkeypatch.chdir(root)
    planned = session.plan(session.Options(cache_dir=str(cache)), str(tmp_path))
    assert isinstance(planned, session.Plan)
    monkeypatch.chdir(tmp_path)

    def at_call(run: MypyRun) -> list[tuple[object, ...]]:
        shown = _shown(planned, run)
        assert shown is not None
        return [f[:4] for f in shown]

    finding = [("app.py", 6, 16, MESSAGE)]
    worker = Worker(root, _env(planned))
    try:
        first = _run(planned, worker.ask(planned.command, {}))
        assert at_call(first) == at_call(_fresh(root, planned, {})) == finding
        again = worker.ask(planned.command, {})  # nothing changed: answered in place
        assert at_call(_run(planned, again)) == finding
        init.write_text(LIBRARY.replace("PARAMS", "pltriton.CompilerParams()"), encoding="utf-8")
        stat = init.stat()
        os.utime(init, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))
        assert worker.ask(planned.command, {}) == {
            "restart": "a library the plugin read was edited, installed or uninstalled"
        }
    finally:
        worker.close()
    assert at_call(_fresh(root, planned, {})) == []  # what the server runs instead
    worker = Worker(root, _env(planned))  # and the next worker, from that cache
    try:
        assert at_call(_run(planned, worker.ask(planned.command, {}))) == []
    finally:
        worker.close()
