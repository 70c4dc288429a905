"""The readable reference backend: a Python loop over time, vectorised over the batch.

Written once against an array module ``xp`` so that the same code runs on NumPy
(``backend="numpy"``) and CuPy (``backend="cupy"``). Every faster backend is checked against it.

- ``forward``: the trace of docs/cells.md §1.9 (states, gates, outputs) plus per-step records.
- ``loss_and_grad``: exact BPTT, δ_{t−1} = J_tᵀ δ_t + (direct error at t−1) (§1.8).
- ``jacobians`` / ``jacobian_diagonal``: the one-step Jacobians J_t = ∂h_t/∂h_{t−1} (§1.7).
- ``lag_gradients``: the per-lag decomposition g_ℓ of docs/diagnostics.md §2.2.
- ``tangents``: forward-mode v_t = (∂h_t/∂θ)[w] (docs/diagnostics.md §2.7).
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any


@dataclass
class Trace:
    """Result of a forward pass (docs/cells.md §1.9).

    h: (T+1, B, H) with h_0 = 0 first; c: (T+1, B, H) for the LSTM, else None;
    y: (T, B, n_out) read-outs (all steps are computed, also for readout "last");
    gates: dict of (T, B, ·) gate values; leak: (T, B, H) the leak d_t (None for rnn);
    cand: (T, B, H) the candidate h̃_t (rnn/constgate/sharedgate/diaggate), else None;
    records: every per-step quantity the backward pass needs, stacked over time.
    """
    h: Any
    c: Any
    y: Any
    gates: dict
    leak: Any
    cand: Any
    records: dict = field(repr=False, default_factory=dict)

    def state(self, t):
        """State before step t+1 (i.e. at time t), as the tuple the step functions take."""
        return (self.h[t],) if self.c is None else (self.h[t], self.c[t])


def _zero_state(xp, cell, B, dtype):
    H = cell.n_hidden
    z = xp.zeros((B, H), dtype=dtype)
    return (z,) if not cell.kind.has_cell_state else (z, xp.zeros((B, H), dtype=dtype))


def forward(xp, cell, p, x):
    kind, cfg = cell.kind, cell
    T, B, _ = x.shape
    state = _zero_state(xp, cell, B, x.dtype)
    hs, cs, recs = [state[0]], [state[-1]], []
    for t in range(T):
        state, rec = kind.step(xp, p, cfg, x[t], state)
        hs.append(state[0])
        cs.append(state[-1])
        recs.append(rec)
    records = {k: xp.stack([r[k] for r in recs]) for k in recs[0]}
    h = xp.stack(hs)
    y = h[1:] @ p["W_out"].T
    if "b_out" in p:
        y = y + p["b_out"]
    leak = None
    if kind.has_leak:
        leak = xp.stack([kind.leak(xp, cfg, r) for r in recs])
    return Trace(h=h, c=xp.stack(cs) if kind.has_cell_state else None, y=y,
                 gates=kind.gates(records), leak=leak, cand=records.get("cand"),
                 records=records)


def _record(trace, t):
    return {k: v[t] for k, v in trace.records.items()}


def output_errors(xp, cell, trace, y, mask):
    """L and ∂L/∂ŷ (T, B, n_out) for the mean-squared loss of docs/cells.md §1.6."""
    diff = trace.y - y
    if cell.readout == "last":
        weight = xp.zeros(diff.shape[0], dtype=diff.dtype)
        weight[-1] = 1.0
    elif mask is not None:
        weight = xp.asarray(mask, dtype=diff.dtype)
    else:
        weight = xp.ones(diff.shape[0], dtype=diff.dtype)
    count = weight.sum() * diff.shape[1] * diff.shape[2]
    w = weight[:, None, None]
    loss = (w * diff * diff).sum() / count
    return loss, 2.0 * w * diff / count


def _readout_grads(xp, trace, dy, grads):
    grads["W_out"] += xp.einsum("tbo,tbh->oh", dy, trace.h[1:])
    if "b_out" in grads:
        grads["b_out"] += dy.sum(axis=(0, 1))


def _direct_errors(trace, dy, p):
    """δ_t = ∂L_t/∂h_t = (∂L/∂ŷ_t) W_out, (T, B, H)."""
    return dy @ p["W_out"]


def _zeros_like_params(xp, p):
    return {k: xp.zeros_like(v) for k, v in p.items()}


def loss_and_grad(xp, cell, p, x, y, mask=None):
    trace = forward(xp, cell, p, x)
    loss, dy = output_errors(xp, cell, trace, y, mask)
    grads = _zeros_like_params(xp, p)
    _readout_grads(xp, trace, dy, grads)
    delta = _direct_errors(trace, dy, p)
    T = x.shape[0]
    carry = tuple(xp.zeros_like(s) for s in trace.state(0))
    for t in range(T - 1, -1, -1):
        dstate = (carry[0] + delta[t],) + carry[1:]
        carry = cell.kind.step_backward(xp, p, cell, x[t], trace.state(t), _record(trace, t),
                                        dstate, grads)
    return loss, grads


def lag_gradients(xp, cell, p, x, y, mask=None, max_lag=None):
    """Per-lag gradients g_ℓ = Σ_t δ_tᵀ M_{t,t−ℓ} B_{t−ℓ} (docs/diagnostics.md §2.2), ℓ = 0 … max_lag.

    Returns (loss, list of dicts). The read-out parameters (W_out, b_out) have no transport:
    their whole gradient is put at ℓ = 0, so that Σ_ℓ g_ℓ equals BPTT for every key.
    Cost O(T · max_lag) backward steps: a diagnostic, not a training path.
    """
    trace = forward(xp, cell, p, x)
    loss, dy = output_errors(xp, cell, trace, y, mask)
    delta = _direct_errors(trace, dy, p)
    T = x.shape[0]
    L = T - 1 if max_lag is None else min(max_lag, T - 1)
    per_lag = [_zeros_like_params(xp, p) for _ in range(L + 1)]
    _readout_grads(xp, trace, dy, per_lag[0])
    for t in range(T):
        dstate = (delta[t],) + tuple(xp.zeros_like(s) for s in trace.state(0)[1:])
        for lag in range(min(t, L) + 1):
            k = t - lag
            dstate = cell.kind.step_backward(xp, p, cell, x[k], trace.state(k), _record(trace, k),
                                             dstate, per_lag[lag])
    return loss, per_lag


def jacobians(xp, cell, p, x, diagonal=False):
    trace = forward(xp, cell, p, x)
    step = cell.kind.step_jacobian_diag if diagonal else cell.kind.step_jacobian
    return xp.stack([step(xp, p, cell, trace.state(t), _record(trace, t))
                     for t in range(x.shape[0])])


def tangents(xp, cell, p, x, dp):
    """v_t = (∂h_t/∂θ)[dp] for t = 0 … T (v_0 = 0): (T+1, B, S), S = H (2H for the LSTM: (h, c))."""
    trace = forward(xp, cell, p, x)
    v = tuple(xp.zeros_like(s) for s in trace.state(0))
    out = [xp.concatenate(v, axis=-1)]
    for t in range(x.shape[0]):
        v = cell.kind.step_tangent(xp, p, cell, x[t], trace.state(t), _record(trace, t), v, dp)
        out.append(xp.concatenate(v, axis=-1))
    return xp.stack(out)
