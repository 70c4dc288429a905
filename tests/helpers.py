"""Helpers shared by several test files (folded by tools/fold_test_helpers.py: the same
function was copied into each file that needed it)."""
from __future__ import annotations

import lwsim
import math
import numpy as np


def _b_cell(c, name):
    opts = {"bias": False, "readout": "last", "dtype": "float32"}
    if name == "constgate":
        opts["s"] = c.get("s", 0.8)
    return lwsim.make_cell(name, c["D"], c["H"], **opts)


def _edges(coll):
    """{x: (lowest y, highest y)} of a fill_between polygon: the band's lower and upper edges."""
    out = {}
    for x, y in coll.get_paths()[0].vertices:
        lo, hi = out.get(float(x), (math.inf, -math.inf))
        out[float(x)] = (min(lo, float(y)), max(hi, float(y)))
    return out


def _legend(ax):
    leg = ax.get_legend()
    return [t.get_text() for t in leg.get_texts()], leg.get_texts()[0].get_fontsize()


def _options(cell):
    """Everything a cell carries except its dtype."""
    return {k: v for k, v in vars(cell).items() if k != "dtype"}


def _product(J, b, t, ell):
    """M_{t,ℓ} = J_t J_{t−1} ⋯ J_{t−ℓ+1} with J[t−1] = ∂h_t/∂h_{t−1} (source k = t − ℓ)."""
    W = np.eye(J.shape[-1])
    for s in range(t - ell + 1, t + 1):
        W = J[s - 1, b] @ W
    return W


def _r6(rhos):
    return {"A11": {"table": [{"cell": "gru", "optimizer": "sgd", "seed": i, "spearman": r, "slope_ratio": 1.0,
                               "offdiag_mean": 0.1} for i, r in enumerate(rhos)]}}


def _rev(J, b, t, k):
    M = np.eye(J.shape[-1])
    for j in range(k + 1, t + 1):           # J_{k+1} ⋯ J_t: earliest on the left
        M = M @ J[j - 1, b]
    return M
