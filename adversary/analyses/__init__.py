"""Analyses across attacks (layer 6): compare priors, sweeps, choosing ρ, sequential releases.

Each works on any attack that implements the attack protocol
(:mod:`adversary.measures.marginal`), shipped or written by a user.
"""
