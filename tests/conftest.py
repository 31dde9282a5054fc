"""Test-wide set-up: caches in the build tree, plots without a display."""

import os
from pathlib import Path

_BUILD = Path(__file__).resolve().parent.parent / "build"
os.environ.setdefault("PYTENSOR_FLAGS", f"base_compiledir={_BUILD / 'pytensor'}")
os.environ.setdefault("MPLCONFIGDIR", str(_BUILD / "matplotlib"))
os.environ.setdefault("MPLBACKEND", "Agg")
