"""The plugin's checks, one module per concern; ``main.py`` only dispatches to them.

* ``module_index``: the one walk per module (guards, decorators, assignments);
* ``params``: which compiler-params class an argument is;
* ``evidence``: what the entry point, mesh, memory spaces and kernel body prove;
* ``calls``: ``validate_compiler_params``, the check itself;
* ``hooks``: the mypy hook callbacks (function calls and ``functools.partial``).
"""
