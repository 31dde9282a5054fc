"""The sampling progress display: every chain's true draw rate, however short it ran."""

import io
import re
from types import SimpleNamespace

import numpy as np
import pymc as pm
import pytest
from pymc.sampling.parallel import Draw
from pymc.step_methods.compound import BlockedStep
from rich.console import Console

from adversary.inference import sample
from adversary.inference.progress import ChainProgress, SamplingClock, draw_rate_text
from adversary.inference.sampling import PYMC_FALLBACK_TUNE, _tune_steps
from adversary.time_budget import TimeBudgetError, time_budget


@pytest.mark.parametrize(
    ("draws", "seconds", "text"),
    [
        (999, 0.1, "9,990 draws/s"),
        (3, 1.5, "2 draws/s"),
        (1, 2.0, "2.00 s/draw"),
        (0, 1.0, "- draws/s"),
        (5, None, "- draws/s"),
        (5, 0.0, "- draws/s"),
    ],
)
def test_rate_text(draws, seconds, text):
    assert draw_rate_text(draws, seconds) == text


def _rates(output: str) -> list[float]:
    return [float(rate.replace(",", "")) for rate in re.findall(r"([\d,.]+) draws/s", output)]


def test_a_chain_finishing_in_a_blink_shows_its_true_rate():
    # PyMC's own bar showed "0.00 draws/s" for any chain done within 0.25 s.
    # The bars' clock is ours: each round of draws takes 50 µs, so each chain
    # runs its 2,000 draws in 0.1 s, at 20,000 draws/s (from its first draw).
    draws, seconds_per_draw = 2000, 5e-5
    now = [0.0]
    output = io.StringIO()
    console = Console(file=output, width=120, force_terminal=False)
    with ChainProgress(
        chains=2, draws_per_chain=draws, console=console, get_time=lambda: now[0]
    ) as progress:
        for index in range(draws):
            for chain in range(2):
                progress(trace=None, draw=Draw(chain, False, index, False, [], {}))
            now[0] += seconds_per_draw
    finished_in = (draws - 1) * seconds_per_draw
    assert finished_in < 0.25
    assert _rates(output.getvalue()) == [round((draws - 1) / finished_in)] * 2


def test_sample_shows_one_bar_per_chain_and_calls_the_users_callback(capsys):
    with pm.Model() as model:
        x = pm.Categorical("x", p=np.array([0.2, 0.3, 0.5]))
        pm.Normal("y", mu=x, sigma=1.0, observed=1.0)
    seen = []
    sample(
        model,
        draws=150,
        tune=50,
        chains=2,
        cores=1,
        random_seed=1,
        callback=lambda trace, draw: seen.append(draw.chain),
    )
    captured = capsys.readouterr()
    assert captured.out == ""  # the bars go to stderr: stdout holds a command's results
    output = captured.err
    assert output.count("200/200") == 2
    assert all(rate > 0 for rate in _rates(output))
    assert np.bincount(seen).tolist() == [200, 200]


def test_default_tuning_is_the_one_pymc_runs():
    class Gibbs(BlockedStep):
        default_tune_steps = 200
        step = None

    ours = object.__new__(Gibbs)  # only its variables and default are read
    ours.vars = ["x"]
    model = SimpleNamespace(free_RVs=["X", "MU"], rvs_to_values={"X": "x", "MU": "mu"})
    assert _tune_steps(None, [ours], model) == PYMC_FALLBACK_TUNE == 1000  # NUTS for mu
    model.free_RVs = ["X"]
    assert _tune_steps(None, [ours], model) == 200
    assert _tune_steps(7, [ours], model) == 7


def clocked(times, total: int, chains=None, parallel: int = 1):
    """A SamplingClock of ``total`` draws a chain fed one draw per time in ``times``, of
    chain ``chains[i]`` (default: all of chain 0)."""
    chains = chains or [0] * len(times)
    ticks = iter(times)
    clock = SamplingClock(len(set(chains)), total, parallel, get_time=lambda: next(ticks))
    for chain in chains:
        clock(None, SimpleNamespace(chain=chain))
    return clock


def test_the_sampling_clock_is_not_fooled_by_compiles_between_draws():
    # 1,000 draws of 10 ms; numba compiles for 25 s after the first draw and 8 s later on.
    times = [0.0, 25.0, 25.01, 25.02, 33.02, 33.03, 33.04, 33.05, 33.06]
    with time_budget("1 min"):
        clocked(times, total=1000)
    # Two chains on two cores, each 20 ms a draw, both compiling after their first draw.
    times = [0.0, 0.07, 5.85, 5.86, 5.87, 5.88, 5.89, 5.90, 5.91, 5.92, 5.93, 5.94]
    with time_budget("1 min"):
        clocked(times, total=1000, chains=[0, 1] * 6, parallel=2)
    # Draws of 1 s are refused, the rate per draw being 1 s (one chain) ...
    with time_budget("1 min"), pytest.raises(TimeBudgetError, match=r"1e\+03 ms each"):
        clocked([float(t) for t in range(8)], total=1000)
    # ... or 0.5 s (two chains of 1 s a draw at once).
    with time_budget("1 min"), pytest.raises(TimeBudgetError, match=r"500 ms each"):
        clocked([t / 2 for t in range(12)], total=1000, chains=[0, 1] * 6, parallel=2)


def test_the_sampling_clock_waits_for_five_gaps_after_each_chains_first_and_a_second():
    with time_budget("1 min"):
        assert not clocked([0.0, 5.0, 10.0, 15.0, 20.0, 25.0], total=1000).checked  # 4 gaps
        assert clocked([0.0, 5.0, 10.0, 15.0, 20.0, 25.0, 30.0], total=7).checked
        assert not clocked([t / 10 for t in range(10)], total=10**6).checked  # 0.9 s
