"""JAX's verdicts on a batch of generated programs, in the environment that runs this file.

Run by ``eval.generated.truth`` once per batch and JAX environment (jax is imported once):
``python -m eval.generated._worker`` reads a JSON object from stdin, ``{"root": folder,
"items": [{"name", "module", "function", "platforms"}]}``, imports each program's entry from
``root`` and lowers it for each platform with the parity harness's raw lowering
(``tests/parity/jax_verdict.py``: ``jax.jit(f).trace(x).lower(lowering_platforms=(p,))``
on the CPU host, every registration loaded, tracebacks unfiltered). It prints one JSON
object: ``{"jax": version, "outcomes": {name: {platform: null | [type, message,
raised_in_jax]}}}``; ``null`` is "lowered". What an outcome means is decided by the
caller (``truth.verdict``), not here.
"""

from __future__ import annotations

import importlib
import json
import sys
import warnings
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def main() -> None:
    request = json.load(sys.stdin)
    warnings.filterwarnings("ignore")
    sys.path.insert(0, str(REPO / "tests" / "parity"))
    verdict: Any = importlib.import_module("jax_verdict")
    import jax
    import jax.numpy as jnp

    sys.path.insert(0, request["root"])
    x = jnp.zeros((8, 128), jnp.float32)
    outcomes: dict[str, dict[str, Any]] = {}
    with verdict.jax_alone():
        for item in request["items"]:
            result: dict[str, Any] = {}
            try:
                fn = getattr(importlib.import_module(item["module"]), item["function"])
            except Exception as error:
                message = f"import: {str(error)[:300]}"
                result = {p: [type(error).__name__, message, False] for p in item["platforms"]}
            else:
                for platform in item["platforms"]:
                    _, failure = verdict.lower(fn, platform, x)
                    result[platform] = (
                        None
                        if failure is None
                        else [
                            type(failure).__name__,
                            str(failure)[:300],
                            bool(verdict.raised_in_jax(failure)),
                        ]
                    )
            outcomes[item["name"]] = result
    json.dump({"jax": jax.__version__, "outcomes": outcomes}, sys.stdout)


if __name__ == "__main__":
    main()
