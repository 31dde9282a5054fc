"""The noise of S6's post-processed release: ``V = d Z1 - W`` and its tables.

``Z1`` is the block count's noise, ``W`` the other d blocks' summed noise:
``DG(dσ²)`` under the approximation (3.7) or the exact d-fold sum.
"""

from __future__ import annotations

import numpy as np

from ..._validation import as_positive, as_probability
from ...measures.noise import resolve
from ...measures.releases import DEFAULT_TAIL_MASS
from ...noise import discrete_gaussian
from ...noise.finite_pmf import FinitePmf
from ...noise.mechanisms import NoiseMechanism
from ...noise.sums import sum_of_discrete_gaussians
from .rule import scalar_count

__all__ = ["MAX_CONVOLUTION_WORK", "combined_noise"]

#: Most multiply-adds of the direct convolution behind V's table (about ten seconds);
#: wider noise is refused rather than left running for hours.
MAX_CONVOLUTION_WORK = 2e10


def release_noise(rho, convention, mechanism, exact_sum):
    """``(σ² | None, mechanism | None, exact_sum)`` with ``exact_sum``'s default per noise."""
    sigma2, mech = resolve(rho, convention, mechanism)
    return sigma2, mech, resolved_exact_sum(exact_sum, mech)


def resolved_exact_sum(exact_sum, mechanism) -> bool:
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
    d = scalar_count(d, "d", minimum=1)
    if mechanism is not None:
        if sigma2 is not None:
            raise ValueError("sigma2: give sigma2 or mechanism, not both (got both)")
        sigma2, mechanism = resolve(None, "paper", mechanism)
    exact_sum = resolved_exact_sum(exact_sum, mechanism)
    if mechanism is not None:
        z, w = mechanism_tables(d, mechanism, tail_mass)
    else:
        z, w = noise_tables(d, sigma2, exact_sum, tail_mass)
    reach = -z.start
    work = (2 * d * reach + 1) * w.probabilities.size
    if work > MAX_CONVOLUTION_WORK:
        raise ValueError(
            f"the noise of d x1* - y1* is a direct convolution of {2 * d * reach + 1:,} x "
            f"{w.probabilities.size:,} values ({work:.2g} multiply-adds, more than "
            f"{MAX_CONVOLUTION_WORK:.0e}): the noise is too wide; choose a larger rho"
        )
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


def noise_tables(d: int, sigma2, exact_sum: bool, tail_mass) -> tuple[FinitePmf, FinitePmf]:
    """Tables of ``Z1 ~ DG(σ²)`` and of ``W`` (noise of ``y1*``), each missing ≤ ``tail_mass/2``."""
    sigma2 = as_positive(sigma2, "sigma2")
    if sigma2.ndim != 0:
        raise ValueError(f"sigma2 must be a single number here, got {sigma2!r}")
    sigma2 = float(sigma2)
    half = float(as_probability(tail_mass, "tail_mass")) / 2.0
    z = discrete_gaussian.table(sigma2, half)
    w = (
        sum_of_discrete_gaussians(d, sigma2, half)
        if exact_sum
        else discrete_gaussian.table(d * sigma2, half)
    )
    return z, w


def mechanism_tables(d: int, mechanism: NoiseMechanism, tail_mass) -> tuple[FinitePmf, FinitePmf]:
    """Tables of ``Z1`` and of ``W``, the exact sum of d copies (bounded noise in full)."""
    half = 0.0 if mechanism.bounded else float(as_probability(tail_mass, "tail_mass")) / 2.0
    return mechanism.table(half), mechanism.sum_table(d, half)
