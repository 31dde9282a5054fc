"""The three models of ``peers.py`` that the Gibbs benchmarks do not have, with exact answers.

- ``simple_2model`` — PyMC's test-suite model (``tests/models.py`` of PyMC):
  ``x ~ Normal(-2.1, tau=1.3)`` (start 0.1), a Deterministic ``log x`` and an
  independent ``y ~ Bernoulli(0.4)``. Exact: ``E[x] = -2.1``,
  ``Var x = 1/1.3``, ``P[y = 1] = 0.4``.
- ``switchpoint`` — the coal-mining disasters of PyMC's getting-started guide
  (UK, 1851–1961, two years missing): ``s ~ DiscreteUniform(1851, 1961)``,
  early and late rates ``~ Exponential(1)``, ``D_t ~ Poisson(early if s ≥ t
  else late)``; the missing years are imputed latents. Exact (Gamma–Poisson
  conjugacy): ``p(s | D) ∝ Γ(S_e+1)/(n_e+1)^{S_e+1} · Γ(S_l+1)/(n_l+1)^{S_l+1}``
  over the observed years (``S`` their sum, ``n`` their number, early: ``t ≤
  s``); given ``s`` the early rate is ``Gamma(S_e+1, n_e+1)`` and a missing
  count negative binomial.
- ``mixture`` — mixture assignment: 12 points, ``z_i ~ Bernoulli(1/2)``,
  ``y_i ~ Normal(μ_{z_i}, 1)``, ``μ_0 ~ Normal(-1, 1)``, ``μ_1 ~ Normal(1, 1)``
  (the priors tell the labels apart). Exact: every ``z`` of ``2^12`` enumerated
  with ``μ`` integrated out (Normal–Normal), then the mixture over ``z``.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pymc as pm
import pytensor.tensor as pt
from scipy import special

# --- simple_2model ------------------------------------------------------------------------
S2_MU, S2_TAU, S2_P = -2.1, 1.3, 0.4


def simple_2model(initval: float | None = 0.1) -> pm.Model:
    """PyMC's test-suite ``simple_2model`` (``initval=None``: no start, as pymc-extras needs)."""
    with pm.Model() as model:
        x = pm.Normal("x", S2_MU, tau=S2_TAU, initval=initval)
        pm.Deterministic("logx", pt.log(x))
        pm.Bernoulli("y", S2_P)
    return model


def simple_2model_exact() -> dict:
    """``{key: (mean, variance)}`` of ``1[y = 1]`` and ``x``."""
    return {"y": (S2_P, S2_P * (1 - S2_P)), "x": (S2_MU, 1 / S2_TAU)}


# --- coal-mining switchpoint, two years missing -------------------------------------------
YEARS = np.arange(1851, 1962)
# fmt: off
DISASTERS = np.array([
    4, 5, 4, 0, 1, 4, 3, 4, 0, 6, 3, 3, 4, 0, 2, 6, 3, 3, 5, 4, 5, 3, 1, 4, 4, 1, 5, 5, 3,
    4, 2, 5, 2, 2, 3, 4, 2, 1, 3, -1, 2, 1, 1, 1, 1, 3, 0, 0, 1, 0, 1, 1, 0, 0, 3, 1, 0, 3,
    2, 2, 0, 1, 1, 1, 0, 1, 0, 1, 0, 0, 0, 2, 1, 0, 0, 0, 1, 1, 0, 2, 3, 3, 1, -1, 2, 1, 1,
    1, 1, 2, 4, 2, 0, 0, 1, 4, 0, 0, 0, 1, 0, 0, 0, 0, 0, 1, 0, 0, 1, 0, 1,
])
# fmt: on
MISSING = DISASTERS < 0  # 1890 and 1934


def switchpoint_model() -> pm.Model:
    """The getting-started model; the masked (missing) counts are imputed by PyMC."""
    observed = np.ma.masked_array(DISASTERS, mask=MISSING)
    with pm.Model() as model:
        s = pm.DiscreteUniform("switchpoint", lower=YEARS.min(), upper=YEARS.max())
        early = pm.Exponential("early_rate", 1.0)
        late = pm.Exponential("late_rate", 1.0)
        pm.Poisson("disasters", pm.math.switch(s >= YEARS, early, late), observed=observed)
    return model


def switchpoint_posterior() -> tuple[np.ndarray, dict]:
    """``p(s | D)`` over ``YEARS`` and, per ``s``, the early rate's and first missing count's
    conditional mean and variance (Gamma(a, b) rates; the count a negative binomial)."""
    seen = ~MISSING
    early = YEARS[None, :] <= YEARS[:, None]  # row s: the years before the switch
    n_e = (early & seen).sum(axis=1)
    s_e = np.where(early & seen, DISASTERS, 0).sum(axis=1)
    n_l, s_l = seen.sum() - n_e, DISASTERS[seen].sum() - s_e
    log_p = (
        special.gammaln(s_e + 1)
        - (s_e + 1) * np.log(n_e + 1)
        + special.gammaln(s_l + 1)
        - (s_l + 1) * np.log(n_l + 1)
    )
    p = np.exp(log_p - log_p.max())
    p /= p.sum()
    a_e, b_e, a_l, b_l = s_e + 1.0, n_e + 1.0, s_l + 1.0, n_l + 1.0
    first = int(np.flatnonzero(MISSING)[0])
    in_early = YEARS[first] <= YEARS
    a_m, b_m = np.where(in_early, a_e, a_l), np.where(in_early, b_e, b_l)
    conditional = {
        "early": (a_e / b_e, a_e / b_e**2),
        "missing": (a_m / b_m, a_m / b_m + a_m / b_m**2),
    }
    return p, conditional


def switchpoint_exact() -> dict:
    """``{key: (mean, variance)}`` of the switchpoint, the early rate and the 1890 count."""
    p, conditional = switchpoint_posterior()
    mean_s = float(p @ YEARS)
    out = {"s": (mean_s, float(p @ (YEARS - mean_s) ** 2))}
    for key, (mean, var) in conditional.items():
        total = float(p @ mean)
        out[key] = (total, float(p @ var + p @ (mean - total) ** 2))
    return out


# --- mixture assignment --------------------------------------------------------------------
MIX_DATA = np.array([-1.9, -1.2, -0.8, -0.5, -0.1, 0.2, 0.4, 0.9, 1.3, 1.6, 2.1, 2.8])
MIX_PRIOR = ((-1.0, 1.0), (1.0, 1.0))  # (mean, sd) of μ_0 and μ_1
MIX_SD = 1.0


def mixture_model() -> pm.Model:
    with pm.Model() as model:
        mu0 = pm.Normal("mu0", *MIX_PRIOR[0])
        mu1 = pm.Normal("mu1", *MIX_PRIOR[1])
        z = pm.Bernoulli("z", 0.5, shape=len(MIX_DATA))
        pm.Normal("y", pt.switch(z, mu1, mu0), MIX_SD, observed=MIX_DATA)
    return model


def _component(y: np.ndarray, mean: float, sd: float) -> tuple[float, float, float]:
    """Log marginal likelihood of ``y`` under one component, and μ's posterior mean, variance."""
    n, total = len(y), float(y.sum())
    precision = 1 / sd**2 + n / MIX_SD**2
    post_mean = (mean / sd**2 + total / MIX_SD**2) / precision
    log_marginal = (
        -0.5 * n * math.log(2 * math.pi * MIX_SD**2)
        - 0.5 * math.log(precision * sd**2)
        - 0.5 * (float(((y / MIX_SD) ** 2).sum()) + mean**2 / sd**2 - precision * post_mean**2)
    )
    return log_marginal, post_mean, 1 / precision


def mixture_exact() -> dict:
    """``{key: (mean, variance)}`` of ``1[z_0 = 1]`` and ``μ_1``, by enumerating ``z``."""
    rows = []
    for z in itertools.product((0, 1), repeat=len(MIX_DATA)):
        z = np.array(z, dtype=bool)
        l0, _, _ = _component(MIX_DATA[~z], *MIX_PRIOR[0])
        l1, m1, v1 = _component(MIX_DATA[z], *MIX_PRIOR[1])
        rows.append((l0 + l1, z[0], m1, v1))
    log_w, z0, m1, v1 = (np.array(c, dtype=float) for c in zip(*rows, strict=True))
    w = np.exp(log_w - log_w.max())
    w /= w.sum()
    p = float(w @ z0)
    mean1 = float(w @ m1)
    return {"z0": (p, p * (1 - p)), "mu1": (mean1, float(w @ v1 + w @ (m1 - mean1) ** 2))}
