"""Loading a case study from a model file.

A model file is a plain Python file (see ``models/`` in the repository) that
declares its case as a module-level ``CASE``. It may be given by path or, for
the case studies shipped with the package, by name (``dare_county``).
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

__all__ = ["load_case", "shipped_cases"]


def shipped_cases() -> list[str]:
    """Names of the case studies shipped in ``adversary.models``."""
    package = Path(importlib.import_module("adversary.models").__file__).parent
    return sorted(p.stem for p in package.glob("*.py") if not p.stem.startswith("_"))


def load_case(model: str | Path):
    """The ``CASE`` declared by a model file path or a shipped case name."""
    path = Path(model)
    if path.suffix == ".py":
        if not path.is_file():
            raise FileNotFoundError(f"model file {str(path)!r} does not exist")
        spec = importlib.util.spec_from_file_location(f"adversary_model_{path.stem}", path)
        module = importlib.util.module_from_spec(spec)
        spec.loader.exec_module(module)
    elif str(model) in shipped_cases():
        module = importlib.import_module(f"adversary.models.{model}")
    else:
        known = ", ".join(shipped_cases())
        raise ValueError(f"model must be a .py file or one of {known}; got {str(model)!r}")
    if not hasattr(module, "CASE"):
        raise ValueError(f"model file {str(model)!r} declares no CASE")
    return module.CASE
