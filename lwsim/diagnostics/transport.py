"""Exact transport products and their diagonals and spectral norms (docs/diagnostics.md §2.1, §2.8).

    M_{t,k} = J_t J_{t−1} ⋯ J_{k+1}   (lag ℓ = t − k, M_{t,t} = I),  J_t = ∂h_t/∂h_{t−1}

from the cell's exact one-step Jacobians (``cell.jacobians``: J[t−1] = J_t, (T, B, S, S), S = H or
2H for the LSTM state (h, c)). Streaming over time: at step t the window
[M_{t,t−1}, …, M_{t,t−L}] is J_t times the previous window, so every (t, ℓ ≤ L) costs one S×S
matrix product, O(T·L·B·S³) in all, and the memory is L·B·S² (not T·L·B·S²). Pairs with source
k = t − ℓ < 1 are not sources of the lag decomposition (§2.2) and are reported as NaN.

Per-neuron exact counterpart of Γ (§2.3) — :func:`neuron_transport_diagonals`:
gated leaky cells and the GRU: [M_{t,k}]_qq; LSTM: the total cell-path transport
∂h_t/∂c_k = [M]_hh diag(e_k) + [M]_hc, whose diagonal is diag(M_hh) ⊙ e_k + diag(M_hc), with
e_k = o_k ⊙ (1 − tanh² c_k) (a parameter perturbation of c_k reaches h_k through e_k).
"""
from __future__ import annotations

import numpy as np

from ._util import (batch_slices, check_chunk, check_lags, check_progress, f64, progress_iter,
                    to_numpy)


def _check_J(J):
    J = np.asarray(to_numpy(J))
    if J.ndim != 4 or J.shape[2] != J.shape[3]:
        raise ValueError(f"J must have shape (T, B, S, S), got {J.shape}")
    if J.dtype.kind != "f":
        raise TypeError(f"J must be a floating array, got dtype {J.dtype}")
    return J


def iterate_products(J, max_lag):
    """Yield (t, W) for t = 1 … T with W[ℓ − 1] = M_{t,t−ℓ}, ℓ = 1 … min(t − 1, max_lag):
    (n, B, S, S). W is overwritten by the next step: copy what you keep.

    See docs/diagnostics.md §2.1.
    """
    J = _check_J(J)
    T = J.shape[0]
    L = int(max_lag)
    W = np.empty((0,) + J.shape[1:], dtype=J.dtype)
    for t in range(1, T + 1):
        n = min(t - 1, L)
        new = np.empty((n,) + J.shape[1:], dtype=J.dtype)
        if n >= 1:
            new[0] = J[t - 1]
        if n >= 2:
            np.matmul(J[t - 1][None], W[:n - 1], out=new[1:])
        W = new
        yield t, W


def transport_products(J, lags, progress=False):
    """All M_{t,t−ℓ}: (n_lags, T, B, S, S), NaN where t − ℓ < 1. Memory-hungry: small cases only.

    See docs/diagnostics.md §2.1.
    """
    J = _check_J(J)
    T, B, S, _ = J.shape
    lags = check_lags(lags, T)
    out = np.full((lags.size, T, B, S, S), np.nan, dtype=J.dtype)
    for t, W in progress_iter(iterate_products(J, lags[-1]), T, "transport", progress):
        ok = lags <= W.shape[0]
        out[ok, t - 1] = W[lags[ok] - 1]
    return out


def transport_diagonals(J, lags, progress=False):
    """diag M_{t,t−ℓ}: (n_lags, T, B, S), NaN where t − ℓ < 1 (docs/diagnostics.md §2.1)."""
    J = _check_J(J)
    T, B, S, _ = J.shape
    lags = check_lags(lags, T)
    out = np.full((lags.size, T, B, S), np.nan)
    for t, W in progress_iter(iterate_products(J, lags[-1]), T, "transport", progress):
        ok = lags <= W.shape[0]
        out[ok, t - 1] = np.diagonal(W[lags[ok] - 1], axis1=-2, axis2=-1)
    return out


def spectral_norms(M):
    """Largest singular value of each matrix of a stack (..., S, S) (exact, via SVD).

    See docs/diagnostics.md §2.1.
    """
    M = np.asarray(M)
    if M.shape[-1] == 0:
        return np.zeros(M.shape[:-2])
    return np.linalg.svd(M, compute_uv=False)[..., 0]


def transport_norms(J, lags, progress=False):
    """S_{t,k} = ‖M_{t,k}‖₂ (§2.8): (n_lags, T, B), NaN where t − ℓ < 1.

    See docs/diagnostics.md §2.1.
    """
    J = _check_J(J)
    T, B, S, _ = J.shape
    lags = check_lags(lags, T)
    out = np.full((lags.size, T, B), np.nan)
    for t, W in progress_iter(iterate_products(J, lags[-1]), T, "‖M‖₂", progress):
        ok = lags <= W.shape[0]
        if ok.any():
            out[ok, t - 1] = spectral_norms(W[lags[ok] - 1])
    return out


def offdiag_fraction(M):
    """‖M − diag M‖_F / ‖M‖_F for a stack (..., S, S) (§2.10; 0 for M = 0).

    See docs/diagnostics.md §2.1.
    """
    M = np.asarray(M, dtype=np.float64)
    tot = (M * M).sum(axis=(-2, -1))
    dg = np.diagonal(M, axis1=-2, axis2=-1)
    off = tot - (dg * dg).sum(axis=-1)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(tot > 0, np.sqrt(np.maximum(off, 0.0) / np.where(tot > 0, tot, 1.0)), 0.0)


def lstm_readout(trace):
    """e_t = o_t ⊙ (1 − tanh² c_t), t = 1 … T: (T, B, H) (docs/diagnostics.md §2.3)."""
    return f64(trace.gates["o"]) * (1.0 - np.tanh(f64(trace.c)[1:]) ** 2)


def neuron_diagonal(W, H, e_src=None):
    """Per-neuron exact diagonal from a stack of products W (..., S, S): diag W for S = H; for the
    LSTM (S = 2H, e_src = e_k of the source step broadcastable to (..., H)):
    diag(W_hh) ⊙ e_k + diag(W_hc).

    See docs/diagnostics.md §2.1.
    """
    dg = np.diagonal(W, axis1=-2, axis2=-1)
    if W.shape[-1] == H:
        return dg
    hc = np.diagonal(W[..., :H, H:], axis1=-2, axis2=-1)
    return dg[..., :H] * e_src + hc


def neuron_transport_diagonals(cell, params, x, lags, *, backend="numpy", chunk=8, progress=True,
                               with_offdiag=False):
    """Exact per-neuron counterpart of Γ for every t and lag: (n_lags, T, B, H) float64, NaN where
    t − ℓ < 1; with ``with_offdiag`` also ‖M − diag M‖_F/‖M‖_F (n_lags, T, B) (whole state matrix).
    Streams over sequences in chunks of ``chunk`` and over time (memory L·chunk·S²).

    See docs/diagnostics.md §2.1.
    """
    x = cell.check_x(x)
    chunk, progress = check_chunk(chunk), check_progress(progress)
    T, B, _ = x.shape
    H = cell.n_hidden
    lags = check_lags(lags, T)
    out = np.full((lags.size, T, B, H), np.nan)
    off = np.full((lags.size, T, B), np.nan) if with_offdiag else None
    sl = batch_slices(B, chunk)
    for s in progress_iter(sl, len(sl), "exact transports", progress):
        xs = x[:, s]
        J = to_numpy(cell.jacobians(params, xs, backend=backend))
        e = lstm_readout(cell.forward(params, xs, backend=backend)) if cell.kind.family == "lstm" else None
        for t, W in iterate_products(J, lags[-1]):
            ok = lags <= W.shape[0]
            if not ok.any():
                continue
            Wl = W[lags[ok] - 1]
            e_src = None if e is None else e[t - lags[ok] - 1]          # e_k, k = t − ℓ
            out[ok, t - 1, s] = neuron_diagonal(Wl, H, e_src)
            if with_offdiag:
                off[ok, t - 1, s] = offdiag_fraction(Wl)
    return (out, off) if with_offdiag else out
