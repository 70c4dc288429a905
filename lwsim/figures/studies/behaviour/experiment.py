"""A15: does the diagnostic window Ĥ_N predict what a network learns? (docs/experiments.md §5.6)

One run per cell × seed × training budget N: train on a fresh training set of N multilag
sequences (seeded by (seed, N)); the validation and held-out sequences, the initial parameters,
the optimizer, its schedule and the number of steps are the same for every N, so only the data
changes and the cost does not grow with N. Then, on the same trained model:

- the learned lag response ĉ(ℓ) on the held-out sequences and the learned window H^beh_N with its
  smooth version (lwsim.diagnostics.behaviour, docs/diagnostics.md §2.11);
- the diagnostic window Ĥ_N under every null that ``training.a_windows`` returns (its tables'
  N̂(ℓ) read at this run's N), on the same held-out sequences, with the trained optimizer's rates;
- at the largest N only, the envelope f(ℓ) and its decay-law fit (the law finding 9 sets beside
  the growth law of H^beh_N).
"""
from __future__ import annotations

import numpy as np

from lwsim import diagnostics as dg
from lwsim import stats
from lwsim.diagnostics.behaviour import behavioural_window, lag_coefficients
from lwsim.tasks import Dataset
from lwsim.tasks import make as make_task
from lwsim.train import train

from ...training import _a_cell, _a_params, _decay_dict, _float64, _train_kwargs, a_windows, init_windows
from ...config import AMultilag, ATrained, AWindow, list_field, run_config
from ...presets import A_CELLS, A_LAGS_FINAL, A_OPTIONS_FINAL, SEEDS_MEDIUM
from ...run import Run, experiment
from ...timing import part

TRAIN_STREAM = 0xBE4A          # the training sequences' own stream: SeedSequence([seed, N, this])


def behaviour_task(c):
    """The A15 task: multilag with the preset's ``task_lags``/``task_coefs`` and σ_y."""
    return make_task("multilag", T=c["T"], D=c["D"], seed=c["seed"], lags=c["task_lags"],
                     coefs=c["task_coefs"], sigma_y=c["sigma_y"])


def behaviour_dataset(c, N):
    """Training set of N sequences drawn from the stream (seed, N); validation and held-out
    sequences from the seed alone, the same for every N (docs/experiments.md §5.6)."""
    task = behaviour_task(c)
    x, y = task.batch(int(N), np.random.SeedSequence([int(c["seed"]), int(N), TRAIN_STREAM]))
    fixed = task.dataset(0, c["n_val"], c["n_diag"], seed=c["seed"])
    return Dataset(x_train=x, y_train=y, x_val=fixed.x_val, y_val=fixed.y_val, x_diag=fixed.x_diag,
                   y_diag=fixed.y_diag, readout=task.readout, task=task, seed=int(c["seed"]))


def behaviour_train_kwargs(c):
    """The training settings, identical for every N: optimizer, its hyper-parameters, a fixed
    number of steps over the training set (steps= cycles shuffled epochs of it), batch, clip,
    seed, validation every ``val_every`` steps, early stopping (best validation checkpoint)."""
    return dict(optimizer=c["optimizer"], optimizer_kwargs=_train_kwargs(c["optimizer"], c["lr"], c["weight_decay"]),
                steps=c["steps"], batch_size=c["batch"], clip=c["clip"], backend=c["backend"], seed=c["seed"],
                val_every=c["val_every"], best_checkpoint=True, progress=False,
                checkpoints=[early_step(c)] if ABehaviour.read(c, "points") else [])


def early_step(c):
    """The early training point of issue 30 item 6: 10% of the steps (at least 1)."""
    return max(1, int(c["steps"]) // 10)


# A15's sizes (docs/experiments.md §5.6): multilag with a dependency at every lag 1 … L
# (coefficients falling linearly from c0 to c0/4, σ_y 3), one run per cell × seed × budget N, the
# same number of training steps for every N. ε = 2: at ε = 20 (a_main's quick) N̂(ℓ) exceeded the
# largest budget at every lag in a pilot, so Ĥ_N would be 0 throughout. σ_y = 3: with σ_y = 1 the
# learned window sat at the task's end from N = 16 for 4 of 5 cells (quick and medium,
# docs/experiments.md §5.6), so it could not be read against N; 9× the noise variance moves the
# budgets at which lags are learned into the grid.
def _behaviour_task(L, c0=0.05):
    return dict(task_lags=list(range(1, L + 1)), task_coefs=[round(c0 * (1 - 0.75 * (l - 1) / (L - 1)), 6)
                                                             for l in range(1, L + 1)])


_QUICK = dict(train_dtype="float32", T=128, D=4, H=16, s0=0.05, optimizer="adamw", lr=3e-3,
              weight_decay=1e-4, clip=1.0, batch=16, steps=240, val_every=20, n_val=64, n_diag=512,
              sigma_y=3.0, **_behaviour_task(96), lags=list(range(4, 113, 4)), beh_max_lag=112,
              budgets=[16, 40, 100, 250, 640, 1600], n_grid=[16, 40, 100, 250, 640, 1600],
              eps=2.0, K=1, frac=0.5, z_band=3.0, seeds=[212, 1001, 2002],
              points=["init", "early", "final"])   # issue 30 item 6: Ĥ_N at three training points
_MEDIUM_BUDGETS = [16 * 2 ** i for i in range(9)]                        # 16 … 4096
# paper sizes: [A]'s final T, D, H, lag grid and options; budgets 100 … 25600
_PAPER_BUDGETS = [100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600]
_PAPER = dict(_QUICK, T=1536, D=16, H=256, lr=2e-4, batch=384, steps=3000, val_every=100,
              n_val=1000, n_diag=12000, **_behaviour_task(768, c0=0.02), lags=A_LAGS_FINAL,
              beh_max_lag=800, budgets=_PAPER_BUDGETS, n_grid=_PAPER_BUDGETS, K=50,
              seeds=[2, 12, 31, 41, 51], **A_OPTIONS_FINAL)
# The a_behaviour group's sizes per preset (docs/presets.md).
SIZES = {"a_behaviour": {
    "smoke": dict(_QUICK, T=24, D=3, H=6, batch=8, steps=6, val_every=2, n_val=16, n_diag=32,
                  **_behaviour_task(12), lags=[2, 4, 6, 8, 10, 12, 14, 16], beh_max_lag=16,
                  budgets=[8, 16, 32], n_grid=[8, 16, 32], seeds=[212]),
    "quick": _QUICK,
    "medium": dict(_QUICK, T=192, H=32, steps=400, **_behaviour_task(144), lags=list(range(4, 169, 4)),
                   beh_max_lag=168, budgets=_MEDIUM_BUDGETS, n_grid=_MEDIUM_BUDGETS, seeds=SEEDS_MEDIUM),
    "paper": _PAPER, "paper-v1": _PAPER}}


def behaviour_runs(preset, backend):
    """The A15 runs of a preset: one per cell × seed × N of ``a_behaviour``'s ``budgets``."""
    c = SIZES["a_behaviour"][preset]
    base = {k: v for k, v in c.items() if k != "seeds"}
    return [Run.make("a_behaviour", **base, cell=cell, seed=s, N=int(N), backend=backend)
            for cell in A_CELLS for s in c["seeds"] for N in c["budgets"]]


@run_config("a_behaviour")
class ABehaviour(ATrained, AWindow, AMultilag):
    """An a_behaviour run: ``steps`` steps on N multilag sequences, the learned window from the lag
    coefficients up to ``beh_max_lag`` (``frac``, ``z_band``), Ĥ_N on ``lags`` at each of
    ``points`` (none: the final model only)."""
    lags: list[int]
    N: int
    steps: int
    val_every: int
    beh_max_lag: int
    budgets: list[int]
    frac: float
    z_band: float
    points: list[str] = list_field()


@experiment("a_behaviour")
def a_behaviour(c):
    """Train on N sequences, then ĉ(ℓ), H^beh_N and Ĥ_N under each null on the same model (A15)."""
    c = ABehaviour.of(c)
    N = int(c["N"])
    with part("training"):
        ds = behaviour_dataset(c, N)
        cell = _a_cell(c["cell"], c)
        p0 = _a_params(cell, c)
        res = train(cell, p0, ds, **behaviour_train_kwargs(c))
        cell, res = _float64(cell, res)
        p0 = {k: np.asarray(v, np.float64) for k, v in p0.items()}
    p, opt = res.params, res.optimizer
    task = ds.task
    with part("diagnostics"):
        y_hat = cell.forward(p, ds.x_diag, backend=c["backend"]).y
        beh_lags = np.arange(1, int(c["beh_max_lag"]) + 1)
        co = lag_coefficients(y_hat, ds.x_diag, task.u, beh_lags)
        win = behavioural_window(co, c["task_lags"], c["task_coefs"], frac=c["frac"], z_band=c["z_band"])
    with part("matched"):
        tables = a_windows(cell, p, opt, ds.x_diag, ds.y_diag, c)
    out = {"N": N, "beh_lags": beh_lags, "c_hat": co.c_hat, "c_se": co.se,
           "task_lags": np.asarray(c["task_lags"]), "task_coefs": np.asarray(c["task_coefs"], float),
           "ratio": win.ratio, "recovered": win.recovered, "h_beh": win.h, "h_beh_smooth": win.h_smooth,
           "nulls": list(tables), "lags": np.asarray(c["lags"]), "n_grid": np.asarray(c["n_grid"], float),
           "best_step": int(res.curves["val_step"][int(np.argmin(res.curves["val_mse"]))]),
           "final_val_r2": float(np.asarray(res.curves["val_r2"])[int(np.argmin(res.curves["val_mse"]))])}
    for null, t in tables.items():
        out[f"h_diag_{null}"] = float(stats.learnability_window(t.lags, t.n_hat, N))
        out[f"n_hat_{null}"] = np.asarray(t.n_hat, float)
    if c.points:    # Ĥ_N at the initial parameters (P = η·I) and the early checkpoint (§5.6, §5.7)
        from lwsim import optim
        k = early_step(c)
        early = res.checkpoints[k], optim.from_state_dict(res.checkpoints[k], res.checkpoint_opt_states[k])
        with part("matched"):
            points = {"init": init_windows(cell, p0, c["lr"], ds.x_diag, ds.y_diag, c, nulls=("lag", "full")),
                      "early": a_windows(cell, *early, ds.x_diag, ds.y_diag, c, nulls=("lag", "full"))}
            for pt, tables in points.items():
                for null, t in tables.items():
                    out[f"h_diag_{null}_{pt}"] = float(stats.learnability_window(t.lags, t.n_hat, N))
    if N == max(c["budgets"]):             # the cell's envelope and its decay law, once per cell × seed
        with part("envelope"):
            env = dg.envelope(cell, p, ds.x_diag, opt, np.asarray(c["lags"]), backend=c["backend"], progress=False)
        with part("fits"):
            try:
                out["decay"] = _decay_dict(stats.fit_decay(np.asarray(c["lags"], float), env.f))
            except ValueError as exc:
                out["decay"] = {"error": str(exc)}
        out["f"] = env.f
    return out
