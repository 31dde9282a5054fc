"""The sampling progress display: every chain's true draw rate, however short it ran."""

import io
import re
import time
from types import SimpleNamespace

import numpy as np
import pymc as pm
import pytest
from pymc.sampling.parallel import Draw
from pymc.step_methods.compound import BlockedStep
from rich.console import Console

from adversary.inference import sample
from adversary.inference.progress import ChainProgress, draw_rate_text
from adversary.inference.sampling import PYMC_FALLBACK_TUNE, _tune_steps


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
    draws = 2000
    output = io.StringIO()
    console = Console(file=output, width=120, force_terminal=False)
    started = time.perf_counter()
    with ChainProgress(chains=2, draws_per_chain=draws, console=console) as progress:
        for index in range(draws):
            for chain in range(2):
                progress(trace=None, draw=Draw(chain, False, index, False, [], {}))
    elapsed = time.perf_counter() - started
    assert elapsed < 0.25
    rates = _rates(output.getvalue())
    assert len(rates) == 2
    # Each chain's clock runs inside the outer one: its rate is at least the outer rate.
    assert min(rates) >= (draws - 1) / elapsed * 0.99


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
