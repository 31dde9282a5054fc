"""Argument checks shared by every layer.

Each check raises :class:`ValueError` (or :class:`TypeError` for a wrong kind
of value) whose message starts with the argument's name, so that a user and
the command line can say exactly which input was wrong. Checks return the
value as a float64 or int64 array, never a silently clipped copy.
"""

from __future__ import annotations

import numpy as np

__all__ = [
    "MAX_EXACT_COUNT",
    "as_counts",
    "as_exact_reals",
    "as_generator",
    "as_index",
    "as_integers",
    "as_nonnegative",
    "as_positive",
    "as_probability",
    "binary_priors",
    "check_count_noise",
    "is_noise_free",
    "last_axis",
    "scalar_integer",
    "scalar_or_array",
    "scalar_positive",
]


#: The largest magnitude of a count computed on in float64 (TopDown's least squares, then
#: rounding to integers): float64 holds every integer up to 2**53 exactly, and not 2**53 + 1.
MAX_EXACT_COUNT = 2**53


def _as_real_array(value, name: str) -> np.ndarray:
    try:
        array = np.asarray(value)
    except Exception as error:  # pragma: no cover - numpy raises many kinds
        raise TypeError(f"{name} must be numeric, got {value!r}") from error
    if array.dtype == object and _python_integers(array):  # integers beyond 64 bits
        try:
            return array.astype(np.float64)  # as_integers refuses them as too large
        except OverflowError:
            raise ValueError(f"{name} is too large to hold as a number, got {value!r}") from None
    if array.dtype.kind not in "iuf":  # signed, unsigned, floating (not bool)
        raise TypeError(f"{name} must be numeric, got {value!r}")
    return array


def _python_integers(array: np.ndarray) -> bool:
    """Whether every element of an object array is a Python integer (not a bool)."""
    return array.size > 0 and all(
        isinstance(v, int) and not isinstance(v, bool) for v in array.flat
    )


def as_positive(value, name: str) -> np.ndarray:
    """``value`` as float64, every element finite and > 0 (e.g. ρ, σ²)."""
    array = _as_real_array(value, name).astype(np.float64)
    if not (np.isfinite(array) & (array > 0)).all():
        raise ValueError(f"{name} must be finite and > 0, got {value!r}")
    return array


def as_nonnegative(value, name: str) -> np.ndarray:
    """``value`` as float64, every element finite and >= 0 (e.g. ε, μ)."""
    array = _as_real_array(value, name).astype(np.float64)
    if not np.all(np.isfinite(array)) or np.any(array < 0):
        raise ValueError(f"{name} must be finite and >= 0, got {value!r}")
    return array


def as_exact_reals(value, name: str, limit: float = MAX_EXACT_COUNT) -> np.ndarray:
    """``value`` as float64, every element finite and of magnitude at most ``limit`` (default
    :data:`MAX_EXACT_COUNT`: a count or a measurement of one that float64 arithmetic keeps exact
    to the unit); the message names the first value refused."""
    array = _as_real_array(value, name).astype(np.float64)
    refused = ~(np.abs(array) <= limit)  # NaN too
    if np.any(refused):
        raise ValueError(
            f"{name} must be finite numbers of magnitude at most {limit:.17g}"
            f"{' (2**53)' if limit == MAX_EXACT_COUNT else ''}, got {float(array[refused][0])!r}"
        )
    return array


def as_generator(seed, name: str = "seed") -> np.random.Generator:
    """``np.random.default_rng(seed)``: an integer >= 0, ``None`` or a generator; any other
    seed refused by name (bools and legacy ``RandomState`` too)."""
    message = f"{name} must be an integer >= 0, None or a numpy.random.Generator, got {seed!r}"
    if isinstance(seed, bool | np.bool_ | np.random.RandomState):
        raise TypeError(message)
    try:
        return np.random.default_rng(seed)
    except (TypeError, ValueError) as error:
        raise type(error)(message) from None


def is_noise_free(variance):
    """Whether noise of ``variance`` (elementwise for an array) is none in float64: not > 0, or
    its inverse (a least-squares weight) not finite (below 1/float64's largest)."""
    variance = np.asarray(variance, dtype=np.float64)
    with np.errstate(divide="ignore", over="ignore", invalid="ignore"):
        return ~(variance > 0) | ~np.isfinite(1.0 / variance)


def check_count_noise(variance, name: str, noise_free: bool = False) -> float:
    """A noise variance counts computed in float64 can carry: ``> 0`` with a finite inverse
    (least squares weighs by it; ``noise_free`` allows 0 where nothing does) and σ at most
    2**53/64 (noise beyond 64 σ has probability below e^-2048, so noisy counts stay within
    :data:`MAX_EXACT_COUNT`); ``name`` is the argument that set it (a ρ or a mechanism)."""
    variance = float(variance)
    if not noise_free and is_noise_free(variance):
        raise ValueError(f"{name} gives noise of variance {variance!r}: it must be > 0")
    if not variance <= (MAX_EXACT_COUNT / 64) ** 2:
        raise ValueError(
            f"{name} gives noise of variance {variance:g}: its counts would pass 2**53"
        )
    return variance


def scalar_or_array(array: np.ndarray):
    """A 0-d result as a NumPy scalar, any other as the array (a vectorised return value)."""
    return array[()] if array.ndim == 0 else array


def as_probability(value, name: str) -> np.ndarray:
    """``value`` as float64, every element strictly inside (0, 1) (a prior p)."""
    array = _as_real_array(value, name).astype(np.float64)
    if not np.all((array > 0) & (array < 1)):
        raise ValueError(f"{name} must lie strictly between 0 and 1, got {value!r}")
    return array


def as_integers(value, name: str) -> np.ndarray:
    """``value`` as int64; floats are accepted only when integral (a noisy count).

    A value int64 cannot hold (an unsigned integer from 2^63, a float from
    2^62) is refused, never wrapped round.
    """
    array = _as_real_array(value, name)
    if array.dtype.kind == "f":
        if not np.all(np.isfinite(array)) or np.any(array != np.round(array)):
            raise ValueError(f"{name} must be integer-valued, got {value!r}")
        if np.any(np.abs(array) >= 2.0**62):
            raise ValueError(f"{name} is too large to hold as a 64-bit integer, got {value!r}")
    elif array.dtype.kind == "u" and array.size and np.max(array) > np.iinfo(np.int64).max:
        raise ValueError(f"{name} is too large to hold as a 64-bit integer, got {value!r}")
    return array.astype(np.int64)


def as_counts(value, name: str) -> np.ndarray:
    """``value`` as int64 counts: integer-valued and >= 0 (a true or known count)."""
    array = as_integers(value, name)
    if np.any(array < 0):
        raise ValueError(f"{name} must be a count >= 0, got {value!r}")
    return array


def as_index(value, size: int, name: str, what: str = "an index") -> int:
    """``value`` as an int index from 0 to ``size - 1`` (a Python or NumPy integer, not a bool).

    ``what`` says what the index is, for the message (e.g. ``"a category index"``).
    """
    if isinstance(value, bool) or not isinstance(value, int | np.integer) or not 0 <= value < size:
        raise ValueError(f"{name} must be {what} from 0 to {size - 1}, got {value!r}")
    return int(value)


def last_axis(array: np.ndarray, size: int, name: str, what: str) -> np.ndarray:
    """``array`` checked to hold ``size`` values on its last axis; ``what`` describes them."""
    if array.ndim == 0 or array.shape[-1] != size:
        raise ValueError(f"{name} must have {what} on its last axis, got shape {array.shape}")
    return array


def nonempty_last_axis(array: np.ndarray, name: str, what: str) -> np.ndarray:
    """``array`` checked to hold at least one value on its last axis; ``what`` describes them."""
    if array.ndim == 0 or array.shape[-1] == 0:
        raise ValueError(f"{name} must hold {what} on its last axis, got {array!r}")
    return array


def scalar_positive(value, name: str) -> float:
    """One finite number > 0 (a mechanism's scale or σ²), as a float."""
    array = as_positive(value, name)
    if array.ndim != 0:
        raise ValueError(f"{name} must be a scalar, got an array of shape {array.shape}")
    return float(array)


def scalar_integer(value, name: str, minimum: int) -> int:
    """One integer ``>= minimum`` (a bound or a count), as an int."""
    array = as_integers(value, name)
    if array.ndim != 0:
        raise ValueError(f"{name} must be a scalar, got an array of shape {array.shape}")
    if int(array) < minimum:
        raise ValueError(f"{name} must be an integer >= {minimum}, got {value!r}")
    return int(array)


def as_member(choices, value, name: str, spelling=str.lower):
    """``value`` as a member of the string enumeration ``choices``.

    A member is returned as it is; anything else is read as ``spelling(str(value))``
    and must be one of the members' values (the error lists them).
    """
    if isinstance(value, choices):
        return value
    try:
        return choices(spelling(str(value)))
    except ValueError:
        known = ", ".join(repr(member.value) for member in choices)
        raise ValueError(f"{name} must be one of {known}, got {value!r}") from None


def binary_priors(priors, name: str = "priors") -> dict:
    """``{label: p}`` of a two-valued attack, each ``p = P[X1 = m + 1]`` strictly in (0, 1)."""
    if not isinstance(priors, dict) or not priors:
        raise ValueError(f"{name} must map at least one label to a probability p")
    values = as_probability(list(priors.values()), name)
    if np.any((values <= 0) | (values >= 1)):
        raise ValueError(f"{name} must be probabilities strictly between 0 and 1, got {priors}")
    return {str(label): float(p) for label, p in zip(priors, values.reshape(-1), strict=True)}
