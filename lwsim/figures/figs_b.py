"""Figures of [B] (docs/experiments.md §5.4): B1–B8. Each returns (matplotlib figure, data dict)."""
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
            if f"mu_author_{ck}" in runs[0][1]:        # the author's conventions, same runs
                data[m][f"author_mu_{ck}"] = np.nanmean([r[f"mu_author_{ck}"] for _, r in runs], axis=0)
        # b1_predictors "all" ([B]'s figure): the fitted predictors at every checkpoint
        every = runs[0][0].get("b1_predictors", "last") == "all"
        for j, ck in enumerate(cks if every else cks[-1:]):
            for name, ls in (("retention", "--"), ("injection", ":")):
                if f"{name}_mufit_{ck}" not in runs[0][1]:
                    continue
                pred = np.nanmean([r[f"{name}_mufit_{ck}"] for _, r in runs], axis=0)
                mu0 = np.nanmean([r[f"{name}_mu0_{ck}"] for _, r in runs], axis=0)
                ax.plot(lags, pred, ls, color=f"C{cks.index(ck)}" if every else "k", lw=1,
                        label=f"{name} fit (it {ck})")
                data[m][f"{name}_fit_{ck}"] = pred
                data[m][f"{name}_mu0_{ck}"] = mu0
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


B3_PREDICTORS = ("injection", "retention")


def fig_b3(R):
    """s(ℓ) of log S = a + s log P. Default P = Π_{j=k}^{t} g_j ("injection"): [B] defines its
    predictor as the gate product Π g (α^{t−k} for the leaky model), so B3 is about that product;
    ``b3_predictor="retention"`` plots the fit on Π (1 − g) instead (docs/fidelity.md, "[B]")."""
    models = _s1(R)
    fig, (ax,) = subplots(1, size=(5.5, 4))
    data = {}
    pred = "injection"
    for m, runs in models.items():
        pred = runs[0][0].get("b3_predictor", "injection")
        if pred not in B3_PREDICTORS:
            raise ValueError(f"b3_predictor must be one of {B3_PREDICTORS}, got {pred!r}")
        cks = runs[0][0]["checkpoints"]
        S = np.array([[r[f"{pred}_s_{ck}"] for ck in cks] for _, r in runs], dtype=float)
        mean, sd = band(ax, cks, S, m, color(m))
        r2 = np.array([[r[f"{pred}_r2_{ck}"] for ck in cks] for _, r in runs], dtype=float)
        data[m] = {"checkpoints": cks, "predictor": pred, "s_mean": mean, "s_sd": sd,
                   "r2_mean": np.nanmean(r2, axis=0)}
        for other in B3_PREDICTORS:
            data[m][f"s_mean_{other}"] = np.nanmean(
                np.array([[r[f"{other}_s_{ck}"] for ck in cks] for _, r in runs], dtype=float), axis=0)
    label = r"$\prod g$" if pred == "injection" else r"$\prod (1-g)$"
    ax.set(xlabel="iteration", ylabel=f"fitted power s (predictor {label})", title="B3 fitted slope vs training")
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
            return runs[0][0].get("b6_errorbars", "iqr") == "quartiles"
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
                data.setdefault(task, {}).setdefault(m, {})[label] = {"median": q[1], "iqr": q[2] - q[0],
                                                                      "q25": q[0], "q75": q[2]}
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


def robust_seeds(E1, slopes, factor=1.5):
    """[B]'s seed filter: keep seeds whose E(ε = 1) lies in [q25 − 1.5 IQR, q75 + 1.5 IQR]
    (linear-interpolated quartiles over seeds) and whose slope is finite → boolean mask."""
    E1 = np.asarray(E1, float)
    q1, q3 = np.percentile(E1, [25, 75])
    iqr = q3 - q1
    return (E1 >= q1 - factor * iqr) & (E1 <= q3 + factor * iqr) & np.isfinite(np.asarray(slopes, float))


def _fig_b7_robust(runs):
    """[B]'s appendix figure: per cell, median E(ε) and C₂(ε) over the kept seeds with the IQR band."""
    fig, axes = subplots(2, ncols=2)
    data = {}
    for cell in sorted({cfg["cell"] for cfg, _ in runs}):
        rs = [(cfg, r) for cfg, r in runs if cfg["cell"] == cell]
        eps = np.asarray(rs[0][1]["eps"], float)
        E = np.array([r["E"] for _, r in rs], float)
        C2 = np.array([r["C2"] for _, r in rs], float)
        keep = robust_seeds(E[:, -1], [r["slope"] for _, r in rs])
        d = {"eps": eps, "seeds": [cfg["seed"] for cfg, _ in rs], "kept": keep,
             "slopes": [r["slope"] for _, r in rs]}
        for k, (ax, V) in enumerate(zip(axes, (E, C2))):
            q25, med, q75 = np.percentile(V[keep], [25, 50, 75], axis=0)
            ax.plot(eps, med, "-o", ms=3, color=color(cell), label=f"{cell} median ({keep.sum()}/{keep.size} seeds)")
            ax.fill_between(eps, q25, q75, color=color(cell), alpha=0.25)
            d["E_median" if k == 0 else "C2_median"] = med
        data[cell] = d
    axes[0].set(xscale="log", yscale="log", xlabel="ε", ylabel=r"$E(\varepsilon)$",
                title="B7 Fréchet truncation error (median, IQR)")
    axes[1].set(xscale="log", yscale="log", xlabel="ε", ylabel=r"$C_2(\varepsilon)$")
    axes[0].legend(fontsize=7)
    return fig, data


def fig_b7(R):
    runs = R["b_expansion"]
    if runs[0][0].get("b7_aggregate", "seeds") == "robust":
        return _fig_b7_robust(runs)
    fig, axes = subplots(2, ncols=2)
    data = {}
    labelled = set()
    for cfg, r in runs:
        eps = np.asarray(r["eps"], float)
        # one legend entry per cell, so every colour is named (the seeds share it)
        label = None if cfg["cell"] in labelled else f"{cfg['cell']} (one line per seed)"
        labelled.add(cfg["cell"])
        axes[0].loglog(eps, r["E"], "-o", ms=3, color=color(cfg["cell"]), lw=1, label=label)
        axes[1].loglog(eps, r["C2"], "-o", ms=3, color=color(cfg["cell"]), lw=1, label=label)
        data.setdefault(cfg["cell"], []).append({"seed": cfg["seed"], "eps": eps, "E": r["E"], "C2": r["C2"],
                                                 "slope": r["slope"], "remainder": r["remainder"]})
    e0 = np.asarray(runs[0][1]["eps"], float)
    E0 = np.asarray(runs[0][1]["E"], float)
    axes[0].loglog(e0, E0[0] * (e0 / e0[0]) ** 2, "k--", lw=1, label="slope 2")
    axes[0].set(xlabel="ε", ylabel=r"$E(\varepsilon)$", title="B7 Fréchet truncation error")
    axes[1].set(xlabel="ε", ylabel=r"$C_2(\varepsilon)=E/\varepsilon^2$")
    axes[0].legend(fontsize=7)
    axes[1].legend(fontsize=7)
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
