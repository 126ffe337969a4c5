"""The checker's answer on generated programs, in the parity harness's three layouts.

``project``: the library packages beside the applications (project code); ``untyped``:
the packages in a site folder on ``PYTHONPATH``, without ``py.typed`` (installed, untyped);
``typed``: the same with ``py.typed`` in each package. One ``typed-pallas check --output
json`` per batch and layout, on every application of the batch (each program has its own
package names), from the environment of the JAX end being measured; mypy's cache is one
folder per end, shared by the layouts (jax is analysed once).
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any, Final

from eval.generated.program import Program
from eval.generated.truth import interpreter

LAYOUTS: Final = ("project", "untyped", "typed")
PROGRAM_NAME: Final = re.compile(r"gp_[0-9a-f]{16}")

#: program name -> its pallas-platform findings: (file, line, message)
Findings = dict[str, list[tuple[str, int, str]]]


def lay_out(programs: Sequence[Program], root: Path, layout: str) -> tuple[Path, dict[str, str]]:
    """Write ``programs`` in ``layout`` under ``root`` (emptied first); (the folder to
    check from, the environment)."""
    if root.exists():
        shutil.rmtree(root)
    project = root / "project"
    project.mkdir(parents=True)
    env = dict(os.environ)
    env.pop("PYTHONPATH", None)
    if layout == "project":
        for program in programs:
            program.write(project)
        return project, env
    site = root / "site-packages"
    for program in programs:
        program.write(project, library=site)
        if layout == "typed":
            (site / program.name / "py.typed").write_text("")
    env["PYTHONPATH"] = str(site)
    return project, env


def parse(output: str) -> Findings:
    found: Findings = {}
    rows: list[dict[str, Any]] = json.loads(output) if output.strip() else []
    for row in rows:
        if row.get("code") != "pallas-platform":
            continue
        match = PROGRAM_NAME.search(str(row["file"]))
        if match is None:
            continue
        found.setdefault(match.group(0), []).append(
            (str(row["file"]), int(row["line"]), str(row["message"]))
        )
    return found


def check(
    programs: Sequence[Program], end: str, layout: str, work: Path, *, log: Any = sys.stderr
) -> Findings:
    """One ``typed-pallas check`` over ``programs`` laid out as ``layout`` at ``end``."""
    work = work.resolve()  # the command runs in the project's folder
    project, env = lay_out(programs, work / f"check-{end}" / layout, layout)
    cache = work / f"mypy-cache-{end}"
    command = [
        str(interpreter(end).parent / "typed-pallas"),
        "check",
        "--output",
        "json",
        "--cache-dir",
        str(cache),
        *sorted(p.app for p in programs),
    ]
    began = time.monotonic()
    done = subprocess.run(
        command, cwd=project, env=env, capture_output=True, text=True, check=False
    )
    if done.returncode not in (0, 1):
        raise RuntimeError(
            f"typed-pallas check ({end}, {layout}) exited {done.returncode}:\n"
            f"{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
        )
    print(
        f"check {end} {layout}: {len(programs)} programs in {time.monotonic() - began:.0f}s",
        file=log,
        flush=True,
    )
    return parse(done.stdout)
