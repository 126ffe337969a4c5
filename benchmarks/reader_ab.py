"""The engine's reader at another revision against the working tree: same facts, less CPU?

Usage (from the repository root)::

    .venv312/bin/python benchmarks/reader_ab.py --base HEAD~3             # time, jax's ops + tokamax
    .venv312/bin/python benchmarks/reader_ab.py --base main --corpus all --same-facts

The reader of ``--base`` (``git archive`` of ``mypy_plugin/typed_pallas_mypy``, unpacked
in a temporary folder as the package ``typed_pallas_mypy_base``) and the working tree's
read the same modules in one process, module by module, the order of the two flipping
from module to module, for ``--rounds`` rounds: each module's local facts and its
``Sites`` (``reader.read_module_keeping_sites``, then the sites made). Printed: the CPU
seconds of each and their ratio (working tree / base). On a host whose speed drifts
from one minute to the next (this project's 2-core machines drift by 20% within a
call), two separate runs cannot resolve a 5% change; interleaving them in one process
does.

``--same-facts`` also compares the two readings of every module (``model.module_json``
of the facts, to the letter) and prints the modules whose facts differ: a refactor of
the reader must leave none.

Modules: ``jax-ops`` reads ``jax.experimental.pallas.ops`` of this interpreter's jax and
the first 150 files of tokamax 0.0.17 when ``python -m eval.corpus`` has installed it;
``all`` reads every package ``eval.corpus`` installed (19, with their vendored code:
about 3,600 files) and jax's Pallas sources.

What it does not do: run mypy (``plugin_overhead.py``, ``plugin_profile.py``), or
assert a time.
"""

from __future__ import annotations

import argparse
import importlib
import importlib.util
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from types import ModuleType
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from eval.corpus import DEFAULT_CACHE

PACKAGE = "typed_pallas_mypy"
BASE_PACKAGE = "typed_pallas_mypy_base"
ROOT = Path(__file__).resolve().parent.parent


def base_reader(revision: str, folder: Path) -> ModuleType:
    """``inference.reader`` of ``revision``, importable next to the working tree's."""
    archive = subprocess.run(
        ["git", "archive", revision, f"mypy_plugin/{PACKAGE}"],
        cwd=ROOT,
        check=True,
        capture_output=True,
    ).stdout
    with tempfile.TemporaryFile() as handle:
        handle.write(archive)
        handle.seek(0)
        with tarfile.open(fileobj=handle) as tar:
            tar.extractall(folder, filter="data")
    package = folder / BASE_PACKAGE
    (folder / "mypy_plugin" / PACKAGE).rename(package)
    for path in package.rglob("*.py"):
        path.write_text(path.read_text().replace(PACKAGE, BASE_PACKAGE))
    sys.path.insert(0, str(folder))
    return importlib.import_module(f"{BASE_PACKAGE}.inference.reader")


def corpus(which: str) -> list[Path]:
    """The modules read (see the module's docstring)."""
    spec = importlib.util.find_spec("jax")  # its place only: jax is not imported
    if spec is None or spec.origin is None:
        raise SystemExit("this interpreter has no jax: run it with .venv312/bin/python")
    pallas = Path(spec.origin).parent / "experimental" / "pallas"
    packages = Path(DEFAULT_CACHE) / "pkgs"
    if which == "jax-ops":
        files = sorted((pallas / "ops").rglob("*.py"))
        files += sorted((packages / "tokamax-0.0.17").rglob("*.py"))[:150]
        return files
    return sorted(packages.rglob("*.py")) + sorted(pallas.rglob("*.py"))


def read_with(reader: ModuleType, source: bytes, module: str, package: bool) -> object:
    facts, sites = reader.read_module_keeping_sites(source, module, is_package=package)
    sites()
    return facts


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--base", default="HEAD", help="git revision of the reader compared")
    ap.add_argument("--corpus", choices=("jax-ops", "all"), default="jax-ops")
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--same-facts", action="store_true", help="compare the facts too")
    args = ap.parse_args(argv)

    from typed_pallas_mypy.inference import model
    from typed_pallas_mypy.inference import reader as current

    with tempfile.TemporaryDirectory() as folder:
        base = base_reader(args.base, Path(folder))
        base_model = importlib.import_module(f"{BASE_PACKAGE}.inference.model")
        files = corpus(args.corpus)
        sources = [(path, path.read_bytes()) for path in files]
        readers: dict[str, tuple[ModuleType, Callable[[Any], object]]] = {
            "base": (base, base_model.module_json),
            "tree": (current, model.module_json),
        }
        spent = dict.fromkeys(readers, 0.0)
        differ: list[str] = []
        for round_number in range(args.rounds):
            for index, (path, source) in enumerate(sources):
                name = "m." + path.stem
                package = path.name == "__init__.py"
                order = ("base", "tree") if (index + round_number) % 2 else ("tree", "base")
                facts: dict[str, object] = {}
                for which in order:
                    reader, _ = readers[which]
                    start = time.process_time()
                    facts[which] = read_with(reader, source, name, package)
                    spent[which] += time.process_time() - start
                if args.same_facts and round_number == 0:
                    texts = {
                        which: json.dumps(readers[which][1](found), sort_keys=True)
                        if found is not None
                        else None
                        for which, found in facts.items()
                    }
                    if texts["base"] != texts["tree"]:
                        differ.append(str(path))
    print(
        f"{len(files)} modules, {args.rounds} rounds, interleaved: base {args.base} "
        f"{spent['base']:.2f} s CPU, working tree {spent['tree']:.2f} s CPU, "
        f"ratio {spent['tree'] / spent['base']:.3f}"
    )
    if args.same_facts:
        print(f"modules whose facts differ: {len(differ)}")
        for path_text in differ[:20]:
            print(f"  {path_text}")
    return 1 if differ else 0


if __name__ == "__main__":
    raise SystemExit(main())
