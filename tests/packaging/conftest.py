"""Registers the packaging fixtures defined in pkg_env.py (dist, site_mirror, mypy_cache, make_venv)."""

from pkg_env import dist, make_venv, mypy_cache, site_mirror

__all__ = ["dist", "make_venv", "mypy_cache", "site_mirror"]
