"""Pieces shared by the cells: logistic gate, affine maps, LayerNorm (docs/cells.md §1.4, §1.7).

Everything here is written against an array module ``xp`` (NumPy or CuPy) and is vectorised
over the batch: vectors are (B, H), matrices (H, K) act on the last axis (``v @ W.T``).
"""
from __future__ import annotations

import numpy as np

LN_EPS = 1e-5


def logit(p):
    """log(p / (1 − p)) as a Python float: the gate-bias initialisation of docs/cells.md §1.5."""
    return float(np.log(p / (1.0 - p)))


def sigmoid(xp, z):
    # Split by sign so that exp never overflows (float32 safe).
    e = xp.exp(-xp.abs(z))
    return xp.where(z >= 0, 1.0 / (1.0 + e), e / (1.0 + e)).astype(z.dtype, copy=False)


def affine(p, W, x, U=None, h=None, b=None):
    """W x + U h + b for batched row vectors x (B, D), h (B, H); absent pieces are skipped."""
    out = x @ p[W].T
    if U is not None:
        out = out + h @ p[U].T
    if b is not None and b in p:
        out = out + p[b]
    return out


def add_affine_grads(grads, dpre, x, W, h=None, U=None, b=None):
    """Accumulate ∂L/∂W += dpreᵀ x, ∂L/∂U += dpreᵀ h, ∂L/∂b += Σ_batch dpre."""
    grads[W] += dpre.T @ x
    if U is not None:
        grads[U] += dpre.T @ h
    if b is not None and b in grads:
        grads[b] += dpre.sum(axis=0)


# ---------------------------------------------------------------- LayerNorm, §1.4
def ln_forward(xp, a, gamma, beta):
    """LN(a) = γ ⊙ (a − mean a)/σ_a + β, σ_a = sqrt(var a + 1e−5) (biased variance, over H).

    Returns (LN(a), â, σ_a) with â (B, H) and σ_a (B, 1) kept for the backward pass.
    """
    mu = a.mean(axis=-1, keepdims=True)
    centred = a - mu
    sig = xp.sqrt((centred * centred).mean(axis=-1, keepdims=True) + LN_EPS)
    ahat = centred / sig
    return gamma * ahat + beta, ahat, sig


def ln_backward(dy, gamma, ahat, sig):
    """Vector–Jacobian product J_LNᵀ dy, with J_LN = diag(γ)(1/σ)(I − 11ᵀ/H − â âᵀ/H)."""
    g = dy * gamma
    return (g - g.mean(axis=-1, keepdims=True)
            - ahat * (g * ahat).mean(axis=-1, keepdims=True)) / sig


def ln_jvp(v, gamma, ahat, sig):
    """Jacobian–vector product J_LN v (forward mode)."""
    return gamma * (v - v.mean(axis=-1, keepdims=True)
                    - ahat * (ahat * v).mean(axis=-1, keepdims=True)) / sig


def ln_times_matrix(xp, W, gamma, ahat, sig):
    """J_LN W for every batch element: (B, H, K). Costs O(B·H·K), never forms J_LN."""
    H = W.shape[0]
    proj = ahat @ W                                   # âᵀW, (B, K)
    inner = W[None, :, :] - W.mean(axis=0)[None, None, :] - ahat[:, :, None] * proj[:, None, :] / H
    return (gamma[None, :, None] / sig[:, :, None]) * inner


def ln_times_matrix_diag(W, gamma, ahat, sig):
    """diag(J_LN W) for square W: (B, H), O(B·H²)."""
    H = W.shape[0]
    proj = ahat @ W
    inner = W.diagonal()[None, :] - W.mean(axis=0)[None, :] - ahat * proj / H
    return gamma * inner / sig
