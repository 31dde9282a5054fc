"""Noise-scale conventions: how a zCDP parameter ρ becomes a noise variance σ².

The Gaussian mechanism on a query of L2 sensitivity Δ satisfies ρ-zCDP when
``σ² = Δ² / (2ρ)``. Two neighbour relations are in use for census counts:

``paper``
    Kazan & Reiter (2023): neighbours add or remove one record, so Δ = 1 and
    ``σ² = 1/(2ρ)``; the likelihood is ``∝ exp(-ρ (x* - x)²)``.
``das``
    The 2020 Disclosure Avoidance System in production: neighbours change one
    record, a histogram has L2 sensitivity √2, and ``σ² = 1/ρ``.

The choice is always explicit and named; the paper's is the default only
where the paper is being reproduced.
"""

from __future__ import annotations

from enum import StrEnum

import numpy as np

from .._validation import as_member, as_positive

__all__ = ["NoiseConvention", "as_convention", "noise_variance"]


class NoiseConvention(StrEnum):
    """A neighbour relation for counts, named by where it is used."""

    PAPER = "paper"
    DAS = "das"

    @property
    def l2_sensitivity(self) -> float:
        """L2 sensitivity Δ of a count histogram under this neighbour relation."""
        return 1.0 if self is NoiseConvention.PAPER else float(np.sqrt(2.0))

    @property
    def description(self) -> str:
        if self is NoiseConvention.PAPER:
            return "add/remove one record, sensitivity 1, sigma^2 = 1/(2 rho)"
        return "replace one record, L2 sensitivity sqrt(2), sigma^2 = 1/rho"


def as_convention(value, name: str = "convention") -> NoiseConvention:
    """Parse a convention name (``"paper"`` or ``"das"``), raising on anything else."""
    return as_member(NoiseConvention, value, name)


def noise_variance(rho, convention: str | NoiseConvention = "paper") -> np.ndarray:
    """σ² of the discrete Gaussian that gives ρ-zCDP under ``convention``.

    ``σ² = Δ²/(2ρ)``: ``1/(2ρ)`` for the paper (its likelihood ``e^{-ρ(x*-x)²}``)
    and ``1/ρ`` for the 2020 DAS (neighbours by changing one record, Δ = √2).
    """
    rho = as_positive(rho, "rho")
    delta = as_convention(convention).l2_sensitivity
    return (delta**2 / 2.0) / rho  # not delta**2 / (2 rho): 2 rho overflows from rho = 9e307
