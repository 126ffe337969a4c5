"""The plugin's checks, one module per concern; ``main.py`` only dispatches to them.

* ``nodes``: AST helpers (positions, names, spellings, subexpressions);
* ``guards``: what a condition, an early exit, a tag or a dispatch branch decides;
* ``module_index``: the one walk per module (guard regions, decorators, assignments);
* ``params``: which compiler-params class an argument is;
* ``evidence``: what the entry point, mesh, memory spaces and kernel body prove;
* ``calls``: ``validate_compiler_params``, the check of one Pallas call;
* ``unconditional``: the code of a function that runs on every path;
* ``platform_facts``: what each function, in any module, lowers for (requirements,
  guard helpers, wrappers, tables); ``facts_store``: those facts and mypy's cache;
* ``decisions``: requirements checked where a platform is decided;
* ``signatures``: one error per mistake (widening what the stubs reject and the plugin proves);
* ``hooks``: the mypy hook callbacks.
"""
