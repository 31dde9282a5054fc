"""Bad input to the published-tables and differencing cases: one line naming the argument.

Wrong shapes, NaN, infinities, negative and huge values, wrong types (issue 23): each is
refused when the case is made (or, for sizes that depend on the memory budget, when the
computation is sized), never wrapped, clipped or passed to NumPy."""

import numpy as np
import pytest

from adversary.memory import memory_budget
from adversary.scenarios.differencing import DifferencingCase
from adversary.scenarios.published_tables import PublishedAttributeCase, PublishedTablesCase

NAN, INF = float("nan"), float("inf")
BEYOND = "must be below 2\\*\\*53"


def _tables(**changes):
    return PublishedTablesCase(
        **{"name": "bg", "priors": {"p": 0.5}, "known_counts": (0, 3)} | changes
    )


def _attribute(**changes):
    fields = {
        "name": "a",
        "categories": ("x", "y"),
        "priors": {"u": (0.5, 0.5)},
        "known_counts": ((0, 3), (1, 1)),
        "true_category": "x",
    }
    return PublishedAttributeCase(**fields | changes)


def _differencing(**changes):
    return DifferencingCase(**{"name": "d", "priors": {"p": 0.5}} | changes)


TABLES = [
    ({"known_counts": (NAN, 3)}, ValueError, "known_counts must be integer-valued"),
    ({"known_counts": (INF, 3)}, ValueError, "known_counts must be integer-valued"),
    ({"known_counts": (-1, 3)}, ValueError, "known_counts must be a count >= 0"),
    (
        {"known_counts": (2**60, 3)},
        ValueError,
        "known_counts: the block group's count .* " + BEYOND,
    ),
    ({"known_counts": (2**70, 3)}, ValueError, "known_counts is too large"),
    ({"known_counts": ((0, 3), (1, 1))}, ValueError, "known_counts must hold one count per"),
    ({"known_counts": ()}, ValueError, "known_counts must hold one count per block"),
    ({"known_counts": "03"}, TypeError, "known_counts must be numeric"),
    ({"priors": {"p": NAN}}, ValueError, "priors must lie strictly between 0 and 1"),
    ({"priors": {"p": "a"}}, TypeError, "priors must be numeric"),
    ({"priors": [0.5]}, ValueError, "priors must map at least one label"),
    ({"true_count": 0.5}, ValueError, "true_count must be 0 or 1"),
    ({"true_count": "1"}, ValueError, "true_count must be 0 or 1"),
    ({"target_block": 1.0}, ValueError, "target_block must be a block index"),
    ({"target_block": -1}, ValueError, "target_block must be a block index"),
    ({"rho_block": NAN}, ValueError, "rho_block must be finite and > 0"),
    ({"rho_block": INF}, ValueError, "rho_block must be finite and > 0"),
    ({"rho_parent": -1.0}, ValueError, "rho_parent must be finite and > 0"),
    ({"rho_block": 1e300}, ValueError, "rho_block gives noise of variance 0.0: it must be > 0"),
    ({"rho_parent": 1e-300}, ValueError, "rho_parent gives noise of variance .* pass 2\\*\\*53"),
    ({"rho_block": "a"}, TypeError, "rho_block must be numeric"),
    ({"rho_block": [1.0, 2.0]}, ValueError, "rho_block must be a scalar"),
    ({"mechanism": "gauss"}, ValueError, "mechanism must be a NoiseMechanism"),
    ({"invariant": "yes"}, TypeError, "invariant must be True or False"),
    ({"published": (NAN, 1, 3)}, ValueError, "published must be integer-valued"),
    ({"published": (4, -1, 5)}, ValueError, "published must be a count >= 0"),
    ({"published": (2**62, 2**61, 2**61)}, ValueError, "published: the block group's .*" + BEYOND),
    ({"published": ((4, 1, 3),)}, ValueError, "published must be 3 counts"),
    ({"published": "413"}, TypeError, "published must be numeric"),
    ({"tail_mass": NAN}, ValueError, "tail_mass must be finite and > 0"),
    ({"tail_mass": 1.0}, ValueError, "tail_mass must be below 1"),
    ({"draws": 1e5}, ValueError, "draws must be an integer >= 2"),
    ({"batches": 1}, ValueError, "batches must be an integer >= 2"),
    ({"batches": 1_000, "draws": 10}, ValueError, "batches must leave at least 2 draws each"),
    ({"seed": "x"}, TypeError, "seed must be an integer >= 0"),
    ({"seed": -1}, ValueError, "seed must be an integer >= 0"),
    ({"method": 3}, ValueError, "method must be one of"),
    ({"post_processing": None}, ValueError, "post_processing must be one of"),
]

ATTRIBUTE = [
    ({"known_counts": ((NAN, 3), (1, 1))}, ValueError, "known_counts must be integer-valued"),
    ({"known_counts": ((0, -3), (1, 1))}, ValueError, "known_counts must be a count >= 0"),
    ({"known_counts": ((2**60, 3), (1, 1))}, ValueError, "known_counts: the block .*" + BEYOND),
    ({"known_counts": ((0, 3), (1,))}, TypeError, "known_counts must be numeric"),
    ({"known_counts": ((0, 3),)}, ValueError, "known_counts must hold one row"),
    ({"known_counts": "abc"}, TypeError, "known_counts must be numeric"),
    ({"priors": {"u": (NAN, 0.5)}}, ValueError, "priors\\['u'\\] must be 2 probabilities"),
    ({"priors": {"u": (INF, 0.5)}}, ValueError, "priors\\['u'\\] must be 2 probabilities"),
    ({"priors": {"u": ("a", "b")}}, ValueError, "priors\\['u'\\] must be 2 probabilities"),
    ({"priors": {"u": (0.2, 0.3, 0.5)}}, ValueError, "priors\\['u'\\] must be 2 probabilities"),
    ({"priors": [0.5, 0.5]}, ValueError, "priors must map at least one label"),
    ({"priors": {}}, ValueError, "priors must map at least one label"),
    ({"categories": "xy"}, TypeError, "categories must be a tuple of names"),
    ({"categories": 3}, TypeError, "categories must be a tuple of names"),
    ({"categories": ("a",)}, ValueError, "categories must name K >= 2"),
    ({"true_category": 0}, ValueError, "true_category must be one of"),
    ({"rho_block": NAN}, ValueError, "rho_block must be finite and > 0"),
    ({"rho_parent": 1e300}, ValueError, "rho_parent gives noise of variance 0.0"),
    ({"published": ((NAN, 1, 3), (1, 1, 0))}, ValueError, "published must be integer-valued"),
    ({"published": ((4, -1, 5), (1, 1, 0))}, ValueError, "published must be a count >= 0"),
    ({"published": ((2**62, 2**61, 2**61), (1, 1, 0))}, ValueError, "published: the .*" + BEYOND),
    ({"published": ((4, 1, 3), (1, 1))}, TypeError, "published must be numeric"),
    ({"published": ((4, 1, 3),)}, ValueError, "published must hold one table per category"),
    ({"replications": 0}, ValueError, "replications must be an integer >= 2"),
    ({"replications": 1.5}, ValueError, "replications must be an integer >= 2"),
    ({"replications": 10**15}, ValueError, "replications \\(1,000,000,000,000,000 Monte Carlo"),
    ({"seed": "x"}, TypeError, "seed must be an integer >= 0"),
    ({"tail_mass": -1}, ValueError, "tail_mass must be finite and > 0"),
]

DIFFERENCING = [
    ({"known_count": NAN}, ValueError, "known_count must be integer-valued"),
    ({"known_count": INF}, ValueError, "known_count must be integer-valued"),
    ({"known_count": -1}, ValueError, "known_count must be a count >= 0"),
    ({"known_count": 2**62}, ValueError, "known_count: the looks .* within 2\\*\\*53"),
    ({"known_count": 2**51, "repeats": 8}, ValueError, "known_count: the looks"),
    ({"known_count": 2**70}, ValueError, "known_count is too large"),
    ({"known_count": "1"}, TypeError, "known_count must be numeric"),
    ({"known_count": [1, 2]}, ValueError, "known_count must be one count"),
    ({"known_count": 1.5}, ValueError, "known_count must be integer-valued"),
    ({"true_count": 0.5}, ValueError, "true_count must be 0 or 1"),
    ({"repeats": 2.0}, ValueError, "repeats must be an integer >= 0"),
    ({"differences": (NAN,)}, ValueError, "differences must be integer-valued"),
    ({"differences": "ab"}, TypeError, "differences must be numeric"),
    ({"differences": ((1, 2), (3, 4))}, ValueError, "differences must be a tuple of numbers"),
    ({"differences": 3}, ValueError, "differences must be a tuple of numbers"),
    ({"differences": (-2,)}, ValueError, "differences must be a count >= 0"),
    ({"rho": NAN}, ValueError, "rho must be finite and > 0"),
    ({"rho": INF}, ValueError, "rho must be finite and > 0"),
    ({"rho": -1.0}, ValueError, "rho must be finite and > 0"),
    ({"rho": 1e-300}, ValueError, "rho gives noise of variance .* would pass 2\\*\\*53"),
    ({"rho": "a"}, TypeError, "rho must be numeric"),
    ({"rho": None, "mechanism": "x"}, TypeError, "mechanism must be a NoiseMechanism"),
    ({"convention": "x"}, ValueError, "convention must be one of"),
    ({"replications": 0}, ValueError, "replications must be an integer >= 2"),
    ({"replications": 2.5}, ValueError, "replications must be an integer >= 2"),
    ({"replications": 10**15}, ValueError, "replications \\(1,000,000,000,000,000 Monte Carlo"),
    ({"seed": "x"}, TypeError, "seed must be an integer >= 0"),
    ({"seed": -3}, ValueError, "seed must be an integer >= 0"),
    ({"method": "fast"}, ValueError, "method must be one of"),
]


def _check(make, changes, error, message):
    with pytest.raises(error, match=f"^{message}") as raised:
        make(**changes)
    assert "\n" not in str(raised.value)


@pytest.mark.parametrize(("changes", "error", "message"), TABLES)
def test_published_tables_case_names_the_bad_argument(changes, error, message):
    _check(_tables, changes, error, message)


@pytest.mark.parametrize(("changes", "error", "message"), ATTRIBUTE)
def test_published_attribute_case_names_the_bad_argument(changes, error, message):
    _check(_attribute, changes, error, message)


@pytest.mark.parametrize(("changes", "error", "message"), DIFFERENCING)
def test_differencing_case_names_the_bad_argument(changes, error, message):
    _check(_differencing, changes, error, message)


def test_differencing_without_noise_is_the_truth_in_every_release():
    """ρ = 1e300: noise of variance 0 in float64 is no noise (not refused, not NaN)."""
    case = _differencing(rho=1e300)
    assert case.averaging_success() == (1.0, 0.0)  # every rounded mean is the true count
    (risk,) = np.atleast_1d(case.marginal_measures().marginal_risk)
    assert risk == pytest.approx(1 / next(iter(case.priors.values())), rel=1e-12)


USE = [
    (lambda: _tables(method="simulation", draws=10**15).marginal_measures(), "draws \\(1,000"),
    (lambda: _tables().simulated_table_likelihood((3, 0, 3), draws=10**12), "draws \\(1,000"),
    (lambda: _tables().simulated_table_likelihood((3, 0, 3), draws=10, seed="x"), "seed must"),
    (lambda: _tables().table_likelihood((3, 0)), "table must be 3 counts"),
    (lambda: _tables().table_likelihood((np.nan, 0, 3)), "table must be integer-valued"),
    (lambda: _tables().posterior(), "published: the case states no published table"),
    (lambda: _differencing(repeats=10**9).marginal_measures(), "repeats \\(the noise of a sum"),
    (lambda: _differencing(differences=(10**9,)).marginal_measures(), "differences \\(the noise"),
    (lambda: _differencing().averaging_success(replications=-1), "replications must be"),
    (lambda: _differencing().averaging_success(seed="x"), "seed must be an integer"),
    (lambda: _differencing(observed_releases=(NAN,)).posterior(), "observed_releases must be"),
    (lambda: _differencing(observed_releases=(2**70,)).posterior(), "observed_releases is too"),
    (lambda: _differencing(observed_releases=(1, 2)).posterior(), "observed_releases must be"),
    (lambda: _differencing(observed_releases=("a",)).posterior(), "observed_releases must be"),
]


@pytest.mark.parametrize(("call", "message"), USE)
def test_sizes_and_conditioning_values_are_refused_by_name_when_used(call, message):
    with (
        memory_budget("1GiB"),
        pytest.raises((ValueError, TypeError), match=f"^{message}") as raised,
    ):
        call()
    assert "\n" not in str(raised.value)
