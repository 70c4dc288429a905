"""ConstGate, the leaky integrator (01-cells.md §1.1, §1.7).

  h_t = (1 − s) h_{t−1} + s tanh(LN(W_x x_t + b_x + W_h h_{t−1})),  s ∈ (0, 1] fixed, not trained
  J_t = (1 − s) I + s diag(h̃') J_LN W_h,   leak d = 1 − s,   time constant τ = −1/log(1 − s)

With s = 1 it is the plain RNN. [A] uses s = 0.05 (default), [B] calls it α and uses 0.8.
"""
from ._leaky import LeakyCell


class ConstGate:
    name = "constgate"
    keys = ()
    recurrent_keys = ()
    trace_keys = ()

    def shapes(self, cfg):
        return {}

    def forward(self, xp, p, cfg, x, h, rec):
        return cfg.s

    def value(self, xp, cfg, rec):
        return cfg.s

    def backward(self, xp, p, cfg, x, h, rec, ds, grads):
        return None     # s is not trained and does not depend on h

    def jacobian_term(self, xp, p, cfg, h, rec):
        return None

    def jacobian_diag_term(self, xp, p, cfg, h, rec):
        return None

    def tangent(self, xp, p, cfg, x, h, rec, dh, dp):
        return None


CELL = LeakyCell(ConstGate())
