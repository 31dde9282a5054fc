"""The risk of a budget allocation under every attack, and the data holder's limits on it.

Issue 24, point 4: :func:`allocation_risk` (every attack's measures at an
allocation's ρ), Kazan & Reiter's (2024) risk profiles (:class:`~.profile.RiskProfile`,
:func:`parse_risk_profile`), :func:`check_risk` (the measures against the
limits) and :func:`binding_rho` (the largest total ρ, the shares kept, at which
one attack stays within them).
"""

from .binding import BindingRho, ScaledAttack, binding_message, binding_rho
from .cases import ATTACKS, PRIOR_ATTACKS, attack_case, reconstruction_case
from .evaluate import DEFAULT_BLOCK_SIZES, DEFAULT_PRIORS, allocation_risk
from .limits import check_risk
from .profile import FORMS, RiskProfile, parse_risk_profile

__all__ = [
    "ATTACKS",
    "DEFAULT_BLOCK_SIZES",
    "DEFAULT_PRIORS",
    "FORMS",
    "PRIOR_ATTACKS",
    "BindingRho",
    "RiskProfile",
    "ScaledAttack",
    "allocation_risk",
    "attack_case",
    "binding_message",
    "binding_rho",
    "check_risk",
    "parse_risk_profile",
    "reconstruction_case",
]
