"""Make the repository's ``eval`` package importable from these tests (it is not installed)."""

import sys
from pathlib import Path

_REPO = str(Path(__file__).resolve().parents[2])
if _REPO not in sys.path:
    sys.path.insert(0, _REPO)
