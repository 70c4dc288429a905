"""A14: the master law N̂(ℓ) ∝ f(ℓ)^{−κ̂} taken apart, factor by factor (docs/statistics.md §3.3–3.5).

The continuous sample complexity of docs/statistics.md §3.3 is N* = (ε σ̂ / |m̄|)^κ̂, so

    log N* = κ̂ log ε + κ̂ log σ̂ − κ̂ log |m̄|.

With |m̄(ℓ)| ∝ f(ℓ)^a and σ̂(ℓ) ∝ f(ℓ)^b (κ̂ slowly varying) the master regression of log N on
−κ̂ log f has slope a − b: the law (slope 1) needs a = 1 (the mean tracks the envelope) and b = 0
(a flat noise scale). N̂ is N* rounded up onto the budget grid, and a lag outside the grid is
either clamped to its first value or never detectable, which flattens the N̂ regression further.
A14 measures each factor per cell and seed: a (panel 1), σ̂ and b (panel 2), κ̂ (panel 3) and N̂
against N* with the counts at the grid ends (panel 4); its JSON carries the master slope three
ways (pooled points as A5, the author's seed-averaged window fit, and with N* for N̂).
"""
from __future__ import annotations

import numpy as np

from lwsim import stats

from ...common import _finite_logfit, by_cell
from ...style import color, subplots


def _slope(x, y):
    """Least-squares slope of y on x over finite pairs (None with < 3 points or constant x)."""
    return _finite_logfit(np.asarray(x, float), np.asarray(y, float))["slope"]


def _log(v):
    v = np.abs(np.asarray(v, float))
    with np.errstate(divide="ignore"):
        return np.where(v > 0, np.log(v), np.nan)


def seed_factors(r):
    """Per-run decomposition: exponents a (log|m̄| on log f) and b (log σ̂ on log f), κ̂ summary,
    grid-end counts, and the master slope of that run with N̂ and with N*."""
    f, m, sig = (np.asarray(r[k], float) for k in ("f", "mean", "sigma_hat"))
    kap, n_hat, n_star = (np.asarray(r[k], float) for k in ("kappa_hat", "n_hat", "n_star"))
    grid = np.asarray(r["n_grid"], float)
    lf = _log(f)
    a, b = _slope(lf, _log(m)), _slope(lf, _log(sig))
    x = -kap * lf
    fin = np.isfinite(n_hat)
    return {"slope_mean_vs_f": a, "slope_sigma_vs_f": b,
            "predicted_master_slope": None if a is None or b is None else a - b,
            "kappa_median": float(np.median(kap[np.isfinite(kap)])) if np.isfinite(kap).any() else None,
            "kappa_range": [float(np.nanmin(np.where(np.isfinite(kap), kap, np.nan))),
                            float(np.nanmax(np.where(np.isfinite(kap), kap, np.nan)))]
            if np.isfinite(kap).any() else None,
            "n_lags": int(f.size), "n_at_smallest_N": int((n_hat == grid[0]).sum()),
            "n_never": int((~fin).sum()), "n_inside_grid": int((fin & (n_hat > grid[0])).sum()),
            "master_slope_nhat": _slope(np.where(fin, x, np.nan), _log(n_hat)),
            "master_slope_nstar": _slope(x, _log(n_star))}


def _author_fit(rs):
    """Seed-averaged values inside the power-law fit window (stats.fit_master_window)."""
    lags = np.asarray(rs[0]["lags"], float)
    S = lambda k: np.array([np.asarray(r[k], float) for r in rs])   # noqa: E731
    f = S("f")
    try:
        window = stats.fit_decay(lags, f.mean(0), laws=("power",)).window
    except ValueError as exc:
        return {"error": f"power-law window: {exc}"}
    try:
        m = stats.fit_master_window(S("n_hat"), S("kappa_hat"), f, S("alpha_hat"), lags, window=window)
    except ValueError as exc:
        return {"error": str(exc), "window": list(window)}
    return {"slope": m.slope, "intercept": m.intercept, "r2": m.r2, "n": m.n, "window": list(window)}


def spread(values):
    """{mean, sd, min, max, n} of the non-None values (sd with ddof 1; 0 for one value)."""
    v = np.array([x for x in values if x is not None], float)
    if not v.size:
        return {"mean": None, "sd": None, "min": None, "max": None, "n": 0}
    return {"mean": float(v.mean()), "sd": float(v.std(ddof=1)) if v.size > 1 else 0.0,
            "min": float(v.min()), "max": float(v.max()), "n": int(v.size)}


def _pooled(rs_by_cell, ykey, seed_index=None):
    """Master regression of log N (N̂ or N*) on −κ̂ log f over every cell (and seed, or one seed)."""
    xs, ys = [], []
    for rs in rs_by_cell.values():
        for i, r in enumerate(rs):
            if seed_index is not None and i != seed_index:
                continue
            f, k, n = (np.asarray(r[q], float) for q in ("f", "kappa_hat", ykey))
            ok = np.isfinite(n) & (f > 0) & np.isfinite(k) & (n > 0)
            xs.append(-k[ok] * np.log(f[ok]))
            ys.append(np.log(n[ok]))
    if not xs:
        return _finite_logfit(np.array([]), np.array([]))
    return _finite_logfit(np.concatenate(xs), np.concatenate(ys))


def fig_a14(R):
    cells = by_cell(R["a_main"])
    fig, axes = subplots(4, ncols=2, size=(5, 3.8))
    data = {}
    for cell, rs in cells.items():
        col = color(cell)
        for i, r in enumerate(rs):
            lags = np.asarray(r["lags"], float)
            f, m = np.asarray(r["f"], float), np.abs(np.asarray(r["mean"], float))
            lab = cell if i == 0 else None
            axes[0].loglog(f, np.where(m > 0, m, np.nan), ".", ms=3, color=col, label=lab)
            axes[1].semilogy(lags, r["sigma_hat"], "-", lw=0.8, color=col, label=lab)
            axes[2].plot(lags, r["kappa_hat"], "-", lw=0.8, color=col, label=lab)
            ns, nh = np.asarray(r["n_star"], float), np.asarray(r["n_hat"], float)
            ok = np.isfinite(ns) & (ns > 0)
            axes[3].loglog(ns[ok], np.where(np.isfinite(nh[ok]), nh[ok], np.nan), ".", ms=3, color=col,
                           label=lab)
        per_seed = [seed_factors(r) for r in rs]
        summary = {k: spread([p[k] for p in per_seed])
                   for k in ("slope_mean_vs_f", "slope_sigma_vs_f", "predicted_master_slope", "kappa_median",
                             "master_slope_nhat", "master_slope_nstar", "n_at_smallest_N", "n_never",
                             "n_inside_grid")}
        data[cell] = {"per_seed": per_seed, "summary": summary, "author": _author_fit(rs),
                      "n_lags": per_seed[0]["n_lags"]}
    grid = np.asarray(next(iter(cells.values()))[0]["n_grid"], float) if cells else np.array([1.0])
    lim = [grid[0] / 10, grid[-1] * 10]
    axes[3].plot(lim, lim, "k:", lw=0.8)
    for g in (grid[0], grid[-1]):
        axes[3].axhline(g, color="grey", lw=0.6, ls="--")
    n_seeds = max((len(rs) for rs in cells.values()), default=0)
    data["pooled"] = {
        "nhat": _pooled(cells, "n_hat"), "nstar": _pooled(cells, "n_star"),
        "nhat_per_seed": [_pooled(cells, "n_hat", i)["slope"] for i in range(n_seeds)],
        "nstar_per_seed": [_pooled(cells, "n_star", i)["slope"] for i in range(n_seeds)],
        "author_per_cell": {c: d["author"].get("slope") for c, d in data.items() if c != "pooled"},
    }
    axes[0].set(xlabel="f(ℓ)", ylabel=r"$|\bar m(\ell)|$", title="A14 mean vs envelope (theory: slope 1)")
    axes[1].set(xlabel="lag ℓ", ylabel=r"$\hat\sigma(\ell)$", title="tail scale (theory: flat)")
    axes[2].set(xlabel="lag ℓ", ylabel=r"$\hat\kappa(\ell)$", title="κ̂ = α̂/(α̂−1)")
    axes[3].set(xlabel=r"$N^* = (\varepsilon\hat\sigma/|\bar m|)^{\hat\kappa}$", ylabel=r"$\hat N$ (grid)",
                title="N̂ vs N* (dashed: grid ends)", xlim=lim)
    axes[0].legend(fontsize=6)
    return fig, data
