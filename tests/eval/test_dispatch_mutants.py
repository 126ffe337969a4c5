"""The dispatch-site mutant planner (``eval.dispatch_mutants``) on a small package: which
sites it mutates, how, and that a mutant keeps every line where it was."""

from __future__ import annotations

import ast
from pathlib import Path

from eval.dispatch_mutants import (
    DispatchMutant,
    Kernel,
    Plan,
    RegistrySpec,
    plan_dispatch,
    schedule_dispatch,
    verdict,
    write_dispatch_mutant,
)

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
    # a predicate (returns a platform comparison of its device) with no if on it, and
    # no class it speaks for, is not mutated
    assert (
        "predicate",
        str(L("def supported")),
        "supported: no class it speaks for, nor if that calls it, reaches a Pallas call",
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


# --------------------------------------------------------------------------- new forms
# predicates (tokamax's supported_on), registrations (ejkernel's registry), device
# objects as platform sources (mesh, get_default_device, jax.Device parameters, any()),
# and the real-bug verdict that decides which mutants count.

REGISTRY = """\
import enum


class Backend(enum.StrEnum):
    GPU = "gpu"
    TPU = "tpu"
    ANY = "any"


class KernelRegistry:
    def register(self, algorithm, platform, backend, priority=0):
        return lambda f: f


kernel_registry = KernelRegistry()
"""

OPS = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu

from pkg.registry import Backend, kernel_registry
from pkg.tpu_ops import add_one_tpu, reference


@kernel_registry.register("add", "pallas", Backend.TPU)
def add_tpu(x):
    return add_one_tpu(x)


@kernel_registry.register("add", "xla", Backend.ANY)
def add_any(x):
    return add_one_tpu(x)


@kernel_registry.register("add", "xla", Backend.GPU)
def add_xla(x):
    return reference(x)


def add_interpreted(x, interpret):
    return pl.pallas_call(lambda x_ref, o_ref: None, out_shape=x,
                          compiler_params=pltpu.CompilerParams(), interpret=interpret)(x)


class AddOp:
    def supported_on(self, device: jax.Device) -> bool:
        return device.platform == "tpu"

    def _fwd(self, x):
        return add_one_tpu(x)


class EarlyExitOp:
    def supported_on(self, device: jax.Device) -> bool:
        if device.platform != "tpu":
            return False
        return True

    def _fwd(self, x):
        return add_one_tpu(x)


class InterpretedOp:
    def supported_on(self, device: jax.Device) -> bool:
        return device.platform == "tpu"

    def _fwd(self, x, interpret):
        return add_interpreted(x, interpret)


class NoKernelOp:
    def supported_on(self, device: jax.Device) -> bool:
        return device.platform == "tpu"

    def _fwd(self, x):
        return reference(x)


def on_mesh(x, mesh):
    if mesh.devices.flat[0].platform == "tpu":
        return add_one_tpu(x)
    return reference(x)


def on_default(x, backend):
    if backend.get_default_device().platform == "tpu":
        return add_one_tpu(x)
    return reference(x)


def on_device(x, device: jax.Device):
    if device.platform == "tpu":
        return add_one_tpu(x)
    return reference(x)


def on_any(x):
    if any(d.platform == "tpu" for d in jax.devices()):
        return add_one_tpu(x)
    return reference(x)


def on_array(x):
    if next(iter(x.devices())).platform == "tpu":
        return add_one_tpu(x)
    return reference(x)


def on_config(x, config):
    if config.platform == "tpu":
        return add_one_tpu(x)
    return reference(x)


def on_kind(x):
    if jax.devices()[0].device_kind == "TPU v5 lite":
        return add_one_tpu(x)
    return reference(x)
"""


def _package2(tmp_path: Path) -> Path:
    root = _package(tmp_path)
    (root / "pkg/registry.py").write_text(REGISTRY)
    (root / "pkg/ops.py").write_text(OPS)
    return root


def _spec() -> RegistrySpec:
    return RegistrySpec(
        package="pkg",
        call="pkg.registry.KernelRegistry.register",
        receiver="kernel_registry",
        method="register",
        keyword="backend",
        position=2,
        values=(("Backend.TPU", "tpu"), ("Backend.GPU", "gpu")),
    )


def _plan2(tmp_path: Path) -> tuple[Plan, dict[tuple[str, int], DispatchMutant]]:
    plan = plan_dispatch(_package2(tmp_path), "pkg", registry=_spec())
    return plan, {(m.kind, m.line): m for m in plan.mutants if m.relpath == "pkg/ops.py"}


def _ops_line(needle: str, nth: int = 0) -> int:
    return [i for i, line in enumerate(OPS.splitlines(), 1) if needle in line][nth]


def test_registration_of_a_tpu_kernel_is_swapped_to_gpu(tmp_path: Path) -> None:
    _plan, by = _plan2(tmp_path)
    m = by[("registration", _ops_line('"add", "pallas", Backend.TPU'))]
    assert m.form == "kernel_registry.register"
    assert m.detail == "add_tpu: Backend.TPU -> Backend.GPU"
    assert m.to_platform == "gpu"
    assert m.registry == "pkg"
    assert m.not_a_bug is None  # TPU params let through to a GPU: a real bug
    # counted at the registration: decorator to def line
    assert m.spans == [("pkg/ops.py", _ops_line("Backend.TPU)"), _ops_line("def add_tpu"))]
    shadows = write_dispatch_mutant(tmp_path, m, tmp_path / "out")
    text = shadows["pkg/ops.py"].read_text().splitlines()
    assert text[_ops_line("Backend.TPU)") - 1] == (
        '@kernel_registry.register("add", "pallas", Backend.GPU)'
    )


def test_registrations_that_name_no_platform_or_no_kernel_are_not_mutated(
    tmp_path: Path,
) -> None:
    plan, by = _plan2(tmp_path)
    assert ("registration", _ops_line("Backend.ANY")) not in by
    assert ("registration", _ops_line('"xla", Backend.GPU')) not in by
    reasons = {(s.kind, int(s.where.rsplit(":", 1)[1]), s.reason) for s in plan.skipped}
    assert (
        "registration",
        _ops_line("Backend.ANY"),
        "platform Backend.ANY not a platform",
    ) in reasons
    assert (
        "registration",
        _ops_line('"xla", Backend.GPU'),
        "registered function reaches no Pallas call",
    ) in reasons


def test_registration_config_names_the_registry() -> None:
    assert _spec().config() == (
        "[tool.typed-pallas]\n\n[[tool.typed-pallas.registries]]\n"
        'call = "pkg.registry.KernelRegistry.register"\nplatform = "backend"\nposition = 2\n'
        'values = { "Backend.TPU" = "tpu", "Backend.GPU" = "gpu" }\n'
    )


def test_predicates_speak_for_their_class(tmp_path: Path) -> None:
    plan, by = _plan2(tmp_path)
    plain = by[("predicate", _ops_line('return device.platform == "tpu"'))]
    assert plain.form == "device:parameter"
    assert plain.detail == "supported_on: 'tpu' -> 'gpu'"
    assert plain.reaches == ("pkg.ops.AddOp._fwd",)
    assert plain.not_a_bug is None
    # counted at the predicate and at the class's methods that are it
    assert ("pkg/ops.py", _ops_line("def supported_on"), _ops_line("return device.platform")) in (
        plain.spans
    )
    early = by[("predicate", _ops_line('if device.platform != "tpu":'))]
    assert early.detail == "supported_on: 'tpu' -> 'gpu'"
    assert early.not_a_bug is None
    # a predicate whose class runs a kernel only under an unknown interpret= is no bug
    interpreted = by[("predicate", _ops_line('return device.platform == "tpu"', 1))]
    assert interpreted.not_a_bug == "interpret= not known to be off at the kernel"
    # a predicate whose class reaches no kernel is not mutated
    assert ("predicate", _ops_line('return device.platform == "tpu"', 2)) not in by
    reasons = {(s.kind, int(s.where.rsplit(":", 1)[1]), s.reason) for s in plan.skipped}
    assert (
        "predicate",
        _ops_line("def supported_on", 3),
        "supported_on: no class it speaks for, nor if that calls it, reaches a Pallas call",
    ) in reasons


def test_device_objects_are_platform_sources(tmp_path: Path) -> None:
    _plan, by = _plan2(tmp_path)
    forms = {
        "mesh.devices.flat[0].platform": "device:mesh",
        "backend.get_default_device().platform": "device:default",
        'if device.platform == "tpu":': "device:parameter",
        "any(d.platform": "device:any",
        "next(iter(x.devices()))": "device:array",
    }
    for needle, form in forms.items():
        m = by[("guard", _ops_line(needle))]
        assert (m.form, m.to_platform, m.not_a_bug) == (form, "gpu", None), needle
    # config.platform is mutated, but not as a device source; device_kind is no guard
    assert by[("guard", _ops_line("config.platform"))].form == "attribute_platform"
    assert ("guard", _ops_line("device_kind")) not in by


def test_verdict_needs_a_kernel_that_cannot_lower_there() -> None:
    tpu = Kernel("k.py", 1, frozenset({"tpu"}), "params", "off", False)
    assert verdict("gpu", [tpu]) is None
    assert verdict("tpu", [tpu]) == "kernel lowers there"
    assert verdict("gpu", []) == "no kernel reached"
    generic = Kernel("k.py", 2, frozenset(), "generic", "off", False)
    assert verdict("gpu", [generic]) == "kernel's platform unknown (no params class, no evidence)"
    interp = Kernel("k.py", 3, frozenset({"tpu"}), "params", "unknown", False)
    assert verdict("gpu", [interp]) == "interpret= not known to be off at the kernel"
    guarded = Kernel("k.py", 4, frozenset({"tpu"}), "params", "off", True)
    assert verdict("gpu", [guarded]) == "kernel under a platform guard of its own"
    # one kernel that cannot lower there is enough
    assert verdict("gpu", [generic, tpu]) is None
    triton = Kernel("k.py", 5, frozenset({"cuda", "rocm"}), "params", "off", False)
    assert verdict("tpu", [triton]) is None
    assert verdict("cuda", [triton]) == "kernel lowers there"


def test_mutated_files_never_keep_the_original_size(tmp_path: Path) -> None:
    # mypy takes a same-size shadow in a warm cache as unchanged (it hashes the original
    # file): "tpu" -> "gpu" would never be read. Every mutated file is one byte longer.
    root = _package(tmp_path)
    plan = plan_dispatch(root, "pkg")
    guard = next(m for m in plan.mutants if m.kind == "guard" and m.form == "default_backend")
    shadow = write_dispatch_mutant(root, guard, tmp_path / "out")["pkg/model.py"]
    old, new = (root / "pkg/model.py").read_bytes(), shadow.read_bytes()
    assert len(new) == len(old) + 1
    assert new.endswith(b"\n ")
    assert new.count(b"\n") == old.count(b"\n")
