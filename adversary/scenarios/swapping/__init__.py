"""Swapping under the Bayesian adversary (issue 25)."""
