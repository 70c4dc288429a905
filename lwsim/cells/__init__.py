"""The six cells of docs/cells.md, one per file: rnn, constgate, sharedgate, diaggate, gru, lstm.

A new cell: subclass :class:`CellKind` and ``register`` it (docs/cells.md §1.10).
"""
from ._kind import CellKind
from .base import BACKENDS, CELL_NAMES, SCHEMES, Cell, make_cell
from .registry import cell_names, kind, register, unregister

__all__ = ["BACKENDS", "CELL_NAMES", "SCHEMES", "Cell", "CellKind", "cell_names", "kind", "make_cell",
           "register", "unregister"]
