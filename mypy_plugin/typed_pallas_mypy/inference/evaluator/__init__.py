"""The evaluator: Python run abstractly over one value domain, one ``evaluate``, one
``call`` (docs/inference-model.md, "The evaluator").

* ``domain``: the values (constants, functions, classes, instances, containers,
  partials, JAX transformations' results, kernels, params, unknown) and the sets of them;
* ``machine``: one run under one assumed lowering platform (the modules it has run, the
  call sites it reached, its budget);
* ``expressions``: ``evaluate``, one case per expression kind (binary operators in
  ``operators``);
* ``statements``: bodies run with their effects (bindings, branches joined, loops,
  ``try``, ``with``, ``match``, imports, class creation);
* ``calls``: ``call``, arguments bound as Python binds them;
* ``library``: what library callables do, as tables (JAX's, the standard library's);
* ``verdict``: paths above values, whether a call lowers nowhere its guards let it run;
* ``questions``: the plugin's question (the findings among a module's calls), asked on
  machines kept per top-level package, each question's writes undone by ``journal``.

It reads the sources a ``Loader`` gives; jax and the standard library are tables, never
parsed. Importing it never imports jax or mypy.
"""

from __future__ import annotations

from typed_pallas_mypy.inference.evaluator.machine import Loader, Machine
from typed_pallas_mypy.inference.evaluator.verdict import CallVerdict, call_verdict, run_function

__all__ = ["CallVerdict", "Loader", "Machine", "call_verdict", "run_function"]
