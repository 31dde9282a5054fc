"""The adversary's law of targeted record swapping for one block: each household's swap probability.

:class:`TargetedSwapLaw` follows
:class:`adversary.swapping.targeted.TargetedRecordSwapping` (the mechanism)
for one lowest-level area, a *block*, given the whole hypothesised block: a
tuple of households, each a tuple of its members' ``REDUCED`` cell codes.

**Derivation.** Let the block hold ``n`` households.

1. *Risky households.* A household is risky at some level iff it is risky in
   its block (counts only shrink down the hierarchy): iff some member's
   combination of the risk variables is held by fewer than ``k`` persons of
   the block. The mechanism swaps every risky household at its level unless
   no donor is left for it, so ``π_h = 1`` (the mechanism's ``unswappable``
   count, a fraction of a percent on the synthetic state, is the error).
2. *Sampled households.* Let ``r`` be the number of risky households and
   ``x = n · rate / 2`` the block's target. The mechanism rounds ``x`` to
   ``t = floor(x) + B``, ``B ~ Bernoulli(frac(x))``, and samples
   ``max(0, t - r)`` of the ``n - r`` households that are not risky,
   uniformly among those not already taken as donors at a higher level. As
   ``r`` is an integer, ``E[max(0, t - r)] = max(0, x - r)``: each of them is
   sampled with probability ``a = max(0, x - r) / (n - r)`` (exact when no
   donor was taken from the block at a higher level; otherwise the sample is
   drawn from fewer households but they are fewer by the same token, so ``a``
   holds on average).
3. *Donors.* A household that is neither risky nor sampled is taken as a
   donor (by a swap of another area of the same parent, at some level) with
   probability ``d``, which depends on the demand for donors of its profile
   elsewhere and is not a function of the block: the law takes it as a
   parameter (``donor_rate``: one number, or one per household profile
   ``(size, voting-age persons)``), as measured on a run of the mechanism
   (:attr:`~adversary.swapping.targeted.TargetedSwapRun.donor_rate`).

So ``π_h = 1`` for a risky household and ``π_h = a + (1 - a) · d`` for the
others.

**Where it approximates.** The mechanism's swaps are dependent: exactly
``max(0, t - r)`` households are sampled in a block (not independently
each with probability ``a``); donors are drawn without replacement, so a
household's chance to be a donor falls as others of its profile are taken;
a donor taken at a higher level is no longer free to be sampled (step 2
uses the average); and a risky household goes unswapped when no donor of
its profile is left. The adversary's model treats the households' swaps as
independent with these marginal probabilities.

The donor rate is the coarsest step. A block's households serve as donors
only to the *other* blocks of its parent area, so a block that holds a large
share of its tract's seekers has its households taken less often than a
small block's, which the law (seeing one block) cannot tell apart. On a
20 000-person synthetic state (30 runs; per-profile donor rates measured on 5
other runs), households neither risky nor sampled in blocks of 9–20
households were swapped 0.275 of the time against the law's 0.231 (rate 0.1,
``k_anonymity`` 3) and 0.481 against 0.419 (rate 0.3, ``k_anonymity`` 5); in
blocks of more than 20 households, 0.277 against 0.284 and 0.542 against
0.548. The risky and sampled part (steps 1–2) matched within binomial error,
risky households being swapped 99.4–99.9% of the time.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import numpy as np

from ..reconstruction import REDUCED

__all__ = ["TargetedSwapLaw", "risk_combinations"]

_VOTING_AGE = np.unravel_index(np.arange(REDUCED.n_cells), REDUCED.sizes)[
    REDUCED.names.index("voting_age")
]


def risk_combinations(cells, risk_variables: tuple[str, ...]) -> np.ndarray:
    """The combination (an integer code) of ``risk_variables`` of each ``REDUCED`` cell code."""
    values = np.unravel_index(np.asarray(cells, dtype=np.int64), REDUCED.sizes)
    sizes = dict(REDUCED.attributes)
    index = [REDUCED.names.index(v) for v in risk_variables]
    return np.ravel_multi_index(
        tuple(values[i] for i in index), tuple(sizes[v] for v in risk_variables)
    )


@dataclass(frozen=True)
class TargetedSwapLaw:
    """Swap probabilities of a block's households under targeted record swapping.

    ``mechanism``: the :class:`~adversary.swapping.targeted.TargetedRecordSwapping`
    whose rate, ``k_anonymity`` and risk variables the law follows.
    ``donor_rate``: the probability that a household neither risky nor sampled
    is taken as a donor, in [0, 1]: one number, or a mapping from household
    profile ``(size, voting_age)`` to it (profiles not in it: 0).
    """

    mechanism: object
    donor_rate: float | Mapping[tuple[int, int], float] = 0.0
    _rates: dict = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        # Checked by its name, not its class: the mechanism lives in a later layer.
        if getattr(self.mechanism, "name", None) != "trs":
            raise TypeError(
                f"mechanism must be a TargetedRecordSwapping, got {type(self.mechanism).__name__}"
            )
        rates = self.donor_rate if isinstance(self.donor_rate, Mapping) else {None: self.donor_rate}
        for value in rates.values():
            if isinstance(value, bool) or not isinstance(value, int | float | np.number):
                raise TypeError(f"donor_rate must be a number, got {type(value).__name__}")
            if not 0.0 <= float(value) <= 1.0:
                raise ValueError(f"donor_rate must be in [0, 1], got {value}")
        object.__setattr__(self, "_rates", {k: float(v) for k, v in rates.items()})

    @classmethod
    def from_mechanism(
        cls,
        mechanism,
        *,
        donor_rate: float | Mapping[tuple[int, int], float] = 0.0,
    ) -> TargetedSwapLaw:
        """The law of ``mechanism`` with donors taken at ``donor_rate``."""
        return cls(mechanism, donor_rate)

    @property
    def label(self) -> str:
        """The mechanism's label and the donor rate (one number, or "per household profile")."""
        rate = self.donor_rate
        donors = "per household profile" if isinstance(rate, Mapping) else f"{float(rate):g}"
        return f"{self.mechanism.label}; donor rate {donors}"

    def risky(self, block) -> np.ndarray:
        """Whether each household of ``block`` is risky (a member's combination held by < k)."""
        households = _households(block)
        codes = np.concatenate(households)
        combos = risk_combinations(codes, self.mechanism.risk_variables)
        _, inverse, counts = np.unique(combos, return_inverse=True, return_counts=True)
        member = counts[inverse] < self.mechanism.k_anonymity
        ends = np.cumsum([h.size for h in households])
        return np.logical_or.reduceat(member, np.r_[0, ends[:-1]])

    def sampling_probabilities(self, block) -> np.ndarray:
        """Each household's probability to be swapped as risky or sampled (steps 1–2, no donors)."""
        risky = self.risky(block)
        n, r = risky.size, int(risky.sum())
        target = n * self.mechanism.rate / 2
        sampled = max(0.0, target - r) / (n - r) if n > r else 0.0
        return np.where(risky, 1.0, sampled)

    def swap_probabilities(self, block) -> np.ndarray:
        """``π_h`` of each household of ``block`` (module docstring, steps 1–3)."""
        households = _households(block)
        sampled = self.sampling_probabilities(block)
        donor = np.array([self._donor_rate(h) for h in households])
        return sampled + (1.0 - sampled) * donor

    def _donor_rate(self, household: np.ndarray) -> float:
        if None in self._rates:
            return self._rates[None]
        return self._rates.get((int(household.size), int(_VOTING_AGE[household].sum())), 0.0)


def _households(block) -> list[np.ndarray]:
    """``block`` as arrays of cell codes, checked: one line naming the argument."""
    if isinstance(block, str | bytes) or not hasattr(block, "__len__") or len(block) == 0:
        raise ValueError("block must be a non-empty tuple of households")
    households = []
    for household in block:
        codes = np.asarray(household)
        if codes.ndim != 1 or codes.size == 0 or codes.dtype.kind not in "iu":
            raise ValueError("block: each household must be a non-empty tuple of cell codes")
        if codes.min() < 0 or codes.max() >= REDUCED.n_cells:
            raise ValueError(f"block: cell codes must lie in 0..{REDUCED.n_cells - 1}")
        households.append(codes.astype(np.int64))
    return households
