"""The per-partition work of a population run: partitions cut, and each phase's tasks.

The units of the partition level are cut into contiguous groups of about
equal persons (:func:`assign_partitions`). Each partition counts the persons
of every cell at the levels it holds whole; the counts at the levels above it
are summed on the client (:func:`sum_upper`) and sent back. Each partition
then keeps its records in small cells with their counts and parameter tuples
and, once the measures are known, joins them (:class:`Phases`, over
:mod:`.partition`).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from .cluster import scatter
from .partition import assessed_records, cell_counts, finish, parameter_tuples
from .schema import COUNT
from .sources import synthetic_partition

__all__ = ["Phases", "assign_partitions", "sum_upper"]


class Phases:
    """The per-partition tasks of each phase, for a table's scattered partitions or synthetic ones.

    A table's partitions and their prepared records stay on the workers from
    the counts to the join. A synthetic partition is generated afresh in each
    phase and its prepared records are never kept.
    """

    def __init__(self, client, source, level, assignment, model):
        self.client, self.model, self.regenerated = client, model, source.regenerated
        if self.regenerated:
            recipes = source.recipes(level, assignment)
            # each partition's blocks sent to the workers once, not with every phase's tasks
            blocks = scatter(client, [recipe[0] for recipe in recipes])
            self.recipes = [(b, *recipe[1:]) for b, recipe in zip(blocks, recipes, strict=True)]
        else:
            self.parts = source.futures(client, level, assignment)

    def upper(self, characteristics, levels) -> list:
        """Each partition's cell counts at ``levels`` (futures, in partition order)."""
        if self.regenerated:
            return self.client.map(
                _generated_upper,
                self.recipes,
                characteristics=characteristics,
                levels=levels,
                pure=False,
            )
        return self.client.map(
            _upper_counts, self.parts, characteristics=characteristics, levels=levels
        )

    def tuples(self, upper) -> list:
        """Each partition's parameter tuples and persons by block size, given the counts
        ``upper`` at the levels above it (futures, in partition order)."""
        if self.regenerated:
            return self.client.map(
                _generated_tuples, self.recipes, model=self.model, upper=upper, pure=False
            )
        self.prepared = self.client.map(_prepare, self.parts, model=self.model, upper=upper)
        del self.parts
        return self.client.map(_tuples, self.prepared)

    def finish(self, upper, tables):
        """A function submitting partition ``i``'s join (submitted as the client needs it)."""
        if self.regenerated:
            return lambda i: self.client.submit(
                _generated_finish, self.recipes[i], self.model, upper, tables, pure=False
            )
        return lambda i: self.client.submit(
            _finish, self.prepared[i], model=self.model, tables=tables, pure=False
        )


def assign_partitions(units: pd.DataFrame, partitions: int) -> pd.DataFrame:
    """Cut sorted units into ``partitions`` contiguous groups of about equal persons."""
    persons = units["persons"].to_numpy(dtype=np.float64)
    before = np.concatenate([[0.0], np.cumsum(persons)[:-1]])
    total = max(float(persons.sum()), 1.0)
    index = np.minimum((before * partitions / total).astype(np.int64), partitions - 1)
    out = units.copy()
    out["partition"] = pd.factorize(index)[0]  # renumber, dropping empty groups
    return out


def _upper_counts(frame, characteristics, levels):
    return {level: cell_counts(frame, characteristics, level) for level in levels}


def _prepare(frame, model, upper):
    records, bins = assessed_records(frame, model, upper)
    return {"records": records, "bins": bins}


def _tuples(prepared):
    return {"tuples": parameter_tuples(prepared["records"]), "bins": prepared["bins"]}


def _finish(prepared, model, tables):
    records, by_bin, by_county = finish(prepared["records"], model, tables)
    persons = int(prepared["bins"]["persons"].sum())
    return {"records": records, "by_bin": by_bin, "by_county": by_county, "persons": persons}


def _generated_upper(recipe, characteristics, levels):
    return _upper_counts(synthetic_partition(*recipe), characteristics, levels)


def _generated_tuples(recipe, model, upper):
    return _tuples(_prepare(synthetic_partition(*recipe), model, upper))


def _generated_finish(recipe, model, upper, tables):
    return _finish(_prepare(synthetic_partition(*recipe), model, upper), model, tables)


def sum_upper(parts, chars, levels):
    """The partitions' cell counts ``parts`` summed at each of ``levels``."""
    return {
        level: pd.concat([p[level] for p in parts], ignore_index=True)
        .groupby([level, *chars], sort=True, observed=True, dropna=False)[COUNT]
        .sum()
        .reset_index()
        for level in levels
    }
