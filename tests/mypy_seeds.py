"""mypy caches in which jax has been analysed once, one per mypy configuration (the
``mypy_seeds`` fixture of tests/conftest.py), for tests that start many mypy runs from an
empty cache.

A cold analysis of jax takes 20-30 s; a test whose point is its project's modules (what a
warm run, the daemon or an edit does with them) starts from a copy instead. mypy takes a
cached module only when the options that affect it are the ones of the run
(``validate_meta``), and the plugin reports no configuration for installed packages, so a
copy made under the same configuration holds what a cold run of that configuration writes
for jax; under any other configuration mypy analyses jax again (slower, never wrong).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

#: what a seed run checks: jax and every Pallas module the tests' programs import
SEED_MODULE = """\
import functools
import jax
import jax.numpy as jnp
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton
from jax.experimental.pallas import mosaic_gpu as plgpu
"""


def mypy_env() -> dict[str, str]:
    """The environment of the tests' mypy runs: no ``MYPY*`` or ``TYPED_PALLAS*`` variable
    of the caller, and the plugin's debug switch on."""
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MYPY", "TYPED_PALLAS"))}
    env["TYPED_PALLAS_MYPY_DEBUG"] = "1"
    return env


class MypySeeds:
    """Seeded mypy caches, made on first use (one cold run per configuration)."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.made: dict[tuple[str, ...], Path] = {}

    def into(self, cache: Path, ini: str, *flags: str) -> None:
        """Copy into ``cache`` (which must not exist yet) a cache of jax analysed by mypy
        with the config file text ``ini`` and the command-line ``flags`` of the runs that
        follow."""
        command = ["-m", "mypy", "--config-file", "mypy.ini", "--cache-dir", "cache", *flags]
        self._copy(cache, ("mypy", ini, *flags), command, {"mypy.ini": ini})

    def check_into(self, cache: Path) -> None:
        """Copy into ``cache`` a cache of jax analysed by ``typed-pallas check
        --cache-dir`` in a project with no configuration (the command's own preset)."""
        command = ["-m", "typed_pallas_mypy.cli", "check", "--cache-dir", "cache"]
        self._copy(cache, ("check",), command, {".git/HEAD": ""})

    def _copy(
        self, cache: Path, key: tuple[str, ...], command: list[str], files: dict[str, str]
    ) -> None:
        seed = self.made.get(key)
        if seed is None:
            folder = self.root / f"seed{len(self.made)}"
            for name, text in {**files, "typed_pallas_seed.py": SEED_MODULE}.items():
                (folder / name).parent.mkdir(parents=True, exist_ok=True)
                (folder / name).write_text(text)
            done = subprocess.run(
                [sys.executable, *command, "typed_pallas_seed.py"],
                cwd=folder,
                env=mypy_env(),
                capture_output=True,
                text=True,
                timeout=600,
                check=False,
            )
            output = done.stdout + done.stderr
            assert done.returncode == 0 and "Success" in done.stdout, f"seed run failed:\n{output}"
            seed = folder / "cache"
            self.made[key] = seed
        shutil.copytree(seed, cache)
