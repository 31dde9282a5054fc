"""The data holder's measures (layer 4): what every attack shares below the scenarios.

- :mod:`~adversary.measures.marginal` — :class:`MarginalMeasures`, the result
  of (3.3), (3.4) and (3.6) for one case and prior;
- :mod:`~adversary.measures.releases` — sums over the releases a mechanism can
  produce, with tail cut-offs;
- :mod:`~adversary.measures.noise` — a release's noise as the scenarios take
  it (ρ and convention, or a mechanism) and its table;
- :mod:`~adversary.measures.monte_carlo` — the measures of any PyMC attack
  model by simulation.
"""
