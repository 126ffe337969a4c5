"""Fake installed libraries for the library reader's tests.

``fake_library_maker(folder)`` returns ``make_lib``: ``make_lib({"pkg/ops.py": source})``
writes the files under a fresh ``.../lib/site-packages`` folder (sources dedented; the
packages' missing ``__init__.py`` files created empty) and returns that root.
``jax_ops_modules()``: the real modules of jax's own Pallas kernels, to read.
"""

from __future__ import annotations

import textwrap
from collections.abc import Callable, Mapping
from pathlib import Path

import pytest

from typed_pallas_mypy.inference import Inference, Requirement

MakeLib = Callable[[Mapping[str, str]], Path]


def jax_ops_modules() -> list[tuple[str, bytes, bool]]:
    """(module, source, is a package) of every module of ``jax.experimental.pallas.ops``
    (real code nobody wrote for these tests); the test is skipped without jax."""
    ops = Path(pytest.importorskip("jax").__file__).parent / "experimental" / "pallas" / "ops"
    base = ops.parent.parent.parent
    found: list[tuple[str, bytes, bool]] = []
    for path in sorted(ops.rglob("*.py")):
        parts = list(path.relative_to(base).with_suffix("").parts)
        package = parts[-1] == "__init__"
        if package:
            parts.pop()
        found.append((".".join(["jax", *parts]), path.read_bytes(), package))
    return found


#: The imports every fake kernel module starts with (6 lines).
HEADER = """\
import functools
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton
from jax.experimental.pallas import mosaic_gpu as plgpu
"""

#: A module with one TPU op, one Triton op and a kernel (lines 7-16), after HEADER.
OPS = (
    HEADER
    + """\
def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]

def tpu_op(x):
    return pl.pallas_call(kernel, out_shape=x, compiler_params=pltpu.CompilerParams())(x)

def triton_op(x):
    return pl.pallas_call(kernel, out_shape=x, compiler_params=pltriton.CompilerParams())(x)

def tpu_op_i(x, interpret=False):
    return pl.pallas_call(
        kernel, out_shape=x, compiler_params=pltpu.CompilerParams(), interpret=interpret
    )(x)

def plain(x):
    return x + 1
"""
)


def fake_library_maker(folder: Path) -> MakeLib:
    counter = iter(range(10_000))

    def make(files: Mapping[str, str]) -> Path:
        root = folder / f"env{next(counter)}" / "lib" / "site-packages"
        for rel, source in files.items():
            path = root / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(textwrap.dedent(source))
            for parent in path.relative_to(root).parents:
                if parent == Path("."):
                    continue
                init = root / parent / "__init__.py"
                if not init.exists():
                    init.write_text("")
        return root

    return make


def platforms_of(found: Requirement | None) -> set[str] | None:
    """The platforms of a requirement, None for none."""
    return set(found.platforms) if found is not None else None


def reader_for(root: Path, cache: Path | None = None) -> Inference:
    return Inference([str(root)], str(cache) if cache is not None else None)


def count_module_imports(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The modules the evaluator's summaries import from now on (one entry per
    ``summaries.ModuleRuns``: a module's import, run once for the summaries asked with it)."""
    from typed_pallas_mypy.inference.evaluator import summaries

    imported: list[str] = []
    real = summaries.ModuleRuns.__init__

    def counting(self: summaries.ModuleRuns, loader: object, module: str, *rest: object) -> None:
        imported.append(module)
        real(self, loader, module, *rest)  # type: ignore[arg-type]

    monkeypatch.setattr(summaries.ModuleRuns, "__init__", counting)
    return imported
