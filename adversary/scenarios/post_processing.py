"""The post-processed release of Kazan & Reiter (2023), supplement S6, computed exactly.

The data holder does not publish the noisy block count ``x1*`` but a
post-processed count ``x̃1``: taking the block-group count ``x̃2`` as fixed,
the noisy counts of block g1 and of the d other blocks are moved to sum to
``x̃2`` by least squares (S6.1), which gives the share (S6.2)

    x̄1 = (d x1* + (x̃2 - y1*)) / (d + 1),

and ``x̃1 = f(x1*, y1*, x̃2)`` is ``x̄1`` clipped to ``[0, x̃2]`` and rounded to
the nearest integer (S6.3). Ties (``x̄1`` exactly halfway between two integers,
possible only when ``d + 1`` is even) are rounded **up**, i.e.
``[x̄1] = ⌊x̄1 + 1/2⌋``; every step is done in exact integer arithmetic.

The adversary sees ``x̃1`` (and ``x̃2``), knows the target's block except the
target (known count ``m``: ``X1 ∈ {m, m+1}``, ``P[X1 = m+1] = p``) and knows the
block-group count ``x2`` exactly, so the other blocks hold ``Y1 = x2 - X1``.
Their likelihood of ``x̃1`` is the indicator (S6.4) summed over the noisy
counts (S6.5)–(S6.6). Because ``f`` depends on ``(x1*, y1*)`` only through
``s = d x1* - y1*``, and

    d x1* - y1* = (d + 1) X1 - x2 + V,    V = d Z1 - W,

with ``Z1 ~ DG(σ²)`` the noise of ``x1*`` and ``W`` the noise of ``y1*``, the
double sum is a single sum over the distribution of ``V``
(:func:`combined_noise`). ``W`` is ``DG(dσ²)`` under the approximation (3.7)
the paper uses (default) or the exact sum of d independent ``DG(σ²)``
(``exact_sum=True``, :func:`adversary.noise.sums.sum_of_discrete_gaussians`).

Truncation. ``Z1`` and ``W`` are tabulated on grids that each leave out at
most ``tail_mass / 2`` of their probability, so the table of ``V`` misses at
most ``omitted_mass ≤ tail_mass`` (reported by :func:`release_table`). Every
likelihood ``P[x̃1 | X1 = k]`` is then underestimated, and the errors summed
over ``x̃1`` are at most ``omitted_mass`` for each ``k``. The marginal
posterior (S6.8) ``M = Σ_j π(j) L_T(j)`` has ``∂M/∂L_T(j) ∈ [0, 1]`` and
``|∂M/∂L_O(j)| ≤ (1 - p_T)/p_T`` (``T`` the truth, ``O`` the other value,
``p_T`` the prior of the truth), so the computed marginal posterior is within
``omitted_mass / p_T`` of the exact one and the marginal risk within
``omitted_mass / p_T²``.

The data holder's measures. :func:`marginals` gives the marginal posterior
(S6.8), the marginal risk and the probability that the adversary's Bayes
decision from ``x̃1`` (:func:`decision`) is right, each with an error bound;
:class:`PostProcessingCase` is a concrete case (the
:class:`~adversary.measures.protocol.Attack` interface); :func:`marginal_by_x2_tilde`
and :func:`marginal_by_rho` are Figure 6's two panels. The decision
probability is not monotone in ``x̃2``: it swings with the fractional part of
``(x̃2 - x2)/(d + 1)`` (at ρ1 ≈ 0.0992, p = 1/2, d = 27: 0.593, 0.647, 0.537,
0.510 for x̃2 = 1, 10, 20, 100, against 0.589 from ``x1*`` alone).

"Without post-processing". The paper's Figure 6 compares (S6.8) with "the
marginal disclosure risk without post-processing". Two quantities fit that
phrase: the single-block marginal risk (3.4) of an adversary who sees only
``x1*`` (:func:`adversary.scenarios.single_block.marginal_risk`), and the
marginal risk of this same adversary seeing the noisy counts ``x1*`` and
``y1*`` that ``x̃1`` is computed from (:func:`unprocessed_marginal_risk`).
Only the second is an upper bound by a theorem: ``x̃1`` is a function of
``(x1*, y1*)``, and the marginal posterior ``Σ_D P[D, T]² / (p_T P[D])`` can
only decrease when observations ``D`` are merged (Sedrakyan's inequality).

Numbers that differ from S6's text (p = 1/2, m = 0, x1 = x2 = 1; S6 does not
state d, we take the case study's d = 27). The single-block risk (3.4) is not
an upper bound for every x̃2: at ρ1 ≈ 0.0992 it is 1.047333, while (S6.8)
gives 1.047961 for x̃2 = 100 (and exceeds it from x̃2 ≈ 70 on); the
``(x1*, y1*)`` risk, 1.049005, bounds every x̃2. ``d x1* - y1*`` carries more
information about X1 than ``x1*`` alone (for d = 1 the post-processed risk
exceeds (3.4) at every ρ1). Nor does the risk rise with x̃2 at every ρ1: at
ρ1 = 2 it is 1.619, 1.589, 1.443 for x̃2 = 1, 10, 100, because the share is
shifted by ``(x̃2 - x2)/(d + 1)`` and a shift near a half-integer makes the
rounding hide an almost noiseless count. At the ρ1 of Figure 6 and below, it
rises toward the bound as S6 says.

**Other noise.** Every function takes ``mechanism=`` (one
:class:`~adversary.noise.mechanisms.NoiseMechanism`, the noise of every
block's count) instead of ``rho`` (pass ``None``) and ``convention``. ``W`` is
then the exact sum of d copies
(:meth:`~adversary.noise.mechanisms.NoiseMechanism.sum_table`): the
approximation (3.7) is the discrete Gaussian's, so ``exact_sum`` defaults to
false for discrete Gaussians (ρ or mechanism, the same numbers) and to true
for other noise, and false is refused for it. Bounded noise is tabulated in
full (``omitted_mass`` 0, up to the rounding of a long FFT sum). The curves
over ρ (:func:`marginal_by_rho`) are the discrete Gaussian's.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import xarray as xr
from scipy import special

from .._validation import as_counts, as_integers, as_positive, as_probability
from ..measures.marginal import MarginalMeasures
from ..measures.noise import resolve
from ..measures.protocol import CaseFields
from ..measures.protocol import prior_label as prior_label_of
from ..measures.releases import DEFAULT_TAIL_MASS
from ..noise import discrete_gaussian, noise_variance
from ..noise.finite_pmf import FinitePmf
from ..noise.mechanisms import NoiseMechanism
from ..noise.sums import sum_of_discrete_gaussians
from . import single_block

__all__ = [
    "PostProcessedMarginals",
    "PostProcessedReleases",
    "PostProcessingCase",
    "combined_noise",
    "correct_decision_probability",
    "decision",
    "likelihood",
    "marginal_by_rho",
    "marginal_by_x2_tilde",
    "marginal_posterior",
    "marginal_risk",
    "marginals",
    "model",
    "post_process",
    "post_process_graph",
    "posterior",
    "release_table",
    "risk",
    "unprocessed_marginal_posterior",
    "unprocessed_marginal_risk",
]

# Inputs of f are kept below this magnitude so that 2·(d x1* - y1* + x̃2) + d + 1 fits in int64.
_MAX_INPUT = 2**30


def _scalar_count(value, name: str, minimum: int = 0) -> int:
    """A single integer ``>= minimum`` (d, x2, x̃2, m), with the argument named on error."""
    array = as_counts(value, name)
    if array.ndim != 0:
        raise ValueError(f"{name} must be a single integer, got {value!r}")
    if array < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value!r}")
    if array >= _MAX_INPUT:
        raise ValueError(f"{name} must be below 2**30, got {value!r}")
    return int(array)


def _rounded_share(numerator, d: int, x2_tilde) -> np.ndarray:
    """``clip(⌊N/(d+1) + 1/2⌋, 0, x̃2)`` in integer arithmetic, ``N = d x1* - y1* + x̃2``.

    ``⌊N/D + 1/2⌋ = ⌊(2N + D)/(2D)⌋``, and numpy's ``//`` on integers is floor
    division for negative numerators too. Rounding before clipping gives the
    same result as (S6.3)'s clip-then-round, because 0 and ``x̃2`` are integers.
    """
    denominator = d + 1
    rounded = (2 * numerator + denominator) // (2 * denominator)
    return np.clip(rounded, 0, x2_tilde)


def post_process(x1_star, y1_star, x2_tilde, d) -> np.ndarray:
    """The post-processing function ``f(x1*, y1*, x̃2)`` of (S6.2)–(S6.3), as int64.

    ``x̄1 = (d x1* + (x̃2 - y1*))/(d + 1)`` (S6.2), clipped to ``[0, x̃2]`` and
    rounded to the nearest integer, ties upwards (``⌊x̄1 + 1/2⌋``). Exact
    integer arithmetic; broadcasts ``x1_star``, ``y1_star`` and ``x2_tilde``.
    ``d`` is the number of other blocks in the block group (``>= 1``).
    """
    x1_star = as_integers(x1_star, "x1_star")
    y1_star = as_integers(y1_star, "y1_star")
    x2_tilde = as_counts(x2_tilde, "x2_tilde")
    d = _scalar_count(d, "d", minimum=1)
    for name, array in (("x1_star", x1_star), ("y1_star", y1_star), ("x2_tilde", x2_tilde)):
        if np.any(np.abs(array) >= _MAX_INPUT):
            raise ValueError(f"{name} must be below 2**30 in magnitude, got {array!r}")
    return _rounded_share(d * x1_star - y1_star + x2_tilde, d, x2_tilde)


def _noise(rho, convention, mechanism, exact_sum):
    """``(σ² | None, mechanism | None, exact_sum)`` with ``exact_sum``'s default per noise."""
    sigma2, mech = resolve(rho, convention, mechanism)
    return sigma2, mech, _exact_sum(exact_sum, mech)


def _exact_sum(exact_sum, mechanism) -> bool:
    """``exact_sum`` or its default: false for the discrete Gaussian, true for other noise."""
    if exact_sum is None:
        return mechanism is not None
    if not exact_sum and mechanism is not None:
        raise ValueError(
            "exact_sum: the approximation (3.7) replaces a sum of discrete Gaussians by one; "
            f"{mechanism.label} needs exact_sum=True (the default for it)"
        )
    return bool(exact_sum)


def combined_noise(
    d,
    sigma2=None,
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    *,
    mechanism=None,
) -> FinitePmf:
    """The pmf of ``V = d Z1 - W``, the noise of ``d x1* - y1*`` (see the module docstring).

    ``Z1 ~ DG(0, σ²)`` is the noise of the target's block; ``W`` that of
    ``y1*``: ``DG(0, dσ²)`` by the approximation (3.7) or, with
    ``exact_sum=True``, the exact sum of d independent ``DG(0, σ²)``. Each of
    ``Z1`` and ``W`` is cut where it leaves out at most ``tail_mass / 2``;
    ``omitted_mass`` of the result bounds the probability ``V``'s table misses.
    Computed by one direct convolution (sums of positive products: every
    entry has a relative error of a few ulp). ``mechanism`` instead of
    ``sigma2``: ``Z1`` from it and ``W`` the exact sum of d copies (bounded
    noise in full).
    """
    d = _scalar_count(d, "d", minimum=1)
    if mechanism is not None:
        if sigma2 is not None:
            raise ValueError("sigma2: give sigma2 or mechanism, not both (got both)")
        sigma2, mechanism = resolve(None, "paper", mechanism)
    exact_sum = _exact_sum(exact_sum, mechanism)
    if mechanism is not None:
        z, w = _mechanism_tables(d, mechanism, tail_mass)
    else:
        z, w = _noise_tables(d, sigma2, exact_sum, tail_mass)
    reach = -z.start
    # d·Z1 on the grid -d·reach .. d·reach, zero between multiples of d.
    stretched = np.zeros(2 * d * reach + 1)
    stretched[::d] = z.probabilities
    # -W has the reversed table, starting at -(largest value of W).
    minus_w = w.probabilities[::-1]
    minus_w_start = -(w.start + w.probabilities.size - 1)
    return FinitePmf(
        start=-d * reach + minus_w_start,
        probabilities=np.convolve(stretched, minus_w),
        omitted_mass=z.omitted_mass + w.omitted_mass,
    )


def _noise_tables(d: int, sigma2, exact_sum: bool, tail_mass) -> tuple[FinitePmf, FinitePmf]:
    """Tables of ``Z1 ~ DG(σ²)`` and of ``W`` (noise of ``y1*``), each missing ≤ ``tail_mass/2``."""
    sigma2 = as_positive(sigma2, "sigma2")
    if sigma2.ndim != 0:
        raise ValueError(f"sigma2 must be a single number here, got {sigma2!r}")
    sigma2 = float(sigma2)
    half = float(as_probability(tail_mass, "tail_mass")) / 2.0
    z = _dg_table(sigma2, half)
    w = sum_of_discrete_gaussians(d, sigma2, half) if exact_sum else _dg_table(d * sigma2, half)
    return z, w


def _mechanism_tables(d: int, mechanism: NoiseMechanism, tail_mass) -> tuple[FinitePmf, FinitePmf]:
    """Tables of ``Z1`` and of ``W``, the exact sum of d copies (bounded noise in full)."""
    half = 0.0 if mechanism.bounded else float(as_probability(tail_mass, "tail_mass")) / 2.0
    return mechanism.table(half), mechanism.sum_table(d, half)


def _dg_table(sigma2: float, tail_mass: float) -> FinitePmf:
    """``DG(0, σ²)`` tabulated on ``[-K, K]``, ``K`` from ``discrete_gaussian.cutoff``."""
    reach = int(discrete_gaussian.cutoff(sigma2, tail_mass))
    return FinitePmf(
        start=-reach,
        probabilities=discrete_gaussian.pmf(np.arange(-reach, reach + 1), sigma2),
        omitted_mass=2.0 * float(discrete_gaussian.tail_bound(reach + 1, sigma2)),
    )


# --- the adversary's likelihood (S6.5)–(S6.6) ---------------------------------------------


@dataclass(frozen=True)
class PostProcessedReleases:
    """``P[X̃1 = j | X1 = k, X̃2 = x̃2]`` for ``j = 0 … x̃2`` and ``k ∈ {m, m+1}``, per ρ.

    ``probabilities[..., i, j]`` is the probability of the release ``x̃1 = j``
    when ``X1 = m + i`` (``i = 0, 1``), for each element ``...`` of ``rho``;
    ``omitted_mass[...]`` bounds the probability the truncated noise tables
    leave out (each row sums to at least ``1 - omitted_mass``).
    """

    known_count: int
    x2_tilde: int
    probabilities: np.ndarray
    omitted_mass: np.ndarray

    @property
    def log_probabilities(self) -> np.ndarray:
        """``log`` of :attr:`probabilities`; ``-inf`` where a release is beyond the tables."""
        with np.errstate(divide="ignore"):
            return np.log(self.probabilities)


def _validated_scenario(d, x2, x2_tilde, known_count):
    d = _scalar_count(d, "d", minimum=1)
    known = _scalar_count(known_count, "known_count")
    x2 = _scalar_count(x2, "x2")
    x2_tilde = _scalar_count(x2_tilde, "x2_tilde")
    if x2 < known + 1:
        raise ValueError(
            f"x2 must be >= known_count + 1 (the block group holds the block's {known} known "
            f"records and possibly the target), got x2={x2} with known_count={known}"
        )
    return d, x2, x2_tilde, known


def _rows_from_noise(noise: FinitePmf, d, x2, x2_tilde, known) -> np.ndarray:
    """Rows ``k = m, m+1`` of ``P[X̃1 = j | X1 = k]`` from the table of ``V``."""
    counts = np.array([known, known + 1], dtype=np.int64)[:, None]
    # N = d x1* - y1* + x̃2 = (d + 1) k - x2 + x̃2 + V.
    numerator = (d + 1) * counts + (x2_tilde - x2) + noise.support[None, :]
    released = _rounded_share(numerator, d, x2_tilde)
    return np.stack(
        [np.bincount(row, weights=noise.probabilities, minlength=x2_tilde + 1) for row in released]
    )


def release_table(
    rho=None,
    *,
    d,
    x2,
    x2_tilde,
    known_count=0,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    mechanism=None,
) -> PostProcessedReleases:
    """The adversary's likelihood (S6.5)–(S6.6) of every release ``x̃1 ∈ {0 … x̃2}``.

    ``P[X̃1 = j | X1 = k, x̃2] = Σ_{x1*, y1*} 1[j = f(x1*, y1*, x̃2)] P[x1* | k] P[y1* | k]``
    with ``x1* ~ k + DG(σ²)`` and ``y1* ~ (x2 - k) + W``, summed as one sum over
    ``V = d Z1 - W`` (:func:`combined_noise`). Vectorised over ``rho``; ``d``,
    ``x2``, ``x̃2`` and ``m`` are single integers.

    Parameters
    ----------
    rho : float or array
        zCDP parameter of the block counts, σ² from ``convention``.
    d : int
        Number of other blocks in the block group (``>= 1``).
    x2 : int
        The block-group count, known to the adversary (``>= m + 1``).
    x2_tilde : int
        The post-processed block-group count ``x̃2 >= 0``, taken as fixed.
    known_count : int
        ``m``, the target's block count without the target.
    exact_sum : bool
        Noise of ``y1*``: ``DG(dσ²)`` by (3.7) if false, the exact sum of d
        ``DG(σ²)`` if true.
    tail_mass : float
        Bound on the noise probability the tables may leave out.
    """
    d, x2, x2_tilde, known = _validated_scenario(d, x2, x2_tilde, known_count)
    (table,) = _release_tables(
        rho, d, x2, [x2_tilde], known, convention, exact_sum, tail_mass, mechanism
    )
    return table


def _release_tables(rho, d, x2, x2_tildes, known, convention, exact_sum, tail_mass, mechanism=None):
    """:func:`release_table` for each of ``x2_tildes`` (validated), one noise table per σ²."""
    sigma2, mech, exact_sum = _noise(rho, convention, mechanism, exact_sum)
    if mech is not None:
        noise = combined_noise(d, None, True, tail_mass, mechanism=mech)
        return [
            PostProcessedReleases(
                known,
                int(x),
                _rows_from_noise(noise, d, x2, x, known),
                np.asarray(noise.omitted_mass),
            )
            for x in x2_tildes
        ]
    sigma2 = np.asarray(sigma2)
    probabilities = [np.empty((*sigma2.shape, 2, x + 1)) for x in x2_tildes]
    omitted = np.empty(sigma2.shape)
    for value in np.unique(sigma2):
        at = sigma2 == value
        noise = combined_noise(d, value, exact_sum, tail_mass)
        omitted[at] = noise.omitted_mass
        for table, x2_tilde in zip(probabilities, x2_tildes, strict=True):
            table[at] = _rows_from_noise(noise, d, x2, x2_tilde, known)
    return [
        PostProcessedReleases(known, int(x), table, omitted.copy())
        for x, table in zip(x2_tildes, probabilities, strict=True)
    ]


def _released_value(x1_tilde, x2_tilde: int) -> np.ndarray:
    x1_tilde = as_integers(x1_tilde, "x1_tilde")
    if np.any((x1_tilde < 0) | (x1_tilde > x2_tilde)):
        raise ValueError(
            f"x1_tilde must lie in 0..x2_tilde (= {x2_tilde}): f clips to that range, "
            f"got {x1_tilde!r}"
        )
    return x1_tilde


def likelihood(
    x1_tilde,
    count,
    rho=None,
    *,
    d,
    x2,
    x2_tilde,
    known_count=0,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    mechanism=None,
) -> np.ndarray:
    """``P[X̃1 = x̃1 | X1 = count, X̃2 = x̃2]``, equations (S6.5)–(S6.6).

    ``count`` is ``m`` or ``m + 1``; broadcasts ``x1_tilde``, ``count`` and
    ``rho``. Other arguments as :func:`release_table`.
    """
    d, x2, x2_tilde, known = _validated_scenario(d, x2, x2_tilde, known_count)
    x1_tilde = _released_value(x1_tilde, x2_tilde)
    count = as_counts(count, "count")
    if np.any((count != known) & (count != known + 1)):
        raise ValueError(f"count must be known_count or known_count + 1, got {count!r}")
    table = release_table(
        rho,
        d=d,
        x2=x2,
        x2_tilde=x2_tilde,
        known_count=known,
        convention=convention,
        exact_sum=exact_sum,
        tail_mass=tail_mass,
        mechanism=mechanism,
    )
    rho_shape = table.omitted_mass.shape
    shape = np.broadcast_shapes(x1_tilde.shape, count.shape, rho_shape)
    rho_index = np.broadcast_to(
        np.arange(table.omitted_mass.size).reshape(rho_shape), shape
    ).reshape(-1)
    flat = table.probabilities.reshape(-1, 2, x2_tilde + 1)
    rows = np.broadcast_to(count - known, shape).reshape(-1)
    columns = np.broadcast_to(x1_tilde, shape).reshape(-1)
    return flat[rho_index, rows, columns].reshape(shape)


# --- posterior (S6.7), its marginal (S6.8), risks -----------------------------------------


def _true_count(known: int, true_count) -> np.ndarray:
    """The truth ``x1``: ``m + 1`` by default, else ``m`` or ``m + 1``."""
    if true_count is None:
        return np.asarray(known + 1)
    truth = as_counts(true_count, "true_count")
    if np.any((truth != known) & (truth != known + 1)):
        raise ValueError(
            f"true_count must equal known_count or known_count + 1, got true_count={true_count!r}"
            f" with known_count={known}"
        )
    return truth


def _posterior_of_truth(prior_of_truth, log_truth, log_other):
    """``p_T L_T / (p_T L_T + (1 - p_T) L_O)`` from log likelihoods, element-wise.

    Where ``L_O = 0`` (beyond the tables) and ``L_T > 0`` the value is 1; where
    ``L_T = 0`` it is 0 (those releases carry no probability under the truth).
    """
    both = np.isfinite(log_truth) & np.isfinite(log_other)
    difference = np.where(both, log_truth, 0.0) - np.where(both, log_other, 0.0)
    value = special.expit(special.logit(prior_of_truth) + difference)
    return np.where(both, value, np.where(np.isfinite(log_truth), 1.0, 0.0))


def posterior(
    x1_tilde,
    prior,
    rho=None,
    *,
    d,
    x2,
    x2_tilde,
    known_count=0,
    true_count=None,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    mechanism=None,
) -> np.ndarray:
    """Posterior probability of the truth given the post-processed release, equation (S6.7).

    With the default truth ``x1 = m + 1``:
    ``P[X1 = m+1 | x̃1, x̃2] = L1 p / (L1 p + L0 (1 - p))``, ``Lk = P[X̃1 = x̃1 | X1 = k, x̃2]``
    from :func:`release_table`. Broadcasts ``x1_tilde``, ``prior``, ``rho`` and
    ``true_count``. Raises ``ValueError`` if the release lies beyond the noise
    tables under either value of ``X1`` (probability below ``omitted_mass``):
    pass a smaller ``tail_mass``.
    """
    d, x2, x2_tilde, known = _validated_scenario(d, x2, x2_tilde, known_count)
    x1_tilde = _released_value(x1_tilde, x2_tilde)
    prior = as_probability(prior, "prior")
    truth = _true_count(known, true_count)
    common = dict(
        d=d,
        x2=x2,
        x2_tilde=x2_tilde,
        known_count=known,
        convention=convention,
        exact_sum=exact_sum,
        tail_mass=tail_mass,
        mechanism=mechanism,
    )
    with_c = likelihood(x1_tilde, known + 1, rho, **common)
    without_c = likelihood(x1_tilde, known, rho, **common)
    mech = resolve(rho, convention, mechanism)[1]
    if mech is not None and mech.bounded:  # exact tables: a zero is a real zero
        if np.any((with_c == 0) & (without_c == 0)):
            raise ValueError(
                f"x1_tilde: a release in {x1_tilde!r} is impossible under both X1 = {known} "
                f"and {known + 1} with {mech.label} noise"
            )
    elif np.any((with_c == 0) | (without_c == 0)):
        raise ValueError(
            f"x1_tilde: a release in {x1_tilde!r} has probability below the noise tables' "
            f"omitted mass under X1 = {known} or {known + 1}; its posterior needs a smaller "
            f"tail_mass than {tail_mass}"
        )
    has_c = truth == known + 1
    prior_of_truth = np.where(has_c, prior, 1.0 - prior)
    with np.errstate(divide="ignore"):
        log_with, log_without = np.log(with_c), np.log(without_c)
    log_truth = np.where(has_c, log_with, log_without)
    log_other = np.where(has_c, log_without, log_with)
    return _posterior_of_truth(prior_of_truth, log_truth, log_other)


def risk(
    x1_tilde,
    prior,
    rho=None,
    *,
    d,
    x2,
    x2_tilde,
    known_count=0,
    true_count=None,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    mechanism=None,
) -> np.ndarray:
    """Disclosure risk of a post-processed release: (S6.7) over the prior of the truth, as (3.2)."""
    prior = as_probability(prior, "prior")
    known = _scalar_count(known_count, "known_count")
    truth = _true_count(known, true_count)
    value = posterior(
        x1_tilde,
        prior,
        rho,
        d=d,
        x2=x2,
        x2_tilde=x2_tilde,
        known_count=known,
        true_count=true_count,
        convention=convention,
        exact_sum=exact_sum,
        tail_mass=tail_mass,
        mechanism=mechanism,
    )
    return value / np.where(truth == known + 1, prior, 1.0 - prior)


@dataclass(frozen=True)
class PostProcessedMarginals:
    """The data holder's measures of the S6 attack for a truth, with their error bounds.

    Arrays have the broadcast shape of ``prior``, ``rho`` and ``true_count``.

    Attributes
    ----------
    marginal_posterior, marginal_risk, correct_decision_probability
        (S6.8), its ratio to the prior of the truth (as (3.4)), and the
        probability that the Bayes decision (:func:`decision`) from ``x̃1`` is
        right (as (3.6)).
    posterior_error_bound, risk_error_bound
        ``omitted_mass / p_T`` and ``omitted_mass / p_T²`` (module docstring).
    decision_error_bound
        ``omitted_mass`` plus the probability, under the truth, of the
        releases whose decision the truncation could flip (see :func:`marginals`).
    omitted_mass
        Bound on the noise probability the tables leave out (per ``rho``).
    """

    marginal_posterior: np.ndarray
    marginal_risk: np.ndarray
    correct_decision_probability: np.ndarray
    posterior_error_bound: np.ndarray
    risk_error_bound: np.ndarray
    decision_error_bound: np.ndarray
    omitted_mass: np.ndarray


def _table_marginals(table: PostProcessedReleases, prior, truth) -> PostProcessedMarginals:
    """:class:`PostProcessedMarginals` from a release table, broadcasting prior and truth."""
    known, width = table.known_count, table.x2_tilde + 1
    rho_index = np.arange(table.omitted_mass.size).reshape(table.omitted_mass.shape)
    prior, rho_index, truth = np.broadcast_arrays(prior, rho_index, truth)
    rows = table.log_probabilities.reshape(-1, 2, width)[rho_index]  # (..., 2, J)
    omitted = table.omitted_mass.reshape(-1)[rho_index]
    has_c = truth == known + 1
    log_truth = np.where(has_c[..., None], rows[..., 1, :], rows[..., 0, :])
    log_other = np.where(has_c[..., None], rows[..., 0, :], rows[..., 1, :])
    prior_of_truth = np.where(has_c, prior, 1.0 - prior)
    of_truth = _posterior_of_truth(prior_of_truth[..., None], log_truth, log_other)
    truth_rows = np.exp(log_truth)
    posterior = np.sum(of_truth * truth_rows, axis=-1)

    # The Bayes decision at each x̃1: m + 1 iff Δ = p L1 - (1 - p) L0 ≥ 0 (ties up).
    with_c, without_c = np.exp(rows[..., 1, :]), np.exp(rows[..., 0, :])
    p1, p0 = prior[..., None], 1.0 - prior[..., None]
    difference = p1 * with_c - p0 * without_c
    decides_c = difference >= 0.0
    correct = np.where(has_c[..., None], decides_c, ~decides_c)
    decision = np.sum(np.where(correct, truth_rows, 0.0), axis=-1)
    # Each computed L underestimates the exact one by e ∈ [0, ω] (ω = omitted mass), so
    # the exact Δ lies in [Δ - p0 ω, Δ + p1 ω]; outside that bracket's sign change the
    # decision is certain. Certain releases err by their e_T (≤ ω in total); uncertain
    # ones may flip, costing at most their probability under the truth.
    w = omitted[..., None]
    certain = (difference - p0 * w >= 0.0) | (difference + p1 * w < 0.0)
    decision_bound = omitted + np.sum(np.where(certain, 0.0, truth_rows), axis=-1)
    return PostProcessedMarginals(
        marginal_posterior=posterior,
        marginal_risk=posterior / prior_of_truth,
        correct_decision_probability=decision,
        posterior_error_bound=omitted / prior_of_truth,
        risk_error_bound=omitted / prior_of_truth**2,
        decision_error_bound=decision_bound,
        omitted_mass=omitted,
    )


def marginals(
    prior,
    rho=None,
    *,
    d,
    x2,
    x2_tilde,
    known_count=0,
    true_count=None,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    mechanism=None,
) -> PostProcessedMarginals:
    """Marginal posterior (S6.8), marginal risk and correct-decision probability, with bounds.

    Sums over every post-processed release ``x̃1 ∈ {0 … x̃2}`` with its
    probability under the truth from :func:`release_table`. The Bayes decision
    at ``x̃1`` is ``m + 1`` iff ``p L1 ≥ (1 - p) L0`` (:func:`decision`).
    Error bounds: the marginal posterior is within ``omitted_mass / p_T`` and
    the risk within ``omitted_mass / p_T²`` (module docstring). For the decision
    probability, the computed likelihoods each fall short of the exact ones by
    at most ``ω = omitted_mass``, so the exact ``Δ = p L1 - (1-p) L0`` lies in
    ``[Δ̂ - (1-p)ω, Δ̂ + pω]``; releases where that bracket holds 0 might be
    decided the other way, and the bound is ``ω`` plus their probability
    under the truth (in practice none: the bound is ``ω``; a degenerate tie
    such as ``x̃2 = 0`` with ``p = 1/2`` is reported with a bound near 1).
    Broadcasts ``prior``, ``rho`` and ``true_count``; other arguments as
    :func:`release_table`.
    """
    d, x2, x2_tilde, known = _validated_scenario(d, x2, x2_tilde, known_count)
    prior = as_probability(prior, "prior")
    truth = _true_count(known, true_count)
    table = release_table(
        rho,
        d=d,
        x2=x2,
        x2_tilde=x2_tilde,
        known_count=known,
        convention=convention,
        exact_sum=exact_sum,
        tail_mass=tail_mass,
        mechanism=mechanism,
    )
    return _table_marginals(table, prior, truth)


def marginal_posterior(
    prior,
    rho=None,
    *,
    d,
    x2,
    x2_tilde,
    known_count=0,
    true_count=None,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    mechanism=None,
) -> np.ndarray:
    """Posterior of the truth averaged over post-processed releases from the truth, (S6.8).

    ``Σ_{x̃1=0}^{x̃2} P[X1 = x1 | x̃1, x̃2] P[X̃1 = x̃1 | X1 = x1, x̃2]`` — the analogue
    of (3.3). Within ``omitted_mass / p_T`` of the exact value (module
    docstring; ``p_T`` is the prior of the truth). Broadcasts ``prior``,
    ``rho`` and ``true_count``. See :func:`marginals` for all measures at once.
    """
    return marginals(
        prior,
        rho,
        d=d,
        x2=x2,
        x2_tilde=x2_tilde,
        known_count=known_count,
        true_count=true_count,
        convention=convention,
        exact_sum=exact_sum,
        tail_mass=tail_mass,
        mechanism=mechanism,
    ).marginal_posterior


def marginal_risk(
    prior,
    rho=None,
    *,
    d,
    x2,
    x2_tilde,
    known_count=0,
    true_count=None,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    mechanism=None,
) -> np.ndarray:
    """Marginal disclosure risk with post-processing: (S6.8) over the prior of the truth.

    The quantity of the paper's Figure 6 (there ``p = 1/2``, ``x2 = 1``,
    ``m = 0``). Within ``omitted_mass / p_T²`` of the exact value.
    """
    return marginals(
        prior,
        rho,
        d=d,
        x2=x2,
        x2_tilde=x2_tilde,
        known_count=known_count,
        true_count=true_count,
        convention=convention,
        exact_sum=exact_sum,
        tail_mass=tail_mass,
        mechanism=mechanism,
    ).marginal_risk


def decision(
    x1_tilde,
    prior,
    rho=None,
    *,
    d,
    x2,
    x2_tilde,
    known_count=0,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    mechanism=None,
) -> np.ndarray:
    """The Bayes estimate of ``X1`` under 0-1 loss from ``x̃1``, as (3.5) with (S6.7).

    ``m + 1`` where ``p L1 ≥ (1 - p) L0`` (its posterior is at least 1/2; ties
    go to ``m + 1`` as in :func:`.single_block.decision`), else ``m``, with
    ``Lk = P[X̃1 = x̃1 | X1 = k, x̃2]``. Broadcasts ``x1_tilde``, ``prior`` and ``rho``.
    """
    d, x2, x2_tilde, known = _validated_scenario(d, x2, x2_tilde, known_count)
    x1_tilde = _released_value(x1_tilde, x2_tilde)
    prior = as_probability(prior, "prior")
    common = dict(
        d=d,
        x2=x2,
        x2_tilde=x2_tilde,
        known_count=known,
        convention=convention,
        exact_sum=exact_sum,
        tail_mass=tail_mass,
        mechanism=mechanism,
    )
    with_c = likelihood(x1_tilde, known + 1, rho, **common)
    without_c = likelihood(x1_tilde, known, rho, **common)
    return known + (prior * with_c - (1.0 - prior) * without_c >= 0.0).astype(np.int64)


def correct_decision_probability(
    prior,
    rho=None,
    *,
    d,
    x2,
    x2_tilde,
    known_count=0,
    true_count=None,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    mechanism=None,
) -> np.ndarray:
    """Probability that the Bayes decision (:func:`decision`) from ``x̃1`` is right, as (3.6).

    ``Σ_{x̃1} P[X̃1 = x̃1 | X1 = x1, x̃2] 1[decision(x̃1) = x1]``; its error bound
    is in :func:`marginals`.
    """
    return marginals(
        prior,
        rho,
        d=d,
        x2=x2,
        x2_tilde=x2_tilde,
        known_count=known_count,
        true_count=true_count,
        convention=convention,
        exact_sum=exact_sum,
        tail_mass=tail_mass,
        mechanism=mechanism,
    ).correct_decision_probability


# --- the same adversary seeing the noisy counts themselves --------------------------------


def _unprocessed_for_sigma2(sigma2, prior_of_truth, delta, d, exact_sum, tail_mass):
    """``E_T[P[X1 = x1 | x1*, y1*]]`` for one σ², a 1-d array of priors of the truth.

    ``delta = x1 - (other value)`` is ``+1`` (truth ``m + 1``) or ``-1``. With
    ``x1* = x1 + z`` and ``y1* = x2 - x1 + w`` the log likelihood ratio of the
    truth is ``log pZ(z) - log pZ(z + δ) + log pW(w) - log pW(w - δ)``; under (3.7)
    it is ``(2 δ v + d + 1)/(2 d σ²)`` with ``v = d z - w``, a function of ``v``
    alone (``d x1* - y1*`` is sufficient), so one sum over ``V`` suffices.
    """
    if not exact_sum:
        noise = combined_noise(d, sigma2, False, tail_mass)
        log_ratio = (2.0 * delta * noise.support + (d + 1)) / (2.0 * d * sigma2)
        values = special.expit(special.logit(prior_of_truth)[:, None] + log_ratio[None, :])
        return values @ noise.probabilities
    z, w = _noise_tables(d, sigma2, True, tail_mass)
    log_truth = z.logpmf(z.support)[:, None] + w.logpmf(w.support)[None, :]
    log_other = z.logpmf(z.support + delta)[:, None] + w.logpmf(w.support - delta)[None, :]
    weights = np.exp(log_truth)
    return np.array(
        [
            np.sum(weights * _posterior_of_truth(value, log_truth, log_other))
            for value in prior_of_truth
        ]
    )


def _unprocessed_for_mechanism(mechanism, prior_of_truth, delta, d, tail_mass):
    """:func:`_unprocessed_for_sigma2` for any noise: ``Z1`` from the mechanism, ``W`` its
    exact d-fold sum (tabulated), summed over both tables."""
    z, w = _mechanism_tables(d, mechanism, tail_mass)
    zs, ws = z.support, w.support
    with np.errstate(divide="ignore"):
        log_truth = mechanism.logpmf(zs)[:, None] + w.logpmf(ws)[None, :]
        log_other = mechanism.logpmf(zs + delta)[:, None] + w.logpmf(ws - delta)[None, :]
    weights = z.probabilities[:, None] * w.probabilities[None, :]
    return np.array(
        [
            np.sum(weights * _posterior_of_truth(value, log_truth, log_other))
            for value in prior_of_truth
        ]
    )


def unprocessed_marginal_posterior(
    prior,
    rho=None,
    *,
    d,
    x2,
    known_count=0,
    true_count=None,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    mechanism=None,
) -> np.ndarray:
    """Marginal posterior of the truth for the S6 adversary seeing ``x1*`` and ``y1*``.

    The counterpart of (S6.8) without post-processing: same prior, same known
    ``x2``, same noise model (``exact_sum``), but the adversary observes the
    noisy counts ``(x1*, y1*)`` that ``x̃1 = f(x1*, y1*, x̃2)`` is computed from;
    averaged over ``(x1*, y1*)`` drawn from the truth. By the data-processing
    argument of the module docstring, (S6.8) never exceeds it (up to the
    truncation bounds). It does not depend on ``x2`` or ``m`` beyond their
    validation. Broadcasts ``prior``, ``rho`` and ``true_count``.
    """
    d, x2, _, known = _validated_scenario(d, x2, 0, known_count)
    prior = as_probability(prior, "prior")
    truth = _true_count(known, true_count)
    sigma2, mech, exact_sum = _noise(rho, convention, mechanism, exact_sum)
    if mech is not None:
        prior, truth = np.broadcast_arrays(prior, truth)
        has_c = truth == known + 1
        prior_of_truth = np.where(has_c, prior, 1.0 - prior)
        out = np.empty(prior.shape)
        for flag in (True, False):
            at = has_c == flag
            if np.any(at):
                out[at] = _unprocessed_for_mechanism(
                    mech, prior_of_truth[at], 1 if flag else -1, d, tail_mass
                )
        return out
    sigma2 = np.asarray(sigma2)
    prior, sigma2, truth = np.broadcast_arrays(prior, sigma2, truth)
    has_c = truth == known + 1
    prior_of_truth = np.where(has_c, prior, 1.0 - prior)
    out = np.empty(prior.shape)
    for value in np.unique(sigma2):
        for flag in (True, False):
            at = (sigma2 == value) & (has_c == flag)
            if np.any(at):
                out[at] = _unprocessed_for_sigma2(
                    float(value), prior_of_truth[at], 1 if flag else -1, d, exact_sum, tail_mass
                )
    return out


def unprocessed_marginal_risk(
    prior,
    rho=None,
    *,
    d,
    x2,
    known_count=0,
    true_count=None,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    mechanism=None,
) -> np.ndarray:
    """:func:`unprocessed_marginal_posterior` over the prior of the truth.

    The marginal risk without post-processing; an upper bound on :func:`marginal_risk`.
    """
    prior = as_probability(prior, "prior")
    known = _scalar_count(known_count, "known_count")
    truth = _true_count(known, true_count)
    value = unprocessed_marginal_posterior(
        prior,
        rho,
        d=d,
        x2=x2,
        known_count=known,
        true_count=true_count,
        convention=convention,
        exact_sum=exact_sum,
        tail_mass=tail_mass,
        mechanism=mechanism,
    )
    return value / np.where(truth == known + 1, prior, 1.0 - prior)


# --- the PyMC model -----------------------------------------------------------------------


def post_process_graph(x1_star, y1_star, x2_tilde, d: int):
    """:func:`post_process` as a PyTensor int64 graph (same integer arithmetic, ties up).

    ``clip(⌊(2N + d + 1) / (2(d + 1))⌋, 0, x̃2)`` with ``N = d x1* - y1* + x̃2``;
    PyTensor's integer ``//`` is floor division, as numpy's.
    """
    import pytensor.tensor as pt

    x1_star = pt.cast(pt.as_tensor_variable(x1_star), "int64")
    y1_star = pt.cast(pt.as_tensor_variable(y1_star), "int64")
    x2_tilde = pt.cast(pt.as_tensor_variable(x2_tilde), "int64")
    denominator = np.int64(d + 1)
    numerator = np.int64(d) * x1_star - y1_star + x2_tilde
    rounded = (np.int64(2) * numerator + denominator) // (np.int64(2) * denominator)
    return pt.clip(rounded, np.int64(0), x2_tilde)


def model(
    x1_tilde,
    prior,
    rho=None,
    *,
    d,
    x2,
    x2_tilde,
    known_count=0,
    convention="paper",
    mechanism=None,
    tail_mass: float = DEFAULT_TAIL_MASS,
):
    """The S6 attack as a PyMC model: latents ``X1``, ``x1_star``, ``y1_star``; ``x̃1`` observed.

    - ``X1 ~ BernoulliCount(known=m, p)``: ``X1 ∈ {m, m+1}``, ``P[X1 = m+1] = p``;
    - ``x1_star ~ DiscreteGaussian(X1, σ²)``: the unpublished noisy block count;
    - ``y1_star ~ DiscreteGaussian(x2 - X1, d σ²)``: the unpublished sum of the other
      d blocks' noisy counts, by the approximation (3.7), with ``x2`` known;
    - ``Potential("x1_tilde")``: the indicator likelihood (S6.4),
      ``log 1[x̃1 = f(x1*, y1*, x̃2)]`` (0 or ``-inf``), with ``f`` of (S6.3) in
      integer arithmetic (:func:`post_process_graph`).

    Summing the latents ``x1_star`` and ``y1_star`` out gives (S6.5)–(S6.6),
    so the posterior of ``X1`` is (S6.7) (:func:`posterior` with the default
    ``exact_sum=False``). The noisy counts start at ``x1* = x̃1``,
    ``y1* = x̃2 - x̃1``, where ``x̄1 = x̃1`` exactly, so the start is feasible.

    Only the approximation (3.7) is modelled (no ``exact_sum``). ``x1_star``
    and ``y1_star`` are unbounded: :func:`adversary.inference.enumerate_posterior` needs
    stated ranges for them (a dozen standard deviations around both
    hypotheses' centres suffice), and under Gibbs sampling they mix slowly
    when ``x̃1`` is interior (given ``y1*``, the indicator leaves ``x1*`` one or
    two values), while ``X1`` mixes well.

    With a ``mechanism`` other than the discrete Gaussian, ``x1_star`` is a
    :func:`~adversary.distributions.NoiseRelease` and ``y1_star`` the exact sum
    of d noises, tabulated (:func:`~adversary.distributions.tabulated_noise.TabulatedNoise`,
    cut at ``tail_mass`` unless bounded): (S6.7) with the exact sum. With
    bounded noise the start above may lie off the support; give ``initvals``
    to the sampler then.
    """
    import pymc as pm
    import pytensor.tensor as pt

    from ..distributions import BernoulliCount, DiscreteGaussian, NoiseRelease
    from ..distributions.tabulated_noise import TabulatedNoise

    d, x2, x2_tilde, known = _validated_scenario(d, x2, x2_tilde, known_count)
    x1_tilde = _released_value(x1_tilde, x2_tilde)
    prior = as_probability(prior, "prior")
    sigma2, mech = resolve(rho, convention, mechanism)
    for name, value in (("x1_tilde", x1_tilde), ("prior", prior), ("rho", sigma2)):
        if np.ndim(value) != 0:
            raise ValueError(f"{name} must be a single number for one model, got {value!r}")
    x1_tilde, prior = int(x1_tilde), float(prior)

    with pm.Model() as attack:
        x1 = BernoulliCount("X1", known=known, p=prior)
        starts = {"x1_star": np.int64(x1_tilde), "y1_star": np.int64(x2_tilde - x1_tilde)}
        if mech is None:
            sigma2 = float(sigma2)
            x1_star = DiscreteGaussian("x1_star", mu=x1, sigma2=sigma2, initval=starts["x1_star"])
            y1_star = DiscreteGaussian(
                "y1_star", mu=np.int64(x2) - x1, sigma2=d * sigma2, initval=starts["y1_star"]
            )
        else:
            _, sums = _mechanism_tables(d, mech, tail_mass)
            x1_star = NoiseRelease("x1_star", mu=x1, mechanism=mech, initval=starts["x1_star"])
            y1_star = TabulatedNoise(
                "y1_star", mu=np.int64(x2) - x1, table=sums, initval=starts["y1_star"]
            )
        released = post_process_graph(x1_star, y1_star, x2_tilde, d)
        pm.Potential(
            "x1_tilde",
            pt.switch(pt.eq(released, np.int64(x1_tilde)), np.float64(0.0), np.float64(-np.inf)),
        )
    return attack


# --- S6's Figure 6 curves -----------------------------------------------------------------


def _block_rho() -> float:
    """ρ1 ≈ 0.0992 of Figure 6: the 2020 persons file's block-level detailed query."""
    from ..budget import get_preset

    return float(get_preset().rho("block", "detailed"))


def _one_d(values, name: str, check) -> np.ndarray:
    array = check(values, name)
    if array.ndim > 1:
        raise ValueError(f"{name} must be a number or a 1-d sequence, got shape {array.shape}")
    return np.atleast_1d(array)


_MEASURE_NAMES = (
    "marginal_posterior",
    "marginal_risk",
    "correct_decision_probability",
    "posterior_error_bound",
    "risk_error_bound",
    "decision_error_bound",
    "omitted_mass",
)


def _curve(
    rho,
    priors,
    x2_tildes,
    d,
    x2,
    known,
    true_count,
    convention,
    exact_sum,
    tail_mass,
    mechanism=None,
):
    """Measures over ``(x2_tilde, *rho.shape, prior)``; comparisons over ``(*rho.shape, prior)``."""
    truth = _true_count(known, true_count)
    if mechanism is None:
        rho = np.asarray(rho)[..., None]  # broadcast against the prior axis
    tables = _release_tables(
        rho, d, x2, x2_tildes, known, convention, exact_sum, tail_mass, mechanism
    )
    results = [_table_marginals(table, priors, truth) for table in tables]
    measures = {name: np.stack([getattr(r, name) for r in results]) for name in _MEASURE_NAMES}
    common = dict(
        known_count=known, true_count=true_count, convention=convention, mechanism=mechanism
    )
    alongside = {
        "unprocessed_marginal_risk": unprocessed_marginal_risk(
            priors, rho, d=d, x2=x2, exact_sum=exact_sum, tail_mass=tail_mass, **common
        ),
        "single_block_marginal_risk": single_block.marginal_risk(
            priors, rho, tail_mass=tail_mass, **common
        ),
        "single_block_correct_decision_probability": single_block.correct_decision_probability(
            priors, rho, tail_mass=tail_mass, **common
        ),
    }
    return measures, {
        k: np.broadcast_to(v, results[0].omitted_mass.shape) for k, v in alongside.items()
    }


def _attrs(d, x2, known, true_count, convention, exact_sum, tail_mass) -> dict:
    return {
        "d": d,
        "x2": x2,
        "known_count": known,
        "true_count": int(_true_count(known, true_count)),
        "convention": str(convention),
        "exact_sum": int(bool(exact_sum)),
        "tail_mass": float(tail_mass),
        "source": "Kazan & Reiter (2023), supplement S6, (S6.8) and Figure 6",
    }


def marginal_by_x2_tilde(
    x2_tildes=None,
    *,
    prior=0.5,
    rho=None,
    d: int = 27,
    x2: int = 1,
    known_count: int = 0,
    true_count=None,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    mechanism=None,
) -> xr.Dataset:
    """S6's Figure 6, left panel: the measures with post-processing against ``x̃2``.

    ``x2_tildes`` default ``1 … 100``; ``rho`` default the 2020 block-level
    detailed query's ρ1 ≈ 0.0992 (the paper's convention); ``prior`` a number
    or 1-d sequence of p (default 1/2, as S6); ``d = 27`` (S6 does not state
    d; the case study's), ``x2 = 1`` known, ``m = 0``, truth ``x1 = m + 1``.

    Returns a Dataset over ``(x2_tilde, prior)`` with the measures of
    :class:`PostProcessedMarginals` and, over ``prior`` alone, the two
    comparisons: ``unprocessed_marginal_risk`` (the same adversary seeing
    ``x1*`` and ``y1*``; the bound, :func:`unprocessed_marginal_risk`) and
    ``single_block_marginal_risk`` / ``single_block_correct_decision_probability``
    (an adversary seeing only ``x1*``, (3.4) and (3.6); not a bound, see the
    module docstring). ``mechanism`` replaces ``rho`` and ``convention`` (the
    coordinate ``mechanism`` then labels it instead of ``rho``).
    """
    d, x2, _, known = _validated_scenario(d, x2, 0, known_count)
    x2_tildes = (
        np.arange(1, 101) if x2_tildes is None else _one_d(x2_tildes, "x2_tildes", as_counts)
    )
    x2_tildes = [_scalar_count(x, "x2_tildes") for x in x2_tildes]
    if mechanism is None:
        rho = _block_rho() if rho is None else rho
        if np.ndim(rho) != 0:
            raise ValueError(f"rho must be a single number here, got {rho!r}")
        noise_variance(rho, convention)
        rho = np.float64(rho)
    else:
        exact_sum = _noise(rho, convention, mechanism, exact_sum)[2]
    priors = _one_d(prior, "prior", as_probability)
    measures, alongside = _curve(
        rho,
        priors,
        x2_tildes,
        d,
        x2,
        known,
        true_count,
        convention,
        exact_sum,
        tail_mass,
        mechanism,
    )
    data = {name: (("x2_tilde", "prior"), value) for name, value in measures.items()}
    data.update({name: (("prior",), value) for name, value in alongside.items()})
    coords = {"x2_tilde": x2_tildes, "prior": priors}
    if mechanism is None:
        coords["rho"] = float(rho)
    else:
        coords["mechanism"] = mechanism.label
    attrs = _attrs(d, x2, known, true_count, convention, exact_sum, tail_mass)
    if mechanism is not None:
        attrs["convention"] = "mechanism"
    return xr.Dataset(data, coords=coords, attrs=attrs)


def marginal_by_rho(
    rhos=None,
    *,
    x2_tildes=(1, 10, 100),
    prior=0.5,
    d: int = 27,
    x2: int = 1,
    known_count: int = 0,
    true_count=None,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
) -> xr.Dataset:
    """S6's Figure 6, right panel: the measures with post-processing against ρ1, per ``x̃2``.

    ``rhos`` default 41 values log-spaced from 0.01 to 1; ``x2_tildes`` default
    ``(1, 10, 100)`` as the figure; other arguments as :func:`marginal_by_x2_tilde`.
    Returns a Dataset over ``(x2_tilde, rho, prior)`` with the measures of
    :class:`PostProcessedMarginals` and, over ``(rho, prior)``, the
    comparisons ``unprocessed_marginal_risk``, ``single_block_marginal_risk``
    and ``single_block_correct_decision_probability``. Attribute
    ``reference_rho`` is the figure's dashed line, ρ1 ≈ 0.0992.
    """
    d, x2, _, known = _validated_scenario(d, x2, 0, known_count)
    rhos = np.geomspace(0.01, 1.0, 41) if rhos is None else _one_d(rhos, "rhos", as_positive)
    x2_tildes = [_scalar_count(x, "x2_tildes") for x in _one_d(x2_tildes, "x2_tildes", as_counts)]
    noise_variance(rhos, convention)
    priors = _one_d(prior, "prior", as_probability)
    measures, alongside = _curve(
        rhos, priors, x2_tildes, d, x2, known, true_count, convention, exact_sum, tail_mass
    )
    data = {name: (("x2_tilde", "rho", "prior"), value) for name, value in measures.items()}
    data.update({name: (("rho", "prior"), value) for name, value in alongside.items()})
    coords = {"x2_tilde": x2_tildes, "rho": rhos, "prior": priors}
    attrs = _attrs(d, x2, known, true_count, convention, exact_sum, tail_mass)
    attrs["reference_rho"] = _block_rho()
    return xr.Dataset(data, coords=coords, attrs=attrs)


# --- a concrete case ----------------------------------------------------------------------


@dataclass(frozen=True)
class PostProcessingCase(CaseFields):
    """A concrete S6 attack: the post-processed release seen, priors held, and the truth.

    Implements :class:`~adversary.measures.protocol.Attack`. ``rho`` is the
    block counts' ρ (``convention`` gives σ²); ``d`` the other blocks of the
    block group; ``x2`` the block-group count the adversary knows; ``x2_tilde``
    the post-processed block-group count; ``priors`` maps a label to
    ``p = P[X1 = m + 1]``; ``true_count`` is the data holder's ``x1``
    (default ``m + 1``); ``exact_sum`` the noise model of ``y1*`` (the
    approximation (3.7) by default). ``observed_x1_tilde`` is the
    post-processed block count :meth:`model` and :meth:`posterior` condition
    on (``None``: none stated). It must lie in ``0 … x̃2``; that is checked
    where it is used, so a sweep of ``x2_tilde`` over a case works for the
    marginal measures, which do not depend on it. ``mechanism``, if given, is
    the noise of the block counts instead of ``rho`` (then ``None``) and
    ``convention``; ``exact_sum`` defaults to false for discrete Gaussians and
    true otherwise.
    """

    name: str
    rho: float | None
    priors: dict[str, float]
    d: int
    x2: int
    x2_tilde: int
    observed_x1_tilde: int | None = None
    known_count: int = 0
    true_count: int | None = None
    convention: str = "paper"
    exact_sum: bool | None = None
    description: str = ""
    mechanism: NoiseMechanism | None = None

    def __post_init__(self):
        _validated_scenario(self.d, self.x2, self.x2_tilde, self.known_count)
        _true_count(int(self.known_count), self.true_count)
        if self.rho is not None and np.ndim(self.rho) != 0:
            raise ValueError(f"rho must be a single number, got {self.rho!r}")
        exact_sum = _noise(self.rho, self.convention, self.mechanism, self.exact_sum)[2]
        object.__setattr__(self, "exact_sum", exact_sum)
        if not self.priors:
            raise ValueError("priors must map at least one label to a prior probability")
        as_probability(list(self.priors.values()), "priors")
        if self.observed_x1_tilde is not None:
            _scalar_count(self.observed_x1_tilde, "observed_x1_tilde")

    @property
    def target(self) -> str:
        """The latent of the decision: the block count ``X1``."""
        return "X1"

    @property
    def true_latents(self) -> dict[str, int]:
        """``{"X1": x1}``; the model's noisy counts ``x1_star``, ``y1_star`` have no fixed truth."""
        return {"X1": self.truth}

    @property
    def truth(self) -> int:
        """The data holder's true block count ``x1`` (``m + 1`` unless given)."""
        return int(_true_count(int(self.known_count), self.true_count))

    def _prior(self, prior_label: str | None) -> float:
        return float(self.priors[prior_label_of(self.priors, prior_label)])

    def _scenario(self) -> dict:
        return {
            "d": self.d,
            "x2": self.x2,
            "x2_tilde": self.x2_tilde,
            "known_count": self.known_count,
            "convention": self.convention,
            "mechanism": self.mechanism,
        }

    def _observed(self) -> int:
        if self.observed_x1_tilde is None:
            raise ValueError(
                "observed_x1_tilde: the case states no post-processed release to condition on"
            )
        value = int(self.observed_x1_tilde)
        if value > self.x2_tilde:
            raise ValueError(
                f"observed_x1_tilde must lie in 0..x2_tilde (= {self.x2_tilde}), got {value}"
            )
        return value

    def model(self, prior_label: str | None = None):
        """The PyMC model (:func:`model`) given ``observed_x1_tilde``, under one prior.

        Only the approximation (3.7) is modelled for the discrete Gaussian: such
        a case with ``exact_sum`` set raises (other noise is modelled with the
        exact sum). Enumerating it needs stated ranges for the noisy counts
        (:meth:`enumeration_ranges`).
        """
        gaussian = resolve(self.rho, self.convention, self.mechanism)[1] is None
        if self.exact_sum and gaussian:
            raise ValueError(
                "exact_sum: the PyMC model uses the approximation (3.7) only; use the exact "
                "functions (posterior, marginal_measures) for the exact sum"
            )
        return model(self._observed(), self._prior(prior_label), self.rho, **self._scenario())

    def enumeration_ranges(self, sds: float = 12.0) -> dict[str, tuple[int, int]]:
        """Ranges of the model's ``x1_star`` and ``y1_star`` for
        :func:`adversary.inference.enumerate_posterior`: ``sds`` standard deviations beyond
        both hypotheses' centres (12 leave out less than ``e^{-70}`` of each noise).
        """
        m = int(self.known_count)
        sigma2, mech = resolve(self.rho, self.convention, self.mechanism)
        if mech is not None:  # the tables' reach (the whole support of bounded noise)
            z, w = _mechanism_tables(self.d, mech, DEFAULT_TAIL_MASS)
            a = int(z.support[-1]) + 1
            return {
                "x1_star": (m - a, m + 1 + a),
                "y1_star": (self.x2 - m - 1 + int(w.start), self.x2 - m + int(w.support[-1])),
            }
        sigma = float(np.sqrt(sigma2))
        a = int(sds * sigma) + 2
        b = int(sds * sigma * np.sqrt(self.d)) + 2
        return {
            "x1_star": (m - a, m + 1 + a),
            "y1_star": (self.x2 - m - 1 - b, self.x2 - m + b),
        }

    def posterior(self, prior_label: str | None = None) -> float:
        """The adversary's posterior (S6.7) of the truth given ``observed_x1_tilde``."""
        return float(
            posterior(
                self._observed(),
                self._prior(prior_label),
                self.rho,
                true_count=self.true_count,
                exact_sum=self.exact_sum,
                **self._scenario(),
            )
        )

    def marginal_measures(
        self, prior_label: str | None = None, tail_mass: float = DEFAULT_TAIL_MASS
    ) -> MarginalMeasures:
        """(S6.8), its risk and the correct-decision probability, from :func:`marginals`.

        ``omitted_mass`` bounds the noise probability the tables leave out;
        ``error_bound`` is the larger of the marginal posterior's and the
        decision probability's bounds; the risk's bound and the rest are in
        ``details``.
        """
        p = self._prior(prior_label)
        result = marginals(
            p,
            self.rho,
            true_count=self.true_count,
            exact_sum=self.exact_sum,
            tail_mass=tail_mass,
            **self._scenario(),
        )
        return MarginalMeasures(
            marginal_posterior=float(result.marginal_posterior),
            marginal_risk=float(result.marginal_risk),
            correct_decision_probability=float(result.correct_decision_probability),
            prior_of_truth=p if self.truth == int(self.known_count) + 1 else 1.0 - p,
            omitted_mass=float(result.omitted_mass),
            error_bound=float(max(result.posterior_error_bound, result.decision_error_bound)),
            details={
                "posterior_error_bound": float(result.posterior_error_bound),
                "risk_error_bound": float(result.risk_error_bound),
                "decision_error_bound": float(result.decision_error_bound),
                "x2_tilde": int(self.x2_tilde),
                "exact_sum": bool(self.exact_sum),
            },
        )
