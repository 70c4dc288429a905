"""The cell registry: name → kind object (docs/cells.md §1.10, "Adding a cell").

``make_cell(name, …)`` looks the name up here; ``register`` adds a kind (a :class:`CellKind`
instance) without editing lwsim, ``unregister`` removes it again (built-in cells stay).
"""
from __future__ import annotations

from .._validate import check_choice
from . import constgate, diaggate, gru, lstm, rnn, sharedgate
from ._kind import REQUIRED, CellKind

BUILTIN = (rnn.CELL, constgate.CELL, sharedgate.CELL, diaggate.CELL, gru.CELL, lstm.CELL)
KINDS = {k.name: k for k in BUILTIN}


def register(kind):
    """Add ``kind`` (a :class:`CellKind` instance) under ``kind.name``; returns it.

    ValueError if the name is taken or not an identifier, TypeError if ``kind`` is no CellKind or
    lacks one of the reference methods. See docs/cells.md §1.10.
    """
    if not isinstance(kind, CellKind):
        raise TypeError(f"kind must be a lwsim.cells.CellKind instance, got {type(kind).__name__}")
    name = kind.name
    if not isinstance(name, str) or not name.isidentifier():
        raise ValueError(f"kind.name must be an identifier string, got {name!r}")
    if name in KINDS:
        raise ValueError(f"a cell named {name!r} is already registered; unregister it first "
                         "(built-in cells cannot be replaced)")
    missing = [m for m in REQUIRED if getattr(type(kind), m) is getattr(CellKind, m)]
    if missing:
        raise TypeError(f"kind {name!r} does not implement {', '.join(missing)} (docs/cells.md §1.10)")
    KINDS[name] = kind
    return kind


def unregister(name):
    """Remove the cell ``name`` added by :func:`register` (ValueError for a built-in or unknown one;
    docs/cells.md §1.10)."""
    if any(k.name == name for k in BUILTIN):
        raise ValueError(f"{name!r} is a built-in cell and cannot be unregistered")
    if name not in KINDS:
        raise ValueError(f"no registered cell named {name!r}")
    del KINDS[name]


def cell_names():
    """The names ``make_cell`` accepts now: the built-in cells, then the registered ones
    (docs/cells.md §1.10)."""
    return tuple(KINDS)


def kind(name):
    """The kind object of the cell ``name`` (make_cell's ValueError if there is none;
    docs/cells.md §1.10)."""
    return KINDS[check_choice("name", name, KINDS)]
