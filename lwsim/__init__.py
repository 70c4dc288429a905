"""lwsim: a framework-free reference simulator and theory checker for gated RNNs.

Documentation: docs/ (docs/cells.md … docs/experiments.md). Start with :func:`make_cell`.
Submodules: ``lwsim.tasks``, ``lwsim.optim``, ``lwsim.train`` (training loop), ``lwsim.stats``
(heavy-tail statistics), ``lwsim.diagnostics`` (transports, Γ, Λ, μ, envelopes, …),
``lwsim.figures`` (``python -m lwsim.figures``).
"""
from . import optim, tasks
from .cells import BACKENDS, CELL_NAMES, SCHEMES, Cell, make_cell
from .reference import Trace

__version__ = "0.1.0"
__all__ = ["BACKENDS", "CELL_NAMES", "SCHEMES", "Cell", "Trace", "make_cell", "optim", "tasks",
           "__version__"]
