"""A15: the learned window H^beh_N against the diagnostic window Ĥ_N (docs/experiments.md §5.6).

Panels 1–5 (one per cell): H^beh_N (solid), its smooth version H^beh_½ (crosses) and Ĥ_N under
each null (black; dashed, dash-dotted, dotted: one style per null) against N, mean ± sd over seeds. Last
panel: Ĥ_N against H^beh_N over every cell × N × seed, colour = cell, marker = null (one legend
entry per cell and per null). The JSON holds every point and finding 9's numbers.
"""
from __future__ import annotations

import numpy as np

from lwsim import stats

from ...presets import A_CELLS
from ...style import band, color, subplots
from .findings import growth_law, tracking

NULL_STYLES = ("--", "-.", ":")
NULL_MARKERS = ("o", "^", "s", "D")


def nulls_of(runs):
    """The nulls present in every run, in the order a_windows returned them."""
    names = list(runs[0][1]["nulls"])
    return [n for n in names if all(n in res["nulls"] for _, res in runs)]


def collect(runs):
    """{"nulls", "cells": {cell: per-N seed arrays and summaries}, "scatter": [point, ...]} from
    the (config, result) pairs of a_behaviour (finding 9 reads this structure)."""
    nulls = nulls_of(runs)
    scatter, by = [], {}
    for cfg, r in runs:
        pt = {"cell": cfg["cell"], "seed": int(cfg["seed"]), "N": float(cfg["N"]), "h_beh": float(r["h_beh"]),
              "h_beh_smooth": float(r["h_beh_smooth"]),
              "h_diag": {n: float(r[f"h_diag_{n}"]) for n in nulls}}
        hp = {f"{n}/{q}": float(r[f"h_diag_{n}_{q}"]) for n in ("lag", "full")
              for q in ("init", "early") if f"h_diag_{n}_{q}" in r}
        if hp:              # Ĥ_N at the initial parameters and the early checkpoint (issue 30 item 6)
            pt["h_diag_points"] = hp
        scatter.append(pt)
        by.setdefault(cfg["cell"], {}).setdefault(pt["seed"], {})[pt["N"]] = (pt, r)
    cells = {}
    for cell in [c for c in A_CELLS if c in by] + sorted(set(by) - set(A_CELLS)):
        seeds = sorted(by[cell])
        N = sorted(set.intersection(*(set(by[cell][s]) for s in seeds)))
        arr = lambda k: np.array([[by[cell][s][n][0][k] for n in N] for s in seeds])     # noqa: E731
        hb, hs = arr("h_beh"), arr("h_beh_smooth")
        d = {"N": N, "seeds": seeds, "h_beh_mean": hb.mean(0), "h_beh_sd": hb.std(0), "h_beh_seeds": hb,
             "h_beh_seeds_last": hb[:, -1], "h_beh_smooth_mean": hs.mean(0), "h_beh_smooth_seeds": hs,
             "growth": growth_law(N, hb.mean(0)), "growth_smooth": growth_law(N, hs.mean(0)), "h_diag": {}}
        for null in nulls:
            hd = np.array([[by[cell][s][n][0]["h_diag"][null] for n in N] for s in seeds])
            d["h_diag"][null] = {"mean": hd.mean(0), "sd": hd.std(0), "seeds": hd, "seeds_last": hd[:, -1]}
        d["envelope"] = envelope_law([by[cell][s][N[-1]][1] for s in seeds])
        cells[cell] = d
    return {"nulls": nulls, "cells": cells, "scatter": scatter}


def envelope_law(results):
    """Decay law of the envelope at the largest N: BIC choice on the seed-mean f (as A2) and per seed."""
    have = [r for r in results if "f" in r]
    out = {"per_seed_selected_bic": [r["decay"].get("selected_bic") for r in have if "decay" in r]}
    if not have:
        return out
    lags = np.asarray(have[0]["lags"], float)
    try:
        dec = stats.fit_decay(lags, np.mean([np.asarray(r["f"], float) for r in have], axis=0))
        out.update(selected_bic=dec.selected_bic, selected=dec.selected,
                   lam=float(dec.fits["exponential"].params["lambda"]), beta=float(dec.fits["power"].params["beta"]))
    except ValueError as exc:
        out["error"] = str(exc)
    return out


def fig_a15(R):
    data = collect(R["a_behaviour"])
    nulls, cells = data["nulls"], data["cells"]
    fig, axes = subplots(len(cells) + 1, ncols=3, size=(4.0, 3.2))
    for ax, (cell, d) in zip(axes, cells.items()):
        N = np.asarray(d["N"], float)
        band(ax, N, d["h_beh_seeds"], label=r"$H^{beh}_N$", c=color(cell), floor=0.0)   # windows ≥ 0
        ax.plot(N, d["h_beh_smooth_mean"], "x", color=color(cell), ms=5, label=r"$H^{beh}_{1/2}$")
        for i, null in enumerate(nulls):
            band(ax, N, d["h_diag"][null]["seeds"], label=rf"$\hat H_N$ ({null})", c="black",
                 ls=NULL_STYLES[i % len(NULL_STYLES)], floor=0.0, lw=1.2,
                 marker=NULL_MARKERS[i % len(NULL_MARKERS)], ms=3.5, mfc="none", zorder=3 + i)
            # each null its own marker, later ones on top: the author null, often equal to lag, stays visible
        ax.set(xscale="log", xlabel="N (training sequences)", ylabel="window (lags)", title=f"A15 {cell}")
        ax.legend(fontsize=6)
    ax = axes[-1]
    for p in data["scatter"]:
        for i, null in enumerate(nulls):
            ax.scatter(p["h_beh"], p["h_diag"][null], s=14, color=color(p["cell"]), alpha=0.7,
                       marker=NULL_MARKERS[i % len(NULL_MARKERS)], lw=0)
    lim = max([1.0] + [p["h_beh"] for p in data["scatter"]] + [v for p in data["scatter"] for v in p["h_diag"].values()])
    ax.plot([0, lim], [0, lim], color="0.6", lw=0.8)
    from matplotlib.lines import Line2D
    handles = [Line2D([], [], ls="", marker="o", color=color(c), label=c) for c in cells]
    handles += [Line2D([], [], ls="", marker=NULL_MARKERS[i % len(NULL_MARKERS)], color="black", label=f"null {n}")
                for i, n in enumerate(nulls)]
    ax.legend(handles=handles, fontsize=6)
    ax.set(xlabel=r"learned $H^{beh}_N$", ylabel=r"diagnostic $\hat H_N$", title="A15 all cells × N × seeds")
    data["tracking"] = tracking(data, "h_beh")
    data["tracking_smooth"] = tracking(data, "h_beh_smooth")
    return fig, data


FIGURES = {"A15": fig_a15}
