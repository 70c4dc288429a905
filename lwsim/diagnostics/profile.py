"""[B] effective-learning-rate profile over lags, S1 (docs/diagnostics.md §2.8).

    S_{t,k} = ‖M_{t,k}‖₂ (exact largest singular value) over a probe batch,
    μ̃(h) = median_{t−k=h} S / median_{t−k=1} S.

Gate-product predictors (neuron-averaged for multi-gate cells: mean over q of the per-neuron
product; the gate is g = 1 − d, i.e. s for the leaky cells):
  retention  P_{t,k} = Π_{j=k+1}^{t} (1 − g_j),
  injection  P_{t,k} = Π_{j=k}^{t} g_j          (the injection-weighted product of [B]'s code),
zero-order μ̃⁰(h) = P̄(h)/P̄(1) (P̄ the mean over pairs with lag h) and fitted power
μ̃^fit(h) = (P̄(h)/P̄(1))^s, s from the OLS log S = a + s log P over the pooled pairs whose P lies in
the central 1–99 % (``trim``) of P, at least ``min_points`` pairs (else NaN), with R².
Pairs with source k < 1 are excluded (as everywhere in lwsim.diagnostics). The plain rnn has no
gate: its profile has no predictors. ``conventions="author"`` reproduces [B]'s code instead
(power iterations, reversed products, lower medians, floors: docs/fidelity.md, "[B]").
"""
from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np

from .._validate import check_int
from .transport import transport_norms
from ._util import (batch_slices, check_chunk, check_lags, check_progress, check_seed, f64, ols,
                    progress_iter, to_numpy)


@dataclass
class PowerFit:
    """Result of :func:`fit_power`: slope s, intercept and R² of log S = a + s log P.

    See docs/diagnostics.md §2.8.
    """
    s: float
    intercept: float
    r2: float
    n_points: int


@dataclass
class Predictor:
    """One gate-product predictor of μ̃(h): P̄(h), μ̃⁰ and its power fit.

    See docs/diagnostics.md §2.8.
    """
    name: str                 # "retention" or "injection"
    pbar: np.ndarray          # (n_lags,) P̄(h)
    mu0: np.ndarray           # P̄(h)/P̄(1)
    fit: PowerFit
    mu_fit: np.ndarray        # (P̄(h)/P̄(1))^s


@dataclass
class LRProfile:
    """Result of :func:`lr_profile`: μ̃(h) per lag and its gate-product predictors.

    See docs/diagnostics.md §2.8.
    """
    lags: np.ndarray          # h = 1 … max_lag
    s_median: np.ndarray      # median S per lag
    mu: np.ndarray            # μ̃(h)
    n_pairs: np.ndarray
    predictors: dict = field(default_factory=dict)


def gate_products(g, lags):
    """Neuron-averaged retention and injection products for every t and lag: two (n_lags, T, B)
    arrays, NaN where t − ℓ < 1. g: the gate (T, B, H) (index t − 1), values in [0, 1].

    See docs/diagnostics.md §2.8.
    """
    g = f64(g)
    T = g.shape[0]
    lags = check_lags(lags, T)
    tiny = np.finfo(np.float64).tiny
    lr = np.zeros((T + 1,) + g.shape[1:])
    lg = np.zeros_like(lr)
    np.cumsum(np.log(np.maximum(1.0 - g, tiny)), axis=0, out=lr[1:])
    np.cumsum(np.log(np.maximum(g, tiny)), axis=0, out=lg[1:])
    ret = np.full((lags.size, T) + g.shape[1:2], np.nan)
    inj = np.full_like(ret, np.nan)
    for i, ell in enumerate(lags):
        # t = ℓ+1 … T, k = t − ℓ = 1 … T − ℓ
        ret[i, ell:] = np.exp(lr[ell + 1:] - lr[1:T + 1 - ell]).mean(axis=-1)
        inj[i, ell:] = np.exp(lg[ell + 1:] - lg[0:T - ell]).mean(axis=-1)
    return ret, inj


def fit_power(S, P, trim=(0.01, 0.99), min_points=50, count="trimmed"):
    """OLS log S = a + s log P over finite positive pairs with P in its central quantile range.

    At least ``min_points`` pairs are needed (else NaN), counted after the trim (``count=
    "trimmed"``, lwsim) or before it (``"valid"``, the author's code).

    See docs/diagnostics.md §2.8.
    """
    if count not in ("trimmed", "valid"):
        raise ValueError(f"count must be 'trimmed' or 'valid', got {count!r}")
    S = np.asarray(S, dtype=np.float64).ravel()
    P = np.asarray(P, dtype=np.float64).ravel()
    ok = np.isfinite(S) & np.isfinite(P) & (S > 0) & (P > 0)
    S, P = S[ok], P[ok]
    if count == "valid" and P.size < min_points:
        return PowerFit(np.nan, np.nan, np.nan, int(P.size))
    if P.size:
        lo, hi = np.quantile(P, trim)
        keep = (P >= lo) & (P <= hi)
        S, P = S[keep], P[keep]
    if (count == "trimmed" and P.size < min_points) or P.size < 2 or np.ptp(np.log(P)) == 0:
        return PowerFit(np.nan, np.nan, np.nan, int(P.size))
    a, s, r2 = ols(np.log(P), np.log(S))
    return PowerFit(s=s, intercept=a, r2=r2, n_points=int(P.size))


def lr_profile(cell, params, x, max_lag=None, *, trim=(0.01, 0.99), min_points=50, backend="numpy",
               chunk=8, progress=True, conventions="lwsim", seed=0, power_iters=5):
    """μ̃(h), h = 1 … max_lag (default T − 1), with both gate-product predictors → :class:`LRProfile`.

    ``conventions="author"`` computes the profile as [B]'s code does (docs/fidelity.md, "[B]"):
    the author's Jacobians (gate term from h_t), products J_{k+1} ⋯ J_t, S from ``power_iters``
    power iterations on M (start vectors from ``seed``), lower medians, μ̃ = med S(h)/(med S(1) +
    1e−12), P̄ the lower median of P (not the mean), μ̃⁰ = P̄(h)/(P̄(1) + 1e−12), μ̃^fit =
    (μ̃⁰ + 1e−12)^s (s = 1 when the fit fails) and ``min_points`` counted before the trim; a
    :class:`lwsim.conventions.Conventions` switches them one by one (gate_term_state,
    product_order, spectral_norm, median, metric_floors, profile_fit_count, profile_failed_fit).
    """
    from .author_b import (FLOOR, as_conventions, author_jacobians, lower_median,
                           transport_norms as author_norms)
    conv = as_conventions(conventions)
    after_step = conv.gate_term_state == "after_step"
    exact_products = conv.product_order == "exact" and conv.spectral_norm == "svd"
    lower, floors = conv.median == "lower", conv.metric_floors
    power_iters = check_int("power_iters", power_iters, 0)
    rng = np.random.default_rng(check_seed(seed))
    x = cell.check_x(x)
    chunk, progress = check_chunk(chunk), check_progress(progress)
    T, B, _ = x.shape
    if T < 2:
        raise ValueError("x must have T >= 2 for a lag profile")
    lags = check_lags(T - 1 if max_lag is None else max_lag, T, name="max_lag")
    min_points = check_int("min_points", min_points, 2)
    trim = tuple(float(v) for v in trim)
    if len(trim) != 2 or not 0.0 <= trim[0] < trim[1] <= 1.0:
        raise ValueError(f"trim must be two quantiles 0 <= lo < hi <= 1, got {trim}")
    S = np.full((lags.size, T, B), np.nan)
    gated = cell.kind.has_leak
    ret = np.full_like(S, np.nan)
    inj = np.full_like(S, np.nan)
    sl = batch_slices(B, chunk)
    for s in progress_iter(sl, len(sl), f"‖M‖₂ profile ({cell.name})", progress):
        xs = x[:, s]
        J = (author_jacobians(cell, params, xs, backend) if after_step
             else to_numpy(cell.jacobians(params, xs, backend=backend)))
        if exact_products:
            S[:, :, s] = transport_norms(J, lags)
        else:                                    # reversed products and/or power iterations
            S[:, :, s] = author_norms(J, lags, conv.product_order, conv.spectral_norm, power_iters, rng)
        if gated:
            g = 1.0 - f64(cell.forward(params, xs, backend=backend).leak)
            ret[:, :, s], inj[:, :, s] = gate_products(g, lags)
    flat = S.reshape(lags.size, -1)
    if lower:
        med = np.array([lower_median(row) for row in flat])
    else:
        med = np.array([np.median(row[np.isfinite(row)]) for row in flat])
    mu = med / (med[0] + FLOOR) if floors else med / med[0]
    prof = LRProfile(lags=lags, s_median=med, mu=mu, n_pairs=np.isfinite(flat).sum(axis=1))
    if gated:
        for name, P in (("retention", ret), ("injection", inj)):
            Pl = P.reshape(lags.size, -1)
            pbar = np.array([lower_median(row) for row in Pl]) if lower else np.nanmean(Pl, axis=1)
            fit = fit_power(S, P, trim, min_points, count=conv.profile_fit_count)
            mu0 = pbar / (pbar[0] + FLOOR) if floors else pbar / pbar[0]
            failed = conv.profile_failed_fit == "unit_exponent" and not np.isfinite(fit.s)
            s_ = 1.0 if failed else fit.s                  # the author's s = 1 on a failed fit
            mu_fit = (mu0 + FLOOR) ** s_ if floors else mu0 ** s_
            prof.predictors[name] = Predictor(name=name, pbar=pbar, mu0=mu0, fit=fit, mu_fit=mu_fit)
    return prof
