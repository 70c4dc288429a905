"""SharedGate, one scalar gate per sequence and step (docs/cells.md §1.1, §1.7).

  s_t = σ(w_sᵀ x_t + b_s + u_sᵀ h_{t−1}) ∈ (0, 1)
  h_t = (1 − s_t) h_{t−1} + s_t h̃_t,   h̃_t = tanh(LN(W_x x_t + b_x + W_h h_{t−1}))
  J_t = (1 − s_t) I + s_t diag(h̃') J_LN W_h + s'_t (h̃_t − h_{t−1}) u_sᵀ,   leak d_t = 1 − s_t

s_t is stored with shape (B, 1) so that it broadcasts over the H units.
"""
from ._common import logit, sigmoid
from ._leaky import LeakyCell


class SharedGate:
    """The scalar gate s_t = σ(w_sᵀ x_t + b_s + u_sᵀ h_{t−1}) shared by all neurons.

    See docs/cells.md §1.1.
    """
    name = "sharedgate"
    keys = ("w_s", "u_s")           # gate weights (the bias b_s is set by the init scheme)
    recurrent_keys = ()
    trace_keys = ("s",)
    form = "shared"
    options = ()
    has_leak = True
    depends_on_state = True
    blocks = 0

    def shapes(self, cfg):
        out = {"w_s": (cfg.n_in,), "u_s": (cfg.n_hidden,)}
        if cfg.bias:
            out["b_s"] = (1,)
        return out

    def _pre(self, p, x, h):
        pre = x @ p["w_s"] + h @ p["u_s"]
        if "b_s" in p:
            pre = pre + p["b_s"]
        return pre[:, None]

    def biases(self, s0):
        return {"b_s": logit(s0)}

    def recurrent_weight(self, p):
        return p["u_s"][None, :]

    def recurrent_diagonal(self, p):
        return p["u_s"]

    def forward(self, xp, p, cfg, x, h, rec):
        rec["s"] = sigmoid(xp, self._pre(p, x, h))
        return rec["s"]

    def value(self, xp, cfg, rec):
        return rec["s"]

    def backward(self, xp, p, cfg, x, h, rec, ds, grads):
        s = rec["s"]
        dpre = ds.sum(axis=-1, keepdims=True) * s * (1.0 - s)      # (B, 1)
        grads["w_s"] += x.T @ dpre[:, 0]
        grads["u_s"] += h.T @ dpre[:, 0]
        if "b_s" in grads:
            grads["b_s"] += dpre.sum(axis=0)
        return dpre * p["u_s"][None, :]

    def jacobian_term(self, xp, p, cfg, h, rec):
        s = rec["s"]
        col = (rec["cand"] - h) * (s * (1.0 - s))
        return col[:, :, None] * p["u_s"][None, None, :]

    def jacobian_diag_term(self, xp, p, cfg, h, rec):
        s = rec["s"]
        return (rec["cand"] - h) * (s * (1.0 - s)) * p["u_s"][None, :]

    def tangent(self, xp, p, cfg, x, h, rec, dh, dp):
        s = rec["s"]
        dpre = self._pre(dp, x, h) + (dh @ p["u_s"])[:, None]
        return s * (1.0 - s) * dpre


CELL = LeakyCell(SharedGate())
