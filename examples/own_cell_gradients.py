"""Checking another implementation's gradients against lwsim (docs/cells.md §1.6–1.8).

Here the "other implementation" is a user's own NumPy Elman RNN with a hand-written BPTT —
replace :func:`my_loss_and_grad` by yours. The parameters are lwsim's dict (names and shapes of
docs/conventions.md: ``W_x`` (H, D), ``b_x`` (H), ``W_h`` (H, H), ``W_out`` (n_out, H),
``b_out`` (n_out)), so the same numbers go into both; lwsim's exact BPTT is the reference,
itself held to finite differences by ``tests/test_reference.py``.

Run: ``python examples/own_cell_gradients.py [tiny|small]``.
"""
from __future__ import annotations

import sys

import numpy as np

import lwsim

SIZES = {"tiny": dict(T=12, B=3, D=2, H=5), "small": dict(T=100, B=16, D=8, H=64)}


def my_loss_and_grad(p, x, y):
    """A user's Elman RNN: h_t = tanh(W_x x_t + b_x + W_h h_{t−1}), ŷ_t = W_out h_t + b_out,
    L = mean (ŷ − y)² over (t, b, output); gradients by hand-written BPTT."""
    T, B, _ = x.shape
    H = p["W_h"].shape[0]
    h = np.zeros((T + 1, B, H))
    for t in range(T):
        h[t + 1] = np.tanh(x[t] @ p["W_x"].T + p["b_x"] + h[t] @ p["W_h"].T)
    yhat = h[1:] @ p["W_out"].T + p["b_out"]
    err = 2.0 * (yhat - y) / yhat.size                     # ∂L/∂ŷ
    g = {k: np.zeros_like(v) for k, v in p.items()}
    g["W_out"] = np.einsum("tbo,tbh->oh", err, h[1:])
    g["b_out"] = err.sum(axis=(0, 1))
    dh = np.zeros((B, H))
    for t in reversed(range(T)):
        dh = dh + err[t] @ p["W_out"]                      # direct error at step t
        da = dh * (1.0 - h[t + 1] ** 2)                    # through tanh
        g["W_x"] += da.T @ x[t]
        g["b_x"] += da.sum(axis=0)
        g["W_h"] += da.T @ h[t]
        dh = da @ p["W_h"]                                 # to h_{t−1}: J_tᵀ δ
    return float(np.mean((yhat - y) ** 2)), g


def compare(cell, params, x, y, fn=my_loss_and_grad) -> dict:
    """Relative error of ``fn``'s loss and of each gradient against lwsim's exact BPTT."""
    loss_ref, g_ref = cell.loss_and_grad(params, x, y)
    loss, g = fn(params, x, y)
    rel = {k: float(np.linalg.norm(g[k] - g_ref[k]) / max(np.linalg.norm(g_ref[k]), 1e-300))
           for k in g_ref}
    rel["loss"] = abs(loss - loss_ref) / abs(loss_ref)
    return rel


def main(size: str = "tiny", seed: int = 0) -> dict:
    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, got {size!r}")
    c = SIZES[size]
    cell = lwsim.make_cell("rnn", n_in=c["D"], n_hidden=c["H"], n_out=1, dtype="float64")
    params = cell.init_params(seed=seed, scheme="torch")
    rng = np.random.default_rng(seed)
    x = rng.standard_normal((c["T"], c["B"], c["D"]))
    y = rng.standard_normal((c["T"], c["B"], 1))
    rel = compare(cell, params, x, y)
    for k, v in rel.items():
        print(f"{k:6s} relative error {v:.2e}")
    worst = max(rel.values())
    print("agree to round-off" if worst < 1e-10 else f"DISAGREE (worst {worst:.2e})")
    return rel


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tiny")
