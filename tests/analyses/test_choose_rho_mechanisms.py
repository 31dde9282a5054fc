"""choose_rho on cases whose noise is a mechanism: ρ-parameterised noise searched, bounded not."""

import dataclasses
import math

import pytest

from adversary.analyses.choose_rho import choose_rho, measure_at, rho_fields, with_rho
from adversary.model_files import load_case
from adversary.noise import (
    CellKeyNoise,
    DiscreteGaussianNoise,
    DiscreteLaplaceNoise,
    TruncatedGeometricNoise,
)
from adversary.scenarios import single_block as sb
from adversary.scenarios.block_group.case import BlockGroupCase
from adversary.scenarios.multi_level import MultiLevelCase

DARE = load_case("dare_county")
PRIORS = ["1/864", "1/50"]


@pytest.mark.parametrize("convention", ["paper", "das"])
def test_a_discrete_gaussian_mechanism_gives_the_rho_answer(convention):
    case = dataclasses.replace(DARE, convention=convention)
    as_mechanism = dataclasses.replace(
        case, rho=None, mechanism=DiscreteGaussianNoise.from_rho(case.rho, convention)
    )
    assert rho_fields(as_mechanism) == ["rho"]
    scan = {"points_per_decade": 10, "refine": 4}  # sparser than the default, on both sides
    expected = choose_rho(case, 1.5, priors=PRIORS, **scan)
    got = choose_rho(as_mechanism, 1.5, priors=PRIORS, **scan)
    assert got.rho == expected.rho and got.measure_at_rho == expected.measure_at_rho
    assert got.mechanism == DiscreteGaussianNoise.from_rho(got.rho, convention).label
    assert got.pure_epsilon is None and expected.mechanism is None


def test_discrete_laplace_is_searched_by_its_implied_zcdp_rho():
    case = dataclasses.replace(DARE, rho=None, mechanism=DiscreteLaplaceNoise(3.0))
    varied = with_rho(case, 0.5)
    assert varied.mechanism.zcdp_rho() == pytest.approx(0.5, rel=1e-12)
    result = choose_rho(case, 1.5, priors=PRIORS)
    at = measure_at(case, result.rho, "marginal_risk", "rho", PRIORS)
    assert all(value + bound <= 1.5 for value, bound in at.values())
    above = measure_at(case, result.rho * (1 + result.tolerance), "marginal_risk", "rho", PRIORS)
    assert max(value + bound for value, bound in above.values()) > 1.5
    assert result.pure_epsilon == pytest.approx(math.sqrt(2 * result.rho), rel=1e-12)
    # The chosen Laplace release against the single-block functions directly.
    mech = DiscreteLaplaceNoise(1 / math.sqrt(2 * result.rho))
    risk = sb.marginal_risk(1 / 864, mechanism=mech)
    assert risk == pytest.approx(result.measure_at_rho["1/864"], rel=1e-12)


@pytest.mark.parametrize(
    "mechanism", [CellKeyNoise(5.0, 6), TruncatedGeometricNoise(2.0, 5)], ids=lambda m: m.name
)
def test_bounded_noise_is_refused_with_the_reason(mechanism):
    case = dataclasses.replace(DARE, rho=None, mechanism=mechanism)
    assert rho_fields(case) == []
    with pytest.raises(ValueError, match="not zCDP"):
        choose_rho(case, 1.5)
    with pytest.raises(ValueError, match="not zCDP"):
        with_rho(case, 0.3)


def test_fields_of_cases_with_several_mechanisms():
    laplace, cell_key = DiscreteLaplaceNoise(2.0), CellKeyNoise(2.0, 3)
    levels = MultiLevelCase("ml", None, {"a": 0.5}, mechanism=(laplace, cell_key))
    assert rho_fields(levels) == ["rhos[0]"]
    assert with_rho(levels, 0.2, "rhos[0]").mechanism[1] == cell_key
    with pytest.raises(ValueError, match="not zCDP"):
        with_rho(levels, 0.2, "rhos[1]")
    pair = (DiscreteGaussianNoise.from_rho(0.1), cell_key)
    group = BlockGroupCase("bg", (1, 2, 0), (1, 1, 0), {"a": 0.5}, None, None, 3, mechanism=pair)
    assert rho_fields(group) == ["rho1"]
    varied = with_rho(group, 0.4, "rho1")
    assert varied.mechanism[0] == DiscreteGaussianNoise.from_rho(0.4)
    with pytest.raises(ValueError, match="not zCDP"):
        choose_rho(group, 1.5, field="rho2")
