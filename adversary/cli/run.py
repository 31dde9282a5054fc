"""``adversary run MODEL_FILE``: the adversary's posterior of every latent count.

Builds the attack model a model file declares (a ``CASE`` from ``models/`` or
a ``model()`` factory returning a PyMC model, with ``PRIORS`` to choose from
by ``--prior``) and prints each latent's
marginal posterior: exactly, by enumeration (``--method exact``, the default),
or by the package's exact Gibbs sampler (``--method mcmc``) with Monte Carlo
standard errors from ArviZ's effective sample size. A model with continuous
latents needs ``--method mcmc``: it prints their mean and sd beside the counts' pmf.

``--json`` prints one object with keys: ``model`` (name), ``method``,
``prior`` (the label of the prior used: ``--prior``'s, else the first; null for a
factory without priors), ``mechanism`` (the spec of the case's noise mechanism,
e.g. ``"discrete_laplace:scale=2.0"``, a list of them where the releases' differ, or
null when the noise is the case's ρ), ``marginals`` (``{latent: {value: probability}}``,
values as strings), and for ``exact`` ``omitted_mass`` (bound on the mass
outside the table), for ``mcmc`` ``mcse`` (``{latent: {value: mcse}}``),
``ess`` (``{latent: bulk ESS}``), ``draws`` and ``chains``, and where the model has
continuous latents (sampled beside the counts: PyMC's NUTS or Metropolis),
``continuous`` (``{latent: {"mean", "sd", "mcse_mean", "ess"}}``, an element of a
vector as ``name[i]``). An MCSE or ESS that
cannot be estimated (from one draw per chain, or a latent whose draws are all
alike) is null, and the text says why. The sampler's progress bars go to stderr.
"""

from __future__ import annotations

import json
import math

from .common import (
    add_attack_arguments,
    attack_from,
    check_sampling_options,
    command_parser,
    mechanism_text,
    one_line,
)

# Values with less posterior mass than this are left out of printed tables.
SHOWN_MASS = 1e-5


def register(subparsers) -> None:
    parser = command_parser(
        subparsers,
        "run",
        "the adversary's posterior of each latent count in a model file",
        __doc__,
        run,
    )
    add_attack_arguments(parser)
    parser.add_argument("--method", choices=("exact", "mcmc"), default="exact")
    parser.add_argument("--prior", default=None, help="prior label (default: the first)")
    parser.add_argument("--draws", type=int, default=5000, help="MCMC draws per chain")
    parser.add_argument("--chains", type=int, default=2, help="MCMC chains")
    parser.add_argument(
        "--cores",
        type=int,
        default=None,
        help="processes running the chains (default: PyMC's, one a chain up to 4; "
        "1 runs them here, one after another, which a short run finishes sooner)",
    )
    parser.add_argument(
        "--tune", type=int, default=None, help="MCMC tuning steps per chain (default: PyMC's)"
    )
    parser.add_argument("--seed", type=int, default=2023, help="MCMC random seed")
    parser.add_argument("--json", action="store_true", help="print the numbers as JSON")


def _exact(model) -> dict:
    from pymc.exceptions import SamplingError

    from ..inference import enumerate_posterior
    from ..inference._conditional import is_discrete

    continuous = [rv.name for rv in model.free_RVs if not is_discrete(rv)]
    if continuous:
        raise ValueError(
            f"--method exact: {continuous[0]!r} is continuous; exact enumeration needs discrete "
            "latents (use --method mcmc)"
        )
    try:
        result = enumerate_posterior(model)
    except SamplingError as error:  # no latent value makes the observations possible
        raise ValueError(f"--method exact: {one_line(error)}") from error
    marginals = {name: result.marginal(name) for name in result.joint.dims}
    return {"marginals": marginals, "omitted_mass": float(result.omitted_mass)}


def _mcmc(model, args) -> dict:
    import arviz as az
    import numpy as np
    from pymc.exceptions import SamplingError
    from pymc.sampling.parallel import ParallelSamplingError
    from pytensor.gradient import DisconnectedInputError

    from ..inference import event_indicator, marginal_pmf, sample

    try:
        tree = sample(
            model,
            draws=args.draws,
            tune=args.tune,
            chains=args.chains,
            cores=args.cores,
            random_seed=args.seed,
            progressbar=not args.json,
        )
    except DisconnectedInputError as error:
        raise ValueError(
            "--method mcmc: the model's log-probability does not depend on one of its "
            "continuous latents (it has no gradient to sample it by)"
        ) from error
    except (RuntimeError, SamplingError, ParallelSamplingError) as error:
        raise ValueError(
            f"--method mcmc: sampling failed ({type(error).__name__}: {one_line(error)})"
        ) from error
    latents = list(tree["posterior"].data_vars)
    marginals, mcse, ess, continuous = {}, {}, {}, {}
    for name in latents:
        draws = tree["posterior"][name].values
        if not np.all(np.isfinite(draws)):
            raise ValueError(
                f"--method mcmc: draws of {name!r} are not finite; is the posterior proper?"
            )
        if draws.dtype.kind == "f":
            continuous |= _continuous_summaries(name, draws)
            continue
        pmf = marginal_pmf(tree, name)
        marginals[name] = pmf
        indicators = {int(v): event_indicator(tree, {name: int(v)}) for v in pmf[name].values}
        mcse[name] = {v: _estimate(az.mcse(ind.values)) for v, ind in indicators.items()}
        ess[name] = _estimate(az.ess(tree["posterior"][name].values))
    return {
        "marginals": marginals,
        "mcse": mcse,
        "ess": ess,
        "draws": args.draws,
        "chains": args.chains,
        **({"continuous": continuous} if continuous else {}),
    }


def _continuous_summaries(name: str, draws) -> dict[str, dict]:
    """Mean, sd, MCSE of the mean and bulk ESS of a continuous latent's draws (chain, draw,
    ...), per element of a vector (``name[i]``, ``name[i,j]``)."""
    import arviz as az
    import numpy as np

    summaries = {}
    for index in np.ndindex(draws.shape[2:]):
        values = draws[(slice(None), slice(None), *index)]
        label = name + (f"[{','.join(map(str, index))}]" if index else "")
        summaries[label] = {
            "mean": float(values.mean()),
            "sd": float(values.std(ddof=1)) if values.size > 1 else None,
            "mcse_mean": _estimate(az.mcse(values)),
            "ess": _estimate(az.ess(values)),
        }
    return summaries


def _estimate(value) -> float | None:
    """An ArviZ estimate as a float, or None where it is undefined (NaN)."""
    value = float(value)
    return value if math.isfinite(value) else None


def _not_estimated(args) -> str:
    """Why an MCSE or ESS is missing: one draw per chain, or draws all alike."""
    if args.draws == 1:
        return "ESS and MCSE cannot be estimated from one draw per chain"
    return "ESS and MCSE undefined: all draws alike"


def _jsonable(name, args, result, mechanism) -> dict:
    out = {"model": name, "method": args.method, "prior": args.prior, "mechanism": mechanism}
    out["marginals"] = {
        latent: {str(int(v)): float(p) for v, p in zip(pmf[latent].values, pmf.values, strict=True)}
        for latent, pmf in result["marginals"].items()
    }
    for key in ("omitted_mass", "ess", "continuous", "draws", "chains"):
        if key in result:
            out[key] = result[key]
    if "mcse" in result:
        out["mcse"] = {
            latent: {str(v): e for v, e in errors.items()}
            for latent, errors in result["mcse"].items()
        }
    return out


def _text(name, args, result, mechanism) -> str:
    how = (
        "exact enumeration"
        if args.method == "exact"
        else f"MCMC, {args.chains} x {args.draws} draws"
    )
    prior = f", prior {args.prior}" if args.prior else ""
    lines = [f"{name}: posterior by {how}{prior}"]
    if mechanism is not None:
        lines.append(f"noise: {mechanism}")
    for latent, pmf in result["marginals"].items():
        lines += ["", f"{latent:>8} {'P':>10}" + (f" {'MCSE':>9}" if "mcse" in result else "")]
        for value, probability in zip(pmf[latent].values, pmf.values, strict=True):
            if probability < SHOWN_MASS:
                continue
            row = f"{int(value):>8} {probability:>10.4g}"
            if "mcse" in result:
                error = result["mcse"][latent][int(value)]
                row += f" {'-' if error is None else f'{error:.4f}':>9}"
            lines.append(row)
        if "ess" in result:
            ess = result["ess"][latent]
            lines.append(f"{'ESS':>8} {'-' if ess is None else f'{ess:.0f}':>10}")
            missing = ess is None or None in result["mcse"][latent].values()
            lines += [f"{'':>8} ({_not_estimated(args)})"] if missing else []
    if "continuous" in result:
        lines += ["", f"{'continuous':>10} {'mean':>10} {'sd':>10} {'MCSE':>9} {'ESS':>8}"]
        for latent, summary in result["continuous"].items():
            shown = [summary[k] for k in ("mean", "sd", "mcse_mean", "ess")]
            cells = ["-" if v is None else f"{v:.4g}" for v in shown]
            lines.append(f"{latent:>10} {cells[0]:>10} {cells[1]:>10} {cells[2]:>9} {cells[3]:>8}")
    if "omitted_mass" in result:
        omitted = result["omitted_mass"]
        outside = (
            "no mass outside the table"
            if omitted == 0
            else f"mass outside the table <= {omitted:.2g}"
        )
        lines += ["", f"{outside}; values below {SHOWN_MASS:g} not shown"]
    return "\n".join(lines)


def run(args) -> int:
    from ..measures.protocol import prior_label

    check_sampling_options(args)  # before the model file is loaded, whatever the method
    case = attack_from(args)
    label = prior_label(case.priors, args.prior)
    if case.priors[label] is not None:  # the prior used, shown (the first unless --prior)
        args.prior = label
    name, model = case.name, case.model(label)
    result = _exact(model) if args.method == "exact" else _mcmc(model, args)
    mechanism = mechanism_text(case)
    if args.json:
        print(json.dumps(_jsonable(name, args, result, mechanism), indent=2))
    else:
        print(_text(name, args, result, mechanism))
    return 0
