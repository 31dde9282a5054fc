"""Loading a case study or an attack model from a model file.

A model file is a plain Python file (see ``models/`` in the repository). It
declares either a case study as a module-level ``CASE`` (a scenario case such
as :class:`~adversary.scenarios.single_block.SingleBlockCase`, whose
``model(prior_label)`` builds its PyMC model), or, for an attack written from
scratch, a function ``model()`` returning a ``pymc.Model`` (and optionally a
``NAME``). It may be given by path or, for the case studies shipped with the
package, by name (``dare_county``, ``granville_county``).
"""

from __future__ import annotations

import importlib
import importlib.util
from pathlib import Path

__all__ = ["load_attack_model", "load_case", "load_module", "shipped_cases"]


def shipped_cases() -> list[str]:
    """Names of the case studies shipped in ``adversary.models``."""
    package = Path(importlib.import_module("adversary.models").__file__).parent
    return sorted(p.stem for p in package.glob("*.py") if not p.stem.startswith("_"))


def load_module(model: str | Path):
    """The module of a model file path or of a shipped model's name."""
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
    return module


def load_case(model: str | Path):
    """The ``CASE`` declared by a model file path or a shipped case name."""
    module = _load_module_checked(model)
    if not hasattr(module, "CASE"):
        raise ValueError(f"model file {str(model)!r} declares no CASE")
    return module.CASE


def load_attack_model(model: str | Path, prior_label: str | None = None):
    """``(name, pymc.Model)`` from a model file: ``CASE.model(prior_label)`` or ``model()``."""
    module = _load_module_checked(model)
    if hasattr(module, "CASE"):
        case = module.CASE
        return case.name, case.model(prior_label)
    if callable(getattr(module, "model", None)):
        if prior_label is not None:
            raise ValueError("prior: this model file defines model(), not a CASE with priors")
        return getattr(module, "NAME", Path(str(model)).stem), module.model()
    raise ValueError(f"model file {str(model)!r} declares neither CASE nor model()")


def _load_module_checked(model: str | Path):
    """:func:`load_module`, refusing a population model where a case is wanted."""
    module = load_module(model)
    if hasattr(module, "POPULATION") and not hasattr(module, "CASE"):
        raise ValueError(
            f"model {str(model)!r} is a population model: "
            f"use `adversary population --model {model}`"
        )
    return module
