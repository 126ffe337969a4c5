"""pytest plugin (entry point ``typed_pallas``): the ``lowers_on`` marker and the ``lowering_check`` fixture.

Importing this module imports no jax; the fixture loads it on first use.
"""

from __future__ import annotations

import pytest


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "lowers_on(*platforms): the kernels checked through the lowering_check fixture must lower "
        "for these platforms ('tpu', 'cuda', 'rocm'); checked on CPU by cross-platform lowering",
    )
