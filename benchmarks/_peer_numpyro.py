"""The ``peers.py`` models written for NumPyro (imported only when NumPyro is installed).

Each ``*_spec`` returns a :class:`_peer_samplers.NumpyroSpec`: the same model
as the PyMC one (``_peer_models`` or the Gibbs benchmarks' ``Block``), and
the estimands from NumPyro's samples. Differences, all exact:

- switchpoint: the year is ``1851 + Categorical(111 equal weights)``: with
  ``DiscreteUniform(1851, 1961)`` NumPyro 0.22's ``DiscreteHMCGibbs`` and
  ``MixedHMC`` stayed at their first value in every run here. NumPyro's
  discrete samplers need enumerable supports, and a missing year's Poisson
  count has none; the missing years are left out of
  the likelihood (their counts sum to 1 over their support) and each draw's
  1890 count is drawn from ``Poisson(rate of 1890)`` afterwards;
- enumerated sites (``numpyro_enum``) are not sampled: each draw's value is
  drawn from its exact conditional given the continuous draw;
- the discrete Gaussian release likelihood is written up to its normalising
  constant (which does not depend on the latents).
"""

from __future__ import annotations

import _peer_models as models
import numpy as np
from _peer_samplers import NumpyroSpec


def _np():
    import jax.numpy as jnp
    import numpyro
    import numpyro.distributions as dist

    return jnp, numpyro, dist


def simple_2model_spec(subject=None) -> NumpyroSpec:
    def model():
        _, numpyro, dist = _np()
        numpyro.sample("x", dist.Normal(models.S2_MU, 1 / np.sqrt(models.S2_TAU)))
        numpyro.sample("y", dist.Bernoulli(models.S2_P))

    def values(samples, rng):
        x = samples["x"]
        y = samples["y"] if "y" in samples else rng.random(len(x)) < models.S2_P
        return {"y": y.astype(float), "x": x}

    return NumpyroSpec(model, values)


def switchpoint_spec(subject=None) -> NumpyroSpec:
    seen = ~models.MISSING
    years, counts = models.YEARS[seen], models.DISASTERS[seen]
    first = models.YEARS[models.MISSING][0]

    def model():
        jnp, numpyro, dist = _np()
        index = numpyro.sample("s", dist.Categorical(logits=jnp.zeros(len(models.YEARS))))
        s = models.YEARS[0] + index
        early = numpyro.sample("early", dist.Exponential(1.0))
        late = numpyro.sample("late", dist.Exponential(1.0))
        with numpyro.plate("years", len(years)):
            numpyro.sample("D", dist.Poisson(jnp.where(s >= years, early, late)), obs=counts)

    def values(samples, rng):
        if "s" in samples:
            s = models.YEARS[0] + samples["s"]
        else:  # enumerated: s drawn from p(s | rates, D) per draw
            s = _switchpoints(samples["early"], samples["late"], years, counts, rng)
        rate = np.where(s >= first, samples["early"], samples["late"])
        return {"s": s, "early": samples["early"], "missing": rng.poisson(rate)}

    return NumpyroSpec(model, values)


def _switchpoints(early, late, years, counts, rng) -> np.ndarray:
    """A draw of the switchpoint from its exact conditional given each draw's two rates."""
    before = years[None, :] <= models.YEARS[:, None]  # row: switchpoint, column: observed year
    s_e, n_e = before @ counts, before.sum(axis=1)
    s_l, n_l = counts.sum() - s_e, len(counts) - n_e
    log = (
        s_e[None] * np.log(early[:, None])
        - n_e[None] * early[:, None]
        + s_l[None] * np.log(late[:, None])
        - n_l[None] * late[:, None]
    )
    p = np.exp(log - log.max(axis=1, keepdims=True)).cumsum(axis=1)
    u = rng.random(len(early))[:, None] * p[:, -1:]
    return models.YEARS[(p < u).sum(axis=1)]


def mixture_spec(subject=None) -> NumpyroSpec:
    data = models.MIX_DATA

    def model():
        jnp, numpyro, dist = _np()
        mu0 = numpyro.sample("mu0", dist.Normal(*models.MIX_PRIOR[0]))
        mu1 = numpyro.sample("mu1", dist.Normal(*models.MIX_PRIOR[1]))
        with numpyro.plate("points", len(data)):
            z = numpyro.sample("z", dist.Bernoulli(0.5))
            numpyro.sample("y", dist.Normal(jnp.where(z, mu1, mu0), models.MIX_SD), obs=data)

    def values(samples, rng):
        mu0, mu1 = samples["mu0"], samples["mu1"]
        if "z" in samples:
            z0 = samples["z"][:, 0]
        else:  # z_0 | μ: the two components' densities at y_0
            log_odds = ((data[0] - mu0) ** 2 - (data[0] - mu1) ** 2) / (2 * models.MIX_SD**2)
            z0 = rng.random(len(mu1)) < 1 / (1 + np.exp(-log_odds))
        return {"z0": z0.astype(float), "mu1": mu1}

    return NumpyroSpec(model, values)


def records_spec(block, persons: int, cells: int, sigma2: float, values_of) -> NumpyroSpec:
    """``gibbs_block_records``: persons each in one of ``cells`` (uniform), noisy counts."""
    releases = np.array(block.releases)

    def model():
        jnp, numpyro, dist = _np()
        chosen = [
            numpyro.sample(f"P{i}", dist.Categorical(probs=jnp.full(cells, 1 / cells)))
            for i in range(persons)
        ]
        counts = sum(jnp.eye(cells)[c] for c in chosen)
        numpyro.factor("releases", -((releases - counts) ** 2).sum() / (2 * sigma2))

    def values(samples, rng):
        return values_of(block, np.stack([samples[f"P{i}"] for i in range(persons)], axis=1))

    return NumpyroSpec(model, values)


def tables_spec(block, tables) -> NumpyroSpec:
    """``gibbs_block_tables``: 50 persons on 56 cells, the ten noisy tables as factors."""
    variances = tables.sigma2s()
    margins = tables.margins()

    def model():
        jnp, numpyro, dist = _np()
        with numpyro.plate("persons", tables.PERSONS):
            cells = numpyro.sample("P", dist.Categorical(probs=jnp.array(block.prior)))
        counts = jnp.eye(tables.CELLS)[cells].sum(axis=0)
        for q, index in margins.items():
            table = jnp.zeros(index.max() + 1).at[index].add(counts)
            release = jnp.array(block.releases[q])
            numpyro.factor(f"x_{q}", -((release - table) ** 2).sum() / (2 * variances[q]))

    def values(samples, rng):
        return tables._values(block, samples["P"])

    return NumpyroSpec(model, values)
