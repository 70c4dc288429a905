"""Experiment presets (05-experiments.md §5.3): smoke (seconds, tests), quick (default), paper.

Every experiment reads its sizes from here; a run's configuration is the dict it receives, so the
results cache (runner.py) distinguishes presets automatically.
"""
from __future__ import annotations

import numpy as np

A_CELLS = ("constgate", "sharedgate", "diaggate", "gru", "lstm")
B_MODELS = ("constgate", "sharedgate", "diaggate")        # [B] leaky (s = 0.8), scalar gate, multi-gate
B_S2_MODELS = (("rnn", "adam", 1e-3), ("sharedgate", "sgd", 1e-2), ("diaggate", "sgd", 1e-2))
B_TASKS = ("adding", "ar2", "movingavg", "delaysum", "narma10")


def _lag_grid(lo, hi, n):
    return sorted({int(v) for v in np.unique(np.round(np.geomspace(lo, hi, n)))})


PAPER = {
    "a_main": dict(T=1024, D=16, H=128, n_train=8000, n_val=1000, n_diag=8000, epochs=750, batch=512,
                   lr=1e-3, weight_decay=1e-4, clip=1.0, s0=0.05,
                   task_lags=[32, 64, 128, 192, 256], task_coefs=[0.6, 0.5, 0.4, 0.32, 0.26],
                   sigma_y=0.3, lags=[int(v) for v in np.linspace(4, 256, 128).round()],
                   n_grid=[25, 50, 100, 150, 200, 300, 400, 600, 800, 1200, 1600, 2400, 3200, 4800,
                           6400, 9600, 12800],
                   eps=0.1, seeds=[212, 1001, 2002, 3003, 4004], optimizers=["adamw"],
                   compare_optimizers=["sgd", "momentum", "rmsprop"], compare_seeds=[212], K=1),
    "a_fidelity": dict(T=500, D=8, H=64, batch=256, epochs=200, lr=1e-3, s=0.1, n_train=1024,
                       optimizers=["sgd", "adamw", "rmsprop"], seeds=[42, 123, 271, 314, 999], task_lags=[5, 20, 50],
                       lags=[1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 245], n_seq=16, n_time=50),
    "b_s1": dict(T=80, D=4, H=64, lr=1e-2, batch=64, steps=800, checkpoints=[0, 50, 200, 400, 600, 800],
                 probe=12, seeds=list(range(20)), s=0.8),
    "b_s2": dict(T=120, D=6, H=64, batch=64, steps=1200, checkpoints=[0, 400, 800, 1200],
                 seeds=list(range(20)), tasks=list(B_TASKS), n_examples=256,
                 lags=[1, 2, 4, 8, 12, 16, 24, 32, 40], n_triples=32),
    "b_expansion": dict(T=100, H=64, D=3, sigma_w=0.2, seeds=list(range(20))),
    # eps = theory.planted.EPS (200): the planted checker keeps its N grid near N ≈ 1 with ε ≫ margin.
    "a_theory": dict(n_lags=80, n_samples=200000, seeds=[0, 1, 2], eps=200.0),
}

QUICK = {
    # eps = 20 (the spec's default threshold, 03 §3.3): with the paper's 0.1 every lag is detectable
    # at the smallest N at this size. n_diag >= 500 so that the tail fits are reliable (03 §3.2).
    # Lags reach 224 (T = 256) so that Ĥ_N is not capped by the lag grid at the largest N.
    "a_main": dict(PAPER["a_main"], T=256, D=8, H=32, n_train=256, n_val=64, n_diag=512, epochs=30, eps=20.0,
                   batch=32, lr=3e-3, task_lags=[8, 16, 32, 48, 64], lags=_lag_grid(1, 224, 28),
                   n_grid=[25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200],
                   seeds=[212, 1001, 2002], compare_optimizers=["sgd", "rmsprop"], compare_seeds=[212]),
    "a_fidelity": dict(PAPER["a_fidelity"], T=200, D=4, H=16, batch=32, epochs=4, n_train=128,
                       seeds=[42], lags=[1, 2, 3, 5, 8, 13, 21, 34, 55, 89], n_seq=8, n_time=20),
    "b_s1": dict(PAPER["b_s1"], T=40, H=32, steps=300, checkpoints=[0, 50, 150, 300], probe=8,
                 seeds=[0, 1, 2]),
    "b_s2": dict(PAPER["b_s2"], T=48, H=32, steps=300, checkpoints=[0, 150, 300], seeds=[0, 1],
                 n_examples=64, lags=[1, 2, 4, 8, 12, 16, 24, 32, 40], n_triples=12),
    "b_expansion": dict(PAPER["b_expansion"], seeds=[0, 1, 2]),
    "a_theory": dict(PAPER["a_theory"], n_lags=40, n_samples=20000, seeds=[0, 1]),
}

SMOKE = {
    "a_main": dict(QUICK["a_main"], T=24, D=3, H=6, n_train=32, n_val=16, n_diag=32, epochs=1,
                   batch=16, task_lags=[2, 4, 8], task_coefs=[0.6, 0.5, 0.4], lags=[2, 3, 4, 5, 6, 8, 10, 12, 14, 16],
                   n_grid=[25, 100, 400, 1600], seeds=[212], compare_optimizers=["sgd"]),
    "a_fidelity": dict(QUICK["a_fidelity"], T=24, D=2, H=5, batch=8, epochs=1, n_train=16,
                       lags=[1, 2, 3, 5, 8], n_seq=4, n_time=5, optimizers=["adamw"], task_lags=[2, 5, 10]),
    "b_s1": dict(QUICK["b_s1"], T=12, H=6, steps=4, checkpoints=[0, 4], probe=3, seeds=[0], batch=8),
    "b_s2": dict(QUICK["b_s2"], T=16, H=6, steps=4, checkpoints=[0, 4], seeds=[0], n_examples=12,
                 batch=8, lags=[1, 2, 4, 8], n_triples=3, tasks=["adding", "ar2"]),
    "b_expansion": dict(PAPER["b_expansion"], T=12, H=6, seeds=[0]),
    "a_theory": dict(PAPER["a_theory"], n_lags=20, n_samples=2000, seeds=[0]),
}

PRESETS = {"smoke": SMOKE, "quick": QUICK, "paper": PAPER}
