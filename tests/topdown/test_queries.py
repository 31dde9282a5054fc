"""The query matrix of a unit's PL 94-171 queries and its weights under an allocation."""

import numpy as np
import pytest

from adversary.budget import get_preset
from adversary.scenarios.reconstruction import REDUCED, pl94_queries
from adversary.topdown.queries import information_matrix, query_matrix


def test_rows_are_the_counts_of_pl94_queries():
    queries = query_matrix(REDUCED)
    cells, _, labels = pl94_queries(REDUCED)
    assert queries.labels == labels
    assert queries.matrix.shape == (130, 56)  # 1+7+2+2+2+14+14+4+28+56 counts
    for row, members in zip(queries.matrix, cells, strict=True):
        assert np.flatnonzero(row).tolist() == list(members)
    # each query's counts partition the cells
    for query in set(queries.queries):
        rows = queries.matrix[np.array(queries.queries) == query]
        np.testing.assert_array_equal(rows.sum(axis=0), np.ones(56))


def test_variances_follow_the_allocation():
    queries = query_matrix(REDUCED, ["total", "detailed"])
    budget = get_preset()
    v = queries.variances(budget, "us", "das")
    assert np.isinf(v[0])  # the US level has no total-population query
    np.testing.assert_allclose(v[1:], 1 / budget.rho("us", "detailed"))
    v = queries.variances(budget, "block", "paper")
    np.testing.assert_allclose(v[0], 1 / (2 * budget.rho("block", "total")))


def test_information_matrix_weighs_each_row_by_its_inverse_variance():
    queries = query_matrix(REDUCED, ["total", "detailed"])
    variances = np.concatenate([[np.inf], np.full(56, 4.0)])
    np.testing.assert_allclose(information_matrix(queries.matrix, variances), np.eye(56) / 4)
    variances[0] = 2.0
    np.testing.assert_allclose(
        information_matrix(queries.matrix, variances), np.eye(56) / 4 + np.ones((56, 56)) / 2
    )


def test_unknown_query_is_named():
    with pytest.raises(ValueError, match="queries must be names among"):
        query_matrix(REDUCED, ["total", "nope"])
