"""Per-lag gradients g_ℓ = Σ_t δ_tᵀ M_{t,t−ℓ} B_{t−ℓ} and their norms (docs/diagnostics.md §2.2).

A thin layer over ``cell.lag_gradients`` (which implements the exact decomposition; read-out
parameters are counted at ℓ = 0 so that Σ_ℓ g_ℓ equals BPTT for every key): adds per-lag norms
‖g_ℓ‖₂ over a chosen set of parameters, showing where in time the learning signal comes from.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ._util import to_numpy


@dataclass
class LagGradients:
    """Result of :func:`lag_gradient_profile`: g_ℓ per lag and its norm ‖g_ℓ‖₂.

    See docs/diagnostics.md §2.2.
    """
    loss: float
    lags: np.ndarray           # 0 … max_lag
    per_lag: list              # [dict like params] g_ℓ
    norms: np.ndarray          # ‖g_ℓ‖₂ over ``keys``
    keys: tuple

    def total(self):
        """Σ_ℓ g_ℓ (equals the BPTT gradient when max_lag = T − 1)."""
        return {k: sum(to_numpy(g[k]) for g in self.per_lag) for k in self.per_lag[0]}


def lag_gradient_profile(cell, params, x, y, max_lag=None, *, keys=None, mask=None, backend="numpy"):
    """g_ℓ for ℓ = 0 … max_lag and ‖g_ℓ‖₂ over ``keys`` (default: every parameter but the read-out).

    See docs/diagnostics.md §2.2.
    """
    loss, per_lag = cell.lag_gradients(params, x, y, max_lag=max_lag, backend=backend, mask=mask)
    if keys is None:
        keys = tuple(k for k in sorted(per_lag[0]) if k not in ("W_out", "b_out"))
    else:
        keys = tuple(keys)
        bad = [k for k in keys if k not in per_lag[0]]
        if bad:
            raise ValueError(f"keys contains unknown parameter names {bad}")
    norms = np.array([np.sqrt(sum(float((to_numpy(g[k]) ** 2).sum()) for k in keys)) for g in per_lag])
    return LagGradients(loss=float(loss), lags=np.arange(len(per_lag)), per_lag=per_lag, norms=norms,
                        keys=keys)
