"""Work counts of a run, in floating-point operations and steps, shared by the studies' cost
models (docs/presets.md, "Cost model"): per-step forward cost of a cell, the number of lags, the
matched-statistic samples, and the [A] train-and-diagnose shape (``a_main_work``) that a new
experiment without a model of its own is estimated with. Imports no study."""
from __future__ import annotations

from ..cells.registry import KINDS
from .config import declared

CHUNK = 16                      # diagnostics' default sequence chunk (lwsim.diagnostics)


def gates(name):
    """The per-step cost factor G of the cell ``name``: its kind's ``blocks`` (H-row pre-activation
    blocks per step, docs/cells.md §1.10); 2, a diaggate's, for a name that is no cell."""
    kind = KINDS.get(name)
    return 2 if kind is None else kind.blocks


def fwd(c, cell=None):
    H, D = declared(c, "H", 32), declared(c, "D", 1)
    G = gates(cell or declared(c, "cell", "diaggate"))
    return 2.0 * G * H * (H + D) + 12.0 * G * H


def nlags(c):
    lags = declared(c, "lags", declared(c, "n_lags", 1))
    return len(lags) if isinstance(lags, (list, tuple)) else int(lags)


def a_main_work(c):
    """[A] main: training epochs, envelope + matched statistic, tail fits over the N grid."""
    T, H, f = c["T"], c["H"], fwd(c)
    epochs, n_train, n_val, n_diag = c["epochs"], c["n_train"], declared(c, "n_val", 0), c["n_diag"]
    L, K = nlags(c), declared(c, "K", 1)
    methods = declared(c, "tail_methods", ["auto"])
    return {"one": 1.0, "train": epochs * (3 * n_train + n_val) * T * f,
            "diag": n_diag * T * (2 * f + 6 * L * H) + n_diag * T * (2 * f + K * (3 * f + 8 * L * H)),
            "stats": L * samples(c) * (len(declared(c, "n_grid", [1])) + len(methods) * declared(c, "n_boot", 200) / 100),
            "steps": epochs * (3 * n_train + n_val) * T + n_diag * T * (4 + 3 * K)}


def samples(c):
    """Matched-statistic samples per lag: one per sequence, or per time point ("instantaneous")."""
    n = c["n_diag"] * (c["T"] if declared(c, "statistic") == "instantaneous" else 1)
    return min(n, c["fit_subsample"]) if declared(c, "fit_subsample") else n
