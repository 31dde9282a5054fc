"""The noise laws of the block-group attack's three releases (Kazan & Reiter Sec. 3.2, (3.7)).

``x1* = X1 + Z1``, ``x2* = X2 + Z2`` and ``y1* = (X2 - X1) + Zy`` with
``Z1 ~ DG(σ1²)``, ``Z2 ~ DG(σ2²)`` and ``Zy`` the sum of d iid ``DG(σ1²)``.
``sum_noise="approximate"`` takes ``Zy ~ DG(d σ1²)``, the paper's (3.7)
(parameter ``ρ1/d``); ``"exact"`` uses the exact pmf of the sum
(:mod:`adversary.noise.sums`).

**Other noise.** :func:`noise_model` takes ``mechanism=`` instead of ``rho1``,
``rho2`` (pass ``None``) and ``convention``: a pair ``(block, block group)``
of :class:`~adversary.noise.mechanisms.NoiseMechanism` (one mechanism: both).
``Zy`` is then the sum of d copies of the block's noise, tabulated exactly
(:meth:`~adversary.noise.mechanisms.NoiseMechanism.sum_table`: the whole
support for bounded noise). The approximation (3.7) belongs to the discrete
Gaussian: ``sum_noise="approximate"`` (the default for ρ and for discrete
Gaussian mechanisms) is refused for other noise, whose default is ``"exact"``.
Two discrete Gaussians give the same numbers as the ρ that produce their σ².
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..._validation import as_counts
from ...measures.noise import as_mechanism
from ...measures.releases import DEFAULT_TAIL_MASS
from ...noise import discrete_gaussian, noise_variance
from ...noise.finite_pmf import FinitePmf
from ...noise.mechanisms import DiscreteGaussianNoise, NoiseMechanism
from ...noise.sums import sum_of_discrete_gaussians

__all__ = ["SUM_NOISE_CHOICES", "BlockGroupNoise", "noise_model", "resolved_sum_noise"]

SUM_NOISE_CHOICES = ("approximate", "exact")


@dataclass(frozen=True)
class BlockGroupNoise:
    """Noise laws of the three releases: ``x1*`` (block), ``x2*`` (block group), ``y1*`` (sum).

    ``block`` and ``group`` are mechanisms (discrete Gaussians for ρ);
    ``sum_noise`` is the exact table of the sum of d block noises, or the σ²
    of the discrete Gaussian approximation (3.7).
    """

    block: NoiseMechanism
    group: NoiseMechanism
    sum_noise: FinitePmf | float  # exact table, or σ² of the DG approximation (3.7)

    @property
    def gaussian(self) -> bool:
        """True when both releases are discrete Gaussian (the closed-form path)."""
        return isinstance(self.block, DiscreteGaussianNoise) and isinstance(
            self.group, DiscreteGaussianNoise
        )

    @property
    def sigma2_block(self) -> float:
        """σ² of the block's discrete Gaussian (else the noise variance: a scale for windows)."""
        return _scale(self.block)

    @property
    def sigma2_group(self) -> float:
        """σ² of the block group's discrete Gaussian (else the noise variance)."""
        return _scale(self.group)

    def logpmf_block(self, z) -> np.ndarray:
        return self.block.logpmf(z)

    def logpmf_group(self, z) -> np.ndarray:
        return self.group.logpmf(z)

    def logpmf_others(self, z) -> np.ndarray:
        """log-pmf of ``Zy``, the summed noise of the d other blocks."""
        if isinstance(self.sum_noise, FinitePmf):
            return self.sum_noise.logpmf(z)
        return discrete_gaussian.logpmf(z, self.sum_noise)

    @property
    def sigma2_others(self) -> float:
        if isinstance(self.sum_noise, FinitePmf):
            return self.sum_noise.variance
        return self.sum_noise


def _scale(mechanism: NoiseMechanism) -> float:
    if isinstance(mechanism, DiscreteGaussianNoise):
        return mechanism.sigma2
    return mechanism.variance


def _mechanism_pair(mechanism) -> tuple[NoiseMechanism, NoiseMechanism]:
    """``(block, group)`` from one mechanism (both releases) or a pair."""
    if isinstance(mechanism, NoiseMechanism):
        return mechanism, mechanism
    if isinstance(mechanism, str) or not isinstance(mechanism, tuple | list) or len(mechanism) != 2:
        raise ValueError(
            "mechanism must be one NoiseMechanism (for both releases) or a pair (block, block "
            f"group), got {mechanism!r}"
        )
    return as_mechanism(mechanism[0]), as_mechanism(mechanism[1])


def resolved_sum_noise(sum_noise, mechanism) -> str:
    """``sum_noise`` or its default: ``"approximate"`` for discrete Gaussians, else ``"exact"``."""
    gaussian = mechanism is None or all(
        isinstance(m, DiscreteGaussianNoise) for m in _mechanism_pair(mechanism)
    )
    if sum_noise is None:
        return "approximate" if gaussian else "exact"
    if sum_noise not in SUM_NOISE_CHOICES:
        raise ValueError(f"sum_noise must be one of {SUM_NOISE_CHOICES}, got {sum_noise!r}")
    if sum_noise == "approximate" and not gaussian:
        raise ValueError(
            "sum_noise: the approximation (3.7) replaces a sum of discrete Gaussians by one; "
            "other noise needs sum_noise='exact' (the default for it)"
        )
    return sum_noise


def noise_model(
    rho1,
    rho2,
    d,
    convention="paper",
    sum_noise=None,
    tail_mass=DEFAULT_TAIL_MASS,
    *,
    mechanism=None,
) -> BlockGroupNoise:
    """The noise laws for block ρ1, block-group ρ2 and d other blocks in the group.

    ``mechanism`` (one, or a pair ``(block, block group)``) replaces ``rho1``,
    ``rho2`` (then ``None``) and ``convention``. ``sum_noise`` defaults to
    ``"approximate"`` (3.7) for discrete Gaussians and ``"exact"`` otherwise.
    """
    d = int(as_counts(d, "d"))
    if d < 1:
        raise ValueError(f"d must be >= 1 (the number of other blocks in the group), got {d}")
    sum_noise = resolved_sum_noise(sum_noise, mechanism)
    if mechanism is None:
        if rho1 is None or rho2 is None:
            raise ValueError("rho1: give rho1 and rho2 (with convention) or mechanism")
        sigma2_block = float(noise_variance(rho1, convention).item())
        sigma2_group = float(noise_variance(rho2, convention).item())
        block, group = DiscreteGaussianNoise(sigma2_block), DiscreteGaussianNoise(sigma2_group)
    else:
        if rho1 is not None or rho2 is not None:
            raise ValueError("rho1: give rho1 and rho2 or mechanism, not both (got both)")
        block, group = _mechanism_pair(mechanism)
    if sum_noise == "approximate":
        return BlockGroupNoise(block, group, d * block.sigma2)
    if isinstance(block, DiscreteGaussianNoise):
        return BlockGroupNoise(block, group, sum_of_discrete_gaussians(d, block.sigma2, tail_mass))
    return BlockGroupNoise(block, group, block.sum_table(d, 0.0 if block.bounded else tail_mass))
