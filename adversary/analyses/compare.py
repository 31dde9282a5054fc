"""One scenario across priors and parameters, as one labelled xarray object.

- :func:`sweep` — the data holder's measures (Kazan & Reiter (3.3), (3.4),
  (3.6)) of a case for every prior and every combination of case parameters
  (``{"rho": [...]}``, ``{"rho2": [...], "truth": [...]}``): an
  :class:`xarray.Dataset` with a ``prior`` dimension and one dimension per
  swept parameter. Works for every :class:`~adversary.measures.protocol.Attack`.
- :func:`compare_priors` — the adversary's posterior of every latent given the
  case's observed release, under each prior (or each alternative case): exact
  by enumeration (a Dataset) or sampled (:class:`SampledComparison`: ArviZ
  DataTrees plus a Dataset of marginal pmfs with Monte Carlo standard errors).
- :func:`to_table` — either result as a :class:`pandas.DataFrame`.

Long sweeps show a progress bar (rich) once they have run for about a second.
"""

from __future__ import annotations

import contextlib
import itertools
import numbers
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd
import xarray as xr
from xarray import DataTree

from .._output import progress_task
from .._validation import as_probability
from ..measures.protocol import assignments, true_target_value

__all__ = [
    "MEASURES",
    "PROGRESS_AFTER_SECONDS",
    "SampledComparison",
    "compare_priors",
    "sweep",
    "to_table",
]

#: Data variables of a :func:`sweep` Dataset, in order (fields of MarginalMeasures).
MEASURES = (
    "marginal_posterior",
    "marginal_risk",
    "correct_decision_probability",
    "error_bound",
    "risk_error_bound",
    "omitted_mass",
    "prior_of_truth",
)

#: A sweep shows its progress bar once it has run this long, or as soon as the
#: evaluations so far project a total of more than 1.25 times this.
PROGRESS_AFTER_SECONDS = 1.0


# ---------------------------------------------------------------------------- helpers


def _check_case(case) -> None:
    """Refuse anything that is not an attack (:mod:`adversary.measures.protocol`)."""
    if isinstance(case, type):
        raise TypeError(f"case must be an attack (an instance), got the class {case.__name__}")
    for attribute in ("priors", "model", "marginal_measures", "parameters", "replace", "target"):
        if not hasattr(case, attribute):
            raise TypeError(
                f"case: {type(case).__name__} has no {attribute!r}: not an attack (a shipped "
                "case, or a model factory wrapped by adversary.attack; see "
                "adversary.measures.protocol)"
            )


def _is_scalar(value) -> bool:
    return isinstance(value, str | bool | numbers.Number | np.generic) and not isinstance(
        value, complex
    )


def _plain(value):
    """A value fit for xarray attrs and netCDF: a number, a string or a list of numbers."""
    if isinstance(value, np.generic):
        return value.item()
    if _is_scalar(value):
        return value
    if isinstance(value, tuple | list) and value and all(_is_scalar(v) for v in value):
        return [v.item() if isinstance(v, np.generic) else v for v in value]
    return str(value)


def _coordinate(values: list) -> np.ndarray:
    """Coordinate values of a swept parameter: themselves if scalars, else their ``str``."""
    if all(_is_scalar(v) for v in values):
        return np.asarray([v.item() if isinstance(v, np.generic) else v for v in values])
    return np.asarray([str(v) for v in values])


def _prior_table(case, priors) -> tuple[object, list[str], np.ndarray]:
    """``(case with those priors, labels, p values)`` from ``priors`` (see :func:`sweep`)."""
    if priors is None:
        labels = list(case.priors)
    elif isinstance(priors, Mapping):
        if not priors:
            raise ValueError("priors: an empty mapping; give at least one {label: p}")
        case = case.replace(
            priors={str(k): _prior_value(v, f"priors[{k!r}]") for k, v in priors.items()}
        )
        labels = list(case.priors)
    elif isinstance(priors, str) or not isinstance(priors, Sequence):
        raise TypeError(
            f"priors must be a mapping {{label: p}} or a sequence of labels, got {priors!r}"
        )
    else:
        labels = [str(label) for label in priors]
        unknown = [label for label in labels if label not in case.priors]
        if unknown or not labels:
            raise ValueError(
                f"priors: {unknown[0] if unknown else 'none'!r} is not a prior label of the case; "
                f"have {', '.join(case.priors)}"
            )
    return case, labels, _p_coordinate([case.priors[label] for label in labels])


def _prior_value(value, name: str):
    """A prior probability ``p`` checked; a prior of another form (a vector) left to the case."""
    if _is_scalar(value):
        return float(as_probability(value, name))
    return value


def _p_coordinate(values: list) -> np.ndarray:
    """The ``p`` coordinate: the prior probabilities, or their text for non-scalar priors.

    A vector's text shows each probability to 6 significant digits:
    ``[0.4, 0.6]``, not ``[0.4, 0.6000000000000001]``.
    """
    if all(_is_scalar(v) and not isinstance(v, str) for v in values):
        return np.asarray(values, dtype=np.float64)
    return np.asarray([_prior_text(v) for v in values])


def _prior_text(value) -> str:
    plain = _plain(value)
    if isinstance(plain, list) and all(isinstance(v, int | float) for v in plain):
        return "[" + ", ".join(f"{v:.6g}" for v in plain) + "]"
    return str(plain)


def _swept(case, over) -> tuple[list[str], list[list]]:
    if over is None:
        return [], []
    if not isinstance(over, Mapping):
        raise TypeError(f"over must be a mapping {{parameter: values}}, got {over!r}")
    parameters = list(case.parameters())
    names, values = [], []
    for name, items in over.items():
        if name not in parameters:
            hint = (
                "use priors= (the prior dimension) instead"
                if name == "priors"
                else f"parameters of {case.name}: {', '.join(parameters)}"
            )
            raise ValueError(f"over: {name!r} cannot be swept; {hint}")
        if isinstance(items, str | bytes) or not hasattr(items, "__iter__"):
            raise TypeError(f"over[{name!r}] must be a sequence of values, got {items!r}")
        items = list(items.tolist() if isinstance(items, np.ndarray) else items)
        if not items:
            raise ValueError(f"over[{name!r}] is empty; give at least one value")
        labels = _coordinate(items)
        if len(set(labels.tolist())) != len(labels):
            raise ValueError(f"over[{name!r}] repeats a value: {items!r}")
        names.append(name)
        values.append(items)
    return names, values


class _LazyProgress:
    """A rich progress bar that appears only once the work has proved slow.

    ``mode``: ``None`` — appear after :data:`PROGRESS_AFTER_SECONDS` (or once
    the projected total exceeds 1.25 times that); ``True`` — from the start;
    ``False`` — never.
    """

    def __init__(self, total: int, description: str, mode: bool | None):
        if mode not in (None, True, False):
            raise TypeError(f"progress must be None, True or False, got {mode!r}")
        self.total, self.description, self.mode = total, description, mode
        self.done, self.bar, self.update = 0, None, None
        self.started = time.perf_counter()
        if mode is True:
            self._start()

    def _start(self) -> None:
        self.bar = contextlib.ExitStack()
        self.update = self.bar.enter_context(
            progress_task(self.description, self.total, "evaluations")
        )
        self.update(self.done)

    def advance(self) -> None:
        self.done += 1
        if self.bar is not None:
            self.update(self.done)
            return
        if self.mode is False or self.done >= self.total:
            return
        elapsed = time.perf_counter() - self.started
        projected = elapsed / self.done * self.total
        if elapsed >= PROGRESS_AFTER_SECONDS or projected >= 1.25 * PROGRESS_AFTER_SECONDS:
            self._start()

    def close(self) -> None:
        if self.bar is not None:
            self.bar.close()

    @property
    def shown(self) -> bool:
        return self.bar is not None


# ---------------------------------------------------------------------------- sweep


def sweep(
    case,
    over: Mapping[str, Sequence] | None = None,
    priors: Mapping[str, float] | Sequence[str] | None = None,
    progress: bool | None = None,
) -> xr.Dataset:
    """The case's marginal measures for every prior and every combination of ``over``.

    Evaluates ``case.marginal_measures(label)`` — the marginal posterior (3.3),
    marginal risk (3.4) and probability of a correct decision (3.6) of the
    case's truth — on ``case.replace(**combination)`` for every combination
    of the values in ``over`` and every prior label.

    Parameters
    ----------
    case : Attack
        Any attack: a shipped case, e.g. ``load_case("dare_county")``, or a
        model factory wrapped by :func:`adversary.attack`.
    over : mapping, optional
        ``{parameter: values}``: parameters to vary (``case.parameters()``),
        e.g. ``{"rho": np.geomspace(1e-3, 1e2, 50)}`` or
        ``{"rho2": [...], "truth": [(1, k, k - 1) for k in range(1, 26)]}``.
        A name that is not a parameter raises :class:`ValueError` naming it.
    priors : mapping or sequence, optional
        Default: the case's priors. A mapping ``{label: p}`` replaces them; a
        sequence of labels selects some of them.
    progress : bool, optional
        ``None`` (default): show a progress bar on stderr once the sweep has
        run for about a second; ``True``: from the start; ``False``: never.

    Returns
    -------
    xarray.Dataset
        Dimensions ``prior`` (coordinate ``p``: the prior probability) and one per
        swept field (coordinate: its values, or their ``str`` when not scalars);
        data variables :data:`MEASURES`. Attributes: ``case`` (name), ``swept``
        (parameter names), ``method`` and ``tie_rule`` (as the measures were computed:
        ``monte-carlo``, say), every fixed parameter, and ``case_<parameter>``: the case's own
        value of each swept parameter and of a parameter named as one of these (a case's
        ``method`` setting, ``auto`` say, is ``case_method``).
    """
    _check_case(case)
    case, labels, ps = _prior_table(case, priors)
    names, values = _swept(case, over)
    shape = (len(labels), *(len(v) for v in values))
    data = {measure: np.full(shape, np.nan) for measure in MEASURES}
    methods, tie_rules = set(), set()
    bar = _LazyProgress(
        int(np.prod(shape)), f"sweep {', '.join(names) or 'priors'}: {case.name}", progress
    )
    try:
        for index in itertools.product(*(range(len(v)) for v in values)):
            combination = {
                n: values[k][i] for k, (n, i) in enumerate(zip(names, index, strict=True))
            }
            try:  # a value the case rejects, or a grid over the memory budget
                varied = case.replace(**combination)
                for row, label in enumerate(labels):
                    measures = varied.marginal_measures(label)
                    for measure in MEASURES:
                        data[measure][(row, *index)] = getattr(measures, measure)
                    methods.add(measures.method)
                    tie_rules.add(measures.tie_rule)
                    bar.advance()
            except (ValueError, TypeError) as error:
                shown = assignments(combination)
                message = str(error)  # named by the case's replace, or named here
                named = message if message.startswith(f"{shown}: ") else f"{shown}: {message}"
                raise type(error)(f"over: {named}") from error
    finally:
        bar.close()

    dims = ("prior", *names)
    coords = {"prior": labels, "p": ("prior", ps)}
    coords.update({n: _coordinate(v) for n, v in zip(names, values, strict=True)})
    attrs = {
        "case": case.name,
        "swept": list(names),
        "method": ", ".join(sorted(methods)),
        "tie_rule": ", ".join(sorted(tie_rules)),
    }
    for name, value in case.parameters().items():  # not over what was swept or computed
        attrs[f"case_{name}" if name in names or name in attrs else name] = _plain(value)
    dataset = xr.Dataset(
        {measure: (dims, data[measure]) for measure in MEASURES}, coords=coords, attrs=attrs
    )
    dataset["marginal_posterior"].attrs["long_name"] = "marginal posterior of the truth (3.3)"
    dataset["marginal_risk"].attrs["long_name"] = "marginal risk (3.4)"
    dataset["correct_decision_probability"].attrs["long_name"] = "P[correct decision] (3.6)"
    dataset["error_bound"].attrs["long_name"] = "bound on the absolute error of (3.3) and (3.6)"
    dataset["risk_error_bound"].attrs["long_name"] = "bound on the absolute error of (3.4)"
    dataset["omitted_mass"].attrs["long_name"] = "release probability left out of the sums"
    dataset["prior_of_truth"].attrs["long_name"] = "prior probability of the truth"
    return dataset


# ---------------------------------------------------------------------------- compare_priors


@dataclass(frozen=True)
class SampledComparison:
    """The sampled posteriors of one scenario under several priors.

    ``trees`` maps each prior label to the DataTree of
    :func:`adversary.inference.sample` — pass it straight to ArviZ
    (``az.plot_forest(comparison.trees, combined=True)``, ``az.summary``);
    ``dataset`` holds, per prior, each latent's marginal pmf
    (``<latent>_posterior``) with its Monte Carlo standard error
    (``<latent>_mcse``), and the posterior of the target with its MCSE and ESS.
    """

    trees: dict[str, DataTree]
    dataset: xr.Dataset


def _is_attack(value) -> bool:
    return not isinstance(value, type) and all(
        hasattr(value, a) for a in ("priors", "model", "marginal_measures")
    )


def _alternatives(case, priors) -> list[tuple[str, object, str]]:
    """``[(label, case, prior label of that case)]`` for :func:`compare_priors`."""
    if priors is None:
        return [(label, case, label) for label in case.priors]
    if not isinstance(priors, Mapping) or not priors:
        raise TypeError(
            f"priors must be a non-empty mapping {{label: p}} or {{label: case}}, got {priors!r}"
        )
    out = []
    for label, value in priors.items():
        label = str(label)
        if isinstance(value, tuple) and len(value) == 2 and _is_attack(value[0]):
            other, prior_label = value
            _check_case(other)
            if prior_label not in other.priors:
                raise ValueError(
                    f"priors[{label!r}]: {prior_label!r} is not a prior of that case; "
                    f"have {', '.join(other.priors)}"
                )
            out.append((label, other, prior_label))
        elif _is_attack(value):
            _check_case(value)
            out.append((label, value, next(iter(value.priors))))
        else:
            p = _prior_value(value, f"priors[{label!r}]")
            out.append((label, case.replace(priors={label: p}), label))
    return out


def _target(case, target) -> dict | None:
    """The event whose posterior :func:`compare_priors` reports (see its ``target``)."""
    if target is None:
        value = true_target_value(case)
        return None if value is None else {case.target: value}
    if isinstance(target, str):
        truth = case.true_latents or {}
        if target not in truth:
            raise ValueError(
                f"target: the case states no true value of {target!r}; pass {{{target!r}: value}}"
            )
        return {target: truth[target]}
    if isinstance(target, Mapping) and target:
        return dict(target)
    raise TypeError(f"target must be a latent name or a mapping {{latent: value}}, got {target!r}")


def _stack(per_prior: dict[str, dict[str, xr.DataArray]], fill=0.0) -> dict[str, xr.DataArray]:
    """Per-prior DataArrays of one name stacked along ``prior`` (outer join of values)."""
    names = list(dict.fromkeys(n for arrays in per_prior.values() for n in arrays))
    stacked = {}
    for name in names:
        present = next(arrays[name] for arrays in per_prior.values() if name in arrays)
        arrays = [
            arrays[name] if name in arrays else xr.full_like(present, fill, dtype=np.float64)
            for arrays in per_prior.values()
        ]
        stacked[name] = xr.concat(arrays, dim="prior", join="outer", fill_value=fill)
        stacked[name] = stacked[name].assign_coords(prior=np.array(list(per_prior), dtype=str))
    return stacked


def _event_text(event: Mapping | None) -> str:
    return "none" if event is None else ", ".join(f"{k} = {v}" for k, v in event.items())


def compare_priors(
    case,
    priors: Mapping | None = None,
    method: str = "exact",
    *,
    target: str | Mapping | None = None,
    **kwargs,
):
    """The adversary's posterior of each latent, under each prior, given the case's release.

    Parameters
    ----------
    case : Attack
        The scenario; its ``model(prior_label)`` is the adversary's PyMC model.
    priors : mapping, optional
        Default: the case's own priors. ``{label: p}`` — the case with each
        prior probability ``p``; or ``{label: case}`` (or ``{label: (case,
        prior_label)}``) — whole alternative cases, e.g. a
        :class:`~adversary.scenarios.block_group.BlockGroupCase` with another
        ``x2_prior`` (under its first prior unless a label is given).
    method : {"exact", "mcmc"}
        ``"exact"``: :func:`adversary.inference.enumerate_posterior`; ``"mcmc"``:
        :func:`adversary.inference.sample` with the exact Gibbs steps.
    target : str or mapping, optional
        The event whose posterior is reported as ``posterior_of_truth``:
        ``{latent: value}``; a latent name (value: the case's truth of it);
        default ``{case.target: its true value}``, left out if the truth is
        unknown.
    **kwargs
        Passed on to ``enumerate_posterior`` (e.g. ``tail_mass``, ``truncation``) or to
        ``sample`` (e.g. ``draws``, ``chains``, ``random_seed``; ``progressbar``
        defaults to False).

    Returns
    -------
    xarray.Dataset or SampledComparison
        Exact: a Dataset with dimension ``prior`` (coordinate ``p``) and one
        dimension per latent (its values); variables ``<latent>_posterior``
        (the pmf, 0 where a value is outside an alternative's table),
        ``posterior_of_truth`` and ``omitted_mass``. MCMC: a
        :class:`SampledComparison` whose ``dataset`` has the same layout plus
        ``<latent>_mcse``, ``posterior_of_truth_mcse`` and ``posterior_of_truth_ess``.
    """
    if method not in ("exact", "mcmc"):
        raise ValueError(f"method must be 'exact' or 'mcmc', got {method!r}")
    # On use: the inference layer imports PyMC, which sweeps of closed forms do not need;
    # importing ArviZ loads its plots too (matplotlib).
    from ..inference import (
        enumerate_posterior,
        event_indicator,
        marginal_pmf,
        posterior_probability,
        sample,
    )

    if method == "mcmc":
        import arviz as az
    _check_case(case)
    alternatives = _alternatives(case, priors)
    pmfs, scalars, trees, latent_dims = {}, {}, {}, []
    ps, targets = [], []
    for label, alternative, prior_label in alternatives:
        ps.append(alternative.priors[prior_label])
        event = _target(alternative, target)
        targets.append(event)
        model = alternative.model(prior_label)
        if method == "exact":
            result = enumerate_posterior(model, **kwargs)
            latents = list(result.joint.dims)
            pmfs[label] = {f"{n}_posterior": result.marginal(n) for n in latents}
            scalars[label] = {"omitted_mass": xr.DataArray(float(result.omitted_mass))}
        else:
            options = {"progressbar": False, **kwargs}
            result = sample(model, **options)
            trees[label] = result
            latents = [n for n in result["posterior"].data_vars if result["posterior"][n].ndim == 2]
            pmfs[label] = {}
            for n in latents:
                pmf = marginal_pmf(result, n)
                mcse = [float(az.mcse(event_indicator(result, {n: int(v)}))) for v in pmf[n].values]
                pmfs[label][f"{n}_posterior"] = pmf
                pmfs[label][f"{n}_mcse"] = xr.DataArray(mcse, dims=[n], coords={n: pmf[n]})
            scalars[label] = {}
        if event is not None and target is None and not set(event) <= set(latents):
            event = targets[-1] = None  # the default target is not a latent of this model
        if event is not None:
            scalars[label]["posterior_of_truth"] = xr.DataArray(
                posterior_probability(result, event)
            )
            if method == "mcmc":
                indicator = event_indicator(result, event)
                scalars[label]["posterior_of_truth_mcse"] = xr.DataArray(float(az.mcse(indicator)))
                scalars[label]["posterior_of_truth_ess"] = xr.DataArray(float(az.ess(indicator)))
        latent_dims += [n for n in latents if n not in latent_dims]

    variables = {**_stack(pmfs, fill=0.0), **_stack(scalars, fill=np.nan)}
    dataset = xr.Dataset(variables).assign_coords(p=("prior", _p_coordinate(ps)))
    for name in dataset.data_vars:
        dataset[name] = dataset[name].rename(None)
    shown = {_event_text(t) for t in targets}
    dataset.attrs = {
        "case": case.name,
        "method": method,
        "latent_dims": latent_dims,
        "target": shown.pop() if len(shown) == 1 else "; ".join(map(_event_text, targets)),
    }
    if method == "exact":
        return dataset
    return SampledComparison(trees=trees, dataset=dataset)


# ---------------------------------------------------------------------------- tables


def _pmf_columns(dataset: xr.Dataset, latent: str, max_values: int) -> dict[str, xr.DataArray]:
    pmf = dataset[f"{latent}_posterior"]
    mcse = dataset.get(f"{latent}_mcse")
    others = [d for d in pmf.dims if d != latent]
    held = (pmf > 0).any(others) if others else pmf > 0
    values = pmf[latent].values[held.values]
    if len(values) <= max_values:
        columns = {}
        for v in values:
            columns[f"P[{latent}={v}]"] = pmf.sel({latent: v}, drop=True)
            if mcse is not None:
                columns[f"mcse P[{latent}={v}]"] = mcse.sel({latent: v}, drop=True)
        return columns
    weights = pmf.fillna(0.0)
    mean = (weights * pmf[latent]).sum(latent)
    sd = np.sqrt((weights * (pmf[latent] - mean) ** 2).sum(latent))
    return {f"E[{latent}]": mean, f"sd[{latent}]": sd}


def to_table(result, max_values: int = 8) -> pd.DataFrame:
    """A :func:`sweep` or :func:`compare_priors` result as a :class:`pandas.DataFrame`.

    A sweep gives one row per (prior, swept values), with ``p`` and the
    :data:`MEASURES` as columns. A comparison gives one row per prior: ``p``,
    ``posterior_of_truth`` (and its MCSE/ESS when sampled), ``omitted_mass``
    (exact), and for each latent the probability of each value it takes
    (``P[X1=1]``, with ``mcse P[X1=1]`` when sampled) — or, for a latent with
    more than ``max_values`` values, its posterior mean and sd.
    """
    if isinstance(result, SampledComparison):
        result = result.dataset
    if not isinstance(result, xr.Dataset):
        raise TypeError(
            f"result must be a Dataset from sweep/compare_priors or a SampledComparison, "
            f"got {type(result).__name__}"
        )
    latents = list(result.attrs.get("latent_dims", []))
    if not latents:
        table = result.to_dataframe()
        front = ["p"] if "p" in table.columns else []
        return table[front + [c for c in table.columns if c not in front]]
    columns = {"p": result["p"]}
    for name, array in result.data_vars.items():
        if not any(d in latents for d in array.dims):
            columns[name] = array
    for latent in latents:
        if f"{latent}_posterior" in result:
            columns.update(_pmf_columns(result, latent, max_values))
    frame = pd.DataFrame(
        {
            name: pd.Series(array.values, index=result["prior"].values)
            for name, array in columns.items()
        }
    )
    frame.index.name = "prior"
    return frame
