import numpy as np
import pytest

from adversary.noise import NoiseConvention, as_convention, noise_variance


def test_paper_convention_is_half_inverse_rho():
    # Kazan & Reiter's likelihood exp(-rho (x* - x)^2) is DG with sigma^2 = 1/(2 rho).
    np.testing.assert_allclose(noise_variance([0.0992, 2.0], "paper"), [1 / 0.1984, 0.25])


def test_das_convention_is_inverse_rho():
    # Replace-one neighbours: L2 sensitivity sqrt(2), sigma^2 = 2/(2 rho) = 1/rho.
    np.testing.assert_allclose(noise_variance([0.0992, 2.0], "das"), [1 / 0.0992, 0.5])
    assert NoiseConvention.DAS.l2_sensitivity == pytest.approx(np.sqrt(2))


def test_convention_names_are_case_insensitive():
    assert as_convention("DAS") is NoiseConvention.DAS


@pytest.mark.parametrize("bad", ["gaussian", "", None])
def test_unknown_convention_names_the_argument(bad):
    with pytest.raises(ValueError, match="convention must be one of 'paper', 'das'"):
        as_convention(bad)


@pytest.mark.parametrize("rho", [0.0, -1.0, np.inf, np.nan])
def test_bad_rho_names_the_argument(rho):
    with pytest.raises(ValueError, match="rho must be finite and > 0"):
        noise_variance(rho)
