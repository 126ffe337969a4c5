"""Generated programs: a kernel library package and an application that calls it.

A program is drawn from a seed: a kernel kind (``forms.KERNELS``), 1 to ``depth`` forms
(``forms.FORMS``, each with a variant), and a guard style with the platform it names
(``forms.GUARDS``). Level 0 of the library (``m0.py``) defines ``f0``, the kernel; level
``i`` (``m{i}.py``) defines ``f{i}`` by wrapping ``f{i-1}`` with the i-th form. The
application (``app_<package>.py``) calls the top level under the guard.

The package's name is a hash of the program's text (written with a placeholder for the
name), so the same program has the same name and the same text in every run and every
batch, and a batch can hold many programs without two sharing a module.
"""

from __future__ import annotations

import hashlib
import random
import string
from dataclasses import dataclass
from pathlib import Path

from eval.generated.forms import (
    BY_NAME,
    FORMS,
    GUARDS,
    KERNEL_WEIGHTS,
    KERNELS,
    LOWERING,
    Below,
    kernel_module,
)

PLACEHOLDER = "PKGNAME"


@dataclass(frozen=True)
class Program:
    """One generated program; ``files`` are relative to the folder that holds both the
    application and the library package (paths use ``/``)."""

    name: str
    kernel: str
    forms: tuple[tuple[str, int], ...]  # (form, variant), bottom to top
    guard: str
    platform: str  # what the guard names: "tpu" or "gpu"
    files: dict[str, str]
    call_line: int  # the guarded call's line in the application

    @property
    def depth(self) -> int:
        return len(self.forms)

    @property
    def app(self) -> str:
        return f"app_{self.name}.py"

    @property
    def digest(self) -> str:
        return self.name.removeprefix("gp_")

    @property
    def entry(self) -> tuple[str, str]:
        """(module, function) JAX lowers: what the guarded call calls."""
        return f"{self.name}.m{self.depth}", f"f{self.depth}"

    @property
    def lowering_platforms(self) -> tuple[str, ...]:
        return LOWERING[self.platform]

    @property
    def control_platform(self) -> str:
        return KERNELS[self.kernel][1]

    def size(self) -> int:
        return sum(len(text) for text in self.files.values())

    def form_names(self) -> list[str]:
        return [name for name, _ in self.forms]

    def describe(self) -> str:
        chain = " -> ".join(f"{name}[{variant}]" for name, variant in reversed(self.forms))
        return f"{self.guard} '{self.platform}' -> {chain} -> kernel with {self.kernel}"

    def write(self, root: Path, *, library: Path | None = None) -> None:
        """Write the application to ``root`` and the package to ``library`` (default: root)."""
        for rel, text in self.files.items():
            base = root if rel == self.app else (library or root)
            path = base / rel
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(text)


APP = """\
import jax
import jax.numpy as jnp

import $pkg.m$depth as lib


def main():
    x = jnp.zeros((8, 128), jnp.float32)
$body"""


def build(kernel: str, forms: tuple[tuple[str, int], ...], guard: str, platform: str) -> Program:
    """The program of these choices, named by the hash of its text."""
    depth = len(forms)
    files: dict[str, str] = {
        f"{PLACEHOLDER}/__init__.py": "",
        f"{PLACEHOLDER}/m0.py": kernel_module(kernel),
    }
    for level, (name, variant) in enumerate(forms, start=1):
        for rel, text in BY_NAME[name].render(variant, pkg=PLACEHOLDER, level=level).items():
            files[f"{PLACEHOLDER}/{rel}"] = text
    _, body = GUARDS[guard]
    body = string.Template(body).substitute(p=platform, call=f"lib.f{depth}(x)")
    app = string.Template(APP).substitute(pkg=PLACEHOLDER, depth=depth, body=body)
    call_line = next(i for i, line in enumerate(app.splitlines(), 1) if "lib.f" in line)
    files[f"app_{PLACEHOLDER}.py"] = app
    digest = hashlib.sha256()
    for rel in sorted(files):
        digest.update(rel.encode() + b"\0" + files[rel].encode() + b"\0")
    name = f"gp_{digest.hexdigest()[:16]}"
    return Program(
        name=name,
        kernel=kernel,
        forms=forms,
        guard=guard,
        platform=platform,
        files={
            rel.replace(PLACEHOLDER, name): text.replace(PLACEHOLDER, name)
            for rel, text in files.items()
        },
        call_line=call_line,
    )


def generate(seed: int, n: int, depth: int) -> list[Program]:
    """``n`` programs of 1 to ``depth`` forms from ``seed``, duplicates dropped (the list
    may be shorter than ``n`` where the grammar repeats itself)."""
    rng = random.Random(seed)
    kernels = list(KERNEL_WEIGHTS)
    weights = [KERNEL_WEIGHTS[k] for k in kernels]
    programs: dict[str, Program] = {}
    for _ in range(n):
        kernel = rng.choices(kernels, weights)[0]
        chosen: list[tuple[str, int]] = []
        for _ in range(rng.randint(1, depth)):
            below = Below(kernel, tuple(name for name, _ in chosen))
            candidates = [f for f in FORMS if f.accepts(below)]
            form = rng.choice(candidates)
            chosen.append((form.name, rng.randrange(len(form.variants))))
        guard = rng.choice(sorted(GUARDS))
        platform = rng.choice(GUARDS[guard][0])
        program = build(kernel, tuple(chosen), guard, platform)
        programs.setdefault(program.name, program)
    return list(programs.values())
