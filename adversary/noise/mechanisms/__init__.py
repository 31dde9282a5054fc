"""Additive integer noise mechanisms behind one interface.

A release is ``x* = x + Z`` with ``Z`` drawn from a distribution on the
integers. :class:`NoiseMechanism` is what a scenario needs from ``Z``, whatever
it is: its log-pmf and pmf, its tails, exact draws, its variance, a rigorous
cut-off for sums over the noise, its support, and the privacy guarantee it
gives, where it gives one. The mechanisms:

:class:`DiscreteGaussianNoise`
    ``DG(0, σ²)``, the 2020 Census's (Kazan & Reiter 2023; Canonne, Kamath &
    Steinke 2020, "CKS" below): the adapter around
    :mod:`adversary.noise.discrete_gaussian`. ρ-zCDP.
:class:`DiscreteLaplaceNoise`
    The two-sided geometric ``P[Z = z] ∝ exp(-|z|/b)`` (Ghosh, Roughgarden &
    Sundararajan 2012; Bach 2020, eq. (5); Petti & Flaxman 2020, the 2018 TopDown
    test). Pure ε-DP with ``ε = Δ/b``.
:class:`TruncatedGeometricNoise`
    The two-sided geometric restricted to ``{-E, …, E}`` and renormalised.
    ``(Δ/b, δ)``-DP with ``δ = P[Z > E - Δ]``; never pure ε-DP (Bach 2020, Sec. 2.3).
:class:`CellKeyNoise`
    The cell-key method's maximum-entropy p-table for a variance V and a bound E
    (Bach 2020, Sec. 3.2 and footnote 15; Giessing 2016; the ESS ``ptable``
    tool): ``p_z ∝ exp(-μz²)`` on ``{-E, …, E}`` with μ ≥ 0 solved so that the
    variance is V, which exists iff ``0 < V ≤ E(E+1)/3`` (the uniform table's
    variance; derivation in the class). Not ε-DP and not zCDP; (ε, δ)-DP with
    the exact δ of ``dp_delta``. The tests reproduce Bach's printed numbers:
    footnote 14's ``p1 = 20/(2E+1)³`` for uniform noise exactly, Sec. 3.2's
    ``p1 ≃ O(10⁻⁷)`` at E = 5, V = 2 (1.52e-7) and "practically zero" at
    E = 10, V ≤ 4 (≤ 5.3e-16), and footnote 35's averaging rate (exact
    0.7317 against the 741 and 725 of 1000 samples it reports).
:class:`FinitePmfNoise`
    Any pmf a user tabulates on a finite run of integers.

Conventions shared by all of them:

* ``sf(k) = P[Z ≥ k]`` and ``cdf(k) = P[Z ≤ k]`` — as in
  :mod:`~adversary.noise.discrete_gaussian`, *not* scipy's ``P[Z > k]``.
* ``logpmf`` is ``-inf`` off the support (never NaN); ``pmf`` is 0 there.
* ``cutoff(tail_mass)`` is the smallest ``K ≥ 0`` for which a rigorous upper
  bound on ``P[|Z| > K]`` is at most ``tail_mass``; ``table(tail_mass)`` is the
  pmf on ``[-K, K]`` as a :class:`~adversary.noise.finite_pmf.FinitePmf` whose
  ``omitted_mass`` is that bound. Bounded mechanisms accept ``tail_mass = 0``.
* ``sample(size, rng)`` draws exactly from the distribution with the stored
  float parameters (every Bernoulli decided in integer arithmetic, as in
  :mod:`~adversary.noise.exact_sampling`), takes a seed or a
  ``numpy.random.Generator``, and returns a Python ``int`` for ``size=None``.
* Accounting: :meth:`~NoiseMechanism.zcdp_rho` and
  :meth:`~NoiseMechanism.pure_epsilon` return ``None`` where the mechanism
  gives no such guarantee. ``sensitivity`` is how far one person moves the
  released value (1 for a count under Kazan & Reiter's add/remove
  neighbours): the L2 sensitivity for the discrete Gaussian (√2 for the
  DAS's replace-one histograms), an integer L1 sensitivity for the others
  (2 for replace-one histograms, as in Petti & Flaxman's ``G(ε/2)``).
* Each mechanism is a frozen dataclass: immutable, comparable and hashable,
  so it can key a dict or label a sweep. Parameters are scalars; a sweep is a
  list of mechanisms.
"""

from .base import TAIL_MARGIN as TAIL_MARGIN
from .base import NoiseMechanism
from .cell_key import CellKeyNoise, cell_key_max_variance
from .checks import MAX_BOUND as MAX_BOUND
from .checks import MAX_SCALE as MAX_SCALE
from .discrete_gaussian import DiscreteGaussianNoise
from .discrete_laplace import DiscreteLaplaceNoise
from .finite_pmf import FinitePmfNoise
from .truncated_geometric import TruncatedGeometricNoise

# MAX_BOUND, MAX_SCALE and TAIL_MARGIN are importable from here too (explicit re-exports
# above); the API reference documents them in .checks and .base, which define them.
__all__ = [
    "CellKeyNoise",
    "DiscreteGaussianNoise",
    "DiscreteLaplaceNoise",
    "FinitePmfNoise",
    "NoiseMechanism",
    "TruncatedGeometricNoise",
    "cell_key_max_variance",
]
