"""Plain Elman RNN (docs/cells.md §1.1, §1.7).

  a_t = W_x x_t + b_x + W_h h_{t−1},   h_t = tanh(LN(a_t))
  J_t = ∂h_t/∂h_{t−1} = diag(h̃') J_LN W_h

No gate and no leak: only exact transports apply to it (docs/diagnostics.md §2.3).
"""
from ._leaky import LeakyCell


class NoGate:
    """A gate with no parameters and no dependence on h: every gate term vanishes.

    See docs/cells.md §1.1.
    """
    name = "rnn"
    keys = ()
    recurrent_keys = ()
    trace_keys = ()
    form = "none"                        # s ≡ 1
    options = ()
    has_leak = False
    depends_on_state = False
    blocks = 0

    def shapes(self, cfg):
        return {}

    def biases(self, s0):
        return {}

    def recurrent_weight(self, p):
        """U with B_t = diag((h̃_t − h_{t−1}) ⊙ s'_t) U (docs/cells.md §1.7), None: no term."""
        return None

    def recurrent_diagonal(self, p):
        """diag of the gate term's U per unit (H,), None: no term."""
        return None

    def forward(self, xp, p, cfg, x, h, rec):
        return self.value(xp, cfg, rec)

    def value(self, xp, cfg, rec):
        return None                      # s ≡ 1: h_t = h̃_t

    def backward(self, xp, p, cfg, x, h, rec, ds, grads):
        return None

    def jacobian_term(self, xp, p, cfg, h, rec):
        return None

    def jacobian_diag_term(self, xp, p, cfg, h, rec):
        return None

    def tangent(self, xp, p, cfg, x, h, rec, dh, dp):
        return None


CELL = LeakyCell(NoGate())
