"""Choosing a budget: the largest ρ that keeps a risk measure below a threshold for every prior.

The data holder's inverse question (issue 6, point 4): given a case (any
:class:`~adversary.measures.protocol.Attack` whose ρ is a field), a set of the
adversary's priors, a measure — the marginal risk (3.4) or the probability
of a correct decision (3.6) — and a threshold, find the largest ρ of one
release (one field, the others held) such that the measure stays at or below
the threshold **for every prior and every ρ' in (0, ρ]**.

Neither measure need be monotone in ρ: the correct-decision probability jumps
up each time the Bayes decision's threshold on the noise passes an integer
and falls between jumps (Kazan & Reiter's Figure 3; for the single block it is
``P[Z ≥ ⌈σ² |logit p| - 1/2⌉]``, a saw-tooth). So :func:`choose_rho` does not
bisect on the measure; it scans.

**Search** (all points on the lattice ``ρ_j = rho_min · (1 + tolerance)^j``, so
the answer and the point just above it are lattice neighbours):

1. *Coarse scan* upward from ``rho_min`` with about ``points_per_decade``
   points per decade, stopping at the first ρ where some prior's measure
   exceeds the threshold (or at ``rho_max``).
2. *Refinement* of the last ``refine_decades`` decades below that point with
   ``refine`` times as many points, stopping at the first violation; for the
   correct-decision probability every refined interval over which the measure
   (the largest over the priors) rises is bisected toward the rise down to
   one lattice step, so a jump is located to within the tolerance and the
   value just to its right is checked (the peak of a saw-tooth tooth). The
   bisection stops early where the rise is shared out between the two halves
   (each takes at least a quarter of it): a smooth rise, not a jump.
3. *Bisection* between the last point that satisfies the threshold and the
   first that does not, down to adjacent lattice points ``ρ`` and
   ``ρ (1 + tolerance)``.

The answer ``ρ`` satisfies the threshold at every point evaluated in
``[rho_min, ρ]`` and ``ρ (1 + tolerance)`` violates it. Between evaluated
points nothing is proven: an excursion above the threshold narrower than the
refined spacing (``10^{1/(points_per_decade · refine)}``, 1.45 % by default) or
lying more than ``refine_decades`` below the first coarse violation and
narrower than the coarse spacing (12 %) can be missed, as can anything below
``rho_min`` (where both measures tend to their no-release values).

**Conservative comparisons.** A measure satisfies the threshold when its value
*plus its stated error bound* (from :class:`~adversary.measures.marginal.MarginalMeasures`:
``error_bound`` for the decision probability, ``error_bound / prior_of_truth`` —
or ``details["risk_error_bound"]`` — for the marginal risk) is at most the
threshold; so the reported ρ is safe against the numerical error of the exact
sums as well.

**Thresholds.** The marginal risk of a truth with prior ``π`` lies in
``[1, 1/π]`` (the expected posterior of the truth under releases from it is at
least its prior, by Cauchy–Schwarz, and at most 1), and is above 1 for every
ρ > 0: a risk threshold must be greater than 1, and below ``1/π`` for at least
one selected prior (else it can never be exceeded). A correct-decision
threshold must lie strictly between 0 and 1.

The result reports the ε of (ε, δ)-DP that the chosen ρ implies
(:func:`adversary.accounting.epsilon_from_zcdp`) — for that one release, not a
whole budget.

**Cases with a noise mechanism.** A case whose noise is given as
``mechanism=`` (:class:`~adversary.noise.mechanisms.NoiseMechanism`) can be
searched only where the mechanism is parameterised by its zCDP ρ: the
discrete Gaussian (``σ² = Δ²/(2ρ)``, its sensitivity Δ kept) and the discrete
Laplace (scale ``Δ/√(2ρ)``: pure ``√(2ρ)``-DP, which implies ρ-zCDP — not
tight; :attr:`RhoChoice.pure_epsilon` reports the pure ε). The field names
are those of the case's ρ (``"rho"``, ``"rho1"``, ``"rhos[2]"``, …) and
address the mechanism in that place. Bounded noise (truncated geometric,
cell key, a finite table) is not zCDP (:meth:`~adversary.noise.mechanisms.NoiseMechanism.zcdp_rho`
is ``None``) and is refused: sweep its own parameters instead.
"""

from __future__ import annotations

import dataclasses
import itertools
import math
import re
import time
from dataclasses import dataclass, field

import numpy as np

from .._validation import as_positive
from ..accounting import as_conversion, epsilon_from_zcdp
from ..budget import DEFAULT_DELTA
from ..noise.mechanisms import DiscreteGaussianNoise, DiscreteLaplaceNoise, NoiseMechanism
from ..time_budget import check_time

__all__ = ["MEASURES", "RhoChoice", "choose_rho", "measure_at", "rho_fields", "with_rho"]

#: Measures a threshold can be put on: the marginal risk (3.4), the correct-decision
#: probability (3.6).
MEASURES = ("marginal_risk", "correct_decision_probability")

# A rise of which each half of an interval takes at least this share is smooth, not a jump.
_SMOOTH_SHARE = 0.25

_FIELD = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[(\d+)\])?$")


# --- the field that holds ρ ----------------------------------------------------------------


def _mechanism_slots(case) -> dict[str, NoiseMechanism]:
    """``{field name: mechanism}`` for a case whose noise is ``mechanism=``.

    The names are those of the case's ρ fields in the same place: one mechanism
    stands for the first ρ field (``"rho"``); a sequence pairs with the ρ
    fields one to one (``"rho1"``, ``"rho2"``) or, for one ρ field, its
    elements (``"rhos[0]"``, …).
    """
    parameters = _parameters(case)
    mechanism = parameters.get("mechanism")
    if mechanism is None:
        return {}
    names = [name for name in parameters if name.startswith("rho")]
    if not names:
        return {}
    if isinstance(mechanism, NoiseMechanism):
        return {names[0]: mechanism}
    mechanisms = tuple(mechanism)
    if len(names) == len(mechanisms) and len(names) > 1:
        return dict(zip(names, mechanisms, strict=True))
    return {f"{names[0]}[{i}]": m for i, m in enumerate(mechanisms)}


def _at_rho(mechanism: NoiseMechanism, rho: float, field: str) -> NoiseMechanism:
    """The mechanism of the same family and sensitivity whose zCDP ρ is ``rho``."""
    if isinstance(mechanism, DiscreteGaussianNoise):
        return DiscreteGaussianNoise(mechanism.sensitivity**2 / (2.0 * rho), mechanism.sensitivity)
    if isinstance(mechanism, DiscreteLaplaceNoise):
        return DiscreteLaplaceNoise(
            mechanism.sensitivity / math.sqrt(2.0 * rho), mechanism.sensitivity
        )
    raise ValueError(_refusal(mechanism, field))


def _refusal(mechanism: NoiseMechanism, field: str) -> str:
    why = (
        "is not zCDP (bounded noise gives no zCDP or pure-DP guarantee)"
        if mechanism.zcdp_rho() is None
        else "is not parameterised by a zCDP rho here"
    )
    return (
        f"field: {field!r} is the noise {mechanism.label}, which {why}; choose_rho varies a "
        "zCDP rho (discrete Gaussian or discrete Laplace noise) — sweep this mechanism's own "
        "parameters instead"
    )


def _searchable(mechanism: NoiseMechanism) -> bool:
    return isinstance(mechanism, DiscreteGaussianNoise | DiscreteLaplaceNoise)


def rho_fields(case) -> list[str]:
    """The parameters of ``case`` that can be varied: ρ-named numbers (``rho``, ``rho1``, …)
    and the elements ``name[i]`` of ρ-named tuples of numbers (``rhos[0]``, …). For a case
    with ``mechanism=``, the places whose mechanism is parameterised by ρ (module docstring)."""
    slots = _mechanism_slots(case)
    if slots:
        return [name for name, mechanism in slots.items() if _searchable(mechanism)]
    out = []
    for name, value in _parameters(case).items():
        if not name.startswith("rho"):
            continue
        if _is_number(value):
            out.append(name)
        elif isinstance(value, tuple) and all(_is_number(v) for v in value):
            out.extend(f"{name}[{i}]" for i in range(len(value)))
    return out


def _parameters(case) -> dict:
    """The case's parameters (the attack protocol's ``parameters()``; none for other objects)."""
    parameters = getattr(case, "parameters", None)
    return parameters() if callable(parameters) else {}


def _is_number(value) -> bool:
    return isinstance(value, int | float | np.integer | np.floating) and not isinstance(value, bool)


def _parse_field(case, name: str) -> tuple[str, int | None]:
    if not isinstance(name, str):
        raise ValueError(f"field must be a field name such as 'rho', got {name!r}")
    slots = _mechanism_slots(case)
    if name in slots and not _searchable(slots[name]):
        raise ValueError(_refusal(slots[name], name))
    known = rho_fields(case)
    match = _FIELD.match(name)
    if match is None or name not in known:
        listed = ", ".join(known) if known else "none"
        raise ValueError(
            f"field must name a ρ of the case ({getattr(case, 'name', type(case).__name__)}: "
            f"{listed}), got {name!r}"
        )
    index = match.group(2)
    return match.group(1), None if index is None else int(index)


def with_rho(case, rho: float, field: str = "rho"):
    """``case`` with ``field`` (``"rho"``, ``"rho1"``, ``"rhos[2]"``, …) set to ``rho``.

    For a case with ``mechanism=`` the mechanism in that place is replaced by
    the one of its family with zCDP parameter ``rho`` (module docstring).
    """
    name, index = _parse_field(case, field)
    rho = float(as_positive(rho, "rho"))
    slots = _mechanism_slots(case)
    if slots:
        new = _at_rho(slots[field], rho, field)
        mechanism = _parameters(case)["mechanism"]
        if isinstance(mechanism, NoiseMechanism):
            return case.replace(mechanism=new)
        mechanisms = list(mechanism)
        mechanisms[list(slots).index(field)] = new
        return case.replace(mechanism=tuple(mechanisms))
    if index is None:
        return case.replace(**{name: rho})
    values = list(_parameters(case)[name])
    values[index] = rho
    return case.replace(**{name: tuple(values)})


# --- the measure -----------------------------------------------------------------------------


def _measure_name(measure: str) -> str:
    if measure not in MEASURES:
        raise ValueError(f"measure must be one of {', '.join(MEASURES)}; got {measure!r}")
    return measure


def _prior_labels(case, priors) -> list[str]:
    labels = list(case.priors)
    if priors is None:
        return labels
    if isinstance(priors, str):
        priors = [priors]
    chosen = list(priors)
    if not chosen:
        raise ValueError("priors must name at least one prior label of the case")
    unknown = [label for label in chosen if label not in case.priors]
    if unknown:
        raise ValueError(f"priors must be labels of the case ({', '.join(labels)}); got {unknown}")
    return list(dict.fromkeys(chosen))


def _value_and_bound(measures, measure: str) -> tuple[float, float, float]:
    """``(value, error bound, prior of truth)`` of one measure from MarginalMeasures."""
    if measure == "marginal_risk":
        return (
            float(measures.marginal_risk),
            measures.risk_error_bound,
            float(measures.prior_of_truth),
        )
    return (
        float(measures.correct_decision_probability),
        float(measures.error_bound),
        float(measures.prior_of_truth),
    )


def measure_at(case, rho: float, measure: str = "marginal_risk", field: str = "rho", priors=None):
    """``{prior label: (value, error bound)}`` of ``measure`` with ``field`` set to ``rho``."""
    measure = _measure_name(measure)
    labels = _prior_labels(case, priors)
    varied = with_rho(case, rho, field)
    return {
        label: _value_and_bound(varied.marginal_measures(label), measure)[:2] for label in labels
    }


# --- the result ------------------------------------------------------------------------------


@dataclass(frozen=True)
class RhoChoice:
    """The largest ρ keeping a measure at or below a threshold for every prior.

    Attributes
    ----------
    rho
        The answer: the measure (plus its error bound) is at most ``threshold``
        for every prior at every point evaluated in ``[rho_min, rho]``.
    rho_above
        ``rho · (1 + tolerance)`` (the next lattice point), where some prior's
        measure exceeds the threshold — unless ``limited_by_rho_max``.
    binding_prior
        The prior whose measure exceeds the threshold the most at
        ``rho_above`` (``None`` when limited by ``rho_max``).
    measure_at_rho, bound_at_rho, measure_above, bound_above
        Per prior: the measure and its error bound at ``rho`` and at
        ``rho_above``.
    epsilon, delta, conversion
        ε of the (ε, δ)-DP guarantee that ``rho``-zCDP implies at ``delta``,
        by ``conversion`` (:mod:`adversary.accounting`).
    limited_by_rho_max
        True when no ρ up to ``rho_max`` exceeded the threshold: then ``rho`` is
        ``rho_max`` (the search range's end), not a crossing.
    evaluations
        Number of ρ at which every prior's measures were computed.
    mechanism
        For a case with ``mechanism=``: the label of the chosen mechanism in the
        searched place (``None`` otherwise).
    pure_epsilon
        ε of the pure ε-DP that the chosen mechanism gives (the discrete
        Laplace's ``√(2ρ)``), where it gives one; else ``None``.
    """

    case_name: str
    field: str
    measure: str
    threshold: float
    priors: tuple[str, ...]
    rho: float
    rho_above: float
    binding_prior: str | None
    measure_at_rho: dict[str, float]
    bound_at_rho: dict[str, float]
    measure_above: dict[str, float]
    bound_above: dict[str, float]
    epsilon: float
    delta: float
    conversion: str
    tolerance: float
    rho_min: float
    rho_max: float
    points_per_decade: int
    refine: int
    refine_decades: float
    limited_by_rho_max: bool
    evaluations: int
    prior_of_truth: dict[str, float] = field(default_factory=dict)
    mechanism: str | None = None
    pure_epsilon: float | None = None

    def as_dict(self) -> dict:
        """Every attribute, JSON-ready."""
        return dataclasses.asdict(self) | {"priors": list(self.priors)}


# --- the search ------------------------------------------------------------------------------


class _Evaluator:
    """Measures on the lattice ``ρ_j = rho_min (1 + tol)^j``, cached by j."""

    def __init__(self, case, measure, field, labels, threshold, rho_min, log_step):
        self.case, self.measure, self.field, self.labels = case, measure, field, labels
        self.threshold, self.rho_min, self.log_step = threshold, rho_min, log_step
        self.cache: dict[int, dict[str, tuple[float, float, float]]] = {}

    def rho(self, j: int) -> float:
        return self.rho_min * math.exp(j * self.log_step)

    def values(self, j: int) -> dict[str, tuple[float, float, float]]:
        if j not in self.cache:
            varied = with_rho(self.case, self.rho(j), self.field)
            try:
                self.cache[j] = {
                    label: _value_and_bound(varied.marginal_measures(label), self.measure)
                    for label in self.labels
                }
            except ValueError as error:  # e.g. a grid over the memory budget
                raise type(error)(
                    f"rho_min: the search reached {self.field} = {self.rho(j):.6g}, where {error}"
                ) from error
        return self.cache[j]

    def upper(self, j: int) -> float:
        """Largest ``value + bound`` over the priors."""
        return max(value + bound for value, bound, _ in self.values(j).values())

    def bad(self, j: int) -> bool:
        return self.upper(j) > self.threshold


def _check_threshold(evaluator: _Evaluator, measure: str, threshold: float) -> None:
    if measure == "correct_decision_probability":
        if not 0.0 < threshold < 1.0:
            raise ValueError(
                "threshold: a correct-decision probability threshold must lie strictly between "
                f"0 and 1, got {threshold!r}"
            )
        return
    if not threshold > 1.0:
        raise ValueError(
            "threshold: a marginal risk threshold must be greater than 1 (the marginal risk "
            f"exceeds 1 for every rho > 0), got {threshold!r}"
        )
    ceilings = {label: 1.0 / pot for label, (_, _, pot) in evaluator.values(0).items()}
    if all(threshold >= ceiling for ceiling in ceilings.values()):
        listed = ", ".join(f"{label}: {ceiling:.6g}" for label, ceiling in ceilings.items())
        raise ValueError(
            f"threshold: a marginal risk of {threshold!r} can never be exceeded — the risk is "
            f"at most 1/(prior of the truth) for every prior ({listed})"
        )


def _refine_rise(evaluator: _Evaluator, lo: int, hi: int) -> int | None:
    """Bisect toward the rise on ``[lo, hi]`` (measure larger at hi): first bad index, or None."""
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if evaluator.bad(mid):
            return mid
        left = evaluator.upper(mid) - evaluator.upper(lo)
        right = evaluator.upper(hi) - evaluator.upper(mid)
        if min(left, right) >= _SMOOTH_SHARE * (left + right):
            return None  # a rise shared out between the halves: no jump to locate
        # Follow the half over which the measure rises more (a jump lies there).
        if left >= right:
            hi = mid
        else:
            lo = mid
    return None


def choose_rho(
    case,
    threshold: float,
    measure: str = "marginal_risk",
    *,
    field: str = "rho",
    priors=None,
    rho_min: float = 1e-4,
    rho_max: float = 1e2,
    points_per_decade: int = 20,
    refine: int = 8,
    refine_decades: float = 1.0,
    tolerance: float = 1e-3,
    delta: float = DEFAULT_DELTA,
    conversion: str = "cks",
) -> RhoChoice:
    """The largest ρ (of ``field``) keeping ``measure`` ≤ ``threshold`` for every prior.

    Parameters
    ----------
    case : Attack
        A frozen dataclass case (e.g.
        :class:`~adversary.scenarios.single_block.SingleBlockCase`); its other
        fields are held.
    threshold : float
        Largest acceptable marginal risk (> 1) or correct-decision probability
        (in (0, 1)).
    measure : {"marginal_risk", "correct_decision_probability"}
    field : str
        The ρ to vary: ``"rho"``, ``"rho1"``, ``"rho2"``, or an element of a
        tuple of ρ such as ``"rhos[1]"`` (:func:`rho_fields` lists them).
    priors : str or sequence of str, optional
        The priors that must all stay below the threshold; default all.
    rho_min, rho_max : float
        The searched range.
    points_per_decade, refine, refine_decades, tolerance : see the module docstring.
    delta, conversion :
        For the ε reported with the answer.

    Returns
    -------
    RhoChoice

    Raises
    ------
    ValueError
        For an unknown field, measure or prior, a threshold outside its
        range, a bad search setting, or when the threshold is exceeded
        already at ``rho_min`` (no ρ in the range satisfies it).
    """
    measure = _measure_name(measure)
    labels = _prior_labels(case, priors)
    _parse_field(case, field)
    threshold = float(threshold)
    if not math.isfinite(threshold):
        raise ValueError(f"threshold must be a finite number, got {threshold!r}")
    rho_min = float(as_positive(rho_min, "rho_min"))
    rho_max = float(as_positive(rho_max, "rho_max"))
    tolerance = float(as_positive(tolerance, "tolerance"))
    if not rho_max > rho_min:
        raise ValueError(f"rho_max must exceed rho_min, got {rho_max!r} <= {rho_min!r}")
    if tolerance >= 0.1:
        raise ValueError(f"tolerance must be < 0.1 (a relative step in rho), got {tolerance!r}")
    for name, value in (("points_per_decade", points_per_decade), ("refine", refine)):
        if isinstance(value, bool) or not isinstance(value, int | np.integer) or value < 1:
            raise ValueError(f"{name} must be a positive integer, got {value!r}")
    refine_decades = float(as_positive(refine_decades, "refine_decades"))
    delta = float(delta)
    if not 0.0 < delta < 1.0:
        raise ValueError(f"delta must lie strictly between 0 and 1, got {delta!r}")
    conversion = as_conversion(conversion)

    log_step = math.log1p(tolerance)
    last = math.floor(math.log(rho_max / rho_min) / log_step + 1e-9)
    coarse = max(1, round(math.log(10.0) / points_per_decade / log_step))
    fine = max(1, coarse // int(refine))
    evaluator = _Evaluator(case, measure, field, labels, threshold, rho_min, log_step)
    _check_threshold(evaluator, measure, threshold)
    if evaluator.bad(0):
        worst = max(labels, key=lambda label: sum(evaluator.values(0)[label][:2]))
        value = evaluator.values(0)[worst][0]
        raise ValueError(
            f"threshold: no rho in [{rho_min:g}, {rho_max:g}] keeps the {measure} at or below "
            f"{threshold!r} — at rho_min = {rho_min:g} it is already {value:.6g} under prior "
            f"{worst!r}"
        )
    grid = list(range(0, last + 1, coarse))
    if grid[-1] != last:
        grid.append(last)

    # The evaluations at most (coarse scan, refined scan, bisection of a refined step), each
    # taking as long as the first after rho_min (measured: the one at rho_min may carry
    # one-off costs, such as compiling a user model's functions).
    scans = last // coarse + 2 + math.ceil(refine_decades * math.log(10.0) / log_step / fine) + 1
    scans += math.ceil(math.log2(fine + 1))
    began = time.perf_counter()
    evaluator.values(grid[min(1, len(grid) - 1)])
    check_time(
        (time.perf_counter() - began) * scans,
        f"the scan of up to {scans:,} values of {field} (from points_per_decade, refine and "
        "tolerance)",
    )
    # 1. Coarse scan.
    first_bad = next((j for j in grid[1:] if evaluator.bad(j)), None)
    limited = first_bad is None
    if limited:
        ok, above = last, None
    else:
        # 2. Refinement of the decades below the coarse violation.
        span = max(coarse, round(refine_decades * math.log(10.0) / log_step / coarse) * coarse)
        start = max(0, first_bad - span)
        start = max(j for j in grid if j <= start)  # a coarse point: known to satisfy
        points = [*range(start, first_bad, fine), first_bad]
        bad = first_bad
        for lo, hi in itertools.pairwise(points):
            if evaluator.bad(hi):
                bad = hi
                break
            if measure == "correct_decision_probability" and evaluator.upper(hi) > evaluator.upper(
                lo
            ):
                found = _refine_rise(evaluator, lo, hi)
                if found is not None:
                    bad = found
                    break
        # 3. Bisection between the last satisfying point and the first violation.
        ok = max(j for j in evaluator.cache if j < bad and not evaluator.bad(j))
        while bad - ok > 1:
            mid = (ok + bad) // 2
            if evaluator.bad(mid):
                bad = mid
            else:
                ok = mid
        above = bad

    above_index = ok + 1 if above is None else above
    at, over = evaluator.values(ok), evaluator.values(above_index)
    binding = None
    if not limited:
        binding = max(labels, key=lambda label: sum(over[label][:2]) - threshold)
    rho = evaluator.rho(ok)
    chosen = _mechanism_slots(with_rho(case, rho, field)).get(field)
    return RhoChoice(
        case_name=str(getattr(case, "name", type(case).__name__)),
        field=field,
        measure=measure,
        threshold=threshold,
        priors=tuple(labels),
        rho=rho,
        rho_above=evaluator.rho(above_index),
        binding_prior=binding,
        measure_at_rho={label: at[label][0] for label in labels},
        bound_at_rho={label: at[label][1] for label in labels},
        measure_above={label: over[label][0] for label in labels},
        bound_above={label: over[label][1] for label in labels},
        epsilon=float(epsilon_from_zcdp(rho, delta, conversion)),
        delta=delta,
        conversion=str(conversion),
        tolerance=tolerance,
        rho_min=rho_min,
        rho_max=rho_max,
        points_per_decade=int(points_per_decade),
        refine=int(refine),
        refine_decades=refine_decades,
        limited_by_rho_max=limited,
        evaluations=len(evaluator.cache),
        prior_of_truth={label: at[label][2] for label in labels},
        mechanism=None if chosen is None else chosen.label,
        pure_epsilon=None if chosen is None else chosen.pure_epsilon(),
    )
