"""Figures A1–A9 of the [A] main grid (docs/experiments.md §5.4). Each returns (matplotlib figure,
data dict); A14 is in master.py."""
from __future__ import annotations

import numpy as np

from lwsim import stats
from lwsim.tasks import multilag_r2_ceiling

from ...common import _finite_logfit, by_cell, stack
from ...style import band, color, subplots


def fig_a1(R):
    cells = by_cell(R["a_main"])
    fig, (ax,) = subplots(1, size=(5.5, 4))
    data = {}
    for cell, rs in cells.items():
        n = rs[0]["n_grid"]
        m, s = band(ax, n, stack(rs, "h_n"), cell, color(cell), floor=0.0)       # Ĥ_N ≥ 0: band clipped at 0
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


def _iqr_log10(tau):
    """IQR of log10 τ over one run's finite, positive time scales (finding 3, per run); None if none."""
    tau = np.asarray(tau, dtype=float)
    tau = tau[np.isfinite(tau) & (tau > 0)]
    if not tau.size:
        return None
    q = np.quantile(np.log10(tau), [0.25, 0.75])
    return float(q[1] - q[0])


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
                      "log10_tau_iqr": float(q[2] - q[0]), "log10_tau_iqr_seeds": [_iqr_log10(r["tau"]) for r in rs]}
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
    cfg = next((cfg for cfg, _ in R["a_main"]), None)
    if cfg is not None and data:                    # the best achievable R² given σ_y (same for every cell)
        ceiling = multilag_r2_ceiling(cfg["T"], cfg["task_lags"], cfg["task_coefs"], cfg["sigma_y"])
        for d in data.values():
            d.update(r2_ceiling=ceiling, sigma_y=cfg["sigma_y"])
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


FIGURES = {f"A{i}": globals()[f"fig_a{i}"] for i in range(1, 10)}
