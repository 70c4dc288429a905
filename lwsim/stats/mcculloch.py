"""McCulloch quantile estimator of (α, σ) for symmetric α-stable data (docs/statistics.md §3.2).

R̂ = (q.95 − q.05)/(q.75 − q.25) is inverted on the exact SαS ratio R(α), tabulated once by
``make_mcculloch_table.py`` (scipy levy_stable, S1 with β = 0, i.e. φ = exp(−σ^α|t|^α)) and
interpolated monotonically (PCHIP); σ̂ = IQR / IQR_theory(α̂).

``conventions="author"`` (docs/fidelity.md) uses the author's table instead: α on
linspace(1, 2, 201), R and IQR at those α from the same exact values, except at α = 1.005 where
scipy (|α − 1| < 0.005 snaps to α = 1) gave the author R(1) and IQR(1) again; the grid sorted by
R (np.argsort), α̂ = interp(R̂_c, R, α) and σ̂ = IQR/(interp(R̂_c, R, IQR) + 1e−12) piecewise
linearly, with R̂ = (q.95 − q.05)/(IQR + 1e−12) clipped to the table's range R̂_c; IQR ≤ 1e−12
gives (2, 0). α̂ is thus always in [1, 2].
"""
from __future__ import annotations

import functools
import pathlib

import numpy as np
from scipy.interpolate import PchipInterpolator

from ..conventions import as_conventions

TABLE_PATH = pathlib.Path(__file__).resolve().parents[1] / "data" / "mcculloch_table.npz"
PROBS = (0.05, 0.25, 0.75, 0.95)


@functools.lru_cache(maxsize=1)
def table():
    """Lazily loaded table and its interpolants: dict(alpha, ratio, iqr, alpha_of_ratio, iqr_of_alpha).

    See docs/statistics.md §3.2.
    """
    with np.load(TABLE_PATH) as d:
        alpha, ratio, iqr = d["alpha"], d["ratio"], d["iqr"]
    # ratio decreases in α; PCHIP needs increasing abscissae, so invert on the reversed arrays.
    return dict(alpha=alpha, ratio=ratio, iqr=iqr,
                alpha_of_ratio=PchipInterpolator(ratio[::-1], alpha[::-1], extrapolate=False),
                iqr_of_alpha=PchipInterpolator(alpha, iqr, extrapolate=False))


@functools.lru_cache(maxsize=1)
def author_table():
    """The author's 201-point table: dict(alpha, ratio, iqr) on linspace(1, 2, 201) (R(1.005) :=
    R(1), IQR(1.005) := IQR(1)) and its R-sorted copies R, A, IQR for np.interp.

    See docs/statistics.md §3.2; docs/fidelity.md.
    """
    tab = table()
    alpha = np.linspace(1.0, 2.0, 201)
    idx = np.rint((alpha - tab["alpha"][0]) / (tab["alpha"][1] - tab["alpha"][0])).astype(np.int64)
    if not np.allclose(tab["alpha"][idx], alpha, atol=1e-9):
        raise RuntimeError("the McCulloch table grid does not contain the author's α grid")
    ratio, iqr = tab["ratio"][idx].copy(), tab["iqr"][idx].copy()
    ratio[1], iqr[1] = ratio[0], iqr[0]          # scipy's snap to α = 1 at α = 1.005
    order = np.argsort(ratio)
    return dict(alpha=alpha, ratio=ratio, iqr=iqr, R=ratio[order], A=alpha[order], IQR=iqr[order])


def author_quantile_fit(q):
    """The author's (α̂, σ̂, IQR) from quantile rows q[..., (q05, q25, q75, q95)] (vectorised).

    See docs/statistics.md §3.2; docs/fidelity.md.
    """
    t = author_table()
    q = np.asarray(q, dtype=np.float64)
    iqr = q[..., 2] - q[..., 1]
    bad = ~np.isfinite(iqr) | (iqr <= 1e-12)
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (q[..., 3] - q[..., 0]) / (iqr + 1e-12)
    r = np.clip(np.where(bad, t["R"][0], r), t["R"].min(), t["R"].max())
    a = np.clip(np.interp(r, t["R"], t["A"]), 1.0, 2.0)
    sigma = np.maximum(0.0, iqr / (np.interp(r, t["R"], t["IQR"]) + 1e-12))
    return np.where(bad, 2.0, a), np.where(bad, 0.0, sigma), iqr


def ratio_theory(alpha):
    """Exact quantile ratio R(α) for SαS (interpolated from the table; docs/statistics.md §3.2)."""
    tab = table()
    return PchipInterpolator(tab["alpha"], tab["ratio"])(alpha)


def iqr_theory(alpha, conventions="lwsim"):
    """Interquartile range of unit-scale SαS(α) (interpolated from the table; "author": linearly
    from the author's table).

    See docs/statistics.md §3.2.
    """
    if as_conventions(conventions).mcculloch_table == "linear_201":
        t = author_table()
        return np.interp(alpha, t["alpha"], t["iqr"])
    return table()["iqr_of_alpha"](alpha)


def alpha_from_quantiles(q, alpha_lo, conventions="lwsim"):
    """α̂ and the IQR from quantile rows q[..., (q05, q25, q75, q95)]; α̂ clipped to [alpha_lo, 2].

    A ratio above R(alpha_lo) (heavier than the grid) maps to alpha_lo, below R(2) to 2.
    conventions="author": :func:`author_quantile_fit` (α̂ in [1, 2], alpha_lo not used).

    See docs/statistics.md §3.2.
    """
    if as_conventions(conventions).mcculloch_table == "linear_201":
        a, _, iqr = author_quantile_fit(q)
        return a, iqr
    tab = table()
    lo = max(alpha_lo, float(tab["alpha"][0]))
    iqr = q[..., 2] - q[..., 1]
    with np.errstate(divide="ignore", invalid="ignore"):
        r = (q[..., 3] - q[..., 0]) / iqr
    # Degenerate IQR (r = inf or nan) is treated as Gaussian-like; the caller flags it unreliable.
    r = np.where(np.isfinite(r), r, tab["ratio"][-1])
    r_hi = float(ratio_theory(lo))
    r = np.clip(r, tab["ratio"][-1], r_hi)
    a = np.clip(tab["alpha_of_ratio"](r), lo, 2.0)
    return a, iqr


def mcculloch_point(xs_sorted, alpha_lo=1.0, conventions="lwsim"):
    """(α̂, σ̂, IQR) from sorted data (conventions "lwsim" | "author", see the module docstring).

    See docs/statistics.md §3.2.
    """
    q = np.quantile(xs_sorted, PROBS)
    if as_conventions(conventions).mcculloch_table == "linear_201":
        a, s, iqr = author_quantile_fit(q)
        return float(a), float(s), float(iqr)
    a, iqr = alpha_from_quantiles(q, alpha_lo)
    a = float(a)
    return a, float(iqr / iqr_theory(a)), float(iqr)


def bootstrap_quantiles(xs_sorted, n_boot, rng):
    """np.quantile(resample, PROBS) for ``n_boot`` bootstrap resamples, without materialising them.

    A resample is n i.i.d. draws xs[⌊nU⌋] with U uniform, so its order statistics are
    xs[⌊n U_(r)⌋] with U_(r) the uniform order statistics. The few ranks that np.quantile's
    linear rule needs are drawn jointly and exactly through gamma spacings
    (U_(r_i) = (G_1 + … + G_i)/(G_1 + … + G_{m+1}), G_i ~ Gamma(r_i − r_{i−1})), so each
    resample costs O(1) instead of an O(n) resample plus partition (200 × 10⁵: ~1 ms, not ~1 s).

    See docs/statistics.md §3.2.
    """
    n = xs_sorted.size
    h = (n - 1) * np.asarray(PROBS)  # np.quantile 'linear': x[⌊h⌋] + (h − ⌊h⌋)(x[⌊h⌋+1] − x[⌊h⌋])
    lo_idx = np.floor(h).astype(np.int64)
    hi_idx = np.minimum(lo_idx + 1, n - 1)
    ranks, inverse = np.unique(np.r_[lo_idx, hi_idx] + 1, return_inverse=True)  # 1-based ranks
    shapes = np.diff(np.r_[0, ranks, n + 1]).astype(float)
    g = rng.standard_gamma(shapes, size=(n_boot, shapes.size))
    u = np.cumsum(g, axis=1)[:, :-1] / g.sum(axis=1, keepdims=True)
    idx = np.minimum((n * u).astype(np.int64), n - 1)  # u < 1 in exact arithmetic
    order_stats = xs_sorted[idx][:, inverse]
    lo_vals, hi_vals = order_stats[:, :4], order_stats[:, 4:]
    return lo_vals + (h - lo_idx) * (hi_vals - lo_vals)


def bootstrap_alphas(xs_sorted, n_boot, rng, alpha_lo=1.0, conventions="lwsim"):
    """α̂ of ``n_boot`` bootstrap resamples (see :func:`bootstrap_quantiles`).

    See docs/statistics.md §3.2.
    """
    return alpha_from_quantiles(bootstrap_quantiles(xs_sorted, n_boot, rng), alpha_lo, conventions)[0]
