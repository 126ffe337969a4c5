"""Summaries worked out when asked for (``model.Functions``, ``Inference(lazy=True)``).

A summary depends only on its module's source and its name, never on which functions
were summarised before it: checked on every module of jax's Pallas ops (real code),
asked in reverse order against the eager reading. A lazy reading summarises only what
is asked; the store keeps what was worked out (``save``) and a later run summarises
what its entry lacks from the module's source, with the same result.
These lazy readings and their store are the rules' machinery: every test here goes with
the rules (``rules_answer``).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from library_fakes import OPS, MakeLib, jax_ops_modules, platforms_of

from typed_pallas_mypy.inference import Inference, combine, model, reader

pytestmark = pytest.mark.usefixtures("rules_answer")


def test_summaries_do_not_depend_on_the_order_they_are_asked_in() -> None:
    modules = jax_ops_modules()
    assert len(modules) >= 30  # jax's ops are there to read
    compared = 0
    for module, source, package in modules:
        eager, _ = reader.read_module_keeping_sites(source, module, is_package=package)
        lazy, _ = reader.read_module_keeping_sites(source, module, is_package=package, lazy=True)
        assert eager is not None and lazy is not None, module
        assert list(lazy.functions) == list(eager.functions), module
        for qualname in reversed(list(lazy.functions)):
            assert lazy.functions[qualname] == eager.functions[qualname], (module, qualname)
            compared += 1
        assert lazy.classes == eager.classes, module
        assert lazy.aliases == eager.aliases, module
    assert compared >= 500


SOURCE = """\
import jax

class Box:
    def __init__(self, kernel):
        self.kernel = kernel

def first(x):
    return x

def second(x):
    return jax.jit(lambda y: y)(x)
"""


def _stored_functions(facts: model.ModuleFacts) -> dict[str, object]:
    functions = model.module_json(facts)["functions"]
    assert isinstance(functions, dict)
    return functions


def test_a_lazy_reading_summarises_only_what_is_asked() -> None:
    lazy, _ = reader.read_module_keeping_sites(SOURCE.encode(), "m", is_package=False, lazy=True)
    assert lazy is not None
    assert "second" in lazy.functions  # the names are known without summarising
    assert _stored_functions(lazy) == {}
    assert lazy.functions["first"].qualname == "first"
    assert list(_stored_functions(lazy)) == ["first"]
    # a class's ``__init__`` gets the attributes it sets, asked alone too
    assert lazy.functions["Box.__init__"].self_attrs == (("kernel", "p:kernel"),)
    eager, _ = reader.read_module_keeping_sites(SOURCE.encode(), "m", is_package=False)
    assert eager is not None
    assert sorted(_stored_functions(eager)) == sorted(eager.functions)
    assert len(eager.functions) == 4  # Box.__init__, first, second, second's lambda


def test_a_function_nothing_can_summarise_reads_as_opaque() -> None:
    functions = model.Functions(["f"], {}, None)
    found = functions["f"]
    assert found.opaque and found.blocked == "its facts are not kept"
    with pytest.raises(KeyError):
        functions["g"]
    assert "g" not in functions and "f" in functions


def test_stored_functions_must_be_named() -> None:
    lazy, _ = reader.read_module_keeping_sites(SOURCE.encode(), "m", is_package=False, lazy=True)
    assert lazy is not None
    lazy.functions["first"]
    data = json.loads(json.dumps(model.module_json(lazy)))
    assert model.module_from("m", data).functions["first"] == lazy.functions["first"]
    data["names"] = ["second"]
    with pytest.raises(model.FactsFormatError):
        model.module_from("m", data)


USE = OPS + "\ndef outer(x):\n    return tpu_op(x)\n\ndef other(x):\n    return triton_op(x)\n"


def test_the_store_keeps_what_was_worked_out_and_a_later_run_adds_to_it(
    make_lib: MakeLib, tmp_path: Path, parses: list[str]
) -> None:
    root = make_lib({"pkg/ops.py": USE})
    cache = tmp_path / "cache"

    first = Inference([str(root)], str(cache), lazy=True)
    assert platforms_of(first.requirement("pkg.ops.outer")) == {"tpu"}
    entry = cache / "pkg.ops.json"
    assert not entry.exists()  # written by ``save``, not when read
    first.save()
    stored = json.loads(entry.read_text())["facts"]
    assert sorted(stored["functions"]) == ["kernel", "outer", "tpu_op"]
    assert "other" in stored["names"]
    mtime = entry.stat().st_mtime_ns
    first.save()  # nothing new: not written again
    assert entry.stat().st_mtime_ns == mtime
    assert parses == ["pkg.ops"]

    second = Inference([str(root)], str(cache), lazy=True)
    assert platforms_of(second.requirement("pkg.ops.outer")) == {"tpu"}
    assert parses == ["pkg.ops"]  # all it needs is stored
    assert platforms_of(second.requirement("pkg.ops.other")) == {"cuda", "rocm"}
    assert parses == ["pkg.ops", "pkg.ops"]  # ``other`` is read from the source, once
    assert platforms_of(second.requirement("pkg.ops.plain")) is None
    assert parses == ["pkg.ops", "pkg.ops"]
    second.save()
    stored = json.loads(entry.read_text())["facts"]
    assert {"other", "triton_op", "plain"} <= set(stored["functions"])

    eager = Inference([str(root)], None)
    for name in ("outer", "other", "plain", "tpu_op_i"):
        assert second.requirement(f"pkg.ops.{name}") == eager.requirement(f"pkg.ops.{name}")


def test_a_function_the_entry_lacks_is_not_read_from_a_changed_file(
    make_lib: MakeLib, tmp_path: Path
) -> None:
    root = make_lib({"pkg/ops.py": USE})
    cache = tmp_path / "cache"
    first = Inference([str(root)], str(cache), lazy=True)
    first.requirement("pkg.ops.outer")
    first.save()
    second = Inference([str(root)], str(cache), lazy=True)
    assert platforms_of(second.requirement("pkg.ops.outer")) == {"tpu"}  # the stored entry
    path = root / "pkg" / "ops.py"
    path.write_text(path.read_text().replace("triton_op(x)\n", "tpu_op(x)\n"))
    # ``other`` is not in the entry, and the file is no longer the one it was stored for
    assert second.requirement("pkg.ops.other") is None
    third = Inference([str(root)], str(cache), lazy=True)
    assert platforms_of(third.requirement("pkg.ops.other")) == {"tpu"}


def test_an_installed_module_past_the_kept_readings_is_read_again_when_asked(
    make_lib: MakeLib, monkeypatch: pytest.MonkeyPatch, parses: list[str]
) -> None:
    monkeypatch.setattr(combine, "_KEPT_LAZY_READINGS", 1)
    root = make_lib({"pkg/ops.py": USE, "pkg/more.py": USE})
    lazy = Inference([str(root)], None, lazy=True)
    assert platforms_of(lazy.requirement("pkg.ops.outer")) == {"tpu"}
    assert platforms_of(lazy.requirement("pkg.ops.other")) == {"cuda", "rocm"}
    assert parses == ["pkg.ops"]  # its reading is kept
    assert platforms_of(lazy.requirement("pkg.more.outer")) == {"tpu"}
    assert parses == ["pkg.ops", "pkg.more"]  # one reading kept: pkg.ops's is let go
    assert platforms_of(lazy.requirement("pkg.ops.plain")) is None
    assert platforms_of(lazy.requirement("pkg.ops.tpu_op_i")) == {"tpu"}
    assert parses == ["pkg.ops", "pkg.more", "pkg.ops"]  # read again, once
    eager = Inference([str(root)], None)
    for name in ("pkg.ops.plain", "pkg.ops.tpu_op_i", "pkg.more.other"):
        assert lazy.requirement(name) == eager.requirement(name)
