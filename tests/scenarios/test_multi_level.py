"""Uniqueness at ℓ levels (Kazan & Reiter S1.3): (S1.1), brute force, ℓ = 1, Figure 1 claims."""

import itertools

import numpy as np
import pytest
from scipy import signal, special

from adversary.noise import discrete_gaussian, noise_variance
from adversary.scenarios import multi_level as ml
from adversary.scenarios import single_block as sb

PRIORS = np.array([1 / 2, 1 / 5, 1 / 10, 1 / 50, 1 / 864])
RHOS = ml.rhos_2020()


# --- inputs ------------------------------------------------------------------------------


def test_rhos_2020_are_table2_detailed_query_in_s13_order():
    # Paper Table 2, final column, read block → block group → tract → county → state → US.
    np.testing.assert_array_equal(
        np.round(RHOS, 4), [0.0992, 0.2465, 0.0504, 0.0514, 0.0505, 0.0509]
    )
    np.testing.assert_array_equal(ml.rhos_2020(2), RHOS[:2])
    assert RHOS[1] == RHOS.max()  # S1.3: "ρ_2 is the largest privacy parameter"


# --- the posterior (S1.1) ----------------------------------------------------------------


def _bayes(releases, p, sigma2, known, has_c=True):
    """Bayes' theorem written out with the discrete Gaussian likelihood of every level."""
    releases, known = np.asarray(releases), np.asarray(known)
    with_c = np.log(p) + discrete_gaussian.logpmf(releases - known - 1, sigma2).sum(-1)
    without_c = np.log1p(-p) + discrete_gaussian.logpmf(releases - known, sigma2).sum(-1)
    of_truth = with_c if has_c else without_c
    return np.exp(of_truth - np.logaddexp(with_c, without_c))


def test_posterior_is_s11_as_printed_for_a_unique_target():
    rng = np.random.default_rng(3)
    releases = rng.integers(-4, 7, size=(20, 6))
    rhos = RHOS
    for p in PRIORS:
        numerator = p * np.exp(-(rhos * (releases - 1.0) ** 2).sum(-1))
        denominator = numerator + (1 - p) * np.exp(-(rhos * releases**2.0).sum(-1))
        np.testing.assert_allclose(ml.posterior(releases, p, rhos), numerator / denominator)
        np.testing.assert_allclose(ml.risk(releases, p, rhos), numerator / denominator / p)


@pytest.mark.parametrize("convention", ["paper", "das"])
def test_posterior_matches_bayes_with_known_counts_and_either_truth(convention):
    rng = np.random.default_rng(4)
    rhos = rng.uniform(0.02, 1.0, size=4)
    known = np.array([2, 3, 3, 7])
    releases = known + rng.integers(-3, 5, size=(30, 4))
    sigma2 = noise_variance(rhos, convention)
    for p in (0.3, 1 / 864):
        for truth, has_c in ((3, True), (2, False)):
            ours = ml.posterior(releases, p, rhos, known, truth, convention)
            expected = _bayes(releases, p, sigma2, known, has_c)
            np.testing.assert_allclose(ours, expected, rtol=1e-12)
            prior_of_truth = p if has_c else 1 - p
            np.testing.assert_allclose(
                ml.risk(releases, p, rhos, known, truth, convention), expected / prior_of_truth
            )


def test_one_level_is_the_single_block_attack():
    releases = np.arange(-3, 8)
    for p in PRIORS:
        for convention in ("paper", "das"):
            args = (p, RHOS[0])
            np.testing.assert_array_equal(
                ml.posterior(releases[:, None], p, RHOS[:1], convention=convention),
                sb.posterior(releases, *args, convention=convention),
            )
            np.testing.assert_array_equal(
                ml.decision(releases[:, None] + 2, p, RHOS[:1], 2, convention=convention),
                sb.decision(releases + 2, *args, known_count=2, convention=convention),
            )


def test_log_likelihood_ratio_adds_the_levels():
    releases = np.array([[3, 1, -2], [0, 4, 5]])
    known = [1, 1, 2]
    total = ml.log_likelihood_ratio(releases, RHOS[:3], known, "das")
    levels = [sb.log_likelihood_ratio(releases[:, i], RHOS[i], known[i], "das") for i in range(3)]
    np.testing.assert_allclose(total, np.sum(levels, axis=0), rtol=1e-15)


def test_decision_is_the_larger_posterior():
    rng = np.random.default_rng(5)
    releases = rng.integers(-5, 8, size=(200, 6)) + 4
    for p in PRIORS:
        post = ml.posterior(releases, p, RHOS, known_counts=4)
        np.testing.assert_array_equal(
            ml.decision(releases, p, RHOS, known_counts=4), 4 + (post >= 0.5)
        )


def test_posterior_broadcasts_priors_against_cases():
    releases = np.array([[1, 2, 0], [0, 0, 0]])
    out = ml.posterior(releases[:, None, :], PRIORS[None, :], RHOS[:3])
    assert out.shape == (2, 5)
    for i, j in itertools.product(range(2), range(5)):
        assert out[i, j] == ml.posterior(releases[i], PRIORS[j], RHOS[:3])


# --- the data holder's marginal measures -------------------------------------------------


def _brute_force_marginals(p, rhos, convention="paper", has_c=True, tail_mass=1e-15):
    """Sum over the joint grid of all ℓ releases, each posterior by Bayes' theorem."""
    sigma2 = noise_variance(rhos, convention)
    reach = discrete_gaussian.cutoff(sigma2, tail_mass / len(rhos))
    axes = [np.arange(-k, k + 1) for k in reach]
    noise = np.stack(np.meshgrid(*axes, indexing="ij"), axis=-1).reshape(-1, len(rhos))
    weight = np.prod(discrete_gaussian.pmf(noise, sigma2), axis=-1)
    releases = noise + (1 if has_c else 0)  # known counts 0
    with_c = discrete_gaussian.logpmf(releases - 1, sigma2).sum(-1)
    without_c = discrete_gaussian.logpmf(releases, sigma2).sum(-1)
    log_odds_c = special.logit(p) + with_c - without_c
    log_odds_truth = log_odds_c if has_c else -log_odds_c
    right = (log_odds_c >= 0) if has_c else (log_odds_c < 0)
    return special.expit(log_odds_truth) @ weight, right @ weight


@pytest.mark.parametrize("n_levels", [1, 2, 3])
@pytest.mark.parametrize(("convention", "has_c"), [("paper", True), ("das", False)])
def test_marginals_equal_a_joint_grid_sum(n_levels, convention, has_c):
    rhos = RHOS[:n_levels]
    got = ml.marginals(PRIORS, rhos, true_count=1 if has_c else 0, convention=convention)
    assert np.all(got.posterior_error_bound < 1e-9)
    assert np.all(got.decision_exact)
    for k, p in enumerate(PRIORS):
        posterior, decision = _brute_force_marginals(p, rhos, convention, has_c)
        assert abs(got.marginal_posterior[k] - posterior) <= got.posterior_error_bound[k] + 1e-15
        assert abs(got.correct_decision_probability[k] - decision) <= 1e-14  # rounding only
        prior_of_truth = p if has_c else 1 - p
        np.testing.assert_allclose(got.marginal_risk[k], got.marginal_posterior[k] / prior_of_truth)


def test_marginals_on_incommensurate_lattices_against_brute_force():
    # ρ far from the 2020 values, levels with very different lattice spacings.
    rhos = np.array([0.731, 0.0173, 0.2])
    got = ml.marginals(PRIORS, rhos)
    for k, p in enumerate(PRIORS):
        posterior, decision = _brute_force_marginals(p, rhos)
        assert abs(got.marginal_posterior[k] - posterior) <= got.posterior_error_bound[k] + 1e-15
        assert abs(got.correct_decision_probability[k] - decision) <= 1e-14


def test_one_level_marginals_are_the_single_block_ones():
    for convention in ("paper", "das"):
        got = ml.marginals(PRIORS, RHOS[:1], convention=convention)
        exact = sb.marginal_posterior(PRIORS, RHOS[0], convention=convention)
        assert np.all(np.abs(got.marginal_posterior - exact) <= got.posterior_error_bound)
        np.testing.assert_allclose(
            got.marginal_risk, sb.marginal_risk(PRIORS, RHOS[0], convention=convention), atol=1e-8
        )
        np.testing.assert_allclose(
            got.correct_decision_probability,
            sb.correct_decision_probability(PRIORS, RHOS[0], convention=convention),
            rtol=0,
            atol=1e-15,
        )
        got_t0 = ml.marginals(PRIORS, RHOS[:1], true_count=0, convention=convention)
        np.testing.assert_allclose(
            got_t0.correct_decision_probability,
            sb.correct_decision_probability(PRIORS, RHOS[0], true_count=0, convention=convention),
            rtol=0,
            atol=1e-15,
        )


def test_grid_error_bound_holds_when_the_grid_is_coarse():
    # A coarse grid: the bound must still cover the difference to the exact value.
    fine = ml.marginals(PRIORS, RHOS[:3])
    coarse = ml.marginals(PRIORS, RHOS[:3], grid_width=0.02)
    assert np.all(coarse.posterior_error_bound > 1e-6)
    gap = np.abs(coarse.marginal_posterior - fine.marginal_posterior)
    assert np.all(gap <= coarse.posterior_error_bound + fine.posterior_error_bound)
    assert np.all(
        coarse.posterior_error_bound <= 3 * ml.EXPIT_SECOND_DERIVATIVE_BOUND * 0.02**2 / 8 + 1e-15
    )


def test_grid_sums_are_the_same_to_the_last_bit_compiled_or_not():
    """The two kernels of ``_grid_prefixes``' shifted adds on the six 2020 levels (up to 106
    shifts, 270 000 grid points: many of the compiled kernel's blocks): equal bit for bit, and
    the convolution of the grid distributions (by FFT, to rounding)."""
    from adversary.scenarios.multi_level._shifted_adds import shifted_adds

    levels = [ml.sums._level(s2, 1e-9, 6) for s2 in noise_variance(RHOS, "paper")]
    dist = np.ones(1)
    for level in levels:
        _, shifts, weights, span, _ = ml.sums._grid_kernel(level, 1e-4)
        assert shifts.size > 2 and np.all(np.diff(shifts) > 0) and np.all(weights > 0)
        expected = ml.sums._python_shifted_adds(dist, shifts, weights, dist.size + span)
        got = shifted_adds(dist, shifts, weights, dist.size + span)
        np.testing.assert_array_equal(got, expected)
        dense = np.zeros(span + 1)
        dense[shifts] = weights
        np.testing.assert_allclose(got, signal.fftconvolve(dist, dense), rtol=0, atol=1e-14)
        dist = got
    assert dist.size > 200_000
    assert ml.sums._choose_shifted_adds(ml.sums._COMPILE_WORK) is shifted_adds
    assert ml.sums._choose_shifted_adds(1) is shifted_adds  # once it is loaded


def test_decision_falls_back_to_a_rigorous_grid_bracket(monkeypatch):
    exact = {t: ml.marginals(PRIORS, RHOS, true_count=t) for t in (0, 1)}
    assert all(np.all(e.decision_exact) for e in exact.values())
    monkeypatch.setattr(ml.sums, "_MAX_EXACT_SUPPORT", 10)
    for true_count, reference in exact.items():
        bracket = ml.marginals(PRIORS, RHOS, true_count=true_count)
        assert not np.any(bracket.decision_exact)
        gap = np.abs(bracket.correct_decision_probability - reference.correct_decision_probability)
        assert np.all(gap <= bracket.decision_error_bound + 1e-14)  # + rounding
        assert np.all(bracket.decision_error_bound < 5e-5)


def test_truth_without_c_is_the_mirror_prior():
    """Z ↦ -Z: the posterior of X1 = m under p has the law of that of m + 1 under 1 - p."""
    t0 = ml.marginals(PRIORS, RHOS[:4], true_count=0)
    t1 = ml.marginals(1 - PRIORS, RHOS[:4])
    np.testing.assert_allclose(t0.marginal_posterior, t1.marginal_posterior, rtol=1e-12)


def test_marginals_vectorise_over_rho_rows_and_priors():
    rhos = np.stack([RHOS[:3], RHOS[:3] * 2, RHOS[:3]])
    got = ml.marginals(PRIORS[:, None], rhos[None, :, :], known_counts=[1, 1, 2], true_count=2)
    assert got.marginal_posterior.shape == (5, 3)
    assert got.cutoffs.shape == (5, 3, 3)
    for i, j in itertools.product(range(5), range(3)):
        one = ml.marginals(PRIORS[i], rhos[j])
        np.testing.assert_allclose(got.marginal_posterior[i, j], one.marginal_posterior, rtol=1e-14)
        np.testing.assert_allclose(
            got.correct_decision_probability[i, j], one.correct_decision_probability, rtol=1e-14
        )
    np.testing.assert_array_equal(
        ml.correct_decision_probability(PRIORS, RHOS[:2]),
        ml.marginals(PRIORS, RHOS[:2]).correct_decision_probability,
    )


def test_omitted_mass_is_reported_and_below_tail_mass():
    got = ml.marginals(PRIORS, RHOS, tail_mass=1e-9)
    assert np.all(got.omitted_mass <= 1e-9)
    assert np.all(got.omitted_mass > 0)
    sigma2 = noise_variance(RHOS)
    np.testing.assert_array_equal(got.cutoffs[0], discrete_gaussian.cutoff(sigma2, 1e-9 / 6))


# --- S1.3's Figure 1 ---------------------------------------------------------------------

# Our values (paper convention, 2020 detailed-query ρ); the paper prints no numbers.
FIGURE1_RISK = np.array(
    [
        [1.0473, 1.1491, 1.1677, 1.1860, 1.2034, 1.2203],
        [1.1271, 1.4357, 1.4966, 1.5577, 1.6168, 1.6755],
        [1.1676, 1.6284, 1.7276, 1.8297, 1.9309, 2.0334],
        [1.2080, 1.8927, 2.0648, 2.2518, 2.4470, 2.6552],
        [1.2188, 1.9897, 2.1986, 2.4335, 2.6880, 2.9709],
    ]
)


def test_figure1_curve_and_the_claims_of_s13():
    curve = ml.marginal_by_levels(PRIORS)
    assert list(curve.level_name.values) == list(ml.LEVELS_2020)
    risk = curve.marginal_risk.values.T  # (prior, ℓ)
    np.testing.assert_allclose(risk, FIGURE1_RISK, atol=5e-5)
    assert np.all(curve.risk_error_bound < 1e-6)
    # "the risk increases as a function of ℓ" — for every prior.
    increase = np.diff(risk, axis=1)
    assert np.all(increase > 0)
    # "For all priors, the increase is most substantial between ℓ = 1 and ℓ = 2."
    assert np.all(np.argmax(increase, axis=1) == 0)
    # The adversary's chance of a correct decision does not fall either.
    assert np.all(np.diff(curve.correct_decision_probability.values, axis=0) >= 0)
    # Each ℓ of the curve is the ℓ-level marginal computed on its own.
    for n in (1, 4):
        np.testing.assert_array_equal(
            curve.marginal_posterior.sel(levels=n).values,
            ml.marginal_posterior(PRIORS, RHOS[:n]),
        )


# --- bad input ---------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("call", "name"),
    [
        (lambda: ml.posterior([1, 2], 0.5, RHOS[:3]), "releases"),
        (lambda: ml.posterior(1, 0.5, RHOS[:1]), "releases"),
        (lambda: ml.posterior([1, 2, 0], 0.5, RHOS[:3], known_counts=[0, 0]), "known_counts"),
        (lambda: ml.posterior([1, 2], 0.5, RHOS[:2], known_counts=[1, 0]), "known_counts"),
        (lambda: ml.posterior([1, 2], 0.5, [0.1, 0.0]), "rhos"),
        (lambda: ml.posterior([1, 2], 0.5, [0.1, -1.0]), "rhos"),
        (lambda: ml.posterior([1], 0.5, 0.1), "rhos"),
        (lambda: ml.posterior([1, 2], 0.0, RHOS[:2]), "prior"),
        (lambda: ml.posterior([1, 2], 1.0, RHOS[:2]), "prior"),
        (lambda: ml.posterior([1, 2.5], 0.5, RHOS[:2]), "releases"),
        (lambda: ml.posterior([1, 2], 0.5, RHOS[:2], [0, 1], true_count=2), "true_count"),
        (lambda: ml.marginals(1.5, RHOS), "prior"),
        (lambda: ml.marginals(0.5, [0.1, np.nan]), "rhos"),
        (lambda: ml.marginals(0.5, RHOS, grid_width=0), "grid_width"),
        (lambda: ml.marginals(0.5, RHOS, tail_mass=0), "tail_mass"),
        (lambda: ml.marginal_by_levels([0.5, 2]), "priors"),
        (lambda: ml.marginal_by_levels(0.5, width=1e-3), "width: marginal_by_levels takes"),
        (lambda: ml.rhos_2020(7), "levels"),
        (lambda: ml.model([1, 2], 0.5, RHOS[:3]), "releases"),
        (lambda: ml.model([1, 2.5, 0], 0.5, RHOS[:3]), "releases"),
        (lambda: ml.model([1, 2, 0], -0.1, RHOS[:3]), "prior"),
        (lambda: ml.model([1, 2, 0], 0.5, [0.1, 0.2, 0.0]), "rhos"),
    ],
)
def test_bad_input_names_the_argument(call, name):
    with pytest.raises(ValueError, match=name):
        call()


# --- the PyMC model ----------------------------------------------------------------------


def test_model_log_p_gives_the_exact_posterior():
    releases, known = [4, 5, 3, 9], [2, 3, 3, 7]
    for convention in ("paper", "das"):
        attack = ml.model(releases, 0.2, RHOS[:4], known, convention)
        logp = attack.compile_logp()
        values = np.array([logp({"X1": np.array(k)}) for k in (2, 3)])
        exact = ml.posterior(releases, 0.2, RHOS[:4], known, convention=convention)
        np.testing.assert_allclose(np.exp(values[1] - np.logaddexp(*values)), exact, rtol=1e-12)


CASES = [  # (releases, prior, known counts, convention)
    ([1, 2, 0, 1, 3, -1], 1 / 5, None, "paper"),
    ([0, 0, 5, 4, 0, 2], 1 / 2, None, "das"),
    ([3, 5, 4], 1 / 50, [2, 3, 3], "paper"),
    ([9, 2, 7, 7], 1 / 864, [1, 1, 4, 6], "das"),
]


@pytest.mark.parametrize(("releases", "prior", "known", "convention"), CASES)
def test_enumerate_equals_the_exact_posterior(releases, prior, known, convention):
    from adversary.inference import enumerate_posterior, posterior_probability

    rhos = RHOS[: len(releases)]
    attack = ml.model(releases, prior, rhos, known, convention)
    table = enumerate_posterior(attack)
    first = 0 if known is None else known[0]
    exact = ml.posterior(releases, prior, rhos, known, convention=convention)
    assert table.omitted_mass == 0
    np.testing.assert_allclose(
        posterior_probability(table, {"X1": first + 1}), exact, rtol=1e-12, atol=1e-15
    )
    np.testing.assert_allclose(table.marginal("X1").sel(X1=first).item(), 1 - exact, rtol=1e-12)


@pytest.mark.parametrize(("releases", "prior", "known", "convention"), CASES[:3])
def test_mcmc_agrees_with_the_exact_posterior_within_4_mcse(releases, prior, known, convention):
    import arviz as az

    from adversary.inference import event_indicator, sample

    rhos = RHOS[: len(releases)]
    attack = ml.model(releases, prior, rhos, known, convention)
    first = 0 if known is None else known[0]
    tree = sample(attack, draws=1500, chains=2, cores=1, random_seed=20230, progressbar=False)
    indicator = event_indicator(tree, {"X1": first + 1}).astype(np.float64)
    estimate = float(indicator.mean())
    ess = float(az.ess(indicator))
    mcse = float(indicator.std()) / np.sqrt(ess)
    exact = ml.posterior(releases, prior, rhos, known, convention=convention)
    assert abs(estimate - exact) <= 4 * mcse, (estimate, exact, mcse, ess)


# --- the case class ----------------------------------------------------------------------

CASE = ml.MultiLevelCase(
    name="unique at six levels",
    rhos=tuple(RHOS),
    priors={"1/2": 1 / 2, "1/50": 1 / 50, "1/864": 1 / 864},
    observed_releases=(2, 1, 0, 2, -1, 1),
    level_names=ml.LEVELS_2020,
)


def test_case_is_a_risk_case_whose_measures_are_the_marginals():
    from adversary.measures.protocol import Attack

    assert isinstance(CASE, Attack)
    for label, p in CASE.priors.items():
        measures = CASE.marginal_measures(label)
        exact = ml.marginals(p, RHOS)
        assert measures.marginal_posterior == exact.marginal_posterior
        assert measures.marginal_risk == exact.marginal_risk
        assert measures.correct_decision_probability == exact.correct_decision_probability
        assert measures.prior_of_truth == p
        assert measures.omitted_mass == exact.omitted_mass <= 1e-15
        assert measures.error_bound == max(exact.posterior_error_bound, exact.decision_error_bound)
        assert measures.details["risk_error_bound"] == exact.risk_error_bound
        assert measures.details["cutoffs"] == list(exact.cutoffs)
        assert measures.details["decision_exact"]
    assert (
        CASE.marginal_measures().marginal_posterior
        == CASE.marginal_measures("1/2").marginal_posterior
    )


def test_sweeping_levels_is_the_figure1_curve():
    import dataclasses

    curve = ml.marginal_by_levels(list(CASE.priors.values()))
    for n in (1, 3, 6):
        case = dataclasses.replace(CASE, levels=n)
        assert case.n_levels == n
        np.testing.assert_array_equal(case.used_rhos, RHOS[:n])
        for label, p in CASE.priors.items():
            measures = case.marginal_measures(label)
            row = curve.sel(levels=n, prior=p)
            assert measures.marginal_risk == pytest.approx(float(row.marginal_risk), rel=1e-12)
            assert measures.correct_decision_probability == pytest.approx(
                float(row.correct_decision_probability), rel=1e-12
            )


def test_case_with_known_counts_and_the_truth_without_c():
    case = ml.MultiLevelCase(
        name="non-unique",
        rhos=(0.3, 0.1, 0.2),
        priors={"1/5": 0.2},
        observed_releases=(3, 5, 2),
        known_counts=(2, 3, 3),
        true_count=2,
        convention="das",
    )
    assert case.known_counts == (2, 3, 3)
    assert case.truth == 2
    measures = case.marginal_measures()
    assert measures.prior_of_truth == pytest.approx(0.8)
    exact = ml.marginals(0.2, [0.3, 0.1, 0.2], [2, 3, 3], 2, "das")
    assert measures.marginal_posterior == exact.marginal_posterior
    assert measures.marginal_risk == pytest.approx(measures.marginal_posterior / 0.8, rel=1e-15)
    assert case.posterior() == ml.posterior(
        [3, 5, 2], 0.2, [0.3, 0.1, 0.2], [2, 3, 3], true_count=2, convention="das"
    )


@pytest.mark.parametrize("levels", [None, 2])
def test_case_model_enumerates_to_the_exact_posterior(levels):
    import dataclasses

    from adversary.inference import enumerate_posterior, posterior_probability

    case = dataclasses.replace(CASE, levels=levels)
    n = 6 if levels is None else levels
    exact = ml.posterior(CASE.observed_releases[:n], 1 / 50, RHOS[:n])
    assert case.posterior("1/50") == exact
    table = enumerate_posterior(case.model("1/50"))
    assert table.omitted_mass == 0
    assert table.joint.sizes == {"X1": 2}
    assert posterior_probability(table, {"X1": 1}) == pytest.approx(exact, rel=1e-12)


@pytest.mark.parametrize(
    ("change", "name"),
    [
        ({"levels": 0}, "levels"),
        ({"levels": 7}, "levels"),
        ({"levels": 2.0}, "levels"),
        ({"observed_releases": (1, 2)}, "observed_releases"),
        ({"observed_releases": (1, 2, 3, 4, 5, 6.5)}, "observed_releases"),
        ({"rhos": (0.1, 0.0)}, "rhos"),
        ({"known_counts": (1, 0, 0, 0, 0, 0)}, "known_counts"),
        ({"true_count": 3}, "true_count"),
        ({"priors": {"bad": 1.0}}, "priors"),
        ({"priors": {}}, "priors"),
        ({"level_names": ("block",)}, "level_names"),
        ({"convention": "other"}, "convention"),
    ],
)
def test_bad_case_fields_name_the_field(change, name):
    import dataclasses

    with pytest.raises(ValueError, match=name):
        dataclasses.replace(CASE, **change)


def test_case_without_releases_has_measures_but_no_model():
    import dataclasses

    case = dataclasses.replace(CASE, observed_releases=None)
    assert case.marginal_measures().marginal_risk == CASE.marginal_measures().marginal_risk
    with pytest.raises(ValueError, match=r"^observed_releases"):
        case.model()
    with pytest.raises(ValueError, match=r"^observed_releases"):
        case.posterior()
    with pytest.raises(ValueError, match=r"^prior must be one of"):
        CASE.marginal_measures("1/3")


# --- ties: commensurate ρ ----------------------------------------------------------------


@pytest.mark.parametrize("tie_rule", ["split", "largest", "smallest"])
@pytest.mark.parametrize("n_levels", [2, 4, 6])
@pytest.mark.parametrize("rho", [0.0992, 0.3])
def test_ties_of_equal_rho_count_by_the_tie_rule(n_levels, rho, tie_rule):
    """With one ρ at every level and p = 1/2 the log odds are ρ(2S + ℓ), S = Σ z_i:
    exact ties at S = -ℓ/2 that float sums need not hit; the tie rule counts them
    (all for m_1 + 1 under "largest", none under "smallest", half under "split")."""
    sigma2 = 1 / (2 * rho)
    reach = int(discrete_gaussian.cutoff(sigma2, 1e-17))
    pz = discrete_gaussian.pmf(np.arange(-reach, reach + 1), sigma2)
    ps = pz
    for _ in range(n_levels - 1):
        ps = np.convolve(ps, pz)
    stat = 2 * np.arange(-n_levels * reach, n_levels * reach + 1) + n_levels
    up = {"split": 0.5, "largest": 1.0, "smallest": 0.0}[tie_rule]
    rhos = [rho] * n_levels
    has_c = ml.marginals(0.5, rhos, tie_rule=tie_rule)
    lacks_c = ml.marginals(0.5, rhos, true_count=0, tie_rule=tie_rule)
    tied = ps[stat == 0].sum()
    assert tied > 0.01
    assert float(has_c.correct_decision_probability) == pytest.approx(
        ps[stat > 0].sum() + up * tied, abs=1e-14
    )
    assert float(lacks_c.correct_decision_probability) == pytest.approx(
        ps[stat > 0].sum() + (1 - up) * tied, abs=1e-14
    )
    # The decision at a tie: releases whose terms (2x_i - 1) sum to 0.
    releases = np.array([[2, 0, 0, 0, 1, 0][:n_levels], [1, 0] * (n_levels // 2)])
    for row in releases:
        if np.sum(2 * row - 1) == 0:
            if tie_rule == "split":
                with pytest.raises(ValueError, match="rng: the decision is tied"):
                    ml.decision(row, 0.5, rhos)
                assert ml.decision(row, 0.5, rhos, rng=3) in (0, 1)
            else:
                assert ml.decision(row, 0.5, rhos, tie_rule=tie_rule) == up


def test_shipped_model_file_is_the_s13_setting():
    from adversary.model_files import load_case

    case = load_case("unique_many_levels")
    assert isinstance(case, ml.MultiLevelCase)
    np.testing.assert_array_equal(case.used_rhos, RHOS)
    assert list(case.priors.values()) == list(PRIORS)
    assert case.truth == 1 and case.n_levels == 6
    measures = case.marginal_measures("1/864")
    np.testing.assert_allclose(measures.marginal_risk, FIGURE1_RISK[-1][-1], atol=5e-5)
    assert case.posterior("1/2") == ml.posterior(case.observed_releases, 0.5, RHOS)
