"""Figures of [A] (docs/experiments.md §5.4): A1–A12. Each returns (matplotlib figure, data dict)."""
from __future__ import annotations

import numpy as np

from lwsim import stats

from .presets import A_CELLS
from .style import band, color, subplots


def by_cell(runs, optimizer="adamw"):
    """{cell: [result, ...]} over seeds, for one optimizer."""
    out = {}
    for cfg, res in runs:
        if cfg.get("optimizer", "adamw") == optimizer:
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


def fig_a1(R):
    cells = by_cell(R["a_main"])
    fig, (ax,) = subplots(1, size=(5.5, 4))
    data = {}
    for cell, rs in cells.items():
        n = rs[0]["n_grid"]
        m, s = band(ax, n, stack(rs, "h_n"), cell, color(cell))
        data[cell] = {"N": n, "H_N_mean": m, "H_N_sd": s, "H_N_seeds": stack(rs, "h_n")}
    ax.set_xscale("log")
    ax.set(xlabel="N (samples)", ylabel=r"$\hat H_N$", title="A1 learnability window")
    ax.legend(fontsize=8)
    return fig, data


def _fit_curve(law, params, lags):
    if law == "exponential":
        return params["C"] * np.exp(-params["lambda"] * lags)
    if law == "power":
        return params["C"] * lags ** (-params["beta"])
    return None


def _nested(lags, f):
    """The exponential against the tempered law that nests it, one seed (stats.nested_exponential)."""
    try:
        return stats.nested_exponential(lags, np.asarray(f, float)).to_dict()
    except ValueError as exc:
        return {"error": str(exc)}


def fig_a2(R):
    cells = by_cell(R["a_main"])
    fig, axes = subplots(3, ncols=3)
    data = {}
    for cell, rs in cells.items():
        lags = np.asarray(rs[0]["lags"], dtype=float)
        F = stack(rs, "f")
        mean = np.nanmean(F, axis=0)
        for ax, logy in zip(axes, (False, True, True)):
            band(ax, lags, F, cell, color(cell), logy=logy)
        try:
            dec = stats.fit_decay(lags, mean)
            fits = {law: {"params": f.params, "r2": f.r2, "aic": f.aic, "bic": f.bic}
                    for law, f in dec.fits.items()}
            sel, sel_bic = dec.selected, dec.selected_bic
        except ValueError as exc:
            fits, sel, sel_bic = {"error": str(exc)}, None, None
        for ax, law in ((axes[1], "exponential"), (axes[2], "power")):
            if law in fits:
                ax.plot(lags, _fit_curve(law, fits[law]["params"], lags), "--", color=color(cell), lw=0.8)
        data[cell] = {"lags": lags, "f_mean": mean, "fits": fits, "selected": sel, "selected_bic": sel_bic,
                      "per_seed_selected": [r["decay"]["selected"] for r in rs],
                      "per_seed_selected_bic": [r["decay"].get("selected_bic") for r in rs],
                      "per_seed_lambda": [r["decay"]["fits"].get("exponential", {}).get("params", {}).get("lambda")
                                          for r in rs],
                      "per_seed_nested_exp": [_nested(lags, r["f"]) for r in rs]}
    axes[0].set(title="A2 envelope f(ℓ) (lin–lin)", xlabel="lag ℓ", ylabel="f(ℓ)")
    axes[1].set(title="log–lin, exponential fits", xlabel="lag ℓ", yscale="log")
    axes[2].set(title="log–log, power fits", xlabel="lag ℓ", xscale="log", yscale="log")
    axes[0].legend(fontsize=7)
    return fig, data


def fig_a3(R):
    cells = by_cell(R["a_main"])
    fig, axes = subplots(2, ncols=2)
    data = {}
    for cell, rs in cells.items():
        tau = np.concatenate([np.asarray(r["tau"], dtype=float) for r in rs])
        tau = tau[np.isfinite(tau) & (tau > 0)]
        n_inf = int(sum(np.asarray(r["tau_inf"]).sum() for r in rs))
        if tau.size:
            srt = np.sort(tau)
            ccdf = 1.0 - np.arange(srt.size) / srt.size
            axes[0].plot(srt, ccdf, color=color(cell), label=cell)
            axes[1].hist(np.log10(srt), bins=20, density=True, histtype="step", color=color(cell))
        q = np.quantile(np.log10(tau), [0.25, 0.5, 0.75]) if tau.size else [np.nan] * 3
        data[cell] = {"tau": tau, "n_infinite": n_inf, "log10_tau_quartiles": q,
                      "log10_tau_iqr": float(q[2] - q[0])}
    axes[0].set(xscale="log", yscale="log", xlabel=r"$\tau_q$", ylabel="CCDF", title="A3 time-scale spectra")
    axes[1].set(xlabel=r"$\log_{10}\tau_q$", ylabel="density")
    axes[0].legend(fontsize=7)
    return fig, data


def _nhat_pairs(rs, use_kappa):
    xs, ys = [], []
    for r in rs:
        n_hat, f, k = (np.asarray(r[k_], dtype=float) for k_ in ("n_hat", "f", "kappa_hat"))
        ok = np.isfinite(n_hat) & (f > 0) & np.isfinite(k)
        x = -np.log(f[ok]) * (k[ok] if use_kappa else 1.0)
        xs.append(x)
        ys.append(np.log(n_hat[ok]))
    return np.concatenate(xs) if xs else np.array([]), np.concatenate(ys) if ys else np.array([])


def _nhat_fig(R, use_kappa, title):
    cells = by_cell(R["a_main"])
    fig, (ax,) = subplots(1, size=(5.5, 4))
    data, allx, ally = {}, [], []
    for cell, rs in cells.items():
        x, y = _nhat_pairs(rs, use_kappa)
        ax.scatter(x, y, s=8, color=color(cell), label=cell, alpha=0.7)
        fit = _finite_logfit(x, y)
        if use_kappa:
            fit["master"] = [r["master"] for r in rs]
        data[cell] = {"x": x, "log_n_hat": y, "fit": fit}
        allx.append(x)
        ally.append(y)
    x, y = np.concatenate(allx), np.concatenate(ally)
    pooled = _finite_logfit(x, y)
    if pooled["slope"] is not None:
        xx = np.linspace(x.min(), x.max(), 10)
        ax.plot(xx, pooled["intercept"] + pooled["slope"] * xx, "k--", lw=1,
                label=f"fit slope {pooled['slope']:.2f}")
    data["pooled"] = pooled
    ax.set(xlabel=r"$-\hat\kappa\,\log f(\ell)$" if use_kappa else r"$-\log f(\ell)$",
           ylabel=r"$\log \hat N(\ell)$", title=title)
    ax.legend(fontsize=7)
    return fig, data


def fig_a4(R):
    return _nhat_fig(R, False, "A4 sample complexity vs envelope")


def fig_a5(R):
    return _nhat_fig(R, True, "A5 master proportionality (theory: slope 1)")


def fig_a6(R):
    cells = by_cell(R["a_main"])
    fig, (ax,) = subplots(1, size=(5.5, 4))
    data = {}
    vals = []
    for cell, rs in cells.items():
        a = np.concatenate([np.asarray(r["alpha_hat"], dtype=float) for r in rs])
        vals.append(a)
        data[cell] = {"alpha_hat": a, "mean": float(a.mean()), "median": float(np.median(a)),
                      "fraction_below_1.9": float((a < 1.9).mean()),
                      "mean_seeds": [float(np.mean(r["alpha_hat"])) for r in rs]}
    bp = ax.boxplot(vals, tick_labels=list(cells), patch_artist=True)
    for patch, cell in zip(bp["boxes"], cells):
        patch.set_facecolor(color(cell))
        patch.set_alpha(0.5)
    ax.set(ylabel=r"$\hat\alpha(\ell)$", title="A6 tail indices of the matched statistic")
    return fig, data


def fig_a7(R):
    cells = by_cell(R["a_main"])
    fig, axes = subplots(2 * len(cells), ncols=2, size=(4.5, 3))
    data = {}
    for i, (cell, rs) in enumerate(cells.items()):
        r = rs[0]
        lags, f = np.asarray(r["lags"], float), np.asarray(r["f"], float)
        n_grid = np.asarray(r["n_grid"], float)
        budgets = [float(n_grid[len(n_grid) // 4]), float(n_grid[-1])]
        ax = axes[2 * i]
        ax.plot(lags, f, color=color(cell), label="f(ℓ)")
        floors = {}
        for N, ls in zip(budgets, ("--", ":")):
            fl = stats.noise_floor(f, np.asarray(r["n_hat"], float), N, np.asarray(r["kappa_hat"], float))
            fl = np.asarray(fl, dtype=float).ravel()
            ax.plot(lags, np.where(np.isfinite(fl), fl, np.nan), ls, color="k", lw=1, label=f"ε_th, N={N:g}")
            floors[f"{N:g}"] = fl
        ax.set(yscale="log", title=f"A7 {cell}: noise floor", xlabel="lag ℓ")
        ax.legend(fontsize=6)
        axes[2 * i + 1].plot(lags, r["sigma_hat"], color=color(cell))
        axes[2 * i + 1].set(title=r"$\hat\sigma(\ell)$", xlabel="lag ℓ", yscale="log")
        data[cell] = {"lags": lags, "f": f, "noise_floor": floors, "sigma_hat": r["sigma_hat"]}
    return fig, data


def fig_a8(R):
    cells = by_cell(R["a_main"])
    fig, axes = subplots(2, ncols=2)
    data = {}
    for cell, rs in cells.items():
        tr = stack(rs, "curve_train_loss")
        va = stack(rs, "curve_val_mse")
        band(axes[0], np.arange(1, tr.shape[1] + 1), tr, cell, color(cell), logy=True)
        band(axes[1], rs[0]["curve_val_step"], va, cell, color(cell), logy=True)
        data[cell] = {"train_loss_mean": tr.mean(0), "val_mse_mean": va.mean(0),
                      "final_val_r2": [r.get("final_val_r2") for r in rs]}
    axes[0].set(yscale="log", xlabel="epoch", ylabel="train MSE", title="A8 learning curves")
    axes[1].set(yscale="log", xlabel="step", ylabel="validation MSE")
    axes[0].legend(fontsize=7)
    return fig, data


def fig_a9(R):
    cells = by_cell(R["a_main"])
    fig, axes = subplots(2, ncols=2)
    data = {}
    for cell, rs in cells.items():
        lags = np.asarray(rs[0]["lags"], float)
        band(axes[0], lags, stack(rs, "f"), cell, color(cell), logy=True)
        band(axes[0], lags, stack(rs, "f_gates"), None, color(cell), ls=":", logy=True)
        m, _ = band(axes[1], lags, stack(rs, "R"), cell, color(cell))
        data[cell] = {"lags": lags, "f": stack(rs, "f").mean(0), "f_gates": stack(rs, "f_gates").mean(0), "R": m}
    axes[0].set(yscale="log", xlabel="lag ℓ", title="A9 f (solid) vs gates-only f_gates (dotted)")
    axes[1].set(xlabel="lag ℓ", ylabel="R(ℓ) = f / f_gates", yscale="log")
    axes[1].legend(fontsize=7)
    return fig, data


def fig_a10(R):
    runs = list(R["a_main"]) + list(R["a_compare"])
    opts = sorted({cfg["optimizer"] for cfg, _ in runs})
    cells = [c for c in A_CELLS if any(cfg["cell"] == c for cfg, _ in runs)]
    fig, axes = subplots(len(cells) + 1, ncols=3)
    data = {}
    from .style import OPT_STYLES
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


def fig_a11(R):
    runs = R["a_fidelity"]
    cells = [c for c in A_CELLS if any(cfg["cell"] == c for cfg, _ in runs)]
    fig, axes = subplots(len(cells), ncols=3)
    table = []
    for ax, cell in zip(axes, cells):
        for cfg, r in runs:
            if cfg["cell"] != cell:
                continue
            lags = np.asarray(r["lags"], float)
            ax.plot(lags, r["f_exact"], "-", color=color(cell), lw=1)
            ax.plot(lags, r["f_approx"], "--", color="k", lw=0.8)
            table.append({"cell": cell, "optimizer": cfg["optimizer"], "seed": cfg["seed"],
                          "spearman": r["spearman"], "pearson_log": r["pearson_log"],
                          "slope_ratio": r["slope_ratio"],
                          "offdiag_mean": float(np.nanmean(np.asarray(r["offdiag"], float)))})
        ax.set(xscale="log", yscale="log", title=f"A11 {cell}: exact (solid) vs 1st order", xlabel="lag ℓ")
    return fig, {"table": table}


def fig_a12(R):
    runs = R["a_theory"]
    laws = sorted({cfg["law"] for cfg, _ in runs}, key=["exponential", "power", "logarithmic"].index)
    fig, axes = subplots(len(laws), ncols=3)
    data = {}
    for ax, law in zip(axes, laws):
        data[law] = []
        law_runs = [x for x in runs if x[0]["law"] == law]
        alphas = sorted({cfg["alpha"] for cfg, _ in law_runs})
        labelled = set()
        for cfg, r in law_runs:
            # one colour and one legend entry per α (the seeds of an α share both)
            c = f"C{alphas.index(cfg['alpha']) % 10}"
            first = cfg["alpha"] not in labelled
            labelled.add(cfg["alpha"])
            ax.plot(r["n_grid"], r["h_n"], "o", ms=3, color=c,
                    label=f"α={cfg['alpha']}: measured (dots), theory (line)" if first else None)
            ax.plot(r["n_grid"], np.clip(r["h_theory"], 0, None), "-", color=c, lw=1)
            data[law].append({"alpha": cfg["alpha"], "seed": cfg["seed"], "N": r["n_grid"],
                              "H_measured": r["h_n"], "H_theory": r["h_theory"],
                              **{k: r[k] for k in ("exponent_measured", "exponent_theory") if k in r}})
        ax.set(xscale="log", xlabel="N", ylabel=r"$H_N$", title=f"A12 planted {law} envelope")
        ax.legend(fontsize=6)
    return fig, data


FIGURES = {f"A{i}": globals()[f"fig_a{i}"] for i in range(1, 13)}

def fig_a14(R):
    """A14: the master law factor by factor (lwsim.figures.figs_master, which imports this module)."""
    from .figs_master import fig_a14 as draw
    return draw(R)


FIGURES["A14"] = fig_a14
