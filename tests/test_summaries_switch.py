"""The engine's swap: the evaluator's summaries answer what functions lower for (the
default, and ``TYPED_PALLAS_SUMMARIES=1``), and a finding of the evaluator's module
question stands on every line where the other checks found nothing (with the rules
answering, ``TYPED_PALLAS_SUMMARIES=0``, only in functions where they found nothing).

One mypy run per engine over a small project, the plugin's debug switch on.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

pytestmark = pytest.mark.slow

OPS = """\
from typing import Any

from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def kernel(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + 1


def tpu_op(x: Any) -> Any:
    return pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())(x)


def maybe(x: Any, flag: bool) -> Any:
    def inner(y: Any) -> Any:
        return tpu_op(y)

    if flag:
        return inner(x)
    return x
"""

APP = """\
import jax
import ops


def run(x: jax.Array) -> object:
    if jax.default_backend() == "gpu":
        ops.tpu_op(x)
        ops.maybe(x, True)
        ops.maybe(x, False)
    return x
"""

ERROR = re.compile(r"^app\.py:(\d+): error: .*\[pallas-platform\]$", re.MULTILINE)


#: an installed library's kernel called in a module configured for GPU (no guard)
LIBRARY_APP = """\
import jax
import kernlib
from kernlib import plain


def run(x: jax.Array) -> object:
    kernlib.tpu_op(x)
    return plain.double(x)
"""


def _error_lines(
    tmp_path: Path, summaries: str, app: str = APP, site: Path | None = None
) -> list[int]:
    (tmp_path / "ops.py").write_text(OPS)
    (tmp_path / "app.py").write_text(app)
    (tmp_path / "mypy.ini").write_text(
        "[mypy]\nplugins = typed_pallas_mypy\n\n[mypy.plugins.typed-pallas]\nplatforms = gpu\n"
    )
    env = {**os.environ, "TYPED_PALLAS_MYPY_DEBUG": "1", "TYPED_PALLAS_SUMMARIES": summaries}
    if not summaries:  # the default
        del env["TYPED_PALLAS_SUMMARIES"]
    if site is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(site), env.get("PYTHONPATH", "")])
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--cache-dir",
            str(tmp_path / f".cache{summaries}"),
            "app.py",
        ],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert "Traceback" not in done.stderr + done.stdout, done.stderr + done.stdout
    return sorted(int(line) for line in ERROR.findall(done.stdout))


@pytest.mark.parametrize("summaries", ["", "1"], ids=["default", "switch"])
def test_summaries_answer_and_each_line_stands_alone(tmp_path: Path, summaries: str) -> None:
    # ``maybe(x, True)`` runs its nested TPU kernel under the gpu guard; ``False`` not
    assert _error_lines(tmp_path, summaries) == [7, 8]


def test_with_the_rules_answering_a_function_they_found_in_is_theirs(tmp_path: Path) -> None:
    assert _error_lines(tmp_path, "0") == [7]


def _library_site(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    package = site / "kernlib"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text(OPS)
    (package / "py.typed").write_text("")
    (package / "plain.py").write_text("def double(x):\n    return x * 2\n")
    return site


@pytest.mark.parametrize("summaries", ["1", "0"], ids=["summaries", "rules"])
def test_a_library_kernel_call_where_the_platform_is_decided(
    tmp_path: Path, summaries: str
) -> None:
    # the summaries are asked of a library function only where the platform is
    # decided (here by the configuration), and answer there as the rules do
    site = _library_site(tmp_path)
    assert _error_lines(tmp_path, summaries, LIBRARY_APP, site) == [7]


#: a function imported under the guard: the import is the finding, not again its call
IMPORTED_APP = """\
import jax


def run(x: jax.Array) -> object:
    if jax.default_backend() == "gpu":
        from ops import IMPORTED
        return IMPORTED(x)
    return x
"""


@pytest.mark.parametrize(
    ("imported", "expected"), [("tpu_op", [6]), ("maybe", [])], ids=["tpu-op", "maybe"]
)
def test_a_function_imported_under_the_guard_is_one_finding(
    tmp_path: Path, imported: str, expected: list[int]
) -> None:
    # with the summaries answering, the module question's finding at the call (line 7)
    # is the import's (line 6); ``maybe(x)`` without its flag runs nothing: silent
    app = IMPORTED_APP.replace("IMPORTED", imported)
    assert _error_lines(tmp_path, "1", app) == expected


class _Broken:
    @property
    def inference(self) -> object:
        raise RuntimeError("a bug")


def test_the_files_read_fall_back_to_none_when_asking_fails(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # asked while mypy writes a module's cache: a bug must not crash mypy
    from typed_pallas_mypy.transformers import hooks

    session = hooks.Session(modules=lambda: None)
    session.facts = _Broken()  # type: ignore[assignment]
    monkeypatch.delenv("TYPED_PALLAS_MYPY_DEBUG", raising=False)
    assert hooks.project_files_read("app", session) == []
    monkeypatch.setenv("TYPED_PALLAS_MYPY_DEBUG", "1")
    with pytest.raises(RuntimeError):
        hooks.project_files_read("app", session)
