"""typed-pallas mypy plugin. Enable with ``plugins = ["typed_pallas_mypy"]``."""
