"""Whether an allocation's risk stays within the data holder's limits.

:func:`check_risk` takes the measures of :func:`~.evaluate.allocation_risk`
and up to three limits:

- a risk profile ``r*(p)`` (:class:`~.profile.RiskProfile` or its spec) on
  the posterior-to-prior ratio, the marginal risk (3.4), at each prior;
- ``correct_bound``: the largest acceptable probability of a correct
  decision (3.6), the same for every prior;
- ``reconstruction_bound``: per block-size bin, the largest acceptable share
  of a block's records reconstructed.

Comparisons are conservative, as in :func:`adversary.analyses.choose_rho.choose_rho`:
a value is within its limit when the value **plus its stated error bound** is
at most the limit. For each limit the result holds ``<m>_limit``,
``<m>_upper`` (value + bound), ``<m>_within`` and ``<m>_margin``
(limit − upper: negative where the limit is broken), ``m`` being ``ratio``,
``correct`` or ``reconstructed_share``.
"""

from __future__ import annotations

import itertools
import math
import re

import numpy as np
import xarray as xr

from .profile import RiskProfile, parse_risk_profile

__all__ = [
    "as_correct_bound",
    "as_profile",
    "as_reconstruction_bound",
    "check_risk",
    "reconstruction_limits",
]

_BIN = re.compile(r"^\s*(\d+)\s*(?:(-)\s*(\d+)|(\+))?\s*$")


def as_profile(profile):
    """A :class:`~.profile.RiskProfile` from itself or its spec string."""
    if isinstance(profile, RiskProfile):
        return profile
    return parse_risk_profile(profile)


def as_correct_bound(bound) -> float:
    """A probability strictly between 0 and 1."""
    try:
        value = float(bound)
    except (TypeError, ValueError):
        value = math.nan
    if not 0.0 < value < 1.0:
        raise ValueError(
            f"correct_bound must be a probability strictly between 0 and 1, got {bound!r}"
        )
    return value


def _bin(key) -> tuple[int, float]:
    """``(smallest, largest)`` block size of a bin: ``n``, ``"lo-hi"`` or ``"lo+"``."""
    if isinstance(key, int | np.integer) and not isinstance(key, bool) and key >= 1:
        return int(key), float(key)
    match = _BIN.match(key) if isinstance(key, str) else None
    if match is None or int(match.group(1)) < 1:
        raise ValueError(
            f"reconstruction_bound: bin {key!r} is not a block size n >= 1, 'lo-hi' or 'lo+'"
        )
    low = int(match.group(1))
    if match.group(4):
        return low, math.inf
    high = low if match.group(3) is None else int(match.group(3))
    if high < low:
        raise ValueError(f"reconstruction_bound: bin {key!r} ends before it starts")
    return low, float(high)


def as_reconstruction_bound(bound) -> tuple[tuple[int, float, float], ...]:
    """``((lo, hi, largest share), …)`` from a mapping ``bin → share`` (bins disjoint)."""
    if not isinstance(bound, dict) or not bound:
        raise ValueError(
            "reconstruction_bound must map block-size bins (n, 'lo-hi', 'lo+') to the largest "
            f"acceptable share of records reconstructed, got {bound!r}"
        )
    bins = []
    for key, share in bound.items():
        low, high = _bin(key)
        try:
            value = float(share)
        except (TypeError, ValueError):
            value = math.nan
        if not 0.0 <= value <= 1.0:
            raise ValueError(
                f"reconstruction_bound[{key!r}] must be a share in [0, 1], got {share!r}"
            )
        bins.append((low, high, value))
    bins.sort()
    for (_, high, _), (low, _, _) in itertools.pairwise(bins):
        if low <= high:
            raise ValueError("reconstruction_bound: the block-size bins overlap")
    return tuple(bins)


def _compared(value, error, limit, name: str) -> dict:
    upper = value + error
    limit = xr.broadcast(xr.DataArray(limit), upper)[0].transpose(*upper.dims)  # per cell
    return {
        f"{name}_limit": limit,
        f"{name}_upper": upper,
        f"{name}_within": upper <= limit,
        f"{name}_margin": limit - upper,
    }


def reconstruction_limits(sizes, bins) -> np.ndarray:
    """The bound of each block size from ``bins`` (:func:`as_reconstruction_bound`)."""
    limits = []
    for n in sizes:
        found = [share for low, high, share in bins if low <= n <= high]
        if not found:
            raise ValueError(f"reconstruction_bound: no bin holds block size {int(n)}")
        limits.append(found[0])
    return np.array(limits)


def check_risk(
    risk: xr.Dataset, profile=None, correct_bound=None, reconstruction_bound=None
) -> xr.Dataset:
    """Each measure of ``risk`` against its limit (module docstring).

    ``risk`` is :func:`~.evaluate.allocation_risk`'s result. At least one
    limit must be given; a limit on a measure ``risk`` lacks (e.g.
    ``reconstruction_bound`` without the reconstruction attack) is refused.
    ``attrs["within"]`` is whether every limit holds everywhere.
    """
    if profile is None and correct_bound is None and reconstruction_bound is None:
        raise ValueError("profile: give a risk profile, correct_bound or reconstruction_bound")
    out = xr.Dataset(coords=risk.coords, attrs=dict(risk.attrs))
    has_prior = "ratio" in risk and risk.sizes.get("attack", 0) > 0
    if (profile is not None or correct_bound is not None) and not has_prior:
        raise ValueError("risk: the result holds no attack with a prior to check a limit on")
    if profile is not None:
        limit = xr.DataArray(as_profile(profile)(risk["prior"].values), dims="prior")
        out["ratio"], out["ratio_error"] = risk["ratio"], risk["ratio_error"]
        out.update(_compared(risk["ratio"], risk["ratio_error"], limit, "ratio"))
        out.attrs["profile"] = as_profile(profile).spec
    if correct_bound is not None:
        bound = as_correct_bound(correct_bound)
        out["correct"], out["correct_error"] = risk["correct"], risk["correct_error"]
        out.update(_compared(risk["correct"], risk["correct_error"], bound, "correct"))
        out.attrs["correct_bound"] = bound
    if reconstruction_bound is not None:
        if "reconstructed_share" not in risk:
            raise ValueError("reconstruction_bound: the risk holds no reconstruction attack")
        bins = as_reconstruction_bound(reconstruction_bound)
        limit = xr.DataArray(
            reconstruction_limits(risk["block_size"].values, bins), dims="block_size"
        )
        name = "reconstructed_share"
        out[name], out[f"{name}_error"] = risk[name], risk[f"{name}_error"]
        out.update(_compared(risk[name], risk[f"{name}_error"], limit, name))
    out.attrs["within"] = bool(
        all(bool(out[v].all()) for v in out.data_vars if str(v).endswith("_within"))
    )
    return out
