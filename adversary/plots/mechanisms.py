"""The same attack under different noise mechanisms at equal noise variance: numbers and figures.

:func:`equal_variance_mechanisms` builds the four mechanisms of the comparison
— the discrete Gaussian, the discrete Laplace (two-sided geometric), the
truncated geometric and the cell-key p-table — with one variance;
:func:`variance_sweep` computes a case's marginal measures under each over a
range of variances. The figures (each a :class:`matplotlib.figure.Figure`
built without pyplot) show the pmfs, the single-block posterior against the
release, the measures against the variance, and the unknown-attribute
posterior over the two released cells.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..noise.mechanisms import (
    CellKeyNoise,
    DiscreteGaussianNoise,
    DiscreteLaplaceNoise,
    NoiseMechanism,
    TruncatedGeometricNoise,
)
from ..scenarios import single_block as sb
from ..scenarios import unknown_attribute as ua

__all__ = [
    "COLOURS",
    "MECHANISM_NAMES",
    "category_posterior_figure",
    "default_bound",
    "equal_variance_mechanisms",
    "measures_by_variance_figure",
    "pmf_figure",
    "posterior_by_release_figure",
    "variance_sweep",
]

#: The mechanisms compared, in the order of every table and legend.
MECHANISM_NAMES = ("discrete Gaussian", "discrete Laplace", "truncated geometric", "cell key")
#: One colour per mechanism.
COLOURS = dict(
    zip(MECHANISM_NAMES, ("tab:blue", "tab:orange", "tab:green", "tab:red"), strict=True)
)
_PRIOR_STYLES = ("-", "--", ":", "-.", (0, (1, 1)), (0, (5, 1)))
_MEASURES = ("marginal_posterior", "marginal_risk", "correct_decision_probability")


def default_bound(variance: float) -> int:
    """The bound ``E = round(√(5V))`` (at least 2) of the bounded mechanisms at variance V.

    About 2.2 standard deviations: ``E = 5`` at the 2020 block variance 5.04.
    Both bounded mechanisms exist there (they need ``V < E(E+1)/3``).
    """
    return max(2, round(math.sqrt(5.0 * float(variance))))


def equal_variance_mechanisms(variance, bound: int | None = None) -> dict[str, NoiseMechanism]:
    """The four mechanisms with one noise variance, keyed by :data:`MECHANISM_NAMES`.

    ``variance`` is a number, or a :class:`~adversary.noise.mechanisms.DiscreteGaussianNoise`
    that is kept as the Gaussian (e.g. ``DiscreteGaussianNoise.from_rho(rho)``)
    and whose variance the others match. ``bound`` is E of the truncated
    geometric and the cell key (default :func:`default_bound`).
    """
    if isinstance(variance, DiscreteGaussianNoise):
        gaussian = variance
        variance = gaussian.variance
    else:
        gaussian = DiscreteGaussianNoise.from_variance(variance)
    bound = default_bound(variance) if bound is None else int(bound)
    return {
        "discrete Gaussian": gaussian,
        "discrete Laplace": DiscreteLaplaceNoise.from_variance(variance),
        "truncated geometric": TruncatedGeometricNoise.from_variance(variance, bound),
        "cell key": CellKeyNoise(variance, bound),
    }


def _with_mechanism(case, mechanism: NoiseMechanism):
    """``case`` with its noise replaced by ``mechanism`` (a case with ``rho`` and ``mechanism``)."""
    return dataclasses.replace(case, rho=None, mechanism=mechanism)


def variance_sweep(case, variances, bound=None, priors=None) -> pd.DataFrame:
    """The case's marginal measures under each mechanism at each variance (long format).

    ``case`` is a single-block or unknown-attribute case (any case with fields
    ``rho`` and ``mechanism`` taking one mechanism); ``bound`` a fixed E or
    ``None`` for :func:`default_bound` at each variance; ``priors`` the prior
    labels (default all). Index ``(variance, mechanism, prior)``; columns the
    measures (3.3), (3.4), (3.6), their ``error_bound`` and the bound ``E``.
    """
    labels = list(case.priors) if priors is None else list(priors)
    rows, index = [], []
    for variance in np.atleast_1d(np.asarray(variances, dtype=np.float64)):
        mechanisms = equal_variance_mechanisms(float(variance), bound)
        for name, mechanism in mechanisms.items():
            varied = _with_mechanism(case, mechanism)
            for label in labels:
                measures = varied.marginal_measures(label)
                row = {key: getattr(measures, key) for key in _MEASURES}
                row["error_bound"] = measures.error_bound
                row["bound"] = getattr(mechanism, "bound", np.nan)
                rows.append(row)
                index.append((float(variance), name, label))
    names = ["variance", "mechanism", "prior"]
    return pd.DataFrame(rows, index=pd.MultiIndex.from_tuples(index, names=names))


def pmf_figure(mechanisms: dict[str, NoiseMechanism], reach: int | None = None) -> Figure:
    """The mechanisms' pmfs on a log scale (bounded noise stops at ±E)."""
    if reach is None:
        reach = max(12, 3 * max(getattr(m, "bound", 0) for m in mechanisms.values()))
    z = np.arange(-reach, reach + 1)
    figure = Figure(figsize=(7, 4), layout="constrained")
    axis = figure.subplots()
    for name, mechanism in mechanisms.items():
        pmf = mechanism.pmf(z)
        keep = pmf > 0
        axis.plot(z[keep], pmf[keep], marker=".", color=COLOURS.get(name), label=mechanism.label)
    variance = next(iter(mechanisms.values())).variance
    axis.set(yscale="log", xlabel="noise z", ylabel="P[Z = z]")
    axis.set_title(f"Noise pmfs at variance {variance:.4g}")
    axis.legend(fontsize="small")
    return figure


def posterior_by_release_figure(
    case: sb.SingleBlockCase, mechanisms: dict[str, NoiseMechanism], priors=None, releases=None
) -> Figure:
    """Single-block posterior (3.1) of the truth against the release, one panel per prior."""
    labels = list(case.priors)[:2] if priors is None else list(priors)
    if releases is None:
        releases = np.arange(case.known_count - 10, case.known_count + 13)
    releases = np.asarray(releases)
    figure = Figure(figsize=(5 * len(labels), 4), layout="constrained")
    axes = np.atleast_1d(figure.subplots(1, len(labels), sharey=True))
    for axis, label in zip(axes, labels, strict=True):
        prior = case.priors[label]
        for name, mechanism in mechanisms.items():
            possible = (mechanism.pmf(releases - case.known_count - 1) > 0) | (
                mechanism.pmf(releases - case.known_count) > 0
            )
            post = sb.posterior(
                releases[possible],
                prior,
                known_count=case.known_count,
                true_count=case.true_count,
                mechanism=mechanism,
            )
            axis.plot(releases[possible], post, marker=".", color=COLOURS.get(name), label=name)
        axis.axhline(
            prior if case.truth == case.known_count + 1 else 1 - prior, color="0.6", lw=0.8
        )
        axis.set(xlabel="released count x1*", title=f"p = {label}", ylim=(-0.02, 1.02))
    axes[0].set_ylabel("posterior of the truth")
    axes[0].legend(fontsize="small")
    figure.suptitle(f"{case.name}: posterior against the release")
    return figure


def measures_by_variance_figure(
    sweep: pd.DataFrame, priors=None, reference: float | None = None, title: str = ""
) -> Figure:
    """Marginal risk (3.4) and correct-decision probability (3.6) against the noise variance.

    Colour: the mechanism; line style: the prior. ``reference`` marks a
    variance (e.g. the 2020 block variance) with a dotted line.
    """
    labels = list(dict.fromkeys(sweep.index.get_level_values("prior")))
    labels = labels if priors is None else list(priors)
    names = [n for n in MECHANISM_NAMES if n in set(sweep.index.get_level_values("mechanism"))]
    figure = Figure(figsize=(11, 4.2), layout="constrained")
    risk_axis, decision_axis = figure.subplots(1, 2)
    for name in names:
        for style, label in zip(_PRIOR_STYLES, labels, strict=False):
            curve = sweep.xs((name, label), level=("mechanism", "prior"))
            common = dict(color=COLOURS[name], linestyle=style)
            risk_axis.plot(curve.index, curve["marginal_risk"], **common)
            decision_axis.plot(curve.index, curve["correct_decision_probability"], **common)
    risk_axis.set(xscale="log", yscale="log", xlabel="noise variance", ylabel="marginal risk")
    decision_axis.set(
        xscale="log", xlabel="noise variance", ylabel="P[correct decision]", ylim=(-0.02, 1.02)
    )
    for axis in (risk_axis, decision_axis):
        if reference is not None:
            axis.axvline(reference, color="0.5", linestyle=":")
    handles = [risk_axis.plot([], [], color=COLOURS[name], label=name)[0] for name in names] + [
        risk_axis.plot([], [], color="0.3", linestyle=style, label=f"p = {label}")[0]
        for style, label in zip(_PRIOR_STYLES, labels, strict=False)
    ]
    decision_axis.legend(handles=handles, fontsize="small", loc="upper right")
    figure.suptitle(title or "Marginal measures against the noise variance")
    return figure


def category_posterior_figure(
    case: ua.UnknownAttributeCase,
    mechanisms: dict[str, NoiseMechanism],
    prior_label: str | None = None,
    reach: int = 8,
) -> Figure:
    """Posterior of the true category over the two released cells, one panel per mechanism.

    For a two-category case with both cells released: the adversary's
    posterior of the true category at every ``(x_1*, x_2*)`` within ``reach``
    of the known counts; white where no category can produce the releases.
    """
    if case.n_categories != 2 or len(case.released_indices) != 2:
        raise ValueError("case must have two categories with both cells released")
    prior = case.prior_vector(prior_label)
    m1, m2 = case.known_counts
    x1 = np.arange(m1 - reach, m1 + reach + 2)
    x2 = np.arange(m2 - reach, m2 + reach + 2)
    figure = Figure(figsize=(4 * len(mechanisms), 4), layout="constrained")
    axes = np.atleast_1d(figure.subplots(1, len(mechanisms), sharey=True))
    image = None
    a, b = np.meshgrid(x1, x2)
    for axis, (name, mechanism) in zip(axes, mechanisms.items(), strict=True):
        possible = (mechanism.pmf(a - m1 - 1) * mechanism.pmf(b - m2) > 0) | (
            mechanism.pmf(a - m1) * mechanism.pmf(b - m2 - 1) > 0
        )
        values = np.full(a.shape, np.nan)
        releases = np.stack([a[possible], b[possible]], axis=-1)
        post = ua.posterior(releases, prior, None, case.known_counts, mechanism=mechanism)
        values[possible] = post[:, case.true_index]
        image = axis.pcolormesh(x1, x2, values, vmin=0.0, vmax=1.0, cmap="viridis")
        axis.set(title=name, xlabel=f"x* of {case.categories[0]!r}", aspect="equal")
    axes[0].set_ylabel(f"x* of {case.categories[1]!r}")
    figure.colorbar(image, ax=list(axes), label=f"posterior of {case.true_category!r}")
    label = prior_label or next(iter(case.priors))
    figure.suptitle(f"{case.name}: posterior over the two released cells, prior {label}")
    return figure
