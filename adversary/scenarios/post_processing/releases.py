"""The adversary's likelihood of a post-processed release, (S6.5)-(S6.6): release tables."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._validation import as_counts, as_integers
from ...measures.releases import DEFAULT_TAIL_MASS
from ...noise.finite_pmf import FinitePmf
from .release_noise import combined_noise, release_noise
from .rule import rounded_share, scalar_count

__all__ = [
    "AttackSetting",
    "PostProcessedReleases",
    "attack_setting",
    "likelihood",
    "release_table",
]


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

    def likelihood(self, x1_tilde: np.ndarray, count: np.ndarray) -> np.ndarray:
        """``P[X̃1 = x̃1 | X1 = count]`` (checked arguments), broadcasting them and the ρ axes."""
        rho_shape = self.omitted_mass.shape
        shape = np.broadcast_shapes(x1_tilde.shape, count.shape, rho_shape)
        rho_index = np.broadcast_to(
            np.arange(self.omitted_mass.size).reshape(rho_shape), shape
        ).reshape(-1)
        flat = self.probabilities.reshape(-1, 2, self.x2_tilde + 1)
        rows = np.broadcast_to(count - self.known_count, shape).reshape(-1)
        columns = np.broadcast_to(x1_tilde, shape).reshape(-1)
        return flat[rho_index, rows, columns].reshape(shape)


@dataclass(frozen=True)
class AttackSetting:
    """The S6 scenario's checked setting (:func:`attack_setting`): counts and noise arguments."""

    d: int
    x2: int
    x2_tilde: int
    known: int
    convention: object = "paper"
    exact_sum: bool | None = None
    tail_mass: float = DEFAULT_TAIL_MASS
    mechanism: object = None

    def tables(self, rho, x2_tildes) -> list[PostProcessedReleases]:
        """:func:`release_table` for each of ``x2_tildes`` (checked), one noise table per σ²."""
        d, x2, known = self.d, self.x2, self.known
        sigma2, mech, exact_sum = release_noise(
            rho, self.convention, self.mechanism, self.exact_sum
        )
        if mech is not None:
            noise = combined_noise(d, None, True, self.tail_mass, mechanism=mech)
            return [
                PostProcessedReleases(
                    known,
                    int(x),
                    rows_from_noise(noise, d, x2, x, known),
                    np.asarray(noise.omitted_mass),
                )
                for x in x2_tildes
            ]
        sigma2 = np.asarray(sigma2)
        probabilities = [np.empty((*sigma2.shape, 2, x + 1)) for x in x2_tildes]
        omitted = np.empty(sigma2.shape)
        for value in np.unique(sigma2):
            at = sigma2 == value
            noise = combined_noise(d, value, exact_sum, self.tail_mass)
            omitted[at] = noise.omitted_mass
            for table, x2_tilde in zip(probabilities, x2_tildes, strict=True):
                table[at] = rows_from_noise(noise, d, x2, x2_tilde, known)
        return [
            PostProcessedReleases(known, int(x), table, omitted.copy())
            for x, table in zip(x2_tildes, probabilities, strict=True)
        ]

    def table(self, rho) -> PostProcessedReleases:
        """:func:`release_table` of the scenario's ``x̃2``."""
        (table,) = self.tables(rho, [self.x2_tilde])
        return table


def attack_setting(
    *,
    d,
    x2,
    x2_tilde,
    known_count=0,
    convention="paper",
    exact_sum: bool | None = None,
    tail_mass: float = DEFAULT_TAIL_MASS,
    mechanism=None,
) -> AttackSetting:
    """The keyword arguments every S6 function takes, checked.

    Parameters
    ----------
    d : int
        Number of other blocks in the block group (``>= 1``).
    x2 : int
        The block-group count, known to the adversary (``>= m + 1``).
    x2_tilde : int
        The post-processed block-group count ``x̃2 >= 0``, taken as fixed.
    known_count : int
        ``m``, the target's block count without the target.
    convention
        How ρ gives σ² (:class:`~adversary.noise.NoiseConvention`).
    exact_sum : bool
        Noise of ``y1*``: ``DG(dσ²)`` by (3.7) if false, the exact sum of d
        ``DG(σ²)`` if true (default: false for ρ, true with ``mechanism``).
    tail_mass : float
        Bound on the noise probability the tables may leave out.
    mechanism
        A noise mechanism in place of ρ and ``convention``.
    """
    d = scalar_count(d, "d", minimum=1)
    known = scalar_count(known_count, "known_count")
    x2 = scalar_count(x2, "x2")
    x2_tilde = scalar_count(x2_tilde, "x2_tilde")
    if x2 < known + 1:
        raise ValueError(
            f"x2 must be >= known_count + 1 (the block group holds the block's {known} known "
            f"records and possibly the target), got x2={x2} with known_count={known}"
        )
    return AttackSetting(d, x2, x2_tilde, known, convention, exact_sum, tail_mass, mechanism)


def rows_from_noise(noise: FinitePmf, d, x2, x2_tilde, known) -> np.ndarray:
    """Rows ``k = m, m+1`` of ``P[X̃1 = j | X1 = k]`` from the table of ``V``."""
    counts = np.array([known, known + 1], dtype=np.int64)[:, None]
    # N = d x1* - y1* + x̃2 = (d + 1) k - x2 + x̃2 + V.
    numerator = (d + 1) * counts + (x2_tilde - x2) + noise.support[None, :]
    released = rounded_share(numerator, d, x2_tilde)
    return np.stack(
        [np.bincount(row, weights=noise.probabilities, minlength=x2_tilde + 1) for row in released]
    )


def release_table(rho=None, **setting) -> PostProcessedReleases:
    """The adversary's likelihood (S6.5)–(S6.6) of every release ``x̃1 ∈ {0 … x̃2}``.

    ``P[X̃1 = j | X1 = k, x̃2] = Σ_{x1*, y1*} 1[j = f(x1*, y1*, x̃2)] P[x1* | k] P[y1* | k]``
    with ``x1* ~ k + DG(σ²)`` and ``y1* ~ (x2 - k) + W``, summed as one sum over
    ``V = d Z1 - W`` (:func:`combined_noise`). Vectorised over ``rho`` (the zCDP
    parameter of the block counts); ``setting`` is the keyword arguments of
    :func:`attack_setting`.
    """
    return attack_setting(**setting).table(rho)


def released_value(x1_tilde, x2_tilde: int) -> np.ndarray:
    x1_tilde = as_integers(x1_tilde, "x1_tilde")
    if np.any((x1_tilde < 0) | (x1_tilde > x2_tilde)):
        raise ValueError(
            f"x1_tilde must lie in 0..x2_tilde (= {x2_tilde}): f clips to that range, "
            f"got {x1_tilde!r}"
        )
    return x1_tilde


def likelihood(x1_tilde, count, rho=None, **setting) -> np.ndarray:
    """``P[X̃1 = x̃1 | X1 = count, X̃2 = x̃2]``, equations (S6.5)–(S6.6).

    ``count`` is ``m`` or ``m + 1``; broadcasts ``x1_tilde``, ``count`` and
    ``rho``; ``setting`` as :func:`release_table`.
    """
    chosen = attack_setting(**setting)
    x1_tilde = released_value(x1_tilde, chosen.x2_tilde)
    count = as_counts(count, "count")
    if np.any((count != chosen.known) & (count != chosen.known + 1)):
        raise ValueError(f"count must be known_count or known_count + 1, got {count!r}")
    return chosen.table(rho).likelihood(x1_tilde, count)
