"""``with_budget``: each attack's ρ fields from an allocation, or one line refusing the case."""

import pytest

from adversary.budget import get_preset
from adversary.model_files import load_case, load_module
from adversary.noise.mechanisms import CellKeyNoise
from adversary.scenarios.budgeted import with_budget
from adversary.scenarios.multi_level import LEVELS_2020

PL94 = get_preset("pl94-2020-persons")


def _halved_detailed(allocation):
    """Every level's detailed share halved, the other half to its race query (ρ detailed / 2)."""
    for level, row in zip(allocation.levels, allocation.query_shares, strict=True):
        shares = dict(zip(allocation.queries, row, strict=True))
        shares["race"] += shares["detailed"] / 2
        shares["detailed"] /= 2
        allocation = allocation.with_query_shares(level, shares)
    return allocation


HALVED = _halved_detailed(PL94)


def test_the_halved_budget_halves_every_detailed_rho():
    for level in PL94.levels:
        assert HALVED.share(level, "detailed") == PL94.share(level, "detailed") / 2


@pytest.mark.parametrize(
    ("model", "fields"),
    [
        ("dare_county", {"rho": "block"}),
        ("post_processed", {"rho": "block"}),
        ("unknown_ethnicity", {"rho": "block"}),
        ("granville_county", {"rho1": "block", "rho2": "block_group"}),
        ("published_tables", {"rho_block": "block", "rho_parent": "block_group"}),
    ],
)
def test_a_rho_field_is_its_level_detailed_query(model, fields):
    case = with_budget(load_case(model), HALVED)
    for field, level in fields.items():
        assert getattr(case, field) == HALVED.rho(level, "detailed")
        assert getattr(case, field) == pytest.approx(PL94.rho(level, "detailed") / 2, rel=1e-15)
    assert with_budget(load_case(model), PL94) == load_case(model)


def test_many_levels_each_level_its_detailed_query():
    case = with_budget(load_case("unique_many_levels"), HALVED)
    assert case.rhos == tuple(HALVED.rho(level, "detailed") for level in LEVELS_2020)


def test_every_query_takes_the_allocation_and_its_total():
    case = with_budget(load_case("every_query"), HALVED.with_rho_total(5))
    assert case.rho_total == 5.0 and case.budget.rho_total == 5
    looks = dict(zip(case.looks().labels, case.looks().rhos, strict=True))
    detailed = next(rho for label, rho in looks.items() if label.startswith("block:detailed"))
    assert detailed == pytest.approx(5 * float(HALVED.share("block", "detailed")), rel=1e-15)


def test_reconstruction_each_count_its_block_level_query():
    original = load_module("reconstruction_block").CASE.replace(releases=None)
    case = with_budget(original, HALVED)
    for label, rho, before in zip(case.query_labels, case.rhos, original.rhos, strict=True):
        query = label.split("[")[0]
        assert rho == HALVED.rho("block", query)
        if query == "detailed":
            assert rho == pytest.approx(before / 2, rel=1e-15)
    with pytest.raises(ValueError, match=r"^budget: under '.*', releases\[4\] = 71 is far"):
        with_budget(load_module("reconstruction_block").CASE, HALVED)  # race: ρ × 220


def test_a_case_taking_its_rho_directly_is_refused():
    with pytest.raises(ValueError, match=r"^budget: case .* \(DifferencingCase\) takes its rho"):
        with_budget(load_case("differencing"), PL94)
    noisy = load_case("dare_county").replace(rho=None, mechanism=CellKeyNoise(1.0, 2))
    with pytest.raises(ValueError, match="takes its noise from its mechanism, not a rho"):
        with_budget(noisy, PL94, "--budget")


def test_a_query_the_budget_does_not_measure_is_refused():
    no_block = PL94.with_query_shares("block", {"total": 1})
    with pytest.raises(ValueError, match=r"does not measure the detailed query at block \(share"):
        with_budget(load_case("granville_county"), no_block)
