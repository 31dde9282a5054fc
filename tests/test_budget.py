"""Budget presets: the 2020 P.L. 94-171 persons-file allocation against its publications."""

from fractions import Fraction

import pytest

from adversary.budget import PRESETS, BudgetAllocation, get_preset

LEVELS = ("us", "state", "county", "tract", "block_group", "block")

# Kazan & Reiter (2023), Table 2 (seeds/kazan-reiter-2023-main.txt): total proportion,
# GVHR proportion, and GVHR rho = 2.56 x total x GVHR rounded to 4 decimals.
TABLE_2 = {
    "us": (Fraction(104, 4099), Fraction(189, 241), 0.0509),
    "state": (Fraction(1440, 4099), Fraction(230, 4097), 0.0505),
    "county": (Fraction(447, 4099), Fraction(754, 4097), 0.0514),
    "tract": (Fraction(687, 4099), Fraction(241, 2051), 0.0504),
    "block_group": (Fraction(1256, 4099), Fraction(1288, 4099), 0.2465),
    "block": (Fraction(165, 4099), Fraction(3945, 4097), 0.0992),
}

# JASON (2022) Figure 5-3 (seeds/jason-2022-consistency-and-formal-privacy.txt): percent
# of the persons-file rho, columns US, State, County, Tract, OBG, Block, All.
FIGURE_5_3 = {
    "total": (0.000, 32.352, 8.321, 6.403, 12.746, 0.005, 59.826),
    "race": (0.032, 0.051, 0.027, 0.033, 0.022, 0.009, 0.174),
    "hispanic": (0.016, 0.051, 0.027, 0.020, 0.022, 0.005, 0.142),
    "voting_age": (0.016, 0.051, 0.027, 0.020, 0.022, 0.005, 0.142),
    "hhinstlevels": (0.016, 0.051, 0.027, 0.020, 0.022, 0.005, 0.142),
    "hhgq": (0.016, 0.051, 0.027, 0.020, 0.022, 0.005, 0.142),
    "hispanic_race": (0.081, 0.103, 0.075, 7.898, 7.887, 0.021, 16.063),
    "voting_age_race": (0.081, 0.103, 0.075, 0.082, 0.067, 0.021, 0.428),
    "voting_age_hispanic": (0.016, 0.051, 0.027, 0.020, 0.022, 0.005, 0.142),
    "voting_age_hispanic_race": (0.274, 0.292, 0.269, 0.274, 0.179, 0.070, 1.357),
    "detailed": (1.990, 1.972, 2.007, 1.969, 9.628, 3.876, 21.443),
}
FIGURE_5_3_TOTAL = (2.537, 35.131, 10.905, 16.760, 30.642, 4.025, 100.000)


@pytest.fixture(scope="module")
def pl94():
    return get_preset("pl94-2020-persons")


def test_rho_total_is_2_56(pl94):
    assert pl94.rho_total == Fraction(256, 100)
    assert pl94.rho() == 2.56
    assert pl94.share() == 1


def test_table_2_fractions_are_exact(pl94):
    for level, (total, gvhr, _) in TABLE_2.items():
        assert pl94.share(level) == total
        assert pl94.share(level, "detailed") == total * gvhr


def test_table_2_final_column(pl94):
    for level, (_, _, rho) in TABLE_2.items():
        assert round(pl94.rho(level, "detailed"), 4) == rho


@pytest.mark.parametrize("query", list(FIGURE_5_3))
def test_figure_5_3_row(pl94, query):
    *cells, everywhere = FIGURE_5_3[query]
    for level, percent in zip(LEVELS, cells, strict=True):
        assert round(float(100 * pl94.share(level, query)), 3) == percent, level
    assert round(float(100 * pl94.share(query=query)), 3) == everywhere


def test_figure_5_3_total_row(pl94):
    *cells, everywhere = FIGURE_5_3_TOTAL
    for level, percent in zip(LEVELS, cells, strict=True):
        assert round(float(100 * pl94.share(level)), 3) == percent
    assert round(float(100 * pl94.share()), 3) == everywhere


def test_figure_5_3_worked_example(pl94):
    # JASON Sec. 5.4.2: 9.628% of rho = 2.56 to OBG detailed, "rho ~ 0.246".
    assert round(pl94.rho("block_group", "detailed"), 3) == 0.246


def test_us_has_no_total_population_query(pl94):
    assert pl94.share("us", "total") == 0
    assert pl94.rho("us", "total") == 0.0
    assert pl94.epsilon("us", "total") == 0.0
    with pytest.raises(ValueError, match="not measured"):
        pl94.sigma2("us", "total")


def test_sigma2_conventions(pl94):
    rho = pl94.rho("block", "detailed")
    assert rho == pytest.approx(0.09922635422547502, rel=1e-14)
    assert pl94.sigma2("block", "detailed") == pytest.approx(1 / (2 * rho), rel=1e-15)
    assert pl94.sigma2("block", "detailed", "das") == pytest.approx(1 / rho, rel=1e-15)


def test_epsilon_of_whole_file(pl94):
    assert round(pl94.epsilon(), 2) == 17.16  # CKS at rho = 2.56
    assert round(pl94.epsilon(conversion="bun-steinke"), 2) == 17.92
    # Census-reported 17.14 (JASON Sec. 6.2) needs the unrounded production rho.
    production = get_preset("pl94-2020-persons-production")
    assert production.rho_total == Fraction(542, 339) ** 2
    assert round(production.epsilon(), 2) == 17.14
    assert production.share("block", "detailed") == pl94.share("block", "detailed")


def test_table_rows(pl94):
    rows = pl94.table()
    assert len(rows) == 66
    assert [r.level for r in rows[::11]] == list(LEVELS)
    block = {r.query: r for r in rows if r.level == "block"}
    detailed = block["detailed"]
    assert detailed.level_label == "Block"
    assert detailed.query_label == "Detailed (GVHR)"
    assert detailed.share == pytest.approx(165 / 4099 * 3945 / 4097, rel=1e-15)
    assert detailed.rho == pl94.rho("block", "detailed")
    assert detailed.sigma2 == pl94.sigma2("block", "detailed", "paper")
    assert detailed.epsilon_cks == pl94.epsilon("block", "detailed")
    assert detailed.epsilon_bun_steinke == pl94.epsilon(
        "block", "detailed", conversion="bun-steinke"
    )
    assert detailed.epsilon_cks < detailed.epsilon_bun_steinke
    us_total = next(r for r in rows if (r.level, r.query) == ("us", "total"))
    assert (us_total.rho, us_total.sigma2, us_total.epsilon_cks) == (0.0, None, 0.0)


def test_table_totals_and_convention(pl94):
    rows = pl94.table("das", delta=1e-6, totals=True)
    assert len(rows) == 66 + 6 + 1
    grand = rows[-1]
    assert (grand.level, grand.query, grand.share, grand.rho, grand.sigma2) == (
        "all",
        "all",
        1.0,
        2.56,
        None,
    )
    assert grand.epsilon_cks == pl94.epsilon(delta=1e-6)
    block_total = next(r for r in rows if (r.level, r.query) == ("block", "all"))
    assert block_total.rho == pytest.approx(2.56 * 165 / 4099, rel=1e-15)
    detailed = next(r for r in rows if (r.level, r.query) == ("block", "detailed"))
    assert detailed.sigma2 == pytest.approx(1 / detailed.rho, rel=1e-15)
    assert detailed.as_dict()["query"] == "detailed"


def test_lookups_are_forgiving_about_case_and_separators(pl94):
    assert pl94.rho("Block-Group", "DETAILED") == pl94.rho("block_group", "detailed")
    assert pl94.level_label("block group") == "Optimized block group"
    assert get_preset("PL94_2020_PERSONS") is pl94
    assert set(PRESETS) == {"pl94-2020-persons", "pl94-2020-persons-production"}


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda p: p.rho("nation", "detailed"), r"^level must be one of 'us', "),
        (lambda p: p.rho("block", "gvhr"), r"^query must be one of 'total', "),
        (lambda p: p.sigma2("block", "detailed", "laplace"), r"^convention must be one of"),
        (lambda p: p.table(convention="x"), r"^convention must be one of"),
        (lambda p: p.table(delta=0.0), r"^delta must lie strictly between 0 and 1"),
        (lambda p: p.epsilon("us", "total", delta=2.0), r"^delta must lie strictly"),
        (lambda p: p.epsilon(conversion="rdp"), r"^conversion must be one of"),
    ],
)
def test_bad_names_and_values(pl94, call, message):
    with pytest.raises(ValueError, match=message):
        call(pl94)


def test_unknown_preset():
    with pytest.raises(ValueError, match=r"^preset must be one of 'pl94-2020-persons'"):
        get_preset("pl94-2010")


def test_allocation_checks_its_shares():
    def make(**overrides):
        fields = dict(
            name="toy",
            description="",
            rho_total=1.0,
            levels=("a", "b"),
            level_labels=("A", "B"),
            queries=("q",),
            query_labels=("Q",),
            level_shares=(Fraction(1, 2), Fraction(1, 2)),
            query_shares=((1,), (1,)),
        )
        return BudgetAllocation(**(fields | overrides))

    toy = make()
    assert toy.rho_total == 1 and toy.rho("b", "q") == 0.5
    # Floats are read as the decimals they print as, so 0.1 + 0.2 + 0.7 sums to 1.
    assert make(levels=("a",), level_labels=("A",), level_shares=(1.0,), query_shares=((1,),))
    three = make(
        queries=("x", "y", "z"),
        query_labels=("X", "Y", "Z"),
        query_shares=((0.1, 0.2, 0.7), (0, 0, 1)),
    )
    assert three.share("a", "x") == Fraction(1, 20)
    with pytest.raises(ValueError, match=r"^level_shares must be >= 0 and sum to exactly 1"):
        make(level_shares=(0.5, 0.4))
    with pytest.raises(ValueError, match=r"^query_shares\['a'\] must have 1 entries"):
        make(query_shares=((1, 0), (1,)))
    with pytest.raises(ValueError, match=r"^rho_total must be a number > 0"):
        make(rho_total=0)
    with pytest.raises(ValueError, match="distinct lowercase keys"):
        make(levels=("a", "a"))
    with pytest.raises(TypeError, match=r"^level_shares must be numbers"):
        make(level_shares=("1/2", "1/2"))
