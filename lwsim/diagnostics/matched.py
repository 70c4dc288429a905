"""Matched statistic ψ: evidence for a dependency at lag ℓ (02-diagnostics.md §2.7).

    δ_t = (ŷ_t − y_t) W_out                     ∈ R^H   (direct error, readout W_out: conventions)
    v_t = (∂h_t/∂θ)[w]                           forward-mode tangent (``cell.tangents``) along a
                                                 unit direction w, ‖w‖₂ = 1 over all trained params
    ψ_{b,t}(ℓ) = Σ_q μ^{(q)}_{b,t,ℓ} δ^{(q)}_{b,t} v^{(q)}_{b,t−ℓ},    μ = Λ Γ (or Λ Γ⁰, ``order=0``)
    ψ̄_b(ℓ) = mean over the counted valid t (t − ℓ ≥ 1) of ψ_{b,t}(ℓ), then the mean over K
    directions w_1 … w_K (drawn from ``seed``).

Counted steps: every step for readout "every" (or the ``mask``), only t = T for readout "last"
(δ_t is the error injected by the loss). LSTM: μ is the cell-path factor (it already reads the
cell out into h_t through e_t), so the source tangent is the cell-state part v^c_{t−ℓ}.
Option ``orient``: per direction and lag, ψ̄ ← sgn(mean_b ψ̄_b(ℓ)) ψ̄ before averaging over the
directions (a random direction and its negative are equally likely, so signs are arbitrary).
Output: ``samples`` (n_lags, B), one sample per sequence and lag, for ``lwsim.stats``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from .._validate import check_int
from .gamma import _check_factors, gate_factors, prefix_sums
from .rates import recurrent_rates, source_rates
from ._util import (batch_slices, btH, check_chunk, check_engine, check_lags, check_order,
                    check_progress, check_seed, f64, need_gated, progress_iter, to_numpy)


@dataclass
class MatchedStatistic:
    lags: np.ndarray
    samples: np.ndarray          # (n_lags, B) ψ̄_b(ℓ) averaged over directions (oriented if asked)
    per_direction: np.ndarray    # (K, n_lags, B) ψ̄ per direction (oriented if asked)
    signs: np.ndarray | None     # (K, n_lags) orientation signs, None without orient
    count: np.ndarray            # (n_lags, B) counted valid steps
    order: int
    form: str


def random_direction(params, seed=0, keys=None):
    """Unit direction w (‖w‖₂ = 1 over ``keys``, default every trained parameter), N(0, 1) entries
    from ``seed``, zeros elsewhere. Keys are drawn in sorted order (dict order does not matter)."""
    if not isinstance(params, dict):
        raise TypeError(f"params must be a dict of arrays, got {type(params).__name__}")
    seed = check_seed(seed)
    keys = sorted(params) if keys is None else sorted(keys)
    missing = [k for k in keys if k not in params]
    if missing or not keys:
        raise ValueError(f"keys must be a non-empty subset of the parameter names, unknown: {missing}")
    rng = np.random.default_rng(seed)
    w = {k: np.zeros(np.shape(params[k])) for k in params}
    for k in keys:
        w[k] = rng.standard_normal(np.shape(params[k]))
    norm = np.sqrt(sum(float((w[k] ** 2).sum()) for k in keys))
    return {k: v / norm for k, v in w.items()}


def _directions(params, n_directions, seed, keys):
    return [random_direction(params, int(np.random.SeedSequence([seed, i]).generate_state(1)[0]), keys)
            for i in range(n_directions)]


def _accumulate_numpy(d, r, e, lam, delta, v, weight, lags, order, psi, cnt):
    T = d.shape[0]
    P, Q = prefix_sums(d, r if order == 1 else None)
    for i, ell in enumerate(lags):
        g = np.exp(P[ell + 1:] - P[1:T + 1 - ell])
        if order == 1:
            g = g * (1.0 + Q[ell + 1:] - Q[1:T + 1 - ell])
        if e is not None:
            g = g * e[ell:]
        w = weight[ell:]
        per_t = (lam[:T - ell] * g * delta[ell:] * v[1:T - ell + 1]).sum(axis=2)    # (T−ℓ, B)
        psi[i] += (w[:, None] * per_t).sum(axis=0)
        cnt[i] += w.sum()


def _weights(cell, T, mask):
    if cell.readout == "last":
        w = np.zeros(T)
        w[-1] = 1.0
        return w
    if mask is not None:
        return np.asarray(mask, dtype=np.float64)
    return np.ones(T)


def matched_statistic(cell, params, x, y, rates, lags, *, n_directions=1, seed=0, order=1,
                      form="rayleigh", orient=False, mask=None, keys=None, chunk=16,
                      backend="numpy", engine="numba", progress=True):
    """ψ̄_b(ℓ) for every sequence b and lag (§2.7) → :class:`MatchedStatistic`.

    rates: η, ``opt.rates()`` dict or the optimizer (only Λ is used, no η needed);
    n_directions K, seed: the unit directions; keys: parameters spanned by w (default all).
    """
    need_gated(cell, "the matched statistic")
    x = cell.check_x(x)
    y = cell.check_y(y, x)
    T, B, _ = x.shape
    mask = cell.check_mask(mask, T)
    order, engine = check_order(order), check_engine(engine)
    chunk, progress = check_chunk(chunk), check_progress(progress)
    K = check_int("n_directions", n_directions, 1)
    seed = check_seed(seed)
    if not isinstance(orient, bool):
        raise TypeError(f"orient must be a bool, got {type(orient).__name__}")
    lags = check_lags(lags, T)
    lam = recurrent_rates(cell, rates)
    dirs = _directions(cell.check_params(params), K, seed, keys)
    H = cell.n_hidden
    W_out = np.asarray(to_numpy(params["W_out"]), dtype=np.float64)
    weight = _weights(cell, T, mask)
    n = lags.size
    psi = np.zeros((K, n, B))
    cnt = np.zeros((n, B))
    sl = batch_slices(B, chunk)
    for s in progress_iter(sl, len(sl), f"matched statistic ({cell.name})", progress):
        xs = x[:, s]
        fac = gate_factors(cell, params, xs, backend)
        d, r, e = _check_factors(fac.d, fac.r, fac.readout, 1)
        lam_src = source_rates(lam, fac.trace.h, form)
        delta = (f64(fac.trace.y) - np.asarray(to_numpy(y[:, s]), dtype=np.float64)) @ W_out
        for kd, w in enumerate(dirs):
            v = f64(cell.tangents(params, xs, w, backend=backend))
            if cell.name == "lstm":
                v = np.ascontiguousarray(v[..., H:])
            c = np.zeros((n, xs.shape[1]))
            p = np.zeros((n, xs.shape[1]))
            if engine == "numpy":
                _accumulate_numpy(d, r, e, lam_src, delta, v, weight, lags, order, p, c)
            else:
                from . import _kernels
                Bc = xs.shape[1]
                ee = np.ones((Bc, T, H)) if e is None else btH(e)
                _kernels.matched_accumulate(btH(d), btH(r / d), ee, btH(lam_src), btH(delta), btH(v),
                                            weight, lags, order, p, c)
            psi[kd][:, s] = p
            cnt[:, s] = c
    with np.errstate(invalid="ignore", divide="ignore"):
        per_dir = psi / cnt[None]
    signs = None
    if orient:
        signs = np.where(np.nanmean(per_dir, axis=2) < 0, -1.0, 1.0)        # (K, n_lags)
        per_dir = per_dir * signs[:, :, None]
    return MatchedStatistic(lags=lags, samples=per_dir.mean(axis=0), per_direction=per_dir,
                            signs=signs, count=cnt, order=order, form=form)
