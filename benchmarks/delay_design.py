"""Pilot for A16's delay-task design (docs/experiments.md §5.7): learned(ℓ*, N) per cell at a
candidate setting, and the wall time of one run. Run under ``nice``:

    nice -n 10 python benchmarks/delay_design.py --T 48 --H 8 --steps 300 --lr 0.01 --c 0.5 --sigma 1

Prints, per cell, the map learned(ℓ*, N) (A15's rule at one lag: held-out ĉ(ℓ*) outside the
3-SE band and within ½ of c) with ĉ/c, and the mean seconds per run (training and the read-out).
"""
from __future__ import annotations

import argparse
import time

import numpy as np

from lwsim.diagnostics.behaviour import behavioural_window, lag_coefficients
from lwsim.figures.training import _a_cell, _a_params, _train_kwargs
from lwsim.tasks import Dataset
from lwsim.tasks import make as make_task
from lwsim.train import train

CELLS = ("constgate", "sharedgate", "diaggate", "gru", "lstm")


def one(cell_name, lag, N, a, seed):
    c = dict(T=a.T, D=a.D, H=a.H, s0=0.05, seed=seed, train_dtype="float32")
    task = make_task("multilag", T=a.T, D=a.D, seed=seed, lags=[lag], coefs=[a.c], sigma_y=a.sigma)
    x, y = task.batch(N, np.random.SeedSequence([seed, N, lag, 0xDE1A]))
    fixed = task.dataset(0, 32, a.n_diag, seed=seed)
    ds = Dataset(x_train=x, y_train=y, x_val=fixed.x_val, y_val=fixed.y_val, x_diag=fixed.x_diag,
                 y_diag=fixed.y_diag, readout=task.readout, task=task, seed=seed)
    cell = _a_cell(cell_name, c)
    res = train(cell, _a_params(cell, c), ds, optimizer="adamw", optimizer_kwargs=_train_kwargs("adamw", a.lr, 1e-4),
                steps=a.steps, batch_size=a.batch, clip=1.0, backend="numba", seed=seed,
                val_every=max(1, a.steps // 10), best_checkpoint=True, progress=False)
    y_hat = cell.forward(res.params, ds.x_diag, backend="numba").y
    co = lag_coefficients(np.asarray(y_hat, float), ds.x_diag, task.u, [lag])
    win = behavioural_window(co, [lag], [a.c], frac=0.5, z_band=3.0)
    return bool(win.recovered[0]), float(co.c_hat[0] / a.c)


def main():
    p = argparse.ArgumentParser()
    for k, v in dict(T=48, D=4, H=8, steps=300, batch=16, n_diag=256, seed=212).items():
        p.add_argument(f"--{k}", type=int, default=v)
    for k, v in dict(lr=0.01, c=0.5, sigma=1.0).items():
        p.add_argument(f"--{k}", type=float, default=v)
    p.add_argument("--lags", default="2,4,7,12,20,24")
    p.add_argument("--budgets", default="16,50,160,500,1600")
    p.add_argument("--cells", default=",".join(CELLS))
    a = p.parse_args()
    lags = [int(v) for v in a.lags.split(",")]
    budgets = [int(v) for v in a.budgets.split(",")]
    print(vars(a))
    times = []
    for cell in a.cells.split(","):
        print(f"{cell}: rows ℓ* {lags}, columns N {budgets}  (1 = learned; ĉ/c)")
        for lag in lags:
            row = []
            for N in budgets:
                t0 = time.perf_counter()
                ok, r = one(cell, lag, N, a, a.seed)
                times.append(time.perf_counter() - t0)
                row.append(f"{int(ok)} {r:+.2f}")
            print(f"  ℓ*={lag:3d}: " + " | ".join(row), flush=True)
    print(f"seconds per run: mean {np.mean(times[1:]):.3f} (first {times[0]:.2f}, {len(times)} runs)")


if __name__ == "__main__":
    main()
