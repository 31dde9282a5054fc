"""Noise mechanisms and their conventions (layer 1: numpy and scipy only).

Names are imported on first use: ``adversary.noise.conventions`` (and the
budget arithmetic that needs only it) loads neither SciPy nor the mechanisms.
"""

from .._lazy import lazy_names

_LAZY = {
    "CellKeyNoise": ".mechanisms",
    "DiscreteGaussianNoise": ".mechanisms",
    "DiscreteLaplaceNoise": ".mechanisms",
    "FinitePmfNoise": ".mechanisms",
    "NoiseConvention": ".conventions",
    "NoiseMechanism": ".mechanisms",
    "TruncatedGeometricNoise": ".mechanisms",
    "as_convention": ".conventions",
    "discrete_gaussian": None,  # the module itself
    "noise_variance": ".conventions",
}

__all__ = sorted(_LAZY)


__getattr__, __dir__ = lazy_names(__name__, _LAZY, globals())
