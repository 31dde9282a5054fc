"""``adversary reconstruct MODEL_FILE``: how well the adversary rebuilds a block's records.

For the block a model file declares (``CASE = ReconstructionCase(...)``:
its persons, cells, prior, released queries with their noise, the releases
and the true histogram), prints how much the adversary's posterior over the
block's histogram, given every noisy table, tells about the true records, and
the same for the prior alone (the chance baseline). ``--method exact`` sums
over every histogram (small blocks), ``mcmc`` samples them (each person's
cell drawn from its exact full conditional), ``auto`` (default) is exact when
every histogram fits the memory budget. Sampled figures come with their Monte Carlo standard errors.
A chain's memory (its draws of every cell, and the sampler's tables) is sized before it runs and
refused beyond --memory-budget; its progress goes to stderr (--no-progress: none).
With --budget FILE|PRESET each count gets the block-level ρ of its query (named by
its label, e.g. race[3]) in that allocation, given the case's stated releases; with
--mechanism SPEC every count gets that noise instead (e.g. discrete_laplace:scale=2).

``--json`` prints one object with keys:

``case``, ``n``, ``cells``
    the case's name, its number of persons and of cells;
``p_true_histogram``
    the posterior probability of the true histogram;
``expected_overlap``, ``overlap_share``
    the expected number of true records in a reconstruction drawn from the
    posterior, and that over ``n``;
``map_histogram``, ``map_exact``, ``map_modes``
    the most probable histogram (for MCMC, the most frequent draw), the
    probability that it is the truth, and how many histograms tie for most
    probable: under ``--tie-rule split`` (default) a tie among k counts 1/k
    if the truth is among them and ``map_histogram`` is null; ``smallest`` /
    ``largest`` take the first / last in the cells' order (most persons in
    the first cell first);
``match_rate``
    records "at least j persons in cell k" ranked by posterior probability:
    the share of the top r that are true, for r = 1 … n (records tied at the
    edge of the top r count by the tie rule);
``tie_rule``
    how ties counted;
``method``, ``standard_errors``
    ``exact`` or ``mcmc``, and the Monte Carlo standard errors of the sampled
    ``p_true_histogram``, ``expected_overlap`` and ``overlap_share`` (empty when
    exact; null where every draw gave the same value);
``baseline``
    the same keys for the prior alone (computed exactly).
"""

from __future__ import annotations

import json

from ..measures.tie_rules import TIE_RULES
from ..model_files import ModelFileError, is_reconstruction_case, load_module
from .common import (
    add_budget_arguments,
    add_mechanism_argument,
    budgeted,
    check_sampling_options,
    command_parser,
    mechanism_option,
)

#: ``adversary risk``'s release sets and seed for a reconstruction case, unless given.
HOLDER_REPLICATIONS, HOLDER_SEED = 20, 2020


def register(subparsers) -> None:
    parser = command_parser(
        subparsers,
        "reconstruct",
        "rebuild a block's records from its noisy tables, against the prior alone",
        __doc__,
        run,
    )
    parser.add_argument("model", metavar="MODEL_FILE", help="model file or shipped case name")
    parser.add_argument(
        "--method", choices=("auto", "exact", "mcmc"), default="auto", help="default: auto"
    )
    parser.add_argument("--draws", type=int, default=2000, help="MCMC draws per chain (2000)")
    parser.add_argument("--chains", type=int, default=2, help="MCMC chains (2)")
    parser.add_argument("--seed", type=int, default=2020, help="MCMC random seed (2020)")
    parser.add_argument(
        "--tie-rule",
        choices=TIE_RULES,
        default=None,
        help="how tied most probable histograms and records count (default: the case's, split)",
    )
    parser.add_argument("--no-progress", action="store_true", help="no progress bar on stderr")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    add_mechanism_argument(parser)
    add_budget_arguments(parser)


def reconstruction_case(model):
    """The ``CASE`` of a model file if it is a
    :class:`~adversary.scenarios.reconstruction.ReconstructionCase`, else ``None``."""
    case = getattr(load_module(model), "CASE", None)
    return case if is_reconstruction_case(case) else None


def run(args) -> int:
    from ..scenarios.reconstruction import reconstruct

    case = reconstruction_case(args.model)
    if case is None:
        found = type(getattr(load_module(args.model), "CASE", None)).__name__
        raise ModelFileError(
            f"model {str(args.model)!r}: CASE must be a ReconstructionCase, got {found}"
        )
    check_sampling_options(args)
    case = budgeted(mechanism_option(case, args), args)
    if args.tie_rule is not None:
        case = case.replace(tie_rule=args.tie_rule)
    sample = {"draws": args.draws, "chains": args.chains, "random_seed": args.seed}
    sample["progressbar"] = not args.no_progress
    result = {"case": case.name, **reconstruct(case, args.method, **sample)}
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    print(_report(result, args.draws))
    return 0


def _report(result: dict, draws: int) -> str:
    """The measures beside the baseline, one line each (``draws`` per chain, if sampled)."""
    errors, baseline = result["standard_errors"], result["baseline"]
    no_error = " (one draw per chain: no error)" if draws == 1 else " (all draws alike)"

    def value(key, digits=4):
        text = f"{result[key]:.{digits}f}"
        if key not in errors:
            return text
        return text + (no_error if errors[key] is None else f" ± {errors[key]:.{digits}f}")

    n = result["n"]
    lines = [
        f"{result['case']}: {n} persons, {result['cells']} cells ({result['method']})",
        f"{'':<34}{'posterior':>22}{'prior alone':>14}",
        f"{'P[true histogram]':<34}{value('p_true_histogram'):>22}"
        f"{baseline['p_true_histogram']:>14.4f}",
        f"{'expected true records':<34}{value('expected_overlap', 3):>22}"
        f"{baseline['expected_overlap']:>14.3f}",
        f"{'share of the block':<34}{value('overlap_share'):>22}{baseline['overlap_share']:>14.4f}",
        f"{'P[most probable histogram is true]':<34}{_credit(result):>22}{_credit(baseline):>14}",
        f"{f'top-{n} ranked records true':<34}{result['match_rate'][-1]:>22.4f}"
        f"{baseline['match_rate'][-1]:>14.4f}",
    ]
    return "\n".join(lines)


def _credit(measures: dict) -> str:
    """``map_exact`` to four places, ``"-"`` when not computed."""
    return "-" if measures["map_exact"] is None else f"{measures['map_exact']:.4f}"


def holder_run(case, args) -> int:
    """``adversary risk`` on a reconstruction case: the data holder's measures."""
    from ..scenarios.reconstruction import enumerable
    from ..scenarios.reconstruction.data_holder import holder_measures

    if args.sweep or args.prior is not None:
        raise ValueError(
            "--sweep and --prior apply to attacks; a reconstruction case takes "
            "--replications, --seed, --tie-rule, --budget and --mechanism"
        )
    if args.budget is not None or args.mechanism is not None:  # releases drawn from the truth
        case = budgeted(mechanism_option(case.replace(releases=None), args), args)
    if args.tie_rule is not None:
        case = case.replace(tie_rule=args.tie_rule)
    method = "exact" if enumerable(case) else "mcmc"
    replications = HOLDER_REPLICATIONS if args.replications is None else args.replications
    seed = HOLDER_SEED if args.seed is None else args.seed
    measured = holder_measures(case, replications, method, releases="auto", seed=seed)
    result = {"case": case.name, **measured}
    result["n"], result["cells"] = case.n, case.n_cells
    if args.json:
        print(json.dumps(result, indent=2))
        return 0
    baseline = result["baseline"]
    grid = result["releases"] == "grid"
    how = (
        f"summed over all {result['grid_size']:,} release sets within the noise's cut-offs "
        f"(omitted mass <= {result['omitted_mass']:.1e})"
        if grid
        else f"{replications} release sets from the truth ({method})"
    )
    lines = [
        f"{case.name}: {case.n} persons, {case.n_cells} cells; the data holder's view, {how}",
        f"{'':<34}{'mean ± bound' if grid else 'mean ± s.e.':>22}{'prior alone':>14}",
    ]
    for key, label in _HOLDER_LINES:
        cell = result[key]
        error = f"{cell['bound']:.1e}" if grid else f"{cell['standard_error']:.4f}"
        base = "-" if baseline[key] is None else f"{baseline[key]:.4f}"
        lines.append(f"{label:<34}{cell['mean']:>13.4f} ± {error:<7}{base:>14}")
    print("\n".join(lines))
    return 0


_HOLDER_LINES = (
    ("p_true_histogram", "P[true histogram]"),
    ("expected_overlap", "expected true records"),
    ("overlap_share", "share of the block"),
    ("map_exact", "P[most probable histogram is true]"),
)
