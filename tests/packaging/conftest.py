"""Registers the packaging fixtures defined in pkg_env.py (dist, installed, site_mirror, mypy_cache, make_venv), and the jax-pyrefly-stubs wheels of test_coinstall.py (their_wheels)."""

from pkg_env import dist, installed, make_venv, mypy_cache, site_mirror
from test_coinstall import their_wheels

__all__ = ["dist", "installed", "make_venv", "mypy_cache", "site_mirror", "their_wheels"]
