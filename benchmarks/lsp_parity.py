"""``typed-pallas lsp``'s fine-grained route against a fresh mypy process, edit after edit,
on a real package: are the findings the same?

Usage (from the repository root)::

    .venv312/bin/python benchmarks/lsp_parity.py [--json FILE]

The project: a copy of this environment's ``jax/experimental/pallas/ops`` (42 files) as
``jax_ops/`` in a temporary folder, plus ``app.py``, which calls its TPU and GPU kernels
under ``jax.default_backend()`` guards (findings in the app, and the plugin's notes
naming the ops' files). The server's own plan (``session.plan``: ``typed-pallas
check``'s preset, layout and cache) checks it; a first ``typed-pallas check`` run warms
the cache.

Then one fine-grained worker (``python -m typed_pallas_mypy.lsp.worker --incremental``,
what the server runs) gets a series of edits, in unsaved buffers (shadow files, as the
server writes them) and on disk: the app's guards flipped, a body edit and an interface
edit (a renamed function) of the ops the app calls, another platform's params in a
kernel, a buffer that does not parse, buffers closed. After each edit, the findings the
server publishes from the worker's answer (``session.outcome``) are compared with those
of a fresh ``python -m mypy`` with the same command and shadow files (what
``typed-pallas check`` runs, and the server's fresh-process route): file, line, column,
message and notes. Printed per edit: same or different, the findings, the modules the
worker gave mypy as changed, the worker's time and the fresh process's.

What it does not do: assert anything (it exits 1 when a finding differs), or measure
the editor's round trip (``benchmarks/lsp_latency.py`` does).
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import platform
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from typed_pallas._versions import installed_version
from typed_pallas_mypy.cli.findings import MypyRun, parse_mypy_json, parse_mypy_text
from typed_pallas_mypy.lsp import session
from typed_pallas_mypy.lsp.runner import Shadows

OPS = Path("jax/experimental/pallas/ops")
APP = """\
import jax
from jax_ops.tpu import flash_attention as fa
from jax_ops.tpu import matmul as mm
from jax_ops.gpu import hopper_matmul_mgpu as hm


def attend(q, k, v):
    if jax.default_backend() == 'gpu':
        return fa.flash_attention(q, k, v)
    return hm.matmul(q, k, None, None)


def product(x, y):
    if jax.default_backend() == 'tpu':
        return mm.matmul(x, y)
    return x @ y
"""
FLASH = "jax_ops/tpu/flash_attention.py"
MATMUL = "jax_ops/tpu/matmul.py"
#: a GPU op every supported jax ships (0.12.1 removed the Triton ops, gpu/attention.py)
ATTENTION = "jax_ops/gpu/hopper_matmul_mgpu.py"


def make_project(work: Path) -> Path:
    import jax

    site = Path(jax.__file__).resolve().parent.parent
    root = work / "project"
    shutil.copytree(site / OPS, root / "jax_ops", ignore=shutil.ignore_patterns("__pycache__"))
    (root / ".git").mkdir()
    (root / "app.py").write_text(APP)
    return root


def body_edit(source: str, number: int) -> str:
    """``source`` with ``_edit = number`` before its first function's first statement."""
    func = next(
        node
        for node in ast.parse(source).body
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))
    )
    first = func.body[0]
    line = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", ()))])
    lines = source.splitlines(keepends=True)
    indent = lines[first.lineno - 1][: first.col_offset]
    lines.insert(line - 1, f"{indent}_edit = {number}\n")
    return "".join(lines)


def edits(root: Path) -> list[tuple[str, str, str | None]]:
    """(what, file, its new text: in a buffer, on disk, or None: the buffer closed)."""
    app = (root / "app.py").read_text()
    flash = (root / FLASH).read_text()
    matmul = (root / MATMUL).read_text()
    attention = (root / ATTENTION).read_text()
    flipped = app.replace("== 'gpu'", "== 'tpu'", 1)
    both = flipped.replace("== 'tpu':\n        return mm", "== 'gpu':\n        return mm")
    gpu_params = flash.replace(
        "from jax.experimental.pallas import tpu as pltpu",
        "from jax.experimental.pallas import tpu as pltpu\n"
        "from jax.experimental.pallas import triton as plgpu",
    ).replace("compiler_params=pltpu.CompilerParams(", "compiler_params=plgpu.CompilerParams(", 1)
    more = (
        app + "\n\ndef more(x):\n    if jax.default_backend() == 'gpu':\n"
        "        return mm.matmul(x, x)\n    return x\n"
    )
    return [
        ("buffer", "app.py", flipped),
        ("buffer", "app.py", both),
        ("buffer", "app.py", app),
        ("buffer", MATMUL, body_edit(matmul, 1)),
        ("buffer", MATMUL, matmul.replace("def matmul(", "def matmul_renamed(")),
        ("buffer", MATMUL, matmul),
        ("close", MATMUL, None),
        ("buffer", FLASH, gpu_params),
        ("buffer", "app.py", app.replace("def attend(q, k, v):", "def attend(q, k, v:")),
        ("buffer", "app.py", more),
        ("close", FLASH, None),
        ("disk", "app.py", more),
        ("close", "app.py", None),
        ("disk", ATTENTION, attention.replace("def matmul(", "def matmul_renamed(")),
        ("disk", ATTENTION, body_edit(attention, 2)),
        ("disk", MATMUL, body_edit(matmul, 3)),
        ("disk", "app.py", app),
    ]


def shown(planned: session.Plan, run: MypyRun) -> list[list[Any]] | None:
    found = session.outcome(planned, run).findings
    if found is None:
        return None
    return [[os.path.normpath(f.file), f.line, f.column, f.message, *f.notes] for f in found]


def fresh(root: Path, planned: session.Plan, pairs: dict[str, str]) -> tuple[MypyRun, float]:
    plan = session.Plan(**{**vars(planned), "shadows": list(pairs.items())})
    start = time.perf_counter()
    done = subprocess.run(
        plan.fresh_command, cwd=root, env=environment(planned), capture_output=True, text=True
    )
    seconds = time.perf_counter() - start
    findings, other = parse_mypy_json(done.stdout)
    from_stderr, rest = parse_mypy_text(done.stderr)
    run = MypyRun(
        plan.fresh_command, done.returncode, findings + from_stderr, other, "\n".join(rest)
    )
    return run, seconds


def environment(planned: session.Plan) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TYPED_PALLAS", "MYPY"))}
    return {**env, **planned.env}


def measure() -> dict[str, Any]:
    work = Path(tempfile.mkdtemp(prefix="typed-pallas-lsp-parity-"))
    root = make_project(work)
    before = os.getcwd()
    os.chdir(root)
    try:
        planned = session.plan(session.Options(), str(work))
    finally:
        os.chdir(before)
    assert isinstance(planned, session.Plan), planned
    env = environment(planned)
    start = time.perf_counter()
    subprocess.run(planned.command, cwd=root, env=env, capture_output=True, check=False)
    cold = time.perf_counter() - start
    worker = subprocess.Popen(
        [sys.executable, "-m", "typed_pallas_mypy.lsp.worker", "--incremental"],
        cwd=root, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    assert worker.stdin is not None and worker.stdout is not None
    shadows = Shadows(str(work / "shadows"))
    buffers: dict[str, str] = {}
    rows: list[dict[str, Any]] = []
    try:
        for what, name, text in [("open", "", None), *edits(root)]:
            if what == "buffer":
                assert text is not None
                buffers[name] = text
            elif what == "close":
                buffers.pop(name, None)
            elif what == "disk":
                assert text is not None
                (root / name).write_text(text)
            pairs = {
                str(root / n): shadows.write(str(root / n), t)
                for n, t in buffers.items()
                if t != (root / n).read_text()
            }
            request = {"command": planned.command, "shadows": [list(p) for p in pairs.items()]}
            start = time.perf_counter()
            worker.stdin.write(json.dumps(request) + "\n")
            worker.stdin.flush()
            reply = json.loads(worker.stdout.readline())
            seconds = time.perf_counter() - start
            if "stdout" not in reply:
                raise SystemExit(f"the worker did not check {what} {name}: {reply}")
            findings, other = parse_mypy_json(reply["stdout"])
            ours = shown(planned, MypyRun(planned.command, reply["status"], findings, other, ""))
            run, fresh_seconds = fresh(root, planned, pairs)
            theirs = shown(planned, run)
            row = {
                "edit": f"{what} {name}".strip(),
                "same": ours == theirs,
                "findings": None if ours is None else len(ours),
                "given_to_mypy": reply["updated"],
                "fine_grained_s": round(seconds, 3),
                "fresh_s": round(fresh_seconds, 3),
            }
            if ours != theirs:
                row["fine_grained"], row["fresh"] = ours, theirs
            rows.append(row)
            shown_count = "kept" if row["findings"] is None else row["findings"]
            print(
                f"{row['edit']:42s} {'same' if row['same'] else 'DIFFERENT':9s} "
                f"findings {shown_count!s:4s} fine-grained {seconds:6.3f} s "
                f"({len(reply['updated'])} module(s))  fresh {fresh_seconds:6.3f} s"
            )
    finally:
        worker.stdin.close()
        worker.wait()
        shutil.rmtree(work, ignore_errors=True)
    edited = rows[1:]
    return {
        "project": "jax/experimental/pallas/ops (42 files) + app.py",
        "cold_check_s": round(cold, 2),
        "first_check_fine_grained_s": rows[0]["fine_grained_s"],
        "edits": len(edited),
        "all_same": all(r["same"] for r in rows),
        "median_s": {
            "fine_grained": round(statistics.median(r["fine_grained_s"] for r in edited), 3),
            "fresh": round(statistics.median(r["fresh_s"] for r in edited), 3),
        },
        "rows": rows,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--json", metavar="FILE", help="write the results there")
    args = parser.parse_args()
    result = measure()
    result["date"] = time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime())
    result["machine"] = {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "mypy": installed_version("mypy"),
        "jax": installed_version("jax"),
    }
    m = result["median_s"]
    print(
        f"{result['edits']} edits: findings {'all the same' if result['all_same'] else 'DIFFER'}; "
        f"medians: fine-grained {m['fine_grained']:.3f} s, fresh process {m['fresh']:.3f} s"
    )
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=1) + "\n")
    return 0 if result["all_same"] else 1


if __name__ == "__main__":
    sys.exit(main())
