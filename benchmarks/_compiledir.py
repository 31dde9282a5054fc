"""Where a benchmark's PyTensor functions are compiled to: call before importing PyTensor.

``build/pytensor`` of the checkout (a warm cache after the first run) unless
``PYTENSOR_FLAGS`` is set; with ``--cold`` on the command line, a new empty
folder under ``build/`` (removed at exit), so that the first, short chain of
each sampler (``warmup s``) measures the time to its first draws from a cold
start.
"""

import atexit
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def choose_compiledir(argv=None) -> None:
    """Set ``PYTENSOR_FLAGS`` for this process as the module docstring says."""
    argv = sys.argv if argv is None else argv
    if "--cold" in argv:
        (ROOT / "build").mkdir(exist_ok=True)
        folder = tempfile.mkdtemp(prefix="pytensor-cold-", dir=ROOT / "build")
        atexit.register(shutil.rmtree, folder, ignore_errors=True)
        os.environ["PYTENSOR_FLAGS"] = f"base_compiledir={folder}"
    else:
        os.environ.setdefault("PYTENSOR_FLAGS", f"base_compiledir={ROOT / 'build' / 'pytensor'}")
