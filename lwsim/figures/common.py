"""Helpers shared by the studies' figures and finding rules (docs/experiments.md §5.4–5.5): runs by
cell, stacked run arrays, a finite log–log fit, the seed-spread text, the growth of Ĥ_N over the
upper half of the N grid. Imports no study."""
from __future__ import annotations

import numpy as np

from .config import ATrained
from .presets import A_CELLS


def by_cell(runs, optimizer="adamw"):
    """{cell: [result, ...]} over seeds, for one optimizer."""
    out = {}
    for cfg, res in runs:
        if ATrained.read(cfg, "optimizer") == optimizer:
            out.setdefault(cfg["cell"], []).append(res)
    return {c: out[c] for c in A_CELLS if c in out}


def stack(results, key):
    return np.array([np.asarray(r[key], dtype=float) for r in results])


def _finite_logfit(x, y):
    ok = np.isfinite(x) & np.isfinite(y)
    if ok.sum() < 3 or np.ptp(x[ok]) == 0:
        return {"slope": None, "intercept": None, "r2": None, "n": int(ok.sum())}
    b, a = np.polyfit(x[ok], y[ok], 1)
    pred = a + b * x[ok]
    ss = ((y[ok] - y[ok].mean()) ** 2).sum()
    return {"slope": float(b), "intercept": float(a),
            "r2": float(1 - ((y[ok] - pred) ** 2).sum() / ss) if ss > 0 else None, "n": int(ok.sum())}


def _growth(h):
    """Ĥ_N growth over the upper half of the N grid (last minus middle)."""
    h = np.asarray(h, float)
    return float(h[-1] - h[len(h) // 2])


def spread_text(values, fmt=".3g"):
    """'mean ± sd (min…max, n seeds)' of the finite values; sd with ddof 1."""
    v = np.array([x for x in values if x is not None], float)
    v = v[np.isfinite(v)]
    if not v.size:
        return "n/a"
    sd = float(v.std(ddof=1)) if v.size > 1 else 0.0
    return f"{v.mean():{fmt}} ± {sd:{fmt}} ({v.min():{fmt}}…{v.max():{fmt}}, {v.size} seeds)"


def _fmt(v, fmt=".2f"):
    return "n/a" if v is None else f"{v:{fmt}}"
