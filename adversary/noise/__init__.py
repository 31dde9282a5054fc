"""Noise mechanisms and their conventions (layer 1: numpy and scipy only)."""

from . import discrete_gaussian
from .conventions import NoiseConvention, as_convention, noise_variance

__all__ = ["NoiseConvention", "as_convention", "discrete_gaussian", "noise_variance"]
