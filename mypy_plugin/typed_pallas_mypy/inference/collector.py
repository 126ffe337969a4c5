"""Pausing Python's garbage collector while the engine makes objects in one burst.

* ``collector_paused(freeze=True)``: the reader's (module facts are kept: moved to the
  oldest generation when it ends);
* ``collector_paused(freeze=False)``: the evaluator's (a question's heap is garbage when it
  ends: left young, so that the next pass of the youngest generation frees it).

When the collector is off (mypy turns it off while it loads the graph), it is left alone.
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator


@contextlib.contextmanager
def collector_paused(*, freeze: bool = True) -> Iterator[None]:
    """Read a module without the garbage collector, then move what the reading made to
    the collector's oldest generation, as mypy does while it parses (``load_graph``).

    A reading allocates a module's syntax tree and its facts in one burst (tens of
    thousands of objects, most kept until the module is read again). Left young, they
    start an extra pass of the youngest generation in a cold run over jax's ops (7
    against plain mypy's 6, about 0.15 s), and the passes are dearer while they last;
    ``gc.freeze`` / ``gc.unfreeze`` moves every object alive to the oldest generation
    without looking at them, and counts the youngest generation's allocations from zero.
    The cost is that cyclic garbage already in the young generations then waits for a
    full collection. When the collector is off (mypy turns it off while it loads the
    graph), it is left alone. ``gc.unfreeze`` also releases what the process had frozen
    itself (Python 3.12 starts with a few hundred objects frozen); mypy's first build in
    a process does the same (``load_graph``), so this adds no new effect to a process
    that runs mypy. Without ``freeze`` the collector is only turned back on."""
    if not gc.isenabled():
        yield
        return
    gc.disable()
    try:
        yield
    finally:
        if freeze:
            gc.freeze()
            gc.unfreeze()
        gc.enable()
