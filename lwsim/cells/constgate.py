"""ConstGate, the leaky integrator (docs/cells.md §1.1, §1.7).

  h_t = (1 − s) h_{t−1} + s tanh(LN(W_x x_t + b_x + W_h h_{t−1})),  s ∈ (0, 1] fixed, not trained
  J_t = (1 − s) I + s diag(h̃') J_LN W_h,   leak d = 1 − s,   time constant τ = −1/log(1 − s)

With s = 1 it is the plain RNN. [A] uses s = 0.05 (default), [B] calls it α and uses 0.8.
"""
from ._leaky import LeakyCell
from .rnn import NoGate


class ConstGate(NoGate):
    """The fixed gate s: not trained and independent of h, so it adds no Jacobian or gradient term.

    See docs/cells.md §1.1.
    """
    name = "constgate"
    form = "const"
    options = ("s",)
    has_leak = True

    def value(self, xp, cfg, rec):
        return cfg.s


CELL = LeakyCell(ConstGate())
