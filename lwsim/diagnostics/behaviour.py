"""The behavioural learnability window: what a trained network learned, lag by lag (docs/diagnostics.md §2.11).

On held-out multilag sequences (i.i.d. inputs x_t, projection z_t = uᵀ x_t) the network's output
ŷ_{t,b} is regressed, lag by lag, on z_{t−ℓ,b} (with an intercept, over the pairs t ≥ ℓ):

    ĉ(ℓ) = Σ_{t,b} (ŷ_{t,b} − ȳ)(z_{t−ℓ,b} − z̄) / Σ_{t,b} (z_{t−ℓ,b} − z̄)²

Because the z_t are i.i.d., E[ŷ_t z_{t−ℓ}] / E[z²] is exactly the network's linear response at lag
ℓ (its first Wiener kernel): the other lags' contributions are uncorrelated with z_{t−ℓ}, so ĉ(ℓ)
is unbiased; a network that learned the task's conditional mean Σ_k c_k z_{t−ℓ_k} has ĉ(ℓ_k) = c_k.
Its standard error is clustered by sequence (sequences are independent, time points within one are
not): with residuals e = (ŷ − ȳ) − ĉ (z − z̄) and S_b = Σ_t (z_{t−ℓ,b} − z̄) e_{t,b},

    SE(ĉ(ℓ))² = B/(B − 1) · Σ_b S_b² / (Σ_{t,b} (z_{t−ℓ,b} − z̄)²)².

The learned window (:func:`behavioural_window`): a task lag ℓ_k with coefficient c_k is
*recovered* when ĉ(ℓ_k) lies outside the null band |ĉ| ≤ z_band · SE(ℓ_k) and within ``frac`` of
its true value, |ĉ(ℓ_k)/c_k − 1| ≤ frac. H^beh is the largest task lag ℓ_k such that every task
lag ℓ_1 ≤ … ≤ ℓ_k is recovered (0 when ℓ_1 is not). The smooth version H^beh_½ is the lag where
the ratio r_k = ĉ(ℓ_k)/c_k first falls below ½, linearly interpolated between the two task lags
around the crossing (0 when r_1 < ½ already, the last task lag when r never falls below ½).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import as_real_array, check_real


@dataclass(frozen=True)
class LagCoefficients:
    """ĉ(ℓ) per lag with its sequence-clustered standard error and the number of (t, b) pairs
    (docs/diagnostics.md §2.11)."""
    lags: np.ndarray
    c_hat: np.ndarray
    se: np.ndarray
    n_pairs: np.ndarray


@dataclass(frozen=True)
class BehaviouralWindow:
    """H^beh (``h``) and its smooth version (``h_smooth``) from ĉ at the task lags (sorted):
    ``ratio`` ĉ/c, ``outside_band`` |ĉ| > z_band·SE, ``recovered`` both rules (docs/diagnostics.md §2.11)."""
    h: float
    h_smooth: float
    task_lags: np.ndarray
    ratio: np.ndarray
    outside_band: np.ndarray
    recovered: np.ndarray
    frac: float
    z_band: float


def _int_lags(name, lags, T=None):
    arr = np.asarray(lags)
    if arr.ndim != 1 or arr.size == 0:
        raise ValueError(f"{name} must be a non-empty 1-D sequence of integers")
    if arr.dtype.kind not in "iu" and not (arr.dtype.kind == "f" and np.all(arr == np.round(arr))):
        raise TypeError(f"{name} must hold integers, got dtype {arr.dtype}")
    arr = arr.astype(int)
    if (arr < 1).any():
        raise ValueError(f"{name} must be >= 1, got {int(arr.min())}")
    if T is not None and (arr >= T).any():
        raise ValueError(f"{name} must be < T = {T}, got {int(arr.max())}")
    if np.unique(arr).size != arr.size:
        raise ValueError(f"{name} must not repeat a lag")
    return arr


def lag_coefficients(y_hat, x, u, lags) -> LagCoefficients:
    """ĉ(ℓ) and its standard error for every lag (docs/diagnostics.md §2.11).

    y_hat: the network's outputs (T, B) or (T, B, 1) on held-out sequences; x: their inputs
    (T, B, D), i.i.d. over time and sequences; u: the task's direction (D,), z_t = uᵀ x_t; lags:
    positive integers < T. Returns :class:`LagCoefficients` (float64).
    """
    x = as_real_array("x", x, np.float64, ndim=3)
    T, B, D = x.shape
    y = np.asarray(y_hat)
    if y.ndim == 3:
        if y.shape[2] != 1:
            raise ValueError(f"y_hat must have one output channel, got shape {tuple(y.shape)}")
        y = y[:, :, 0]
    y = as_real_array("y_hat", y, np.float64, shape=(T, B))
    u = as_real_array("u", u, np.float64, shape=(D,))
    if not np.any(u):
        raise ValueError("u must not be the zero vector")
    if B < 2:
        raise ValueError(f"x must hold at least 2 sequences for the clustered standard error, got {B}")
    lags = _int_lags("lags", lags, T)
    z = x @ u                                             # (T, B)
    c_hat, se, n = np.empty(lags.size), np.empty(lags.size), np.empty(lags.size)
    for i, lag in enumerate(lags):
        zz, yy = z[:T - lag], y[lag:]                      # pairs (z_{t−ℓ}, ŷ_t), t ≥ ℓ
        zc, yc = zz - zz.mean(), yy - yy.mean()
        sxx = float(np.sum(zc * zc))
        c = float(np.sum(zc * yc)) / sxx
        s_b = np.sum(zc * (yc - c * zc), axis=0)           # per-sequence score: clusters
        c_hat[i], se[i], n[i] = c, np.sqrt(B / (B - 1) * np.sum(s_b ** 2)) / sxx, zz.size
    return LagCoefficients(lags=lags, c_hat=c_hat, se=se, n_pairs=n)


def behavioural_window(coefs: LagCoefficients, task_lags, task_coefs, frac=0.5, z_band=3.0) -> BehaviouralWindow:
    """H^beh and H^beh_½ from ĉ at the task lags (docs/diagnostics.md §2.11).

    coefs: :func:`lag_coefficients` over lags that include every task lag; task_lags, task_coefs:
    the task's lags ℓ_k and nonzero coefficients c_k; frac: tolerance of |ĉ/c − 1| (in (0, 1]);
    z_band: half-width of the null band in standard errors.
    """
    if not isinstance(coefs, LagCoefficients):
        raise TypeError(f"coefs must be a LagCoefficients, got {type(coefs).__name__}")
    tl = _int_lags("task_lags", task_lags)
    tc = as_real_array("task_coefs", task_coefs, np.float64, ndim=1)
    if tc.size != tl.size:
        raise ValueError(f"task_coefs must have one value per task lag ({tl.size}), got {tc.size}")
    if not np.all(tc != 0):
        raise ValueError("task_coefs must be nonzero")
    frac = check_real("frac", frac, lo=0.0, hi=1.0, lo_open=True)
    z_band = check_real("z_band", z_band, lo=0.0)
    where = {int(l): i for i, l in enumerate(coefs.lags)}
    missing = [int(l) for l in tl if int(l) not in where]
    if missing:
        raise ValueError(f"task_lags {missing} are not among coefs.lags")
    order = np.argsort(tl)
    tl, tc = tl[order], tc[order]
    idx = np.array([where[int(l)] for l in tl])
    c_hat, se = coefs.c_hat[idx], coefs.se[idx]
    ratio = c_hat / tc
    outside = np.abs(c_hat) > z_band * se
    recovered = outside & (np.abs(ratio - 1.0) <= frac)
    n_ok = int(np.argmin(recovered)) if not recovered.all() else tl.size   # leading recovered lags
    h = float(tl[n_ok - 1]) if n_ok else 0.0
    below = np.flatnonzero(ratio < 0.5)
    if below.size == 0:
        h_smooth = float(tl[-1])
    elif below[0] == 0:
        h_smooth = 0.0
    else:
        k = below[0]
        r0, r1 = ratio[k - 1], ratio[k]
        h_smooth = float(tl[k - 1] + (r0 - 0.5) / (r0 - r1) * (tl[k] - tl[k - 1]))
    return BehaviouralWindow(h=h, h_smooth=h_smooth, task_lags=tl, ratio=ratio, outside_band=outside,
                             recovered=recovered, frac=frac, z_band=z_band)
