"""Allocations as values: ``as_allocation``, budget files (TOML, JSON) and derived allocations."""

import json
from fractions import Fraction
from pathlib import Path

import pytest

from adversary.budget import PRESETS, BudgetAllocation, as_allocation, detailed_rho, get_preset
from adversary.budget_files import budget_json, read_budget, stored_budget, write_budget

PL94 = get_preset("pl94-2020-persons")


def _file(tmp_path, text: str, name: str = "b.toml") -> Path:
    path = tmp_path / name
    path.write_text(text)
    return path


def _half_block_detailed() -> BudgetAllocation:
    """2020's allocation with the block-level detailed share halved (the half to the total)."""
    shares = dict(zip(PL94.queries, PL94.query_shares[PL94.levels.index("block")], strict=True))
    shares["total"] += shares["detailed"] / 2
    shares["detailed"] /= 2
    return PL94.with_query_shares("block", shares, name="half")


@pytest.mark.parametrize("name", list(PRESETS))
@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_every_preset_round_trips(tmp_path, name, suffix):
    preset = PRESETS[name]
    path = write_budget(preset, tmp_path / f"budget{suffix}")
    back = read_budget(path)
    assert back == preset
    assert back.query_shares == preset.query_shares and back.rho_total == preset.rho_total
    assert BudgetAllocation.from_dict(json.loads(json.dumps(preset.to_dict()))) == preset


def test_to_dict_is_exact_fraction_strings():
    data = PL94.to_dict()
    assert data["rho_total"] == "64/25"
    assert data["level_shares"]["block"] == "165/4099"
    assert data["query_shares"]["block"]["detailed"] == "3945/4097"
    assert data["query_shares"]["us"]["total"] == "0"


def test_as_allocation_accepts_each_form(tmp_path):
    assert as_allocation(PL94) is PL94
    assert as_allocation("PL94_2020_Persons") is PL94
    path = write_budget(_half_block_detailed(), tmp_path / "half.json")
    assert as_allocation(path) == _half_block_detailed()
    assert as_allocation(str(path)) == _half_block_detailed()


def test_halved_block_detailed_share_halves_the_single_block_rho(tmp_path):
    path = write_budget(_half_block_detailed(), tmp_path / "half.toml")
    assert detailed_rho("block", path) == detailed_rho("block") / 2
    assert detailed_rho("block_group", path) == detailed_rho("block_group")
    assert as_allocation(path).rho("block", "total") == pytest.approx(
        2.56 * 165 / 4099 * (5 / 4097 + 3945 / 8194), rel=1e-15
    )


def test_a_hand_written_file(tmp_path):
    """Omitted levels and queries have share 0; decimals and floats are exact; keys any case."""
    path = _file(
        tmp_path,
        'rho_total = 1\n[level_shares]\nBlock = "0.25"\n"block-group" = 0.75\n'
        '[query_shares.block]\ndetailed = 0.1\nTotal = "9/10"\n'
        "[query_shares.BLOCK_GROUP]\ndetailed = 1\n",
        "mine.toml",
    )
    budget = read_budget(path)
    assert budget.name == "mine" and budget.description == "" and budget.rho_total == 1
    assert budget.share("block", "detailed") == Fraction(1, 40)
    assert budget.share("block_group", "detailed") == Fraction(3, 4)
    assert budget.share("state") == 0 and budget.rho("state", "detailed") == 0
    assert budget.rho("block", "race") == 0


def test_budget_json_names_a_preset_and_writes_any_other():
    assert budget_json(PL94) == "pl94-2020-persons" == stored_budget(PL94)
    assert budget_json("pl94-2020-persons") == "pl94-2020-persons"
    half = _half_block_detailed()
    assert stored_budget(half) is half
    assert BudgetAllocation.from_dict(budget_json(half)) == half


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            'rho_total = 1\n[level_shares]\nblock = 0.5\nstate = "1/3"\n',
            "level_shares: shares sum to 5/6",
        ),
        ("rho_total = 1\n[level_shares]\nplanet = 1\n", "level_shares.planet: unknown level"),
        (
            "rho_total = 1\n[level_shares]\nblock = 1\n[query_shares.block]\ngvhr = 1\n",
            "query_shares.block.gvhr: unknown query; known: total, race",
        ),
        ("rho_total = 1\n[level_shares]\nblock = 1.5\nstate = -0.5\n", "state must be >= 0"),
        ("rho_total = 1\n[level_shares]\nblock = nan\n", "level_shares.block must be a finite"),
        ('rho_total = 1\n[level_shares]\nblock = "half"\n', "level_shares.block must be a finite"),
        ("rho_total = 0\n[level_shares]\nblock = 1\n", "rho_total must be > 0"),
        ("rho_total = -2\n[level_shares]\nblock = 1\n", "rho_total must be > 0"),
        ("rho_total = 1\n[level_shares]\nblock = 1\n", "query_shares.block: missing for a level"),
        ("[level_shares]\nblock = 1\n", "rho_total: missing"),
        ("rho_total = 1\nrho = 2\n[level_shares]\nblock = 1\n", "unknown key 'rho'"),
        ("rho_total = 1\n[level_shares\n", "malformed TOML"),
    ],
)
def test_a_bad_file_is_one_line_naming_file_and_key(tmp_path, text, message):
    path = _file(tmp_path, text)
    with pytest.raises(ValueError, match=r"^budget: budget file ") as error:
        as_allocation(path)
    text = str(error.value)
    assert message in text and str(path) in text and "\n" not in text


def test_bad_json_suffix_and_missing_file(tmp_path):
    with pytest.raises(ValueError, match="malformed JSON"):
        read_budget(_file(tmp_path, '{"rho_total": 1,', "b.json"))
    with pytest.raises(ValueError, match=r"must end in \.toml or \.json"):
        as_allocation(_file(tmp_path, "rho_total = 1", "b.yaml"))
    with pytest.raises(ValueError, match=r"cannot read it \(No such file"):
        as_allocation(tmp_path / "absent.toml", "--budget")
    with pytest.raises(ValueError, match=r"^--budget must be a preset .* got 'pl94'$"):
        as_allocation("pl94", "--budget")
    with pytest.raises(TypeError, match=r"^budget must be a BudgetAllocation"):
        as_allocation(2.56)
    with pytest.raises(ValueError, match=r"path must end in \.toml or \.json"):
        write_budget(PL94, tmp_path / "b.txt")


def test_derived_allocations():
    half = PL94.with_rho_total(1.28)
    assert half.rho_total == Fraction(32, 25) and half.query_shares == PL94.query_shares
    assert half.rho("block", "detailed") == PL94.rho("block", "detailed") / 2
    assert half.name == "pl94-2020-persons at rho_total 32/25"
    block = PL94.with_level_shares({"Block": 1}, name="all on the block")
    assert block.name == "all on the block" and block.share("block") == 1 and block.share("us") == 0
    same = PL94.with_level_shares(PL94.level_shares)
    assert same.level_shares == PL94.level_shares and same.name != PL94.name
    detailed = PL94.with_query_shares("block", [0] * 10 + [1])
    assert detailed.share("block", "detailed") == PL94.share("block")
    assert detailed.query_shares[:-1] == PL94.query_shares[:-1]


def test_derived_allocations_are_checked():
    with pytest.raises(ValueError, match="level_shares must be >= 0 and sum to exactly 1"):
        PL94.with_level_shares({"block": 0.5})
    with pytest.raises(ValueError, match="level must be one of"):
        PL94.with_level_shares({"planet": 1})
    with pytest.raises(ValueError, match="level shares must have 6 entries, got 2"):
        PL94.with_level_shares([0.5, 0.5])
    with pytest.raises(ValueError, match="query must be one of"):
        PL94.with_query_shares("block", {"gvhr": 1})
    negative = r"query_shares\['block'\] must be >= 0 and sum to exactly 1, got -1 < 0$"
    with pytest.raises(ValueError, match=negative):  # was "got sum 1"
        PL94.with_query_shares("block", {"detailed": 2, "total": -1})
    with pytest.raises(ValueError, match="rho_total must be a number > 0"):
        PL94.with_rho_total(0)
    with pytest.raises(ValueError, match="rho_total must be finite"):
        PL94.with_rho_total(float("nan"))
