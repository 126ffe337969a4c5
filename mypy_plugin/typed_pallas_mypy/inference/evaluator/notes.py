"""The words of the evaluator's answers: the error of a call JAX refuses, and the notes
that walk from it to the kernel, one per function on the way.

``refusal_message`` words what JAX raises (``_platforms``' templates: a params class for
another platform, a backend of the same platform that does not serve it, Mosaic GPU
params that ``pl.pallas_call`` no longer lowers, a kernel no platform lowers).
``call_words`` gives both for a call site. ``chain_notes`` words a way (``verdict.Link``): "f (path:line) lowers only for tpu: it
calls g at path:line", and at its end the entry call or the kernel run. Both read the
wording from ``_platforms``, the one source of messages; a call site's finding
(``verdict.CallVerdict``) and a function's summary (``summaries.FunctionSummary``) use
the same words.

What it does not do: decide anything (``verdict``), or know where a module's file is
(the links carry their paths, given by the engine).
"""

from __future__ import annotations

from collections.abc import Sequence

from typed_pallas import _platforms
from typed_pallas_mypy import fullnames
from typed_pallas_mypy.entries import ENTRIES
from typed_pallas_mypy.inference.evaluator.domain import Kernel, Proof
from typed_pallas_mypy.inference.evaluator.verdict import CallVerdict, Link, proven_platforms


def params_row(kernel: Kernel) -> _platforms.ParamsClass | None:
    """The params class that decides where ``kernel`` lowers: its params', or the one
    backend its entry point allows (``plgpu.kernel``: Mosaic GPU); None for neither."""
    row = _platforms.PARAMS_BY_BACKEND.get(kernel.backend)  # type: ignore[call-overload]
    if row is None and kernel.backends is not None:
        row = _platforms.PARAMS_BY_BACKEND.get(sorted(kernel.backends)[0])  # type: ignore[call-overload]
    return row  # type: ignore[no-any-return]


def refusal_message(kernel: Kernel, failing: Sequence[str], release: tuple[int, ...] | None) -> str:
    """What JAX raises when ``kernel`` is lowered for the ``failing`` platforms."""
    row = params_row(kernel)
    expected = sorted({_platforms.PLATFORM_OF_LOWERING[p] for p in failing})
    through_pallas_call = kernel.entry in (fullnames.PALLAS_CALL, fullnames.PALLAS_CALL_PUBLIC)
    if (
        kernel.backend == "mosaic_gpu"
        and through_pallas_call
        and release is not None
        and release[:2] >= _platforms.NO_MOSAIC_GPU_PALLAS_CALL_FROM
    ):
        return _platforms.MOSAIC_GPU_PALLAS_CALL_MESSAGE
    proof = deciding_proof(kernel)
    if proof is not None or row is None:
        proven = proven_platforms(kernel)
        return _platforms.REQUIREMENT_TEMPLATE.format(
            name="the kernel",
            required=", ".join(sorted(proven)) if proven else "none of them",
            platform=", ".join(expected if proof is not None else failing),
        )
    if row.platform in expected:
        return _platforms.backend_mismatch_message(row.backend, sorted(failing)[0])
    return _platforms.mismatch_message(row.platform, expected[0])


def deciding_proof(kernel: Kernel) -> Proof | None:
    """The first proof of ``kernel`` that narrows where it lowers beyond what its params
    allow (its body or arguments, not its params, decide); None when the params do."""
    proven = proven_platforms(kernel)
    if proven is None:
        return None
    row = _platforms.PARAMS_BY_BACKEND.get(kernel.backend)  # type: ignore[call-overload]
    if row is not None and frozenset(row.lowers_on) <= proven:
        return None
    return kernel.proofs[0]


def decides(kernel: Kernel) -> str:
    """What decides where ``kernel`` lowers, as the notes say it: "takes Mosaic TPU
    params", or "uses pltpu.sync_copy (line 10), TPU-only"."""
    proof = deciding_proof(kernel)
    if proof is None:
        row = params_row(kernel)
        title = f"{row.title} params" if row is not None else "no params"
        return _platforms.PARAMS_DECIDE.format(params=title)
    labels = "/".join(
        _platforms.BACKEND_LABELS[b]  # type: ignore[index]
        for b in sorted(proof.backends)
    )
    place = f"in {proof.function}, " if proof.function else ""
    if proof.module != kernel.module:  # the body is another module's: name it
        place = f"in {proof.function or proof.definition} of {proof.module}, "
    return _platforms.PROOF_NOTE.format(what=proof.what, place=place, line=proof.line, label=labels)


def chain_notes(
    chain: Sequence[Link], kernel: Kernel, kernel_path: str, lowers_for: Sequence[str]
) -> list[str]:
    """One note per step of ``chain`` to ``kernel`` (made in the file ``kernel_path``),
    which lowers only for ``lowers_for``; nothing for an empty chain."""
    said = decides(kernel)
    platforms = ", ".join(lowers_for) or "no platform"
    entry = ENTRIES[kernel.entry].title if kernel.entry in ENTRIES else "entry call"
    notes: list[str] = []
    for i, link in enumerate(chain):
        common = {
            "name": link.name,
            "where": f"{link.path}:{link.defined}",
            "platforms": platforms,
            "at": f"{link.path}:{link.line}",
        }
        following = chain[i + 1] if i + 1 < len(chain) else None
        if link.made:
            notes.append(_platforms.CHAIN_RETURNS_NOTE.format(cls=link.made, **common))
        elif link.rule and link.callee is not None:
            notes.append(_platforms.CHAIN_RULE_NOTE.format(callee=link.callee, **common))
        elif link.callee == "__call__" and following is not None and following.owner:
            notes.append(_platforms.CHAIN_INSTANCE_NOTE.format(cls=following.owner, **common))
        elif link.callee is not None:
            nested = link.nested and not link.callee.startswith("<lambda")
            callee = f"its nested {link.callee}" if nested else link.callee
            notes.append(_platforms.CHAIN_CALL_NOTE.format(callee=callee, **common))
        elif kernel.module == link.module and kernel.line == link.line:
            notes.append(_platforms.CHAIN_ENTRY_NOTE.format(entry=entry, decides=said, **common))
        else:
            made = f"{kernel_path}:{kernel.line}"
            notes.append(
                _platforms.CHAIN_RUNS_NOTE.format(entry=entry, made=made, decides=said, **common)
            )
    return notes


def kernel_note(kernel: Kernel) -> str:
    """The note of a call that runs ``kernel`` when the way to it is not known."""
    return f"calling it runs the kernel at {kernel.module}:{kernel.line}, which {decides(kernel)}"


def call_words(
    verdict: CallVerdict, release: tuple[int, ...] | None
) -> tuple[str, tuple[str, ...]]:
    """The error and notes of a call site the evaluator finds JAX refuses at ``release``:
    the refusal of its first kernel for the platforms that surprise (not the author's
    choice of that platform's backend), the way to it, and where the guards let it run."""
    kernel = verdict.kernels[0]
    failing = [p for p in verdict.failing if p not in verdict.chosen] or list(verdict.failing)
    message = refusal_message(kernel, failing, release)
    lowers_for = verdict.kernel_lowers_for(release)
    said = chain_notes(verdict.chain, kernel, verdict.kernel_path, lowers_for)
    if not said:
        said.append(kernel_note(kernel))
    said.append(f"the code around it lets this lower only for {', '.join(verdict.reached)}")
    return message, tuple(said)
