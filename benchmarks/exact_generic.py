"""Exact measures of a model factory against the hand-written scenario of the same attack.

For each attack, the data holder's exact measures (3.3), (3.4), (3.6) at a
scan of ρ values, computed two ways in one interleaved run:

- ``generic`` — the attack as a PyMC model factory (``adversary.attack``):
  the factory is called at every ρ and its model summed exactly over the
  release grid (:func:`~adversary.measures.exact.exact_measures`; the
  model's structure compiled once, :mod:`adversary.measures.structure`);
- ``hand`` — the shipped scenario's case (closed forms and noise sums).

Attacks: the issue-26 three-category attack (the target's cell among three,
each cell's count released, DAS convention; the factory written by a user,
the hand-written case an :class:`UnknownAttributeCase`), the single block
(Dare County), the unknown attribute (``unknown_ethnicity``) and Granville
County's block group — for the last three the factory is the scenario's own
``model`` at the varied ρ.

Reported per attack: CPU seconds per evaluation (one ρ, one prior; the
first, compiling evaluation excluded and shown as ``first s``), their ratio
(target ≤ 2), and the largest difference of the marginal risk against the
two error bounds. Then ``choose-rho`` with default settings on the
three-category attack, both ways (target < 30 s for the factory).

Run ``python benchmarks/exact_generic.py [--quick] [--json]``.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared modules, when imported
from _compiledir import choose_compiledir

choose_compiledir()  # before PyTensor is imported

import numpy as np  # noqa: E402
import pymc as pm  # noqa: E402
import pytensor.tensor as pt  # noqa: E402
from _gibbs import environment  # noqa: E402

import adversary  # noqa: E402
from adversary.analyses.choose_rho import choose_rho, with_rho  # noqa: E402
from adversary.distributions import (  # noqa: E402
    BernoulliCount,
    DiscreteGaussian,
    FinitePmf,
    ImproperUniform,
)
from adversary.model_files import load_case  # noqa: E402
from adversary.scenarios.unknown_attribute import UnknownAttributeCase  # noqa: E402
from adversary.time_budget import time_budget  # noqa: E402

THREE_PRIORS = {"skewed": (0.5, 0.3, 0.2), "even": (1 / 3, 1 / 3, 1 / 3)}


def three_cells(prior=THREE_PRIORS["skewed"], rho=0.0992, releases=(6, 2, 1), known=(5, 2, 0)):
    """The issue's attack as a user writes it: cell C among three, each count released."""
    return _cell_attack(prior, rho, releases, known, "das")


def _cell_attack(prior, rho, releases, known, convention):
    """The target's cell C among ``len(known)``; each cell's count released with noise."""
    known = np.asarray(known, dtype=np.int64)
    with pm.Model() as model:
        cell = FinitePmf("C", support=list(range(len(known))), probs=prior)
        counts = pt.as_tensor(known) + pt.cast(pt.eq(pt.arange(len(known)), cell), "int64")
        DiscreteGaussian("releases", mu=counts, rho=rho, convention=convention, observed=releases)
    return model


def single_block(prior=0.5, rho=0.0992, release=1, known=0):
    """Dare County's single block as a user writes it: X1 ~ BernoulliCount, x1* ~ DG(X1)."""
    with pm.Model() as model:
        x1 = BernoulliCount("X1", known=known, p=prior)
        DiscreteGaussian("x1_release", mu=x1, rho=rho, convention="paper", observed=release)
    return model


def unknown_ethnicity(prior=(0.5, 0.5), rho=0.0992, releases=(1, 0), known=(0, 0)):
    """The unknown-ethnicity attack as a user writes it: C among two categories, both released."""
    return _cell_attack(prior, rho, releases, known, "paper")


def block_group(prior=0.5, rho1=0.0992, rho2=0.2465, d=27, releases=(2, 1, -1), known=0):
    """Granville County's block group as a user writes it: X1, X2 ≥ X1 and three releases,
    the group's sum noise by (3.7), σ² = d/(2ρ1)."""
    with pm.Model() as model:
        x1 = BernoulliCount("X1", known=known, p=prior)
        x2 = ImproperUniform("X2", lower=x1)
        DiscreteGaussian("x1_release", mu=x1, rho=rho1, convention="paper", observed=releases[0])
        DiscreteGaussian("x2_release", mu=x2, rho=rho2, convention="paper", observed=releases[1])
        DiscreteGaussian("y1_release", mu=x2 - x1, sigma2=d / (2 * rho1), observed=releases[2])
    return model


THREE_CASE = UnknownAttributeCase(
    name="three categories",
    categories=("a", "b", "c"),
    known_counts=(5, 2, 0),
    priors=THREE_PRIORS,
    true_category="a",
    rho=0.0992,
    convention="das",
    observed_releases=(6, 2, 1),
)


def attacks():
    """``{name: (hand-written case, the user's attack, the ρ field of both, prior labels)}``.

    The user's attacks are plain PyMC factories of the same attacks as the
    shipped cases, their arguments the cases' (checked against them by the
    marginal risk, ``|Δ risk|``).
    """
    three = adversary.attack(three_cells, priors=THREE_PRIORS, truth={"C": 0})
    out = {"three categories": (THREE_CASE, three, "rho", list(THREE_PRIORS))}
    dare, ethnicity, granville = (
        load_case(k) for k in ("dare_county", "unknown_ethnicity", "granville_county")
    )
    setting = dict(granville.parameters())
    for name, case, factory, field, arguments in (
        ("single block", dare, single_block, "rho", {"release": dare.observed_release}),
        ("unknown attribute", ethnicity, unknown_ethnicity, "rho", {}),
        ("Granville block group", granville, block_group, "rho1", {"d": setting["d"]}),
    ):
        labels = list(case.priors)[:2]
        rhos = {k: v for k, v in dict(case.parameters()).items() if k in ("rho", "rho1", "rho2")}
        user = adversary.attack(
            factory,
            priors={k: _as_argument(case.priors[k]) for k in labels},
            truth=case.true_latents,
            arguments={**rhos, **arguments},
        )
        out[name] = (case, user, field, labels)
    return out


def _as_argument(prior):
    """A case's prior as the factory takes it: a number, or a tuple of category probabilities."""
    return prior if isinstance(prior, float) else tuple(prior)


def _cpu(function, *args, **kwargs):
    """``(CPU seconds, result)`` of one call."""
    began = time.process_time()
    result = function(*args, **kwargs)
    return time.process_time() - began, result


def _measures(case, rho: float, field: str, label: str):
    return with_rho(case, rho, field).marginal_measures(label)


def compare(name, hand, generic, field, labels, rhos):
    """Interleaved: each ρ and prior, hand then generic; CPU seconds and the largest gap.

    The first evaluation of the factory under each prior (compiling its
    structure) and the second (checking its model with shared arguments,
    :mod:`adversary.scenarios.parametric`; a prior given as a sequence is an
    argument of its own, so each prior has its model) are timed apart, as
    ``first_s``.
    """
    first = 0.0
    for label in labels:
        for rho in (rhos[0], rhos[0] * 1.01):
            first += _cpu(_measures, generic, rho, field, label)[0]
    times = {"hand": 0.0, "generic": 0.0}
    gap = slack = 0.0
    count = 0
    for rho in rhos[1:]:
        for label in labels:
            seconds, h = _cpu(_measures, hand, rho, field, label)
            times["hand"] += seconds
            seconds, g = _cpu(_measures, generic, rho, field, label)
            times["generic"] += seconds
            count += 1
            difference = abs(g.marginal_risk - h.marginal_risk)
            allowed = g.risk_error_bound + h.risk_error_bound + 1e-12
            gap, slack = max(gap, difference), max(slack, difference / allowed)
    hand_s, generic_s = times["hand"] / count, times["generic"] / count
    return {
        "attack": name,
        "evaluations": count,
        "first_s": first,
        "generic_s": generic_s,
        "hand_s": hand_s,
        "ratio": generic_s / hand_s,
        "largest_risk_difference": gap,
        "difference_over_bounds": slack,
    }


def choose_rho_times(quick: bool):
    """choose-rho (max risk 1.5, default settings) on the three-category attack, both ways."""
    three = adversary.attack(three_cells, priors=THREE_PRIORS, truth={"C": 0})
    settings = {"points_per_decade": 5, "refine": 2} if quick else {}
    out = {}
    with time_budget("2h"):  # the hand-written case projects its scan from its slowest ρ
        for name, case in (("generic", three), ("hand", THREE_CASE)):
            seconds, result = _cpu(choose_rho, case, 1.5, **settings)
            out[name] = {"seconds": seconds, "rho": result.rho, "evaluations": result.evaluations}
    return out


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="4 values of rho, a coarse scan")
    parser.add_argument("--json", action="store_true", help="print one JSON object")
    args = parser.parse_args(argv)
    rhos = list(np.geomspace(0.05, 2.0, 4 if args.quick else 9))
    rows = [compare(name, *attack, rhos) for name, attack in attacks().items()]
    scan = choose_rho_times(args.quick)
    result = {
        "config": {"rhos": rhos, "quick": args.quick},
        "results": rows,
        "choose_rho": scan,
        "environment": environment(),
    }
    if args.json:
        json.dump(result, sys.stdout, indent=2)
        sys.stdout.write("\n")
        return 0
    head = f"{'attack':<24}{'evals':>6}{'first s':>9}{'generic s':>11}{'hand s':>9}{'ratio':>7}"
    print(head + f"{'|Δ risk|':>11}{'/bounds':>9}")
    print("-" * (len(head) + 20))
    for r in rows:
        print(
            f"{r['attack']:<24}{r['evaluations']:>6}{r['first_s']:>9.2f}{r['generic_s']:>11.4f}"
            f"{r['hand_s']:>9.4f}{r['ratio']:>7.1f}{r['largest_risk_difference']:>11.2g}"
            f"{r['difference_over_bounds']:>9.2g}"
        )
    print()
    print("choose-rho, three categories, --max-risk 1.5" + (" (quick scan)" if args.quick else ""))
    for name, r in scan.items():
        print(
            f"  {name:<8} {r['seconds']:7.1f} s CPU  rho = {r['rho']:.6g}  ({r['evaluations']} rho)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
