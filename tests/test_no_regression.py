"""With typed-pallas's stubs installed, every checker sees the rest of jax as before.

Two throw-away interpreters share this venv's site-packages (through a ``.pth`` in a
``venv --without-pip``; the editable install's own ``.pth`` is not processed there):
``base`` sees ``src/`` only, ``stubs`` also sees ``stubs/`` (the stub package's own
``sys.path`` root, as in an installed wheel). Each checker then checks

* a probe file that reveals the types of jax outside Pallas (``jax.numpy``, ``jax.nn``,
  ``jax.Array``, ``jax.lax``, ``jax.random``, ...): the revealed types must be equal;
* JAX's own Pallas ops (``jax/experimental/pallas/ops``, copied out of site-packages):
  the stubs must add no error (``test_jax_ops_no_new_errors``, the costliest part).

pyright and basedpyright run twice on the stubs side: without configuration (the
stubs are invisible to them, docs/checkers.md "Layout") and with ``stubPath`` set (the
stubs are visible). A marker line proves which side saw the stubs, so the test
cannot pass by the stubs silently not being read.
"""

from __future__ import annotations

import importlib.metadata
import json
import os
import re
import shutil
import subprocess
import sys
import sysconfig
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
STUBS = ROOT / "stubs"
SRC = ROOT / "src"
BIN = Path(sys.executable).parent
CHECKERS = ("mypy", "pyright", "basedpyright", "pyrefly", "ty")
TIMEOUT_S = 900

pytestmark = pytest.mark.slow

#: Expressions whose types must not change; ``MARKER`` must change.
PROBES = (
    "jnp.zeros((3,))",
    "jnp.ndarray",
    "jnp.sum",
    "jnp.linalg.norm",
    "jax.nn.relu",
    "jax.nn.softmax",
    "jax.lax.add",
    "jax.lax.fori_loop",
    "jax.random.key",
    "jax.random.normal",
    "jax.Array",
    "jax.jit",
    "jax.vmap",
    "jax.tree_util.tree_map",
    "jax.ShapeDtypeStruct",
    "jax.experimental.io_callback",
    "jax.experimental.EArray",
    "shard_map.shard_map",
    "pl.BlockSpec",
    "pl.program_id",
    "pl.pallas_call",
    "pltpu.sync_copy",
    "pltpu.VMEM",
    "pltpu.PrefetchScalarGridSpec",
    "plsc.VectorSubcoreMesh",
    "flash_attention.flash_attention",
)
MARKER = "pltpu.CompilerParams().__pallas_platform__"

#: jax's ops checked by default: every params class, plgpu.kernel, ACC-style aliases.
#: TYPED_PALLAS_ALL_OPS=1 checks all of jax/experimental/pallas/ops (minutes per checker).
OPS_SUBSET = (
    "tpu/matmul.py",
    "tpu/all_gather.py",
    "tpu/flash_attention.py",
    "gpu/softmax.py",
    "gpu/attention.py",
    "gpu/all_gather_mgpu.py",
    "gpu/hopper_matmul_mgpu.py",
    "gpu/attention_mgpu.py",
)

#: release (a prefix of jax's version) -> the files of OPS_SUBSET it does not ship, which
#: are left out of the run there (jax 0.12.1 removed the Triton ops)
OPS_ABSENT: dict[tuple[int, ...], frozenset[str]] = {
    (0, 10): frozenset(),
    (0, 12, 0): frozenset(),
    (0, 12, 1): frozenset({"gpu/softmax.py", "gpu/attention.py"}),
}

PROBE_HEADER = """\
from typing import reveal_type

import jax
import jax.experimental
import jax.lax
import jax.nn
import jax.numpy as jnp
import jax.random
import jax.tree_util
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import tpu_sc as plsc
from jax.experimental import shard_map
from jax.experimental.pallas.ops.tpu import flash_attention

"""


def probe_source() -> str:
    lines = [f"reveal_type({expr})  # probe {i}" for i, expr in enumerate((*PROBES, MARKER))]
    return PROBE_HEADER + "\n".join(lines) + "\n"


@dataclass(frozen=True)
class Env:
    name: str
    python: Path


def _make_env(where: Path, name: str, extra: list[Path]) -> Env:
    """A venv whose sys.path is this venv's site-packages plus ``extra`` (never the editable .pth)."""
    target = where / name
    subprocess.run(
        [sys.executable, "-m", "venv", "--without-pip", str(target)], check=True, timeout=120
    )
    python = target / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        check=True,
        capture_output=True,
        text=True,
    ).stdout.strip()
    ours = sysconfig.get_paths()["purelib"]
    Path(site, "typed_pallas_no_regression.pth").write_text(
        "\n".join(str(p) for p in [*extra, Path(ours)]) + "\n"
    )
    return Env(name, python)


@pytest.fixture(scope="module")
def envs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Env]:
    where = tmp_path_factory.mktemp("envs")
    made = {
        "base": _make_env(where, "base", [SRC]),
        "stubs": _make_env(where, "stubs", [SRC, STUBS]),
    }
    check = "import jax, typed_pallas, sys; print(any(p.endswith('stubs') for p in sys.path))"
    for env, expect in (("base", "False"), ("stubs", "True")):
        out = subprocess.run(
            [str(made[env].python), "-c", check], capture_output=True, text=True, check=True
        )
        assert out.stdout.strip() == expect, (env, out.stdout, out.stderr)
    return made


def _exe(name: str) -> str:
    candidate = BIN / name
    if candidate.exists():
        return str(candidate)
    found = shutil.which(name)
    if found is None:
        pytest.skip(f"{name} is not installed")
    return found


def _pyright_config(where: Path, stub_path: bool) -> Path:
    config = where / ("pyright-stubpath.json" if stub_path else "pyright-plain.json")
    body: dict[str, object] = {"typeCheckingMode": "standard", "reportMissingModuleSource": "none"}
    if stub_path:
        body["stubPath"] = str(STUBS)
    config.write_text(json.dumps(body))
    return config


def run_checker(
    checker: str, env: Env, files: list[Path], work: Path, stub_path: bool = False
) -> str:
    """The checker's text output on ``files`` with ``env``'s interpreter, run from ``work``."""
    exe = _exe(checker)
    py = str(env.python)
    paths = [str(f) for f in files]
    if checker == "mypy":
        cache = work / "mypy-cache"  # shared: the jax modules are the same files on both sides
        cmd = [
            exe,
            "--cache-dir",
            str(cache),
            "--python-executable",
            py,
            "--no-error-summary",
            "--show-error-codes",
            "--config-file",
            "/dev/null" if sys.platform != "win32" else "nul",
            *paths,
        ]
    elif checker in ("pyright", "basedpyright"):
        cmd = [exe, "-p", str(_pyright_config(work, stub_path)), "--pythonpath", py, *paths]
    elif checker == "pyrefly":
        cmd = [
            exe,
            "check",
            "--preset",
            "default",
            "--python-interpreter-path",
            py,
            "--output-format",
            "min-text",
            *paths,
        ]
    else:
        cmd = [
            exe,
            "check",
            "--python",
            py,
            "--output-format",
            "concise",
            "--color",
            "never",
            *paths,
        ]
    proc = subprocess.run(
        cmd, cwd=work, capture_output=True, text=True, timeout=TIMEOUT_S, check=False
    )
    if proc.returncode not in (0, 1):
        raise AssertionError(
            f"{checker} failed (rc={proc.returncode}):\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
        )
    return proc.stdout


# ----------------------------------------------------------------------------- reveal_type

_REVEAL = {
    "mypy": re.compile(r":(?P<line>\d+): note: Revealed type is \"(?P<type>.*)\"$"),
    "pyright": re.compile(r":(?P<line>\d+):\d+ - information: Type of \".*\" is \"(?P<type>.*)\"$"),
    "basedpyright": re.compile(
        r":(?P<line>\d+):\d+ - information: Type of \".*\" is \"(?P<type>.*)\"$"
    ),
    "pyrefly": re.compile(r":(?P<line>\d+):\d+-\d+: revealed type: (?P<type>.*) \[reveal-type\]$"),
    "ty": re.compile(r":(?P<line>\d+):\d+: info\[revealed-type\] Revealed type: `(?P<type>.*)`$"),
}


def revealed(checker: str, output: str, probe_first_line: int) -> dict[int, str]:
    """Probe index -> revealed type (``<none>`` where the checker revealed nothing)."""
    found: dict[int, str] = {}
    for raw in output.splitlines():
        m = _REVEAL[checker].search(raw.strip())
        if m:
            found[int(m["line"]) - probe_first_line] = m["type"]
    return {i: found.get(i, "<none>") for i in range(len(PROBES) + 1)}


class Outputs:
    """Each checker runs once per side over the probe and a copy of jax's Pallas ops."""

    def __init__(self, work: Path, envs: dict[str, Env]) -> None:
        self.work = work
        self.envs = envs
        self.probe = work / "probe_no_regression.py"
        text = probe_source()
        self.probe.write_text(text)
        self.probe_first_line = text.splitlines().index(f"reveal_type({PROBES[0]})  # probe 0") + 1
        self.ops = work / "jax_pallas_ops"
        shutil.copytree(_ops_dir(), self.ops, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
        self._cache: dict[tuple[str, str, bool], str] = {}

        if os.environ.get("TYPED_PALLAS_ALL_OPS") == "1":
            self.ops_files = [self.ops]
        else:
            self.ops_files = [self.ops / f for f in OPS_SUBSET if (self.ops / f).exists()]

    def get(self, checker: str, side: str, stub_path: bool = False) -> str:
        key = (checker, side, stub_path)
        if key not in self._cache:
            invisible = checker in ("pyright", "basedpyright") and side == "stubs" and not stub_path
            files = [self.probe] if invisible else [self.probe, *self.ops_files]
            self._cache[key] = run_checker(checker, self.envs[side], files, self.work, stub_path)
        return self._cache[key]


@pytest.fixture(scope="module")
def outputs(tmp_path_factory: pytest.TempPathFactory, envs: dict[str, Env]) -> Outputs:
    return Outputs(tmp_path_factory.mktemp("work"), envs)


#: The one known change, pyright/basedpyright with stubPath only: `import jax.experimental`
#: then resolves jax.experimental to the stub folder's namespace package (pyright takes a
#: stubPath namespace package whenever it has a subpackage, here pallas), so the names
#: defined in jax/experimental/__init__.py itself are Unknown through that attribute
#: path. `from jax.experimental import io_callback` is unaffected. A stub
#: jax-stubs/experimental/__init__.pyi would fix it but makes pyright take the stub
#: folder for `import jax` instead (measured), which is far worse.
STUBPATH_KNOWN = {"jax.experimental.io_callback", "jax.experimental.EArray"}

SIDES: list[tuple[str, str, bool, bool]] = [
    # checker, env of the stubs side, pyright stubPath, stubs expected visible
    ("mypy", "stubs", False, True),
    ("pyright", "stubs", False, False),
    ("pyright", "stubs", True, True),
    ("basedpyright", "stubs", False, False),
    ("basedpyright", "stubs", True, True),
    ("pyrefly", "stubs", False, True),
    ("ty", "stubs", False, True),
]


@pytest.mark.parametrize(
    ("checker", "side", "stub_path", "visible"),
    SIDES,
    ids=[f"{c}{'-stubPath' if sp else ''}" for c, _, sp, _ in SIDES],
)
def test_reveal_types_unchanged(
    checker: str, side: str, stub_path: bool, visible: bool, outputs: Outputs
) -> None:
    first = outputs.probe_first_line
    before = revealed(checker, outputs.get(checker, "base"), first)
    after = revealed(checker, outputs.get(checker, side, stub_path), first)
    marker = len(PROBES)
    assert "tpu" not in before[marker], f"{checker} saw the stubs without them: {before[marker]}"
    if visible:
        assert "tpu" in after[marker], f"{checker} did not read the stubs: {after[marker]}"
    else:
        assert after[marker] == before[marker]
    known = STUBPATH_KNOWN if stub_path else set()
    changed = {
        PROBES[i]: (before[i], after[i])
        for i in range(len(PROBES))
        if before[i] != after[i] and PROBES[i] not in known
    }
    for expr in known:  # keep the exception honest: drop it once pyright stops needing it
        assert after[PROBES.index(expr)] == "Unknown", (
            f"{checker}: {expr} is no longer lost with stubPath"
        )
    assert not changed, f"{checker}: types changed by the stubs:\n" + "\n".join(
        f"  {expr}: {b!r} -> {a!r}" for expr, (b, a) in changed.items()
    )
    assert sum(t != "<none>" for t in before.values()) >= len(PROBES) - 2, (
        before
    )  # the probe itself works


def test_revealed_parser_catches_a_change() -> None:
    """The comparison above can fail: a changed type is seen as a change."""
    out_a = 'x.py:3: note: Revealed type is "jax.Array"\n'
    out_b = 'x.py:3: note: Revealed type is "Any"\n'
    assert revealed("mypy", out_a, 3)[0] != revealed("mypy", out_b, 3)[0]


# ----------------------------------------------------------------------------- jax's own ops


def _errors(checker: str, output: str, root: Path) -> list[str]:
    """Normalised ``relpath:line: code`` of each error in the output."""
    pats = {
        "mypy": r"^(?P<path>[^:\s]+\.py):(?P<line>\d+): error: .*\[(?P<code>[\w-]+)\]$",
        "pyright": r"^\s*(?P<path>/\S+\.py):(?P<line>\d+):\d+ - error: .*\((?P<code>\w+)\)$",
        "basedpyright": r"^\s*(?P<path>/\S+\.py):(?P<line>\d+):\d+ - error: .*\((?P<code>\w+)\)$",
        "pyrefly": r"^ERROR (?P<path>\S+\.py):(?P<line>\d+):[\d-]+: .*\[(?P<code>[\w-]+)\]$",
        "ty": r"^(?P<path>\S+\.py):(?P<line>\d+):\d+: error\[(?P<code>[\w-]+)\]",
    }
    pat = re.compile(pats[checker])
    found = []
    for raw in output.splitlines():
        m = pat.match(raw.rstrip())
        if m:
            p = Path(m["path"])
            rel = (p if p.is_absolute() else root / p).resolve().relative_to(root.resolve())
            found.append(f"{rel}:{m['line']}: {m['code']}")
    return sorted(found)


def _ops_dir() -> Path:
    import jax.experimental.pallas.ops as ops

    return Path(ops.__file__).parent


def test_ops_subset_follows_the_release() -> None:
    """The files of OPS_SUBSET this jax lacks are exactly those listed for its release: the
    run leaves them out, and no other file is lost without notice."""
    version = tuple(int(part) for part in importlib.metadata.version("jax").split(".")[:4])
    keys = [key for key in OPS_ABSENT if version[: len(key)] == key]
    assert keys, f"jax {version} is not measured here: list the OPS_SUBSET files it lacks"
    absent = {name for name in OPS_SUBSET if not (_ops_dir() / name).exists()}
    assert absent == OPS_ABSENT[max(keys, key=len)]


OPS_SIDES = [
    ("mypy", False),
    ("pyright", True),
    ("basedpyright", True),
    ("pyrefly", False),
    ("ty", False),
]


@pytest.mark.parametrize(("checker", "stub_path"), OPS_SIDES, ids=[c for c, _ in OPS_SIDES])
def test_jax_ops_no_new_errors(checker: str, stub_path: bool, outputs: Outputs) -> None:
    """jax's own Pallas ops, checked with and without the stubs: no error is added."""
    ops = outputs.ops.name
    before = [
        e for e in _errors(checker, outputs.get(checker, "base"), outputs.work) if e.startswith(ops)
    ]
    after = [
        e
        for e in _errors(checker, outputs.get(checker, "stubs", stub_path), outputs.work)
        if e.startswith(ops)
    ]
    new = sorted(set(after) - set(before))
    gone = sorted(set(before) - set(after))
    print(
        f"{checker}: {len(before)} errors without the stubs, {len(after)} with; new {len(new)}, gone {len(gone)}"
    )
    assert not new, f"{checker}: errors the stubs add to jax's own ops:\n" + "\n".join(new)
