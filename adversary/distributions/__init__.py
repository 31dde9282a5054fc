"""PyMC building blocks (layer 2): the discrete Gaussian release, any noise mechanism's
release and count priors.

Every distribution here takes integer (int64) values, has an exact log-p and a
feasible ``support_point``, and registers its support with
:func:`support_bounds` for the exact samplers of :mod:`adversary.inference` —
except :func:`NoiseRelease`, a :class:`pymc.CustomDist` the samplers treat as
unbounded (its log-p is ``-inf`` off a bounded mechanism's support).
"""

from .._lazy import after_import
from .discrete_gaussian import DiscreteGaussian, log_normaliser
from .noise_release import NoiseRelease
from .priors import (
    BernoulliCount,
    BoundedUniform,
    FinitePmf,
    ImproperDistributionError,
    ImproperUniform,
    PointMass,
)
from .support import register_support_bounds, support_bounds


def _register_numba_draws() -> None:
    """Draws under PyTensor's numba linker without its object-mode fallback warning."""
    try:
        from . import _numba  # noqa: F401
    except ImportError:  # pragma: no cover - numba is a PyTensor dependency
        pass


# Numba and PyTensor's numba backend take seconds to import: the draws are registered when
# that backend is imported (by the first function PyTensor compiles with numba), not before.
after_import("pytensor.link.numba.dispatch", _register_numba_draws)

__all__ = [
    "BernoulliCount",
    "BoundedUniform",
    "DiscreteGaussian",
    "FinitePmf",
    "ImproperDistributionError",
    "ImproperUniform",
    "NoiseRelease",
    "PointMass",
    "log_normaliser",
    "register_support_bounds",
    "support_bounds",
]
