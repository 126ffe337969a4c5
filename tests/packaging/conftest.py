"""Registers the packaging fixtures defined in pkg_env.py (dist, site_mirror, make_venv)."""

from pkg_env import dist, make_venv, site_mirror

__all__ = ["dist", "make_venv", "site_mirror"]
