"""How a scenario is told its noise: ρ with a named convention, or a :class:`NoiseMechanism`.

Every scenario takes either ``rho`` (with ``convention``): the discrete
Gaussian of Kazan & Reiter, or ``mechanism=``: any
:class:`~adversary.noise.mechanisms.NoiseMechanism` (one per release where a
scenario has several). A :class:`~adversary.noise.mechanisms.DiscreteGaussianNoise`
goes down the same closed-form path as ρ (its σ² is what ``rho`` and
``convention`` would give, so the numbers are identical); any other mechanism
goes down the general path, written with ``logpmf`` differences and sums
over the mechanism's table.

On the general path the log likelihood ratio of two hypotheses,
``logpmf(x* - k1) - logpmf(x* - k0)``, can be ``±inf`` for bounded noise: a
release one hypothesis cannot produce makes the other certain (a posterior of
exactly 0 or 1, which is real). A release *neither* can produce is an error.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np

from ..noise import noise_variance
from ..noise.finite_pmf import FinitePmf
from ..noise.mechanisms import DiscreteGaussianNoise, NoiseMechanism

__all__ = [
    "as_mechanism",
    "log_ratio",
    "mechanism_label",
    "noise_table",
    "resolve",
    "resolve_many",
]


def as_mechanism(value, name: str = "mechanism") -> NoiseMechanism:
    """``value`` checked to be a :class:`NoiseMechanism`."""
    if not isinstance(value, NoiseMechanism):
        raise TypeError(f"{name} must be a NoiseMechanism (adversary.noise), got {value!r}")
    return value


def _rho_given(rho, mechanism, rho_name: str) -> bool:
    """Whether the noise is given by ρ (else by ``mechanism``); exactly one of them must be."""
    if mechanism is None:
        if rho is None:
            raise ValueError(f"{rho_name}: give {rho_name} (with convention) or mechanism")
        return True
    if rho is not None:
        raise ValueError(f"{rho_name}: give {rho_name} or mechanism, not both (got both)")
    return False


def resolve(rho, convention, mechanism, rho_name: str = "rho"):
    """``(σ², None)`` for the discrete Gaussian path, ``(None, mechanism)`` otherwise.

    Exactly one of ``rho`` and ``mechanism`` must be given. ``convention`` is
    used with ``rho`` only. A :class:`DiscreteGaussianNoise` gives its σ² (a
    0-d array), so the closed forms of the ρ path apply to it.
    """
    if _rho_given(rho, mechanism, rho_name):
        return noise_variance(rho, convention), None
    mechanism = as_mechanism(mechanism)
    if isinstance(mechanism, DiscreteGaussianNoise):
        return np.asarray(mechanism.sigma2, dtype=np.float64), None
    return None, mechanism


def resolve_many(rhos, convention, mechanism, n: int | None = None, rho_name: str = "rhos"):
    """As :func:`resolve` for several releases: one mechanism per release.

    ``mechanism`` is one mechanism (for every release; needs ``n``) or a
    sequence of them. Returns ``(σ² with the releases on the last axis, None)``
    when every mechanism is a discrete Gaussian (or for ``rhos``), else
    ``(None, tuple of mechanisms)``.
    """
    if _rho_given(rhos, mechanism, rho_name):
        return noise_variance(rhos, convention), None
    mechanisms = mechanism_tuple(mechanism, n)
    if all(isinstance(m, DiscreteGaussianNoise) for m in mechanisms):
        return np.array([m.sigma2 for m in mechanisms], dtype=np.float64), None
    return None, mechanisms


def mechanism_tuple(mechanism, n: int | None = None, name: str = "mechanism") -> tuple:
    """One mechanism per release: a single one repeated ``n`` times, or a sequence of ``n``."""
    if isinstance(mechanism, NoiseMechanism):
        if n is None:
            raise ValueError(
                f"{name}: give one mechanism per release (a sequence), got one {mechanism!r}"
            )
        return (mechanism,) * n
    if isinstance(mechanism, str) or not isinstance(mechanism, Sequence):
        raise TypeError(
            f"{name} must be a NoiseMechanism or a sequence of them (one per release), "
            f"got {mechanism!r}"
        )
    mechanisms = tuple(as_mechanism(m, name) for m in mechanism)
    if not mechanisms:
        raise ValueError(f"{name} must hold at least one mechanism")
    if n is not None and len(mechanisms) != n:
        raise ValueError(f"{name} must hold one mechanism per release ({n}), got {len(mechanisms)}")
    return mechanisms


def noise_table(mechanism: NoiseMechanism, tail_mass: float) -> FinitePmf:
    """The mechanism's pmf for sums over the noise: the whole support if bounded.

    Bounded noise is tabulated in full (``omitted_mass`` 0: the sums are
    exact); unbounded noise on ``[-K, K]`` with ``K = cutoff(tail_mass)`` and
    its rigorous ``omitted_mass ≤ tail_mass``.
    """
    return mechanism.table(0.0 if mechanism.bounded else tail_mass)


def support_points(table: FinitePmf) -> tuple[np.ndarray, np.ndarray]:
    """``(z, P[Z = z])`` over the table's points of positive probability."""
    keep = table.probabilities > 0
    return table.support[keep], table.probabilities[keep]


def log_ratio(numerator, denominator) -> np.ndarray:
    """``numerator - denominator`` of two log-probabilities; NaN where both are ``-inf``.

    Callers decide what NaN (an observation neither hypothesis can produce)
    means: an error for a release, or nothing where it carries no probability.
    """
    with np.errstate(invalid="ignore"):
        return np.asarray(numerator, dtype=np.float64) - np.asarray(denominator, dtype=np.float64)


def impossible_release_error(name: str, value, mechanism) -> ValueError:
    return ValueError(
        f"{name}: the release {value!r} is impossible under every value of the latent count "
        f"with {mechanism_label(mechanism)} noise (probability 0 under each hypothesis)"
    )


def mechanism_label(mechanism) -> str:
    if isinstance(mechanism, NoiseMechanism):
        return mechanism.label
    return ", ".join(m.label for m in mechanism)
