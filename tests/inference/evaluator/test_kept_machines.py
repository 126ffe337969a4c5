"""Questions on a kept machine give a fresh machine's answers, in any order.

``questions.module_findings`` keeps, per top-level package and platform, the machine
that ran the package's imports, and runs each question on it, undoing what the question
changed (``journal``, ``Machine.question``). These programs change what other modules'
questions read in every way the evaluator lets a function write: a module-level registry
filled and a global rebound by a function, a closure's variable set through
``nonlocal``, a generator at module level consumed, a ``defaultdict`` filled, a class
attribute and a module attribute set (``setattr`` too), and a module imported inside a
function that registers into another's table. Each module's answer (its findings and the
modules read) must be the same with kept machines, in two orders, as with a fresh
machine per question; and the findings must be there to compare.
"""

from __future__ import annotations

import textwrap

from evaluator_programs import LIB, loader_of

from typed_pallas_mypy.inference.evaluator.machine import Machine
from typed_pallas_mypy.inference.evaluator.questions import module_findings

PACKAGE = {
    "pkg/__init__.py": "from pkg import registry, users, setters\n",
    "pkg/registry.py": """
        import jax
        import collections
        import lib

        KERNELS = {"tpu": lib.tpu_kernel}
        LATER = collections.defaultdict(lambda: lib.triton_kernel)
        CURRENT = lib.triton_kernel

        def pick():
            return KERNELS[jax.default_backend()]

        def make_counter():
            chosen = lib.triton_kernel
            def set_tpu():
                nonlocal chosen
                chosen = lib.tpu_kernel
            def get():
                return chosen
            return set_tpu, get

        SET_TPU, GET = make_counter()

        def numbers():
            yield lib.tpu_kernel
            yield lib.triton_kernel

        GENERATED = numbers()

        class Holder:
            fn = lib.triton_kernel
    """,
    "pkg/setters.py": """
        import jax
        import lib
        from pkg import registry

        def register_gpu():
            registry.KERNELS["gpu"] = lib.tpu_kernel   # wrong on purpose

        def rebind():
            registry.CURRENT = lib.tpu_kernel

        def close_over():
            registry.SET_TPU()

        def consume():
            return next(registry.GENERATED)

        def fill():
            registry.LATER["gpu"] = lib.tpu_kernel

        def set_class():
            registry.Holder.fn = lib.tpu_kernel
            setattr(registry, "EXTRA", lib.tpu_kernel)

        def late_import():
            import pkg.plugin_gpu  # registers into registry.KERNELS when imported

        def guarded(x):
            if jax.default_backend() == "gpu":
                return lib.tpu_kernel(x)
            return x
    """,
    "pkg/plugin_gpu.py": """
        import lib
        from pkg import registry

        registry.KERNELS["gpu"] = lib.tpu_kernel
    """,
    "pkg/users.py": """
        import jax
        from pkg import registry

        def by_table(x):
            if jax.default_backend() == "gpu":
                return registry.pick()(x)
            return x

        def by_global(x):
            if jax.default_backend() == "gpu":
                return registry.CURRENT(x)
            return x

        def by_closure(x):
            if jax.default_backend() == "gpu":
                return registry.GET()(x)
            return x

        def by_generator(x):
            if jax.default_backend() == "gpu":
                return next(registry.GENERATED)(x)
            return x

        def by_defaultdict(x):
            if jax.default_backend() == "gpu":
                return registry.LATER["gpu"](x)
            return x

        def by_class(x):
            if jax.default_backend() == "gpu":
                return registry.Holder.fn(x)
            return x
    """,
}

MODULES = ["pkg.users", "pkg.setters", "pkg.registry", "pkg.plugin_gpu", "pkg"]


def _files() -> dict[str, str]:
    files = {path: textwrap.dedent(source) for path, source in PACKAGE.items()}
    files["lib.py"] = LIB.replace("$PARAMS", "")
    return files


def _answers(
    order: list[str], kept: dict[tuple[str, str], Machine | None] | None
) -> dict[str, tuple[list[tuple[int, int]], frozenset[str]]]:
    loader = loader_of(_files())
    trees: dict[tuple[str, str], object] = {}
    out = {}
    for module in order:
        found, read = module_findings(loader, module, (0, 12, 1), trees, {}, kept)  # type: ignore[arg-type]
        out[module] = ([(f.line, f.column) for f in found], read)
    return out


def test_kept_machines_answer_as_fresh_ones_in_any_order() -> None:
    fresh = _answers(MODULES, None)
    kept: dict[tuple[str, str], Machine | None] = {}
    forward = _answers(MODULES, kept)
    assert set(kept) == {("pkg", "tpu"), ("pkg", "cuda"), ("pkg", "rocm")}
    backward = _answers(list(reversed(MODULES)), {})
    assert forward == fresh
    assert backward == fresh


def test_the_comparison_has_findings_to_compare() -> None:
    fresh = _answers(MODULES, None)
    # pkg.setters' guarded TPU kernel under a guard for "gpu" is a finding everywhere;
    # none of the writes above reaches pkg.users' questions, run on their own
    assert fresh["pkg.setters"][0] != []
    assert all(module in fresh["pkg.users"][1] for module in ("pkg", "pkg.registry"))


def test_a_write_left_undone_would_show() -> None:
    """Without undoing, a question's writes reach the next question: the comparison
    above can fail."""
    from typed_pallas_mypy.inference.evaluator import journal

    original = journal.Journal.restore
    journal.Journal.restore = lambda self: None  # type: ignore[method-assign]
    try:
        leaky = _answers(["pkg.setters", "pkg.users"], {})
    finally:
        journal.Journal.restore = original  # type: ignore[method-assign]
    assert leaky != _answers(["pkg.setters", "pkg.users"], None)


def test_few_packages_keep_their_machines_and_answers_stay() -> None:
    """A project of many top-level scripts keeps the machines of the last few only."""
    files = {f"script{i}.py": _SCRIPT for i in range(12)}
    files["lib.py"] = LIB.replace("$PARAMS", "")
    loader = loader_of(files)
    kept: dict[tuple[str, str], Machine | None] = {}
    for i in range(12):
        found, _ = module_findings(loader, f"script{i}", (0, 12, 1), {}, {}, kept)
        fresh, _ = module_findings(loader, f"script{i}", (0, 12, 1), {}, {}, None)
        assert [f.line for f in found] == [f.line for f in fresh] == [7]
    tops = {top for top, _ in kept}
    assert tops == {f"script{i}" for i in range(4, 12)}  # the eight asked last


_SCRIPT = """import jax
import lib


def main(x):
    if jax.default_backend() == "gpu":
        return lib.tpu_kernel(x)
    return x
"""
