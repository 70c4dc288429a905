"""Experiment presets (docs/experiments.md §5.3): smoke (seconds, tests), quick (default), medium,
paper (the final paper of [A], the author's final launcher) and paper-v1 ([A]'s earlier code generation).

Every experiment reads its sizes from here; a run's configuration is the dict it receives, so the
results cache (runner.py) distinguishes presets automatically.

Training dtype: every preset trains in float32 (``train_dtype``), as [A] and [B] did (PyTorch's
default dtype); the diagnostics and statistics run in float64 on the trained weights, cast once
(lwsim/figures/training.py). ``train_dtype="float64"`` trains in float64.
"""
from __future__ import annotations

import numpy as np

A_CELLS = ("constgate", "sharedgate", "diaggate", "gru", "lstm")
B_MODELS = ("constgate", "sharedgate", "diaggate")        # [B] leaky (s = 0.8), scalar gate, multi-gate
B_S2_MODELS = (("rnn", "adam", 1e-3), ("sharedgate", "sgd", 1e-2), ("diaggate", "sgd", 1e-2))
B_TASKS = ("adding", "ar2", "movingavg", "delaysum", "narma10")


def _lag_grid(lo, hi, n):
    return sorted({int(v) for v in np.unique(np.round(np.geomspace(lo, hi, n)))})


def _int_lags(lo, hi, n):
    """The author's diagnostic lags: int(linspace(lo, hi, n)) (truncated), duplicates dropped."""
    return sorted({int(v) for v in np.linspace(lo, hi, n)})


# The final launcher's 54 budgets, 25 … 25600 (log-spaced by hand).
N_GRID_FINAL = (25, 50, 75, 100, 125, 150, 175, 200, 225, 250, 275, 300, 325, 350, 375, 400, 450, 500,
                550, 600, 650, 700, 750, 800, 850, 900, 950, 1000, 1100, 1200, 1300, 1400, 1500, 1600,
                1800, 2000, 2200, 2400, 2600, 2800, 3200, 3600, 4000, 4800, 5600, 6400, 8000, 9600,
                11200, 12800, 16000, 19200, 22400, 25600)

# [A] main at the earlier code generation's sizes (the author's repository README, "as in the
# paper"); the quick/medium/smoke presets shrink these and keep lwsim's defaults for every option.
A_MAIN_V1_SIZES = dict(train_dtype="float32", T=1024, D=16, H=128, n_train=8000, n_val=1000, n_diag=8000, epochs=750, batch=512,
                       lr=1e-3, weight_decay=1e-4, clip=1.0, s0=0.05,
                       task_lags=[32, 64, 128, 192, 256], task_coefs=[0.6, 0.5, 0.4, 0.32, 0.26],
                       sigma_y=0.3, lags=_int_lags(4, 256, 128),
                       n_grid=[25, 50, 100, 150, 200, 300, 400, 600, 800, 1200, 1600, 2400, 3200, 4800,
                               6400, 9600, 12800],
                       eps=0.1, seeds=[212, 1001, 2002, 3003, 4004], optimizers=["adamw"],
                       compare_optimizers=["sgd", "momentum"], compare_seeds=[212], K=1)

# Options of experiments.a_main (absent = lwsim's default, listed first; docs/experiments.md §5.3):
#   statistic      "sequence" (ψ̄_b, N counts sequences) | "instantaneous" (ψ_{b,t}, N counts time points)
#   rates          "optimizer" (Λ from the trained optimizer) | "none" (Λ ≡ 1, f averaged over neurons)
#   orient         False | True (per direction and lag, docs/diagnostics.md §2.7)
#   tail_methods   ["auto"] | list of "ecf"/"mcculloch"/"auto": one detection table each, the
#                  first is the main one, the others are stored with the suffix _<method>
#   n_boot         200 | bootstrap resamples of the McCulloch CI
#   min_samples    None | int: fewer samples per lag → α̂ = 2, σ̂ = 0, never detectable
#   cap_budget     False | True: a budget N uses min(N, n_ℓ) samples
#   fit_subsample  None | int: tail fits on at most this many samples
#   decay_window   "all" (floor 0, no trim) | "author" (stats.envelope_floor(f), 2% trim)
#   gate_init      "lwsim" (gate biases logit(0.05), LSTM forget 0.95) | "final" (LSTM forget 0.5)
#                  | "v1" (GRU/LSTM biases PyTorch's U(−1/√D, 1/√D))
#   nulls          ["lag"] | names from "lag", "full", "author": a detection table per null
#                  (docs/statistics.md §3.3), stored with the suffix _<null> ("lag" unsuffixed)
#   floor_ablations []  | names from training.FLOOR_ABLATIONS: the author's floors one at a time
#   diag_dtype     "float64" | "float32": the "lag" table from the matched statistic in the author's
#                  float32 arithmetic (the envelope stays float64, as the author's)
NULLS_ALL = ["lag", "full", "author"]
ABLATIONS_ALL = ["snr", "ecf", "floors", "f32"]
A_OPTIONS_FINAL = dict(statistic="sequence", rates="optimizer", orient=True, tail_methods=["ecf", "mcculloch"],
                       n_boot=500, min_samples=1000, cap_budget=False, fit_subsample=None,
                       decay_window="author", gate_init="final")
A_OPTIONS_V1 = dict(statistic="instantaneous", rates="none", orient=False, tail_methods=["ecf"],
                    n_boot=200, min_samples=500, cap_budget=True, fit_subsample=100000,
                    decay_window="author", gate_init="v1")

PAPER = {
    # [A] main, the final paper (the author's final launcher; docs/experiments.md §5.3): per-sequence
    # means ψ̄_b Λ-weighted, K = 50 oriented directions, ECF and McCulloch Ĥ_N both reported.
    "a_main": dict(train_dtype="float32", T=1536, D=16, H=256, n_train=8000, n_val=1000, n_diag=12000, epochs=1500, batch=384,
                   lr=2e-4, weight_decay=1e-4, clip=1.0, s0=0.05,
                   task_lags=[64, 128, 256, 384, 512, 768], task_coefs=[0.60, 0.50, 0.40, 0.30, 0.22, 0.16],
                   sigma_y=0.4, lags=_int_lags(4, 768, 192), n_grid=list(N_GRID_FINAL),
                   eps=20.0, seeds=[2, 12, 31, 41, 51], optimizers=["adamw"],
                   compare_optimizers=["sgd", "rmsprop"], compare_seeds=[2, 12, 31, 41, 51], K=50,
                   nulls=NULLS_ALL, **A_OPTIONS_FINAL),
    "a_fidelity": dict(train_dtype="float32", T=500, D=8, H=64, batch=256, epochs=200, lr=1e-3, s=0.1, n_train=1024,
                       optimizers=["sgd", "adamw", "rmsprop"], seeds=[42, 123, 271, 314, 999], task_lags=[5, 20, 50],
                       lags=[1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144, 245], n_seq=16, n_time=50),
    # [B] entries follow the author's protocol (docs/fidelity.md, "[B]"); quantities stay exact
    # (conventions "lwsim"); b_s2 also reports the author's conventions (suffix _author).
    "b_s1": dict(train_dtype="float32", T=80, D=4, H=64, lr=1e-2, batch=64, steps=800, checkpoints=[0, 50, 200, 400, 600, 800],
                 probe=12, seeds=list(range(20)), s=0.8, min_points=50, b1_predictors="all",
                 conventions=["lwsim", "author"]),
    "b_s2": dict(train_dtype="float32", T=120, D=6, H=64, batch=64, steps=1200, checkpoints=[0, 400, 800, 1200],
                 seeds=list(range(20)), tasks=list(B_TASKS), n_examples=256,
                 lags=[1, 2, 4, 8, 12, 16, 24, 32, 40], n_triples=64, protocol="author", probe=64,
                 task_inputs="author", conventions=["lwsim", "author"], b6_errorbars="quartiles"),
    "b_expansion": dict(T=100, H=64, D=3, sigma_w=0.2, seeds=list(range(20)), eps_grid="author",
                        phases="author", b7_aggregate="robust", conventions="lwsim"),
    # eps = theory.planted.EPS (200): the planted checker keeps its N grid near N ≈ 1 with ε ≫ margin.
    "a_theory": dict(n_lags=80, n_samples=200000, seeds=[0, 1, 2], eps=200.0),
}

# The earlier code generation of [A] (docs/fidelity.md): its sizes and its statistic; every other
# experiment as in the paper preset.
PAPER_V1 = dict(PAPER, a_main=dict(A_MAIN_V1_SIZES, nulls=NULLS_ALL, **A_OPTIONS_V1))

QUICK = {
    # eps = 20 (the default threshold, docs/statistics.md §3.3): with the paper's 0.1 every lag is detectable
    # at the smallest N at this size. n_diag >= 500 so that the tail fits are reliable (docs/statistics.md §3.2).
    # Lags reach 224 (T = 256) so that Ĥ_N is not capped by the lag grid at the largest N.
    "a_main": dict(A_MAIN_V1_SIZES, T=256, D=8, H=32, n_train=256, n_val=64, n_diag=512, epochs=30, eps=20.0,
                   batch=32, lr=3e-3, task_lags=[8, 16, 32, 48, 64], lags=_lag_grid(1, 224, 28),
                   n_grid=[25, 50, 100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600, 51200],
                   seeds=[212, 1001, 2002], compare_optimizers=["sgd", "rmsprop"], compare_seeds=[212],
                   nulls=NULLS_ALL, floor_ablations=ABLATIONS_ALL),
    "a_fidelity": dict(PAPER["a_fidelity"], T=200, D=4, H=16, batch=32, epochs=4, n_train=128,
                       seeds=[42], lags=[1, 2, 3, 5, 8, 13, 21, 34, 55, 89], n_seq=8, n_time=20),
    # [B]: lwsim's protocol (fresh batches, exact quantities); b_s2 adds the author's conventions
    "b_s1": dict(PAPER["b_s1"], T=40, H=32, steps=300, checkpoints=[0, 50, 150, 300], probe=8,
                 seeds=[0, 1, 2], min_points=10, b1_predictors="last"),
    "b_s2": dict(PAPER["b_s2"], T=48, H=32, steps=300, checkpoints=[0, 150, 300], seeds=[0, 1],
                 n_examples=64, lags=[1, 2, 4, 8, 12, 16, 24, 32, 40], n_triples=12, protocol="lwsim",
                 task_inputs="lwsim", b6_errorbars="iqr"),
    "b_expansion": dict(PAPER["b_expansion"], seeds=[0, 1, 2], eps_grid="lwsim", phases="lwsim",
                        b7_aggregate="seeds"),
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
    "b_expansion": dict(QUICK["b_expansion"], T=12, H=6, seeds=[0]),
    "a_theory": dict(PAPER["a_theory"], n_lags=20, n_samples=2000, seeds=[0]),
}

# medium: between quick and paper, sized for <= 60 min of the whole preset on 2 cores from an empty
# cache (timing and extrapolation in figures/medium/FINDINGS.md and docs/presets.md). Twice quick's T and
# lag reach, 1024 diagnostic sequences (reliable tail fits, docs/statistics.md §3.2), a budget
# grid to 204800 so fewer lags sit at its ends, longer trainings; [B] sizes halfway to paper.
MEDIUM = {
    # T 384, H 48; 1024 training sequences and lr 1e-2: at quick's 256 sequences GRU/ConstGate
    # overfit at validation R² ≈ 0.1 whatever the lr; with 1024 sequences × 40 epochs an LSTM at
    # this size reached R² 0.67 and a ConstGate 0.19 (still rising), hence 60 epochs.
    "a_main": dict(QUICK["a_main"], T=384, H=48, n_train=1024, n_val=128, n_diag=1024, epochs=60,
                   lr=1e-2, task_lags=[8, 16, 32, 64, 96], lags=_lag_grid(1, 336, 36),
                   n_grid=[25 * 2 ** i for i in range(14)]),
    "a_fidelity": dict(QUICK["a_fidelity"], T=300, H=32, epochs=12, n_train=256, seeds=[42, 123],
                       lags=[1, 2, 3, 5, 8, 13, 21, 34, 55, 89, 144], n_seq=12, n_time=30),
    "b_s1": dict(QUICK["b_s1"], T=60, H=48, steps=500, checkpoints=[0, 50, 200, 350, 500], probe=10,
                 seeds=[0, 1, 2, 3, 4]),
    "b_s2": dict(QUICK["b_s2"], T=80, H=48, steps=600, checkpoints=[0, 300, 600], seeds=[0, 1, 2],
                 n_examples=128, n_triples=20),
    "b_expansion": dict(QUICK["b_expansion"], seeds=[0, 1, 2, 3, 4]),
    "a_theory": dict(QUICK["a_theory"], n_lags=60, n_samples=50000, seeds=[0, 1, 2]),
}

# A15 (studies/behaviour/, docs/experiments.md §5.6): multilag with a dependency at every lag
# 1 … L (coefficients falling linearly from c0 to c0/4, σ_y 3), one run per cell × seed × budget N,
# the same number of training steps for every N. ε = 2: at ε = 20 (a_main's quick) N̂(ℓ) exceeded
# the largest budget at every lag in a pilot, so Ĥ_N would be 0 throughout. σ_y = 3: with σ_y = 1
# the learned window sat at the task's end from N = 16 for 4 of 5 cells (quick and medium,
# docs/experiments.md §5.6), so it could not be read against N; 9× the noise variance moves the
# budgets at which lags are learned into the grid.
def _behaviour_task(L, c0=0.05):
    return dict(task_lags=list(range(1, L + 1)), task_coefs=[round(c0 * (1 - 0.75 * (l - 1) / (L - 1)), 6)
                                                             for l in range(1, L + 1)])


A_BEHAVIOUR_QUICK = dict(train_dtype="float32", T=128, D=4, H=16, s0=0.05, optimizer="adamw", lr=3e-3,
                         weight_decay=1e-4, clip=1.0, batch=16, steps=240, val_every=20, n_val=64, n_diag=512,
                         sigma_y=3.0, **_behaviour_task(96), lags=list(range(4, 113, 4)), beh_max_lag=112,
                         budgets=[16, 40, 100, 250, 640, 1600], n_grid=[16, 40, 100, 250, 640, 1600],
                         eps=2.0, K=1, frac=0.5, z_band=3.0, seeds=[212, 1001, 2002],
                         points=["init", "early", "final"])   # issue 30 item 6: Ĥ_N at three training points
QUICK["a_behaviour"] = A_BEHAVIOUR_QUICK
SMOKE["a_behaviour"] = dict(A_BEHAVIOUR_QUICK, T=24, D=3, H=6, batch=8, steps=6, val_every=2, n_val=16, n_diag=32,
                            **_behaviour_task(12), lags=[2, 4, 6, 8, 10, 12, 14, 16], beh_max_lag=16,
                            budgets=[8, 16, 32], n_grid=[8, 16, 32], seeds=[212])
_MEDIUM_BUDGETS = [16 * 2 ** i for i in range(9)]                        # 16 … 4096
MEDIUM["a_behaviour"] = dict(A_BEHAVIOUR_QUICK, T=192, H=32, steps=400, **_behaviour_task(144),
                             lags=list(range(4, 169, 4)), beh_max_lag=168, budgets=_MEDIUM_BUDGETS,
                             n_grid=_MEDIUM_BUDGETS)
# paper sizes: [A]'s final T, D, H, lag grid and options; budgets 100 … 25600
_PAPER_BUDGETS = [100, 200, 400, 800, 1600, 3200, 6400, 12800, 25600]
PAPER["a_behaviour"] = dict(A_BEHAVIOUR_QUICK, T=1536, D=16, H=256, lr=2e-4, batch=384, steps=3000, val_every=100,
                            n_val=1000, n_diag=12000, **_behaviour_task(768, c0=0.02), lags=PAPER["a_main"]["lags"],
                            beh_max_lag=800, budgets=_PAPER_BUDGETS, n_grid=_PAPER_BUDGETS, K=50,
                            seeds=[2, 12, 31, 41, 51], **A_OPTIONS_FINAL)
PAPER_V1["a_behaviour"] = PAPER["a_behaviour"]

PRESETS = {"smoke": SMOKE, "quick": QUICK, "medium": MEDIUM, "paper": PAPER, "paper-v1": PAPER_V1}

# A16 (studies/delay.py, docs/experiments.md §5.7): the delay task y_t = c·z_{t−ℓ*} + σ_y ε_t, one
# run per cell × seed × ℓ* × N; A15's training settings with the early checkpoint at 10% of the
# steps. Design by measurement (docs/experiments.md §5.7, benchmarks/delay_design.py, one seed):
# a first design (T 32, H 8, 1000 steps, lr 2e-2, σ_y 0.5, N 16…1600) learned no ℓ* at N = 16 in
# any cell and cost ≈ 1–2 s per run (quick ≈ 20–40 min); this one (T 16, batch 32, 300 steps,
# lr 3e-2, σ_y 0.2, N 32…3200) learns ℓ* = 2 at N = 32 (LSTM), leaves ℓ* = 8 unlearned at N = 3200
# in every cell, and costs ≈ 0.5 s per run.
A_DELAY_QUICK = dict(train_dtype="float32", T=16, D=4, H=8, s0=0.05, optimizer="adamw", lr=3e-2,
                     weight_decay=1e-4, clip=1.0, batch=32, steps=300, early=30, val_every=30, n_val=32,
                     n_diag=256, coef=0.5, sigma_y=0.2, delays=[2, 3, 4, 5, 6, 8],
                     budgets=[32, 100, 320, 1000, 3200], n_grid=[32, 100, 320, 1000, 3200],
                     eps=2.0, K=1, frac=0.5, z_band=3.0, seeds=[212, 1001, 2002])
QUICK["a_delay"] = A_DELAY_QUICK
SMOKE["a_delay"] = dict(A_DELAY_QUICK, T=16, D=3, H=4, batch=8, steps=10, early=2, val_every=5, n_val=8, n_diag=32,
                        delays=[2, 5], budgets=[8, 32], n_grid=[8, 32], seeds=[212, 1001])
# medium: T 32, H 16, 600 steps (a one-seed pilot, ℓ* 2…16 × N 32…10000: ℓ* = 2 learned at N = 32
# by four cells, ℓ* = 16 unlearned at N = 10000 by every cell; ≈ 1.5–6 s per run, shared machine)
MEDIUM["a_delay"] = dict(A_DELAY_QUICK, T=32, H=16, steps=600, early=60, val_every=60, n_diag=512,
                         delays=[2, 3, 4, 5, 7, 9, 12, 16], budgets=[32, 100, 320, 1000, 3200, 10000],
                         n_grid=[32, 100, 320, 1000, 3200, 10000])
PAPER["a_delay"] = dict(MEDIUM["a_delay"], T=512, H=64, steps=3000, early=300, val_every=300, n_diag=2048,
                        delays=[2, 4, 8, 16, 32, 64, 128, 256], seeds=[2, 12, 31, 41, 51])
PAPER_V1["a_delay"] = PAPER["a_delay"]
