"""GRU in two conventions (docs/cells.md §1.2, §1.7). Option ``convention``.

"cho" (default, [A]): reset before the recurrent matrix, update gate multiplies the candidate
  z_t = σ(W_z x_t + b_z + U_z h_{t−1}),  r_t = σ(W_r x_t + b_r + U_r h_{t−1})
  g_t = tanh(LN(W_g x_t + b_g + U_g (r_t ⊙ h_{t−1})))
  h_t = (1 − z_t) ⊙ h_{t−1} + z_t ⊙ g_t                                  leak d_t = 1 − z_t
  J_t = diag(1−z) + diag((g − h_{t−1}) ⊙ z') U_z + diag(z ⊙ g') J_LN U_g [diag(r) + diag(h_{t−1} ⊙ r') U_r]

"torch" (exactly torch.nn.GRU; no LayerNorm)
  r_t = σ(W_ir x_t + b_ir + W_hr h_{t−1} + b_hr),  z_t = σ(W_iz x_t + b_iz + W_hz h_{t−1} + b_hz)
  n_t = tanh(W_in x_t + b_in + r_t ⊙ (W_hn h_{t−1} + b_hn))
  h_t = (1 − z_t) ⊙ n_t + z_t ⊙ h_{t−1}                                  leak d_t = z_t
  J_t = diag(z) + diag((h_{t−1} − n) ⊙ z') W_hz + diag((1−z) ⊙ n') [diag(r) W_hn + diag((W_hn h_{t−1} + b_hn) ⊙ r') W_hr]
"""
from __future__ import annotations

from ._common import (add_affine_grads, affine, ln_backward, ln_forward, ln_jvp,
                      ln_times_matrix, logit, sigmoid)
from ._kind import CellKind


def _dsig(s):
    return s * (1.0 - s)


class GRUCell(CellKind):
    """The GRU cell in either convention (option ``convention``; docs/cells.md §1.2)."""
    name = "gru"
    has_cell_state = False
    options = ("convention",)
    family = "gru"
    numba_kernels = "lwsim.backends.numba.gru"
    blocks = 3                              # z, r, g (torch: r, z, n)
    torch_gates = "rzn"                     # nn.GRU, convention "torch" only
    torch_fan_in = True

    def gate_biases(self, cfg, s0, f0):
        # "torch": z is the retention, so its bias is logit(1 − s0)
        return {"b_z": logit(s0)} if cfg.convention == "cho" else {"b_iz": logit(1.0 - s0)}

    def numba_variant(self, cfg):
        return f"gru_{cfg.convention}"

    # ------------------------------------------------------------------ parameters
    def param_shapes(self, cfg):
        H, D = cfg.n_hidden, cfg.n_in
        if cfg.convention == "cho":
            out = {f"W_{k}": (H, D) for k in "zrg"}
            out.update({f"U_{k}": (H, H) for k in "zrg"})
            if cfg.bias:
                out.update({f"b_{k}": (H,) for k in "zrg"})
        else:
            out = {f"W_i{k}": (H, D) for k in "rzn"}
            out.update({f"W_h{k}": (H, H) for k in "rzn"})
            if cfg.bias:
                out.update({f"b_i{k}": (H,) for k in "rzn"})
                out.update({f"b_h{k}": (H,) for k in "rzn"})
        return out

    def gate_keys(self, cfg):
        return ("W_z", "U_z") if cfg.convention == "cho" else ("W_iz", "W_hz")

    def recurrent_keys(self, cfg):
        return ("U_z", "U_r", "U_g") if cfg.convention == "cho" else ("W_hr", "W_hz", "W_hn")

    def leak(self, xp, cfg, rec):
        return 1.0 - rec["z"] if cfg.convention == "cho" else rec["z"]

    def gates(self, rec):
        keys = ("z", "r", "g") if "g" in rec else ("r", "z", "n")
        return {k: rec[k] for k in keys}

    # ------------------------------------------------------------------ forward
    def step(self, xp, p, cfg, x, state):
        (h,) = state
        if cfg.convention == "cho":
            z = sigmoid(xp, affine(p, "W_z", x, "U_z", h, "b_z"))
            r = sigmoid(xp, affine(p, "W_r", x, "U_r", h, "b_r"))
            a = affine(p, "W_g", x, "U_g", r * h, "b_g")
            rec = {"z": z, "r": r}
            if cfg.layernorm:
                a, rec["ln_ahat"], rec["ln_sig"] = ln_forward(xp, a, p["ln_gamma"], p["ln_beta"])
            g = rec["g"] = xp.tanh(a)
            return (h + z * (g - h),), rec
        r = sigmoid(xp, affine(p, "W_ir", x, "W_hr", h, "b_ir") + p.get("b_hr", 0.0))
        z = sigmoid(xp, affine(p, "W_iz", x, "W_hz", h, "b_iz") + p.get("b_hz", 0.0))
        hn = affine(p, "W_hn", h, b="b_hn")
        n = xp.tanh(affine(p, "W_in", x, b="b_in") + r * hn)
        return (n + z * (h - n),), {"r": r, "z": z, "n": n, "hn": hn}

    # ------------------------------------------------------------------ exact BPTT step
    def step_backward(self, xp, p, cfg, x, state, rec, dstate, grads):
        (h,), (dh,) = state, dstate
        z = rec["z"]
        if cfg.convention == "cho":
            r, g = rec["r"], rec["g"]
            dh_prev = dh * (1.0 - z)
            dpz = dh * (g - h) * _dsig(z)
            add_affine_grads(grads, dpz, x, "W_z", h, "U_z", "b_z")
            da = dh * z * (1.0 - g * g)
            if cfg.layernorm:
                grads["ln_gamma"] += (da * rec["ln_ahat"]).sum(axis=0)
                grads["ln_beta"] += da.sum(axis=0)
                da = ln_backward(da, p["ln_gamma"], rec["ln_ahat"], rec["ln_sig"])
            add_affine_grads(grads, da, x, "W_g", r * h, "U_g", "b_g")
            drh = da @ p["U_g"]
            dpr = drh * h * _dsig(r)
            add_affine_grads(grads, dpr, x, "W_r", h, "U_r", "b_r")
            return (dh_prev + dpz @ p["U_z"] + drh * r + dpr @ p["U_r"],)
        r, n, hn = rec["r"], rec["n"], rec["hn"]
        dh_prev = dh * z
        dpz = dh * (h - n) * _dsig(z)
        dpn = dh * (1.0 - z) * (1.0 - n * n)
        dhn = dpn * r
        dpr = dpn * hn * _dsig(r)
        add_affine_grads(grads, dpn, x, "W_in", b="b_in")
        add_affine_grads(grads, dhn, h, "W_hn", b="b_hn")
        add_affine_grads(grads, dpr, x, "W_ir", h, "W_hr", "b_ir")
        add_affine_grads(grads, dpz, x, "W_iz", h, "W_hz", "b_iz")
        if "b_hr" in grads:
            grads["b_hr"] += dpr.sum(axis=0)
            grads["b_hz"] += dpz.sum(axis=0)
        return (dh_prev + dhn @ p["W_hn"] + dpr @ p["W_hr"] + dpz @ p["W_hz"],)

    # ------------------------------------------------------------------ Jacobians, §1.7
    def _cho_candidate_matrix(self, xp, p, cfg, rec):
        """K = J_LN U_g (B, H, H), or U_g broadcast without LN."""
        if cfg.layernorm:
            return ln_times_matrix(xp, p["U_g"], p["ln_gamma"], rec["ln_ahat"], rec["ln_sig"])
        return xp.broadcast_to(p["U_g"], (rec["z"].shape[0],) + p["U_g"].shape)

    def step_jacobian(self, xp, p, cfg, state, rec):
        (h,) = state
        z = rec["z"]
        H = h.shape[-1]
        idx = xp.arange(H)
        if cfg.convention == "cho":
            r, g = rec["r"], rec["g"]
            K = self._cho_candidate_matrix(xp, p, cfg, rec)
            inner = K * r[:, None, :] + (K * (h * _dsig(r))[:, None, :]) @ p["U_r"]
            J = ((g - h) * _dsig(z))[:, :, None] * p["U_z"] + (z * (1.0 - g * g))[:, :, None] * inner
            J[:, idx, idx] += 1.0 - z
            return J
        r, n, hn = rec["r"], rec["n"], rec["hn"]
        inner = r[:, :, None] * p["W_hn"] + (hn * _dsig(r))[:, :, None] * p["W_hr"]
        J = ((h - n) * _dsig(z))[:, :, None] * p["W_hz"] + ((1.0 - z) * (1.0 - n * n))[:, :, None] * inner
        J[:, idx, idx] += z
        return J

    def step_jacobian_diag(self, xp, p, cfg, state, rec):
        (h,) = state
        z = rec["z"]
        if cfg.convention == "cho":
            r, g = rec["r"], rec["g"]
            K = self._cho_candidate_matrix(xp, p, cfg, rec)
            Kdiag = xp.diagonal(K, axis1=1, axis2=2)
            # diag(K diag(h r') U_r)_q = Σ_j K_qj (h r')_j U_r[j, q]
            cross = xp.einsum("bqj,bj,jq->bq", K, h * _dsig(r), p["U_r"])
            return (1.0 - z + (g - h) * _dsig(z) * p["U_z"].diagonal()
                    + z * (1.0 - g * g) * (Kdiag * r + cross))
        r, n, hn = rec["r"], rec["n"], rec["hn"]
        inner = r * p["W_hn"].diagonal() + hn * _dsig(r) * p["W_hr"].diagonal()
        return z + (h - n) * _dsig(z) * p["W_hz"].diagonal() + (1.0 - z) * (1.0 - n * n) * inner

    # ------------------------------------------------------------------ forward-mode tangent
    def step_tangent(self, xp, p, cfg, x, state, rec, dstate, dp):
        (h,), (dh,) = state, dstate
        z = rec["z"]
        if cfg.convention == "cho":
            r, g = rec["r"], rec["g"]
            dz = _dsig(z) * (affine(dp, "W_z", x, "U_z", h, "b_z") + dh @ p["U_z"].T)
            dr = _dsig(r) * (affine(dp, "W_r", x, "U_r", h, "b_r") + dh @ p["U_r"].T)
            drh = dr * h + r * dh
            da = affine(dp, "W_g", x, "U_g", r * h, "b_g") + drh @ p["U_g"].T
            if cfg.layernorm:
                ahat = rec["ln_ahat"]
                da = ln_jvp(da, p["ln_gamma"], ahat, rec["ln_sig"]) + dp["ln_gamma"] * ahat + dp["ln_beta"]
            dg = (1.0 - g * g) * da
            return (dh + dz * (g - h) + z * (dg - dh),)
        r, n, hn = rec["r"], rec["n"], rec["hn"]
        dr = _dsig(r) * (affine(dp, "W_ir", x, "W_hr", h, "b_ir") + dp.get("b_hr", 0.0) + dh @ p["W_hr"].T)
        dz = _dsig(z) * (affine(dp, "W_iz", x, "W_hz", h, "b_iz") + dp.get("b_hz", 0.0) + dh @ p["W_hz"].T)
        dhn = affine(dp, "W_hn", h, b="b_hn") + dh @ p["W_hn"].T
        dn = (1.0 - n * n) * (affine(dp, "W_in", x, b="b_in") + dr * hn + r * dhn)
        return (dn + dz * (h - n) + z * (dh - dn),)


CELL = GRUCell()
