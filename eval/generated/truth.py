"""Truth from JAX: each program lowered for the platform its guard names, at both ends.

The outcomes come from ``_worker`` run in each JAX environment (``ENDS``), in batches, and
are cached in ``verdicts.json`` next to this file, keyed by the program's hash (its name)
and the JAX release: a program whose text changes gets a new name, a new JAX release new
keys. ``verdict`` reads them:

* the control: the program must lower for its own kernel's platform (TPU params: tpu;
  Triton, Mosaic GPU, no params, interpret: cuda); where it does not, the program does not
  trace at this end and is not judged (``NO_TRACE``);
* ``FAILS`` where JAX raised, in its own code, lowering for a platform the guard names;
* ``ROCM_ONLY`` where the guard lets cuda and rocm through (a guard for ``"gpu"``), cuda
  lowered and only rocm refused: code for NVIDIA GPUs under a guard for ``"gpu"``, which
  the checker does not report by design (Mosaic GPU params; at jax 0.10, a kernel without
  params: docs/inference-model.md, "The evaluator"); scored apart from recall;
* ``LOWERS`` where every platform the guard names lowered;
* ``NO_TRACE`` too where the error was raised outside JAX (the generated code itself).
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Final

from eval.generated.program import Program

REPO: Final = Path(__file__).resolve().parents[2]
CACHE: Final = Path(__file__).with_name("verdicts.json")

#: the JAX environments: end -> its interpreter (relative to the repository)
ENDS: Final[dict[str, str]] = {"py311": ".venv311/bin/python", "py312": ".venv312/bin/python"}

FAILS: Final = "fails"
LOWERS: Final = "lowers"
NO_TRACE: Final = "no trace"
ROCM_ONLY: Final = "rocm only"

Outcome = list[Any] | None  # None: lowered; [type, message, raised in JAX]
Outcomes = dict[str, Outcome]  # platform -> outcome


def interpreter(end: str) -> Path:
    return REPO / ENDS[end]


def jax_release(end: str) -> str:
    """The jax release installed at ``end`` (read from its metadata: jax is not imported)."""
    done = subprocess.run(
        [str(interpreter(end)), "-c", "import importlib.metadata as m; print(m.version('jax'))"],
        capture_output=True,
        text=True,
        check=True,
    )
    return done.stdout.strip()


def platforms_of(program: Program) -> tuple[str, ...]:
    return tuple(sorted({program.control_platform, *program.lowering_platforms}))


def verdict(program: Program, outcomes: Mapping[str, Outcome]) -> tuple[str, str]:
    """(``FAILS`` / ``LOWERS`` / ``NO_TRACE``, JAX's message or why)."""
    control = outcomes[program.control_platform]
    if control is not None:
        return NO_TRACE, f"control {program.control_platform}: {control[0]}: {control[1]}"
    refused = {p: o for p in program.lowering_platforms if (o := outcomes[p]) is not None}
    if not refused:
        return LOWERS, ""
    platform, (kind, message, in_jax) = next(iter(refused.items()))
    if not in_jax:
        return NO_TRACE, f"{platform}: {kind} outside JAX: {message}"
    if list(refused) == ["rocm"] and "cuda" in program.lowering_platforms:
        return ROCM_ONLY, f"rocm: {kind}: {message} (cuda lowers)"
    return FAILS, f"{platform}: {kind}: {message}"


def key(program: Program, release: str) -> str:
    return f"{program.digest}@jax{release}"


def load_cache(path: Path = CACHE) -> dict[str, Outcomes]:
    if not path.exists():
        return {}
    data: dict[str, Outcomes] = json.loads(path.read_text())["verdicts"]
    return data


def save_cache(cache: Mapping[str, Outcomes], path: Path = CACHE) -> None:
    body = {
        "about": "eval.generated: JAX's lowering outcomes by program@jax release",
        "verdicts": dict(sorted(cache.items())),
    }
    path.write_text(json.dumps(body, indent=0, sort_keys=False) + "\n")


def missing(
    programs: Iterable[Program], release: str, cache: Mapping[str, Outcomes]
) -> list[Program]:
    return [p for p in programs if key(p, release) not in cache]


def _run_worker(end: str, root: Path, batch: Sequence[Program]) -> dict[str, Outcomes]:
    request = {
        "root": str(root),
        "items": [
            {
                "name": p.name,
                "module": p.entry[0],
                "function": p.entry[1],
                "platforms": list(platforms_of(p)),
            }
            for p in batch
        ],
    }
    done = subprocess.run(
        [str(interpreter(end)), "-m", "eval.generated._worker"],
        input=json.dumps(request),
        capture_output=True,
        text=True,
        cwd=REPO,
        check=False,
    )
    if done.returncode != 0:
        raise RuntimeError(f"verdict worker at {end} failed:\n{done.stderr[-3000:]}")
    outcomes: dict[str, Outcomes] = json.loads(done.stdout)["outcomes"]
    return outcomes


def judge(
    programs: Sequence[Program],
    ends: Sequence[str],
    work: Path,
    *,
    batch: int = 250,
    cache_path: Path = CACHE,
    log: Any = sys.stderr,
) -> dict[str, dict[str, Outcomes]]:
    """end -> program name -> outcomes; missing ones are lowered (both ends at once, one
    worker per end and batch) and added to the cache, which is saved after each batch."""
    cache = load_cache(cache_path)
    releases = {end: jax_release(end) for end in ends}
    root = work.resolve() / "programs"
    todo = {end: missing(programs, releases[end], cache) for end in ends}
    if any(todo.values()):
        root.mkdir(parents=True, exist_ok=True)
        for program in {p.name: p for ps in todo.values() for p in ps}.values():
            program.write(root)

    def run_end(end: str) -> None:
        pending = todo[end]
        for start in range(0, len(pending), batch):
            chunk = pending[start : start + batch]
            began = time.monotonic()
            got = _run_worker(end, root, chunk)
            for program in chunk:
                cache[key(program, releases[end])] = got[program.name]
            save_cache(cache, cache_path)
            print(
                f"verdicts {end} (jax {releases[end]}): {start + len(chunk)}/{len(pending)}"
                f" lowered in {time.monotonic() - began:.0f}s",
                file=log,
                flush=True,
            )

    with ThreadPoolExecutor(max_workers=len(ends)) as pool:
        list(pool.map(run_end, ends))
    return {end: {p.name: cache[key(p, releases[end])] for p in programs} for end in ends}
