"""The single-block posterior under swapping: its time against the DP single block's.

Usage (from the repository root)::

    .venv/bin/python benchmarks/swapping_posterior.py [--repeat N] [--json]

Times, in one run, the exact work of the single-block attack under household
swapping (:mod:`adversary.scenarios.swapping.single_block`: the posterior
(3.1) at the observed release and the measures (3.3), (3.4), (3.6) over every
release, each a convolution over the block's households) for

- ``shipped``: the shipped case ``models/swapping_block.py`` (Dare County ED
  28-21, 45 persons in 12 households, rate 0.04);
- ``block_250``: a 250-person block of 80 households (sizes 1-5 and 6 in
  turn; the target alone), same law and composition;

against the baseline ``dp``: the same two computations for the DP single
block ``models/dare_county.py`` (closed forms, discrete Gaussian), measured
in the same run. Each is the median of ``--repeat`` calls (default 20).
Reported: seconds per call (posterior and measures together) and the ratio
to the baseline; the target is under 1 s per call. It also prints the
shipped block's posterior at release 1, marginal risk and P[correct] under
the prior 1/10 at rates 0, 0.04 and 0.1, beside the DP case's.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time

from adversary.model_files import load_case
from adversary.scenarios import single_block
from adversary.scenarios.swapping import HouseholdSwapLaw


def _timed(work, repeat: int) -> float:
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def large_block(case, persons: int = 250):
    """The shipped case with a block of ``persons``: the target alone, then households of
    1, 2, …, 6 persons in turn (voting age but every third member a child), cut to fit."""
    adult, child = case.alternative_cell, 0
    households, left, size = [(case.target_cell,)], persons - 1, 1
    while left:
        n = min(size, left)
        households.append(tuple(child if i % 3 == 2 else adult for i in range(n)))
        left, size = left - n, size % 6 + 1
    return case.replace(households=tuple(households), target_member=(0, 0))


def run(repeat: int = 20) -> dict:
    shipped = load_case("swapping_block")
    dp = load_case("dare_county")
    cases = {"dp": dp, "shipped": shipped, "block_250": large_block(shipped)}
    seconds = {}
    for name, case in cases.items():
        if name == "dp":

            def work(case=case):
                single_block.posterior(case.observed_release, 0.1, case.rho)
                case.marginal_measures("1/10")
        else:

            def work(case=case):
                case.posterior("1/10")
                case.marginal_measures("1/10")

        work()  # imports and first-call set-up
        seconds[name] = _timed(work, repeat)
    rates = {}
    for rate in (0.0, 0.04, 0.1):
        case = shipped.replace(law=HouseholdSwapLaw(rate))
        measures = case.marginal_measures("1/10")
        rates[str(rate)] = {
            "posterior_at_1": case.posterior("1/10", 1),
            "marginal_risk": measures.marginal_risk,
            "correct_decision_probability": measures.correct_decision_probability,
        }
    measures = dp.marginal_measures("1/10")
    rates["dp"] = {
        "posterior_at_1": float(single_block.posterior(1, 0.1, dp.rho)),
        "marginal_risk": measures.marginal_risk,
        "correct_decision_probability": measures.correct_decision_probability,
    }
    return {
        "repeat": repeat,
        "persons": {name: sum(map(len, c.households)) for name, c in cases.items() if name != "dp"},
        "seconds": seconds,
        "ratio_to_dp": {name: s / seconds["dp"] for name, s in seconds.items()},
        "prior_1_10": rates,
    }


def _text(result: dict) -> str:
    lines = [f"median of {result['repeat']} calls (posterior + measures, prior 1/10)", ""]
    lines.append(f"{'case':<10} {'seconds':>10} {'ratio':>8}")
    for name, s in result["seconds"].items():
        lines.append(f"{name:<10} {s:>10.5f} {result['ratio_to_dp'][name]:>8.1f}")
    lines += ["", f"{'rate':<6} {'P[c | x*=1]':>12} {'marg. risk':>11} {'P[correct]':>11}"]
    for rate, row in result["prior_1_10"].items():
        lines.append(
            f"{rate:<6} {row['posterior_at_1']:>12.6f} {row['marginal_risk']:>11.6f}"
            f" {row['correct_decision_probability']:>11.6f}"
        )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=20, help="calls timed per case")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    args = parser.parse_args(argv)
    if args.repeat < 1:
        parser.error(f"--repeat must be at least 1, got {args.repeat}")
    result = run(args.repeat)
    print(json.dumps(result, indent=2) if args.json else _text(result))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
