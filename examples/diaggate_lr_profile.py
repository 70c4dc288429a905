"""[B]'s effective-learning-rate profile of a DiagGate during training (docs/diagnostics.md §2.8).

A multi-gate cell (``diaggate``: one gate per neuron) is trained with SGD on the ``adding`` task,
read out at the last step, with checkpoints. At each checkpoint lwsim computes the normalised
profile μ̃(h) = median S(h) / median S(1), S = ‖M_{t,t−h}‖₂ the exact spectral norm of the
transport product, and the gate-product predictors μ̃⁰(h) = P̄(h)/P̄(1) and the fitted power
(P̄(h)/P̄(1))^s.

Run: ``python examples/diaggate_lr_profile.py [tiny|small]``.
"""
from __future__ import annotations

import sys

import numpy as np

import lwsim
from lwsim import diagnostics as dg
from lwsim import tasks, train

SIZES = {"tiny": dict(T=16, H=8, steps=20, checkpoints=(0, 10, 20), probe=4),
         "small": dict(T=40, H=32, steps=300, checkpoints=(0, 50, 150, 300), probe=12)}


def main(size: str = "tiny", seed: int = 0) -> dict:
    if size not in SIZES:
        raise ValueError(f"size must be one of {sorted(SIZES)}, got {size!r}")
    cfg = SIZES[size]
    task = tasks.make("adding", T=cfg["T"], D=2, seed=seed)
    cell = lwsim.make_cell("diaggate", n_in=2, n_hidden=cfg["H"], n_out=1, bias=False,
                           readout="last", dtype="float64")
    params = cell.init_params(seed=seed, scheme="torch")
    res = train.train(cell, params, task, "sgd", optimizer_kwargs={"lr": 1e-2}, steps=cfg["steps"],
                      batch_size=16, checkpoints=cfg["checkpoints"], seed=seed, progress=False,
                      validate=False)
    x, _ = task.batch(cfg["probe"], np.random.default_rng(seed + 1))
    profiles = {}
    for step in sorted(res.checkpoints):
        prof = dg.lr_profile(cell, res.checkpoints[step], x, progress=False, min_points=5)
        profiles[step] = prof
        pred = prof.predictors["retention"]
        h = [1, 2, 4, 8, int(prof.lags[-1])]
        print(f"step {step:4d}: μ̃(h) at h = {h}: " + " ".join(f"{prof.mu[k - 1]:.3g}" for k in h)
              + f"; zero-order retention predictor at h = {h[-1]}: {pred.mu0[-1]:.3g}, "
              f"fitted power s = {pred.fit.s:.2f}")
    return profiles


if __name__ == "__main__":
    main(sys.argv[1] if len(sys.argv) > 1 else "tiny")
