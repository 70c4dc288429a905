"""Measured effect of each deliberate difference from the author's code (docs/fidelity.md).

    python benchmarks/fidelity_effects.py            # quick size (≈ 2 min on 2 cores)
    python benchmarks/fidelity_effects.py --smoke    # seconds, for a check that it runs

One small multilag model per cell, trained as in A13 (D 4, H 8, T 64, lags 1 … 32, 512 diagnostic
sequences; :mod:`lwsim.figures.studies.conventions.experiment`), then every quantity under both conventions
on the same weights, plus isolated checks of the statistics-only differences. Prints a Markdown
table (one column per cell) and the isolated numbers.
"""
from __future__ import annotations

import argparse

import numpy as np

from lwsim import stats
from lwsim.figures.studies.conventions.experiment import SIZES, a_conventions
from lwsim.figures.presets import A_CELLS
from lwsim.stats import mcculloch


def _per_cell(preset):
    c = dict(SIZES[preset])
    seed = c.pop("seeds")[0]
    return {cell: a_conventions(dict(c, cell=cell, seed=seed, backend="numba")) for cell in A_CELLS}


def _fmt(v, spec="{:.3g}"):
    return "n/a" if v is None else spec.format(v)


def table(res):
    rows = []

    def row(name, fn, spec="{:.3g}"):
        rows.append(f"| {name} | " + " | ".join(_fmt(fn(r), spec) if not isinstance(fn(r), str) else fn(r)
                                                  for r in res.values()) + " |")

    row("r_t: median |Δr| / median |r|", lambda r: r["rel_r"])
    row("Γ: median |ΔΓ| / median |Γ| (all lags)", lambda r: r["rel_gamma"])
    row("Γ at the first / last lag", lambda r: f"{r['rel_gamma_lag'][0]:.3g} / {r['rel_gamma_lag'][-1]:.3g}")
    row("f: H·f_author / f_lwsim at the first / last lag",
        lambda r: f"{r['H'] * r['f_author'][0] / r['f_lwsim'][0]:.3f} / {r['H'] * r['f_author'][-1] / r['f_lwsim'][-1]:.3f}")
    row("decay λ (exponential fit) lwsim → author",
        lambda r: f"{r['decay_lwsim']['lambda']:.4f} → {r['decay_author']['lambda']:.4f}")
    row("decay law (BIC) lwsim → author",
        lambda r: f"{r['decay_lwsim']['selected_bic']} → {r['decay_author']['selected_bic']}")
    row("ψ̄: median over ℓ of |Δ mean ψ̄| / |mean ψ̄|",
        lambda r: float(np.median(np.abs(r["psi_mean_author"] - r["psi_mean_lwsim"]) / np.abs(r["psi_mean_lwsim"]))))
    row("α̂: max over ℓ of |Δα̂| (whole pipeline)", lambda r: float(np.max(np.abs(r["alpha_author"] - r["alpha_lwsim"]))))
    row("α̂: max |Δα̂| on the same samples (statistics only)", lambda r: r["stats_only_dalpha"])
    row("σ̂: max |Δσ̂|/σ̂ on the same samples (statistics only)", lambda r: r["stats_only_dsigma"])
    row("Ĥ_N at the largest N, lwsim → author", lambda r: f"{r['h_n_lwsim'][-1]:.0f} → {r['h_n_author'][-1]:.0f}")
    row("Ĥ_N: max over N of |ΔĤ_N|", lambda r: float(np.max(np.abs(r["h_n_author"] - r["h_n_lwsim"]))), "{:.0f}")
    row("orientation: share of (ℓ, batch) signs ≠ the global sign", lambda r: r["orient_disagree"])
    row("tempered law on f_lwsim: author k, cutoff coeff; lwsim k; ΔAIC author − lwsim", lambda r: r["tempered"])
    head = "| effect | " + " | ".join(res) + " |\n|---|" + "---|" * len(res)
    return head + "\n" + "\n".join(rows)


def enrich(res, preset):
    """Statistics-only and orientation numbers that need the raw samples: recomputed here."""
    from lwsim import diagnostics as dg
    from lwsim.figures.training import _a_cell, _train_kwargs
    from lwsim.tasks import make as make_task
    from lwsim.train import train
    c = dict(SIZES[preset])
    seed = c.pop("seeds")[0]
    for cell, r in res.items():
        r["H"] = c["H"]
        task = make_task("multilag", T=c["T"], D=c["D"], seed=seed, lags=c["task_lags"],
                         coefs=c["task_coefs"], sigma_y=c["sigma_y"])
        ds = task.dataset(c["n_train"], c["n_val"], c["n_diag"], seed=seed)
        cl = _a_cell(cell, c)
        p0 = cl.init_params(seed=seed, scheme="paper_a", s0=c["s0"])
        tr = train(cl, p0, ds, optimizer=c["optimizer"],
                   optimizer_kwargs=_train_kwargs(c["optimizer"], c["lr"], c["weight_decay"]),
                   epochs=c["epochs"], batch_size=c["batch"], clip=c["clip"], backend="numba", seed=seed,
                   progress=False)
        lags = np.asarray(c["lags"])
        ms = dg.matched_statistic(cl, tr.params, ds.x_diag, ds.y_diag, tr.optimizer, lags, seed=seed,
                                  backend="numba", progress=False)
        fits = [(stats.fit_alpha(x - x.mean(), seed=1, n_boot=c["n_boot"]),
                 stats.fit_alpha(x - x.mean(), seed=1, n_boot=c["n_boot"], conventions="author")) for x in ms.samples]
        r["stats_only_dalpha"] = max(abs(a.alpha - b.alpha) for a, b in fits)
        r["stats_only_dsigma"] = max(abs(b.sigma / a.sigma - 1) for a, b in fits if a.sigma > 0)
        ma = dg.matched_statistic(cl, tr.params, ds.x_diag, ds.y_diag, tr.optimizer, lags, seed=seed,
                                  backend="numba", progress=False, conventions="author", orient=True)
        raw = dg.matched_statistic(cl, tr.params, ds.x_diag, ds.y_diag, tr.optimizer, lags, seed=seed,
                                   backend="numba", progress=False, conventions="author")
        glob = np.where(raw.samples.mean(axis=1) < 0, -1.0, 1.0)
        r["orient_disagree"] = float(np.mean(ma.signs[0] != glob[:, None]))
        tl = stats.fit_decay(lags, r["f_lwsim"], laws=("exponential", "power", "tempered")).fits["tempered"]
        ta = stats.fit_decay(lags, r["f_lwsim"], laws=("exponential", "power", "tempered"),
                             conventions="author").fits["tempered"]
        r["tempered"] = (f"{ta.params['k']:.2f}, {ta.params['cutoff_coeff']:.3g}; {tl.params['k']:.2f}; "
                         f"ΔAIC {ta.aic - tl.aic:+.1f}")
    return res


def isolated():
    """The statistics-only differences on synthetic data (no model)."""
    out = []
    fine = mcculloch.table()
    d = []
    for a in np.arange(1.0, 2.0005, 0.001):
        k = int(np.argmin(np.abs(fine["alpha"] - a)))
        q = np.array([-fine["ratio"][k], -1.0, 1.0, fine["ratio"][k]])
        d.append((abs(float(mcculloch.author_quantile_fit(q)[0]) - float(mcculloch.alpha_from_quantiles(q, 1.0)[0])), a))
    dm = max(d)
    near = max(x for x in d if x[1] <= 1.01)
    out.append(f"McCulloch table (exact quantiles of SαS(α), α on a 0.001 grid): max |Δα̂| = {dm[0]:.2g} "
               f"(at α = {dm[1]:.3f}); within α ≤ 1.01 (the R(1.005) = R(1) repeat): {near[0]:.2g} at α = {near[1]:.3f}")
    x = np.random.default_rng(7).standard_normal(3000)
    fl, fa = stats.fit_alpha(x, method="ecf"), stats.fit_alpha(x, method="ecf", conventions="author")
    g = stats.fit_alpha(100 * x, method="ecf", conventions="author")
    out.append(f"ECF σ̂ on N(0, 1), n = 3000 (α̂ clipped at 2): σ̂ lwsim {fl.sigma:.4f}, author {fa.sigma:.4f} "
               f"(true 1/√2 = {1 / np.sqrt(2):.4f}); data ×100 → author σ̂ ×{g.sigma / fa.sigma:.2f}")
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--smoke", action="store_true")
    preset = "smoke" if ap.parse_args().smoke else "quick"
    res = enrich(_per_cell(preset), preset)
    print(table(res))
    print()
    for line in isolated():
        print("- " + line)


if __name__ == "__main__":
    main()
