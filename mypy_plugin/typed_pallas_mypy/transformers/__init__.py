"""The plugin's checks, one module per concern; ``main.py`` only dispatches to ``hooks``.

Reading the source:

* ``nodes``: AST helpers (positions, names, spellings, subexpressions);
* ``guards``: what a condition, an early exit, a tag, a dispatch branch or a module's
  configuration decides about the platform;
* ``module_index``: the one walk per module (guard regions, decorators, assignments);
* ``params``: which compiler-params class an argument is;
* ``evidence``: ``Evidence``, and a mesh proven by its declared type (an entry call's
  arguments and kernel bodies are read by the inference's reader, ``calls`` asks it);
* ``resolution``: which function an expression or a call names, and whose code it is.

Checking one Pallas call:

* ``calls``: ``validate_compiler_params``, the check of one entry-point call;
* ``signatures``: one error per mistake (widening what the stubs reject and the plugin
  proves).

Following the platform across functions, modules and libraries:

* ``inference_use``: the one inference (``typed_pallas_mypy.inference``) for this build:
  what any function of the project or of an installed package lowers for, and why;
* ``platform_facts``: those facts (guard helpers included: the engine reads them), with
  what needs mypy's types (predicates), from this run or from mypy's cache; what the
  engine reads of a call of the checked module (its arguments' and its kernel's evidence);
* ``predicates``: platform predicates (``supported_on(device)``) and the methods gating
  on them;
* ``facts_store``: the facts' JSON form, kept in mypy's cache;
* ``decisions``: requirements checked where a platform is decided.

Talking to mypy:

* ``hooks``: the hook callbacks (never let an exception escape);
* ``reporting``: reporting, and every access to mypy beyond its plugin interface.
"""
