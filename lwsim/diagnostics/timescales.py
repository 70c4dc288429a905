"""Time-scale spectrum τ_q of the effective learning rates (docs/diagnostics.md §2.6).

    m_q(ℓ) = ⟨|μ^{(q)}_{t,ℓ}|⟩,   OLS  log m_q(ℓ) = a_q + b_q ℓ  over the positive points (≥ 5),
    τ_q = −1/b_q  (∞ if b_q ≥ 0),  with R².

Constant gate closed form (Γ = (1 − s)^ℓ): τ = −1/log(1 − s) (:func:`constgate_timescale`).
"""
from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np

from .._validate import check_int, check_real
from ._util import ols


@dataclass
class TimeScales:
    """Result of :func:`timescales`: τ_q and the log-linear fit behind it per neuron.

    See docs/diagnostics.md §2.6.
    """
    tau: np.ndarray         # (H,) τ_q; inf where b ≥ 0; nan where fewer than min_points points
    slope: np.ndarray       # (H,) b_q
    intercept: np.ndarray   # (H,) a_q
    r2: np.ndarray          # (H,) R² of the fit
    n_points: np.ndarray    # (H,) positive finite points used

    def to_dict(self):
        return {k: np.where(np.isinf(v), np.nan, v).tolist() if v.dtype.kind == "f" else v.tolist()
                for k, v in asdict(self).items()}


def timescales(lags, m, min_points=5):
    """Fit τ_q from m (n_lags, H) (or (n_lags,) for a single curve) at the given lags.

    See docs/diagnostics.md §2.6.
    """
    lags = np.asarray(lags)
    if lags.dtype.kind not in "iuf":
        raise TypeError(f"lags must be a 1-D array of lags, got dtype {lags.dtype}")
    lags = lags.astype(np.float64)
    if lags.ndim == 1 and not (np.all(np.isfinite(lags)) and np.all(lags >= 1)):
        raise ValueError(f"lags must be finite and >= 1, got {lags.tolist()}")
    m = np.asarray(m, dtype=np.float64)
    single = m.ndim == 1
    if single:
        m = m[:, None]
    if lags.ndim != 1 or m.ndim != 2 or m.shape[0] != lags.size:
        raise ValueError(f"m must have shape (n_lags, H) with n_lags = len(lags) = {lags.size}, got {m.shape}")
    min_points = check_int("min_points", min_points, 2)
    H = m.shape[1]
    tau, slope, icpt, r2 = (np.full(H, np.nan) for _ in range(4))
    npts = np.zeros(H, dtype=np.int64)
    for q in range(H):
        ok = np.isfinite(m[:, q]) & (m[:, q] > 0)
        npts[q] = ok.sum()
        if npts[q] < min_points:
            continue
        a, b, r = ols(lags[ok], np.log(m[ok, q]))
        icpt[q], slope[q], r2[q] = a, b, r
        tau[q] = -1.0 / b if b < 0 else np.inf
    out = TimeScales(tau=tau, slope=slope, intercept=icpt, r2=r2, n_points=npts)
    return out


def constgate_timescale(s):
    """τ = −1/log(1 − s) for the constant gate s ∈ (0, 1) (∞ for s → 0 is excluded).

    See docs/diagnostics.md §2.6.
    """
    s = check_real("s", s, 0.0, 1.0, lo_open=True, hi_open=True)
    return -1.0 / np.log1p(-s)
