"""Argument checks for lwsim.stats: clear ValueError/TypeError naming the argument (never silent NaN)."""
from __future__ import annotations

import numbers

import numpy as np

from .._validate import check_choice, check_int, check_real  # noqa: F401  (re-exported)

MIN_SAMPLES = 20  # below this the quartiles/ECF are meaningless; 500 is the *reliability* floor


def as_rng(seed) -> np.random.Generator:
    """int (>= 0), None or numpy Generator -> Generator."""
    if isinstance(seed, np.random.Generator):
        return seed
    if seed is None:
        return np.random.default_rng()
    if isinstance(seed, bool) or not isinstance(seed, numbers.Integral):
        raise TypeError(f"seed must be an int >= 0 or a numpy Generator, got {type(seed).__name__}")
    if seed < 0:
        raise ValueError(f"seed must be >= 0, got {seed}")
    return np.random.default_rng(int(seed))


def as_size(size) -> tuple:
    """int or tuple of ints, each >= 0 -> shape tuple."""
    if isinstance(size, (tuple, list)):
        return tuple(check_int(f"size[{i}]", s, minimum=0) for i, s in enumerate(size))
    return (check_int("size", size, minimum=0),)


def real_array(name, value, ndim=None, min_len=None, positive=False, nonneg=False, allow_inf=False):
    """Float64 array; rejects complex/bool/object, NaN, and Inf unless ``allow_inf`` (+inf only)."""
    arr = np.asarray(value)
    if arr.dtype.kind not in "fiu":
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    arr = arr.astype(np.float64)
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must be {ndim}-dimensional, got shape {arr.shape}")
    if min_len is not None and arr.shape[-1:] and arr.shape[-1] < min_len:
        raise ValueError(f"{name} needs at least {min_len} values, got {arr.shape[-1]}")
    if np.isnan(arr).any():
        raise ValueError(f"{name} contains NaN")
    if allow_inf:
        if (arr == -np.inf).any():
            raise ValueError(f"{name} contains -inf")
    elif not np.isfinite(arr).all():
        raise ValueError(f"{name} contains Inf")
    if positive and not (arr > 0).all():
        raise ValueError(f"{name} must be > 0 everywhere, got min {arr.min()}")
    if nonneg and not (arr >= 0).all():
        raise ValueError(f"{name} must be >= 0 everywhere, got min {arr.min()}")
    return arr


def same_length(**arrays) -> int:
    lengths = {k: len(v) for k, v in arrays.items()}
    if len(set(lengths.values())) > 1:
        raise ValueError(f"mismatched lengths: {lengths}")
    return next(iter(lengths.values()))
