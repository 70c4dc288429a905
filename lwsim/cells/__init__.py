"""The six cells of docs/cells.md, one per file: rnn, constgate, sharedgate, diaggate, gru, lstm."""
from .base import BACKENDS, CELL_NAMES, SCHEMES, Cell, make_cell

__all__ = ["BACKENDS", "CELL_NAMES", "SCHEMES", "Cell", "make_cell"]
