"""Registers the packaging fixtures defined in pkg_env.py (dist, installed, site_mirror, mypy_cache, make_venv, make_user_venv)."""

from pkg_env import dist, installed, make_user_venv, make_venv, mypy_cache, site_mirror

__all__ = ["dist", "installed", "make_user_venv", "make_venv", "mypy_cache", "site_mirror"]
