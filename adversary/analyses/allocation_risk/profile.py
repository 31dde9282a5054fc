"""Risk profiles: the largest posterior-to-prior ratio a data holder accepts at each prior.

Kazan & Reiter (2024, "Prior-itizing privacy", NeurIPS; arXiv 2306.13214)
let the agency state, for every prior probability ``p`` an adversary may hold
of a disclosure, the largest ratio ``r*(p)`` of posterior to prior it accepts
— a *risk profile*. A release is acceptable when its posterior-to-prior ratio
stays at or below ``r*(p)`` for every ``p``. Here the ratio is the data
holder's marginal risk (3.4) of Kazan & Reiter (2023): the expected posterior
of the truth over releases from it, over the prior.

A profile is a function of the prior on (0, 1) with ``r*(p) ≥ 1`` (a ratio
below 1 would forbid the release from ever raising the adversary's belief in
the truth, which no release can avoid on average) and finite. Forms:

``constant:r``
    ``r*(p) = r`` for every prior (the paper's first example profile).
``ratio-or-posterior:r,a``
    ``r*(p) = max(r, a/p)``: the ratio ``r``, or any ratio that leaves the
    posterior at most ``a`` (Kazan & Reiter 2024, Sec. 3.2, Example 1: the
    agency accepts a posterior of ``a`` whatever the prior, and a ratio of
    ``r`` where that is more; their code's ``r_star = max(a/p, r)``); its ε
    under ε-DP is ``log((r − a)/(1 − a))`` in closed form (their text),
    for ``0 ≤ a < 1``, ``r ≥ 1``.
``piecewise:p1=r1,p2=r2,...``
    Points with ``0 < p1 < p2 < … < 1`` and ``r1 ≥ r2 ≥ …`` (a larger prior
    gets no more room, as in the paper's profiles), joined **linearly in
    log p**, constant beyond the first and last points.

Under ε-DP the ratio is at most ``e^ε / (1 + p (e^ε − 1))`` for every prior
``p`` (the paper's bound of the posterior-to-prior ratio by ε), so a profile
implies the largest ε it tolerates, :meth:`RiskProfile.epsilon_dp`:
``ε* = inf_p log(r*(p)(1 − p) / (1 − p r*(p)))`` over the priors with
``p r*(p) < 1`` (``log r`` for the constant profile).
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass

import numpy as np

__all__ = ["FORMS", "RiskProfile", "parse_risk_profile"]

#: The profile forms :func:`parse_risk_profile` knows.
FORMS = ("constant", "ratio-or-posterior", "piecewise")

_SPEC = (
    "a spec such as 'constant:3', 'ratio-or-posterior:3,0.25' or 'piecewise:0.01=5,0.1=3,0.5=1.5'"
)


def _bad(spec, why: str) -> ValueError:
    return ValueError(f"risk-profile: {spec!r} is not a risk profile ({why}); give {_SPEC}")


@dataclass(frozen=True)
class RiskProfile:
    """A risk profile ``r*(p)`` (module docstring); call it on an array of priors.

    ``form`` is one of :data:`FORMS`; ``parameters`` its numbers: ``(r,)`` or
    the points ``((p1, r1), (p2, r2), …)``.
    """

    form: str
    parameters: tuple

    def __post_init__(self):
        spec = self.spec
        if self.form not in FORMS:
            raise _bad(spec, f"unknown form {self.form!r}; known: {', '.join(FORMS)}")
        if self.form == "piecewise":
            points = tuple((float(p), float(r)) for p, r in self.parameters)
            if not points:
                raise _bad(spec, "no points")
            ps = [p for p, _ in points]
            rs = [r for _, r in points]
            if not all(math.isfinite(p) and 0.0 < p < 1.0 for p in ps):
                raise _bad(spec, "every prior p must lie strictly between 0 and 1")
            if any(b <= a for a, b in itertools.pairwise(ps)):
                raise _bad(spec, "the priors must increase strictly")
            _check_ratios(spec, rs)
            if any(b > a for a, b in itertools.pairwise(rs)):
                raise _bad(spec, "the ratio must not increase with the prior")
            object.__setattr__(self, "parameters", points)
            return
        numbers = tuple(float(v) for v in self.parameters)
        if self.form == "ratio-or-posterior":
            if len(numbers) != 2:
                raise _bad(spec, "ratio-or-posterior takes two numbers, r and a")
            _check_ratios(spec, numbers[:1])
            if not (math.isfinite(numbers[1]) and 0.0 <= numbers[1] < 1.0):
                raise _bad(spec, f"the posterior a = {numbers[1]!r} must lie in [0, 1)")
            object.__setattr__(self, "parameters", numbers)
            return
        if len(numbers) != 1:
            raise _bad(spec, "constant takes one number")
        _check_ratios(spec, numbers)
        object.__setattr__(self, "parameters", numbers)

    @property
    def spec(self) -> str:
        """The profile as :func:`parse_risk_profile` reads it."""
        if self.form == "piecewise":
            body = ",".join(f"{p!r}={r!r}" for p, r in self.parameters)
        else:
            body = ",".join(repr(v) for v in self.parameters)
        return f"{self.form}:{body}"

    def __call__(self, prior) -> np.ndarray:
        """``r*(p)`` for each prior ``p`` (an array in (0, 1))."""
        p = np.asarray(prior, dtype=np.float64)
        if not np.all((p > 0.0) & (p < 1.0)):
            raise ValueError(f"prior must lie strictly between 0 and 1, got {prior!r}")
        if self.form == "constant":
            return np.full(p.shape, self.parameters[0])
        if self.form == "ratio-or-posterior":
            r, a = self.parameters
            return np.maximum(r, a / p)
        ps, rs = (np.array(column) for column in zip(*self.parameters, strict=True))
        return np.interp(np.log(p), np.log(ps), rs)

    def epsilon_dp(self, grid: int = 100_001) -> float:
        """The largest ε of ε-DP that keeps the ratio bound within the profile at every prior.

        ``inf_p log(r*(p)(1 − p)/(1 − p r*(p)))`` over the priors with
        ``p r*(p) < 1`` (module docstring): in closed form ``log r`` for
        ``constant`` (the infimum, approached as p → 0) and
        ``log((r − a)/(1 − a))`` for ``ratio-or-posterior`` (attained at
        ``p = a/r``); for ``piecewise`` the infimum
        over a log-spaced grid of ``grid`` priors in [1e-12, 1 − 1e-12] plus
        the points themselves (the infimum over those priors: at least the
        exact one).
        """
        if self.form == "constant":
            return math.log(self.parameters[0])
        if self.form == "ratio-or-posterior":
            r, a = self.parameters
            return math.log((r - a) / (1.0 - a))
        p = np.concatenate(
            [np.geomspace(1e-12, 1.0 - 1e-12, grid), [pt for pt, _ in self.parameters]]
        )
        r = self(p)
        open_ = p * r < 1.0
        values = np.log(r[open_] * (1.0 - p[open_]) / (1.0 - p[open_] * r[open_]))
        return float(values.min())


def _check_ratios(spec, ratios) -> None:
    for r in ratios:
        if not math.isfinite(r):
            raise _bad(spec, f"ratio {r!r} is not a finite number")
        if r < 1.0:
            raise _bad(spec, f"ratio {r!r} is below 1 (the posterior-to-prior ratio is >= 1)")


def _number(spec: str, text: str) -> float:
    try:
        return float(text)
    except ValueError:
        raise _bad(spec, f"{text.strip()!r} is not a number") from None


def parse_risk_profile(spec: str) -> RiskProfile:
    """A :class:`~.RiskProfile` from ``"form:numbers"`` (module docstring).

    Raises :class:`ValueError` in one line naming ``risk-profile`` for an
    unknown form, a malformed spec, a ratio below 1 or not finite, a prior
    outside (0, 1), or a piecewise profile whose ratio increases.
    """
    if not isinstance(spec, str):
        raise _bad(spec, "not a string")
    form, colon, body = spec.strip().partition(":")
    form = form.strip().lower()
    if not colon or not body.strip():
        raise _bad(spec, "expected form:numbers")
    if form not in FORMS:
        raise _bad(spec, f"unknown form {form!r}; known: {', '.join(FORMS)}")
    items = [item.strip() for item in body.split(",")]
    if form == "piecewise":
        points = []
        for item in items:
            p, equals, r = item.partition("=")
            if not equals:
                raise _bad(spec, f"point {item!r} is not p=r")
            points.append((_number(spec, p), _number(spec, r)))
        return RiskProfile("piecewise", tuple(points))
    return RiskProfile(form, tuple(_number(spec, item) for item in items))
