"""Inputs of the unknown-attribute attack, checked: priors, released cells, noise, counts.

Arrays carry the K categories (or the released cells) on their last axis;
every check raises a ``ValueError`` naming the argument.
"""

from __future__ import annotations

import numpy as np

from ..._validation import as_counts, as_index, as_integers, as_positive, last_axis
from ...measures.noise import resolve_many
from ...noise import noise_variance

# Tolerance of a probability vector's sum (as FinitePmf).
_SUM_TOLERANCE = 1e-9


def checked_prior(prior, name: str = "prior", *, one: bool = False) -> np.ndarray:
    """π with the K ≥ 2 categories on the last axis: every π_k > 0, summing to 1 (renormalised).

    ``one=True`` asks for a single prior vector (1-d).
    """
    array = as_positive(prior, name)
    if one and array.ndim != 1:
        raise ValueError(f"{name} must be one probability vector here, got shape {array.shape}")
    if array.ndim == 0 or array.shape[-1] < 2:
        raise ValueError(
            f"{name} must hold one probability per category (K >= 2) on its last axis, "
            f"got {prior!r}"
        )
    total = array.sum(axis=-1, keepdims=True)
    if np.any(np.abs(total - 1.0) > _SUM_TOLERANCE):
        raise ValueError(
            f"{name} must sum to 1 over the categories (within {_SUM_TOLERANCE:g}), got sum "
            f"{np.squeeze(total)!r}"
        )
    return array / total


def released_mask(released, n_categories: int) -> np.ndarray:
    """Boolean mask of the released cells; ``None`` means every cell."""
    if released is None:
        return np.ones(n_categories, dtype=bool)
    index = as_integers(released, "released")
    if index.ndim != 1 or index.size == 0:
        raise ValueError(
            f"released must be a non-empty sequence of category indices, got {released!r}"
        )
    if np.any((index < 0) | (index >= n_categories)) or len(set(index.tolist())) != index.size:
        raise ValueError(
            f"released must list distinct category indices from 0 to {n_categories - 1}, "
            f"got {released!r}"
        )
    mask = np.zeros(n_categories, dtype=bool)
    mask[index] = True
    return mask


def _sigma2(rho, n_categories: int, convention) -> np.ndarray:
    """σ² per category, (..., K): one ρ for every cell or one per cell."""
    rho = as_positive(rho, "rho")
    if rho.ndim == 0:
        rho = np.full(n_categories, float(rho))
    elif rho.shape[-1] != n_categories:
        raise ValueError(
            f"rho must be one number or one per category on its last axis (K = {n_categories} "
            f"from the prior), got shape {rho.shape}"
        )
    return noise_variance(rho, convention)


def cell_noise(rho, n_categories: int, convention, mechanism):
    """``(σ² per category | None, mechanisms per category | None)``: ρ or ``mechanism``.

    ``mechanism`` is one mechanism for every cell or a sequence of K; all
    discrete Gaussian give their σ² (the closed-form path).
    """
    if mechanism is None:
        if rho is None:
            raise ValueError("rho: give rho (with convention) or mechanism")
        return _sigma2(rho, n_categories, convention), None
    return resolve_many(rho, convention, mechanism, n_categories, "rho")


def checked_known(known_counts, n_categories: int) -> np.ndarray:
    known = as_counts(known_counts, "known_counts")
    what = f"one count per category (K = {n_categories} from the prior)"
    return last_axis(known, n_categories, "known_counts", what)


def checked_releases(releases, n_released: int, name: str = "releases") -> np.ndarray:
    what = f"one noisy count per released cell ({n_released} released)"
    return last_axis(as_integers(releases, name), n_released, name, what)


def checked_category(true_category, n_categories: int) -> int:
    return as_index(true_category, n_categories, "true_category", "a category index")


def category_names(categories, n_categories: int) -> tuple[str, ...]:
    if categories is None:
        return tuple(str(k) for k in range(n_categories))
    names = tuple(str(name) for name in categories)
    if len(names) != n_categories or len(set(names)) != n_categories:
        raise ValueError(
            f"categories must name the {n_categories} categories, each once, got {categories!r}"
        )
    return names


def keys_in_order(mapping: dict, names: tuple[str, ...]) -> list:
    by_name = {str(key): key for key in mapping}
    return [by_name[name] for name in names]


def released_index(category, n_categories: int, name: str) -> int:
    return as_index(category, n_categories, name, "a category's name or an index")
