"""The author's tempered power law (conventions="author" of :func:`lwsim.stats.fit_decay`).

The author's envelope script fits log f(ℓ) = c + b₁ log ℓ + b₂ (ℓ/ℓ_c)^k by ordinary least squares
for every (k, ℓ_c) of a grid and keeps the smallest SSR (first one on ties), with no refinement:
k ∈ {0.25, 0.35, 0.5, 0.7, 1.0, 1.3, 1.6}, ℓ_c on 40 log-spaced values over
[0.5 ℓ_min, 2 ℓ_max]. The cutoff coefficient −b₂ is free (lwsim fixes it to 1) and the
information criteria count p = 5 parameters (lwsim: 4, A, β, ℓ_c, k). See docs/fidelity.md.
"""
from __future__ import annotations

import math

import numpy as np

AUTHOR_K_GRID = (0.25, 0.35, 0.5, 0.7, 1.0, 1.3, 1.6)
AUTHOR_LC_SIZE = 40
AUTHOR_TEMPERED_P = 5


def author_lc_grid(lags):
    """ℓ_c grid: 40 log-spaced values over [0.5 ℓ_min, max(1.001·lo, 2 ℓ_max)].

    See docs/statistics.md §3.4; docs/fidelity.md.
    """
    lo = max(1e-12, 0.5 * float(np.min(lags)))
    hi = max(lo * 1.001, 2.0 * float(np.max(lags)))
    return np.logspace(np.log10(lo), np.log10(hi), AUTHOR_LC_SIZE)


def tempered_author(lags, y, k_grid=None, lc_grid=None):
    """Grid-search OLS of y = log f on (1, log ℓ, (ℓ/ℓ_c)^k) → (params, SSR).

    params: A = e^c, beta = −b₁, cutoff_coeff = −b₂, l_c, k (f = A ℓ^{−β} e^{−coeff·(ℓ/ℓ_c)^k}).

    See docs/statistics.md §3.4; docs/fidelity.md.
    """
    lags = np.asarray(lags, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64)
    k_grid = AUTHOR_K_GRID if k_grid is None else k_grid
    lc_grid = author_lc_grid(lags) if lc_grid is None else lc_grid
    logl, ones = np.log(lags), np.ones_like(lags)
    best, best_ssr = None, np.inf
    for k in k_grid:
        for lc in lc_grid:
            X = np.vstack([ones, logl, (lags / float(lc)) ** float(k)]).T
            coef, *_ = np.linalg.lstsq(X, y, rcond=None)
            ssr = float(np.sum((y - X @ coef) ** 2))
            if ssr < best_ssr:
                best_ssr, best = ssr, (coef, float(lc), float(k))
    if best is None:
        return None, math.inf
    coef, lc, k = best
    A = math.exp(coef[0]) if coef[0] < 709.0 else math.inf
    return dict(A=A, beta=float(-coef[1]), l_c=lc, k=k, cutoff_coeff=float(-coef[2])), best_ssr
