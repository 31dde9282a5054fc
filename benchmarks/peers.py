"""The package's samplers against its peers: ESS per second, warm and cold, on six models.

Models: the three Gibbs benchmarks' (``gibbs_block_group``: Granville, two
latents; ``gibbs_block_records``: 12 persons × 8 cells; ``gibbs_block_tables``:
50 persons × 56 cells, ten tables — their own model definitions), and from
``_peer_models``: the coal-mining switchpoint with two missing years, PyMC's
test-suite ``simple_2model`` (a Normal beside a Bernoulli) and a mixture
assignment. Samplers (``_peer_samplers``):

- ``ours`` — :func:`adversary.inference.sample` (its steps for the discrete
  latents, NUTS for the continuous ones);
- ``pymc`` — :func:`pymc.sample` with its defaults;
- ``numpyro_gibbs``, ``numpyro_mixed``, ``numpyro_enum`` — NumPyro's
  ``DiscreteHMCGibbs`` (modified), ``MixedHMC`` and NUTS with the discrete
  sites enumerated, where the model allows;
- ``marginal`` — pymc-extras' ``marginalize`` + NUTS + ``recover``;
- ``numpy`` — on ``gibbs_block_tables`` only, the numpy loop of that
  benchmark: the reference (no exact answer there).

Every sampler runs the same chains, tuning and draws, chains interleaved, one
core (``_gibbs.compare_samplers``). ``warm ESS/s`` is ESS over the sampling
loops; ``cold ESS/s`` is ESS over everything the sampler spent: its first
short chain (compilation: on the warm ``build/pytensor`` cache; with ``--cold``
timed in a fresh process with an empty cache of its own, so that no sampler
reuses what another compiled; NumPyro's JIT), set-up and sampling.
``best`` is each row's warm ESS/s over the best sampler's. Each estimate is
compared with the exact answer (``z`` in Monte Carlo standard errors).

The peers are optional: ``pip install -e .[peers]`` (NumPyro, JAX, funsor) and
``pip install --no-deps pymc-extras`` (its releases pin ``pymc<6.4``), best in a
separate venv. A sampler whose packages are missing is skipped with a note.

Run ``python benchmarks/peers.py [--quick] [--models a,b] [--samplers a,b] [--json] [--cold]``.
"""

from __future__ import annotations

import argparse
import json
import logging
import subprocess
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))  # the shared modules, when imported
from _compiledir import choose_compiledir

choose_compiledir()  # before PyTensor is imported

import _gibbs as harness  # noqa: E402
import _peer_models as models  # noqa: E402
import _peer_numpyro as numpyro_models  # noqa: E402
import _peer_samplers as peers  # noqa: E402
import gibbs_block_group  # noqa: E402
import gibbs_block_records  # noqa: E402
import gibbs_block_tables  # noqa: E402

from adversary.model_files import load_case  # noqa: E402

SAMPLERS = ("ours", "pymc", "numpyro_gibbs", "numpyro_mixed", "numpyro_enum", "marginal")
WARMUP = {"tune": 0, "draws": 5}
NEEDS = {
    "numpyro_gibbs": "numpyro",
    "numpyro_mixed": "numpyro",
    "numpyro_enum": "enum",
    "marginal": "marginal",
}


@dataclass
class Peer:
    """One model: its subject, PyMC chain, estimands, run lengths and what each peer can do.

    ``unable`` maps a sampler to why it cannot run this model; ``numpyro`` is
    ``spec_of(subject)`` (a :class:`_peer_samplers.NumpyroSpec`);
    ``marginal`` is ``(build, names)`` for pymc-extras.
    """

    name: str
    subject: object
    chain: Callable  # (sample, subject, tune, draws, seed) -> (values, sampling_s, setup_s)
    estimands: list
    runs: dict
    numpyro: Callable | None = None
    marginal: tuple | None = None
    unable: dict = field(default_factory=dict)
    reference: Callable | None = None  # a numpy chain when there is no exact answer
    values: Callable | None = None  # a PyMC posterior's estimands (for pymc-extras' rows)


def _estimand(key, label, exact) -> harness.Estimand:
    return harness.Estimand(key, label, *exact[key])


QUICK = {"chains": 2, "tune": 200, "draws": 500}


def _pymc_peer(name, build, values_of, estimands, draws, numpyro, marginal) -> Peer:
    """A model from PyMC's tests and examples: no case, a PyMC chain of ``build()``; the
    full run is 4 chains of ``draws`` after 1000 tuning sweeps."""
    return Peer(
        name,
        None,
        _generic_chain(build, values_of),
        estimands,
        {"full": {"chains": 4, "tune": 1000, "draws": draws}, "quick": QUICK},
        numpyro=numpyro,
        values=values_of,
        marginal=marginal,
    )


def _generic_chain(build: Callable, values_of: Callable) -> Callable:
    def chain(sample, subject, tune, draws, seed):
        posterior, sampling, setup = harness.timed_pymc_chain(sample, build(), tune, draws, seed)
        return values_of(posterior), sampling, setup

    return chain


def _s2_values(post):
    return {"y": post["y"].values.astype(float), "x": post["x"].values}


def _switch_values(post):
    return {
        "s": post["switchpoint"].values,
        "early": post["early_rate"].values,
        "missing": post["disasters_unobserved"].values[:, 0],
    }


def _mixture_values(post):
    return {"z0": post["z"].values[:, 0].astype(float), "mu1": post["mu1"].values}


INFINITE = "needs enumerable supports; {} has none"


def peer_models(seed: int) -> dict[str, Peer]:
    """The six models (subjects built once), keyed by name."""
    s2, sw, mix = models.simple_2model_exact(), models.switchpoint_exact(), models.mixture_exact()
    case = load_case("granville_county")
    records = gibbs_block_records.Block.drawn(12 + seed)
    tables = gibbs_block_tables.Block.drawn(5 + seed)
    short = {"chains": 4, "tune": 500, "draws": 2000}
    return {
        "simple_2model": _pymc_peer(
            "simple_2model",
            models.simple_2model,
            _s2_values,
            [_estimand("y", "P[y=1]", s2), _estimand("x", "E[x]", s2)],
            5000,
            numpyro_models.simple_2model_spec,
            marginal=(lambda: models.simple_2model(initval=None), ["y"]),
        ),
        "switchpoint": _pymc_peer(
            "switchpoint",
            models.switchpoint_model,
            _switch_values,
            [
                _estimand("s", "E[s]", sw),
                _estimand("early", "E[early]", sw),
                _estimand("missing", "E[D1890]", sw),
            ],
            2000,
            numpyro_models.switchpoint_spec,
            marginal=(models.switchpoint_model, ["switchpoint"]),
        ),
        "mixture": _pymc_peer(
            "mixture",
            models.mixture_model,
            _mixture_values,
            [_estimand("z0", "P[z0=1]", mix), _estimand("mu1", "E[mu1]", mix)],
            2000,
            numpyro_models.mixture_spec,
            marginal=(models.mixture_model, ["z"]),
        ),
        "gibbs_block_group": Peer(
            "gibbs_block_group",
            case,
            gibbs_block_group._pymc_chain,
            gibbs_block_group.estimands(gibbs_block_group.exact_reference(case)),
            {"full": gibbs_block_group.QUICK, "quick": QUICK},
            unable={
                "numpyro_gibbs": INFINITE.format("X2 (improper uniform on X1, X1+1, …)"),
                "numpyro_mixed": INFINITE.format("X2 (improper uniform on X1, X1+1, …)"),
                "numpyro_enum": "no continuous latent to run NUTS on; X2 unbounded",
                "marginal": "X2 is unbounded; X1 (BernoulliCount) is not a marginalizable kind",
            },
        ),
        "gibbs_block_records": Peer(
            "gibbs_block_records",
            records,
            gibbs_block_records._pymc_chain,
            gibbs_block_records.estimands(gibbs_block_records.exact_reference(records)),
            {"full": short, "quick": QUICK},
            numpyro=lambda block: numpyro_models.records_spec(
                block,
                gibbs_block_records.PERSONS,
                gibbs_block_records.CELLS,
                gibbs_block_records._sigma2(),
                gibbs_block_records._values,
            ),
            unable={
                "numpyro_enum": "no continuous latent to run NUTS on (8^12 joint states)",
                "marginal": "the 12 persons share the counts: joint enumeration of 8^12 states",
            },
        ),
        "gibbs_block_tables": Peer(
            "gibbs_block_tables",
            tables,
            gibbs_block_tables._pymc_chain,
            gibbs_block_tables.ESTIMANDS,
            {
                "full": {"chains": 4, "tune": 200, "draws": 1000},
                "quick": {"chains": 2, "tune": 50, "draws": 200},
            },
            numpyro=lambda block: numpyro_models.tables_spec(block, gibbs_block_tables),
            unable={
                "numpyro_enum": "no continuous latent to run NUTS on (56^50 joint states)",
                "marginal": "the 50 persons share the tables: joint enumeration of 56^50 states",
            },
            reference=gibbs_block_tables.numpy_chain,
        ),
    }


def runners(peer: Peer, samplers) -> tuple[dict, dict]:
    """``(runners, notes)``: a chain runner per sampler that can run, a note per one that cannot."""
    out, notes = {}, {}
    for name in samplers:
        if name in peer.unable:
            notes[name] = peer.unable[name]
            continue
        lacking = peers.missing(NEEDS[name]) if name in NEEDS else []
        if lacking:
            notes[name] = f"skipped: {', '.join(lacking)} not installed (pip install -e .[peers])"
        elif name in ("ours", "pymc"):
            out[name] = harness.pymc_runners(peer.chain)[name]
        elif name == "marginal":
            build, names = peer.marginal
            out[name] = peers.marginal_chain(build, names, peer.values)
        else:
            out[name] = peers.numpyro_chain(name, peer.numpyro, peer.name)
    if peer.reference is not None:
        out["numpy"] = peer.reference
    return out, notes


def run_model(
    peer: Peer, config: dict, seed: int, samplers=SAMPLERS, warmup=True, cold=False
) -> dict:
    """Every available sampler on ``peer``, interleaved; rows with warm/cold ESS/s and ``best``.

    ``cold``: each sampler's warm-up chain is timed in a fresh process with an empty compile
    cache of its own (:func:`fresh_warmup`)."""
    chains, notes = runners(peer, samplers)
    steps = {name: [] for name in chains}
    fresh = (lambda sampler: fresh_warmup(peer.name, sampler, seed)["warmup_s"]) if cold else None
    result = harness.compare_samplers(
        peer.subject, chains, steps, peer.estimands, config, seed, WARMUP if warmup else None, fresh
    )
    for estimand in peer.estimands:
        key = estimand.key
        best = max(r[f"{key}_ess_per_s"] for r in result["results"] if r["sampler"] != "numpy")
        for row in result["results"]:
            spent = row["warmup_s"] + row["setup_s"] + row["sampling_s"]
            row[f"{key}_cold_ess_per_s"] = row[f"{key}_ess"] / spent
            row[f"{key}_best"] = row[f"{key}_ess_per_s"] / best
    return {"model": peer.name, **result, "notes": notes}


def run_benchmark(
    config_name: str, seed: int = 0, names=None, samplers=SAMPLERS, warmup=True, cold=False
):
    """Each chosen model at its ``config_name`` (``full``/``quick`` or a config dict)."""
    chosen = peer_models(seed)
    results = []
    for name in names or chosen:
        peer = chosen[name]
        config = peer.runs[config_name] if isinstance(config_name, str) else config_name
        results.append(run_model(peer, config, seed, samplers, warmup, cold))
    return {"seed": seed, "models": results}


def fresh_warmup(model: str, sampler: str, seed: int = 0) -> dict:
    """``{"warmup_s": …, "base_compiledir": …}``: seconds of ``sampler``'s warm-up chain on
    ``model`` in a new process with an empty compile cache of its own (``--cold``; the folder
    is removed when the process ends), imports and all else before the chain excluded."""
    command = [sys.executable, __file__, "--warmup-of", model, sampler, "--seed", str(seed)]
    done = subprocess.run([*command, "--cold"], capture_output=True, text=True, check=False)
    if done.returncode != 0:
        raise RuntimeError(f"{' '.join(command)} failed:\n{done.stderr[-2000:]}")
    return json.loads(done.stdout.splitlines()[-1])


def _warmup_of(model: str, sampler: str, seed: int) -> float:
    """The warm-up chain of ``sampler`` on ``model``, timed in this process."""
    peer = peer_models(seed)[model]
    chain = runners(peer, [sampler])[0][sampler]
    start = time.perf_counter()
    chain(peer.subject, WARMUP["tune"], WARMUP["draws"], seed)
    return time.perf_counter() - start


def format_table(result: dict) -> str:
    """One table per model: warm and cold ESS/s, share of the best, z against the exact."""
    lines = []
    for model in result["models"]:
        cfg, rows = model["config"], model["results"]
        keys = [k[: -len("_ess")] for k in rows[0] if k.endswith("_ess")]
        lines.append(
            f"{model['model']}: {cfg['chains']} chains × {cfg['draws']} draws after "
            f"{cfg['tune']}, load {model['environment']['load_average_1min']:.1f}"
        )
        head = f"  {'sampler':<14}" + "".join(
            f"{k + ' warm':>13}{'cold':>9}{'best':>6}{'z':>6}" for k in keys
        )
        lines.append(head)
        for r in rows:
            line = f"  {r['sampler']:<14}"
            for k in keys:
                line += f"{r[k + '_ess_per_s']:>13.0f}{r[k + '_cold_ess_per_s']:>9.0f}"
                line += f"{r[k + '_best']:>6.2f}{r[k + '_z']:>+6.1f}"
            lines.append(line)
        lines += [f"  {name}: {note}" for name, note in model["notes"].items()]
        lines.append("")
    lines.append(
        "ESS/s: ArviZ's ESS of the mean over the sampling loops (warm) or over warm-up, "
        "set-up and sampling (cold); best: warm ESS/s over the best sampler's; z: bias / MCSE."
    )
    return "\n".join(lines)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--quick", action="store_true", help="short runs")
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--models", default=None, help="comma-separated model names")
    parser.add_argument("--samplers", default=",".join(SAMPLERS))
    parser.add_argument(
        "--cold",
        action="store_true",
        help="compile into an empty cache; each sampler's warm-up in a fresh process of its own",
    )
    parser.add_argument("--warmup-of", nargs=2, metavar=("MODEL", "SAMPLER"), help="internal")
    args = parser.parse_args(argv)
    if args.warmup_of:  # a child of fresh_warmup: one warm-up chain, its seconds as JSON
        logging.getLogger("pymc").setLevel(logging.ERROR)
        warnings.filterwarnings("ignore")
        import pytensor

        seconds = _warmup_of(*args.warmup_of, args.seed)
        folder = str(pytensor.config.base_compiledir)
        print(json.dumps({"warmup_s": seconds, "base_compiledir": folder}))
        return 0
    names = args.models.split(",") if args.models else None
    known = peer_models(args.seed)
    for name in names or []:
        if name not in known:
            parser.error(f"--models: unknown model {name!r}; have {', '.join(known)}")
    samplers = args.samplers.split(",")
    for name in samplers:
        if name not in SAMPLERS:
            parser.error(f"--samplers: unknown sampler {name!r}; have {', '.join(SAMPLERS)}")
    logging.getLogger("pymc").setLevel(logging.ERROR)
    warnings.filterwarnings("ignore")
    config = "quick" if args.quick else "full"
    result = run_benchmark(config, args.seed, names, samplers, cold=args.cold)
    print(json.dumps(result, indent=2, default=float) if args.json else format_table(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
