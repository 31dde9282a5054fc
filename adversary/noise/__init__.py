"""Noise mechanisms and their conventions (layer 1: numpy and scipy only).

Names are imported on first use: ``adversary.noise.conventions`` (and the
budget arithmetic that needs only it) loads neither SciPy nor the mechanisms.
"""

from importlib import import_module

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


def __getattr__(name: str):
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    if _LAZY[name] is None:
        value = import_module(f".{name}", __name__)
    else:
        value = getattr(import_module(_LAZY[name], __name__), name)
    globals()[name] = value
    return value


def __dir__():
    return sorted(set(globals()) | set(_LAZY))
