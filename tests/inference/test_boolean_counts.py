"""Counting persons per cell with booleans: ``sum(pt.eq(cell, k) for cell in cells)``.

PyTensor 3.3's ``local_add_canonizer`` turns that sum into an add of booleans,
which its Python and C linkers compute as a logical or (two persons counted as
one); PyMC's log-p derivation applies the rewrite too. Enumeration, release
simulation and the exact measures must count right all the same
(:mod:`adversary.inference.safe`).
"""

import itertools

import numpy as np
import pymc as pm
import pytensor
import pytensor.tensor as pt
import pytest
from pytensor.graph.rewriting.utils import rewrite_graph

from adversary.distributions import DiscreteGaussian
from adversary.inference import enumerate_posterior
from adversary.inference.safe import counted_as_integers, safe_mode
from adversary.measures.simulation import ReleaseSimulator
from adversary.noise import discrete_gaussian

PERSONS, CELLS, SIGMA2 = 4, 3, 5.0
RELEASES = np.array([3, -1, 2])


def _block(releases=RELEASES, sigma2=SIGMA2) -> pm.Model:
    with pm.Model() as model:
        cells = [pm.Categorical(f"P{i}", p=np.full(CELLS, 1 / CELLS)) for i in range(PERSONS)]
        counts = pt.stack([sum(pt.eq(c, k) for c in cells) for k in range(CELLS)])
        DiscreteGaussian("releases", mu=counts, sigma2=sigma2, observed=releases)
    return model


def test_the_rewrite_makes_a_boolean_add_and_counted_as_integers_undoes_it():
    a, b, c = (pt.scalar(name, dtype="int64") for name in "abc")
    count = sum(pt.eq(x, 0) for x in (a, b, c))
    (rewritten,) = rewrite_graph([count], include=("canonicalize",))
    unsafe = pytensor.function([a, b, c], rewritten, mode="FAST_COMPILE")
    assert unsafe(0, 0, 0) == 1  # the upstream bug, still there: three counted as one
    (fixed,) = counted_as_integers([rewritten])
    assert pytensor.function([a, b, c], fixed, mode="FAST_COMPILE")(0, 0, 0) == 3
    assert pytensor.function([a, b, c], count, mode=safe_mode("FAST_COMPILE"))(0, 0, 0) == 3


def test_a_count_plus_an_integer_is_counted_too():
    # The canonizer flattens (b1 + b2 + b3) + n into Add(b1, b2, b3, n): an int64 add
    # whose first steps the Python linker takes as booleans.
    a, b, c, n = (pt.scalar(name, dtype="int64") for name in "abcn")
    total = sum(pt.eq(x, 0) for x in (a, b, c)) + n
    (rewritten,) = rewrite_graph([total], include=("canonicalize",))
    unsafe = pytensor.function([a, b, c, n], rewritten, mode="FAST_COMPILE")
    assert unsafe(0, 0, 0, 5) == 6  # the upstream bug: 1 + 5
    (fixed,) = counted_as_integers([rewritten])
    assert pytensor.function([a, b, c, n], fixed, mode="FAST_COMPILE")(0, 0, 0, 5) == 8


def test_enumeration_counts_every_person():
    joint = enumerate_posterior(_block()).joint
    weights = {}
    for cells in itertools.product(range(CELLS), repeat=PERSONS):
        counts = np.bincount(cells, minlength=CELLS)
        weights[cells] = np.exp(discrete_gaussian.logpmf(RELEASES - counts, SIGMA2).sum())
    total = sum(weights.values())
    for cells, weight in weights.items():
        labels = {f"P{i}": cell for i, cell in enumerate(cells)}
        assert float(joint.sel(labels)) == pytest.approx(weight / total, abs=1e-12)


def test_simulated_releases_count_every_person():
    model = _block(sigma2=1e-6)  # noise below one count: the releases are the counts
    truth = {f"P{i}": np.int64(0) for i in range(PERSONS)}
    draws = ReleaseSimulator(model, truth, np.random.default_rng(1))(5)
    assert draws["releases"].tolist() == [[PERSONS, 0, 0]] * 5
