"""Noise too wide for any cut-off is refused naming the case's argument and the count."""

import pytest

from adversary.scenarios.reconstruction import ReconstructionCase


def test_a_rho_too_small_for_a_cut_off_names_rhos_and_the_count():
    # ρ = 1e-300 gives σ² = 5e299: no 64-bit cut-off; the message named sigma2 as array(5.e+299)
    with pytest.raises(ValueError, match=r"^rhos\[1\]: noise too wide .*got 5e\+299\)$"):
        ReconstructionCase(
            name="wide",
            n=1,
            cells=("a", "b"),
            prior=(0.5, 0.5),
            queries=[(0, 1), (0,)],
            rhos=(0.5, 1e-300),
        )
