"""The plugin gives the same answers cold, warm (incremental cache) and under ``dmypy``.

One small project (a module whose kernel helper proves TPU, called with Triton
params, in a module configured for ``tpu``), then three edits: the helper loses its
TPU primitive (same module: the call must be re-judged), the configuration changes
(``report_config_data`` / the daemon's plugin snapshot must notice), and it comes back.
After each step the warm run and the daemon must print exactly what a cold run
prints. The first run of the first test is truly cold (empty cache); the first run of
every other test starts from a cache where only jax has been analysed, under the same
configuration (``mypy_seeds``, tests/conftest.py): its project modules are checked from
scratch. Later "cold" runs start from a copy of the warm cache with a config file whose
only difference is a per-module ``always_true`` marker on the project's modules: every
project module is then checked from scratch, while jax stays cached (a truly cold run
re-reads all of jax, 20-30 s). The daemon keeps no cache (mypy's daemon runs without one
unless told to use its fine-grained cache): its first run in each test analyses
everything, jax included, so every test still compares with a run made from nothing.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from mypy_seeds import MypySeeds

pytestmark = pytest.mark.slow

BIN = Path(sys.executable).parent
#: the tests' stand-ins for installed packages (tests/fixtures/README.md)
FIXTURES_SITE = Path(__file__).resolve().parent / "fixtures" / "site-packages"

OPS = """\
from typing import Any
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def _helper(x_ref: Any, o_ref: Any) -> None:
    pltpu.sync_copy(x_ref, o_ref)


def body(x_ref: Any, o_ref: Any) -> None:
    _helper(x_ref, o_ref)


def f(x: jax.Array) -> object:
    return pl.pallas_call(body, out_shape=x, compiler_params=pltriton.CompilerParams())(x)
"""

OTHER = """\
import jax
from ops import f


def g(x: jax.Array) -> object:
    return f(x)
"""

INI = """\
[mypy]
plugins = typed_pallas_mypy

[mypy.plugins.typed-pallas]
platforms = {platforms}
"""

ERROR = "ops.py:17: error: Compiler params for platform gpu cannot be used for tpu lowering.  [pallas-platform]"
BODY_NOTE = "ops.py:17: note: pltpu.sync_copy at line 9 makes this kernel TPU-only"
CONFIG_NOTE = (
    "ops.py:17: note: module ops is configured for platforms tpu ([tool.typed-pallas] platforms)"
)


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("MYPY", "TYPED_PALLAS"))}
    env["TYPED_PALLAS_MYPY_DEBUG"] = "1"
    if os.environ.get("TYPED_PALLAS_SUMMARIES"):  # which engine answers: kept
        env["TYPED_PALLAS_SUMMARIES"] = os.environ["TYPED_PALLAS_SUMMARIES"]
    return env


LINES_OF = ("ops.py", "other.py", "kernels.py", "dispatch.py", "Success", "Found")


def _lines(completed: subprocess.CompletedProcess[str], lines_of: tuple[str, ...]) -> list[str]:
    return [line for line in completed.stdout.splitlines() if line.startswith(lines_of)]


def _write(path: Path, text: str) -> None:
    """Write ``text`` if it differs, with an mtime in another whole second than the old
    file's: mypy takes a file of the same size and the same mtime second as unchanged
    without hashing it (a "tpu" -> "gpu" edit keeps the size)."""
    if path.exists() and path.read_text() == text:
        return
    old = path.stat().st_mtime_ns if path.exists() else 0
    path.write_text(text)
    stat = path.stat()
    mtime = max(stat.st_mtime_ns, old + 1_000_000_000) + 10_000_000
    os.utime(path, ns=(stat.st_atime_ns, mtime))


class Project:
    def __init__(self, root: Path, seeds: MypySeeds | None = None) -> None:
        self.root = root
        #: where the first run's cache comes from (jax analysed); None: an empty cache
        self.seeds = seeds
        self.src = root / "proj"
        self.src.mkdir()
        self.status = root / "dmypy.json"
        self.cold_count = 0
        #: what the runs' environment adds (PYTHONPATH of an installed library)
        self.extra_env: dict[str, str] = {}
        #: the output lines compared (by their start)
        self.lines_of = LINES_OF

    def write(self, helper_has_dma: bool, platforms: str) -> None:
        ops = (
            OPS
            if helper_has_dma
            else OPS.replace("    pltpu.sync_copy(x_ref, o_ref)", "    o_ref[...] = x_ref[...]")
        )
        for name, text in (
            ("ops.py", ops),
            ("other.py", OTHER),
            ("mypy.ini", INI.format(platforms=platforms)),
        ):
            _write(self.src / name, text)

    files = ("ops.py", "other.py")

    def write_files(self, files: dict[str, str]) -> None:
        for name, text in files.items():
            _write(self.src / name, text)

    def mypy(self, cache: str, *extra: str) -> list[str]:
        if self.seeds is not None and not extra and not (self.root / cache).exists():
            self.seeds.into(self.root / cache, (self.src / "mypy.ini").read_text())
        completed = subprocess.run(
            [str(BIN / "mypy"), "--cache-dir", str(self.root / cache), *extra, *self.files],
            cwd=self.src,
            env={**_env(), **self.extra_env},
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert "Traceback" not in completed.stderr + completed.stdout, completed.stderr
        return _lines(completed, self.lines_of)

    def cold(self) -> list[str]:
        """Project modules checked from scratch (see the module docstring)."""
        self.cold_count += 1
        cache = f"cold{self.cold_count}"
        shutil.rmtree(self.root / cache, ignore_errors=True)
        if (self.root / "warm").exists():
            shutil.copytree(self.root / "warm", self.root / cache)
        modules = ",".join(name.removesuffix(".py") for name in self.files)
        marker = f"\n[mypy-{modules}]\nalways_true = COLD_RUN_{self.cold_count}\n"
        cold_ini = self.src / "cold.ini"
        cold_ini.write_text((self.src / "mypy.ini").read_text() + marker)
        return self.mypy(cache, "--config-file", str(cold_ini))

    def dmypy(self, *args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [str(BIN / "dmypy"), "--status-file", str(self.status), *args],
            cwd=self.src,
            env={**_env(), **self.extra_env},
            capture_output=True,
            text=True,
            timeout=300,
        )

    def daemon(self) -> list[str]:
        completed = self.dmypy(
            "run", "--timeout", "300", "--", "--cache-dir", str(self.root / "daemon"), *self.files
        )
        assert "Traceback" not in completed.stderr + completed.stdout, completed.stderr
        return _lines(completed, self.lines_of)


@pytest.fixture
def project(tmp_path: Path, mypy_seeds: MypySeeds) -> Iterator[Project]:
    proj = Project(tmp_path, mypy_seeds)
    yield proj
    proj.dmypy("kill")


def test_cold_warm_and_daemon_agree(project: Project) -> None:
    project.seeds = None  # this test's first run is truly cold: jax too
    # 1. helper proves TPU: the body evidence error.
    project.write(helper_has_dma=True, platforms="tpu")
    cold = project.mypy("warm")  # empty cache: a true cold run, which fills it
    assert cold[:2] == [ERROR, BODY_NOTE], cold
    assert project.mypy("warm") == cold  # served from the cache
    assert project.cold() == cold  # the marker trick agrees with a true cold run
    assert project.daemon() == cold

    # 2. the same-module helper loses its TPU primitive: now the configuration speaks.
    project.write(helper_has_dma=False, platforms="tpu")
    cold = project.cold()
    assert cold[:2] == [ERROR, CONFIG_NOTE], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold

    # 3. the configuration allows gpu: nothing to report (only config data changed).
    project.write(helper_has_dma=False, platforms="gpu")
    warm = project.mypy("warm")
    assert warm == ["Success: no issues found in 2 source files"], warm
    assert project.daemon() == warm

    # 4. back to step 1 without a cold run: warm and daemon must not keep step 3's answer.
    project.write(helper_has_dma=True, platforms="tpu")
    warm = project.mypy("warm")
    assert warm[:2] == [ERROR, BODY_NOTE], warm
    assert project.daemon() == warm


KERNELS = """\
from typing import Any
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def _body(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + 1


def add_one(x: jax.Array) -> jax.Array:
    return pl.pallas_call(_body, out_shape=x, compiler_params=PARAMS)(x)
"""

DISPATCH = """\
import jax
import kernels


def run(x: jax.Array) -> jax.Array:
    if jax.default_backend() == "gpu":
        return kernels.add_one(x)
    return x
"""

CROSS_ERROR = (
    "dispatch.py:7: error: Compiler params for platform tpu cannot be used for gpu lowering."
    "  [pallas-platform]"
)


def _params_edit_round_trip(
    project: Project, kernels: str, caller: str, error: str, more: tuple[str, ...] = ()
) -> None:
    """kernels.py's params go TPU -> Triton -> TPU (``PARAMS`` in ``kernels``): the
    caller's finding (``error``) comes, goes and comes back, cold, warm and under the
    daemon alike (``more``: other modules of the project, written already)."""
    project.files = ("kernels.py", *more, "dispatch.py")
    ini = "[mypy]\nplugins = typed_pallas_mypy\n"

    def write(params: str) -> None:
        project.write_files(
            {
                "kernels.py": kernels.replace("PARAMS", params),
                "dispatch.py": caller,
                "mypy.ini": ini,
            }
        )

    write("pltpu.CompilerParams()")
    cold = project.mypy("warm")
    assert cold[:1] == [error], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold

    write("pltriton.CompilerParams()")
    cold = project.cold()
    assert cold == [f"Success: no issues found in {len(project.files)} source files"], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold

    write("pltpu.CompilerParams()")
    cold = project.cold()
    assert cold[:1] == [error], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold


def test_body_only_edit_in_another_module(project: Project) -> None:
    """A callee's body changes (TPU params become Triton params): no interface of
    mypy's changes, but the caller's finding must, warm and under the daemon."""
    _params_edit_round_trip(project, KERNELS, DISPATCH, CROSS_ERROR)


MIDDLE = """\
import jax
import kernels


def run(x: jax.Array) -> jax.Array:
    return kernels.add_one(x)
"""

THROUGH_MIDDLE = """\
import jax
import middle


def run(x: jax.Array) -> jax.Array:
    if jax.default_backend() == "gpu":
        return middle.run(x)
    return x
"""


@pytest.mark.parametrize("through", [False, True], ids=["direct", "through-a-module"])
def test_body_only_edit_with_the_summaries_answering(project: Project, through: bool) -> None:
    """Where the summaries answer, a module's stored facts hold no requirement: the
    callee's source (and every project module the caller's finding read, through
    ``middle`` too) is part of the caller's cache key instead."""
    project.extra_env = {"TYPED_PALLAS_SUMMARIES": "1"}
    if not through:
        _params_edit_round_trip(project, KERNELS, DISPATCH, CROSS_ERROR)
        return
    project.write_files({"middle.py": MIDDLE})
    _params_edit_round_trip(project, KERNELS, THROUGH_MIDDLE, CROSS_ERROR, ("middle.py",))


EVALUATED_DISPATCH = """\
import jax
import kernels


def _on(platform: str) -> bool:
    return jax.default_backend() == platform


def _apply(fn, x):
    return fn(x)


def run(x: jax.Array) -> jax.Array:
    if _on("gpu"):
        return _apply(kernels.add_one, x)
    return x
"""


def test_body_only_edit_read_by_the_evaluator(project: Project) -> None:
    """The same round trip where only the engine's evaluator sees the finding (a guard
    helper given the platform, the kernel passed to a parameter and called there): the
    module it read is a dependency, warm and under the daemon."""
    error = (
        "dispatch.py:15: error: Compiler params for platform tpu cannot be used for gpu"
        " lowering.  [pallas-platform]"
    )
    _params_edit_round_trip(project, KERNELS, EVALUATED_DISPATCH, error)


OPTIONAL_DISPATCH = """\
import jax

try:
    import jax.experimental.pallas  # noqa: F401
except ImportError:
    kernels = None
else:
    import kernels  # type: ignore[assignment]


def run(x: jax.Array) -> jax.Array:
    if jax.default_backend() == "gpu":
        return kernels.add_one(x)  # type: ignore[attr-defined]
    return x
"""


def test_optional_import_body_edit_in_another_module(project: Project) -> None:
    """The same round trip through an optional import (``kernels = None`` where it
    failed): the engine reads the name as the import, and the caller depends on it."""
    _params_edit_round_trip(
        project,
        KERNELS,
        OPTIONAL_DISPATCH,
        CROSS_ERROR.replace("dispatch.py:7:", "dispatch.py:13:"),
    )


FACTORY = """\
from typing import Any, Callable
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def _body(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + 1


def make() -> Callable[[jax.Array], jax.Array]:
    def run(x: jax.Array) -> jax.Array:
        return pl.pallas_call(_body, out_shape=x, compiler_params=PARAMS)(x)

    return run
"""

RUNS_RESULT = """\
import jax
import kernels


def run(x: jax.Array) -> jax.Array:
    if jax.default_backend() == "gpu":
        kernel = kernels.make()
        return jax.vmap(kernel)(x)
    return x
"""

RESULT_ERROR = (
    "dispatch.py:8: error: Compiler params for platform tpu cannot be used for gpu lowering."
    "  [pallas-platform]"
)


def test_factory_result_edit_in_another_module(project: Project) -> None:
    """What a factory of another module returns changes (its kernel's params): the
    caller that runs the result follows, warm and under the daemon (the result's
    requirement is part of the factory module's stored facts)."""
    _params_edit_round_trip(project, FACTORY, RUNS_RESULT, RESULT_ERROR)


MEMOIZED = """\
from typing import Any, Callable
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton

_BUILT: dict[Any, Callable[[jax.Array], jax.Array]] = {}


def _body(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + 1


def _build() -> Callable[[jax.Array], jax.Array]:
    def run(x: jax.Array) -> jax.Array:
        return pl.pallas_call(_body, out_shape=x, compiler_params=PARAMS)(x)

    return run


def add_one(x: jax.Array) -> jax.Array:
    fn = _BUILT.get(x.shape)
    if fn is None:
        fn = _build()
        _BUILT[x.shape] = fn
    return fn(x)
"""


def test_memoized_build_edit_in_another_module(project: Project) -> None:
    """A memoized build of another module (``fn = _BUILT.get(key)``, built and stored on
    a miss) changes its kernel's params: the caller follows, warm and under the daemon."""
    _params_edit_round_trip(project, MEMOIZED, DISPATCH, CROSS_ERROR)


PARAMS_FACTORY = """\
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def compiler_params() -> pltriton.CompilerParams:
    return PARAMS  # type: ignore[return-value,unused-ignore]
"""

USES_PARAMS_FACTORY = """\
import jax
from jax.experimental import pallas as pl
from kernels import compiler_params


def body(x_ref: object, o_ref: object) -> None: ...


def run(x: jax.Array) -> object:
    if jax.default_backend() == "gpu":
        return pl.pallas_call(body, out_shape=x, compiler_params=compiler_params())(x)
    return x
"""

PARAMS_FACTORY_ERROR = (
    "dispatch.py:11: error: Compiler params for platform tpu cannot be used for gpu lowering."
    "  [pallas-platform]"
)


def test_params_factory_body_edit_in_another_module(project: Project) -> None:
    """What a params factory in another module returns changes, its annotation does not
    (mypy sees no interface change): the caller's finding follows the construction,
    warm and under the daemon."""
    _params_edit_round_trip(project, PARAMS_FACTORY, USES_PARAMS_FACTORY, PARAMS_FACTORY_ERROR)


LIBRARY_OPS = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from jax.experimental.pallas import triton as pltriton


def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


def add_one(x):
    return pl.pallas_call(_body, out_shape=x, compiler_params=PARAMS)(x)
"""

LIBRARY_USER = """\
import jax
import typedlib
from untypedlib import add_one as untyped_add_one


def run(x: jax.Array) -> object:
    if jax.default_backend() == "gpu":
        typedlib.add_one(x)
        return untyped_add_one(x)
    return x
"""


def _library_errors(line: int) -> list[str]:
    return [
        f"user.py:{line}: error: Compiler params for platform tpu cannot be used for gpu lowering."
        "  [pallas-platform]"
    ]


def _errors(lines: list[str]) -> list[str]:
    return [line for line in lines if ": error: " in line]


def test_installed_library_upgrade(project: Project) -> None:
    """Two installed libraries (one with py.typed, one without) change their kernel's
    params between runs, as an upgrade would: the caller's findings follow, warm and
    under the daemon, although no interface the caller imports changes."""
    site = project.root / "site-packages"
    project.files = ("user.py",)
    project.extra_env = {"PYTHONPATH": str(site)}
    ini = "[mypy]\nplugins = typed_pallas_mypy\nignore_missing_imports = True\n"

    def install(params: str) -> None:
        for name, typed in (("typedlib", True), ("untypedlib", False)):
            package = site / name
            package.mkdir(parents=True, exist_ok=True)
            init = package / "__init__.py"
            init.write_text(LIBRARY_OPS.replace("PARAMS", params))
            stat = init.stat()
            os.utime(init, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000))
            if typed:
                (package / "py.typed").write_text("")
        project.write_files({"user.py": LIBRARY_USER, "mypy.ini": ini})

    project.lines_of = ("user.py", "Success", "Found")
    install("pltpu.CompilerParams()")
    cold = project.mypy("warm")
    assert _errors(cold) == [
        *_library_errors(8),
        *_library_errors(9),
    ], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold

    install("pltriton.CompilerParams()")  # the upgrade: Triton params now
    cold = project.cold()
    assert cold == ["Success: no issues found in 1 source file"], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold

    install("pltpu.CompilerParams()")  # and back
    cold = project.cold()
    assert _errors(cold) == [
        *_library_errors(8),
        *_library_errors(9),
    ], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold


LAZY_OPS = """\
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _body(x_ref, o_ref):
    o_ref[...] = x_ref[...] + 1


def add_one(x):
    return pl.pallas_call(_body, out_shape=x, compiler_params=pltpu.CompilerParams())(x)


def add_two(x):
    return add_one(add_one(x))
"""

LAZY_USER = """\
import jax
from lazylib import add_one, add_two


def run(x: jax.Array) -> object:
    if jax.default_backend() == "gpu":
        return CALL(x)
    return x
"""


def test_a_library_function_an_earlier_run_did_not_ask_about(project: Project) -> None:
    """The engine stores the summaries a run worked out (an installed module's entry
    lists its other functions by name only): a later run that calls one of those reads
    it from the library's source, and says what a cold run says; a body-only edit of
    the library then changes the finding warm and under the daemon."""
    site = project.root / "site-packages"
    (site / "lazylib").mkdir(parents=True)
    (site / "lazylib" / "__init__.py").write_text(LAZY_OPS)
    project.files = ("user.py",)
    project.extra_env = {"PYTHONPATH": str(site)}
    project.lines_of = ("user.py", "Success", "Found")
    ini = "[mypy]\nplugins = typed_pallas_mypy\nignore_missing_imports = True\n"
    project.write_files({"user.py": LAZY_USER.replace("CALL", "add_one"), "mypy.ini": ini})
    first = project.mypy("warm")
    assert _errors(first) == _library_errors(7), first
    entry = json.loads((project.root / "warm/typed-pallas/libraries/lazylib.json").read_text())
    assert "add_two" in entry["facts"]["names"]
    assert "add_two" not in entry["facts"]["functions"]  # no question reached it
    project.write_files({"user.py": LAZY_USER.replace("CALL", "add_two")})
    warm = project.mypy("warm")
    assert _errors(warm) == _library_errors(7), warm
    assert project.cold() == warm
    assert project.daemon() == warm
    # a body-only edit of the library: its kernel takes Triton params now
    init = site / "lazylib" / "__init__.py"
    init.write_text(LAZY_OPS.replace("pltpu.CompilerParams()", "pltriton.CompilerParams()"))
    init.write_text(
        init.read_text().replace(
            "from jax.experimental.pallas import tpu as pltpu",
            "from jax.experimental.pallas import triton as pltriton",
        )
    )
    stat = init.stat()
    os.utime(init, ns=(stat.st_atime_ns, stat.st_mtime_ns + 10_000_000))
    warm = project.mypy("warm")
    assert _errors(warm) == [], warm
    assert project.cold() == warm
    assert project.daemon() == warm


GATED_BASE = """\
from typing import Any, overload

import jax
from jax.extend import backend


class Op:
    def supported_on(self, device: jax.Device) -> bool:
        return True

    @overload
    def __call__(self, x: jax.Array) -> jax.Array: ...
    @overload
    def __call__(self, x: int) -> int: ...
    def __call__(self, x: Any) -> Any:  # an overloaded gate (tokamax's Op.__call__)
        device = backend.get_default_device()
        if not self.supported_on(device):
            GATE
        return self._fwd(x)

    def _fwd(self, x: jax.Array) -> jax.Array:
        return x
"""

PREDICATES = """\
import jax


def on_device(device: jax.Device) -> bool:
    return device.platform == "PLATFORM"
"""

GATED_KERNELS = """\
from typing import Any
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
from base import Op


def _body(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + 1


def add_one(x: jax.Array) -> jax.Array:
    return pl.pallas_call(_body, out_shape=x, compiler_params=pltpu.CompilerParams())(x)


class GpuClaimOp(Op):
    def supported_on(self, device) -> bool:  # a device: Op.supported_on says so
        return device.platform == "gpu"

    def _fwd(self, x: jax.Array) -> jax.Array:
        return add_one(x)
"""

PREDICATE_USER = """\
import jax
import kernels
import predicates


def run(x: jax.Array, device: jax.Device) -> object:
    if predicates.on_device(device):
        return kernels.add_one(x)
    return x
"""

CLAIM_ERROR = (
    "kernels.py:17: error: Compiler params for platform tpu cannot be used for gpu lowering."
    "  [pallas-platform]"
)
PREDICATE_ERROR = (
    "user.py:8: error: Compiler params for platform tpu cannot be used for gpu lowering."
    "  [pallas-platform]"
)


def test_predicates_and_gates_of_cached_modules(project: Project) -> None:
    """A predicate and a gate whose modules come from mypy's cache: the gate of a base
    class (``Op.__call__``) and a predicate function change in their own modules, and
    the findings of the modules using them follow, warm and under the daemon."""
    project.files = ("base.py", "predicates.py", "kernels.py", "user.py")
    project.lines_of = ("kernels.py", "user.py", "Success", "Found")
    ini = "[mypy]\nplugins = typed_pallas_mypy\n"

    def write(gate: str, platform: str) -> None:
        project.write_files(
            {
                "base.py": GATED_BASE.replace("GATE", gate),
                "predicates.py": PREDICATES.replace("PLATFORM", platform),
                "kernels.py": GATED_KERNELS,
                "user.py": PREDICATE_USER,
                "mypy.ini": ini,
            }
        )

    write('raise NotImplementedError("not supported")', "gpu")
    cold = project.mypy("warm")
    assert _errors(cold) == [CLAIM_ERROR, PREDICATE_ERROR], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold

    write("print('unsupported')", "gpu")  # base.py: no longer a gate
    cold = project.cold()
    assert _errors(cold) == [PREDICATE_ERROR], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold

    write("print('unsupported')", "tpu")  # predicates.py: the predicate says tpu
    cold = project.cold()
    assert cold == ["Success: no issues found in 4 source files"], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold

    write('raise NotImplementedError("not supported")', "gpu")  # and back
    cold = project.cold()
    assert _errors(cold) == [CLAIM_ERROR, PREDICATE_ERROR], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold

    # only the users change: the gate and the predicate are read from the stored facts
    # of base and predicates, loaded from mypy's cache without function bodies
    project.write_files(
        {"kernels.py": GATED_KERNELS + "# edited\n", "user.py": PREDICATE_USER + "# edited\n"}
    )
    assert project.mypy("warm") == cold
    assert project.daemon() == cold


def test_predicate_annotation_edit_in_another_module(project: Project) -> None:
    """The device parameter of a predicate in another module is read by the engine's
    one rule: ``Optional[jax.Device]`` makes it a predicate, ``Any`` does not, and the
    finding of its caller follows the edit cold, warm and under the daemon."""
    project.files = ("base.py", "predicates.py", "kernels.py", "user.py")
    project.lines_of = ("kernels.py", "user.py", "Success", "Found")

    def write(annotation: str) -> None:
        predicates = PREDICATES.replace("PLATFORM", "gpu").replace("jax.Device", annotation)
        project.write_files(
            {
                "base.py": GATED_BASE.replace("GATE", "print('unsupported')"),
                "predicates.py": "from typing import Any, Optional\n" + predicates,
                "kernels.py": GATED_KERNELS,
                "user.py": PREDICATE_USER,
                "mypy.ini": "[mypy]\nplugins = typed_pallas_mypy\n",
            }
        )

    write("Optional[jax.Device]")
    cold = project.mypy("warm")
    assert _errors(cold) == [PREDICATE_ERROR], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold

    write("Any")  # no longer a device parameter: not a predicate
    cold = project.cold()
    assert cold == ["Success: no issues found in 4 source files"], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold


DECORATOR_ALIASES = """\
import jaxtyping
import somewhere

checked = DECORATOR
"""

DECORATED_KERNELS = """\
from typing import Any
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu
import checks


def _body(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + 1


@checks.checked
def add_one(x: jax.Array) -> jax.Array:
    return pl.pallas_call(_body, out_shape=x, compiler_params=pltpu.CompilerParams())(x)
"""

DECORATED_USER = """\
import jax
import kernels


def run(x: jax.Array) -> object:
    if jax.default_backend() == "gpu":
        return kernels.add_one(x)
    return x
"""


def test_a_decorator_alias_of_another_module(project: Project) -> None:
    """Whether a project variable holds a function-keeping decorator is a fact of its
    module: editing only that assignment changes the finding two modules away, warm, from
    mypy's cache and under the daemon."""
    project.files = ("checks.py", "kernels.py", "user.py")
    project.lines_of = ("kernels.py", "user.py", "Success", "Found")
    # jaxtyping and somewhere as they behave at run time (tests/fixtures/README.md)
    project.extra_env = {"PYTHONPATH": str(FIXTURES_SITE)}
    ini = "[mypy]\nplugins = typed_pallas_mypy\nignore_missing_imports = True\n"

    def write(decorator: str) -> None:
        project.write_files(
            {
                "checks.py": DECORATOR_ALIASES.replace("DECORATOR", decorator),
                "kernels.py": DECORATED_KERNELS,
                "user.py": DECORATED_USER,
                "mypy.ini": ini,
            }
        )

    write("jaxtyping.jaxtyped(typechecker=None)")  # keeps the function: the error
    cold = project.mypy("warm")
    assert [line for line in cold if ": error:" in line] == [
        "user.py:7: error: Compiler params for platform tpu cannot be used for gpu lowering."
        "  [pallas-platform]"
    ], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold

    write("somewhere.wrap(strict=True)")  # an unknown decorator: silent
    cold = project.cold()
    assert cold == ["Success: no issues found in 3 source files"], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold

    write("jaxtyping.jaxtyped(typechecker=None)")  # and back
    cold = project.cold()
    assert [line for line in cold if ": error:" in line] != [], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold


PLATFORM_HELPER = """\
import jax


def on_x() -> bool:
    return jax.default_backend() == "PLATFORM"
"""

CHAINED_HELPER = """\
import platform_helper


def on_gpu() -> bool:
    return platform_helper.on_x()
"""

HELPER_KERNELS = """\
from typing import Any
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import tpu as pltpu


def _body(x_ref: Any, o_ref: Any) -> None:
    o_ref[...] = x_ref[...] + 1


def add_one(x: jax.Array) -> jax.Array:
    return pl.pallas_call(_body, out_shape=x, compiler_params=pltpu.CompilerParams())(x)
"""

HELPER_USER = """\
import jax
import chained
import kernels


def run(x: jax.Array) -> jax.Array:
    if chained.on_gpu():
        return kernels.add_one(x)
    return x
"""


def _helper_user_error(name: str) -> str:
    return (
        f"{name}:8: error: Compiler params for platform tpu cannot be used for gpu lowering."
        "  [pallas-platform]"
    )


def test_a_helper_of_a_helper_in_a_third_module(project: Project) -> None:
    """``if chained.on_gpu():`` where ``chained.on_gpu`` returns
    ``platform_helper.on_x()``: an edit of the innermost helper's platform string must
    reach both users, warm and under the daemon, whichever user read the helper first
    and whether or not the daemon re-processes it for an unrelated error (``b_user``
    has one, so mypy re-checks it after every edit)."""
    project.files = ("platform_helper.py", "chained.py", "kernels.py", "a_user.py", "b_user.py")
    project.lines_of = ("a_user.py", "b_user.py", "Success", "Found")
    ini = "[mypy]\nplugins = typed_pallas_mypy\n"
    unrelated = 'unrelated: int = "not an int"  # a mypy error of its own\n'

    def write(platform: str) -> None:
        project.write_files(
            {
                "platform_helper.py": PLATFORM_HELPER.replace("PLATFORM", platform),
                "chained.py": CHAINED_HELPER,
                "kernels.py": HELPER_KERNELS,
                "a_user.py": HELPER_USER,
                "b_user.py": HELPER_USER + unrelated,
                "mypy.ini": ini,
            }
        )

    both = [_helper_user_error("a_user.py"), _helper_user_error("b_user.py")]
    write("gpu")
    cold = project.mypy("warm")
    assert sorted(line for line in cold if "pallas-platform" in line) == both, cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold

    for platform, expected in (("tpu", []), ("gpu", both), ("tpu", [])):
        write(platform)
        cold = project.cold()
        assert sorted(line for line in cold if "pallas-platform" in line) == expected, cold
        assert project.mypy("warm") == cold
        assert project.daemon() == cold


BODIES = """\
from typing import Any
from jax.experimental.pallas import tpu as pltpu


def body(x_ref: Any, o_ref: Any) -> None:
    BODY
"""

BODY_CALLER = """\
import jax
from jax.experimental import pallas as pl
from jax.experimental.pallas import triton as pltriton
import kernels


def run(x: jax.Array) -> jax.Array:
    return pl.pallas_call(kernels.body, out_shape=x, compiler_params=pltriton.CompilerParams())(x)
"""


def test_kernel_body_edit_in_another_module(project: Project) -> None:
    """The kernel body of another module, read by the engine at the entry call, becomes
    TPU-only, plain, then TPU-only again (a body-only edit): the caller's finding on its
    Triton params comes, goes and comes back, cold, warm and under the daemon."""
    project.files = ("kernels.py", "dispatch.py")

    def write(body: str) -> None:
        project.write_files(
            {
                "kernels.py": BODIES.replace("BODY", body),
                "dispatch.py": BODY_CALLER,
                "mypy.ini": "[mypy]\nplugins = typed_pallas_mypy\n",
            }
        )

    def fires(found: list[str]) -> bool:
        return any(
            line.startswith("dispatch.py:8: error:") and "[pallas-platform]" in line
            for line in found
        )

    write("pltpu.sync_copy(x_ref, o_ref)")
    cold = project.mypy("warm")
    assert fires(cold), cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold

    write("o_ref[...] = x_ref[...]")
    cold = project.cold()
    assert cold == [f"Success: no issues found in {len(project.files)} source files"], cold
    assert project.mypy("warm") == cold
    assert project.daemon() == cold

    write("pltpu.sync_copy(x_ref, o_ref)")
    warm = project.mypy("warm")
    assert fires(warm), warm
    assert project.daemon() == warm
