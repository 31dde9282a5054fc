"""The block-group attack's exact joint posterior of ``(X1, X2)`` given one set of releases.

The joint posterior is (S3.4):

    P[k1, k2 | x1*, x2*, y1*] ∝ P[x1* | k1] P[x2* | k2] P[y1* | k2 - k1]
                                 · 1[k2 ≥ k1] P[X2 = k2 | X1 = k1] P[X1 = k1].

:func:`posterior` enumerates it on a window of ``k2`` whose omitted mass is
bounded (the conditional of ``k2`` is log-concave, so a tail beyond a
decreasing edge is at most a geometric series). With a tabulated ``Zy`` (any
noise other than the discrete Gaussian, see :mod:`.noise_laws`) the ``k2``
window is exact: ``y1* - (k2 - k1)`` must lie on the table (and
``x2* - k2`` on a bounded group noise's support).
"""

from __future__ import annotations

import numpy as np
import xarray as xr

from ...noise import discrete_gaussian
from ...noise.finite_pmf import FinitePmf
from .noise_laws import BlockGroupNoise
from .setting import _validated_releases, attack_setting

__all__ = ["exact_k2_window", "posterior", "x1_posterior"]


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
