"""How the checks word platform evidence, and the one piece read from mypy's types.

Evidence is the inference's ``model.Evidence`` (one reason a kernel can only lower
with some backends), however it was found; ``describe`` is its note. ``declared_mesh`` reads a mesh argument's *declared type* (a parameter annotated
``pltpu.TensorCoreMesh``): the class mypy resolved it to, mapped to a backend namespace
(``evidence_tables.namespace_key``) and looked up in ``evidence_tables.MESH_EVIDENCE``.

What it does not do: read source. The arguments of an entry call (a mesh by its
constructor, scratch allocations, a grid spec) and the kernel bodies are read by the
inference's reader, the same way for the project and for libraries
(``inference.reader``, asked through ``platform_facts.Facts``); ``calls.py``
gathers the evidence of a call and compares it with the params.
"""

from __future__ import annotations

from mypy.nodes import Expression
from mypy.types import Instance, Type, get_proper_type

from typed_pallas_mypy import evidence_tables
from typed_pallas_mypy.inference.model import Evidence


def describe(evidence: Evidence) -> str:
    """The note saying what ``evidence`` proves of the kernel."""
    labels = sorted(evidence_tables.BACKEND_LABEL[b] for b in evidence.backends)
    return f"{evidence.what} at line {evidence.line} makes this kernel {' or '.join(labels)}-only"


def declared_mesh(expr: Expression, typ: Type | None) -> list[Evidence]:
    """A TPU or Mosaic GPU mesh by the declared class of the mesh value ``expr``."""
    if typ is None:
        return []
    proper = get_proper_type(typ)
    if not isinstance(proper, Instance):
        return []
    key = evidence_tables.namespace_key(proper.type.fullname)
    backends = evidence_tables.MESH_EVIDENCE.get(key) if key is not None else None
    if backends is None:
        return []
    return [Evidence(tuple(sorted(backends)), f"the {proper.type.name} mesh", expr.line)]
