"""The experiments behind the figures (05-experiments.md §5.3), one registered function each.

Every function takes one JSON configuration (a cell × seed × optimizer × task point of a preset)
and returns a flat dict: NumPy arrays (stored in .npz) and JSON values. Runs are independent and
deterministic for their configuration, so the runner can cache, parallelise and resume them.
"""
from __future__ import annotations

import numpy as np

import lwsim
from lwsim import diagnostics as dg
from lwsim import stats
from lwsim.tasks import make as make_task
from lwsim.train import train

from .runner import experiment


def _train_kwargs(opt, lr, weight_decay=0.0):
    kw = {"lr": lr}
    if opt == "adamw":
        kw["weight_decay"] = weight_decay
    return kw


def _curves(res):
    c = res.curves
    out = {"curve_val_step": np.asarray(c.get("val_step", []), dtype=float),
           "curve_val_mse": np.asarray(c.get("val_mse", []), dtype=float),
           "curve_val_r2": np.asarray(c.get("val_r2", []), dtype=float)}
    if "epoch_train_loss" in c:
        out["curve_train_loss"] = np.asarray(c["epoch_train_loss"], dtype=float)
    else:
        out["curve_train_loss"] = np.asarray(c.get("train_loss", []), dtype=float)
    return out


def _a_cell(name, c):
    opts = {"layernorm": True, "readout": "every"}
    if name == "constgate":
        opts["s"] = c["s0"]
    return lwsim.make_cell(name, c["D"], c["H"], **opts)


# ----------------------------------------------------------------------------- [A] main
@experiment("a_main")
def a_main(c):
    """Train on multilag, then envelope, time scales, matched statistic, tail fits, Ĥ_N (A1–A10)."""
    task = make_task("multilag", T=c["T"], D=c["D"], seed=c["seed"], lags=c["task_lags"],
                     coefs=c["task_coefs"], sigma_y=c["sigma_y"])
    ds = task.dataset(c["n_train"], c["n_val"], c["n_diag"], seed=c["seed"])
    cell = _a_cell(c["cell"], c)
    params = cell.init_params(seed=c["seed"], scheme="paper_a", s0=c["s0"])
    res = train(cell, params, ds, optimizer=c["optimizer"],
                optimizer_kwargs=_train_kwargs(c["optimizer"], c["lr"], c["weight_decay"]),
                epochs=c["epochs"], batch_size=c["batch"], clip=c["clip"], backend=c["backend"],
                seed=c["seed"], progress=False)
    p, opt = res.params, res.optimizer
    lags = np.asarray(c["lags"])
    env = dg.envelope(cell, p, ds.x_diag, opt, lags, backend=c["backend"], progress=False)
    ts = dg.timescales(lags, env.m)
    ms = dg.matched_statistic(cell, p, ds.x_diag, ds.y_diag, opt, lags, n_directions=c["K"],
                              seed=c["seed"], backend=c["backend"], progress=False)
    det = stats.detection_table(ms.samples, lags, c["n_grid"], eps=c["eps"], seed=c["seed"])
    decay = stats.fit_decay(lags, env.f)
    finite = np.isfinite(det.n_hat)
    try:
        master = stats.fit_master(det.n_hat[finite], det.kappa[finite], env.f[finite]).__dict__
    except ValueError as exc:                       # too few detectable lags at this size
        master = {"error": str(exc)}
    tau = np.where(np.isinf(ts.tau), np.nan, ts.tau)
    rho = dg.rate_timescale_spearman(env.lam_neuron, ts.tau)
    return {
        "lags": lags, "f": env.f, "f_gates": env.f_gates, "R": env.ratio, "m": env.m,
        "lam_mean": env.lam_mean, "lam_std": env.lam_std, "lam_neuron": env.lam_neuron,
        "tau": tau, "tau_r2": ts.r2, "tau_inf": np.isinf(ts.tau),
        "psi": ms.samples, "mean": det.mean, "alpha_hat": det.alpha, "sigma_hat": det.sigma,
        "kappa_hat": det.kappa, "n_hat": det.n_hat, "n_star": det.n_star,
        "reliable": det.reliable, "n_grid": det.n_grid, "h_n": det.h_n,
        "decay": _decay_dict(decay), "master": master,
        "lam_tau_spearman": float(rho[0]) if np.ndim(rho) else float(rho),
        "final_val_mse": float(res.curves["val_mse"][-1]) if res.curves.get("val_mse") else None,
        "final_val_r2": float(res.curves["val_r2"][-1]) if res.curves.get("val_r2") else None,
        **_curves(res),
    }


def _decay_dict(decay):
    return {"selected": decay.selected, "selected_bic": decay.selected_bic, "n": decay.n,
            "fits": {law: {"params": f.params, "r2": f.r2, "ssr": f.ssr, "aic": f.aic, "bic": f.bic}
                     for law, f in decay.fits.items()}}


# ----------------------------------------------------------------------------- [A] appendix
@experiment("a_fidelity")
def a_fidelity(c):
    """Exact vs first-order envelope on sinmix (A11)."""
    task = make_task("sinmix", T=c["T"], D=c["D"], seed=c["seed"], lags=c["task_lags"])
    ds = task.dataset(c["n_train"], 0, c["n_seq"], seed=c["seed"])
    opts = {"layernorm": True}
    if c["cell"] == "constgate":
        opts["s"] = c["s"]
    cell = lwsim.make_cell(c["cell"], c["D"], c["H"], **opts)
    params = cell.init_params(seed=c["seed"], scheme="paper_a", s0=c["s"])
    res = train(cell, params, ds, optimizer=c["optimizer"], optimizer_kwargs={"lr": c["lr"]},
                epochs=c["epochs"], batch_size=c["batch"], backend=c["backend"], seed=c["seed"],
                validate=False, progress=False)
    fid = dg.envelope_fidelity(cell, res.params, ds.x_diag, res.optimizer, c["lags"],
                               n_times=c["n_time"], seed=c["seed"], backend=c["backend"], progress=False)
    return {"lags": np.asarray(fid.lags), "f_exact": fid.f_exact, "f_approx": fid.f_approx,
            "offdiag": fid.offdiag, "spearman": fid.spearman, "pearson_log": fid.pearson_log,
            "slope_exact": fid.slope_exact, "slope_approx": fid.slope_approx,
            "slope_ratio": fid.slope_ratio}


# ----------------------------------------------------------------------------- [A] theory checker
@experiment("a_theory")
def a_theory(c):
    """Planted model of 04 §4.4: X = c f(ℓ) + SαS(α, σ) per lag → Ĥ_N vs the derived H_N (A12).

    theory.planted.planted_check at its defaults (law parameter λ = 0.08 / β = 1 / γ = 1, C = σ = 1,
    signal gain and N grid from theory.planted.choose_grid); eps defaults to theory.planted.EPS.
    """
    from theory.planted import EPS, planted_check
    r = planted_check(c["law"], c["alpha"], eps=c.get("eps", EPS), seed=c["seed"],
                      n_lags=c["n_lags"], n_samples=c["n_samples"])
    v = r.verdict()
    return {"law": r.law, "alpha": r.alpha, "lags": r.lags, "f": r.f, "n_grid": r.n_grid,
            "h_n": r.h_measured, "h_theory": r.h_theory, "h_theory_lo": r.h_theory_lo,
            "h_theory_hi": r.h_theory_hi, "alpha_hat": np.asarray(r.table.alpha), "kappa": r.kappa,
            "param_name": r.param_name, "param": r.param, "signal_gain": r.c, "eps": r.eps,
            "exponent_measured": r.exponent_measured, "exponent_theory": r.exponent_theory,
            "frac_resolution": v["frac_resolution"], "frac_band": v["frac_band"],
            "check_passes": v["passes"]}


# ----------------------------------------------------------------------------- [B] S1
def _b_cell(name, c, readout="last"):
    opts = {"bias": False, "readout": readout}
    if name == "constgate":
        opts["s"] = c.get("s", 0.8)
    return lwsim.make_cell(name, c["D"], c["H"], **opts)


@experiment("b_s1")
def b_s1(c):
    """Effective-LR profiles over checkpoints on the adding task (B1–B3)."""
    task = make_task("adding", T=c["T"], D=c["D"], seed=c["seed"])
    cell = _b_cell(c["cell"], c)
    params = cell.init_params(seed=c["seed"], scheme="torch")
    res = train(cell, params, task, optimizer="sgd", optimizer_kwargs={"lr": c["lr"]},
                steps=c["steps"], batch_size=c["batch"], backend=c["backend"], seed=c["seed"],
                checkpoints=c["checkpoints"], validate=False, progress=False)
    x_probe, _ = task.batch(c["probe"], c["seed"] + 7919)
    out = {}
    for ck in c["checkpoints"]:
        prof = dg.lr_profile(cell, res.checkpoints[ck], x_probe, min_points=10, backend=c["backend"],
                             progress=False)
        out[f"mu_{ck}"] = prof.mu
        for pr in prof.predictors.values():
            out[f"{pr.name}_mu0_{ck}"] = pr.mu0
            out[f"{pr.name}_mufit_{ck}"] = pr.mu_fit
            out[f"{pr.name}_s_{ck}"] = float(pr.fit.s) if pr.fit is not None else float("nan")
            out[f"{pr.name}_r2_{ck}"] = float(pr.fit.r2) if pr.fit is not None else float("nan")
        out["lags"] = prof.lags
        out["predictor_names"] = sorted(prof.predictors)
    return out


# ----------------------------------------------------------------------------- [B] S2
@experiment("b_s2")
def b_s2(c):
    """Anisotropy of Jacobian products and of the gradient covariance over checkpoints (B4–B6)."""
    task = make_task(c["task"], T=c["T"], D=c["D"], seed=c["seed"])
    cell = _b_cell(c["cell"], c)
    params = cell.init_params(seed=c["seed"], scheme="torch")
    res = train(cell, params, task, optimizer=c["optimizer"], optimizer_kwargs={"lr": c["lr"]},
                steps=c["steps"], batch_size=c["batch"], backend=c["backend"], seed=c["seed"],
                checkpoints=c["checkpoints"], validate=False, progress=False)
    x, y = task.batch(c["n_examples"], c["seed"] + 104729)
    lags = [l for l in c["lags"] if l < c["T"]]
    out = {"lags": np.asarray(lags)}
    r = min(10, c["H"])
    n_energy = min(16, c["H"])
    for ck in c["checkpoints"]:
        ja = dg.jacobian_anisotropy(cell, res.checkpoints[ck], x, lags, n_samples=c["n_triples"],
                                    seed=c["seed"], r=r, n_energy=n_energy, backend=c["backend"],
                                    progress=False)
        ga = dg.gradient_anisotropy(cell, res.checkpoints[ck], x, y, r=min(10, c["n_examples"] - 1),
                                    backend=c["backend"], progress=False)
        out[f"ai_{ck}"], out[f"ce_{ck}"] = ja.ai_median, ja.ce_median
        out[f"gai_{ck}"], out[f"gce_{ck}"], out[f"gpr_{ck}"] = float(ga.ai), float(ga.ce), float(ga.pr)
    return out


# ----------------------------------------------------------------------------- [B] expansion
@experiment("b_expansion")
def b_expansion(c):
    """Fréchet truncation error of Jacobian products along a trajectory (B7, B8)."""
    T, D, H = c["T"], c["D"], c["H"]
    rng = np.random.default_rng(c["seed"])
    t = np.linspace(0, 12, T)
    fk = np.linspace(0.03, 0.09, D)
    phase = rng.uniform(0, 2 * np.pi, D)
    x = (np.sin(fk[None, :] * t[:, None] + phase) + 0.05 * rng.standard_normal((T, D)))[:, None, :]
    cell = lwsim.make_cell(c["cell"], D, H, bias=False, readout="last")
    params = cell.init_params(seed=c["seed"], scheme="normal", sigma_w=c["sigma_w"])
    fc = dg.frechet_check(cell, params, x)
    return {"eps": fc.eps, "E": np.asarray(fc.E).reshape(len(fc.eps), -1)[:, 0],
            "C2": np.asarray(fc.C2).reshape(len(fc.eps), -1)[:, 0],
            "slope": float(np.ravel(fc.slope)[0]), "remainder": float(np.ravel(fc.remainder)[0]),
            "norm_A": np.ravel(fc.norm_A), "norm_B": np.ravel(fc.norm_B), "ratio": np.ravel(fc.ratio)}
