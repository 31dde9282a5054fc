"""The accuracy of a swapping release as a function of its rate, and the rate of equal accuracy.

A swapped release publishes the exact counts of the swapped population, so
its error at a level is the swapped minus the true counts of each unit's 56
cells (:mod:`.errors`): persons keep their characteristics, only their
household's geography moves. :func:`swap_accuracy` measures the mean
absolute error per cell at each rate of a grid, over ``seeds`` swaps, with
its Monte Carlo standard error over seeds. A household moved from block b to
b′ changes the two blocks' cells by at most its size each, so the block
level's error sum is at most twice the persons moved (equality when no
moved-in and moved-out persons of a block share a cell): the MAE is 0 at rate
0 and about linear in the rate while swaps rarely meet in a block. Within
an area ``within`` every unit containing whole areas keeps its counts (a
tract's are exact when partners come from the same tract).

:func:`equal_accuracy_rate` inverts the curve: the rate whose MAE equals a
target (the 2020 release's, :mod:`.dp_accuracy`), by linear interpolation
between grid rates at the first crossing, and a 95 % bracket from the
pointwise band ``mae ± 1.96·sqrt(se² + target_se²)``: the lower end is where
the band's upper edge first reaches the target, the upper end where its
lower edge does (``inf`` if it never does on the grid). The bracket carries
the Monte Carlo error of both curves, not the interpolation's (which a finer
grid reduces).
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from ..._validation import scalar_integer
from ...scenarios.reconstruction import REDUCED
from ..reconstruction_study import block_cells
from .errors import Z95, cell_counts, mean_and_se, release_mae

__all__ = [
    "EqualAccuracy",
    "as_rates",
    "equal_accuracy_rate",
    "swap_accuracy",
    "swapped_counts",
    "with_rate",
]


def as_rates(rates, name: str = "rates") -> np.ndarray:
    """``rates`` as a strictly increasing float array in ``[0, 1]`` (at least one)."""
    try:
        values = np.atleast_1d(np.asarray(rates, dtype=np.float64))
    except (TypeError, ValueError):
        raise ValueError(f"{name} must be numbers in [0, 1], got {rates!r}") from None
    if (
        values.ndim != 1
        or values.size == 0
        or not np.all((values >= 0) & (values <= 1))
        or np.any(np.diff(values) <= 0)
    ):
        raise ValueError(f"{name} must be increasing numbers in [0, 1], got {rates!r}")
    return values


def with_rate(mechanism, rate: float):
    """``mechanism`` (a swapping mechanism, a dataclass with ``rate``) at ``rate``."""
    if not dataclasses.is_dataclass(mechanism) or not hasattr(mechanism, "rate"):
        raise TypeError(
            f"mechanism must be a swapping mechanism with a rate (a dataclass), got {mechanism!r}"
        )
    return dataclasses.replace(mechanism, rate=float(rate))


def swapped_counts(persons, swapped, cells, levels, n_cells: int = REDUCED.n_cells) -> dict:
    """``{level: (true, swapped)}`` cell counts (units × cells) of ``persons`` and of the
    swapped persons ``swapped`` (same rows), units those of the true population."""
    out = {}
    for level in levels:
        units = np.unique(persons[level].to_numpy())
        out[level] = (
            cell_counts(persons, cells, level, units, n_cells),
            cell_counts(swapped, cells, level, units, n_cells),
        )
    return out


def swap_accuracy(
    persons: pd.DataFrame,
    mechanism,
    rates,
    *,
    seeds: int = 4,
    seed: int = 0,
    levels=("tract", "block"),
    noise=None,
) -> pd.DataFrame:
    """Rows ``(rate, level)``: ``mae`` per cell of the released counts, ``mae_se`` over
    ``seeds`` swaps (seeded ``seed``, ``seed + 1``, …), ``moved`` (mean share of persons
    whose household moved).

    ``persons`` has a ``household`` column (:func:`~adversary.swapping.assign_households`);
    ``mechanism`` is a swapping mechanism (``rate`` replaced by each of ``rates``).
    ``noise``: ``None`` (the swapped counts are published exactly) or a callable
    ``noise(counts, level, seed) -> published counts`` (e.g. the cell key method).
    """
    rates = as_rates(rates)
    seeds = scalar_integer(seeds, "seeds", 2)
    seed = scalar_integer(seed, "seed", 0)
    cells = block_cells(persons, REDUCED)
    rows = []
    for rate in rates:
        swapper = with_rate(mechanism, rate)
        per_seed = {level: [] for level in levels}
        moved = []
        for s in range(seed, seed + seeds):
            swapped = swapper.swap(persons, seed=s)
            moved.append(float(swapped["swapped"].mean()))
            for level, (true, out) in swapped_counts(persons, swapped, cells, levels).items():
                released = out if noise is None else noise(out, level, s)
                per_seed[level].append(release_mae(released, true)[0])
        for level in levels:
            mae, se = mean_and_se(per_seed[level])
            rows.append(
                {
                    "rate": float(rate),
                    "level": level,
                    "mae": mae,
                    "mae_se": se,
                    "moved": float(np.mean(moved)),
                    "seeds": seeds,
                }
            )
    return pd.DataFrame(rows)


@dataclasses.dataclass(frozen=True)
class EqualAccuracy:
    """The rate of equal accuracy: ``rate`` (interpolated), ``low``/``high`` (95 % bracket;
    ``high`` ``inf`` when the grid's band never reaches the target), ``target`` and
    ``target_se``, and ``increasing`` (the grid's mean MAE never decreases)."""

    rate: float
    low: float
    high: float
    target: float
    target_se: float
    increasing: bool


def _first_crossing(rates: np.ndarray, curve: np.ndarray, target: float) -> float:
    """The interpolated rate where ``curve`` first reaches ``target`` (``inf`` if never)."""
    above = np.flatnonzero(curve >= target)
    if above.size == 0:
        return math.inf
    i = int(above[0])
    if i == 0:
        return float(rates[0])
    x0, x1, y0, y1 = rates[i - 1], rates[i], curve[i - 1], curve[i]
    return float(x0 + (target - y0) * (x1 - x0) / (y1 - y0))


def equal_accuracy_rate(rates, mae, mae_se, target: float, target_se: float = 0.0):
    """:class:`EqualAccuracy` of a MAE curve ``mae`` (± ``mae_se``) over ``rates`` and a
    ``target`` MAE (± ``target_se``; module docstring)."""
    rates = as_rates(rates)
    mae = np.asarray(mae, dtype=np.float64)
    mae_se = np.nan_to_num(np.asarray(mae_se, dtype=np.float64))
    if mae.shape != rates.shape or mae_se.shape != rates.shape or not np.all(np.isfinite(mae)):
        raise ValueError(f"mae and mae_se must be finite, one per rate ({rates.size})")
    target, target_se = float(target), float(np.nan_to_num(target_se))
    if not math.isfinite(target) or target < 0 or target_se < 0:
        raise ValueError(f"target must be a MAE >= 0 with target_se >= 0, got {target!r}")
    band = Z95 * np.sqrt(mae_se**2 + target_se**2)
    return EqualAccuracy(
        rate=_first_crossing(rates, mae, target),
        low=_first_crossing(rates, mae + band, target),
        high=_first_crossing(rates, mae - band, target),
        target=target,
        target_se=target_se,
        increasing=bool(np.all(np.diff(mae) >= 0)),
    )
