"""Additive noise mechanisms: pmf, tails, cut-off, exact draws, variance, accounting.

References are 50-digit mpmath sums over the whole support (bounded noise) or
until the terms fall below e^{-140} of the largest (unbounded noise), and the
discrete Laplace's closed forms (Bach 2020, Petti & Flaxman 2020). The other
mechanisms' closed forms and Bach's printed numbers are in
test_mechanism_closed_forms.py.
"""

import dataclasses
import math

import mpmath as mp
import numpy as np
import pytest
from scipy import stats

from adversary.noise import exact_sampling
from adversary.noise.finite_pmf import FinitePmf
from adversary.noise.mechanisms import (
    CellKeyNoise,
    DiscreteGaussianNoise,
    DiscreteLaplaceNoise,
    FinitePmfNoise,
    NoiseMechanism,
    TruncatedGeometricNoise,
)
from adversary.noise.sums import sum_of_discrete_gaussians

EPS = np.finfo(float).eps
DPS = 50
N_DRAWS = 20_000
DECAY = 140  # unbounded references stop where terms are below e^{-140} of the largest

MECHANISMS = [
    DiscreteGaussianNoise(5.04),
    DiscreteGaussianNoise(0.3),
    DiscreteLaplaceNoise(2.0),
    DiscreteLaplaceNoise.from_epsilon(0.25),
    DiscreteLaplaceNoise(0.3),
    TruncatedGeometricNoise(2.0, 5),
    TruncatedGeometricNoise(20.0, 3),  # E ≤ b: uniform proposal
    TruncatedGeometricNoise(0.5, 8),
    CellKeyNoise(2.0, 5),  # μE² > 1: discrete Gaussian proposal
    CellKeyNoise(2.0, 10),
    CellKeyNoise(3.5, 3),  # μE² ≤ 1: uniform proposal
    CellKeyNoise(4.0, 3),  # V = E(E+1)/3: the uniform table
    CellKeyNoise(0.3, 10),
    FinitePmfNoise(-1, [0.2, 0.5, 0.3]),
    FinitePmfNoise(-2, [0.1, 0.0, 0.4, 0.25, 0.25]),  # asymmetric, a hole inside
]
IDS = [m.label for m in MECHANISMS]


def mp_weights(mech: NoiseMechanism) -> dict[int, mp.mpf]:
    """Unnormalised weights of every value that matters, in 50 digits."""
    with mp.workdps(DPS + 10):
        if isinstance(mech, DiscreteGaussianNoise):
            s = mp.mpf(mech.sigma2)
            reach = int(math.sqrt(2 * mech.sigma2 * DECAY)) + 2
            return {z: mp.exp(-(mp.mpf(z) ** 2) / (2 * s)) for z in range(-reach, reach + 1)}
        if isinstance(mech, DiscreteLaplaceNoise | TruncatedGeometricNoise):
            b = mp.mpf(mech.scale)
            reach = mech.bound if mech.bounded else int(mech.scale * DECAY) + 2
            return {z: mp.exp(-abs(z) / b) for z in range(-reach, reach + 1)}
        if isinstance(mech, CellKeyNoise):
            mu = mp.mpf(mech.multiplier)
            return {z: mp.exp(-mu * z * z) for z in range(-mech.bound, mech.bound + 1)}
        if isinstance(mech, FinitePmfNoise):
            return {mech.start + i: mp.mpf(p) for i, p in enumerate(mech.probabilities)}
    raise TypeError(mech)


def mp_pmf(mech) -> dict[int, mp.mpf]:
    with mp.workdps(DPS + 10):
        weights = mp_weights(mech)
        total = mp.fsum(weights.values())
        return {z: w / total for z, w in weights.items()}


def mp_moments(mech):
    with mp.workdps(DPS):
        pmf = mp_pmf(mech)
        mean = mp.fsum(z * p for z, p in pmf.items())
        return mean, mp.fsum((z - mean) ** 2 * p for z, p in pmf.items())


def mp_upper(pmf, k):
    """``P[Z ≥ k]``, summed from the far end."""
    return mp.fsum(p for z, p in pmf.items() if z >= k)


def mp_lower(pmf, k):
    return mp.fsum(p for z, p in pmf.items() if z <= k)


# --- the pmf ---------------------------------------------------------------------------------


@pytest.mark.parametrize("mech", MECHANISMS, ids=IDS)
def test_pmf_sums_to_one(mech):
    reach = mech.cutoff(0.0) if mech.bounded else mech.cutoff(1e-18)
    total = math.fsum(mech.pmf(np.arange(-reach, reach + 1)))
    assert abs(total - 1) <= 1e-14
    table = mech.table(0.0 if mech.bounded else 1e-18)
    assert abs(math.fsum(table.probabilities) + table.omitted_mass - 1) <= 1e-14


@pytest.mark.parametrize("mech", MECHANISMS, ids=IDS)
def test_pmf_and_logpmf_match_mpmath(mech):
    pmf = mp_pmf(mech)
    zs = sorted(pmf)
    zs = sorted({zs[0], zs[-1], *range(-12, 13)} & set(zs))
    if mech.bounded:  # and values off the support
        zs += [zs[-1] + 1, zs[0] - 7]
    got, got_log = mech.pmf(zs), mech.logpmf(zs)
    for z, p, logp in zip(zs, got, got_log, strict=True):
        exact = pmf.get(z, mp.mpf(0))
        if exact == 0:
            assert p == 0 and logp == -np.inf
            continue
        # e^{-|z|/b} or e^{-z²/(2σ²)} carries the rounding of its exponent.
        conditioning = abs(float(mp.log(exact)))
        assert abs(mp.mpf(p) / exact - 1) <= 16 * EPS * (1 + conditioning), z
        assert abs(mp.mpf(logp) - mp.log(exact)) <= 16 * EPS * (1 + conditioning), z


@pytest.mark.parametrize("mech", MECHANISMS, ids=IDS)
def test_variance_and_mean_match_mpmath(mech):
    mean, variance = mp_moments(mech)
    assert abs(mp.mpf(mech.variance) / variance - 1) <= 1e-13
    assert abs(mech.mean - mean) <= 1e-15
    assert mech.symmetric == (mean == 0 and mech.support[0] in (None, -(mech.support[1] or 0)))


@pytest.mark.parametrize("mech", MECHANISMS, ids=IDS)
def test_sf_and_cdf_match_direct_sums(mech):
    pmf = mp_pmf(mech)
    lo, hi = min(pmf), max(pmf)
    ks = np.array(sorted({lo - 3, lo, lo + 1, -2, -1, 0, 1, 2, 3, 7, hi - 1, hi, hi + 1, hi + 50}))
    sf, cdf = mech.sf(ks), mech.cdf(ks)
    for k, upper, lower in zip(ks, sf, cdf, strict=True):
        exact_upper, exact_lower = mp_upper(pmf, k), mp_lower(pmf, k)
        # Relative accuracy in the small tails, absolute 4 eps near 1.
        assert abs(mp.mpf(upper) - exact_upper) <= 4 * EPS + 1e-13 * exact_upper, k
        assert abs(mp.mpf(lower) - exact_lower) <= 4 * EPS + 1e-13 * exact_lower, k
    np.testing.assert_allclose(mech.sf(ks) + mech.cdf(ks - 1), 1.0, rtol=0, atol=4 * EPS)


def test_far_tails_stay_finite_in_log_space():
    # e^{-2000} underflows as a pmf value; the log-pmf keeps it.
    tg = TruncatedGeometricNoise(1.0, 2000)
    assert tg.pmf(2000) == 0.0
    assert tg.logpmf(2000) == pytest.approx(-2000 - math.log(math.tanh(0.5) ** -1), rel=1e-15)
    ck = CellKeyNoise(0.01, 200)
    assert ck.pmf(200) == 0.0 and np.isfinite(ck.logpmf(200))
    assert ck.logpmf(201) == -np.inf
    dl = DiscreteLaplaceNoise(1.0)
    assert dl.logpmf(10**6) == pytest.approx(-(10**6) + math.log(math.tanh(0.5)), rel=1e-15)
    assert dl.sf(10**6) == 0.0 and dl.sf(-(10**6)) == 1.0


# --- cut-off and tables ----------------------------------------------------------------------

CUTOFF_CASES = [
    (m, t)
    for m in MECHANISMS
    if not isinstance(m, DiscreteGaussianNoise)  # tested in test_discrete_gaussian.py
    for t in (1e-3, 1e-12, 1e-40)
]


@pytest.mark.parametrize(("mech", "tail_mass"), CUTOFF_CASES)
def test_cutoff_leaves_at_most_tail_mass_and_is_smallest(mech, tail_mass):
    pmf = mp_pmf(mech)
    k = mech.cutoff(tail_mass)
    assert mech.outside_mass(k) <= tail_mass
    outside = mp.fsum(p for z, p in pmf.items() if abs(z) > k)
    assert outside <= tail_mass
    assert outside <= mech.outside_mass(k)  # the bound is an upper bound
    if k > 0:  # one step in leaves too much
        assert mp.fsum(p for z, p in pmf.items() if abs(z) > k - 1) > tail_mass


def test_cutoff_of_bounded_noise_at_zero_tail_mass_is_the_bound():
    assert CellKeyNoise(0.01, 200).cutoff(0) == 200  # far tails underflow, still included
    assert TruncatedGeometricNoise(1.0, 7).cutoff(0) == 7
    assert FinitePmfNoise(-2, [0.5, 0, 0, 0, 0, 0.5]).cutoff(0) == 3
    assert CellKeyNoise(2.0, 5).outside_mass(5) == 0.0


def test_discrete_laplace_cutoff_closed_form():
    # P[|Z| > K] = 2q^{K+1}/(1+q): the smallest K is ⌈b log(2/((1+q)t))⌉ - 1.
    for b, t in [(2.0, 1e-15), (0.3, 1e-3), (1e6, 1e-300), (1e15, 1e-15)]:
        mech = DiscreteLaplaceNoise(b)
        with mp.workdps(40):
            q = mp.exp(-1 / mp.mpf(b))
            exact = int(mp.ceil(b * mp.log(2 / ((1 + q) * t)))) - 1
        assert abs(mech.cutoff(t) - exact) <= max(1, int(1e-12 * exact))


@pytest.mark.parametrize("mech", MECHANISMS, ids=IDS)
def test_table_is_the_pmf_with_its_omitted_mass(mech):
    table = mech.table(1e-10)
    k = mech.cutoff(1e-10)
    assert table.start == -k and table.probabilities.size == 2 * k + 1
    np.testing.assert_array_equal(table.probabilities, mech.pmf(table.support))
    assert table.omitted_mass <= 1e-10


def test_sum_table_for_the_discrete_gaussian_is_the_existing_one():
    got = DiscreteGaussianNoise(0.8).sum_table(3)
    want = sum_of_discrete_gaussians(3, 0.8)
    assert got.start == want.start and got.omitted_mass == want.omitted_mass
    np.testing.assert_array_equal(got.probabilities, want.probabilities)


@pytest.mark.parametrize(
    "mech", [DiscreteLaplaceNoise(1.5), TruncatedGeometricNoise(2.0, 4), CellKeyNoise(2.0, 5)]
)
def test_sum_table_against_brute_force_and_variance(mech):
    tail = 0.0 if mech.bounded else 1e-15
    table = mech.sum_table(3, tail)
    assert table.omitted_mass <= max(tail, 1e-300)
    assert table.variance == pytest.approx(3 * mech.variance, rel=1e-12)
    reach = mech.cutoff(1e-20) if not mech.bounded else mech.bound
    z = np.arange(-reach, reach + 1)
    p = mech.pmf(z)
    for total in [-4, 0, 1, 5]:
        brute = math.fsum(
            p[i] * p[j] * float(mech.pmf(total - z[i] - z[j]))
            for i in range(z.size)
            for j in range(z.size)
        )
        assert table.pmf(total) == pytest.approx(brute, rel=1e-12)
    if mech.bounded:
        assert table.support[0] == -3 * mech.bound and table.support[-1] == 3 * mech.bound


# --- exact draws -----------------------------------------------------------------------------


def chi_square_pvalue(draws, mech, min_expected=5.0):
    """Pearson chi-square p-value of integer draws against ``mech``'s pmf.

    Cells: each value from the support's low end (or ``-cutoff(1e-12)``) to its
    high end, the end cells taking the tails, merged left to right until each
    expects ``min_expected`` draws. Values of probability 0 must never be drawn.
    """
    n = draws.size
    lo, hi = mech.support
    if lo is None:
        lo, hi = -mech.cutoff(1e-12), mech.cutoff(1e-12)
    values = np.arange(lo, hi + 1)
    probabilities = mech.pmf(values)
    probabilities[0], probabilities[-1] = mech.cdf(lo), mech.sf(hi)
    counts = np.bincount(np.clip(draws, lo, hi) - lo, minlength=values.size)
    assert not np.any(counts[probabilities == 0]), "a value of probability 0 was drawn"
    observed, expected, run_o, run_e = [], [], 0, 0.0
    for o, p in zip(counts, probabilities, strict=True):
        run_o, run_e = run_o + o, run_e + n * p
        if run_e >= min_expected:
            observed.append(run_o)
            expected.append(run_e)
            run_o, run_e = 0, 0.0
    observed[-1] += run_o
    expected[-1] += run_e
    assert len(expected) >= 2
    return stats.chisquare(observed, expected).pvalue


@pytest.mark.parametrize(("mech", "seed"), [(m, 100 + i) for i, m in enumerate(MECHANISMS)])
def test_draws_fit_the_pmf(mech, seed):
    draws = mech.sample(N_DRAWS, seed)
    assert draws.dtype == np.int64 and draws.shape == (N_DRAWS,)
    assert chi_square_pvalue(draws, mech) > 1e-3


def test_goodness_of_fit_test_has_power():
    # Draws tested against a 10 % different parameter are rejected, so the
    # tests above would catch a sampler with the wrong scale.
    draws = DiscreteLaplaceNoise(2.0).sample(N_DRAWS, 1)
    assert chi_square_pvalue(draws, DiscreteLaplaceNoise(2.2)) < 1e-6
    assert chi_square_pvalue(draws, DiscreteLaplaceNoise(1.8)) < 1e-6
    draws = CellKeyNoise(2.0, 5).sample(N_DRAWS, 2)
    assert chi_square_pvalue(draws, CellKeyNoise(2.2, 5)) < 1e-6
    draws = TruncatedGeometricNoise(2.0, 5).sample(N_DRAWS, 3)
    assert chi_square_pvalue(draws, TruncatedGeometricNoise(2.2, 5)) < 1e-6


@pytest.mark.parametrize(
    ("mech", "seed"),
    [(DiscreteLaplaceNoise(3.3), 7), (DiscreteLaplaceNoise(1e9), 8), (CellKeyNoise(2.0, 50), 9)],
)
def test_sample_mean_and_variance(mech, seed):
    draws = mech.sample(N_DRAWS, seed).astype(np.float64)
    var = mech.variance
    # Fourth moment of the two-sided geometric is at most 6 var², of the rest smaller.
    assert abs(draws.mean()) < 4.5 * math.sqrt(var / N_DRAWS)
    assert abs(draws.var() - var) < 4.5 * math.sqrt(5 * var**2 / N_DRAWS)


def test_discrete_laplace_with_a_scale_of_many_bits():
    # b = 1e20/3 (beyond MAX_SCALE is refused); b = 12345.678 has a 2^-39 denominator,
    # t = 2^52-ish numerators, and the largest scale takes uniform draws over > 64 bits.
    for b in [12345.678, 1e15]:
        draws = DiscreteLaplaceNoise(b).sample(4000, 11).astype(np.float64)
        assert abs(np.abs(draws).mean() / b - 1) < 0.1  # E|Z| ≈ b for b ≫ 1
    with pytest.raises(ValueError, match=r"^scale "):
        DiscreteLaplaceNoise(1e20 / 3)


def test_uniform_below_a_big_bound_is_uniform():
    from adversary.noise.mechanisms.base import _make_uniform_below

    words = exact_sampling._word_source(np.random.default_rng(5), 1024).__next__
    t = 3 * 2**70
    uniform = _make_uniform_below(t, words)
    thirds = np.bincount([uniform() * 3 // t for _ in range(6000)], minlength=3)
    assert stats.chisquare(thirds).pvalue > 1e-3


def test_finite_pmf_draws_follow_tiny_weights_exactly():
    # The weight 2^-60 is kept exactly: the value is drawn about N·2^-60 times (never),
    # while a weight of 1/3 comes out a third of the time.
    mech = FinitePmfNoise(0, [1 / 3, 2.0**-60, 2 / 3 - 2.0**-60])
    draws = mech.sample(N_DRAWS, 4)
    assert set(np.unique(draws)) <= {0, 2}
    assert abs(np.mean(draws == 0) - 1 / 3) < 4.5 * math.sqrt(2 / 9 / N_DRAWS)


@pytest.mark.parametrize("mech", MECHANISMS[::3], ids=IDS[::3])
def test_same_seed_same_draws_and_shapes(mech):
    first = mech.sample(300, 42)
    np.testing.assert_array_equal(first, mech.sample(300, np.random.default_rng(42)))
    np.testing.assert_array_equal(first[:7], mech.sample(7, 42))  # prefix
    assert mech.sample(rng=42) == first[0] and isinstance(mech.sample(rng=42), int)
    assert mech.sample((3, 4), 0).shape == (3, 4)
    assert mech.sample(0, 0).shape == (0,)
    rng = np.random.default_rng(3)
    assert not np.array_equal(mech.sample(300, rng), mech.sample(300, rng)) or mech.variance < 0.1


# --- closed forms ----------------------------------------------------------------------------


@pytest.mark.parametrize("b", [0.05, 0.3, 1.0, 2.0, 50.0, 1e4, 1e12])
def test_discrete_laplace_closed_forms(b):
    mech = DiscreteLaplaceNoise(b)
    with mp.workdps(DPS):
        q = mp.exp(-1 / mp.mpf(b))
        variance = 2 * q / (1 - q) ** 2
        # Bach (2020) eq. (5) and Petti & Flaxman's G(z), z = 1/b: P[0] = (1-q)/(1+q).
        assert abs(mp.mpf(float(mech.pmf(0))) / ((1 - q) / (1 + q)) - 1) <= 4 * EPS
        assert abs(mp.mpf(mech.variance) / variance - 1) <= 8 * EPS
        for k in [1, 2, 10]:
            assert abs(mp.mpf(float(mech.sf(k))) / (q**k / (1 + q)) - 1) <= 8 * EPS * (1 + k / b)
        # Petti & Flaxman print the variance as (1 - e^{-z})²/(2e^{-z}): the reciprocal.
        printed = (1 - q) ** 2 / (2 * q)
        assert abs(printed * variance - 1) < mp.mpf(10) ** -40
    if b <= 50:  # and the direct sum agrees with the closed form
        assert abs(mp_moments(mech)[1] / variance - 1) < 1e-40


# --- privacy accounting ----------------------------------------------------------------------


@pytest.mark.parametrize(("epsilon", "sensitivity"), [(0.25, 1), (1.0, 1), (0.5, 2), (3.0, 1)])
def test_discrete_laplace_epsilon(epsilon, sensitivity):
    mech = DiscreteLaplaceNoise.from_epsilon(epsilon, sensitivity)
    assert mech.scale == sensitivity / epsilon
    assert mech.pure_epsilon() == pytest.approx(epsilon, rel=EPS)
    assert mech.zcdp_rho() == pytest.approx(epsilon**2 / 2, rel=4 * EPS)  # Bun & Steinke 1.4
    # The privacy loss log P[Z = z]/P[Z = z - Δ] is at most ε and reaches it.
    z = np.arange(-50, 51)
    loss = np.abs(mech.logpmf(z) - mech.logpmf(z - sensitivity))
    assert loss.max() == pytest.approx(epsilon, rel=1e-12)
    assert np.all(loss <= epsilon * (1 + 1e-12))


def test_petti_flaxman_budget_convention():
    # TopDown adds G(ε/2): replace-one neighbours move a histogram by L1 distance 2.
    mech = DiscreteLaplaceNoise.from_epsilon(0.25, sensitivity=2)
    assert 1 / mech.scale == pytest.approx(0.125) and mech.pure_epsilon() == 0.25


@pytest.mark.parametrize(("b", "bound", "sensitivity"), [(2.0, 5, 1), (0.7, 3, 2), (5.0, 2, 1)])
def test_truncated_geometric_epsilon_delta(b, bound, sensitivity):
    mech = TruncatedGeometricNoise(b, bound, sensitivity)
    epsilon, delta = mech.epsilon_delta()
    assert epsilon == sensitivity / b
    pmf = mp_pmf(mech)
    exact_delta = mp.fsum(p for z, p in pmf.items() if z > bound - sensitivity)
    assert abs(mp.mpf(delta) / exact_delta - 1) <= 1e-13
    # That δ is the smallest at ε = Δ/b, and smaller ε need more.
    assert mech.dp_delta(epsilon) == pytest.approx(delta, rel=1e-13)
    assert mech.dp_delta(0.5 * epsilon) > delta
    assert mech.dp_delta(50.0) == pytest.approx(delta, rel=1e-13)
    assert mech.pure_epsilon() is None and mech.zcdp_rho() is None


@pytest.mark.parametrize(
    "mech", [CellKeyNoise(2.0, 5), CellKeyNoise(1.0, 3, 2), FinitePmfNoise(-2, [1, 0, 4, 2, 3])]
)
def test_dp_delta_is_the_hockey_stick_divergence(mech):
    pmf = mp_pmf(mech)
    for epsilon in [0.0, 0.3, 1.0, 2.5, 1000.0]:
        with mp.workdps(DPS):
            worst = mp.mpf(0)
            for d in range(1, mech.sensitivity + 1):
                zs = range(min(pmf) - d, max(pmf) + d + 1)
                for sign in (1, -1):
                    worst = max(
                        worst,
                        mp.fsum(
                            max(0, pmf.get(z, 0) - mp.e**epsilon * pmf.get(z - sign * d, 0))
                            for z in zs
                        ),
                    )
        assert abs(mech.dp_delta(epsilon) - worst) <= 1e-15
    assert mech.pure_epsilon() is None and mech.zcdp_rho() is None
    # ε = 0: δ is the total variation distance between neighbouring outputs.
    assert 0 < mech.dp_delta(0.0) < 1


# --- the interface ---------------------------------------------------------------------------


def test_mechanisms_are_frozen_hashable_and_compare_by_parameters():
    a, b = CellKeyNoise(2, 5), CellKeyNoise(2.0, 5)
    assert a == b and hash(a) == hash(b) and {a: 1}[b] == 1
    assert a != TruncatedGeometricNoise(2.0, 5)  # same field values, another mechanism
    assert FinitePmfNoise(-1, [1, 2, 1]) == FinitePmfNoise(-1, (0.25, 0.5, 0.25))
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.bound = 6
    assert isinstance(a.bound, int) and isinstance(a.target_variance, float)
    names = {m.name for m in MECHANISMS}
    assert names == {
        "discrete_gaussian",
        "discrete_laplace",
        "truncated_geometric",
        "cell_key",
        "finite_pmf",
    }
    assert all(isinstance(m, NoiseMechanism) and m.label and m.citation for m in MECHANISMS)


def test_finite_pmf_noise_trims_and_normalises():
    mech = FinitePmfNoise(-3, [0, 0, 2, 6, 0, 2, 0])
    assert mech.support == (-1, 2) and mech.start == -1
    assert mech.probabilities == (0.2, 0.6, 0.0, 0.2)
    assert not mech.symmetric and mech.mean == pytest.approx(0.2)
    from_table = FinitePmfNoise.from_table(FinitePmf(-1, np.array([0.25, 0.5, 0.25]), 1e-3))
    assert from_table.symmetric and from_table.variance == 0.5
    assert from_table.logpmf(2) == -np.inf


def test_supports():
    assert DiscreteLaplaceNoise(1.0).support == (None, None)
    assert TruncatedGeometricNoise(1.0, 4).support == (-4, 4)
    assert CellKeyNoise(1.0, 4).support == (-4, 4) and CellKeyNoise(1.0, 4).bounded


# --- bad arguments ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("build", "error", "message"),
    [
        (lambda: CellKeyNoise(4.5, 3), ValueError, r"^target_variance must be at most E\(E\+1\)/3"),
        (lambda: CellKeyNoise(9.0, 3), ValueError, r"^target_variance .* = 4 for bound E = 3"),
        (lambda: CellKeyNoise(0.0, 3), ValueError, r"^target_variance must be finite and > 0"),
        (lambda: CellKeyNoise(-1.0, 3), ValueError, r"^target_variance "),
        (lambda: CellKeyNoise(float("nan"), 3), ValueError, r"^target_variance "),
        (lambda: CellKeyNoise(1.0, -1), ValueError, r"^bound must be an integer >= 0"),
        (lambda: CellKeyNoise(1.0, 0), ValueError, r"^bound must be an integer >= 1"),
        (lambda: CellKeyNoise(1.0, 2.5), ValueError, r"^bound must be integer-valued"),
        (lambda: CellKeyNoise(1.0, 3, 0), ValueError, r"^sensitivity "),
        (lambda: CellKeyNoise("2", 3), TypeError, r"^target_variance "),
        (lambda: DiscreteLaplaceNoise(0.0), ValueError, r"^scale must be finite and > 0"),
        (lambda: DiscreteLaplaceNoise(-2.0), ValueError, r"^scale "),
        (lambda: DiscreteLaplaceNoise(np.inf), ValueError, r"^scale "),
        (lambda: DiscreteLaplaceNoise([1.0, 2.0]), ValueError, r"^scale must be a scalar"),
        (lambda: DiscreteLaplaceNoise(1.0, 1.5), ValueError, r"^sensitivity "),
        (lambda: DiscreteLaplaceNoise.from_epsilon(0.0), ValueError, r"^epsilon "),
        (lambda: DiscreteLaplaceNoise.from_variance(-1.0), ValueError, r"^variance "),
        (lambda: TruncatedGeometricNoise(1.0, -2), ValueError, r"^bound "),
        (lambda: TruncatedGeometricNoise(0.0, 2), ValueError, r"^scale "),
        (lambda: TruncatedGeometricNoise(1.0, 10**7), ValueError, r"^bound must be at most"),
        (lambda: DiscreteGaussianNoise(0.0), ValueError, r"^sigma2 "),
        (lambda: DiscreteGaussianNoise(1.0, -1.0), ValueError, r"^sensitivity "),
        (lambda: DiscreteGaussianNoise.from_rho(-0.1), ValueError, r"^rho "),
        (lambda: FinitePmfNoise(0, [0.5, -0.1]), ValueError, r"^probabilities "),
        (lambda: FinitePmfNoise(0, [0.0, 0.0]), ValueError, r"^probabilities must have a pos"),
        (lambda: FinitePmfNoise(0, [[0.5, 0.5]]), ValueError, r"^probabilities "),
        (lambda: FinitePmfNoise(0.5, [1.0]), ValueError, r"^start "),
        (lambda: FinitePmfNoise.from_table([1.0]), TypeError, r"^table "),
    ],
)
def test_bad_parameters_name_themselves(build, error, message):
    with pytest.raises(error, match=message):
        build()


@pytest.mark.parametrize("mech", [MECHANISMS[0], MECHANISMS[2], MECHANISMS[5], MECHANISMS[8]])
def test_bad_method_arguments_name_themselves(mech):
    with pytest.raises(ValueError, match=r"^z must be integer-valued"):
        mech.logpmf(0.5)
    with pytest.raises(ValueError, match=r"^k must be integer-valued"):
        mech.sf(0.5)
    with pytest.raises(ValueError, match=r"^tail_mass "):
        mech.cutoff(1.0)
    with pytest.raises(ValueError, match=r"^tail_mass "):
        mech.cutoff(-1e-3)
    with pytest.raises(ValueError, match=r"^d must be"):
        mech.sum_table(0)
    with pytest.raises(ValueError, match=r"^size "):
        mech.sample(-1, 0)
    with pytest.raises(TypeError, match=r"^rng "):
        mech.sample(2, "seed")
    if not mech.bounded:
        with pytest.raises(ValueError, match=r"^tail_mass .* unbounded"):
            mech.cutoff(0.0)
    else:
        with pytest.raises(ValueError, match=r"^epsilon "):
            mech.dp_delta(-1.0)
