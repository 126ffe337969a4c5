"""Import-graph promises: the mypy plugin never imports jax; typed_pallas never imports mypy.

Each check runs in a fresh interpreter (``sys.modules`` of the test process proves
nothing). The meta-tests feed the same checker code that does import the forbidden
package, to show the check can fail.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from typing import Any

import pytest

pytestmark = pytest.mark.slow

_PROBE = """
import json, sys
{code}
print(json.dumps(sorted(m for m in sys.modules if m == {root!r} or m.startswith({root!r} + "."))))
"""


def loaded(code: str, root: str) -> list[str]:
    """Modules under ``root`` that a fresh interpreter has loaded after running ``code``."""
    completed = subprocess.run(
        [sys.executable, "-c", _PROBE.format(code=code, root=root)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result: list[str] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


PLUGIN_CODE = """
from mypy.options import Options
import typed_pallas_mypy
from typed_pallas_mypy import (
    cache_keys, device_kinds, entries, errorcodes, evidence_tables, fullnames, main,
)
from typed_pallas_mypy.transformers import (
    calls, decisions, evidence, facts_store, guards, hooks, inference_use,
    module_index, nodes, params, platform_facts, reporting, resolution, signatures,
)
from typed_pallas_mypy import inference, platform_map
from typed_pallas_mypy.inference import combine, jax_api, model, program, reader, store, values
plugin_class = typed_pallas_mypy.plugin("2.4.1")
instance = plugin_class(Options())
assert instance.get_function_hook("jax._src.pallas.pallas_call.pallas_call") is not None
assert instance.get_function_hook("functools.partial") is not None
str(typed_pallas_mypy.__version__)
"""


def test_plugin_does_not_import_jax() -> None:
    assert loaded(PLUGIN_CODE, "jax") == []


def test_typed_pallas_does_not_import_mypy() -> None:
    code = "import typed_pallas\nfrom typed_pallas import _platforms\n_platforms.fix_hint('triton', 'tpu')"
    assert loaded(code, "mypy") == []


def test_meta_the_jax_check_can_fail() -> None:
    assert "jax" in loaded(PLUGIN_CODE + "\nimport jax.numpy\n", "jax")


def test_meta_the_mypy_check_can_fail() -> None:
    assert "mypy" in loaded("import typed_pallas\nimport mypy.nodes\n", "mypy")


CONFIG_DATA_CODE = """
import json
from mypy.options import Options
from mypy.plugin import ReportConfigContext
import typed_pallas_mypy
plugin = typed_pallas_mypy.plugin("2.4.1")(Options())
user = plugin.report_config_data(ReportConfigContext("pkg.ops", "/project/pkg/ops.py", True))
jax = plugin.report_config_data(
    ReportConfigContext("jax.numpy", "/venv/lib/python3.12/site-packages/jax/numpy/__init__.py", True)
)
print(json.dumps([user, jax], sort_keys=True))
"""


def _config_data(seed: str, **env: str) -> list[object]:
    completed = subprocess.run(
        [sys.executable, "-c", CONFIG_DATA_CODE],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
        env={**os.environ, "PYTHONHASHSEED": seed, **env},
    )
    result: list[object] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result


def test_report_config_data_is_stable_and_skips_site_packages() -> None:
    # Different hash seeds must give the same data, or every warm run re-checks all
    # user modules ("plugin configuration differs"); site-packages modules get None.
    first, second = _config_data("1"), _config_data("2")
    assert first == second
    assert first[0] is not None
    assert first[1] is None


def test_report_config_data_says_which_engine_answers() -> None:
    # a module checked with the rules answering is checked again under the summaries
    rules = _config_data("1", TYPED_PALLAS_SUMMARIES="0")
    summaries = _config_data("1", TYPED_PALLAS_SUMMARIES="1")
    assert rules[0] != summaries[0]
    assert _config_data("2", TYPED_PALLAS_SUMMARIES="1") == summaries


WARM_RUN_CODE = """
from mypy.options import Options
from mypy.plugin import ReportConfigContext
import typed_pallas_mypy
plugin_class = typed_pallas_mypy.plugin("2.4.1")
instance = plugin_class(Options())
str(typed_pallas_mypy.__version__)
instance.report_config_data(ReportConfigContext("pkg.mod", "pkg/mod.py", is_check=True))
"""


def test_a_warm_run_loads_no_transformer() -> None:
    # A warm run (nothing to re-check) only loads the plugin, asks its version and its
    # config data for each module: none of the checks need importing for that, nor the
    # name tables (``is_installed_path`` lives in ``cache_keys``).
    assert loaded(WARM_RUN_CODE, "typed_pallas_mypy.transformers") == []
    plugin_modules = loaded(WARM_RUN_CODE, "typed_pallas_mypy")
    assert "typed_pallas_mypy.fullnames" not in plugin_modules
    assert "typed_pallas_mypy.entries" not in plugin_modules
    # no overrides or registries configured: their classes are not created
    assert "typed_pallas_mypy.config_entries" not in plugin_modules
    # of the runtime package, only the platform tables (and the version reader)
    assert loaded(WARM_RUN_CODE, "typed_pallas") == [
        "typed_pallas",
        "typed_pallas._jax_range",
        "typed_pallas._platforms",
        "typed_pallas._versions",
    ]


def test_meta_the_warm_run_check_can_fail() -> None:
    code = WARM_RUN_CODE + "\ninstance.get_function_hook('functools.partial')\n"
    assert "typed_pallas_mypy.transformers.hooks" in loaded(code, "typed_pallas_mypy.transformers")


def test_a_warm_run_does_not_import_importlib_metadata() -> None:
    # Importing importlib.metadata (and the email parser it brings) costs about 10 ms of
    # every warm run; the plugin's versions come from typed_pallas._versions instead.
    assert loaded(WARM_RUN_CODE, "importlib.metadata") == []


def test_meta_the_importlib_metadata_check_can_fail() -> None:
    code = WARM_RUN_CODE + "\nimport importlib.metadata\n"
    assert "importlib.metadata" in loaded(code, "importlib.metadata")


REGISTERED_CODE = """
import typed_pallas_mypy
from mypy.errorcodes import error_codes
{call}
print(json.dumps(["pallas-platform" in error_codes]))
"""


def test_the_entry_point_registers_the_error_code() -> None:
    # mypy checks `disable_error_code`, `--disable-error-code`, per-module sections and
    # inline `# mypy:` comments before any hook runs: calling the entry point (what mypy
    # does when it loads the plugin) must have created the code (tests/test_error_code.py
    # runs each form). It costs the warm run one module, errorcodes (mypy.errorcodes is
    # mypy's own, already loaded).
    assert _registered('typed_pallas_mypy.plugin("2.4.1")') is True


def test_meta_the_registration_check_can_fail() -> None:
    assert _registered("") is False  # importing the package alone creates nothing


def _registered(call: str) -> bool:
    completed = subprocess.run(
        [sys.executable, "-c", "import json\n" + REGISTERED_CODE.format(call=call)],
        capture_output=True,
        text=True,
        timeout=300,
        check=True,
    )
    result: list[bool] = json.loads(completed.stdout.strip().splitlines()[-1])
    return result[0]


def _import_alone(module: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", f"import {module}"], capture_output=True, text=True, check=False
    )


def test_every_module_of_the_plugin_imports_first() -> None:
    """Any module may be the first one imported (mypy's plugin load, the CLI, a test): a
    circle between modules that import names from each other fails only in one order."""
    import pkgutil

    import typed_pallas_mypy

    names = [
        info.name
        for info in pkgutil.walk_packages(typed_pallas_mypy.__path__, "typed_pallas_mypy.")
        if not info.name.endswith("__main__")
    ]
    failed = {name: _import_alone(name).stderr.strip().splitlines()[-1:] for name in names}
    assert {name: err for name, err in failed.items() if err} == {}


def test_meta_the_first_import_check_can_fail(tmp_path: Any) -> None:
    (tmp_path / "circle_a.py").write_text("from circle_b import B\nA = 1\n")
    (tmp_path / "circle_b.py").write_text("from circle_a import A\nB = 2\n")
    done = subprocess.run(
        [sys.executable, "-c", "import circle_a"],
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert "ImportError" in done.stderr
