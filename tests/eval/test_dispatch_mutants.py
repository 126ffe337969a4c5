"""The dispatch-site mutant planner (``eval.dispatch_mutants``) on a small package: which
sites it mutates, how, and that a mutant keeps every line where it was."""

from __future__ import annotations

import ast
from pathlib import Path

from eval.dispatch_mutants import plan_dispatch, schedule_dispatch, write_dispatch_mutant

TPU_OPS = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def add_one_tpu(x):
    return pl.pallas_call(lambda x_ref, o_ref: None, out_shape=x,
                          compiler_params=pltpu.CompilerParams())(x)


def reference(x):
    return x + 1
"""

MODEL = '''\
import functools

import jax
from jax import lax

from pkg import tpu_ops
from pkg.tpu_ops import add_one_tpu, reference


def _on_tpu():
    """Guard helper."""
    return jax.default_backend() == "tpu"


def run(x):
    if jax.default_backend() == "tpu":
        return tpu_ops.add_one_tpu(x)
    return reference(x)


def run_exit(x):
    if jax.devices()[0].platform != "tpu":
        return reference(x)
    y = add_one_tpu(x)
    return y


def run_helper(x):
    if _on_tpu():
        return add_one_tpu(x)
    return reference(x)


def run_flag(x):
    use_pallas = jax.default_backend() == "tpu" and x.ndim == 2
    if use_pallas:
        return add_one_tpu(x)
    return reference(x)


def no_kernel(x):
    if jax.default_backend() == "gpu":
        return reference(x)
    return x


def table(x):
    impls = {"tpu": add_one_tpu, "gpu": reference}
    return impls[jax.default_backend()](x)


def data_table():
    return {"tpu": "xprof", "gpu": "cupti"}


def branches(x):
    return lax.platform_dependent(x, tpu=add_one_tpu, default=reference)


def supported(device):
    return device.platform == "tpu"
'''


def _package(tmp_path: Path) -> Path:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg/__init__.py").write_text("")
    (tmp_path / "pkg/tpu_ops.py").write_text(TPU_OPS)
    (tmp_path / "pkg/model.py").write_text(MODEL)
    return tmp_path


def _line(text: str, needle: str) -> int:
    return next(i for i, line in enumerate(text.splitlines(), 1) if needle in line)


def test_plans_every_kind(tmp_path: Path) -> None:
    root = _package(tmp_path)
    plan = plan_dispatch(root, "pkg")
    got = {(m.kind, m.form, m.line) for m in plan.mutants}
    L = lambda s: _line(MODEL, s)  # noqa: E731
    assert ("guard", "default_backend", L('if jax.default_backend() == "tpu":')) in got
    assert ("guard", "devices_platform", L("jax.devices()[0].platform")) in got
    assert ("guard", "condition-variable", L("use_pallas =")) in got
    assert ("guard-helper", "default_backend", L('return jax.default_backend() == "tpu"')) in got
    assert ("table", "dict-literal", L("impls = {")) in got
    kinds = [m.kind for m in plan.mutants]
    assert kinds.count("platform_dependent") == 2  # rename tpu=, swap tpu=/default= values
    # a guard whose region runs no kernel is not mutated; nor a data table; nor a
    # comparison that is returned (supported_on-style)
    assert not any(m.line == L('if jax.default_backend() == "gpu":') for m in plan.mutants)
    reasons = {(s.kind, s.where.rsplit(":", 1)[1], s.reason) for s in plan.skipped}
    assert (
        "guard",
        str(L('if jax.default_backend() == "gpu":')),
        "decided region reaches no Pallas call",
    ) in reasons
    assert ("table", str(L('"xprof"')), "values are data, not callables") in reasons
    # a helper that only returns a comparison (supported_on-style) with no if on it
    assert (
        "guard-helper",
        str(L("def supported")),
        "supported: no caller's decided region reaches a Pallas call",
    ) in reasons


def test_spans_and_reach(tmp_path: Path) -> None:
    root = _package(tmp_path)
    plan = plan_dispatch(root, "pkg")
    L = lambda s: _line(MODEL, s)  # noqa: E731
    by_line = {(m.kind, m.line): m for m in plan.mutants}
    guard = by_line[("guard", L('if jax.default_backend() == "tpu":'))]
    assert guard.reaches == ("pkg.tpu_ops.add_one_tpu",)
    assert guard.spans == [
        ("pkg/model.py", L('if jax.default_backend() == "tpu":'), L("return tpu_ops.add_one_tpu"))
    ]
    exit_ = by_line[("guard", L("jax.devices()[0].platform"))]
    # != with an early exit: the rest of the function is decided
    assert exit_.spans == [("pkg/model.py", L("jax.devices()[0].platform"), L("return y"))]
    helper = by_line[("guard-helper", L('return jax.default_backend() == "tpu"'))]
    # a helper counts at the ifs that call it
    assert helper.spans == [("pkg/model.py", L("if _on_tpu():"), L("if _on_tpu():") + 1)]


def test_mutants_keep_lines_and_parse(tmp_path: Path) -> None:
    root = _package(tmp_path)
    plan = plan_dispatch(root, "pkg")
    for i, batch in enumerate(schedule_dispatch(plan.mutants)):
        seen: set[str] = set()
        for j, m in enumerate(batch):
            assert not (m.files & seen)
            seen |= m.files
            shadows = write_dispatch_mutant(root, m, tmp_path / "out" / f"{i}-{j}")
            for rel, path in shadows.items():
                old, new = (root / rel).read_text(), path.read_text()
                ast.parse(new)
                assert old.count("\n") == new.count("\n")
                assert old != new
    texts = {}
    for m in plan.mutants:
        shadows = write_dispatch_mutant(
            root, m, tmp_path / "one" / m.kind / str(m.line) / str(len(texts))
        )
        texts[(m.kind, m.detail)] = shadows["pkg/model.py"].read_text()
    L = lambda s: _line(MODEL, s)  # noqa: E731
    guard = next(
        t
        for (k, d), t in texts.items()
        if k == "guard" and "default_backend() ==" in d and "use_pallas" not in d
    )
    assert (
        guard.splitlines()[L('if jax.default_backend() == "tpu":') - 1]
        == '    if jax.default_backend() == "gpu":'
    )
    table = next(t for (k, _), t in texts.items() if k == "table")
    assert (
        table.splitlines()[L("impls = {") - 1]
        == '    impls = {"gpu": add_one_tpu, "tpu": reference}'
    )
    renamed = next(
        t for (k, d), t in texts.items() if k == "platform_dependent" and d.startswith("rename")
    )
    assert "lax.platform_dependent(x, cuda=add_one_tpu, default=reference)" in renamed
    swapped = next(
        t for (k, d), t in texts.items() if k == "platform_dependent" and d.startswith("swap")
    )
    assert "lax.platform_dependent(x, tpu=reference, default=add_one_tpu)" in swapped
