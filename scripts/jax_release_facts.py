"""Write what one JAX release offers Pallas users to ``stubs/releases/jax-VERSION.json``.

Run it with the Python of an environment that has the release installed::

    .venv312/bin/python scripts/jax_release_facts.py          # writes stubs/releases/jax-0.12.1.json
    .venv312/bin/python scripts/jax_release_facts.py --check  # exit 1 if the file differs

The facts, per release (the data file is one JSON object, keys sorted):

* ``modules``: for each Pallas module the release has (``jax.experimental.pallas`` and
  its ``tpu``, ``tpu_sc``, ``mosaic_gpu``, ``triton`` and ``fuser``; ``jax.pallas`` and
  its submodules where they exist), the public names (``dir()`` without leading
  underscores, without modules), ``modules`` (another package's module under a public
  name, like ``pltpu.core`` before 0.12.1), and the names behind the module's deprecation
  ``__getattr__``: ``deprecated`` (still there, with a warning) and ``removed`` (raise
  ``AttributeError`` with JAX's message), each with the first line of JAX's message;
* ``params``: for each compiler-params class, its dataclass fields and its constructor's
  parameters (name and kind);
* ``lowering``: the platform JAX's lowering registry gives each params class once every
  backend module is imported.

tests/test_release_facts.py reads these files: every name the stubs type must exist at
some release, and every public name of a release must be typed or listed there. When a
JAX release appears: regenerate (this script, in an environment with it), review the
diff, fix the stubs, add the release to ``typed_pallas._versions.CHECKED_RELEASES``.

What it does not do: decide anything (it only records), import typed-pallas, or read
JAX's source text (it asks the imported modules).
"""

from __future__ import annotations

import argparse
import dataclasses
import importlib
import inspect
import json
import sys
import types
import warnings
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
OUT_DIR = ROOT / "stubs" / "releases"

#: the Pallas modules, in the order the data file lists them
MODULES = (
    "jax.experimental.pallas",
    "jax.experimental.pallas.tpu",
    "jax.experimental.pallas.tpu_sc",
    "jax.experimental.pallas.mosaic_gpu",
    "jax.experimental.pallas.triton",
    "jax.experimental.pallas.fuser",
    "jax.pallas",
    "jax.pallas.tpu",
    "jax.pallas.tpu_sc",
    "jax.pallas.mosaic_gpu",
    "jax.pallas.triton",
    "jax.pallas.fuser",
)
#: the compiler-params classes (module, attribute)
PARAMS = (
    ("jax.experimental.pallas.tpu", "CompilerParams"),
    ("jax.experimental.pallas.triton", "CompilerParams"),
    ("jax.experimental.pallas.mosaic_gpu", "CompilerParams"),
    ("jax.experimental.pallas.tpu_sc", "CompilerParams"),
)


def _import(name: str) -> types.ModuleType | None:
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return importlib.import_module(name)
    except ImportError:
        return None


def _first_line(message: object) -> str:
    return str(message).strip().splitlines()[0] if str(message).strip() else ""


def module_facts(module: types.ModuleType) -> dict[str, Any]:
    public: list[str] = []
    reexported_modules: list[str] = []
    for name in sorted(dir(module)):
        if name.startswith("_"):
            continue
        value = getattr(module, name, None)
        if not isinstance(value, types.ModuleType):
            public.append(name)
        elif value.__name__ != f"{module.__name__}.{name}":
            # another package's module under a public name (0.12.0.1's pltpu.core); a
            # child module is left out: whether it is an attribute depends on import order
            reexported_modules.append(name)
    deprecated: dict[str, str] = {}
    removed: dict[str, str] = {}
    table = getattr(module, "_deprecations", None)
    if isinstance(table, dict):
        for name, entry in sorted(table.items()):
            message, obj = (entry[0], entry[1]) if isinstance(entry, tuple) else (entry, None)
            (deprecated if obj is not None else removed)[name] = _first_line(message)
    # a deprecated name is reachable (through __getattr__) even when dir() does not list it
    public = sorted(set(public) | set(deprecated))
    return {
        "public": public,
        "modules": reexported_modules,
        "deprecated": deprecated,
        "removed": removed,
    }


def params_facts(cls: type) -> dict[str, Any]:
    fields = [f.name for f in dataclasses.fields(cls)] if dataclasses.is_dataclass(cls) else []
    parameters = [
        {"name": p.name, "kind": p.kind.name, "default": p.default is not inspect.Parameter.empty}
        for p in inspect.signature(cls).parameters.values()
    ]
    return {"fields": fields, "constructor": parameters}


def lowering_facts() -> dict[str, str]:
    """JAX's ``params class -> platform`` registry, after importing every backend's
    ``pallas_call_registration`` module (each registers its class when imported)."""
    import pkgutil

    pallas = importlib.import_module("jax._src.pallas")
    for sub in sorted(m.name for m in pkgutil.iter_modules(pallas.__path__) if m.ispkg):
        _import(f"jax._src.pallas.{sub}.pallas_call_registration")
    core = importlib.import_module("jax._src.pallas.core")
    registry = getattr(core, "_backend_lowering_rules", {})
    return {
        f"{cls.__module__}.{cls.__qualname__}": platform
        for cls, (_rule, platform) in sorted(
            registry.items(), key=lambda item: f"{item[0].__module__}.{item[0].__qualname__}"
        )
    }


def collect() -> dict[str, Any]:
    import jax

    modules: dict[str, Any] = {}
    for name in MODULES:
        module = _import(name)
        if module is not None:
            modules[name] = module_facts(module)
    params: dict[str, Any] = {}
    for module_name, attr in PARAMS:
        module = _import(module_name)
        cls = getattr(module, attr, None) if module is not None else None
        if isinstance(cls, type):
            params[f"{module_name}.{attr}"] = params_facts(cls)
    return {
        "jax": jax.__version__,
        "modules": modules,
        "params": params,
        "lowering": lowering_facts(),
    }


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out-dir", type=Path, default=OUT_DIR)
    parser.add_argument(
        "--check", action="store_true", help="compare with the file instead of writing it"
    )
    args = parser.parse_args(argv)
    facts = collect()
    text = json.dumps(facts, indent=1, sort_keys=True) + "\n"
    path = args.out_dir / f"jax-{facts['jax']}.json"
    if args.check:
        same = path.is_file() and path.read_text() == text
        print(f"{path}: {'up to date' if same else 'differs from this environment: regenerate it'}")
        return 0 if same else 1
    args.out_dir.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    print(f"wrote {path}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
