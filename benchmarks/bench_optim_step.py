"""The optimizer step: the fused numba Adam/AdamW kernel against the NumPy reference path, side by
side in one run, on the parameter dicts the figure grid trains (docs/experiments.md §5.2).

Both paths give the same bits (tests/test_optim.py); this prints what the fusion saves per
step, and one whole A16 training (lwsim.figures' delay study, quick preset) with each path.

    python benchmarks/bench_optim_step.py [--rounds 5]
"""
from __future__ import annotations

import argparse
import json
import statistics
import time

import numpy as np

import lwsim
from lwsim import optim


def _opt(params, reference):
    opt = optim.make("adamw", params, lr=3e-2, weight_decay=1e-4)
    if reference:                                   # the per-array NumPy _update of the base class
        opt._apply = lambda grads, o=opt: optim.Optimizer._apply(o, grads)
    return opt


def step_time(cell, reference, n=400):
    p = cell.init_params(seed=0)
    g = {k: np.full_like(v, 1e-3) for k, v in p.items()}
    opt = _opt(p, reference)
    opt.step(g)
    t = time.perf_counter()
    for _ in range(n):
        opt.step(g)
    return (time.perf_counter() - t) / n


def delay_training(reference):
    from lwsim.figures.studies.delay import delay_dataset, delay_runs, delay_train_kwargs
    from lwsim.figures.training import _a_cell, _a_params
    from lwsim.train import train
    c = json.loads(delay_runs("quick", "numba")[7].config_json)
    ds, cell = delay_dataset(c, c["N"]), _a_cell(c["cell"], c)
    kw = delay_train_kwargs(c)
    real = optim.Adam._apply
    if reference:
        optim.Adam._apply = optim.Optimizer._apply
    try:
        train(cell, _a_params(cell, c), ds, **kw)
        t = time.perf_counter()
        train(cell, _a_params(cell, c), ds, **kw)
        return time.perf_counter() - t
    finally:
        optim.Adam._apply = real


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--rounds", type=int, default=5)
    args = ap.parse_args()
    cases = [(name, lwsim.make_cell(name, 4, h, dtype="float32")) for name, h in
             (("gru", 8), ("lstm", 16), ("constgate", 8))]
    print(f"{'case':<28}{'NumPy ref':>12}{'fused':>12}{'ratio':>8}")
    for name, cell in cases:
        ref = statistics.median(step_time(cell, True) for _ in range(args.rounds))
        fused = statistics.median(step_time(cell, False) for _ in range(args.rounds))
        print(f"{'step ' + name + ' H' + str(cell.n_hidden) + ' f32':<28}{ref * 1e6:>10.1f}us"
              f"{fused * 1e6:>10.1f}us{ref / fused:>8.2f}")
    ref = statistics.median(delay_training(True) for _ in range(args.rounds))
    fused = statistics.median(delay_training(False) for _ in range(args.rounds))
    print(f"{'A16 training (300 steps)':<28}{ref:>11.3f}s{fused:>11.3f}s{ref / fused:>8.2f}")


if __name__ == "__main__":
    main()
