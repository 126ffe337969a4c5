"""``_platforms.PALLAS_PACKAGE_ALIASES`` against the installed jax.

The engine reads ``jax.pallas.X`` as ``jax.experimental.pallas.X`` (one spelling in every
table). That is only right while each name of JAX's preferred package is the very object
its alias exports: checked here name by name, module by module, at the release installed
(jax >= 0.12.1 has ``jax.pallas``; before it the package does not exist, and the test says
so rather than passing on nothing).
"""

from __future__ import annotations

import importlib
import types

import pytest

from typed_pallas import _platforms

jax = pytest.importorskip("jax")

SUBMODULES = ("", ".tpu", ".tpu_sc", ".mosaic_gpu", ".fuser")


def _has_jax_pallas() -> bool:
    try:
        importlib.import_module("jax.pallas")
    except ImportError:
        return False
    return True


def _public(module: types.ModuleType) -> dict[str, object]:
    return {
        name: getattr(module, name)
        for name in dir(module)
        if not name.startswith("_") and not isinstance(getattr(module, name), types.ModuleType)
    }


@pytest.mark.skipif(not _has_jax_pallas(), reason="this jax has no jax.pallas (added in 0.12.1)")
@pytest.mark.parametrize("suffix", SUBMODULES)
def test_each_name_of_jax_pallas_is_the_object_of_its_alias(suffix: str) -> None:
    for alias, canonical in _platforms.PALLAS_PACKAGE_ALIASES.items():
        preferred = importlib.import_module(alias + suffix)
        experimental = importlib.import_module(canonical + suffix)
        names = _public(preferred)
        assert names, f"{alias + suffix} exports nothing"
        for name, value in names.items():
            assert getattr(experimental, name, None) is value, (
                f"{alias + suffix}.{name} is not {canonical + suffix}.{name}: "
                "the engine would read one as the other"
            )
        fullname = f"{alias}{suffix}.{next(iter(names))}"
        assert _platforms.canonical_fullname(fullname).startswith(canonical + suffix + ".")


@pytest.mark.skipif(_has_jax_pallas(), reason="this jax has jax.pallas")
def test_before_0_12_1_jax_pallas_does_not_import() -> None:
    with pytest.raises(ImportError):
        importlib.import_module("jax.pallas")
