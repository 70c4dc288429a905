"""Optimizer comparison (A10, docs/experiments.md §5.4): the [A] main training repeated with other
optimizers on the preset's ``compare_seeds``; A10 sets their envelopes and time-scale medians
beside AdamW's (the main grid's runs). No finding of its own."""
from __future__ import annotations

import numpy as np

from ..common import stack
from ..presets import A_CELLS
from ..run import Run
from ..study import Study
from ..style import band, color, subplots
from .main.sizes import SIZES as MAIN_SIZES
from .main.tidy import group_rows

# The optimizers compared with AdamW and the seeds they train on, per preset (docs/presets.md);
# every other setting is the main grid's.
SIZES = {"a_compare": {"smoke": dict(optimizers=["sgd"], seeds=[212]),
                       "quick": dict(optimizers=["sgd", "rmsprop"], seeds=[212]),
                       "medium": dict(optimizers=["sgd", "rmsprop"], seeds=[212]),
                       "paper": dict(optimizers=["sgd", "rmsprop"], seeds=[2, 12, 31, 41, 51]),
                       "paper-v1": dict(optimizers=["sgd", "momentum"], seeds=[212])}}


def compare_runs(preset, backend):
    """The a_compare runs: a_main's configuration × this study's optimizers × its seeds."""
    c = SIZES["a_compare"][preset]
    base = {k: v for k, v in MAIN_SIZES["a_main"][preset].items() if k not in ("seeds", "optimizers")}
    return [Run.make("a_main", **base, cell=cell, seed=s, optimizer=o, backend=backend)
            for cell in A_CELLS for s in c["seeds"] for o in c["optimizers"]]


def fig_a10(R):
    runs = list(R["a_main"]) + list(R["a_compare"])
    opts = sorted({cfg["optimizer"] for cfg, _ in runs})
    cells = [c for c in A_CELLS if any(cfg["cell"] == c for cfg, _ in runs)]
    fig, axes = subplots(len(cells) + 1, ncols=3)
    data = {}
    from ..style import OPT_STYLES
    for ax, cell in zip(axes, cells):
        data[cell] = {}
        for o in opts:
            rs = [res for cfg, res in runs if cfg["cell"] == cell and cfg["optimizer"] == o]
            if not rs:
                continue
            lags = np.asarray(rs[0]["lags"], float)
            m, _ = band(ax, lags, stack(rs, "f"), o, color(cell), ls=OPT_STYLES.get(o, "-"), logy=True)
            tau = np.concatenate([np.asarray(r["tau"], float) for r in rs])
            tau = tau[np.isfinite(tau)]
            data[cell][o] = {"f_mean": m, "tau_median": float(np.median(tau)) if tau.size else None}
        ax.set(yscale="log", title=f"A10 {cell}", xlabel="lag ℓ")
        ax.legend(fontsize=6)
    ax = axes[-1]
    for i, o in enumerate(opts):
        meds = [data[c].get(o, {}).get("tau_median") or np.nan for c in cells]
        ax.bar(np.arange(len(cells)) + 0.8 * i / len(opts), meds, width=0.8 / len(opts), label=o)
    ax.set_xticks(np.arange(len(cells)) + 0.3, cells, fontsize=7)
    ax.set(ylabel=r"median $\tau_q$", title="time scales per optimizer")
    ax.legend(fontsize=6)
    return fig, data


def _tidy(results):
    """The a_compare runs' rows of results.csv.gz: as a_main's (studies/main/tidy.py)."""
    return group_rows(results, "a_compare")


STUDY = Study(name="optimizers", docs="docs/experiments.md §5.4 (A10)", sizes=SIZES, groups={"a_compare": compare_runs},
              figures={"A10": fig_a10}, needs={"A10": ("a_main", "a_compare")},
              tidy=_tidy)
