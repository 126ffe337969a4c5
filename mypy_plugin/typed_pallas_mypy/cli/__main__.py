"""``python -m typed_pallas_mypy.cli``: the same as the ``typed-pallas`` console script."""

from __future__ import annotations

from typed_pallas_mypy.cli import main

raise SystemExit(main())
