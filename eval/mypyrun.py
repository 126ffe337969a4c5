"""Run mypy (with or without the typed-pallas plugin) on installed code and parse what it says.

What it does: writes a tiny mypy config that only names the plugin (no typed-pallas
settings: the checker runs "with no configuration"), runs ``python -m mypy`` in a
subprocess with a per-run cache directory and optional ``--shadow-file`` pairs, and
returns the errors, the wall time, and whether mypy crashed (a traceback or
``INTERNAL ERROR``) or stopped on a blocking error.

What it does not do: decide what an error means for a mutant (``eval.corpus``), or
time anything but the whole subprocess.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path

PLUGIN = "typed_pallas_mypy"
CODE = "pallas-platform"

#: mypy flags for third-party code that nobody configured for us
BASE_FLAGS: tuple[str, ...] = (
    "--follow-imports=silent",
    "--ignore-missing-imports",
    "--no-error-summary",
    "--show-traceback",
    "--no-color-output",
    "--no-pretty",
    "--hide-error-context",
)

_LINE = re.compile(
    r"^(?P<path>[^\n:]+?):(?P<line>\d+):(?:\d+:)? (?P<sev>error|note|warning): "
    r"(?P<msg>.*?)(?:  \[(?P<code>[a-z0-9-]+)\])?$"
)


@dataclass(frozen=True)
class Diagnostic:
    relpath: str
    line: int
    severity: str
    message: str
    code: str | None

    @property
    def key(self) -> tuple[str, int, str]:
        return (self.relpath, self.line, self.message)


@dataclass
class RunResult:
    rc: int
    seconds: float
    diagnostics: list[Diagnostic] = field(default_factory=list)
    crashed: bool = False
    blocked: bool = False
    tail: str = ""

    @property
    def platform_errors(self) -> list[Diagnostic]:
        """The plugin's own errors (code ``pallas-platform``)."""
        return [d for d in self.diagnostics if d.severity == "error" and d.code == CODE]

    @property
    def typed_pallas_errors(self) -> list[Diagnostic]:
        """The plugin's errors plus the stubs' ``arg-type`` errors on ``compiler_params``
        (the stubs narrow some entry points, e.g. ``plgpu.kernel``, and the plugin then
        does not report the same mismatch twice)."""
        return [d for d in self.diagnostics if d.severity == "error" and source_of(d) is not None]


def source_of(d: Diagnostic) -> str | None:
    """'plugin' for a pallas-platform error, 'stubs' for an arg-type error on compiler_params."""
    if d.code == CODE:
        return "plugin"
    if d.code == "arg-type" and 'Argument "compiler_params"' in d.message:
        return "stubs"
    return None


def write_config(path: Path, plugin: str | None) -> Path:
    """A config that loads the plugin and nothing else (None: plain mypy)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    text = "[mypy]\n" + (f"plugins = {plugin}\n" if plugin else "")
    path.write_text(text)
    return path


def clean_env(extra_pythonpath: Sequence[str] = ()) -> dict[str, str]:
    """The environment minus any typed-pallas or mypy settings the caller may have."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("TYPED_PALLAS", "MYPY")) and k != "PYTHONPATH"}
    if extra_pythonpath:
        env["PYTHONPATH"] = os.pathsep.join(extra_pythonpath)
    return env


def run_mypy(
    targets: Sequence[str],
    *,
    cwd: Path,
    root: Path,
    cache_dir: Path,
    config: Path,
    python: str = sys.executable,
    flags: Iterable[str] = (),
    shadows: Mapping[str, Path] | None = None,
    extra_pythonpath: Sequence[str] = (),
    timeout: float = 3600,
) -> RunResult:
    """Run mypy once. ``targets`` are relative file paths (under ``cwd``) or ``-m``/``-p``
    arguments; ``shadows`` maps a relpath under ``root`` to a mutated copy.
    Paths in the result are relative to ``root``."""
    cmd = [python, "-m", "mypy", "--config-file", str(config), "--cache-dir", str(cache_dir),
           *BASE_FLAGS, *flags]
    for rel, shadow in (shadows or {}).items():
        cmd += ["--shadow-file", str(root / rel), str(shadow)]
    cmd += list(targets)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(cmd, cwd=cwd, env=clean_env(extra_pythonpath), capture_output=True,
                              text=True, timeout=timeout)
        out, rc = proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        out = (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        rc = -9
    seconds = time.perf_counter() - t0
    res = RunResult(rc=rc, seconds=seconds)
    root_s = str(root.resolve()) + os.sep
    for raw in out.splitlines():
        m = _LINE.match(raw)
        if not m:
            continue
        path = m["path"]
        ap = os.path.abspath(os.path.join(cwd, path))
        rel = ap[len(root_s):] if ap.startswith(root_s) else path
        res.diagnostics.append(Diagnostic(rel.replace(os.sep, "/"), int(m["line"]), m["sev"],
                                          m["msg"], m["code"]))
    res.crashed = "INTERNAL ERROR" in out or "Traceback (most recent call last)" in out or rc < 0
    res.blocked = rc == 2 and not res.crashed
    if res.crashed or res.blocked or rc not in (0, 1):
        res.tail = out[-4000:]
    return res
