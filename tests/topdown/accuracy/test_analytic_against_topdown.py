"""The analytic variance the frontier search uses is the variance of TopDown's own estimates.

TopDown with every query (``adversary.topdown.every_query``) run in its linear
mode (no non-negativity, no rounding) many times over a small synthetic state:
the mean squared error of each metric at each level must equal the analytic
variance within its Monte Carlo error; and with non-negativity and rounding
the published tables' MAE is reported beside the normal approximation.
"""

import numpy as np
import pytest

from adversary.analyses.reconstruction_study import block_cells
from adversary.budget import get_preset
from adversary.population.synthetic import synthetic_population
from adversary.topdown.accuracy import analytic_accuracy, simulated_accuracy
from adversary.topdown.every_query import every_query_runs, truth_tables


@pytest.fixture(scope="module")
def truth():
    persons = synthetic_population(3_000, seed=5)
    return truth_tables(persons.assign(cell=block_cells(persons)))


@pytest.mark.parametrize("total", [2.56, 0.5])
def test_linear_topdown_mse_equals_the_analytic_variance(truth, total):
    allocation = get_preset().with_rho_total(total)
    # Each run draws every unit's noise with the exact sampler (its cost is the test's): 100
    # runs, not 400. The per-run MSEs are independent, so ``mse_se`` = sd/√runs is their mean's
    # standard error and 4.5 SE is a two-sided 7e-6 tail (normal, by the CLT over runs) at any
    # number of runs; at 100 runs it still detects a relative error of the variance of about
    # 4.5·√(2/(56·units))/√100: 1.1 % at the 57 blocks, 6 % at the 2 block groups.
    runs = 100
    published = every_query_runs(truth, allocation, runs, seed=11, nonnegative=False, rounded=False)
    simulated = simulated_accuracy(published, truth)
    levels = [level for level in simulated["level"].values if level != "state"]
    analytic = analytic_accuracy(allocation, truth, levels=levels)
    mse = simulated["mse"].sel(level=levels)
    se = simulated["mse_se"].sel(level=levels)
    # each a mean of 100 runs' squared errors: within 4.5 SE (a level held by the invariant, as a
    # county that is the whole state, has variance 0 and float64 round-off)
    excess = np.abs(mse - analytic["variance"]) - 4.5 * se
    assert np.all(excess.values < 1e-9), excess.values
    # the discrete Gaussian's noise is not Gaussian, but the estimates are sums of many
    # of them: the MAE is sqrt(2/pi) sd within 4.5 Monte Carlo SE and 2 %
    mae, mae_se = simulated["mae"].sel(level=levels), simulated["mae_se"].sel(level=levels)
    excess = np.abs(mae - analytic["mae"]) - 4.5 * mae_se - 0.02 * analytic["mae"]
    assert np.all(excess.values < 1e-9), excess.values
