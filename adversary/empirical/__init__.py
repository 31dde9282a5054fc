"""Empirical and exact privacy loss, and the hypothesis-testing view of DP.

:mod:`.privacy_loss`
    Petti & Flaxman's (2020) empirical privacy loss (EPL) estimator from
    samples, and the exact privacy loss random variable of additive integer
    noise with a known pmf (discrete Gaussian, two-sided geometric, any pmf).
:mod:`.hypothesis_testing`
    The largest true-positive rate at a false-positive rate: the (ε, δ)-DP
    bound the JASON (2022) report tabulates (Table 5-7), Gaussian DP, and the
    exact Neyman–Pearson trade-off of additive integer noise.
"""

from . import hypothesis_testing, privacy_loss

__all__ = ["hypothesis_testing", "privacy_loss"]
