"""The block-group attack's keyword arguments, checked once: the setting every function takes.

:func:`attack_setting` checks the prior p of ``X1`` (2.1), the known count m,
the prior of ``X2 | X1`` (:mod:`.prior`, default the paper's improper uniform
(S3.3)) and builds the noise laws (:func:`~.noise_laws.noise_model`).
"""

from __future__ import annotations

from dataclasses import dataclass

from ..._validation import as_counts, as_integers, as_probability
from ...measures.releases import DEFAULT_TAIL_MASS
from .noise_laws import BlockGroupNoise, noise_model, resolved_sum_noise
from .prior import BlockGroupPrior, improper_uniform

__all__ = ["AttackSetting", "attack_setting"]


@dataclass(frozen=True)
class AttackSetting:
    """The block-group attack's checked keyword arguments (:func:`attack_setting`)."""

    prior: float
    known: int
    x2_prior: BlockGroupPrior
    sum_noise: str
    tail_mass: float
    noise: BlockGroupNoise


def attack_setting(
    *,
    prior,
    rho1=None,
    rho2=None,
    d,
    x2_prior: BlockGroupPrior | None = None,
    known_count=0,
    convention="paper",
    sum_noise=None,
    tail_mass=DEFAULT_TAIL_MASS,
    mechanism=None,
) -> AttackSetting:
    """The keyword arguments every block-group function takes, checked, with the noise laws.

    ``prior`` is p of (2.1) for ``X1``; ``rho1``, ``rho2``, ``d``,
    ``convention``, ``sum_noise``, ``tail_mass`` and ``mechanism`` as in
    :func:`noise_model`; ``x2_prior`` the prior of ``X2`` (default the paper's
    improper uniform, (S3.3)); ``known_count`` is m.
    """
    sum_noise = resolved_sum_noise(sum_noise, mechanism)
    return AttackSetting(
        prior=float(as_probability(prior, "prior")),
        known=int(as_counts(known_count, "known_count")),
        x2_prior=_validated_x2_prior(x2_prior),
        sum_noise=sum_noise,
        tail_mass=float(tail_mass),
        noise=noise_model(rho1, rho2, d, convention, sum_noise, tail_mass, mechanism=mechanism),
    )


def _validated_releases(x1_release, x2_release, y1_release) -> tuple[int, int, int]:
    named = (("x1_release", x1_release), ("x2_release", x2_release), ("y1_release", y1_release))
    return tuple(int(as_integers(value, name)) for name, value in named)


def _validated_x2_prior(x2_prior) -> BlockGroupPrior:
    x2_prior = improper_uniform() if x2_prior is None else x2_prior
    if not isinstance(x2_prior, BlockGroupPrior):
        raise TypeError(f"x2_prior must be a BlockGroupPrior, got {x2_prior!r}")
    return x2_prior
