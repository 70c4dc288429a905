"""A13: f(ℓ) and Ĥ_N per cell under conventions "lwsim" and "author" (docs/fidelity.md)."""
from __future__ import annotations

import numpy as np

from ...common import by_cell, stack
from ...style import band, color, subplots

CONVENTIONS = ("lwsim", "author")
LINES = {"lwsim": "-", "author": "--"}
FAST, SLOW = ("constgate", "sharedgate"), ("diaggate", "gru", "lstm")


def _growth(h):
    """Ĥ_N gained over the upper half of the N grid (the rule of findings 1–2)."""
    h = np.asarray(h, dtype=float)
    return float(h[-1] - h[len(h) // 2])


def summary(cells):
    """Per convention: each cell's decay law, λ, Ĥ_N growth and mean α̂ (seed means), and the
    A13 versions of the rules of findings 1, 2 and 4 (fast = ConstGate/SharedGate, slow = the rest)."""
    out = {}
    for conv in CONVENTIONS:
        per = {}
        for cell, runs in cells.items():
            dec = [r[f"decay_{conv}"] for r in runs if "error" not in r[f"decay_{conv}"]]
            per[cell] = {
                "lambda": float(np.mean([d["lambda"] for d in dec])) if dec else None,
                "selected_bic": [d["selected_bic"] for d in dec],
                "h_growth": float(np.mean([_growth(r[f"h_n_{conv}"]) for r in runs])),
                "alpha_mean": float(np.mean([np.mean(r[f"alpha_{conv}"]) for r in runs])),
            }
        fast = [per[c] for c in FAST if c in per]
        slow = [per[c] for c in SLOW if c in per]
        rules = {}
        if fast and slow and all(p["lambda"] is not None for p in fast + slow):
            rules["slow_cells_decay_slower"] = min(p["lambda"] for p in fast) > max(p["lambda"] for p in slow)
            rules["fast_cells_saturate"] = all(p["h_growth"] <= 0 for p in fast)
            rules["slow_cells_keep_growing"] = all(p["h_growth"] > 0 for p in slow)
            rules["heavier_tails_in_slow_cells"] = bool(np.mean([p["alpha_mean"] for p in fast])
                                                        > np.mean([p["alpha_mean"] for p in slow]))
        out[conv] = {"cells": per, "rules": rules}
    return out


def fig_a13(R):
    cells = by_cell(R["a_conventions"])
    fig, axes = subplots(2, ncols=2, size=(5.0, 3.6))
    data = {"cells": {}}
    for cell, runs in cells.items():
        lags = np.asarray(runs[0]["lags"], dtype=float)
        N = np.asarray(runs[0]["n_grid"], dtype=float)
        data["cells"][cell] = {"lags": lags, "N": N, "rel_r": [r["rel_r"] for r in runs],
                               "rel_gamma": [r["rel_gamma"] for r in runs]}
        for conv in CONVENTIONS:
            f = stack(runs, f"f_{conv}")
            fn = f / f[:, :1]                      # normalised: the author's f is per neuron (÷H)
            band(axes[0], lags, fn, label=f"{cell} {conv}", c=color(cell), ls=LINES[conv], logy=True)
            band(axes[1], N, stack(runs, f"h_n_{conv}"), label=f"{cell} {conv}", c=color(cell), ls=LINES[conv],
                 floor=0.0)
            data["cells"][cell][conv] = {"f": f.mean(0), "h_n": stack(runs, f"h_n_{conv}").mean(0),
                                         "alpha": stack(runs, f"alpha_{conv}").mean(0),
                                         "decay": [r[f"decay_{conv}"] for r in runs]}
    axes[0].set(yscale="log", xlabel="lag ℓ", ylabel="f(ℓ) / f(1)",
                title="A13 envelope: lwsim (solid) vs author (dashed)")
    axes[1].set(xscale="log", xlabel="N", ylabel=r"$\hat H_N$", title="A13 learnability window")
    axes[1].legend(fontsize=5, ncol=2)
    data["summary"] = summary(cells)
    return fig, data


FIGURES = {"A13": fig_a13}
