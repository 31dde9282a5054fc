"""Noise mechanisms and their conventions (layer 1: numpy and scipy only)."""

from . import discrete_gaussian
from .conventions import NoiseConvention, as_convention, noise_variance
from .mechanisms import (
    CellKeyNoise,
    DiscreteGaussianNoise,
    DiscreteLaplaceNoise,
    FinitePmfNoise,
    NoiseMechanism,
    TruncatedGeometricNoise,
)

__all__ = [
    "CellKeyNoise",
    "DiscreteGaussianNoise",
    "DiscreteLaplaceNoise",
    "FinitePmfNoise",
    "NoiseConvention",
    "NoiseMechanism",
    "TruncatedGeometricNoise",
    "as_convention",
    "discrete_gaussian",
    "noise_variance",
]
