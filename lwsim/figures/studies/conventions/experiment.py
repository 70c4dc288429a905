"""A13: the same trained weights under conventions "lwsim" and "author" (docs/fidelity.md).

One run per cell: train a small multilag model (the a_main recipe at a small size), then compute
f(ℓ), ψ̄, (α̂, σ̂), N̂(ℓ), Ĥ_N and the decay-law fit twice, once per convention, on the same weights
and the same diagnostic sequences; plus the per-step relative change of r_t and of Γ.
"""
from __future__ import annotations

import numpy as np

from lwsim import diagnostics as dg
from lwsim import stats
from lwsim.conventions import as_conventions
from lwsim.diagnostics.gamma import gate_factors

from ...config import AMultilag, ATrained, AWindow, run_config
from ...training import train_a_model
from ...presets import A_CELLS
from ...run import Run, experiment
from ...timing import part

CONVENTIONS = ("lwsim", "author")
_N_GRID = [25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200]
# The comparison size (D 4, H 8, T 64, lags 1 … 32); 512 diagnostic sequences = 4 of the
# author's 128-sequence orientation batches and enough samples for reliable tail fits.
QUICK = dict(train_dtype="float32", T=64, D=4, H=8, n_train=256, n_val=64, n_diag=512, epochs=10, batch=32, lr=3e-3,
             weight_decay=1e-4, clip=1.0, s0=0.05, task_lags=[2, 4, 8, 16], task_coefs=[0.6, 0.5, 0.4, 0.3],
             sigma_y=0.3, lags=list(range(1, 33)), n_grid=_N_GRID, eps=20.0, K=1, n_boot=200,
             seeds=[212], optimizer="adamw")
_SIZES = {
    "smoke": dict(QUICK, T=24, D=3, H=6, n_train=32, n_val=16, n_diag=64, epochs=1, batch=16,
                  task_lags=[2, 4, 8], task_coefs=[0.6, 0.5, 0.4], lags=list(range(1, 13)),
                  n_grid=[25, 100, 400, 1600], n_boot=20),
    "quick": QUICK,
    "medium": dict(QUICK, seeds=[212, 1001, 2002]),
    "paper": dict(QUICK, T=256, D=8, H=32, n_diag=1024, epochs=30, lags=list(range(1, 129)),
                  task_lags=[8, 16, 32, 64], seeds=[212, 1001, 2002]),
}


# The a_conventions group's sizes per preset (docs/presets.md); paper-v1 as paper.
SIZES = {"a_conventions": {**_SIZES, "paper-v1": _SIZES["paper"]}}


def conventions_runs(preset, backend):
    """The A13 runs of a preset: one per cell and seed (sizes: :data:`SIZES`)."""
    c = SIZES["a_conventions"][preset]
    base = {k: v for k, v in c.items() if k != "seeds"}
    return [Run.make("a_conventions", **base, cell=cell, seed=s, backend=backend)
            for cell in A_CELLS for s in c["seeds"]]


def _rel(a, b):
    """median |a − b| / median |b| over finite entries."""
    ok = np.isfinite(a) & np.isfinite(b)
    den = np.median(np.abs(b[ok]))
    return float(np.median(np.abs(a[ok] - b[ok])) / den) if den > 0 else 0.0


def _decay(lags, f):
    try:
        d = stats.fit_decay(lags, f, laws=("exponential", "power", "tempered"))
    except ValueError as exc:
        return {"error": str(exc)}
    return {"selected": d.selected, "selected_bic": d.selected_bic,
            "lambda": d.fits["exponential"].params["lambda"], "beta": d.fits["power"].params["beta"]}


@run_config("a_conventions")
class AConventions(ATrained, AWindow, AMultilag):
    """An a_conventions run: the a_main training (``epochs`` over ``n_train`` sequences), then the
    quantities on ``lags`` under both conventions."""
    lags: list[int]
    epochs: int
    n_train: int


@experiment("a_conventions")
def a_conventions(c):
    """Both conventions on one trained model (A13)."""
    c = AConventions.of(c)
    ds, cell, res = train_a_model(c)        # the a_main training (same init, same bits)
    p, opt = res.params, res.optimizer
    lags = np.asarray(c["lags"])
    x16 = ds.x_diag[:, :16]
    with part("diagnostics"):
        fl, fa = gate_factors(cell, p, x16), gate_factors(cell, p, x16, conventions="author")
        gl = dg.transport_factors(cell, p, x16, lags, engine="numpy")
        ga = dg.transport_factors(cell, p, x16, lags, conventions="author")
    out = {"lags": lags, "rel_r": _rel(fa.r, fl.r), "rel_gamma": _rel(ga, gl),
           "rel_gamma_lag": np.array([_rel(ga[i], gl[i]) for i in range(lags.size)])}
    for conv in CONVENTIONS:
        cv = as_conventions(conv)
        with part("envelope"):       # the author's sources accumulate in NumPy (engine not read)
            env = dg.envelope(cell, p, ds.x_diag, opt, lags, backend=c["backend"], progress=False, conventions=conv,
                              engine="numpy" if cv.envelope_sources == "source_state" else "numba")
        with part("matched"):
            ms = dg.matched_statistic(cell, p, ds.x_diag, ds.y_diag, opt, lags, n_directions=c["K"],
                                      seed=c["seed"], orient=True, backend=c["backend"], progress=False,
                                      conventions=conv)
        with part("tails"):
            det = stats.detection_table(ms.samples, lags, c["n_grid"], eps=c["eps"], seed=c["seed"],
                                        n_boot=c["n_boot"], conventions=conv)
        # the author's runner fits the laws to the mean log-mass per sequence, lwsim to log f
        fit_on = np.exp(env.log_mass) if cv.decay_fit_on == "log_mass" else env.f
        out.update({f"f_{conv}": env.f, f"psi_mean_{conv}": ms.samples.mean(axis=1),
                    f"alpha_{conv}": det.alpha, f"sigma_{conv}": det.sigma, f"n_hat_{conv}": det.n_hat,
                    f"h_n_{conv}": det.h_n,
                    f"signs_flipped_{conv}": float(np.mean(ms.signs < 0))})
        with part("fits"):
            out[f"decay_{conv}"] = _decay(lags, fit_on)
        if env.log_mass is not None:              # the author's sources: key log_mass_author
            out[f"log_mass_{conv}"] = env.log_mass
    out["n_grid"] = np.asarray(c["n_grid"], dtype=float)
    return out
