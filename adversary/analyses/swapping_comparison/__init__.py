"""DP (2020), household swapping and TRS + cell key at equal accuracy (issue 25, point 3).

- :mod:`.errors` — the mean absolute error per release and its Monte Carlo error;
- :mod:`.dp_accuracy` — the 2020 release's accuracy: noisy measurements (exact ``E|Z|``)
  and TopDown's published tables (simulated);
- :mod:`.swap_accuracy` — a swapping release's accuracy against its rate, and the rate of
  equal accuracy with its bracket;
- :mod:`.single_block_risk` — the single-block attack, DP and swapping (with or without the
  cell key method) side by side;
- :mod:`.reconstruction` — the reconstruction share and exact-block rate by block size, DP
  beside swapping;
- :mod:`.study` — :func:`swapping_comparison`: the curves, the rates of equal accuracy, the
  risks side by side and the figure of risk against accuracy.
"""

from .dp_accuracy import dg_mean_absolute, measurement_accuracy, topdown_accuracy
from .errors import mean_and_se, release_mae
from .reconstruction import dp_reconstruction, release_reconstruction, swap_reconstruction
from .single_block_risk import (
    cell_key_transition,
    dp_single_block,
    swap_single_block,
    unique_targets,
)
from .study import Compared, ComparisonResult, default_mechanisms, swapping_comparison
from .swap_accuracy import EqualAccuracy, equal_accuracy_rate, released_tables, swap_accuracy

__all__ = [
    "Compared",
    "ComparisonResult",
    "EqualAccuracy",
    "cell_key_transition",
    "default_mechanisms",
    "dg_mean_absolute",
    "dp_reconstruction",
    "dp_single_block",
    "equal_accuracy_rate",
    "mean_and_se",
    "measurement_accuracy",
    "release_mae",
    "release_reconstruction",
    "released_tables",
    "swap_accuracy",
    "swap_reconstruction",
    "swap_single_block",
    "swapping_comparison",
    "topdown_accuracy",
    "unique_targets",
]
