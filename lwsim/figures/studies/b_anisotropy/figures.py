"""Figures B4–B6 of [B]'s S2 study (docs/experiments.md §5.4). Each returns (matplotlib figure, data dict)."""
from __future__ import annotations

import numpy as np

from ...style import color, subplots
from .experiment import BAnisotropy

# [B] §S2's models: (cell, optimizer, learning rate)
B_S2_MODELS = (("rnn", "adam", 1e-3), ("sharedgate", "sgd", 1e-2), ("diaggate", "sgd", 1e-2))

S2_LABEL = {"rnn": "plain+Adam", "sharedgate": "scalar+SGD", "diaggate": "multi+SGD"}


def _s2(R):
    out = {}
    for cfg, r in R["b_s2"]:
        out.setdefault(cfg["task"], {}).setdefault(cfg["cell"], []).append((cfg, r))
    return out


def _s2_lag_fig(R, key, ylabel, title, logy):
    tasks = _s2(R)
    fig, axes = subplots(len(tasks), ncols=3)
    data = {}
    for ax, (task, models) in zip(axes, tasks.items()):
        data[task] = {}
        for (m, _, _) in B_S2_MODELS:
            runs = models.get(m, [])
            if not runs:
                continue
            cks = runs[0][0]["checkpoints"]
            lags = np.asarray(runs[0][1]["lags"], float)
            first = np.array([r[f"{key}_{cks[0]}"] for _, r in runs], float)
            last = np.array([r[f"{key}_{cks[-1]}"] for _, r in runs], float)
            med = np.nanmedian(last, axis=0)
            ax.plot(lags, med, "-o", ms=3, color=color(m), label=f"{S2_LABEL[m]} (it {cks[-1]})")
            ax.plot(lags, np.nanmedian(first, axis=0), ":", color=color(m), lw=1)
            q = np.nanquantile(last, [0.25, 0.75], axis=0)
            data[task][m] = {"lags": lags, "median_last": med, "iqr_last": q[1] - q[0],
                             "median_first": np.nanmedian(first, axis=0)}
            if f"{key}_author_{cks[-1]}" in runs[0][1]:      # the author's conventions, same runs
                data[task][m]["median_last_author"] = np.nanmedian(
                    np.array([r[f"{key}_author_{cks[-1]}"] for _, r in runs], float), axis=0)
        ax.set(xlabel="lag h", ylabel=ylabel, title=f"{title}: {task}", yscale="log" if logy else "linear")
        ax.legend(fontsize=6)
    return fig, data


def fig_b4(R):
    return _s2_lag_fig(R, "ai", r"AI$_{10}=\sigma_1/\sigma_{10}$", "B4 anisotropy", True)


def fig_b5(R):
    return _s2_lag_fig(R, "ce", r"CE$_{10}$", "B5 energy concentration", False)


def _b6_quartiles(tasks):
    for models in tasks.values():
        for runs in models.values():
            return BAnisotropy.read(runs[0][0], "b6_errorbars") == "quartiles"
    return False


def fig_b6(R):
    tasks = _s2(R)
    fig, axes = subplots(3, ncols=3)
    data = {}
    names = [m for (m, _, _) in B_S2_MODELS]
    for k, (key, label) in enumerate((("gai", "AI"), ("gce", "CE"), ("gpr", "PR"))):
        ax = axes[k]
        for i, m in enumerate(names):
            meds, iqrs = [], []
            for task, models in tasks.items():
                runs = models.get(m, [])
                ck = runs[0][0]["checkpoints"][-1] if runs else None
                v = np.array([r[f"{key}_{ck}"] for _, r in runs], float) if runs else np.array([np.nan])
                q = np.nanquantile(v, [0.25, 0.5, 0.75])
                meds.append(q[1])
                iqrs.append((q[1] - q[0], q[2] - q[1]))
                data.setdefault(task, {}).setdefault(m, {})[label] = {
                    "median": q[1], "iqr": q[2] - q[0], "q25": q[0], "q75": q[2],
                    "seeds": [cfg["seed"] for cfg, _ in runs], "values": [float(x) for x in v] if runs else []}
            # b6_errorbars "quartiles" ([B]'s figure): from q25 to q75; "iqr": ± IQR/2 about the median
            lo_hi = np.array(iqrs, float).T
            quart = _b6_quartiles(tasks)
            yerr = lo_hi if quart else np.repeat(lo_hi.sum(axis=0, keepdims=True) / 2, 2, axis=0)
            ax.bar(np.arange(len(tasks)) + 0.27 * i, meds, width=0.27, yerr=yerr,
                   color=color(m), label=S2_LABEL[m])
        ax.set_xticks(np.arange(len(tasks)) + 0.27, list(tasks), fontsize=7, rotation=20)
        ax.set(title=f"B6 gradient covariance {label}", yscale="log" if key == "gai" else "linear")
        ax.legend(fontsize=6)
    return fig, data


FIGURES = {f"B{i}": globals()[f"fig_b{i}"] for i in range(4, 7)}
