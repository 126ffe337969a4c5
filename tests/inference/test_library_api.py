"""The public API of ``typed_pallas_mypy.inference``: wrappers, calls through a
wrapper, ``modules_read``, ``module_map``, silence on failure, and the import promise
(neither mypy nor jax)."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
from library_fakes import HEADER, OPS, MakeLib, platforms_of, reader_for

from typed_pallas_mypy.inference import Inference, WrapperFacts, combine
from typed_pallas_mypy.inference.model import Evidence

#: A qwix-like wrapper: builds the call in a closure and splats its **kwargs into it.
QWIX_LIKE = (
    HEADER
    + """\
def pallas_call(kernel, out_shape, *, grid=(), in_specs=None, **kwargs):
    def wrapper(*args):
        return pl.pallas_call(
            lambda *refs: kernel(*refs),
            out_shape,
            grid=grid,
            **kwargs,
        )(*args)

    return wrapper

def direct(kernel, out_shape, compiler_params=None):
    return pl.pallas_call(kernel, out_shape=out_shape, compiler_params=compiler_params)

def fixed_params(kernel, out_shape):
    return pl.pallas_call(kernel, out_shape=out_shape, compiler_params=pltpu.CompilerParams())

def interprets(kernel, out_shape, compiler_params=None):
    return pl.pallas_call(
        kernel, out_shape=out_shape, compiler_params=compiler_params, interpret=True
    )
"""
)

USER = (
    HEADER
    + """\
from qpkg import core as qpl

def kernel(x_ref, o_ref):
    o_ref[...] = x_ref[...]

def through_wrapper(x):
    call = qpl.pallas_call(kernel, x, compiler_params=pltpu.CompilerParams())
    return call(x)

def through_wrapper_interpreted(x):
    call = qpl.pallas_call(kernel, x, compiler_params=pltpu.CompilerParams(), interpret=True)
    return call(x)

def through_wrapper_without_params(x):
    return qpl.pallas_call(kernel, x)(x)
"""
)


def test_wrappers(make_lib: MakeLib) -> None:
    root = make_lib({"qpkg/core.py": QWIX_LIKE, "qpkg/__init__.py": "from qpkg.core import *\n"})
    facts = reader_for(root)
    assert facts.wrapper("qpkg.core.pallas_call") == WrapperFacts(
        entry="jax.experimental.pallas.pallas_call",
        forwards=(("grid", "grid", -1), ("kernel", "kernel", 0), ("out_shape", "out_shape", 1)),
        kwargs="kwargs",
        where="qpkg/core.py:7",
        line=9,
    )
    assert facts.wrapper("qpkg.core.direct") == WrapperFacts(
        entry="jax.experimental.pallas.pallas_call",
        forwards=(
            ("compiler_params", "compiler_params", 2),
            ("kernel", "kernel", 0),
            ("out_shape", "out_shape", 1),
        ),
        kwargs=None,
        where="qpkg/core.py:18",
        line=19,
    )
    assert facts.wrapper("qpkg.core.fixed_params") is None
    assert facts.wrapper("qpkg.core.interprets") is None
    assert facts.wrapper("qpkg.core.missing") is None


def test_call_through_a_wrapper_has_the_call_requirement(make_lib: MakeLib) -> None:
    root = make_lib({"qpkg/core.py": QWIX_LIKE, "user/model.py": USER})
    facts = reader_for(root)
    found = facts.requirement("user.model.through_wrapper")
    assert found is not None
    # ``qpl.pallas_call(...)`` (line 13) only returns the closure ``wrapper``; Python
    # runs the kernel when ``call(x)`` (line 14) calls it: ``wrapper`` (core.py:8) runs
    # ``pl.pallas_call`` (core.py:9) with the Mosaic TPU params its ``**kwargs`` hold
    assert found.chain == (
        "through_wrapper (user/model.py:12) lowers only for tpu: it calls wrapper at "
        "user/model.py:14",
        "wrapper (qpkg/core.py:8) lowers only for tpu: its pl.pallas_call at qpkg/core.py:9 "
        "takes Mosaic TPU params",
    )
    assert facts.requirement("user.model.through_wrapper_interpreted") is None
    assert facts.requirement("user.model.through_wrapper_without_params") is None


def test_modules_read_and_module_map(make_lib: MakeLib) -> None:
    root = make_lib(
        {
            "pkg/ops.py": OPS + "_private = tpu_op\npublic_alias = tpu_op\n",
            "pkg/more.py": "from pkg.ops import tpu_op\n# pallas\ndef again(x):\n"
            "    return tpu_op(x)\n",
            "pkg/notes.py": "def unrelated():\n    return 1\n",
        }
    )
    facts = reader_for(root)
    assert facts.modules_read() == {}
    assert platforms_of(facts.requirement("pkg.ops.tpu_op")) == {"tpu"}
    # importing ``pkg.ops`` runs ``pkg/__init__.py`` first (Python's import system): the
    # answer depends on both files
    assert facts.modules_read() == {
        "pkg": str(root / "pkg" / "__init__.py"),
        "pkg.ops": str(root / "pkg" / "ops.py"),
    }
    mapped = {name: platforms_of(found) for name, found in facts.module_map("pkg")}
    assert mapped == {
        "pkg.more.again": {"tpu"},
        "pkg.ops.kernel": None,
        "pkg.ops.plain": None,
        "pkg.ops.public_alias": {"tpu"},
        "pkg.ops.tpu_op": {"tpu"},
        "pkg.ops.tpu_op_i": {"tpu"},
        "pkg.ops.triton_op": {"cuda", "rocm"},
    }
    assert facts.module_map("pkg.ops") == [
        (name, found) for name, found in facts.module_map("pkg") if name.startswith("pkg.ops.")
    ]
    assert facts.module_map("nothing.here") == []


def test_forget_drops_only_the_answers_read_from_the_changed_modules(make_lib: MakeLib) -> None:
    """What the plugin calls when modules changed under the daemon: an answer that read
    a changed module is computed again; a module not named keeps what was read of it
    (its file changed too, unannounced: the answer stays the old one until everything
    is forgotten)."""
    root = make_lib(
        {
            "pkg/ops.py": OPS,
            "pkg/more.py": "from pkg.ops import tpu_op\n# pallas\ndef again(x):\n"
            "    return tpu_op(x)\n",
            "pkg/other.py": OPS.replace("tpu_op(", "own_op("),
        }
    )
    facts = reader_for(root)
    assert platforms_of(facts.requirement("pkg.more.again")) == {"tpu"}
    assert platforms_of(facts.requirement("pkg.other.own_op")) == {"tpu"}
    for module in ("ops", "other"):
        path = root / "pkg" / f"{module}.py"
        path.write_text(
            path.read_text().replace("pltpu.CompilerParams()", "pltriton.CompilerParams()")
        )
    facts.forget(frozenset({"pkg.ops"}))
    assert platforms_of(facts.requirement("pkg.more.again")) == {"cuda", "rocm"}
    assert platforms_of(facts.requirement("pkg.other.own_op")) == {"tpu"}
    facts.forget()
    assert platforms_of(facts.requirement("pkg.other.own_op")) == {"cuda", "rocm"}


@pytest.mark.usefixtures("rules_answer")
def test_failures_are_silent_unless_debugging(
    make_lib: MakeLib, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A bug in the rules' reader raises under the debug switch and is silence without
    it; this breaks the rules' reader, so it goes with the rules (``rules_answer``)."""
    root = make_lib({"pkg/ops.py": OPS})

    def broken(source: bytes, module: str, *, is_package: bool, lazy: bool = False) -> object:
        raise RuntimeError("reader bug")

    monkeypatch.setattr(combine.reader, "read_module_keeping_sites", broken)
    monkeypatch.setenv("TYPED_PALLAS_MYPY_DEBUG", "1")
    with pytest.raises(RuntimeError, match="reader bug"):
        reader_for(root).requirement("pkg.ops.tpu_op")
    monkeypatch.delenv("TYPED_PALLAS_MYPY_DEBUG")
    facts = reader_for(root)
    assert facts.requirement("pkg.ops.tpu_op") is None
    assert facts.wrapper("pkg.ops.tpu_op") is None
    assert facts.module_map("pkg") == []


def test_a_failing_summary_is_silent_unless_debugging(
    make_lib: MakeLib, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The same of the evaluator's summaries, which answer by default: a bug in a
    question raises under the debug switch, and is silence (no requirement) without it."""
    from typed_pallas_mypy.inference.evaluator import summaries

    root = make_lib({"pkg/ops.py": OPS})
    assert platforms_of(reader_for(root).requirement("pkg.ops.tpu_op")) == {"tpu"}

    def broken(self: summaries.ModuleRuns, *args: object, **kwargs: object) -> None:
        raise RuntimeError("evaluator bug")

    monkeypatch.setattr(summaries.ModuleRuns, "summary", broken)
    with pytest.raises(RuntimeError, match="evaluator bug"):
        reader_for(root).requirement("pkg.ops.tpu_op")
    monkeypatch.delenv("TYPED_PALLAS_MYPY_DEBUG")
    facts = reader_for(root)
    assert facts.requirement("pkg.ops.tpu_op") is None
    assert facts.result_requirement("pkg.ops.tpu_op") is None
    mapped = facts.module_map("pkg")
    assert mapped and all(found is None for _, found in mapped)


def test_search_paths_in_order(make_lib: MakeLib) -> None:
    first = make_lib({"pkg/ops.py": OPS})
    second = make_lib({"pkg/ops.py": OPS.replace("pltpu.CompilerParams", "plgpu.CompilerParams")})
    facts = Inference([str(first), str(second)], None)
    assert platforms_of(facts.requirement("pkg.ops.tpu_op")) == {"tpu"}
    facts = Inference([str(second), str(first)], None)
    # Mosaic GPU params never lower for tpu; whether rocm refuses them depends on the JAX
    # release (``_platforms.MOSAIC_GPU_ROCM_REFUSED_FROM``), not given here: not excluded
    assert platforms_of(facts.requirement("pkg.ops.tpu_op")) == {"cuda", "rocm"}


@pytest.mark.slow
def test_importing_it_imports_neither_mypy_nor_jax() -> None:
    probe = (
        "import json, sys\n"
        "import typed_pallas_mypy.inference\n"
        "print(json.dumps(sorted(m for m in sys.modules "
        "if m.split('.')[0] in ('mypy', 'jax', 'jaxlib'))))\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, check=True
    )
    assert json.loads(done.stdout.strip().splitlines()[-1]) == []
    # the probe can fail: the same check after importing the plugin's mypy side
    done = subprocess.run(
        [sys.executable, "-c", probe.replace("inference\n", "main\n")],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    assert "mypy" in json.loads(done.stdout.strip().splitlines()[-1])


WRAPPER_SHAPES = (
    HEADER
    + """\
def block_pallas_call(kernel, out_shape, *, compiler_params=None, **kwargs):
    def helper(*args):
        def wrapped_kernel(*refs):
            with jax.named_scope("block"):
                return kernel(*refs)

        return pl.pallas_call(
            wrapped_kernel, out_shape, compiler_params=compiler_params, **kwargs
        )(*args)

    return helper


def core_map_kernel(body, *, out_type, mesh, compiler_params=None, interpret=False):
    @jax.jit
    def run(*operands):
        @pl.core_map(mesh, compiler_params=compiler_params, interpret=interpret)
        def _():
            return body(*operands)

        return operands

    return run


def inner_kernel(body, out_type, **kwargs):
    return plgpu.kernel(body, out_type=out_type, **kwargs)


def outer_kernel(body, out_type=(), *, cluster=(), **kwargs):
    return inner_kernel(body, out_type, **kwargs)


def not_forwarding(body, out_type):
    return inner_kernel(body, out_type, compiler_params=plgpu.CompilerParams())
"""
)


def test_wrapper_shapes_of_real_libraries(make_lib: MakeLib) -> None:
    """A kernel passed through a nested function calling it (tokamax's
    ``block.pallas_call``), a ``pl.core_map`` decorator over one (tpu-inference's
    ``core_map_helper.kernel``: a wrapper of ``pl.kernel``), and a function forwarding its
    parameters to another wrapper (tokamax's persistent kernels)."""
    facts = reader_for(make_lib({"wpkg/shapes.py": WRAPPER_SHAPES}))
    block = facts.wrapper("wpkg.shapes.block_pallas_call")
    assert block is not None
    assert block.entry == "jax.experimental.pallas.pallas_call"
    assert block.forwards == (
        ("compiler_params", "compiler_params", -1),
        ("kernel", "kernel", 0),
        ("out_shape", "out_shape", 1),
    )
    assert block.kwargs == "kwargs"
    core = facts.wrapper("wpkg.shapes.core_map_kernel")
    assert core is not None
    assert core.entry == "jax.experimental.pallas.kernel"
    assert ("body", "body", 0) in core.forwards
    assert ("compiler_params", "compiler_params", -1) in core.forwards
    assert ("mesh", "mesh", -1) in core.forwards
    outer = facts.wrapper("wpkg.shapes.outer_kernel")
    assert outer is not None
    assert outer.entry == "jax.experimental.pallas.mosaic_gpu.kernel"
    assert outer.forwards == (("body", "body", 0), ("out_type", "out_type", 1))
    assert outer.kwargs == "kwargs"
    assert facts.wrapper("wpkg.shapes.not_forwarding") is None


BODIES = (
    HEADER
    + """\
def helper(o_ref):
    pltpu.make_async_copy(o_ref, o_ref, None)

def tpu_body(x_ref, o_ref):
    helper(o_ref)

def plain_body(x_ref, o_ref):
    o_ref[...] = x_ref[...]

def guarded_body(x_ref, o_ref):
    if jax.default_backend() == "tpu":
        helper(o_ref)

def helper_guarded_body(x_ref, o_ref):
    if on_tpu():
        helper(o_ref)

def parameter_guarded_body(x_ref, o_ref, backend="mosaic_gpu"):
    if backend == "mosaic_tpu":
        helper(o_ref)

def plain_condition_body(x_ref, o_ref, causal=True):
    if causal and len(x_ref.shape) == 2:
        helper(o_ref)

lambda_body = lambda x_ref, o_ref: pltpu.make_async_copy(o_ref, o_ref, None)

def run(x):
    pl.pallas_call(tpu_body, out_shape=x)(x)
    pl.pallas_call(plain_body, out_shape=x)(x)
    pl.pallas_call(guarded_body, out_shape=x)(x)
    pl.pallas_call(helper_guarded_body, out_shape=x)(x)
    pl.pallas_call(parameter_guarded_body, out_shape=x)(x)
    pl.pallas_call(plain_condition_body, out_shape=x)(x)
    pl.pallas_call(lambda_body, out_shape=x)(x)
    kernel = functools.partial(tpu_body)
    pl.pallas_call(kernel, out_shape=x)(x)
    pl.pallas_call(on_tpu, out_shape=x)(x)

    @functools.partial(pl.pallas_call, out_shape=x)
    def decorated(x_ref, o_ref):
        helper(o_ref)

    return decorated(x)

def applied(mesh):
    pl.core_map(mesh)(tpu_body)
"""
)


def test_kernel_evidence_at_an_entry_call(make_lib: MakeLib) -> None:
    """The kernel body of the entry call at a position: the kernel argument (a function,
    a lambda, a variable bound to a ``partial`` of one), the function the call decorates
    or the first argument of the call applying it; its evidence is the primitives of the
    function and of the functions of its module it calls, none for a plain body or
    under a condition that reads or may ask for the platform; a kernel of another module
    is named, for its module's facts."""
    import ast

    root = make_lib(
        {
            "kpkg/bodies.py": BODIES.replace(
                "import functools", "import functools\nfrom kpkg.util import on_tpu"
            ),
            "kpkg/util.py": "import jax\ndef on_tpu():\n    return jax.default_backend() == 'tpu'\n",
        }
    )
    facts = reader_for(root)
    source = BODIES.replace("import functools", "import functools\nfrom kpkg.util import on_tpu")
    lines = source.splitlines()

    def line_of(text: str) -> int:
        return next(i for i, line in enumerate(lines, 1) if line.startswith(text))

    spans = [
        (node.lineno, node.col_offset, node.end_lineno or 0, node.end_col_offset or 0)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr in ("pallas_call", "core_map")
        and isinstance(node.args[0] if node.args else None, ast.Name)
    ]
    spans.sort()
    kernel = ("kernel", 0, None)

    def at(i: int) -> tuple[tuple[tuple[tuple[str, ...], str, int], ...], str | None]:
        return facts.kernel_evidence(
            "kpkg.bodies", spans[i], kernel, decorated=False, applied=False
        )

    signal = Evidence(("mosaic_tpu",), "pltpu.make_async_copy", line_of("def helper") + 1)
    assert at(0) == ((signal,), None)  # tpu_body
    assert at(1) == ((), None)  # plain_body
    assert at(2) == ((), None)  # guarded_body
    # a condition that may ask for the platform: a guard helper, a backend string
    assert at(3) == ((), None)
    assert at(4) == ((), None)
    # a condition on anything else keeps the evidence
    assert at(5) == ((signal,), None)
    lambda_line = line_of("lambda_body")
    assert at(6) == ((Evidence(("mosaic_tpu",), "pltpu.make_async_copy", lambda_line),), None)
    assert at(7) == ((signal,), None)  # through the variable bound to a partial
    assert at(8) == ((), "kpkg.util.on_tpu")  # another module's function: named
    # not as described: another keyword, an index past the arguments, another position
    assert facts.kernel_evidence(
        "kpkg.bodies", spans[0], ("kernel", 0, "kernel"), decorated=False, applied=False
    ) == ((), None)
    assert facts.kernel_evidence(
        "kpkg.bodies", spans[0], ("kernel", 5, None), decorated=False, applied=False
    ) == ((), None)
    shifted = (spans[0][0], spans[0][1] + 1, spans[0][2], spans[0][3])
    assert facts.kernel_evidence(
        "kpkg.bodies", shifted, kernel, decorated=False, applied=False
    ) == ((), None)
    # decorated: the function under ``@functools.partial(pl.pallas_call, ...)``
    partial = next(
        (node.lineno, node.col_offset, node.end_lineno or 0, node.end_col_offset or 0)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.FunctionDef) and node.name == "decorated"
        for node in node.decorator_list
    )
    inner = Evidence(("mosaic_tpu",), "pltpu.make_async_copy", line_of("def helper") + 1)
    assert facts.kernel_evidence("kpkg.bodies", partial, None, decorated=True, applied=False) == (
        (inner,),
        None,
    )
    assert facts.kernel_evidence("kpkg.bodies", partial, None, decorated=False, applied=False) == (
        (),
        None,
    )
    # applied: ``pl.core_map(mesh)(tpu_body)``
    core_map = next(
        (node.lineno, node.col_offset, node.end_lineno or 0, node.end_col_offset or 0)
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.Call)
        and isinstance(node.func, ast.Attribute)
        and node.func.attr == "core_map"
    )
    assert facts.kernel_evidence("kpkg.bodies", core_map, None, decorated=False, applied=True) == (
        (signal,),
        None,
    )
    assert facts.kernel_evidence("kpkg.bodies", core_map, None, decorated=False, applied=False) == (
        (),
        None,
    )


ARGUMENTS = (
    HEADER
    + """\
def body(x_ref, o_ref, acc):
    o_ref[...] = x_ref[...]

def outer(x):
    scratch = [pltpu.VMEM((8,), None)]
    count = 1

    def run(y):
        spec = pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=count, grid=(1,))
        return pl.pallas_call(body, out_shape=y, scratch_shapes=scratch, grid_spec=spec)(y)

    return run(x)

def meshed(x):
    mesh = pltpu.create_tensorcore_mesh("core")
    return pl.kernel(body, x, mesh=mesh)(x)

def meshed_from_012(x):
    tc_mesh = pltpu.TensorCoreMesh(axis_name="core", num_cores=1)
    return pl.kernel(body, x, mesh=tc_mesh)(x)

def meshed_unknown(x, some_mesh):
    return pl.kernel(body, x, mesh=some_mesh)(x)
"""
)


def test_argument_evidence_at_a_call(make_lib: MakeLib) -> None:
    """The evidence of an entry call's arguments, the call found by its position and
    each argument by its index and keyword as mypy counts them: variables followed into
    the functions around the call (the scratch list, the scalar prefetch count); an
    argument or a call not found as described gives nothing."""
    import ast

    root = make_lib({"kpkg/args.py": ARGUMENTS})
    facts = reader_for(root)
    lines = ARGUMENTS.splitlines()

    def line_of(text: str) -> int:
        return next(i for i, line in enumerate(lines, 1) if line.strip().startswith(text))

    calls = {
        call.func.attr: (
            call.lineno,
            call.col_offset,
            call.end_lineno or 0,
            call.end_col_offset or 0,
        )
        for call in ast.walk(ast.parse(ARGUMENTS))
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr in ("pallas_call", "kernel")
    }
    kernels = [
        (call.lineno, call.col_offset, call.end_lineno or 0, call.end_col_offset or 0)
        for call in ast.walk(ast.parse(ARGUMENTS))
        if isinstance(call, ast.Call)
        and isinstance(call.func, ast.Attribute)
        and call.func.attr == "kernel"
    ]
    where = calls["pallas_call"]
    both = (("scratch", 2, "scratch_shapes"), ("grid_spec", 3, "grid_spec"))
    assert facts.argument_evidence("kpkg.args", where, both) == (
        (
            "scratch",
            Evidence(
                ("mosaic_tpu",),
                "pltpu.PrefetchScalarGridSpec(num_scalar_prefetch=1)",
                line_of("spec ="),
            ),
        ),
        ("scratch", Evidence(("mosaic_tpu",), "pltpu.VMEM", line_of("scratch ="))),
    )
    # not as described: another keyword, an index past the arguments, another position
    assert facts.argument_evidence("kpkg.args", where, (("scratch", 2, "scratch_types"),)) == ()
    assert facts.argument_evidence("kpkg.args", where, (("scratch", 9, "scratch_shapes"),)) == ()
    shifted = (where[0], where[1] + 1, where[2], where[3])
    assert facts.argument_evidence("kpkg.args", shifted, both) == ()
    mesh = (("mesh", 2, "mesh"),)
    # a TPU mesh in either spelling: the factory (jax 0.10 to 0.12.0; 0.12.1 removed it)
    # and the class (jax >= 0.12); a mesh of unknown origin proves nothing
    first, from_012, unknown = sorted(kernels)
    assert facts.argument_evidence("kpkg.args", from_012, mesh) == (
        (
            "mesh",
            Evidence(("mosaic_tpu",), "the mesh pltpu.TensorCoreMesh(...)", line_of("tc_mesh =")),
        ),
    )
    assert facts.argument_evidence("kpkg.args", unknown, mesh) == ()
    assert facts.argument_evidence("kpkg.args", first, mesh) == (
        (
            "mesh",
            Evidence(
                ("mosaic_tpu",), "the mesh pltpu.create_tensorcore_mesh(...)", line_of("mesh =")
            ),
        ),
    )


def test_a_library_with_an_invalid_escape_is_read_without_a_warning(make_lib: MakeLib) -> None:
    """``"a\\+b"`` makes the compiler warn (Python >= 3.12: ``SyntaxWarning``): the read
    must print nothing in the user's mypy run, and still work where warnings are errors."""
    import warnings

    root = make_lib({"pkg/ops.py": OPS + 'PATTERN = "a\\+b"\n'})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        facts = reader_for(root)
        assert platforms_of(facts.requirement("pkg.ops.tpu_op")) == {"tpu"}


def test_sites_find_every_expression_by_its_span() -> None:
    """``Sites`` finds an expression by its span when asked (no index of the module): every
    expression of a module full of odd places (decorators above their definition, a
    call applying a call, f-strings, lambdas in defaults, comprehensions, ``match``,
    ``with`` items, a class body) is found, the outermost one where several share a span,
    with its parent; a span that is no expression is not."""
    import ast

    from typed_pallas_mypy.inference import reader

    source = b"""import functools
import jax
from jax.experimental import pallas as pl

@functools.partial(pl.pallas_call, out_shape=None)
@jax.jit
def kernel(x_ref, o_ref, *, scale=lambda v: v * 2, **kw):
    o_ref[...] = x_ref[...] * scale(3)

@dataclass(frozen=True)
class Config:
    size: int = field(default=f"{1 + 2!r:>{4}}")
    def method(self, items=[i for i in range(3) if i]):
        with open("a") as f, jax.named_scope(f"n{self.size}"):
            return pl.core_map(mesh)(lambda: kernel(*items, **{"k": 1}))

match jax.default_backend():
    case "tpu" if (flag := jax.devices()[0].platform):
        out = {k: v for k, v in zip("ab", (1, 2))}
    case _:
        out = (yield_ for yield_ in [])
"""
    read = reader._parsed(source, "pkg.mod", False)
    assert read is not None
    read.prepare()
    sites = reader.Sites(read)
    first: dict[tuple[int, int, int, int], ast.expr] = {}
    parents: dict[int, ast.AST] = {}
    for node in ast.walk(read.tree):  # breadth first: the outermost of a span comes first
        for child in ast.iter_child_nodes(node):
            parents[id(child)] = node
        if isinstance(node, ast.expr):
            first.setdefault(reader.span_of(node), node)
    assert len(first) > 80
    for where, node in first.items():
        found = sites._find(where, False)
        assert found is not None and found[0] is node, where
        assert found[1] is parents[id(node)], where
        if isinstance(node, ast.Call):
            call = sites._find(where, True)
            assert call is not None and call[0] is node
    applied = next(
        n for n in first.values() if isinstance(n, ast.Call) and isinstance(n.func, ast.Call)
    )
    inner = sites._find(reader.span_of(applied.func), True)
    assert inner is not None and inner[1] is applied
    assert sites._find((5, 0, 5, 3), False) is None  # "@fu": no expression
    assert sites._find((999, 0, 999, 1), True) is None


def test_sites_find_an_expression_a_thousand_levels_deep() -> None:
    """The first term of a sum of 1,400 names is 1,400 nodes down: found (the search is a
    loop, not a recursion that would raise past Python's limit); a span that is not one
    of them is not."""
    import ast

    from typed_pallas_mypy.inference import reader

    terms = " + ".join(["x"] * 1400)
    read = reader._parsed(f"def f(x):\n    if {terms}:\n        return 1\n".encode(), "m", False)
    assert read is not None
    read.prepare()
    sites = reader.Sites(read)
    test = read.tree.body[0].body[0].test  # type: ignore[attr-defined]
    first = test
    while isinstance(first, ast.BinOp):
        first = first.left
    found = sites._find(reader.span_of(first), False)
    assert found is not None and found[0] is first
    assert sites._find((2, 7, 2, 9), False) is None


def test_child_nodes_keep_every_field_that_holds_a_node() -> None:
    """A field is dropped from a node class's children once seen holding a name or a
    number; a field seen empty, ``None`` or holding ``None`` entries is kept: ``{**a}``
    then ``{**a, "k": v}`` still lists the key, ``return`` then ``return x`` the value,
    ``global g`` lists nothing."""
    import ast

    from typed_pallas_mypy.inference.scopes import child_nodes

    tree = ast.parse('def f(a, v):\n    global g\n    {**a}\n    {**a, "k": v}\n    return\n')
    body = tree.body[0].body  # type: ignore[attr-defined]
    bare_return = body[3]
    assert child_nodes(body[0]) == ()
    assert [type(n).__name__ for n in child_nodes(body[1].value)] == ["Name"]
    assert [type(n).__name__ for n in child_nodes(body[2].value)] == ["Constant", "Name", "Name"]
    assert child_nodes(bare_return) == ()
    valued = ast.parse("def h(x):\n    return x\n").body[0].body[0]  # type: ignore[attr-defined]
    assert [type(n).__name__ for n in child_nodes(valued)] == ["Name"]
    call = ast.parse("f(x, k=1)").body[0].value  # type: ignore[attr-defined]
    assert [type(n).__name__ for n in child_nodes(call)] == ["Name", "Name", "keyword"]
    assert [type(n).__name__ for n in child_nodes(call.keywords[0])] == ["Constant"]


def test_a_reading_leaves_its_objects_to_the_oldest_generation() -> None:
    """A module is read with the collector off; what the reading made is then counted
    as old, so the youngest generation's count starts again near zero, and the
    collector is on again (also after an error). With the collector off (mypy's graph
    loading), it stays off and nothing is moved: the count keeps the allocations."""
    import gc

    from typed_pallas_mypy.inference import reader

    source = "".join(f"def f{i}(x):\n    return [x, {{'k': x}}, (x, x)]\n" for i in range(2000))
    assert gc.isenabled()
    threshold = gc.get_threshold()
    gc.set_threshold(200_000, 30, 30)  # mypy's: no pass starts during the reading
    try:
        facts, _ = reader.read_module_keeping_sites(source.encode(), "m", is_package=False)
        assert facts is not None and len(facts.functions) == 2000
        assert gc.isenabled()
        assert gc.get_count()[0] < 50
        with pytest.raises(ValueError), reader.collector_paused():
            raise ValueError
        assert gc.isenabled()
        gc.disable()
        gc.collect(0)
        facts, _ = reader.read_module_keeping_sites(source.encode(), "m", is_package=False)
        assert not gc.isenabled()
        assert gc.get_count()[0] > 1_000
    finally:
        gc.enable()
        gc.set_threshold(*threshold)


def test_the_standard_librarys_folder_among_the_search_paths_is_not_read(
    make_lib: MakeLib,
) -> None:
    """The CLI searches ``sys.path``, which holds the standard library's folder: its
    modules are still the evaluator's tables and models, never run from their source."""
    import sysconfig

    root = make_lib(
        {"pkg/ops.py": OPS, "pkg/use.py": HEADER + "import dataclasses\nfrom pkg.ops import tpu_op\n"
         "@dataclasses.dataclass\nclass Op:\n    block: int = 8\n"
         "    def __call__(self, x):\n        return tpu_op(x)\n"
         "def run(x):\n    return functools.partial(Op(), x)()\n"}
    )  # fmt: skip
    facts = Inference([sysconfig.get_paths()["stdlib"], str(root)], None)
    assert platforms_of(facts.summary("pkg.use.run")) == {"tpu"}
    assert not [m for m in facts.modules_read() if m.split(".")[0] in ("functools", "dataclasses")]
    assert facts.summary("pkg.ops.plain") is None
