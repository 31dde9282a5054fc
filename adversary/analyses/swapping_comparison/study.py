"""DP (2020) beside swapping at equal accuracy: the study, its tables and its figure.

:func:`swapping_comparison` runs, on a population with households (a
synthetic state by default):

1. **Curves** (``curves``): DP with every ρ of the 2020 budget times each
   of ``scales`` — the MAE per cell of the noisy detailed measurements
   (exact) and of TopDown's published tables (simulated, ``runs``), the
   single-block measures (exact); each swapping mechanism at each of
   ``rates`` — the MAE of its released tables (``seeds`` swaps) and the
   single-block measures over ``targets`` sampled unique targets
   (:mod:`.single_block_risk`; the same targets for every rate and
   mechanism). Every MAE is at the block and the tract.
2. **Equal accuracy** (``equal``): for each mechanism, level and reference
   (the noisy measurements' ``mae_detailed``, TopDown's ``mae`` at scale 1),
   the rate of the same MAE and its 95 % bracket on the grid
   (:func:`.equal_accuracy_rate`), then again with ``refine`` more rates measured
   evenly inside the first bracket (accuracy only).
3. **Side by side** (``side_by_side``, ``reconstruction``): the single-block
   measures and the reconstruction by block size (:mod:`.reconstruction`) of
   DP at 2020 and of each mechanism at each equal-accuracy rate found on the grid.

:meth:`ComparisonResult.figure` draws risk against accuracy, one curve per
mechanism (ρ or the rate varied), with Monte Carlo error bars.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from ..._validation import scalar_integer
from ...noise import CellKeyNoise
from ...population.synthetic import synthetic_population
from ...scenarios.swapping.laws import HouseholdSwapLaw
from ...scenarios.swapping.targeted_law import TargetedSwapLaw
from ...swapping import HouseholdSwapping, assign_households
from ...swapping.cell_key import CellKeyMethod, SwapThenCellKey
from ...swapping.targeted import TargetedRecordSwapping
from .dp_accuracy import measurement_accuracy, topdown_accuracy
from .reconstruction import dp_reconstruction, swap_reconstruction
from .single_block_risk import MEASURES, dp_single_block, swap_single_block, unique_targets
from .swap_accuracy import as_rates, equal_accuracy_rate, swap_accuracy

__all__ = ["Compared", "ComparisonResult", "swapping_comparison"]

#: The levels whose accuracy is compared.
LEVELS = ("block", "tract")
#: The DP references of equal accuracy: name → the curve's column (``_se``: its SE, if any).
REFERENCES = {"measurements": "mae_detailed", "topdown": "mae"}


@dataclass(frozen=True)
class Compared:
    """A swapping mechanism in the comparison: its ``name``, the ``mechanism`` (a dataclass
    with ``rate``, replaced by each rate), the adversary's ``law(rate)``
    (:mod:`adversary.scenarios.swapping.laws`)."""

    name: str
    mechanism: object
    law: object

    @property
    def cell_key(self):
        """The p-table of a mechanism composed with the cell key method (else ``None``)."""
        return getattr(getattr(self.mechanism, "cell_key", None), "noise", None)

    def single_block(self, targets, rate: float) -> dict:
        """The single-block measures over ``targets`` at ``rate`` (:func:`.swap_single_block`)."""
        return swap_single_block(targets, self.law(float(rate)), cell_key=self.cell_key)


#: The cell key method's p-table of the default TRS + cell key (an illustrative one).
CELL_KEY = CellKeyNoise(target_variance=1.0, bound=3)


def default_mechanisms(
    persons: pd.DataFrame, *, within: str = "county", seed: int = 0, cell_key=CELL_KEY
):
    """Household swapping from the same ``within`` area (law ``HouseholdSwapLaw(rate)``),
    targeted record swapping with its defaults (law
    :class:`~adversary.scenarios.swapping.targeted_law.TargetedSwapLaw` with the donor rates
    per household profile of one run of the mechanism at the rate on ``persons``, seeded
    ``seed``), and TRS then the cell key method with the p-table ``cell_key``
    (:class:`~adversary.swapping.cell_key.SwapThenCellKey`; the same law, the p-table's noise
    on the release)."""
    trs = TargetedRecordSwapping()

    def trs_law(rate):
        at_rate = dataclasses.replace(trs, rate=rate)
        donors = at_rate.run(persons, seed=seed).donor_rates()
        return TargetedSwapLaw(at_rate, donor_rate=donors)

    return (
        Compared("swapping", HouseholdSwapping(0.0, within=within), HouseholdSwapLaw),
        Compared("trs", trs, trs_law),
        Compared("trs+cell key", SwapThenCellKey(trs, CellKeyMethod(cell_key)), trs_law),
    )


def _population(persons, seed: int) -> pd.DataFrame:
    if isinstance(persons, pd.DataFrame):
        if "household" not in persons.columns:
            raise ValueError(
                "persons: no 'household' column (adversary.swapping.assign_households)"
            )
        return persons
    persons = scalar_integer(persons, "persons", 1)
    return assign_households(synthetic_population(persons, seed=seed), seed=seed)


def _dp_curve(persons, scales, budget, runs, seed) -> pd.DataFrame:
    rows = []
    for scale in scales:
        measured = measurement_accuracy(budget, scale=scale, levels=("tract", "block"))
        published = topdown_accuracy(
            persons, budget, scale=scale, runs=runs, seed=seed, levels=("tract", "block")
        )
        row = {"mechanism": "dp", "parameter": "scale", "value": float(scale)}
        for level in LEVELS:
            row[f"mae_detailed_{level}"] = measured.loc[level, "mae_detailed"]
            row[f"mae_{level}"] = published.loc[level, "mae"]
            row[f"mae_{level}_se"] = published.loc[level, "mae_se"]
        for name, value in dp_single_block(budget, scale=scale).items():
            row |= {name: value, f"{name}_se": 0.0}
        rows.append(row)
    return pd.DataFrame(rows)


def _swap_curve(persons, compared: Compared, rates, targets, seeds, seed):
    """The mechanism's rows of ``curves`` and its accuracy table (:func:`.swap_accuracy`)."""
    accuracy = swap_accuracy(persons, compared.mechanism, rates, seeds=seeds, seed=seed)
    indexed = accuracy.set_index(["rate", "level"])
    rows = []
    for rate in rates:
        row = {"mechanism": compared.name, "parameter": "rate", "value": float(rate)}
        for level in LEVELS:
            row[f"mae_{level}"] = indexed.loc[(rate, level), "mae"]
            row[f"mae_{level}_se"] = indexed.loc[(rate, level), "mae_se"]
        row["moved"] = indexed.loc[(rate, "block"), "moved"]
        rows.append(row | compared.single_block(targets, rate))
    return pd.DataFrame(rows), accuracy.assign(mechanism=compared.name)


def _found(accuracy: pd.DataFrame, level: str, target: float, target_se: float):
    curve = accuracy[accuracy["level"] == level].sort_values("rate")
    return equal_accuracy_rate(curve["rate"], curve["mae"], curve["mae_se"], target, target_se)


def _equal(persons, dp: pd.Series, compared: Compared, accuracy, refine: int, seeds, seed):
    """The rows of ``equal`` for one mechanism, and its accuracy table with the rates added
    by the refinement: ``refine`` rates evenly inside each finite first bracket, then the
    bracket again on the grid with them."""
    rows = []
    for level in LEVELS:
        for reference, column in REFERENCES.items():
            target = dp[f"{column}_{level}"]
            target_se = dp.get(f"{column}_{level}_se", 0.0)
            found = _found(accuracy, level, target, target_se)
            if refine and math.isfinite(found.high) and found.high > found.low:
                inside = np.linspace(found.low, found.high, refine + 2)[1:-1]
                inside = inside[~np.isin(inside, accuracy["rate"].to_numpy())]
                if inside.size:
                    more = swap_accuracy(
                        persons, compared.mechanism, inside, seeds=seeds, seed=seed
                    )
                    accuracy = pd.concat(
                        [accuracy, more.assign(mechanism=compared.name)], ignore_index=True
                    )
                found = _found(accuracy, level, target, target_se)
            rows.append(
                {"mechanism": compared.name, "level": level, "reference": reference}
                | {k: getattr(found, k) for k in ("target", "target_se", "rate", "low", "high")}
                | {"increasing": found.increasing, "outcome": found.outcome}
            )
    return pd.DataFrame(rows), accuracy


@dataclass(frozen=True)
class ComparisonResult:
    """:func:`swapping_comparison`'s tables (module docstring): ``curves`` (one row per
    mechanism and setting), ``accuracy`` (each swapping mechanism's MAE per rate and level,
    the refinement's rates included), ``equal``, ``side_by_side`` and ``reconstruction`` (``None``
    when not run); ``settings`` the study's arguments."""

    curves: pd.DataFrame
    accuracy: pd.DataFrame
    equal: pd.DataFrame
    side_by_side: pd.DataFrame
    reconstruction: pd.DataFrame | None
    settings: dict

    def figure(self, level: str = "block", dp_accuracy: str = "topdown") -> Figure:
        """Risk against accuracy (the MAE per cell at ``level``; DP's of TopDown's tables,
        ``dp_accuracy="topdown"``, or of the noisy measurements, ``"measurements"``): one panel
        per measure, one curve per mechanism, error bars ±1.96 Monte Carlo SE."""
        if level not in LEVELS:
            raise ValueError(f"level must be one of {LEVELS}, got {level!r}")
        if dp_accuracy not in REFERENCES:
            raise ValueError(f"dp_accuracy must be one of {tuple(REFERENCES)}, got {dp_accuracy!r}")
        figure = Figure(figsize=(4.2 * len(MEASURES), 3.8), layout="constrained")
        axes = figure.subplots(1, len(MEASURES))
        for name, curve in self.curves.groupby("mechanism", sort=False):
            x, x_se = curve[f"mae_{level}"], curve[f"mae_{level}_se"]
            if name == "dp" and dp_accuracy == "measurements":
                x, x_se = curve[f"mae_detailed_{level}"], 0.0 * x_se
            label = "DP (ρ × scale)" if name == "dp" else f"{name} (rate)"
            for ax, (measure, (what, prior)) in zip(axes, MEASURES.items(), strict=True):
                ax.errorbar(
                    x,
                    curve[measure],
                    xerr=1.96 * np.nan_to_num(x_se),
                    yerr=1.96 * np.nan_to_num(curve[f"{measure}_se"]),
                    marker="o",
                    ms=3,
                    capsize=2,
                    label=label,
                )
                ax.set_title(f"{what.replace('_', ' ')}, p = {prior:g}")
                if what == "marginal_risk":
                    ax.set_yscale("log")
                ax.set_xlabel(f"MAE per cell, {level}")
        at_2020 = self.curves[(self.curves["mechanism"] == "dp") & (self.curves["value"] == 1.0)]
        for ax, measure in zip(axes, MEASURES, strict=True):
            column = f"mae_detailed_{level}" if dp_accuracy == "measurements" else f"mae_{level}"
            ax.plot(at_2020[column], at_2020[measure], "k*", ms=10, label="2020")
        axes[0].legend(fontsize="small")
        return figure


def swapping_comparison(
    persons=20_000,
    *,
    seed: int = 0,
    rates=(0.0, 0.02, 0.05, 0.1, 0.2, 0.5, 1.0),
    scales=(0.25, 1.0, 4.0, 16.0),
    within: str = "county",
    budget="pl94-2020-persons",
    seeds: int = 3,
    refine: int = 3,
    runs: int = 3,
    targets: int = 30,
    mechanisms=None,
    reconstruction: dict | None = None,
) -> ComparisonResult:
    """The comparison (module docstring) on ``persons`` (a table with households, or the
    size of a synthetic state seeded ``seed``).

    ``mechanisms``: :class:`Compared` ones (default :func:`default_mechanisms`);
    ``scales`` must include 1 (the 2020 budget); ``seeds`` swaps per rate and ``runs``
    TopDown releases per scale (Monte Carlo); ``refine`` rates added inside each bracket of
    equal accuracy; ``targets`` unique targets sampled for the single-block attack;
    ``reconstruction``: ``None`` (not run) or the DP study's fields
    (:class:`~adversary.analyses.reconstruction_study.ReconstructionStudy`:
    ``per_bin``, ``draws``, …).
    """
    seed = scalar_integer(seed, "seed", 0)
    refine = scalar_integer(refine, "refine", 0)
    rates = as_rates(rates)
    scales = tuple(float(s) for s in np.atleast_1d(scales))
    if 1.0 not in scales or any(not (s > 0 and math.isfinite(s)) for s in scales):
        raise ValueError(f"scales must be finite numbers > 0 including 1 (2020), got {scales!r}")
    persons = _population(persons, seed)
    if mechanisms is None:
        mechanisms = default_mechanisms(persons, within=within, seed=seed)
    sample = unique_targets(persons, targets, within=within, seed=seed)
    dp_curve = _dp_curve(persons, scales, budget, runs, seed)
    at_2020 = dp_curve[dp_curve["value"] == 1.0].iloc[0]
    parts, equal, accuracy = [dp_curve], [], []
    for m in mechanisms:
        curve, table = _swap_curve(persons, m, rates, sample, seeds, seed)
        found, table = _equal(persons, at_2020, m, table, refine, seeds, seed)
        parts.append(curve)
        equal.append(found)
        accuracy.append(table.sort_values(["level", "rate"], ignore_index=True))
    curves = pd.concat(parts, ignore_index=True)
    equal = pd.concat(equal, ignore_index=True)
    side = [curves[(curves["mechanism"] == "dp") & (curves["value"] == 1.0)].assign(setting="2020")]
    recon = []
    if reconstruction is not None:
        recon.append(
            dp_reconstruction(persons, budget=budget, seed=seed, **reconstruction).assign(
                mechanism="dp", setting="2020"
            )
        )
    for m in mechanisms:
        for found in equal[
            (equal["mechanism"] == m.name) & np.isfinite(equal["rate"])
        ].itertuples():
            setting = f"{found.reference} {found.level}: rate {found.rate:.3g}"
            row = {
                "mechanism": m.name,
                "parameter": "rate",
                "value": found.rate,
                "setting": setting,
            }
            side.append(pd.DataFrame([row | m.single_block(sample, found.rate)]))
            if reconstruction is not None:
                table = swap_reconstruction(
                    persons, m.mechanism, found.rate, seeds=seeds, seed=seed
                )
                recon.append(table.assign(mechanism=m.name, setting=setting))
    side_by_side = pd.concat(side, ignore_index=True)
    keep = ["mechanism", "setting", "value", *[c for n in MEASURES for c in (n, f"{n}_se")]]
    return ComparisonResult(
        curves=curves,
        accuracy=pd.concat(accuracy, ignore_index=True),
        equal=equal,
        side_by_side=side_by_side[keep],
        reconstruction=pd.concat(recon).reset_index() if recon else None,
        settings={
            "persons": len(persons),
            "seed": seed,
            "rates": rates.tolist(),
            "scales": list(scales),
            "within": within,
            "budget": str(budget),
            "seeds": seeds,
            "refine": refine,
            "runs": runs,
            "targets": len(sample),
        },
    )
