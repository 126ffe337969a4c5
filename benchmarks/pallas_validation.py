"""What the hardware checks share: benchmarks/gpu_validation.py and benchmarks/tpu_validation.py.

Both compare JAX's own Pallas ops built by the typed entry points with the same ops built
by raw JAX, in one process, and run wrong-params programs each in a fresh interpreter.
This module holds the parts that are the same for both:

* **routing**: ``routed`` points an op module's ``pl`` (or ``plgpu``) name to a proxy of
  that module whose entry point is typed-pallas' (counted), so the op's own kernel is
  built by the typed API without copying any of JAX's code;
* **one op, typed vs raw**: ``run_op`` lowers and compiles both (and raw a second time,
  the control for lowerings that embed ids), compares the lowered text and the outputs
  bit for bit, measures the error against a plain-JAX reference and times both with
  interleaved samples;
* **wrong-params programs**: ``MismatchCase``, ``program`` (a prelude, the case's code and
  one step, wrapped so that the outcome is printed as one JSON line), ``run_case`` (a
  fresh interpreter) and ``as_expected``;
* the printed tables.

What it does not do: know any platform. The ops, the programs' preludes and steps, and
the texts the typed API must give are each script's own.
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import json
import os
import statistics
import subprocess
import sys
import textwrap
import time
import types
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent

# --------------------------------------------------------------------------- typed routing


class Counter:
    def __init__(self) -> None:
        self.n = 0


def _proxy(
    real: types.ModuleType, name: str, replacement: Callable[..., Any], counter: Counter
) -> types.ModuleType:
    """A module object that is ``real`` except that ``name`` is ``replacement`` (counted)."""
    proxy = types.ModuleType(f"{real.__name__}__typed")

    @functools.wraps(replacement)
    def counted(*args: Any, **kwargs: Any) -> Any:
        counter.n += 1
        return replacement(*args, **kwargs)

    setattr(proxy, name, counted)
    proxy.__getattr__ = lambda attr: getattr(real, attr)  # type: ignore[method-assign]  # PEP 562
    return proxy


@contextlib.contextmanager
def routed(
    module: types.ModuleType,
    alias: str,
    name: str,
    replacement: Callable[..., Any],
    counter: Counter,
) -> Iterator[None]:
    """While active, ``module.<alias>.<name>`` is ``replacement``."""
    real = getattr(module, alias)
    setattr(module, alias, _proxy(real, name, replacement, counter))
    try:
        yield
    finally:
        setattr(module, alias, real)


# --------------------------------------------------------------------------- one op


def leaves(x: Any) -> list[Any]:
    import jax

    return jax.tree_util.tree_leaves(x)


def diff_lines(a: str, b: str, limit: int = 12) -> list[str]:
    """The first differing lines of two module texts (long lines cut)."""
    import difflib

    lines = [
        ln[:300]
        for ln in difflib.unified_diff(a.splitlines(), b.splitlines(), lineterm="", n=0)
        if ln[:1] in "+-" and not ln.startswith(("+++", "---"))
    ]
    return lines[:limit]


def ready(value: Any) -> Any:
    """``jax.block_until_ready`` (untyped in jax)."""
    import jax

    return jax.block_until_ready(value)  # type: ignore[no-untyped-call]


def clear_caches() -> None:
    """``jax.clear_caches`` (untyped in jax)."""
    import jax

    jax.clear_caches()  # type: ignore[no-untyped-call]


def time_pair(
    f1: Callable[..., Any], f2: Callable[..., Any], args: tuple[Any, ...], samples: int, inner: int
) -> tuple[list[float], list[float]]:
    """Interleaved samples of ``inner`` back-to-back calls each; ms per call."""

    for f in (f1, f2):
        for _ in range(3):
            ready(f(*args))
    t1: list[float] = []
    t2: list[float] = []
    for i in range(samples):
        order = ((f1, t1), (f2, t2)) if i % 2 == 0 else ((f2, t2), (f1, t1))
        for f, acc in order:
            ready(f(*args))
            t0 = time.perf_counter()
            for _ in range(inner):
                out = f(*args)
            ready(out)
            acc.append((time.perf_counter() - t0) * 1e3 / inner)
    return t1, t2


def relative_error(outputs: list[Any], reference: list[Any]) -> float:
    """The largest ``max|out - ref| / max|ref|`` over the leaves (in float32)."""
    import numpy as np

    return max(
        float(
            np.max(np.abs(np.asarray(p, np.float32) - np.asarray(r, np.float32)))
            / (float(np.max(np.abs(np.asarray(r, np.float32)))) or 1.0)
        )
        for p, r in zip(outputs, reference)
    )


def run_op(
    case: dict[str, Any], replacement: Callable[..., Any], samples: int, inner: int
) -> dict[str, Any]:
    """One op built raw and by ``replacement`` (routed as the case says): its result row.

    ``case`` holds ``name``, ``backend``, ``module`` / ``alias`` / ``entry`` (where the
    op calls its entry point), ``args``, ``fn`` (the op), ``ref`` (a plain-JAX reference
    or None) and ``tol`` (the largest relative error the reference allows).
    """
    import jax
    import numpy as np

    res: dict[str, Any] = {"op": case["name"], "backend": case["backend"]}
    args = case["args"]
    try:
        # The ops jit themselves: clear JAX's caches so each variant really traces the op.
        clear_caches()
        raw_low = jax.jit(lambda *a: case["fn"](*a)).lower(*args)
        raw = raw_low.compile()
        counter = Counter()
        clear_caches()
        typed_fn = jax.jit(lambda *a: case["fn"](*a))
        with routed(case["module"], case["alias"], case["entry"], replacement, counter):
            typed_low = typed_fn.lower(*args)
        typed = typed_low.compile()
        res["typed_calls"] = counter.n
        # control: the same op lowered raw a second time (some lowerings embed ids or
        # counters, so text can differ between two raw lowerings too)
        clear_caches()
        raw2_low = jax.jit(lambda *a: case["fn"](*a)).lower(*args)
        a_txt, b_txt, c_txt = raw_low.as_text(), typed_low.as_text(), raw2_low.as_text()
        res["lowered_identical"] = a_txt == b_txt
        res["raw_vs_raw_identical"] = a_txt == c_txt
        if a_txt != b_txt:
            res["lowered_diff_typed"] = diff_lines(a_txt, b_txt)
            res["lowered_diff_raw_vs_raw"] = diff_lines(a_txt, c_txt)
            res["lowered_identical_modulo_raw_noise"] = diff_lines(a_txt, b_txt) == diff_lines(
                a_txt, c_txt
            )
        out_raw, out_typed = raw(*args), typed(*args)
        la, lb = leaves(out_raw), leaves(out_typed)
        res["outputs_bitwise_equal"] = len(la) == len(lb) and all(
            np.array_equal(np.asarray(p), np.asarray(q)) for p, q in zip(la, lb)
        )
        if case["ref"] is not None:
            err = relative_error(la, leaves(case["ref"](*args)))
            res["max_rel_error_vs_reference"] = err
            res["matches_reference"] = err <= case["tol"]
        t_raw, t_typed = time_pair(raw, typed, args, samples, inner)
        res["raw_ms_median"] = statistics.median(t_raw)
        res["typed_ms_median"] = statistics.median(t_typed)
        res["ratio_typed_over_raw"] = res["typed_ms_median"] / res["raw_ms_median"]
        res["samples"] = samples
        res["calls_per_sample"] = inner
        res["ok"] = bool(
            res["typed_calls"]
            and res["outputs_bitwise_equal"]
            and res.get("matches_reference", True)
        )
    except Exception as e:  # recorded, not hidden
        res["ok"] = False
        res["error"] = f"{type(e).__name__}: {str(e)[:2000]}"
    return res


# --------------------------------------------------------------------------- mismatch programs

# Each case is a program of its own, run in a fresh interpreter (JAX's behaviour depends on
# which lowering rules earlier calls registered): a script's prelude, the case's ``build``
# (which defines ``f``, a function of ``x``), then one step. The programs are strings:
# mypy does not see into them, and they cannot use the scripts' helpers
# (tests/test_gpu_validation.py and tests/test_tpu_validation.py check every name).

#: the end of every prelude: how a program reports its outcome (one line of JSON)
REPORT_DEF = textwrap.dedent("""\
    def _report(exc):
        print("@@RESULT@@" + json.dumps({"raised": type(exc).__name__ if exc else None,
               "is_value_error": isinstance(exc, ValueError), "message": str(exc) if exc else None,
               "mro": [c.__name__ for c in type(exc).__mro__] if exc else None}))
""")

#: the step on the accelerator: run ``f`` on ``x``
RUN = "y = jax.block_until_ready(jax.jit(f)(x))\n"
#: and, for a case that must run, check its result
CHECK = "assert bool((y == {result}).all())\n"


@dataclasses.dataclass(frozen=True)
class MismatchCase:
    """One wrong-params case (or a control)."""

    #: source that defines ``f`` from the prelude's names
    build: str
    #: the exact ``ValueError`` text the typed API must give; None where the case measures
    #: what raw JAX does
    expect: str | None = None
    #: a control: ``f`` must run (lower, on a CPU host) and give ``result``
    must_run: bool = False
    #: what a control's ``f(x)`` must equal (an expression of the prelude's names)
    result: str = "x + 1"


def program(prelude: str, case: MismatchCase, step: str) -> str:
    """The whole program of ``case``: ``prelude``, its ``build`` and ``step``, reporting."""
    body = textwrap.dedent(case.build).strip() + "\n" + step
    return (
        prelude
        + "try:\n"
        + textwrap.indent(body, "    ")
        + "except Exception as exc:\n    _report(exc)\nelse:\n    _report(None)\n"
    )


def run_step(case: MismatchCase) -> str:
    """The step on the accelerator: run ``f``, and for a control check what it gave."""
    return RUN + (CHECK.format(result=case.result) if case.must_run else "")


def as_expected(case: MismatchCase, result: dict[str, Any]) -> bool | None:
    """Whether ``result`` is what ``case`` claims; None for raw JAX (what it does is measured)."""
    if case.must_run:
        return result.get("raised") is None
    if case.expect is not None:
        return bool(result.get("is_value_error")) and result.get("message") == case.expect
    return None


def run_case(
    name: str,
    case: MismatchCase,
    source: str,
    env: dict[str, str],
    exact: str,
    lower_for: str | None = None,
) -> dict[str, Any]:
    """Run the program ``source`` of ``case`` in a fresh interpreter; its result row.

    ``exact`` is the typed API's text for the script's main mismatch (the row says
    whether the message was that text, whatever the case expects)."""
    t0 = time.perf_counter()
    p = subprocess.run(
        [sys.executable, "-c", source],
        capture_output=True,
        text=True,
        env=env,
        timeout=300,
    )
    line = next((ln for ln in p.stdout.splitlines() if ln.startswith("@@RESULT@@")), None)
    res: dict[str, Any] = {"case": name, "seconds": round(time.perf_counter() - t0, 1)}
    if lower_for is not None:
        res["lowered_for"] = lower_for
    if line is None:
        res.update(
            raised="(process failed)", message=(p.stdout + p.stderr)[-1500:], is_value_error=False
        )
    else:
        res.update(json.loads(line[len("@@RESULT@@") :]))
    res["exact_expected_text"] = res.get("message") == exact
    res["as_expected"] = as_expected(case, res)
    return res


# --------------------------------------------------------------------------- the run


def environment() -> dict[str, str]:
    """The environment of the programs (this checkout's ``src`` first on PYTHONPATH); puts
    ``src`` on this process's ``sys.path`` too."""
    env = dict(os.environ)
    src = str(ROOT / "src")
    env["PYTHONPATH"] = os.pathsep.join([src, *filter(None, [env.get("PYTHONPATH")])])
    if src not in sys.path:
        sys.path.insert(0, src)
    return env


def describe_platform() -> dict[str, Any]:
    """JAX's version, the first device and this Python (imports jax: call it last)."""
    import platform

    import jax

    import typed_pallas

    dev = jax.devices()[0]
    return dict(
        jax=jax.__version__,
        jaxlib=getattr(jax.lib, "__version__", None) or jax.__version__,
        device=getattr(dev, "device_kind", str(dev)),
        platform=dev.platform,
        python=platform.python_version(),
        typed_pallas=getattr(typed_pallas, "__version__", None),
    )


def print_ops(report: dict[str, Any]) -> None:
    print(f"jax {report['jax']} on {report['device']}  ({report['date']})")
    print(
        f"{'op':24s} {'typed calls':>11s} {'same HLO':>8s} {'raw=raw':>7s} {'bitwise':>7s} {'ref ok':>6s} "
        f"{'raw ms':>8s} {'typed ms':>8s} {'ratio':>6s}"
    )
    for r in report["ops"]:
        if "error" in r:
            print(f"{r['op']:24s} ERROR {r['error'][:200]}")
            continue
        print(
            f"{r['op']:24s} {r['typed_calls']:>11d} {r['lowered_identical']!s:>8s} "
            f"{r['raw_vs_raw_identical']!s:>7s} "
            f"{r['outputs_bitwise_equal']!s:>7s} {r.get('matches_reference', '-')!s:>6s} "
            f"{r['raw_ms_median']:8.3f} {r['typed_ms_median']:8.3f} {r['ratio_typed_over_raw']:6.3f}"
        )


def print_mismatch(rows: list[dict[str, Any]]) -> None:
    for m in rows:
        msg = m.get("message") or ""
        print(
            f"- {m['case']}: {m['raised']}"
            + (f": {msg[:160]!r}" if m["raised"] else "")
            + ("  [exact]" if m["exact_expected_text"] else "")
            + {True: "  [as expected]", False: "  [NOT AS EXPECTED]", None: ""}[m["as_expected"]]
        )


def write_json(path: Path, report: dict[str, Any]) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(report, indent=1) + "\n")
