"""The ``conventions`` keyword: "lwsim" (exact, the default) or "author" (docs/fidelity.md).

"author" reproduces, on purpose, the approximations of the author's public PyTorch code for [A]
(run_learnability_DGX.py, run_learnability_lstm_gru_DGX.py); every function that accepts the
keyword documents what its "author" branch changes, and docs/fidelity.md measures each effect.
"""
from __future__ import annotations

CONVENTIONS = ("lwsim", "author")


def check_conventions(conventions):
    """Validate the keyword; returns it. TypeError for a non-string, ValueError for an unknown name."""
    if not isinstance(conventions, str):
        raise TypeError(f"conventions must be a string, one of {CONVENTIONS}, got {type(conventions).__name__}")
    if conventions not in CONVENTIONS:
        raise ValueError(f"conventions must be one of {CONVENTIONS}, got {conventions!r}")
    return conventions


def author_cells():
    """The cells whose kind declares itself one of [B]'s author models (``kind.author_b``): the
    four leaky cells, plus any registered cell that says so (docs/cells.md §1.10)."""
    from .cells.registry import KINDS
    return tuple(name for name, kind in KINDS.items() if kind.author_b)


def need_author_cell(cell):
    """Return None if ``cell`` is one of the author's models, else raise ValueError.

    See docs/fidelity.md (used by lwsim.diagnostics.author_b and .expansion).
    """
    if not cell.kind.author_b:
        raise ValueError(f"conventions='author' exists for the author's models {author_cells()}, "
                         f"not for {cell.name!r}")
