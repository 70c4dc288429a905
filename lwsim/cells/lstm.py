"""LSTM: torch.nn.LSTM equations plus optional LayerNorm on g (docs/cells.md §1.3, §1.7).

  i_t, f_t, o_t = σ(W_· x_t + b_· + U_· h_{t−1}),   g_t = tanh(LN(W_g x_t + b_g + U_g h_{t−1}))
  c_t = f_t ⊙ c_{t−1} + i_t ⊙ g_t,   h_t = o_t ⊙ tanh(c_t)            cell-path leak d_t = f_t

State (h, c); the exact Jacobian is 2H×2H with blocks, e_t = o_t ⊙ (1 − tanh² c_t):
  ∂c_t/∂h_{t−1} = diag(c_{t−1} ⊙ f') U_f + diag(g ⊙ i') U_i + diag(i ⊙ g') J_LN U_g
  ∂c_t/∂c_{t−1} = diag(f)
  ∂h_t/∂h_{t−1} = diag(tanh(c_t) ⊙ o') U_o + diag(e_t) ∂c_t/∂h_{t−1}
  ∂h_t/∂c_{t−1} = diag(e_t ⊙ f)
ordered [[∂h/∂h, ∂h/∂c], [∂c/∂h, ∂c/∂c]].
"""
from __future__ import annotations

from ._common import (add_affine_grads, affine, ln_backward, ln_forward, ln_jvp,
                      ln_times_matrix, ln_times_matrix_diag, logit, sigmoid)
from ._kind import CellKind

GATES = "ifo"


class LSTMCell(CellKind):
    """The LSTM cell with state (h, c) (docs/cells.md §1.3)."""
    name = "lstm"
    has_cell_state = True
    family = "lstm"
    numba_kernels = "lwsim.backends.numba.lstm"
    blocks = 4                              # i, f, g, o
    torch_gates = "ifgo"                    # nn.LSTM
    torch_fan_in = True

    def gate_biases(self, cfg, s0, f0):
        return {"b_f": logit(f0)}

    def param_shapes(self, cfg):
        H, D = cfg.n_hidden, cfg.n_in
        out = {f"W_{k}": (H, D) for k in "ifgo"}
        out.update({f"U_{k}": (H, H) for k in "ifgo"})
        if cfg.bias:
            out.update({f"b_{k}": (H,) for k in "ifgo"})
        return out

    def gate_keys(self, cfg):
        return ("W_f", "U_f")

    def recurrent_keys(self, cfg):
        return ("U_i", "U_f", "U_g", "U_o")

    def leak(self, xp, cfg, rec):
        return rec["f"]

    def gates(self, rec):
        return {k: rec[k] for k in "ifgo"}

    def step(self, xp, p, cfg, x, state):
        h, c = state
        rec = {k: sigmoid(xp, affine(p, f"W_{k}", x, f"U_{k}", h, f"b_{k}")) for k in GATES}
        a = affine(p, "W_g", x, "U_g", h, "b_g")
        if cfg.layernorm:
            a, rec["ln_ahat"], rec["ln_sig"] = ln_forward(xp, a, p["ln_gamma"], p["ln_beta"])
        rec["g"] = xp.tanh(a)
        c_new = rec["f"] * c + rec["i"] * rec["g"]
        rec["tc"] = xp.tanh(c_new)
        return (rec["o"] * rec["tc"], c_new), rec

    def step_backward(self, xp, p, cfg, x, state, rec, dstate, grads):
        h, c = state
        dh, dc = dstate
        i, f, g, o, tc = rec["i"], rec["f"], rec["g"], rec["o"], rec["tc"]
        dct = dc + dh * o * (1.0 - tc * tc)
        dpre = {"i": dct * g * i * (1.0 - i), "f": dct * c * f * (1.0 - f),
                "o": dh * tc * o * (1.0 - o)}
        da = dct * i * (1.0 - g * g)
        if cfg.layernorm:
            grads["ln_gamma"] += (da * rec["ln_ahat"]).sum(axis=0)
            grads["ln_beta"] += da.sum(axis=0)
            da = ln_backward(da, p["ln_gamma"], rec["ln_ahat"], rec["ln_sig"])
        dpre["g"] = da
        dh_prev = 0.0
        for k, d in dpre.items():
            add_affine_grads(grads, d, x, f"W_{k}", h, f"U_{k}", f"b_{k}")
            dh_prev = dh_prev + d @ p[f"U_{k}"]
        return dh_prev, dct * f

    def _dc_dh(self, xp, p, cfg, state, rec):
        h, c = state
        i, f, g = rec["i"], rec["f"], rec["g"]
        if cfg.layernorm:
            K = ln_times_matrix(xp, p["U_g"], p["ln_gamma"], rec["ln_ahat"], rec["ln_sig"])
        else:
            K = p["U_g"][None, :, :]
        return ((c * f * (1.0 - f))[:, :, None] * p["U_f"] + (g * i * (1.0 - i))[:, :, None] * p["U_i"]
                + (i * (1.0 - g * g))[:, :, None] * K)

    def step_jacobian(self, xp, p, cfg, state, rec):
        h, _ = state
        B, H = h.shape
        f, o, tc = rec["f"], rec["o"], rec["tc"]
        e = o * (1.0 - tc * tc)
        dcdh = self._dc_dh(xp, p, cfg, state, rec)
        J = xp.zeros((B, 2 * H, 2 * H), dtype=h.dtype)
        idx = xp.arange(H)
        J[:, :H, :H] = (tc * o * (1.0 - o))[:, :, None] * p["U_o"] + e[:, :, None] * dcdh
        J[:, idx, H + idx] = e * f
        J[:, H:, :H] = dcdh
        J[:, H + idx, H + idx] = f
        return J

    def step_jacobian_diag(self, xp, p, cfg, state, rec):
        h, c = state
        i, f, g, o, tc = rec["i"], rec["f"], rec["g"], rec["o"], rec["tc"]
        if cfg.layernorm:
            kd = ln_times_matrix_diag(p["U_g"], p["ln_gamma"], rec["ln_ahat"], rec["ln_sig"])
        else:
            kd = p["U_g"].diagonal()[None, :]
        dcdh = (c * f * (1.0 - f) * p["U_f"].diagonal() + g * i * (1.0 - i) * p["U_i"].diagonal()
                + i * (1.0 - g * g) * kd)
        dhdh = tc * o * (1.0 - o) * p["U_o"].diagonal() + o * (1.0 - tc * tc) * dcdh
        return xp.concatenate([dhdh, f * xp.ones_like(dhdh)], axis=-1)

    def step_tangent(self, xp, p, cfg, x, state, rec, dstate, dp):
        h, c = state
        dh, dc = dstate
        i, f, g, o, tc = rec["i"], rec["f"], rec["g"], rec["o"], rec["tc"]
        d = {k: rec[k] * (1.0 - rec[k]) * (affine(dp, f"W_{k}", x, f"U_{k}", h, f"b_{k}")
                                           + dh @ p[f"U_{k}"].T) for k in GATES}
        da = affine(dp, "W_g", x, "U_g", h, "b_g") + dh @ p["U_g"].T
        if cfg.layernorm:
            ahat = rec["ln_ahat"]
            da = ln_jvp(da, p["ln_gamma"], ahat, rec["ln_sig"]) + dp["ln_gamma"] * ahat + dp["ln_beta"]
        dg = (1.0 - g * g) * da
        dc_new = d["f"] * c + f * dc + d["i"] * g + i * dg
        return d["o"] * tc + o * (1.0 - tc * tc) * dc_new, dc_new


CELL = LSTMCell()
