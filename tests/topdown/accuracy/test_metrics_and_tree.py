"""The metric vectors on the classifications, and the geography tree read from its two forms."""

import numpy as np
import pandas as pd
import pytest
import xarray as xr

from adversary.scenarios.reconstruction import DETAILED, REDUCED
from adversary.scenarios.reconstruction.classification import Classification
from adversary.topdown.accuracy import METRICS, as_tree, metric_vectors


@pytest.mark.parametrize(("classification", "races"), [(REDUCED, 7), (DETAILED, 63)])
def test_metric_vectors_count_the_persons_of_each_metric(classification, races):
    vectors = metric_vectors(classification)
    levels = classification.levels()
    names = classification.names
    assert vectors.names == METRICS
    np.testing.assert_array_equal(vectors.matrix[0], np.ones(classification.n_cells))
    adults = levels[:, names.index("voting_age")] == 1
    np.testing.assert_array_equal(vectors.matrix[1], adults)
    assert vectors.matrix[1].sum() == classification.n_cells / 2
    hispanic_race = vectors.matrix[vectors.metric == 2]
    assert hispanic_race.shape[0] == 2 * races
    # each count is one (Hispanic, race) pair, and together they partition the cells
    np.testing.assert_array_equal(hispanic_race.sum(axis=0), np.ones(classification.n_cells))
    pair = levels[:, names.index("hispanic")] * races + levels[:, names.index("race")]
    for index, row in enumerate(hispanic_race):
        np.testing.assert_array_equal(np.flatnonzero(row), np.flatnonzero(pair == index))
    # a metric's value is the mean over its vectors
    values = np.arange(vectors.matrix.shape[0], dtype=np.float64)
    np.testing.assert_allclose(vectors.by_metric(values), [0, 1, np.mean(values[2:])])


def test_a_classification_without_the_metrics_attributes_is_refused():
    with pytest.raises(ValueError, match=r"^classification has no attribute 'voting_age'"):
        metric_vectors(Classification((("hispanic", 2), ("race", 7))))
    with pytest.raises(TypeError, match=r"^classification must be a Classification"):
        metric_vectors("reduced")


def _blocks(rows):
    levels = ("state", "county", "tract", "block_group", "block")
    return type("Geography", (), {"blocks": pd.DataFrame(rows, columns=levels)})()


def test_a_geography_gives_each_unit_its_parent_and_family_size():
    tree = as_tree(_blocks([[1, 11, 111, 1111, 5], [1, 11, 111, 1112, 3], [1, 12, 121, 1211, 4]]))
    np.testing.assert_array_equal(tree.units["county"], [11, 12])
    np.testing.assert_array_equal(tree.parents["county"], [0, 0])
    np.testing.assert_array_equal(tree.family_sizes("county"), [2, 2])
    np.testing.assert_array_equal(tree.units["block"], [3, 4, 5])
    np.testing.assert_array_equal(tree.parents["block"], [1, 2, 0])  # 1112, 1211, 1111
    np.testing.assert_array_equal(tree.family_sizes("block_group"), [2, 2, 1])


def _node(units, parents):
    return xr.Dataset(coords={"unit": units, "parent": ("unit", parents)})


@pytest.mark.parametrize(
    ("nodes", "match"),
    [
        ({"county": _node([1], [-1])}, r"^geography: the tree's levels must be the first"),
        ({"state": _node([1], [-1]), "tract": _node([2], [1])}, "^geography: the tree's levels"),
        ({"state": _node([1], [0])}, r"^geography\['state'\] parent must be -1"),
        (
            {"state": _node([1], [-1]), "county": _node([2, 3], [1, 7])},
            r"^geography\['county'\] parent 7 is not a unit above it",
        ),
        ({"state": _node([1, 1], [-1, -1])}, r"^geography\['state'\] unit must be distinct"),
        ({"state": xr.Dataset(coords={"unit": [1]})}, "needs the coordinates 'unit' and 'parent'"),
    ],
)
def test_bad_tables_are_refused_naming_geography(nodes, match):
    with pytest.raises(ValueError, match=match):
        as_tree(xr.DataTree.from_dict(nodes))


def test_a_unit_in_two_parents_is_refused():
    with pytest.raises(ValueError, match=r"^geography: a tract lies in more than one county"):
        as_tree(_blocks([[1, 11, 111, 1111, 5], [1, 12, 111, 1112, 3]]))
