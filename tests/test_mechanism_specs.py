"""Mechanism specs ``NAME:key=value,…``: parsed, written back, refused in one line, put on cases."""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import pytest

from adversary import mechanism_specs as specs
from adversary.measures.protocol import CaseFields
from adversary.mechanism_specs import (
    MECHANISMS,
    MechanismKind,
    Parameter,
    mechanism_spec,
    parse_mechanism,
    with_mechanism,
)
from adversary.model_files import load_case
from adversary.noise.mechanisms import (
    CellKeyNoise,
    DiscreteGaussianNoise,
    DiscreteLaplaceNoise,
    FinitePmfNoise,
    TruncatedGeometricNoise,
)
from adversary.swapping import HouseholdSwapping, TargetedRecordSwapping


@dataclass(frozen=True)
class Swap:
    """A stand-in for a swapping mechanism: the contract's validated frozen dataclass."""

    rate: float
    within: str = "county"
    match_key: tuple = ("size", "voting_age")

    name = "toy_swapping"

    def __post_init__(self):
        if not 0 <= self.rate <= 1:
            raise ValueError(f"rate must be in [0, 1], got {self.rate}")
        if self.within not in ("tract", "county", "state"):
            raise ValueError(f"within must be tract, county or state, got {self.within!r}")


#: One entry, as the swapping mechanisms will be: its keys are the class's fields.
TOY = MechanismKind(
    "toy_swapping",
    Swap,
    "a share of households swapped",
    (
        Parameter("rate", "share of households swapped", specs.REQUIRED, "[0, 1]"),
        Parameter("within", "area of the partner", "county", "tract, county or state", "name"),
        Parameter("match_key", "what partners share", ("size", "voting_age"), "", "names"),
    ),
)


@pytest.fixture
def toy(monkeypatch):
    monkeypatch.setitem(MECHANISMS, TOY.name, TOY)


@dataclass(frozen=True)
class SwapCase(CaseFields):
    """A case whose mechanism is a swapping one (as the swapping cases will be)."""

    name: str
    mechanism: Swap | None = None


#: Spec → the mechanism built directly; every registered kind at least once.
PARSED = {
    "discrete_gaussian:rho=0.1": DiscreteGaussianNoise.from_rho(0.1),
    "discrete_gaussian:rho=1/50,convention=das": DiscreteGaussianNoise.from_rho(0.02, "das"),
    "discrete_gaussian:sigma2=2.5,sensitivity=3": DiscreteGaussianNoise(2.5, 3.0),
    "discrete_laplace:scale=2": DiscreteLaplaceNoise(2.0),
    "discrete_laplace: epsilon = 0.5 , sensitivity=2": DiscreteLaplaceNoise(4.0, 2),
    "truncated_geometric:scale=1.5e0,bound=4": TruncatedGeometricNoise(1.5, 4),
    "truncated_geometric:epsilon=1/4,bound=3,sensitivity=2": TruncatedGeometricNoise(8.0, 3, 2),
    "cell_key:variance=2,bound=5": CellKeyNoise(2.0, 5),
    "finite_pmf:start=-1,probabilities=1+2+1": FinitePmfNoise(-1, (0.25, 0.5, 0.25)),
    "finite_pmf:start=0,probabilities=3": FinitePmfNoise(0, (1.0,)),
    "swapping:rate=0.04": HouseholdSwapping(0.04),
    "swapping:rate=1/2,within=tract,match_key=size": HouseholdSwapping(0.5, "tract", ("size",)),
    "trs": TargetedRecordSwapping(),
    "trs:rate=0.2,k_anonymity=5,risk_variables=race,hierarchy=county+block": (
        TargetedRecordSwapping(0.2, 5, ("race",), hierarchy=("county", "block"))
    ),
}


def test_every_registered_kind_has_an_example():
    assert {spec.split(":")[0] for spec in PARSED} == set(MECHANISMS)


@pytest.mark.parametrize("spec", PARSED)
def test_a_spec_gives_the_mechanism_built_directly(spec):
    assert parse_mechanism(spec) == PARSED[spec]


@pytest.mark.parametrize("spec", PARSED)
def test_every_kind_round_trips(spec):
    mechanism = PARSED[spec]
    assert parse_mechanism(mechanism_spec(mechanism)) == mechanism


def test_specs_are_written_with_rho_where_it_rebuilds_the_noise_exactly():
    assert mechanism_spec(DiscreteGaussianNoise.from_rho(0.25)) == "discrete_gaussian:rho=0.25"
    das = mechanism_spec(DiscreteGaussianNoise.from_rho(0.5, "das"))
    assert das == "discrete_gaussian:rho=0.5,convention=das"
    odd = DiscreteGaussianNoise(2.0, 3.0)  # no convention has sensitivity 3
    assert mechanism_spec(odd) == "discrete_gaussian:sigma2=2.0,sensitivity=3.0"
    assert mechanism_spec(CellKeyNoise(2.0, 5)) == "cell_key:variance=2.0,bound=5"


@pytest.mark.parametrize("rho", [0.1, 1 / 3, 0.0991, 1e-7, 123.456, math.pi])
def test_gaussian_round_trips_for_awkward_rhos(rho):
    for convention in ("paper", "das"):
        mechanism = DiscreteGaussianNoise.from_rho(rho, convention)
        assert parse_mechanism(mechanism_spec(mechanism)) == mechanism


def test_a_one_entry_kind_takes_defaults_names_and_tuples(toy):
    assert parse_mechanism("toy_swapping:rate=0.04") == Swap(0.04)
    swap = parse_mechanism("toy_swapping:rate=1/50,within=tract,match_key=size+voting_age+sex")
    assert swap == Swap(0.02, "tract", ("size", "voting_age", "sex"))
    assert parse_mechanism("toy_swapping:rate=0,match_key=size").match_key == ("size",)
    assert mechanism_spec(Swap(0.04)) == "toy_swapping:rate=0.04"
    assert parse_mechanism(mechanism_spec(swap)) == swap
    assert "toy_swapping:rate[,within][,match_key]" in MECHANISMS["toy_swapping"].usage


@dataclass(frozen=True)
class Either:
    low: float | None = None
    high: float | None = None


def test_a_one_entry_kind_with_alternatives_gets_only_the_key_given(monkeypatch):
    either = MechanismKind(
        "either",
        Either,
        "one bound or the other",
        (
            Parameter("low", "lower", specs.ALTERNATIVE),
            Parameter("high", "upper", specs.ALTERNATIVE),
        ),
        alternatives=(("low", "high"),),
    )
    monkeypatch.setitem(MECHANISMS, "either", either)
    assert parse_mechanism("either:high=2") == Either(high=2)
    assert either.usage == "either:low|high"
    with pytest.raises(ValueError, match=r"^mechanism 'either': either needs low or high$"):
        parse_mechanism("either")


ERRORS = [
    ("swap:rate=0.04", "unknown mechanism 'swap'; known: discrete_gaussian, "),
    ("discrete_laplace:rho=1", "discrete_laplace has no key 'rho'; keys: scale, epsilon, sensit"),
    ("cell_key:variance=2", "cell_key needs bound"),
    ("discrete_laplace:sensitivity=2", "discrete_laplace needs scale or epsilon"),
    ("discrete_gaussian:rho=1,sigma2=1", "give rho or sigma2, not both"),
    ("discrete_gaussian:sigma2=1,convention=das", "convention goes with rho"),
    ("discrete_gaussian:rho=-1", "rho must be finite and > 0, got -1"),
    ("cell_key:variance=9,bound=2", "target_variance must be at most E(E+1)/3 = 2"),
    ("discrete_laplace:scale", "'scale' is not key=value"),
    (":scale=1", "no mechanism name before ':'"),
    ("discrete_laplace:scale=1,scale=2", "key 'scale' given twice"),
    ("discrete_laplace:scale=1,,sensitivity=1", "'' is not key=value"),
    ("discrete_laplace:", "nothing after ':'"),
    ("discrete_laplace:scale=", "scale has no value"),
    ("discrete_laplace:scale=1/0", "scale=1/0 divides by zero"),
    ("discrete_laplace:scale=nan", "scale must be a number, got 'nan'"),
    ("discrete_laplace:scale=1+2", "scale must be a number, got '1+2'"),
    ("finite_pmf:start=0,probabilities=1++2", "has an empty part between '+'"),
    ("discrete_gaussian:rho=0.1,convention=3", "convention must be a name, got '3'"),
    ("discrete_gaussian:rho=0.1,convention=dash", "convention"),
    ("discrete_laplace:scale=$", "scale='$' is not a number, a fraction, a name or a+b"),
]


@pytest.mark.parametrize(("spec", "part"), ERRORS)
def test_a_bad_spec_is_one_line_naming_the_spec_and_the_part(spec, part):
    with pytest.raises(ValueError) as error:
        parse_mechanism(spec, "--mechanism")
    message = str(error.value)
    assert message.startswith(f"--mechanism {spec!r}: ")
    assert part in message
    assert "\n" not in message


def test_the_toy_kinds_own_refusal_follows_the_spec(toy):
    with pytest.raises(ValueError, match=r"^m 'toy_swapping:rate=1.5': rate must be in \[0, 1\]"):
        parse_mechanism("toy_swapping:rate=1.5", "m")
    with pytest.raises(ValueError, match="within must be a name, got '2'"):
        parse_mechanism("toy_swapping:rate=0.5,within=2")


def test_a_spec_must_be_text():
    with pytest.raises(TypeError, match="mechanism must be a spec"):
        parse_mechanism(DiscreteLaplaceNoise(2.0))
    with pytest.raises(TypeError, match="registered kinds"):
        mechanism_spec(Swap(0.1))


def test_the_table_lists_every_key_with_its_default_and_range():
    table = specs.mechanisms_table()
    for kind in MECHANISMS.values():
        assert f"{kind.name}: {kind.summary}" in table
    assert "  bound: largest |noise| E, integer >= 1; required" in table
    assert "  rho: zCDP ρ of the count, > 0; one of rho or sigma2" in table
    assert "  sensitivity: how far one person moves a count (L1), integer >= 1; default 1" in table


def test_getting_started_documents_every_kind():
    """The table of ``--mechanism`` in Getting started has a row per registered kind."""
    page = Path(__file__).parents[1] / "docs" / "getting-started.md"
    text = page.read_text(encoding="utf-8")
    for kind in MECHANISMS.values():
        assert f"| `{kind.usage.replace('|', chr(92) + '|')}` |" in text


# --- on a case -----------------------------------------------------------------------------


def test_a_mechanism_replaces_the_rho_of_a_single_block():
    case = load_case("dare_county")
    laplace = DiscreteLaplaceNoise(2.0)
    changed = with_mechanism(case, laplace)
    assert changed == case.replace(rho=None, mechanism=laplace)


def test_a_case_with_one_mechanism_per_level_gets_it_at_every_level():
    case = load_case("unique_many_levels")
    changed = with_mechanism(case, DiscreteLaplaceNoise(2.0))
    assert changed.rhos is None
    assert changed.mechanism == (DiscreteLaplaceNoise(2.0),) * len(case.rhos)


def test_the_sum_approximation_goes_exact_for_other_noise_only():
    """(3.7) replaces a sum of discrete Gaussians by one: other noise is summed exactly."""
    case = load_case("granville_county")
    assert case.sum_noise == "approximate"
    assert with_mechanism(case, CellKeyNoise(2.0, 5)).sum_noise == "exact"
    gaussian = DiscreteGaussianNoise.from_rho(case.rho1)
    assert with_mechanism(case, gaussian).sum_noise == "approximate"
    post = load_case("post_processed")
    assert post.exact_sum is False
    assert with_mechanism(post, DiscreteLaplaceNoise(2.0)).exact_sum is True


def test_a_noise_mechanism_on_a_swapping_case_is_refused_naming_what_it_takes(toy):
    case = SwapCase("toy")
    assert with_mechanism(case, Swap(0.1)) == SwapCase("toy", Swap(0.1))
    with pytest.raises(ValueError) as error:
        with_mechanism(case, DiscreteLaplaceNoise(2.0), "--mechanism")
    assert str(error.value) == (
        "--mechanism: case 'toy' (SwapCase) takes toy_swapping, not discrete_laplace"
    )
    with pytest.raises(ValueError, match=r"\(SingleBlockCase\) takes discrete_gaussian, "):
        with_mechanism(load_case("dare_county"), Swap(0.1), "--mechanism")


def test_a_case_without_a_mechanism_parameter_is_refused():
    @dataclass(frozen=True)
    class Fixed(CaseFields):
        name: str
        rho: float = 0.1

    with pytest.raises(ValueError) as error:
        with_mechanism(Fixed("fixed"), DiscreteLaplaceNoise(2.0), "--mechanism")
    assert str(error.value) == (
        "--mechanism: case 'fixed' (Fixed) has no mechanism parameter; its noise is fixed"
    )


def test_a_swapping_mechanism_sets_a_swapping_cases_law():
    from adversary.scenarios.swapping import HouseholdSwapLaw
    from adversary.scenarios.swapping.targeted_law import TargetedSwapLaw

    case = load_case("swapping_block")
    assert with_mechanism(case, HouseholdSwapping(0.3)) == case.replace(law=HouseholdSwapLaw(0.3))
    trs = load_case("trs_block")
    changed = with_mechanism(trs, TargetedRecordSwapping(0.2))
    assert changed.law == TargetedSwapLaw(TargetedRecordSwapping(0.2), trs.law.donor_rate)
    # A household swapping on the targeted case: the household law (no donor rate).
    assert with_mechanism(trs, HouseholdSwapping(0.3)).law == HouseholdSwapLaw(0.3)
    with pytest.raises(
        ValueError, match=r"^--mechanism: case .* takes swapping or trs, not cell_key$"
    ):
        with_mechanism(case, CellKeyNoise(2.0, 5), "--mechanism")
