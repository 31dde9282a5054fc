"""adversary: disclosure risk of noisy count releases against a Bayesian adversary."""

__version__ = "0.1.0"
