"""adversary: disclosure risk of noisy count releases against a Bayesian adversary.

The public API, by layer (each layer imports only the ones above it in this list):

1. noise and accounting: :mod:`adversary.noise`, :mod:`adversary.accounting`,
   :mod:`adversary.budget` (``get_preset``, ``as_allocation``: a preset, an allocation or
   a budget file, :mod:`adversary.budget_files`); the memory budget every grid is
   checked against, :mod:`adversary.memory` (:func:`memory_budget`);
2. PyMC building blocks: :mod:`adversary.distributions`;
3. inference: :func:`sample` (exact Gibbs steps for every discrete variable),
   :func:`enumerate_posterior` (exact posterior tables), :func:`posterior_probability`,
   :func:`marginal_pmf`, :func:`posterior_pmf`;
4. the data holder's measures of any attack, :mod:`adversary.measures`:
   :func:`exact_measures` (summed over the release grid), :func:`monte_carlo_measures`,
   the one decision rule and the attack protocol;
5. attack scenarios: :mod:`adversary.scenarios` (one module per attack),
   :func:`attack` (a PyMC model factory of your own as an attack) and
   :func:`load_case` for model files and the case studies in ``models/``;
6. analyses across attacks, :mod:`adversary.analyses`: :func:`sweep`,
   :func:`compare_priors`, :func:`to_table`, :func:`choose_rho`; the population
   assessment :mod:`adversary.population`;
7. faces: reports, plots, the command line (``adversary``, ``python -m adversary``)
   and the reproduction report :mod:`adversary.reproduction`.

Names and modules are imported on first use (``adversary.inference`` needs no import
of its own), so ``import adversary`` stays cheap and ``adversary.noise`` never loads PyMC.
"""

from pkgutil import iter_modules

from ._lazy import lazy_names

__version__ = "0.1.0"

_LAZY = {
    "attack": "adversary.scenarios.user_attack",
    "exact_measures": "adversary.measures.exact",
    "posterior_pmf": "adversary.inference",
    "get_preset": "adversary.budget",
    "as_allocation": "adversary.budget",
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
    "memory_budget": "adversary.memory",
}

#: The public modules (every module and subpackage not named with ``_``), imported on first
#: use too: ``import adversary`` then ``adversary.inference.sample(...)`` works as after
#: ``import adversary.inference``. Listed from the package's folder, nothing imported.
MODULES = tuple(
    sorted(info.name for info in iter_modules(__path__) if not info.name.startswith("_"))
)

__all__ = ["__version__", *sorted(_LAZY)]


__getattr__, __dir__ = lazy_names(__name__, _LAZY | dict.fromkeys(MODULES), globals())
