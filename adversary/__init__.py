"""adversary: disclosure risk of noisy count releases against a Bayesian adversary.

The public API, by layer (``../shared/DESIGN.md`` section 4):

- noise and accounting: :mod:`adversary.noise`, :mod:`adversary.accounting`,
  :mod:`adversary.budget` (``get_preset``);
- PyMC building blocks: :mod:`adversary.distributions`;
- attack scenarios: :mod:`adversary.scenarios` (one module per attack) and
  :func:`load_case` for the case studies in ``models/``;
- inference: :func:`sample` (exact Gibbs steps for every discrete variable),
  :func:`enumerate_posterior` (exact posterior tables), :func:`posterior_probability`,
  :func:`marginal_pmf`;
- risk: :func:`sweep`, :func:`compare_priors`, :func:`monte_carlo_measures`,
  :func:`choose_rho`, and the reproduction report :mod:`adversary.reproduction`.

Names are imported on first use, so ``import adversary`` stays cheap and
``adversary.noise`` never loads PyMC.
"""

from importlib import import_module

__version__ = "0.1.0"

_LAZY = {
    "attack": "adversary.scenarios.user_attack",
    "exact_measures": "adversary.measures.exact",
    "posterior_pmf": "adversary.inference",
    "get_preset": "adversary.budget",
    "load_case": "adversary.model_files",
    "sample": "adversary.inference",
    "enumerate_posterior": "adversary.inference",
    "posterior_probability": "adversary.inference",
    "marginal_pmf": "adversary.inference",
    "sweep": "adversary.analyses.compare",
    "compare_priors": "adversary.analyses.compare",
    "to_table": "adversary.analyses.compare",
    "monte_carlo_measures": "adversary.measures.monte_carlo",
    "choose_rho": "adversary.analyses.choose_rho",
}

__all__ = ["__version__", *sorted(_LAZY)]


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module 'adversary' has no attribute {name!r}")


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
