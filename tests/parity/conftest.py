"""The parity harness's folder is on ``sys.path`` for its tests (``parity_cases``)."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
