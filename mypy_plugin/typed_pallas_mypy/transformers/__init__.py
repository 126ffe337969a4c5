"""The plugin's checks, one module per concern; ``main.py`` only dispatches to ``hooks``.

Reading the source:

* ``nodes``: AST helpers (positions, names, spellings);
* ``guards``: what an early exit, a tag, a dispatch branch or a module's configuration
  decides about the platform (what a condition tests is the inference's reading);
* ``module_index``: the one walk per module (guard regions, each condition's sets asked
  of the inference; decorators, assignments);
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
* ``platform_facts``: those facts (guard helpers and predicates' bodies included: the
  engine reads them), with what needs mypy's types, from this run or from mypy's cache;
  what the engine reads of the checked module by position (a condition's sets, a call's
  arguments' and kernel's evidence);
* ``predicates``: platform predicates (``supported_on(device)``): which parameter is the
  device, a call found by its receiver's type, and the methods gating on them;
* ``facts_store``: the facts' JSON form, kept in mypy's cache;
* ``decisions``: requirements checked where a platform is decided.

Talking to mypy:

* ``hooks``: the hook callbacks (never let an exception escape);
* ``reporting``: reporting, and every access to mypy beyond its plugin interface.
"""
