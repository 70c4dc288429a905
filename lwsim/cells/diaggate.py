"""DiagGate, the multi-gate: one gate per neuron (docs/cells.md §1.1, §1.7).

  s_t = σ(W_s x_t + b_s + U_s h_{t−1}) ∈ (0, 1)^H,  U_s a full H×H matrix
  h_t = (1 − s_t) ⊙ h_{t−1} + s_t ⊙ h̃_t,   h̃_t = tanh(LN(W_x x_t + b_x + W_h h_{t−1}))
  J_t = diag(1 − s_t) + diag(s_t ⊙ h̃') J_LN W_h + diag((h̃_t − h_{t−1}) ⊙ s'_t) U_s,
  leak d_t = 1 − s_t (per neuron).
"""
from ._common import add_affine_grads, affine, logit, sigmoid
from ._leaky import LeakyCell


class DiagGate:
    """The per-neuron gate s_t = σ(W_s x_t + b_s + U_s h_{t−1}) of the diaggate cell.

    See docs/cells.md §1.1.
    """
    name = "diaggate"
    keys = ("W_s", "U_s")           # gate weights (the bias b_s is set by the init scheme)
    recurrent_keys = ("U_s",)
    trace_keys = ("s",)
    form = "per_unit"
    options = ()
    has_leak = True
    depends_on_state = True
    blocks = 1

    def shapes(self, cfg):
        H, D = cfg.n_hidden, cfg.n_in
        out = {"W_s": (H, D), "U_s": (H, H)}
        if cfg.bias:
            out["b_s"] = (H,)
        return out

    def biases(self, s0):
        return {"b_s": logit(s0)}

    def recurrent_weight(self, p):
        return p["U_s"]

    def recurrent_diagonal(self, p):
        return p["U_s"].diagonal()

    def forward(self, xp, p, cfg, x, h, rec):
        rec["s"] = sigmoid(xp, affine(p, "W_s", x, "U_s", h, "b_s"))
        return rec["s"]

    def value(self, xp, cfg, rec):
        return rec["s"]

    def backward(self, xp, p, cfg, x, h, rec, ds, grads):
        s = rec["s"]
        dpre = ds * s * (1.0 - s)
        add_affine_grads(grads, dpre, x, "W_s", h, "U_s", "b_s")
        return dpre @ p["U_s"]

    def jacobian_term(self, xp, p, cfg, h, rec):
        s = rec["s"]
        return ((rec["cand"] - h) * s * (1.0 - s))[:, :, None] * p["U_s"][None, :, :]

    def jacobian_diag_term(self, xp, p, cfg, h, rec):
        s = rec["s"]
        return (rec["cand"] - h) * s * (1.0 - s) * p["U_s"].diagonal()[None, :]

    def tangent(self, xp, p, cfg, x, h, rec, dh, dp):
        s = rec["s"]
        return s * (1.0 - s) * (affine(dp, "W_s", x, "U_s", h, "b_s") + dh @ p["U_s"].T)


CELL = LeakyCell(DiagGate())
