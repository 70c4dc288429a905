"""The candidate h̃_t = tanh(LN(a_t)), a_t = W_x x_t + b_x + W_h h_{t−1} (docs/cells.md §1.1, §1.4).

Shared by rnn, constgate, sharedgate and diaggate: forward, backward (VJP), Jacobian
diag(h̃') J_LN W_h (§1.7), its diagonal, and the forward-mode tangent (docs/diagnostics.md §2.7).
"""
from __future__ import annotations

from ._common import (add_affine_grads, affine, ln_backward, ln_forward, ln_jvp,
                      ln_times_matrix, ln_times_matrix_diag)


def shapes(cfg):
    H, D = cfg.n_hidden, cfg.n_in
    out = {"W_x": (H, D), "W_h": (H, H)}
    if cfg.bias:
        out["b_x"] = (H,)
    return out


def forward(xp, p, cfg, x, h):
    a = affine(p, "W_x", x, "W_h", h, "b_x")
    rec = {}
    if cfg.layernorm:
        a, rec["ln_ahat"], rec["ln_sig"] = ln_forward(xp, a, p["ln_gamma"], p["ln_beta"])
    rec["cand"] = xp.tanh(a)
    return rec


def backward(xp, p, cfg, x, h, rec, dcand, grads):
    """Accumulate parameter gradients from ∂L/∂h̃ and return its contribution to ∂L/∂h_{t−1}."""
    cand = rec["cand"]
    da = dcand * (1.0 - cand * cand)
    if cfg.layernorm:
        ahat, sig = rec["ln_ahat"], rec["ln_sig"]
        grads["ln_gamma"] += (da * ahat).sum(axis=0)
        grads["ln_beta"] += da.sum(axis=0)
        da = ln_backward(da, p["ln_gamma"], ahat, sig)
    add_affine_grads(grads, da, x, "W_x", h, "W_h", "b_x")
    return da @ p["W_h"]


def jacobian(xp, p, cfg, rec):
    """∂h̃_t/∂h_{t−1} = diag(h̃') J_LN W_h, (B, H, H)."""
    dcand = 1.0 - rec["cand"] ** 2
    if cfg.layernorm:
        m = ln_times_matrix(xp, p["W_h"], p["ln_gamma"], rec["ln_ahat"], rec["ln_sig"])
    else:
        m = p["W_h"][None, :, :]
    return dcand[:, :, None] * m


def jacobian_diag(xp, p, cfg, rec):
    dcand = 1.0 - rec["cand"] ** 2
    if cfg.layernorm:
        return dcand * ln_times_matrix_diag(p["W_h"], p["ln_gamma"], rec["ln_ahat"], rec["ln_sig"])
    return dcand * p["W_h"].diagonal()[None, :]


def tangent(xp, p, cfg, x, h, rec, dh, dp):
    """Forward-mode derivative of h̃_t along (dh_{t−1}, dθ)."""
    da = affine(dp, "W_x", x, "W_h", h, "b_x") + dh @ p["W_h"].T
    if cfg.layernorm:
        ahat, sig = rec["ln_ahat"], rec["ln_sig"]
        da = ln_jvp(da, p["ln_gamma"], ahat, sig) + dp["ln_gamma"] * ahat + dp["ln_beta"]
    return (1.0 - rec["cand"] ** 2) * da
