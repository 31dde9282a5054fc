"""The block-group attack of Kazan & Reiter (2023), Sec. 3.2 and S3, computed exactly.

The adversary of the single-block attack also sees the block group g2 that
contains block g1: the noisy count ``x2*`` of g2 and ``y1*``, the sum of the
noisy counts of the d other blocks of g2. Latents: ``X1 ∈ {m, m+1}`` (prior
``P[X1 = m+1] = p``) and ``X2 ≥ X1``, the count of g2 (prior
:mod:`.prior`). The releases are

    x1* = X1 + Z1,   x2* = X2 + Z2,   y1* = (X2 - X1) + Zy,

with ``Z1 ~ DG(σ1²)``, ``Z2 ~ DG(σ2²)`` and ``Zy`` the sum of d iid
``DG(σ1²)``. ``sum_noise="approximate"`` takes ``Zy ~ DG(d σ1²)``, the
paper's (3.7) (parameter ``ρ1/d``); ``"exact"`` uses the exact pmf of the sum
(:mod:`adversary.noise.sums`). The joint posterior is (S3.4):

    P[k1, k2 | x1*, x2*, y1*] ∝ P[x1* | k1] P[x2* | k2] P[y1* | k2 - k1]
                                 · 1[k2 ≥ k1] P[X2 = k2 | X1 = k1] P[X1 = k1].

:func:`posterior` enumerates it on a window of ``k2`` whose omitted mass is
bounded (the conditional of ``k2`` is log-concave, so a tail beyond a
decreasing edge is at most a geometric series).

**Other noise.** Every function takes ``mechanism=`` instead of ``rho1``,
``rho2`` (pass ``None``) and ``convention``: a pair ``(block, block group)``
of :class:`~adversary.noise.mechanisms.NoiseMechanism` (one mechanism: both).
``Zy`` is then the sum of d copies of the block's noise, tabulated exactly
(:meth:`~adversary.noise.mechanisms.NoiseMechanism.sum_table`: the whole
support for bounded noise). The approximation (3.7) belongs to the discrete
Gaussian: ``sum_noise="approximate"`` (the default for ρ and for discrete
Gaussian mechanisms) is refused for other noise, whose default is ``"exact"``.
Two discrete Gaussians give the same numbers as the ρ that produce their σ².
With a tabulated ``Zy`` the ``k2`` window is exact: ``y1* - (k2 - k1)`` must lie
on the table (and ``x2* - k2`` on a bounded group noise's support).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pymc as pm
import xarray as xr

from ..._validation import as_counts, as_integers, as_probability
from ...distributions import BernoulliCount, DiscreteGaussian
from ...distributions.noise_release import NoiseRelease
from ...distributions.tabulated_noise import TabulatedNoise
from ...measures.noise import as_mechanism
from ...measures.releases import DEFAULT_TAIL_MASS
from ...noise import discrete_gaussian, noise_variance
from ...noise.finite_pmf import FinitePmf
from ...noise.mechanisms import DiscreteGaussianNoise, NoiseMechanism
from ...noise.sums import sum_of_discrete_gaussians
from .prior import BlockGroupPrior, improper_uniform

__all__ = [
    "AttackSetting",
    "BlockGroupNoise",
    "attack_setting",
    "model",
    "noise_model",
    "posterior",
    "x1_posterior",
]

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


@dataclass(frozen=True)
class AttackSetting:
    """The block-group attack's checked keyword arguments (:func:`attack_setting`)."""

    prior: float
    known: int
    x2_prior: BlockGroupPrior
    sum_noise: str
    tail_mass: float
    noise: BlockGroupNoise


def attack_setting(
    *,
    prior,
    rho1=None,
    rho2=None,
    d,
    x2_prior: BlockGroupPrior | None = None,
    known_count=0,
    convention="paper",
    sum_noise=None,
    tail_mass=DEFAULT_TAIL_MASS,
    mechanism=None,
) -> AttackSetting:
    """The keyword arguments every block-group function takes, checked, with the noise laws.

    ``prior`` is p of (2.1) for ``X1``; ``rho1``, ``rho2``, ``d``,
    ``convention``, ``sum_noise``, ``tail_mass`` and ``mechanism`` as in
    :func:`noise_model`; ``x2_prior`` the prior of ``X2`` (default the paper's
    improper uniform, (S3.3)); ``known_count`` is m.
    """
    sum_noise = resolved_sum_noise(sum_noise, mechanism)
    return AttackSetting(
        prior=float(as_probability(prior, "prior")),
        known=int(as_counts(known_count, "known_count")),
        x2_prior=_validated_x2_prior(x2_prior),
        sum_noise=sum_noise,
        tail_mass=float(tail_mass),
        noise=noise_model(rho1, rho2, d, convention, sum_noise, tail_mass, mechanism=mechanism),
    )


def _validated_releases(x1_release, x2_release, y1_release) -> tuple[int, int, int]:
    named = (("x1_release", x1_release), ("x2_release", x2_release), ("y1_release", y1_release))
    return tuple(int(as_integers(value, name)) for name, value in named)


def _validated_x2_prior(x2_prior) -> BlockGroupPrior:
    x2_prior = improper_uniform() if x2_prior is None else x2_prior
    if not isinstance(x2_prior, BlockGroupPrior):
        raise TypeError(f"x2_prior must be a BlockGroupPrior, got {x2_prior!r}")
    return x2_prior


def _log_joint(k1, k2, releases, noise, prior, x2_prior, known):
    """Unnormalised log posterior (S3.4) on broadcast arrays of ``k1`` and ``k2``."""
    x1r, x2r, y1r = releases
    log_x1_prior = np.where(k1 == known + 1, np.log(prior), np.log1p(-prior))
    return (
        noise.logpmf_block(x1r - k1)
        + noise.logpmf_group(x2r - k2)
        + noise.logpmf_others(y1r - (k2 - k1))
        + x2_prior.log_prior(k2, k1)
        + log_x1_prior
    )


def _initial_window(releases, noise, x2_prior, known, tail_mass):
    """A first guess at the k2 range: the (S3.14) centre ± a tail cut-off."""
    if x2_prior.upper is not None and x2_prior.kind != "improper_uniform":
        return known, max(x2_prior.upper, known + 1)
    _, x2r, y1r = releases
    precision = 1 / noise.sigma2_group + 1 / noise.sigma2_others
    centres = [
        (x2r / noise.sigma2_group + (y1r + k1) / noise.sigma2_others) / precision
        for k1 in (known, known + 1)
    ]
    reach = int(discrete_gaussian.cutoff(1 / precision, tail_mass)) + 2
    return max(known, int(np.floor(min(centres))) - reach), max(
        known + 1, int(np.ceil(max(centres))) + reach
    )


def exact_k2_window(x2_releases, y1_releases, noise: BlockGroupNoise, x2_prior, known: int):
    """``(lo, hi)`` outside which ``k2`` has probability 0 for every release given, or None.

    With a tabulated ``Zy`` (and any ``X1 ∈ {m, m+1}``), ``y1* - (k2 - k1)`` must
    lie on the table; with bounded group noise ``x2* - k2`` must lie on its
    support; a proper prior bounds ``k2`` by its largest value. None when
    nothing bounds ``k2`` (discrete Gaussian noise with the improper prior).
    """
    his = []
    if isinstance(noise.sum_noise, FinitePmf):
        his.append(int(np.max(y1_releases)) + known + 1 - noise.sum_noise.start)
    if noise.group.bounded:
        his.append(int(np.max(x2_releases)) - noise.group.support[0])
    if x2_prior.kind != "improper_uniform":
        his.append(max(x2_prior.upper, known + 1))
    if not his:
        return None
    return known, max(known + 1, min(his))


def _tail_beyond(edge: np.ndarray, inner: np.ndarray) -> float:
    """Bound on the mass past ``edge`` of a log-concave sequence decreasing towards ``edge``."""
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(inner > 0, edge / inner, np.where(edge > 0, np.inf, 0.0))
    if np.any(ratio >= 1):
        return np.inf
    return float(np.sum(edge * ratio / (1 - ratio)))


def posterior(x1_release, x2_release, y1_release, **setting) -> xr.DataArray:
    """Exact joint posterior of ``(X1, X2)`` given one set of releases, (S3.4).

    ``setting``: the keyword arguments of :func:`attack_setting`.

    Returns a DataArray with dims ``("X1", "X2")``, coordinates the counts,
    summing to 1; ``attrs["omitted_mass"]`` bounds the posterior mass of
    ``X2`` outside the window (at most ``tail_mass``; 0 with ``mechanism``
    noise, whose tabulated ``Zy`` makes the window exact). With bounded noise
    a release can settle ``X1`` (posterior 0 or 1).
    """
    releases = _validated_releases(x1_release, x2_release, y1_release)
    setting = attack_setting(**setting)
    noise, prior, known, x2_prior = setting.noise, setting.prior, setting.known, setting.x2_prior
    tail_mass = setting.tail_mass
    k1 = np.array([known, known + 1])[:, None]
    window = None if noise.gaussian else exact_k2_window(*releases[1:], noise, x2_prior, known)
    if window is not None:
        lo, hi = window
    else:
        lo, hi = _initial_window(releases, noise, x2_prior, known, tail_mass)
    bounded = window is not None or x2_prior.kind != "improper_uniform"
    while True:
        k2 = np.arange(lo, hi + 1)[None, :]
        log_joint = _log_joint(k1, k2, releases, noise, prior, x2_prior, known)
        peak = np.max(log_joint)
        if not np.isfinite(peak):
            raise ValueError(
                "the releases are impossible under this prior: every (X1, X2) has probability 0"
            )
        joint = np.exp(log_joint - peak)
        total = joint.sum()
        omitted = 0.0 if bounded else _tail_beyond(joint[:, -1], joint[:, -2])
        if lo > known and not bounded:
            omitted += _tail_beyond(joint[:, 0], joint[:, 1])
        if omitted <= tail_mass * total:
            break
        width = hi - lo + 1
        lo, hi = max(known, lo - width), hi + width
    table = xr.DataArray(
        joint / total,
        dims=("X1", "X2"),
        coords={"X1": k1[:, 0], "X2": k2[0]},
        name="posterior",
        attrs={
            "omitted_mass": omitted / total,
            "x2_prior": x2_prior.describe(),
            "sum_noise": setting.sum_noise,
        },
    )
    return table


def x1_posterior(x1_release, x2_release, y1_release, **kwargs) -> float:
    """``P[X1 = m + 1 | x1*, x2*, y1*]``: the target's posterior of having c, from (S3.4)."""
    joint = posterior(x1_release, x2_release, y1_release, **kwargs)
    return float(joint.isel(X1=1).sum())


def model(x1_release, x2_release, y1_release, **setting) -> pm.Model:
    """The block-group attack as a PyMC model: latents ``X1``, ``X2``; releases observed.

    ``setting``: the keyword arguments of :func:`attack_setting`.

    The same joint as :func:`posterior` (S3.4): ``X1 ~ BernoulliCount(m, p)``,
    ``X2 | X1`` from ``x2_prior`` (with ``X2 ≥ X1``), ``x1* ~ DG(X1, σ1²)``,
    ``x2* ~ DG(X2, σ2²)``, and ``y1* = X2 - X1 + Zy`` with ``Zy`` from (3.7)
    or the exact sum (a tabulated noise). With ``mechanism`` (not discrete
    Gaussian) ``x1*`` and ``x2*`` are :func:`~adversary.distributions.NoiseRelease`
    variables and ``Zy`` the tabulated sum.
    """
    releases = _validated_releases(x1_release, x2_release, y1_release)
    setting = attack_setting(**setting)
    noise = setting.noise
    with pm.Model() as attack:
        x1 = BernoulliCount("X1", known=setting.known, p=setting.prior)
        x2 = setting.x2_prior.pymc_variable("X2", x1, setting.known)
        for name, mu, mech, value in (
            ("x1_release", x1, noise.block, releases[0]),
            ("x2_release", x2, noise.group, releases[1]),
        ):
            if isinstance(mech, DiscreteGaussianNoise):
                DiscreteGaussian(name, mu=mu, sigma2=mech.sigma2, observed=value)
            else:
                NoiseRelease(name, mu=mu, mechanism=mech, observed=value)
        if isinstance(noise.sum_noise, FinitePmf):
            TabulatedNoise("y1_release", mu=x2 - x1, table=noise.sum_noise, observed=releases[2])
        else:
            DiscreteGaussian("y1_release", mu=x2 - x1, sigma2=noise.sum_noise, observed=releases[2])
    return attack
