"""The data holder's measures (layer 4): what every attack shares below the scenarios.

- :mod:`~adversary.measures.marginal` — :class:`MarginalMeasures`, the result
  of (3.3), (3.4) and (3.6) for one case and prior;
- :mod:`~adversary.measures.releases` — sums over the releases a mechanism can
  produce, with tail cut-offs;
- :mod:`~adversary.measures.noise` — a release's noise as the scenarios take
  it (ρ and convention, or a mechanism) and its table;
- :mod:`~adversary.measures.monte_carlo` — the measures of any PyMC attack
  model by simulation;
- :mod:`~adversary.measures.standard_errors` — the Monte Carlo standard errors
  every simulated measure reports (no PyMC: the closed-form scenarios use them);
- :mod:`~adversary.measures.structure` — a model's functions compiled once per
  structure (its float constants shared variables), so a scan over ρ does
  not recompile;
- :mod:`~adversary.measures.tabulated_likelihood` — the joint log-p on
  (releases × latent cells) from tables of each release scalar's likelihood.
"""
