"""Shared plotting style: one colour per cell, the same in every figure (docs/experiments.md §5.4)."""
from __future__ import annotations

import matplotlib

matplotlib.use("Agg")                     # headless: figures are files
import matplotlib.pyplot as plt           # noqa: E402
import numpy as np                        # noqa: E402

CELL_COLORS = {"rnn": "#7f7f7f", "constgate": "#1f77b4", "sharedgate": "#ff7f0e",
               "diaggate": "#2ca02c", "gru": "#d62728", "lstm": "#9467bd"}
OPT_STYLES = {"adamw": "-", "adam": "-", "sgd": "--", "momentum": "-.", "rmsprop": ":"}


def color(cell):
    return CELL_COLORS.get(cell, "black")


def band(ax, x, ys, label=None, c=None, ls="-", logy=False):
    """Mean ± sd over seeds (rows of ys) as a line and a shaded band; returns (mean, sd)."""
    ys = np.asarray(ys, dtype=float)
    if ys.ndim == 1:
        ys = ys[None]
    with np.errstate(invalid="ignore"):
        mean, sd = np.nanmean(ys, axis=0), np.nanstd(ys, axis=0)
    ax.plot(x, mean, ls, color=c, label=label, lw=1.5)
    if ys.shape[0] > 1:
        lo = mean - sd
        if logy:
            lo = np.where(lo > 0, lo, mean / 2)
        ax.fill_between(x, lo, mean + sd, color=c, alpha=0.2, lw=0)
    return mean, sd


def subplots(n, ncols=3, size=(4.2, 3.3)):
    nrows = int(np.ceil(n / ncols))
    ncols = min(n, ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(size[0] * ncols, size[1] * nrows), squeeze=False)
    for ax in axes.ravel()[n:]:
        ax.set_visible(False)
    return fig, axes.ravel()[:n]
