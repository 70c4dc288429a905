"""The gated-leak family h_t = (1 − s_t) ⊙ h_{t−1} + s_t ⊙ h̃_t (docs/cells.md §1.1, §1.7).

rnn (s ≡ 1), constgate (s fixed), sharedgate (scalar s_t) and diaggate (s_t ∈ (0,1)^H) differ only
in their gate; each cell file supplies a ``Gate`` with forward / backward / Jacobian term /
tangent, and this module assembles step, exact BPTT step, Jacobian and tangent from it:

  J_t = diag(1 − s_t) + diag(s_t ⊙ h̃') J_LN W_h + [gate term, diag((h̃_t − h_{t−1}) ⊙ s'_t) U_s].
"""
from __future__ import annotations

from . import _candidate
from ._kind import CellKind


class LeakyCell(CellKind):
    """Cell built from the candidate and a gate (see the cell files for the gate equations).

    The gate declares what differs between the four cells (docs/cells.md §1.10): ``form``
    ("none", "const", "shared", "per_unit": the numba kernel's mode), ``has_leak``,
    ``depends_on_state``, ``blocks`` (its H-row pre-activation blocks), ``options``, its bias init
    and its recurrent weight (the gate-derivative term of the Jacobian).
    """
    family = "leaky"
    numba_kernels = "lwsim.backends.numba.leaky"
    author_b = True                         # [B]'s author models are the four leaky cells

    def __init__(self, gate):
        self.gate = gate
        self.name = gate.name
        self.options = gate.options
        self.has_leak = gate.has_leak
        self.gate_depends_on_state = gate.depends_on_state
        self.blocks = 1 + gate.blocks       # the candidate's block plus the gate's

    def gate_biases(self, cfg, s0, f0):
        return self.gate.biases(s0)

    def gate_keys(self, cfg):
        return self.gate.keys

    def recurrent_keys(self, cfg):
        return ("W_h",) + self.gate.recurrent_keys

    def param_shapes(self, cfg):
        shapes = _candidate.shapes(cfg)
        shapes.update(self.gate.shapes(cfg))
        return shapes

    def step(self, xp, p, cfg, x, state):
        (h,) = state
        rec = _candidate.forward(xp, p, cfg, x, h)
        s = self.gate.forward(xp, p, cfg, x, h, rec)
        cand = rec["cand"]
        h_new = cand if s is None else h + s * (cand - h)
        return (h_new,), rec

    def step_backward(self, xp, p, cfg, x, state, rec, dstate, grads):
        (h,), (dh,) = state, dstate
        s = self.gate.value(xp, cfg, rec)
        if s is None:
            return (_candidate.backward(xp, p, cfg, x, h, rec, dh, grads),)
        dh_prev = dh * (1.0 - s)
        dh_prev = dh_prev + _candidate.backward(xp, p, cfg, x, h, rec, dh * s, grads)
        ds = dh * (rec["cand"] - h)
        dh_gate = self.gate.backward(xp, p, cfg, x, h, rec, ds, grads)
        if dh_gate is not None:
            dh_prev = dh_prev + dh_gate
        return (dh_prev,)

    def step_jacobian(self, xp, p, cfg, state, rec):
        (h,) = state
        jc = _candidate.jacobian(xp, p, cfg, rec)
        s = self.gate.value(xp, cfg, rec)
        if s is None:
            return jc
        H = h.shape[-1]
        s_full = s * xp.ones_like(h)
        J = s_full[:, :, None] * jc
        idx = xp.arange(H)
        J[:, idx, idx] += 1.0 - s_full
        term = self.gate.jacobian_term(xp, p, cfg, h, rec)
        return J if term is None else J + term

    def step_jacobian_diag(self, xp, p, cfg, state, rec):
        (h,) = state
        dc = _candidate.jacobian_diag(xp, p, cfg, rec)
        s = self.gate.value(xp, cfg, rec)
        if s is None:
            return dc
        out = (1.0 - s) + s * dc
        term = self.gate.jacobian_diag_term(xp, p, cfg, h, rec)
        return out if term is None else out + term

    def step_tangent(self, xp, p, cfg, x, state, rec, dstate, dp):
        (h,), (dh,) = state, dstate
        dcand = _candidate.tangent(xp, p, cfg, x, h, rec, dh, dp)
        s = self.gate.value(xp, cfg, rec)
        if s is None:
            return (dcand,)
        out = dh * (1.0 - s) + s * dcand
        ds = self.gate.tangent(xp, p, cfg, x, h, rec, dh, dp)
        if ds is not None:
            out = out + ds * (rec["cand"] - h)
        return (out,)

    def leak(self, xp, cfg, rec):
        s = self.gate.value(xp, cfg, rec)
        if s is None:
            return None
        return (1.0 - s) * xp.ones_like(rec["cand"])

    def gates(self, rec):
        return {k: rec[k] for k in self.gate.trace_keys}
