"""Swapping under the Bayesian adversary of Kazan & Reiter (2023)."""
