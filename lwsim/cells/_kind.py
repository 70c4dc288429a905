"""What a cell kind declares (docs/cells.md §1.10, "Adding a cell").

One object per kind (``CELL`` in each cell file) subclasses :class:`CellKind`. The rest of lwsim
asks it questions (``cell.kind.has_leak``, ``cell.kind.numba_kernels`` …) and never compares cell
names: a new cell is its module, its kernel module (optional) and one ``lwsim.cells.register``.
"""
from __future__ import annotations


class CellKind:
    """Declarations and reference implementation of one kind of cell (docs/cells.md §1.10).

    Class attributes (the defaults suit a cell with state h alone, a leak and a gate reading h):

    name              the name ``make_cell`` takes
    has_cell_state    state (h, c) of size S = 2H (LSTM), else h alone, S = H
    options           the ``make_cell`` options owned by this cell ("s", "convention")
    has_leak          the trace has a leak d_t (§1.1; docs/diagnostics.md §2.3); False: only
                      exact transports apply (the rnn)
    gate_depends_on_state  a gate reads h_{t−1}, so J_t has a gate-derivative term B_t
                      (docs/diagnostics.md §2.10); False for rnn and constgate
    family            cells sharing one kernel module and one set of diagnostic formulas:
                      "leaky", "gru", "lstm", or None (a cell of its own)
    numba_kernels     dotted path of its backend="numba" kernel module, or None (no kernels:
                      backend "numba" and the fused trainer raise a ValueError naming the cell)
    cupy              backend="cupy" runs the reference (written against ``xp``) on the GPU
    author_b          one of the author's [B] models (conventions="author", docs/fidelity.md)
    blocks            H-row pre-activation blocks per step (the candidate plus each per-unit gate):
                      the per-step cost factor G of docs/presets.md "Cost model"
    torch_gates       gate order of its torch.nn state dict (cells/torch_io.py), None: no torch layout
    torch_fan_in      init scheme "torch" takes fan_in = H for every tensor (nn.GRU / nn.LSTM)

    Methods: ``param_shapes``, ``gate_keys``, ``recurrent_keys`` (of a cell's options ``cfg``),
    ``gate_biases`` (§1.5), ``numba_variant`` (the fused kernels' entry), and the reference
    (lwsim/reference.py): ``step``, ``step_backward`` (§1.8), ``step_jacobian`` and
    ``step_jacobian_diag`` (the Jacobian factors, §1.7), ``step_tangent``, ``leak``, ``gates``.
    """
    name = None
    has_cell_state = False
    options = ()
    has_leak = True
    gate_depends_on_state = True
    family = None
    numba_kernels = None
    cupy = True
    author_b = False
    blocks = 1
    torch_gates = None
    torch_fan_in = False

    def gate_biases(self, cfg, s0, f0):
        """{bias key: initial value} of the paper_a scheme (§1.5); other biases start at 0."""
        return {}

    def numba_variant(self, cfg):
        """The key of this cell's entry in the fused trainer's and the tangent kernels' tables."""
        return self.family

    # the reference: every kind implements these (see lwsim/cells/_leaky.py, gru.py, lstm.py)
    def param_shapes(self, cfg):
        raise NotImplementedError

    def gate_keys(self, cfg):
        raise NotImplementedError

    def recurrent_keys(self, cfg):
        raise NotImplementedError

    def step(self, xp, p, cfg, x, state):
        raise NotImplementedError

    def step_backward(self, xp, p, cfg, x, state, rec, dstate, grads):
        raise NotImplementedError

    def step_jacobian(self, xp, p, cfg, state, rec):
        raise NotImplementedError

    def step_jacobian_diag(self, xp, p, cfg, state, rec):
        raise NotImplementedError

    def step_tangent(self, xp, p, cfg, x, state, rec, dstate, dp):
        raise NotImplementedError

    def leak(self, xp, cfg, rec):
        raise NotImplementedError

    def gates(self, rec):
        return {}


REQUIRED = ("param_shapes", "gate_keys", "recurrent_keys", "step", "step_backward", "step_jacobian",
            "step_jacobian_diag", "step_tangent", "leak")


def no_kernels(cell, backend, what=None, fix="use backend='numpy'"):
    """The ValueError of a backend (or the fused trainer) that has no kernels for ``cell``."""
    who = f"backend {backend!r}" if what is None else what
    where = "" if what is None else f" (backend {backend!r})"
    return ValueError(f"{who} has no kernels for cell {cell.name!r}{where}; {fix}")
