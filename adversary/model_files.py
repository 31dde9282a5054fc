"""Loading an attack from a model file.

A model file is a plain Python file (the case studies shipped in the
repository's ``models/`` folder are examples to copy). It declares an attack
in one of two ways:

- a module-level ``CASE``: a scenario case such as
  :class:`~adversary.scenarios.single_block.SingleBlockCase`; or
- a PyMC model factory named ``model``: a function whose keyword arguments
  are the attack's parameters (the prior, ρ, the releases, …, each with a
  default) and which returns a ``pymc.Model``; with, where it has them,
  ``PRIORS`` (``{label: prior}``, each passed as ``model(prior=...)``, or
  as the argument ``PRIOR_ARGUMENT`` names), ``TRUTH`` (``{latent: true
  value}`` for every latent, for the data holder's measures), ``TARGET`` (the
  latent of the decision; default the first) and ``NAME``. :func:`load_case` wraps it with
  :func:`adversary.attack`, so every command takes it like a ``CASE``.

A file is given by its path (ending in ``.py``) or, for the case studies
shipped with the package, by name (``dare_county``, ``granville_county``,
…). It is imported as a module registered under ``adversary_model_<stem>``
with its folder importable (so it may import a neighbouring file, and
dataclasses and pickling work in it); any error while loading it, a
``SystemExit`` included (an ``exit()`` in the file), is one line naming the
file and the line.
"""

from __future__ import annotations

import importlib
import importlib.util
import sys
import traceback
from pathlib import Path

__all__ = ["ModelFileError", "load_case", "load_declared", "load_module", "shipped_cases"]

#: What a model file may declare for :func:`load_case` besides ``model``.
FACTORY_NAMES = ("PRIORS", "TRUTH", "TARGET", "NAME", "PRIOR_ARGUMENT")


class ModelFileError(ValueError):
    """A model file could not be loaded or declares no attack; the message is one line."""


def shipped_cases() -> list[str]:
    """Names of the case studies shipped in ``adversary.models``."""
    package = Path(importlib.import_module("adversary.models").__file__).parent
    return sorted(p.stem for p in package.glob("*.py") if not p.stem.startswith("_"))


def _where(path: Path, error: BaseException) -> str:
    """``file, line N`` of the innermost frame of ``error`` in ``path`` (or of a SyntaxError)."""
    here = path.resolve()
    if isinstance(error, SyntaxError) and error.filename and Path(error.filename).resolve() == here:
        return f"{path}, line {error.lineno}"
    frames = [
        f for f in traceback.extract_tb(error.__traceback__) if Path(f.filename).resolve() == here
    ]
    return f"{path}, line {frames[-1].lineno}" if frames else str(path)


def _failure(path: Path, error: BaseException) -> ModelFileError:
    message = error.msg if isinstance(error, SyntaxError) else str(error)
    first = (message.strip().splitlines() or [""])[0]
    return ModelFileError(
        f"model file {_where(path, error)}: {type(error).__name__}: {first}".rstrip(": ")
    )


def _import_file(path: Path):
    """Import ``path`` as the module ``adversary_model_<stem>`` (registered; folder on the path)."""
    name = f"adversary_model_{path.stem}"
    folder = str(path.resolve().parent)
    if folder not in sys.path:
        sys.path.insert(0, folder)
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module
    try:
        spec.loader.exec_module(module)
    except KeyboardInterrupt:
        del sys.modules[name]
        raise
    except BaseException as error:  # SystemExit too: a file's exit is a failure to load it
        del sys.modules[name]
        raise _failure(path, error) from error
    return module


def load_module(model: str | Path):
    """The module of a model file path or of a shipped model's name."""
    path = Path(model)
    if path.suffix == ".py":
        if not path.is_file():
            raise FileNotFoundError(f"model file {str(path)!r} does not exist")
        return _import_file(path)
    if str(model) in shipped_cases():
        return importlib.import_module(f"adversary.models.{model}")
    known = ", ".join(shipped_cases())
    raise ValueError(f"model must be a .py file or one of {known}; got {str(model)!r}")


def load_declared(model: str | Path, name: str, kind: type, example: str):
    """The object ``name`` (e.g. ``RECONSTRUCTION``) a model file declares, or ``None`` if it
    declares none; anything but a ``kind`` is refused in one line pointing to ``example``."""
    value = getattr(load_module(model), name, None)
    if value is not None and not isinstance(value, kind):
        raise ValueError(
            f"model file {str(model)!r}: {name} must be a {kind.__name__}; see models/{example}.py"
        )
    return value


def is_reconstruction_case(case) -> bool:
    """Whether ``case`` is a :class:`~adversary.scenarios.reconstruction.ReconstructionCase`.

    Asked without importing the reconstruction scenario (SciPy's statistics and more): a file
    that declares such a case has imported its class already.
    """
    declared = sys.modules.get("adversary.scenarios.reconstruction.case")
    return declared is not None and isinstance(case, declared.ReconstructionCase)


def load_case(model: str | Path):
    """The attack a model file declares: its ``CASE``, or its ``model`` factory as an attack."""
    module = load_module(model)
    population = any(hasattr(module, k) for k in ("POPULATION", "RECONSTRUCTION", "SWAPPING"))
    if population and not hasattr(module, "CASE"):
        raise ModelFileError(
            f"model {str(model)!r} is a population model: "
            f"use `adversary population --model {model}`"
        )
    if hasattr(module, "CASE"):
        case = module.CASE
        if is_reconstruction_case(case):
            raise ModelFileError(
                f"model {str(model)!r} is a reconstruction case: "
                f"use `adversary reconstruct {model}`"
            )
        missing = [a for a in ("priors", "model", "marginal_measures") if not hasattr(case, a)]
        if missing:
            raise ModelFileError(
                f"model file {str(model)!r}: CASE is a {type(case).__name__}, not an attack "
                f"(it has no {', '.join(missing)}); declare a scenario case or a model() factory"
            )
        return case
    factory = getattr(module, "model", None)
    if not callable(factory):
        raise ModelFileError(
            f"model file {str(model)!r} declares neither CASE nor a model() factory"
        )
    declared = {
        name.lower(): getattr(module, name) for name in FACTORY_NAMES if hasattr(module, name)
    }
    from .scenarios.user_attack import attack  # a factory's attack: the inference layer

    try:
        return attack(factory, **declared)
    except (TypeError, ValueError) as error:  # the declarations, checked by attack()
        raise ModelFileError(f"model file {str(model)!r}: {error}") from error
    except KeyboardInterrupt:
        raise
    except BaseException as error:  # raised (or exited) while the factory built its model
        raise _failure(Path(str(model)), error) from error
