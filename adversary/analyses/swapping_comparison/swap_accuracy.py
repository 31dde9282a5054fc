"""The accuracy of a swapping release as a function of its rate, and the rate of equal accuracy.

A swapped release publishes the exact counts of the swapped population
(:func:`adversary.swapping.tables.swapped_tables`), or those counts perturbed
by the cell key method (a mechanism with ``tables(persons, *, seed)``,
:class:`adversary.swapping.cell_key.SwapThenCellKey`), so its error at a level
is the released minus the true counts of each unit's 56 cells: persons keep
their characteristics, only their household's geography moves.
:func:`swap_accuracy` measures the mean absolute error per cell
(:func:`adversary.swapping.tables.mean_absolute_error`) at each rate of a
grid, over ``seeds`` swaps, with its Monte Carlo standard error over seeds.
A household moved from block b to b′ changes the two blocks' cells by at
most its size each, so the block level's error sum is at most twice the
persons moved (equality when no moved-in and moved-out persons of a block
share a cell): the MAE of a swap alone is 0 at rate 0 and about linear in
the rate while swaps rarely meet in a block. Every unit made of whole
``within`` areas keeps its counts (a tract's are exact when partners come
from the same tract).

:func:`equal_accuracy_rate` inverts the curve: the rate whose MAE equals a
target (the 2020 release's, :mod:`.dp_accuracy`), by linear interpolation
between grid rates at the first crossing, and a 95 % bracket on the grid
from the pointwise band ``mae ± 1.96·sqrt(se² + target_se²)``: the lower end
is the last grid rate whose band lies wholly below the target before the
band first reaches it, the upper end the first grid rate whose band lies
wholly above it (``inf`` if none on the grid). As the MAE increases with the
rate (checked: ``increasing``), the rate of equal accuracy lies between them
up to the Monte Carlo error of both curves, with no assumption on the
curve's shape between grid rates (linear interpolation would understate the
bracket where the curve bends); a finer grid between the ends narrows it.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd

from ..._validation import scalar_integer
from ...swapping.households import HOUSEHOLD
from ...swapping.tables import mean_absolute_error, swapped_tables
from .errors import Z95, mean_and_se

__all__ = [
    "EqualAccuracy",
    "as_rates",
    "equal_accuracy_rate",
    "released_tables",
    "swap_accuracy",
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
    """``mechanism`` at ``rate``: a swapping mechanism (a dataclass with ``rate``), or one
    composed with another method (a dataclass whose ``swapping`` is one)."""
    inner = getattr(mechanism, "swapping", None)
    if inner is not None and dataclasses.is_dataclass(mechanism):
        return dataclasses.replace(mechanism, swapping=with_rate(inner, rate))
    if not dataclasses.is_dataclass(mechanism) or not hasattr(mechanism, "rate"):
        raise TypeError(
            f"mechanism must be a swapping mechanism with a rate (a dataclass), got {mechanism!r}"
        )
    return dataclasses.replace(mechanism, rate=float(rate))


def _households_moved(swapped: pd.DataFrame) -> float:
    members = swapped[swapped[HOUSEHOLD].to_numpy() >= 0]
    moved = members.groupby(HOUSEHOLD, sort=False)["swapped"].first()
    return float(moved.mean()) if len(moved) else 0.0


def released_tables(persons: pd.DataFrame, mechanism, *, seed: int):
    """``(truth, released, moved)``: the true and released tables of every level
    (:func:`~adversary.topdown.every_query.truth_tables`' format) and the share of
    households moved, for one release of ``mechanism`` seeded ``seed``."""
    if callable(getattr(mechanism, "tables", None)):
        truth, released = mechanism.tables(persons, seed=seed)
        return truth, released, _households_moved(mechanism.swap(persons, seed=seed))
    result = swapped_tables(persons, mechanism, seed=seed)
    return result.truth, result.swapped, result.rate


def swap_accuracy(
    persons: pd.DataFrame,
    mechanism,
    rates,
    *,
    seeds: int = 4,
    seed: int = 0,
    levels=("tract", "block"),
) -> pd.DataFrame:
    """Rows ``(rate, level)``: ``mae`` per cell of the released counts, ``mae_se`` over
    ``seeds`` releases (seeded ``seed``, ``seed + 1``, …), ``moved`` (mean share of
    households moved).

    ``persons`` has a ``household`` column (:func:`~adversary.swapping.assign_households`);
    ``mechanism`` is a swapping mechanism, or one composed with the cell key method, whose
    rate is replaced by each of ``rates`` (:func:`with_rate`).
    """
    rates = as_rates(rates)
    seeds = scalar_integer(seeds, "seeds", 2)
    seed = scalar_integer(seed, "seed", 0)
    rows = []
    for rate in rates:
        at_rate = with_rate(mechanism, rate)
        per_seed = {level: [] for level in levels}
        moved = []
        for s in range(seed, seed + seeds):
            truth, released, share = released_tables(persons, at_rate, seed=s)
            moved.append(share)
            for level in levels:
                per_seed[level].append(mean_absolute_error(truth, released, level))
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
    ``target_se``, ``increasing`` (the grid's mean MAE never decreases) and ``outcome``:
    ``"reached"``, ``"more accurate at every rate"`` (the MAE stays below the target on the
    whole grid: ``rate`` is ``inf``) or ``"less accurate at every rate"`` (the MAE at the
    grid's lowest rate is already above the target: ``rate`` is that lowest rate)."""

    rate: float
    low: float
    high: float
    target: float
    target_se: float
    increasing: bool
    outcome: str


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


def _grid_bracket(rates: np.ndarray, low_edge, high_edge, target: float):
    """The last grid rate with ``high_edge < target`` before ``high_edge`` first reaches the
    target, and the first grid rate with ``low_edge > target`` (``inf`` if none)."""
    reached = np.flatnonzero(high_edge >= target)
    first = int(reached[0]) if reached.size else rates.size
    low = float(rates[first - 1]) if first > 0 else float(rates[0])
    above = np.flatnonzero(low_edge > target)
    return low, float(rates[above[0]]) if above.size else math.inf


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
    low, high = _grid_bracket(rates, mae - band, mae + band, target)
    rate = _first_crossing(rates, mae, target)
    if mae[0] > target:
        outcome = "less accurate at every rate"
    elif math.isinf(rate):
        outcome = "more accurate at every rate"
    else:
        outcome = "reached"
    return EqualAccuracy(
        rate=rate,
        low=low,
        high=high,
        target=target,
        target_se=target_se,
        increasing=bool(np.all(np.diff(mae) >= 0)),
        outcome=outcome,
    )
