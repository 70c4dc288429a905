"""Input checks shared by the public functions: clear errors naming the argument."""
from __future__ import annotations

import numbers

import numpy as np


def check_choice(name, value, choices):
    if value not in choices:
        raise ValueError(f"{name} must be one of {sorted(choices)!r}, got {value!r}")
    return value


def check_int(name, value, minimum=None):
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(f"{name} must be an integer, got {type(value).__name__}")
    if minimum is not None and value < minimum:
        raise ValueError(f"{name} must be >= {minimum}, got {value}")
    return int(value)


def check_real(name, value, lo=None, hi=None, lo_open=False, hi_open=False):
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(f"{name} must be a real number, got {type(value).__name__}")
    value = float(value)
    if not np.isfinite(value):
        raise ValueError(f"{name} must be finite, got {value}")
    if lo is not None and (value < lo or (lo_open and value == lo)):
        raise ValueError(f"{name} must be {'>' if lo_open else '>='} {lo}, got {value}")
    if hi is not None and (value > hi or (hi_open and value == hi)):
        raise ValueError(f"{name} must be {'<' if hi_open else '<='} {hi}, got {value}")
    return value


def as_real_array(name, value, dtype, shape=None, ndim=None, xp=np):
    """Convert to a real floating array of ``dtype``; reject complex/bool/object and non-finite."""
    arr = value if xp is not np and isinstance(value, xp.ndarray) else np.asarray(value)
    kind = arr.dtype.kind
    if kind not in "fiu":
        raise TypeError(f"{name} must be a real numeric array, got dtype {arr.dtype}")
    if ndim is not None and arr.ndim != ndim:
        raise ValueError(f"{name} must have {ndim} dimensions, got shape {tuple(arr.shape)}")
    if shape is not None and tuple(arr.shape) != tuple(shape):
        raise ValueError(f"{name} must have shape {tuple(shape)}, got {tuple(arr.shape)}")
    arr = xp.asarray(arr, dtype=dtype)
    if not bool(xp.isfinite(arr).all()):
        raise ValueError(f"{name} contains NaN or Inf")
    return arr
