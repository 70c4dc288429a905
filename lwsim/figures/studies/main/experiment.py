"""[A] main grid experiment ``a_main`` (docs/experiments.md §5.3): train on multilag, then the
envelope, time scales, matched statistic, tail fits and Ĥ_N under every null of the preset."""
from __future__ import annotations

from typing import ClassVar

import numpy as np

from lwsim import diagnostics as dg
from lwsim import stats

from ...config import AMultilag, ATrained, AWindow, list_field, run_config
from ...training import FLOOR_ABLATIONS, TABLE_KEYS, _curves, _decay_dict, _master, a_null_tables, train_a_model
from ...run import experiment
from ...timing import part


@run_config("a_main")
class AMain(ATrained, AWindow, AMultilag):
    """An a_main run: the [A] training for ``epochs`` over ``n_train`` sequences, then the window
    chain on its lag grid under each of ``nulls`` and ``floor_ablations`` (studies/main/sizes.py)."""
    lags: list[int]
    epochs: int
    n_train: int
    nulls: list[str] = list_field("lag")
    floor_ablations: list[str] = list_field()
    CHOICES: ClassVar[dict] = {"nulls": ("lag", "full", *FLOOR_ABLATIONS), "floor_ablations": tuple(FLOOR_ABLATIONS)}


@experiment("a_main")
def a_main(c):
    """Train on multilag, then envelope, time scales, matched statistic, tail fits, Ĥ_N (A1–A10).

    The statistic, Λ, orientation, tail fits and fit window follow the preset's options (listed in
    studies/main/sizes.py; docs/experiments.md §5.3): absent options keep lwsim's defaults.
    """
    c = AMain.of(c)
    ds, cell, res = train_a_model(c)
    p, opt = res.params, res.optimizer
    lags = np.asarray(c.lags)
    no_lambda = c.rates == "none"          # Λ ≡ 1: the earlier code's statistic
    rates = 1.0 if no_lambda else opt
    statistic = c.statistic
    # one pass over the diagnostic sequences: each chunk's forward pass and Jacobian diagonal serve
    # the envelope and the matched statistic (counted under "envelope" in the profile); the nulls
    # and floor ablations of the preset (docs/statistics.md §3.3) on the same samples
    nulls = [n for n in c.nulls if not (n == "full" and statistic == "instantaneous")]
    env, ms, null_tables = a_null_tables(cell, p, rates, ds.x_diag, ds.y_diag, c, nulls=nulls,
                                         ablations=c.floor_ablations, timer=part,
                                         envelope_kwargs={"eta": 1.0 if no_lambda else None},
                                         statistic=statistic)
    with part("envelope"):
        f, f_gates = (env.f / c.H, env.f_gates / c.H) if no_lambda else (env.f, env.f_gates)  # mean over q
        ts = dg.timescales(lags, env.m)
        tau = np.where(np.isinf(ts.tau), np.nan, ts.tau)
        rho = dg.rate_timescale_spearman(env.lam_neuron, ts.tau)
    tables = null_tables.pop("lag")
    main_method = next(iter(tables))
    det = tables[main_method]
    with part("fits"):
        if c.decay_window == "author":
            decay = stats.fit_decay(lags, f, floor=stats.envelope_floor(f), trim=0.02)
        else:
            decay = stats.fit_decay(lags, f)
        master = _master(det, f)
    null_out = {}
    for name, by_method in null_tables.items():  # the other nulls, keys with the suffix _<null>
        t = by_method[main_method]
        with part("fits"):
            mst = _master(t, f)
        null_out.update({f"{key}_{name}": getattr(t, field) for key, field in TABLE_KEYS.items()})
        null_out[f"master_{name}"] = mst
    B = ds.x_diag.shape[1]
    psi = (np.stack([s.reshape(B, -1).mean(axis=1) for s in ms.samples]) if statistic == "instantaneous"
           else ms.samples)                         # per-sequence means either way
    extra = {}
    for m, t in tables.items():
        if m != main_method:
            extra.update({f"alpha_hat_{m}": t.alpha, f"sigma_hat_{m}": t.sigma, f"kappa_hat_{m}": t.kappa,
                          f"n_hat_{m}": t.n_hat, f"n_star_{m}": t.n_star, f"reliable_{m}": t.reliable,
                          f"h_n_{m}": t.h_n})
    return {
        "lags": lags, "f": f, "f_gates": f_gates, "R": env.ratio, "m": env.m,
        "lam_mean": env.lam_mean, "lam_std": env.lam_std, "lam_neuron": env.lam_neuron,
        "tau": tau, "tau_r2": ts.r2, "tau_inf": np.isinf(ts.tau),
        "psi": psi, "mean": det.mean, "alpha_hat": det.alpha, "sigma_hat": det.sigma,
        "kappa_hat": det.kappa, "n_hat": det.n_hat, "n_star": det.n_star,
        "reliable": det.reliable, "n_grid": det.n_grid, "h_n": det.h_n,
        "n_samples": det.n_samples, "tail_methods": list(tables), **extra,
        "nulls": ["lag"] + list(null_tables), **null_out,
        "decay": _decay_dict(decay), "master": master,
        "lam_tau_spearman": float(rho[0]) if np.ndim(rho) else float(rho),
        "final_val_mse": float(res.curves["val_mse"][-1]) if res.curves.get("val_mse") else None,
        "final_val_r2": float(res.curves["val_r2"][-1]) if res.curves.get("val_r2") else None,
        **_curves(res),
    }
