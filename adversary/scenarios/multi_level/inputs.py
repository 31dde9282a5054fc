"""Inputs of the ℓ-level attack, checked: ρ per level, noise, known counts, releases, truth.

Arrays carry the levels on their last axis (level 1 = the block); every
check raises a ``ValueError`` naming the argument.
"""

from __future__ import annotations

import numpy as np

from ..._validation import as_counts, as_integers, as_positive, last_axis, nonempty_last_axis
from ...budget import DEFAULT_PRESET, BudgetAllocation, as_allocation
from ...measures.noise import resolve_many
from ...noise import noise_variance

#: The levels of S1.3 in their order ℓ = 1..6 (budget-preset level keys).
LEVELS_2020 = ("block", "block_group", "tract", "county", "state", "us")


def rhos_2020(
    levels: int = 6, *, preset: str | BudgetAllocation = DEFAULT_PRESET, query: str = "detailed"
):
    """ρ of ``query`` at the first ``levels`` levels of block → block group → tract → county
    → state → US (:data:`LEVELS_2020`, the order of S1.3), from a budget: a preset's
    name, a :class:`~adversary.budget.BudgetAllocation` or a budget file
    (:func:`~adversary.budget.as_allocation`).

    The default is the 2020 persons file's detailed (GVHR) query, paper
    Table 2: ≈ 0.0992, 0.2465, 0.0504, 0.0514, 0.0505, 0.0509. The noise
    convention is chosen where ρ is used, not here.
    """
    if (
        isinstance(levels, bool)
        or not isinstance(levels, int | np.integer)
        or not 1 <= levels <= len(LEVELS_2020)
    ):
        raise ValueError(f"levels must be an integer from 1 to {len(LEVELS_2020)}, got {levels!r}")
    allocation = as_allocation(preset, "preset")
    return np.array([allocation.rho(level, query) for level in LEVELS_2020[:levels]])


def checked_rhos(rhos) -> np.ndarray:
    """ρ per level as float64 with the levels on the last axis (≥ 1 level, every ρ > 0)."""
    return nonempty_last_axis(as_positive(rhos, "rhos"), "rhos", "one ρ per level (at least one)")


def level_noise(rhos, convention, mechanism, n_levels: int | None = None):
    """``(σ² with the levels on the last axis | None, mechanisms | None, ℓ)``.

    ``rhos`` (with ``convention``) or ``mechanism`` (one per level, or one for
    the ``n_levels`` levels the releases fix); all-discrete-Gaussian mechanisms
    give their σ² (the closed-form path).
    """
    if mechanism is None:
        if rhos is None:
            raise ValueError("rhos: give rhos (with convention) or mechanism")
        rhos = checked_rhos(rhos)
        return noise_variance(rhos, convention), None, rhos.shape[-1]
    sigma2, mechanisms = resolve_many(rhos, convention, mechanism, n_levels, "rhos")
    n = len(mechanisms) if sigma2 is None else sigma2.shape[-1]
    return sigma2, mechanisms, n


def level_count(releases) -> int | None:
    """ℓ from the releases' last axis (for one mechanism given for every level)."""
    releases = np.asarray(releases)
    return int(releases.shape[-1]) if releases.ndim else None


def checked_known_counts(known_counts, n_levels: int) -> np.ndarray:
    """``m_i`` with the levels on the last axis; a number means the same m at every level."""
    if known_counts is None:
        return np.zeros(n_levels, dtype=np.int64)
    known = as_counts(known_counts, "known_counts")
    if known.ndim == 0:
        return np.full(n_levels, known, dtype=np.int64)
    last_axis(known, n_levels, "known_counts", f"one count per level ({n_levels} levels from rhos)")
    if np.any(np.diff(known, axis=-1) < 0):
        raise ValueError(
            "known_counts must not decrease from one level to the next (the levels are nested, "
            f"so a higher level holds everyone of a lower one), got {known_counts!r}"
        )
    return known


def checked_releases(releases, n_levels: int, name: str = "releases") -> np.ndarray:
    what = f"one noisy count per level ({n_levels} levels from rhos)"
    return last_axis(as_integers(releases, name), n_levels, name, what)


def truth_has_c(known_first: np.ndarray, true_count) -> np.ndarray:
    """True where the truth is ``x1 = m_1 + 1``; ``true_count`` must be ``m_1`` or ``m_1 + 1``."""
    if true_count is None:
        return np.ones(known_first.shape, dtype=bool)
    truth = as_counts(true_count, "true_count")
    if np.any((truth != known_first) & (truth != known_first + 1)):
        raise ValueError(
            "true_count must equal the level-1 known count m_1 or m_1 + 1, got "
            f"true_count={true_count!r} with m_1={known_first!r}"
        )
    return truth == known_first + 1


# --- the adversary's posterior (S1.1) ----------------------------------------------------
