"""Run mypy (with or without the typed-pallas plugin) on installed code and parse what it says.

What it does: writes the mypy config of ``typed-pallas check`` (its preset, from
``typed_pallas_mypy.cli.findings.preset_config``: the plugin, ``follow_imports =
silent``, ``ignore_missing_imports``, ``check_untyped_defs``; no typed-pallas settings,
so the checker runs "with no configuration"), runs ``python -m mypy -O json`` in a
subprocess with a per-run cache directory and optional ``--shadow-file`` pairs (the
command built by the CLI's ``mypy_command``), parses the JSON lines with the CLI's
``parse_mypy_json``, and returns the errors, the wall time, and whether mypy crashed (a
traceback or ``INTERNAL ERROR``) or stopped on a blocking error.

The interpreter running this module must import ``typed_pallas_mypy`` (the repository's
venvs install it); the one running mypy is ``python=`` and may differ.

What it does not do: decide what an error means for a mutant (``eval.corpus``), or
time anything but the whole subprocess.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Final

from typed_pallas_mypy.cli.findings import (
    PLUGIN_MODULE,
    PRESET_SETTINGS,
    mypy_command,
    parse_mypy_json,
    preset_config,
)

PLUGIN = PLUGIN_MODULE
CODE = "pallas-platform"

#: mypy flags on top of the preset: a crash must show its traceback
BASE_FLAGS: tuple[str, ...] = ("--show-traceback",)


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


def write_config(
    path: Path,
    plugin: str | None,
    *,
    check_untyped_defs: bool = True,
    own_modules: Sequence[str] = (),
) -> Path:
    """The CLI's preset config with ``plugin`` (None: plain mypy with the same settings);
    ``own_modules``: top-level modules followed normally, as ``typed-pallas check`` follows
    the project's own (mypy drops the function bodies of silently followed modules)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(
        preset_config(plugin, check_untyped_defs=check_untyped_defs, own_modules=own_modules)
    )
    return path


def preset_flags(*, check_untyped_defs: bool = True) -> list[str]:
    """The preset's settings spelled as mypy's command-line flags, for the results' record."""
    return [
        "--" + key.replace("_", "-") + ("" if value == "True" else f"={value}")
        for key, value in PRESET_SETTINGS
        if check_untyped_defs or key != "check_untyped_defs"
    ]


#: kept from the caller's environment: which engine answers (``TYPED_PALLAS_SUMMARIES=0``
#: measures the rules in place of the evaluator's summaries, the default)
_KEPT: Final = ("TYPED_PALLAS_SUMMARIES",)


def clean_env(extra_pythonpath: Sequence[str] = ()) -> dict[str, str]:
    """The environment minus any typed-pallas or mypy settings the caller may have (but
    the engine's switch, ``_KEPT``)."""
    env = {
        k: v
        for k, v in os.environ.items()
        if k in _KEPT or (not k.startswith(("TYPED_PALLAS", "MYPY")) and k != "PYTHONPATH")
    }
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
    extra_env: Mapping[str, str] | None = None,
    timeout: float = 3600,
) -> RunResult:
    """Run mypy once. ``targets`` are relative file paths (under ``cwd``) or ``-m``/``-p``
    arguments; ``shadows`` maps a relpath under ``root`` to a mutated copy; ``extra_env``
    is set on top of the clean environment (``TYPED_PALLAS_CONFIG`` for a configured run).
    Paths in the result are relative to ``root``."""
    arguments = [*BASE_FLAGS, *flags]
    for rel, shadow in (shadows or {}).items():
        arguments += ["--shadow-file", str(root / rel), str(shadow)]
    arguments += list(targets)
    cmd = mypy_command(str(config), str(cache_dir), arguments, python=python)
    t0 = time.perf_counter()
    try:
        proc = subprocess.run(
            cmd,
            cwd=cwd,
            env={**clean_env(extra_pythonpath), **(extra_env or {})},
            capture_output=True,
            text=True,
            timeout=timeout,
        )
        stdout, out, rc = proc.stdout, proc.stdout + proc.stderr, proc.returncode
    except subprocess.TimeoutExpired as e:
        stdout = out = (
            (e.stdout or b"").decode() if isinstance(e.stdout, bytes) else (e.stdout or "")
        )
        rc = -9
    seconds = time.perf_counter() - t0
    res = RunResult(rc=rc, seconds=seconds)
    root_s = str(root.resolve()) + os.sep
    findings, _ = parse_mypy_json(stdout)
    for f in findings:
        ap = os.path.abspath(os.path.join(cwd, f.file))
        rel = ap[len(root_s) :] if ap.startswith(root_s) else f.file
        res.diagnostics.append(
            Diagnostic(rel.replace(os.sep, "/"), f.line, f.severity, f.message, f.code)
        )
    res.crashed = "INTERNAL ERROR" in out or "Traceback (most recent call last)" in out or rc < 0
    res.blocked = rc == 2 and not res.crashed
    if res.crashed or res.blocked or rc not in (0, 1):
        res.tail = out[-4000:]
    return res
