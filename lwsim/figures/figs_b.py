"""Figures of [B] (05-experiments.md §5.4): B1–B8. Each returns (matplotlib figure, data dict)."""
from __future__ import annotations

import numpy as np

from .presets import B_MODELS, B_S2_MODELS
from .style import band, color, subplots

S2_LABEL = {"rnn": "plain+Adam", "sharedgate": "scalar+SGD", "diaggate": "multi+SGD"}


def _s1(R):
    out = {}
    for cfg, r in R["b_s1"]:
        out.setdefault(cfg["cell"], []).append((cfg, r))
    return {m: out[m] for m in B_MODELS if m in out}


def fig_b1(R):
    models = _s1(R)
    fig, axes = subplots(len(models), ncols=3)
    data = {}
    for ax, (m, runs) in zip(axes, models.items()):
        cks = runs[0][0]["checkpoints"]
        lags = np.asarray(runs[0][1]["lags"], float)
        data[m] = {"lags": lags}
        for j, ck in enumerate(cks):
            mu, _ = band(ax, lags, np.array([r[f"mu_{ck}"] for _, r in runs]), f"it {ck}",
                         f"C{j}", logy=True)
            data[m][f"mu_{ck}"] = mu
        last = cks[-1]
        for name, ls in (("retention", "--"), ("injection", ":")):
            pred = np.nanmean([r[f"{name}_mufit_{last}"] for _, r in runs], axis=0)
            mu0 = np.nanmean([r[f"{name}_mu0_{last}"] for _, r in runs], axis=0)
            ax.plot(lags, pred, ls, color="k", lw=1, label=f"{name} fit (it {last})")
            data[m][f"{name}_fit_{last}"] = pred
            data[m][f"{name}_mu0_{last}"] = mu0
        ax.set(yscale="log", xlabel="lag h", ylabel=r"$\tilde\mu(h)$", title=f"B1 {m}")
        ax.legend(fontsize=6)
    return fig, data


def fig_b2(R):
    models = _s1(R)
    fig, axes = subplots(len(models), ncols=3)
    data = {}
    for ax, (m, runs) in zip(axes, models.items()):
        cks = runs[0][0]["checkpoints"]
        lags = np.asarray(runs[0][1]["lags"], float)
        Z = np.log10(np.array([np.nanmean([r[f"mu_{ck}"] for _, r in runs], axis=0) for ck in cks]))
        im = ax.imshow(Z.T, aspect="auto", origin="lower", cmap="viridis",
                       extent=[-0.5, len(cks) - 0.5, lags[0], lags[-1]])
        ax.set_xticks(range(len(cks)), [str(c) for c in cks])
        ax.set(xlabel="checkpoint (iteration)", ylabel="lag h", title=fr"B2 {m}: $\log_{{10}}\tilde\mu$")
        fig.colorbar(im, ax=ax)
        data[m] = {"checkpoints": cks, "lags": lags, "log10_mu": Z}
    return fig, data


def fig_b3(R):
    models = _s1(R)
    fig, (ax,) = subplots(1, size=(5.5, 4))
    data = {}
    for m, runs in models.items():
        cks = runs[0][0]["checkpoints"]
        S = np.array([[r[f"retention_s_{ck}"] for ck in cks] for _, r in runs], dtype=float)
        mean, sd = band(ax, cks, S, m, color(m))
        r2 = np.array([[r[f"retention_r2_{ck}"] for ck in cks] for _, r in runs], dtype=float)
        data[m] = {"checkpoints": cks, "s_mean": mean, "s_sd": sd, "r2_mean": np.nanmean(r2, axis=0)}
    ax.set(xlabel="iteration", ylabel="fitted power s (retention predictor)", title="B3 fitted slope vs training")
    ax.legend(fontsize=7)
    return fig, data


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
        ax.set(xlabel="lag h", ylabel=ylabel, title=f"{title}: {task}", yscale="log" if logy else "linear")
        ax.legend(fontsize=6)
    return fig, data


def fig_b4(R):
    return _s2_lag_fig(R, "ai", r"AI$_{10}=\sigma_1/\sigma_{10}$", "B4 anisotropy", True)


def fig_b5(R):
    return _s2_lag_fig(R, "ce", r"CE$_{10}$", "B5 energy concentration", False)


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
                iqrs.append(q[2] - q[0])
                data.setdefault(task, {}).setdefault(m, {})[label] = {"median": q[1], "iqr": q[2] - q[0]}
            ax.bar(np.arange(len(tasks)) + 0.27 * i, meds, width=0.27, yerr=np.array(iqrs) / 2,
                   color=color(m), label=S2_LABEL[m])
        ax.set_xticks(np.arange(len(tasks)) + 0.27, list(tasks), fontsize=7, rotation=20)
        ax.set(title=f"B6 gradient covariance {label}", yscale="log" if key == "gai" else "linear")
        ax.legend(fontsize=6)
    return fig, data


def fig_b7(R):
    runs = R["b_expansion"]
    fig, axes = subplots(2, ncols=2)
    data = {}
    for cfg, r in runs:
        eps = np.asarray(r["eps"], float)
        axes[0].loglog(eps, r["E"], "-o", ms=3, color=color(cfg["cell"]), lw=1)
        axes[1].loglog(eps, r["C2"], "-o", ms=3, color=color(cfg["cell"]), lw=1)
        data.setdefault(cfg["cell"], []).append({"seed": cfg["seed"], "eps": eps, "E": r["E"], "C2": r["C2"],
                                                 "slope": r["slope"], "remainder": r["remainder"]})
    e0 = np.asarray(runs[0][1]["eps"], float)
    E0 = np.asarray(runs[0][1]["E"], float)
    axes[0].loglog(e0, E0[0] * (e0 / e0[0]) ** 2, "k--", lw=1, label="slope 2")
    axes[0].set(xlabel="ε", ylabel=r"$E(\varepsilon)$", title="B7 Fréchet truncation error")
    axes[1].set(xlabel="ε", ylabel=r"$C_2(\varepsilon)=E/\varepsilon^2$")
    axes[0].legend(fontsize=7)
    return fig, data


def fig_b8(R):
    runs = R["b_expansion"]
    fig, axes = subplots(3, ncols=3)
    data = {}
    for cfg, r in runs:
        c = color(cfg["cell"])
        j = np.arange(1, len(r["norm_A"]) + 1)
        axes[0].plot(j, r["norm_A"], color=c, lw=0.8)
        axes[0].plot(j, r["norm_B"], ":", color=c, lw=0.8)
        axes[1].plot(j, r["ratio"], color=c, lw=0.8)
        data.setdefault(cfg["cell"], []).append({"seed": cfg["seed"], "ratio_median": float(np.median(r["ratio"])),
                                                 "ratio_max": float(np.max(r["ratio"]))})
    for cell in data:
        allr = np.concatenate([np.asarray(r["ratio"], float) for cfg, r in runs if cfg["cell"] == cell])
        axes[2].hist(allr, bins=30, histtype="step", color=color(cell), label=cell)
    axes[0].set(xlabel="step j", title=r"B8 $\|A_j\|_2$ (solid), $\|B_j\|_2$ (dotted)")
    axes[1].set(xlabel="step j", ylabel=r"$\|B_j\|_2/\|A_j\|_2$")
    axes[2].set(xlabel=r"$\|B_j\|_2/\|A_j\|_2$", ylabel="count")
    axes[2].legend(fontsize=7)
    return fig, data


FIGURES = {f"B{i}": globals()[f"fig_b{i}"] for i in range(1, 9)}
