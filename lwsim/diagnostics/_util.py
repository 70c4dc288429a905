"""Shared helpers of :mod:`lwsim.diagnostics`: argument checks, chunking, progress, conversions.

Index conventions used by every module (docs/diagnostics.md, docs/conventions.md):

- time t = 1 … T; the array index of a per-step quantity (leak, gates, J, Γ) is t − 1;
  states h (T+1, B, H) keep h_0 at index 0;
- lag ℓ = t − k ≥ 1, source time k = t − ℓ; a pair (t, ℓ) is *valid* iff k ≥ 1, i.e. the source
  is a real step of the sequence (the lag decomposition of §2.2 has k = 1 … t);
- lags are given either as an int L (meaning 1 … L) or as a strictly increasing 1-D sequence of
  positive ints; per-lag outputs follow that order.
"""
from __future__ import annotations

import numbers

import numpy as np

from .._validate import check_choice, check_int

ENGINES = ("numba", "numpy")


def to_numpy(a):
    """NumPy array from a NumPy/CuPy array (CuPy arrays have ``.get()``)."""
    if a is None:
        return None
    if hasattr(a, "get") and not isinstance(a, np.ndarray):
        a = a.get()
    return np.asarray(a)


def f64(a):
    """Contiguous float64 copy/view (the diagnostics accumulate in float64 for every cell dtype)."""
    return np.ascontiguousarray(to_numpy(a), dtype=np.float64)


def btH(a):
    """(T, B, H) → contiguous float64 (B, T, H), the layout of the numba kernels."""
    return np.ascontiguousarray(np.transpose(to_numpy(a), (1, 0, 2)), dtype=np.float64)


def check_lags(lags, T=None, name="lags"):
    """int L → 1 … L; else a strictly increasing 1-D int array with entries ≥ 1 (and ≤ T − 1)."""
    if isinstance(lags, numbers.Integral) and not isinstance(lags, bool):
        L = check_int(name, lags, 1)
        out = np.arange(1, L + 1, dtype=np.int64)
    else:
        if isinstance(lags, (str, bytes, dict)) or lags is None:
            raise TypeError(f"{name} must be an int or a 1-D sequence of ints, got {type(lags).__name__}")
        arr = np.asarray(lags)
        if arr.dtype.kind not in "iu":
            if arr.dtype.kind == "f" and arr.size and np.all(np.isfinite(arr)) and np.all(arr == np.round(arr)):
                arr = arr.astype(np.int64)
            else:
                raise TypeError(f"{name} must contain integers, got dtype {arr.dtype}")
        if arr.ndim != 1 or arr.size == 0:
            raise ValueError(f"{name} must be a non-empty 1-D sequence, got shape {arr.shape}")
        out = arr.astype(np.int64)
        if out.min() < 1:
            raise ValueError(f"{name} must be >= 1, got {int(out.min())}")
        if np.any(np.diff(out) <= 0):
            raise ValueError(f"{name} must be strictly increasing")
    if T is not None and out[-1] > T - 1:
        raise ValueError(f"{name} must be <= T - 1 = {T - 1} (a lag needs a source k = t - lag >= 1), "
                         f"got {int(out[-1])}")
    return out


def check_order(order):
    if isinstance(order, bool) or order not in (0, 1):
        raise ValueError(f"order must be 0 (gates only, Γ⁰) or 1 (first order, Γ), got {order!r}")
    return int(order)


def check_engine(engine):
    return check_choice("engine", engine, ENGINES)


AUTO_CHUNK_ELEMENTS = 2 ** 19     # elements of one (T, chunk, S) array for chunk=None: 4 MB in float64


def check_chunk(chunk, T=None, S=None):
    """``chunk`` sequences per block, or for None the automatic size: the power of two nearest below
    AUTO_CHUNK_ELEMENTS / (T·S), clipped to [16, 128]. Why: every per-chunk pass has a fixed cost
    (Python per step, kernel calls), so small T·H wants more sequences per chunk, but (T, chunk, S)
    arrays that outgrow the caches are slower again (measured, quick [A] GRU T 256, H 32: matched
    statistic 9.1 s at 16, 5.4 at 64, 4.6 at 128, 35 at 512). Results do not depend on the chunk
    beyond round-off (each sequence is computed on its own)."""
    if chunk is None and T is not None and S is not None:
        per = max(1, AUTO_CHUNK_ELEMENTS // max(1, int(T) * int(S)))
        return int(min(128, max(16, 1 << (per.bit_length() - 1))))
    return check_int("chunk", chunk, 1)


def check_progress(progress):
    if not isinstance(progress, bool):
        raise TypeError(f"progress must be a bool, got {type(progress).__name__}")
    return progress


def check_seed(seed, name="seed"):
    return check_int(name, seed, 0)


def batch_slices(B, chunk):
    return [slice(i, min(i + chunk, B)) for i in range(0, B, chunk)]


def progress_iter(iterable, total, desc, progress, min_total=2):
    """tqdm over ``iterable`` when ``progress`` and there is more than one item, else the iterable."""
    if not progress or total < min_total:
        return iterable
    from tqdm.auto import tqdm
    return tqdm(iterable, total=total, desc=desc, leave=False)


def need_gated(cell, what):
    if not cell.kind.has_leak:
        raise ValueError(f"{what} needs a leak d_t: cell {cell.name!r} has none (docs/diagnostics.md §2.3); "
                         "use the exact transports (lwsim.diagnostics.transport) instead")


def ols(x, y):
    """OLS y = a + b x → (a, b, R²); R² = 1 − SS_res/SS_tot (1 when y is constant and fitted)."""
    x = np.asarray(x, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    xm, ym = x.mean(), y.mean()
    sxx = ((x - xm) ** 2).sum()
    if sxx == 0:
        return np.nan, np.nan, np.nan
    b = ((x - xm) * (y - ym)).sum() / sxx
    a = ym - b * xm
    ss_tot = ((y - ym) ** 2).sum()
    ss_res = ((y - a - b * x) ** 2).sum()
    r2 = 1.0 - ss_res / ss_tot if ss_tot > 0 else (1.0 if ss_res <= 1e-30 else 0.0)
    return float(a), float(b), float(r2)
